//! Text primitives every Lever reader shares, so that a number means the
//! same thing wherever it is typed or read:
//!
//! - [`parse_int`]: integers as sysfs, procfs, target files and command
//!   lines write them (`123`, `-1`, `+7`, `0x1F`).
//! - [`parse_duration`] and [`parse_size`]: values with units (`500ms`,
//!   `10s`, `1.5s`, `64k`, `2M`); a bare number keeps the unit the flag
//!   always had, so old command lines still work.
//! - [`ParseError`]: "this file, this line, this text is not what was
//!   expected", the one error every parser of kernel text returns.
//! - [`parse_cpu_list`] and [`format_cpu_list`]: the kernel's CPU list
//!   form (`0-3,7`).
//! - [`nearest_rank`] and [`percentile_sorted`]: what "p99" means wherever
//!   Lever prints a percentile (latency histograms, trace distributions,
//!   daemon benchmarks): the nearest-rank definition.
//!
//! ```
//! use lever_text::{parse_duration, parse_int, parse_size, TimeUnit};
//! use std::time::Duration;
//! assert_eq!(parse_int("0x44008100"), Some(0x4400_8100));
//! assert_eq!(parse_int(" -1\n"), Some(-1));
//! assert_eq!(parse_duration("500ms", TimeUnit::Seconds).unwrap(), Duration::from_millis(500));
//! assert_eq!(parse_duration("2", TimeUnit::Seconds).unwrap(), Duration::from_secs(2));
//! assert_eq!(parse_duration("2", TimeUnit::Millis).unwrap(), Duration::from_millis(2));
//! assert_eq!(parse_size("64k", 1).unwrap(), 65536);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::time::Duration;

/// A line of a text file (a kernel node, a log, a capture) that does not
/// have the shape its format promises. Shown as
/// `/proc/vmstat:12: cannot parse "pgfault x": expected "NAME VALUE"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: cannot parse {content:?}: expected {expected}")]
pub struct ParseError {
    /// The file (a kernel path as the kernel names it, or a user's file).
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// The offending text.
    pub content: String,
    /// What the format has there.
    pub expected: &'static str,
}

impl ParseError {
    /// An error for `content` at `path:line`.
    pub fn new(path: &str, line: usize, content: &str, expected: &'static str) -> Self {
        ParseError {
            path: path.to_string(),
            line,
            content: content.to_string(),
            expected,
        }
    }
}

/// Format CPUs in the kernel's list form (`%*pbl`): `[0, 1, 2, 3, 7]` →
/// `0-3,7`. The inverse of [`parse_cpu_list`] for sorted input.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

/// Parse a kernel CPU list such as `0-3,7` (from `online`, `related_cpus` in
/// list form, `cpulist`). Returns `None` on malformed input.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi): (u32, u32) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
                if lo > hi {
                    return None;
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

/// A CPU list (`0-1,3`) as a bit mask (bit N is CPU N): `0b1011`. `None`
/// when the list is malformed or names a CPU above 62 (the mask is an
/// `i64` level, as every resource value is).
pub fn cpu_list_mask(text: &str) -> Option<i64> {
    parse_cpu_list(text)?
        .into_iter()
        .try_fold(0i64, |m, c| (c < 63).then(|| m | 1 << c))
}

/// The CPUs of a mask made by [`cpu_list_mask`], in list form.
pub fn mask_cpu_list(mask: i64) -> String {
    let cpus: Vec<u32> = (0..63).filter(|c| mask >> c & 1 == 1).collect();
    format_cpu_list(&cpus)
}

/// Parse an integer as the kernel and our files write it: optional
/// surrounding whitespace, an optional sign, then decimal digits or
/// `0x`/`0X` and hex digits. `None` for anything else (including an
/// overflow of `i64`, `--5`, `0x-5` and the empty string).
pub fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude: u64 = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if hex.starts_with(['+', '-']) => return None,
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// The unit a bare number stands for in [`parse_duration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds (`ns`).
    Nanos,
    /// Microseconds (`us`).
    Micros,
    /// Milliseconds (`ms`).
    Millis,
    /// Seconds (`s`).
    Seconds,
}

