//! The daemon benchmark behind `lever bench-daemon`: round-trip latency and
//! throughput of a real daemon on a simulated board, its memory, and its
//! CPU use while idle.
//!
//! [`run`] creates the board in a temporary directory (on tmpfs when there
//! is one, as sysfs lives in memory), starts `lever daemon --quiet` on it
//! from a private copy of the `lever` executable, then for each client count
//! runs that many client threads, each with its own connection, doing
//! acquire + release in a loop. Each client asks a newest-wins third-party
//! resource for a value no other client asks of it ([`workload`]), so every
//! acquire and every release changes a node: the acquire latency, from the
//! client call to the reply the daemon sends once the node is written and
//! read back, is "client call to node written". Memory comes from
//! `/proc/<pid>/status`, `smaps` and `smaps_rollup`, idle CPU from
//! `/proc/<pid>/stat` over an idle window (all through
//! [`lever_measure::process`]).
//!
//! Next to each Lever row it measures the machine's floor: the same client
//! threads against a bare epoll echo loop ([`echo::serve`]) in a process of
//! its own (`lever bench-daemon --serve-echo PATH`). What Lever adds is the
//! difference.
//!
//! ```no_run
//! use lever_bench_daemon::{run, Options};
//! let options = Options { clients: vec![1, 16], operations: 2000, ..Options::default() };
//! let lever = std::path::Path::new("/usr/bin/lever");
//! let report = run(lever, &options, &mut |_done, _total, _what| {}).unwrap();
//! for row in &report.rows {
//!     println!("{} x{}: p50 {:.1} us", row.what, row.clients, row.p50_us);
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod echo;
pub mod load;
pub mod workload;

pub use load::Row;
pub use workload::Ask;

use lever_client::{Client, Lease, Priority};
use lever_kernel::KernelFs;
use lever_measure::process::{self, Pid, RssSplit};
use serde::Serialize;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// Client counts to run.
    pub clients: Vec<usize>,
    /// Acquire + release pairs per client count (split over the clients).
    pub operations: usize,
    /// Pace each client: one acquire every `interval` (zero = back to back,
    /// which saturates the CPUs and measures queueing as much as Lever).
    pub interval: Duration,
    /// Measure PING round trips instead of acquire + release.
    pub ping: bool,
    /// Measure the echo floor beside each row.
    pub floor: bool,
    /// Idle window for the idle-CPU check (zero skips it).
    pub idle: Duration,
    /// The daemon's busy-poll window (`lever daemon --busy-poll-us`).
    pub busy_poll: Duration,
    /// Simulated board to run on.
    pub sim: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clients: vec![1, 16, 256],
            operations: 20_000,
            interval: Duration::ZERO,
            ping: false,
            floor: true,
            idle: Duration::from_secs(10),
            busy_poll: Duration::ZERO,
            sim: "qcs6490".into(),
        }
    }
}

