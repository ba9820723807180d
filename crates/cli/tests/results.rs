//! `lever results`: import, list, show, trend, export against an SQLite
//! store in a temp dir; exit codes of a wrong --db or run.
mod common;

use lever_results::model::*;
use std::path::Path;

fn run_doc(board: &str, at: &str, v: f64) -> Run {
    let device = Device {
        board: Some(board.into()),
        kernel_release: Some("6.6.28".into()),
        ..Device::default()
    };
    let mut run = Run::new(at, device);
    run.lever_version = "0.1.0".into();
    let mut s = Section::measured("latency", "lever latency -l 1000");
    let mut m = Metric::new("latency.max", "us", v).label("cpu", "1");
    m.samples = vec![v, 0.1 + 0.2];
    s.metrics.push(m);
    s.metrics
        .push(Metric::new("latency.max", "us", v * 2.0).label("cpu", "2"));
    run.sections.push(s);
    run.sections
        .push(Section::not_measured("boot", "no --boot-log given"));
    run
}

fn write_run(dir: &Path, name: &str, run: &Run) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(run).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

fn code(args: &[&str]) -> (Option<i32>, String) {
    let out = common::lever(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn import_list_show_trend_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let first = run_doc("rb3gen2", "2026-11-02T10:00:00Z", 0.1 + 0.7);
    let second = run_doc("rb3gen2", "2026-11-01T10:00:00Z", 20.0);
    let other = run_doc("am62x", "2026-11-03T10:00:00Z", 55.5);
    let f1 = write_run(dir.path(), "1.json", &first);
    let f2 = write_run(dir.path(), "2.json", &second);
    let f3 = write_run(dir.path(), "3.json", &other);

    let out = common::ok(&["results", "--db", db, "import", &f1]);
    assert!(
        out.starts_with("stored run 1 (rb3gen2, collected 2026-11-02T10:00:00Z)"),
        "{out}"
    );
    let stored: serde_json::Value = serde_json::from_str(&common::ok(&[
        "results", "import", &f2, "--db", db, "--json",
    ]))
    .unwrap();
    assert_eq!(stored["id"], 2);
    assert_eq!(stored["board"], "rb3gen2");
    common::ok(&["results", "--db", db, "import", &f3]);

    // Oldest first.
    let list = common::ok(&["results", "--db", db, "list"]);
    let ids: Vec<&str> = list
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["2", "1", "3"], "{list}");
    assert!(list.lines().next().unwrap().starts_with("RUN"), "{list}");
    let listed: serde_json::Value = serde_json::from_str(&common::ok(&[
        "results",
        "--db",
        db,
        "list",
        "--board",
        "rb3gen2",
        "--since",
        "2026-11-02",
        "--json",
    ]))
    .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], 1);
    assert_eq!(listed[0]["metrics"], 2);

    // show --json is the run document exactly.
    let shown: Run =
        serde_json::from_str(&common::ok(&["results", "--db", db, "show", "1", "--json"])).unwrap();
    assert_eq!(shown, first);
    let text = common::ok(&["results", "--db", db, "show", "1"]);
    assert!(text.contains("board      rb3gen2"), "{text}");
    assert!(
        text.contains("boot: not measured: no --boot-log given"),
        "{text}"
    );
    assert!(text.contains("latency.max  0.8"), "{text}");

    let trend = common::ok(&[
        "results",
        "--db",
        db,
        "trend",
        "latency.max",
        "--label",
        "cpu=1",
    ]);
    let values: Vec<&str> = trend
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(values, ["20", "0.8", "55.5"], "{trend}");
    let points: serde_json::Value = serde_json::from_str(&common::ok(&[
        "results",
        "--db",
        db,
        "trend",
        "latency.max",
        "--board",
        "rb3gen2",
        "--json",
    ]))
    .unwrap();
    let exact: Vec<f64> = points
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .collect();
    assert_eq!(exact, [20.0, 40.0, 0.1 + 0.7, (0.1 + 0.7) * 2.0]);

    let out_dir = dir.path().join("parquet");
    let done = common::ok(&[
        "results",
        "--db",
        db,
        "export",
        "--parquet",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        done.starts_with("exported 3 runs, 6 metrics, 6 samples"),
        "{done}"
    );
    for f in ["runs.parquet", "metrics.parquet", "samples.parquet"] {
        let bytes = std::fs::read(out_dir.join(f)).unwrap();
        assert_eq!(&bytes[..4], b"PAR1", "{f}");
    }
}

