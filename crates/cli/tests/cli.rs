//! End-to-end tests of the `lever` binary against simulated boards.

mod common;

use common::{lever, ok};
use std::path::Path;

fn board(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("b");
    ok(&["sim", "create", name, root.to_str().unwrap()]);
    dir
}

fn root(dir: &tempfile::TempDir) -> String {
    dir.path().join("b").to_str().unwrap().to_string()
}

/// Seed 000 §3.4: the PerfHAL opcodes of QCS6490 and their sysnodes.
const SEED_OPCODES: &[(&str, &str)] = &[
    ("0x44000000", "/proc/sys/kernel/sched_util_clamp_min"),
    ("0x44004000", "/proc/sys/kernel/sched_util_clamp_max"),
    (
        "0x44008100",
        "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq",
    ),
    (
        "0x44008000",
        "/sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq",
    ),
    (
        "0x44008200",
        "/sys/devices/system/cpu/cpufreq/policy7/scaling_min_freq",
    ),
    (
        "0x4400C100",
        "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq",
    ),
    (
        "0x4400C000",
        "/sys/devices/system/cpu/cpufreq/policy4/scaling_max_freq",
    ),
    (
        "0x4400C200",
        "/sys/devices/system/cpu/cpufreq/policy7/scaling_max_freq",
    ),
];

#[test]
fn qcs6490_lists_every_seed_opcode_with_node_and_current_value() {
    let dir = board("qcs6490");
    let root = root(&dir);
    let text = ok(&["--root", &root, "resources"]);
    assert!(text.contains("target qcs6490"), "{text}");
    for (opcode, node) in SEED_OPCODES {
        let line = text
            .lines()
            .find(|l| l.starts_with(opcode))
            .unwrap_or_else(|| panic!("{opcode} missing from:\n{text}"));
        assert!(line.contains(node), "{line}");
        let current = std::fs::read_to_string(Path::new(&root).join(&node[1..])).unwrap();
        assert!(
            line.split_whitespace().any(|w| w == current.trim()),
            "{line} should show {current}"
        );
    }
}

#[test]
fn json_output_and_global_flags_after_the_subcommand() {
    let dir = board("qcs6490");
    let root = root(&dir);
    let text = ok(&["resources", "--root", &root, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["target"], "qcs6490");
    let resources = v["resources"].as_array().unwrap();
    for (opcode, node) in SEED_OPCODES {
        let r = resources
            .iter()
            .find(|r| r["opcode"] == *opcode)
            .unwrap_or_else(|| panic!("{opcode} missing"));
        assert_eq!(r["node"], *node);
        assert!(r["value"].is_string(), "{r}");
    }
    let silver_min = resources
        .iter()
        .find(|r| r["opcode"] == "0x44008100")
        .unwrap();
    assert_eq!(silver_min["unit"], "kHz");
    assert_eq!(silver_min["aggregation"], "max");
}

#[test]
fn every_board_runs_with_its_detected_target() {
    for name in ["qcs6490", "qcs5430-fp1", "am437x"] {
        let dir = board(name);
        let text = ok(&["--root", &root(&dir), "resources"]);
        assert!(text.contains("scaling_min_freq"), "{name}: {text}");
        assert!(!text.contains("(missing)"), "{name}: {text}");
    }
    // QCS5430 FP1 has no Prime cluster: no policy7 anywhere.
    let dir = board("qcs5430-fp1");
    let text = ok(&["--root", &root(&dir), "resources"]);
    assert!(!text.contains("policy7"), "{text}");
}

#[test]
fn sim_list_names_the_boards() {
    let text = ok(&["sim", "list"]);
    for b in ["qcs6490", "qcs5430-fp1", "am437x"] {
        assert!(text.contains(b), "{text}");
    }
    let v: serde_json::Value = serde_json::from_str(&ok(&["sim", "list", "--json"])).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3);
}

#[test]
fn unknown_board_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = lever(&[
        "sim",
        "create",
        "qcs9999",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("qcs9999") && err.contains("qcs6490"), "{err}");
}

#[test]
fn bad_target_file_names_file_line_and_field() {
    let dir = board("qcs6490");
    let yaml = dir.path().join("bad.yaml");
    std::fs::write(
        &yaml,
        "target: bad\ndescription: typo on line 7\nresources:\n  - name: swappiness\n    opcode: 0x48800000\n    node: /proc/sys/vm/swappiness\n    aggregtion: max\n",
    )
    .unwrap();
    let out = lever(&[
        "--root",
        &root(&dir),
        "target",
        "check",
        yaml.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:7:"), "{err}");
    assert!(err.contains("aggregtion"), "{err}");
}

#[test]
fn empty_root_gives_generic_with_nothing_and_no_crash() {
    // A kernel tree with nothing tunable in it (an empty directory with no
    // sys/ or proc/ at all is refused as a mistyped --root: tests/errors.rs).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sys")).unwrap();
    std::fs::create_dir(dir.path().join("proc")).unwrap();
    let text = ok(&["--root", dir.path().to_str().unwrap(), "resources"]);
    assert!(text.contains("generic"), "{text}");
    assert!(text.contains("no tunable resources"), "{text}");
}

#[test]
fn target_list_and_check() {
    let text = ok(&["target", "list"]);
    for t in ["qcs6490", "qcs5430-fp1", "generic"] {
        assert!(text.contains(t), "{text}");
    }
    let dir = board("qcs6490");
    let text = ok(&["--root", &root(&dir), "target", "check", "qcs6490"]);
    assert!(text.contains("ok"), "{text}");
    // The qcs6490 target against a board without policy7 fails precisely.
    let dir = board("qcs5430-fp1");
    let out = lever(&["--root", &root(&dir), "target", "check", "qcs6490"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("qcs6490.yaml:") && err.contains("policy7"),
        "{err}"
    );
}
