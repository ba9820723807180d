//! Causes on real excerpts, checked by hand against the raw lines.

use lever_trace_analysis::critical::{CriticalPath, CriticalPathSpec, IrqSource};
use lever_trace_analysis::{analyze, Options};

fn fixture(name: &str) -> std::path::PathBuf {
    lever_testkit::fixture_path(env!("CARGO_MANIFEST_DIR"), name)
}

fn critical(trace: &[u8], tid: i32, from_ns: Option<u64>, to_ns: Option<u64>) -> CriticalPath {
    let opts = Options {
        critical_path: Some(CriticalPathSpec {
            tid,
            from_ns,
            to_ns,
        }),
        ..Options::default()
    };
    analyze(trace, &opts, |_| {})
        .unwrap()
        .critical_path
        .unwrap()
}

/// (during, source, µs, count) of each interrupt item, largest first.
fn items(cp: &CriticalPath) -> Vec<(&'static str, IrqSource, u64, u64)> {
    cp.cpu_interrupts
        .iter()
        .map(|i| (i.during, i.source, i.ns / 1000, i.count))
        .collect()
}

/// A real `-e sched -e irq` capture of this VM (`perf bench sched pipe`
/// starting while `dd oflag=direct` writes to the virtio disk): perf-8756
/// on CPU 1. By hand from the raw lines:
/// - waiting for CPU 1 after the BLOCK softirq woke it (.218142 →
///   switch-in .218219): BLOCK .218141–.218147 overlaps 5 µs, NET_RX
///   .218168–.218187 19 µs;
/// - running .218219–.218297: irq 36 .218245–.218247 (2 µs), BLOCK
///   .218247–.218252 (5 µs);
/// - preempted by sh-8755 .218297–.218303 (6 µs), then running to
///   .219130: irq 36 .218498–.218500 (2 µs), BLOCK .218500–.218507
///   (7 µs), RCU .218632–.218636 (4 µs).
///
/// Not counted: irq 36 at .218138 (8756 blocked) and RCU on CPU 0 at
/// .218637 (another CPU).
#[test]
fn critical_path_breaks_out_irq_and_softirq_time() {
    let trace = std::fs::read(fixture("irq_critical_path.txt")).unwrap();
    let cp = critical(&trace, 8756, None, None);
    assert_eq!(
        items(&cp),
        [
            ("runnable", IrqSource::Softirq(3), 19, 1),
            ("running", IrqSource::Softirq(4), 12, 2),
            ("runnable", IrqSource::Softirq(4), 5, 1),
            ("running", IrqSource::Irq(36), 4, 2),
            ("running", IrqSource::Softirq(9), 4, 1),
        ]
    );
    let names: Vec<&str> = cp.cpu_interrupts.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["NET_RX", "BLOCK", "BLOCK", "virtio1-req.0", "RCU"]);
    // .217760 (first event) → .219130: 1370 µs.
    assert_eq!(cp.to_ns - cp.from_ns, 1_370_000);
    let net_rx = &cp.cpu_interrupts[0];
    assert!((net_rx.share_pct - 100.0 * 19.0 / 1370.0).abs() < 1e-9);
    let pre = cp
        .root
        .parts
        .iter()
        .find(|p| p.state == "preempted")
        .unwrap();
    assert_eq!((pre.ns, pre.cause_comm.as_deref()), (6_000, Some("sh")));
    assert!((pre.share_pct - 100.0 * 6.0 / 1370.0).abs() < 1e-9);
    let shares: f64 = cp.root.parts.iter().map(|p| p.share_pct).sum();
    let unknown = 100.0 * cp.root.unknown_ns as f64 / 1_370_000.0;
    assert!(
        (shares + unknown - 100.0).abs() < 1e-6,
        "{shares} + {unknown}"
    );
}

/// `--from/--to` clip the interrupt pieces too: .218240–.218250 holds
/// irq 36 (2 µs) and the first 3 µs of the BLOCK softirq.
#[test]
fn critical_path_interrupts_are_clipped_to_the_interval() {
    let trace = std::fs::read(fixture("irq_critical_path.txt")).unwrap();
    let s = |us: u64| Some(18_737_000_000_000 + us * 1000);
    let cp = critical(&trace, 8756, s(218_240), s(218_250));
    assert_eq!(
        items(&cp),
        [
            ("running", IrqSource::Softirq(4), 3, 1),
            ("running", IrqSource::Irq(36), 2, 1),
        ]
    );
}

/// A hard irq inside a softirq pauses it: nested time counts once, for
/// the hard irq; a migration moves the runnable task to the CPU whose
/// interrupts then count. Lines in the kernel's format.
#[test]
fn nested_irq_counts_once_and_migration_moves_the_cpu() {
    let trace = b"\
       a-7     [000] d..2.   1.000000: sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=b next_pid=8 next_prio=120
       b-8     [000] ..s1.   1.000010: softirq_entry: vec=1 [action=TIMER]
       b-8     [000] d.s2.   1.000012: sched_waking: comm=a pid=7 prio=120 target_cpu=000
       b-8     [000] d.H1.   1.000014: irq_handler_entry: irq=11 name=eth0
       b-8     [000] d.H1.   1.000017: irq_handler_exit: irq=11 ret=handled
       b-8     [000] ..s1.   1.000020: softirq_exit: vec=1 [action=TIMER]
       c-9     [001] ..s1.   1.000021: softirq_entry: vec=3 [action=NET_RX]
       b-8     [000] d..2.   1.000022: sched_migrate_task: comm=a pid=7 prio=120 orig_cpu=0 dest_cpu=1
       c-9     [001] ..s1.   1.000030: softirq_exit: vec=3 [action=NET_RX]
       c-9     [001] d..2.   1.000040: sched_switch: prev_comm=c prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=a next_pid=7 next_prio=120
       b-8     [000] d.h1.   1.000041: irq_handler_entry: irq=11 name=eth0
       b-8     [000] d.h1.   1.000045: irq_handler_exit: irq=11 ret=handled
       a-7     [001] d..2.   1.000050: sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=c next_pid=9 next_prio=120
";
    let cp = critical(trace, 7, None, None);
    // Runnable from the waking at .000012: on CPU 0 the TIMER softirq
    // .000012–.000014 and .000017–.000020 (5 µs, two pieces) and irq 11
    // .000014–.000017 (3 µs); after the migration at .000022, NET_RX on
    // CPU 1 .000022–.000030 (8 µs). irq 11 at .000041 is on CPU 0 while
    // 7 runs on CPU 1: not counted.
    assert_eq!(
        items(&cp),
        [
            ("runnable", IrqSource::Softirq(3), 8, 1),
            ("runnable", IrqSource::Softirq(1), 5, 2),
            ("runnable", IrqSource::Irq(11), 3, 1),
        ]
    );
}

