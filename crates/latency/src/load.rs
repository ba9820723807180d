//! Background load during a measurement (`--load SPEC`): started before
//! the measuring threads, stopped after them, described in the report.
//!
//! Built in (no stress-ng needed on the board), as threads of this
//! process at SCHED_OTHER:
//!
//! - `cpu:N[:PCT][@CPUS]` — N workers busy PCT % (default 100) of every
//!   10 ms, like `stress-ng --cpu N --cpu-load PCT`, pinned round-robin to
//!   CPUS when given;
//! - `mem:SIZE` — one worker writing over SIZE bytes (`64M`) again and
//!   again (memory bandwidth and cache pressure);
//! - `io:N` — N workers writing 1 MiB and `fsync`ing it, in a temporary
//!   file removed afterwards;
//! - `msg:N` — N pairs of threads passing a byte back and forth over a
//!   socket pair, hackbench-style wake-ups and context switches.
//!
//! External: `stress-ng:ARGS` runs `stress-ng ARGS`; `cmd:COMMAND` (or any
//! other text) runs `sh -c COMMAND`. Each runs in a process group of its
//! own, which gets SIGTERM when the measurement ends (SIGKILL two seconds
//! later if still there); a command that exits at once is an error, before
//! anything is measured.

use crate::error::LatencyError;
use serde::Serialize;
use std::io::{Read, Write};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One `--load`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum LoadSpec {
    /// `cpu:N[:PCT][@CPUS]`.
    Cpu {
        /// Workers.
        workers: usize,
        /// Busy share of each 10 ms, %.
        percent: u32,
        /// Where they run (round-robin); empty = anywhere.
        cpus: Vec<u32>,
    },
    /// `mem:SIZE`.
    Mem {
        /// Bytes written over and over.
        bytes: u64,
    },
    /// `io:N`.
    Io {
        /// Workers.
        workers: usize,
    },
    /// `msg:N`.
    Msg {
        /// Thread pairs.
        pairs: usize,
    },
    /// `stress-ng:ARGS` or `cmd:COMMAND`: argv of an external program.
    Command {
        /// The program and its arguments.
        argv: Vec<String>,
    },
}

fn bad(spec: &str, expected: &'static str) -> LatencyError {
    LatencyError::BadOption {
        option: "--load",
        value: spec.to_string(),
        expected,
    }
}

fn count(spec: &str, text: &str) -> Result<usize, LatencyError> {
    match lever_text::parse_int(text).and_then(|n| usize::try_from(n).ok()) {
        Some(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(bad(spec, "a count from 1 to 1024, e.g. cpu:2, io:1, msg:4")),
    }
}

impl LoadSpec {
    /// Parse one `--load` value.
    pub fn parse(spec: &str) -> Result<LoadSpec, LatencyError> {
        let (kind, rest) = spec.split_once(':').unwrap_or(("cmd", spec));
        Ok(match kind {
            "cpu" => {
                let (main, cpus) = match rest.split_once('@') {
                    Some((m, c)) => (m, crate::config::parse_cpu_list("--load", c)?),
                    None => (rest, Vec::new()),
                };
                let (n, pct) = main.split_once(':').unwrap_or((main, "100"));
                let percent = lever_text::parse_int(pct.trim_end_matches('%'))
                    .and_then(|p| u32::try_from(p).ok())
                    .filter(|p| (1..=100).contains(p))
                    .ok_or_else(|| bad(spec, "cpu:N[:PCT][@CPUS] with PCT from 1 to 100"))?;
                LoadSpec::Cpu {
                    workers: count(spec, n)?,
                    percent,
                    cpus,
                }
            }
            "mem" => LoadSpec::Mem {
                bytes: lever_text::parse_size(rest, 1)
                    .ok()
                    .filter(|b| *b >= 4096)
                    .ok_or_else(|| bad(spec, "mem:SIZE of at least 4K, e.g. mem:64M"))?,
            },
            "io" => LoadSpec::Io {
                workers: count(spec, rest)?,
            },
            "msg" => LoadSpec::Msg {
                pairs: count(spec, rest)?,
            },
            "stress-ng" => LoadSpec::Command {
                argv: std::iter::once("stress-ng".to_string())
                    .chain(rest.split_whitespace().map(String::from))
                    .collect(),
            },
            _ => {
                let command = if kind == "cmd" { rest } else { spec };
                if command.trim().is_empty() {
                    return Err(bad(
                        spec,
                        "cpu:N, mem:SIZE, io:N, msg:N, stress-ng:ARGS or a command",
                    ));
                }
                LoadSpec::Command {
                    argv: vec!["sh".into(), "-c".into(), command.to_string()],
                }
            }
        })
    }

    /// What the report says about it.
    pub fn describe(&self) -> String {
        match self {
            LoadSpec::Cpu {
                workers,
                percent,
                cpus,
            } => format!(
                "cpu: {workers} worker(s) busy {percent}% of every 10 ms{}",
                if cpus.is_empty() {
                    String::new()
                } else {
                    format!(" on CPU {}", lever_kernel::format_cpu_list(cpus))
                }
            ),
            LoadSpec::Mem { bytes } => format!("mem: writing over {} KiB", bytes / 1024),
            LoadSpec::Io { workers } => format!("io: {workers} worker(s) writing 1 MiB + fsync"),
            LoadSpec::Msg { pairs } => format!("msg: {pairs} thread pair(s) ping-ponging a byte"),
            LoadSpec::Command { argv } if argv.first().is_some_and(|a| a == "sh") => {
                format!(
                    "command: sh -c {:?}",
                    argv.last().map_or("", |s| s.as_str())
                )
            }
            LoadSpec::Command { argv } => format!("command: {}", argv.join(" ")),
        }
    }
}

/// Loads running; dropping this stops them.
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    children: Vec<Child>,
    temp: Option<tempfile::TempDir>,
    /// One line per load, for the report.
    pub descriptions: Vec<String>,
}

