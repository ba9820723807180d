//! `systemd-analyze time` and `systemd-analyze blame` output.
//!
//! `time` prints one sentence (seed 000 §7.2; real systemd 250+):
//!
//! ```text
//! Startup finished in 4.238s (kernel) + 15.620s (userspace) = 19.859s
//! multi-user.target reached after 15.594s in userspace
//! ```
//!
//! With UEFI and an initrd more parts appear: `2.1s (firmware) + 1.0s
//! (loader) + 1.2s (kernel) + 3.4s (initrd) + 10.2s (userspace)`. Spans use
//! systemd's `format_timespan()`: `2min 6.300s`, `567ms`, `1h 2min 3s`.
//! Seed 000 §8.3 quotes the same sentence in prose ("Start-up finished in
//! 3.300 seconds (kernel) + 2 min 6.300 seconds (user space)"); that
//! spelling is accepted too.
//!
//! `blame` prints one unit per line, slowest first:
//!
//! ```text
//!          4.982s android-tools-adbd.service
//! 1min 3.013s dev-disk-byx2dpartlabel-system.device
//! ```

use serde::Serialize;

use crate::{decimal_us, BootError};

/// Microseconds per unit word of `format_timespan()` (and the prose spelling).
fn unit_us(unit: &str) -> Option<u64> {
    Some(match unit {
        "us" | "µs" | "usec" => 1,
        "ms" | "msec" | "millisecond" | "milliseconds" => 1_000,
        "s" | "sec" | "second" | "seconds" => 1_000_000,
        "min" | "minute" | "minutes" => 60_000_000,
        "h" | "hour" | "hours" => 3_600_000_000,
        "d" | "day" | "days" => 86_400_000_000,
        "w" | "week" | "weeks" => 604_800_000_000,
        _ => return None,
    })
}

/// Parse a span at the start of `words` (`2min 6.300s`, `2 min 6.300
/// seconds`, `567ms`); returns µs and how many words it used.
pub fn parse_span(words: &[&str]) -> Option<(u64, usize)> {
    let mut total = 0u64;
    let mut used = 0;
    while used < words.len() {
        let w = words[used];
        let split = w
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(w.len());
        let (num, unit) = w.split_at(split);
        // `10.071s.`: systemd ends some sentences right after a span.
        let unit = unit.trim_end_matches(['.', ',']);
        if num.is_empty() {
            break;
        }
        let (unit, width) = if unit.is_empty() {
            // `6.300 seconds`: the unit is the next word.
            match words.get(used + 1).and_then(|u| unit_us(u).map(|m| (m, 2))) {
                Some(found) => found,
                None => break,
            }
        } else {
            match unit_us(unit) {
                Some(m) => (m, 1),
                None => break,
            }
        };
        total += decimal_us(num, unit)?;
        used += width;
    }
    (used > 0).then_some((total, used))
}

/// The `systemd-analyze time` result, µs per part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SystemdTime {
    /// `(firmware)`.
    pub firmware_us: Option<u64>,
    /// `(loader)`.
    pub loader_us: Option<u64>,
    /// `(kernel)`.
    pub kernel_us: Option<u64>,
    /// `(initrd)`.
    pub initrd_us: Option<u64>,
    /// `(userspace)`.
    pub userspace_us: Option<u64>,
    /// After `=`.
    pub total_us: Option<u64>,
    /// `multi-user.target reached after …`: the target and when.
    pub target: Option<(String, u64)>,
}

