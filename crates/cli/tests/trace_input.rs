//! Every `lever trace` command reads a trace.dat and compressed text,
//! detected by their first bytes, and refuses what is no trace with exit
//! code 3 (bad_input) and a message naming the file.

mod common;

const FIX: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../trace-input/tests/fixtures/"
);

fn sched_threads(file: &str) -> Vec<serde_json::Value> {
    let out = common::ok(&[
        "trace",
        "analyze",
        "--sched",
        "--json",
        &format!("{FIX}{file}"),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["events"], 9620, "{file}");
    let mut t = v["sched"]["threads"].as_array().unwrap().clone();
    // Ordered by run time, which differs below 1 µs between the two.
    t.sort_by_key(|t| t["tid"].as_i64());
    t
}

#[test]
fn analyze_reads_dat_and_zstd_text_of_the_same_capture() {
    let text = sched_threads("v7z.txt.zst");
    let dat = sched_threads("v7z.dat");
    assert_eq!(dat.len(), text.len());
    // Same threads, same counts; times differ below 1 µs (the text rounds).
    for (d, t) in dat.iter().zip(&text) {
        assert_eq!((&d["tid"], &d["switches"]), (&t["tid"], &t["switches"]));
    }
}

#[test]
fn export_and_bench_read_a_dat() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("t.json");
    let dat = format!("{FIX}v6.dat.zst");
    common::ok(&["trace", "export", &dat, "-o", json.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().len() > 1000);
    let out = common::ok(&["trace", "bench", "--json", &format!("{FIX}v7z.dat")]);
    let b: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(b["events"], 9620);
}

#[test]
fn binary_garbage_and_empty_files_exit_3_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, [0u8, 1, 2, 3, 200, 7, 0, 0, 9]).unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let bad_dat = dir.path().join("bad.dat");
    std::fs::write(&bad_dat, b"\x17\x08\x44tracing6\0\0\x08\0\x10\0\0head").unwrap();
    for (file, says) in [
        (&junk, ": not a trace: a NUL byte at offset 0"),
        (&empty, " is empty (0 bytes), not a trace"),
        (&bad_dat, ": bad trace.dat"),
    ] {
        for cmd in ["analyze", "bench"] {
            let out = common::lever(&["trace", cmd, file.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(3), "{cmd} {}", file.display());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&format!("{}{says}", file.display())), "{err}");
        }
    }
}

/// A task name holding an escape sequence (any task may set its comm)
/// reaches the terminal escaped, never as the sequence itself.
#[test]
fn control_characters_in_task_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(
        &trace,
        "  <idle>-0 [000] d..2. 1.000000: sched_waking: comm=\x1b]0;pwned\x07 pid=7 prio=120 target_cpu=000\n\
         \x20 <idle>-0 [000] d..2. 1.000050: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=\x1b]0;pwned\x07 next_pid=7 next_prio=120\n\
         \x20 \x1b]0;pwned\x07-7 [000] d..2. 1.001050: sched_switch: prev_comm=\x1b]0;pwned\x07 prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n",
    )
    .unwrap();
    let out = common::ok(&["trace", "analyze", trace.to_str().unwrap()]);
    assert!(out.contains("\\x1b]0;pwned\\x07"), "{out}");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
}

/// A trace directory in the shared folder of real CTF traces; `None`
/// (with the reason printed) where the folder is not beside the project,
/// which under CI=true is a failure.
fn shared_ctf(rel: &str) -> Option<std::path::PathBuf> {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/third-party/ctf")
        .join(rel);
    if d.is_dir() {
        return Some(d);
    }
    assert!(
        !lever_testkit::in_ci(),
        "{} missing under CI=true",
        d.display()
    );
    eprintln!("SKIP: {} not here", d.display());
    None
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Are `tools` installed? A missing one is printed (the test skips) and
/// is a failure under CI=true, where `.ci/run` installs them.
fn have_tools(tools: &[&str]) -> bool {
    for tool in tools {
        let ok = std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(!lever_testkit::in_ci(), "{tool} missing under CI=true");
            eprintln!("SKIP: {tool} not installed here");
            return false;
        }
    }
    true
}

/// Chrome trace events of phase `ph` named `name` (`None`: any name).
/// Call-stack slices are B/E pairs; an E names nothing.
fn events(v: &serde_json::Value, name: Option<&str>, ph: &str) -> usize {
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == ph && name.is_none_or(|n| e["name"] == n))
        .count()
}

