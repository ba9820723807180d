//! A marker written right after the capture started (and, streamed,
//! right after the page readers started) is in the saved file, every
//! time: many captures in a row on the real tracefs, each in a private
//! instance (root only; skips with the reason otherwise).
//! `LEVER_MARKER_ROUNDS` sets the rounds (default 6).

use lever_kernel::KernelFs;
use lever_trace::{Line, LineSource};
use lever_tracefs::{Capture, CaptureConfig, DatVersion, Tracefs};

fn tracefs() -> Option<Tracefs> {
    let fs = KernelFs::system();
    let Some(tfs) = Tracefs::locate(&fs) else {
        eprintln!("skipped: tracefs is not mounted at /sys/kernel/tracing");
        return None;
    };
    let marker = fs.resolve(&tfs.marker_path()).unwrap();
    if std::fs::OpenOptions::new()
        .write(true)
        .open(marker)
        .is_err()
    {
        eprintln!("skipped: tracefs is not writable here (need root)");
        return None;
    }
    Some(tfs)
}

/// The marker texts in a saved capture.
fn markers(src: impl LineSource) -> Vec<String> {
    let mut v = Vec::new();
    src.for_each_line(
        |_, l| {
            if let Line::Event(e) = l {
                if e.name == "tracing_mark_write" || e.name == "print" {
                    v.push(e.body.trim().to_string());
                }
            }
        },
        |_| {},
    )
    .unwrap();
    v
}

fn rounds() -> usize {
    std::env::var("LEVER_MARKER_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6)
}

fn cfg() -> CaptureConfig {
    CaptureConfig {
        events: vec!["sched:sched_switch".into()],
        buffer_kb: Some(512),
        ..Default::default()
    }
}

#[test]
fn a_marker_right_after_start_is_always_saved() {
    let Some(tfs) = tracefs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut missing = Vec::new();
    for round in 0..rounds() {
        for mode in ["text", "dat", "streamed"] {
            let text = format!("lever-mark-{mode}-{round}");
            let out = dir.path().join(format!("{mode}-{round}"));
            let cap = Capture::start(&tfs, &cfg()).unwrap();
            let rec = (mode == "streamed").then(|| cap.stream_raw(&out).unwrap());
            cap.mark(&text).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            let found = match rec {
                Some(rec) => {
                    cap.finish_streamed_as(rec, &out, DatVersion::V6).unwrap();
                    markers(lever_trace_input::open(&out).unwrap())
                }
                None if mode == "dat" => {
                    cap.finish_dat(&out).unwrap();
                    markers(lever_trace_input::open(&out).unwrap())
                }
                None => {
                    cap.finish(&out).unwrap();
                    markers(lever_trace::Text(std::fs::File::open(&out).unwrap()))
                }
            };
            if !found.iter().any(|m| m == &text) {
                missing.push(format!("{text}: saved markers {found:?}"));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
