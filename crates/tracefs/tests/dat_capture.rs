//! `Capture::finish_dat` on the real tracefs (root only; skips with the
//! reason otherwise): the trace.dat holds the same events as the kernel's
//! text of the same window, and `trace-cmd report` opens it (required
//! under CI, where trace-cmd is installed).

use lever_kernel::KernelFs;
use lever_trace::{Event, EventKind, Line, LineSource};
use lever_tracefs::{Capture, CaptureConfig, Tracefs};
use std::sync::mpsc;

/// (cpu, µs, pid, name, typed payload) per event; dat times rounded to
/// µs as the kernel's text prints them.
fn events(src: impl LineSource, round: bool) -> Vec<(u32, u64, i32, String, String)> {
    let mut v = Vec::new();
    src.for_each_line(
        |_, l| {
            if let Line::Event(Event {
                cpu,
                ts_ns,
                pid,
                name,
                kind,
                ..
            }) = l
            {
                let ts = if round {
                    (ts_ns + 500) / 1000
                } else {
                    ts_ns / 1000
                };
                let k = match kind {
                    EventKind::Other => String::new(),
                    k => format!("{k:?}"),
                };
                v.push((*cpu, ts, *pid, name.to_string(), k));
            }
        },
        |_| {},
    )
    .unwrap();
    v
}

#[test]
fn dat_capture_matches_the_text_of_the_same_window() {
    let fs = KernelFs::system();
    let Some(tfs) = Tracefs::locate(&fs) else {
        eprintln!("skipped: tracefs is not mounted at /sys/kernel/tracing");
        return;
    };
    let marker = fs.resolve(&tfs.marker_path()).unwrap();
    if std::fs::OpenOptions::new()
        .write(true)
        .open(marker)
        .is_err()
    {
        eprintln!("skipped: tracefs is not writable here (need root)");
        return;
    }
    let cfg = CaptureConfig {
        events: [
            "sched:sched_switch",
            "sched:sched_waking",
            "sched:sched_wakeup",
        ]
        .map(String::from)
        .to_vec(),
        buffer_kb: Some(1024),
        ..Default::default()
    };
    let cap = Capture::start(&tfs, &cfg).unwrap();
    tfs.mark("B lever-dat-test").unwrap();
    // Two threads passing a token: wake-ups and switches on every CPU.
    let (tx1, rx1) = mpsc::channel::<u32>();
    let (tx2, rx2) = mpsc::channel::<u32>();
    let t = std::thread::spawn(move || {
        while let Ok(n) = rx1.recv() {
            if n == 0 || tx2.send(n - 1).is_err() {
                break;
            }
        }
    });
    tx1.send(2000).unwrap();
    while let Ok(n) = rx2.recv() {
        if n == 0 || tx1.send(n - 1).is_err() {
            break;
        }
    }
    drop(tx1);
    t.join().unwrap();
    cap.pause().unwrap();
    let text_path = fs.resolve(&format!("{}/trace", cap.dir())).unwrap();
    let text = std::fs::read(text_path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.dat");
    let bytes = cap.finish_dat(&out).unwrap();
    assert_eq!(bytes, std::fs::metadata(&out).unwrap().len());

    let from_text = events(lever_trace::Text(&text[..]), false);
    let input = lever_trace_input::open(&out).unwrap();
    assert_eq!(input.kind(), lever_trace_input::Kind::Dat { version: 6 });
    let from_dat = events(input, true);
    assert!(from_text.len() > 100, "only {} events", from_text.len());
    assert_eq!(from_dat.len(), from_text.len());
    for (i, (d, t)) in from_dat.iter().zip(&from_text).enumerate() {
        assert_eq!(d, t, "event {i}");
    }
    assert!(
        from_dat.iter().any(|e| e.4.contains("lever-dat-test")),
        "the marker"
    );

    match std::process::Command::new("trace-cmd")
        .arg("report")
        .arg(&out)
        .output()
    {
        Ok(o) => {
            assert!(
                o.status.success(),
                "trace-cmd report: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let report = String::from_utf8_lossy(&o.stdout);
            // One line per event after the "cpus=N" header.
            let lines = report
                .lines()
                .filter(|l| l.contains(": ") && !l.starts_with("cpus="))
                .count();
            assert_eq!(lines, from_dat.len(), "trace-cmd report's events");
        }
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("trace-cmd is needed under CI (.ci/run installs it): {e}")
        }
        Err(e) => eprintln!("trace-cmd report not checked: {e}"),
    }
}
