//! The conditions of a run: what was true on the machine before, during
//! and after a measurement, and what two runs' conditions say about
//! comparing them.
//!
//! A board that throttles, or a machine busy with something else, gives
//! numbers that look like a regression (or an improvement). `lever bench`,
//! `lever latency`, `lever report collect` and `lever trace record` keep a
//! [`Conditions`] record with their result: load average and runnable
//! tasks, every cpufreq policy's governor and min/max/current clock,
//! thermal zone temperatures and cooling-device states, throttling seen
//! during the run, the kernel, its command line, the isolated CPUs, the
//! Lever version and the machine. `lever bench compare` and `lever report
//! render A B` put a difference in conditions at the top and decline to
//! call a change significant when either run was disturbed ([`compare`]).
//!
//! This crate is plain data and pure functions (no I/O, no clock):
//! `lever_measure::conditions` reads the machine into [`Snapshot`]s and
//! [`Fixed`] facts; [`Conditions::new`] derives the record from them.
//! Every field that could not be read says why ([`Avail::Unavailable`]).
//!
//! ```
//! use lever_conditions::*;
//! let quiet = Snapshot {
//!     elapsed_s: 0.0,
//!     load: Avail::Value(Load { load_1m: 0.05, load_5m: 0.1, load_15m: 0.1, runnable: 1, tasks: 120 }),
//!     cpufreq: Avail::Unavailable("no cpufreq policies: this kernel has no cpufreq driver".into()),
//!     thermal: Avail::Unavailable("no thermal zones".into()),
//! };
//! let fixed = Fixed::unknown("0.1.0", 2);
//! let base = Conditions::new(fixed.clone(), &quiet, Avail::Value(vec![]), &quiet);
//! assert!(base.disturbances().is_empty());
//!
//! let mut busy = quiet.clone();
//! busy.load = Avail::Value(Load { load_1m: 6.8, load_5m: 5.0, load_15m: 3.0, runnable: 8, tasks: 130 });
//! let new = Conditions::new(fixed, &busy, Avail::Value(vec![]), &busy);
//! let c = compare(Some(&base), Some(&new), false);
//! assert!(!c.judged, "a loaded run is not judged without --force");
//! assert!(c.disturbed[0].starts_with("new run: loaded before the run: load average 6.80 on 2 CPUs"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod avail;
mod compare;
pub mod speed;

pub use avail::Avail;
pub use compare::{compare, Comparison, Difference};
pub use speed::{Probe, Speed, SpeedChange, SPEED_TOLERANCE_PCT};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Busy is more than this fraction of the CPUs taken by other work: a
/// quarter of a CPU elsewhere already competes with a benchmark's threads
/// and widens its spread (the rule `lever bench` has always warned by).
pub const BUSY_FRACTION: f64 = 0.25;

/// Runnable tasks a run counts as its own while it is sampled: the
/// sampler reading `/proc/loadavg` (the kernel counts the reader) and the
/// measurement's thread.
pub const OWN_RUNNABLE: f64 = 2.0;

/// Under `performance` a clock below this share of the policy's own
/// `scaling_max_freq` was held down by something other than the governor
/// (a firmware or thermal limit).
pub const HELD_DOWN_SHARE: f64 = 0.95;

/// Two runs' hottest zones differ noticeably by this much, m°C.
pub const TEMP_DIFFERENCE_MC: i64 = 5_000;

/// `/proc/loadavg` at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Load average over 1 minute.
    pub load_1m: f64,
    /// Load average over 5 minutes.
    pub load_5m: f64,
    /// Load average over 15 minutes.
    pub load_15m: f64,
    /// Runnable tasks (the reader included: at least 1).
    pub runnable: u32,
    /// Tasks (threads) in the system.
    pub tasks: u32,
}

/// One cpufreq policy at one moment. kHz as the kernel prints them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// `policy0`.
    pub name: String,
    /// `related_cpus` as a list (`0-3`).
    pub cpus: String,
    /// `scaling_governor`.
    pub governor: Option<String>,
    /// `scaling_min_freq`.
    pub min_khz: Option<u64>,
    /// `scaling_max_freq`.
    pub max_khz: Option<u64>,
    /// `scaling_cur_freq`.
    pub cur_khz: Option<u64>,
    /// `cpuinfo_max_freq`: the hardware's highest clock.
    pub cpuinfo_max_khz: Option<u64>,
}

