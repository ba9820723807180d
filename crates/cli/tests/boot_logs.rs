//! `lever boot` on serial logs as they really arrive: a line cut by the
//! UART, U-Boot boards, the kernel's printk times, and systemd's firmware
//! and loader times on a UEFI machine.

mod common;

use common::{lever, ok};

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../boot/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["boot", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(&all)).unwrap()
}

/// (stage, µs) of each row.
fn rows(v: &serde_json::Value) -> Vec<(String, u64)> {
    v["stages"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["stage"].as_str().unwrap().to_string(),
                r["us"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_serial_log_with_a_cut_line_is_read_not_refused() {
    let log = fixture("seed000-7.2-serial-cut-total.log");
    // Before: exit 1, "cannot read `UEFI Total : 10…`".
    let o = lever(&["boot", "--serial", &log]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in ["PBL+XBL", "1547", "Core UEFI", "1015", "574", "3136"] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }

    let v = json(&["--serial", &log]);
    assert_eq!(
        rows(&v),
        vec![
            ("PBL+XBL".into(), 1_547_000),
            ("Core UEFI".into(), 1_015_000),
            ("Kernel loader".into(), 574_000),
            ("Total before kernel".into(), 3_136_000),
        ]
    );
    let w = &v["serial"]["warnings"][0];
    assert_eq!(w["line"], 5);
    assert!(
        w["text"].as_str().unwrap().contains("UEFI Total : 10"),
        "{w}"
    );
    assert!(w["reason"].as_str().unwrap().contains("<N> ms"), "{w}");
    let sw = v["stages"]["warnings"][0].as_str().unwrap();
    assert!(sw.contains(":5: skipped garbled line"), "{sw}");
    assert_eq!(v["stages"]["loader"], "Qualcomm XBL/UEFI");
}

#[test]
fn exit_ebs_alone_gives_the_total_before_kernel() {
    let v = json(&["--serial", &fixture("seed000-8.3-serial-cut-total.log")]);
    let rows = rows(&v);
    assert_eq!(
        rows.last().unwrap(),
        &("Total before kernel".into(), 3_469_000)
    );
    assert_eq!(v["stages"]["rows"][2]["kind"], "total");
}

#[test]
fn systemd_firmware_and_loader_are_rows_of_the_total() {
    let time = fixture("real-systemd-time-i9-7960x.txt");
    let out = ok(&["boot", "--systemd-time", &time]);
    assert!(!out.contains("no boot loader stages"), "{out}");
    assert!(out.contains("Firmware") && out.contains("53.921"), "{out}");
    let v = json(&["--systemd-time", &time]);
    let rows = rows(&v);
    let (total_name, total) = rows.last().unwrap().clone();
    assert_eq!(total_name, "Total until userspace finished");
    let sum: u64 = rows[..rows.len() - 1].iter().map(|(_, us)| us).sum();
    assert_eq!(sum, total);
    assert_eq!(total, 73_230_000);
}

#[test]
fn u_boot_logs_name_their_loader_and_time_the_kernel() {
    let v = json(&["--serial", &fixture("uboot-am62x-bootstage-cut.log")]);
    assert_eq!(v["serial"]["loader"], "u-boot");
    assert_eq!(
        v["stages"]["loader"],
        "U-Boot 2024.04-ti-ga970f6e51043 (SPL 2024.04-ti-ga970f6e51043)"
    );
    let rows = rows(&v);
    assert_eq!(
        rows.last().unwrap(),
        &("Total until init".into(), 6_326_125)
    );
    assert_eq!(v["serial"]["warnings"][0]["line"], 51);

    let out = ok(&["boot", "--serial", &fixture("uboot-imx8mp-hostclock.log")]);
    for want in [
        "SPL",
        "0.489",
        "U-Boot",
        "2.709",
        "Kernel total",
        "2.523",
        "5.721",
    ] {
        assert!(out.contains(want), "{want} missing:\n{out}");
    }
}

#[test]
fn the_text_view_names_the_loader_and_the_skipped_line() {
    let log = fixture("seed000-7.2-serial-cut-total.log");
    let text = ok(&["boot", "--serial", &log]);
    assert!(text.contains("serial log: Qualcomm XBL/UEFI"), "{text}");
    let warnings = text
        .split("\nwarnings:\n")
        .nth(1)
        .expect("a warnings section");
    assert!(
        warnings.starts_with("  - ") && warnings.contains("cut-total.log:5: skipped garbled line"),
        "{text}"
    );
}
