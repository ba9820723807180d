//! journald-friendly logging: one line per event on stderr. Under systemd
//! (`JOURNAL_STREAM` set) each line starts with a `<N>` syslog priority
//! prefix, which journald turns into the entry's priority; elsewhere lines
//! start with `lever daemon:`.

use std::io::Write;

/// A logger writing to stderr.
#[derive(Debug, Clone)]
pub struct Logger {
    journald: bool,
    quiet: bool,
}

impl Logger {
    /// Detect journald from the environment.
    pub fn from_env() -> Self {
        Logger {
            journald: std::env::var_os("JOURNAL_STREAM").is_some(),
            quiet: false,
        }
    }

    /// A logger that drops info lines (benchmarks); warnings still print.
    pub fn quiet() -> Self {
        Logger {
            journald: std::env::var_os("JOURNAL_STREAM").is_some(),
            quiet: true,
        }
    }

    fn line(&self, priority: u8, msg: &str) {
        let mut err = std::io::stderr().lock();
        let _ = if self.journald {
            writeln!(err, "<{priority}>{msg}")
        } else {
            writeln!(err, "lever daemon: {msg}")
        };
    }

    /// Informational (priority 6).
    pub fn info(&self, msg: &str) {
        if !self.quiet {
            self.line(6, msg);
        }
    }

    /// Warning (priority 4).
    pub fn warn(&self, msg: &str) {
        self.line(4, &format!("warning: {msg}"));
    }
}
