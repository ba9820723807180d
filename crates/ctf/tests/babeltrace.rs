//! Lever's CTF reader against babeltrace2, event for event (name, time in
//! cycles and ns from the origin, every context and payload field), on
//! every trace in the shared folder and on UST traces recorded here with
//! liblttng-ust-cyg-profile.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn check(dir: &Path) -> usize {
    let streams = lever_ctf::Trace::open(dir).unwrap().stream_paths().count();
    let a = ours(dir);
    let b = theirs(dir, streams);
    compare(&dir.display().to_string(), &a, &b);
    a.len()
}

#[test]
fn shared_traces_equal_babeltrace2() {
    let root = third_party();
    if !root.is_dir() {
        assert!(!in_ci(), "{} is missing", root.display());
        eprintln!("SKIP: {} not here", root.display());
        return;
    }
    if !have("babeltrace2") {
        return;
    }
    let traces = lever_ctf::find_traces(&root);
    assert_eq!(traces.len(), 6, "{traces:?}");
    let mut total = 0;
    for t in &traces {
        let n = check(t);
        eprintln!("{}: {n} events equal", t.display());
        assert!(n > 1000, "{}: only {n} events", t.display());
        total += n;
    }
    eprintln!("{total} events equal in {} traces", traces.len());
}

/// A private session daemon for the test's recordings: started here,
/// killed on drop.
struct SessionDaemon(Option<std::process::Child>);

impl Drop for SessionDaemon {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn lttng(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("lttng")
        .env("LTTNG_HOME", home)
        .args(args)
        .output()
        .expect("run lttng")
}

/// Record `prog` (built with -finstrument-functions) under LD_PRELOAD of
/// `preload`; the trace's directory, or why it could not be made.
pub fn record(work: &Path, preload: &str, args: &[&str]) -> Result<std::path::PathBuf, String> {
    let home = work.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut daemon = SessionDaemon(None);
    if !lttng(&home, &["list", "-u"]).status.success() {
        let child = Command::new("lttng-sessiond")
            .env("LTTNG_HOME", &home)
            .arg("--no-kernel")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("lttng-sessiond: {e}"))?;
        daemon.0 = Some(child);
        let t0 = Instant::now();
        while !lttng(&home, &["list", "-u"]).status.success() {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("lttng-sessiond did not answer within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let out = work.join("trace");
    let name = format!("lever-ctf-test-{}", std::process::id());
    let steps: Vec<Vec<String>> = vec![
        vec![
            "create".into(),
            name.clone(),
            format!("--output={}", out.display()),
        ],
        vec![
            "enable-channel".into(),
            "-u".into(),
            "ch".into(),
            "--subbuf-size=1M".into(),
            "--num-subbuf=8".into(),
        ],
        vec![
            "enable-event".into(),
            "-u".into(),
            "-c".into(),
            "ch".into(),
            "lttng_ust_cyg_profile*,lttng_ust_statedump:*".into(),
        ],
        vec![
            "add-context".into(),
            "-u".into(),
            "-c".into(),
            "ch".into(),
            "-t".into(),
            "vpid".into(),
            "-t".into(),
            "vtid".into(),
            "-t".into(),
            "procname".into(),
        ],
        vec!["start".into()],
    ];
    for s in &steps {
        let args: Vec<&str> = s.iter().map(String::as_str).collect();
        let o = lttng(&home, &args);
        if !o.status.success() {
            let _ = lttng(&home, &["destroy", &name]);
            return Err(format!(
                "lttng {}: {}",
                s.join(" "),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    let st = Command::new(work.join("prog"))
        .args(args)
        .env("LTTNG_HOME", &home)
        .env("LD_PRELOAD", preload)
        .stdout(Stdio::null())
        .status()
        .expect("run prog");
    let _ = lttng(&home, &["stop", &name]);
    let _ = lttng(&home, &["destroy", &name]);
    assert!(st.success());
    lever_ctf::find_traces(&out)
        .into_iter()
        .next()
        .ok_or_else(|| format!("no trace under {}", out.display()))
}

pub const PROG: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
static volatile long sink;
__attribute__((noinline)) static void leaf(int i) { sink += i; }
__attribute__((noinline)) static void mid(int i) { for (int k = 0; k < 3; k++) leaf(i + k); }
__attribute__((noinline)) static void top(int n) { for (int i = 0; i < n; i++) mid(i); }
static void *worker(void *arg) { top((int)(long)arg); return NULL; }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  pthread_t t; pthread_create(&t, NULL, worker, (void *)(long)n);
  top(n); pthread_join(t, NULL);
  printf("%ld\n", sink); return 0;
}
"#;

/// Build the test program; false (with the reason printed) without gcc.
pub fn build_prog(work: &Path) -> bool {
    std::fs::write(work.join("prog.c"), PROG).unwrap();
    let ok = Command::new("gcc")
        .args(["-O1", "-g", "-finstrument-functions", "-o"])
        .arg(work.join("prog"))
        .arg(work.join("prog.c"))
        .arg("-lpthread")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(!in_ci(), "gcc failed under CI=true");
        eprintln!("SKIP: cannot build the test program with gcc");
    }
    ok
}

#[test]
fn recorded_cyg_profile_traces_equal_babeltrace2() {
    if !have("babeltrace2") || !have("lttng") || !have("gcc") {
        return;
    }
    for preload in [
        "liblttng-ust-cyg-profile.so",
        "liblttng-ust-cyg-profile-fast.so",
    ] {
        let work = tempfile::tempdir().unwrap();
        if !build_prog(work.path()) {
            return;
        }
        let dir = match record(work.path(), preload, &["3000"]) {
            Ok(d) => d,
            Err(why) => {
                assert!(!in_ci(), "cannot record a UST trace under CI=true: {why}");
                eprintln!("SKIP: not available here because {why}");
                return;
            }
        };
        assert!(
            dir.join("index").is_dir(),
            "LTTng 2.13 writes packet indexes"
        );
        let n = check(&dir);
        // 2 threads × (1 top + 3000 mid + 9000 leaf) calls, entry and exit.
        let calls = lever_ctf::Trace::open(&dir).unwrap();
        let mut ev = calls.events();
        let mut cyg = 0;
        while let Some(e) = ev.next().unwrap() {
            if e.name().starts_with("lttng_ust_cyg_profile") {
                cyg += 1;
            }
        }
        let discarded: u64 = ev.discarded().iter().map(|d| d.events).sum();
        // main and worker are instrumented too: +2 calls.
        assert_eq!(cyg as u64 + discarded, (2 * 12001 + 2) * 2, "{preload}");
        eprintln!("{preload}: {n} events equal to babeltrace2 ({cyg} function entries/exits)");
    }
}

/// The comparison sees a single changed field value (so the tests above
/// can fail).
#[test]
#[should_panic(expected = "differs")]
fn comparison_catches_one_changed_value() {
    let dir = third_party().join("cyg-profile/glxgears-cyg-profile");
    if !dir.is_dir() {
        panic!("differs (trace missing: nothing to compare)");
    }
    let a = ours(&dir);
    let mut b = a.clone();
    b[100].text = b[100].text.replacen("addr: ", "addr: 1", 1);
    compare("changed", &a, &b);
}
