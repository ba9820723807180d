//! CTF (LTTng, perf) directories as trace inputs: the sched analysis of
//! the shared synctraces kernel trace against an independent count from
//! babeltrace2's output of the same trace, perf's CTF output, and two
//! traces merged by time.

use lever_trace::{Line, LineSource};
use lever_trace_analysis::{analyze_source, Options};
use lever_trace_input::{ctf::CtfInput, open, Kind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared(rel: &str) -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/third-party/ctf")
        .join(rel);
    if d.is_dir() {
        return Some(d);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} missing under CI=true",
        d.display()
    );
    eprintln!("SKIP: {} not here", d.display());
    None
}

fn babeltrace2() -> bool {
    let ok = Command::new("babeltrace2")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "babeltrace2 missing under CI=true (.ci/run installs it)"
        );
        eprintln!("SKIP: babeltrace2 not installed here");
    }
    ok
}

/// sched_switch events of a one-stream trace as babeltrace2 prints them:
/// (ns, prev_tid, next_tid), the number of events and the last one's time.
fn babeltrace_switches(dir: &Path) -> (Vec<(u64, i64, i64)>, usize, u64) {
    let o = Command::new("babeltrace2")
        .args(["run", "-c", "src:source.ctf.fs", "-p"])
        .arg(format!("inputs=[\"{}\"]", dir.display()))
        .args([
            "-c",
            "sink:sink.text.details",
            "-p",
            "with-metadata=no,color=never",
            "-x",
            "src:sink",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let mut out = Vec::new();
    let mut events = 0;
    let mut ns = 0u64;
    // The `[...]` line before "Packet end" has a time too: only events'.
    let mut last_event_ns = 0u64;
    let mut cur: Option<(u64, Option<i64>, Option<i64>)> = None;
    for l in text.lines() {
        if let Some(ts) = l
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(" ns from origin]"))
        {
            ns = ts
                .split_once(" cycles, ")
                .unwrap()
                .1
                .replace(',', "")
                .parse()
                .unwrap();
        } else if l.starts_with("Event `") {
            events += 1;
            last_event_ns = ns;
            if let Some((t, Some(p), Some(n))) = cur.take() {
                out.push((t, p, n));
            }
            cur = l
                .starts_with("Event `sched_switch`")
                .then_some((ns, None, None));
        } else if let Some(c) = cur.as_mut() {
            let num = |v: &str| v.trim().replace(',', "").parse::<i64>().ok();
            if let Some(v) = l.strip_prefix("    prev_tid: ") {
                c.1 = num(v);
            } else if let Some(v) = l.strip_prefix("    next_tid: ") {
                c.2 = num(v);
            }
        }
    }
    if let Some((t, Some(p), Some(n))) = cur {
        out.push((t, p, n));
    }
    (out, events, last_event_ns)
}

#[test]
fn lttng_kernel_trace_sched_equals_a_count_from_babeltrace2() {
    let Some(dir) = shared("synctraces/scp_src") else {
        return;
    };
    if !babeltrace2() {
        return;
    }
    let input = open(&dir).unwrap();
    assert_eq!(input.kind(), Kind::Ctf { traces: 1 });
    let report = analyze_source(input, &Options::every_analysis(7422), |_| {}).unwrap();
    let (switches, events, last_ns) = babeltrace_switches(&dir);
    assert_eq!(report.summary.events, events as u64);
    assert_eq!(events, 110_771);
    // One CPU: each switch ends the run the switch before it began.
    let mut run_ns: HashMap<i64, u64> = HashMap::new();
    let mut ins: HashMap<i64, u64> = HashMap::new();
    for w in switches.windows(2) {
        let ((t0, _, next), (t1, prev, _)) = (w[0], w[1]);
        assert_eq!(next, prev, "switch-out of the task switched in");
        *run_ns.entry(prev).or_default() += t1 - t0;
    }
    // The last task runs until the trace's last event.
    let &(t_last, _, running) = switches.last().unwrap();
    *run_ns.entry(running).or_default() += last_ns - t_last;
    for (_, _, next) in &switches {
        *ins.entry(*next).or_default() += 1;
    }
    let sched = report.sched.as_ref().unwrap();
    let mut checked = 0;
    for t in &sched.threads {
        if t.tid == 0 {
            continue;
        }
        let want = run_ns.get(&(t.tid as i64)).copied().unwrap_or(0);
        assert_eq!(t.running_ns, want, "tid {} ({}) run time", t.tid, t.comm);
        assert_eq!(
            t.switches,
            ins.get(&(t.tid as i64)).copied().unwrap_or(0),
            "tid {} switch-ins",
            t.tid
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} threads");
    // ssh (7422) is the busiest thread of the scp side: 16.008 ms on CPU.
    let ssh = sched.threads.iter().find(|t| t.tid == 7422).unwrap();
    assert_eq!(ssh.comm, "ssh");
    // Every sched_wakeup (471) and sched_wakeup_new (10) is an edge's.
    let w = report.wakeups.as_ref().unwrap();
    assert_eq!(w.edges.iter().map(|e| e.count).sum::<u64>(), 471 + 10);
    assert!(report.critical_path.is_some());
}

#[test]
fn running_task_comes_from_the_last_switch() {
    let Some(dir) = shared("synctraces/scp_src") else {
        return;
    };
    let mut running: Option<(String, i32)> = None;
    let mut checked = 0;
    open(&dir)
        .unwrap()
        .for_each_line(
            |_, l| {
                if let Line::Event(e) = l {
                    if let (Some((c, p)), false) = (&running, e.name == "sched_switch") {
                        // pid 0 is `<idle>`, as ftrace shows it.
                        let c = if *p == 0 { "<idle>" } else { c.as_str() };
                        assert_eq!((e.comm, e.pid), (c, *p), "{} at {}", e.name, e.ts_ns);
                        checked += 1;
                    }
                    if let lever_trace::EventKind::SchedSwitch(s) = &e.kind {
                        if let Some((_, p)) = &running {
                            assert_eq!(s.prev_pid, *p);
                        }
                        assert!(
                            (0..140).contains(&s.prev_prio),
                            "kernel priorities, not LTTng's minus 100"
                        );
                        running = Some((s.next_comm.to_string(), s.next_pid));
                    }
                }
            },
            |_| {},
        )
        .unwrap();
    assert!(checked > 100_000, "{checked}");
}

#[test]
fn perf_ctf_output_is_typed() {
    let Some(dir) = shared("perf-taskset2") else {
        return;
    };
    let report = analyze_source(open(&dir).unwrap(), &Options::all(), |_| {}).unwrap();
    assert_eq!(report.summary.events, 1500);
    let sched = report.sched.unwrap();
    assert!(sched.threads.iter().any(|t| t.switches > 0));
    assert!(
        sched
            .threads
            .iter()
            .all(|t| t.comm != "<...>" || t.tid <= 0),
        "perf's comms are known"
    );
}

#[test]
fn two_hosts_merge_by_time() {
    let (Some(a), Some(b)) = (shared("synctraces/scp_src"), shared("synctraces/scp_dest")) else {
        return;
    };
    let both = CtfInput::open_all(&[a.clone(), b.clone()]).unwrap();
    let mut last = 0u64;
    let mut n = 0u64;
    let sum = both
        .for_each_line(
            |_, l| {
                if let Line::Event(e) = l {
                    assert!(e.ts_ns >= last, "time order");
                    last = e.ts_ns;
                    n += 1;
                }
            },
            |_| {},
        )
        .unwrap();
    assert_eq!(n, 110_771 + 85_729);
    // Two hosts: two CPUs, not one CPU 0 shared by both machines; each
    // host's threads as in its own trace (ssh ran 16.008 ms on scp_src).
    let r = analyze_source(open(a.parent().unwrap()).unwrap(), &Options::all(), |_| {}).unwrap();
    let s = r.sched.unwrap();
    assert_eq!(s.cpus.len(), 2);
    let alone = analyze_source(open(&a).unwrap(), &Options::all(), |_| {}).unwrap();
    let run = |s: &lever_trace_analysis::sched::SchedReport| {
        s.threads.iter().find(|t| t.tid == 7422).unwrap().running_ns
    };
    assert_eq!(run(&s), run(alone.sched.as_ref().unwrap()));
    assert_eq!(sum.events, n);
    // A parent directory holding both is the same input.
    let parent = open(a.parent().unwrap()).unwrap();
    assert_eq!(parent.kind(), Kind::Ctf { traces: 2 });
}

#[test]
fn a_directory_without_metadata_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let e = open(t.path()).err().unwrap().to_string();
    assert!(e.contains("bad CTF trace"), "{e}");
}

/// babeltrace2's count of `func_entry` events per address (pretty text:
/// `lttng_ust_cyg_profile:func_entry: ..., { addr = 0x4033A7, ... }`).
fn babeltrace_entries(dir: &Path) -> HashMap<u64, u64> {
    let o = Command::new("babeltrace2").arg(dir).output().unwrap();
    assert!(o.status.success());
    let mut n = HashMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        if !l.contains(":func_entry:") {
            continue;
        }
        let a = l
            .split("addr = 0x")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap();
        *n.entry(u64::from_str_radix(a, 16).unwrap()).or_default() += 1;
    }
    n
}

