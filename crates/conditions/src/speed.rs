//! The machine's own speed during a run, as fixed probes timed it.
//!
//! On a shared or virtual machine the host can slow a guest by 20–35 % for
//! minutes at a time (a busy sibling hyperthread, another guest's memory
//! traffic) with no sign inside it: no load, no steal time, no cpufreq
//! change. Two quiet runs of the same build then differ on whole families
//! of tests, and a comparison cannot tell that from a slower build. A probe
//! does the same work every time, so its time is the machine's speed at
//! that moment. `lever bench` times its probes before the first pass, after
//! each pass and at the end ([`Speed`]); a probe whose time moved by more
//! than [`SPEED_TOLERANCE_PCT`] within a run, or between two runs, says
//! the machine itself changed speed, and the runs are not judged against
//! each other (as under load or throttling) unless `--force`.

use serde::{Deserialize, Serialize};

/// A probe's time may move this much, percent, before the machine's speed
/// counts as changed: the default regression threshold of `lever bench
/// compare`, so a change of speed smaller than it cannot by itself make a
/// regression past it.
pub const SPEED_TOLERANCE_PCT: f64 = 10.0;

/// Fewer timings than this (of a probe in one run) do not say whether the
/// machine's speed changed: the median of a few wanders past
/// [`SPEED_TOLERANCE_PCT`] by chance on a shared machine. CI's quick runs
/// of five tests (ten timings, five per half) on an otherwise idle VM saw
/// +11 %, −20 % and −15 % between their halves. A run with fewer shows its
/// speed but is not judged by it, within itself or against another run.
pub const SPEED_MIN_TIMINGS: usize = 20;

/// A probe whose speed changed, within a run or between two
/// ([`Speed::changes_within`], [`changes_between`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedChange {
    /// The probe (`cpu`, `latency`, `bandwidth`): what the change concerns
    /// (a comparison withholds the verdicts of the tests that depend on
    /// it, [`crate::Comparison::judges`]).
    pub probe: String,
    /// What changed, for people.
    pub text: String,
}

/// The probes' timings of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    /// Each probe, in the order they ran.
    pub probes: Vec<Probe>,
    /// When the probes were timed (`before each test of each pass`).
    pub when: String,
}

/// One fixed probe and its timings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Short name: `cpu`, `cache`, `memory`.
    pub name: String,
    /// What it does, for people (`integer work over 64 KiB`).
    pub what: String,
    /// Its time at each moment of [`Speed::when`] (the fastest of a few
    /// repeats), nanoseconds, in order.
    pub samples_ns: Vec<f64>,
}

/// The finite values of `v`, sorted.
fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The median of the finite values of `v`; `None` without any.
fn median(v: &[f64]) -> Option<f64> {
    let v = sorted(v);
    let m = v.len() / 2;
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[m]),
        _ => Some((v[m - 1] + v[m]) / 2.0),
    }
}

impl Probe {
    /// The median of its timings, ns; `None` without any.
    pub fn median_ns(&self) -> Option<f64> {
        median(&self.samples_ns)
    }

    /// The range most timings fall in: the 10th and 90th percentiles with
    /// ten timings or more (so one preempted timing does not count), else
    /// the fastest and the slowest; `None` with fewer than two.
    pub fn range_ns(&self) -> Option<(f64, f64)> {
        let v = sorted(&self.samples_ns);
        if v.len() < 2 {
            return None;
        }
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Some(if v.len() >= 10 {
            (at(0.1), at(0.9))
        } else {
            (v[0], v[v.len() - 1])
        })
    }

    /// The top of [`Probe::range_ns`] over its bottom, less one, percent.
    pub fn spread_pct(&self) -> Option<f64> {
        let (lo, hi) = self.range_ns()?;
        (lo > 0.0).then(|| 100.0 * (hi / lo - 1.0))
    }
}

/// A time for people: `812 µs`, `3.10 ms`.
pub fn time_text(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.0} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

impl Speed {
    /// One line for people: each probe's median and spread.
    pub fn summary(&self) -> String {
        let probes: Vec<String> = self
            .probes
            .iter()
            .map(|p| {
                format!(
                    "{} {}{}",
                    p.name,
                    p.median_ns().map_or("?".into(), time_text),
                    p.spread_pct()
                        .map_or(String::new(), |s| format!(" (±{:.0} %)", s / 2.0))
                )
            })
            .collect();
        format!(
            "{} (fixed probes, medians of {} timings, {})",
            probes.join(", "),
            self.probes.first().map_or(0, |p| p.samples_ns.len()),
            self.when
        )
    }