/// A thermal zone's temperature at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZoneTemp {
    /// `thermal_zone0`.
    pub zone: String,
    /// Its `type` (`cpu0-thermal`, `x86_pkg_temp`).
    pub kind: String,
    /// `temp`, millidegrees Celsius; `None` when the sensor did not answer.
    pub temp_mc: Option<i64>,
}

/// A cooling device's state at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoolingState {
    /// `cooling_device0`.
    pub device: String,
    /// Its `type` (`cpufreq-cpu4`, `Processor`).
    pub kind: String,
    /// `cur_state`: 0 is no cooling.
    pub cur_state: Option<u64>,
    /// `max_state`.
    pub max_state: Option<u64>,
}

/// Every thermal zone's temperature and every cooling device's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThermalState {
    /// Zones, in number order.
    pub zones: Vec<ZoneTemp>,
    /// Cooling devices, in number order.
    pub cooling: Vec<CoolingState>,
}

impl ThermalState {
    /// The hottest zone that answered.
    pub fn hottest(&self) -> Option<&ZoneTemp> {
        self.zones
            .iter()
            .filter(|z| z.temp_mc.is_some())
            .max_by_key(|z| z.temp_mc)
    }
}

/// What is read at each moment of a run: before, every interval during,
/// after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Seconds since the run started (0 before it).
    pub elapsed_s: f64,
    /// `/proc/loadavg`.
    pub load: Avail<Load>,
    /// Every cpufreq policy.
    pub cpufreq: Avail<Vec<Policy>>,
    /// Thermal zones and cooling devices.
    pub thermal: Avail<ThermalState>,
}

/// The machine, as far as the kernel names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Option<String>,
    /// The device tree `model`, or DMI's `product_name`.
    pub model: Option<String>,
    /// `uname -m` (only of the running system).
    pub arch: Option<String>,
    /// Online CPUs.
    pub cpus_online: u32,
}

/// What does not change during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fixed {
    /// The Lever that measured (`lever --version`).
    pub lever_version: String,
    /// Set when the kernel files came from `--root DIR` (a simulated board
    /// or a copied tree): their load, clocks and temperatures are that
    /// tree's fixed values, not live readings.
    pub simulated: Option<String>,
    /// The machine.
    pub machine: Avail<Machine>,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel_release: Avail<String>,
    /// `/proc/cmdline`.
    pub cmdline: Avail<String>,
    /// `/sys/devices/system/cpu/isolated` (`isolcpus=`), as a CPU list;
    /// empty when none are isolated.
    pub isolated_cpus: Avail<String>,
}

impl Fixed {
    /// Facts of a machine nothing could be read of (tests, examples).
    pub fn unknown(lever_version: &str, cpus_online: u32) -> Fixed {
        let why = || Avail::Unavailable("not read".to_string());
        Fixed {
            lever_version: lever_version.into(),
            simulated: None,
            machine: Avail::Value(Machine {
                cpus_online,
                ..Machine::default()
            }),
            kernel_release: why(),
            cmdline: why(),
            isolated_cpus: why(),
        }
    }
}

/// `/proc/loadavg` over the run's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadDuring {
    /// Samples taken while the run ran.
    pub samples: u32,
    /// The highest 1-minute load average seen.
    pub max_load_1m: f64,
    /// Mean runnable tasks (the sampler and the run's own threads
    /// included).
    pub mean_runnable: f64,
    /// Most runnable tasks seen.
    pub max_runnable: u32,
}

/// When something was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Before the run started.
    Before,
    /// While it ran.
    During,
    /// Right after it ended.
    After,
}

/// What kind of limit held a CPU's clock down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleKind {
    /// A cooling device was active (`cur_state` above 0).
    Cooling,
    /// A policy's `scaling_max_freq` fell below what it was before the
    /// run (thermal or firmware limits lower it through frequency QoS).
    MaxLowered,
    /// Under `performance`, the current clock stayed below the policy's
    /// own maximum.
    HeldDown,
    /// `scaling_max_freq` was below `cpuinfo_max_freq` already before the
    /// run and stayed there: a setting (a profile, a user), not a
    /// reaction to the run. Compared as a difference, it does not make a
    /// run disturbed by itself.
    Capped,
}

