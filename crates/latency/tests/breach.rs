//! Breach analysis on a real capture (fixtures/README.md): a SCHED_FIFO 60
//! hog on the measuring thread's CPU must be named as the cause, and the
//! analysis is kept as a golden file.
use lever_latency::breach::{analyze, PartKind, Wakeup};
use lever_testkit::{fixture_path, golden};

const TRACE: &str = "breach-fifo-hog-6.18.trace";

#[test]
fn real_fifo_hog_is_named_as_the_cause() {
    let path = fixture_path(env!("CARGO_MANIFEST_DIR"), TRACE);
    let text = std::fs::read_to_string(&path).unwrap();
    let w = Wakeup::find_in(text.as_bytes())
        .unwrap()
        .expect("a breach marker");
    assert_eq!((w.thread, w.cpu, w.tid), (0, 1, 2815));
    assert_eq!(w.latency_us(), 94_454);
    let a = analyze(text.as_bytes(), &w).unwrap();
    // The parts cover the window exactly.
    assert_eq!(
        a.parts.iter().map(|p| p.duration_ns).sum::<u64>(),
        a.window_ns
    );
    let cause = a.cause().unwrap();
    assert_eq!(cause.kind, PartKind::HigherPriorityTask);
    // `sh` after its exec from chrt/taskset: named by its latest comm.
    assert_eq!(
        (cause.name.as_str(), cause.pid, cause.prio),
        ("sh:2832", Some(2832), Some(39))
    );
    assert!(cause.share_pct > 99.0, "{cause:?}");
    assert_eq!(a.thread_prio, Some(49));
    // Checked against the raw trace: the switch back to the measuring
    // thread comes from the hog, and the waking from hrtimer_wakeup.
    let switch_in = text
        .lines()
        .find(|l| l.contains("==> next_comm=lever-lat-0 next_pid=2815") && l.contains("9354.20"))
        .unwrap();
    assert!(
        switch_in.contains("prev_pid=2832 prev_prio=39"),
        "{switch_in}"
    );
    assert!(text.contains("function=hrtimer_wakeup now=9354108160"));
    let json = serde_json::to_string_pretty(&a).unwrap() + "\n";
    golden(
        &fixture_path(
            env!("CARGO_MANIFEST_DIR"),
            "breach-fifo-hog-6.18.analysis.json",
        ),
        &json,
    );
}

#[test]
fn one_pass_for_many_windows_gives_each_its_own_analysis() {
    let hog = fixture_path(env!("CARGO_MANIFEST_DIR"), TRACE);
    let text = std::fs::read_to_string(&hog).unwrap();
    let w = Wakeup::find_in(text.as_bytes()).unwrap().unwrap();
    // The breach's window twice, and a 100 µs window 2 ms before it on
    // the same CPU, all in one pass.
    let earlier = Wakeup {
        deadline_ns: w.deadline_ns - 2_000_000,
        woke_ns: w.deadline_ns - 1_900_000,
        ..w
    };
    let all = lever_latency::breach::analyze_all(text.as_bytes(), &[w, earlier, w]).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0], analyze(text.as_bytes(), &w).unwrap());
    assert_eq!(all[1], analyze(text.as_bytes(), &earlier).unwrap());
    assert_eq!(all[0], all[2]);
    assert_ne!(all[0], all[1]);
}

#[test]
fn other_cpus_events_do_not_count() {
    let path = fixture_path(env!("CARGO_MANIFEST_DIR"), TRACE);
    let text = std::fs::read_to_string(&path).unwrap();
    let w = Wakeup::find_in(text.as_bytes()).unwrap().unwrap();
    let only_cpu1: String = text
        .lines()
        .filter(|l| !l.contains("[000]"))
        .map(|l| format!("{l}\n"))
        .collect();
    let a = analyze(text.as_bytes(), &w).unwrap();
    let b = analyze(only_cpu1.as_bytes(), &w).unwrap();
    assert_eq!(a, b);
}

#[test]
fn real_non_preemptible_section_is_named_with_its_preempt_depth() {
    let path = fixture_path(
        env!("CARGO_MANIFEST_DIR"),
        "breach-nonpreemptible-6.18.trace",
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let w = Wakeup::find_in(text.as_bytes()).unwrap().unwrap();
    assert_eq!((w.cpu, w.tid, w.latency_us()), (1, 32669, 2716));
    let a = analyze(text.as_bytes(), &w).unwrap();
    assert_eq!(
        a.parts.iter().map(|p| p.duration_ns).sum::<u64>(),
        a.window_ns
    );
    let cause = a.cause().unwrap();
    assert_eq!(cause.kind, PartKind::NonPreemptibleTask);
    assert_eq!(
        (cause.name.as_str(), cause.prio),
        ("rust-lld:32543", Some(120))
    );
    assert!(cause.share_pct > 95.0, "{cause:?}");
    // Raw trace: `rust-lld-32543 [001] d.h2. 9321.188740: local_timer_entry`.
    assert_eq!(a.timer_irq_flags.as_deref(), Some("d.h2."));
    assert_eq!(a.preempt_depth_at_timer(), Some(2));
    golden(
        &fixture_path(
            env!("CARGO_MANIFEST_DIR"),
            "breach-nonpreemptible-6.18.analysis.json",
        ),
        &(serde_json::to_string_pretty(&a).unwrap() + "\n"),
    );
}
