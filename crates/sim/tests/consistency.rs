//! Self-consistency of every simulated board, read back through
//! `lever_kernel::KernelFs` the way the rest of Lever reads it.

use std::collections::BTreeMap;
use std::path::Path;

use lever_kernel::KernelFs;
use lever_sim::{create, SimError};
use lever_testkit::FakeTree;

/// A simulated board created in a fresh fake tree.
fn board(name: &str) -> FakeTree {
    let tree = FakeTree::new();
    create(name, tree.root()).unwrap();
    tree
}

fn all_boards() -> Vec<(&'static str, FakeTree)> {
    lever_sim::boards()
        .into_iter()
        .map(|b| (b.name, board(b.name)))
        .collect()
}

fn policies(fs: &KernelFs) -> Vec<String> {
    fs.list_dir("/sys/devices/system/cpu/cpufreq")
        .unwrap()
        .into_iter()
        .filter(|p| p.starts_with("policy"))
        .map(|p| format!("/sys/devices/system/cpu/cpufreq/{p}"))
        .collect()
}

/// `MemTotal:  5634960 kB` -> {"MemTotal": 5634960}
fn meminfo(fs: &KernelFs) -> BTreeMap<String, u64> {
    fs.read("/proc/meminfo")
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            let v = v.trim().trim_end_matches(" kB").parse().unwrap();
            (k.to_string(), v)
        })
        .collect()
}

fn vmstat(fs: &KernelFs) -> BTreeMap<String, u64> {
    fs.read("/proc/vmstat")
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// `(start, end, name, depth)` of each `/proc/iomem` line.
fn iomem(fs: &KernelFs) -> Vec<(u64, u64, String, usize)> {
    fs.read("/proc/iomem")
        .unwrap()
        .lines()
        .map(|l| {
            let depth = (l.len() - l.trim_start().len()) / 2;
            let (range, name) = l.trim_start().split_once(" : ").unwrap();
            let (s, e) = range.split_once('-').unwrap();
            (
                u64::from_str_radix(s, 16).unwrap(),
                u64::from_str_radix(e, 16).unwrap(),
                name.to_string(),
                depth,
            )
        })
        .collect()
}

fn sum_named(io: &[(u64, u64, String, usize)], name: &str) -> u64 {
    io.iter()
        .filter(|(_, _, n, d)| n == name && *d == 0)
        .map(|(s, e, _, _)| e - s + 1)
        .sum()
}

/// Total bytes of the DT memory node(s), honouring `#address-cells`.
fn dt_memory_bytes(root: &Path) -> u64 {
    let base = root.join("proc/device-tree");
    let cells = u32::from_be_bytes(
        std::fs::read(base.join("#size-cells")).unwrap()[..4]
            .try_into()
            .unwrap(),
    );
    let width = cells as usize * 4;
    let mut total = 0;
    for entry in std::fs::read_dir(&base).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if !name.starts_with("memory@") {
            continue;
        }
        let device_type = std::fs::read(entry.path().join("device_type")).unwrap();
        assert_eq!(device_type, b"memory\0");
        let reg = std::fs::read(entry.path().join("reg")).unwrap();
        assert_eq!(reg.len() % (2 * width), 0);
        for pair in reg.chunks(2 * width) {
            let size = &pair[width..];
            total += size.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        }
    }
    total
}

#[test]
fn frequency_tables_are_ascending_and_current_is_inside() {
    for (name, tree) in all_boards() {
        let fs = tree.fs();
        let pols = policies(fs);
        assert!(!pols.is_empty(), "{name}");
        for p in pols {
            let freqs = fs
                .read_i64_list(&format!("{p}/scaling_available_frequencies"))
                .unwrap();
            assert!(freqs.windows(2).all(|w| w[0] < w[1]), "{p}: {freqs:?}");
            let get = |f: &str| fs.read_i64(&format!("{p}/{f}")).unwrap();
            let (min, cur, max) = (
                get("scaling_min_freq"),
                get("scaling_cur_freq"),
                get("scaling_max_freq"),
            );
            assert!(min <= cur && cur <= max, "{p}: {min} {cur} {max}");
            assert!(freqs.contains(&cur), "{p}: cur {cur} not in table");
            assert_eq!(get("cpuinfo_cur_freq"), cur, "{p}");
            assert_eq!(get("cpuinfo_max_freq"), *freqs.last().unwrap(), "{p}");
            assert_eq!(get("cpuinfo_min_freq"), freqs[0], "{p}");
            let governor = fs.read(&format!("{p}/scaling_governor")).unwrap();
            let governors = fs
                .read(&format!("{p}/scaling_available_governors"))
                .unwrap();
            assert!(governors.split_whitespace().any(|g| g == governor), "{p}");
            if governor == "schedutil" {
                assert_eq!(get("schedutil/rate_limit_us"), 1000, "{p}");
            }
        }
    }
}

