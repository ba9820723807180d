//! Memory thrashing (seed 000 §7.2): `/proc/vmstat` reclaim and refault
//! counters and `/proc/pressure/memory`, sampled at an interval and turned
//! into per-interval rates.
//!
//! The seed's reading of the counters: refaults and activations
//! (`workingset_*`) count reclaimed pages needed again at once — the lower
//! the better; if `pgpgin/out` and `pswpin/out` rise together with the
//! refaults, the system thrashes; `pgsteal/pgscan` is the reclaim
//! efficiency — low means the kernel struggles to find reclaimable memory.
//!
//! The seed also says thrashing happens on file cache pages, not only on
//! anonymous pages in ZRAM: file pages reclaimed and read back
//! (`workingset_refault_file`) while reclaim runs and tasks stall (PSI),
//! with no swap at all. Both patterns count.
//!
//! A cgroup with a memory limit reclaims inside itself, which the global
//! `/proc/vmstat` does not show; [`ThrashSample::read_cgroup`] reads the
//! cgroup v2 `memory.stat` (same counter names, `pgscan`/`pgsteal` totals
//! on kernels without the kswapd/direct split) and `memory.pressure`
//! instead. cgroup v2 has no `pgpgin`/`pswpin` counters: those are `None`.
//!
//! [`ThrashSample::read`] collects, [`ThrashInterval::new`] derives rates
//! with no I/O, [`Verdict::new`] judges a series: only evidence that lasts
//! (≥ 2 intervals and ≥ a quarter of them) and agrees with PSI makes
//! pressure or thrashing; a lone spike is a "brief burst".

use crate::error::MeasureError;
use crate::pressure::Pressure;
use crate::vmstat::Vmstat;
use lever_kernel::KernelFs;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The vmstat counters sampled, in CSV column order.
pub const COUNTERS: [&str; 12] = [
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "pgpgin",
    "pgpgout",
    "pswpin",
    "pswpout",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_kswapd",
    "pgscan_direct",
];

/// One raw sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThrashSample {
    /// Seconds since the first sample (from the caller's clock).
    pub t_s: f64,
    /// The [`COUNTERS`] in order; `None` where this kernel lacks one
    /// (e.g. `workingset_refault_anon` before 5.9 is `workingset_refault`).
    pub counters: Vec<Option<u64>>,
    /// `/proc/pressure/memory`, `None` without PSI.
    pub psi: Option<Pressure>,
}

impl ThrashSample {
    /// Pick the counters out of a parsed vmstat. Kernels before 5.9 have a
    /// single `workingset_refault`/`workingset_activate`, counted as file.
    /// A cgroup's `memory.stat` without the kswapd/direct split has
    /// `pgscan`/`pgsteal` totals: counted as kswapd, direct 0.
    pub fn from_parts(t_s: f64, vmstat: &Vmstat, psi: Option<Pressure>) -> ThrashSample {
        let counters = COUNTERS
            .iter()
            .map(|name| {
                vmstat.get(name).or_else(|| match *name {
                    "workingset_refault_file" => vmstat.get("workingset_refault"),
                    "workingset_activate_file" => vmstat.get("workingset_activate"),
                    "pgscan_kswapd" => vmstat.get("pgscan"),
                    "pgsteal_kswapd" => vmstat.get("pgsteal"),
                    "pgscan_direct" | "pgsteal_direct" => vmstat.get("pgscan").map(|_| 0),
                    _ => None,
                })
            })
            .collect();
        ThrashSample { t_s, counters, psi }
    }

    /// Read vmstat and PSI below the root. `t_s` is the caller's clock.
    pub fn read(fs: &KernelFs, t_s: f64) -> Result<ThrashSample, MeasureError> {
        let vmstat = Vmstat::read(fs)?;
        let psi = Pressure::read_memory(fs).unwrap_or(None);
        Ok(Self::from_parts(t_s, &vmstat, psi))
    }

    /// Read a cgroup v2 directory's `memory.stat` and `memory.pressure`
    /// below the root (`dir` as a kernel path, e.g.
    /// `/sys/fs/cgroup/system.slice/foo.service`).
    ///
    /// ```text
    /// workingset_refault_file 4247
    /// pgscan 1629223
    /// pgsteal_kswapd 1561315
    /// ```
    pub fn read_cgroup(fs: &KernelFs, dir: &str, t_s: f64) -> Result<ThrashSample, MeasureError> {
        let stat_path = format!("{dir}/memory.stat");
        let stat = Vmstat::parse(&stat_path, &fs.read(&stat_path)?)?;
        let psi = Pressure::read_path(fs, &format!("{dir}/memory.pressure")).unwrap_or(None);
        Ok(Self::from_parts(t_s, &stat, psi))
    }

