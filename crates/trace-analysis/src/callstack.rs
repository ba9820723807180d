//! Per-thread call stacks from begin/end spans: function entries and
//! exits of an LTTng-UST `liblttng-ust-cyg-profile` trace (which
//! `lever-trace-input` gives as `B|pid|function` / `E|pid` markers, as
//! systrace writes them), or any systrace `B`/`E` markers.
//!
//! Each thread has a stack. A begin pushes a frame; an end pops the
//! innermost (a `B`/`E` pair is a call: systrace and cyg-profile both
//! close the innermost). For each function: calls, total (inclusive)
//! time counted once per outermost activation (recursion is not counted
//! twice), self time (total minus the calls made from it), and the
//! worst single call with its thread and time. Folded stacks
//! (`comm;main;draw;gear 1234` with self time in µs) feed the flame
//! graph. Frames still open at the end close at the thread's last event
//! and are counted as open.

use lever_trace::{Event, EventKind, Marker};
use serde::Serialize;
use std::collections::HashMap;

/// Depth of a thread's stack at most (deeper begins are counted and
/// dropped: a trace without ends must not grow without bound).
const MAX_DEPTH: usize = 4096;

#[derive(Debug)]
struct Frame {
    func: u32,
    start_ns: u64,
    children_ns: u64,
}

#[derive(Debug, Default)]
struct Thread {
    comm: String,
    stack: Vec<Frame>,
    calls: u64,
    max_depth: usize,
    last_ns: u64,
}

#[derive(Debug, Default, Clone)]
struct Stats {
    calls: u64,
    total_ns: u64,
    self_ns: u64,
    max_ns: u64,
    max_tid: i32,
    max_at_ns: u64,
    /// Activations of this function on some stack right now (recursion).
    active: HashMap<i32, u32>,
}

/// Feeds on events, one pass.
#[derive(Debug, Default)]
pub struct CallStackTracker {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    stats: Vec<Stats>,
    threads: HashMap<i32, Thread>,
    /// Folded stack (function ids, the thread's comm first) → self ns.
    folded: HashMap<(String, Vec<u32>), u64>,
    unmatched_ends: u64,
    too_deep: u64,
}

/// One function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionStats {
    /// Its name (a symbol, or the address when none resolved).
    pub name: String,
    /// Completed calls.
    pub calls: u64,
    /// Inclusive time, ns (outermost activations only).
    pub total_ns: u64,
    /// Time in the function itself, ns.
    pub self_ns: u64,
    /// The longest call, ns.
    pub max_ns: u64,
    /// Its thread.
    pub max_tid: i32,
    /// When it began, ns (trace clock).
    pub max_at_ns: u64,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadStacks {
    /// Thread id.
    pub tid: i32,
    /// Its name.
    pub comm: String,
    /// Calls begun.
    pub calls: u64,
    /// Deepest stack.
    pub max_depth: usize,
    /// Frames open at the end of the trace.
    pub open_at_end: usize,
}

/// The call-stack profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallStackReport {
    /// Functions, most self time first.
    pub functions: Vec<FunctionStats>,
    /// Threads, most calls first.
    pub threads: Vec<ThreadStacks>,
    /// Ends with no open frame on their thread.
    pub unmatched_ends: u64,
    /// Begins dropped past the depth bound.
    pub too_deep: u64,
    /// Folded stacks (`comm;f;g SELF_US` lines) for a flame graph.
    #[serde(skip)]
    pub folded: String,
}