#[test]
fn cpufreq_stats_match_the_table_and_uptime() {
    for (name, tree) in all_boards() {
        let fs = tree.fs();
        let uptime: f64 = fs
            .read("/proc/uptime")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        for p in policies(fs) {
            let freqs = fs
                .read_i64_list(&format!("{p}/scaling_available_frequencies"))
                .unwrap();
            let tis = fs.read(&format!("{p}/stats/time_in_state")).unwrap();
            let rows: Vec<(i64, u64)> = tis
                .lines()
                .map(|l| {
                    let (f, t) = l.split_once(' ').unwrap();
                    (f.parse().unwrap(), t.parse().unwrap())
                })
                .collect();
            assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), freqs, "{p}");
            let total: u64 = rows.iter().map(|r| r.1).sum();
            assert_eq!(
                total,
                (uptime * 100.0) as u64,
                "{name} {p}: time_in_state vs uptime"
            );

            let table = fs.read(&format!("{p}/stats/trans_table")).unwrap();
            let mut lines = table.lines();
            assert_eq!(lines.next(), Some("   From  :    To"));
            let header: Vec<i64> = lines.next().unwrap()[10..]
                .split_whitespace()
                .map(|f| f.parse().unwrap())
                .collect();
            assert_eq!(header, freqs, "{p}");
            let mut sum = 0;
            let mut n = 0;
            for (i, line) in lines.enumerate() {
                let (from, counts) = line.split_once(':').unwrap();
                assert_eq!(from.trim().parse::<i64>().unwrap(), freqs[i]);
                let counts: Vec<i64> = counts
                    .split_whitespace()
                    .map(|c| c.parse().unwrap())
                    .collect();
                assert_eq!(counts.len(), freqs.len());
                assert_eq!(counts[i], 0, "{p}: no transition to itself");
                sum += counts.iter().sum::<i64>();
                n += 1;
            }
            assert_eq!(n, freqs.len());
            assert_eq!(
                fs.read_i64(&format!("{p}/stats/total_trans")).unwrap(),
                sum,
                "{p}"
            );
        }
    }
}