    fn get(&self, name: &str) -> Option<u64> {
        let i = COUNTERS.iter().position(|c| *c == name)?;
        self.counters[i]
    }
}

/// Rates over one interval, per second. `None` where a counter is missing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThrashInterval {
    /// End of the interval, seconds since the first sample.
    pub t_s: f64,
    /// Interval length, seconds.
    pub elapsed_s: f64,
    /// Per-second rate of each of [`COUNTERS`] (pages/s; kB/s for pgpgin/out).
    pub rates: Vec<Option<f64>>,
    /// Refaults (anon + file) per second.
    pub refaults_per_s: Option<f64>,
    /// Pages scanned (kswapd + direct) per second.
    pub scanned_per_s: Option<f64>,
    /// Pages reclaimed (kswapd + direct) per second.
    pub stolen_per_s: Option<f64>,
    /// pgsteal / pgscan over the interval, 0..=1; `None` when nothing was
    /// scanned.
    pub reclaim_efficiency: Option<f64>,
    /// Share of the interval some task stalled on memory, percent (PSI).
    pub psi_some_pct: Option<f64>,
    /// Share of the interval all tasks stalled on memory, percent (PSI).
    pub psi_full_pct: Option<f64>,
}

impl ThrashInterval {
    /// Rates between `prev` and `cur`. Counter resets (a smaller value) give
    /// `None` rather than a negative rate. No I/O.
    pub fn new(cur: &ThrashSample, prev: &ThrashSample) -> ThrashInterval {
        let elapsed_s = (cur.t_s - prev.t_s).max(f64::MIN_POSITIVE);
        let delta = |name: &str| -> Option<u64> { cur.get(name)?.checked_sub(prev.get(name)?) };
        let rate = |d: Option<u64>| d.map(|d| d as f64 / elapsed_s);
        let rates = COUNTERS.iter().map(|c| rate(delta(c))).collect();
        let sum2 = |a: &str, b: &str| Some(delta(a)? + delta(b)?);
        let scanned = sum2("pgscan_kswapd", "pgscan_direct");
        let stolen = sum2("pgsteal_kswapd", "pgsteal_direct");
        let reclaim_efficiency = match (stolen, scanned) {
            (Some(st), Some(sc)) if sc > 0 => Some((st as f64 / sc as f64).min(1.0)),
            _ => None,
        };
        let psi_pct = |pick: fn(&Pressure) -> Option<u64>| -> Option<f64> {
            let d = pick(cur.psi.as_ref()?)?.checked_sub(pick(prev.psi.as_ref()?)?)?;
            Some((d as f64 / 1e6 / elapsed_s * 100.0).min(100.0))
        };
        ThrashInterval {
            t_s: cur.t_s,
            elapsed_s,
            rates,
            refaults_per_s: rate(sum2("workingset_refault_anon", "workingset_refault_file")),
            scanned_per_s: rate(scanned),
            stolen_per_s: rate(stolen),
            reclaim_efficiency,
            psi_some_pct: psi_pct(|p| Some(p.some.total_us)),
            psi_full_pct: psi_pct(|p| p.full.map(|f| f.total_us)),
        }
    }

    /// A counter's rate by name.
    pub fn rate(&self, name: &str) -> Option<f64> {
        let i = COUNTERS.iter().position(|c| *c == name)?;
        self.rates[i]
    }

    /// File-page refaults per second (page cache read back after reclaim).
    pub fn file_refaults_per_s(&self) -> Option<f64> {
        self.rate("workingset_refault_file")
    }

    /// Working-set activations (anon + file) per second.
    pub fn activations_per_s(&self) -> Option<f64> {
        Some(self.rate("workingset_activate_anon")? + self.rate("workingset_activate_file")?)
    }
}

