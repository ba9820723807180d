//! Trace markers (`trace_marker` writes): spans, KPI breakdowns and frame
//! deadline misses.
//!
//! * **Spans**: systrace `B|pid|name` … `E|pid` nest per pid (an `E`
//!   closes the innermost open `B` of that pid). Seed 000 §8.3's
//!   `B Name` … `E Name` close the latest open `B` of the same name; a
//!   `B` never closed is a step marker, not a span.
//! * **KPIs** (`record=Connect..FirstVidFrame`): for every occurrence of a
//!   marker named `Connect` (any of B/E/S), the first later marker named
//!   `FirstVidFrame`; each named marker in between is a step, and the
//!   KPI is the sum of the steps (= last − first), exactly seed 000
//!   §8.3's reference table (`Connect to StartCamera = 273.120 − 273.083
//!   = 0.037` … `Record latency = 4.223`).
//!   `FROM`/`TO` may also be the whole text of a plain marker (`lever
//!   trace mark start` writes `start`), matched exactly; a KPI that uses
//!   plain markers counts every plain marker in between as a step too.
//! * **Frames**: for a periodic marker (e.g. a `B|pid|frame` per frame),
//!   with a period (16.6 ms at 60 Hz, seed 000 §7.2), a frame interval
//!   longer than 1.5 periods is a deadline miss and drops
//!   round(interval / period) − 1 frames; a span of that name longer than
//!   the period is a late frame.

use crate::stats::{Distribution, IdMap};
use lever_trace::{Event, EventKind, Marker};
use serde::Serialize;
use std::collections::BTreeMap;

/// What kind of marker an occurrence was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// `B`
    Begin,
    /// `E`
    End,
    /// `S`
    Instant,
    /// `C`
    Counter,
    /// Plain text (`start`), named by its whole text.
    Text,
}

/// One named marker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkerOcc {
    /// Time.
    pub ts_ns: u64,
    /// Writer's thread id.
    pub pid: i32,
    /// Kind.
    pub kind: MarkKind,
    /// Name.
    pub name: String,
    /// Counter value.
    pub value: Option<i64>,
}

/// A closed span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Span {
    /// Name.
    pub name: String,
    /// Writer (systrace pid field, else the writing thread).
    pub pid: i32,
    /// Begin time.
    pub start_ns: u64,
    /// Duration.
    pub dur_ns: u64,
    /// Nesting depth (0 = outermost).
    pub depth: u32,
}

/// Marker tracker.
#[derive(Debug, Default)]
pub struct MarkerTracker {
    marks: Vec<MarkerOcc>,
    spans: Vec<Span>,
    open_by_pid: IdMap<i32, Vec<(String, u64)>>,
    open_by_name: BTreeMap<String, Vec<(i32, u64)>>,
    unmatched_ends: u64,
    text_markers: u64,
    /// Plain text markers, for KPIs that name them.
    texts: Vec<MarkerOcc>,
}

