//! `lever top`: the cores, the total and the processes over the run, and
//! the same over time as an SVG (through `lever_measure::svg`, the plot
//! every sampling command uses).

use crate::render::num::{fixed, mhz_from_khz, or_dash, pct};
use crate::render::Table;
use lever_measure::svg::{stack, LinePlot, Series};
use lever_measure::top::{TaskTotal, TopRun};
use lever_measure::Avail;
use serde::Serialize;
use std::path::PathBuf;

/// What `lever top` prints (`--json`: this, with every interval).
#[derive(Serialize)]
pub struct TopReport {
    /// Time between samples, s.
    pub interval_s: f64,
    /// `-p` pids (empty: every process).
    pub pids: Vec<u32>,
    /// The watched command (empty with `-d`).
    pub command: Vec<String>,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// The SVG written.
    pub svg: Option<PathBuf>,
    /// Samples, intervals and totals.
    #[serde(flatten)]
    pub run: TopRun,
}

/// A frequency column: `1516.8` (one sample), `1708.8 (1516.8–1958.4)`.
fn freq(f: &Avail<lever_measure::top::FreqRange>) -> String {
    match f {
        Avail::Value(r) if r.min_khz == r.max_khz => mhz_from_khz(Some(r.min_khz)),
        Avail::Value(r) => format!(
            "{} ({}–{})",
            fixed(r.mean_khz / 1000.0, 1),
            mhz_from_khz(Some(r.min_khz)),
            mhz_from_khz(Some(r.max_khz))
        ),
        Avail::Unavailable(_) => "-".into(),
    }
}

fn task_row(t: &TaskTotal, indent: &str) -> Vec<String> {
    vec![
        format!("{indent}{}", t.id),
        format!("{indent}{}", t.comm),
        pct(t.cpu_pct),
        pct(t.user_pct),
        pct(t.system_pct),
        pct(t.max_pct),
        fixed(t.cpu_s, 2),
        match t.children_s > 0.0 {
            true => pct(t.children_pct),
            false => String::new(),
        },
        or_dash(t.voluntary_ctxt_switches),
        or_dash(t.nonvoluntary_ctxt_switches),
        or_dash(t.processor),
        or_dash(t.num_threads),
        match (t.in_command, t.started) {
            (true, true) => "cmd, new".into(),
            (true, false) => "cmd".into(),
            (false, true) => "new".into(),
            (false, false) => String::new(),
        },
    ]
}