#[test]
fn glxgears_call_stacks_with_its_mapping_file() {
    let Some(dir) = shared("cyg-profile/glxgears-cyg-profile") else {
        return;
    };
    let map = dir.parent().unwrap().join("cyg-profile-mapping.txt");
    let (input, _) = lever_trace_input::open_sized_with_symbols(&dir, Some(&map)).unwrap();
    let opts = Options {
        callstack: true,
        ..Options::default()
    };
    let report = analyze_source(input, &opts, |_| {}).unwrap();
    let cs = report.callstack.unwrap();
    let names: Vec<&str> = cs.functions.iter().map(|f| f.name.as_str()).collect();
    for f in ["draw", "draw_gears", "gear", "main"] {
        assert!(names.contains(&f), "{f} in {names:?}");
    }
    // Every function's calls equal babeltrace2's entries at its address
    // (the mapping gives the address of each name).
    if babeltrace2() {
        let text = std::fs::read_to_string(&map).unwrap();
        let syms = lever_trace_input::ctf::Symbols::from_nm(&text).unwrap();
        let entries = babeltrace_entries(&dir);
        let mut by_name: HashMap<String, u64> = HashMap::new();
        for (a, n) in &entries {
            let name = syms
                .lookup(*a)
                .map_or_else(|| format!("{a:#x}"), str::to_string);
            *by_name.entry(name).or_default() += n;
        }
        for f in &cs.functions {
            assert_eq!(Some(&f.calls), by_name.get(&f.name), "{}", f.name);
        }
    }
    // Self time adds up to the time on the stacks: the sum of each
    // thread's outermost calls.
    let main = cs.functions.iter().find(|f| f.name == "main").unwrap();
    assert!(main.total_ns >= main.self_ns);
    let all_self: u64 = cs.functions.iter().map(|f| f.self_ns).sum();
    assert!(all_self > 0 && cs.folded.lines().count() > 3);
    assert!(cs.folded.contains("glxgears;main;"), "{}", cs.folded);
}

#[test]
fn a_mapping_file_for_text_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let trace = t.path().join("t.txt");
    std::fs::write(&trace, "  <idle>-0 [000] d..2. 1.000050: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120\n").unwrap();
    let map = t.path().join("m.txt");
    std::fs::write(&map, "0000000000401aac t f\n").unwrap();
    let e = lever_trace_input::open_sized_with_symbols(&trace, Some(&map))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("m.txt: symbols name the function addresses of a CTF"),
        "{e}"
    );
    std::fs::write(&map, "zzz t f\n").unwrap();
    let Some(dir) = shared("cyg-profile/glxgears-cyg-profile") else {
        return;
    };
    let e = lever_trace_input::open_sized_with_symbols(&dir, Some(&map))
        .err()
        .unwrap()
        .to_string();
    assert!(e.ends_with("m.txt: line 1: bad address `zzz`"), "{e}");
}
