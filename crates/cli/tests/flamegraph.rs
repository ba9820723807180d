//! `lever flamegraph` end to end.
mod common;

use common::LEVER;
use std::path::Path;
use std::process::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../flamegraph/tests/fixtures/python-json.perf-script"
);

#[test]
fn perf_script_file_to_svg_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("f.svg");
    let folded = dir.path().join("f.folded");
    let out = Command::new(LEVER)
        .args(["flamegraph", "--json", "-i", FIXTURE, "-o"])
        .arg(&svg)
        .arg("--folded-out")
        .arg(&folded)
        .output()
        .unwrap();
    common::assert_success(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["weight"], 156 * 1_001_001u64);
    assert!(v["hottest"][0]["name"].is_string());
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    // The folded file round-trips through --folded.
    let svg2 = dir.path().join("g.svg");
    let out = Command::new(LEVER)
        .args(["flamegraph", "--json", "--folded", "-i"])
        .arg(&folded)
        .arg("-o")
        .arg(&svg2)
        .output()
        .unwrap();
    let w: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(w["weight"], v["weight"]);
}

/// The text and JSON reports on the fixture, run where the input and the
/// SVG have short relative names so the output is the same everywhere.
#[test]
fn report_is_golden() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(FIXTURE, dir.path().join("in.perf-script")).unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (name, extra) in [
        ("flamegraph-python-json.txt", &["--top", "10"][..]),
        ("flamegraph-python-json.json", &["--top", "3", "--json"][..]),
    ] {
        let out = Command::new(LEVER)
            .current_dir(dir.path())
            .args(["flamegraph", "-i", "in.perf-script", "-o", "out.svg"])
            .args(extra)
            .output()
            .unwrap();
        common::assert_success(&out);
        lever_testkit::golden(&golden.join(name), &String::from_utf8(out.stdout).unwrap());
    }
    let out = Command::new(LEVER)
        .args(["flamegraph", "-i", "/nonexistent/p.script"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/p.script"));
}

#[test]
fn no_input_is_a_clear_error() {
    let out = Command::new(LEVER).args(["flamegraph"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to draw"));
}

#[test]
fn profiles_a_command_with_perf_when_available() {
    let perf_works = Command::new("perf")
        .args(["record", "-o", "/dev/null", "-q", "--", "true"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !perf_works {
        eprintln!(
            "skipped: `perf record` is not available here (no linux-perf or perf_event_paranoid)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("cmd.svg");
    let out = Command::new(LEVER)
        .args(["flamegraph", "--json", "-o"])
        .arg(&svg)
        .args(["--", "python3", "-c", "sum(i * i for i in range(3000000))"])
        .output()
        .unwrap();
    common::assert_success(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["weight"].as_u64().unwrap() > 0);
    assert!(svg.exists());
}