impl ThrottleKind {
    /// True for the kinds that happened to the run (everything but a
    /// standing [`ThrottleKind::Capped`] setting).
    pub fn disturbs(self) -> bool {
        !matches!(self, ThrottleKind::Capped)
    }
}

/// A limit on a CPU clock, seen at some moment of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throttle {
    /// `policy4`, or `cooling_device3 (cpufreq-cpu4)`.
    pub what: String,
    /// What kind of limit.
    pub kind: ThrottleKind,
    /// When it was first seen.
    pub first_seen: Phase,
    /// The figures, for people (`scaling_max_freq 1804800 kHz, cpuinfo_max_freq 2400000 kHz`).
    pub detail: String,
}

/// The conditions of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// The Lever that measured.
    pub lever_version: String,
    /// Set when the kernel files came from `--root DIR`: values are that
    /// tree's, not live readings (see [`Fixed::simulated`]).
    #[serde(default)]
    pub simulated: Option<String>,
    /// The machine.
    pub machine: Avail<Machine>,
    /// Kernel release.
    pub kernel_release: Avail<String>,
    /// Kernel command line.
    pub cmdline: Avail<String>,
    /// Isolated CPUs (a CPU list; empty: none).
    pub isolated_cpus: Avail<String>,
    /// `/proc/loadavg` before the run.
    pub load_before: Avail<Load>,
    /// `/proc/loadavg` while it ran.
    pub load_during: Avail<LoadDuring>,
    /// `/proc/loadavg` right after.
    pub load_after: Avail<Load>,
    /// Every cpufreq policy before the run.
    pub cpufreq_before: Avail<Vec<Policy>>,
    /// Every cpufreq policy right after.
    pub cpufreq_after: Avail<Vec<Policy>>,
    /// Thermal zones and cooling devices before the run.
    pub thermal_before: Avail<ThermalState>,
    /// Thermal zones and cooling devices right after.
    pub thermal_after: Avail<ThermalState>,
    /// The hottest reading of each zone over every sample.
    pub thermal_peak: Avail<Vec<ZoneTemp>>,
    /// Limits on the CPU clocks seen before, during or after the run.
    pub throttling: Avail<Vec<Throttle>>,
    /// The machine's own speed by fixed probes (`lever bench`, which times
    /// them before each test of each pass); `None` where the run timed
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<Speed>,
}

/// Why a run's figures cannot be trusted against another run's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// `load`, `throttling` or `speed`.
    pub kind: String,
    /// When it was seen (throttling: first seen).
    pub phase: Phase,
    /// What was seen, for people.
    pub text: String,
    /// For `speed`: the probe whose speed changed (`latency`); it concerns
    /// only the tests that depend on it ([`Comparison::judges`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
}

impl Conditions {
    /// The record of a run from its fixed facts and its snapshots: one
    /// before, those taken `during` (or why none were), one after.
    pub fn new(
        fixed: Fixed,
        before: &Snapshot,
        during: Avail<Vec<Snapshot>>,
        after: &Snapshot,
    ) -> Conditions {
        let load_during = match &during {
            Avail::Value(d) => load_during(d),
            Avail::Unavailable(why) => Avail::Unavailable(why.clone()),
        };
        let samples: Vec<(Phase, &Snapshot)> = std::iter::once((Phase::Before, before))
            .chain(
                during
                    .value()
                    .into_iter()
                    .flatten()
                    .map(|s| (Phase::During, s)),
            )
            .chain(std::iter::once((Phase::After, after)))
            .collect();
        Conditions {
            lever_version: fixed.lever_version,
            simulated: fixed.simulated,
            machine: fixed.machine,
            kernel_release: fixed.kernel_release,
            cmdline: fixed.cmdline,
            isolated_cpus: fixed.isolated_cpus,
            load_before: before.load.clone(),
            load_during,
            load_after: after.load.clone(),
            cpufreq_before: before.cpufreq.clone(),
            cpufreq_after: after.cpufreq.clone(),
            thermal_before: before.thermal.clone(),
            thermal_after: after.thermal.clone(),
            thermal_peak: thermal_peak(&samples),
            throttling: throttling(&samples),
            speed: None,
        }
    }

