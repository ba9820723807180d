//! journald-friendly logging: one line per event on stderr. Under systemd
//! (`JOURNAL_STREAM` set) each line starts with a `<N>` syslog priority
//! prefix, which journald turns into the entry's priority; elsewhere lines
//! start with `lever daemon:`.
//!
//! Warnings a peer can cause (a malformed frame, a refusal, a limit, a
//! kernel error on its request) are rate-limited per uid, so a hostile
//! client cannot fill the disk through the log: the event loop marks the
//! peer it is serving ([`Logger::peer`]) and every warning written
//! meanwhile goes through that uid's token bucket ([`BURST`] lines, then
//! [`PER_SECOND`] a second). What is dropped is counted and said in one
//! line, `suppressed N similar messages from uid U`, before that uid's
//! next line or [`SUMMARY_AFTER`] after the first line dropped (on the
//! loop's timer: [`Logger::summary_due`], [`Logger::flush_due`]) — no
//! thread, no wake-up while nothing is owed.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lines one uid may log at once, before the rate applies.
pub const BURST: u32 = 10;
/// Lines one uid may log per second after its burst.
pub const PER_SECOND: u32 = 1;
/// A count of dropped lines is written at most this long after the first
/// of them, even if the uid logs nothing more.
pub const SUMMARY_AFTER: Duration = Duration::from_secs(5);
/// A line about a peer is cut here (its text may carry the peer's bytes).
pub const MAX_PEER_LINE: usize = 400;
/// Key of warnings about a connection whose uid could not be read.
pub const UNKNOWN_UID: u32 = u32::MAX;
/// No peer is being served.
const NO_PEER: u64 = u64::MAX;
/// Buckets kept before idle ones are forgotten.
const MAX_BUCKETS: usize = 4096;

/// A logger writing to stderr. Clones share the per-uid limits.
#[derive(Debug, Clone)]
pub struct Logger {
    journald: bool,
    quiet: bool,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// The uid whose frames are being served, or [`NO_PEER`].
    peer: AtomicU64,
    /// Some uid has dropped lines not yet counted in a summary.
    owed: AtomicBool,
    limits: Mutex<Limiter>,
}

/// Token buckets, one per uid.
#[derive(Debug, Default)]
struct Limiter {
    buckets: HashMap<u32, Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Lines it may write now (fractions accrue).
    tokens: f64,
    at: Instant,
    /// Lines dropped since the last summary, and when the first was.
    dropped: u64,
    since: Option<Instant>,
}

/// What the limiter says about one line.
#[derive(Debug, PartialEq, Eq)]
struct Verdict {
    write: bool,
    /// Write `suppressed N …` first: (uid, N, seconds it covers).
    summary: Option<(u32, u64, u64)>,
}

