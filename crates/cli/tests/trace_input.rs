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
