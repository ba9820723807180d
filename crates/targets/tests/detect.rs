//! Picking a target: by device-tree compatible, by name, or by path.

mod common;

use lever_targets::{builtin_for_compatible, detect, resolve, TargetError};

#[test]
fn detects_board_targets_from_the_device_tree() {
    let tree = common::qcs6490();
    let fs = tree.fs();
    assert_eq!(detect(fs).unwrap().name, "qcs6490");
    let tree = common::qcs5430();
    let fs = tree.fs();
    // Lists qcom,qcm6490 too, but the more specific qcom,qcs5430 comes first.
    assert_eq!(detect(fs).unwrap().name, "qcs5430-fp1");
}

#[test]
fn no_device_tree_or_unknown_board_means_generic() {
    let tree = lever_testkit::FakeTree::new();
    let fs = tree.fs();
    assert_eq!(detect(fs).unwrap().name, "generic");
    tree.node(
        "/proc/device-tree/compatible",
        "ti,am437x-gp-evm\0ti,am4372\0ti,am43\0",
    );
    tree.node("/proc/sys/vm/swappiness", "60\n");
    let t = detect(fs).unwrap();
    assert_eq!(t.name, "generic");
    assert_eq!(t.resources.len(), 1);
}

#[test]
fn compatible_matching_prefers_the_most_specific_entry() {
    assert_eq!(
        builtin_for_compatible(&["qcom,qcs6490-rb3gen2", "qcom,qcm6490"]),
        Some("qcs6490")
    );
    assert_eq!(
        builtin_for_compatible(&["x,y", "qcom,qcs5430", "qcom,qcm6490"]),
        Some("qcs5430-fp1")
    );
    assert_eq!(
        builtin_for_compatible(&["raspberrypi,5-model-b", "brcm,bcm2712"]),
        None
    );
    assert_eq!(builtin_for_compatible(&[]), None);
}

#[test]
fn resolve_by_name_path_or_detection() {
    let tree = common::qcs6490();
    let fs = tree.fs();
    assert_eq!(resolve(None, fs).unwrap().name, "qcs6490");
    assert_eq!(resolve(Some("generic"), fs).unwrap().name, "generic");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.yaml");
    std::fs::write(
        &path,
        "target: mine\nresources:\n  - name: swappiness\n    opcode: 0x48800000\n    node: /proc/sys/vm/swappiness\n    unit: count\n    low: 0\n    high: 200\n    aggregation: newest\n    permission: third-party\n",
    )
    .unwrap();
    let t = resolve(Some(path.to_str().unwrap()), fs).unwrap();
    assert_eq!(t.name, "mine");
    assert_eq!(t.source, path.display().to_string());
    assert_eq!(t.origins[0].to_string(), format!("{}:3", path.display()));

    let err = resolve(Some("qcs9999"), fs).unwrap_err();
    assert!(
        matches!(
            err,
            TargetError::Load(lever_yaml::LoadError::Unknown { .. })
        ),
        "{err}"
    );
    let err = resolve(Some("/nonexistent/t.yaml"), fs).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/t.yaml: cannot read target file: "),
        "{err}"
    );
}
