//! Statistics a reviewer can trust: the median with a distribution-free
//! 95% confidence interval (order statistics of the binomial), the usual
//! moments, seed 002's "value (min, max)" cell, a sampling loop that stops
//! when the interval is tight enough, and the Mann-Whitney U test that
//! `bench compare` uses to tell a real change from noise.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Summary of one test's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median (the reported value).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Sample standard deviation (n - 1); 0 for one sample.
    pub stddev: f64,
    /// Lower end of the 95% confidence interval of the median; `None` when
    /// there are too few samples for one (fewer than 6).
    pub ci_low: Option<f64>,
    /// Upper end of the 95% confidence interval of the median.
    pub ci_high: Option<f64>,
    /// Two clusters of samples far apart ([`Modes`]): then the median
    /// describes neither and has no interval (`ci_low`/`ci_high` are
    /// `None`); both modes are the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<Modes>,
}

/// Samples in two clusters: sorted, some neighbours are more than
/// [`MODE_GAP`] times apart and each side holds at least a fifth of the
/// samples (and 3). A pipe round trip whose two ends share a CPU or not
/// (1.8 µs or 75 µs on a VM), a test sharing its CPU with a load it
/// alternates with: a tight interval around one of them would promise a
/// rerun the same value, and it gives the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Modes {
    /// Median of the lower cluster.
    pub low: f64,
    /// Samples in it.
    pub low_n: usize,
    /// Median of the upper cluster.
    pub high: f64,
    /// Samples in it.
    pub high_n: usize,
    /// Where the clusters part: the lowest sample of the upper one (0 in
    /// reports written before it was kept; then the geometric mean of the
    /// two medians stands for it, [`Modes::split`]).
    #[serde(default)]
    pub from: f64,
}

/// The ratio between neighbouring sorted samples that splits them into
/// two [`Modes`].
pub const MODE_GAP: f64 = 1.5;

impl Modes {
    /// Find two modes in sorted samples, at the widest gap between
    /// neighbours; `None` for fewer than 6 samples, or no gap of
    /// [`MODE_GAP`] with enough samples on each side.
    pub fn of_sorted(s: &[f64]) -> Option<Modes> {
        let n = s.len();
        let side = (n / 5).max(3);
        if n < 2 * side {
            return None;
        }
        let (ratio, at) = (side..=n - side)
            .filter(|&i| s[i - 1] > 0.0)
            .map(|i| (s[i] / s[i - 1], i))
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        (ratio >= MODE_GAP).then(|| Modes {
            low: median_sorted(&s[..at]),
            low_n: at,
            high: median_sorted(&s[at..]),
            high_n: n - at,
            from: s[at],
        })
    }

    /// The value from which a sample is in the upper cluster.
    pub fn split(&self) -> f64 {
        if self.from > 0.0 {
            self.from
        } else {
            (self.low * self.high).sqrt()
        }
    }

    /// `1.80 ×12 | 75.20 ×8`: each mode's median and its sample count.
    pub fn describe(&self) -> String {
        format!(
            "{:.2} ×{} | {:.2} ×{}",
            self.low, self.low_n, self.high, self.high_n
        )
    }
}

impl Summary {
    /// Summarise `samples` (any order; NaNs are not expected). `None` for
    /// no samples.
    pub fn new(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let mean = s.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let modes = Modes::of_sorted(&s);
        let ci = median_ci_ranks(n)
            .filter(|_| modes.is_none())
            .map(|(lo, hi)| (s[lo - 1], s[hi - 1]));
        Some(Summary {
            n,
            median: median_sorted(&s),
            mean,
            min: s[0],
            max: s[n - 1],
            stddev: var.sqrt(),
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            modes,
        })
    }

    /// Half the interval's width as a percentage of the median (the
    /// "±2%" the sampling loop aims for); `None` without an interval.
    pub fn ci_half_width_pct(&self) -> Option<f64> {
        let (lo, hi) = (self.ci_low?, self.ci_high?);
        if self.median == 0.0 {
            return Some(if hi == lo { 0.0 } else { f64::INFINITY });
        }
        Some(100.0 * (hi - lo) / 2.0 / self.median.abs())
    }

    /// Seed 002's cell: `437.26 (min 199.52, max 674.99)`, two decimals.
    pub fn cell(&self) -> String {
        format!(
            "{:.2} (min {:.2}, max {:.2})",
            self.median, self.min, self.max
        )
    }
}