    /// The probes whose median moved by more than [`SPEED_TOLERANCE_PCT`]
    /// from the first half of the run's timings to the second, each as a
    /// sentence; none for a probe of fewer than [`SPEED_MIN_TIMINGS`]
    /// timings. Halves, not single timings: a shared machine's memory
    /// system wanders by 10-25 % from one second to the next (one 16 MiB
    /// read took 0.94-1.27 ms over three seconds on the 2-vCPU VM Lever is
    /// built on), which a benchmark's own samples average out; a change
    /// that lasts is what makes one part of a run unlike the other.
    pub fn changes_within(&self) -> Vec<SpeedChange> {
        self.probes
            .iter()
            .filter_map(|p| {
                if p.samples_ns.len() < SPEED_MIN_TIMINGS {
                    return None;
                }
                let half = p.samples_ns.len() / 2;
                let first = median(&p.samples_ns[..half])?;
                let second = median(&p.samples_ns[p.samples_ns.len() - half..])?;
                let pct = 100.0 * (second - first) / first;
                (first > 0.0 && pct.abs() > SPEED_TOLERANCE_PCT).then(|| SpeedChange {
                    probe: p.name.clone(),
                    text: format!(
                        "the machine's own speed changed during the run: the {} probe ({}) took {} in the first half of the run and {} in the second ({pct:+.0} %, medians of {half} timings each)",
                        p.name,
                        p.what,
                        time_text(first),
                        time_text(second),
                    ),
                })
            })
            .collect()
    }

    /// Each probe both runs timed, [`SPEED_MIN_TIMINGS`] times or more
    /// each: (name, what, base median, new median, change percent).
    pub fn against(&self, new: &Speed) -> Vec<(String, String, f64, f64, f64)> {
        let enough = |p: &Probe| p.samples_ns.len() >= SPEED_MIN_TIMINGS;
        self.probes
            .iter()
            .filter(|b| enough(b))
            .filter_map(|b| {
                let n = new.probes.iter().find(|n| n.name == b.name && enough(n))?;
                let (mb, mn) = (b.median_ns()?, n.median_ns()?);
                (mb > 0.0).then(|| {
                    (
                        b.name.clone(),
                        b.what.clone(),
                        mb,
                        mn,
                        100.0 * (mn - mb) / mb,
                    )
                })
            })
            .collect()
    }
}

