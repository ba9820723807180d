//! Numbers and units as every report prints them: one helper per unit, so a
//! millisecond or a megabyte looks the same in every command.

use lever_measure::Avail;
use std::fmt::Display;

/// `v`, or `-` when there is none.
pub fn or_dash<T: Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// `v` with `decimals` digits after the point.
pub fn fixed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// [`fixed`], or `-` when there is no value.
pub fn fixed_or_dash(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |v| fixed(v, decimals))
}

/// A percentage with one decimal (`12.5`).
pub fn pct(v: f64) -> String {
    fixed(v, 1)
}

/// `part` as a percentage of `whole`, one decimal.
#[cfg_attr(not(feature = "flamegraph"), allow(dead_code))]
pub fn pct_of(part: u64, whole: u64) -> String {
    pct(100.0 * part as f64 / whole as f64)
}

/// Nanoseconds as milliseconds, three decimals (`1.500`).
pub fn ms_from_ns(ns: u64) -> String {
    fixed(ns as f64 / 1e6, 3)
}

/// Nanoseconds as microseconds, one decimal (`12.3`).
pub fn us_from_ns(ns: u64) -> String {
    fixed(ns as f64 / 1e3, 1)
}

/// Nanoseconds as seconds with `decimals` digits.
pub fn s_from_ns(ns: u64, decimals: usize) -> String {
    fixed(ns as f64 / 1e9, decimals)
}

/// Kilobytes as MB (1024-based), one decimal; never `-0.0` (a few negative
/// kB round to zero).
pub fn mb_from_kb(kb: f64) -> String {
    let v = kb / 1024.0;
    let v = if v.abs() < 0.05 { 0.0 } else { v };
    fixed(v, 1)
}

/// Bytes as MiB, one decimal.
pub fn mib_from_bytes(bytes: f64) -> String {
    fixed(bytes / (1024.0 * 1024.0), 1)
}

/// kHz as MHz: whole when exact (`1958`), else one decimal; `-` for none.
pub fn mhz_from_khz(khz: Option<u64>) -> String {
    match khz {
        Some(k) if k % 1000 == 0 => format!("{}", k / 1000),
        Some(k) => fixed(k as f64 / 1000.0, 1),
        None => "-".into(),
    }
}

/// Hz as whole MHz (rounded down); `-` for none.
pub fn mhz_from_hz(hz: Option<u64>) -> String {
    or_dash(hz.map(|h| h / 1_000_000))
}

/// A measured value through `show`, or `n/a` where the machine lacks it.
pub fn avail_or_na<T>(a: &Avail<T>, show: impl FnOnce(&T) -> String) -> String {
    match a {
        Avail::Value(v) => show(v),
        Avail::Unavailable(_) => "n/a".into(),
    }
}

/// A value as a person reads it in its unit: frequencies scaled to GHz,
/// MHz or kHz (`2000000 kHz` → `2.0 GHz`, `315000000 Hz` → `315 MHz`,
/// `1958400 kHz` → `1.9584 GHz`), other units appended (`500 us`), and
/// unitless levels and enum names as they are.
pub fn with_unit(value: &str, unit: &str) -> String {
    let hz_per_unit: Option<u64> = match unit {
        "Hz" => Some(1),
        "kHz" => Some(1_000),
        "MHz" => Some(1_000_000),
        _ => None,
    };
    let Ok(n) = value.trim().parse::<i64>() else {
        return value.to_string();
    };
    if let Some(scale) = hz_per_unit {
        let hz = i128::from(n) * i128::from(scale);
        let (div, name) = match hz.unsigned_abs() {
            a if a >= 1_000_000_000 => (1_000_000_000, "GHz"),
            a if a >= 1_000_000 => (1_000_000, "MHz"),
            a if a >= 1_000 => (1_000, "kHz"),
            _ => (1, "Hz"),
        };
        // Whole Hz are exact; only the display is scaled.
        let text = format!("{:.6}", hz as f64 / div as f64);
        let text = text.trim_end_matches('0');
        // GHz keeps one decimal (`2.0 GHz`); smaller units drop the point.
        let text = match (text.strip_suffix('.'), name) {
            (Some(whole), "GHz") => format!("{whole}.0"),
            (Some(whole), _) => whole.to_string(),
            (None, _) => text.to_string(),
        };
        return format!("{text} {name}");
    }
    match unit {
        "" | "level" => n.to_string(),
        "percent" => format!("{n} %"),
        u => format!("{n} {u}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(ms_from_ns(1_500_000), "1.500");
        assert_eq!(us_from_ns(12_345), "12.3");
        assert_eq!(s_from_ns(1_234_567_891, 6), "1.234568");
        assert_eq!(mb_from_kb(-10.0), "0.0");
        assert_eq!(mb_from_kb(2048.0), "2.0");
        assert_eq!(mib_from_bytes(1572864.0), "1.5");
        assert_eq!(mhz_from_khz(Some(1_958_400)), "1958.4");
        assert_eq!(mhz_from_khz(Some(300_000)), "300");
        assert_eq!(mhz_from_khz(None), "-");
        assert_eq!(mhz_from_hz(Some(812_999_999)), "812");
        assert_eq!(pct_of(1, 8), "12.5");
        assert_eq!(or_dash(None::<u32>), "-");
        assert_eq!(fixed_or_dash(Some(2.0 / 3.0), 2), "0.67");
        assert_eq!(
            avail_or_na(&Avail::<u64>::Unavailable("x".into()), |v| v.to_string()),
            "n/a"
        );
    }

    #[test]
    fn values_read_in_their_unit() {
        assert_eq!(with_unit("2000000000", "Hz"), "2.0 GHz");
        assert_eq!(with_unit("2000000", "kHz"), "2.0 GHz");
        assert_eq!(with_unit("315000000", "Hz"), "315 MHz");
        assert_eq!(with_unit("1958400", "kHz"), "1.9584 GHz");
        assert_eq!(with_unit("806400", "kHz"), "806.4 MHz");
        assert_eq!(with_unit("300000", "kHz"), "300 MHz");
        assert_eq!(with_unit("950000", "us"), "950000 us");
        assert_eq!(with_unit("512", "level"), "512");
        assert_eq!(with_unit("60", "percent"), "60 %");
        assert_eq!(with_unit("performance", "level"), "performance");
        assert_eq!(with_unit("-1", "us"), "-1 us");
    }
}
