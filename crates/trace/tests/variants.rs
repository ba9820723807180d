//! Every line variant the issue lists, one example each (taken from real
//! kernel output: this machine's 6.18 for the default format, the kernel's
//! Documentation/trace/ftrace.rst for function_graph and latency reports).

use lever_trace::*;

fn event(line: &str) -> Event<'_> {
    match parse_line(line) {
        Line::Event(e) => e,
        other => panic!("not an event: {other:?} for {line:?}"),
    }
}

fn fg(line: &str) -> FuncGraph<'_> {
    match parse_line(line) {
        Line::FuncGraph(f) => f,
        other => panic!("not function_graph: {other:?} for {line:?}"),
    }
}

#[test]
fn default_format_five_char_flags() {
    let e = event("            bash-30212   [001] d.h1.  1480.549228: sched_stat_runtime: comm=bash pid=30212 runtime=3970691 [ns]");
    assert_eq!(e.comm, "bash");
    assert_eq!(e.pid, 30212);
    assert_eq!(e.tgid, None);
    assert_eq!(e.cpu, 1);
    assert_eq!(e.flags, Some("d.h1."));
    assert_eq!(e.ts_ns, 1_480_549_228_000);
    assert_eq!(e.name, "sched_stat_runtime");
    assert_eq!(e.body, "comm=bash pid=30212 runtime=3970691 [ns]");
    assert_eq!(
        e.kind,
        EventKind::SchedStatRuntime {
            comm: "bash",
            pid: 30212,
            runtime_ns: 3970691
        }
    );
}

#[test]
fn four_char_flags_and_no_flags() {
    let e =
        event("          <idle>-0     [000] d..2  62.241608: power_start: type=1 state=1 cpu_id=0");
    assert_eq!((e.comm, e.pid, e.flags), ("<idle>", 0, Some("d..2")));
    assert_eq!(
        e.kind,
        EventKind::PowerStart {
            kind: 1,
            state: 1,
            cpu: 0
        }
    );
    // irq-info off (and seed 004's old kernels): no flags column.
    let e = event("          <idle>-0     [000]    62.311462: power_end: cpu_id=0");
    assert_eq!(e.flags, None);
    assert_eq!(e.ts_ns, 62_311_462_000);
    assert_eq!(e.kind, EventKind::PowerEnd { cpu: 0 });
}

#[test]
fn tgid_column_and_unknown_tgid() {
    let e = event("            bash-1977  (   1977) [000] ....  17284.993652: sched_waking: comm=sshd pid=1974 prio=120 target_cpu=001");
    assert_eq!((e.pid, e.tgid, e.cpu), (1977, Some(1977), 0));
    let e =
        event("          <idle>-0     (-------) [002] d..2.  5.000001: cpu_idle: state=2 cpu_id=2");
    assert_eq!((e.comm, e.pid, e.tgid), ("<idle>", 0, None));
    assert_eq!(
        e.kind,
        EventKind::CpuIdle {
            state: Some(2),
            cpu: 2
        }
    );
}

#[test]
fn comms_with_spaces_dashes_brackets_and_unknown() {
    let e = event(" Web Content-12-345  [003] ....  5.000001: sched_waking: comm=Web Content pid=2 prio=120 target_cpu=001");
    assert_eq!((e.comm, e.pid), ("Web Content-12", 345));
    let EventKind::SchedWakeup(w) = e.kind else {
        panic!()
    };
    assert_eq!((w.comm, w.pid, w.target_cpu), ("Web Content", 2, Some(1)));
    let e = event("  kworker/[1]-9  [000] .... 1.5: foo: x");
    assert_eq!((e.comm, e.pid, e.cpu), ("kworker/[1]", 9, 0));
    let e = event(
        "           <...>-77      [000] .....  2.500000: tracing_mark_write: B|77|draw frame",
    );
    assert_eq!((e.comm, e.pid), ("<...>", 77));
    assert_eq!(
        e.kind,
        EventKind::Marker(Marker::Begin {
            pid: Some(77),
            name: "draw frame"
        })
    );
}

