//! Seed 000's worked examples come out as the seed states them:
//! §6.3's 300 MHz row (`opp-peak-kBps = <800000 9600000>`: DDR 800000 / 4
//! = 200 MHz, L3 9600000 / 32 = 300 MHz) and its bwmon levels (800000 / 4
//! = 200 MHz DDR, 2400000 / 16 = 150 MHz LLCC), on sc7280-idp, the
//! QCS6490 family's tree; §6.5's carveouts from the seed's own listing.

mod common;

use lever_dt::opp::PathKind;
use lever_dt::{carveouts, dvfs, Widths};
use std::path::Path;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn section_6_3_the_300_mhz_row_and_the_bwmon_levels() {
    let dtbs = match common::shared_dtbs() {
        Ok(v) => v,
        Err(why) => return common::skip("seed 6.3", &why),
    };
    let sc7280 = dtbs
        .iter()
        .find(|p| p.ends_with("sc7280-idp.dtb"))
        .expect("sc7280-idp.dtb");
    let tree = lever_dt::source::read_dtb(sc7280).unwrap();
    let d = dvfs(&tree, Widths::SEED).unwrap();
    assert_eq!(
        (d.widths.ddr_bytes, d.widths.llcc_bytes, d.widths.l3_bytes),
        (4, 16, 32)
    );
    let cluster0 = &d.clusters[0];
    assert_eq!(
        cluster0.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let row = cluster0
        .rows
        .iter()
        .find(|r| r.freq_hz == Some(300_000_000))
        .expect("300 MHz row");
    let kinds: Vec<PathKind> = cluster0.paths.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [PathKind::Ddr, PathKind::L3]);
    assert_eq!(row.votes[0].peak_kbps, Some(800_000));
    assert_eq!(
        row.votes[0].implied_khz,
        Some(200_000),
        "DDR: 800000 / 4 = 200 MHz"
    );
    assert_eq!(row.votes[1].peak_kbps, Some(9_600_000));
    assert_eq!(
        row.votes[1].implied_khz,
        Some(300_000),
        "L3: 9600000 / 32 = 300 MHz"
    );

    let llcc_bwmon = d
        .bwmons
        .iter()
        .find(|b| b.compatible[0].ends_with("llcc-bwmon"))
        .unwrap();
    assert_eq!(llcc_bwmon.paths[0].kind, PathKind::Ddr);
    assert_eq!(llcc_bwmon.rows[0].votes[0].peak_kbps, Some(800_000));
    assert_eq!(
        llcc_bwmon.rows[0].votes[0].implied_khz,
        Some(200_000),
        "800000 / 4"
    );
    let cpu_bwmon = d
        .bwmons
        .iter()
        .find(|b| b.compatible[0].ends_with("cpu-bwmon"))
        .unwrap();
    assert_eq!(cpu_bwmon.paths[0].kind, PathKind::Llcc);
    assert_eq!(cpu_bwmon.rows[0].votes[0].peak_kbps, Some(2_400_000));
    assert_eq!(
        cpu_bwmon.rows[0].votes[0].implied_khz,
        Some(150_000),
        "2400000 / 16"
    );

    // w is overridable: DDR at w = 8 halves the implied clock.
    let mut w = Widths::SEED;
    w.set("ddr", 8).unwrap();
    let d8 = dvfs(&tree, w).unwrap();
    assert_eq!(d8.clusters[0].rows[0].votes[0].implied_khz, Some(100_000));
    assert!(w.set("gpu", 4).is_err() && w.set("l3", 0).is_err());

    // §6.5's modem region in the real tree, used by the modem remoteproc.
    let c = carveouts(&tree).unwrap();
    let mpss = c
        .regions
        .iter()
        .find(|r| r.name == "memory@8b800000")
        .unwrap();
    assert_eq!(
        (mpss.ranges[0].base, mpss.ranges[0].size_bytes),
        (0x8b80_0000, 0xf60_0000)
    );
    assert!(mpss.no_map);
    assert_eq!(mpss.users[0].node, "/soc@0/remoteproc@4080000");
    assert_eq!(mpss.users[0].compatible[0], "qcom,sc7280-mss-pil");
}