/// What the benchmark found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The simulated board.
    pub board: String,
    /// Where its tree lived (`tmpfs (/dev/shm)` or the disk).
    pub tree_on: String,
    /// PING rows instead of acquire rows.
    pub ping: bool,
    /// Pacing of each client, µs (0 = closed loop).
    pub interval_us: u64,
    /// The resources the clients acquire (client i uses entry i % len).
    pub workload: Vec<String>,
    /// One row per client count (and its floor).
    pub rows: Vec<Row>,
    /// Daemon VmRSS before the load, kB.
    pub rss_kb_idle_start: u64,
    /// Daemon VmRSS after the load, kB.
    pub rss_kb_after_load: u64,
    /// That RSS by what backs it.
    pub rss_after_load_split: Option<RssSplit>,
    /// Daemon PSS after the load, kB.
    pub pss_kb_after_load: Option<u64>,
    /// Length of the idle window, s.
    pub idle_secs: u64,
    /// Daemon CPU time over the idle window, clock ticks.
    pub idle_cpu_ticks: Option<u64>,
    /// Clock ticks per second.
    pub clock_ticks_per_s: u64,
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A step of the set-up failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The simulated board could not be created.
    #[error("cannot create the simulated board: {0}")]
    Sim(#[from] lever_sim::SimError),
    /// Its target could not be loaded.
    #[error("{0}")]
    Target(#[from] lever_targets::TargetError),
    /// The workload cannot be built or is too small.
    #[error("{0}")]
    Workload(String),
    /// The daemon or the echo process did not come up.
    #[error("{0}")]
    Start(String),
    /// A client call failed.
    #[error("{0}")]
    Client(#[from] lever_client::ClientError),
}

impl From<std::io::Error> for BenchError {
    fn from(source: std::io::Error) -> BenchError {
        BenchError::Io {
            what: "client".into(),
            source,
        }
    }
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        what: what.to_string(),
        source,
    }
}

/// Called as the run advances: (done, total if known, what).
pub type Progress<'a> = dyn FnMut(u64, Option<u64>, &str) + 'a;

/// Kill a child when dropped, also on an early return.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Run the benchmark with the `lever` executable at `lever`.
pub fn run(lever: &Path, options: &Options, progress: &mut Progress) -> Result<Report, BenchError> {
    // The simulated tree stands in for sysfs, which lives in memory: put
    // it on tmpfs when there is one, so the figures measure Lever rather
    // than a disk file system.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .map_err(io("creating a temporary directory"))?;
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
    std::fs::copy(lever, &exe).map_err(io("copying the executable"))?;
    // The board is created beforehand, so the daemon's memory reflects
    // serving, not the one-time work of generating a simulated tree.
    let root = dir.path().join("sim");
    lever_sim::create(&options.sim, &root)?;
    let asks = workload::workload(&KernelFs::new(&root))?;
    let daemon = start_daemon(&exe, &root, dir.path(), &socket, options.busy_poll)?;
    let floor = dir.path().join("echo.sock");
    let mut report = bench(
        options,
        &socket,
        (&exe, &floor),
        &asks,
        daemon.0.id(),
        progress,
    )?;
    report.tree_on = on.to_string();
    Ok(report)
}

fn start_daemon(
    exe: &Path,
    root: &Path,
    state: &Path,
    socket: &Path,
    busy_poll: Duration,
) -> Result<Reaped, BenchError> {
    let mut child = Command::new(exe)
        .args(["daemon", "--quiet", "--max-requests", "100000", "--root"])
        .arg(root)
        .arg("--state-dir")
        .arg(state)
        .arg("--socket")
        .arg(socket)
        .arg("--busy-poll-us")
        .arg(busy_poll.as_micros().to_string())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io("starting the daemon"))?;
    let stderr = child.stderr.take();
    let daemon = Reaped(child);
    let mut err =
        BufReader::new(stderr.ok_or_else(|| BenchError::Start("no daemon stderr".into()))?);
    let mut line = String::new();
    while !line.contains("ready on") {
        line.clear();
        if err
            .read_line(&mut line)
            .map_err(io("reading the daemon's log"))?
            == 0
        {
            return Err(BenchError::Start(
                "daemon exited before it was ready".into(),
            ));
        }
    }
    // Pass the daemon's warnings on.
    std::thread::spawn(move || {
        let mut l = String::new();
        while err.read_line(&mut l).unwrap_or(0) > 0 {
            eprint!("{l}");
            l.clear();
        }
    });
    Ok(daemon)
}

