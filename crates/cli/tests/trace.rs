//! `lever trace` end to end on the real fixture captures.

use std::path::PathBuf;
use std::process::Command;

fn lever(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lever"))
        .args(args)
        .output()
        .unwrap()
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../trace/tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn analyze_tables_and_json() {
    let f = fixture("sched_irq_power_markers.txt");
    let out = lever(&[
        "trace",
        "analyze",
        &f,
        "--kpi",
        "record=Connect..FirstVidFrame",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("== KPI record (Connect..FirstVidFrame): 3 occurrence(s)"),
        "{text}"
    );
    assert!(text.contains("record latency = sum"), "{text}");
    let out = lever(&["--json", "trace", "analyze", &f]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["malformed"], 0);
    assert!(v["sched"]["threads"].as_array().unwrap().len() > 5);
    let bad = lever(&["trace", "analyze", &f, "--kpi", "nonsense"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected NAME=FROM..TO"));
}

#[test]
fn export_is_valid_chrome_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.json");
    let r = lever(&[
        "trace",
        "export",
        &fixture("sched_tgid.txt"),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    assert!(evs
        .iter()
        .any(|e| e["ph"] == "X" && e["dur"].as_f64().is_some()));
    // tgid column → slices grouped under the process id.
    assert!(evs.iter().any(|e| e["ph"] == "X"
        && e["pid"] != e["tid"]
        && e["cat"] == "sched"
        && e["pid"].as_i64() != Some(0x7fff_0000)));
}

#[test]
fn record_without_tracefs_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let r = lever(&[
        "--root",
        root,
        "trace",
        "record",
        "--duration",
        "0",
        "-o",
        "/dev/null",
    ]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("tracefs is not available here"));
}