/// The run as tables: cores, the total, then the processes.
pub fn report(r: &TopReport, rows: usize) -> String {
    let s = &r.run.summary;
    let mut out = match r.command.is_empty() {
        true => String::new(),
        false => format!(
            "`{}` exited with {}\n",
            r.command.join(" "),
            or_dash(r.exit_code)
        ),
    };
    out += &format!(
        "{:.2} s in {} intervals of {} s; {} cores: 100 % = one core busy, the total can reach {} %\n\n",
        s.window_s,
        s.intervals,
        r.interval_s,
        s.cores.len(),
        s.capacity_pct
    );
    if s.intervals == 0 {
        out += "no interval: the run ended before a second sample was taken\n";
        return out;
    }
    let mut cores = Table::new(&["core", "busy %", "max %", "MHz (mean, min–max)"]);
    for c in &s.cores {
        cores.row(vec![
            format!("cpu{}", c.cpu),
            pct(c.busy_pct),
            pct(c.max_busy_pct),
            freq(&c.freq),
        ]);
    }
    out += &cores.render();
    // One line per reason, naming the cores when only some lack it.
    let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
    for c in &s.cores {
        if let Avail::Unavailable(why) = &c.freq {
            match reasons.iter_mut().find(|(w, _)| w == why) {
                Some((_, cpus)) => cpus.push(format!("cpu{}", c.cpu)),
                None => reasons.push((why, vec![format!("cpu{}", c.cpu)])),
            }
        }
    }
    for (why, cpus) in reasons {
        match cpus.len() == s.cores.len() {
            true => out += &format!("frequency: {why}\n"),
            false => out += &format!("frequency of {}: {why}\n", cpus.join(", ")),
        }
    }
    if s.cores.iter().all(|c| c.ticks == 0) {
        out += "/proc/stat did not advance during the run: a file tree (--root), where no time passes, so no core shows any use\n";
    }
    out += &format!(
        "total: {} % of {} % (highest interval {} %)\n",
        pct(s.total_pct),
        s.capacity_pct,
        pct(s.max_total_pct)
    );
    if let (Some(c), Some(max)) = (s.command_pct, s.max_command_pct) {
        out += &format!(
            "the command's processes: {} % (highest interval {} %)\n",
            pct(c),
            pct(max)
        );
    }
    out.push('\n');
    if s.tasks.is_empty() {
        out += "no process was seen in two samples\n";
        return out;
    }
    let mut t = Table::new(&[
        "pid",
        "command",
        "CPU %",
        "user %",
        "system %",
        "max %",
        "CPU s",
        "children %",
        "vol cs",
        "invol cs",
        "core",
        "threads",
        "",
    ]);
    let shown = if rows == 0 { s.tasks.len() } else { rows };
    for task in s.tasks.iter().take(shown) {
        t.row(task_row(task, ""));
        // Threads that ran or switched; the thread count is the process's.
        let busy = |th: &&TaskTotal| {
            th.cpu_s > 0.0
                || th.voluntary_ctxt_switches.unwrap_or(0) > 0
                || th.nonvoluntary_ctxt_switches.unwrap_or(0) > 0
        };
        for th in task.threads.iter().filter(busy) {
            let mut row = task_row(th, "  ");
            row[11] = String::new();
            t.row(row);
        }
    }
    out += &t.render();
    if s.tasks.len() > shown {
        out += &format!(
            "{} more processes (-n 0 lists them all)\n",
            s.tasks.len() - shown
        );
    }
    out +=
        "CPU % is the mean over the whole run (as pidstat's Average), max % the busiest interval; \
            children % is the CPU of its children that ended between two samples (short-lived ones no row shows; as pidstat -T CHILD), counted in the command's figure; \
            vol/invol cs are context switches in the run; core is the CPU it last ran on; \
            cmd: the command or its descendant, new: started during the run; threads are indented below their process, those that neither ran nor switched left out\n";
    if let Some(p) = &r.svg {
        out += &format!("wrote {}\n", p.display());
    }
    out
}

/// Per-core busy % with the total, the command's processes, and the `rows`
/// busiest processes (at most 8) over time.
pub fn svg(run: &TopRun, rows: usize) -> String {
    let t = |i: &lever_measure::top::TopInterval| i.t_s;
    let mut cores: Vec<Series> = run
        .summary
        .cores
        .iter()
        .map(|c| Series {
            name: format!("cpu{}", c.cpu),
            points: run
                .series
                .iter()
                .filter_map(|i| {
                    let core = i.cores.iter().find(|k| k.cpu == c.cpu)?;
                    Some((t(i), core.busy_pct))
                })
                .collect(),
        })
        .collect();
    cores.insert(
        0,
        Series {
            name: "total".into(),
            points: run.series.iter().map(|i| (t(i), i.total_pct)).collect(),
        },
    );
    let mut procs: Vec<Series> = run
        .summary
        .tasks
        .iter()
        .filter(|task| task.cpu_s > 0.0)
        .take(rows.clamp(1, 8))
        .map(|task| Series {
            name: format!("{} {}", task.id, task.comm),
            points: run
                .series
                .iter()
                .map(|i| {
                    let pct = i.tasks.iter().find(|x| x.id == task.id);
                    (t(i), pct.map_or(0.0, |x| x.cpu_pct()))
                })
                .collect(),
        })
        .collect();
    if run.command_pid.is_some() {
        procs.insert(
            0,
            Series {
                name: "the command's processes".into(),
                points: run.series.iter().map(|i| (t(i), i.command_pct())).collect(),
            },
        );
    }
    let n = run.summary.cores.len();
    stack(&[
        LinePlot {
            title: format!(
                "CPU per core and total ({n} cores, total up to {} %)",
                n * 100
            ),
            x_label: "time (s)".into(),
            y_label: "busy %".into(),
            series: cores,
        },
        LinePlot {
            title: "CPU per process (100 % = one core)".into(),
            x_label: "time (s)".into(),
            y_label: "CPU %".into(),
            series: procs,
        },
    ])
}