/// The floor runs in a process of its own, as the daemon does: wake-ups
/// between threads of one process are cheaper than between processes.
fn start_floor(exe: &Path, socket: &Path) -> Result<Reaped, BenchError> {
    let child = Command::new(exe)
        .arg("bench-daemon")
        .arg("--serve-echo")
        .arg(socket)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(io("starting the echo-floor process"))?;
    let floor = Reaped(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(socket).is_err() {
        if Instant::now() > deadline {
            return Err(BenchError::Start(
                "the echo-floor process did not start listening".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(floor)
}

fn bench(
    options: &Options,
    socket: &Path,
    (exe, floor_socket): (&Path, &PathBuf),
    asks: &[Ask],
    pid: u32,
    progress: &mut Progress,
) -> Result<Report, BenchError> {
    // The daemon is a real process: read the real /proc.
    let proc_fs = KernelFs::system();
    let pid = Pid::Id(pid);
    let rss = |fs: &KernelFs| {
        process::status(fs, pid)
            .ok()
            .and_then(|s| s.vm_rss_kb)
            .unwrap_or(0)
    };
    let rss_start = rss(&proc_fs);
    let mut rows = Vec::new();
    let mut floor = if options.floor {
        Some(start_floor(exe, floor_socket)?)
    } else {
        None
    };
    let interval = options.interval;
    let interval_us = interval.as_micros() as u64;
    let max_clients = workload::max_clients(asks);
    for (done, &n) in options.clients.iter().enumerate() {
        if !options.ping && n > max_clients {
            return Err(BenchError::Workload(format!(
                "at most {max_clients} clients: the workload has that many distinct requests"
            )));
        }
        let per_client = (options.operations / n.max(1)).max(1);
        progress(
            done as u64,
            Some(options.clients.len() as u64),
            &format!("{n} clients"),
        );
        let (what, (lat, secs)) = if options.ping {
            let r = load::measure(n, per_client, interval, |_| {
                let mut c = Client::connect(socket)?;
                Ok(move || -> Result<Duration, BenchError> {
                    let t = Instant::now();
                    c.ping()?;
                    Ok(t.elapsed())
                })
            })?;
            ("ping", r)
        } else {
            let r = load::measure(n, per_client, interval, |i| {
                let mut c = Client::connect(socket)?;
                let ask = &asks[i % asks.len()];
                let pair = [(ask.opcode, ask.values[i / asks.len()])];
                Ok(move || -> Result<Duration, BenchError> {
                    let t = Instant::now();
                    let h =
                        c.acquire(None, Lease::UntilReleased, Priority::ThirdPartyLow, &pair)?;
                    let took = t.elapsed();
                    c.release(h)?;
                    Ok(took)
                })
            })?;
            ("acquire", r)
        };
        rows.push(Row::new(what, n, interval_us, &lat, secs));
        if floor.is_some() {
            let ping = options.ping;
            let (lat, secs) = load::measure(n, per_client, interval, |_| {
                let mut c = UnixStream::connect(floor_socket)?;
                let mut msg = [0u8; 32];
                // The same pattern as the Lever rows: two round trips a
                // step (acquire, release), the first one timed; one for ping.
                let trips = if ping { 1 } else { 2 };
                Ok(move || -> Result<Duration, BenchError> {
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
            rows.push(Row::new("floor", n, interval_us, &lat, secs));
        }
    }
    if let Some(mut child) = floor.take() {
        drop(child.0.stdin.take()); // EOF: the echo process returns
        child.0.wait().map_err(io("waiting for the echo process"))?;
    }
    let rss_after = rss(&proc_fs);
    let split = process::rss_split(&proc_fs, pid).ok();
    let pss = process::rollup(&proc_fs, pid).ok().map(|r| r.pss_kb);
    let idle_cpu = if options.idle.is_zero() {
        None
    } else {
        progress(0, None, &format!("idle for {} s", options.idle.as_secs()));
        let before = process::cpu_ticks(&proc_fs, pid).ok();
        std::thread::sleep(options.idle);
        let after = process::cpu_ticks(&proc_fs, pid).ok();
        before.zip(after).map(|(a, b)| b.total() - a.total())
    };
    Ok(Report {
        board: options.sim.clone(),
        tree_on: String::new(),
        ping: options.ping,
        interval_us,
        workload: asks
            .iter()
            .map(|a| format!("{} (0x{:08X})", a.name, a.opcode))
            .collect(),
        rows,
        rss_kb_idle_start: rss_start,
        rss_kb_after_load: rss_after,
        rss_after_load_split: split,
        pss_kb_after_load: pss,
        idle_secs: options.idle.as_secs(),
        idle_cpu_ticks: idle_cpu,
        clock_ticks_per_s: rustix::param::clock_ticks_per_second(),
    })
}
