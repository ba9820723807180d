//! `lever bench-daemon`: round-trip latency and throughput of a real daemon
//! on a simulated board, its memory, and its CPU use while idle.
//!
//! It starts `lever daemon --sim BOARD --quiet` in a temporary state
//! directory, then for each client count runs that many client threads,
//! each with its own connection, doing acquire + release in a loop. Each
//! client asks a newest-wins third-party resource for a value no other
//! client asks of it, so every acquire and every release changes a node:
//! the acquire latency, from the client call to the reply the daemon sends
//! once the node is written and read back, is "client call to node
//! written". Idle CPU is the daemon's utime + stime (from `/proc/PID/stat`)
//! over an idle window.
//!
//! Next to each Lever row it measures the machine's floor: the same client
//! threads against a bare epoll echo loop in this process, which does
//! nothing but send each message back. What Lever adds is the difference.

use crate::args::Global;
use crate::cmd::util::Progress;
use crate::render::{print_json, Table};
use anyhow::{bail, Context};
use clap::Args;
use lever_client::{Client, Priority};
use lever_engine::{Aggregation, Permission, ResourceKind};
use lever_kernel::KernelFs;
use rustix::fd::OwnedFd;
use serde::Serialize;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
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
    /// Measure PING round trips instead of acquire + release: Lever's event
    /// loop and protocol with no node written.
    #[arg(long)]
    pub ping: bool,
    /// Skip the echo-floor rows.
    #[arg(long)]
    pub no_floor: bool,
    /// Internal: be the echo-floor process, serving on this socket until
    /// stdin closes.
    #[arg(long, value_name = "PATH", hide = true)]
    pub serve_echo: Option<PathBuf>,
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
    /// `acquire` (client call -> node written -> reply), `ping` or `floor`.
    what: &'static str,
    clients: usize,
    interval_us: u64,
    operations: usize,
    p50_us: f64,
    p90_us: f64,
    p99_us: f64,
    max_us: f64,
    /// Acquire + release pairs (or round trips, for ping and floor) per s.
    acquire_release_per_s: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    board: String,
    tree_on: String,
    /// The resources the clients acquire (client i uses entry i % len).
    workload: Vec<String>,
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
    if let Some(path) = &args.serve_echo {
        let listener = UnixListener::bind(path)?;
        let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
        return Ok(echo_floor(listener, stdin)?);
    }
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
    let mut daemon = Command::new(&exe)
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
    let result = workload(&root).and_then(|w| {
        let floor = dir.path().join("echo.sock");
        bench(&args, &socket, (&exe, &floor), &w, pid, global, on)
    });
    let _ = daemon.kill();
    let _ = daemon.wait();
    result
}

/// One client's request: a newest-wins resource and a value of its own.
#[derive(Debug, Clone)]
struct Ask {
    opcode: u32,
    name: String,
    values: Vec<i64>,
}

/// The resources the clients acquire: every third-party resource with the
/// newest-wins policy, where each acquire and each release changes the
/// node. Client `i` asks `asks[i % len]` for `values[i / len]`, a value no
/// other client asks of that resource and not the node's original.
fn workload(root: &Path) -> anyhow::Result<Vec<Ask>> {
    let fs = KernelFs::new(root);
    let target = lever_targets::resolve(None, &fs)?;
    let asks: Vec<Ask> = target
        .resources
        .iter()
        .filter(|r| {
            r.aggregation == Aggregation::Newest
                && r.permission == Permission::ThirdParty
                && r.kind == ResourceKind::Plain
        })
        .filter_map(|r| {
            let original = lever_tunables::read_current(&fs, r).ok()?.level?;
            let values = (r.low..=r.high)
                .filter(|&v| v != original)
                .take(MAX_CLIENTS_PER_RESOURCE)
                .collect();
            Some(Ask {
                opcode: r.opcode.0,
                name: r.name.clone(),
                values,
            })
        })
        .collect();
    if asks.is_empty() {
        bail!(
            "target {} has no third-party resource with the newest policy to benchmark with",
            target.name
        );
    }
    Ok(asks)
}

/// Distinct values taken per resource (enough for 256 clients over three
/// resources).
const MAX_CLIENTS_PER_RESOURCE: usize = 128;

