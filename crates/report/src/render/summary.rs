//! The strip at the top of a run's page: the few figures people look for
//! first, each taken from the run document only (never measured here),
//! with its unit and where it came from — or why it is not available.
//!
//! | figure | from |
//! |---|---|
//! | DMIPS | `bench.dhrystone` (Dhrystone 2.1 runs per second ÷ 1757, the median) |
//! | DMIPS/MHz | DMIPS over the maximum clock of the core it ran on: the CPU it was pinned to (`detail.dhrystone_cpu`: `lever bench --cpu N`) or, unpinned, the one maximum every core shares; from `device.cpus[].max_khz`, else the conditions' cpufreq `cpuinfo_max_freq` |
//! | worst latency under load | the largest `latency.max` of a condition other than `no load` |
//! | boot total | the boot stage table's `total` row |
//! | free memory after boot | `memory.free{usecase=after boot}` |
//! | daemon round trip | `daemon.round_trip` (median of PING round trips) |

use super::units;
use crate::model::{Run, Status};

/// One figure of the strip.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// What it is (`DMIPS/MHz`).
    pub label: &'static str,
    /// The value with its unit, or why it is not available.
    pub value: Result<String, String>,
    /// Where it came from, for the tooltip and the Markdown.
    pub detail: String,
}

/// Why a section gave nothing: not measured (its reason), or absent.
fn section_why(run: &Run, section: &str) -> String {
    match run.section(section).map(|s| &s.status) {
        Some(Status::NotMeasured { why }) => {
            format!("the {section} section was not measured: {why}")
        }
        Some(Status::Measured) => format!("the {section} section has no such figure"),
        None => format!("the run has no {section} section"),
    }
}

fn metric<'a>(
    run: &'a Run,
    name: &str,
    label: Option<(&str, &str)>,
) -> Option<&'a crate::model::Metric> {
    run.metrics().find(|m| {
        m.name == name && label.is_none_or(|(k, v)| m.labels.get(k).map(String::as_str) == Some(v))
    })
}

/// The figures of `run`, in the strip's order.
pub fn figures(run: &Run) -> Vec<Figure> {
    let dmips = metric(run, "bench.dhrystone", None);
    let mut out = vec![Figure {
        label: "DMIPS",
        value: dmips
            .map(|m| units::number(m.value))
            .ok_or_else(|| section_why(run, "bench")),
        detail: "Dhrystone 2.1: runs per second ÷ 1757 (the VAX 11/780's score), the median of the samples".into(),
    }];
    out.push(match dmips {
        None => Figure {
            label: "DMIPS/MHz",
            value: Err(section_why(run, "bench")),
            detail: String::new(),
        },
        Some(m) => match max_mhz(run) {
            Ok((mhz, whence)) => Figure {
                label: "DMIPS/MHz",
                value: Ok(format!("{:.2}", m.value / mhz)),
                detail: format!(
                    "{} DMIPS at {} MHz, {whence}",
                    units::number(m.value),
                    units::number(mhz)
                ),
            },
            Err(why) => Figure {
                label: "DMIPS/MHz",
                value: Err(why),
                detail: String::new(),
            },
        },
    });
    out.push(worst_latency(run));
    out.push(boot_total(run));
    out.push(
        match metric(run, "memory.free", Some(("usecase", "after boot"))) {
            Some(m) => Figure {
                label: "free memory after boot",
                value: Ok(units::value(m.value, &m.unit)),
                detail: "MemFree after boot (/proc/meminfo)".into(),
            },
            None => Figure {
                label: "free memory after boot",
                value: Err(section_why(run, "memory")),
                detail: String::new(),
            },
        },
    );
    out.push(match metric(run, "daemon.round_trip", None) {
        Some(m) => Figure {
            label: "daemon round trip",
            value: Ok(units::value(m.value, &m.unit)),
            detail: format!(
                "median of {} PING requests answered by the daemon, connection open",
                m.samples.len()
            ),
        },
        None => Figure {
            label: "daemon round trip",
            value: Err(match run.section("daemon").map(|s| &s.status) {
                Some(Status::Measured) => {
                    "this run's daemon section has no round trip (collected by an older Lever)"
                        .into()
                }
                _ => section_why(run, "daemon"),
            }),
            detail: String::new(),
        },
    });
    out
}