#[test]
fn section_6_5_the_seeds_regions() {
    if !common::have_dtc() {
        return common::skip(
            "seed 6.5",
            "dtc is not installed (apt-get install device-tree-compiler)",
        );
    }
    let tree = lever_dt::source::read_dts(&fixture("seed-6.5.dts"), &[]).unwrap();
    let c = carveouts(&tree).unwrap();
    let want: [(&str, u64, u64); 7] = [
        ("cdsp_secure_heap_mem", 0x8180_0000, 0x1e0_0000),
        ("camera_mem", 0x8430_0000, 0x50_0000),
        ("adsp_mem", 0x8610_0000, 0x280_0000),
        ("cdsp_mem", 0x8890_0000, 0x1e00_0000),
        ("mpss_mem", 0x8b80_0000, 0xf60_0000),
        ("tz_stat_mem", 0xc000_0000, 0x10_0000),
        ("tags_mem", 0xc010_0000, 0x120_0000),
    ];
    assert!(c.has_symbols);
    let got: Vec<(&str, u64, u64)> = c
        .regions
        .iter()
        .map(|r| {
            (
                r.labels[0].as_str(),
                r.ranges[0].base,
                r.ranges[0].size_bytes,
            )
        })
        .collect();
    assert_eq!(got, want);
    assert!(c
        .regions
        .iter()
        .all(|r| r.no_map && r.enabled && !r.outside_memory));
    let mpss = &c.regions[4];
    assert_eq!(mpss.size_bytes(), 246 << 20, "0xf600000 is 246 MB");
    assert_eq!(mpss.users[0].labels, ["remoteproc_mpss"]);
    let total: u64 = want.iter().map(|w| w.2).sum();
    assert_eq!(c.totals.no_map_bytes, total);
    assert_eq!(total, (30 + 5 + 40 + 480 + 246 + 1 + 18) << 20);
    // The seed's cdsp size (0x1e000000 = 480 MiB from 0x88900000) runs
    // over mpss at 0x8b800000: flagged.
    assert_eq!(c.overlaps.len(), 1);
    assert_eq!(c.overlaps[0].first, "/reserved-memory/cdsp@88900000");
    assert_eq!(c.overlaps[0].second, "/reserved-memory/mpss@8b800000");
    assert_eq!(c.overlaps[0].shared.base, 0x8b80_0000);
    // mpss lies wholly inside cdsp as given.
    assert_eq!(c.overlaps[0].shared.size_bytes, 0xf60_0000);

    // With 1 GiB of /memory (to 0xc0000000), the regions past it are flagged.
    let text = std::fs::read_to_string(fixture("seed-6.5.dts")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.dts");
    std::fs::write(
        &small,
        text.replace(
            "0x0 0x80000000 0x0 0x80000000",
            "0x0 0x80000000 0x0 0x40000000",
        ),
    )
    .unwrap();
    let c = carveouts(&lever_dt::source::read_dts(&small, &[]).unwrap()).unwrap();
    let outside: Vec<&str> = c
        .regions
        .iter()
        .filter(|r| r.outside_memory)
        .map(|r| r.labels[0].as_str())
        .collect();
    assert_eq!(outside, ["tz_stat_mem", "tags_mem"]);
}

#[test]
fn section_6_5_status_disabled_gives_the_modem_back_through_cpp_includes() {
    if !common::have_dtc() {
        return common::skip(
            "seed 6.5 include",
            "dtc is not installed (apt-get install device-tree-compiler)",
        );
    }
    let tree = lever_dt::source::read_dts(&fixture("include.dts"), &[fixture("include")]).unwrap();
    let c = carveouts(&tree).unwrap();
    let mpss = &c.regions[0];
    assert_eq!(mpss.labels, ["mpss_mem"]);
    assert_eq!(
        (mpss.ranges[0].base, mpss.ranges[0].size_bytes),
        (0x8b80_0000, 0xf60_0000)
    );
    assert!(!mpss.enabled);
    assert_eq!(c.totals.no_map_bytes, 0);
    assert_eq!(c.totals.disabled_bytes, 0xf60_0000);
    // Without the include directory cpp is not run and dtc refuses it.
    let err = lever_dt::source::read_dts(&fixture("include.dts"), &[]).unwrap_err();
    assert!(err.to_string().contains("dtc failed"), "{err}");
}
