//! A one-line progress indicator on stderr for long work (parsing a large
//! trace, sampling during a command). It is output, so it lives with the
//! rendering; it never shows unless stderr is a terminal.

use std::io::{IsTerminal, Write};

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
