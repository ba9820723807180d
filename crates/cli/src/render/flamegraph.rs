//! `lever flamegraph`: where the SVG went and the hottest functions.

use crate::render::num::pct_of;
use crate::render::Table;
use lever_flamegraph::Frame;
use serde::Serialize;
use std::path::PathBuf;

/// What `lever flamegraph` drew (fields in the order `--json` has always
/// printed them).
#[derive(Serialize)]
pub struct FlameReport {
    /// The hottest functions, by self weight.
    pub hottest: Vec<Frame>,
    /// The input file, `stdin`, or the profiled command.
    pub source: String,
    /// Distinct stacks.
    pub stacks: usize,
    /// The SVG written.
    pub svg: PathBuf,
    /// Sum of the sample periods.
    pub weight: u64,
}

/// The summary line and the hot-function table.
pub fn report(r: &FlameReport) -> String {
    let out = format!(
        "{}: {} stacks, weight {} (sum of perf sample periods: ns for cpu-clock, cycles for cycles) -> {}\n",
        r.source,
        r.stacks,
        r.weight,
        r.svg.display()
    );
    let mut t = Table::new(&["SELF%", "TOTAL%", "FUNCTION"]);
    for f in &r.hottest {
        t.row(vec![
            pct_of(f.self_weight, r.weight),
            pct_of(f.total_weight, r.weight),
            f.name.clone(),
        ]);
    }
    out + &t.render()
}
