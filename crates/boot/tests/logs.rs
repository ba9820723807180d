//! Serial logs as they really arrive: garbled lines, U-Boot boards, the
//! kernel's printk times, and systemd on a UEFI machine.

use lever_boot::serial::{self, Loader};
use lever_boot::stage_markers::Markers;
use lever_boot::stages::{self, RowKind, Sources, StageTable};
use lever_boot::{format_ms, format_s, journalctl, systemd};

fn fixture(name: &str) -> (String, String) {
    let path = lever_testkit::fixture_path(env!("CARGO_MANIFEST_DIR"), name);
    (name.to_string(), lever_boot::read_file(&path).unwrap())
}

/// The table of a serial log alone.
fn table_of(s: &serial::SerialTimes) -> StageTable {
    stages::build(Sources {
        serial: Some(s),
        time: None,
        journal: None,
        markers: &Markers::default(),
    })
}

fn serial_table(name: &str) -> (serial::SerialTimes, StageTable) {
    let (f, text) = fixture(name);
    let s = serial::parse(&f, &text).unwrap();
    let t = table_of(&s);
    (s, t)
}

/// (stage, seconds) of every row, for whole-table comparisons.
fn rows(t: &StageTable) -> Vec<(String, String)> {
    t.rows
        .iter()
        .map(|r| (r.stage.clone(), format_s(r.us)))
        .collect()
}