#[test]
fn qcs6490_matches_the_seed() {
    let tree = board("qcs6490");
    let fs = tree.fs();
    let cpu = "/sys/devices/system/cpu";
    assert_eq!(fs.read(&format!("{cpu}/online")).unwrap(), "0-7");
    for (policy, cpus, max) in [
        (0, "0 1 2 3", 1_958_400),
        (4, "4 5 6", 2_400_000),
        (7, "7", 2_707_200),
    ] {
        let p = format!("{cpu}/cpufreq/policy{policy}");
        assert_eq!(fs.read_i64(&format!("{p}/cpuinfo_max_freq")).unwrap(), max);
        assert_eq!(fs.read(&format!("{p}/related_cpus")).unwrap().trim(), cpus);
    }
    let silver = fs
        .read_i64_list(&format!(
            "{cpu}/cpufreq/policy0/scaling_available_frequencies"
        ))
        .unwrap();
    for f in [300_000, 1_516_800, 1_958_400] {
        assert!(silver.contains(&f), "{f}");
    }
    // cpuN/cpufreq is a link to the policy.
    assert_eq!(
        fs.read_i64(&format!("{cpu}/cpu5/cpufreq/cpuinfo_max_freq"))
            .unwrap(),
        2_400_000
    );
    assert!(!fs.exists(&format!("{cpu}/cpu0/online")));
    assert_eq!(fs.read_i64(&format!("{cpu}/cpu7/online")).unwrap(), 1);

    let cap = |c: u32| fs.read_i64(&format!("{cpu}/cpu{c}/cpu_capacity")).unwrap();
    assert_eq!(cap(7), 1024);
    assert!((350..=450).contains(&cap(0)), "{}", cap(0));
    assert!((850..=950).contains(&cap(4)), "{}", cap(4));

    let cache = |c: u32, i: u32, f: &str| {
        fs.read(&format!("{cpu}/cpu{c}/cache/index{i}/{f}"))
            .unwrap()
    };
    assert_eq!(cache(0, 0, "size"), "32K");
    assert_eq!(cache(0, 1, "type"), "Instruction");
    assert_eq!(cache(0, 2, "size"), "128K");
    assert_eq!(cache(4, 2, "size"), "256K");
    assert_eq!(cache(7, 2, "size"), "256K");
    assert_eq!(cache(3, 3, "size"), "2048K");
    assert_eq!(cache(3, 3, "level"), "3");
    assert_eq!(cache(3, 3, "shared_cpu_list"), "0-7");
    assert_eq!(cache(3, 3, "shared_cpu_map"), "ff");
    assert_eq!(cache(5, 2, "shared_cpu_map"), "20");

    let idle = |c: u32, s: u32, f: &str| {
        fs.read(&format!("{cpu}/cpu{c}/cpuidle/state{s}/{f}"))
            .unwrap()
    };
    assert_eq!(idle(0, 0, "name"), "WFI");
    assert_eq!(idle(0, 1, "name"), "cpu-sleep-0-0");
    assert_eq!(idle(6, 2, "name"), "cpu-sleep-1-1");
    assert_eq!(idle(6, 2, "residency"), "5555");

    let gpu = "/sys/class/kgsl/kgsl-3d0";
    let freqs = fs
        .read_i64_list(&format!("{gpu}/gpu_available_frequencies"))
        .unwrap();
    assert_eq!(freqs.first(), Some(&812_000_000));
    assert_eq!(freqs.last(), Some(&315_000_000));
    assert!(
        freqs.windows(2).all(|w| w[0] > w[1]),
        "KGSL lists descending"
    );
    assert_eq!(fs.read_i64(&format!("{gpu}/max_pwrlevel")).unwrap(), 0);
    assert_eq!(
        fs.read_i64(&format!("{gpu}/min_pwrlevel")).unwrap(),
        freqs.len() as i64 - 1
    );
    assert_eq!(
        fs.read_i64(&format!("{gpu}/num_pwrlevels")).unwrap(),
        freqs.len() as i64
    );
    assert!(freqs.contains(&fs.read_i64(&format!("{gpu}/gpuclk")).unwrap()));
    let df = |f: &str| fs.read_i64(&format!("{gpu}/devfreq/{f}")).unwrap();
    assert!(df("min_freq") <= df("cur_freq") && df("cur_freq") <= df("max_freq"));
    assert_eq!(fs.read(&format!("{gpu}/gpu_model")).unwrap(), "Adreno643v1");
    assert_eq!(
        fs.read(&format!("{gpu}/gpu_busy_percentage")).unwrap(),
        "0 %"
    );
    assert!(fs.read_i64("/sys/class/kgsl/kgsl/page_alloc").unwrap() > 0);
    assert_eq!(
        fs.read_i64("/sys/class/devfreq/3d00000.qcom,kgsl-3d0/max_freq")
            .unwrap(),
        812_000_000
    );

    let compatible = fs.read("/proc/device-tree/compatible").unwrap();
    assert!(
        compatible.starts_with("qcom,qcs6490-rb3gen2\0"),
        "{compatible:?}"
    );
    assert_eq!(fs.read_i64("/sys/block/zram0/disksize").unwrap(), 1 << 30);
    assert_eq!(
        fs.read("/sys/block/zram0/mm_stat")
            .unwrap()
            .split_whitespace()
            .count(),
        9
    );
}

#[test]
fn qcs5430_fp1_has_no_prime_core() {
    let tree = board("qcs5430-fp1");
    let fs = tree.fs();
    let cpu = "/sys/devices/system/cpu";
    assert_eq!(fs.read(&format!("{cpu}/online")).unwrap(), "0-5");
    assert!(!fs.exists(&format!("{cpu}/cpufreq/policy7")));
    assert!(!fs.exists(&format!("{cpu}/cpu6")));
    assert!(!fs.exists(&format!("{cpu}/cpu7")));
    assert_eq!(
        fs.read_i64(&format!("{cpu}/cpufreq/policy0/cpuinfo_max_freq"))
            .unwrap(),
        1_804_800
    );
    assert_eq!(
        fs.read_i64(&format!("{cpu}/cpufreq/policy4/cpuinfo_max_freq"))
            .unwrap(),
        2_112_000
    );
    assert_eq!(
        fs.read(&format!("{cpu}/cpufreq/policy4/related_cpus"))
            .unwrap()
            .trim(),
        "4 5"
    );
    assert_eq!(
        fs.read_i64(&format!("{cpu}/cpu4/cpu_capacity")).unwrap(),
        1024
    );
    assert_eq!(
        fs.read(&format!("{cpu}/cpu0/cache/index3/shared_cpu_map"))
            .unwrap(),
        "3f"
    );
    assert_eq!(
        fs.read_i64("/sys/class/kgsl/kgsl-3d0/devfreq/max_freq")
            .unwrap(),
        315_000_000
    );
    assert_eq!(
        fs.read_i64("/sys/class/kgsl/kgsl-3d0/min_pwrlevel")
            .unwrap(),
        0
    );
}

