//! The seed's worked examples, to the unit, and real systemd output.

use lever_boot::stage_markers::{self, Markers};
use lever_boot::stages::{self, RowKind, Sources};
use lever_boot::{format_ms, format_s, journalctl, serial, systemd};

/// A fixture's name and text, read the way `lever boot` reads logs (lossy).
fn fixture(name: &str) -> (String, String) {
    let path = lever_testkit::fixture_path(env!("CARGO_MANIFEST_DIR"), name);
    let text = lever_boot::read_file(&path).unwrap();
    (name.to_string(), text)
}

#[test]
fn seed_7_2_serial_log_1547_1015_574_3136() {
    let (f, text) = fixture("seed000-7.2-serial.log");
    let s = serial::parse(&f, &text).unwrap();
    assert_eq!(format_ms(s.pbl_xbl_us().unwrap()), "1547");
    assert_eq!(format_ms(s.core_uefi_us().unwrap()), "1015");
    assert_eq!(format_ms(s.kernel_loader_us().unwrap()), "574");
    assert_eq!(format_ms(s.before_kernel_us().unwrap()), "3136");
    assert_eq!(s.post_time.unwrap().us, 2_562_000);
    // The wrapped `[ 1547]` belongs to the `UEFI Start` line (line 2).
    assert_eq!(s.uefi_start.unwrap().line, 2);
    assert_eq!(s.exit_ebs.unwrap().line, 8);
}

#[test]
fn seed_7_2_systemd_time_and_blame() {
    let (f, text) = fixture("seed000-7.2-systemd-time.txt");
    let t = systemd::parse_time(&f, &text).unwrap();
    assert_eq!(t.kernel_us, Some(4_238_000));
    assert_eq!(t.userspace_us, Some(15_620_000));
    assert_eq!(t.total_us, Some(19_859_000));
    assert_eq!(
        t.target,
        Some(("multi-user.target".to_string(), 15_594_000))
    );
    // The seed prints it as one line; that reads the same.
    let one_line = text.replace('\n', " ");
    assert_eq!(systemd::parse_time(&f, &one_line).unwrap(), t);

    let (f, text) = fixture("seed000-7.2-blame.txt");
    let b = systemd::parse_blame(&f, &text).unwrap();
    assert_eq!(b.len(), 4);
    assert_eq!(b[0].unit, "android-tools-adbd.service");
    assert_eq!(b[0].us, 4_982_000);
    assert_eq!(b[3].unit, "sshdgenkeys.service");
}

fn seed_8_3_table(journal_file: &str, time_file: &str) -> stages::StageTable {
    let (f, text) = fixture("seed000-8.3-serial.log");
    let s = serial::parse(&f, &text).unwrap();
    let (f, text) = fixture(time_file);
    let t = systemd::parse_time(&f, &text).unwrap();
    let m = Markers::default();
    let (f, text) = fixture(journal_file);
    let found = journalctl::find(&f, &text, &[&m.start, &m.end]).unwrap();
    stages::build(Sources {
        serial: Some(&s),
        time: Some(&t),
        journal: Some((found[0].as_ref(), found[1].as_ref())),
        markers: &m,
    })
}

#[test]
fn seed_8_3_stage_example_1_818_1_071_0_580_and_total_11_409() {
    for (journal_file, time_file) in [
        ("seed000-8.3-journal.txt", "seed000-8.3-systemd-time.txt"),
        (
            "seed000-8.3-journal-iso.txt",
            "seed000-8.3-systemd-time-prose.txt",
        ),
    ] {
        let table = seed_8_3_table(journal_file, time_file);
        let s = |stage: &str| format_s(table.get(stage).unwrap_or_else(|| panic!("{stage}")).us);
        assert_eq!(s("PBL+XBL"), "1.818");
        assert_eq!(s("Core UEFI"), "1.071");
        assert_eq!(s("Kernel loader"), "0.580");
        assert_eq!(s("Kernel total"), "3.300");
        assert_eq!(s("Userspace"), "126.300");
        assert_eq!(s("Kernel init"), "1.854");
        assert_eq!(s("Recorder init"), "6.494");
        assert_eq!(s("Recorder init − Kernel init"), "4.640");
        let total = table.total().unwrap();
        assert_eq!(total.stage, "Total until Recorder init");
        assert_eq!(format_s(total.us), "11.409");
        assert_eq!(total.kind, RowKind::Total);
        assert!(table.notes.is_empty(), "{:?}", table.notes);
    }
}

