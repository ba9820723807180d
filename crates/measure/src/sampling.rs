//! Running the user's command (`lever … -- CMD`) and sampling while it runs.
//!
//! Every command that measures "during CMD" (`mem map`, `mem thrash`, `io`,
//! `cpu ipc`, `trace record`) spawns it here, so the program is named the
//! same way in every error, and every command that samples around it uses
//! the one loop, [`sample_while`] (or [`sample_for`] without a command):
//! a sample at the start, then one every `interval` on a drift-free
//! schedule (`start + k × interval`), and one right after the command
//! exits, which the closure sees as [`Tick::exited`].

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Running the user's command failed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// `--` was followed by nothing.
    #[error("no command given after `--`")]
    NoCommand,
    /// The program could not be started (not found, not executable).
    #[error("cannot run `{program}`")]
    Spawn {
        /// The program (first word of the command).
        program: String,
        /// The underlying error.
        source: io::Error,
    },
    /// Waiting for the command failed.
    #[error("waiting for the command")]
    Wait(#[source] io::Error),
}

/// How the user's command ended.
#[derive(Debug)]
pub struct RunOutcome {
    /// Exit status.
    pub status: ExitStatus,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
    /// The command's own time blocked on block I/O, from its
    /// `/proc/PID/stat` read after it exited and before it was reaped;
    /// `None` when that could not be read.
    pub blkio: Option<Duration>,
}

/// Wait until `child` exited but leave it unreaped (so `/proc/PID` still
/// exists), read its blocked-on-I/O time, then reap it.
fn wait_with_blkio(child: &mut Child) -> Result<(ExitStatus, Option<Duration>), CommandError> {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    let pid = Pid::from_child(child);
    let exited = loop {
        match waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other.is_ok(),
        }
    };
    let blkio = exited
        .then(|| {
            let raw = pid.as_raw_nonzero().get() as u32;
            let stat = crate::process::stat(&lever_kernel::KernelFs::system(), raw.into()).ok()?;
            let ticks = stat.blkio_ticks?;
            let hz = rustix::param::clock_ticks_per_second().max(1);
            Some(Duration::from_nanos(ticks * 1_000_000_000 / hz))
        })
        .flatten();
    Ok((wait(child)?, blkio))
}

/// Spawn `argv` (inheriting stdio) and return the child.
pub fn spawn(argv: &[String]) -> Result<Child, CommandError> {
    let (prog, args) = argv.split_first().ok_or(CommandError::NoCommand)?;
    Command::new(prog)
        .args(args)
        .spawn()
        .map_err(|source| CommandError::Spawn {
            program: prog.clone(),
            source,
        })
}

/// Wait for a child to exit.
pub fn wait(child: &mut Child) -> Result<ExitStatus, CommandError> {
    child.wait().map_err(CommandError::Wait)
}

/// Run `argv` to completion (inheriting stdio), time it, and read how long
/// it was blocked on block I/O ([`RunOutcome::blkio`]).
pub fn run_command(argv: &[String]) -> Result<RunOutcome, CommandError> {
    let start = Instant::now();
    let mut child = spawn(argv)?;
    let (status, blkio) = wait_with_blkio(&mut child)?;
    Ok(RunOutcome {
        status,
        elapsed: start.elapsed(),
        blkio,
    })
}

/// One sample's place in a sampling run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// 0 for the sample at the start, then 1, 2, …
    pub index: u64,
    /// Time since the start (exactly zero for index 0).
    pub elapsed: Duration,
    /// True for the sample taken right after the command exited (the last).
    pub exited: bool,
}

/// Call `f` at the start, every `interval` while `child` runs, and once
/// right after it exits; return its exit status. An error from `f` stops
/// the sampling (the child keeps running: the caller owns it).
pub fn sample_while<E: From<io::Error>>(
    child: &mut Child,
    interval: Duration,
    f: impl FnMut(Tick) -> Result<(), E>,
) -> Result<ExitStatus, E> {
    let status = sample(Some(child), None, interval, f)?;
    Ok(status.expect("sampling with a child stops only when it exits"))
}

/// Call `f` at the start and every `interval` until `duration` has passed
/// (the last sample at exactly `duration`, even when it is not a multiple
/// of `interval`).
pub fn sample_for<E: From<io::Error>>(
    duration: Duration,
    interval: Duration,
    f: impl FnMut(Tick) -> Result<(), E>,
) -> Result<(), E> {
    sample(None, Some(duration), interval, f).map(|_| ())
}

