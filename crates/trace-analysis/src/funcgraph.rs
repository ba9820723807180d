//! function_graph statistics per function (seed 003): one look at one
//! call is not enough, so every occurrence counts.
//!
//! Per function: calls, min/avg/max/stddev of the duration, total time,
//! **self time** (duration minus the durations of its traced callees),
//! how often it called each callee, its slowest occurrences, and the
//! occurrences far above its median (outliers: more than `outlier_factor`
//! × median, default 5).
//!
//! Nesting follows the braces. Each task has its own call stack: the
//! stack is keyed by the task column (`funcgraph-proc`) when present, else
//! by the task the last `=>` context-switch line put on the CPU, else by
//! the CPU. An occurrence is located by its absolute time
//! (`funcgraph-abs-time`) when the trace has it, and always by its line
//! number. Returns without a matching entry (the trace began mid-call)
//! are counted in `unmatched_exits`.

use crate::stats::IdMap;
use lever_trace::{FgItem, FuncGraph};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StackKey {
    Task(i32),
    Cpu(u32),
}

struct Frame {
    func: u32,
    child_ns: u64,
}

#[derive(Default)]
struct Func {
    durations: Vec<(u64, u64, Option<u64>)>, // (ns, line, ts)
    self_ns: u64,
    callees: IdMap<u32, u64>,
}

/// function_graph tracker.
#[derive(Default)]
pub struct FuncGraphTracker {
    names: HashMap<String, u32>,
    funcs: Vec<Func>,
    stacks: HashMap<StackKey, Vec<Frame>>,
    cpu_task: IdMap<u32, i32>,
    unmatched_exits: u64,
    context_switches: u64,
}