#[test]
fn am437x_is_a_small_board_without_modern_features() {
    let tree = board("am437x");
    let fs = tree.fs();
    let cpu = "/sys/devices/system/cpu";
    assert_eq!(fs.read(&format!("{cpu}/online")).unwrap(), "0");
    assert_eq!(
        fs.read_i64_list(&format!(
            "{cpu}/cpufreq/policy0/scaling_available_frequencies"
        ))
        .unwrap(),
        [300_000, 600_000, 720_000, 800_000, 1_000_000]
    );
    assert_eq!(
        fs.read(&format!("{cpu}/cpufreq/policy0/scaling_driver"))
            .unwrap(),
        "cpufreq-dt"
    );
    assert_eq!(
        fs.read(&format!("{cpu}/cpufreq/policy0/scaling_governor"))
            .unwrap(),
        "ondemand"
    );
    assert_eq!(
        fs.read_i64(&format!("{cpu}/cpufreq/ondemand/sampling_rate"))
            .unwrap(),
        10_000
    );
    assert_eq!(
        fs.read(&format!("{cpu}/cpu0/cache/index2/size")).unwrap(),
        "256K"
    );
    assert!(!fs.exists(&format!("{cpu}/cpu0/cache/index3")), "no L3");
    for f in [
        "sched_util_clamp_min",
        "sched_util_clamp_max",
        "sched_util_clamp_min_rt_default",
    ] {
        assert!(
            !fs.exists(&format!("/proc/sys/kernel/{f}")),
            "{f} must be absent"
        );
    }
    assert_eq!(
        fs.read_i64("/proc/sys/kernel/sched_rt_runtime_us").unwrap(),
        950_000
    );
    assert!(!fs.exists("/sys/class/kgsl"));
    assert!(!fs.exists("/sys/block/zram0"));
    assert!(!fs.exists("/proc/pressure/memory"));
    assert!(fs
        .read("/proc/cpuinfo")
        .unwrap()
        .contains("Hardware\t: Generic AM43"));
    let m = meminfo(fs);
    assert_eq!(m["HighTotal"] + m["LowTotal"], m["MemTotal"]);
}

#[test]
fn uclamp_and_sysctls_on_qcom_boards() {
    for name in ["qcs6490", "qcs5430-fp1"] {
        let tree = board(name);
        let fs = tree.fs();
        let k = |f: &str| fs.read_i64(&format!("/proc/sys/kernel/{f}")).unwrap();
        assert_eq!(k("sched_util_clamp_min"), 1024);
        assert_eq!(k("sched_util_clamp_max"), 1024);
        assert_eq!(k("sched_util_clamp_min_rt_default"), 1024);
        assert_eq!(k("sched_rt_period_us"), 1_000_000);
        assert_eq!(k("timer_migration"), 1);
        let v = |f: &str| fs.read_i64(&format!("/proc/sys/vm/{f}")).unwrap();
        assert_eq!(v("compaction_proactiveness"), 20);
        assert_eq!(v("watermark_scale_factor"), 10);
        assert_eq!(v("watermark_boost_factor"), 15_000);
        assert!(v("min_free_kbytes") > 128);
    }
}