/// The core Dhrystone ran on and its maximum clock, MHz, with where the
/// figure came from; or why it is not known.
fn max_mhz(run: &Run) -> Result<(f64, String), String> {
    let pinned = run
        .section("bench")
        .and_then(|s| s.detail.get("dhrystone_cpu"))
        .and_then(|v| v.as_u64());
    // Maximum clock per CPU: the device's inventory, else the
    // conditions' cpufreq policies.
    let mut per_cpu: Vec<(u64, u64)> = run
        .device
        .cpus
        .iter()
        .filter_map(|c| Some((u64::from(c.cpu), c.max_khz?)))
        .collect();
    let mut source = "the device's CPU inventory (cpuinfo_max_freq)";
    let mut no_clock = "no CPU in the device's inventory has a maximum clock".to_string();
    if per_cpu.is_empty() {
        if let Some(c) = &run.conditions {
            match &c.cpufreq_before {
                lever_conditions::Avail::Value(policies) => {
                    for p in policies {
                        if let Some(khz) = p.cpuinfo_max_khz.or(p.max_khz) {
                            per_cpu.extend(cpu_list(&p.cpus).into_iter().map(|c| (c, khz)));
                        }
                    }
                    source = "the run's conditions (cpufreq cpuinfo_max_freq)";
                }
                lever_conditions::Avail::Unavailable(why) => {
                    no_clock = format!("no CPU reports a maximum clock: {why}");
                }
            }
        }
    }
    if per_cpu.is_empty() {
        return Err(format!("not available because {no_clock}"));
    }
    if let Some(cpu) = pinned {
        return match per_cpu.iter().find(|(c, _)| *c == cpu) {
            Some((_, khz)) => Ok((
                *khz as f64 / 1000.0,
                format!("the maximum clock of CPU {cpu} it was pinned to, from {source}"),
            )),
            None => Err(format!(
                "not available because the benchmark ran on CPU {cpu} and {source} has no maximum clock for it"
            )),
        };
    }
    let lo = per_cpu.iter().map(|c| c.1).min().unwrap_or(0);
    let hi = per_cpu.iter().map(|c| c.1).max().unwrap_or(0);
    if lo == hi {
        Ok((
            hi as f64 / 1000.0,
            format!("the maximum clock every core shares, from {source}"),
        ))
    } else {
        Err(format!(
            "not available because the benchmark was not pinned to a core (lever bench --cpu N) and the cores' maximum clocks differ ({}–{} MHz)",
            units::number(lo as f64 / 1000.0),
            units::number(hi as f64 / 1000.0)
        ))
    }
}

/// `0-3,7` → 0, 1, 2, 3, 7 (a cpufreq policy's `related_cpus`).
fn cpu_list(s: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                    out.extend(a..=b.min(a + 4096));
                }
            }
            None => out.extend(part.parse::<u64>().ok()),
        }
    }
    out
}

fn worst_latency(run: &Run) -> Figure {
    let worst = run
        .metrics()
        .filter(|m| m.name == "latency.max")
        .filter(|m| m.labels.get("condition").is_some_and(|c| c != "no load"))
        .max_by(|a, b| a.value.total_cmp(&b.value));
    match worst {
        Some(m) => Figure {
            label: "worst latency under load",
            value: Ok(units::value(m.value, &m.unit)),
            detail: format!(
                "the largest wake-up latency of any CPU (CPU {}) under {}",
                m.labels.get("cpu").map_or("?", String::as_str),
                m.labels.get("condition").map_or("?", String::as_str)
            ),
        },
        None => Figure {
            label: "worst latency under load",
            value: Err(section_why(run, "latency")),
            detail: String::new(),
        },
    }
}

fn boot_total(run: &Run) -> Figure {
    let total = run
        .section("boot")
        .and_then(|s| s.detail.get("stages"))
        .and_then(|v| v.as_array())
        .and_then(|stages| {
            stages
                .iter()
                .filter(|st| st["kind"] == "total")
                .filter_map(|st| Some((st["stage"].as_str()?, st["ms"].as_f64()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        });
    match total {
        Some((stage, ms)) => Figure {
            label: "boot total",
            value: Ok(units::ms(ms)),
            detail: format!("the boot stage table's total: {stage}"),
        },
        None => Figure {
            label: "boot total",
            value: Err(section_why(run, "boot")),
            detail: String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_cpu_lists() {
        assert_eq!(cpu_list("0-3"), vec![0, 1, 2, 3]);
        assert_eq!(cpu_list("4-6,7"), vec![4, 5, 6, 7]);
        assert_eq!(cpu_list("x"), Vec::<u64>::new());
    }
}
