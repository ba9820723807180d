//! Mutations of a real trace.dat (the seed capture, embedded) run every
//! analysis to the end: no panic, no abort (run.sh caps each allocation
//! at 512 MB, so one sized by a damaged field is a crash), and a bounded
//! time per input (a damaged CPU number once made every wake-up scan
//! 655k CPUs, issue 29). The input is a list of edits: 5 bytes each, a
//! little-endian u32 offset into the capture's pages and a byte; an edit
//! whose byte is 0xff writes a whole 4-byte word from the next 4 bytes
//! (a CPU number, a pid or a length becoming anything).
//! `crates/trace-input/tests/fuzz.rs` runs the same property as a test.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::time::{Duration, Instant};

const SEED: &[u8] = include_bytes!("../seeds/trace_dat/sched_v6.dat");
/// Far above the ~10 ms a walk of the seed takes, even under ASan.
const LIMIT: Duration = Duration::from_secs(2);

fn every_analysis() -> lever_trace_analysis::Options {
    lever_trace_analysis::Options {
        wakeups: true,
        locks: true,
        ramp: true,
        critical_path: Some(lever_trace_analysis::critical::CriticalPathSpec {
            tid: 1,
            from_ns: None,
            to_ns: None,
        }),
        ..lever_trace_analysis::Options::all()
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = SEED.to_vec();
    let mut edits = data;
    while edits.len() >= 5 {
        let at = u32::from_le_bytes([edits[0], edits[1], edits[2], edits[3]]) as usize % b.len();
        if edits[4] == 0xff && edits.len() >= 9 {
            let at = at.min(b.len() - 4) & !3;
            b[at..at + 4].copy_from_slice(&edits[5..9]);
            edits = &edits[9..];
        } else {
            b[at] = edits[4];
            edits = &edits[5..];
        }
    }
    let t = Instant::now();
    if let Ok(input) = lever_trace_input::from_reader(std::io::Cursor::new(b), "fuzz") {
        let _ = lever_trace_analysis::analyze_source(input, &every_analysis(), |_| {});
    }
    assert!(t.elapsed() < LIMIT, "{:?} for one input", t.elapsed());
});
