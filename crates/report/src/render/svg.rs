//! The page's charts as inline SVG (no script, no fonts but the page's):
//! a log-scale histogram, stacked horizontal bars, bars with min/max
//! whiskers, and a waterfall. Each returns one `<svg class="chart KIND">`
//! element; every text in it is escaped.

use super::esc;
use super::units::ms;
use std::fmt::Write as _;

/// Colours for series and segments (colour-blind-safe Tableau 10).
pub const COLOURS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

const W: f64 = 760.0;

fn open(kind: &str, h: f64, title: &str) -> String {
    format!(
        "<svg class=\"chart {kind}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\"><title>{}</title>\n",
        esc(title)
    )
}

/// The chart's title, from the left edge (a long title, such as a load
/// description, is never cut off on the left).
fn heading(s: &mut String, title: &str) {
    let _ = writeln!(
        s,
        "<text x=\"8\" y=\"18\" class=\"t\">{}</text>",
        esc(title)
    );
}

/// A short number: 3 significant digits, k/M for large values.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e7 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// One histogram series: a name and counts per bucket of `bucket` units.
pub struct Histogram<'a> {
    /// Legend.
    pub name: String,
    /// Counts per bucket, from 0.
    pub counts: &'a [u64],
    /// Bucket width (µs).
    pub bucket: f64,
}

/// Histograms on one log-scale count axis, as steps.
pub fn histogram(title: &str, x_label: &str, series: &[Histogram]) -> String {
    let (left, right, top, bottom, h) = (60.0, 180.0, 30.0, 40.0, 300.0);
    let (pw, ph) = (W - left - right, h - top - bottom);
    let x_max = series
        .iter()
        .map(|s| s.counts.len() as f64 * s.bucket)
        .fold(1.0, f64::max);
    let y_max = series
        .iter()
        .flat_map(|s| s.counts.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let decades = y_max.log10().ceil().max(1.0);
    let x = |v: f64| left + v / x_max * pw;
    // Counts of 1 sit half a decade above the axis, so single outliers show.
    let y = |n: f64| top + ph - (n.log10() + 0.5) / (decades + 0.5) * ph;
    let mut s = open("histogram", h, title);
    heading(&mut s, title);
    for d in 0..=decades as i32 {
        let yy = y(10f64.powi(d));
        let _ = writeln!(s, "<line x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" class=\"grid\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">1e{d}</text>", left + pw, left - 4.0, yy + 4.0);
    }
    for k in 0..=5 {
        let v = x_max * k as f64 / 5.0;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x(v),
            top + ph + 16.0,
            short(v)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} — counts on a log scale</text>",
        left + pw / 2.0,
        h - 6.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        "<path d=\"M{left},{top} V{} H{}\" class=\"axis\"/>",
        top + ph,
        left + pw
    );
    for (i, ser) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let mut d = String::new();
        for (b, &n) in ser.counts.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let (x0, x1) = (x(b as f64 * ser.bucket), x((b + 1) as f64 * ser.bucket));
            let _ = write!(
                d,
                "M{x0:.1},{:.1} V{:.1} H{x1:.1} V{:.1} ",
                top + ph,
                y(n as f64),
                top + ph
            );
        }
        let _ = writeln!(s, "<path d=\"{}\" fill=\"{c}\" fill-opacity=\"0.45\" stroke=\"{c}\"><title>{}</title></path>", d.trim_end(), esc(&ser.name));
        let ly = top + 10.0 + i as f64 * 16.0;
        let _ = writeln!(s, "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{c}\"/><text x=\"{}\" y=\"{}\">{}</text>", W - right + 10.0, ly - 9.0, W - right + 26.0, ly, esc(&ser.name));
    }
    s.push_str("</svg>\n");
    s
}

/// One stacked bar: its label and (segment, value) parts.
pub struct Stack {
    /// Bar label.
    pub label: String,
    /// Segments, left to right.
    pub parts: Vec<(String, f64)>,
}

