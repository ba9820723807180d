//! `lever dt`: seed 000 §6.3's row and §6.5's modem region through the
//! binary, on sc7280-idp (the shared folder's QCS6490-family tree), as a
//! .dtb and as a live tree under --root with a current frequency (and
//! that tree's directory given as FILE); JSON;
//! --width; a truncated blob's error and exit code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lever(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lever"))
        .args(args)
        .output()
        .unwrap()
}

fn sc7280() -> Option<PathBuf> {
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
    println!("SKIPPED dt: no {}", p.display());
    None
}

fn text(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn opp_and_carveouts_of_sc7280() {
    let Some(dtb) = sc7280() else { return };
    let dtb = dtb.to_str().unwrap();
    let opp = text(&lever(&["dt", "opp", dtb]));
    assert!(
        opp.contains("cluster 0: CPUs 0-3 share /opp-table-cpu0"),
        "{opp}"
    );
    let row = opp.lines().find(|l| l.starts_with("300 ")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols, ["300", "800000", "200", "9600000", "300"]);
    assert!(opp.contains("opp-0  2400000         150"), "{opp}");

    let json: serde_json::Value = serde_json::from_str(&text(&lever(&[
        "--json", "dt", "opp", dtb, "--width", "ddr=8",
    ])))
    .unwrap();
    assert_eq!(json["widths"]["ddr_bytes"], 8);
    assert_eq!(
        json["clusters"][0]["rows"][0]["votes"][0]["implied_khz"],
        100_000
    );

    let c = text(&lever(&["dt", "carveouts", dtb]));
    let mpss = c
        .lines()
        .find(|l| l.starts_with("memory@8b800000"))
        .unwrap();
    assert!(
        mpss.contains("246 MiB") && mpss.contains("no-map") && mpss.contains("remoteproc@4080000"),
        "{mpss}"
    );
    assert!(
        c.contains("no-map total: 346.6 MiB (363401216 bytes)"),
        "{c}"
    );

    let show = text(&lever(&[
        "dt",
        "show",
        dtb,
        "--node",
        "/reserved-memory/memory@8b800000",
    ]));
    assert!(
        show.contains("reg = <0x0 0x8b800000 0x0 0xf600000>;") && show.contains("no-map;"),
        "{show}"
    );

    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.dtb");
    std::fs::write(&cut, &std::fs::read(dtb).unwrap()[..5000]).unwrap();
    let o = lever(&["dt", "opp", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("truncated DTB"));
}

#[test]
fn live_tree_under_root_marks_the_current_row() {
    let Some(dtb) = sc7280() else { return };
    let tree = lever_dt::source::read_dtb(&dtb).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join(lever_dt::source::LIVE_TREE);
    for (_, n) in tree.nodes() {
        let d = base.join(n.path.trim_start_matches('/'));
        std::fs::create_dir_all(&d).unwrap();
        for p in &n.properties {
            std::fs::write(d.join(&p.name), &p.value).unwrap();
        }
    }
    let cpufreq = dir.path().join("sys/devices/system/cpu/cpu4/cpufreq");
    std::fs::create_dir_all(&cpufreq).unwrap();
    std::fs::write(cpufreq.join("scaling_cur_freq"), "1228800\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let opp = text(&lever(&["--root", root, "dt", "opp"]));
    assert!(opp.contains("current frequency: 1228.8 MHz"), "{opp}");
    let row = opp.lines().find(|l| l.starts_with("1228.8 ")).unwrap();
    assert!(row.ends_with("<- current 1228.8 MHz"), "{opp}");
    let c = text(&lever(&["--root", root, "dt", "carveouts"]));
    assert!(c.contains("no-map total: 346.6 MiB"), "{c}");
    // The live tree's directory given as FILE (a copy, or
    // /sys/firmware/devicetree/base itself as the arm64 kernel stage
    // does): the same tree; the current row only when it is --root's own.
    let base_arg = base.to_str().unwrap();
    let as_dir = text(&lever(&["dt", "carveouts", base_arg]));
    assert_eq!(as_dir, c);
    let show_dir = text(&lever(&["dt", "show", "--node", "/cpus", base_arg]));
    let show_live = text(&lever(&["--root", root, "dt", "show", "--node", "/cpus"]));
    assert_eq!(show_dir, show_live);
    let opp_dir = text(&lever(&["--root", root, "dt", "opp", base_arg]));
    assert!(opp_dir.contains("<- current 1228.8 MHz"), "{opp_dir}");
    let opp_copy = text(&lever(&["dt", "opp", base_arg]));
    assert!(!opp_copy.contains("<- current"), "{opp_copy}");
}

/// The row parts of `lever dt opp`'s text: the "current" marks and lines
/// and the tables' labels (a live tree's) left out.
fn opp_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("  current frequency"))
        .map(|l| {
            let l = l.split("   <- current").next().unwrap();
            match (l.starts_with("cluster "), l.find(" (")) {
                (true, Some(i)) => {
                    let rest = &l[i..];
                    let close = rest.find(')').unwrap();
                    format!("{}{}", &l[..i], &rest[close + 1..])
                }
                _ => l.to_string(),
            }
        })
        .collect()
}

#[test]
fn simulated_qcs6490_opp_is_sc7280_idp_row_for_row() {
    let Some(dtb) = sc7280() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("board");
    let root = root.to_str().unwrap();
    text(&lever(&["sim", "create", "qcs6490", root]));
    let live = text(&lever(&["--root", root, "dt", "opp"]));
    let real = text(&lever(&["dt", "opp", dtb.to_str().unwrap()]));
    assert!(live.contains("<- current 691.2 MHz"), "{live}");
    assert_eq!(opp_rows(&live), opp_rows(&real));
    // The carveouts and mem map agree on the no-map total.
    let c = text(&lever(&["--root", root, "dt", "carveouts"]));
    assert!(
        c.contains("no-map total: 441.1 MiB (462536704 bytes)"),
        "{c}"
    );
    let map = text(&lever(&["--root", root, "mem", "map"]));
    let non_linux = map.lines().find(|l| l.starts_with("Non-Linux")).unwrap();
    assert!(non_linux.ends_with("441.1"), "{map}");
}

#[test]
fn customize_prints_an_overlay_and_a_patch() {
    let Some(dtb) = sc7280() else { return };
    let dtb = dtb.to_str().unwrap();
    let args = |format: &str| {
        lever(&[
            "dt",
            "customize",
            dtb,
            "--cluster",
            "silver",
            "--freq",
            "1804800",
            "--l3",
            "1500000",
            "--ddr",
            "1555000",
            "--format",
            format,
        ])
    };
    let o = args("overlay");
    let overlay = text(&o);
    assert!(overlay.starts_with("/dts-v1/;\n/plugin/;\n"), "{overlay}");
    assert!(
        overlay.contains("target-path = \"/opp-table-cpu0/opp-1804800000\";")
            && overlay.contains("opp-peak-kBps = <6220000 48000000>;"),
        "{overlay}"
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("DDR 4068000 kBps (1017 MHz) -> 6220000 kBps (1555 MHz), L3 48537600 kBps (1516.8 MHz) -> 48000000 kBps (1500 MHz)"),
        "{said}"
    );
    if Command::new("dtc").arg("--version").output().is_ok() {
        let patch = text(&args("patch"));
        assert!(
            patch.starts_with("--- a/sc7280-idp.dts\n+++ b/sc7280-idp.dts\n"),
            "{patch}"
        );
        assert!(
            patch.contains("+\t\t\topp-peak-kBps = <6220000 48000000>;"),
            "{patch}"
        );
    }
    // A frequency the table lacks: exit 3, the table's frequencies named.
    let o = lever(&[
        "dt",
        "customize",
        dtb,
        "--cluster",
        "silver",
        "--freq",
        "1708800",
        "--ddr",
        "1555000",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "/opp-table-cpu0 has no OPP at 1708800 kHz; its frequencies (kHz): 300000 691200"
        ),
        "{err}"
    );
}
