//! The built-in targets: they parse, carry the seed's opcodes, and bind
//! against fake trees of the boards they describe.

mod common;

use lever_engine::resource::{Aggregation, Opcode, Permission, ResourceKind};
use lever_targets::{builtin_names, builtin_text, load_builtin, TargetError};

#[test]
fn every_builtin_parses_and_is_named_like_its_file() {
    assert_eq!(builtin_names(), ["qcs6490", "qcs5430-fp1", "generic"]);
    for name in builtin_names() {
        let file = load_builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(file.name, *name);
        assert_eq!(file.source, format!("builtin:{name}"));
        assert!(!file.description.is_empty());
        assert!(builtin_text(name)
            .unwrap()
            .contains(&format!("target: {name}\n")));
    }
}

#[test]
fn unknown_builtin_lists_the_known_ones() {
    let err = load_builtin("qcs9999").unwrap_err();
    assert!(matches!(
        err,
        TargetError::Load(lever_yaml::LoadError::Unknown { .. })
    ));
    assert_eq!(
        err.to_string(),
        "unknown target `qcs9999` (built-in targets: qcs6490, qcs5430-fp1, generic; \
         or give the path of a .yaml target file)"
    );
}

/// Seed 000 §3.4, "Supported opcodes", verbatim.
const SEED_OPCODES: &[(u32, &str)] = &[
    (0x44000000, "/proc/sys/kernel/sched_util_clamp_min"),
    (0x44004000, "/proc/sys/kernel/sched_util_clamp_max"),
    (
        0x44008100,
        "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq",
    ),
    (
        0x44008000,
        "/sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq",
    ),
    (
        0x44008200,
        "/sys/devices/system/cpu/cpufreq/policy7/scaling_min_freq",
    ),
    (
        0x4400C100,
        "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq",
    ),
    (
        0x4400C000,
        "/sys/devices/system/cpu/cpufreq/policy4/scaling_max_freq",
    ),
    (
        0x4400C200,
        "/sys/devices/system/cpu/cpufreq/policy7/scaling_max_freq",
    ),
];

#[test]
fn qcs6490_has_the_seed_opcodes_on_the_seed_nodes() {
    let tree = common::qcs6490();
    let fs = tree.fs();
    let target = load_builtin("qcs6490").unwrap().bind(fs).unwrap();
    for (op, node) in SEED_OPCODES {
        let r = target
            .by_opcode(Opcode(*op))
            .unwrap_or_else(|| panic!("0x{op:08X} missing"));
        assert_eq!(r.node, *node, "0x{op:08X}");
    }
    let silver = target.by_name("cpu_min_freq.silver").unwrap();
    assert_eq!(silver.opcode, Opcode(0x44008100));
    assert_eq!(
        silver.kind,
        ResourceKind::PairMin {
            max: Opcode(0x4400C100)
        }
    );
    assert_eq!(
        target.by_name("cpu_max_freq.prime").unwrap().kind,
        ResourceKind::PairMax {
            min: Opcode(0x44008200)
        }
    );
    assert_eq!(
        target.by_name("sched_util_clamp_min").unwrap().kind,
        ResourceKind::PairMin {
            max: Opcode(0x44004000)
        }
    );
}

