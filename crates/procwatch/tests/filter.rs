//! The socket filter on the real process connector: three sockets open
//! side by side — exec only (what the daemon uses), exec and process exit,
//! and an unfiltered one as the control — while a shell forks 1,000
//! subshells that exit without exec'ing, a thread of this test exits, and
//! `/bin/true` runs. Counts are datagrams read (`recv` calls that returned
//! one), so a message the filter let through counts even if the parser
//! skipped it. Other processes on the machine keep exec'ing meanwhile:
//! their events are told apart by pid. Skips (printing why) where the
//! connector is unavailable (not root, no CONFIG_PROC_EVENTS).

use lever_procwatch::{Interest, ProcConnector, ProcEvent, WatchError};
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use std::collections::HashSet;
use std::process::Command;
use std::time::{Duration, Instant};

/// One socket and what it read.
struct Tap {
    name: &'static str,
    conn: ProcConnector,
    events: Vec<ProcEvent>,
    overrun: bool,
}

impl Tap {
    fn open(name: &'static str, interest: Interest) -> Result<Tap, WatchError> {
        Ok(Tap {
            name,
            conn: ProcConnector::open_for(interest)?,
            events: Vec::new(),
            overrun: false,
        })
    }

    /// Datagrams read so far.
    fn datagrams(&self) -> u64 {
        self.conn.datagrams()
    }

    fn drain(&mut self) {
        match self.conn.recv(None) {
            Ok(e) => self.events.extend(e),
            Err(WatchError::Overrun) => self.overrun = true,
            Err(e) => panic!("{}: {e}", self.name),
        }
    }

    /// Forget what was read so far (the counter keeps counting: callers
    /// take differences).
    fn clear(&mut self) {
        self.events.clear();
        self.overrun = false;
    }
}

/// Read all taps until `done` holds and then 300 ms more with nothing
/// arriving, or 20 s.
fn read_until(taps: &mut [&mut Tap], mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut quiet_since: Option<Instant> = None;
    while Instant::now() < deadline {
        let ready = {
            let mut fds: Vec<PollFd> = taps
                .iter()
                .map(|t| PollFd::new(&t.conn, PollFlags::IN))
                .collect();
            let ts = Timespec {
                tv_sec: 0,
                tv_nsec: 20_000_000,
            };
            poll(&mut fds, Some(&ts)).unwrap_or(0)
        };
        for t in taps.iter_mut() {
            t.drain();
        }
        if ready == 0 && done() {
            let since = *quiet_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_millis(300) {
                return;
            }
        } else {
            quiet_since = None;
        }
    }
    panic!("the process events did not settle within 20 s");
}