/// Lever's thresholds for the verdict (the seed gives the signals, not
/// numbers; these are documented in docs/measure-memory.md).
pub mod thresholds {
    /// Reclaim efficiency below this, while scanning, is "struggling".
    pub const LOW_EFFICIENCY: f64 = 0.5;
    /// Scanning below this many pages/s is background noise.
    pub const MIN_SCAN_PER_S: f64 = 100.0;
    /// Refaults per second worth calling out.
    pub const REFAULTS_PER_S: f64 = 100.0;
    /// PSI `full` share (percent) that means real stalls.
    pub const PSI_FULL_PCT: f64 = 10.0;
    /// PSI `some` share (percent) that means pressure.
    pub const PSI_SOME_PCT: f64 = 10.0;
    /// Evidence counts when it lasts this many intervals…
    pub const SUSTAINED_MIN: usize = 2;
    /// …and at least this share of them.
    pub const SUSTAINED_SHARE: f64 = 0.25;

    /// True when `k` of `n` intervals is sustained evidence.
    pub fn sustained(k: usize, n: usize) -> bool {
        k >= SUSTAINED_MIN && k as f64 >= SUSTAINED_SHARE * n as f64
    }
}

/// The judgement over a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// No reclaim and no refaults, or only a trickle of refaults.
    Calm,
    /// Refaults, reclaim or stalls in too few intervals to call pressure
    /// (a lone spike), or without any stall where PSI can tell.
    BriefBurst,
    /// Sustained reclaim, refaults at a thrashing rate, or PSI stalls — but
    /// not the thrashing pattern.
    Pressure,
    /// Sustained: the seed's pattern (refaults with paging and swapping, or
    /// file refaults while reclaim runs), with tasks stalled (PSI) — or,
    /// without PSI, reclaim struggling.
    Thrashing,
}

/// A level and the facts that led to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The judgement.
    pub level: Level,
    /// One sentence per fact, with numbers.
    pub reasons: Vec<String>,
}