#[test]
fn wrong_runs_and_stores_have_precise_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    // An unknown run: not available (4), with the JSON error object.
    let (c, out) = code(&["results", "--db", db, "show", "9", "--json"]);
    assert_eq!(c, Some(4));
    assert!(out.contains("\"code\": \"not_available\""), "{out}");
    // A --db that is no store location: bad input (3).
    assert_eq!(
        code(&["results", "--db", "mysql://lab/db", "list"]).0,
        Some(3)
    );
    assert_eq!(
        code(&["results", "--db", "postgres://u@h:port/db", "list"]).0,
        Some(3)
    );
    // A file that is not a database, or another program's database: 3.
    let notes = dir.path().join("notes.db");
    std::fs::write(&notes, "not a database\n".repeat(100)).unwrap();
    assert_eq!(
        code(&["results", "--db", notes.to_str().unwrap(), "list"]).0,
        Some(3)
    );
    // A store in a directory that does not exist: 4.
    let missing = dir.path().join("no/dir/r.db");
    assert_eq!(
        code(&["results", "--db", missing.to_str().unwrap(), "list"]).0,
        Some(4)
    );
    // No PostgreSQL server at that socket: 4.
    let url = format!("host={} dbname=lab", dir.path().display());
    assert_eq!(code(&["results", "--db", &url, "list"]).0, Some(4));
    // Importing a file that is not a run (3) or is not there (4).
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": 1}").unwrap();
    assert_eq!(
        code(&["results", "--db", db, "import", bad.to_str().unwrap()]).0,
        Some(3)
    );
    assert_eq!(
        code(&["results", "--db", db, "import", "/nonexistent/run.json"]).0,
        Some(4)
    );
    // Malformed filters are bad flag values (3), like every value that
    // does not parse; a missing flag is a usage error (2).
    assert_eq!(
        code(&["results", "--db", db, "list", "--since", "yesterday"]).0,
        Some(3)
    );
    assert_eq!(
        code(&["results", "--db", db, "trend", "x", "--label", "cpu"]).0,
        Some(3)
    );
    assert_eq!(code(&["results", "--db", db, "export"]).0, Some(2));
}

#[test]
fn keys_of_a_newer_collector_survive_import_and_show() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let mut doc =
        serde_json::to_value(run_doc("b", "2026-11-01T00:00:00Z", 1.5999999999999999)).unwrap();
    doc["future"] = serde_json::json!({"thermal": [1, 2]});
    let f = dir.path().join("run.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    common::ok(&["results", "--db", db, "import", f.to_str().unwrap()]);
    let shown: serde_json::Value =
        serde_json::from_str(&common::ok(&["results", "--db", db, "show", "1", "--json"])).unwrap();
    assert_eq!(shown, doc);
    let text = common::ok(&["results", "--db", db, "show", "1"]);
    assert!(text.contains("latency.max  1.6"), "{text}");
}

#[test]
fn the_default_store_is_under_the_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_run(
        dir.path(),
        "run.json",
        &run_doc("b", "2026-11-01T00:00:00Z", 1.0),
    );
    let out = std::process::Command::new(common::LEVER)
        .args(["results", "import", &f])
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .output()
        .unwrap();
    common::assert_success(&out);
    let expected = dir.path().join("data/lever/results.db");
    assert!(expected.is_file());
    assert!(String::from_utf8_lossy(&out.stdout).contains(expected.to_str().unwrap()));
}

/// A run imported twice is stored once (the second import names the first
/// copy); `trend` on a metric no run has fails (exit 1) with the near
/// names, and `trend --help`'s example metrics are ones a run has.
#[test]
fn import_twice_keeps_one_and_trend_suggests() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let f1 = write_run(
        dir.path(),
        "1.json",
        &run_doc("rb3gen2", "2026-11-02T10:00:00Z", 3.0),
    );
    common::ok(&["results", "--db", db, "import", &f1]);
    let again = common::ok(&["results", "--db", db, "import", &f1]);
    assert!(again.contains("already in"), "{again}");
    let json: serde_json::Value = serde_json::from_str(&common::ok(&[
        "results", "--db", db, "import", &f1, "--json",
    ]))
    .unwrap();
    assert_eq!(
        (json["id"].as_i64(), json["already_stored"].as_bool()),
        (Some(1), Some(true))
    );
    let list: serde_json::Value =
        serde_json::from_str(&common::ok(&["results", "--db", db, "list", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    // The same board and time with other values is another run.
    let f2 = write_run(
        dir.path(),
        "2.json",
        &run_doc("rb3gen2", "2026-11-02T10:00:00Z", 4.0),
    );
    assert!(common::ok(&["results", "--db", db, "import", &f2]).starts_with("stored run 2"));

    let out = common::lever(&["results", "--db", db, "trend", "latency.mx"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean latency.max?"), "{err}");
    let out = common::lever(&[
        "results",
        "--db",
        db,
        "trend",
        "latency.max",
        "--board",
        "am62x",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("with these filters"));
    common::ok(&["results", "--db", db, "trend", "latency.max"]);
    let help = common::ok(&["results", "trend", "--help"]);
    assert!(
        help.contains("`latency.max`") && !help.contains("memory.used"),
        "{help}"
    );
}
