//! Helpers shared by commands: running the user's command (`-- CMD`) and
//! showing progress on long work when stderr is a terminal.

use anyhow::Context;
use std::io::{IsTerminal, Write};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// How the user's command ended.
#[derive(Debug)]
pub struct RunOutcome {
    /// Exit status.
    pub status: ExitStatus,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

/// Spawn `argv` (inheriting stdio) and return the child; errors name the
/// program.
pub fn spawn(argv: &[String]) -> anyhow::Result<std::process::Child> {
    let (prog, args) = argv.split_first().context("no command given after `--`")?;
    Command::new(prog)
        .args(args)
        .spawn()
        .with_context(|| format!("cannot run `{prog}`"))
}

/// Run `argv` to completion (inheriting stdio) and time it.
pub fn run_command(argv: &[String]) -> anyhow::Result<RunOutcome> {
    let start = Instant::now();
    let mut child = spawn(argv)?;
    let status = child.wait().context("waiting for the command")?;
    Ok(RunOutcome {
        status,
        elapsed: start.elapsed(),
    })
}

/// A one-line progress indicator on stderr, shown only on a terminal (and
/// never with `--json` output piped elsewhere, since it goes to stderr).
pub struct Progress {
    label: String,
    enabled: bool,
}

impl Progress {
    /// Start a progress line with a label such as "sampling /proc/vmstat".
    pub fn new(label: impl Into<String>) -> Self {
        Progress {
            label: label.into(),
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Update with `done` out of `total` (total `None` when open-ended).
    pub fn update(&self, done: u64, total: Option<u64>, detail: &str) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = match total {
            Some(t) if t > 0 => {
                let width = 30usize;
                let filled = ((done.min(t) * width as u64) / t) as usize;
                write!(
                    err,
                    "\r{} [{}{}] {}/{} {}\x1b[K",
                    self.label,
                    "#".repeat(filled),
                    " ".repeat(width - filled),
                    done,
                    t,
                    detail
                )
            }
            _ => write!(err, "\r{} {} {}\x1b[K", self.label, done, detail),
        };
        let _ = err.flush();
    }

    /// Clear the progress line.
    pub fn finish(&self) {
        if self.enabled {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}