fn owned(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// The stage rows add up to the total, to the µs.
fn assert_adds_up(t: &StageTable) {
    let total = t.total().expect("a total");
    let sum: u64 = t
        .rows
        .iter()
        .filter(|r| r.kind == RowKind::Stage)
        .map(|r| r.us)
        .sum();
    assert_eq!(sum, total.us, "{:#?}", t.rows);
}

#[test]
fn cut_uefi_total_is_a_warning_and_post_time_fills_core_uefi() {
    let (s, t) = serial_table("seed000-7.2-serial-cut-total.log");
    assert_eq!(s.uefi_total, None);
    assert_eq!(s.warnings.len(), 1);
    let w = &s.warnings[0];
    assert_eq!(w.line, 5);
    assert_eq!(
        w.text,
        "[2024-02-06 15:26:08.543] UEFI Total : 10\u{fffd}\u{fffd}"
    );
    assert!(
        w.reason.contains("expected `UEFI Total : <N> ms`"),
        "{}",
        w.reason
    );
    // The same figures as the ungarbled log (seed 000 §7.2).
    assert_eq!(format_ms(s.pbl_xbl_us().unwrap()), "1547");
    assert_eq!(format_ms(s.core_uefi_us().unwrap()), "1015");
    assert_eq!(format_ms(s.kernel_loader_us().unwrap()), "574");
    assert_eq!(format_ms(s.before_kernel_us().unwrap()), "3136");
    assert_eq!(
        t.get("Core UEFI").unwrap().calculation,
        "POST Time [2562] − UEFI Start [1547]"
    );
    assert_eq!(t.total().unwrap().stage, "Total before kernel");
    assert_eq!(t.warnings.len(), 1);
    assert!(
        t.warnings[0].starts_with(
            "seed000-7.2-serial-cut-total.log:5: skipped garbled line `[2024-02-06 15:26:08.543] UEFI Total : 10"
        ),
        "{:?}",
        t.warnings
    );
    assert_eq!(t.loader.as_deref(), Some("Qualcomm XBL/UEFI"));
}

#[test]
fn cut_uefi_start_value_is_filled_from_post_time_and_uefi_total() {
    let (s, t) = serial_table("seed000-7.2-serial-cut-start.log");
    assert_eq!(s.uefi_start, None);
    assert_eq!(s.warnings[0].line, 2);
    assert!(
        s.warnings[0].reason.contains("is cut off"),
        "{:?}",
        s.warnings
    );
    assert_eq!(
        rows(&t),
        owned(&[
            ("PBL+XBL", "1.547"),
            ("Core UEFI", "1.015"),
            ("Kernel loader", "0.574"),
            ("Total before kernel", "3.136"),
        ])
    );
    assert_eq!(
        t.get("PBL+XBL").unwrap().calculation,
        "POST Time [2562] − UEFI Total 1015 ms"
    );
}

#[test]
fn without_uefi_total_exit_ebs_still_gives_the_total_and_the_seed_total_stands() {
    let (s, t) = serial_table("seed000-8.3-serial-cut-total.log");
    assert_eq!(s.warnings.len(), 1);
    assert_eq!(
        rows(&t),
        owned(&[
            ("PBL+XBL", "1.818"),
            ("Core UEFI + Kernel loader", "1.651"),
            ("Total before kernel", "3.469"),
        ])
    );
    assert_adds_up(&t);

    // With systemd and the journal, §8.3's 11.409 s is still reached.
    let (f, text) = fixture("seed000-8.3-systemd-time.txt");
    let time = systemd::parse_time(&f, &text).unwrap();
    let m = Markers::default();
    let (f, text) = fixture("seed000-8.3-journal.txt");
    let found = journalctl::find(&f, &text, &[&m.start, &m.end]).unwrap();
    let t = stages::build(Sources {
        serial: Some(&s),
        time: Some(&time),
        journal: Some((found[0].as_ref(), found[1].as_ref())),
        markers: &m,
    });
    let total = t.total().unwrap();
    assert_eq!(total.stage, "Total until Recorder init");
    assert_eq!(format_s(total.us), "11.409");
    assert_eq!(
        total.calculation,
        "PBL+XBL + Core UEFI + Kernel loader + Kernel total + (end − start)"
    );
}

#[test]
fn systemd_firmware_and_loader_become_rows_that_add_up() {
    let (f, text) = fixture("real-systemd-time-i9-7960x.txt");
    let time = systemd::parse_time(&f, &text).unwrap();
    let m = Markers::default();
    let t = stages::build(Sources {
        serial: None,
        time: Some(&time),
        journal: None,
        markers: &m,
    });
    assert_eq!(
        rows(&t),
        owned(&[
            ("Firmware", "53.921"),
            ("Loader", "2.643"),
            ("Kernel total", "2.236"),
            ("Initrd", "4.348"),
            ("Userspace", "10.082"),
            ("Total until userspace finished", "73.230"),
        ])
    );
    assert_adds_up(&t);
    let total = t.total().unwrap();
    assert!(
        !total.calculation.contains("no boot loader"),
        "{}",
        total.calculation
    );
    assert_eq!(
        total.calculation,
        "Firmware + Loader + Kernel total + Initrd + Userspace; systemd prints 73.233 s, each part rounded"
    );
    assert!(
        !t.notes
            .iter()
            .any(|n| n.contains("boot loader stages not measured")),
        "{:?}",
        t.notes
    );

    // Without firmware/loader times systemd alone still says so, and adds up.
    let (f, text) = fixture("seed000-7.2-systemd-time.txt");
    let time = systemd::parse_time(&f, &text).unwrap();
    let t = stages::build(Sources {
        serial: None,
        time: Some(&time),
        journal: None,
        markers: &m,
    });
    assert_eq!(t.total().unwrap().stage, "Total (systemd-analyze)");
    assert!(t
        .total()
        .unwrap()
        .calculation
        .contains("no boot loader stages"));
    assert_adds_up(&t);
}

#[test]
fn ti_am62x_bootstage_report_with_a_cut_row() {
    let (s, t) = serial_table("uboot-am62x-bootstage-cut.log");
    assert_eq!(s.loader, Some(Loader::UBoot));
    assert_eq!(
        t.loader.as_deref(),
        Some("U-Boot 2024.04-ti-ga970f6e51043 (SPL 2024.04-ti-ga970f6e51043)")
    );
    let u = s.uboot.as_ref().unwrap();
    assert_eq!(u.boots, 1);
    assert_eq!(u.bootstage.len(), 7);
    assert_eq!(u.accumulated.len(), 2);
    assert_eq!(s.warnings.len(), 1);
    assert_eq!(s.warnings[0].line, 51);
    assert!(s.warnings[0].reason.starts_with("bootstage row cut off"));
    // board_init_r was lost: its neighbours join, the rows still add up.
    assert_eq!(
        rows(&t),
        owned(&[
            ("reset → board_init_f", "0.847"),
            ("board_init_f → main_loop", "0.649"),
            ("main_loop → start_kernel", "2.669"),
            ("Total before kernel", "4.165"),
            ("Kernel total", "2.161"),
            ("Total until init", "6.326"),
        ])
    );
    assert_eq!(t.get("Kernel total").unwrap().source, "kernel printk");
    assert_eq!(
        t.get("Kernel total").unwrap().calculation,
        "`Run /sbin/init as init process` [2.161] (line 69) − first printk [0.000] (line 61)"
    );
    assert_eq!(t.total().unwrap().us, 4_164_921 + 2_161_204);
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("no readable board_init_r mark")),
        "{:?}",
        t.notes
    );
}

