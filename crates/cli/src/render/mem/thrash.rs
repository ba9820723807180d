//! `lever mem thrash`: per-interval rates, PSI, the verdict.

use crate::render::num::{fixed, fixed_or_dash};
use crate::render::Table;
use lever_measure::thrash::{self, ThrashInterval, ThrashSample, Verdict};
use serde::Serialize;
use std::path::PathBuf;

/// What `lever mem thrash` prints.
#[derive(Serialize)]
pub struct ThrashReport {
    /// The cgroup directory read instead of the global counters.
    pub cgroup: Option<String>,
    pub interval_s: f64,
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub psi_available: bool,
    pub samples: Vec<ThrashSample>,
    pub intervals: Vec<ThrashInterval>,
    pub verdict: Verdict,
    pub written: Vec<PathBuf>,
}

/// The rate table, notes, verdict and the files written.
pub fn report(r: &ThrashReport) -> String {
    let mut out = rates(r);
    out += &verdict(r);
    for p in &r.written {
        out += &format!("wrote {}\n", p.display());
    }
    out
}

/// Per-interval rates (seed 000 §7.2 signals) and what they mean.
fn rates(r: &ThrashReport) -> String {
    let n = |v: Option<f64>| fixed_or_dash(v, 0);
    let pct = |v: Option<f64>| fixed_or_dash(v, 1);
    let mut t = Table::new(&[
        "t (s)",
        "refault/s",
        "activate/s",
        "pgpgin kB/s",
        "pgpgout kB/s",
        "pswpin/s",
        "pswpout/s",
        "pgscan/s",
        "pgsteal/s",
        "reclaim eff %",
        "PSI some %",
        "PSI full %",
    ]);
    for i in &r.intervals {
        t.row(vec![
            fixed(i.t_s, 1),
            n(i.refaults_per_s),
            n(i.activations_per_s()),
            n(i.rate("pgpgin")),
            n(i.rate("pgpgout")),
            n(i.rate("pswpin")),
            n(i.rate("pswpout")),
            n(i.scanned_per_s),
            n(i.stolen_per_s),
            pct(i.reclaim_efficiency.map(|e| e * 100.0)),
            pct(i.psi_some_pct),
            pct(i.psi_full_pct),
        ]);
    }
    let mut out = t.render();
    out.push_str("rates per second over each interval; reclaim eff = pgsteal ÷ pgscan (- when nothing was scanned)\n");
    match &r.cgroup {
        Some(dir) => {
            out.push_str(&format!("counters of cgroup {dir} (memory.stat, memory.pressure); cgroup v2 has no pgpgin/pgpgout/pswpin/pswpout (-)\n"));
            if !r.psi_available {
                out.push_str(&format!("PSI: not available here because {dir}/memory.pressure is missing (kernel without CONFIG_PSI, or psi=0)\n"));
            }
        }
        None if !r.psi_available => out.push_str("PSI: not available here because /proc/pressure/memory is missing (kernel without CONFIG_PSI, or psi=0)\n"),
        None => {}
    }
    out
}

/// The verdict and its reasons.
fn verdict(r: &ThrashReport) -> String {
    let mut out = String::new();
    let level = match r.verdict.level {
        thrash::Level::Calm => "no memory pressure",
        thrash::Level::BriefBurst => "calm: only a brief burst, no sustained memory pressure",
        thrash::Level::Pressure => "memory pressure, but not thrashing",
        thrash::Level::Thrashing => "THRASHING",
    };
    out.push_str(&format!("\nverdict: {level}\n"));
    for reason in &r.verdict.reasons {
        out.push_str(&format!("  - {reason}\n"));
    }
    out
}