#[test]
fn sched_switch_with_spaces_in_comms() {
    let e = event("  a-1 [000] d..2.  1.000000: sched_switch: prev_comm=Chrome IO prev_pid=10 prev_prio=120 prev_state=D|K ==> next_comm=my thread next_pid=11 next_prio=98");
    let EventKind::SchedSwitch(s) = e.kind else {
        panic!()
    };
    assert_eq!(s.prev_comm, "Chrome IO");
    assert_eq!(s.prev_state, "D|K");
    assert!(!s.prev_runnable());
    assert_eq!(
        (s.next_comm, s.next_pid, s.next_prio),
        ("my thread", 11, 98)
    );
}

#[test]
fn typed_events() {
    let k = |l: &'static str| event(l).kind;
    assert_eq!(
        k("  x-1 [000] d..1.  1.0: cpu_frequency: state=1200000 cpu_id=3"),
        EventKind::CpuFrequency {
            state_khz: 1_200_000,
            cpu: 3
        }
    );
    assert_eq!(
        k("  x-1 [000] d..1.  1.0: cpu_idle: state=4294967295 cpu_id=0"),
        EventKind::CpuIdle {
            state: None,
            cpu: 0
        }
    );
    assert_eq!(
        k("  x-1 [000] d.h1.  1.0: irq_handler_entry: irq=24 name=virtio0-input.0"),
        EventKind::IrqEntry {
            irq: 24,
            name: "virtio0-input.0"
        }
    );
    assert_eq!(
        k("  x-1 [000] d.h1.  1.0: irq_handler_exit: irq=24 ret=handled"),
        EventKind::IrqExit {
            irq: 24,
            handled: true
        }
    );
    assert_eq!(
        k("  x-1 [000] ..s1.  1.0: softirq_entry: vec=1 [action=TIMER]"),
        EventKind::SoftirqEntry {
            vec: 1,
            action: "TIMER"
        }
    );
    assert_eq!(
        k("  x-1 [000] ..s1.  1.0: softirq_exit: vec=9 [action=RCU]"),
        EventKind::SoftirqExit {
            vec: 9,
            action: "RCU"
        }
    );
    assert_eq!(
        k("  migration/1-21 [001] d..3.  1.0: sched_migrate_task: comm=bash pid=30219 prio=120 orig_cpu=1 dest_cpu=0"),
        EventKind::SchedMigrateTask(SchedMigrateTask {
            comm: "bash",
            pid: 30219,
            orig_cpu: 1,
            dest_cpu: 0
        })
    );
    // Old kernels: success=1 before target_cpu.
    let EventKind::SchedWakeup(w) = k(
        "  x-1 [000] d..1  1.0: sched_wakeup_new: comm=a pid=5 prio=120 success=1 target_cpu=002",
    ) else {
        panic!()
    };
    assert_eq!(
        (w.kind, w.pid, w.target_cpu),
        (WakeKind::WakeupNew, 5, Some(2))
    );
    // Function tracer.
    let e =
        event("            bash-1977  [000] ....  17284.993652: sys_close <-system_call_fastpath");
    assert_eq!(e.name, "sys_close");
    assert_eq!(
        e.kind,
        EventKind::Function {
            parent: "system_call_fastpath"
        }
    );
    // A known event whose body does not parse stays Other when typed
    // alone; as a line it is malformed (see
    // typed_events_cut_short_are_malformed).
    assert_eq!(
        EventKind::parse("sched_switch", "garbage"),
        EventKind::Other
    );
    assert!(matches!(
        parse_line("  x-1 [000] ....  1.0: sched_switch: garbage"),
        Line::Malformed(_)
    ));
}

#[test]
fn markers_in_every_form() {
    assert_eq!(
        Marker::parse("B Connect"),
        Marker::Begin {
            pid: None,
            name: "Connect"
        }
    );
    assert_eq!(
        Marker::parse("E FirstVidFrame 1"),
        Marker::End {
            pid: None,
            name: Some("FirstVidFrame")
        }
    );
    assert_eq!(
        Marker::parse("S SnapShot-Shot 0"),
        Marker::Instant {
            name: "SnapShot-Shot"
        }
    );
    assert_eq!(
        Marker::parse("E|1234"),
        Marker::End {
            pid: Some(1234),
            name: None
        }
    );
    assert_eq!(
        Marker::parse("C|1234|queue depth|-3"),
        Marker::Counter {
            pid: Some(1234),
            name: "queue depth",
            value: -3
        }
    );
    assert_eq!(Marker::parse("hello"), Marker::Text("hello"));
}

