//! What `lever daemon --urm` serves to URM's client API (URM request):
//! the resource codes with their opcodes, the clusters, and
//! `PropertiesConfig.yaml` layered as URM layers it.

use lever_protocol::{UrmCluster, UrmPer};

fn write(dir: &std::path::Path, file: &str, text: &str) {
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), text).unwrap();
}

#[test]
fn codes_clusters_and_layered_properties() {
    let dir = tempfile::tempdir().unwrap();
    let common = dir.path().join("common");
    let custom = dir.path().join("custom");
    write(
        &common,
        "PropertiesConfig.yaml",
        "\
# URM's own properties
PropertyConfigs:
  - Name: resource_tuner.maximum.concurrent.requests
    Value: \"60\"
  - Name: resource_tuner.pulse.duration
    Value: \"23000\"
",
    );
    write(
        &custom,
        "PropertiesConfig.yaml",
        "\
PropertyConfigs:
  - Name: \"resource_tuner.pulse.duration\"
    Value: \"60000000\"
  - Name: test.debug.enabled
    Value: true
",
    );
    write(
        &common,
        "ResourcesConfig.yaml",
        "\
ResourceConfigs:
  - ResType: \"0x3\"
    ResID: \"0x0\"
    Name: SCHED_UTIL_CLAMP_MIN
    Path: /proc/sys/kernel/sched_util_clamp_min
  - ResType: \"0xff\"
    ResID: \"0x000a\"
    Name: PER_CLUSTER
    Path: /etc/urm/tests/nodes/cluster_%d.txt
    ApplyType: cluster
    LowThreshold: 0
    HighThreshold: 2048
  - ResType: \"0x4\"
    ResID: \"0x1\"
    Name: MEM
    Path: /proc/sys/vm/mem_kb
    Unit: KB
    LowThreshold: 1
    HighThreshold: 4
",
    );
    write(
        &common,
        "InitConfig.yaml",
        "\
InitConfigs:
  - ClusterMap:
    - Id: 0
      Type: little
    - Id: 1
      Type: big
",
    );
    let clusters = vec![
        lever_targets::Cluster {
            name: "p0".into(),
            id: 0,
            policy: 0,
            cpus: vec![0, 1, 2, 3],
        },
        lever_targets::Cluster {
            name: "p4".into(),
            id: 1,
            policy: 4,
            cpus: vec![4, 5, 6, 7],
        },
    ];
    let out = lever_urm::import(dir.path(), "urm", &clusters).unwrap();
    let view = out.view();
    // custom/ replaces common/'s value; a YAML boolean is kept as its text.
    assert_eq!(view.properties["resource_tuner.pulse.duration"], "60000000");
    assert_eq!(
        view.properties["resource_tuner.maximum.concurrent.requests"],
        "60"
    );
    assert_eq!(view.properties["test.debug.enabled"], "true");
    assert_eq!(view.properties.len(), 3);
    // Properties are not target content: the file is not in the header.
    assert!(!out.files.iter().any(|f| f.contains("PropertiesConfig")));
    let codes: Vec<(u32, u32, UrmPer, i64)> = view
        .codes
        .iter()
        .map(|c| (c.code, c.opcode, c.per, c.factor))
        .collect();
    // Thresholds only when both are given (times the Unit factor).
    let ranges: Vec<Option<(i64, i64)>> = view.codes.iter().map(|c| c.range).collect();
    assert_eq!(ranges, vec![None, Some((0, 2048)), Some((1024, 4096))]);
    assert_eq!(
        codes,
        vec![
            (0x0003_0000, 0x4000_0000 | 0x33 << 22, UrmPer::None, 1),
            (0x00FF_000A, 0x4000_0000 | 0x3F << 22, UrmPer::Cluster, 1),
            (
                0x0004_0001,
                0x4000_0000 | 0x34 << 22 | 1 << 14,
                UrmPer::None,
                1024
            ),
        ]
    );
    assert_eq!(
        view.clusters,
        vec![
            UrmCluster {
                id: 0,
                cpus: vec![0, 1, 2, 3]
            },
            UrmCluster {
                id: 1,
                cpus: vec![4, 5, 6, 7]
            },
        ]
    );
    // Each opcode is one of the target's: URM's big cluster (0x100) is
    // the cluster with id 1.
    assert_eq!(view.opcode(0x00FF_000A, 0x100), Ok((0x4FC0_0100, 1)));
    let names: Vec<&str> = out
        .target
        .resources
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert!(names.contains(&"per_cluster"), "{names:?}");
}

#[test]
fn a_property_without_a_value_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "PropertiesConfig.yaml",
        "\
PropertyConfigs:
  - Name: a.b
    Value: \"1\"
  - Name: c.d
",
    );
    write(dir.path(), "ResourcesConfig.yaml", "ResourceConfigs: []\n");
    let e = lever_urm::import(dir.path(), "urm", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("PropertiesConfig.yaml:4:"), "{e}");
    assert!(
        e.contains("PropertyConfigs[1].Value") && e.contains("missing required field"),
        "{e}"
    );
}
