//! The fast paths give exactly what the general parsers give: the
//! fixed-column read of the kernel's own line layout
//! (`parse_line` vs `parse_line_general`) and the sched payloads read
//! from their fixed ends (`EventKind::try_parse` vs `try_parse_general`),
//! on every fixture line, on real lines of the kernel's layout, and on
//! thousands of damaged copies of them (a byte changed, inserted or
//! removed anywhere, the line cut anywhere).

use lever_trace::{for_each_line, parse_line, parse_line_general, EventKind, Line};
use proptest::prelude::*;

/// Lines of the kernel's layout as this kernel prints them (taken from a
/// real `-e sched -e irq` capture), and the older layouts the shortcuts
/// must leave to the general parsers.
const REAL: &[&str] = &[
    "           mkdir-28581   [000] d..2. 18561.820489: sched_stat_runtime: comm=mkdir pid=28581 runtime=1570175 [ns]",
    "           mkdir-28581   [000] dN.5. 18561.820496: sched_waking: comm=bash pid=25908 prio=120 target_cpu=000",
    "           mkdir-28581   [000] dN.6. 18561.820499: sched_wakeup: comm=bash pid=25908 prio=120 target_cpu=000",
    "           mkdir-28581   [000] d..2. 18561.820504: sched_switch: prev_comm=mkdir prev_pid=28581 prev_prio=120 prev_state=Z ==> next_comm=rustc next_pid=28576 next_prio=120",
    "       hackbench-28582   [001] d..2. 18561.820624: sched_switch: prev_comm=bash prev_pid=28582 prev_prio=120 prev_state=D ==> next_comm=rustc next_pid=28460 next_prio=120",
    "           rustc-28460   [001] d.h.. 18561.820718: irq_handler_entry: irq=36 name=virtio1-req.0",
    "           rustc-28460   [001] ..s.. 18561.820721: softirq_entry: vec=4 [action=BLOCK]",
    "          <idle>-0       [001] d..2. 18561.820800: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=77 next_prio=-51",
    "     Web Content-77      [001] d..3. 18561.820900: sched_wakeup_new: comm=a b=c pid=78 prio=120 target_cpu=001",
    "     kworker/1:1-88      [001] d..2. 18561.821000: sched_switch: prev_comm=kworker/1:1 prev_pid=88 prev_prio=120 prev_state=I ==> next_comm=x ==> next_comm=y next_pid=9 next_prio=120",
    "          <...>-4194304 [1023] d..2. 18561.821100: sched_waking: comm=p pid=4194304 prio=120 target_cpu=1023",
    "            bash-1977    [002] .... 99999999.000001: sched_stat_runtime: comm=bash pid=1977 runtime=3970691 [ns] vruntime=11 [ns]",
    "            bash-1977    [002] ....  1480.549228: sched_wakeup: comm=bash pid=1977 prio=120 success=1 target_cpu=002",
    "            bash-1977  [002] d..2  1480.549228: sched_switch: prev_comm=bash prev_pid=1977 prev_prio=120 prev_state=S ==> next_comm=a next_pid=2 next_prio=120",
    "            bash-1977    (   1970) [002] d..2.  1480.549228: sched_waking: comm=a pid=2 prio=120 target_cpu=002",
    "            bash-1977    [002] 1480.549228: tracing_mark_write: B|1977|draw",
    "            bash-1977    [4294967295] d..2. 1480.549228: sched_waking: comm=a pid=2 prio=120 target_cpu=002",
    "            bash-1977    [8192] d..2. 1480.549228: sched_waking: comm=a pid=2 prio=120 target_cpu=002",
    "            bash-1977    [002] d..2. 1480.549228: sched_switch: prev_comm=bash prev_pid=1977 prev_prio=120 prev_state=S ==> next_comm=a next_pid=2 next_p",
    "               x-1       [000] d..2. 1.000001: sched_stat_runtime: comm=x pid=1 runtime=1234567890123456789 [ns]",
    "               x-1       [000] d..2. 1.000001: sched_stat_runtime: comm=x pid=1 runtime=123456789012345678 [ns]",
    "               x-1       [000] d..2. 1.000001: sched_waking: comm=x pid=-1 prio=-5 target_cpu=-1",
    "               x-1       [000] d..2. 1.000001: sched_waking: comm=x pid=99999999999 prio=120 target_cpu=000",
    "               x-1       [000] d..2. 1.000001: sched_wakeup: comm=x pid=7 prio=99999999999 target_cpu=9000",
    "               x-1       [000] d..2. 1.000001: sched_switch: prev_comm=a b prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=c next_pid=-0 next_prio=2147483648",
    // Names that begin like the sched events read by word compares.
    "               x-1       [000] d..2. 1.000001: sched_switchy: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=c next_pid=2 next_prio=120",
    "               x-1       [000] d..2. 1.000001: sched_swatch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=c next_pid=2 next_prio=120",
    "               x-1       [000] d..2. 1.000001: sched_wakeups: comm=x pid=7 prio=120 target_cpu=000",
    "               x-1       [000] d..2. 1.000001: sched_wakeup_nex: comm=x pid=7 prio=120 target_cpu=000",
    "               x-1       [000] d..2. 1.000001: sched_wakeup_new comm=x pid=7 prio=120 target_cpu=000",
    "               x-1       [000] d..2. 1.000001: sched_waking comm=x pid=7 prio=120 target_cpu=000",
    "               x-1       [000] d..2. 1.000001: sched_stat_runtimes: comm=x pid=1 runtime=5 [ns]",
    "               x-1       [000] d..2. 1.000001: sched_stat_runtime:comm=x pid=1 runtime=5 [ns]",
    "               x-1       [000] d..2. 1.000001: sched_stat_runtime:",
    "               x-1       [000] d..2. 1.000001: sched_wakeup_new:",
    "               x-1       [000] d..2. 1.000001: sched_sw",
    "               x-1       [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S extra ==> next_comm=c next_pid=2 next_prio=120",
    "               x-1       [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=12345678 prev_prio=120 prev_state= ==> next_comm=c next_pid=2 next_prio=120",
    "               x-1       [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1  prev_prio=120 prev_state=S ==> next_comm=c next_pid=2 next_prio=120",
];

