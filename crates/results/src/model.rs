//! The run document (`RUN.json`): what one collection measured.
//!
//! The JSON form is the contract between `lever report collect`, `lever
//! report render` and the results store: keys are snake_case, times are
//! RFC 3339 UTC text, numbers are plain JSON numbers (serde_json writes
//! `f64` so that it reads back bit-exact), and a reader ignores keys it
//! does not know. [`SCHEMA`] is bumped when a key changes meaning.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the run document's layout.
pub const SCHEMA: u32 = 1;

/// One collection on one board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// [`SCHEMA`] of the writer.
    pub schema: u32,
    /// When the collection started, RFC 3339 UTC (`2026-11-23T14:00:00Z`).
    pub collected_at: String,
    /// The Lever that collected it (`lever --version`).
    #[serde(default)]
    pub lever_version: String,
    /// The board and its kernel.
    pub device: Device,
    /// One per measurement, in the order collected.
    #[serde(default)]
    pub sections: Vec<Section>,
    /// The conditions the run was collected under (load, clocks, thermal
    /// state, throttling, kernel, machine); absent in runs of older Levers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<lever_conditions::Conditions>,
}

impl Run {
    /// A run with no sections yet.
    pub fn new(collected_at: &str, device: Device) -> Run {
        Run {
            schema: SCHEMA,
            collected_at: collected_at.to_string(),
            lever_version: String::new(),
            device,
            sections: Vec::new(),
            conditions: None,
        }
    }

    /// The section named `name`, if collected.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// Every metric of every section.
    pub fn metrics(&self) -> impl Iterator<Item = &Metric> {
        self.sections.iter().flat_map(|s| s.metrics.iter())
    }

    /// The first metric named `name` (with any labels).
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics().find(|m| m.name == name)
    }
}

/// The board, its kernel and its CPUs. A field that could not be read is
/// `None`/empty; the `device` section says why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Board name: the simulated board, the device tree `model`, or DMI's
    /// product name.
    #[serde(default)]
    pub board: Option<String>,
    /// SoC, where the kernel names it (`soc0/machine`, device tree
    /// `compatible`).
    #[serde(default)]
    pub soc: Option<String>,
    /// Host name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// Machine architecture (`uname -m`).
    #[serde(default)]
    pub arch: Option<String>,
    /// Kernel release (`uname -r`).
    #[serde(default)]
    pub kernel_release: Option<String>,
    /// Kernel version string (`uname -v`).
    #[serde(default)]
    pub kernel_version: Option<String>,
    /// Kernel command line (`/proc/cmdline`).
    #[serde(default)]
    pub cmdline: Option<String>,
    /// The CPUs, by number.
    #[serde(default)]
    pub cpus: Vec<Cpu>,
}

/// One CPU of the inventory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// CPU number.
    pub cpu: u32,
    /// Cluster (cpufreq policy) it belongs to, if any.
    #[serde(default)]
    pub cluster: Option<u32>,
    /// Core type or model name (`Cortex-A78`, the `/proc/cpuinfo` model).
    #[serde(default)]
    pub model: Option<String>,
    /// Highest frequency, kHz, where cpufreq reports it.
    #[serde(default)]
    pub max_khz: Option<u64>,
    /// Scheduler capacity (`cpu_capacity`), where reported.
    #[serde(default)]
    pub capacity: Option<u32>,
}

/// Whether a section was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    /// Measured; the metrics hold what was found.
    Measured,
    /// Could not be measured here, and why ("no cpufreq policies: this
    /// kernel has no cpufreq driver").
    NotMeasured {
        /// Why, for people.
        why: String,
    },
}

/// One measurement of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Short name: `device`, `boot`, `memory`, `latency`, `bench`,
    /// `markers`, `daemon`, ...
    pub name: String,
    /// How it was measured: the command or files and the method, enough
    /// to reproduce it.
    pub method: String,
    /// Measured, or why not.
    pub status: Status,
    /// The figures.
    #[serde(default)]
    pub metrics: Vec<Metric>,
    /// What the page draws that is not a metric (a histogram's buckets,
    /// boot stages, a time series), in the section's own layout.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

