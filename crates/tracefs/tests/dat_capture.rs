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
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((fs, tfs)) = tracefs() else { return };
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
    let marked = mark(&cap, "B lever-dat-test");
    ping_pong();
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
    // The marker, when the kernel kept it, is one of the equal events.
    let _ = marked;
    trace_cmd_agrees(&out, from_dat.len());
    trace_cmd_converts(&out, from_dat.len());
}

/// The same as v7, uncompressed and zstd: the events of the kernel's
/// text, and `trace-cmd report` opens both.
#[test]
fn dat_v7_capture_matches_the_text_and_opens_in_trace_cmd() {
    use lever_tracefs::DatVersion;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((fs, tfs)) = tracefs() else { return };
    for zstd in [false, true] {
        let cfg = CaptureConfig {
            events: vec!["sched:sched_switch".into(), "sched:sched_wakeup".into()],
            buffer_kb: Some(1024),
            ..Default::default()
        };
        let cap = Capture::start(&tfs, &cfg).unwrap();
        ping_pong();
        cap.pause().unwrap();
        let text_path = fs.resolve(&format!("{}/trace", cap.dir())).unwrap();
        let text = std::fs::read(text_path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t7.dat");
        let bytes = cap.finish_dat_as(&out, DatVersion::V7 { zstd }).unwrap();
        assert_eq!(bytes, std::fs::metadata(&out).unwrap().len());
        let from_text = events(lever_trace::Text(&text[..]), false);
        let input = lever_trace_input::open(&out).unwrap();
        assert_eq!(input.kind(), lever_trace_input::Kind::Dat { version: 7 });
        let from_dat = events(input, true);
        assert!(from_text.len() > 100, "only {} events", from_text.len());
        assert_eq!(from_dat, from_text, "zstd {zstd}");
        trace_cmd_agrees(&out, from_dat.len());
    }
}

/// Pages read while recording (`Capture::stream_raw`): the spools are
/// gone, the events are in time order, trace-cmd agrees.
#[test]
fn streamed_dat_capture_opens_in_trace_cmd() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((_, tfs)) = tracefs() else { return };
    let cfg = CaptureConfig {
        events: vec!["sched:sched_switch".into(), "sched:sched_wakeup".into()],
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.dat");
    let cap = Capture::start(&tfs, &cfg).unwrap();
    let rec = cap.stream_raw(&out).unwrap();
    ping_pong();
    std::thread::sleep(std::time::Duration::from_millis(120));
    ping_pong();
    cap.finish_streamed(rec, &out).unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["s.dat"], "spool files removed");
    let evs = events(lever_trace_input::open(&out).unwrap(), true);
    assert!(evs.len() > 100, "only {} events", evs.len());
    assert!(evs.windows(2).all(|w| w[0].1 <= w[1].1), "time order");
    trace_cmd_agrees(&out, evs.len());
}

/// Write a marker into the capture's own instance; true when the write
/// succeeded. On this shared VM a write sometimes fails with EBADF (the
/// kernel's "ring buffer disabled") or succeeds and is in neither the text
/// nor the pages, while other sessions create and remove instances: the
/// marker is no assertion of its own.
fn mark(cap: &Capture, text: &str) -> bool {
    let path = KernelFs::system()
        .resolve(&format!("{}/trace_marker", cap.dir()))
        .unwrap();
    match std::fs::write(path, text) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("marker not written ({e}); not checked");
            false
        }
    }
}

/// One capture at a time (the two tests' instances do not race).
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

/// `trace-cmd report` opens `dat` and prints `n` events (required under
/// CI, where .ci/run installs trace-cmd).
fn trace_cmd_agrees(dat: &std::path::Path, n: usize) {
    match std::process::Command::new("trace-cmd")
        .arg("report")
        .arg(dat)
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
            assert_eq!(lines, n, "trace-cmd report's events");
        }
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("trace-cmd is needed under CI (.ci/run installs it): {e}")
        }
        Err(e) => eprintln!("trace-cmd report not checked: {e}"),
    }
}

/// `trace-cmd convert` (to its default v7, zstd) accepts `dat` — it
/// refused a v6 file without an options section ("error writing") — and
/// the converted file holds the same `n` events for our reader.
fn trace_cmd_converts(dat: &std::path::Path, n: usize) {
    let out = dat.with_extension("converted.dat");
    match std::process::Command::new("trace-cmd")
        .args(["convert", "-i"])
        .arg(dat)
        .arg("-o")
        .arg(&out)
        .output()
    {
        Ok(o) => {
            assert!(
                o.status.success() && out.exists(),
                "trace-cmd convert: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let evs = events(lever_trace_input::open(&out).unwrap(), true);
            assert_eq!(evs.len(), n, "events after trace-cmd convert");
        }
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("trace-cmd is needed under CI (.ci/run installs it): {e}")
        }
        Err(e) => eprintln!("trace-cmd convert not checked: {e}"),
    }
}

/// Two threads passing a token 2000 times: wake-ups and switches.
fn ping_pong() {
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

/// The marker test's capture: an event the machine's other work does not
/// produce. The ring buffer overwrites its oldest events when full, and
/// the marker is the oldest thing in it: with `sched_switch` on, any
/// process switching fast (a benchmark, a build, another test binary)
/// filled the 512 KB per CPU between the mark and the pause — the longer
/// the test thread waited for a CPU, the surer — and the marker was
/// overwritten (issue 27: 1 of 3 full runs). That is the ring buffer
/// doing its job, not a lost marker.
fn marker_cfg() -> CaptureConfig {
    CaptureConfig {
        events: vec!["sched:sched_process_exec".into()],
        buffer_kb: Some(512),
        ..Default::default()
    }
}

/// Threads switching as fast as they can until dropped: the load under
/// which a capture of `sched_switch` wraps its buffer in milliseconds.
struct SwitchStorm {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl SwitchStorm {
    fn start() -> SwitchStorm {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        ping_pong();
                    }
                })
            })
            .collect();
        SwitchStorm { stop, threads }
    }
}

impl Drop for SwitchStorm {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A marker written right after the capture started (and, streamed,
/// right after the page readers started) is in the saved file, every
/// time: many captures in a row, each in a private instance, while
/// threads of this test switch context as fast as they can (what other
/// processes did when this test was flaky). `LEVER_MARKER_ROUNDS` sets
/// the rounds (default 6).
#[test]
fn a_marker_right_after_start_is_always_saved() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((_, tfs)) = tracefs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let _storm = SwitchStorm::start();
    let mut missing = Vec::new();
    for round in 0..rounds() {
        for mode in ["text", "dat", "streamed"] {
            let text = format!("lever-mark-{mode}-{round}");
            let out = dir.path().join(format!("{mode}-{round}"));
            let cap = Capture::start(&tfs, &marker_cfg()).unwrap();
            let rec = (mode == "streamed").then(|| cap.stream_raw(&out).unwrap());
            cap.mark(&text).unwrap();
            // Long enough for the storm to wrap a 512 KB buffer of
            // sched_switch events many times over.
            std::thread::sleep(std::time::Duration::from_millis(100));
            let found = match rec {
                Some(rec) => {
                    cap.finish_streamed_as(rec, &out, lever_tracefs::DatVersion::V6)
                        .unwrap();
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
