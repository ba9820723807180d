//! The daemon's live counters, and their exposition for Prometheus.
//!
//! The event loop counts (atomics and one small map, never a blocking
//! call); [`crate::exporter`] renders them on demand for a scraper, in
//! OpenMetrics 1.0 text ([`Metrics::openmetrics`]) or in the Prometheus
//! 0.0.4 text format that node_exporter's textfile collector reads
//! ([`Metrics::prometheus_text`]). Both carry the same families:
//!
//! | family | type | what |
//! |---|---|---|
//! | `lever_info{version,target}` | info | the daemon's version and target |
//! | `lever_requests_live` | gauge | live requests of every client |
//! | `lever_clients` | gauge | open client connections |
//! | `lever_acquires` | counter | ACQUIRE and SIGNAL frames granted (new or updated) |
//! | `lever_releases` | counter | requests ended by RELEASE |
//! | `lever_expiries` | counter | requests ended by their deadline |
//! | `lever_client_gone_releases` | counter | requests ended because their client closed or exited |
//! | `lever_refusals{code}` | counter | ERROR replies, by protocol error code |
//! | `lever_resource_writes{resource}` | counter | node writes (sets and restores) that succeeded |
//! | `lever_resource_write_errors{resource}` | counter | node writes the kernel refused |
//! | `lever_request_seconds` | histogram | from a request frame read to its reply queued |
//! | `lever_journal_bytes{journal}` | gauge | size of the journals of originals |
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the request-time histogram, seconds.
pub const BUCKETS: [f64; 14] = [
    1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2, 0.1, 1.0,
];

/// What one handled request did, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An ACQUIRE or SIGNAL was granted.
    Acquired,
    /// A RELEASE ended a request.
    Released,
    /// Anything else answered without an error.
    Answered,
    /// An ERROR reply with this protocol code.
    Refused(u16),
}

/// Which kind of request was handled, taken before the core consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// ACQUIRE or SIGNAL.
    Acquire,
    /// RELEASE.
    Release,
    /// Anything else.
    Other,
}

impl Kind {
    /// The kind of `request`.
    pub fn of(request: &lever_protocol::Request) -> Kind {
        use lever_protocol::Request;
        match request {
            Request::Acquire(_) | Request::Signal(_) | Request::Bind(_) => Kind::Acquire,
            Request::Release { .. } => Kind::Release,
            _ => Kind::Other,
        }
    }

    /// What a request of this kind did, from its reply.
    pub fn outcome(self, reply: &lever_protocol::Reply) -> Outcome {
        match (self, reply) {
            (_, lever_protocol::Reply::Error { code, .. }) => Outcome::Refused(*code as u16),
            (Kind::Acquire, _) => Outcome::Acquired,
            (Kind::Release, _) => Outcome::Released,
            (Kind::Other, _) => Outcome::Answered,
        }
    }
}

/// The counters. Shared (`Arc`) between the event loop, which counts, and
/// the exporter threads, which read.
#[derive(Debug, Default)]
pub struct Metrics {
    version: String,
    target: Mutex<String>,
    journals: Vec<(String, PathBuf)>,
    live: AtomicU64,
    clients: AtomicU64,
    acquires: AtomicU64,
    releases: AtomicU64,
    expiries: AtomicU64,
    gone: AtomicU64,
    refusals: Mutex<BTreeMap<u16, u64>>,
    /// Per resource name: (writes, write errors).
    writes: Mutex<BTreeMap<String, (u64, u64)>>,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_ns: AtomicU64,
}

impl Metrics {
    /// Counters for a daemon of `version` serving `target`, reporting the
    /// size of each `(name, path)` journal.
    pub fn new(version: &str, target: &str, journals: Vec<(String, PathBuf)>) -> Metrics {
        Metrics {
            version: version.to_string(),
            target: Mutex::new(target.to_string()),
            journals,
            ..Metrics::default()
        }
    }

    /// The target changed (SIGHUP reload).
    pub fn set_target(&self, target: &str) {
        *lock(&self.target) = target.to_string();
    }