/// A thread that cannot be started is an error naming the load.
fn spawn(
    spec: &LoadSpec,
    name: &str,
    f: impl FnOnce() + Send + 'static,
) -> Result<std::thread::JoinHandle<()>, LatencyError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|source| LatencyError::Syscall {
            op: format!("start load thread for {}", spec.describe()),
            source,
        })
}

fn cpu_worker(stop: &AtomicBool, percent: u32, cpu: Option<u32>) {
    if let Some(c) = cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(c as usize);
        let _ = rustix::thread::sched_setaffinity(None, &set);
    }
    let slice = Duration::from_millis(10);
    let busy = slice * percent / 100;
    let mut x = 0u64;
    while !stop.load(Relaxed) {
        let t = Instant::now();
        while t.elapsed() < busy {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        if let Some(rest) = slice.checked_sub(t.elapsed()).filter(|d| !d.is_zero()) {
            std::thread::sleep(rest);
        }
    }
}

impl Load {
    /// Start every load.
    pub fn start(specs: &[LoadSpec]) -> Result<Load, LatencyError> {
        let mut load = Load {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            children: Vec::new(),
            temp: None,
            descriptions: Vec::new(),
        };
        // On an error below, drop stops what was started.
        for spec in specs {
            load.start_one(spec)?;
            load.descriptions.push(spec.describe());
        }
        if !load.children.is_empty() {
            // A command that fails (not installed, bad arguments) does so
            // at once: catch it before measuring, not after.
            std::thread::sleep(Duration::from_millis(200));
            for (child, spec) in load.children.iter_mut().zip(
                specs
                    .iter()
                    .filter(|s| matches!(s, LoadSpec::Command { .. })),
            ) {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(LatencyError::Load {
                        load: spec.describe(),
                        why: format!("exited at once with {status}"),
                    });
                }
            }
        }
        Ok(load)
    }

    fn start_one(&mut self, spec: &LoadSpec) -> Result<(), LatencyError> {
        let stop = Arc::clone(&self.stop);
        match spec {
            LoadSpec::Cpu {
                workers,
                percent,
                cpus,
            } => {
                for i in 0..*workers {
                    let stop = Arc::clone(&stop);
                    let (pct, cpu) = (*percent, (!cpus.is_empty()).then(|| cpus[i % cpus.len()]));
                    let h = spawn(spec, &format!("lever-load-cpu{i}"), move || {
                        cpu_worker(&stop, pct, cpu)
                    })?;
                    self.threads.push(h);
                }
            }
            LoadSpec::Mem { bytes } => {
                let len = usize::try_from(*bytes).unwrap_or(usize::MAX);
                let h = spawn(spec, "lever-load-mem", move || {
                    let mut buf = vec![0u8; len];
                    let mut v = 0u8;
                    while !stop.load(Relaxed) {
                        v = v.wrapping_add(1);
                        for chunk in buf.chunks_mut(1 << 20) {
                            chunk.fill(v);
                            std::hint::black_box(&chunk);
                            if stop.load(Relaxed) {
                                break;
                            }
                        }
                    }
                })?;
                self.threads.push(h);
            }
            LoadSpec::Io { workers } => {
                let dir = match &self.temp {
                    Some(d) => d.path().to_path_buf(),
                    None => {
                        let d = tempfile::tempdir().map_err(|source| LatencyError::File {
                            path: std::env::temp_dir(),
                            source,
                        })?;
                        let p = d.path().to_path_buf();
                        self.temp = Some(d);
                        p
                    }
                };
                for i in 0..*workers {
                    let stop = Arc::clone(&stop);
                    let path = dir.join(format!("io{i}"));
                    let h = spawn(spec, &format!("lever-load-io{i}"), move || {
                        let block = vec![0x5au8; 1 << 20];
                        while !stop.load(Relaxed) {
                            let Ok(mut f) = std::fs::File::create(&path) else {
                                return;
                            };
                            if f.write_all(&block).and_then(|_| f.sync_all()).is_err() {
                                return;
                            }
                        }
                    })?;
                    self.threads.push(h);
                }
            }
            LoadSpec::Msg { pairs } => {
                for i in 0..*pairs {
                    let (mut a, mut b) =
                        std::os::unix::net::UnixStream::pair().map_err(|source| {
                            LatencyError::Syscall {
                                op: "socketpair for the msg load".into(),
                                source,
                            }
                        })?;
                    // The timeout lets the blocked side see `stop`.
                    for s in [&a, &b] {
                        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
                    }
                    let stop_b = Arc::clone(&stop);
                    let ping = {
                        let stop = Arc::clone(&stop);
                        spawn(spec, &format!("lever-load-msg{i}a"), move || {
                            let mut byte = [0u8; 1];
                            while !stop.load(Relaxed) {
                                if a.write_all(&byte).is_err() {
                                    return;
                                }
                                let _ = a.read(&mut byte);
                            }
                        })?
                    };
                    self.threads.push(ping);
                    let pong = spawn(spec, &format!("lever-load-msg{i}b"), move || {
                        let mut byte = [0u8; 1];
                        while !stop_b.load(Relaxed) {
                            if let Ok(1) = b.read(&mut byte) {
                                if b.write_all(&byte).is_err() {
                                    return;
                                }
                            }
                        }
                    })?;
                    self.threads.push(pong);
                }
            }
            LoadSpec::Command { argv } => {
                use std::os::unix::process::CommandExt;
                let cannot_start = |e| LatencyError::Load {
                    load: spec.describe(),
                    why: format!("cannot start {}: {e}", argv[0]),
                };
                // Looked up first: under qemu-user a failed exec is not
                // reported to `spawn` (lever_syscalls::find_program).
                lever_syscalls::find_program(argv[0].as_ref()).map_err(cannot_start)?;
                let child = Command::new(&argv[0])
                    .args(&argv[1..])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .process_group(0)
                    .spawn()
                    .map_err(cannot_start)?;
                self.children.push(child);
            }
        }
        Ok(())
    }

    /// Stop every load and wait for it.
    pub fn stop(mut self) {
        self.stop_all();
    }

    fn stop_all(&mut self) {
        self.stop.store(true, Relaxed);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        for mut child in self.children.drain(..) {
            let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) else {
                continue;
            };
            // The whole group: `sh -c` and stress-ng leave workers behind.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
            let until = Instant::now() + Duration::from_secs(2);
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            let _ = child.wait();
        }
        self.temp = None;
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_describe() {
        assert_eq!(
            LoadSpec::parse("cpu:2:50@0-1").unwrap(),
            LoadSpec::Cpu {
                workers: 2,
                percent: 50,
                cpus: vec![0, 1]
            }
        );
        assert_eq!(
            LoadSpec::parse("cpu:3").unwrap().describe(),
            "cpu: 3 worker(s) busy 100% of every 10 ms"
        );
        assert_eq!(
            LoadSpec::parse("mem:64M").unwrap(),
            LoadSpec::Mem { bytes: 64 << 20 }
        );
        assert_eq!(
            LoadSpec::parse("stress-ng:--cpu 2 --cpu-load 50").unwrap(),
            LoadSpec::Command {
                argv: ["stress-ng", "--cpu", "2", "--cpu-load", "50"]
                    .map(String::from)
                    .to_vec()
            }
        );
        assert_eq!(
            LoadSpec::parse("hackbench -l 100").unwrap().describe(),
            "command: sh -c \"hackbench -l 100\""
        );
        for bad in [
            "cpu:0",
            "cpu:2:0",
            "cpu:2:101",
            "mem:1",
            "io:x",
            "msg:",
            "cpu:1@9-x",
            "cmd:",
        ] {
            assert!(LoadSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn built_in_loads_run_and_stop() {
        let specs: Vec<LoadSpec> = ["cpu:1:20", "mem:1M", "io:1", "msg:1"]
            .iter()
            .map(|s| LoadSpec::parse(s).unwrap())
            .collect();
        let load = Load::start(&specs).unwrap();
        assert_eq!(load.descriptions.len(), 4);
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        load.stop();
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_command_that_fails_at_once_is_an_error() {
        let e = Load::start(&[LoadSpec::parse("cmd:exit 3").unwrap()])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("exited at once"), "{e}");
        let e = Load::start(&[LoadSpec::Command {
            argv: vec!["/nonexistent/stressor".into()],
        }])
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("cannot start /nonexistent/stressor"), "{e}");
    }

    #[test]
    fn a_command_is_stopped_with_its_group() {
        let load = Load::start(&[LoadSpec::parse("sleep 30 & sleep 30").unwrap()]).unwrap();
        let t = Instant::now();
        load.stop();
        assert!(t.elapsed() < Duration::from_secs(3));
    }
}