impl Limiter {
    fn admit(&mut self, uid: u32, now: Instant) -> Verdict {
        if self.buckets.len() >= MAX_BUCKETS && !self.buckets.contains_key(&uid) {
            self.forget_idle(now);
        }
        let b = self.buckets.entry(uid).or_insert(Bucket {
            tokens: f64::from(BURST),
            at: now,
            dropped: 0,
            since: None,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * f64::from(PER_SECOND)).min(f64::from(BURST));
        b.at = now;
        if b.tokens < 1.0 {
            b.dropped += 1;
            b.since.get_or_insert(now);
            return Verdict {
                write: false,
                summary: None,
            };
        }
        b.tokens -= 1.0;
        Verdict {
            write: true,
            summary: take_summary(uid, b, now),
        }
    }

    /// Summaries of every uid whose first dropped line is at least
    /// [`SUMMARY_AFTER`] old (`all`: every uid with dropped lines).
    fn due(&mut self, now: Instant, all: bool) -> Vec<(u32, u64, u64)> {
        let mut out: Vec<_> = self
            .buckets
            .iter_mut()
            .filter(|(_, b)| {
                b.since
                    .is_some_and(|t| all || now.saturating_duration_since(t) >= SUMMARY_AFTER)
            })
            .filter_map(|(&uid, b)| take_summary(uid, b, now))
            .collect();
        out.sort_unstable();
        out
    }

    fn next_due(&self) -> Option<Instant> {
        self.buckets
            .values()
            .filter_map(|b| b.since)
            .min()
            .map(|t| t + SUMMARY_AFTER)
    }

    /// Drop the buckets that are full again and owe no summary: they
    /// would be created the same.
    fn forget_idle(&mut self, now: Instant) {
        self.buckets.retain(|_, b| {
            let refill = now.saturating_duration_since(b.at).as_secs_f64() * f64::from(PER_SECOND);
            b.since.is_some() || b.tokens + refill < f64::from(BURST)
        });
    }
}

fn take_summary(uid: u32, b: &mut Bucket, now: Instant) -> Option<(u32, u64, u64)> {
    let since = b.since.take()?;
    let n = std::mem::take(&mut b.dropped);
    let secs = now.saturating_duration_since(since).as_secs().max(1);
    Some((uid, n, secs))
}

fn summary_line((uid, n, secs): (u32, u64, u64)) -> String {
    let who = if uid == UNKNOWN_UID {
        "unidentified peers".to_string()
    } else {
        format!("uid {uid}")
    };
    let s = if n == 1 { "" } else { "s" };
    format!("suppressed {n} similar message{s} from {who} in the last {secs} s (at most {PER_SECOND} a second after a burst of {BURST})")
}

/// A line about a peer as one bounded line: control bytes escaped, cut
/// at [`MAX_PEER_LINE`] bytes.
fn bounded(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(MAX_PEER_LINE + 8));
    for c in msg.chars() {
        if out.len() >= MAX_PEER_LINE {
            out.push_str(" [cut]");
            break;
        }
        if c.is_control() {
            out.push_str(&c.escape_default().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// While alive, warnings are about this peer (see [`Logger::peer`]).
#[derive(Debug)]
#[must_use = "the peer is cleared when this is dropped"]
pub struct PeerScope {
    shared: Arc<Shared>,
    before: u64,
}

impl Drop for PeerScope {
    fn drop(&mut self) {
        self.shared.peer.store(self.before, Ordering::Relaxed);
    }
}

impl Logger {
    fn with(quiet: bool) -> Self {
        let shared = Shared::default();
        shared.peer.store(NO_PEER, Ordering::Relaxed);
        Logger {
            journald: std::env::var_os("JOURNAL_STREAM").is_some(),
            quiet,
            shared: Arc::new(shared),
        }
    }

    /// Detect journald from the environment.
    pub fn from_env() -> Self {
        Logger::with(false)
    }

    /// A logger that drops info lines (benchmarks); warnings still print.
    pub fn quiet() -> Self {
        Logger::with(true)
    }

    fn line(&self, priority: u8, msg: &str) {
        let mut err = std::io::stderr().lock();
        let _ = if self.journald {
            writeln!(err, "<{priority}>{msg}")
        } else {
            writeln!(err, "lever daemon: {msg}")
        };
    }

    /// Whether [`Logger::info`] writes anything (not `--quiet`): callers
    /// skip building a line no one will read.
    pub fn info_on(&self) -> bool {
        !self.quiet
    }

    /// Informational (priority 6).
    pub fn info(&self, msg: &str) {
        if !self.quiet {
            self.line(6, msg);
        }
    }

    /// Warning (priority 4). While a peer is being served
    /// ([`Logger::peer`]) it counts against that uid's limit, as
    /// [`Logger::warn_peer`].
    pub fn warn(&self, msg: &str) {
        match self.shared.peer.load(Ordering::Relaxed) {
            NO_PEER => self.line(4, &format!("warning: {msg}")),
            uid => self.warn_peer(uid as u32, msg),
        }
    }

    /// A warning about the peer `uid` ([`UNKNOWN_UID`] when its
    /// credentials could not be read): written within the uid's limit,
    /// otherwise counted for its `suppressed` line.
    pub fn warn_peer(&self, uid: u32, msg: &str) {
        self.warn_peer_at(uid, msg, Instant::now());
    }

    fn warn_peer_at(&self, uid: u32, msg: &str, now: Instant) {
        let verdict = self.limits().admit(uid, now);
        if let Some(s) = verdict.summary {
            self.line(4, &format!("warning: {}", summary_line(s)));
        }
        if verdict.write {
            self.line(4, &format!("warning: {}", bounded(msg)));
        } else {
            self.shared.owed.store(true, Ordering::Relaxed);
        }
    }

    fn limits(&self) -> std::sync::MutexGuard<'_, Limiter> {
        self.shared.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Until the returned scope is dropped, [`Logger::warn`] (here and in
    /// every clone) is about the peer `uid`: the event loop holds one
    /// while it serves a connection's frames.
    pub fn peer(&self, uid: u32) -> PeerScope {
        let before = self.shared.peer.swap(u64::from(uid), Ordering::Relaxed);
        PeerScope {
            shared: Arc::clone(&self.shared),
            before,
        }
    }

    /// When the next `suppressed` line is due, if lines were dropped and
    /// not yet counted (one atomic load when none were).
    pub fn summary_due(&self) -> Option<Instant> {
        if !self.shared.owed.load(Ordering::Relaxed) {
            return None;
        }
        let next = self.limits().next_due();
        if next.is_none() {
            self.shared.owed.store(false, Ordering::Relaxed);
        }
        next
    }

    /// Write the `suppressed` lines that are due now.
    pub fn flush_due(&self) {
        self.flush(Instant::now(), false);
    }

    /// Write every `suppressed` line still owed (the daemon stops).
    pub fn flush_all(&self) {
        self.flush(Instant::now(), true);
    }

    fn flush(&self, now: Instant, all: bool) {
        if !self.shared.owed.load(Ordering::Relaxed) {
            return;
        }
        let due = self.limits().due(now, all);
        for s in due {
            self.line(4, &format!("warning: {}", summary_line(s)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_rate_then_a_summary() {
        let mut l = Limiter::default();
        let t0 = Instant::now();
        let burst = (0..BURST).filter(|_| l.admit(7, t0).write).count();
        assert_eq!(burst, BURST as usize);
        // 100 more in the same instant: all dropped.
        assert!((0..100).all(|_| !l.admit(7, t0).write));
        // Another uid has its own bucket.
        assert!(l.admit(8, t0).write);
        // A second later one line goes through, after the count.
        let v = l.admit(7, t0 + Duration::from_millis(1000));
        assert_eq!(
            v,
            Verdict {
                write: true,
                summary: Some((7, 100, 1))
            }
        );
        // Over a minute of a flood: the burst plus one a second.
        let mut l = Limiter::default();
        let mut written = 0;
        for ms in 0..60_000u64 {
            for _ in 0..10 {
                let v = l.admit(65534, t0 + Duration::from_millis(ms));
                written += usize::from(v.write) + usize::from(v.summary.is_some());
            }
        }
        let most = (BURST + 60 * PER_SECOND) as usize * 2;
        assert!(
            written <= most,
            "{written} lines in a minute (at most {most})"
        );
        assert!(written >= 60, "{written}");
    }

    #[test]
    fn summaries_fall_due_and_are_written_once() {
        let mut l = Limiter::default();
        let t0 = Instant::now();
        assert_eq!(l.next_due(), None);
        for _ in 0..BURST + 3 {
            l.admit(65534, t0);
        }
        assert_eq!(l.next_due(), Some(t0 + SUMMARY_AFTER));
        assert!(l.due(t0 + Duration::from_secs(1), false).is_empty());
        assert_eq!(l.due(t0 + SUMMARY_AFTER, false), vec![(65534, 3, 5)]);
        assert_eq!(l.next_due(), None);
        assert!(l.due(t0 + SUMMARY_AFTER * 2, true).is_empty());
        l.admit(65534, t0 + SUMMARY_AFTER);
        assert_eq!(l.due(t0 + SUMMARY_AFTER, true), Vec::new());
    }

    #[test]
    fn idle_buckets_are_forgotten_when_many() {
        let mut l = Limiter::default();
        let t0 = Instant::now();
        for uid in 0..MAX_BUCKETS as u32 {
            l.admit(uid, t0);
        }
        for _ in 0..BURST + 1 {
            l.admit(1, t0);
        }
        l.admit(MAX_BUCKETS as u32, t0 + Duration::from_secs(60));
        // uid 1 owes a summary and is kept; the idle ones went.
        assert!(l.buckets.len() <= 2, "{}", l.buckets.len());
        assert!(l.buckets.get(&1).is_some_and(|b| b.dropped == 2));
    }

    #[test]
    fn peer_lines_are_one_bounded_line() {
        let long = format!("bad\nframe {}", "x".repeat(10_000));
        let b = bounded(&long);
        assert!(!b.contains('\n') && b.contains("bad\\nframe"), "{b}");
        assert!(b.len() <= MAX_PEER_LINE + 16, "{}", b.len());
        assert_eq!(bounded("fine"), "fine");
    }

    #[test]
    fn the_peer_scope_routes_warnings_and_is_cleared() {
        let log = Logger::quiet();
        let clone = log.clone();
        {
            let _p = log.peer(42);
            assert_eq!(clone.shared.peer.load(Ordering::Relaxed), 42);
            for _ in 0..BURST + 5 {
                clone.warn("about the peer");
            }
        }
        assert_eq!(log.shared.peer.load(Ordering::Relaxed), NO_PEER);
        assert!(log.summary_due().is_some());
        let b = log.limits().buckets[&42];
        assert_eq!(b.dropped, 5);
        log.flush_all();
        assert_eq!(log.summary_due(), None);
        // Without a peer, warnings are not counted against anyone.
        log.warn("not about a peer");
        assert_eq!(log.limits().buckets.len(), 1);
    }
}
