//! The boot loader phase from a serial console log (seed 000 §7.2,
//! "First-phase timelines").
//!
//! Qualcomm's XBL/UEFI prints milestones with a millisecond timestamp since
//! power-on in brackets. Terminal programs prefix each line with the host's
//! time and often wrap the bracket onto the next line:
//!
//! ```text
//! [2024-02-06 15:26:06.978] UEFI Start
//!                                          [ 1547]
//! [2024-02-06 15:26:08.543] UEFI Total : 1015 ms
//! [2024-02-06 15:26:08.543] POST Time [ 2562] OS Loader
//! [2024-02-06 15:26:08.593] Exit EBS
//!                                           [ 3136] UEFI End
//! ```
//!
//! Stages: PBL+XBL = `UEFI Start`; Core UEFI = `UEFI Total`; kernel loader
//! = `Exit EBS` − (PBL+XBL + Core UEFI); total before the kernel =
//! `Exit EBS`. The bracketed value may sit on the marker's line or on the
//! next one. A log that holds several boots is read from its last
//! `UEFI Start`.

use serde::Serialize;

use crate::{decimal_us, BootError};

/// One marker's value and where it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Mark {
    /// Value in microseconds (the log prints ms).
    pub us: u64,
    /// 1-based line of the marker.
    pub line: usize,
}

/// The milestones of the last boot in a serial log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SerialTimes {
    /// `UEFI Start [ms]`: end of PBL + XBL.
    pub uefi_start: Option<Mark>,
    /// `UEFI Total : N ms`: time spent in core UEFI.
    pub uefi_total: Option<Mark>,
    /// `POST Time [ms] OS Loader`.
    pub post_time: Option<Mark>,
    /// `Exit EBS [ms] UEFI End`: UEFI hands over to the kernel.
    pub exit_ebs: Option<Mark>,
    /// How many boots (`UEFI Start` lines) the log holds.
    pub boots: usize,
}

impl SerialTimes {
    /// PBL + XBL, µs.
    pub fn pbl_xbl_us(&self) -> Option<u64> {
        self.uefi_start.map(|m| m.us)
    }

    /// Core UEFI, µs.
    pub fn core_uefi_us(&self) -> Option<u64> {
        self.uefi_total.map(|m| m.us)
    }

    /// Kernel loader = Exit EBS − (PBL+XBL + Core UEFI), µs.
    pub fn kernel_loader_us(&self) -> Option<u64> {
        let before = self.pbl_xbl_us()? + self.core_uefi_us()?;
        self.exit_ebs?.us.checked_sub(before)
    }

    /// Total time before the kernel = Exit EBS, µs.
    pub fn before_kernel_us(&self) -> Option<u64> {
        self.exit_ebs.map(|m| m.us)
    }
}

/// Strip a terminal's `[2024-02-06 15:26:06.978] ` prefix (a bracket that
/// holds a date or time, not a bare number).
fn strip_host_time(line: &str) -> &str {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix('[') {
        if let Some((inside, after)) = rest.split_once(']') {
            if inside.contains(':') || inside.contains('-') {
                return after;
            }
        }
    }
    line
}

/// The first `[ 1547]` in `text`: `Some(Ok(ms))`, `Some(Err(inside))` for
/// a bracket that holds no number, `None` without a bracket.
fn bracket_ms(text: &str) -> Option<Result<u64, String>> {
    let start = text.find('[')?;
    let (inside, _) = text[start + 1..].split_once(']')?;
    Some(decimal_us(inside.trim(), 1000).ok_or_else(|| inside.to_string()))
}

