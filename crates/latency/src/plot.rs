//! `--plot FILE`: the latency histograms as an SVG line chart, one line
//! (one `<path class="thread">`) per thread, latency in µs along x
//! (linear), the sample count along y on a log scale (a bucket with no
//! sample breaks the line: log 0 has no place; the axis starts at 10^-0.5
//! so a single sample is not drawn on the axis line), axes labelled with their
//! units, a legend naming each thread and its CPU.

use crate::report::LatencyReport;
use std::fmt::Write;

const W: f64 = 800.0;
const H: f64 = 450.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 55.0;
/// Line colours, one per thread (cycled).
const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A "nice" step for about `n` ticks over `span`: 1, 2 or 5 × 10^k.
fn tick_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// The SVG document, or `None` when no thread has a histogram with a
/// sample in it.
pub fn svg(r: &LatencyReport, title: &str) -> Option<String> {
    let hists: Vec<_> = r
        .threads
        .iter()
        .filter_map(|t| t.histogram.as_ref().map(|h| (t, h)))
        .collect();
    let x_max = hists
        .iter()
        .filter_map(|(_, h)| h.range_us().map(|(_, hi)| hi))
        .max()?
        .max(1) as f64;
    let y_max = hists
        .iter()
        .flat_map(|(_, h)| h.buckets.iter().copied())
        .max()?
        .max(1);
    let decades = (y_max as f64).log10().ceil().max(1.0);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x = |us: f64| LEFT + us / x_max * pw;
    // The axis starts half a decade below 1 so that a bucket of one
    // sample — the outliers that matter — is drawn above the axis line.
    let floor = 0.5;
    let y = |count: f64| TOP + ph - (count.log10() + floor) / (decades + floor) * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    // Axes, ticks and grid.
    let _ = writeln!(
        s,
        r#"<path class="axis" d="M{LEFT},{TOP} V{} H{}" fill="none" stroke="black"/>"#,
        TOP + ph,
        LEFT + pw
    );
    let step = tick_step(x_max, 8.0);
    let mut t = 0.0;
    while t <= x_max {
        let _ = writeln!(
            s,
            r#"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="black"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"#,
            x(t),
            TOP + ph,
            TOP + ph + 5.0,
            TOP + ph + 18.0,
            t
        );
        t += step;
    }
    for d in 0..=decades as u32 {
        let yy = y(10f64.powi(d as i32));
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">1e{d}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            yy + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text class="x-label" x="{}" y="{}" text-anchor="middle">latency (µs)</text>"#,
        LEFT + pw / 2.0,
        H - 12.0
    );
    let _ = writeln!(
        s,
        r#"<text class="y-label" x="16" y="{0}" text-anchor="middle" transform="rotate(-90 16 {0})">samples (log scale)</text>"#,
        TOP + ph / 2.0
    );
    // One line per thread; an empty bucket starts a new segment.
    for (i, (th, h)) in hists.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut d = String::new();
        let mut pen_down = false;
        for (us, &n) in h.buckets.iter().enumerate().take(x_max as usize + 1) {
            if n == 0 {
                pen_down = false;
                continue;
            }
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if pen_down { "L" } else { "M" },
                x(us as f64),
                y(n as f64)
            );
            pen_down = true;
        }
        let name = match th.cpu {
            Some(c) => format!("T{} CPU {c}", th.index),
            None => format!("T{}", th.index),
        };
        let _ = writeln!(
            s,
            r#"<path class="thread" data-thread="{}" d="{}" fill="none" stroke="{colour}" stroke-width="1.5"><title>{}</title></path>"#,
            th.index,
            d.trim_end(),
            esc(&name)
        );
        let ly = TOP + 14.0 + i as f64 * 16.0;
        let lx = LEFT + pw - 140.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            lx + 20.0,
            lx + 26.0,
            ly + 4.0,
            esc(&format!(
                "{name}{}",
                if h.overflows > 0 {
                    format!(" (+{} over)", h.overflows)
                } else {
                    String::new()
                }
            ))
        );
    }
    s.push_str("</svg>\n");
    Some(s)
}

/// Write the plot of `r` to `path`; `Ok(false)` when there is nothing to
/// plot (no histogram with samples).
pub fn write(path: &std::path::Path, r: &LatencyReport) -> Result<bool, crate::LatencyError> {
    let title = format!(
        "lever latency: {} thread(s), policy {}",
        r.threads.len(),
        r.policy.as_deref().unwrap_or("-")
    );
    let Some(doc) = svg(r, &title) else {
        return Ok(false);
    };
    std::fs::write(path, doc).map_err(|source| crate::LatencyError::File {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(100.0, 8.0), 20.0);
        assert_eq!(tick_step(9.0, 8.0), 2.0);
        assert_eq!(tick_step(2500.0, 8.0), 500.0);
    }
}
