//! Two runs' conditions side by side: what differs (shown at the top of
//! `lever bench compare` and `lever report render A B`), and whether a
//! change between them may be called significant at all.

use crate::{Avail, Conditions, Policy, ThrottleKind, TEMP_DIFFERENCE_MC};
use serde::{Deserialize, Serialize};

/// One condition that differs between the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// What (`kernel release`, `policy4 governor`, `load`).
    pub what: String,
    /// In the base run.
    pub base: String,
    /// In the new run.
    pub new: String,
}

/// The conditions of two runs, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Conditions that differ, most important first.
    pub differences: Vec<Difference>,
    /// Why either run's figures cannot be trusted (`base run: …`, `new
    /// run: …`); empty when both were quiet and unthrottled.
    pub disturbed: Vec<String>,
    /// `--force` was given: changes are judged even though a run was
    /// disturbed.
    pub forced: bool,
    /// Changes may be called significant: no load or throttling disturbed
    /// either run, or `--force`. A change of the machine's own speed
    /// concerns only the tests that depend on the probe that saw it
    /// ([`Comparison::judges`]).
    pub judged: bool,
    /// The probes whose speed changed within either run or between them
    /// (`latency`), each once; their sentences are in `disturbed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speed_changed: Vec<String>,
    /// Load or throttling disturbed either run (what withholds every
    /// verdict unless `--force`; a probe's speed change concerns only
    /// the tests that depend on it).
    #[serde(default)]
    pub machine_wide: bool,
}

impl Comparison {
    /// Whether a change of a test that depends on the probes `depends_on`
    /// (by name: every test on `cpu`, a memory latency test on `latency`
    /// too) may be called significant: [`Comparison::judged`], and none
    /// of those probes saw the machine's speed change, or `--force`. On a
    /// shared VM the latency probe (dependent loads past L2) moves by
    /// 20–47 % between the halves of a quiet run while the syscall,
    /// process and CPU tests hold still; withholding them all for it left
    /// no quiet pair judged.
    pub fn judges(&self, depends_on: &[&str]) -> bool {
        self.judged
            && (self.forced
                || !self
                    .speed_changed
                    .iter()
                    .any(|p| depends_on.contains(&p.as_str())))
    }

    /// Whether both runs were quiet as far as a test that depends on the
    /// probes `depends_on` goes: no load or throttling in either, and none
    /// of those probes saw the machine's speed change. `--force` judges a
    /// disturbed run; it does not make it quiet.
    pub fn quiet_for(&self, depends_on: &[&str]) -> bool {
        !self.machine_wide
            && !self
                .speed_changed
                .iter()
                .any(|p| depends_on.contains(&p.as_str()))
    }

    /// What the disturbances do to the verdicts, one line for people;
    /// `None` when nothing disturbed either run.
    pub fn judging_note(&self) -> Option<String> {
        if self.disturbed.is_empty() {
            return None;
        }
        Some(if self.forced {
            "changes are judged anyway (--force): they may come from these conditions, not from the code".to_string()
        } else if !self.judged {
            "no change is called significant: the figures were not measured under the same quiet conditions (--force judges anyway)".to_string()
        } else {
            format!(
                "changes of the tests that depend on the {} probe{} are not called significant; the other tests are judged (--force judges all)",
                self.speed_changed.join(", "),
                if self.speed_changed.len() == 1 { "" } else { "s" }
            )
        })
    }

    /// One line for the tests that would have regressed (`names`) but were
    /// withheld because the speed of a probe they depend on (`depends_on`,
    /// all of theirs together) changed ([`Comparison::judges`]), naming
    /// those probes only.
    pub fn speed_reason(&self, names: &[String], depends_on: &[&str]) -> Option<String> {
        let changed: Vec<&str> = self
            .speed_changed
            .iter()
            .map(String::as_str)
            .filter(|p| depends_on.contains(p))
            .collect();
        if changed.is_empty() || names.is_empty() {
            return None;
        }
        let probes = match &changed[..] {
            [one] => format!("the {one} probe, whose timing"),
            many => format!("the {} probes, whose timings", many.join(", ")),
        };
        let tests = match names {
            [one] => format!("{one} got worse by more than the threshold, but depends"),
            many => format!(
                "{} tests got worse by more than the threshold ({}), but depend",
                many.len(),
                many.join(", ")
            ),
        };
        Some(format!(
            "not judged: {tests} on {probes} changed (the machine's own speed, above); rerun on a quiet machine, or pass --force to judge anyway"
        ))
    }