/// The median of sorted data (mean of the middle two for even n).
fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// 1-based ranks `(j, n + 1 - j)` of the order statistics that bound a
/// confidence interval of at least 95% for the median, from the exact
/// binomial(n, 1/2) distribution: the largest `j` with
/// `2 · P(X ≤ j - 1) ≤ 0.05`. `None` when n < 6 (even min..max covers
/// less than 95%).
pub fn median_ci_ranks(n: usize) -> Option<(usize, usize)> {
    // P(X <= k) accumulated in log space so large n does not underflow.
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut cdf = 0.0f64;
    let mut j = 0;
    for k in 0..n {
        cdf += (ln_choose - ln2n).exp();
        if 2.0 * cdf > 0.05 {
            break;
        }
        j = k + 1;
        ln_choose += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    (j >= 1).then_some((j, n + 1 - j))
}

/// When the sampling loop stops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Time spent running the test before any sample counts.
    pub warmup: Duration,
    /// Fewest samples (at least 6 for an interval to exist).
    pub min_samples: usize,
    /// Most samples.
    pub max_samples: usize,
    /// Stop when the interval's half width is within this percentage of
    /// the median.
    pub target_ci_pct: f64,
    /// Stop after this much sampling time even if not converged.
    pub max_time: Duration,
    /// Take exactly this many samples (`--repeat N`), ignoring the target.
    pub fixed: Option<usize>,
}

impl Policy {
    /// The share of this policy one of `passes` passes over the suite
    /// takes (`pass` from 0): the sample counts and the time budget
    /// divided between the passes (at least 3 samples a pass, so each has
    /// a median), the warm-up and target kept. A `--repeat N` gives the
    /// first passes the odd samples.
    pub fn pass(&self, pass: usize, passes: usize) -> Policy {
        let passes = passes.max(1);
        let share = |n: usize| {
            let base = n / passes;
            base + usize::from(pass < n % passes)
        };
        Policy {
            warmup: self.warmup,
            min_samples: share(self.min_samples).max(3),
            max_samples: share(self.max_samples).max(3),
            target_ci_pct: self.target_ci_pct,
            max_time: self.max_time / passes as u32,
            fixed: self.fixed.map(|n| share(n).max(1)),
        }
    }
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The interval reached the target width.
    Converged,
    /// The time budget ran out first (the interval is wider than asked).
    MaxTime,
    /// The sample count limit was reached first.
    MaxSamples,
    /// `--repeat N` samples were taken.
    Repeat,
}

/// Run `sample` through warm-up, then until `policy` says stop. `elapsed`
/// is the clock (time since the test started), passed in so the loop can
/// be tested without real time.
pub fn collect<E>(
    policy: &Policy,
    mut elapsed: impl FnMut() -> Duration,
    mut sample: impl FnMut() -> Result<f64, E>,
) -> Result<(Vec<f64>, Stop), E> {
    let start = elapsed();
    loop {
        sample()?;
        if elapsed() - start >= policy.warmup {
            break;
        }
    }
    let sampling_start = elapsed();
    let mut samples = Vec::new();
    loop {
        samples.push(sample()?);
        let n = samples.len();
        if let Some(fixed) = policy.fixed {
            if n >= fixed {
                return Ok((samples, Stop::Repeat));
            }
            continue;
        }
        if n >= policy.min_samples {
            let tight = Summary::new(&samples)
                .and_then(|s| s.ci_half_width_pct())
                .is_some_and(|w| w <= policy.target_ci_pct);
            if tight {
                return Ok((samples, Stop::Converged));
            }
        }
        if n >= policy.max_samples {
            return Ok((samples, Stop::MaxSamples));
        }
        if elapsed() - sampling_start >= policy.max_time && n >= policy.min_samples.min(3) {
            return Ok((samples, Stop::MaxTime));
        }
    }
}

/// Result of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample (pairs where it is larger, ties count ½).
    pub u: f64,
    /// Standard normal statistic with tie and continuity corrections.
    pub z: f64,
    /// Two-sided p-value (normal approximation).
    pub p: f64,
}

/// Two-sided Mann-Whitney U test of `a` against `b` (normal approximation
/// with tie correction and continuity correction; good from about 8
/// samples each). `None` when either side is empty or all values tie.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let (mut rank_sum_a, mut tie_term) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their average.
        let avg = (i + j + 2) as f64 / 2.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += avg * all[i..=j].iter().filter(|e| e.1).count() as f64;
        i = j + 1;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = rank_sum_a - n1f * (n1f + 1.0) / 2.0;
    let mean = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return None;
    }
    let d = u - mean;
    let z = (d - 0.5 * d.signum()).abs().max(0.0) * d.signum() / var.sqrt();
    Some(MannWhitney {
        u,
        z,
        p: erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0),
    })
}

