//! Flame graphs from `perf script` output (seed 000 §7.1: "use flame graphs
//! to find where CPU time goes").
//!
//! Two steps, both streaming: [`collapse_perf_script`] folds `perf script`
//! text into one line per distinct stack (`main;parse;read_line 42`), and
//! [`render_svg`] draws the folded stacks as an interactive SVG with the
//! `inferno` crate. [`Profile`] keeps the folded stacks in memory to answer
//! "which functions are hot" (self and total weight) for tables and JSON.
//!
//! Stacks are weighted by each sample's **period**, as perf reports it: for
//! the software `cpu-clock` event that is nanoseconds of CPU time, for
//! `cycles` it is cycles. A profile recorded at a fixed frequency therefore
//! shows time, not just sample counts.
//!
//! [`perf`] gets the `perf script` text (from a file, a `perf.data`, or by
//! recording a command) and writes the SVG and folded stacks to files.
//!
//! ```
//! let script = "\
//! app 100 1.000: 1 cpu-clock:
//! \t1111 leaf (/bin/app)
//! \t2222 main (/bin/app)
//!
//! app 100 1.001: 1 cpu-clock:
//! \t2222 main (/bin/app)
//! ";
//! let folded = lever_flamegraph::collapse_perf_script(script.as_bytes()).unwrap();
//! let profile = lever_flamegraph::Profile::from_folded(&folded).unwrap();
//! assert_eq!(profile.weight, 2);
//! assert_eq!(profile.hottest(1)[0].name, "main");
//! let mut svg = Vec::new();
//! lever_flamegraph::render_svg(&folded, "app", &mut svg).unwrap();
//! assert!(String::from_utf8(svg).unwrap().contains("<svg"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod perf;

use inferno::collapse::Collapse;
use serde::Serialize;
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// Errors from folding or drawing.
#[derive(Debug, thiserror::Error)]
pub enum FlameError {
    /// Reading the input or writing the output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A folded line is not `frame;frame;... COUNT`.
    #[error("folded stacks line {line}: {text:?} is not `frame;frame;... COUNT`")]
    Folded {
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// A file could not be read or written.
    #[error("cannot {op} {}", path.display())]
    File {
        /// `read` or `write`.
        op: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `perf` could not be started to read a perf.data file.
    #[error("cannot run `perf script` (install linux-perf)")]
    NoPerfScript(#[source] std::io::Error),
    /// `perf` could not be started to record a command.
    #[error("not available here because `perf` is not installed (apt-get install linux-perf); or give -i FILE")]
    NoPerf(#[source] std::io::Error),
    /// `perf script` failed.
    #[error("perf script -i {} failed: {stderr}", path.display())]
    PerfScript {
        /// The perf.data file.
        path: std::path::PathBuf,
        /// What perf said.
        stderr: String,
    },
    /// `perf record` failed and wrote no profile.
    #[error("perf record failed ({0}); check /proc/sys/kernel/perf_event_paranoid or run as root")]
    PerfRecord(std::process::ExitStatus),
    /// The input had no samples at all.
    #[error("no samples in the input (was the profile recorded with -g, and did the command run long enough?)")]
    Empty,
}

/// Fold `perf script` text into folded stacks (one `a;b;c COUNT` per line).
pub fn collapse_perf_script(reader: impl std::io::Read) -> Result<String, FlameError> {
    let mut out = Vec::new();
    let mut folder = inferno::collapse::perf::Folder::default();
    folder.collapse(std::io::BufReader::new(reader), &mut out)?;
    let folded = String::from_utf8_lossy(&out).into_owned();
    if folded.trim().is_empty() {
        return Err(FlameError::Empty);
    }
    Ok(folded)
}

/// Draw folded stacks as an SVG flame graph.
pub fn render_svg(folded: &str, title: &str, writer: impl Write) -> Result<(), FlameError> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "ns (sample periods)".to_string();
    let lines = folded.lines().filter(|l| !l.trim().is_empty());
    inferno::flamegraph::from_lines(&mut opts, lines, writer)?;
    Ok(())
}

/// One function's share of the weight.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Frame {
    /// Function (frame) name as perf printed it.
    pub name: String,
    /// Weight of the samples where it was the leaf (on CPU itself).
    pub self_weight: u64,
    /// Weight of the samples where it was anywhere on the stack (once per
    /// stack).
    pub total_weight: u64,
}

/// Folded stacks summarised per function.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    /// Sum of all sample periods (ns for `cpu-clock`, cycles for `cycles`).
    pub weight: u64,
    /// Distinct stacks.
    pub stacks: usize,
    frames: Vec<Frame>,
}

impl Profile {
    /// Summarise folded stacks (`a;b;c 42` lines).
    pub fn from_folded(folded: &str) -> Result<Profile, FlameError> {
        let mut weight = 0u64;
        let mut stacks = 0usize;
        let mut by_name: HashMap<&str, (u64, u64)> = HashMap::new();
        for (i, line) in folded.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let bad = || FlameError::Folded {
                line: i + 1,
                text: line.to_string(),
            };
            let (stack, count) = line.rsplit_once(' ').ok_or_else(bad)?;
            let count: u64 = count.parse().map_err(|_| bad())?;
            weight += count;
            stacks += 1;
            let frames: Vec<&str> = stack.split(';').collect();
            let mut seen: Vec<&str> = Vec::with_capacity(frames.len());
            for f in &frames {
                if !seen.contains(f) {
                    seen.push(f);
                    by_name.entry(f).or_default().1 += count;
                }
            }
            if let Some(leaf) = frames.last() {
                by_name.entry(leaf).or_default().0 += count;
            }
        }
        if weight == 0 {
            return Err(FlameError::Empty);
        }
        let mut frames: Vec<Frame> = by_name
            .into_iter()
            .map(|(name, (s, t))| Frame {
                name: name.to_string(),
                self_weight: s,
                total_weight: t,
            })
            .collect();
        frames.sort_by(|a, b| {
            b.self_weight
                .cmp(&a.self_weight)
                .then(b.total_weight.cmp(&a.total_weight))
                .then_with(|| a.name.cmp(&b.name))
        });
        Ok(Profile {
            weight,
            stacks,
            frames,
        })
    }

    /// The `n` functions with the most self weight.
    pub fn hottest(&self, n: usize) -> &[Frame] {
        &self.frames[..n.min(self.frames.len())]
    }
}

/// Read folded stacks from a reader (for input that is already folded).
pub fn read_folded(reader: impl BufRead) -> Result<String, FlameError> {
    let mut text = String::new();
    for line in reader.lines() {
        text.push_str(&line?);
        text.push('\n');
    }
    Ok(text)
}