    /// One line for a result that was not judged, naming the first reason.
    pub fn withheld_reason(&self) -> Option<String> {
        (!self.judged).then(|| {
            format!(
                "not judged: {}{}; rerun on a quiet machine, or pass --force to judge anyway",
                self.disturbed.first().map(String::as_str).unwrap_or("?"),
                match self.disturbed.len() {
                    0 | 1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                }
            )
        })
    }
}

/// Compare the conditions of `base` and `new`. A run without a record
/// (written by an older Lever) is shown as such and does not stop the
/// judgement; a disturbed run does, unless `force`.
pub fn compare(base: Option<&Conditions>, new: Option<&Conditions>, force: bool) -> Comparison {
    let mut differences = Vec::new();
    let mut disturbed = Vec::new();
    match (base, new) {
        (Some(b), Some(n)) => differences = differ(b, n),
        (b, n) => {
            let say = |c: Option<&Conditions>| match c {
                Some(_) => "recorded".to_string(),
                None => "not recorded (written by an older Lever)".to_string(),
            };
            if b.is_some() || n.is_some() {
                differences.push(Difference {
                    what: "conditions".into(),
                    base: say(b),
                    new: say(n),
                });
            }
        }
    }
    let mut speed_changed: Vec<String> = Vec::new();
    let mut machine_wide = false;
    let mut note = |probe: Option<String>| match probe {
        Some(p) => {
            if !speed_changed.contains(&p) {
                speed_changed.push(p);
            }
        }
        None => machine_wide = true,
    };
    for (side, c) in [("base run", base), ("new run", new)] {
        for d in c.map(Conditions::disturbances).unwrap_or_default() {
            disturbed.push(format!("{side}: {}", d.text));
            note(d.probe);
        }
    }
    // Both quiet, but the machine itself ran at another speed.
    if let (Some(b), Some(n)) = (
        base.and_then(|c| c.speed.as_ref()),
        new.and_then(|c| c.speed.as_ref()),
    ) {
        for c in crate::speed::changes_between(b, n) {
            disturbed.push(c.text);
            note(Some(c.probe));
        }
    }
    Comparison {
        judged: !machine_wide || force,
        machine_wide,
        forced: force,
        differences,
        disturbed,
        speed_changed,
    }
}

fn text<T: ToString>(a: &Avail<T>) -> String {
    match a {
        Avail::Value(v) => v.to_string(),
        Avail::Unavailable(why) => format!("not available ({why})"),
    }
}