#[test]
fn headers() {
    assert_eq!(
        parse_line("# tracer: nop"),
        Line::Header(Header::Tracer("nop"))
    );
    assert_eq!(
        parse_line("# entries-in-buffer/entries-written: 415/1415   #P:2"),
        Line::Header(Header::Entries {
            in_buffer: 415,
            written: 1415,
            cpus: Some(2)
        })
    );
    assert!(matches!(
        parse_line("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION"),
        Line::Header(Header::Other(_))
    ));
    assert_eq!(
        parse_line("CPU:2 [LOST 1234 EVENTS]"),
        Line::Lost {
            cpu: 2,
            events: Some(1234)
        }
    );
    assert_eq!(
        parse_line("##### CPU 3 buffer started ####"),
        Line::Lost {
            cpu: 3,
            events: None
        }
    );
    assert_eq!(parse_line("   "), Line::Blank);
    assert_eq!(
        parse_line(" ------------------------------------------"),
        Line::Separator
    );
}

#[test]
fn function_graph_plain() {
    let f = fg(" 0)               |  sys_open() {");
    assert_eq!(
        (f.cpu, f.duration_ns, &f.item),
        (0, None, &FgItem::Entry("sys_open"))
    );
    let f = fg(" 0)   0.541 us    |      getname();");
    assert_eq!(
        (f.duration_ns, &f.item),
        (Some(541), &FgItem::Leaf("getname"))
    );
    let f = fg(" 1) + 10.495 us   |    }");
    assert_eq!((f.cpu, f.mark, f.duration_ns), (1, Some('+'), Some(10_495)));
    assert_eq!(f.item, FgItem::Exit(None));
    for (line, mark, ns) in [
        (" 0) ! 100.495 us  |  }", '!', 100_495),
        (" 0) # 1000.123 us |  }", '#', 1_000_123),
        (" 0) * 10000.00 us |  }", '*', 10_000_000),
        (" 0) @ 100000.0 us |  }", '@', 100_000_000),
        (" 0) $ 1000000 us  |  }", '$', 1_000_000_000),
    ] {
        let f = fg(line);
        assert_eq!((f.mark, f.duration_ns), (Some(mark), Some(ns)), "{line}");
    }
    let f = fg(" 0)    bash-1977    =>    sshd-1974   ");
    assert_eq!(
        f.item,
        FgItem::ContextSwitch {
            from: ("bash", 1977),
            to: ("sshd", 1974)
        }
    );
    assert_eq!(fg(" 1)   ==========> |").item, FgItem::IrqEnter);
    assert_eq!(fg(" 1)   <========== |").item, FgItem::IrqExit);
    let f = fg(" 0)               |  /* tracing_mark_write: B|1|a|b */");
    assert_eq!(f.item, FgItem::Comment("tracing_mark_write: B|1|a|b"));
}

#[test]
fn function_graph_proc_abs_time_tail_retval() {
    let f = fg(" 3523.447327 |   0)   bash-1977    | + 10.495 us   |    } /* sys_open */");
    assert_eq!(f.ts_ns, Some(3_523_447_327_000));
    assert_eq!(f.task, Some(("bash", 1977)));
    assert_eq!(f.duration_ns, Some(10_495));
    assert_eq!(f.item, FgItem::Exit(Some("sys_open")));
    let f = fg(" 2)  kworker/-1-12   |               |  process_one_work() {");
    assert_eq!(f.task, Some(("kworker/-1", 12)));
    assert_eq!(f.item, FgItem::Entry("process_one_work"));
    let f = fg(" 0)   1.000 us    |  kfree(); /* = 0x0 */");
    assert_eq!(f.item, FgItem::Leaf("kfree"));
    let f = fg(" 0)   2.000 us    |  } /* do_x = 0xfffffffffffffff2 */");
    assert_eq!(f.item, FgItem::Exit(Some("do_x")));
}