impl TimeUnit {
    fn nanos(self) -> f64 {
        match self {
            TimeUnit::Nanos => 1.0,
            TimeUnit::Micros => 1e3,
            TimeUnit::Millis => 1e6,
            TimeUnit::Seconds => 1e9,
        }
    }
}

/// A value with a unit that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {reason}")]
pub struct UnitError {
    /// What was given.
    pub text: String,
    /// Why it is not a value (names the accepted units).
    pub reason: String,
}

fn unit_err(text: &str, reason: impl Into<String>) -> UnitError {
    UnitError {
        text: text.to_string(),
        reason: reason.into(),
    }
}

/// Split `1.5ms` into `(1.5, "ms")`; the number must be finite and ≥ 0.
fn split_number(text: &str) -> Result<(f64, &str), UnitError> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let value: f64 = num
        .parse()
        .map_err(|_| unit_err(text, "expected a number, optionally followed by a unit"))?;
    Ok((value, unit.trim()))
}

/// Parse a duration: a non-negative number with an optional unit (`ns`,
/// `us`/`µs`, `ms`, `s`, `m`, `h`); a bare number is in `bare`, so a flag
/// that always took milliseconds still does.
pub fn parse_duration(text: &str, bare: TimeUnit) -> Result<Duration, UnitError> {
    const UNITS: &str = "use ns, us, ms, s, m or h, e.g. 500ms or 10s";
    let (value, unit) = split_number(text)?;
    let scale = match unit {
        "" => bare.nanos(),
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => return Err(unit_err(text, format!("unknown unit {other:?}: {UNITS}"))),
    };
    let nanos = value * scale;
    if !nanos.is_finite() || nanos > u64::MAX as f64 {
        return Err(unit_err(text, "too long"));
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

/// Parse a size in bytes: a non-negative number with an optional binary
/// suffix, in any letter case (`k`/`K`/`KiB`/`kB`/`kb` = 1024,
/// `M`/`MiB`/`MB`, `G`/`GiB`/`GB`, `T`/`TiB`/`TB`; the kernel's `kB` is
/// 1024 too, and so is every `B` form here). A bare number is multiplied
/// by `bare` (1 for bytes, 1024 for a flag that always took KiB).
pub fn parse_size(text: &str, bare: u64) -> Result<u64, UnitError> {
    let (value, unit) = split_number(text)?;
    let power = match unit.to_ascii_lowercase().as_str() {
        "" => None,
        "b" => Some(0),
        "k" | "kib" | "kb" => Some(1),
        "m" | "mib" | "mb" => Some(2),
        "g" | "gib" | "gb" => Some(3),
        "t" | "tib" | "tb" => Some(4),
        _ => {
            return Err(unit_err(
                text,
                format!("unknown unit {unit:?}: use k, M, G or T (1024-based), e.g. 64k"),
            ))
        }
    };
    let scale = match power {
        None => bare as f64,
        Some(p) => 1024f64.powi(p),
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(unit_err(text, "too large"));
    }
    Ok(bytes.round() as u64)
}

/// The 1-based rank of the `pct` percentile of `n` samples by the
/// nearest-rank definition: the smallest rank `r` with at least `pct` % of
/// the samples at or below the `r`-th smallest, i.e. `ceil(pct/100 · n)`,
/// at least 1 and at most `n`. `None` for no samples. p50 of 1..=100 is the
/// 50th sample, p99 the 99th, p100 the last; p0 is the first.
///
/// ```
/// use lever_text::{nearest_rank, percentile_sorted};
/// assert_eq!(nearest_rank(100, 50.0), Some(50));
/// assert_eq!(nearest_rank(3, 99.0), Some(3));
/// assert_eq!(nearest_rank(0, 50.0), None);
/// let sorted: Vec<u32> = (1..=10).collect();
/// assert_eq!(percentile_sorted(&sorted, 90.0), Some(9));
/// ```
pub fn nearest_rank(n: u64, pct: f64) -> Option<u64> {
    if n == 0 {
        return None;
    }
    // pct · n / 100 in f64 is exact for the percentiles people ask for
    // (integers and halves) up to 2^53 samples.
    let r = (pct.clamp(0.0, 100.0) * n as f64 / 100.0).ceil() as u64;
    Some(r.clamp(1, n))
}

/// The `pct` percentile of samples sorted ascending, by [`nearest_rank`];
/// `None` for no samples.
pub fn percentile_sorted<T: Copy>(sorted: &[T], pct: f64) -> Option<T> {
    let r = nearest_rank(sorted.len() as u64, pct)?;
    sorted.get(r as usize - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn integers_as_the_kernel_writes_them() {
        assert_eq!(parse_int("123"), Some(123));
        assert_eq!(parse_int("+7"), Some(7));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("0X1f"), Some(31));
        assert_eq!(parse_int("-0x10"), Some(-16));
        assert_eq!(parse_int("  42\n"), Some(42));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-",
            "0x",
            "--5",
            "+-5",
            "0x-5",
            "0x+5",
            "1e3",
            "12 34",
            "abc",
            "9223372036854775808",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn durations_with_and_without_units() {
        let ms = Duration::from_millis;
        assert_eq!(parse_duration("10s", TimeUnit::Millis).unwrap(), ms(10_000));
        assert_eq!(
            parse_duration("10000", TimeUnit::Millis).unwrap(),
            ms(10_000)
        );
        assert_eq!(parse_duration("1.5s", TimeUnit::Millis).unwrap(), ms(1500));
        assert_eq!(
            parse_duration("250us", TimeUnit::Seconds).unwrap(),
            Duration::from_micros(250)
        );
        assert_eq!(
            parse_duration("2m", TimeUnit::Seconds).unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(parse_duration("0.5", TimeUnit::Seconds).unwrap(), ms(500));
        let e = parse_duration("10x", TimeUnit::Seconds).unwrap_err();
        assert!(e.to_string().contains("unknown unit \"x\""), "{e}");
        for bad in ["", "s", "-1s", "1..2s", "1e9"] {
            assert!(parse_duration(bad, TimeUnit::Seconds).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096", 1).unwrap(), 4096);
        assert_eq!(parse_size("4", 1024).unwrap(), 4096);
        assert_eq!(parse_size("64k", 1).unwrap(), 65536);
        assert_eq!(parse_size("2M", 1).unwrap(), 2 << 20);
        assert_eq!(parse_size("1GiB", 1).unwrap(), 1 << 30);
        assert_eq!(parse_size("512B", 1024).unwrap(), 512);
        assert!(parse_size("3q", 1).is_err());
        // Lowercase `kb` (as people type it) and terabytes.
        assert_eq!(parse_size("6291456kb", 1).unwrap(), 6291456 << 10);
        assert_eq!(parse_size("6g", 1).unwrap(), 6 << 30);
        assert_eq!(parse_size("2T", 1).unwrap(), 2 << 40);
        assert_eq!(parse_size("1TiB", 1).unwrap(), 1 << 40);
        assert_eq!(parse_size("1tb", 1).unwrap(), 1 << 40);
    }

    #[test]
    fn parse_error_names_file_and_line() {
        let e = ParseError::new("/proc/vmstat", 12, "pgfault x", "`NAME VALUE`");
        assert_eq!(
            e.to_string(),
            "/proc/vmstat:12: cannot parse \"pgfault x\": expected `NAME VALUE`"
        );
    }

    proptest! {
        #[test]
        fn every_i64_round_trips(v: i64) {
            prop_assert_eq!(parse_int(&v.to_string()), Some(v));
            if v >= 0 {
                prop_assert_eq!(parse_int(&format!("0x{v:x}")), Some(v));
            }
        }

        #[test]
        fn nearest_rank_is_the_definition(
            mut v in prop::collection::vec(0u32..50, 1..60),
            pct in prop_oneof![Just(0.0), Just(50.0), Just(99.0), Just(99.9), Just(100.0), 0.0f64..100.0],
        ) {
            v.sort_unstable();
            // The smallest sample with at least pct % of samples <= it.
            let want = v.iter().copied().find(|&x| {
                let at_or_below = v.iter().filter(|&&y| y <= x).count() as f64;
                at_or_below * 100.0 >= pct * v.len() as f64
            });
            prop_assert_eq!(percentile_sorted(&v, pct), want);
        }

        #[test]
        fn never_panics(s in "\\PC{0,24}") {
            let _ = parse_int(&s);
            let _ = parse_duration(&s, TimeUnit::Millis);
            let _ = parse_size(&s, 1);
        }
    }
}
