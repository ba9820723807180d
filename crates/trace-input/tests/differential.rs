//! One contract for text and binary: every analysis, run on the same
//! capture read as the kernel's text and as a trace.dat (v6, v7, v7/zstd;
//! see tests/fixtures/README.md), gives the same report. The dat's ns are
//! rounded to the text's µs first; nothing else is adjusted.
//!
//! The capture holds wake-ups from hard-irq context (`dNh2.`): the dat's
//! `common_flags` must name the same wakers as the text's flags column.

use lever_trace::{Line, LineSource, RoundedToMicros};
use lever_trace_analysis::{analyze_source, Options};
use lever_trace_input::open;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The report without the reader's own counts (bytes and lines differ
/// between a text and a binary file by nature).
fn report<S: LineSource>(src: S, tid: i32) -> serde_json::Value {
    let r = analyze_source(src, &Options::every_analysis(tid), |_| {}).unwrap();
    assert_eq!(r.summary.malformed, 0, "{:?}", r.summary.malformed_samples);
    let mut v = serde_json::to_value(&r).unwrap();
    let s = v["summary"].take();
    v["events"] = s["events"].clone();
    v["lost_events"] = s["lost_events"].clone();
    v
}

/// The irq-flags column of every event, in order.
fn flags<S: LineSource>(src: S) -> Vec<Option<String>> {
    let mut v = Vec::new();
    src.for_each_line(
        |_, l| {
            if let Line::Event(e) = l {
                v.push(e.flags.map(str::to_string));
            }
        },
        |_| {},
    )
    .unwrap();
    v
}

#[test]
fn every_analysis_gives_the_same_report_from_text_and_dat() {
    let text = open(&fixture("v7z.txt.zst")).unwrap();
    // A thread woken from irq context: its critical path names the irq.
    let woken = report(open(&fixture("v7z.txt.zst")).unwrap(), 0);
    let edges = woken["wakeups"]["edges"].as_array().unwrap();
    let by_irq = edges
        .iter()
        .find(|e| e["waker"] == "hard_irq" || e["waker"] == "softirq")
        .unwrap_or_else(|| panic!("the capture has irq wakers: {edges:?}"));
    let tid = by_irq["wakee_tid"].as_i64().unwrap() as i32;
    let want = report(text, tid);
    for name in ["v6.dat.zst", "v7.dat.zst", "v7z.dat"] {
        let got = report(RoundedToMicros(open(&fixture(name)).unwrap()), tid);
        for (k, w) in want.as_object().unwrap() {
            assert_eq!(&got[k], w, "{name}: {k}");
        }
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn the_dat_s_irq_flags_are_the_text_s_column() {
    let text = flags(open(&fixture("v7z.txt.zst")).unwrap());
    assert_eq!(text.len(), 9620);
    for name in ["v6.dat.zst", "v7z.dat"] {
        let dat = flags(open(&fixture(name)).unwrap());
        assert_eq!(dat.len(), text.len(), "{name}");
        for (i, (d, t)) in dat.iter().zip(&text).enumerate() {
            assert_eq!(d, t, "{name}: event {i}");
        }
    }
}