#[test]
fn latency_report() {
    let lines = [
        "# tracer: preemptoff",
        "# latency: 46 us, #4/4, CPU#1 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)",
        "#    | task: sshd-1991 (uid:0 nice:0 policy:0 rt_prio:0)",
        "#  => started at: do_IRQ",
        "#  => ended at:   do_IRQ",
        "    sshd-1991    1d.h.    0us+: irq_enter <-do_IRQ",
        "    sshd-1991    1d..1   46us : irq_exit <-do_IRQ",
        " => sub_preempt_count",
    ];
    let parsed: Vec<_> = lines.iter().map(|l| parse_line(l)).collect();
    assert_eq!(
        parsed[1],
        Line::Header(Header::Latency {
            latency_us: 46,
            cpu: Some(1)
        })
    );
    assert_eq!(
        parsed[2],
        Line::Header(Header::Task {
            comm: "sshd",
            pid: 1991
        })
    );
    assert_eq!(parsed[3], Line::Header(Header::StartedAt("do_IRQ")));
    assert_eq!(parsed[4], Line::Header(Header::EndedAt("do_IRQ")));
    let Line::Event(e) = &parsed[6] else { panic!() };
    assert_eq!(
        (e.comm, e.pid, e.cpu, e.flags),
        ("sshd", 1991, 1, Some("d..1"))
    );
    assert_eq!((e.ts_ns, e.time_base), (46_000, TimeBase::Relative));
    assert_eq!(
        (e.name, &e.kind),
        ("irq_exit", &EventKind::Function { parent: "do_IRQ" })
    );
    let Line::Event(e) = &parsed[5] else { panic!() };
    assert_eq!((e.ts_ns, e.flags), (0, Some("d.h.")));
    assert_eq!(parsed[7], Line::Stack("sub_preempt_count"));
}

#[test]
fn malformed_lines_are_counted_with_numbers() {
    let text = "# tracer: nop\n  bash-1 [000] ....  1.000000: a: b\nthis is junk\n\n  bash-1 [000] ....  1.x: a: b\n";
    let mut events = 0;
    let s = for_each_line(
        text.as_bytes(),
        |_, l| events += matches!(l, Line::Event(_)) as u32,
        |_| {},
    )
    .unwrap();
    assert_eq!(events, 1);
    assert_eq!(s.malformed, 2);
    assert_eq!(
        s.malformed_samples
            .iter()
            .map(|m| m.line_no)
            .collect::<Vec<_>>(),
        vec![3, 5]
    );
    assert_eq!(s.tracer.as_deref(), Some("nop"));
    assert_eq!(s.lines, 5);
}

#[test]
fn reader_handles_no_trailing_newline_invalid_utf8_and_long_lines() {
    let mut data = b"  a\xff\xfe-1 [000] ....  1.000000: x: y\n".to_vec();
    data.extend(std::iter::repeat_n(b'z', 3 << 20));
    data.extend(b"\n  b-2 [001] ....  2.000000: x: y");
    let mut r = TraceReader::new(&data[..]);
    let (n, l) = r.next_line().unwrap().unwrap();
    assert_eq!(n, 1);
    let Line::Event(e) = parse_line(l) else {
        panic!()
    };
    assert_eq!(e.comm, "a??");
    let (_, l) = r.next_line().unwrap().unwrap();
    assert_eq!(l.len(), 3 << 20);
    let (n, l) = r.next_line().unwrap().unwrap();
    assert_eq!(n, 3);
    assert!(matches!(parse_line(l), Line::Event(e) if e.pid == 2 && e.ts_ns == 2_000_000_000));
    assert!(r.next_line().unwrap().is_none());
}

#[test]
fn timestamps_of_every_clock() {
    assert_eq!(event("  a-1 [000] ....  12.5: x: y").ts_ns, 12_500_000_000);
    assert_eq!(
        event("  a-1 [000] ....  12.123456789: x: y").ts_ns,
        12_123_456_789
    );
    // counter / x86-tsc clocks print integers.
    assert_eq!(
        event("  a-1 [000] ....  123456789: x: y").ts_ns,
        123_456_789
    );
}