#[test]
fn nxp_imx8mp_timed_by_the_terminal_clock() {
    let (s, t) = serial_table("uboot-imx8mp-hostclock.log");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert!(s.uboot.as_ref().unwrap().bootstage.is_empty());
    assert_eq!(
        rows(&t),
        owned(&[
            ("SPL", "0.489"),
            ("U-Boot", "2.709"),
            ("Total before kernel", "3.198"),
            ("Kernel total", "2.523"),
            ("Total until init", "5.721"),
        ])
    );
    assert_eq!(t.get("SPL").unwrap().source, "host clock");
    assert_eq!(
        t.loader.as_deref(),
        Some("U-Boot 2022.04-lf_v2022.04+g181859317b (SPL 2022.04-lf_v2022.04+g181859317b)")
    );
}

#[test]
fn raspberry_pi_without_spl_and_an_initramfs() {
    let (s, t) = serial_table("uboot-rpi4-hostclock.log");
    assert_eq!(
        s.kernel.as_ref().unwrap().init.as_ref().unwrap().text,
        "Run /init as init process"
    );
    assert_eq!(
        rows(&t),
        owned(&[
            ("U-Boot", "4.422"),
            ("Total before kernel", "4.422"),
            ("Kernel total", "1.910"),
            ("Total until init", "6.332"),
        ])
    );
    assert_eq!(t.loader.as_deref(), Some("U-Boot 2023.07.02"));
}

#[test]
fn the_last_of_several_boots_is_read() {
    let (_, imx) = fixture("uboot-imx8mp-hostclock.log");
    let (_, rpi) = fixture("uboot-rpi4-hostclock.log");
    let s = serial::parse("two.log", &format!("{imx}{rpi}")).unwrap();
    assert_eq!(s.boots, 2);
    assert_eq!(
        s.uboot.as_ref().unwrap().version.as_deref(),
        Some("2023.07.02")
    );
    assert_eq!(s.kernel.as_ref().unwrap().kernel_us(), Some(1_910_112));
}

#[test]
fn a_dmesg_alone_gives_the_kernel_stage() {
    let (_, text) = fixture("uboot-imx8mp-hostclock.log");
    let dmesg: String = text
        .lines()
        .filter_map(|l| l.split_once("] [").map(|(_, k)| format!("[{k}\n")))
        .collect();
    let s = serial::parse("dmesg.txt", &dmesg).unwrap();
    assert_eq!(s.loader, None);
    let t = table_of(&s);
    assert_eq!(rows(&t), owned(&[("Kernel total", "2.523")]));
    assert_eq!(t.loader.as_deref(), Some("none (kernel lines only)"));
}