/// Run `n` client threads, each doing `per_client` steps; a step returns its
/// measured latency. `connect(i)` makes client `i`'s step function.
fn measure<F, S>(
    n: usize,
    per_client: usize,
    interval: Duration,
    connect: F,
) -> anyhow::Result<(Vec<f64>, f64)>
where
    F: Fn(usize) -> anyhow::Result<S> + Sync,
    S: FnMut() -> anyhow::Result<Duration>,
{
    let ready = std::sync::Barrier::new(n + 1);
    let mut start = Instant::now();
    let per_thread = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let connect = &connect;
                let ready = &ready;
                scope.spawn(move || -> anyhow::Result<Vec<f64>> {
                    let step = connect(i);
                    ready.wait();
                    let mut step = step?;
                    let mut lat = Vec::with_capacity(per_client);
                    // Paced clients are spread evenly over the interval, so
                    // requests arrive one every interval/n, not in bursts
                    // of n.
                    let begin = Instant::now() + interval * i as u32 / n as u32;
                    for k in 0..per_client {
                        if !interval.is_zero() {
                            let due = begin + interval * k as u32;
                            let now = Instant::now();
                            if due > now {
                                std::thread::sleep(due - now);
                            }
                        }
                        lat.push(step()?.as_secs_f64() * 1e6);
                    }
                    Ok(lat)
                })
            })
            .collect();
        // Every client is connected: the clock starts now.
        ready.wait();
        start = Instant::now();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .map_err(|_| anyhow::anyhow!("client thread panicked"))?
            })
            .collect::<anyhow::Result<Vec<Vec<f64>>>>()
    })?;
    let secs = start.elapsed().as_secs_f64();
    let mut all: Vec<f64> = per_thread.into_iter().flatten().collect();
    all.sort_by(|a, b| a.total_cmp(b));
    Ok((all, secs))
}

