//! Numbers as people read them, one function per kind of figure, shared
//! by the page and the Markdown: memory in KiB/MiB/GiB (the kernel's
//! `kB` is 1024 bytes), times in µs/ms/s, counts with thousands
//! separators, and a negative figure with its minus sign kept (never
//! `-3 kB` rounded to `-0.0` or hidden).
//!
//! | unit in the run | value | shown |
//! |---|---|---|
//! | `kB` | 481400 | `470 MiB` |
//! | `kB` | 25200000 | `24.0 GiB` |
//! | `kB` | -3 | `−3 KiB` |
//! | `ms` | 126300 | `126.3 s` |
//! | `us` | 0.4 | `0.400 µs` |
//! | `MB/s` | 12000 | `12,000 MB/s` |

/// The minus sign for a negative figure (U+2212, so that it does not
/// read as a dash or a hyphen in a table).
pub const MINUS: char = '−';

/// `v` with three significant digits for small values, no decimals from
/// 100 up or for a whole number; thousands separated by commas
/// (`12,000`).
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    let body = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 || a.fract() == 0.0 {
        thousands(a.round())
    } else if a >= 10.0 {
        format!("{a:.1}")
    } else if a >= 1.0 {
        format!("{a:.2}")
    } else if a >= 0.01 {
        format!("{a:.3}")
    } else {
        format!("{a:.2e}")
    };
    signed(v, body)
}

/// `1234567` → `1,234,567` (the integer part of a non-negative value).
fn thousands(a: f64) -> String {
    let digits = format!("{a:.0}");
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn signed(v: f64, body: String) -> String {
    if v < 0.0 && body.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("{MINUS}{body}")
    } else {
        body
    }
}

/// Memory given in KiB (`/proc/meminfo`'s `kB`), in the largest binary
/// unit that keeps it at 1 or more: `512 KiB`, `13.7 MiB`, `470 MiB`,
/// `24.0 GiB`; three significant digits.
pub fn kib(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    let (x, unit) = if a >= 1024.0 * 1024.0 {
        (a / (1024.0 * 1024.0), "GiB")
    } else if a >= 1024.0 {
        (a / 1024.0, "MiB")
    } else {
        (a, "KiB")
    };
    let body = if unit == "KiB" || x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    format!("{} {unit}", signed(v, body))
}

/// A time given in ms: `ms` below a second, else seconds.
pub fn ms(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{} s", number(v / 1000.0))
    } else {
        format!("{} ms", number(v))
    }
}

/// A time given in µs: `µs` below a millisecond, else ms.
pub fn us(v: f64) -> String {
    if v.abs() >= 1000.0 {
        ms(v / 1000.0)
    } else {
        format!("{} µs", number(v))
    }
}

/// Any metric's value with its unit, in the unit's human form. Units the
/// run writes: `kB` (memory, KiB), `ms`, `us`, `ns`, `%`, rates (`MB/s`,
/// `DMIPS`, …) and counts (`CPUs`, `requests`, …).
pub fn value(v: f64, unit: &str) -> String {
    match unit {
        "kB" | "KiB" => kib(v),
        "MiB" => kib(v * 1024.0),
        "ms" => ms(v),
        "us" | "µs" => us(v),
        "ns" => format!("{} ns", number(v)),
        "s" => format!("{} s", number(v)),
        "%" => format!("{} %", percent(v)),
        "" => number(v),
        u => format!("{} {u}", number(v)),
    }
}

/// A unit as people write it: `us` (ASCII in the run, as LMBench
/// writes it) is `µs`.
pub fn unit(u: &str) -> &str {
    match u {
        "us" => "µs",
        u => u,
    }
}

/// A percentage with one decimal (`12.5`), or none from 100 up.
pub fn percent(v: f64) -> String {
    if v.abs() >= 100.0 {
        number(v)
    } else {
        signed(v, format!("{:.1}", v.abs()))
    }
}

/// `Some` value with its unit, or `—`.
pub fn value_or_dash(v: Option<f64>, unit: &str) -> String {
    v.map_or("—".into(), |v| value(v, unit))
}

/// `lever bench`'s figures: two decimals, four below 0.1 (so 0.05 µs
/// does not read 0.05 with half its digits lost), thousands separated.
pub fn bench(v: f64) -> String {
    let a = v.abs();
    let body = if a != 0.0 && a < 0.1 {
        format!("{a:.4}")
    } else {
        let s = format!("{a:.2}");
        let (int, frac) = s.split_once('.').unwrap_or((&s, "00"));
        format!("{}.{frac}", thousands(int.parse::<f64>().unwrap_or(0.0)))
    };
    signed(v, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_reads_as_people_write_it() {
        // (value, unit, shown): the issue's `25.2M kB`, `481.4k kB`,
        // `-3 kB` and `24.6k MB` first.
        let table: &[(f64, &str, &str)] = &[
            (25_200_000.0, "kB", "24.0 GiB"),
            (481_400.0, "kB", "470 MiB"),
            (-3.0, "kB", "−3 KiB"),
            (24_600.0 * 1024.0, "kB", "24.0 GiB"),
            (6_291_456.0, "kB", "6.00 GiB"),
            (14_000.0, "kB", "13.7 MiB"),
            (512.0, "kB", "512 KiB"),
            (0.0, "kB", "0 KiB"),
            (-0.4, "kB", "0 KiB"),
            (1023.0, "kB", "1023 KiB"),
            (1024.0, "kB", "1.00 MiB"),
            (-2048.0, "kB", "−2.00 MiB"),
            (126_300.0, "ms", "126 s"),
            (11_408.539, "ms", "11.4 s"),
            (580.0, "ms", "580 ms"),
            (1.5, "ms", "1.50 ms"),
            (0.4, "us", "0.400 µs"),
            (37.0, "us", "37 µs"),
            (37.26, "us", "37.3 µs"),
            (1468.25, "us", "1.47 ms"),
            (88.93, "ns", "88.9 ns"),
            (12_000.0, "MB/s", "12,000 MB/s"),
            (39_702.0, "DMIPS", "39,702 DMIPS"),
            (12.345, "%", "12.3 %"),
            (742.0, "%", "742 %"),
            (8.0, "CPUs", "8 CPUs"),
            (f64::NAN, "kB", "—"),
        ];
        for &(v, unit, shown) in table {
            assert_eq!(value(v, unit), shown, "{v} {unit}");
        }
    }

    #[test]
    fn bench_figures_as_lever_bench_prints_them() {
        assert_eq!(bench(437.26), "437.26");
        assert_eq!(bench(4_444_444.5), "4,444,444.50");
        assert_eq!(bench(0.05), "0.0500");
        assert_eq!(bench(0.0), "0.00");
        assert_eq!(bench(-1.5), "−1.50");
    }
}