impl CallStackTracker {
    /// A tracker with nothing seen.
    pub fn new() -> Self {
        Self::default()
    }

    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), i);
        self.stats.push(Stats::default());
        i
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        let EventKind::Marker(m) = &e.kind else {
            return;
        };
        let t = e.ts_ns;
        match m {
            Marker::Begin { name, .. } => {
                let f = self.id(name);
                let th = self.threads.entry(e.pid).or_default();
                th.last_ns = t;
                if th.comm.as_str() != e.comm {
                    th.comm = e.comm.to_string();
                }
                if th.stack.len() >= MAX_DEPTH {
                    self.too_deep += 1;
                    return;
                }
                th.stack.push(Frame {
                    func: f,
                    start_ns: t,
                    children_ns: 0,
                });
                th.calls += 1;
                th.max_depth = th.max_depth.max(th.stack.len());
                *self.stats[f as usize].active.entry(e.pid).or_default() += 1;
            }
            Marker::End { .. } => {
                let Some(th) = self.threads.get_mut(&e.pid) else {
                    self.unmatched_ends += 1;
                    return;
                };
                th.last_ns = t;
                if th.stack.is_empty() {
                    self.unmatched_ends += 1;
                    return;
                }
                self.pop(e.pid, t);
            }
            _ => {}
        }
    }

    fn pop(&mut self, tid: i32, t: u64) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        let path: Vec<u32> = th.stack.iter().map(|f| f.func).collect();
        let Some(fr) = th.stack.pop() else { return };
        let dur = t.saturating_sub(fr.start_ns);
        let self_ns = dur.saturating_sub(fr.children_ns);
        if let Some(parent) = th.stack.last_mut() {
            parent.children_ns += dur;
        }
        let comm = th.comm.clone();
        *self.folded.entry((comm, path)).or_default() += self_ns;
        let s = &mut self.stats[fr.func as usize];
        s.calls += 1;
        s.self_ns += self_ns;
        if let Some(n) = s.active.get_mut(&tid) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                // The outermost activation: its time counts once.
                s.total_ns += dur;
            }
        }
        if dur > s.max_ns {
            s.max_ns = dur;
            s.max_tid = tid;
            s.max_at_ns = fr.start_ns;
        }
    }

    /// The report; frames still open close at their thread's last event.
    pub fn finish(mut self, top: usize) -> CallStackReport {
        let mut open = HashMap::new();
        let tids: Vec<i32> = self.threads.keys().copied().collect();
        for tid in tids {
            let (n, last) = {
                let th = &self.threads[&tid];
                (th.stack.len(), th.last_ns)
            };
            open.insert(tid, n);
            for _ in 0..n {
                self.pop(tid, last);
            }
        }
        let mut functions: Vec<FunctionStats> = self
            .stats
            .iter()
            .enumerate()
            .map(|(i, s)| FunctionStats {
                name: self.names[i].clone(),
                calls: s.calls,
                total_ns: s.total_ns,
                self_ns: s.self_ns,
                max_ns: s.max_ns,
                max_tid: s.max_tid,
                max_at_ns: s.max_at_ns,
            })
            .collect();
        functions.sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then(a.name.cmp(&b.name)));
        let _ = top;
        let mut threads: Vec<ThreadStacks> = self
            .threads
            .iter()
            .map(|(tid, th)| ThreadStacks {
                tid: *tid,
                comm: th.comm.clone(),
                calls: th.calls,
                max_depth: th.max_depth,
                open_at_end: open.get(tid).copied().unwrap_or(0),
            })
            .collect();
        threads.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.tid.cmp(&b.tid)));
        let mut lines: Vec<String> = self
            .folded
            .iter()
            .filter(|(_, ns)| **ns >= 1000)
            .map(|((comm, path), ns)| {
                let mut s = comm.replace(';', ":");
                for f in path {
                    s.push(';');
                    s.push_str(&self.names[*f as usize].replace(';', ":"));
                }
                format!("{s} {}", ns / 1000)
            })
            .collect();
        lines.sort();
        CallStackReport {
            functions,
            threads,
            unmatched_ends: self.unmatched_ends,
            too_deep: self.too_deep,
            folded: lines.join("\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_trace::{parse_line, Line};

    fn feed(t: &mut CallStackTracker, line: &str) {
        match parse_line(line) {
            Line::Event(e) => t.event(&e),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn self_total_and_recursion() {
        let mut t = CallStackTracker::new();
        // main 0..100 µs calls f 10..60 which calls f 20..40 (recursion).
        for (ts, m) in [
            ("1.000000", "B|7|main"),
            ("1.000010", "B|7|f"),
            ("1.000020", "B|7|f"),
            ("1.000040", "E|7"),
            ("1.000060", "E|7"),
            ("1.000100", "E|7"),
        ] {
            feed(
                &mut t,
                &format!("  app-7 [000] ..... {ts}: tracing_mark_write: {m}"),
            );
        }
        let r = t.finish(10);
        let f = r.functions.iter().find(|f| f.name == "f").unwrap();
        assert_eq!(
            (f.calls, f.total_ns, f.self_ns, f.max_ns),
            (2, 50_000, 50_000, 50_000)
        );
        let main = r.functions.iter().find(|f| f.name == "main").unwrap();
        assert_eq!(
            (main.calls, main.total_ns, main.self_ns),
            (1, 100_000, 50_000)
        );
        assert_eq!(r.threads[0].max_depth, 3);
        assert!(r.folded.contains("app;main;f;f 20"), "{}", r.folded);
        assert!(r.folded.contains("app;main 50"), "{}", r.folded);
    }
}
