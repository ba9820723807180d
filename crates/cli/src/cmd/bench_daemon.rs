//! `lever bench-daemon`: round-trip latency and throughput of a real daemon
//! on a simulated board, its memory, and its CPU use while idle.
//!
//! It starts `lever daemon --sim BOARD --quiet` in a temporary state
//! directory, then for each client count runs that many client threads,
//! each with its own connection, doing acquire + release of a third-party
//! resource in a loop. The acquire latency is the time from the client call
//! to the reply, which the daemon sends after the node is written: "client
//! call to node written". Idle CPU is the daemon's utime + stime (from
//! `/proc/PID/stat`) over an idle window.

use crate::args::Global;
use crate::cmd::util::Progress;
use crate::output::{print_json, Table};
use anyhow::{bail, Context};
use clap::Args;
use lever_client::{Client, Priority};
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `lever bench-daemon` flags.
#[derive(Debug, Args)]
pub struct BenchDaemonArgs {
    /// Client counts to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    pub clients: Vec<usize>,
    /// Acquire + release pairs per client count (split over the clients).
    #[arg(long, default_value_t = 20_000)]
    pub operations: usize,
    /// Pace each client: one acquire every this many µs (0 = back to back,
    /// which saturates the CPUs and measures queueing as much as Lever).
    #[arg(long, default_value_t = 0)]
    pub interval_us: u64,
    /// Measure PING round trips instead of acquire + release: the floor set
    /// by the socket, the event loop and the scheduler, with no node written.
    #[arg(long)]
    pub ping: bool,
    /// Idle window for the idle-CPU check, in seconds (0 skips it).
    #[arg(long, default_value_t = 10)]
    pub idle_secs: u64,
    /// Start the daemon with `--busy-poll-us US`.
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub busy_poll_us: u64,
    /// Simulated board to run on.
    #[arg(long, default_value = "qcs6490")]
    pub sim: String,
}

#[derive(Debug, Serialize)]
struct Row {
    clients: usize,
    interval_us: u64,
    operations: usize,
    p50_us: f64,
    p90_us: f64,
    p99_us: f64,
    max_us: f64,
    acquire_release_per_s: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    board: String,
    tree_on: String,
    rows: Vec<Row>,
    rss_kb_idle_start: u64,
    rss_kb_after_load: u64,
    rss_after_load_split: Option<RssSplit>,
    pss_kb_after_load: Option<u64>,
    idle_secs: u64,
    idle_cpu_ticks: Option<u64>,
    clock_ticks_per_s: u64,
}

fn proc_field(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// RSS split by what backs it (`/proc/PID/smaps`): the lever executable
/// itself, shared libraries, and anonymous memory (heap, stacks) — the part
/// the daemon's own data structures account for.
#[derive(Debug, Default, Serialize)]
struct RssSplit {
    executable_kb: u64,
    libraries_kb: u64,
    anonymous_kb: u64,
}

fn rss_split(pid: u32) -> Option<RssSplit> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let exe = exe.to_string_lossy();
    let mut split = RssSplit::default();
    let mut current = String::new();
    for line in smaps.lines() {
        // `55ac9ced3000-55ac9cf8e000 r--p 00000000 fe:00 5326124   /path`
        if line
            .split_whitespace()
            .next()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            current = line.split_whitespace().nth(5).unwrap_or("").to_string();
        } else if let Some(v) = line.strip_prefix("Rss:") {
            let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
            if current == exe {
                split.executable_kb += kb;
            } else if current.starts_with('/') {
                split.libraries_kb += kb;
            } else {
                split.anonymous_kb += kb;
            }
        }
    }
    Some(split)
}

/// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14
/// and 15, counted after the `(comm)` field, which may contain spaces).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx]
}

pub fn run(global: &Global, args: BenchDaemonArgs) -> anyhow::Result<()> {
    // The simulated tree stands in for sysfs, which lives in memory: put
    // it on tmpfs when there is one, so the figures measure Lever rather
    // than a disk file system.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    };
    let on = if dir.path().starts_with(shm) {
        "tmpfs (/dev/shm)"
    } else {
        "the disk (no /dev/shm)"
    };
    let socket = dir.path().join("lever.sock");
    // Run the daemon from its own copy of the executable: pages of one file
    // mapped by two processes (this bench and the daemon) would otherwise
    // count in both and could not be released by the daemon alone.
    let exe = dir.path().join("lever-daemon-under-test");
    std::fs::copy(std::env::current_exe()?, &exe).context("copying the executable")?;
    // The board is created beforehand, so the daemon's memory reflects
    // serving, not the one-time work of generating a simulated tree.
    let root = dir.path().join("sim");
    lever_sim::create(&args.sim, &root)?;
    let mut daemon = Command::new(exe)
        .args(["daemon", "--quiet", "--max-requests", "100000", "--root"])
        .arg(&root)
        .arg("--state-dir")
        .arg(dir.path())
        .arg("--socket")
        .arg(&socket)
        .arg("--busy-poll-us")
        .arg(args.busy_poll_us.to_string())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the daemon")?;
    let mut err = BufReader::new(daemon.stderr.take().context("daemon stderr")?);
    let mut line = String::new();
    while !line.contains("ready on") {
        line.clear();
        if err.read_line(&mut line)? == 0 {
            bail!("daemon exited before it was ready");
        }
    }
    std::thread::spawn(move || {
        let mut l = String::new();
        while err.read_line(&mut l).unwrap_or(0) > 0 {
            eprint!("{l}");
            l.clear();
        }
    });
    let pid = daemon.id();
    let result = bench(&args, &socket, pid, global, on);
    let _ = daemon.kill();
    let _ = daemon.wait();
    result
}