/// Parse `systemd-analyze time` output.
pub fn parse_time(file: &str, text: &str) -> Result<SystemdTime, BootError> {
    let err = |line: usize, message: String| BootError::Parse {
        file: file.to_string(),
        line,
        message,
    };
    let mut out = SystemdTime::default();
    let mut found = false;
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        if lower.contains("bootup is not yet finished") {
            return Err(err(
                i + 1,
                format!("boot not finished yet; systemd says: {}", line.trim()),
            ));
        }
        if let Some(pos) = lower.find("finished in ") {
            found = true;
            // `4.238s (kernel) + 15.620s (userspace) = 19.859s multi-user…`
            let rest = &line[pos + "finished in ".len()..];
            let (parts, after) = rest.split_once('=').unwrap_or((rest, ""));
            for part in parts.split(" + ") {
                let (span, label) = part
                    .split_once('(')
                    .and_then(|(s, l)| l.split_once(')').map(|(l, _)| (s, l)))
                    .ok_or_else(|| {
                        err(
                            i + 1,
                            format!("cannot read `{}`: expected `<time> (<part>)`", part.trim()),
                        )
                    })?;
                let words: Vec<&str> = span.split_whitespace().collect();
                let us = match parse_span(&words) {
                    Some((us, n)) if n == words.len() => us,
                    _ => {
                        return Err(err(
                            i + 1,
                            format!("cannot read the time `{}` of ({label})", span.trim()),
                        ))
                    }
                };
                let slot = match label.replace(' ', "").as_str() {
                    "firmware" => &mut out.firmware_us,
                    "loader" => &mut out.loader_us,
                    "kernel" => &mut out.kernel_us,
                    "initrd" => &mut out.initrd_us,
                    "userspace" => &mut out.userspace_us,
                    _ => continue, // future parts: ignore rather than fail
                };
                *slot = Some(us);
            }
            let words: Vec<&str> = after.split_whitespace().collect();
            out.total_us = parse_span(&words).map(|(us, _)| us);
        }
        if let Some(pos) = lower.find(" reached after ") {
            // `multi-user.target reached after 15.594s in userspace`
            let target = line[..pos]
                .split_whitespace()
                .last()
                .unwrap_or("")
                .to_string();
            let words: Vec<&str> = line[pos + " reached after ".len()..]
                .split_whitespace()
                .collect();
            let (us, _) = parse_span(&words).ok_or_else(|| {
                err(
                    i + 1,
                    "cannot read the time after `reached after`".to_string(),
                )
            })?;
            out.target = Some((target, us));
        }
    }
    if !found {
        return Err(BootError::Empty {
            file: file.to_string(),
            message: "no `Startup finished in …` line: not `systemd-analyze time` output".into(),
        });
    }
    Ok(out)
}

/// One `systemd-analyze blame` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlameEntry {
    /// Unit name.
    pub unit: String,
    /// Activation time, µs.
    pub us: u64,
}

/// Parse `systemd-analyze blame` output, slowest first (as printed).
pub fn parse_blame(file: &str, text: &str) -> Result<Vec<BlameEntry>, BootError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        // `1min 3.013s dev-disk-byx2dpartlabel-system.device`
        match parse_span(&words) {
            Some((us, n)) if words.len() == n + 1 => out.push(BlameEntry {
                unit: words[n].to_string(),
                us,
            }),
            _ => {
                return Err(BootError::Parse {
                    file: file.to_string(),
                    line: i + 1,
                    message: format!(
                        "cannot read `{}`: expected `<time> <unit>` such as `4.982s android-tools-adbd.service`",
                        line.trim()
                    ),
                })
            }
        }
    }
    if out.is_empty() {
        return Err(BootError::Empty {
            file: file.to_string(),
            message: "no `<time> <unit>` line: not `systemd-analyze blame` output".into(),
        });
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.us));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans() {
        assert_eq!(parse_span(&["2min", "6.300s"]), Some((126_300_000, 2)));
        assert_eq!(
            parse_span(&["2", "min", "6.300", "seconds", "(user"]),
            Some((126_300_000, 4))
        );
        assert_eq!(parse_span(&["567ms", "x.service"]), Some((567_000, 1)));
        assert_eq!(parse_span(&["1h", "2min", "3s"]), Some((3_723_000_000, 3)));
        assert_eq!(parse_span(&["abc"]), None);
        assert_eq!(parse_span(&["2.197s."]), Some((2_197_000, 1)));
    }

    #[test]
    fn uefi_with_initrd() {
        let t = parse_time(
            "t",
            "Startup finished in 2.101s (firmware) + 1.002s (loader) + 1.200s (kernel) + 3.400s (initrd) + 10.200s (userspace) = 17.903s\n",
        )
        .unwrap();
        assert_eq!(t.firmware_us, Some(2_101_000));
        assert_eq!(t.initrd_us, Some(3_400_000));
        assert_eq!(t.total_us, Some(17_903_000));
        assert_eq!(t.target, None);
    }

    #[test]
    fn not_finished_and_garbage() {
        let e = parse_time("t.txt", "Bootup is not yet finished (org.freedesktop.systemd1.Manager.FinishTimestampMonotonic=0).\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:1: boot not finished"), "{e}");
        let e = parse_time("t.txt", "\nStartup finished in soon (kernel) = 1s\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:2: cannot read the time `soon`"), "{e}");
        let e = parse_time("t.txt", "hello\n").unwrap_err().to_string();
        assert!(e.contains("not `systemd-analyze time` output"), "{e}");
    }

    #[test]
    fn blame_errors_name_the_line() {
        let e = parse_blame("b.txt", "1.0s a.service\noops\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("b.txt:2: cannot read `oops`"), "{e}");
    }
}