fn open_taps() -> Option<(Tap, Tap, Tap)> {
    let open = || -> Result<_, WatchError> {
        Ok((
            Tap::open("exec", Interest::Exec)?,
            Tap::open("exec+exit", Interest::ExecAndExit)?,
            Tap::open("all", Interest::All)?,
        ))
    };
    match open() {
        Ok(t) => Some(t),
        Err(e @ WatchError::Unavailable { .. }) => {
            println!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn is_exec_of(e: &ProcEvent, of: i32) -> bool {
    matches!(*e, ProcEvent::Exec { pid, tgid, .. } if pid == of && tgid == of)
}

/// The exit of process `of` (its leader) with status 0.
fn is_clean_exit_of(e: &ProcEvent, of: i32) -> bool {
    matches!(
        *e,
        ProcEvent::Exit { pid, tgid, exit_code, .. } if pid == of && tgid == of && exit_code == 0
    )
}

#[test]
fn fork_churn_reaches_no_filtered_socket_and_an_exec_still_does() {
    let Some((mut exec, mut exit, mut all)) = open_taps() else {
        return;
    };
    let me = std::process::id() as i32;

    // 1,000 fork+exit without exec: each `(exit 0)` is a forked subshell.
    let mut sh = Command::new("sh")
        .args([
            "-c",
            "i=0; while [ $i -lt 1000 ]; do (exit 0); i=$((i+1)); done",
        ])
        .spawn()
        .unwrap();
    let sh_pid = sh.id() as i32;
    // And a thread of ours that exits: a non-leader exit.
    let tid: i32 = std::thread::spawn(|| {
        // "PID/task/TID"
        let link = std::fs::read_link("/proc/thread-self").unwrap();
        link.file_name().unwrap().to_str().unwrap().parse().unwrap()
    })
    .join()
    .unwrap();
    let (e0, x0, a0) = (exec.datagrams(), exit.datagrams(), all.datagrams());
    let start = Instant::now();
    let mut sh_done = false;
    read_until(&mut [&mut exec, &mut exit, &mut all], || {
        sh_done = sh_done || sh.try_wait().unwrap().is_some();
        sh_done
    });
    let took = start.elapsed();

    // The control saw the churn: the shell's forks and their exits.
    let children: HashSet<i32> = all
        .events
        .iter()
        .filter_map(|e| match *e {
            ProcEvent::Fork {
                parent_tgid,
                child_tgid,
                ..
            } if parent_tgid == sh_pid => Some(child_tgid),
            _ => None,
        })
        .collect();
    let thread_exit_seen = all
        .events
        .iter()
        .any(|e| matches!(*e, ProcEvent::Exit { pid, tgid, .. } if pid == tid && tgid == me));
    println!(
        "1,000 fork+exit in {:.2} s: unfiltered {} datagrams ({} forks of the shell{}); \
         exec+exit {} datagrams; exec {} datagrams ({} execs: the shell's and other processes')",
        took.as_secs_f64(),
        all.datagrams() - a0,
        children.len(),
        if all.overrun { ", queue overran" } else { "" },
        exit.datagrams() - x0,
        exec.datagrams() - e0,
        exec.events.len(),
    );
    if !all.overrun {
        assert_eq!(children.len(), 1000, "the control missed forks");
        assert!(thread_exit_seen, "the control missed our thread's exit");
    } else {
        assert!(!children.is_empty(), "the control saw no fork at all");
    }

    // Exec only: every datagram was an exec: the shell's own, and other
    // processes'; none of the shell's children (they never exec).
    assert!(!exec.overrun);
    assert_eq!(
        exec.datagrams() - e0,
        exec.events.len() as u64,
        "something other than an exec passed the filter"
    );
    for e in &exec.events {
        let ProcEvent::Exec { tgid, .. } = *e else {
            panic!("not an exec: {e:?}");
        };
        assert!(
            !children.contains(&tgid),
            "fork churn reached the exec-only socket: {e:?}"
        );
    }
    let sh_execs = exec
        .events
        .iter()
        .filter(|e| matches!(e, ProcEvent::Exec { tgid, .. } if *tgid == sh_pid))
        .count();
    assert_eq!(sh_execs, 1, "the shell's exec");

    // Exec and exit: execs and whole-process exits only. Each forked
    // subshell is a process of its own, so its exit passes; our thread's
    // does not.
    assert_eq!(
        exit.datagrams() - x0,
        exit.events.len() as u64,
        "something other than an exec or exit passed the filter"
    );
    for e in &exit.events {
        match *e {
            ProcEvent::Exec { .. } => {}
            ProcEvent::Exit { pid, tgid, .. } => assert_eq!(pid, tgid, "a thread's exit: {e:?}"),
            ProcEvent::Fork { .. } => panic!("a fork passed: {e:?}"),
        }
    }
    if !exit.overrun {
        let child_exits = exit
            .events
            .iter()
            .filter(|e| matches!(e, ProcEvent::Exit { tgid, .. } if children.contains(tgid)))
            .count();
        assert_eq!(child_exits, children.len(), "process exits were dropped");
    }

    // A real program still comes through, decoded.
    for t in [&mut exec, &mut exit, &mut all] {
        t.clear();
    }
    let mut child = Command::new("/bin/true").spawn().unwrap();
    let pid = child.id() as i32;
    let mut exited = false;
    read_until(&mut [&mut exec, &mut exit, &mut all], || {
        exited = exited || child.try_wait().unwrap().is_some();
        exited
    });
    let exec_of = |t: &Tap| t.events.iter().filter(|e| is_exec_of(e, pid)).count();
    let exit_of = |t: &Tap| t.events.iter().filter(|e| is_clean_exit_of(e, pid)).count();
    assert_eq!(
        exec_of(&exec),
        1,
        "the exec of /bin/true: {:?}",
        exec.events
    );
    assert_eq!(exit_of(&exec), 0, "an exit on the exec-only socket");
    assert_eq!(exec_of(&exit), 1, "{:?}", exit.events);
    assert_eq!(
        exit_of(&exit),
        1,
        "the exit of /bin/true: {:?}",
        exit.events
    );
    if !all.overrun {
        assert_eq!((exec_of(&all), exit_of(&all)), (1, 1));
    }
    sh.wait().unwrap();
}