fn bench(
    args: &BenchDaemonArgs,
    socket: &std::path::Path,
    pid: u32,
    global: &Global,
    on: &str,
) -> anyhow::Result<()> {
    let rss_start = proc_field(pid, "VmRSS:").unwrap_or(0);
    let progress = Progress::new("bench-daemon");
    let mut rows = Vec::new();
    // Silver min frequency: third-party, snapped to the table.
    let pair = [(0x44008100u32, 1958400i64)];
    for &n in &args.clients {
        let per_client = (args.operations / n.max(1)).max(1);
        progress.update(0, Some(args.clients.len() as u64), &format!("{n} clients"));
        let start = Instant::now();
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let socket = socket.to_path_buf();
                let interval = Duration::from_micros(args.interval_us);
                let ping = args.ping;
                std::thread::spawn(move || -> anyhow::Result<Vec<f64>> {
                    let mut c = Client::connect(&socket)?;
                    let mut lat = Vec::with_capacity(per_client);
                    let begin = Instant::now();
                    for i in 0..per_client {
                        if !interval.is_zero() {
                            let due = begin + interval * i as u32;
                            let now = Instant::now();
                            if due > now {
                                std::thread::sleep(due - now);
                            }
                        }
                        let t = Instant::now();
                        if ping {
                            c.ping()?;
                            lat.push(t.elapsed().as_secs_f64() * 1e6);
                            continue;
                        }
                        let h = c.acquire(0, 0, Priority::ThirdPartyLow, &pair)?;
                        lat.push(t.elapsed().as_secs_f64() * 1e6);
                        c.release(h)?;
                    }
                    Ok(lat)
                })
            })
            .collect();
        let mut all = Vec::with_capacity(per_client * n);
        for t in threads {
            all.extend(
                t.join()
                    .map_err(|_| anyhow::anyhow!("client thread panicked"))??,
            );
        }
        let secs = start.elapsed().as_secs_f64();
        all.sort_by(|a, b| a.total_cmp(b));
        rows.push(Row {
            clients: n,
            interval_us: args.interval_us,
            operations: all.len(),
            p50_us: percentile(&all, 0.50),
            p90_us: percentile(&all, 0.90),
            p99_us: percentile(&all, 0.99),
            max_us: all.last().copied().unwrap_or(0.0),
            acquire_release_per_s: all.len() as f64 / secs,
        });
    }
    let rss_after = proc_field(pid, "VmRSS:").unwrap_or(0);
    let split = rss_split(pid);
    let pss = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        });
    let idle_cpu = if args.idle_secs > 0 {
        progress.update(0, None, &format!("idle for {} s", args.idle_secs));
        let before = cpu_ticks(pid);
        std::thread::sleep(Duration::from_secs(args.idle_secs));
        before.zip(cpu_ticks(pid)).map(|(a, b)| b - a)
    } else {
        None
    };
    progress.finish();
    let report = Report {
        board: args.sim.clone(),
        tree_on: on.to_string(),
        rows,
        rss_kb_idle_start: rss_start,
        rss_kb_after_load: rss_after,
        rss_after_load_split: split,
        pss_kb_after_load: pss,
        idle_secs: args.idle_secs,
        idle_cpu_ticks: idle_cpu,
        clock_ticks_per_s: rustix::param::clock_ticks_per_second(),
    };
    if global.json {
        return print_json(&report);
    }
    let mut t = Table::new(&[
        "CLIENTS",
        "OPS",
        "P50_US",
        "P90_US",
        "P99_US",
        "MAX_US",
        "ACQ+REL/S",
    ]);
    for r in &report.rows {
        t.row(vec![
            r.clients.to_string(),
            r.operations.to_string(),
            format!("{:.1}", r.p50_us),
            format!("{:.1}", r.p90_us),
            format!("{:.1}", r.p99_us),
            format!("{:.1}", r.max_us),
            format!("{:.0}", r.acquire_release_per_s),
        ]);
    }
    let what = if args.ping {
        "PING -> PONG (no node written)"
    } else {
        "client acquire call -> node written -> reply"
    };
    println!(
        "round trip: {what} (daemon on simulated {}, tree on {on})",
        report.board
    );
    t.print()?;
    println!(
        "daemon RSS: {} kB at start, {} kB after the load (VmRSS)",
        report.rss_kb_idle_start, report.rss_kb_after_load
    );
    if let Some(p) = report.pss_kb_after_load {
        println!("  PSS after the load: {p} kB (shared library pages divided among the processes using them)");
    }
    if let Some(s) = &report.rss_after_load_split {
        println!(
            "  after the load: {} kB the lever executable's pages, {} kB shared libraries, {} kB anonymous (heap, stacks)",
            s.executable_kb, s.libraries_kb, s.anonymous_kb
        );
    }
    match report.idle_cpu_ticks {
        Some(t) => println!(
            "daemon CPU while idle for {} s: {} clock ticks ({:.0} ms)",
            report.idle_secs,
            t,
            t as f64 * 1000.0 / report.clock_ticks_per_s as f64
        ),
        None => println!("idle CPU check skipped"),
    }
    Ok(())
}
