//! The call-stack section of the trace report (cyg-profile function
//! entries/exits, systrace begin/end spans).

use crate::render::num::{ms_from_ns as ms, pct, us_from_ns as us};
use crate::render::Table;
use lever_trace_analysis::callstack::CallStackReport;

/// Functions by self time, then threads.
pub fn callstack(r: &CallStackReport, top: usize) -> String {
    if r.functions.is_empty() {
        return "\ncall stacks: no function entry/exit (cyg-profile) or B/E span events in this trace\n"
            .into();
    }
    let all_self: u64 = r.functions.iter().map(|f| f.self_ns).sum();
    let mut t = Table::new(&[
        "FUNCTION", "CALLS", "TOTAL ms", "SELF ms", "SELF%", "MAX us", "MAX TID",
    ]);
    for f in r.functions.iter().take(top) {
        t.row(vec![
            f.name.clone(),
            f.calls.to_string(),
            ms(f.total_ns),
            ms(f.self_ns),
            pct(f.self_ns as f64 * 100.0 / all_self.max(1) as f64),
            us(f.max_ns),
            f.max_tid.to_string(),
        ]);
    }
    let mut out = format!(
        "\n== call stacks: functions by self time ({} functions)\n{}",
        r.functions.len(),
        t.render()
    );
    let mut t = Table::new(&["TID", "COMM", "CALLS", "MAX DEPTH", "OPEN AT END"]);
    for th in r.threads.iter().take(top) {
        t.row(vec![
            th.tid.to_string(),
            th.comm.clone(),
            th.calls.to_string(),
            th.max_depth.to_string(),
            th.open_at_end.to_string(),
        ]);
    }
    out += &format!("\n== call stacks per thread\n{}", t.render());
    if r.unmatched_ends > 0 || r.too_deep > 0 {
        out += &format!(
            "({} exits without an entry on their thread (entries before the trace began); {} entries past the depth bound)\n",
            r.unmatched_ends, r.too_deep
        );
    }
    out
}
