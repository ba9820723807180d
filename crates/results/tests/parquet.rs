//! The Parquet export, read back by pyarrow (installed by .ci/run).
mod common;

use lever_results::Store;
use std::process::Command;

/// pyarrow's reading of the three files, as JSON; `None` (and why) where
/// python3 or pyarrow is missing, which CI does not accept.
fn read_with_pyarrow(dir: &std::path::Path) -> Option<serde_json::Value> {
    let script = r#"
import json, sys, pyarrow.parquet as pq
out = {}
for name in ("runs", "metrics", "samples"):
    t = pq.read_table(f"{sys.argv[1]}/{name}.parquet")
    out[name] = {"schema": [f"{f.name}:{f.type}" for f in t.schema], "rows": t.to_pylist()}
print(json.dumps(out))
"#;
    let probe = Command::new("python3")
        .args(["-c", "import pyarrow"])
        .output();
    let why = match &probe {
        Err(e) => Some(format!("no python3: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "python3 has no pyarrow ({}); .ci/run installs it",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    };
    if let Some(why) = why {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "under CI: {why}"
        );
        println!("skipping the pyarrow read-back: {why}");
        return None;
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pyarrow: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn the_export_reads_back_in_pyarrow() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(Some(dir.path().join("r.db").to_str().unwrap())).unwrap();
    let mut second = common::run("board-b", "2026-11-02T10:00:00Z", 2.5);
    second.device.kernel_release = None;
    let a = store
        .save(&common::run("board-a", "2026-11-01T10:00:00Z", 0.1 + 0.2))
        .unwrap();
    let b = store.save(&second).unwrap();
    let out = dir.path().join("export");
    let done = store.export_parquet(&out).unwrap();
    assert_eq!((done.runs, done.metrics, done.samples), (2, 6, 16));
    for f in ["runs.parquet", "metrics.parquet", "samples.parquet"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let Some(read) = read_with_pyarrow(&out) else {
        return;
    };
    let runs = &read["runs"]["rows"];
    assert_eq!(runs[0]["id"], a.0);
    assert_eq!(runs[0]["board"], "board-a");
    assert_eq!(runs[0]["kernel_release"], "6.6.28-rt");
    assert_eq!(runs[1]["id"], b.0);
    assert!(runs[1]["kernel_release"].is_null(), "{}", runs[1]);
    assert_eq!(runs[1]["soc"], "QCS6490");
    let schema: Vec<&str> = read["metrics"]["schema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(schema.contains(&"value:double"), "{schema:?}");
    assert!(schema.contains(&"name:string"), "{schema:?}");
    let metrics = read["metrics"]["rows"].as_array().unwrap();
    assert_eq!(metrics.len(), 6);
    assert_eq!(metrics[0]["name"], "latency.max");
    assert_eq!(
        metrics[0]["value"].as_f64().unwrap().to_bits(),
        (0.1f64 + 0.2).to_bits()
    );
    assert_eq!(metrics[0]["labels"], r#"{"cpu":"0"}"#);
    assert_eq!(metrics[0]["better"], "lower");
    assert!(metrics[2]["better"].is_null());
    assert_eq!(metrics[5]["board"], "board-b");
    let samples = read["samples"]["rows"].as_array().unwrap();
    assert_eq!(samples.len(), 16);
    assert_eq!(samples[0]["metric_id"], metrics[0]["id"]);
    assert_eq!(
        samples[3]["value"].as_f64().unwrap(),
        123_456_789.123_456_78
    );
    // CPU 0's samples were taken in two passes of 1 and 3; CPU 1's not.
    let passes: Vec<&serde_json::Value> = samples[..8].iter().map(|s| &s["pass"]).collect();
    assert_eq!(
        passes[..4],
        [0, 1, 1, 1].map(serde_json::Value::from).each_ref()
    );
    assert!(passes[4..].iter().all(|p| p.is_null()), "{passes:?}");
}

#[test]
fn an_export_of_an_empty_store_has_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(Some(dir.path().join("r.db").to_str().unwrap())).unwrap();
    let done = store.export_parquet(&dir.path().join("out")).unwrap();
    assert_eq!((done.runs, done.metrics, done.samples), (0, 0, 0));
    if let Some(read) = read_with_pyarrow(&dir.path().join("out")) {
        assert_eq!(read["runs"]["rows"].as_array().unwrap().len(), 0);
        assert_eq!(read["runs"]["schema"][0], "id:int64");
    }
}