#[test]
fn qcs6490_binds_every_resource_with_bounds_and_steps() {
    let tree = common::qcs6490();
    let fs = tree.fs();
    let target = load_builtin("qcs6490").unwrap().bind(fs).unwrap();
    assert_eq!(target.name, "qcs6490");
    assert_eq!(target.source, "builtin:qcs6490");
    assert_eq!(target.resources.len(), target.origins.len());
    // 2 uclamp + 3x2 freq + 3 governors + 3 rate limits + 2 GPU freq
    // + 2 pwrlevels + 5 vm + 3 sched + 7 online (no cpu0) + 8x3 cpuidle + 1 PM QoS
    assert_eq!(target.resources.len(), 58);

    let prime = target.by_name("cpu_min_freq.prime").unwrap();
    assert_eq!((prime.low, prime.high), (806400, 2707200));
    assert_eq!(prime.unit, "kHz");
    let steps = prime.steps.as_ref().unwrap();
    assert_eq!(steps.len(), 16);
    assert_eq!(steps.first(), Some(&806400));
    assert_eq!(prime.aggregation, Aggregation::Max);
    assert_eq!(
        prime.description,
        "Minimum frequency of the prime cluster (seed 000 §3.4)"
    );

    // KGSL lists its table fastest first; steps are ascending and the bounds
    // come from the table.
    let gpu = target.by_name("gpu_max_freq").unwrap();
    assert_eq!(
        gpu.steps.as_deref(),
        Some(&[315000000, 450000000, 550000000, 608000000, 700000000, 812000000][..])
    );
    assert_eq!((gpu.low, gpu.high), (315000000, 812000000));
    assert_eq!(
        gpu.kind,
        ResourceKind::PairMax {
            min: Opcode(0x48400000)
        }
    );

    // pwrlevels: 0..num_pwrlevels-1; a floor on performance is the lowest number.
    let floor = target.by_name("gpu_min_pwrlevel").unwrap();
    assert_eq!((floor.low, floor.high), (0, 5));
    assert_eq!(floor.aggregation, Aggregation::Min);
    assert_eq!(
        target.by_name("gpu_max_pwrlevel").unwrap().aggregation,
        Aggregation::Max
    );

    let gov = target.by_name("cpu_governor.gold").unwrap();
    assert_eq!(gov.opcode, Opcode(0x48000000));
    assert_eq!((gov.low, gov.high), (0, 2));
    assert_eq!(gov.render(2), "performance");

    let rt = target.by_name("sched_rt_runtime_us").unwrap();
    assert_eq!(
        (rt.low, rt.high, rt.permission),
        (-1, 1000000, Permission::System)
    );

    assert!(
        target.by_name("cpu_online.cpu0").is_none(),
        "cpu0 has no online node"
    );
    let online = target.by_name("cpu_online.cpu7").unwrap();
    assert_eq!(online.opcode, Opcode(0x49000070));
    assert_eq!(online.node, "/sys/devices/system/cpu/cpu7/online");
    assert_eq!(online.permission, Permission::System);

    let idle = target.by_name("cpuidle_disable.cpu3.state1").unwrap();
    assert_eq!(idle.opcode, Opcode(0x49400031));
    assert_eq!(
        idle.node,
        "/sys/devices/system/cpu/cpu3/cpuidle/state1/disable"
    );
    assert_eq!(idle.description, "Disable cpuidle state 1 on CPU 3 (trades power for wake-up latency); a request to disable wins");

    let qos = target.by_name("pm_qos_cpu_dma_latency").unwrap();
    assert_eq!(qos.kind, ResourceKind::HoldFd);
    assert_eq!(
        (qos.aggregation, qos.permission),
        (Aggregation::Min, Permission::System)
    );

    // Everything that can hurt the whole system is system-only.
    for r in &target.resources {
        let system = [
            "cpu_online",
            "cpuidle_disable",
            "pm_qos",
            "sched_rt_runtime_us",
            "timer_migration",
            "vm_min_free_kbytes",
        ]
        .iter()
        .any(|p| r.name.starts_with(p));
        let expected = if system {
            Permission::System
        } else {
            Permission::ThirdParty
        };
        assert_eq!(r.permission, expected, "{}", r.name);
        assert!(r.low <= r.high, "{}", r.name);
        assert!(r.opcode.0 >> 28 == 4, "{}", r.name);
    }

    // Origins point at the template's line in the built-in file.
    let i = target
        .resources
        .iter()
        .position(|r| r.name == "cpu_min_freq.gold")
        .unwrap();
    let text = builtin_text("qcs6490").unwrap();
    let (line, _) = common::line_col(text, "  - name: cpu_min_freq\n");
    assert_eq!(target.origins[i].template, "cpu_min_freq");
    assert_eq!(
        target.origins[i].to_string(),
        format!("builtin:qcs6490.yaml:{line}")
    );
}

#[test]
fn qcs5430_has_no_prime_cluster() {
    let tree = common::qcs5430();
    let fs = tree.fs();
    let target = load_builtin("qcs5430-fp1").unwrap().bind(fs).unwrap();
    assert!(target.by_opcode(Opcode(0x44008200)).is_none());
    assert_eq!(
        target.by_opcode(Opcode(0x4400C000)).unwrap().node,
        "/sys/devices/system/cpu/cpufreq/policy4/scaling_max_freq"
    );
    assert_eq!(target.by_name("cpu_max_freq.gold").unwrap().high, 2400000);
    assert_eq!(target.clusters.len(), 2);
    // 2 + 2x2 + 2 + 2 + 2 + 2 + 5 + 3 + 5 online + 6x3 cpuidle + 1
    assert_eq!(target.resources.len(), 46);
}

