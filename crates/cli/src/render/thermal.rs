//! `lever thermal`: zones with their trip points and bound cooling
//! devices, the cooling devices, and with `--watch` the series and each
//! zone's peak. Temperatures are printed in °C from the kernel's m°C.

use crate::render::Table;
use lever_measure::thermal::{Thermal, Watch, Zone};
use lever_measure::Avail;
use serde::Serialize;

/// What `lever thermal` prints (`--json` flattens the zones and devices).
#[derive(Serialize)]
pub struct Report {
    /// Set under `--root`: the values are that tree's.
    pub simulated: Option<String>,
    /// Why there are no zones, when there are none (cooling devices alone).
    pub zones_missing: Option<String>,
    #[serde(flatten)]
    pub thermal: Thermal,
    /// With `--watch`.
    pub watch: Option<WatchReport>,
}

/// `--watch`'s part of the report.
#[derive(Serialize)]
pub struct WatchReport {
    /// Seconds between samples.
    pub interval_s: f64,
    /// The command watched (empty for `--duration`).
    pub command: Vec<String>,
    /// Its exit code.
    pub exit_code: Option<i32>,
    #[serde(flatten)]
    pub watch: Watch,
}

/// m°C as °C with one decimal.
fn celsius(mc: i64) -> String {
    format!("{:.1}", mc as f64 / 1000.0)
}

fn opt_celsius(mc: Option<i64>) -> String {
    mc.map_or_else(|| "-".into(), celsius)
}

/// `passive 90.0 (2.0), critical 110.0`: type, temperature and hysteresis.
fn trips(z: &Zone) -> String {
    let list: Vec<String> = z
        .trips
        .iter()
        .map(|t| {
            let hyst = match t.hyst_mc {
                Some(h) if h != 0 => format!(" ±{}", celsius(h)),
                _ => String::new(),
            };
            format!(
                "{} {}{hyst}",
                t.kind.as_deref().unwrap_or("?"),
                opt_celsius(t.temp_mc)
            )
        })
        .collect();
    if list.is_empty() {
        "-".into()
    } else {
        list.join(", ")
    }
}

