//! Capture leaves tracefs as found: on a fake tracefs tree (top-level
//! fallback, errors midway) and, when root and tracefs are available, on
//! this machine's real tracefs (private instance).

use lever_kernel::KernelFs;
use lever_testkit::FakeTree;
use lever_trace::{for_each_line, Line};
use lever_tracefs::{Capture, CaptureConfig, CaptureError, Target, Tracefs, TracefsState};

const T: &str = "/sys/kernel/tracing";

fn fake() -> FakeTree {
    let tree = FakeTree::new();
    for (node, content) in [
        ("tracing_on", "1\n"),
        ("current_tracer", "nop\n"),
        ("available_tracers", "function nop\n"),
        ("buffer_size_kb", "1408\n"),
        ("set_event", "sched:sched_switch\n"),
        (
            "trace",
            "# tracer: nop\n  a-1 [000] ....  1.000000: sched_switch: x\n",
        ),
        ("events/sched/sched_switch/enable", "1\n"),
        ("events/sched/sched_waking/enable", "0\n"),
        ("events/irq/irq_handler_entry/enable", "0\n"),
        ("events/irq/enable", "0\n"),
    ] {
        tree.node(&format!("{T}/{node}"), content);
    }
    // An instances dir whose mkdir does not populate (not a real tracefs):
    // the capture must fall back to the top level.
    std::fs::create_dir_all(tree.host_path(&format!("{T}/instances"))).unwrap();
    tree
}

#[test]
fn fake_tracefs_top_level_is_restored() {
    let tree = fake();
    let fs = tree.fs();
    let tfs = Tracefs::locate(fs).unwrap();
    let before = TracefsState::read(fs, T).unwrap();
    let cfg = CaptureConfig {
        events: vec!["sched_waking".into(), "irq".into()],
        tracer: Some("function".into()),
        buffer_kb: Some(512),
        top_level: false,
    };
    let cap = Capture::start(&tfs, &cfg).unwrap();
    assert!(matches!(cap.target(), Target::TopLevel(_)));
    assert_eq!(fs.read(&format!("{T}/tracing_on")).unwrap(), "1");
    assert_eq!(fs.read(&format!("{T}/buffer_size_kb")).unwrap(), "512");
    assert_eq!(fs.read(&format!("{T}/current_tracer")).unwrap(), "function");
    assert_eq!(
        fs.read(&format!("{T}/events/sched/sched_waking/enable"))
            .unwrap(),
        "1"
    );
    assert_eq!(fs.read(&format!("{T}/events/irq/enable")).unwrap(), "1");
    // Our instance attempt left nothing behind.
    let out = tree.root().join("out.txt");
    cap.finish(&out).unwrap();
    let after = TracefsState::read(fs, T).unwrap();
    assert_eq!(before, after);
    assert!(fs.read(&format!("{T}/instances")).is_err() || after.instances.is_empty());
}

#[test]
fn fake_tracefs_restored_after_an_error_midway() {
    let tree = fake();
    let fs = tree.fs();
    let tfs = Tracefs::locate(fs).unwrap();
    let before = TracefsState::read(fs, T).unwrap();
    for cfg in [
        CaptureConfig {
            events: vec!["sched_waking".into(), "no_such_event".into()],
            buffer_kb: Some(64),
            ..Default::default()
        },
        CaptureConfig {
            events: vec!["irq".into()],
            tracer: Some("irqsoff".into()),
            ..Default::default()
        },
    ] {
        let err = Capture::start(&tfs, &cfg).unwrap_err();
        assert!(
            matches!(
                err,
                CaptureError::UnknownEvent { .. } | CaptureError::UnknownTracer { .. }
            ),
            "{err}"
        );
        assert_eq!(TracefsState::read(fs, T).unwrap(), before, "after {err}");
    }
}

#[test]
fn fake_tree_without_tracefs_says_why() {
    let tree = FakeTree::new();
    let err = Tracefs::locate_or_mount(tree.fs()).unwrap_err();
    assert!(err.to_string().contains("not available"), "{err}");
}

/// Needs root and tracefs; skips with the reason otherwise.
#[test]
fn real_capture_leaves_tracefs_unchanged() {
    let fs = KernelFs::system();
    let Some(tfs) = Tracefs::locate(&fs) else {
        eprintln!("skipped: tracefs is not mounted at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing as root)");
        return;
    };
    if std::fs::OpenOptions::new()
        .write(true)
        .open(fs.resolve(&tfs.marker_path()).unwrap())
        .is_err()
    {
        eprintln!("skipped: tracefs is not writable here (need root)");
        return;
    }
    let before = TracefsState::read(&fs, tfs.dir()).unwrap();
    let cfg = CaptureConfig {
        events: vec!["sched:sched_switch".into(), "sched:sched_wakeup".into()],
        buffer_kb: Some(256),
        ..Default::default()
    };
    let cap = Capture::start(&tfs, &cfg).unwrap();
    let instance = matches!(cap.target(), Target::Instance(_));
    tfs.mark("B lever-capture-test").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.txt");
    cap.finish(&out).unwrap();
    let after = TracefsState::read(&fs, tfs.dir()).unwrap();
    assert_eq!(before, after, "tracefs changed by the capture");
    let mut switches = 0;
    let s = for_each_line(
        std::fs::File::open(&out).unwrap(),
        |_, l| {
            if let Line::Event(e) = l {
                switches += (e.name == "sched_switch") as u32;
            }
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(s.malformed, 0, "{:?}", s.malformed_samples);
    assert!(
        switches > 0,
        "no sched_switch in 30 ms (instance: {instance})"
    );
}
