//! A tiny hand-written SVG line plot (no dependencies): axes with five
//! ticks each, one polyline per series, a legend. Series differ in colour,
//! dash pattern and width (earlier series drawn wider, underneath), so two
//! series with the same values — refaults and pswpin when every refault is
//! a swap-in — both stay visible. [`stack`] puts plots one above another.

use std::fmt::Write as _;

/// One named series of (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line plot.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlot {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Dash patterns, one per series (none = solid).
const DASHES: [&str; 6] = ["", "7 4", "2 3", "10 3 2 3", "4 2", "1 4"];

/// The SVG attributes that tell series `i` of `n` apart.
fn style(i: usize, n: usize) -> String {
    let color = COLORS[i % COLORS.len()];
    let width = 1.5 + 1.2 * (n.saturating_sub(i + 1)) as f64;
    let dash = DASHES[i % DASHES.len()];
    let dash = if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    };
    format!(r#"stroke="{color}" stroke-width="{width:.1}"{dash}"#)
}

/// Plots stacked vertically in one SVG document.
pub fn stack(plots: &[LinePlot]) -> String {
    let (w, h) = (
        LinePlot::WIDTH,
        LinePlot::HEIGHT * plots.len().max(1) as f64,
    );
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    s.push('\n');
    for (i, p) in plots.iter().enumerate() {
        s += &p.render_at(i as f64 * LinePlot::HEIGHT);
    }
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn tick(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

impl LinePlot {
    /// Width of one plot, px.
    pub const WIDTH: f64 = 800.0;
    /// Height of one plot, px.
    pub const HEIGHT: f64 = 420.0;

    /// Render as a standalone SVG document.
    pub fn render(&self) -> String {
        self.render_at(0.0)
    }

    /// Render as an `<svg>` element placed `y` px down (nested in
    /// [`stack`]'s document, or standalone at 0).
    fn render_at(&self, y: f64) -> String {
        let (w, h) = (Self::WIDTH, Self::HEIGHT);
        let (left, right, top, bottom) = (70.0, 170.0, 40.0, 50.0);
        let (pw, ph) = (w - left - right, h - top - bottom);
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        for &(x, y) in pts {
            if x.is_finite() && y.is_finite() {
                x0 = x0.min(x);
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= 0.0 {
            y1 = 1.0;
        }
        let sx = |x: f64| left + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| top + ph - y / y1 * ph;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" y="{y}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            left + pw / 2.0,
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        for k in 0..=4 {
            let f = k as f64 / 4.0;
            let (xv, yv) = (x0 + f * (x1 - x0), f * y1);
            let (xp, yp) = (sx(xv), sy(yv));
            let _ = writeln!(
                s,
                r##"<line x1="{xp:.1}" y1="{}" x2="{xp:.1}" y2="{}" stroke="#ccc"/><text x="{xp:.1}" y="{}" text-anchor="middle">{}</text>"##,
                top,
                top + ph,
                top + ph + 16.0,
                tick(xv)
            );
            let _ = writeln!(
                s,
                r##"<line x1="{left}" y1="{yp:.1}" x2="{}" y2="{yp:.1}" stroke="#ccc"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                left + pw,
                left - 6.0,
                yp + 4.0,
                tick(yv)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            left + pw / 2.0,
            h - 12.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
            top + ph / 2.0,
            top + ph / 2.0,
            escape(&self.y_label)
        );
        let n = self.series.len();
        for (i, series) in self.series.iter().enumerate() {
            let style = style(i, n);
            let points: Vec<String> = series
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            if !points.is_empty() {
                let _ = writeln!(
                    s,
                    r#"<polyline fill="none" {style} points="{}"/>"#,
                    points.join(" ")
                );
            }
            let ly = top + 10.0 + i as f64 * 18.0;
            let lx = left + pw + 12.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" {style}/><text x="{}" y="{}">{}</text>"#,
                lx + 18.0,
                lx + 24.0,
                ly + 4.0,
                escape(&series.name)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_series_stay_apart_and_stack() {
        let same = vec![(0.0, 215.0), (1.0, 0.0)];
        let plot = LinePlot {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                Series {
                    name: "refaults/s".into(),
                    points: same.clone(),
                },
                Series {
                    name: "pswpin/s".into(),
                    points: same,
                },
            ],
        };
        let svg = plot.render();
        // The first (underneath) is wider and solid, the second dashed.
        assert!(
            svg.contains(r##"stroke="#1f77b4" stroke-width="2.7" points"##),
            "{svg}"
        );
        assert!(
            svg.contains(r##"stroke="#d62728" stroke-width="1.5" stroke-dasharray="7 4" points"##),
            "{svg}"
        );
        // The legend shows the same styles.
        assert_eq!(svg.matches(r#"stroke-dasharray="7 4""#).count(), 2);
        let two = stack(&[plot.clone(), plot]);
        assert_eq!(two.matches("<svg").count(), 3);
        assert!(two.contains(r#"y="420""#));
    }
}