impl Verdict {
    /// Judge a series of intervals. No I/O.
    pub fn new(intervals: &[ThrashInterval]) -> Verdict {
        use thresholds::*;
        let n = intervals.len();
        if n == 0 {
            return Verdict {
                level: Level::Calm,
                reasons: vec!["fewer than two samples: no interval to judge".into()],
            };
        }
        let pos = |v: Option<f64>| v.is_some_and(|x| x > 0.0);
        let at_least = |v: Option<f64>, t: f64| v.unwrap_or(0.0) >= t;
        let count = |f: &dyn Fn(&ThrashInterval) -> bool| intervals.iter().filter(|i| f(i)).count();
        let psi_known = intervals.iter().any(|i| i.psi_some_pct.is_some());
        let stalls = |i: &ThrashInterval| {
            at_least(i.psi_some_pct, PSI_SOME_PCT) || at_least(i.psi_full_pct, PSI_FULL_PCT)
        };
        let scanning = |i: &ThrashInterval| at_least(i.scanned_per_s, MIN_SCAN_PER_S);
        let struggles = |i: &ThrashInterval| {
            scanning(i) && i.reclaim_efficiency.is_some_and(|e| e < LOW_EFFICIENCY)
        };
        // The seed's swap pattern: pgpg*, pswp* and refaults rising together.
        let swap_pattern = |i: &ThrashInterval| {
            at_least(i.refaults_per_s, REFAULTS_PER_S)
                && pos(i.rate("pswpin"))
                && pos(i.rate("pswpout"))
                && pos(i.rate("pgpgin"))
                && pos(i.rate("pgpgout"))
        };
        // File-cache thrashing (no swap needed): page cache read back after
        // reclaim while reclaim keeps running.
        let file_pattern =
            |i: &ThrashInterval| at_least(i.file_refaults_per_s(), REFAULTS_PER_S) && scanning(i);
        // A thrashing interval: a pattern, and tasks waiting for it (PSI);
        // without PSI, reclaim struggling stands in for the stall.
        let thrashing_interval = |i: &ThrashInterval| {
            (swap_pattern(i) || file_pattern(i)) && if psi_known { stalls(i) } else { struggles(i) }
        };
        let together = count(&swap_pattern);
        let file = count(&|i| file_pattern(i) && !swap_pattern(i));
        let thrashing = count(&thrashing_interval);
        let struggling: Vec<f64> = intervals
            .iter()
            .filter(|i| struggles(i))
            .filter_map(|i| i.reclaim_efficiency)
            .collect();
        let stalled = count(&|i| at_least(i.psi_full_pct, PSI_FULL_PCT));
        let some_pressure = count(&|i| at_least(i.psi_some_pct, PSI_SOME_PCT));
        let reclaiming = count(&|i| pos(i.scanned_per_s));
        let refaulting = count(&|i| at_least(i.refaults_per_s, REFAULTS_PER_S));
        let trickle = count(&|i| pos(i.refaults_per_s));
        let any_stall = intervals.iter().any(|i| pos(i.psi_some_pct));
        let max = |f: fn(&ThrashInterval) -> Option<f64>| {
            intervals.iter().filter_map(f).fold(0.0f64, f64::max)
        };
        let mut reasons = Vec::new();
        if together > 0 {
            reasons.push(format!(
                "{together} of {n} intervals had refaults (≥ {REFAULTS_PER_S}/s, peak {:.0}/s) while pgpgin, pgpgout, pswpin and pswpout all rose (seed 000 §7.2's thrashing pattern)",
                max(|i| i.refaults_per_s)
            ));
        }
        if file > 0 {
            reasons.push(format!(
                "{file} of {n} intervals had file-page refaults ≥ {REFAULTS_PER_S}/s (peak {:.0}/s) while reclaim scanned ≥ {MIN_SCAN_PER_S} pages/s: page cache evicted and read back (file-cache thrashing needs no swap)",
                max(|i| i.file_refaults_per_s())
            ));
        }
        if !struggling.is_empty() {
            let worst = struggling.iter().cloned().fold(1.0f64, f64::min);
            reasons.push(format!(
                "{} of {n} intervals reclaimed with efficiency below {:.0}% (worst {:.0}%): the kernel struggles to find reclaimable memory",
                struggling.len(),
                LOW_EFFICIENCY * 100.0,
                worst * 100.0
            ));
        }
        if stalled > 0 {
            reasons.push(format!(
                "{stalled} of {n} intervals had all tasks stalled on memory ≥ {PSI_FULL_PCT}% of the time (PSI full, peak {:.1}%)",
                max(|i| i.psi_full_pct)
            ));
        }
        if some_pressure > 0 {
            reasons.push(format!(
                "{some_pressure} of {n} intervals had some task stalled on memory ≥ {PSI_SOME_PCT}% of the time (PSI some, peak {:.1}%)",
                max(|i| i.psi_some_pct)
            ));
        }
        let sustained_what = |k: usize| {
            format!(
                "{k} of {n} intervals (sustained needs ≥ {SUSTAINED_MIN} and ≥ {:.0}% of them)",
                SUSTAINED_SHARE * 100.0
            )
        };
        let level = if sustained(thrashing, n) {
            Level::Thrashing
        } else if sustained(reclaiming, n)
            || sustained(refaulting, n)
            || sustained(some_pressure, n)
        {
            if reclaiming > 0 {
                reasons.push(format!(
                    "reclaim ran in {reclaiming} of {n} intervals (peak {:.0} pages scanned/s)",
                    max(|i| i.scanned_per_s)
                ));
            }
            if refaulting > 0 {
                reasons.push(format!(
                    "refaults ≥ {REFAULTS_PER_S}/s in {refaulting} of {n} intervals (peak {:.0}/s)",
                    max(|i| i.refaults_per_s)
                ));
            }
            if thrashing > 0 {
                reasons.push(format!(
                    "the thrashing pattern with stalls held in only {}",
                    sustained_what(thrashing)
                ));
            } else if together + file > 0 && psi_known {
                reasons.push(
                    "the counters show the thrashing pattern, but PSI shows no task stalled by it: not thrashing"
                        .into(),
                );
            }
            if psi_known && !any_stall {
                reasons.push("no task stalled on memory at all (PSI some 0.0%)".into());
            }
            Level::Pressure
        } else if refaulting > 0 || reclaiming > 0 || some_pressure > 0 || thrashing > 0 {
            let burst = refaulting.max(reclaiming).max(some_pressure);
            reasons.push(format!(
                "only a brief burst: refaults ≥ {REFAULTS_PER_S}/s (peak {:.0}/s), reclaim (peak {:.0} pages scanned/s) or stalls in {}",
                max(|i| i.refaults_per_s),
                max(|i| i.scanned_per_s),
                sustained_what(burst)
            ));
            reasons.push(if psi_known {
                format!(
                    "PSI agrees it passed: some task stalled on memory at most {:.1}% of an interval",
                    max(|i| i.psi_some_pct)
                )
            } else {
                "no PSI to tell whether tasks stalled".into()
            });
            Level::BriefBurst
        } else if trickle > 0 {
            reasons.push(format!(
                "no reclaim, and refaults stayed below {REFAULTS_PER_S}/s (peak {:.0}/s in {trickle} of {n} intervals): ordinary page-cache churn",
                max(|i| i.refaults_per_s)
            ));
            Level::Calm
        } else {
            reasons.push(format!(
                "no page was scanned for reclaim and no refault happened in {n} intervals"
            ));
            Level::Calm
        };
        if !psi_known {
            reasons.push("no PSI (/proc/pressure/memory): stall time not judged".into());
        }
        Verdict { level, reasons }
    }
}

