//! A run's conditions panel: what was true on the machine while the run
//! was collected (`lever_conditions::Conditions`, recorded by `lever
//! report collect`), one line per fact, each with its value or why it is
//! not available; what disturbed the run first, marked.

use super::units;
use lever_conditions::{Avail, Conditions, Load, ThermalState};

/// One line of the panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// What (`load average before`).
    pub what: String,
    /// Its value, or `not available: WHY`.
    pub value: String,
    /// True for what makes the run's figures doubtful (load, throttling).
    pub warn: bool,
}

fn avail<T>(a: &Avail<T>, show: impl FnOnce(&T) -> String) -> String {
    match a {
        Avail::Value(v) => show(v),
        Avail::Unavailable(w) => format!("not available: {w}"),
    }
}

fn load(l: &Load) -> String {
    format!(
        "{:.2} (1 min), {:.2} (5 min); {} runnable of {} tasks",
        l.load_1m, l.load_5m, l.runnable, l.tasks
    )
}

fn mhz(khz: Option<u64>) -> String {
    khz.map_or("?".into(), |k| units::number(k as f64 / 1000.0))
}

fn thermal(t: &ThermalState) -> String {
    let active = t
        .cooling
        .iter()
        .filter(|c| c.cur_state.is_some_and(|s| s > 0))
        .count();
    let hottest = match t.hottest() {
        Some(z) => format!(
            "hottest {} at {:.1} °C of {} zones",
            z.kind,
            z.temp_mc.unwrap_or(0) as f64 / 1000.0,
            t.zones.len()
        ),
        None => format!("no reading from {} zones", t.zones.len()),
    };
    format!(
        "{hottest}; {active} of {} cooling devices active",
        t.cooling.len()
    )
}

/// The panel's lines for `c`.
pub fn lines(c: &Conditions) -> Vec<Line> {
    let mut out = Vec::new();
    let mut push = |what: &str, value: String| {
        out.push(Line {
            what: what.into(),
            value,
            warn: false,
        })
    };
    if let Some(sim) = &c.simulated {
        push("kernel files", sim.clone());
    }
    push(
        "machine",
        avail(&c.machine, |m| {
            let mut parts = Vec::new();
            parts.extend(m.model.clone());
            parts.extend(m.hostname.as_ref().map(|h| format!("host {h}")));
            parts.extend(m.arch.clone());
            parts.push(format!("{} CPUs online", m.cpus_online));
            parts.join(", ")
        }),
    );
    push("kernel", avail(&c.kernel_release, Clone::clone));
    push("command line", avail(&c.cmdline, Clone::clone));
    push(
        "isolated CPUs",
        avail(&c.isolated_cpus, |s| {
            if s.is_empty() {
                "none".into()
            } else {
                s.clone()
            }
        }),
    );
    push("load before", avail(&c.load_before, load));
    push(
        "load during",
        avail(&c.load_during, |d| {
            format!(
                "{:.1} runnable tasks on average, at most {} (the run's own included); load average up to {:.2}; {} samples",
                d.mean_runnable, d.max_runnable, d.max_load_1m, d.samples
            )
        }),
    );
    push("load after", avail(&c.load_after, load));
    push(
        "clocks",
        avail(&c.cpufreq_before, |ps| {
            ps.iter()
                .map(|p| {
                    format!(
                        "{} (CPUs {}): {} {}–{} MHz, at {} MHz, hardware max {} MHz",
                        p.name,
                        p.cpus,
                        p.governor.as_deref().unwrap_or("no governor"),
                        mhz(p.min_khz),
                        mhz(p.max_khz),
                        mhz(p.cur_khz),
                        mhz(p.cpuinfo_max_khz)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        }),
    );
    push("thermal before", avail(&c.thermal_before, thermal));
    push("thermal after", avail(&c.thermal_after, thermal));
    push(
        "thermal peak",
        avail(&c.thermal_peak, |zones| {
            match zones
                .iter()
                .filter(|z| z.temp_mc.is_some())
                .max_by_key(|z| z.temp_mc)
            {
                Some(z) => format!(
                    "{} reached {:.1} °C",
                    z.kind,
                    z.temp_mc.unwrap_or(0) as f64 / 1000.0
                ),
                None => "no zone answered".into(),
            }
        }),
    );
    push(
        "throttling",
        avail(&c.throttling, |t| {
            if t.is_empty() {
                "none seen".into()
            } else {
                t.iter()
                    .map(|t| format!("{}: {}", t.what, t.detail))
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        }),
    );
    if let Some(s) = &c.speed {
        push("machine speed", s.summary());
    }
    push("Lever", c.lever_version.clone());
    let mut warn: Vec<Line> = c
        .disturbances()
        .into_iter()
        .map(|d| Line {
            what: format!("disturbed ({})", d.kind),
            value: d.text,
            warn: true,
        })
        .collect();
    warn.extend(out);
    warn
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_conditions::{Fixed, Snapshot};

    #[test]
    fn a_busy_run_leads_with_its_disturbance_and_says_why_for_the_unknown() {
        let busy = Snapshot {
            elapsed_s: 0.0,
            load: Avail::Value(Load {
                load_1m: 6.8,
                load_5m: 5.0,
                load_15m: 3.0,
                runnable: 8,
                tasks: 130,
            }),
            cpufreq: Avail::Unavailable("no cpufreq policies".into()),
            thermal: Avail::Unavailable("no thermal zones".into()),
        };
        let c = Conditions::new(
            Fixed::unknown("0.1.0", 2),
            &busy,
            Avail::Value(vec![]),
            &busy,
        );
        let l = lines(&c);
        assert!(l[0].warn, "{l:?}");
        assert!(l[0].value.contains("load average 6.80 on 2 CPUs"), "{l:?}");
        let clocks = l.iter().find(|l| l.what == "clocks").unwrap();
        assert_eq!(clocks.value, "not available: no cpufreq policies");
        let before = l.iter().find(|l| l.what == "load before").unwrap();
        assert_eq!(
            before.value,
            "6.80 (1 min), 5.00 (5 min); 8 runnable of 130 tasks"
        );
    }
}