/// The complementary error function, by the Chebyshev-fitted formula of
/// Press et al. (fractional error below 1.2e-7 everywhere).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom
/// (tabulated to 30, then the normal's 1.96 approached as 1.96 + 2.4/df).
pub fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// The 95 % prediction interval for one more value drawn like `values`
/// (`mean ± t(k-1) · s · √(1 + 1/k)` for k values with sample standard
/// deviation s): where the median of one more run of a build is expected,
/// given the medians of k runs of it. `None` with fewer than two values.
pub fn prediction_interval(values: &[f64]) -> Option<(f64, f64)> {
    let k = values.len();
    if k < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / k as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let half = t_975(k - 1) * var.sqrt() * (1.0 + 1.0 / k as f64).sqrt();
    Some((mean - half, mean + half))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_data() {
        let s = Summary::new(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.mean, s.min, s.max),
            (5, 3.0, 3.0, 1.0, 5.0)
        );
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.ci_low, None, "5 samples cannot give a 95% interval");
        assert_eq!(Summary::new(&[1.0, 2.0, 3.0, 4.0]).unwrap().median, 2.5);
        assert!(Summary::new(&[]).is_none());
    }

    #[test]
    fn two_clusters_are_two_modes_without_an_interval() {
        // Pipe round trips, both ends on one CPU or not (µs).
        let mut v = vec![
            1.8, 1.9, 1.8, 75.0, 1.7, 76.0, 74.0, 1.8, 1.9, 75.5, 1.8, 73.9,
        ];
        let s = Summary::new(&v).unwrap();
        let m = s.modes.clone().expect("two modes");
        assert_eq!((m.low_n, m.high_n), (7, 5));
        assert!(
            (m.low - 1.8).abs() < 1e-9 && (m.high - 75.0).abs() < 1e-9,
            "{m:?}"
        );
        assert_eq!((s.ci_low, s.ci_high), (None, None));
        assert_eq!(s.ci_half_width_pct(), None, "never converges");
        assert_eq!(m.describe(), "1.80 ×7 | 75.00 ×5");
        // Two outliers are not a mode: the interval stays.
        v = vec![10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 10.0, 10.1, 30.0, 31.0];
        let s = Summary::new(&v).unwrap();
        assert!(s.modes.is_none() && s.ci_low.is_some(), "{s:?}");
        // Ordinary noise is one mode.
        let v: Vec<f64> = (0..40).map(|i| 100.0 + (i % 7) as f64).collect();
        assert!(Summary::new(&v).unwrap().modes.is_none());
    }

    #[test]
    fn median_interval_ranks_match_the_binomial_tables() {
        // Published table values (e.g. Conover, Practical Nonparametric
        // Statistics, Table A3) for the ≥95% interval of the median.
        assert_eq!(median_ci_ranks(5), None);
        assert_eq!(median_ci_ranks(6), Some((1, 6)));
        assert_eq!(median_ci_ranks(10), Some((2, 9)));
        assert_eq!(median_ci_ranks(20), Some((6, 15)));
        assert_eq!(median_ci_ranks(30), Some((10, 21)));
        assert_eq!(median_ci_ranks(100), Some((40, 61)));
        // Large n neither underflows nor panics: about n/2 ± 0.98·√n.
        let (lo, hi) = median_ci_ranks(10_000).unwrap();
        assert!((4900..=4903).contains(&lo), "{lo}");
        assert_eq!(hi, 10_001 - lo);
    }

    #[test]
    fn interval_and_cell_on_known_data() {
        let data: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = Summary::new(&data).unwrap();
        assert_eq!((s.ci_low, s.ci_high), (Some(2.0), Some(9.0)));
        assert!((s.ci_half_width_pct().unwrap() - 100.0 * 3.5 / 5.5).abs() < 1e-9);
        let seed = Summary::new(&[199.52, 437.26, 674.99]).unwrap();
        assert_eq!(seed.cell(), "437.26 (min 199.52, max 674.99)");
    }

    #[test]
    fn mann_whitney_on_known_data() {
        // Completely separated samples of 5: U = 0, z = -12/√(275/12),
        // p = 0.01219 (scipy.stats.mannwhitneyu, asymptotic, continuity).
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(r.u, 0.0);
        assert!((r.z + 2.506_75).abs() < 1e-4, "{}", r.z);
        assert!((r.p - 0.012_19).abs() < 1e-4, "{}", r.p);
        // Interleaved samples: no evidence of a difference.
        let r = mann_whitney(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert_eq!(r.u, 10.0);
        assert!(r.p > 0.5, "{}", r.p);
        // Ties: a = [1,2,2,3], b = [2,3,3,4]; ranks 1, 3,3,3, 6,6,6, 8.
        let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0]).unwrap();
        assert_eq!(r.u, 3.0);
        assert!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).is_none());
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

    #[test]
    fn erfc_matches_tables() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_2).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_8).abs() < 1e-7);
    }

    #[test]
    fn passes_share_the_samples_and_the_time() {
        let p = Policy {
            warmup: Duration::from_millis(10),
            min_samples: 7,
            max_samples: 201,
            target_ci_pct: 2.0,
            max_time: Duration::from_millis(250),
            fixed: Some(31),
        };
        let (a, b) = (p.pass(0, 2), p.pass(1, 2));
        assert_eq!((a.min_samples, b.min_samples), (4, 3));
        assert_eq!((a.max_samples, b.max_samples), (101, 100));
        assert_eq!((a.fixed, b.fixed), (Some(16), Some(15)));
        assert_eq!(a.max_time, Duration::from_millis(125));
        assert_eq!((a.warmup, a.target_ci_pct), (p.warmup, p.target_ci_pct));
        assert_eq!(p.pass(0, 1), p);
    }

    fn policy() -> Policy {
        Policy {
            warmup: Duration::from_millis(10),
            min_samples: 6,
            max_samples: 1000,
            target_ci_pct: 2.0,
            max_time: Duration::from_millis(100),
            fixed: None,
        }
    }

    #[test]
    fn sampling_stops_when_the_interval_is_tight() {
        let mut t = Duration::ZERO;
        let mut i = 0u32;
        let (samples, stop) = collect::<()>(
            &policy(),
            || {
                t += Duration::from_millis(1);
                t
            },
            || {
                i += 1;
                Ok(100.0 + f64::from(i % 3) * 0.1)
            },
        )
        .unwrap();
        assert_eq!(stop, Stop::Converged);
        assert_eq!(samples.len(), 6);
    }

    #[test]
    fn noisy_samples_run_out_of_time_and_repeat_is_exact() {
        let mut t = Duration::ZERO;
        let mut i = 0u32;
        let clock = || {
            t += Duration::from_millis(1);
            t
        };
        let noisy = || {
            i += 1;
            Ok::<f64, ()>(if i % 2 == 0 { 50.0 } else { 150.0 })
        };
        let (samples, stop) = collect(&policy(), clock, noisy).unwrap();
        assert_eq!(stop, Stop::MaxTime);
        assert!((50..=101).contains(&samples.len()), "{}", samples.len());
        let fixed = Policy {
            fixed: Some(4),
            ..policy()
        };
        let mut t = Duration::ZERO;
        let clock = || {
            t += Duration::from_millis(5);
            t
        };
        let (samples, stop) = collect::<()>(&fixed, clock, || Ok(1.0)).unwrap();
        assert_eq!((samples.len(), stop), (4, Stop::Repeat));
    }

    #[test]
    fn sample_errors_stop_the_loop() {
        let r = collect(&policy(), || Duration::ZERO, || Err::<f64, _>("broken"));
        assert_eq!(r, Err("broken"));
    }
    #[test]
    fn prediction_interval_of_run_medians() {
        // Two runs, 10 and 12: mean 11, s = sqrt(2), t(1) = 12.706.
        let (lo, hi) = prediction_interval(&[10.0, 12.0]).unwrap();
        let half = 12.706 * 2f64.sqrt() * 1.5f64.sqrt();
        assert!((lo - (11.0 - half)).abs() < 1e-9 && (hi - (11.0 + half)).abs() < 1e-9);
        // More runs narrow it: four runs of the same spread.
        let (lo4, hi4) = prediction_interval(&[10.0, 12.0, 10.0, 12.0]).unwrap();
        assert!(hi4 - lo4 < (hi - lo) / 3.0, "{lo4}..{hi4}");
        assert!(lo4 < 10.0 && hi4 > 12.0);
        assert_eq!(prediction_interval(&[5.0]), None);
        assert_eq!(t_975(2), 4.303);
        assert!((t_975(1000) - 1.96).abs() < 0.01);
    }
}
