//! The features the reports read, on a small source
//! (`fixtures/features.dts`): /memreserve/, DDR and L3 paths, turbo,
//! avg votes, required-opps by label, a bwmon, a dynamic reusable region
//! with alloc-ranges and alignment, a no-map region and its user; and the
//! live tree (a directory per node) read the same as the blob.

mod common;

use lever_dt::{carveouts, dvfs, Widths};
use std::path::Path;

#[test]
fn every_feature_and_the_live_tree_form() {
    if !common::have_dtc() {
        return common::skip(
            "features",
            "dtc is not installed (apt-get install device-tree-compiler)",
        );
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/features.dts");
    let tree = lever_dt::source::read_dts(&src, &[]).unwrap();
    let d = dvfs(&tree, Widths::SEED).unwrap();
    let cl = &d.clusters[0];
    assert_eq!(cl.labels, ["t"]);
    assert!(cl.opp_shared);
    let r0 = &cl.rows[0];
    assert_eq!(r0.required_opps, ["lvl"]);
    assert!(!r0.turbo);
    let r1 = &cl.rows[1];
    assert!(r1.turbo);
    assert_eq!(r1.freq_hz, Some(2_000_000_000));
    assert_eq!(
        (r1.votes[0].avg_kbps, r1.votes[1].avg_kbps),
        (Some(1), Some(2))
    );
    assert_eq!(r1.votes[1].implied_khz, Some(48_537_600 / 32));
    assert_eq!(d.bwmons[0].rows[0].votes[0].implied_khz, Some(200_000));

    let c = carveouts(&tree).unwrap();
    assert_eq!(c.mem_reserve[0].address, 0x8000_0000);
    assert_eq!(c.mem_reserve[0].size, 0x1000);
    let cma = &c.regions[0];
    assert!(cma.ranges.is_empty() && cma.reusable);
    assert_eq!(cma.dynamic_size_bytes, Some(0x200_0000));
    assert_eq!(cma.alignment, Some(0x40_0000));
    assert_eq!(
        (cma.alloc_ranges[0].base, cma.alloc_ranges[0].size_bytes),
        (0x8000_0000, 0x1000_0000)
    );
    assert_eq!(c.totals.reusable_bytes, 0x200_0000);
    assert_eq!(c.totals.dynamic_bytes, 0x200_0000);
    assert_eq!(c.totals.no_map_bytes, 0xf60_0000);
    // mpss (0x8b800000..0x9ae00000) lies inside /memory's 1 GiB.
    assert!(c.memory_known && !c.regions[1].outside_memory);
    assert_eq!(c.regions[1].users[0].node, "/modem");

    // The same tree as the kernel exposes it: a directory per node, a
    // file per property (plus the kernel's own `name` files).
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join(lever_dt::source::LIVE_TREE);
    for (_, n) in tree.nodes() {
        let d = base.join(n.path.trim_start_matches('/'));
        std::fs::create_dir_all(&d).unwrap();
        for p in &n.properties {
            std::fs::write(d.join(&p.name), &p.value).unwrap();
        }
        if n.path != "/" {
            let mut name = n.name.split('@').next().unwrap().as_bytes().to_vec();
            name.push(0);
            std::fs::write(d.join("name"), name).unwrap();
        }
    }
    let live = lever_dt::source::read_live(dir.path()).unwrap();
    assert_eq!(dvfs(&live, Widths::SEED).unwrap(), d);
    let mut lc = carveouts(&live).unwrap();
    lc.mem_reserve = c.mem_reserve.clone(); // a live tree has no reservation block
                                            // The live tree's nodes come sorted by name (readdir has no order).
    let mut c = c;
    c.regions.sort_by(|a, b| a.node.cmp(&b.node));
    lc.regions.sort_by(|a, b| a.node.cmp(&b.node));
    assert_eq!(lc, c);
}