/// Bytes the damage is made of: the separators the parsers look for.
const BYTES: &[u8] = b" -[]():.=0123456789ab#C\t\r|>";

fn fixture_lines() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "txt") {
            let text = std::fs::read_to_string(&path).unwrap();
            lines.extend(text.lines().map(str::to_string));
        }
    }
    assert!(lines.len() > 100);
    lines
}

/// Both parsers agree on `line`, and on its payload when it is an event.
fn agree(line: &str) {
    let fast = parse_line(line);
    assert_eq!(fast, parse_line_general(line), "line {line:?}");
    if let Line::Event(e) = fast {
        assert_eq!(
            EventKind::try_parse(e.name, e.body),
            EventKind::try_parse_general(e.name, e.body),
            "payload of {line:?}"
        );
    }
}

#[test]
fn every_fixture_line_and_real_line() {
    let mut shortcut = 0;
    for line in fixture_lines()
        .iter()
        .map(String::as_str)
        .chain(REAL.iter().copied())
    {
        agree(line);
        if let Line::Event(e) = parse_line(line) {
            shortcut += matches!(e.kind, EventKind::SchedSwitch(_)) as u32;
        }
    }
    assert!(shortcut > 10);
}

/// The real lines above parse as the kernel printed them (the shortcuts
/// are not merely consistent with the general path, but right).
#[test]
fn real_lines_read_right() {
    let Line::Event(e) = parse_line(REAL[7]) else {
        panic!()
    };
    assert_eq!(
        (e.comm, e.pid, e.cpu, e.ts_ns),
        ("<idle>", 0, 1, 18_561_820_800_000)
    );
    let EventKind::SchedSwitch(sw) = e.kind else {
        panic!()
    };
    assert_eq!(
        (sw.next_comm, sw.next_pid, sw.next_prio),
        ("Web Content", 77, -51)
    );
    let Line::Event(e) = parse_line(REAL[9]) else {
        panic!()
    };
    let EventKind::SchedSwitch(sw) = e.kind else {
        panic!()
    };
    assert_eq!(sw.next_comm, "x ==> next_comm=y");
    let Line::Event(e) = parse_line(REAL[10]) else {
        panic!()
    };
    assert_eq!((e.comm, e.pid, e.cpu), ("<...>", 4_194_304, 1023));
    let Line::Event(e) = parse_line(REAL[8]) else {
        panic!()
    };
    let EventKind::SchedWakeup(w) = e.kind else {
        panic!()
    };
    assert_eq!((w.comm, w.pid, w.target_cpu), ("a b=c", 78, Some(1)));
    let Line::Event(e) = parse_line(REAL[0]) else {
        panic!()
    };
    assert!(matches!(
        e.kind,
        EventKind::SchedStatRuntime {
            comm: "mkdir",
            pid: 28581,
            runtime_ns: 1_570_175
        }
    ));
    assert!(matches!(parse_line(REAL[16]), Line::Malformed(_)));
    assert!(matches!(parse_line(REAL[17]), Line::Malformed(_)));
    assert!(matches!(parse_line(REAL[18]), Line::Malformed(_)));
}