#[test]
fn seed_7_2_alone_totals_before_kernel() {
    let (f, text) = fixture("seed000-7.2-serial.log");
    let s = serial::parse(&f, &text).unwrap();
    let m = Markers::default();
    let table = stages::build(Sources {
        serial: Some(&s),
        time: None,
        journal: None,
        markers: &m,
    });
    let total = table.total().unwrap();
    assert_eq!(total.stage, "Total before kernel");
    assert_eq!(format_ms(total.us), "3136");
    assert_eq!(table.notes.len(), 2, "{:?}", table.notes);
}

#[test]
fn real_workstation_systemd_output() {
    let (f, text) = fixture("real-systemd-time-i9-7960x.txt");
    let t = systemd::parse_time(&f, &text).unwrap();
    assert_eq!(t.firmware_us, Some(53_921_000));
    assert_eq!(t.loader_us, Some(2_643_000));
    assert_eq!(t.kernel_us, Some(2_236_000));
    assert_eq!(t.initrd_us, Some(4_348_000));
    assert_eq!(t.userspace_us, Some(10_082_000));
    assert_eq!(t.total_us, Some(73_233_000));
    assert_eq!(t.target, Some(("graphical.target".to_string(), 10_071_000)));
    // The parts add up to systemd's total, give or take systemd rounding
    // each of the five parts to the millisecond (73.230 vs 73.233 s here).
    let sum: u64 = [
        t.firmware_us,
        t.loader_us,
        t.kernel_us,
        t.initrd_us,
        t.userspace_us,
    ]
    .iter()
    .flatten()
    .sum();
    assert!(t.total_us.unwrap().abs_diff(sum) <= 5_000, "{sum}");

    let (f, text) = fixture("real-blame-i9-7960x.txt");
    let b = systemd::parse_blame(&f, &text).unwrap();
    assert_eq!(b.len(), 12);
    assert_eq!(b[6].unit, "upower.service");
    assert_eq!(b[6].us, 996_000);
    assert_eq!(b[8].unit, "lvm2-pvscan@8:17.service");
}

#[test]
fn marker_file_fixture_and_its_broken_twin() {
    let (f, text) = fixture("qcs6490-recorder-markers.yaml");
    let m = stage_markers::parse(&f, &text).unwrap();
    assert_eq!(m.start, Markers::default().start);
    assert_eq!(m.end, Markers::default().end);
    let (f, text) = fixture("bad-markers.yaml");
    assert_eq!(
        stage_markers::parse(&f, &text).unwrap_err().to_string(),
        "bad-markers.yaml:7:3: unknown key `matches` in `end`; expected one of: name, match"
    );
}

#[test]
fn missing_marker_is_a_note_not_a_number() {
    let (f, text) = fixture("seed000-8.3-journal.txt");
    let m = Markers::default();
    let only_start: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    let found = journalctl::find(&f, &only_start, &[&m.start, &m.end]).unwrap();
    assert!(found[1].is_none());
    let table = stages::build(Sources {
        serial: None,
        time: None,
        journal: Some((found[0].as_ref(), found[1].as_ref())),
        markers: &m,
    });
    assert!(table.total().is_none());
    assert!(table
        .notes
        .iter()
        .any(|n| n.contains("`Recorder init` (`Spectra camera driver initialized`) not found")));
}