impl FuncGraphTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.funcs.len() as u32;
        self.names.insert(name.to_string(), id);
        self.funcs.push(Func::default());
        id
    }

    /// Feed one function_graph line with its line number.
    pub fn line(&mut self, line_no: u64, fg: &FuncGraph<'_>) {
        let key = match fg.task {
            Some((_, pid)) => StackKey::Task(pid),
            None => match self.cpu_task.get(&fg.cpu) {
                Some(&pid) => StackKey::Task(pid),
                None => StackKey::Cpu(fg.cpu),
            },
        };
        match &fg.item {
            FgItem::ContextSwitch { to, .. } => {
                self.context_switches += 1;
                self.cpu_task.insert(fg.cpu, to.1);
            }
            FgItem::Entry(name) => {
                let id = self.intern(name);
                let stack = self.stacks.entry(key).or_default();
                if let Some(parent) = stack.last() {
                    *self.funcs[parent.func as usize]
                        .callees
                        .entry(id)
                        .or_default() += 1;
                }
                stack.push(Frame {
                    func: id,
                    child_ns: 0,
                });
            }
            FgItem::Leaf(name) => {
                let Some(d) = fg.duration_ns else { return };
                let id = self.intern(name);
                let stack = self.stacks.entry(key).or_default();
                if let Some(parent) = stack.last_mut() {
                    parent.child_ns += d;
                    *self.funcs[parent.func as usize]
                        .callees
                        .entry(id)
                        .or_default() += 1;
                }
                let f = &mut self.funcs[id as usize];
                f.durations.push((d, line_no, fg.ts_ns));
                f.self_ns += d;
            }
            FgItem::Exit(_) => {
                let stack = self.stacks.entry(key).or_default();
                let Some(frame) = stack.pop() else {
                    self.unmatched_exits += 1;
                    return;
                };
                let Some(d) = fg.duration_ns else { return };
                if let Some(parent) = stack.last_mut() {
                    parent.child_ns += d;
                }
                let f = &mut self.funcs[frame.func as usize];
                f.durations.push((d, line_no, fg.ts_ns));
                f.self_ns += d.saturating_sub(frame.child_ns);
            }
            FgItem::Comment(_) | FgItem::IrqEnter | FgItem::IrqExit => {}
        }
    }

    /// Build the report: functions by total time, `top` slowest
    /// occurrences each, outliers above `outlier_factor` × median.
    pub fn finish(self, top: usize, outlier_factor: f64) -> FuncGraphReport {
        let mut names: Vec<String> = vec![String::new(); self.funcs.len()];
        for (n, id) in self.names {
            names[id as usize] = n;
        }
        let mut functions: Vec<FunctionStats> = self
            .funcs
            .into_iter()
            .enumerate()
            .filter(|(_, f)| !f.durations.is_empty())
            .map(|(id, mut f)| {
                let n = f.durations.len() as u64;
                let total: u64 = f.durations.iter().map(|d| d.0).sum();
                let mean = total as f64 / n as f64;
                let var = f
                    .durations
                    .iter()
                    .map(|d| (d.0 as f64 - mean).powi(2))
                    .sum::<f64>()
                    / n as f64;
                let mut sorted: Vec<u64> = f.durations.iter().map(|d| d.0).collect();
                sorted.sort_unstable();
                let median = sorted[(sorted.len() - 1) / 2];
                f.durations
                    .sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                let occ = |d: &(u64, u64, Option<u64>)| Occurrence {
                    dur_ns: d.0,
                    line_no: d.1,
                    ts_ns: d.2,
                };
                let threshold = median as f64 * outlier_factor;
                let outliers: Vec<Occurrence> = f
                    .durations
                    .iter()
                    .take_while(|d| median > 0 && d.0 as f64 > threshold)
                    .map(occ)
                    .collect();
                let mut callees: Vec<(String, u64)> = f
                    .callees
                    .iter()
                    .map(|(&c, &k)| (names[c as usize].clone(), k))
                    .collect();
                callees.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                FunctionStats {
                    function: names[id].clone(),
                    calls: n,
                    min_ns: sorted[0],
                    avg_ns: mean as u64,
                    median_ns: median,
                    max_ns: sorted[sorted.len() - 1],
                    stddev_ns: var.sqrt() as u64,
                    total_ns: total,
                    self_ns: f.self_ns,
                    callees: callees
                        .into_iter()
                        .map(|(function, calls)| Callee { function, calls })
                        .collect(),
                    slowest: f.durations.iter().take(top).map(occ).collect(),
                    outlier_count: outliers.len() as u64,
                    outliers: outliers.into_iter().take(top).collect(),
                }
            })
            .collect();
        functions.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then(a.function.cmp(&b.function))
        });
        FuncGraphReport {
            functions,
            unmatched_exits: self.unmatched_exits,
            context_switches: self.context_switches,
            outlier_factor,
        }
    }
}

/// Where one call happened and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Occurrence {
    /// Duration.
    pub dur_ns: u64,
    /// Line of the return (or of the leaf call).
    pub line_no: u64,
    /// Absolute time of that line, with `funcgraph-abs-time`.
    pub ts_ns: Option<u64>,
}

/// A callee and how often it was called.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Callee {
    /// Callee.
    pub function: String,
    /// Calls from this function.
    pub calls: u64,
}

/// Statistics of one function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionStats {
    /// Function.
    pub function: String,
    /// Completed calls.
    pub calls: u64,
    /// Shortest.
    pub min_ns: u64,
    /// Mean.
    pub avg_ns: u64,
    /// Median.
    pub median_ns: u64,
    /// Longest.
    pub max_ns: u64,
    /// Population standard deviation.
    pub stddev_ns: u64,
    /// Sum of durations.
    pub total_ns: u64,
    /// Sum of durations minus traced callees.
    pub self_ns: u64,
    /// Callees, most called first.
    pub callees: Vec<Callee>,
    /// Slowest occurrences.
    pub slowest: Vec<Occurrence>,
    /// Occurrences above `outlier_factor` × median.
    pub outlier_count: u64,
    /// The first of them (slowest first).
    pub outliers: Vec<Occurrence>,
}

/// function_graph report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FuncGraphReport {
    /// Functions by total time.
    pub functions: Vec<FunctionStats>,
    /// Returns without an entry.
    pub unmatched_exits: u64,
    /// `=>` lines.
    pub context_switches: u64,
    /// Outlier threshold factor.
    pub outlier_factor: f64,
}
