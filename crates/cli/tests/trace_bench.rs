//! `lever trace bench` measures this process, whatever `--root` says.

mod common;

use lever_testkit::FakeTree;

#[test]
fn peak_rss_is_our_own_not_the_roots() {
    // A fake root whose /proc/self/status claims a 999999 kB peak: the
    // bench must not report it (it once read its own status through --root).
    let tree = FakeTree::with(&[(
        "/proc/self/status",
        "Name:\tfake\nVmHWM:\t  999999 kB\nVmRSS:\t  999999 kB\n",
    )]);
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../trace/tests/fixtures/sched_tgid.txt"
    );
    let root = tree.root().to_str().unwrap();
    let out = common::ok(&["--root", root, "trace", "bench", trace, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let peak = v["peak_rss_kb"].as_u64().expect("peak RSS measured");
    assert!(peak > 100 && peak < 999_999, "peak {peak} kB");
    assert_eq!(v["events"], 1187, "{out}");
    assert!(v["parse_cpu_seconds"].as_f64().unwrap() > 0.0);
    // The whole command: at least the two timed passes, on the wall and
    // on the CPU.
    let (parse, sched) = (
        v["parse_seconds"].as_f64().unwrap(),
        v["sched_seconds"].as_f64().unwrap(),
    );
    assert!(
        v["process_seconds"].as_f64().unwrap() >= parse + sched,
        "{out}"
    );
    assert!(v["process_cpu_seconds"].as_f64().unwrap() > 0.0, "{out}");
}

#[test]
fn a_file_without_events_says_so() {
    let tree = FakeTree::with(&[("/empty.txt", "# tracer: nop\n")]);
    let file = tree.host_path("/empty.txt");
    let out = common::lever(&["trace", "bench", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("empty.txt: no events"), "{err}");
}

#[test]
fn a_parallel_pass_with_the_threads_asked_for() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../trace/tests/fixtures/sched_tgid.txt"
    );
    let out = common::ok(&["trace", "bench", trace, "--threads", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["parallel"]["threads"], 2, "{out}");
    assert!(
        v["parallel"]["events_per_s"].as_f64().unwrap() > 0.0,
        "{out}"
    );
    let text = common::ok(&["trace", "bench", trace, "--threads", "2"]);
    assert!(text.contains("2 parsing threads: wall"), "{text}");
    let one = common::ok(&["trace", "bench", trace, "--threads", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert!(v["parallel"].is_null(), "{one}");
}
