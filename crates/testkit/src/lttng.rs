//! Recording LTTng user-space traces of a small instrumented C program
//! (`liblttng-ust-cyg-profile`), for the CTF reader's and the CLI's tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Held while a recording is made (see [`record`]).
static RECORDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The events of a cyg-profile recording: function entries and exits, and
/// the statedump that names the binaries.
pub const CYG_EVENTS: &str = "lttng_ust_cyg_profile*,lttng_ust_statedump:*";

/// Record `work/prog` (built by [`build_prog`] or [`build`]) under
/// `LD_PRELOAD` of `preload` in a user-space LTTng session with `events`
/// (e.g. [`CYG_EVENTS`]) and the vpid, vtid and procname contexts. The
/// session's output directory (`ust/uid/UID/64-bit/` below it), or why it
/// could not be made. A private `lttng-sessiond` is started (with
/// `LTTNG_HOME` under `work`) where none answers, and killed after.
pub fn record(work: &Path, preload: &str, events: &str, args: &[&str]) -> Result<PathBuf, String> {
    // One recording at a time in a test process: as root every session
    // daemon is the machine's (LTTNG_HOME does not separate them), so a
    // test's daemon, killed when its recording ends, would cut off a
    // recording another test thread made through it.
    let _one = RECORDING.lock().unwrap_or_else(|e| e.into_inner());
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
    let name = format!(
        "lever-ctf-test-{}-{}",
        std::process::id(),
        work.file_name().map_or_else(String::new, |n| n
            .to_string_lossy()
            .trim_start_matches('.')
            .to_string())
    );
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
            events.into(),
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
    if out.is_dir() {
        Ok(out)
    } else {
        Err(format!("lttng wrote nothing under {}", out.display()))
    }
}

/// A two-thread C program (`main` and a worker each call `top`, which
/// calls `mid` n times, which calls `leaf` three times), for
/// `-finstrument-functions`.
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

/// Build [`PROG`] as `work/prog` with `-finstrument-functions`; false
/// (with the reason printed) without gcc.
pub fn build_prog(work: &Path) -> bool {
    build(work, PROG, &["-O1", "-g", "-finstrument-functions"])
}

/// Build the C `source` as `work/prog` with gcc and `flags` (and
/// `-lpthread`); false (with the reason printed) where gcc fails, which
/// under CI=true is a test failure.
pub fn build(work: &Path, source: &str, flags: &[&str]) -> bool {
    std::fs::write(work.join("prog.c"), source).unwrap();
    let ok = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(work.join("prog"))
        .arg(work.join("prog.c"))
        .arg("-lpthread")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(!crate::in_ci(), "gcc failed under CI=true");
        eprintln!("SKIP: cannot build the test program with gcc");
    }
    ok
}