fn sample<E: From<io::Error>>(
    mut child: Option<&mut Child>,
    duration: Option<Duration>,
    interval: Duration,
    mut f: impl FnMut(Tick) -> Result<(), E>,
) -> Result<Option<ExitStatus>, E> {
    let start = Instant::now();
    f(Tick {
        index: 0,
        elapsed: Duration::ZERO,
        exited: false,
    })?;
    let end = duration.map(|d| start + d);
    let mut index = 1u64;
    loop {
        let next = start + interval.mul_f64(index as f64);
        let target = match end {
            Some(e) if e < next => e,
            _ => next,
        };
        let mut status = None;
        match child.as_deref_mut() {
            Some(c) => status = wait_until(c, target)?,
            None => std::thread::sleep(target.saturating_duration_since(Instant::now())),
        }
        f(Tick {
            index,
            elapsed: start.elapsed(),
            exited: status.is_some(),
        })?;
        index += 1;
        if status.is_some() {
            return Ok(status);
        }
        if end.is_some_and(|e| Instant::now() >= e) {
            return Ok(None);
        }
    }
}

/// Wait for the child until `deadline`; `Some(status)` when it exited.
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        // Poll: a child's exit has no portable wake-up short of SIGCHLD,
        // and 20 ms keeps the last sample close to the exit.
        std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleep(secs: &str) -> Child {
        spawn(&["sleep".to_string(), secs.to_string()]).unwrap()
    }

    #[test]
    fn samples_a_short_child_until_it_exits() {
        let mut child = sleep("0.2");
        let mut ticks = Vec::new();
        let status = sample_while(&mut child, Duration::from_millis(50), |t| {
            ticks.push(t);
            Ok::<_, io::Error>(())
        })
        .unwrap();
        assert!(status.success());
        // 0.2 s at 50 ms: the start, about three on schedule, one after exit.
        assert!((3..=8).contains(&ticks.len()), "{ticks:?}");
        assert_eq!(ticks[0].elapsed, Duration::ZERO);
        assert!(ticks.iter().enumerate().all(|(i, t)| t.index == i as u64));
        let last = ticks.last().unwrap();
        assert!(last.exited && last.elapsed >= Duration::from_millis(190));
        assert_eq!(ticks.iter().filter(|t| t.exited).count(), 1);
        assert!(ticks.windows(2).all(|w| w[0].elapsed <= w[1].elapsed));
    }

    #[test]
    fn an_error_from_the_closure_stops_sampling() {
        let mut child = sleep("0.2");
        let mut calls = 0;
        let err = sample_while(&mut child, Duration::from_millis(20), |t| {
            calls += 1;
            match t.index {
                2 => Err(io::Error::other("sample failed")),
                _ => Ok(()),
            }
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "sample failed");
        assert_eq!(calls, 3);
        child.kill().ok();
        child.wait().unwrap();
    }

    #[test]
    fn samples_for_a_duration_ends_exactly_on_it() {
        let mut ticks = Vec::new();
        sample_for(Duration::from_millis(120), Duration::from_millis(50), |t| {
            ticks.push(t);
            Ok::<_, io::Error>(())
        })
        .unwrap();
        // 0, 50, 100 and the end at 120 ms.
        assert_eq!(ticks.len(), 4, "{ticks:?}");
        assert!(ticks.iter().all(|t| !t.exited));
        assert!(ticks[3].elapsed >= Duration::from_millis(120));
    }

    #[test]
    fn command_errors_name_the_program() {
        assert!(matches!(spawn(&[]), Err(CommandError::NoCommand)));
        let err = spawn(&["/nonexistent/lever-test-prog".to_string()]).unwrap_err();
        assert_eq!(err.to_string(), "cannot run `/nonexistent/lever-test-prog`");
        let out = run_command(&["true".to_string()]).unwrap();
        assert!(out.status.success());
        // Read from the unreaped child (0 when delay accounting is off).
        assert!(out.blkio.is_some());
        let out = run_command(&["sh".into(), "-c".into(), "exit 3".into()]).unwrap();
        assert_eq!(out.status.code(), Some(3));
    }
}