/// `cpufreq-cpu4 at trips 0,1; cpufreq-cpu7 at trips 0,1`: each bound
/// device once, with the trips that engage it.
fn bound(z: &Zone, th: &Thermal) -> String {
    let mut devices: Vec<(&str, Vec<String>)> = Vec::new();
    for b in &z.bindings {
        let trip = b.trip_point.map_or("?".to_string(), |t| t.to_string());
        match devices.iter_mut().find(|(d, _)| *d == b.device) {
            Some((_, t)) => t.push(trip),
            None => devices.push((&b.device, vec![trip])),
        }
    }
    if devices.is_empty() {
        return "-".into();
    }
    devices
        .iter()
        .map(|(d, t)| {
            let kind = th
                .cooling
                .iter()
                .find(|c| c.device == *d)
                .map_or(*d, |c| c.kind.as_str());
            let s = if t.len() == 1 { "" } else { "s" };
            format!("{kind} at trip{s} {}", t.join(","))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The whole report.
pub fn report(r: &Report) -> String {
    let th = &r.thermal;
    let mut out = String::new();
    if let Some(note) = &r.simulated {
        out.push_str(&format!("{note}\n\n"));
    }
    match &r.zones_missing {
        Some(why) => out.push_str(&format!(
            "thermal zones: not available here because {why}\n\n"
        )),
        None => {
            let mut t = Table::new(&[
                "zone",
                "type",
                "temp °C",
                "mode",
                "policy",
                "trip points °C (type, temp ±hyst)",
                "cooling devices bound",
            ]);
            for z in &th.zones {
                t.row(vec![
                    z.zone.clone(),
                    z.kind.clone(),
                    match &z.temp_mc {
                        Avail::Value(mc) => celsius(*mc),
                        Avail::Unavailable(_) => "n/a".into(),
                    },
                    z.mode.clone().unwrap_or_else(|| "-".into()),
                    z.policy.clone().unwrap_or_else(|| "-".into()),
                    trips(z),
                    bound(z, th),
                ]);
            }
            out.push_str(&t.render());
            for z in &th.zones {
                if let Avail::Unavailable(why) = &z.temp_mc {
                    out.push_str(&format!("{} ({}): no temperature: {why}\n", z.zone, z.kind));
                }
            }
            out.push('\n');
        }
    }
    if th.cooling.is_empty() {
        out.push_str("cooling devices: none registered\n");
    } else {
        let mut t = Table::new(&[
            "cooling device",
            "type",
            "state",
            "max state",
            "zones bound",
        ]);
        for c in &th.cooling {
            t.row(vec![
                c.device.clone(),
                c.kind.clone(),
                c.cur_state.map_or("-".into(), |s| s.to_string()),
                c.max_state.map_or("-".into(), |s| s.to_string()),
                if c.zones.is_empty() {
                    "-".into()
                } else {
                    c.zones.join(", ")
                },
            ]);
        }
        out.push_str(&t.render());
        out.push_str("state 0 is no cooling; a cpufreq device's state N caps its policy N steps below the top of its frequency table\n");
    }
    if let Some(w) = &r.watch {
        out.push('\n');
        out.push_str(&watch(w, th));
    }
    out
}

/// The series (the hottest zone and the active cooling at each sample)
/// and each zone's first, peak and last reading.
fn watch(w: &WatchReport, th: &Thermal) -> String {
    let what = if w.command.is_empty() {
        format!("every {} s", w.interval_s)
    } else {
        format!(
            "every {} s while `{}` ran",
            w.interval_s,
            w.command.join(" ")
        )
    };
    let mut out = format!("watched {} samples {what}\n", w.watch.samples.len());
    let mut t = Table::new(&["t s", "hottest zone", "°C", "cooling active (state/max)"]);
    for s in &w.watch.samples {
        let hottest = s
            .temps_mc
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, (*t)?)))
            .max_by_key(|(_, t)| *t);
        let active: Vec<String> = s
            .states
            .iter()
            .zip(&th.cooling)
            .filter_map(|(st, c)| {
                let st = st.filter(|&n| n > 0)?;
                Some(format!(
                    "{} {st}/{}",
                    c.kind,
                    c.max_state.map_or("?".into(), |m| m.to_string())
                ))
            })
            .collect();
        t.row(vec![
            format!("{:.1}", s.elapsed_s),
            hottest.map_or("-".into(), |(i, _)| th.zones[i].kind.clone()),
            hottest.map_or("-".into(), |(_, mc)| celsius(mc)),
            if active.is_empty() {
                "none".into()
            } else {
                active.join(", ")
            },
        ]);
    }
    out.push_str(&t.render());
    if !w.watch.zones.is_empty() {
        out.push('\n');
        let mut t = Table::new(&[
            "zone",
            "type",
            "first °C",
            "peak °C",
            "at s",
            "last °C",
            "trip reached",
        ]);
        for z in &w.watch.zones {
            let zone = th.zones.iter().find(|x| x.zone == z.zone);
            let tripped = z.tripped.and_then(|i| {
                let tp = zone?.trips.iter().find(|t| t.index == i)?;
                Some(format!(
                    "{} {} (trip {i})",
                    tp.kind.as_deref().unwrap_or("?"),
                    opt_celsius(tp.temp_mc)
                ))
            });
            t.row(vec![
                z.zone.clone(),
                z.kind.clone(),
                opt_celsius(z.first_mc),
                opt_celsius(z.peak_mc),
                z.peak_at_s.map_or("-".into(), |s| format!("{s:.1}")),
                opt_celsius(z.last_mc),
                tripped.unwrap_or_else(|| "none".into()),
            ]);
        }
        out.push_str(&t.render());
    }
    let engaged: Vec<String> = w
        .watch
        .cooling
        .iter()
        .filter(|c| c.max_seen.is_some_and(|m| m > 0))
        .map(|c| {
            format!(
                "{} ({}) up to state {}",
                c.device,
                c.kind,
                c.max_seen.unwrap_or(0)
            )
        })
        .collect();
    out.push_str(&match engaged.is_empty() {
        true => "no cooling device engaged during the watch\n".to_string(),
        false => format!("cooling engaged: {}\n", engaged.join(", ")),
    });
    out
}