/// Horizontal stacked bars on one scale; `fmt` writes a value with its
/// unit.
pub fn stacked(title: &str, bars: &[Stack], fmt: &dyn Fn(f64) -> String) -> String {
    let (left, right, top, row) = (200.0, 20.0, 30.0, 34.0);
    let names: Vec<&str> = {
        let mut n: Vec<&str> = Vec::new();
        for b in bars {
            for (p, _) in &b.parts {
                if !n.contains(&p.as_str()) {
                    n.push(p);
                }
            }
        }
        n
    };
    let h = top + row * bars.len() as f64 + 30.0 + 18.0 * names.len().div_ceil(4) as f64;
    let pw = W - left - right;
    let max = bars
        .iter()
        .map(|b| b.parts.iter().map(|p| p.1.max(0.0)).sum::<f64>())
        .fold(1.0, f64::max);
    let mut s = open("stacked", h, title);
    heading(&mut s, title);
    for (i, b) in bars.iter().enumerate() {
        let y = top + i as f64 * row;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 17.0,
            esc(&b.label)
        );
        let mut x = left;
        for (name, v) in &b.parts {
            let w = v.max(0.0) / max * pw;
            let c = COLOURS[names.iter().position(|n| n == name).unwrap_or(0) % COLOURS.len()];
            let _ = writeln!(s, "<rect class=\"seg\" x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"24\" fill=\"{c}\"><title>{}: {}</title></rect>", esc(name), esc(&fmt(*v)));
            x += w;
        }
        let total: f64 = b.parts.iter().map(|p| p.1.max(0.0)).sum();
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"end\" class=\"in\">{}</text>",
            (x - 4.0).max(left + 60.0),
            y + 17.0,
            esc(&fmt(total))
        );
    }
    let ly = top + row * bars.len() as f64 + 14.0;
    for (i, n) in names.iter().enumerate() {
        let (lx, yy) = (
            left + (i % 4) as f64 * (pw / 4.0),
            ly + (i / 4) as f64 * 18.0,
        );
        let c = COLOURS[i % COLOURS.len()];
        let _ = writeln!(s, "<rect x=\"{lx}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{c}\"/><text x=\"{}\" y=\"{yy}\">{}</text>", yy - 9.0, lx + 16.0, esc(n));
    }
    s.push_str("</svg>\n");
    s
}

/// One bar of a whisker chart.
pub struct Bar {
    /// Which run.
    pub run: String,
    /// The value (median).
    pub value: f64,
    /// Smallest and largest sample, when there are samples.
    pub range: Option<(f64, f64)>,
}

/// One group of bars (a test): one bar per run.
pub struct Group {
    /// Test name.
    pub label: String,
    /// Unit.
    pub unit: String,
    /// One bar per run.
    pub bars: Vec<Bar>,
}

/// A scale shared by every bar of a chart: linear from 0, or log10 when
/// the values span more than [`LOG_SPAN`] (0.76 ns beside 157 ns would
/// leave the small ones invisible on a linear axis).
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

/// Largest over smallest value beyond which a chart's axis is log10.
pub const LOG_SPAN: f64 = 50.0;

impl Scale {
    fn new(values: impl Iterator<Item = f64>) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| v.is_finite()) {
            hi = hi.max(v);
            if v > 0.0 {
                lo = lo.min(v);
            }
        }
        if hi <= 0.0 {
            return Scale {
                lo: 0.0,
                hi: 1.0,
                log: false,
            };
        }
        if lo.is_finite() && hi / lo > LOG_SPAN {
            let (a, b) = (lo.log10().floor(), hi.log10().ceil());
            Scale {
                lo: 10f64.powf(a),
                hi: 10f64.powf(b.max(a + 1.0)),
                log: true,
            }
        } else {
            Scale {
                lo: 0.0,
                hi,
                log: false,
            }
        }
    }

    /// Where `v` falls, 0..=1 of the plot's width.
    fn at(&self, v: f64) -> f64 {
        let f = if self.log {
            if v <= 0.0 {
                return 0.0;
            }
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            v / self.hi
        };
        f.clamp(0.0, 1.0)
    }

    /// Tick values: each decade on a log axis, five steps on a linear one.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            (a..=b).map(|d| 10f64.powi(d)).collect()
        } else {
            (0..=4).map(|k| self.hi * k as f64 / 4.0).collect()
        }
    }
}

