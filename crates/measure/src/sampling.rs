//! Running the user's command (`lever … -- CMD`) and sampling while it runs.
//!
//! Every command that measures "during CMD" (`mem map`, `mem thrash`, `io`,
//! `cpu ipc`, `trace record`) spawns it here, so the program is named the
//! same way in every error, and every command that samples around it uses
//! the one loop, [`sample_while`] (or [`sample_for`] without a command):
//! a sample at the start, then one every `interval` on a drift-free
//! schedule (`start + k × interval`), and one right after the command
//! exits, which the closure sees as [`Tick::exited`]. That last sample is
//! taken before the command is reaped, so `/proc/PID` of the command (a
//! zombie then) still holds its final CPU times (`lever top -- CMD`).

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
    let spawn_error = |source| CommandError::Spawn {
        program: prog.clone(),
        source,
    };
    // Looked up as a shell would first: under qemu-user a failed exec is
    // not reported to `spawn` (lever_syscalls::find_program).
    lever_syscalls::find_program(prog.as_ref()).map_err(spawn_error)?;
    Command::new(prog).args(args).spawn().map_err(spawn_error)
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
    /// True for the sample taken right after the command exited (the
    /// last), before it is reaped: its `/proc/PID` is still there.
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
        let mut exited = false;
        match child.as_deref_mut() {
            Some(c) => exited = exited_by(c, target)?,
            None => std::thread::sleep(target.saturating_duration_since(Instant::now())),
        }
        let sampled = f(Tick {
            index,
            elapsed: start.elapsed(),
            exited,
        });
        index += 1;
        if exited {
            // Reap it now that the last sample has read its /proc/PID.
            let status = child.map(|c| c.wait()).transpose()?;
            sampled?;
            return Ok(status);
        }
        sampled?;
        if end.is_some_and(|e| Instant::now() >= e) {
            return Ok(None);
        }
    }
}

/// Wait for the child until `deadline`; true when it exited. The child is
/// left unreaped (`WNOWAIT`), so the sample after its exit still finds its
/// `/proc/PID`; [`sample`] reaps it after that sample.
fn exited_by(child: &Child, deadline: Instant) -> io::Result<bool> {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    let pid = Pid::from_child(child);
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        match waitid(WaitId::Pid(pid), options) {
            Ok(Some(_)) => return Ok(true),
            Ok(None) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(false);
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
    fn the_last_sample_still_finds_the_exited_command() {
        // `sh` burns a little CPU and exits; its /proc/PID is still there
        // (a zombie) in the sample after the exit, with its final times.
        let mut child = spawn(&[
            "sh".to_string(),
            "-c".to_string(),
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done".to_string(),
        ])
        .unwrap();
        let pid = child.id();
        let fs = lever_kernel::KernelFs::system();
        let mut last = None;
        let status = sample_while(&mut child, Duration::from_millis(50), |t| {
            if t.exited {
                last = Some(crate::process::stat(&fs, pid.into()).map_err(io::Error::other)?);
            }
            Ok::<_, io::Error>(())
        })
        .unwrap();
        assert!(status.success());
        let last = last.expect("a sample after the exit");
        assert_eq!(last.state, 'Z', "{last:?}");
        // Reaped afterwards.
        assert!(!fs.exists(&format!("/proc/{pid}")));
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