#[test]
fn memory_adds_up() {
    let expected_dt = [
        ("qcs6490", 6u64 << 30),
        ("qcs5430-fp1", 4 << 30),
        ("am437x", 1 << 30),
    ];
    for (name, tree) in all_boards() {
        let fs = tree.fs();
        let dt_total = dt_memory_bytes(tree.root());
        let want = expected_dt.iter().find(|e| e.0 == name).unwrap().1;
        assert_eq!(dt_total, want, "{name}: DT memory");

        let io = iomem(fs);
        let ram = sum_named(&io, "System RAM");
        let carveouts = sum_named(&io, "reserved");
        assert_eq!(
            ram + carveouts,
            dt_total,
            "{name}: System RAM + carveouts = DT memory"
        );
        if name != "am437x" {
            assert!(ram < dt_total, "{name}: carveouts must take memory");
        }
        let first_ram = io.iter().find(|l| l.2 == "System RAM").unwrap();
        assert_eq!(first_ram.0, 0x8000_0000, "{name}");
        // Top-level entries are sorted and do not overlap.
        let top: Vec<_> = io.iter().filter(|l| l.3 == 0).collect();
        assert!(
            top.windows(2).all(|w| w[0].1 < w[1].0),
            "{name}: iomem overlaps"
        );
        // The kernel image sits inside a System RAM range.
        let code = io.iter().find(|l| l.2 == "Kernel code").unwrap();
        assert!(io
            .iter()
            .any(|l| l.2 == "System RAM" && l.0 <= code.0 && code.1 <= l.1));

        let m = meminfo(fs);
        assert!(
            m["MemTotal"] * 1024 < ram,
            "{name}: MemTotal below System RAM"
        );
        assert!(
            m["MemFree"] < m["MemAvailable"] && m["MemAvailable"] < m["MemTotal"],
            "{name}"
        );
        assert_eq!(m["Active"], m["Active(anon)"] + m["Active(file)"], "{name}");
        assert_eq!(
            m["Inactive"],
            m["Inactive(anon)"] + m["Inactive(file)"],
            "{name}"
        );
        assert_eq!(m["Slab"], m["SReclaimable"] + m["SUnreclaim"], "{name}");
        assert!(m["SwapFree"] <= m["SwapTotal"], "{name}");
        assert!(m["CmaFree"] <= m["CmaTotal"], "{name}");
        let used: u64 = [
            "MemFree",
            "Buffers",
            "Cached",
            "SwapCached",
            "AnonPages",
            "Slab",
            "KernelStack",
            "PageTables",
        ]
        .iter()
        .map(|k| m[*k])
        .sum();
        assert!(
            used <= m["MemTotal"],
            "{name}: meminfo parts exceed MemTotal"
        );

        let v = vmstat(fs);
        assert_eq!(v["nr_free_pages"], m["MemFree"] / 4, "{name}");
        assert_eq!(
            v["nr_kernel_misc_reclaimable"] * 4 + m["SReclaimable"],
            m["KReclaimable"],
            "{name}"
        );
        // Every counter `lever mem thrash` samples.
        for key in lever_measure::thrash::COUNTERS {
            assert!(v.contains_key(key), "{name}: vmstat lacks {key}");
        }
    }
    let tree = board("qcs6490");
    let fs = tree.fs();
    let total_gb = meminfo(fs)["MemTotal"] as f64 * 1024.0 / 1e9;
    assert!((5.3..6.0).contains(&total_gb), "MemTotal {total_gb} GB");
}

#[test]
fn procfs_files_have_kernel_shapes() {
    for (name, tree) in all_boards() {
        let fs = tree.fs();
        let nr = fs.read("/sys/devices/system/cpu/possible").unwrap();
        let cpus = lever_kernel::parse_cpu_list(&nr).unwrap();
        let stat = fs.read("/proc/stat").unwrap();
        assert!(stat.starts_with("cpu  "), "{name}");
        for c in &cpus {
            assert!(stat.contains(&format!("\ncpu{c} ")), "{name}: cpu{c}");
        }
        let cpuinfo = fs.read("/proc/cpuinfo").unwrap();
        assert_eq!(
            cpuinfo.matches("processor\t:").count(),
            cpus.len(),
            "{name}"
        );
        for line in fs.read("/proc/diskstats").unwrap().lines() {
            assert_eq!(line.split_whitespace().count(), 20, "{name}: {line}");
        }
        assert!(fs
            .read("/proc/version")
            .unwrap()
            .starts_with("Linux version "));
        assert!(!fs.read("/proc/device-tree/model").unwrap().is_empty());
        let dma = std::fs::read(fs.resolve("/dev/cpu_dma_latency").unwrap()).unwrap();
        assert_eq!(
            i32::from_le_bytes(dma[..].try_into().unwrap()),
            2_000_000_000,
            "{name}"
        );
        for c in &cpus {
            let topo = format!("/sys/devices/system/cpu/cpu{c}/topology");
            for f in ["cluster_id", "core_id", "package_id", "physical_package_id"] {
                fs.read_i64(&format!("{topo}/{f}")).unwrap();
            }
            assert_eq!(
                fs.read(&format!("{topo}/core_cpus_list")).unwrap(),
                c.to_string()
            );
            for s in fs
                .list_dir(&format!("/sys/devices/system/cpu/cpu{c}/cpuidle"))
                .unwrap()
            {
                let d = format!("/sys/devices/system/cpu/cpu{c}/cpuidle/{s}");
                for f in [
                    "latency",
                    "residency",
                    "usage",
                    "time",
                    "disable",
                    "above",
                    "below",
                ] {
                    fs.read_i64(&format!("{d}/{f}")).unwrap();
                }
            }
        }
    }
}

