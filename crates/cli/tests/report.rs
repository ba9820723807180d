//! `lever report collect|render` end to end: a simulated qcs6490 with a
//! daemon, this machine, and the page, Markdown and JSON of two runs.

mod common;

use common::daemon::Daemon;
use lever_report::model::{Run, Status};
use std::path::Path;

fn boot_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../boot/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn read_run(p: &Path) -> Run {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn every_section_measured_or_explained(run: &Run) {
    let names: Vec<&str> = run.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, lever_report::collect::SECTIONS);
    for s in &run.sections {
        match &s.status {
            Status::Measured => assert!(!s.method.is_empty(), "{}", s.name),
            Status::NotMeasured { why } => assert!(!why.is_empty(), "{}", s.name),
        }
    }
}

#[test]
fn collect_on_a_simulated_board_with_its_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let daemon = Daemon::start(&state, &["--root", board.to_str().unwrap()]);
    let out = dir.path().join("run.json");
    let db = dir.path().join("results.db");
    let text = common::ok(&[
        "--root",
        board.to_str().unwrap(),
        "report",
        "collect",
        "-o",
        out.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--boot-log",
        &format!("serial={}", boot_fixture("seed000-8.3-serial.log")),
        "--boot-log",
        &boot_fixture("seed000-8.3-systemd-time.txt"),
        "--usecase",
        "idle=sleep 0.3",
        "--latency=1",
        "--daemon-socket",
        daemon.socket.to_str().unwrap(),
    ]);
    assert!(text.contains("wrote "), "{text}");
    assert!(text.contains("daemon   measured"), "{text}");
    let run = read_run(&out);
    every_section_measured_or_explained(&run);
    assert_eq!(run.device.board.as_deref(), Some("qcs6490"));
    assert!(run.lever_version.starts_with("0."), "{}", run.lever_version);
    let daemon_section = run.section("daemon").unwrap();
    assert_eq!(daemon_section.status, Status::Measured);
    assert!(run.metric("daemon.resources").unwrap().value > 0.0);
    // The round trip, timed here: 50 PINGs, their median.
    let rt = run.metric("daemon.round_trip").unwrap();
    assert_eq!((rt.unit.as_str(), rt.samples.len()), ("us", 50));
    assert!(rt.value > 0.0 && rt.value < 1e6, "{}", rt.value);
    // This daemon serves the simulated board: the section says so.
    assert_eq!(daemon_section.detail["simulated_board"], "qcs6490");
    assert!(
        daemon_section
            .method
            .contains("the daemon serves the simulated board qcs6490"),
        "{}",
        daemon_section.method
    );
    assert!(matches!(
        run.section("latency").unwrap().status,
        Status::NotMeasured { .. }
    ));
    // Round trip through the model: the file is exactly what the model writes.
    let again = serde_json::to_string_pretty(&run).unwrap() + "\n";
    assert_eq!(again, std::fs::read_to_string(&out).unwrap());
    // ... and through the results store: collect stored it, `results show`
    // gives back the same document.
    assert!(text.contains("stored as run 1 in "), "{text}");
    let shown = common::ok(&[
        "results",
        "--db",
        db.to_str().unwrap(),
        "show",
        "1",
        "--json",
    ]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let collected: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(shown, collected);
}

#[test]
fn collect_on_this_machine_measures_the_use_case() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    common::ok(&[
        "report",
        "collect",
        "--no-store",
        "-o",
        out.to_str().unwrap(),
        "--usecase",
        "alloc=sleep 0.5",
        "--daemon-socket",
        dir.path().join("none.sock").to_str().unwrap(),
    ]);
    let run = read_run(&out);
    every_section_measured_or_explained(&run);
    assert!(run.device.kernel_release.is_some());
    assert!(run.device.arch.is_some());
    assert!(!run.device.cpus.is_empty());
    let mem = run.section("memory").unwrap();
    assert_eq!(mem.status, Status::Measured);
    assert!(
        run.metrics()
            .any(|m| m.name == "memory.free" && m.labels["usecase"] == "alloc"),
        "{:?}",
        mem.detail
    );
    assert!(mem.detail["series"][0]["t_s"].as_array().unwrap().len() >= 2);
}

