//! A run's conditions (`lever_conditions::Conditions`) as a few lines
//! under a result, and two runs' conditions compared, at the top of
//! `lever bench compare`. Every absent field says why.

use crate::render::Table;
use lever_conditions::{Avail, Comparison, Conditions};

fn why<T>(a: &Avail<T>, show: impl FnOnce(&T) -> String) -> String {
    match a {
        Avail::Value(v) => show(v),
        Avail::Unavailable(w) => format!("not available here because {w}"),
    }
}

/// The record in a few lines: load before/during/after, clocks, thermal
/// state, throttling, isolated CPUs.
pub fn summary(c: &Conditions) -> String {
    let load = |l: &lever_conditions::Load| {
        format!(
            "{:.2} ({} runnable of {} tasks)",
            l.load_1m, l.runnable, l.tasks
        )
    };
    let mut out = format!(
        "conditions: load average before {}, during {}, after {}\n",
        why(&c.load_before, load),
        why(&c.load_during, |d| format!(
            "up to {:.2} ({:.1} runnable on average over {} samples)",
            d.max_load_1m, d.mean_runnable, d.samples
        )),
        why(&c.load_after, load),
    );
    out += &format!(
        "  clocks before: {}\n",
        why(&c.cpufreq_before, |ps| ps
            .iter()
            .map(|p| format!(
                "{} (CPUs {}) {} {}–{} kHz, at {} kHz, hardware max {} kHz",
                p.name,
                p.cpus,
                p.governor.as_deref().unwrap_or("?"),
                p.min_khz.map_or("?".into(), |k| k.to_string()),
                p.max_khz.map_or("?".into(), |k| k.to_string()),
                p.cur_khz.map_or("?".into(), |k| k.to_string()),
                p.cpuinfo_max_khz.map_or("?".into(), |k| k.to_string()),
            ))
            .collect::<Vec<_>>()
            .join("; "))
    );
    let hottest = |t: &lever_conditions::ThermalState| match t.hottest() {
        Some(z) => format!(
            "hottest {} {:.1} °C of {} zones; {} of {} cooling devices active",
            z.kind,
            z.temp_mc.unwrap_or(0) as f64 / 1000.0,
            t.zones.len(),
            t.cooling
                .iter()
                .filter(|c| c.cur_state.is_some_and(|s| s > 0))
                .count(),
            t.cooling.len()
        ),
        None => format!("no zone reading; {} cooling devices", t.cooling.len()),
    };
    out += &format!(
        "  thermal before: {}; after: {}\n",
        why(&c.thermal_before, hottest),
        why(&c.thermal_after, hottest)
    );
    out += &format!(
        "  throttling: {}\n",
        why(&c.throttling, |t| if t.is_empty() {
            "none seen".into()
        } else {
            t.iter()
                .map(|t| format!("{}: {}", t.what, t.detail))
                .collect::<Vec<_>>()
                .join("; ")
        })
    );
    out += &format!(
        "  isolated CPUs: {}; kernel {}\n",
        why(&c.isolated_cpus, |i| if i.is_empty() {
            "none".into()
        } else {
            i.clone()
        }),
        why(&c.kernel_release, String::clone)
    );
    if let Some(s) = &c.speed {
        out += &format!("  machine speed: {}\n", s.summary());
    }
    if let Some(s) = &c.simulated {
        out += &format!("  NOTE: {s}\n");
    }
    out
}

/// Two runs' conditions: what differs, and why a change is not judged.
pub fn comparison(c: &Comparison) -> String {
    let mut out = String::new();
    if c.differences.is_empty() {
        out += "conditions: the same in both runs\n";
    } else {
        out += "conditions that differ:\n";
        let mut t = Table::new(&["condition", "base", "new"]);
        for d in &c.differences {
            t.row(vec![d.what.clone(), d.base.clone(), d.new.clone()]);
        }
        out += &t.render();
    }
    for d in &c.disturbed {
        out += &format!("WARNING: {d}\n");
    }
    if let Some(note) = c.judging_note() {
        out += &note;
        out.push('\n');
    }
    out.push('\n');
    out
}
