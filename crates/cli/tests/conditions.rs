//! The conditions of a run through the binary: `report collect` writes
//! them into RUN.json (a simulated QCS6490's 30 thermal zones, its
//! policies, the note that they are the tree's values), and `report
//! render A B` puts a difference at the top, declines to judge against a
//! run taken under load unless `--force`, and says nothing when the
//! conditions are the same.

mod common;

use common::{lever, ok};

#[test]
fn collect_records_and_render_compares_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("board");
    ok(&["sim", "create", "qcs6490", root.to_str().unwrap()]);
    let root = root.to_str().unwrap();
    let base = dir.path().join("base.json");
    ok(&[
        "--root",
        root,
        "report",
        "collect",
        "--no-store",
        "-o",
        base.to_str().unwrap(),
    ]);
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let c = &run["conditions"];
    assert!(c["simulated"]
        .as_str()
        .unwrap()
        .contains("not live readings"));
    assert_eq!(
        c["machine"]["value"]["model"],
        "Qualcomm Technologies, Inc. Robotics RB3gen2"
    );
    let zones = c["thermal_before"]["value"]["zones"].as_array().unwrap();
    assert_eq!(zones.len(), 30);
    assert_eq!(zones[10]["kind"], "cpu10-thermal");
    assert_eq!(zones[10]["temp_mc"], 44500);
    assert_eq!(c["cpufreq_before"]["value"][2]["name"], "policy7");
    assert_eq!(c["throttling"]["value"], serde_json::json!([]));

    // The simulated board's /proc/loadavg: 8 CPUs 12 % busy, quiet.
    assert_eq!(c["load_before"]["value"]["load_1m"], 0.96);
    assert_eq!(c["load_before"]["value"]["runnable"], 1);
    // The same run, its base taken under the load.
    run["conditions"]["load_before"]["value"]["load_1m"] = serde_json::json!(6.8);
    run["conditions"]["load_before"]["value"]["runnable"] = serde_json::json!(7);
    let loaded = dir.path().join("loaded.json");
    std::fs::write(&loaded, run.to_string()).unwrap();
    let md = dir.path().join("out.md");
    let (b, l, m) = (
        base.to_str().unwrap(),
        loaded.to_str().unwrap(),
        md.to_str().unwrap(),
    );
    let text = ok(&["report", "render", l, b, "--md", m]);
    assert!(
        text.starts_with("run #2 against #1: conditions that differ:\n"),
        "{text}"
    );
    assert!(
        text.contains("WARNING: base run: loaded before the run: load average 6.80 on 8 CPUs"),
        "{text}"
    );
    assert!(text.contains("no change is called significant"), "{text}");
    let page = std::fs::read_to_string(&md).unwrap();
    assert!(page.contains("## Conditions against #1"), "{page}");

    let forced = ok(&["report", "render", l, b, "--md", m, "--force"]);
    assert!(forced.contains("judged anyway (--force)"), "{forced}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "report", "render", l, b])).unwrap();
    assert_eq!(json["conditions"][0]["judged"], false);
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "report", "render", l, b, "--force"])).unwrap();
    assert_eq!(json["conditions"][0]["judged"], true);

    // The same conditions: nothing to warn about.
    let same = ok(&["report", "render", b, b, "--md", m]);
    assert!(
        same.starts_with("run #2 against #1: conditions: the same in both runs\n"),
        "{same}"
    );
    assert!(!same.contains("WARNING"));
    assert_eq!(
        lever(&["report", "render", b, b, "--force", "--md", m])
            .status
            .code(),
        Some(0)
    );
}
