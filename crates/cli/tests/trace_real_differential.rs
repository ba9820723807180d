//! On the real tracefs (root; skips with the reason otherwise), issue 29:
//! - one window captured once and saved as the kernel's text and as a
//!   trace.dat gives the same report from every analysis (the dat's ns
//!   rounded to the text's µs);
//! - `lever trace record` into a buffer too small for the window saves
//!   the ring buffer's per-CPU overrun with the trace (text and dat), and
//!   `analyze` shows it.

mod common;

use lever_kernel::KernelFs;
use lever_trace::{LineSource, RoundedToMicros};
use lever_trace_analysis::{analyze_source, Options};
use lever_tracefs::{Capture, CaptureConfig, Tracefs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One capture at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Root with a writable tracefs, or a printed reason and `None`.
fn tracefs() -> Option<(KernelFs, Tracefs)> {
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
    Some((fs, tfs))
}

/// Two threads passing a token `n` times: wake-ups and switches.
fn ping_pong(n: u32) {
    let (tx1, rx1) = mpsc::channel::<u32>();
    let (tx2, rx2) = mpsc::channel::<u32>();
    let t = std::thread::spawn(move || {
        while let Ok(n) = rx1.recv() {
            if n == 0 || tx2.send(n - 1).is_err() {
                break;
            }
        }
    });
    tx1.send(n).unwrap();
    while let Ok(n) = rx2.recv() {
        if n == 0 || tx1.send(n - 1).is_err() {
            break;
        }
    }
    drop(tx1);
    t.join().unwrap();
}

/// Every analysis' report, with the reader's event and loss counts (not
/// its byte and line counts, which differ between the formats).
fn report(src: impl LineSource, tid: i32) -> serde_json::Value {
    let r = analyze_source(src, &Options::every_analysis(tid), |_| {}).unwrap();
    assert_eq!(r.summary.malformed, 0, "{:?}", r.summary.malformed_samples);
    let mut v = serde_json::to_value(&r).unwrap();
    let s = v["summary"].take();
    v["events"] = s["events"].clone();
    v["lost_events"] = s["lost_events"].clone();
    v
}

#[test]
fn one_real_window_as_text_and_dat_gives_every_analysis_alike() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((fs, tfs)) = tracefs() else { return };
    let available = |ev: &str| {
        fs.exists(&format!("{}/events/{ev}", tfs.dir()))
            .then(|| ev.to_string())
    };
    let events: Vec<String> = [
        "sched/sched_switch",
        "sched/sched_waking",
        "sched/sched_wakeup",
        "sched/sched_wakeup_new",
        "sched/sched_migrate_task",
        "irq/irq_handler_entry",
        "irq/irq_handler_exit",
        "irq/softirq_entry",
        "irq/softirq_exit",
        "power/cpu_idle",
        "power/cpu_frequency",
    ]
    .iter()
    .filter_map(|e| available(e))
    .collect();
    let cfg = CaptureConfig {
        events,
        buffer_kb: Some(2048),
        ..Default::default()
    };
    let cap = Capture::start(&tfs, &cfg).unwrap();
    ping_pong(3000);
    std::thread::sleep(Duration::from_millis(30));
    cap.pause().unwrap();
    let text = std::fs::read(fs.resolve(&format!("{}/trace", cap.dir())).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dat = dir.path().join("t.dat");
    cap.finish_dat(&dat).unwrap();
    // The thread woken most: its critical path is compared too.
    let first = report(lever_trace::Text(&text[..]), 0);
    let tid = first["wakeups"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|e| e["count"].as_u64())
        .map_or(0, |e| e["wakee_tid"].as_i64().unwrap() as i32);
    let want = report(lever_trace::Text(&text[..]), tid);
    assert!(
        want["events"].as_u64().unwrap() > 1000,
        "{}",
        want["events"]
    );
    let got = report(RoundedToMicros(lever_trace_input::open(&dat).unwrap()), tid);
    for (k, w) in want.as_object().unwrap() {
        assert_eq!(&got[k], w, "{k}");
    }
}

/// `lever trace record` with an 8 KiB buffer for 1 s of ping-pong: the
/// buffer wraps; the overrun is saved and shown, as text and as dat.
#[test]
fn overwritten_events_are_saved_with_the_trace_and_shown() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if tracefs().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [("t.txt", None), ("t.dat", Some("--no-stream"))] {
        let out = dir.path().join(name);
        let out_s = out.to_str().unwrap().to_string();
        let rec = std::thread::spawn(move || {
            let mut args = vec![
                "trace",
                "record",
                "-e",
                "sched",
                "--buffer-kb",
                "8",
                "--duration",
                "1s",
                "-o",
                &out_s,
            ];
            args.extend(extra);
            common::ok(&args)
        });
        let t = Instant::now();
        while !rec.is_finished() && t.elapsed() < Duration::from_secs(20) {
            ping_pong(500);
        }
        rec.join().unwrap();
        let json = common::ok(&[
            "trace",
            "analyze",
            "--sched",
            "--json",
            out.to_str().unwrap(),
        ]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let n = v["summary"]["overwritten_events"].as_u64().unwrap_or(0);
        assert!(n > 0, "{name}: {}", v["summary"]);
        let shown = common::ok(&["trace", "analyze", "--sched", out.to_str().unwrap()]);
        assert!(
            shown.contains(&format!("overwritten events: {n} ")),
            "{name}: {shown}"
        );
    }
}
