//! cpufreq residency: how long each policy ran at each frequency, and how
//! often it switched.
//!
//! Two files of `cpufreq/policyX/stats/` (kernel `drivers/cpufreq/cpufreq_stats.c`):
//!
//! `time_in_state` — one line per frequency, `<kHz> <time>`, the time in
//! `USER_HZ` units (10 ms; the kernel prints `jiffies_64_to_clock_t`):
//!
//! ```text
//! 300000 1234
//! 691200 567
//! ```
//!
//! `trans_table` — a header, a row of target frequencies, then one row per
//! source frequency with the number of transitions to each target:
//!
//! ```text
//!    From  :    To
//!          :    300000    691200
//!    300000:         0        12
//!    691200:        11         0
//! ```
//!
//! The kernel refuses to print a table larger than a page (`EFBIG`); that is
//! reported as "not available" with the reason, not as an error.

use lever_kernel::{paths, KernelFs};
use serde::Serialize;

use crate::{opt_u64, topology, CpuError, ParseError};

/// Time at one frequency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreqResidency {
    /// Frequency in kHz.
    pub khz: u64,
    /// Time at this frequency since boot (or the last stats reset), ms.
    pub time_ms: u64,
    /// Share of the policy's total time, percent.
    pub percent: f64,
}

/// The transition matrix: `counts[from][to]`, both indexed like `freqs_khz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransTable {
    /// Frequencies, kHz, in the table's order.
    pub freqs_khz: Vec<u64>,
    /// Transition counts, row = from, column = to.
    pub counts: Vec<Vec<u64>>,
}

impl TransTable {
    /// Sum of all transitions.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }
}

/// The residency of one policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyStats {
    /// Policy number (`policyX`).
    pub policy: u32,
    /// CPUs of the policy (`related_cpus`).
    pub cpus: Vec<u32>,
    /// Time per frequency; empty when `stats/` is missing.
    pub residency: Vec<FreqResidency>,
    /// `stats/total_trans`.
    pub total_trans: Option<u64>,
    /// `stats/trans_table`, when the kernel prints it.
    pub trans_table: Option<TransTable>,
    /// Why residency or the table are missing, when they are.
    pub note: Option<String>,
}

/// Parse `time_in_state` into `(kHz, ms)` pairs.
pub fn parse_time_in_state(path: &str, text: &str) -> Result<Vec<(u64, u64)>, CpuError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // `691200 567`: kHz, then 10 ms units.
        let mut words = line.split_whitespace();
        let parsed = match (words.next(), words.next(), words.next()) {
            (Some(f), Some(t), None) => f.parse::<u64>().ok().zip(t.parse::<u64>().ok()),
            _ => None,
        };
        let (khz, ticks) = parsed.ok_or_else(|| {
            CpuError::from(ParseError::new(path, i + 1, line, "`<kHz> <10 ms units>`"))
        })?;
        out.push((khz, ticks.saturating_mul(10)));
    }
    Ok(out)
}

/// Turn `(kHz, ms)` pairs into residency with percentages.
pub fn residency(pairs: &[(u64, u64)]) -> Vec<FreqResidency> {
    let total: u64 = pairs.iter().map(|(_, t)| t).sum();
    pairs
        .iter()
        .map(|&(khz, time_ms)| FreqResidency {
            khz,
            time_ms,
            percent: if total == 0 {
                0.0
            } else {
                time_ms as f64 * 100.0 / total as f64
            },
        })
        .collect()
}