fn differ(b: &Conditions, n: &Conditions) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut push = |what: &str, base: String, new: String| {
        if base != new {
            out.push(Difference {
                what: what.into(),
                base,
                new,
            });
        }
    };
    let state = |c: &Conditions| {
        let d = c.disturbances();
        let load: Vec<_> = d
            .iter()
            .filter(|d| d.kind == "load")
            .map(|d| d.text.clone())
            .collect();
        let throttle: Vec<_> = d
            .iter()
            .filter(|d| d.kind == "throttling")
            .map(|d| d.text.clone())
            .collect();
        let or = |v: Vec<String>, quiet: &str| {
            if v.is_empty() {
                quiet.to_string()
            } else {
                v.join("; ")
            }
        };
        (or(load, "quiet"), or(throttle, "none"))
    };
    let (bl, bt) = state(b);
    let (nl, nt) = state(n);
    push("load", bl, nl);
    push("throttling", bt, nt);
    if let (Some(sb), Some(sn)) = (&b.speed, &n.speed) {
        for (name, _, mb, mn, pct) in sb.against(sn) {
            if pct.abs() > crate::SPEED_TOLERANCE_PCT {
                push(
                    &format!("machine speed ({name} probe, median)"),
                    crate::speed::time_text(mb),
                    format!("{} ({pct:+.0} %)", crate::speed::time_text(mn)),
                );
            }
        }
    }
    let model = |c: &Conditions| match &c.machine {
        Avail::Value(m) => {
            let mut parts: Vec<String> = [&m.model, &m.hostname, &m.arch]
                .into_iter()
                .flatten()
                .cloned()
                .collect();
            parts.push(format!("{} CPUs online", m.cpus_online));
            parts.join(", ")
        }
        Avail::Unavailable(why) => format!("not available ({why})"),
    };
    push("machine", model(b), model(n));
    push(
        "simulated",
        b.simulated.clone().unwrap_or_else(|| "no".into()),
        n.simulated.clone().unwrap_or_else(|| "no".into()),
    );
    push(
        "kernel release",
        text(&b.kernel_release),
        text(&n.kernel_release),
    );
    push("kernel command line", text(&b.cmdline), text(&n.cmdline));
    let iso = |c: &Conditions| match &c.isolated_cpus {
        Avail::Value(v) if v.is_empty() => "none".to_string(),
        other => text(other),
    };
    push("isolated CPUs", iso(b), iso(n));
    push(
        "Lever version",
        b.lever_version.clone(),
        n.lever_version.clone(),
    );
    let policies = |c: &Conditions| c.cpufreq_before.value().cloned().unwrap_or_default();
    let (bp, np) = (policies(b), policies(n));
    for p in &bp {
        let q = np.iter().find(|q| q.name == p.name);
        policy_diff(p, q, &mut push);
    }
    for q in np.iter().filter(|q| !bp.iter().any(|p| p.name == q.name)) {
        push(
            &format!("{} (CPUs {})", q.name, q.cpus),
            "absent".into(),
            "present".into(),
        );
    }
    let caps = |c: &Conditions| {
        let v: Vec<String> = c
            .throttling
            .value()
            .into_iter()
            .flatten()
            .filter(|t| t.kind == ThrottleKind::Capped)
            .map(|t| format!("{}: {}", t.what, t.detail))
            .collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join("; ")
        }
    };
    push("standing clock caps", caps(b), caps(n));
    let hottest = |c: &Conditions| {
        c.thermal_before
            .value()
            .and_then(|t| t.hottest().cloned())
            .and_then(|z| Some((z.temp_mc?, z.kind)))
    };
    if let (Some((tb, kb)), Some((tn, kn))) = (hottest(b), hottest(n)) {
        if (tb - tn).abs() >= TEMP_DIFFERENCE_MC {
            push(
                "hottest zone before the run",
                format!("{:.1} °C ({kb})", tb as f64 / 1000.0),
                format!("{:.1} °C ({kn})", tn as f64 / 1000.0),
            );
        }
    }
    out
}

fn policy_diff(p: &Policy, q: Option<&Policy>, push: &mut impl FnMut(&str, String, String)) {
    let what = |field: &str| format!("{} {field}", p.name);
    let Some(q) = q else {
        push(
            &format!("{} (CPUs {})", p.name, p.cpus),
            "present".into(),
            "absent".into(),
        );
        return;
    };
    let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let k = |v: Option<u64>| v.map_or_else(|| "unknown".into(), |k| format!("{k} kHz"));
    push(&what("governor"), s(&p.governor), s(&q.governor));
    push(&what("scaling_min_freq"), k(p.min_khz), k(q.min_khz));
    push(&what("scaling_max_freq"), k(p.max_khz), k(q.max_khz));
    push(
        &what("cpuinfo_max_freq"),
        k(p.cpuinfo_max_khz),
        k(q.cpuinfo_max_khz),
    );
}
