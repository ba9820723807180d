//! The readers on every simulated board and on files copied off a real VM.

use lever_cpu::{cpufreq, cpuidle, gpu, topology};
use lever_kernel::KernelFs;
use lever_testkit::FakeTree;

/// A simulated board created in a fresh fake tree.
fn board(name: &str) -> FakeTree {
    let tree = FakeTree::new();
    let created = lever_sim::create(name, tree.root()).unwrap();
    assert_eq!(created.root, tree.root());
    tree
}

/// Name, CPUs, capacity, max kHz.
type Summary = (String, Vec<u32>, Option<u64>, Option<u64>);

#[test]
fn qcs6490_matches_seed_1_1() {
    let tree = board("qcs6490");
    let fs = tree.fs();
    let t = topology::read(fs).unwrap();
    assert_eq!(t.online, (0..8).collect::<Vec<_>>());
    let summary: Vec<Summary> = t
        .clusters
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.cpus.clone(),
                c.capacity,
                c.freq.as_ref().and_then(|f| f.cpuinfo_max_khz),
            )
        })
        .collect();
    // Seed 000 §1.1: Silver 4 CPUs 1.9 GHz, Gold 3 × 2.4 GHz, Prime 1 × 2.7 GHz.
    assert_eq!(
        summary,
        vec![
            (
                "policy0".into(),
                vec![0, 1, 2, 3],
                Some(382),
                Some(1_958_400)
            ),
            ("policy4".into(), vec![4, 5, 6], Some(889), Some(2_400_000)),
            ("policy7".into(), vec![7], Some(1024), Some(2_707_200)),
        ]
    );
    let labels: Vec<String> = t.clusters[0].caches.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "L1D 32 kB/core",
            "L1I 32 kB/core",
            "L2 128 kB/core",
            "L3 2 MB shared by 0-7"
        ]
    );
    assert_eq!(t.clusters[1].caches[2].label(), "L2 256 kB/core");
    assert_eq!(t.cpufreq_note, None);
    let g = t.clusters[2].freq.as_ref().unwrap();
    assert_eq!(g.governor.as_deref(), Some("schedutil"));

    let (stats, note) = cpufreq::read(fs).unwrap();
    assert_eq!(note, None);
    assert_eq!(stats.len(), 3);
    for p in &stats {
        let pct: f64 = p.residency.iter().map(|r| r.percent).sum();
        assert!((pct - 100.0).abs() < 1e-9, "{pct}");
        let tt = p.trans_table.as_ref().unwrap();
        assert_eq!(Some(tt.total()), p.total_trans);
        assert_eq!(
            tt.freqs_khz,
            p.residency.iter().map(|r| r.khz).collect::<Vec<_>>()
        );
    }

    let idle = cpuidle::read(fs, &t.online).unwrap();
    assert_eq!(idle.cpus.len(), 8);
    let names: Vec<&str> = idle.cpus[7]
        .states
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["WFI", "cpu-sleep-1-0", "cpu-sleep-1-1"]);
    assert!(idle
        .cpus
        .iter()
        .all(|c| c.states.iter().all(|s| !s.disabled)));

    let g = gpu::read(fs).unwrap();
    let k = g.kgsl.unwrap();
    assert_eq!(k.max_hz, Some(812_000_000)); // seed §1.1: Adreno 643, 812 MHz
    assert_eq!(g.devfreq.len(), 1);
    assert_eq!(g.devfreq[0].max_hz, Some(812_000_000));
}

#[test]
fn qcs5430_fp1_has_two_clusters() {
    let tree = board("qcs5430-fp1");
    let fs = tree.fs();
    let t = topology::read(fs).unwrap();
    let cpus: Vec<Vec<u32>> = t.clusters.iter().map(|c| c.cpus.clone()).collect();
    // Seed 000 §1.1, QCS5430 FP1: 4 Silver (1.8 GHz) + 2 Gold (2.1 GHz).
    assert_eq!(cpus, vec![vec![0, 1, 2, 3], vec![4, 5]]);
    let max: Vec<Option<u64>> = t
        .clusters
        .iter()
        .map(|c| c.freq.as_ref().and_then(|f| f.cpuinfo_max_khz))
        .collect();
    assert_eq!(max, vec![Some(1_804_800), Some(2_112_000)]);
    assert_eq!(
        gpu::read(fs).unwrap().kgsl.unwrap().max_hz,
        Some(315_000_000)
    );
}

#[test]
fn am437x_has_no_l3_and_no_gpu() {
    let tree = board("am437x");
    let fs = tree.fs();
    let t = topology::read(fs).unwrap();
    assert_eq!(t.clusters.len(), 1);
    let names: Vec<String> = t.clusters[0].caches.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["L1D", "L1I", "L2"]);
    let g = gpu::read(fs).unwrap();
    assert!(g.kgsl.is_none());
    assert!(g.note.unwrap().contains("no GPU frequency nodes"));
}

#[test]
fn real_vm_files() {
    let root = lever_testkit::fixture_path(env!("CARGO_MANIFEST_DIR"), "vm-6.18.44-fc-v657");
    let fs = KernelFs::new(root);
    let t = topology::read(&fs).unwrap();
    assert_eq!(t.online, vec![0, 1]);
    // No cpufreq: the two vCPUs look alike (capacity 1024, same caches).
    assert_eq!(t.clusters.len(), 1);
    assert_eq!(t.clusters[0].name, "cpus 0-1");
    assert!(t.clusters[0].freq.is_none());
    let labels: Vec<String> = t.clusters[0].caches.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "L1D 48 kB/core",
            "L1I 32 kB/core",
            "L2 1 MB/core",
            "L3 32 MB shared by 0-1"
        ]
    );
    assert!(t.cpufreq_note.unwrap().contains("no cpufreq support"));
    let (stats, note) = cpufreq::read(&fs).unwrap();
    assert!(stats.is_empty() && note.is_some());

    let idle = cpuidle::read(&fs, &t.online).unwrap();
    assert_eq!(idle.driver.as_deref(), Some("haltpoll"));
    assert_eq!(idle.governor.as_deref(), Some("haltpoll"));
    let s = &idle.cpus[0].states;
    assert_eq!(s[0].name, "POLL");
    assert_eq!(s[1].name, "haltpoll idle");
    assert_eq!(s[1].exit_latency_us, Some(1));
    assert!(s[1].usage.unwrap() > 0 && s[1].time_us.unwrap() > 0);
    assert!(gpu::read(&fs).unwrap().note.is_some());
}