impl MarkerTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        let EventKind::Marker(m) = &e.kind else {
            return;
        };
        let t = e.ts_ns;
        let (kind, name, pid, value) = match *m {
            Marker::Begin { pid, name } => (MarkKind::Begin, Some(name), pid, None),
            Marker::End { pid, name } => (MarkKind::End, name, pid, None),
            Marker::Instant { name } => (MarkKind::Instant, Some(name), None, None),
            Marker::Counter { pid, name, value } => {
                (MarkKind::Counter, Some(name), pid, Some(value))
            }
            Marker::Text(text) => {
                // tracing_mark_write: decode done
                self.text_markers += 1;
                self.texts.push(MarkerOcc {
                    ts_ns: e.ts_ns,
                    pid: e.pid,
                    kind: MarkKind::Text,
                    name: text.trim().to_string(),
                    value: None,
                });
                return;
            }
        };
        let systrace = pid.is_some();
        let pid = pid.unwrap_or(e.pid);
        match (kind, systrace) {
            (MarkKind::Begin, true) => self
                .open_by_pid
                .entry(pid)
                .or_default()
                .push((name.unwrap_or("").to_string(), t)),
            (MarkKind::Begin, false) => self
                .open_by_name
                .entry(name.unwrap_or("").to_string())
                .or_default()
                .push((pid, t)),
            (MarkKind::End, _) => {
                let closed = match (systrace, name) {
                    (false, Some(n)) => self
                        .open_by_name
                        .get_mut(n)
                        .and_then(|v| v.pop())
                        .map(|(p, s)| (n.to_string(), p, s)),
                    _ => self
                        .open_by_pid
                        .get_mut(&pid)
                        .and_then(|v| v.pop())
                        .map(|(n, s)| (n, pid, s)),
                };
                match closed {
                    Some((n, p, start)) => {
                        let depth = self.open_by_pid.get(&p).map_or(0, |v| v.len()) as u32;
                        self.spans.push(Span {
                            name: n,
                            pid: p,
                            start_ns: start,
                            dur_ns: t.saturating_sub(start),
                            depth,
                        })
                    }
                    None if name.is_none() => self.unmatched_ends += 1,
                    None => {}
                }
            }
            _ => {}
        }
        // The named occurrence (E|pid has no name: give it the span's).
        let name = match name {
            Some(n) => n.to_string(),
            None => match self.spans.last() {
                Some(s) if s.start_ns <= t && s.start_ns + s.dur_ns == t => s.name.clone(),
                _ => return,
            },
        };
        self.marks.push(MarkerOcc {
            ts_ns: t,
            pid,
            kind,
            name,
            value,
        });
    }

    /// Build the report with the requested KPIs and frame checks.
    pub fn finish(self, kpis: &[KpiSpec], frames: &[FrameSpec]) -> MarkerReport {
        let mut by_name: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for s in &self.spans {
            by_name.entry(&s.name).or_default().push(s.dur_ns);
        }
        let span_stats = by_name
            .into_iter()
            .map(|(name, mut v)| SpanStats {
                name: name.to_string(),
                durations: Distribution::from_samples(&mut v),
                total_ns: v.iter().sum(),
            })
            .collect();
        let kpis = kpis.iter().map(|k| self.kpi(k)).collect();
        let frames = frames.iter().map(|f| self.frames(f)).collect();
        MarkerReport {
            markers: self.marks.len() as u64,
            text_markers: self.text_markers,
            unmatched_ends: self.unmatched_ends,
            unclosed_begins: self
                .open_by_pid
                .values()
                .map(|v| v.len() as u64)
                .sum::<u64>(),
            span_stats,
            kpis,
            frames,
            spans: self.spans,
            marks: self.marks,
        }
    }

    /// The markers a KPI walks: the named ones, and the plain texts too
    /// when the KPI starts or ends at one (kept in time order).
    fn kpi_timeline(&self, spec: &KpiSpec) -> Vec<&MarkerOcc> {
        let mut all: Vec<&MarkerOcc> = self.marks.iter().collect();
        if self
            .texts
            .iter()
            .any(|t| t.name == spec.from || t.name == spec.to)
        {
            all.extend(&self.texts);
            // Stable: equal times keep the named marker first.
            all.sort_by_key(|m| m.ts_ns);
        }
        all
    }

    fn kpi(&self, spec: &KpiSpec) -> KpiReport {
        let marks = self.kpi_timeline(spec);
        let mut occurrences = Vec::new();
        let mut i = 0;
        while i < marks.len() {
            if marks[i].name != spec.from {
                i += 1;
                continue;
            }
            let Some(j) = (i + 1..marks.len()).find(|&j| marks[j].name == spec.to) else {
                break;
            };
            let window = &marks[i..=j];
            let steps = window
                .windows(2)
                .map(|w| KpiStep {
                    from: w[0].name.clone(),
                    to: w[1].name.clone(),
                    from_ns: w[0].ts_ns,
                    to_ns: w[1].ts_ns,
                    dur_ns: w[1].ts_ns.saturating_sub(w[0].ts_ns),
                })
                .collect::<Vec<_>>();
            occurrences.push(KpiOccurrence {
                start_ns: window[0].ts_ns,
                total_ns: steps.iter().map(|s| s.dur_ns).sum(),
                steps,
            });
            i = j + 1;
        }
        KpiReport {
            name: spec.name.clone(),
            from: spec.from.clone(),
            to: spec.to.clone(),
            occurrences,
        }
    }

    fn frames(&self, spec: &FrameSpec) -> FrameReport {
        let times: Vec<u64> = self
            .marks
            .iter()
            .filter(|m| m.name == spec.marker && m.kind != MarkKind::End)
            .map(|m| m.ts_ns)
            .collect();
        let mut intervals: Vec<u64> = times
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .collect();
        let period = spec.period_ns.max(1);
        let mut misses = Vec::new();
        let mut dropped = 0;
        for (k, &d) in intervals.iter().enumerate() {
            if d * 2 > period * 3 {
                let n = (d + period / 2) / period - 1;
                dropped += n;
                misses.push(FrameMiss {
                    at_ns: times[k + 1],
                    interval_ns: d,
                    dropped_frames: n,
                });
            }
        }
        let late_spans = self
            .spans
            .iter()
            .filter(|s| s.name == spec.marker && s.dur_ns > period)
            .count() as u64;
        FrameReport {
            marker: spec.marker.clone(),
            period_ns: spec.period_ns,
            frames: times.len() as u64,
            intervals: Distribution::from_samples(&mut intervals),
            deadline_misses: misses.len() as u64,
            dropped_frames: dropped,
            late_spans,
            misses,
        }
    }
}