/// Horizontal bars with min/max whiskers, every group on one shared
/// scale (a chart holds figures of one unit; `fmt` writes a value with
/// it).
pub fn whiskers(title: &str, groups: &[Group], fmt: &dyn Fn(f64) -> String) -> String {
    let (left, right, top, bar) = (230.0, 130.0, 30.0, 14.0);
    let rows: usize = groups.iter().map(|g| g.bars.len()).sum();
    let plot_h = rows as f64 * (bar + 2.0) + groups.len() as f64 * 8.0;
    // A legend of the runs when a test has several bars.
    let runs: Vec<&str> = groups
        .iter()
        .max_by_key(|g| g.bars.len())
        .map(|g| g.bars.iter().map(|b| b.run.as_str()).collect())
        .unwrap_or_default();
    let legend = if runs.len() > 1 { 18.0 } else { 0.0 };
    let h = top + plot_h + 34.0 + legend;
    let pw = W - left - right;
    let scale = Scale::new(groups.iter().flat_map(|g| {
        g.bars
            .iter()
            .flat_map(|b| [Some(b.value), b.range.map(|r| r.0), b.range.map(|r| r.1)])
            .flatten()
    }));
    let x = |v: f64| left + scale.at(v) * pw;
    let mut s = open("whiskers", h, title);
    heading(&mut s, title);
    let axis_y = top + plot_h;
    for t in scale.ticks() {
        let _ = writeln!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{axis_y:.1}\" class=\"grid\"/><text x=\"{0:.1}\" y=\"{1:.1}\" text-anchor=\"middle\">{2}</text>",
            x(t),
            axis_y + 14.0,
            esc(&fmt(t))
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        left + pw / 2.0,
        axis_y + 28.0,
        if scale.log {
            "one scale for every test, log10"
        } else {
            "one scale for every test"
        }
    );
    let mut y = top;
    for g in groups {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + bar - 2.0,
            esc(&g.label)
        );
        for (i, b) in g.bars.iter().enumerate() {
            let c = COLOURS[i % COLOURS.len()];
            let w = (x(b.value) - left).max(0.0);
            let _ = writeln!(s, "<rect class=\"bar\" x=\"{left}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{bar}\" fill=\"{c}\"><title>{}: {}</title></rect>", esc(&b.run), esc(&fmt(b.value)));
            if let Some((lo, hi)) = b.range {
                let (x0, x1, ym) = (x(lo), x(hi), y + bar / 2.0);
                let _ = writeln!(s, "<path class=\"whisker\" d=\"M{x0:.1},{ym:.1} H{x1:.1} M{x0:.1},{:.1} V{:.1} M{x1:.1},{:.1} V{:.1}\"/>", y + 2.0, y + bar - 2.0, y + 2.0, y + bar - 2.0);
            }
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{:.1}\">{}</text>",
                left + pw + 6.0,
                y + bar - 3.0,
                esc(&fmt(b.value))
            );
            y += bar + 2.0;
        }
        y += 8.0;
    }
    let _ = writeln!(
        s,
        "<path d=\"M{left},{top} V{axis_y:.1} H{}\" class=\"axis\"/>",
        left + pw
    );
    if legend > 0.0 {
        let ly = axis_y + 44.0;
        for (i, run) in runs.iter().enumerate() {
            let lx = 8.0 + i as f64 * 250.0;
            let _ = writeln!(
                s,
                "<rect x=\"{lx}\" y=\"{:.1}\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{ly:.1}\">{}</text>",
                ly - 9.0,
                COLOURS[i % COLOURS.len()],
                lx + 16.0,
                esc(run)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// One row of a waterfall.
pub struct Step {
    /// Stage name.
    pub label: String,
    /// Start, ms since the first stage.
    pub start: f64,
    /// Length, ms (0 for a point in time).
    pub len: f64,
    /// Drawn as a total (from 0, in grey).
    pub total: bool,
    /// The figure printed at the right, ms (a mark's time since the
    /// kernel started, a stage's length).
    pub shown: f64,
}

/// Boot stages as a waterfall: each stage starts where the one before ended.
pub fn waterfall(title: &str, steps: &[Step]) -> String {
    let (left, right, top, row) = (220.0, 90.0, 30.0, 22.0);
    let h = top + row * steps.len() as f64 + 24.0;
    let pw = W - left - right;
    let end = steps.iter().map(|s| s.start + s.len).fold(1.0, f64::max);
    let x = |v: f64| left + v / end * pw;
    let mut s = open("waterfall", h, title);
    heading(&mut s, title);
    for (i, st) in steps.iter().enumerate() {
        let y = top + i as f64 * row;
        let c = if st.total {
            "#555"
        } else {
            COLOURS[i % COLOURS.len()]
        };
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 14.0,
            esc(&st.label)
        );
        if st.len > 0.0 {
            let _ = writeln!(s, "<rect class=\"stage\" x=\"{:.1}\" y=\"{y}\" width=\"{:.1}\" height=\"16\" fill=\"{c}\"><title>{}: {}</title></rect>", x(st.start), (x(st.start + st.len) - x(st.start)).max(1.0), esc(&st.label), ms(st.len));
        } else {
            let _ = writeln!(
                s,
                "<path class=\"mark\" d=\"M{:.1},{y} v16\" stroke=\"{c}\" stroke-width=\"3\"/>",
                x(st.start)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            left + pw + 6.0,
            y + 14.0,
            ms(st.shown)
        );
    }
    let yb = top + row * steps.len() as f64 + 14.0;
    for k in 0..=4 {
        let v = end * k as f64 / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{yb}\" text-anchor=\"middle\">{}</text>",
            x(v),
            ms(v)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_zero_inputs_draw_without_nan() {
        let charts = [
            histogram("h", "µs", &[]),
            histogram(
                "h",
                "µs",
                &[Histogram {
                    name: "CPU 0".into(),
                    counts: &[0, 0],
                    bucket: 1.0,
                }],
            ),
            stacked("s", &[], &super::super::units::kib),
            stacked(
                "s",
                &[Stack {
                    label: "a".into(),
                    parts: vec![("free".into(), 0.0), ("x".into(), -5.0)],
                }],
                &super::super::units::kib,
            ),
            whiskers(
                "w",
                &[Group {
                    label: "t".into(),
                    unit: "us".into(),
                    bars: vec![Bar {
                        run: "#1".into(),
                        value: 0.0,
                        range: Some((0.0, 0.0)),
                    }],
                }],
                &|v| format!("{v} us"),
            ),
            waterfall("f", &[]),
        ];
        for c in &charts {
            assert!(c.starts_with("<svg class=\"chart "), "{c}");
            assert!(c.ends_with("</svg>\n"), "{c}");
            assert!(!c.contains("NaN") && !c.contains("inf"), "{c}");
        }
    }

    /// The `width` of each `<rect class="bar">`, in order.
    fn bar_widths(svg: &str) -> Vec<f64> {
        svg.match_indices("<rect class=\"bar\"")
            .map(|(i, _)| {
                let w = &svg[i..][svg[i..].find("width=\"").unwrap() + 7..];
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    fn group(label: &str, value: f64) -> Group {
        Group {
            label: label.into(),
            unit: "us".into(),
            bars: vec![Bar {
                run: "#1".into(),
                value,
                range: None,
            }],
        }
    }

    #[test]
    fn whiskers_share_one_scale() {
        // 10 and 20 on one linear scale: the second bar twice the first
        // (each on its own scale both would fill the plot).
        let svg = whiskers("w", &[group("a", 10.0), group("b", 20.0)], &|v| {
            format!("{v}")
        });
        let w = bar_widths(&svg);
        assert!((w[1] - 2.0 * w[0]).abs() < 0.2, "{w:?}");
        assert!(svg.contains("one scale for every test</text>"));
        // 0.76 beside 157 spans more than LOG_SPAN: one log10 scale, a
        // decade apart is a fixed distance.
        let svg = whiskers(
            "w",
            &[group("a", 1.0), group("b", 10.0), group("c", 100.0)],
            &|v| format!("{v}"),
        );
        let w = bar_widths(&svg);
        assert!(((w[2] - w[1]) - (w[1] - w[0])).abs() < 0.2, "{w:?}");
        assert!(svg.contains("log10"));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(0.4), "0.400");
        assert_eq!(short(12.345), "12.35");
        assert_eq!(short(3469.0), "3469");
        assert_eq!(short(126_300.0), "126.3k");
        assert_eq!(short(25_000_000.0), "25.0M");
    }
}