#[test]
fn refuses_a_directory_with_other_content() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("notes.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let err = create("qcs6490", dir.path()).unwrap_err();
    assert!(matches!(err, SimError::NotEmpty { .. }), "{err}");
    assert!(err.to_string().contains("not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
}

#[test]
fn refuses_a_different_board_and_rebuilds_the_same_one() {
    let dir = tempfile::tempdir().unwrap();
    create("am437x", dir.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".lever-sim")).unwrap(),
        "am437x\n"
    );
    let err = create("qcs6490", dir.path()).unwrap_err();
    assert!(matches!(err, SimError::NotEmpty { .. }), "{err}");

    // Same board: a stray file and a changed value are gone afterwards.
    std::fs::write(dir.path().join("stray"), "x").unwrap();
    let fs = KernelFs::new(dir.path());
    fs.write("/proc/sys/vm/swappiness", "10").unwrap();
    create("am437x", dir.path()).unwrap();
    assert!(!dir.path().join("stray").exists());
    assert_eq!(fs.read_i64("/proc/sys/vm/swappiness").unwrap(), 60);
}

#[test]
fn creates_a_missing_directory_and_reports_unknown_boards() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a/b/board");
    let created = create("qcs5430-fp1", &root).unwrap();
    assert_eq!(created.root, root);
    assert!(created.files > 500, "{}", created.files);

    let err = create("qcs9075", &dir.path().join("x")).unwrap_err();
    match &err {
        SimError::UnknownBoard { name, known } => {
            assert_eq!(name, "qcs9075");
            assert_eq!(known, &["qcs6490", "qcs5430-fp1", "am437x"]);
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("qcs6490, qcs5430-fp1, am437x"));
    assert!(
        !dir.path().join("x").exists(),
        "nothing created for an unknown board"
    );
}

#[test]
fn every_irq_has_a_row_and_masks_span_the_online_cpus() {
    for (name, tree) in all_boards() {
        let fs = tree.fs();
        let online =
            lever_kernel::parse_cpu_list(&fs.read("/sys/devices/system/cpu/online").unwrap())
                .unwrap();
        let all_mask = lever_kernel::format_cpu_mask(&online, online.len() as u32);
        let interrupts = fs.read("/proc/interrupts").unwrap();
        let mut lines = interrupts.lines();
        // `           CPU0       CPU1 ...`: one column per online CPU.
        assert_eq!(
            lines.next().unwrap().split_whitespace().count(),
            online.len(),
            "{name}"
        );
        let rows: Vec<u32> = lines
            .filter_map(|l| l.split_once(':')?.0.trim().parse().ok())
            .collect();
        let mut dirs: Vec<u32> = fs
            .list_dir("/proc/irq")
            .unwrap()
            .iter()
            .filter_map(|d| d.parse().ok())
            .collect();
        dirs.sort_unstable();
        assert!(!dirs.is_empty(), "{name}");
        assert_eq!(rows, dirs, "{name}: /proc/interrupts rows vs /proc/irq");
        for irq in dirs {
            let dir = format!("/proc/irq/{irq}");
            assert_eq!(fs.read(&format!("{dir}/smp_affinity")).unwrap(), all_mask);
            let list = fs.read(&format!("{dir}/smp_affinity_list")).unwrap();
            assert_eq!(lever_kernel::parse_cpu_list(&list).unwrap(), online);
            let eff = fs.read(&format!("{dir}/effective_affinity_list")).unwrap();
            assert!(online.contains(&eff.parse().unwrap()), "{name} {irq}");
        }
        let wq = "/sys/devices/virtual/workqueue";
        assert_eq!(fs.read(&format!("{wq}/cpumask")).unwrap(), all_mask);
        assert_eq!(
            fs.read(&format!("{wq}/writeback/cpumask")).unwrap(),
            all_mask
        );
    }
}