#[test]
fn qcs6490_on_a_tree_without_prime_says_which_node_is_missing() {
    let tree = common::qcs5430();
    let fs = tree.fs();
    let err = load_builtin("qcs6490").unwrap().bind(fs).unwrap_err();
    let text = builtin_text("qcs6490").unwrap();
    let (line, _) = common::line_col(
        text,
        "    node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_min_freq",
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "builtin:qcs6490.yaml:{line}:11: field `resources[2].node`: node \
             /sys/devices/system/cpu/cpufreq/policy7/scaling_min_freq (for `cpu_min_freq.prime`) does not exist below root "
        )),
        "{msg}"
    );
    let TargetError::Field { kernel, .. } = err else {
        panic!()
    };
    assert!(kernel.unwrap().is_missing());
}

#[test]
fn generic_on_an_empty_tree_is_empty() {
    let tree = lever_testkit::FakeTree::new();
    let fs = tree.fs();
    let target = load_builtin("generic").unwrap().bind(fs).unwrap();
    assert!(target.resources.is_empty());
    assert!(target.clusters.is_empty());
}

#[test]
fn generic_discovers_policies_as_clusters() {
    let tree = lever_testkit::FakeTree::new();
    let fs = tree.fs();
    common::policy(&tree, 0, "0 1", common::SILVER_KHZ);
    common::policy(&tree, 2, "2 3", common::GOLD_KHZ);
    tree.node("/proc/sys/vm/swappiness", "60\n");
    let target = load_builtin("generic").unwrap().bind(fs).unwrap();
    let names: Vec<&str> = target.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cpu_min_freq.policy0",
            "cpu_min_freq.policy2",
            "cpu_max_freq.policy0",
            "cpu_max_freq.policy2",
            "cpu_governor.policy0",
            "cpu_governor.policy2",
            "schedutil_rate_limit_us.policy0",
            "schedutil_rate_limit_us.policy2",
            "vm_swappiness",
        ]
    );
    // Cluster id = position in policy order.
    assert_eq!(
        target.by_name("cpu_min_freq.policy2").unwrap().opcode,
        Opcode(0x44008100)
    );
    assert_eq!(
        target.by_name("cpu_max_freq.policy2").unwrap().kind,
        ResourceKind::PairMax {
            min: Opcode(0x44008100)
        }
    );
    assert_eq!(target.clusters[1].cpus, [2, 3]);
    assert_eq!(target.clusters[1].name, "policy2");
    assert_eq!(
        target.by_name("cpu_min_freq.policy2").unwrap().description,
        "Minimum frequency of the cpufreq policy2"
    );
}

#[test]
fn generic_drops_half_pairs_and_keeps_resources_without_steps() {
    let tree = lever_testkit::FakeTree::new();
    let fs = tree.fs();
    // intel_pstate: no scaling_available_frequencies.
    for f in [
        "cpuinfo_min_freq",
        "cpuinfo_max_freq",
        "scaling_min_freq",
        "scaling_max_freq",
    ] {
        tree.node(
            &format!("/sys/devices/system/cpu/cpufreq/policy0/{f}"),
            "800000\n",
        );
    }
    tree.node(
        "/sys/devices/system/cpu/cpufreq/policy0/related_cpus",
        "0\n",
    );
    // uclamp min without max: the pair cannot keep min <= max, both go.
    tree.node("/proc/sys/kernel/sched_util_clamp_min", "1024\n");
    tree.node("/sys/devices/system/cpu/present", "0-1\n");
    tree.node("/sys/devices/system/cpu/cpu1/online", "1\n");
    let target = load_builtin("generic").unwrap().bind(fs).unwrap();
    let names: Vec<&str> = target.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cpu_min_freq.policy0",
            "cpu_max_freq.policy0",
            "cpu_online.cpu1"
        ]
    );
    assert_eq!(target.resources[0].steps, None);
}

#[test]
fn generic_binds_on_a_full_board_tree() {
    let tree = common::qcs6490();
    let fs = tree.fs();
    let target = load_builtin("generic").unwrap().bind(fs).unwrap();
    assert_eq!(target.resources.len(), 58);
    // Same opcodes as the board target except the cluster ids, which follow
    // policy order here (policy0 = 0) and the seed's numbering there.
    assert_eq!(
        target.by_opcode(Opcode(0x44008000)).unwrap().node,
        "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq"
    );
}