    /// Count one handled request and how long it took.
    pub fn request(&self, outcome: Outcome, took: Duration) {
        match outcome {
            Outcome::Acquired => self.acquires.fetch_add(1, Relaxed),
            Outcome::Released => self.releases.fetch_add(1, Relaxed),
            Outcome::Answered => 0,
            Outcome::Refused(code) => {
                *lock(&self.refusals).entry(code).or_default() += 1;
                0
            }
        };
        let secs = took.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|&b| secs <= b) {
            self.buckets[i].fetch_add(1, Relaxed);
        }
        self.count.fetch_add(1, Relaxed);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.sum_ns.fetch_add(ns, Relaxed);
    }

    /// `n` requests ended by their deadline.
    pub fn expired(&self, n: usize) {
        self.expiries.fetch_add(n as u64, Relaxed);
    }

    /// `n` requests ended because their client went away.
    pub fn client_gone(&self, n: usize) {
        self.gone.fetch_add(n as u64, Relaxed);
    }

    /// One node write of `resource`, and whether the kernel took it.
    pub fn write(&self, resource: &str, ok: bool) {
        let mut map = lock(&self.writes);
        let entry = match map.get_mut(resource) {
            Some(e) => e,
            None => map.entry(resource.to_string()).or_default(),
        };
        if ok {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }

    /// Live requests now.
    pub fn set_live(&self, n: usize) {
        self.live.store(n as u64, Relaxed);
    }

    /// Open connections now.
    pub fn set_clients(&self, n: usize) {
        self.clients.store(n as u64, Relaxed);
    }

    /// OpenMetrics 1.0 text (`application/openmetrics-text; version=1.0.0`),
    /// ending with `# EOF`.
    pub fn openmetrics(&self) -> String {
        let mut out = self.render(Format::OpenMetrics);
        out.push_str("# EOF\n");
        out
    }

    /// Prometheus text format 0.0.4, as node_exporter's textfile collector
    /// reads it (`text/plain; version=0.0.4`).
    pub fn prometheus_text(&self) -> String {
        self.render(Format::Prometheus)
    }

    fn render(&self, f: Format) -> String {
        let mut o = String::with_capacity(2048);
        let info = if f == Format::OpenMetrics {
            "info"
        } else {
            "gauge"
        };
        let info_sample = if f == Format::OpenMetrics {
            "lever_info_info"
        } else {
            "lever_info"
        };
        family(
            &mut o,
            f,
            "lever_info",
            info,
            "The daemon's version and target.",
        );
        let _ = writeln!(
            o,
            "{info_sample}{{version=\"{}\",target=\"{}\"}} 1",
            escape(&self.version),
            escape(&lock(&self.target))
        );
        gauge(
            &mut o,
            f,
            "lever_requests_live",
            "Live requests of every client.",
            self.live.load(Relaxed),
        );
        gauge(
            &mut o,
            f,
            "lever_clients",
            "Open client connections.",
            self.clients.load(Relaxed),
        );
        for (name, help, v) in [
            (
                "lever_acquires",
                "ACQUIRE and SIGNAL requests granted (new or updated).",
                &self.acquires,
            ),
            (
                "lever_releases",
                "Requests ended by RELEASE.",
                &self.releases,
            ),
            (
                "lever_expiries",
                "Requests ended by their deadline.",
                &self.expiries,
            ),
            (
                "lever_client_gone_releases",
                "Requests ended because their client closed or exited.",
                &self.gone,
            ),
        ] {
            counter(&mut o, f, name, help);
            let _ = writeln!(o, "{name}_total {}", v.load(Relaxed));
        }
        counter(
            &mut o,
            f,
            "lever_refusals",
            "ERROR replies, by protocol error code.",
        );
        for (code, n) in lock(&self.refusals).iter() {
            let _ = writeln!(o, "lever_refusals_total{{code=\"{code}\"}} {n}");
        }
        let writes = lock(&self.writes).clone();
        counter(
            &mut o,
            f,
            "lever_resource_writes",
            "Node writes (sets and restores) the kernel took.",
        );
        for (res, (ok, _)) in &writes {
            let _ = writeln!(
                o,
                "lever_resource_writes_total{{resource=\"{}\"}} {ok}",
                escape(res)
            );
        }
        counter(
            &mut o,
            f,
            "lever_resource_write_errors",
            "Node writes the kernel refused.",
        );
        for (res, (_, err)) in &writes {
            let _ = writeln!(
                o,
                "lever_resource_write_errors_total{{resource=\"{}\"}} {err}",
                escape(res)
            );
        }
        family(
            &mut o,
            f,
            "lever_request_seconds",
            "histogram",
            "Time from a request frame read to its reply queued, seconds.",
        );
        let mut cumulative = 0;
        for (b, n) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += n.load(Relaxed);
            let _ = writeln!(
                o,
                "lever_request_seconds_bucket{{le=\"{b:?}\"}} {cumulative}"
            );
        }
        let count = self.count.load(Relaxed);
        let _ = writeln!(o, "lever_request_seconds_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.sum_ns.load(Relaxed) as f64 / 1e9;
        let _ = writeln!(o, "lever_request_seconds_sum {sum:?}");
        let _ = writeln!(o, "lever_request_seconds_count {count}");
        family(
            &mut o,
            f,
            "lever_journal_bytes",
            "gauge",
            "Size of the journals of originals, bytes.",
        );
        for (name, path) in &self.journals {
            let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let _ = writeln!(
                o,
                "lever_journal_bytes{{journal=\"{}\"}} {bytes}",
                escape(name)
            );
        }
        o
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    OpenMetrics,
    Prometheus,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking reader cannot leave a counter half-updated: keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn family(o: &mut String, _f: Format, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# TYPE {name} {kind}");
    let _ = writeln!(o, "# HELP {name} {help}");
}

/// A counter family: OpenMetrics names the family without `_total`, the
/// 0.0.4 format names it after its sample.
fn counter(o: &mut String, f: Format, name: &str, help: &str) {
    match f {
        Format::OpenMetrics => family(o, f, name, "counter", help),
        Format::Prometheus => family(o, f, &format!("{name}_total"), "counter", help),
    }
}

fn gauge(o: &mut String, f: Format, name: &str, help: &str, v: u64) {
    family(o, f, name, "gauge", help);
    let _ = writeln!(o, "{name} {v}");
}

/// A label value as both formats quote it.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_histogram_render_in_both_formats() {
        let m = Metrics::new("0.1.0", "qcs\"6490", vec![]);
        m.request(Outcome::Acquired, Duration::from_micros(3));
        m.request(Outcome::Acquired, Duration::from_millis(2));
        m.request(Outcome::Released, Duration::from_micros(1));
        m.request(Outcome::Refused(6), Duration::from_secs(5));
        m.expired(3);
        m.write("cpu_min_freq.silver", true);
        m.write("cpu_min_freq.silver", false);
        m.set_live(2);
        let om = m.openmetrics();
        assert!(om.ends_with("# EOF\n"));
        assert!(om.contains("lever_info_info{version=\"0.1.0\",target=\"qcs\\\"6490\"} 1\n"));
        assert!(
            om.contains("# TYPE lever_acquires counter\nlever_acquires_total 2\n")
                || om.contains("lever_acquires_total 2\n")
        );
        assert!(om.contains("lever_expiries_total 3\n"));
        assert!(om.contains("lever_refusals_total{code=\"6\"} 1\n"));
        assert!(om.contains("lever_resource_writes_total{resource=\"cpu_min_freq.silver\"} 1\n"));
        assert!(
            om.contains("lever_resource_write_errors_total{resource=\"cpu_min_freq.silver\"} 1\n")
        );
        // 1 µs and 3 µs fall in the first buckets, 2 ms under 2.5 ms, 5 s
        // only in +Inf.
        assert!(
            om.contains("lever_request_seconds_bucket{le=\"1e-6\"} 1\n"),
            "{om}"
        );
        assert!(om.contains("lever_request_seconds_bucket{le=\"5e-6\"} 2\n"));
        assert!(om.contains("lever_request_seconds_bucket{le=\"0.0025\"} 3\n"));
        assert!(om.contains("lever_request_seconds_bucket{le=\"1.0\"} 3\n"));
        assert!(om.contains("lever_request_seconds_bucket{le=\"+Inf\"} 4\n"));
        assert!(om.contains("lever_request_seconds_count 4\n"));
        let text = m.prometheus_text();
        assert!(!text.contains("# EOF"));
        assert!(text.contains("# TYPE lever_acquires_total counter\n"));
        assert!(text.contains("lever_info{version=\"0.1.0\""));
    }
}