/// `name=From..To`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KpiSpec {
    /// KPI name.
    pub name: String,
    /// First marker.
    pub from: String,
    /// Last marker.
    pub to: String,
}

impl KpiSpec {
    /// Parse `record=Connect..FirstVidFrame` (the name is optional:
    /// `Connect..FirstVidFrame`). `FROM`/`TO` are marker names (`B Connect`,
    /// `B|pid|Connect`, `S Connect`) or the whole text of a plain marker
    /// (`start..stop`, `load=start..decode done`).
    pub fn parse(s: &str) -> Option<KpiSpec> {
        let (name, range) = match s.split_once('=') {
            Some((n, r)) => (n.trim(), r),
            None => ("", s),
        };
        let (from, to) = range.split_once("..")?;
        let (from, to) = (from.trim(), to.trim());
        if from.is_empty() || to.is_empty() {
            return None;
        }
        Some(KpiSpec {
            name: if name.is_empty() {
                format!("{from}..{to}")
            } else {
                name.to_string()
            },
            from: from.to_string(),
            to: to.to_string(),
        })
    }
}

/// A periodic marker and its period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    /// Marker name.
    pub marker: String,
    /// Frame period.
    pub period_ns: u64,
}

impl FrameSpec {
    /// Parse `NAME@60hz` or `NAME@16.6ms` (default 60 Hz).
    pub fn parse(s: &str) -> Option<FrameSpec> {
        let (marker, p) = s.split_once('@').unwrap_or((s, "60hz"));
        let p = p.trim().to_ascii_lowercase();
        let period_ns = if let Some(hz) = p.strip_suffix("hz") {
            let hz: f64 = hz.trim().parse().ok()?;
            (hz > 0.0).then_some((1e9 / hz) as u64)?
        } else {
            let ms: f64 = p.strip_suffix("ms").unwrap_or(&p).trim().parse().ok()?;
            (ms > 0.0).then_some((ms * 1e6) as u64)?
        };
        (!marker.is_empty() && period_ns > 0).then(|| FrameSpec {
            marker: marker.to_string(),
            period_ns,
        })
    }
}

/// One step of a KPI.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KpiStep {
    /// From marker.
    pub from: String,
    /// To marker.
    pub to: String,
    /// From time.
    pub from_ns: u64,
    /// To time.
    pub to_ns: u64,
    /// to − from.
    pub dur_ns: u64,
}

/// One occurrence of a KPI.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KpiOccurrence {
    /// Time of the first marker.
    pub start_ns: u64,
    /// Sum of the steps.
    pub total_ns: u64,
    /// Steps.
    pub steps: Vec<KpiStep>,
}

/// A KPI over the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KpiReport {
    /// Name.
    pub name: String,
    /// First marker.
    pub from: String,
    /// Last marker.
    pub to: String,
    /// Every occurrence, in time order.
    pub occurrences: Vec<KpiOccurrence>,
}

/// A deadline miss.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameMiss {
    /// Time of the late frame.
    pub at_ns: u64,
    /// Interval since the previous frame.
    pub interval_ns: u64,
    /// Frames dropped.
    pub dropped_frames: u64,
}

/// Frame check of a periodic marker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameReport {
    /// Marker.
    pub marker: String,
    /// Period.
    pub period_ns: u64,
    /// Frames seen.
    pub frames: u64,
    /// Frame intervals.
    pub intervals: Distribution,
    /// Intervals > 1.5 periods.
    pub deadline_misses: u64,
    /// Sum of dropped frames.
    pub dropped_frames: u64,
    /// Spans of this name longer than the period.
    pub late_spans: u64,
    /// Each miss.
    pub misses: Vec<FrameMiss>,
}

/// Statistics of spans of one name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpanStats {
    /// Name.
    pub name: String,
    /// Durations.
    pub durations: Distribution,
    /// Sum.
    pub total_ns: u64,
}

/// Marker report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkerReport {
    /// Named markers.
    pub markers: u64,
    /// Free-text markers.
    pub text_markers: u64,
    /// `E` with nothing open.
    pub unmatched_ends: u64,
    /// systrace `B` never closed.
    pub unclosed_begins: u64,
    /// Per span name.
    pub span_stats: Vec<SpanStats>,
    /// Requested KPIs.
    pub kpis: Vec<KpiReport>,
    /// Requested frame checks.
    pub frames: Vec<FrameReport>,
    /// All closed spans.
    pub spans: Vec<Span>,
    /// All named markers.
    pub marks: Vec<MarkerOcc>,
}
