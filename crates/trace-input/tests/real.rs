//! Real captures taken on this VM (see tests/fixtures/README.md): one
//! window of hackbench recorded once, saved as the kernel's text
//! (`trace`, before the buffer was consumed) and as a trace.dat by
//! `trace-cmd extract` (v7 zstd), converted by `trace-cmd convert` to v6
//! and to uncompressed v7. The dat and the text must give the same events
//! and the same `--sched` results.

use lever_trace::{EventKind, Line, LineSource, RoundedToMicros};
use lever_trace_analysis::{analyze_source, Options};
use lever_trace_input::{open, Kind};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

const DATS: [(&str, u32); 3] = [("v6.dat.zst", 6), ("v7.dat.zst", 7), ("v7z.dat", 7)];

/// (cpu, µs, pid, name, typed payload or None) of every event.
fn events(src: impl LineSource) -> Vec<(u32, u64, i32, String, Option<String>)> {
    let mut v = Vec::new();
    src.for_each_line(
        |_, l| {
            if let Line::Event(e) = l {
                let kind = (!matches!(e.kind, EventKind::Other)).then(|| format!("{:?}", e.kind));
                v.push((e.cpu, e.ts_ns, e.pid, e.name.to_string(), kind));
            }
        },
        |_| {},
    )
    .unwrap();
    v
}

#[test]
fn every_dat_version_has_the_text_capture_s_events() {
    let text = events(open(&fixture("v7z.txt.zst")).unwrap());
    assert_eq!(text.len(), 9620);
    assert!(
        text.iter().filter(|e| e.4.is_some()).count() > 9000,
        "mostly typed events"
    );
    for (name, version) in DATS {
        let input = open(&fixture(name)).unwrap();
        assert_eq!(input.kind(), Kind::Dat { version }, "{name}");
        let dat = events(RoundedToMicros(input));
        assert_eq!(dat.len(), text.len(), "{name}");
        for (i, (d, t)) in dat.iter().zip(&text).enumerate() {
            assert_eq!(d, t, "{name}: event {i}");
        }
    }
}

#[test]
fn sched_results_are_identical_between_dat_and_text() {
    let opts = Options {
        sched: true,
        ..Options::default()
    };
    let text = analyze_source(open(&fixture("v7z.txt.zst")).unwrap(), &opts, |_| {}).unwrap();
    let text_sched = serde_json::to_value(text.sched.unwrap()).unwrap();
    let threads = text_sched["threads"].as_array().unwrap();
    assert!(threads.len() > 5, "hackbench threads seen");
    for (name, _) in DATS {
        let dat = analyze_source(
            RoundedToMicros(open(&fixture(name)).unwrap()),
            &opts,
            |_| {},
        )
        .unwrap();
        assert_eq!(dat.summary.events, text.summary.events, "{name}");
        assert_eq!(
            serde_json::to_value(dat.sched.unwrap()).unwrap(),
            text_sched,
            "{name}"
        );
    }
}

#[test]
fn dat_times_are_nanoseconds_and_kernel_comms_come_from_saved_cmdlines() {
    let mut first = None;
    let mut hackbench = 0;
    open(&fixture("v6.dat.zst"))
        .unwrap()
        .for_each_line(
            |_, l| {
                if let Line::Event(e) = l {
                    first.get_or_insert(e.ts_ns);
                    hackbench += (e.comm == "hackbench") as u32;
                }
            },
            |_| {},
        )
        .unwrap();
    // text: "9550.367279: sched_wakeup_new" (rounded); the dat keeps the ns.
    assert_eq!(first, Some(9_550_367_278_863));
    assert!(hackbench > 100, "{hackbench}");
}

#[test]
fn trace_cmd_report_text_gives_the_kernel_text_s_sched_results() {
    // `trace-cmd report v6.dat` (plugin formats, padded names, `cpus=2`).
    let opts = Options {
        sched: true,
        ..Options::default()
    };
    let report = open(&fixture("report.txt.zst")).unwrap();
    assert_eq!(report.kind(), Kind::TraceCmdReport);
    let report = analyze_source(report, &opts, |_| {}).unwrap();
    let text = analyze_source(open(&fixture("v7z.txt.zst")).unwrap(), &opts, |_| {}).unwrap();
    assert_eq!(
        report.summary.malformed, 0,
        "{:?}",
        report.summary.malformed_samples
    );
    assert_eq!(report.summary.events, text.summary.events);
    assert_eq!(
        serde_json::to_value(report.sched.unwrap()).unwrap(),
        serde_json::to_value(text.sched.unwrap()).unwrap()
    );
}