impl Section {
    /// A measured section with no metrics yet.
    pub fn measured(name: &str, method: &str) -> Section {
        Section {
            name: name.to_string(),
            method: method.to_string(),
            status: Status::Measured,
            metrics: Vec::new(),
            detail: serde_json::Value::Null,
        }
    }

    /// A section that could not be measured, and why.
    pub fn not_measured(name: &str, why: &str) -> Section {
        Section {
            name: name.to_string(),
            method: String::new(),
            status: Status::NotMeasured {
                why: why.to_string(),
            },
            metrics: Vec::new(),
            detail: serde_json::Value::Null,
        }
    }
}

/// Which direction is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Smaller is better (latency, boot time, memory).
    Lower,
    /// Larger is better (throughput, DMIPS).
    Higher,
}

/// One figure with its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Dotted name, stable across runs so that trends line up
    /// (`latency.max`, `memory.used`, `bench.lat_mem_rd.l1`).
    pub name: String,
    /// Unit as printed (`ms`, `us`, `kB`, `MB/s`, `events/s`, `%`).
    pub unit: String,
    /// The figure (the mean or the single value; `samples` has the rest).
    pub value: f64,
    /// What tells this metric apart from others of its name: `cpu`,
    /// `usecase`, `stage`, ...
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The individual samples, where there were several (for min/max
    /// whiskers and the significance test of a comparison).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// Which way is better, where one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
    /// How many of `samples` each pass took, in order, where they were
    /// taken in passes (`lever bench`'s passes over its suite, each in a
    /// process of its own): a comparison tells a slow pass (drift) from a
    /// load the test alternated with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_samples: Vec<usize>,
}

impl Metric {
    /// The pass each of `samples` was taken in (0 for the first), from
    /// [`Metric::pass_samples`]; empty when the samples were not taken in
    /// passes or the counts do not add up to them.
    pub fn sample_passes(&self) -> Vec<i64> {
        let total = self
            .pass_samples
            .iter()
            .try_fold(0usize, |sum, &k| sum.checked_add(k));
        if total != Some(self.samples.len()) {
            return Vec::new();
        }
        (0..)
            .zip(&self.pass_samples)
            .flat_map(|(pass, &n)| std::iter::repeat_n(pass, n))
            .collect()
    }

    /// A single value with no labels.
    pub fn new(name: &str, unit: &str, value: f64) -> Metric {
        Metric {
            name: name.to_string(),
            unit: unit.to_string(),
            value,
            labels: BTreeMap::new(),
            samples: Vec::new(),
            better: None,
            pass_samples: Vec::new(),
        }
    }

    /// This metric with a label added.
    pub fn label(mut self, key: &str, value: &str) -> Metric {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_and_labels_read_back_exactly() {
        let mut run = Run::new("2026-11-23T14:00:00Z", Device::default());
        let mut s = Section::measured("latency", "cyclictest-style loop");
        let mut m = Metric::new("latency.max", "us", 0.1 + 0.2).label("cpu", "1");
        m.samples = vec![1e-9, 12_345.678_9, f64::MAX];
        m.better = Some(Better::Lower);
        s.metrics.push(m);
        run.sections.push(s);
        let back: Run = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
        assert_eq!(back, run);
        assert_eq!(back.metric("latency.max").unwrap().value, 0.1 + 0.2);
    }

    #[test]
    fn unknown_keys_are_ignored_and_missing_optional_ones_default() {
        let text = r#"{"schema":1,"collected_at":"t","device":{"future":1},
            "sections":[{"name":"boot","method":"","status":{"state":"not_measured","why":"no log"},"new_key":[]}]}"#;
        let run: Run = serde_json::from_str(text).unwrap();
        assert_eq!(
            run.section("boot").unwrap().status,
            Status::NotMeasured {
                why: "no log".into()
            }
        );
        assert!(run.device.board.is_none());
    }
}