/// Seed 000 §4.2 step 5: an LTTng session directory with a kernel trace
/// and a cyg-profile UST trace below it is one input. Analyze gives the
/// kernel's scheduling and the application's call stacks together, each
/// as from its own trace alone; export holds the CPU slices and the call
/// stacks. (The shared kernel and UST traces come from different
/// machines, so their times do not overlap: merged by clock, one follows
/// the other.)
#[test]
fn an_lttng_session_with_kernel_and_ust_traces_is_one_input() {
    let (Some(kernel), Some(ust)) = (
        shared_ctf("synctraces/scp_src"),
        shared_ctf("cyg-profile/glxgears-cyg-profile"),
    ) else {
        return;
    };
    let map = ust.parent().unwrap().join("cyg-profile-mapping.txt");
    let map = map.to_str().unwrap();
    let session = tempfile::tempdir().unwrap();
    copy_dir(&kernel, &session.path().join("kernel"));
    copy_dir(&ust, &session.path().join("ust/uid/1000/64-bit"));
    let s = session.path().to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_str(&common::ok(
            &[&["--json", "trace", "analyze"], args].concat(),
        ))
        .unwrap()
    };
    let both = json(&[s, "--sched", "--callstack", "--symbols", map]);
    let k = json(&[kernel.to_str().unwrap(), "--sched"]);
    let u = json(&[ust.to_str().unwrap(), "--callstack", "--symbols", map]);
    assert_eq!(
        both["summary"]["events"].as_u64().unwrap(),
        k["summary"]["events"].as_u64().unwrap() + u["summary"]["events"].as_u64().unwrap()
    );
    let thread = |v: &serde_json::Value, tid: i64| {
        v["sched"]["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tid"] == tid)
            .cloned()
            .unwrap_or_else(|| panic!("thread {tid} in {v}"))
    };
    // ssh on the scp sender: the same run time and switches as alone.
    for field in ["comm", "running_ns", "switches"] {
        assert_eq!(
            thread(&both, 7422)[field],
            thread(&k, 7422)[field],
            "{field}"
        );
    }
    assert_eq!(thread(&both, 7422)["comm"], "ssh");
    let func = |v: &serde_json::Value, name: &str| {
        v["callstack"]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {v}"))
    };
    assert_eq!(func(&both, "draw_frame")["calls"], 617);
    assert_eq!(func(&both, "draw_frame"), func(&u, "draw_frame"));

    let out = tempfile::tempdir().unwrap();
    let chrome = out.path().join("session.json");
    common::ok(&[
        "trace",
        "export",
        s,
        "-o",
        chrome.to_str().unwrap(),
        "--symbols",
        map,
    ]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    assert_eq!(events(&v, Some("draw_frame"), "B"), 617);
    // The recording stopped inside main → event_loop → draw_frame: three
    // slices stay open to the end of the trace.
    assert_eq!(events(&v, None, "B"), events(&v, None, "E") + 3);
    assert!(
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "ssh" && e["ph"] == "X"),
        "ssh's run slices on its CPU"
    );
    // The Perfetto protobuf of the same session is written and not empty.
    let pf = out.path().join("session.pftrace");
    common::ok(&[
        "trace",
        "export",
        s,
        "-o",
        pf.to_str().unwrap(),
        "--symbols",
        map,
    ]);
    assert!(std::fs::metadata(&pf).unwrap().len() > 100_000);
}

/// A cyg-profile UST trace recorded here: without `--symbols`, the
/// functions are named from the program's own ELF symbols, found through
/// the statedump's `bin_info` (the executable's path and base address).
#[test]
fn recorded_ust_functions_are_named_from_the_elf_the_statedump_names() {
    use lever_testkit::lttng;
    if !have_tools(&["lttng", "gcc"]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    if !lttng::build_prog(work.path()) {
        return;
    }
    let out = match lttng::record(
        work.path(),
        "liblttng-ust-cyg-profile.so",
        lttng::CYG_EVENTS,
        &["2000"],
    ) {
        Ok(out) => out,
        Err(why) => {
            assert!(
                !lever_testkit::in_ci(),
                "cannot record a UST trace under CI=true: {why}"
            );
            eprintln!("SKIP: not available here because {why}");
            return;
        }
    };
    let o = out.to_str().unwrap();
    let v: serde_json::Value = serde_json::from_str(&common::ok(&[
        "--json",
        "trace",
        "analyze",
        o,
        "--callstack",
    ]))
    .unwrap();
    let lost = v["summary"]["lost_events"].as_u64().unwrap_or(0);
    let calls = |name: &str| {
        v["callstack"]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} named in {}", v["callstack"]))["calls"]
            .as_u64()
            .unwrap()
    };
    if lost == 0 {
        // Two threads: top once each, mid n times each, leaf 3n times each.
        assert_eq!(calls("top"), 2);
        assert_eq!(calls("mid"), 2 * 2000);
        assert_eq!(calls("leaf"), 2 * 6000);
        assert_eq!(calls("main"), 1);
    } else {
        eprintln!("{lost} events lost: only the names are checked");
        for f in ["top", "mid", "leaf"] {
            calls(f);
        }
    }
    let chrome = work.path().join("ust.json");
    common::ok(&["trace", "export", o, "-o", chrome.to_str().unwrap()]);
    let e: serde_json::Value = serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    assert_eq!(events(&e, Some("leaf"), "B") as u64, calls("leaf"));
}

