//! `lever trace bench`: how fast the parser and the sched analysis run on
//! a trace file, on the CPU (this thread's `CLOCK_THREAD_CPUTIME_ID`, so a
//! busy machine does not skew the figure) and on the wall clock.
//!
//! The file is read once before timing so the figures are the parser's,
//! not the disk's. The input is any [`LineSource`]: for a trace.dat the
//! "parse" figures are the binary decoder's. Peak memory is the caller's to add
//! ([`BenchResult::peak_rss_kb`]): it is a fact about the process, read from
//! `/proc/self/status` by `lever-measure`.

use crate::{analyze_source, Options};
use lever_trace::LineSource;
use serde::Serialize;
use std::io;
use std::time::{Duration, Instant};

/// `trace bench` figures; seconds, bytes and events as named.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// Bytes in the file.
    pub bytes: u64,
    /// Lines in the file.
    pub lines: u64,
    /// Events the parser recognised.
    pub events: u64,
    /// Wall time of one parse pass.
    pub parse_seconds: f64,
    /// On-CPU time of that pass (`None` where the thread clock is missing).
    pub parse_cpu_seconds: Option<f64>,
    /// Parser throughput per on-CPU second, MB/s.
    pub parse_mb_per_cpu_s: Option<f64>,
    /// On-CPU time of parse + full sched analysis.
    pub sched_cpu_seconds: Option<f64>,
    /// Parser throughput per wall second, MB/s.
    pub parse_mb_per_s: f64,
    /// Parser events per wall second.
    pub parse_events_per_s: f64,
    /// Wall time of parse + full sched analysis.
    pub sched_seconds: f64,
    /// Events per wall second through parse + sched analysis.
    pub sched_events_per_s: f64,
    /// Peak resident memory of the process, kB (filled by the caller).
    pub peak_rss_kb: Option<u64>,
    /// Wall time of the whole command: opening, the warm-up pass and both
    /// timed passes (filled by the caller, who knows when it started).
    pub process_seconds: Option<f64>,
    /// On-CPU time of the whole process so far, every thread (filled by
    /// the caller; see [`process_cpu`]).
    pub process_cpu_seconds: Option<f64>,
    /// Parse + sched analysis again with the parsing spread over several
    /// threads (`None` when asked for one).
    pub parallel: Option<ParallelPass>,
}

/// The parse + sched analysis pass with several parsing threads.
#[derive(Debug, Clone, Serialize)]
pub struct ParallelPass {
    /// Parsing threads asked for (the analysis runs on the calling one).
    pub threads: usize,
    /// Wall time.
    pub seconds: f64,
    /// On-CPU time of every thread of the process during the pass.
    pub cpu_seconds: Option<f64>,
    /// Events per wall second.
    pub events_per_s: f64,
}

/// This process's on-CPU time so far, all threads
/// (`CLOCK_PROCESS_CPUTIME_ID`); `None` where the kernel gives none.
pub fn process_cpu() -> Option<f64> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    let d = Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    );
    (!d.is_zero()).then_some(d.as_secs_f64())
}

/// This thread's on-CPU time.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Time one parse pass and one parse + sched analysis pass over the input
/// that `open` yields, on one thread, then the analysis pass again with
/// `threads` parsing threads when `threads > 1` (`open` is called three
/// or four times: warm-up, parse, analysis, parallel analysis). An input
/// with no events is an error: its figures would mean nothing.
pub fn bench<S: LineSource>(
    mut open: impl FnMut() -> io::Result<S>,
    threads: usize,
) -> io::Result<BenchResult> {
    open()?.for_each_line(|_, _| {}, |_| {})?;

    let c0 = thread_cpu();
    let t0 = Instant::now();
    let summary = open()?.for_each_line(|_, _| {}, |_| {})?;
    let parse = t0.elapsed().as_secs_f64();
    let c1 = thread_cpu();

    let t1 = Instant::now();
    let opts = Options {
        sched: true,
        ..Options::default()
    };
    let report = analyze_source(open()?, &opts, |_| {})?;
    let sched = t1.elapsed().as_secs_f64();
    let c2 = thread_cpu();

    if report.summary.events == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "no events"));
    }
    let parallel = if threads > 1 {
        let opts = Options { threads, ..opts };
        let (p0, t2) = (process_cpu(), Instant::now());
        let par = analyze_source(open()?, &opts, |_| {})?;
        let seconds = t2.elapsed().as_secs_f64();
        Some(ParallelPass {
            threads,
            seconds,
            cpu_seconds: process_cpu().zip(p0).map(|(b, a)| b - a),
            events_per_s: par.summary.events as f64 / seconds,
        })
    } else {
        None
    };
    // A zero thread clock means the kernel gave us none; say unknown.
    let cpu = |a: Duration, b: Duration| (!b.is_zero()).then(|| (b - a).as_secs_f64());
    let parse_cpu = cpu(c0, c1);
    Ok(BenchResult {
        bytes: summary.bytes,
        lines: summary.lines,
        events: summary.events,
        parse_seconds: parse,
        parse_cpu_seconds: parse_cpu,
        parse_mb_per_cpu_s: parse_cpu.map(|c| summary.bytes as f64 / 1e6 / c),
        sched_cpu_seconds: cpu(c1, c2),
        parse_mb_per_s: summary.bytes as f64 / 1e6 / parse,
        parse_events_per_s: summary.events as f64 / parse,
        sched_seconds: sched,
        sched_events_per_s: report.summary.events as f64 / sched,
        peak_rss_kb: None,
        process_seconds: None,
        process_cpu_seconds: None,
        parallel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_trace::Text;

    const TRACE: &str = "\
  <idle>-0 [000] d..2. 1.000000: sched_waking: comm=a pid=7 prio=120 target_cpu=000
  <idle>-0 [000] d..2. 1.000050: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120
";

    /// The bench over [`TRACE`] with `threads`, and how often it opened it.
    fn bench_trace(threads: usize) -> (BenchResult, u32) {
        let mut opened = 0;
        let r = bench(
            || {
                opened += 1;
                Ok(Text(TRACE.as_bytes()))
            },
            threads,
        )
        .unwrap();
        (r, opened)
    }

    #[test]
    fn counts_the_input_and_times_both_passes() {
        let (r, opened) = bench_trace(1);
        assert_eq!(opened, 3, "warm-up, parse, analysis");
        assert!(r.parallel.is_none());
        assert_eq!((r.bytes, r.lines, r.events), (TRACE.len() as u64, 2, 2));
        assert!(r.parse_seconds > 0.0 && r.sched_seconds > 0.0);
        assert!(
            r.parse_cpu_seconds.is_some(),
            "Linux has a thread CPU clock"
        );
        assert_eq!(r.peak_rss_kb, None);
    }

    #[test]
    fn a_parallel_pass_when_asked() {
        let (r, opened) = bench_trace(2);
        assert_eq!(opened, 4, "warm-up, parse, analysis, parallel analysis");
        let p = r.parallel.unwrap();
        assert_eq!(p.threads, 2);
        assert!(p.seconds > 0.0 && p.events_per_s > 0.0);
    }

    #[test]
    fn no_events_is_an_error() {
        let e = bench(|| Ok(Text(&b"# tracer: nop\n"[..])), 2).unwrap_err();
        assert_eq!(e.to_string(), "no events");
    }
}