#[test]
fn render_writes_the_page_markdown_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let run = dir.path().join("run.json");
    common::ok(&[
        "--root",
        board.to_str().unwrap(),
        "report",
        "collect",
        "--no-store",
        "-o",
        run.to_str().unwrap(),
    ]);
    let (html, md, json) = (
        dir.path().join("r.html"),
        dir.path().join("r.md"),
        dir.path().join("r.json"),
    );
    let r = run.to_str().unwrap();
    let text = common::ok(&[
        "report",
        "render",
        r,
        r,
        "--html",
        html.to_str().unwrap(),
        "--md",
        md.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    // The conditions of #2 against #1 first, then the files written.
    assert!(
        text.starts_with("run #2 against #1: conditions: the same in both runs"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("wrote ")).count(),
        3,
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("2 runs compared"));
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("# Lever report"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        doc["runs"].as_array().unwrap().len(),
        2,
        "--json FILE was taken as a run"
    );
    // The base's reruns from the results store: the stored runs of its
    // board, kernel and Lever version, other than the runs given.
    let db = dir.path().join("results.db");
    let db = db.to_str().unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
    let variant = |name: &str, at: &str, kernel: &str| {
        let mut d = doc.clone();
        d["collected_at"] = serde_json::json!(at);
        d["device"]["kernel_release"] = serde_json::json!(kernel);
        let p = dir.path().join(name);
        std::fs::write(&p, d.to_string()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let kernel = doc["device"]["kernel_release"]
        .as_str()
        .unwrap()
        .to_string();
    let rerun = variant("rerun.json", "2026-11-20T10:00:00Z", &kernel);
    let other_kernel = variant("other.json", "2026-11-21T10:00:00Z", "6.6.0-other");
    for f in [r, rerun.as_str(), other_kernel.as_str()] {
        common::ok(&["results", "--db", db, "import", f]);
    }
    let text = common::ok(&[
        "report",
        "render",
        r,
        r,
        "--base-reruns-from-store",
        "--db",
        db,
    ]);
    assert!(
        text.starts_with("base reruns from the results store: 1 (runs 2)"),
        "{text}"
    );
    assert!(
        text.contains("base reruns: 1 of 1 give the spread a change must leave"),
        "{text}"
    );
    let stdout = common::ok(&[
        "--json",
        "report",
        "render",
        r,
        r,
        "--base-reruns-from-store",
        "--db",
        db,
    ]);
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["base_reruns"], 1, "{}", j["reruns_left_out"]);
    // --db is the store of --base-reruns-from-store only.
    let out = common::lever(&["report", "render", r, r, "--db", db]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // The base's reruns (`--base-rerun`, as `bench compare` takes them):
    // counted in the document, named on the terminal; one that is not a
    // run document is refused.
    let text = common::ok(&["report", "render", r, r, "--base-rerun", r]);
    assert!(
        text.contains("base reruns: 1 of 1 give the spread a change must leave"),
        "{text}"
    );
    let stdout = common::ok(&["--json", "report", "render", r, r, "--base-rerun", r]);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["base_reruns"], 1, "{}", doc["reruns_left_out"]);
    let out = common::lever(&[
        "report",
        "render",
        r,
        r,
        "--base-rerun",
        "/nonexistent.json",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/nonexistent.json"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `--json` alone: the document on stdout.
    let stdout = common::ok(&["report", "render", r, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["runs"][0]["device"]["board"], "qcs6490");
}

#[test]
fn render_refuses_what_is_not_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"tests\": []}").unwrap();
    let out = common::lever(&[
        "report",
        "render",
        bad.to_str().unwrap(),
        "--md",
        "/dev/null",
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a `lever report collect` run document")
    );
    let out = common::lever(&[
        "report",
        "collect",
        "--no-store",
        "-o",
        "/dev/null",
        "--usecase",
        "nocommand",
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