/// Parse `trans_table`.
pub fn parse_trans_table(path: &str, text: &str) -> Result<TransTable, CpuError> {
    let bad = |line: usize, content: &str, expected| {
        CpuError::from(ParseError::new(path, line, content, expected))
    };
    let mut freqs: Option<Vec<u64>> = None;
    let mut counts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((head, rest)) = line.split_once(':') else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(bad(i + 1, line, "`<kHz>: <counts>`"));
        };
        let head = head.trim();
        if head == "From" {
            continue; // `   From  :    To`
        }
        let nums = rest
            .split_whitespace()
            .map(|w| w.parse::<u64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad(i + 1, line, "numbers after the colon"))?;
        if head.is_empty() {
            // `         :    300000    691200`: the target frequencies.
            freqs = Some(nums);
            continue;
        }
        // `   300000:         0        12`: one source row.
        let Some(cols) = &freqs else {
            return Err(bad(i + 1, line, "the frequency header row first"));
        };
        head.parse::<u64>()
            .map_err(|_| bad(i + 1, line, "a source frequency in kHz"))?;
        if nums.len() != cols.len() {
            return Err(bad(i + 1, line, "one count per frequency of the header"));
        }
        counts.push(nums);
    }
    let freqs_khz = freqs.ok_or_else(|| bad(1, text, "a trans_table header"))?;
    if counts.len() != freqs_khz.len() {
        return Err(bad(
            text.lines().count(),
            text.lines().last().unwrap_or(""),
            "one row per frequency",
        ));
    }
    Ok(TransTable { freqs_khz, counts })
}

/// Read the residency of every policy. Empty (with the reason from
/// [`topology::policies`]) when there is no cpufreq.
pub fn read(fs: &KernelFs) -> Result<(Vec<PolicyStats>, Option<String>), CpuError> {
    let topology::Policies { list, note } = topology::policies(fs)?;
    let mut out = Vec::new();
    for (policy, cpus) in list {
        let dir = format!("{}/policy{policy}/stats", paths::CPUFREQ);
        let tis_path = format!("{dir}/time_in_state");
        let mut notes = Vec::new();
        let residency_rows = match fs.read_optional(&tis_path)? {
            Some(text) => residency(&parse_time_in_state(&tis_path, &text)?),
            None => {
                notes.push(format!(
                    "{tis_path} missing: kernel built without CONFIG_CPU_FREQ_STAT"
                ));
                Vec::new()
            }
        };
        let tt_path = format!("{dir}/trans_table");
        let trans_table = match fs.read(&tt_path) {
            Ok(text) => Some(parse_trans_table(&tt_path, &text)?),
            Err(e) if e.is_missing() => None,
            // EFBIG: the kernel refuses tables larger than a page.
            Err(e) => {
                notes.push(format!("{tt_path}: {e}"));
                None
            }
        };
        out.push(PolicyStats {
            policy,
            cpus,
            residency: residency_rows,
            total_trans: opt_u64(fs, &format!("{dir}/total_trans"))?,
            trans_table,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        });
    }
    Ok((out, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_in_state_to_percent() {
        let pairs = parse_time_in_state("t", "300000 300\n691200 100\n").unwrap();
        assert_eq!(pairs, vec![(300000, 3000), (691200, 1000)]);
        let r = residency(&pairs);
        assert_eq!(r[0].percent, 75.0);
        assert_eq!(r[1].percent, 25.0);
    }

    #[test]
    fn time_in_state_errors_name_line() {
        let err = parse_time_in_state("/sys/p/time_in_state", "300000 3\nbogus\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/sys/p/time_in_state:2:"), "{err}");
    }

    #[test]
    fn trans_table_kernel_format() {
        let text = "   From  :    To\n         :    300000    691200 \n   300000:         0        12 \n   691200:        11         0 \n";
        let t = parse_trans_table("tt", text).unwrap();
        assert_eq!(t.freqs_khz, vec![300000, 691200]);
        assert_eq!(t.counts, vec![vec![0, 12], vec![11, 0]]);
        assert_eq!(t.total(), 23);
    }

    #[test]
    fn trans_table_ragged_row_is_an_error() {
        let text = "   From  :    To\n         :    300000    691200\n   300000:         0\n";
        let err = parse_trans_table("/x/trans_table", text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/x/trans_table:3:"), "{err}");
    }
}
