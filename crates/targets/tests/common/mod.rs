//! Fake kernel trees for the tests: real file contents, in a
//! [`lever_testkit::FakeTree`].
//!
//! Frequencies are the upstream `sc7280.dtsi` OPP tables (the SoC QCS6490
//! is built on) as `scaling_available_frequencies` prints them; the GPU
//! table is its Adreno 643 `gpu-opp-table` as KGSL's `available_frequencies`
//! prints it (fastest first). Unlike a real board every node is writable.
#![allow(dead_code)]

use lever_testkit::FakeTree;

/// Silver (policy0) table of sc7280, kHz.
pub const SILVER_KHZ: &str = "300000 403200 499200 576000 691200 806400 940800 1017600 1113600 1209600 1324800 1516800 1651200 1804800 1958400 ";
/// Gold (policy4) table, kHz.
pub const GOLD_KHZ: &str = "691200 940800 1228800 1344000 1516800 1651200 1900800 2054400 2112000 2208000 2304000 2400000 ";
/// Prime (policy7) table, kHz.
pub const PRIME_KHZ: &str = "806400 940800 1228800 1344000 1516800 1651200 1900800 2054400 2112000 2208000 2304000 2400000 2496000 2553600 2649600 2707200 ";
/// Adreno 643 devfreq table, Hz, fastest first as KGSL lists it.
pub const GPU_HZ: &str = "812000000 700000000 608000000 550000000 450000000 315000000 ";

/// One cpufreq policy with the nodes the built-in targets use.
pub fn policy(tree: &FakeTree, policy: u32, cpus: &str, table_khz: &str) {
    let dir = format!("/sys/devices/system/cpu/cpufreq/policy{policy}");
    let freqs: Vec<&str> = table_khz.split_whitespace().collect();
    let (min, max) = (freqs[0], freqs[freqs.len() - 1]);
    tree.node(&format!("{dir}/related_cpus"), &format!("{cpus}\n"));
    tree.node(&format!("{dir}/affected_cpus"), &format!("{cpus}\n"));
    tree.node(&format!("{dir}/cpuinfo_min_freq"), &format!("{min}\n"));
    tree.node(&format!("{dir}/cpuinfo_max_freq"), &format!("{max}\n"));
    tree.node(&format!("{dir}/scaling_min_freq"), &format!("{min}\n"));
    tree.node(&format!("{dir}/scaling_max_freq"), &format!("{max}\n"));
    tree.node(
        &format!("{dir}/scaling_available_frequencies"),
        &format!("{table_khz}\n"),
    );
    tree.node(&format!("{dir}/scaling_governor"), "schedutil\n");
    tree.node(&format!("{dir}/schedutil/rate_limit_us"), "1000\n");
}

/// Per-CPU hotplug and cpuidle nodes; cpu0 has no `online` (not hotpluggable).
pub fn cpus(tree: &FakeTree, count: u32, idle_states: u32) {
    tree.node(
        "/sys/devices/system/cpu/present",
        &format!("0-{}\n", count - 1),
    );
    for cpu in 0..count {
        if cpu != 0 {
            tree.node(&format!("/sys/devices/system/cpu/cpu{cpu}/online"), "1\n");
        }
        for state in 0..idle_states {
            tree.node(
                &format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/disable"),
                "0\n",
            );
        }
    }
}

/// The sysctls, KGSL, PM QoS nodes shared by the Qualcomm targets.
pub fn common(tree: &FakeTree) {
    for (path, value) in [
        ("/proc/sys/kernel/sched_util_clamp_min", "1024"),
        ("/proc/sys/kernel/sched_util_clamp_max", "1024"),
        ("/proc/sys/kernel/sched_util_clamp_min_rt_default", "1024"),
        ("/proc/sys/kernel/sched_rt_runtime_us", "950000"),
        ("/proc/sys/kernel/timer_migration", "1"),
        ("/proc/sys/vm/swappiness", "100"),
        ("/proc/sys/vm/compaction_proactiveness", "20"),
        ("/proc/sys/vm/watermark_scale_factor", "10"),
        ("/proc/sys/vm/watermark_boost_factor", "15000"),
        ("/proc/sys/vm/min_free_kbytes", "5792"),
        ("/sys/class/kgsl/kgsl-3d0/devfreq/min_freq", "315000000"),
        ("/sys/class/kgsl/kgsl-3d0/devfreq/max_freq", "812000000"),
        (
            "/sys/class/kgsl/kgsl-3d0/devfreq/available_frequencies",
            GPU_HZ,
        ),
        ("/sys/class/kgsl/kgsl-3d0/min_pwrlevel", "5"),
        ("/sys/class/kgsl/kgsl-3d0/max_pwrlevel", "0"),
        ("/sys/class/kgsl/kgsl-3d0/num_pwrlevels", "6"),
    ] {
        tree.node(path, &format!("{value}\n"));
    }
    // A character device on a board; a regular file in a fake tree.
    tree.node("/dev/cpu_dma_latency", "");
}

/// A QCS6490 RB3gen2-like tree (compatible strings of the upstream DT).
pub fn qcs6490() -> FakeTree {
    let tree = FakeTree::new();
    policy(&tree, 0, "0 1 2 3", SILVER_KHZ);
    policy(&tree, 4, "4 5 6", GOLD_KHZ);
    policy(&tree, 7, "7", PRIME_KHZ);
    cpus(&tree, 8, 3);
    common(&tree);
    tree.node(
        "/proc/device-tree/compatible",
        "qcom,qcs6490-rb3gen2\0qcom,qcm6490\0",
    );
    tree
}

/// A QCS5430 FP1-like tree: no Prime cluster, 6 CPUs.
pub fn qcs5430() -> FakeTree {
    let tree = FakeTree::new();
    policy(&tree, 0, "0 1 2 3", SILVER_KHZ);
    policy(&tree, 4, "4 5", GOLD_KHZ);
    cpus(&tree, 6, 3);
    common(&tree);
    tree.node(
        "/proc/device-tree/compatible",
        "qcom,qcs5430-rb3gen2\0qcom,qcs5430\0qcom,qcm6490\0",
    );
    tree
}

/// 1-based line and column of the first occurrence of `needle` in `text`.
pub fn line_col(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in text"));
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, col)
}
