//! The simulated boards' device trees, read back with `lever-dt` as
//! `lever dt` reads a running board's: the SC7280 boards' OPP maps are the
//! real sc7280-idp.dtb's row for row, every cpufreq frequency of a policy
//! is a row of its CPUs' OPP table, the carveouts are the board's with
//! their users, and every phandle Lever follows resolves.

use std::path::{Path, PathBuf};

use lever_dt::{carveouts, dvfs, source, Widths};
use lever_kernel::KernelFs;

fn shared_dtb() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/third-party/dtb/sc7280-idp.dtb");
    if p.exists() {
        return Some(p);
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !ci,
        "CI=true: the shared device trees are required ({})",
        p.display()
    );
    println!("SKIPPED: no {}", p.display());
    None
}

fn sim(board: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    lever_sim::create(board, dir.path()).unwrap();
    dir
}

#[test]
fn the_committed_dtb_is_the_shared_one() {
    let Some(shared) = shared_dtb() else { return };
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sc7280-idp.dtb");
    assert!(std::fs::read(ours).unwrap() == std::fs::read(shared).unwrap());
}

#[test]
fn qcs6490_opp_maps_are_sc7280_idp_row_for_row() {
    let Some(dtb) = shared_dtb() else { return };
    let real = dvfs(&source::read_dtb(&dtb).unwrap(), Widths::SEED).unwrap();
    let dir = sim("qcs6490");
    let live = dvfs(&source::read_live(dir.path()).unwrap(), Widths::SEED).unwrap();
    assert_eq!(live.clusters.len(), 3);
    for (l, r) in live.clusters.iter().zip(&real.clusters) {
        assert_eq!(l.table, r.table);
        assert_eq!(l.cpus, r.cpus);
        assert_eq!(l.paths, r.paths);
        assert_eq!(l.rows, r.rows, "{}", l.table);
        assert!(!l.labels.is_empty(), "{}: __symbols__ names it", l.table);
    }
    assert_eq!(live.bwmons, real.bwmons);
    assert!(live.cpus_without_table.is_empty());
}

#[test]
fn qcs5430_fp1_has_six_cpus_and_the_first_two_tables() {
    let Some(dtb) = shared_dtb() else { return };
    let real = dvfs(&source::read_dtb(&dtb).unwrap(), Widths::SEED).unwrap();
    let dir = sim("qcs5430-fp1");
    let live = dvfs(&source::read_live(dir.path()).unwrap(), Widths::SEED).unwrap();
    assert_eq!(live.clusters.len(), 2);
    assert_eq!(live.clusters[0].rows, real.clusters[0].rows);
    assert_eq!(live.clusters[1].rows, real.clusters[1].rows);
    let cpus: Vec<usize> = live.clusters[1].cpus.iter().map(|c| c.cpu).collect();
    assert_eq!(cpus, [4, 5]);
    assert_eq!(live.bwmons, real.bwmons);
}

/// Every frequency a policy offers is a row of the OPP table of its CPUs
/// (qcom-cpufreq-hw takes the frequencies from the hardware's table and the
/// votes from the device tree's); the current one too.
#[test]
fn policy_frequencies_are_rows_of_their_opp_table() {
    for board in ["qcs6490", "qcs5430-fp1"] {
        let dir = sim(board);
        let report = dvfs(&source::read_live(dir.path()).unwrap(), Widths::SEED).unwrap();
        let fs = KernelFs::new(dir.path());
        for cluster in &report.clusters {
            let first = cluster.cpus[0].cpu;
            let policy = format!("/sys/devices/system/cpu/cpufreq/policy{first}");
            let rows_khz: Vec<u64> = cluster
                .rows
                .iter()
                .map(|r| r.freq_hz.unwrap() / 1000)
                .collect();
            let offered = fs
                .read(&format!("{policy}/scaling_available_frequencies"))
                .unwrap();
            for f in offered.split_whitespace() {
                let f: u64 = f.parse().unwrap();
                assert!(rows_khz.contains(&f), "{board} {policy}: {f} kHz");
            }
            let cur: u64 = fs.read_i64(&format!("{policy}/scaling_cur_freq")).unwrap() as u64;
            assert!(
                rows_khz.contains(&cur),
                "{board} {policy}: current {cur} kHz"
            );
            let related = fs.read(&format!("{policy}/related_cpus")).unwrap();
            let cpus: Vec<String> = cluster.cpus.iter().map(|c| c.cpu.to_string()).collect();
            assert_eq!(related.trim(), cpus.join(" "), "{board} {policy}");
        }
    }
}

/// The carveouts are the board's, with their labels and users, and their
/// sum is what /proc/iomem leaves out of System RAM.
#[test]
fn carveouts_have_labels_users_and_match_iomem() {
    let dir = sim("qcs6490");
    let tree = source::read_live(dir.path()).unwrap();
    let report = carveouts(&tree).unwrap();
    let mpss = report
        .regions
        .iter()
        .find(|r| r.name == "mpss@8b800000")
        .unwrap();
    assert_eq!(mpss.labels, ["mpss_mem"]);
    assert_eq!(mpss.users.len(), 1);
    assert!(
        mpss.users[0].node.ends_with("remoteproc@4080000"),
        "{:?}",
        mpss.users
    );
    let iomem = KernelFs::new(dir.path()).read("/proc/iomem").unwrap();
    let reserved: u64 = iomem
        .lines()
        .filter(|l| l.ends_with(" : reserved"))
        .map(|l| {
            let (s, e) = l.split(" : ").next().unwrap().split_once('-').unwrap();
            u64::from_str_radix(e, 16).unwrap() - u64::from_str_radix(s, 16).unwrap() + 1
        })
        .sum();
    assert_eq!(report.totals.no_map_bytes, reserved);
    assert!(report.overlaps.is_empty());
}

/// The tree's phandle links that Lever follows all resolve; `name` is in
/// every node, as the kernel shows it.
#[test]
fn every_node_has_its_name_and_the_links_resolve() {
    for board in ["qcs6490", "qcs5430-fp1"] {
        let dir = sim(board);
        let base = dir.path().join(source::LIVE_TREE);
        let tree = source::read_live(dir.path()).unwrap();
        for (id, node) in tree.nodes() {
            let name = std::fs::read(base.join(node.path.trim_start_matches('/')).join("name"));
            if id != tree.root() {
                let want = node.name.split('@').next().unwrap();
                assert_eq!(
                    name.unwrap(),
                    [want.as_bytes(), b"\0"].concat(),
                    "{}",
                    node.path
                );
            }
            for p in ["operating-points-v2", "memory-region", "required-opps"] {
                tree.phandle_list(id, p).unwrap();
            }
        }
    }
}

#[test]
fn am437x_has_no_soc_tree() {
    let dir = sim("am437x");
    let tree = source::read_live(dir.path()).unwrap();
    assert!(tree.find("/cpus").is_none());
    let report = dvfs(&tree, Widths::SEED).unwrap();
    assert!(report.clusters.is_empty());
}
