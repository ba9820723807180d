//! Marker times from a journal (seed 000 §8.3: `journalctl
//! --output=short-monotonic -b --no-pager -l > journalctl.txt`).
//!
//! In short-monotonic form every line starts with the seconds since boot:
//!
//! ```text
//! [    1.854242] qcm6490 kernel: audit: type=1404 audit(5.003:2): enforcing=1 old_enforcing=0 …
//! ```
//!
//! Seed 000 §8.3 quotes the same events from a short-iso journal, where the
//! kernel's own printk time follows `kernel:`:
//!
//! ```text
//! 1980-01-06T00:00:01.538918+00:00 qcm6490 kernel: [1.854242][T77] audit: type=1404 …
//! ```
//!
//! and reads 1.854 s from the bracket. Both give the same number: a
//! marker's time is the first `[<seconds>]` bracket on its line. The first
//! line that contains a marker's text (a plain substring) is the marker.

use serde::Serialize;

use crate::stage_markers::Marker;
use crate::{decimal_us, BootError};

/// Where a marker was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// The marker's name (`Kernel init`).
    pub name: String,
    /// The text searched for.
    pub pattern: String,
    /// Seconds since boot, as µs.
    pub us: u64,
    /// 1-based line in the journal.
    pub line: usize,
}

/// The first `[ 1.854242]` on a line: the monotonic time, µs.
fn first_seconds(line: &str) -> Option<u64> {
    let mut rest = line;
    while let Some(start) = rest.find('[') {
        let after = &rest[start + 1..];
        let (inside, tail) = after.split_once(']')?;
        if let Some(us) = decimal_us(inside.trim(), 1_000_000) {
            if inside.contains('.') {
                return Some(us);
            }
        }
        rest = tail;
    }
    None
}

/// Find each marker's first occurrence. Markers not in the journal are
/// `None`, in the order given.
pub fn find(file: &str, text: &str, markers: &[&Marker]) -> Result<Vec<Option<Found>>, BootError> {
    let mut out: Vec<Option<Found>> = vec![None; markers.len()];
    let mut timed = false;
    for (i, line) in text.lines().enumerate() {
        timed = timed || first_seconds(line).is_some();
        for (slot, marker) in out.iter_mut().zip(markers) {
            if slot.is_some() || !line.contains(&marker.pattern) {
                continue;
            }
            let us = first_seconds(line).ok_or_else(|| BootError::Parse {
                file: file.to_string(),
                line: i + 1,
                message: format!(
                    "marker `{}` found, but the line has no [seconds] time: save the journal with \
                     `journalctl --output=short-monotonic -b`",
                    marker.name
                ),
            })?;
            *slot = Some(Found {
                name: marker.name.clone(),
                pattern: marker.pattern.clone(),
                us,
                line: i + 1,
            });
        }
    }
    // Not one `[seconds]` line: not a journal in that format at all (a
    // wrong file), rather than a journal without the markers.
    if !timed {
        if let Some((i, _)) = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty()) {
            return Err(BootError::Parse {
                file: file.to_string(),
                line: i + 1,
                message: "no line has a [seconds] time: not a journal saved with \
                          `journalctl --output=short-monotonic -b`"
                    .into(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_give_the_printk_time() {
        assert_eq!(
            first_seconds("[    1.854242] qcm6490 kernel: audit: enforcing=1"),
            Some(1_854_242)
        );
        assert_eq!(
            first_seconds("1980-01-06T00:00:01.538918+00:00 qcm6490 kernel: [1.854242][T77] audit"),
            Some(1_854_242)
        );
        assert_eq!(first_seconds("no time [T77] here"), None);
    }

    #[test]
    fn a_marker_line_without_time_is_an_error() {
        let m = Marker {
            name: "Kernel init".into(),
            pattern: "enforcing=1".into(),
        };
        let e = find("j.txt", "a\nkernel: enforcing=1 old\n", &[&m])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("j.txt:2: marker `Kernel init` found"), "{e}");
    }

    #[test]
    fn a_file_without_one_timed_line_is_no_journal() {
        let m = Marker {
            name: "Kernel init".into(),
            pattern: "enforcing=1".into(),
        };
        let passwd = "\nroot:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/false\n";
        let e = find("passwd", passwd, &[&m]).unwrap_err().to_string();
        assert!(
            e.starts_with("passwd:2: no line has a [seconds] time"),
            "{e}"
        );
        // A journal without the markers is not an error; nor is an empty file.
        let journal = "[    1.000000] host kernel: Booting Linux\n";
        assert_eq!(find("j", journal, &[&m]).unwrap(), [None]);
        assert_eq!(find("j", "", &[&m]).unwrap(), [None]);
    }
}