/// The CSV header of [`to_csv`].
pub fn csv_header() -> String {
    let mut h = String::from("t_s,elapsed_s");
    for c in COUNTERS {
        let _ = write!(h, ",{c}_per_s");
    }
    h.push_str(",reclaim_efficiency,psi_some_pct,psi_full_pct");
    h
}

/// The series as CSV, one row per interval; empty cells where a value is
/// unavailable.
pub fn to_csv(intervals: &[ThrashInterval]) -> String {
    let cell = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
    let mut out = csv_header();
    out.push('\n');
    for i in intervals {
        let _ = write!(out, "{:.3},{:.3}", i.t_s, i.elapsed_s);
        for r in &i.rates {
            let _ = write!(out, ",{}", cell(*r));
        }
        let _ = writeln!(
            out,
            ",{},{},{}",
            cell(i.reclaim_efficiency),
            cell(i.psi_some_pct),
            cell(i.psi_full_pct)
        );
    }
    out
}

/// An SVG of two plots: refaults, activations, swap-in/out and scan/steal
/// rates over time (each series its own colour, dash and width, so equal
/// series such as refaults and pswpin both show), and PSI `some`/`full`.
pub fn to_svg(intervals: &[ThrashInterval]) -> String {
    let series =
        |name: &'static str, f: &dyn Fn(&ThrashInterval) -> Option<f64>| crate::svg::Series {
            name: name.to_string(),
            points: intervals
                .iter()
                .filter_map(|i| Some((i.t_s, f(i)?)))
                .collect(),
        };
    let rates = crate::svg::LinePlot {
        title: "Memory thrashing: /proc/vmstat rates (seed 000 §7.2)".into(),
        x_label: "time (s)".into(),
        y_label: "events per second".into(),
        series: vec![
            series("refaults/s", &|i| i.refaults_per_s),
            series("file refaults/s", &|i| i.file_refaults_per_s()),
            series("activations/s", &|i| i.activations_per_s()),
            series("pswpin/s", &|i| i.rate("pswpin")),
            series("pswpout/s", &|i| i.rate("pswpout")),
            series("pgscan/s", &|i| i.scanned_per_s),
            series("pgsteal/s", &|i| i.stolen_per_s),
        ],
    };
    let psi = crate::svg::LinePlot {
        title: "Memory pressure stall (PSI)".into(),
        x_label: "time (s)".into(),
        y_label: "% of the interval stalled".into(),
        series: vec![
            series("PSI some %", &|i| i.psi_some_pct),
            series("PSI full %", &|i| i.psi_full_pct),
        ],
    };
    crate::svg::stack(&[rates, psi])
}

/// The names [`write_series`] writes, in its order.
pub const SERIES_FILES: [&str; 3] = ["thrash.csv", "thrash.json", "thrash.svg"];

/// Write the series into `dir` (created if missing) as `thrash.csv`
/// ([`to_csv`]), `thrash.json` (the intervals, pretty-printed) and
/// `thrash.svg` ([`to_svg`]); returns the paths written. Errors name the
/// file.
pub fn write_series(
    dir: &Path,
    intervals: &[ThrashInterval],
) -> Result<Vec<PathBuf>, MeasureError> {
    let file_err = |path: &Path, source: std::io::Error| MeasureError::File {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| file_err(dir, e))?;
    let json = serde_json::to_string_pretty(intervals).map_err(|e| file_err(dir, e.into()))? + "\n";
    let contents = [to_csv(intervals), json, to_svg(intervals)];
    let mut written = Vec::new();
    for (name, text) in SERIES_FILES.iter().zip(contents) {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| file_err(&path, e))?;
        written.push(path);
    }
    Ok(written)
}
