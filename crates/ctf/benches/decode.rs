//! CTF decoding speed beside babeltrace2's text output of the same trace,
//! in the same run: `cargo bench -p lever-ctf --bench decode [-- DIR]`.
//!
//! The trace is DIR (or `LEVER_CTF_BENCH_TRACE`), else a cyg-profile UST
//! trace recorded now with lttng (2 threads, 2.4 M function
//! entries/exits), else the shared synctraces kernel trace. Lever's side
//! decodes every event and touches every decoded value (a checksum);
//! babeltrace2's is `babeltrace2 DIR > /dev/null` (its default pretty
//! text), the best of three runs each. Both are timed in CPU time (this
//! thread's `/proc/thread-self/schedstat`; the shell's `times` for the
//! child), which a busy machine does not inflate, and wall time.
use lever_ctf::decode::Value;
use lever_ctf::Trace;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn sum(vals: &[Value]) -> u64 {
    vals.iter().fold(0u64, |a, v| {
        a.wrapping_add(match *v {
            Value::Unsigned(u) => u,
            Value::Signed(s) => s as u64,
            Value::Float(f) => f.to_bits(),
            Value::Str { len, .. } => len as u64,
            Value::Struct { slots } | Value::Array { slots, .. } | Value::Variant { slots, .. } => {
                slots as u64
            }
        })
    })
}

/// CPU time of this thread so far.
fn thread_cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(
        s.split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    )
}

/// Events, checksum, CPU time, wall time.
fn lever(dir: &Path) -> (u64, u64, Duration, Duration) {
    let t0 = Instant::now();
    let c0 = thread_cpu();
    let trace = Trace::open(dir).expect("open trace");
    let mut events = trace.events();
    let (mut n, mut check) = (0u64, 0u64);
    while let Some(e) = events.next().expect("decode") {
        n += 1;
        check = check
            .wrapping_add(e.timestamp_ns() as u64)
            .wrapping_add(e.name().len() as u64)
            .wrapping_add(sum(e.stream_context().raw_values()))
            .wrapping_add(sum(e.context().raw_values()))
            .wrapping_add(sum(e.payload().raw_values()));
    }
    (n, check, thread_cpu() - c0, t0.elapsed())
}

/// `0m7.347s` → seconds.
fn min_sec(s: &str) -> Option<f64> {
    let (m, rest) = s.split_once('m')?;
    Some(m.parse::<f64>().ok()? * 60.0 + rest.strip_suffix('s')?.parse::<f64>().ok()?)
}

/// babeltrace2's CPU time (user + system, from the shell's `times`) and
/// wall time.
fn babeltrace(dir: &Path, streams: usize) -> Option<(Duration, Duration)> {
    // One stream: straight from the source to the pretty sink, as the
    // muxer refuses the synctraces' packets that begin before the last
    // event of the packet before them.
    let script = if streams == 1 {
        "babeltrace2 run -c src:source.ctf.fs -p \"inputs=[\\\"$1\\\"]\" -c sink:sink.text.pretty -x src:sink >/dev/null 2>&1 || exit 1; times"
    } else {
        "babeltrace2 \"$1\" >/dev/null 2>&1 || exit 1; times"
    };
    let t0 = Instant::now();
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(dir)
        .output()
        .ok()?;
    let wall = t0.elapsed();
    if !o.status.success() {
        eprintln!("babeltrace2 failed on {}", dir.display());
        return None;
    }
    // `times`: the shell's user/sys, then its children's.
    let text = String::from_utf8_lossy(&o.stdout);
    let child = text.lines().nth(1)?;
    let mut it = child.split_whitespace().filter_map(min_sec);
    let cpu = it.next()? + it.next()?;
    Some((Duration::from_secs_f64(cpu), wall))
}