/// The machine's floor: one thread, one epoll set, every message sent back
/// as it came, nothing else. Runs until `stop` becomes readable (stdin at
/// EOF).
fn echo_floor(listener: UnixListener, stop: OwnedFd) -> std::io::Result<()> {
    use rustix::event::epoll;
    listener.set_nonblocking(true)?;
    let ep = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    let ev = epoll::EventFlags::IN;
    epoll::add(&ep, &listener, epoll::EventData::new_u64(0), ev)?;
    epoll::add(&ep, &stop, epoll::EventData::new_u64(1), ev)?;
    let mut conns: Vec<Option<UnixStream>> = Vec::new();
    let mut events = Vec::with_capacity(256);
    let mut buf = [0u8; 4096];
    loop {
        events.clear();
        match epoll::wait(&ep, rustix::buffer::spare_capacity(&mut events), None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        for e in events.iter() {
            match e.data.u64() {
                0 => {
                    while let Ok((c, _)) = listener.accept() {
                        c.set_nonblocking(true)?;
                        let key = conns.len() as u64 + 2;
                        epoll::add(&ep, &c, epoll::EventData::new_u64(key), ev)?;
                        conns.push(Some(c));
                    }
                }
                1 => return Ok(()),
                k => {
                    let slot = &mut conns[(k - 2) as usize];
                    let Some(c) = slot else { continue };
                    match c.read(&mut buf) {
                        Ok(0) => *slot = None,
                        Ok(n) => {
                            if c.write_all(&buf[..n]).is_err() {
                                *slot = None;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(_) => *slot = None,
                    }
                }
            }
        }
    }
}

fn row(what: &'static str, n: usize, interval_us: u64, lat: &[f64], secs: f64) -> Row {
    Row {
        what,
        clients: n,
        interval_us,
        operations: lat.len(),
        p50_us: percentile(lat, 0.50),
        p90_us: percentile(lat, 0.90),
        p99_us: percentile(lat, 0.99),
        max_us: lat.last().copied().unwrap_or(0.0),
        acquire_release_per_s: lat.len() as f64 / secs,
    }
}

fn bench(
    args: &BenchDaemonArgs,
    socket: &Path,
    (exe, floor_socket): (&Path, &Path),
    asks: &[Ask],
    pid: u32,
    global: &Global,
    on: &str,
) -> anyhow::Result<()> {
    let rss_start = proc_field(pid, "VmRSS:").unwrap_or(0);
    let progress = Progress::new("bench-daemon");
    let mut rows = Vec::new();
    // The floor runs in a process of its own, as the daemon does: wake-ups
    // between threads of one process are cheaper than between processes.
    let mut floor = if args.no_floor {
        None
    } else {
        let child = Command::new(exe)
            .arg("bench-daemon")
            .arg("--serve-echo")
            .arg(floor_socket)
            .stdin(Stdio::piped())
            .spawn()
            .context("starting the echo-floor process")?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while UnixStream::connect(floor_socket).is_err() {
            if Instant::now() > deadline {
                bail!("the echo-floor process did not start listening");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Some(child)
    };
    let interval = Duration::from_micros(args.interval_us);
    // Client i asks asks[i % len] for values[i / len].
    let max_clients = asks.len() * asks.iter().map(|a| a.values.len()).min().unwrap_or(0);
    for (done, &n) in args.clients.iter().enumerate() {
        if !args.ping && n > max_clients {
            bail!("at most {max_clients} clients: the workload has that many distinct requests");
        }
        let per_client = (args.operations / n.max(1)).max(1);
        progress.update(
            done as u64,
            Some(args.clients.len() as u64),
            &format!("{n} clients"),
        );
        let (what, (lat, secs)) = if args.ping {
            let r = measure(n, per_client, interval, |_| {
                let mut c = Client::connect(socket)?;
                Ok(move || {
                    let t = Instant::now();
                    c.ping()?;
                    Ok(t.elapsed())
                })
            })?;
            ("ping", r)
        } else {
            let r = measure(n, per_client, interval, |i| {
                let mut c = Client::connect(socket)?;
                let ask = &asks[i % asks.len()];
                let pair = [(ask.opcode, ask.values[i / asks.len()])];
                Ok(move || {
                    let t = Instant::now();
                    let h = c.acquire(
                        None,
                        lever_client::Lease::UntilReleased,
                        Priority::ThirdPartyLow,
                        &pair,
                    )?;
                    let took = t.elapsed();
                    c.release(h)?;
                    Ok(took)
                })
            })?;
            ("acquire", r)
        };
        rows.push(row(what, n, args.interval_us, &lat, secs));
        if floor.is_some() {
            let ping = args.ping;
            let (lat, secs) = measure(n, per_client, interval, |_| {
                let mut c = UnixStream::connect(floor_socket)?;
                let mut msg = [0u8; 32];
                // The same pattern as the Lever rows: two round trips a
                // step (acquire, release), the first one timed; one for ping.
                let trips = if ping { 1 } else { 2 };
                Ok(move || {
                    let t = Instant::now();
                    let mut took = Duration::ZERO;
                    for trip in 0..trips {
                        c.write_all(&msg)?;
                        c.read_exact(&mut msg)?;
                        if trip == 0 {
                            took = t.elapsed();
                        }
                    }
                    Ok(took)
                })
            })?;
            rows.push(row("floor", n, args.interval_us, &lat, secs));
        }
    }
    if let Some(mut child) = floor.take() {
        drop(child.stdin.take()); // EOF: the echo process returns
        child.wait()?;
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
        workload: asks
            .iter()
            .map(|a| format!("{} (0x{:08X})", a.name, a.opcode))
            .collect(),
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
        "WHAT",
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
            r.what.to_string(),
            r.clients.to_string(),
            r.operations.to_string(),
            format!("{:.1}", r.p50_us),
            format!("{:.1}", r.p90_us),
            format!("{:.1}", r.p99_us),
            format!("{:.1}", r.max_us),
            format!("{:.0}", r.acquire_release_per_s),
        ]);
    }
    if args.ping {
        println!("ping: PING -> PONG through Lever's loop, no node written");
    } else {
        println!(
            "acquire: client call -> node written and read back -> reply; every acquire and release changes a node ({})",
            report.workload.join(", ")
        );
    }
    if !args.no_floor {
        println!("floor: the same client threads and pattern against a bare epoll echo loop in a process of its own (32-byte messages, no work)");
    }
    println!(
        "daemon on simulated {}, tree on {on}; {}",
        report.board,
        if args.interval_us == 0 {
            "closed loop: each client sends its next request as soon as it has the reply"
                .to_string()
        } else {
            format!(
                "each client paced to one request every {} us",
                args.interval_us
            )
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_asks_a_value_that_changes_the_node() {
        for board in ["qcs6490", "qcs5430-fp1", "am437x"] {
            let dir = tempfile::tempdir().unwrap();
            lever_sim::create(board, dir.path()).unwrap();
            let asks = workload(dir.path()).unwrap();
            assert!(!asks.is_empty(), "{board}");
            let fs = KernelFs::new(dir.path());
            let target = lever_targets::resolve(None, &fs).unwrap();
            for a in &asks {
                let spec = target
                    .resources
                    .iter()
                    .find(|r| r.opcode.0 == a.opcode)
                    .unwrap();
                let original = lever_tunables::read_current(&fs, spec)
                    .unwrap()
                    .level
                    .unwrap();
                assert_eq!(spec.aggregation, Aggregation::Newest);
                assert!(!a.values.contains(&original), "{board} {}", a.name);
                let mut v = a.values.clone();
                v.dedup();
                assert_eq!(v.len(), a.values.len());
                assert!(a.values.iter().all(|x| (spec.low..=spec.high).contains(x)));
            }
            // Enough distinct requests for the default 256 clients.
            let depth = asks.iter().map(|a| a.values.len()).min().unwrap();
            assert!(asks.len() * depth >= 256, "{board}");
        }
    }
}