    /// Online CPUs (0 when unknown).
    pub fn cpus(&self) -> u32 {
        self.machine.value().map_or(0, |m| m.cpus_online)
    }

    /// What makes this run's figures untrustworthy against another's:
    /// other work on the machine ([`BUSY_FRACTION`] of the CPUs before the
    /// run by the 1-minute load average and by the tasks runnable then
    /// besides the reader, or during it by runnable tasks
    /// beyond the run's own [`OWN_RUNNABLE`]), and throttling of any kind
    /// but a standing cap ([`ThrottleKind::disturbs`]), and a change of the
    /// machine's own speed during the run ([`Speed::changes_within`]).
    /// Empty for a quiet run.
    pub fn disturbances(&self) -> Vec<Disturbance> {
        let cpus = self.cpus().max(1);
        let busy = BUSY_FRACTION * cpus as f64;
        let mut out = Vec::new();
        // Loaded before: the 1-minute average says the machine was busy
        // lately, and runnable tasks besides the reader say it still is.
        // The average alone would count a run made a minute earlier (it
        // decays over minutes: two quiet runs back to back had 0.53 on 2
        // CPUs), the instant count alone a passing blip.
        if let Some(l) = self
            .load_before
            .value()
            .filter(|l| l.load_1m > busy && f64::from(l.runnable.saturating_sub(1)) > busy)
        {
            out.push(Disturbance {
                kind: "load".into(),
                phase: Phase::Before,
                text: format!(
                    "loaded before the run: load average {:.2} on {cpus} CPUs, {} other tasks runnable",
                    l.load_1m,
                    l.runnable.saturating_sub(1)
                ),
                probe: None,
            });
        }
        if let Some(d) = self
            .load_during
            .value()
            .filter(|d| d.samples > 0 && d.mean_runnable - OWN_RUNNABLE > busy)
        {
            out.push(Disturbance {
                kind: "load".into(),
                phase: Phase::During,
                text: format!(
                    "loaded during the run: {:.1} runnable tasks on average on {cpus} CPUs \
                     ({OWN_RUNNABLE:.0} are the run's own), load average up to {:.2}",
                    d.mean_runnable, d.max_load_1m
                ),
                probe: None,
            });
        }
        for t in self
            .throttling
            .value()
            .into_iter()
            .flatten()
            .filter(|t| t.kind.disturbs())
        {
            out.push(Disturbance {
                kind: "throttling".into(),
                phase: t.first_seen,
                text: format!(
                    "throttled ({}): {}: {}",
                    phase_word(t.first_seen),
                    t.what,
                    t.detail
                ),
                probe: None,
            });
        }
        for c in self.speed.iter().flat_map(Speed::changes_within) {
            out.push(Disturbance {
                kind: "speed".into(),
                phase: Phase::During,
                text: c.text,
                probe: Some(c.probe),
            });
        }
        out
    }
}

fn phase_word(p: Phase) -> &'static str {
    match p {
        Phase::Before => "before the run",
        Phase::During => "during the run",
        Phase::After => "after the run",
    }
}

fn load_during(samples: &[Snapshot]) -> Avail<LoadDuring> {
    let loads: Vec<&Load> = samples.iter().filter_map(|s| s.load.value()).collect();
    if loads.is_empty() {
        return Avail::Unavailable(match samples.first().map(|s| &s.load) {
            Some(Avail::Unavailable(why)) => why.clone(),
            _ => "no sample was taken while the run ran (it ended within one interval)".into(),
        });
    }
    Avail::Value(LoadDuring {
        samples: loads.len() as u32,
        max_load_1m: loads.iter().map(|l| l.load_1m).fold(0.0, f64::max),
        mean_runnable: loads.iter().map(|l| l.runnable as f64).sum::<f64>() / loads.len() as f64,
        max_runnable: loads.iter().map(|l| l.runnable).max().unwrap_or(0),
    })
}