/// Four threads taking one mutex in turn, holding it for a short loop.
const MUTEX_PROG: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
pthread_mutex_t shared_mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile long sink;
static int n;
static void *worker(void *a) {
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&shared_mutex);
    for (int k = 0; k < 2000; k++) sink += k;
    pthread_mutex_unlock(&shared_mutex);
  }
  return NULL;
}
int main(int argc, char **argv) {
  n = argc > 1 ? atoi(argv[1]) : 1000;
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  printf("%p %ld\n", (void *)&shared_mutex, sink);
  return 0;
}
"#;

/// Locks where the events exist: a UST trace of `pthread_mutex_lock`
/// (liblttng-ust-pthread-wrapper) gives `--locks` one row per mutex, and
/// for the program's mutex the waits (request → acquisition of the same
/// thread) equal a count made from babeltrace2's text of the same trace.
#[test]
fn pthread_mutex_waits_from_a_ust_trace_equal_babeltrace2() {
    use lever_testkit::lttng;
    if !have_tools(&["lttng", "gcc", "babeltrace2"]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    if !lttng::build(work.path(), MUTEX_PROG, &["-O1"]) {
        return;
    }
    let out = match lttng::record(
        work.path(),
        "liblttng-ust-pthread-wrapper.so",
        "lttng_ust_pthread:*",
        &["500"],
    ) {
        Ok(out) => out,
        Err(why) => {
            assert!(
                !lever_testkit::in_ci(),
                "cannot record a UST trace under CI=true: {why}"
            );
            eprintln!("SKIP: not available here because {why}");
            return;
        }
    };
    // babeltrace2: per thread, the request's time; at the acquisition of
    // the same mutex by that thread, one wait. Seconds.ns, as integers.
    let bt = std::process::Command::new("babeltrace2")
        .args(["--clock-seconds", "--no-delta"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(bt.status.success());
    let field = |l: &str, k: &str| -> String {
        l.split(&format!("{k} = "))
            .nth(1)
            .unwrap()
            .split([',', ' ', '}'])
            .next()
            .unwrap()
            .to_string()
    };
    let mut open: std::collections::HashMap<String, i128> = Default::default();
    let mut waits: std::collections::HashMap<String, (u64, u128)> = Default::default();
    for l in String::from_utf8_lossy(&bt.stdout).lines() {
        let ts = l.trim_start_matches('[').split(']').next().unwrap();
        let (s, ns) = ts.split_once('.').unwrap();
        let t = s.parse::<i128>().unwrap() * 1_000_000_000 + ns.parse::<i128>().unwrap();
        let key = format!("{}/{}", field(l, "vtid"), field(l, "mutex"));
        if l.contains(":pthread_mutex_lock_req:") {
            open.insert(key, t);
        } else if l.contains(":pthread_mutex_lock_acq:") {
            if let Some(t0) = open.remove(&key) {
                let m =
                    u64::from_str_radix(field(l, "mutex").trim_start_matches("0x"), 16).unwrap();
                let w = waits.entry(format!("{m:016x}")).or_default();
                w.0 += 1;
                w.1 += (t - t0) as u128;
            }
        }
    }
    let (addr, (count, total)) = waits
        .iter()
        .max_by_key(|(_, (n, _))| *n)
        .map(|(a, w)| (a.clone(), *w))
        .expect("mutex waits in babeltrace2's text");
    // Four threads × 500 locks of the program's mutex (LTTng's own
    // mutexes show up too, fewer).
    assert_eq!(count, 4 * 500, "{waits:?}");
    let v: serde_json::Value = serde_json::from_str(&common::ok(&[
        "--json",
        "trace",
        "analyze",
        out.to_str().unwrap(),
        "--locks",
    ]))
    .unwrap();
    let row = v["locks"]["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["addr"] == addr.as_str())
        .unwrap_or_else(|| panic!("{addr} in {}", v["locks"]))
        .clone();
    assert_eq!(row["kind"], "pthread_mutex");
    assert_eq!(row["wait"]["count"].as_u64().unwrap(), count);
    assert_eq!(row["total_wait_ns"].as_u64().unwrap() as u128, total);
    assert_eq!(row["tasks"], 4);
    // The text report names it too.
    let text = common::ok(&["trace", "analyze", out.to_str().unwrap(), "--locks"]);
    assert!(
        text.contains(&addr) && text.contains("pthread_mutex"),
        "{text}"
    );
}
