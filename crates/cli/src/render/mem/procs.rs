//! `lever mem procs`: procrank's table.

use crate::render::num::or_dash;
use crate::render::Table;
use lever_measure::smaps::{Procrank, View};
use serde::Serialize;

/// What `lever mem procs` prints: the table, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum ProcsReport {
    Table(Procrank),
    Unavailable { unavailable: String },
}

/// The report, or the reason there is none.
pub fn report(r: &ProcsReport, limit: Option<usize>) -> String {
    match r {
        ProcsReport::Unavailable { unavailable } => {
            format!("per-process memory: not available here because {unavailable}\n")
        }
        ProcsReport::Table(p) => table(p, limit),
    }
}

/// The procrank table with totals, the view, and what was skipped.
pub fn table(p: &Procrank, limit: Option<usize>) -> String {
    let k = |v: Option<u64>| or_dash(v.map(|v| format!("{v}K")));
    let mut t = Table::new(&["PID", "Vss", "Rss", "Pss", "Uss", "Swap", "cmdline"]);
    let shown = limit.unwrap_or(usize::MAX);
    for r in p.procs.iter().take(shown) {
        let cmd = if r.cmdline.is_empty() {
            format!("[{}]", r.name)
        } else {
            r.cmdline.chars().take(80).collect()
        };
        t.row(vec![
            r.pid.to_string(),
            k(r.vss_kb),
            k(r.rss_kb),
            k(r.pss_kb),
            k(r.uss_kb),
            k(r.swap_kb),
            cmd,
        ]);
    }
    let tt = &p.total;
    t.row(vec![
        "TOTAL".into(),
        k(tt.vss_kb),
        k(tt.rss_kb),
        k(tt.pss_kb),
        k(tt.uss_kb),
        k(tt.swap_kb),
        format!("{} processes", p.procs.len()),
    ]);
    let mut out = t.render();
    let view = match p.view {
        View::All => "all pages",
        View::Anon => "anonymous + shmem pages only (-C); Vss/Uss cannot be split by page kind from smaps_rollup",
        View::File => "file-backed pages only (-c); Vss/Uss cannot be split by page kind from smaps_rollup",
    };
    out.push_str(&format!("view: {view}; sizes in kB (K)\n"));
    if p.procs.len() > shown {
        out.push_str(&format!(
            "showing {shown} of {} processes; TOTAL covers all\n",
            p.procs.len()
        ));
    }
    out.push_str(&format!(
        "skipped: {} kernel thread(s)/zombie(s), {} process(es) that exited while being read\n",
        p.kernel_threads, p.vanished
    ));
    for (n, why) in p.denied.explained() {
        out.push_str(&format!("not readable: {n} process(es) {why}\n"));
    }
    out
}