/// Why two runs' speeds make them incomparable: each probe whose median
/// moved by more than [`SPEED_TOLERANCE_PCT`] between the runs.
pub fn changes_between(base: &Speed, new: &Speed) -> Vec<SpeedChange> {
    base.against(new)
        .into_iter()
        .filter(|(.., pct)| pct.abs() > SPEED_TOLERANCE_PCT)
        .map(|(name, what, b, n, pct)| SpeedChange {
            text: format!(
                "the machine itself was {:.0} % {} in the new run: the {name} probe ({what}) took {} against {} (medians)",
                pct.abs(),
                if pct > 0.0 { "slower" } else { "faster" },
                time_text(n),
                time_text(b),
            ),
            probe: name,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probes timed as given, each timing taken 7 times in a row (so 3
    /// timings make 21, enough to be judged: [`SPEED_MIN_TIMINGS`]).
    fn speed(cpu: &[f64], memory: &[f64]) -> Speed {
        let probe = |name: &str, s: &[f64]| Probe {
            name: name.into(),
            what: format!("{name} work"),
            samples_ns: s.iter().flat_map(|&v| [v; 7]).collect(),
        };
        Speed {
            probes: vec![probe("cpu", cpu), probe("memory", memory)],
            when: "now and then".into(),
        }
    }

    #[test]
    fn a_steady_machine_says_nothing_and_a_slower_one_is_named() {
        let a = speed(&[100e3, 102e3, 101e3], &[3.0e6, 3.1e6, 3.05e6]);
        let b = speed(&[103e3, 101e3, 104e3], &[3.1e6, 3.2e6, 3.0e6]);
        assert!(a.changes_within().is_empty());
        assert!(changes_between(&a, &b).is_empty(), "within 10 %");
        // The host slowed memory by a quarter for the second run.
        let slow = speed(&[101e3, 100e3, 102e3], &[3.8e6, 3.9e6, 3.85e6]);
        let why = changes_between(&a, &slow);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0]
                .text
                .starts_with("the machine itself was 26 % slower in the new run: the memory probe"),
            "{why:?}"
        );
        assert!(why[0].text.contains("3.85 ms against 3.05 ms"), "{why:?}");
        assert_eq!(why[0].probe, "memory");
        assert!(changes_between(&slow, &a)[0].text.contains("faster"));
        // And within one run: a lasting change, not a wandering one.
        let wandering = speed(
            &[100e3, 125e3, 100e3, 98e3, 126e3, 101e3],
            &[3.0e6, 2.4e6, 3.6e6, 3.0e6, 3.7e6, 2.5e6],
        );
        assert!(wandering.changes_within().is_empty());
        let lasting = speed(&[100e3, 101e3, 99e3, 130e3, 131e3, 128e3], &[3.0e6; 6]);
        let w = lasting.changes_within();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].text.contains("the cpu probe"), "{w:?}");
        assert_eq!(w[0].probe, "cpu");
        assert!(
            w[0].text.contains("took 100 µs in the first half of the run and 130 µs in the second (+30 %, medians of 21 timings each)"),
            "{w:?}"
        );
        assert_eq!(
            a.summary(),
            "cpu 101 µs (±1 %), memory 3.05 ms (±2 %) (fixed probes, medians of 21 timings, now and then)"
        );
    }

    /// A short run (`--only` a few tests: ten timings) shows its speed but
    /// is not judged by it: five timings' medians wander by 20 % here.
    #[test]
    fn a_few_timings_do_not_say_the_speed_changed() {
        let probe = |s: Vec<f64>| Speed {
            probes: vec![Probe {
                name: "latency".into(),
                what: "dependent loads".into(),
                samples_ns: s,
            }],
            when: "before each test of each pass".into(),
        };
        let short = probe(vec![
            918e3, 900e3, 930e3, 915e3, 920e3, 732e3, 740e3, 725e3, 735e3, 730e3,
        ]);
        assert!(short.changes_within().is_empty());
        let faster = probe(vec![700e3; 10]);
        assert!(changes_between(&short, &faster).is_empty());
        assert!(short.summary().contains("medians of 10 timings"));
        // Twice as many timings with the same change: judged.
        let long = probe(
            short.probes[0]
                .samples_ns
                .iter()
                .flat_map(|&v| [v; 2])
                .collect(),
        );
        assert_eq!(long.changes_within().len(), 1);
        assert_eq!(changes_between(&long, &probe(vec![700e3; 20])).len(), 1);
    }

    /// A change of one probe's speed concerns the tests that depend on it:
    /// the comparison is judged, and `judges` says for which tests.
    #[test]
    fn a_probe_that_changed_withholds_only_what_depends_on_it() {
        use crate::{Avail, Conditions, Fixed, Snapshot};
        let snap = Snapshot {
            elapsed_s: 0.0,
            load: Avail::Unavailable("not read".into()),
            cpufreq: Avail::Unavailable("not read".into()),
            thermal: Avail::Unavailable("not read".into()),
        };
        let run = |memory: &[f64]| {
            let mut c = Conditions::new(
                Fixed::unknown("t", 2),
                &snap,
                Avail::Unavailable("not read".into()),
                &snap,
            );
            c.speed = Some(speed(&[100e3, 101e3, 100e3], memory));
            c
        };
        let steady = run(&[3.0e6, 3.0e6, 3.0e6]);
        let lasting = run(&[3.0e6, 3.0e6, 4.4e6, 4.4e6]);
        let c = crate::compare(Some(&steady), Some(&lasting), false);
        assert!(c.judged, "{c:?}");
        assert_eq!(c.speed_changed, ["memory"]);
        assert!(c.judges(&["cpu"]));
        assert!(!c.judges(&["cpu", "memory"]));
        assert!(c.withheld_reason().is_none());
        assert!(c
            .judging_note()
            .unwrap()
            .contains("depend on the memory probe"));
        let why = c
            .speed_reason(&["lat_mem_rd-x".into()], &["cpu", "memory"])
            .unwrap();
        assert!(
            why.starts_with("not judged: lat_mem_rd-x got worse by more than the threshold, but depends on the memory probe, whose timing changed"),
            "{why}"
        );
        assert!(c.speed_reason(&[], &["cpu", "memory"]).is_none());
        // Only the probes the withheld tests depend on are named.
        let mut two = c.clone();
        two.speed_changed.push("disk".into());
        let why = two
            .speed_reason(&["lat_mem_rd-x".into()], &["cpu", "memory"])
            .unwrap();
        assert!(why.contains("depends on the memory probe, whose"), "{why}");
        assert!(two.speed_reason(&["x".into()], &["cpu"]).is_none());
        let forced = crate::compare(Some(&steady), Some(&lasting), true);
        assert!(forced.judges(&["cpu", "memory"]));
        // The cpu probe is what every test depends on.
        let slower = {
            let mut c = run(&[3.0e6; 3]);
            c.speed = Some(speed(&[130e3, 131e3, 130e3], &[3.0e6; 3]));
            c
        };
        let c = crate::compare(Some(&steady), Some(&slower), false);
        assert_eq!(c.speed_changed, ["cpu"]);
        assert!(!c.judges(&["cpu"]));
    }

    #[test]
    fn medians_and_spreads() {
        let p = Probe {
            name: "cpu".into(),
            what: String::new(),
            samples_ns: vec![3.0, 1.0, 2.0, 10.0],
        };
        assert_eq!(p.median_ns(), Some(2.5));
        assert_eq!(p.spread_pct(), Some(900.0));
        let one = Probe {
            samples_ns: vec![5.0],
            ..p.clone()
        };
        assert_eq!((one.median_ns(), one.spread_pct()), (Some(5.0), None));
        // Ten or more: one slow timing in twenty does not make a spread.
        let mut steady = vec![100.0; 19];
        steady.push(500.0);
        let twenty = Probe {
            samples_ns: steady,
            ..p.clone()
        };
        assert_eq!(twenty.range_ns(), Some((100.0, 100.0)));
        assert_eq!(twenty.spread_pct(), Some(0.0));
        let none = Probe {
            samples_ns: vec![],
            ..p
        };
        assert_eq!(none.median_ns(), None);
        assert_eq!(time_text(812_000.0), "812 µs");
        assert_eq!(time_text(3_100_000.0), "3.10 ms");
        assert_eq!(time_text(95.0), "95 ns");
    }
}
