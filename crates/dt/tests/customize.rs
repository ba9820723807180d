//! Seed 000 §6.3 "customize": new L3 / DDR votes for CPU frequencies,
//! as an overlay applied with `fdtoverlay` to the real sc7280-idp.dtb and
//! as a patch applied with `patch` to `dtc -I dtb -O dts`'s source and
//! recompiled with `dtc`; either way the changed OPP rows carry the new
//! votes and nothing else in the tree changed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use lever_dt::customize::{self, CustomizeError, OppChange};
use lever_dt::opp::PathKind;
use lever_dt::{dvfs, fdt, source, Tree, Widths};

fn tool(name: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The real tree and the tools, or a printed skip (a failure under CI).
fn setup(test: &str) -> Option<PathBuf> {
    for t in ["dtc", "fdtoverlay", "patch"] {
        if !tool(t) {
            common::skip(
                test,
                &format!("no {t} (Debian device-tree-compiler, patch)"),
            );
            return None;
        }
    }
    let dtb = common::shared_dtbs()
        .ok()?
        .into_iter()
        .find(|p| p.ends_with("sc7280-idp.dtb"));
    if dtb.is_none() {
        common::skip(test, "no sc7280-idp.dtb in the shared folder");
    }
    dtb
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// Silver at 1804.8 MHz: L3 1500 MHz, DDR 1555 MHz (seed units: kHz).
fn silver_changes(tree: &Tree) -> Vec<OppChange> {
    let report = dvfs(tree, Widths::SEED).unwrap();
    let cluster = customize::find_cluster(&report, "silver").unwrap();
    customize::plan(
        cluster,
        &[1_804_800, 300_000],
        &[(PathKind::L3, 1_500_000), (PathKind::Ddr, 1_555_000)],
        Widths::SEED,
        |_| None,
    )
    .unwrap()
}

/// `after` is `before` with exactly the changed OPPs' `opp-peak-kBps`
/// replaced.
fn only_the_votes_changed(before: &Tree, after: &Tree, changes: &[OppChange]) {
    let nodes_b: Vec<_> = before.nodes().map(|(_, n)| n.path.clone()).collect();
    let nodes_a: Vec<_> = after.nodes().map(|(_, n)| n.path.clone()).collect();
    assert_eq!(nodes_a, nodes_b, "the same nodes in the same order");
    let mut changed = 0;
    for ((_, b), (_, a)) in before.nodes().zip(after.nodes()) {
        let change = changes.iter().find(|c| c.node == b.path);
        let mut pb: Vec<_> = b.properties.iter().map(|p| (&p.name, &p.value)).collect();
        let mut pa: Vec<_> = a.properties.iter().map(|p| (&p.name, &p.value)).collect();
        pb.sort();
        pa.sort();
        match change {
            None => assert_eq!(pa, pb, "{}", b.path),
            Some(c) => {
                let want: Vec<u8> = c
                    .new_peak_kbps
                    .iter()
                    .flat_map(|v| v.to_be_bytes())
                    .collect();
                for (name, value) in &pa {
                    if *name == "opp-peak-kBps" {
                        assert_eq!(**value, want, "{}", b.path);
                        changed += 1;
                    } else {
                        assert!(pb.contains(&(*name, *value)), "{}: {name}", b.path);
                    }
                }
                assert_eq!(pa.len(), pb.len(), "{}", b.path);
            }
        }
    }
    assert_eq!(changed, changes.len());
    // Read as the DVFS map: the rows carry the new votes, every other row
    // of every table is as before.
    let rb = dvfs(before, Widths::SEED).unwrap();
    let ra = dvfs(after, Widths::SEED).unwrap();
    for (cb, ca) in rb.clusters.iter().zip(&ra.clusters) {
        for (b, a) in cb.rows.iter().zip(&ca.rows) {
            match changes.iter().find(|c| c.node == b.node) {
                None => assert_eq!(a, b),
                Some(c) => {
                    let peaks: Vec<u32> = a.votes.iter().map(|v| v.peak_kbps.unwrap()).collect();
                    assert_eq!(peaks, c.new_peak_kbps);
                }
            }
        }
    }
    assert_eq!(rb.bwmons, ra.bwmons);
}

#[test]
fn overlay_applied_with_fdtoverlay_changes_only_the_votes() {
    let Some(dtb) = setup("overlay_applied_with_fdtoverlay") else {
        return;
    };
    let before = source::read_dtb(&dtb).unwrap();
    let changes = silver_changes(&before);
    // DDR 1555000 kHz × 4, L3 1500000 kHz × 32.
    assert_eq!(changes[0].new_peak_kbps, [6_220_000, 48_000_000]);
    assert_eq!(
        changes[0].old_peak_kbps,
        [Some(4_068_000), Some(48_537_600)]
    );
    assert_eq!(changes[1].new_peak_kbps, [6_220_000, 48_000_000]);
    let text = customize::overlay(&changes, "sc7280-idp.dtb", Widths::SEED);
    assert!(text.starts_with("/dts-v1/;\n/plugin/;\n"), "{text}");
    assert!(
        text.contains(
            " * vote kBps = target kHz × w; w: DDR 4, LLCC 16, L3 32 bytes per clock\n */\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("target-path = \"/opp-table-cpu0/opp-1804800000\";"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let dts = dir.path().join("o.dts");
    let dtbo = dir.path().join("o.dtbo");
    let out = dir.path().join("new.dtb");
    std::fs::write(&dts, &text).unwrap();
    run(Command::new("dtc")
        .args(["-q", "-@", "-I", "dts", "-O", "dtb", "-o"])
        .arg(&dtbo)
        .arg(&dts));
    run(Command::new("fdtoverlay")
        .arg("-i")
        .arg(&dtb)
        .arg("-o")
        .arg(&out)
        .arg(&dtbo));
    let after = fdt::parse(&std::fs::read(&out).unwrap()).unwrap();
    only_the_votes_changed(&before, &after, &changes);
}

#[test]
fn patch_applied_to_dtc_source_changes_only_the_votes() {
    let Some(dtb) = setup("patch_applied_to_dtc_source") else {
        return;
    };
    let before = source::read_dtb(&dtb).unwrap();
    let changes = silver_changes(&before);
    let dts = source::dtc_source(&dtb).unwrap();
    let diff = customize::patch(&dts, "sc7280-idp.dts", &changes).unwrap();
    assert!(
        diff.starts_with("--- a/sc7280-idp.dts\n+++ b/sc7280-idp.dts\n@@ -"),
        "{diff}"
    );
    assert_eq!(
        diff.lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            .count(),
        2
    );
    assert!(
        diff.contains("+\t\t\topp-peak-kBps = <6220000 48000000>;"),
        "{diff}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sc7280-idp.dts"), &dts).unwrap();
    std::fs::write(dir.path().join("lever.patch"), &diff).unwrap();
    run(Command::new("patch").current_dir(dir.path()).args([
        "-p1",
        "--no-backup-if-mismatch",
        "-i",
        "lever.patch",
    ]));
    let blob = run(Command::new("dtc").current_dir(dir.path()).args([
        "-q",
        "-I",
        "dts",
        "-O",
        "dtb",
        "-o",
        "-",
        "sc7280-idp.dts",
    ]));
    let after = fdt::parse(&blob).unwrap();
    only_the_votes_changed(&before, &after, &changes);
}

/// A patch of a node without votes adds the line after `opp-hz`.
#[test]
fn patch_adds_a_missing_vote_after_opp_hz() {
    let dts = "/dts-v1/;\n\n/ {\n\n\topp-table {\n\t\tcompatible = \"operating-points-v2\";\n\n\t\topp-1 {\n\t\t\topp-hz = <0x00 0x11e1a300>;\n\t\t\topp-microvolt = <0x01>;\n\t\t};\n\t};\n};\n";
    let change = OppChange {
        node: "/opp-table/opp-1".into(),
        label: None,
        cpu_khz: 300_000,
        old_peak_kbps: vec![None],
        new_peak_kbps: vec![800_000],
        paths: vec![(PathKind::Ddr, Some(4))],
    };
    let diff = customize::patch(dts, "t.dts", &[change]).unwrap();
    assert!(
        diff.contains(" \t\t\topp-hz = <0x00 0x11e1a300>;\n+\t\t\topp-peak-kBps = <800000>;\n"),
        "{diff}"
    );
    let gone = OppChange {
        node: "/opp-table/opp-9".into(),
        label: None,
        cpu_khz: 1,
        old_peak_kbps: vec![],
        new_peak_kbps: vec![1],
        paths: vec![],
    };
    assert_eq!(
        customize::patch(dts, "t.dts", &[gone]).unwrap_err(),
        CustomizeError::NodeNotInSource("/opp-table/opp-9".into())
    );
}

/// The seed's example row: CPU 0 at 300 MHz votes <800000 9600000>;
/// L3 at 556.8 MHz makes it <800000 17817600>. Errors say what exists.
#[test]
fn seed_row_and_precise_errors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/features.dts");
    if !common::have_dtc() {
        common::skip("seed_row_and_precise_errors", "no dtc");
        return;
    }
    let tree = source::read_dts(&src, &[]).unwrap();
    let report = dvfs(&tree, Widths::SEED).unwrap();
    let cluster = customize::find_cluster(&report, "0").unwrap();
    let labels = |p: &str| tree.find(p).and_then(|id| tree.labels(id).first().cloned());
    let c = customize::plan(
        cluster,
        &[300_000],
        &[(PathKind::L3, 556_800)],
        Widths::SEED,
        labels,
    )
    .unwrap();
    assert_eq!(c[0].new_peak_kbps, [800_000, 17_817_600]);
    assert_eq!(
        customize::describe(&c[0]),
        "/opp-table/opp-300000000 at 300000 kHz: L3 9600000 kBps (300 MHz) -> 17817600 kBps (556.8 MHz)"
    );
    let e = customize::plan(
        cluster,
        &[1_708_800],
        &[(PathKind::Ddr, 1)],
        Widths::SEED,
        |_| None,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "/opp-table has no OPP at 1708800 kHz; its frequencies (kHz): 300000 2000000"
    );
    let e = customize::plan(
        cluster,
        &[300_000],
        &[(PathKind::Llcc, 1)],
        Widths::SEED,
        |_| None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            CustomizeError::NoPath {
                kind: PathKind::Llcc,
                ..
            }
        ),
        "{e}"
    );
    let e = customize::plan(
        cluster,
        &[300_000],
        &[(PathKind::L3, 200_000_000)],
        Widths::SEED,
        |_| None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not fit a 32-bit"), "{e}");
    let e = customize::find_cluster(&report, "gold").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no cluster \"gold\"; the tree's clusters: silver (CPUs 0, /opp-table)"
    );
}