fn record(work: &Path) -> Option<PathBuf> {
    let prog = r#"
#include <stdlib.h>
#include <pthread.h>
static volatile long sink;
__attribute__((noinline)) static void leaf(int i) { sink += i; }
__attribute__((noinline)) static void mid(int i) { for (int k = 0; k < 3; k++) leaf(i + k); }
__attribute__((noinline)) static void top(int n) { for (int i = 0; i < n; i++) mid(i); }
static void *worker(void *arg) { top((int)(long)arg); return NULL; }
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  pthread_t t; pthread_create(&t, NULL, worker, (void *)(long)n);
  top(n); pthread_join(t, NULL); return 0;
}
"#;
    std::fs::write(work.join("p.c"), prog).ok()?;
    let ok = |c: &mut Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(Command::new("gcc")
        .args(["-O1", "-finstrument-functions", "-o"])
        .arg(work.join("p"))
        .arg(work.join("p.c"))
        .arg("-lpthread"))
    {
        return None;
    }
    if !ok(Command::new("lttng").args(["list", "-u"])) {
        eprintln!("no lttng session daemon answering: not recording a trace");
        return None;
    }
    let name = format!("lever-ctf-bench-{}", std::process::id());
    let out = work.join("trace");
    let lt = |args: &[&str]| ok(Command::new("lttng").args(args));
    let made = lt(&["create", &name, &format!("--output={}", out.display())])
        && lt(&[
            "enable-channel",
            "-u",
            "ch",
            "--subbuf-size=4M",
            "--num-subbuf=16",
        ])
        && lt(&[
            "enable-event",
            "-u",
            "-c",
            "ch",
            "lttng_ust_cyg_profile_fast*",
        ])
        && lt(&[
            "add-context",
            "-u",
            "-c",
            "ch",
            "-t",
            "vpid",
            "-t",
            "vtid",
            "-t",
            "procname",
        ])
        && lt(&["start"]);
    let ran = made
        && ok(Command::new(work.join("p"))
            .arg("150000")
            .env("LD_PRELOAD", "liblttng-ust-cyg-profile-fast.so"));
    lt(&["destroy", &name]);
    if !ran {
        return None;
    }
    lever_ctf::find_traces(&out).into_iter().next()
}

fn main() {
    let work = tempfile::tempdir().unwrap();
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let dir = arg
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("LEVER_CTF_BENCH_TRACE").map(PathBuf::from))
        .or_else(|| record(work.path()))
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/third-party/ctf/synctraces/scp_src")
        });
    let trace = Trace::open(&dir).expect("open");
    let bytes = trace.stream_bytes();
    let streams = trace.stream_paths().count();
    drop(trace);
    let (mut best, mut best_wall) = (Duration::MAX, Duration::MAX);
    let mut n = 0;
    for _ in 0..3 {
        let (events, _check, cpu, wall) = lever(&dir);
        n = events;
        best = best.min(cpu);
        best_wall = best_wall.min(wall);
    }
    let per_s = |d: Duration| n as f64 / d.as_secs_f64();
    println!(
        "trace: {} ({n} events, {:.1} MB of streams)",
        dir.display(),
        bytes as f64 / 1e6
    );
    println!(
        "lever-ctf decode:        CPU {:>7.3} s {:>7.2} M events/s {:>7.1} MB/s | wall {:>7.3} s",
        best.as_secs_f64(),
        per_s(best) / 1e6,
        bytes as f64 / best.as_secs_f64() / 1e6,
        best_wall.as_secs_f64()
    );
    // LEVER_CTF_BENCH_RUNS=0: Lever's side only (while tuning).
    let bt_runs = std::env::var("LEVER_CTF_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let runs: Vec<_> = (0..bt_runs)
        .filter_map(|_| babeltrace(&dir, streams))
        .collect();
    let bt = runs
        .iter()
        .map(|r| r.0)
        .min()
        .zip(runs.iter().map(|r| r.1).min());
    match bt {
        Some((b, b_wall)) => {
            println!(
                "babeltrace2 text output: CPU {:>7.3} s {:>7.2} M events/s                 | wall {:>7.3} s",
                b.as_secs_f64(),
                per_s(b) / 1e6,
                b_wall.as_secs_f64()
            );
            println!(
                "lever-ctf / babeltrace2: {:.1}x in CPU time, {:.1}x in wall time",
                b.as_secs_f64() / best.as_secs_f64(),
                b_wall.as_secs_f64() / best_wall.as_secs_f64()
            );
        }
        None => println!("babeltrace2: no figure (not installed here, or it failed: see above)"),
    }
}