/// Parse a serial log.
pub fn parse(file: &str, text: &str) -> Result<SerialTimes, BootError> {
    let lines: Vec<&str> = text.lines().map(strip_host_time).collect();
    let err = |line: usize, message: String| BootError::Parse {
        file: file.to_string(),
        line,
        message,
    };
    // A bracketed ms value after `marker` on line i, or at the start of
    // line i+1 (wrapped).
    let value_after = |i: usize, marker: &str, rest: &str| -> Result<Mark, BootError> {
        let found = match bracket_ms(rest) {
            Some(v) => Some(v),
            None => lines
                .get(i + 1)
                .filter(|next| next.trim_start().starts_with('['))
                .and_then(|next| bracket_ms(next)),
        };
        match found {
            Some(Ok(us)) => Ok(Mark { us, line: i + 1 }),
            Some(Err(inside)) => Err(err(
                i + 1,
                format!(
                    "`{marker}` is followed by [{inside}], expected milliseconds such as [ 1547]"
                ),
            )),
            None => Err(err(
                i + 1,
                format!("`{marker}` has no [ms] value on this or the next line"),
            )),
        }
    };
    let mut times = SerialTimes::default();
    for (i, line) in lines.iter().enumerate() {
        if let Some(pos) = line.find("UEFI Start") {
            // A new boot starts: forget the previous one's milestones.
            let boots = times.boots + 1;
            times = SerialTimes {
                boots,
                uefi_start: Some(value_after(i, "UEFI Start", &line[pos + 10..])?),
                ..SerialTimes::default()
            };
        } else if let Some(pos) = line.find("UEFI Total") {
            // `UEFI Total : 1015 ms`
            let rest = line[pos + 10..].trim_start().trim_start_matches(':').trim();
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let unit = rest[number.len()..].trim();
            let us = decimal_us(&number, 1000)
                .filter(|_| unit.starts_with("ms") || unit.starts_with("milli"))
                .ok_or_else(|| {
                    err(
                        i + 1,
                        format!(
                            "cannot read `UEFI Total{}`: expected `UEFI Total : <N> ms`",
                            &line[pos + 10..]
                        ),
                    )
                })?;
            times.uefi_total = Some(Mark { us, line: i + 1 });
        } else if let Some(pos) = line.find("POST Time") {
            times.post_time = Some(value_after(i, "POST Time", &line[pos + 9..])?);
        } else if let Some(pos) = line.find("Exit EBS") {
            times.exit_ebs = Some(value_after(i, "Exit EBS", &line[pos + 8..])?);
        }
    }
    if times.uefi_start.is_none() && times.uefi_total.is_none() && times.exit_ebs.is_none() {
        return Err(BootError::Empty {
            file: file.to_string(),
            message:
                "no `UEFI Start`, `UEFI Total` or `Exit EBS` line: not a Qualcomm UEFI serial log"
                    .into(),
        });
    }
    if let (Some(ebs), Some(a), Some(b)) = (times.exit_ebs, times.uefi_start, times.uefi_total) {
        if ebs.us < a.us + b.us {
            return Err(err(
                ebs.line,
                format!(
                    "Exit EBS [{}] is earlier than UEFI Start [{}] + UEFI Total {} ms",
                    ebs.us / 1000,
                    a.us / 1000,
                    b.us / 1000
                ),
            ));
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_on_the_same_line() {
        let t = parse(
            "s",
            "UEFI Start [ 1818]\nUEFI Total : 1071 ms\nExit EBS [ 3469] UEFI End\n",
        )
        .unwrap();
        assert_eq!(t.pbl_xbl_us(), Some(1_818_000));
        assert_eq!(t.kernel_loader_us(), Some(580_000));
        assert_eq!(t.boots, 1);
    }

    #[test]
    fn last_boot_wins() {
        let t = parse(
            "s",
            "UEFI Start [ 9999]\nUEFI Total : 5 ms\nUEFI Start [ 100]\nUEFI Total : 50 ms\nExit EBS [ 200]\n",
        )
        .unwrap();
        assert_eq!(t.boots, 2);
        assert_eq!(t.kernel_loader_us(), Some(50_000));
    }

    #[test]
    fn missing_value_names_the_line() {
        let e = parse("boot.log", "junk\nUEFI Start\nsomething else\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "boot.log:2: `UEFI Start` has no [ms] value on this or the next line"
        );
        let e = parse("boot.log", "UEFI Start [ 12]\nUEFI Total : lots ms\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("boot.log:2: cannot read `UEFI Total"), "{e}");
        let e = parse("b", "Exit EBS\n  [ abc] UEFI End\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("b:1: `Exit EBS` is followed by [ abc]"),
            "{e}"
        );
    }

    #[test]
    fn inconsistent_times_are_rejected() {
        let e = parse(
            "b",
            "UEFI Start [ 2000]\nUEFI Total : 1500 ms\nExit EBS [ 3000]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("b:3: Exit EBS [3000] is earlier"), "{e}");
    }

    #[test]
    fn not_a_serial_log() {
        let e = parse("x.txt", "hello\n").unwrap_err().to_string();
        assert!(e.contains("not a Qualcomm UEFI serial log"), "{e}");
    }
}