/// The event name ends at the first `:` or space after the timestamp's
/// `": "`, read here without the parser's helpers (which the general
/// path shares, so `agree` cannot see a wrong cut in them).
#[test]
fn event_names_end_where_the_text_says() {
    let mut named = 0;
    for line in REAL {
        let payload = line.split_once(": ").unwrap().1;
        let Some(end) = payload.find([':', ' ']) else {
            continue;
        };
        let name = &payload[..end];
        match parse_line(line) {
            Line::Event(e) => assert_eq!(e.name, name, "{line}"),
            // Only a sched event's own name may fail its payload.
            Line::Malformed(_) => assert!(
                [
                    "sched_switch",
                    "sched_waking",
                    "sched_wakeup",
                    "sched_wakeup_new",
                    "sched_stat_runtime"
                ]
                .contains(&name),
                "{line}"
            ),
            other => panic!("{line}: {other:?}"),
        }
        named += 1;
    }
    assert!(named > 30);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn damaged_lines_agree(
        which in 0..REAL.len(),
        edits in proptest::collection::vec((0..3u8, 0..200usize, 0..BYTES.len()), 0..4),
        cut in proptest::option::of(0..200usize),
    ) {
        let mut b = damage(REAL[which], &edits).into_bytes();
        if let Some(c) = cut {
            b.truncate(c.min(b.len()));
        }
        agree(&String::from_utf8_lossy(&b));
    }
}

/// `line` with `edits` made to it: (0 change, 1 insert, 2 remove; where;
/// which of [`BYTES`]), and any line break it made replaced by a space.
fn damage(line: &str, edits: &[(u8, usize, usize)]) -> String {
    let mut b = line.as_bytes().to_vec();
    for &(op, at, byte) in edits {
        let at = at % (b.len() + 1);
        match op {
            0 if at < b.len() => b[at] = BYTES[byte],
            1 => b.insert(at, BYTES[byte]),
            _ if at < b.len() => {
                b.remove(at);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).replace(['\n', '\r'], " ")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// The reader parses each line into the slot the previous line left
    /// (an event over an event, field by field): no field of the line
    /// before may survive into the next, whatever the sequence.
    #[test]
    fn lines_parsed_in_one_slot_equal_fresh_ones(
        seq in proptest::collection::vec(
            (0..REAL.len(), proptest::collection::vec((0..3u8, 0..200usize, 0..BYTES.len()), 0..3)),
            1..12,
        ),
    ) {
        let lines: Vec<String> = seq.iter().map(|(w, e)| damage(REAL[*w], e)).collect();
        let text = lines.join("\n");
        let mut seen = 0;
        for_each_line(text.as_bytes(), |no, line| {
            let want = parse_line_general(&lines[no as usize - 1]);
            assert_eq!(line, &want, "line {no} of {lines:?}");
            seen += 1;
        }, |_| {}).unwrap();
        prop_assert_eq!(seen, lines.len());
    }
}