/// A corrupt CPU column must not reach the per-CPU tables of the
/// analyses (which grow to the highest CPU seen): out of range is
/// malformed, with a reason that says so.
#[test]
fn cpu_numbers_beyond_the_kernel_limit_are_malformed() {
    for cpu in ["4294967295", "40000000", "8192"] {
        let line = format!("            bash-30212   [{cpu}] d.h1.  1480.549228: sched_stat_runtime: comm=bash pid=30212 runtime=3970691 [ns]");
        match parse_line(&line) {
            Line::Malformed(reason) => assert!(reason.contains("CPU"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    let e = event("            bash-30212   [8191] d.h1.  1480.549228: sched_stat_runtime: comm=bash pid=30212 runtime=3970691 [ns]");
    assert_eq!(e.cpu, 8191);
    for line in [
        "          <idle>-0     [000] d..2.  62.241608: cpu_idle: state=1 cpu_id=4294967295",
        "          <idle>-0     [000] d..2.  62.241608: cpu_frequency: state=800000 cpu_id=40000000",
        "CPU:4294967295 [LOST 12 EVENTS]",
        "##### CPU 40000000 buffer started ####",
        " 40000000)   0.541 us    |      getname();",
    ] {
        assert!(
            matches!(parse_line(line), Line::Malformed(_)),
            "{line}: {:?}",
            parse_line(line)
        );
    }
}

/// A typed event cut short mid-line (a truncated copy of a real
/// sched_switch line from this machine's 6.18) is malformed, not a
/// generic event.
#[test]
fn typed_events_cut_short_are_malformed() {
    let full = "          <idle>-0       [001] d..2.  8808.232012: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cap.sh next_pid=26090 next_prio=120";
    assert!(matches!(event(full).kind, EventKind::SchedSwitch(_)));
    for cut in [60, 80, 110, 140, full.len() - 14] {
        match parse_line(&full[..cut]) {
            Line::Malformed(reason) => {
                assert!(
                    reason.contains("sched_switch") || reason.contains("cut short"),
                    "{reason}"
                )
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    let wake = "        dpkg-deb-26035   [000] d..2.  8808.231963: sched_waking: comm=dpkg-deb pid=26033 prio=120 target_cpu=000";
    assert!(matches!(event(wake).kind, EventKind::SchedWakeup(_)));
    assert!(matches!(
        parse_line(&wake[..wake.len() - 32]),
        Line::Malformed(_)
    ));
    // An event Lever does not type stays an event whatever its body.
    let e =
        event("          cap.sh-26088   [001] .....  8808.231897: sched_process_wait: comm=cap.sh");
    assert_eq!(e.kind, EventKind::Other);
}

/// function_graph irq markers after the task column (funcgraph-proc),
/// as the kernel's print_graph_irq writes them.
#[test]
fn funcgraph_irq_markers_with_task_column() {
    let f = fg(" 0)    <idle>-0    |   ==========> |");
    assert_eq!(
        (f.cpu, f.task, f.item),
        (0, Some(("<idle>", 0)), FgItem::IrqEnter)
    );
    let f = fg(" 1)   bash-1977    |   <========== |");
    assert_eq!(
        (f.cpu, f.task, f.item),
        (1, Some(("bash", 1977)), FgItem::IrqExit)
    );
    let f = fg(" 3523.447327 |   0)   bash-1977    |   ==========> |");
    assert_eq!(
        (f.ts_ns, f.item),
        (Some(3_523_447_327_000), FgItem::IrqEnter)
    );
}

/// What `lever trace analyze` turns into a non-zero exit: a file with no
/// event at all, each case with its own message naming the file.
#[test]
fn files_without_events_are_errors_that_say_why() {
    let check = |input: &[u8]| {
        for_each_line(input, |_, _| {}, |_| {})
            .unwrap()
            .require_events(std::path::Path::new("t.txt"))
    };
    let msg = |input: &[u8]| check(input).unwrap_err().to_string();
    assert_eq!(msg(b""), "t.txt is empty (0 bytes): not a trace");
    let header = "# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n";
    assert!(msg(header.as_bytes()).starts_with("the trace is empty (header only)"));
    let random: Vec<u8> = (0..4000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let m = msg(&random);
    assert!(m.starts_with("no trace events in t.txt: "), "{m}");
    assert!(m.contains("none parsed"), "{m}");
    assert!(check(format!("{header}  a-1 [000] .... 1.0: x: y\n").as_bytes()).is_ok());
}

/// lock:contention_* and raw_syscalls lines of this machine's 6.18.
#[test]
fn lock_and_raw_syscall_events() {
    fn k(l: &str) -> EventKind<'_> {
        event(l).kind
    }
    assert_eq!(
        k("              mm-26691   [000] ...1.  8817.996350: contention_begin: 0000000095050472 (flags=READ)"),
        EventKind::LockContentionBegin { lock: "0000000095050472", flags: "READ" }
    );
    assert_eq!(
        k("              mm-26691   [000] ...1.  8817.996450: contention_end: 0000000095050472 (ret=0)"),
        EventKind::LockContentionEnd { lock: "0000000095050472", ret: 0 }
    );
    assert_eq!(
        k("              mm-26691   [000] .....  8817.996446: sys_enter: NR 202 (7f6a72519990, 109, 6844, 0, 0, ffffffff)"),
        EventKind::SysEnter { nr: 202, args: "7f6a72519990, 109, 6844, 0, 0, ffffffff" }
    );
    assert_eq!(
        k(" memfd:sealed-91-20210   [000] .....  8818.035257: sys_exit: NR 202 = -110"),
        EventKind::SysExit { nr: 202, ret: -110 }
    );
}

/// Every text fixture, ending in a line with a bad UTF-8 byte and no
/// newline.
fn fixtures_with_ragged_end() -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let mut data = std::fs::read(&path).unwrap();
        data.extend_from_slice(b"no newline at the end \xff");
        out.push((path, data));
    }
    assert!(!out.is_empty());
    out
}

/// Parallel parsing feeds exactly the lines, numbers and summary of the
/// one-thread pass, whatever the block size (cuts at every place) and
/// thread count, on every fixture.
#[test]
fn parallel_pass_equals_single_pass() {
    for (path, data) in fixtures_with_ragged_end() {
        let collect = |threads: usize, block: usize| {
            let mut lines = Vec::new();
            let s = lever_trace::reader::for_each_line_blocks(
                &data[..],
                threads,
                block,
                |no, l| lines.push(format!("{no} {l:?}")),
                |_| {},
            )
            .unwrap();
            (lines, s)
        };
        let single = collect(1, 0);
        for (threads, block) in [(2, 1), (2, 7), (3, 100), (2, 4096), (4, 1 << 20)] {
            let par = collect(threads, block);
            assert_eq!(par.0, single.0, "{path:?} {threads} {block}");
            assert_eq!(par.1, single.1, "{path:?} {threads} {block}");
        }
    }
}

/// Parsing a trace in memory (a mapped file) feeds exactly the lines,
/// numbers and summary of the streaming pass, whatever the block size
/// (lines longer than a block, bad UTF-8 in any block, no final newline)
/// and thread count.
#[test]
fn in_memory_pass_equals_streaming_pass() {
    for (path, mut data) in fixtures_with_ragged_end() {
        data.splice(0..0, b"  bad-1 [000] .... 1.0: x: \xc3\n".iter().copied());
        let streaming = {
            let mut lines = Vec::new();
            let s = lever_trace::for_each_line(
                &data[..],
                |no, l| lines.push(format!("{no} {l:?}")),
                |_| {},
            )
            .unwrap();
            (lines, s)
        };
        for (threads, block) in [
            (1, 1),
            (1, 5),
            (1, 333),
            (1, 1 << 20),
            (2, 1),
            (2, 7),
            (3, 4096),
            (4, 64),
            (2, 1 << 20),
        ] {
            let mut lines = Vec::new();
            let s = lever_trace::reader::for_each_line_in_blocks(
                &data,
                threads,
                block,
                |no, l| lines.push(format!("{no} {l:?}")),
                |_| {},
            );
            assert_eq!(lines, streaming.0, "{path:?} {threads} {block}");
            assert_eq!(s, streaming.1, "{path:?} {threads} {block}");
        }
    }
}