fn thermal_peak(samples: &[(Phase, &Snapshot)]) -> Avail<Vec<ZoneTemp>> {
    let mut peak: Vec<ZoneTemp> = Vec::new();
    let mut why = None;
    for (_, s) in samples {
        match &s.thermal {
            Avail::Value(t) => {
                for z in &t.zones {
                    match peak.iter_mut().find(|p| p.zone == z.zone) {
                        Some(p) => p.temp_mc = p.temp_mc.max(z.temp_mc),
                        None => peak.push(z.clone()),
                    }
                }
            }
            Avail::Unavailable(w) => why = Some(w.clone()),
        }
    }
    match (peak.is_empty(), why) {
        (true, Some(w)) => Avail::Unavailable(w),
        _ => Avail::Value(peak),
    }
}

/// Every limit seen, one entry per (what, kind): the first moment it was
/// seen and its worst figures.
fn throttling(samples: &[(Phase, &Snapshot)]) -> Avail<Vec<Throttle>> {
    let no_cpufreq = samples.iter().all(|(_, s)| s.cpufreq.value().is_none());
    let no_cooling = samples
        .iter()
        .all(|(_, s)| s.thermal.value().is_none_or(|t| t.cooling.is_empty()));
    if no_cpufreq && no_cooling {
        return Avail::Unavailable(
            "no cpufreq policy and no cooling device to show a limit on the CPU clocks".into(),
        );
    }
    // (what, kind) → (first seen, severity for "worst", detail)
    let mut seen: BTreeMap<(String, ThrottleKind), (Phase, i64, String)> = BTreeMap::new();
    let mut note = |what: String, kind, phase, severity: i64, detail: String| {
        let e = seen
            .entry((what, kind))
            .or_insert((phase, severity, detail.clone()));
        if severity > e.1 {
            e.1 = severity;
            e.2 = detail;
        }
    };
    let first: BTreeMap<&str, &Policy> = samples
        .first()
        .and_then(|(_, s)| s.cpufreq.value())
        .into_iter()
        .flatten()
        .map(|p| (p.name.as_str(), p))
        .collect();
    for (phase, s) in samples {
        for c in s.thermal.value().into_iter().flat_map(|t| &t.cooling) {
            if let Some(state) = c.cur_state.filter(|&n| n > 0) {
                let of = c.max_state.map(|m| format!(" of {m}")).unwrap_or_default();
                note(
                    format!("{} ({})", c.device, c.kind),
                    ThrottleKind::Cooling,
                    *phase,
                    state as i64,
                    format!("cur_state {state}{of}"),
                );
            }
        }
        for p in s.cpufreq.value().into_iter().flatten() {
            let (Some(max), Some(hw)) = (p.max_khz, p.cpuinfo_max_khz) else {
                continue;
            };
            let before_max = first.get(p.name.as_str()).and_then(|b| b.max_khz);
            if before_max.is_some_and(|b| max < b) {
                note(
                    p.name.clone(),
                    ThrottleKind::MaxLowered,
                    *phase,
                    -(max as i64),
                    format!(
                        "scaling_max_freq {} → {max} kHz (cpuinfo_max_freq {hw} kHz)",
                        before_max.unwrap_or(0)
                    ),
                );
            } else if max < hw {
                note(
                    p.name.clone(),
                    ThrottleKind::Capped,
                    *phase,
                    -(max as i64),
                    format!("scaling_max_freq {max} kHz, cpuinfo_max_freq {hw} kHz"),
                );
            }
            let performance = p.governor.as_deref() == Some("performance");
            if let Some(cur) = p
                .cur_khz
                .filter(|&c| performance && (c as f64) < HELD_DOWN_SHARE * max as f64)
            {
                note(
                    p.name.clone(),
                    ThrottleKind::HeldDown,
                    *phase,
                    -(cur as i64),
                    format!("scaling_cur_freq {cur} kHz under `performance`, scaling_max_freq {max} kHz"),
                );
            }
        }
    }
    let mut list: Vec<Throttle> = seen
        .into_iter()
        .map(|((what, kind), (first_seen, _, detail))| Throttle {
            what,
            kind,
            first_seen,
            detail,
        })
        .collect();
    list.sort_by(|a, b| (a.first_seen, &a.what).cmp(&(b.first_seen, &b.what)));
    Avail::Value(list)
}

#[cfg(test)]
mod tests;