fn ramp_of(name: &str) -> lever_trace_analysis::ramp::RampReport {
    let opts = Options {
        ramp: true,
        ..Options::default()
    };
    let f = std::fs::File::open(fixture(name)).unwrap();
    analyze(f, &opts, |_| {}).unwrap().ramp.unwrap()
}

/// Hand-written excerpts in the kernel's `cpu_frequency: state=… cpu_id=…`
/// format (this VM has no cpufreq). Baseline: hackbench's steps at
/// 100.010 and 100.050 reach 1.8 GHz after 12 and 16 ms. With `uclamp
/// min=512 comm=hackbench` marked: its steps reach it after 2 and 3 ms;
/// a kworker step (no floor) after 8 ms.
#[test]
fn ramp_steps_with_and_without_a_uclamp_floor() {
    use lever_trace_analysis::ramp::{compare, compare::by_floor};
    let base = ramp_of("ramp_baseline.txt");
    let ucl = ramp_of("ramp_uclamp.txt");
    let ramps = |r: &lever_trace_analysis::ramp::RampReport| {
        r.steps
            .iter()
            .map(|s| {
                (
                    s.comm.clone(),
                    s.uclamp_min,
                    s.ramp_ns.map(|n| n / 1_000_000),
                )
            })
            .collect::<Vec<_>>()
    };
    let hb = |floor, ms| ("hackbench".to_string(), floor, Some(ms));
    assert_eq!(ramps(&base), [hb(None, 12), hb(None, 16)]);
    assert_eq!(
        ramps(&ucl),
        [
            hb(Some(512), 2),
            hb(Some(512), 3),
            ("kworker/0:1".into(), None, Some(8))
        ]
    );
    assert_eq!(ucl.steps[0].start_khz, Some(1_200_000));
    assert_eq!(ucl.steps[0].climb, [(0, 1_200_000), (2_000_000, 1_800_000)]);
    // One capture, two floors: compared on its own (kworker has none).
    let inside = ucl.comparison.as_ref().unwrap();
    let floors: Vec<_> = inside
        .runs
        .iter()
        .map(|r| (r.uclamp_min, r.steps))
        .collect();
    assert_eq!(floors, [(None, 1), (Some(512), 2)]);
    assert!(base.comparison.is_none());
    assert!(by_floor(&ucl, Some("hackbench")).is_none());
    // The same task in two captures.
    let c = compare(&ucl, &base, "ramp_baseline.txt", Some("hackbench"));
    assert_eq!(c.target_khz, [(0, 1_800_000)]);
    let rows: Vec<_> = c
        .runs
        .iter()
        .map(|r| {
            (
                r.run,
                r.uclamp_min,
                r.steps,
                r.ramp.p50_ns / 1_000_000,
                r.ramp.max_ns / 1_000_000,
                r.p50_diff_ns / 1_000_000,
                r.max_diff_ns / 1_000_000,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("baseline", None, 2, 12, 16, 0, 0),
            ("this", Some(512), 2, 2, 3, -10, -13),
        ]
    );
}

/// The common target is the highest frequency of either capture: a run
/// whose top is lower did not reach it.
#[test]
fn ramp_comparison_uses_one_target_for_both_runs() {
    use lever_trace_analysis::ramp::compare;
    let base = ramp_of("ramp_baseline.txt");
    let text = std::fs::read_to_string(fixture("ramp_uclamp.txt"))
        .unwrap()
        .replace("state=1800000", "state=2400000");
    let opts = Options {
        ramp: true,
        ..Options::default()
    };
    let higher = analyze(text.as_bytes(), &opts, |_| {})
        .unwrap()
        .ramp
        .unwrap();
    let c = compare(&higher, &base, "b", Some("hackbench"));
    assert_eq!(c.target_khz, [(0, 2_400_000)]);
    assert_eq!((c.runs[0].steps, c.runs[0].not_reached), (2, 2));
    assert_eq!((c.runs[1].steps, c.runs[1].not_reached), (2, 0));
}

#[test]
fn uclamp_marks() {
    use lever_trace_analysis::ramp::UclampMark;
    let m = UclampMark::parse("uclamp min=512 max=1024 pid=42").unwrap();
    assert_eq!(
        (m.min, m.max, m.pid, m.comm),
        (512, Some(1024), Some(42), None)
    );
    assert_eq!(UclampMark::parse("uclamp min=0").unwrap().min, 0);
    for bad in [
        "uclamp",
        "uclamp max=10",
        "uclamp min=2000",
        "uclamp min=5 x=1",
        "start",
    ] {
        assert_eq!(UclampMark::parse(bad), None, "{bad}");
    }
}
