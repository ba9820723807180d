//! Passes over the suite ([`crate::Options::passes`]), each in a process
//! of its own and with the two-ended tests on a CPU of their own.
//!
//! Most of what moves between two runs on a small or shared machine stays
//! put within one run: a process's placement, its heap, the scratch file
//! system's state. Two quiet `--quick --passes 2` runs made in one process
//! each still differed 20-45 % on many tests, and the drift between their
//! in-process passes saw little of it. So a run of several passes, made
//! through the `lever` binary's helper mode, starts a fresh process for
//! each (`lever bench __helper pass`, [`pass_main`]) and pins pass *k*'s
//! two-ended tests to the *k*-th CPU the run may use: the passes sample
//! what a rerun would change, and every run of the same options covers
//! the same placements in the same order.

use crate::catalog::{Env, TestDef};
use crate::stats::{Policy, Stop};
use crate::{io_err, runner, BenchError, Options};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One test's part of one pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassTest {
    /// The test.
    pub name: String,
    /// Its samples in this pass.
    pub samples: Vec<f64>,
    /// Why sampling stopped.
    pub stop: Option<Stop>,
    /// Iterations per sample.
    pub iterations: u64,
    /// Wall time, seconds.
    pub elapsed_s: f64,
    /// Why the test did not run.
    pub skipped: Option<String>,
    /// The CPU a two-ended test ran on with its peers.
    pub pinned_cpu: Option<usize>,
    /// The machine's speed just before the test: each probe's time, ns
    /// ([`crate::speed::Probes::time`]).
    #[serde(default)]
    pub speed_ns: Vec<f64>,
}

/// What a pass's process is asked to do (its stdin, JSON).
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    options: Options,
    /// [`Options::helper`], which the report does not keep.
    helper: Vec<OsString>,
    pass: usize,
    /// The CPU for the two-ended tests ([`peer_cpu`]).
    peer_cpu: Option<usize>,
    /// The tests, by name, in order: the child's catalog must give these.
    names: Vec<String>,
    /// Where the child writes its `Vec<PassTest>`.
    out: PathBuf,
}

/// The prefix of a progress line a pass's process prints on its stdout
/// before each test (other output there is not ours and is ignored).
const PROGRESS: &str = "lever-bench-progress\t";

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Pass `pass`'s CPU for two-ended tests: `--cpu N` when given, else the
/// pass-th of `allowed` (round robin), else none (unpinned).
pub fn peer_cpu(opts: &Options, allowed: &[usize], pass: usize) -> Option<usize> {
    opts.cpu
        .or_else(|| (!allowed.is_empty()).then(|| allowed[pass % allowed.len()]))
}

/// The host's L2 (CPU 0's second data or unified cache), KiB, which
/// sizes the `latency` probe.
pub fn l2_kb() -> Option<u64> {
    crate::host_caches_kb(&lever_kernel::KernelFs::system())
        .get(1)
        .copied()
}

/// Run one pass of `defs` in this process: pass `pass` of
/// `opts.passes`' share of the sampling policy, two-ended tests pinned to
/// `peer_cpu` with their peers. `progress(i, name)` before each test.
pub fn run_pass(
    opts: &Options,
    defs: &[TestDef],
    env: &Env,
    pass: usize,
    peer_cpu: Option<usize>,
    progress: &mut dyn FnMut(usize, &str),
) -> Vec<PassTest> {
    let policy: Policy = opts.policy.pass(pass, opts.passes.max(1));
    let probes = crate::speed::Probes::new(l2_kb());
    defs.iter()
        .enumerate()
        .map(|(i, def)| {
            progress(i, &def.name);
            let speed_ns = probes.time();
            let t0 = Instant::now();
            // Peers spawned by `make` inherit this thread's affinity.
            let pin = match (def.peers, opts.cpu, peer_cpu) {
                (true, None, Some(cpu)) => Pin::to(cpu),
                _ => None,
            };
            let outcome = (def.make)(env).and_then(|mut b| {
                runner::sample(b.as_mut(), def.metric, &policy, opts.sample_time)
            });
            let pinned_cpu = match pin {
                Some(p) => Some(p.release()),
                None if def.peers => opts.cpu,
                None => None,
            };
            let mut t = PassTest {
                name: def.name.clone(),
                samples: Vec::new(),
                stop: None,
                iterations: 0,
                elapsed_s: 0.0,
                skipped: None,
                pinned_cpu,
                speed_ns,
            };
            match outcome {
                Ok(s) => {
                    t.samples = s.samples;
                    t.stop = Some(s.stop);
                    t.iterations = s.iterations;
                }
                Err(e) => t.skipped = Some(e.to_string()),
            }
            t.elapsed_s = t0.elapsed().as_secs_f64();
            t
        })
        .collect()
}

/// Run pass `pass` of `defs` in a fresh process of the helper mode
/// (`helper pass`, [`pass_main`]); its progress is forwarded as
/// `progress(i, name)`.
pub fn run_pass_process(
    opts: &Options,
    helper: &[OsString],
    defs: &[TestDef],
    pass: usize,
    peer_cpu: Option<usize>,
    progress: &mut dyn FnMut(usize, &str),
) -> Result<Vec<PassTest>, BenchError> {
    let (program, args) = helper.split_first().ok_or(BenchError::NeedsHelper)?;
    let dir = tempfile::tempdir().map_err(io_err("create a scratch directory".into()))?;
    let out = dir.path().join("pass.json");
    let request = Request {
        options: opts.clone(),
        helper: helper.to_vec(),
        pass,
        peer_cpu,
        names: defs.iter().map(|d| d.name.clone()).collect(),
        out: out.clone(),
    };
    let what = format!("pass {} of {}", pass + 1, opts.passes);
    let mut child = Command::new(program)
        .args(args)
        .arg("pass")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(io_err(format!("start the process of {what}")))?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        let text = serde_json::to_vec(&request).expect("a request serializes");
        // A child that died at once shows in its status below.
        let _ = stdin.write_all(&text);
    }
    let stdout = child.stdout.take().expect("piped");
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some((i, name)) = line
            .strip_prefix(PROGRESS)
            .and_then(|rest| rest.split_once('\t'))
        {
            if let Ok(i) = i.parse() {
                progress(i, name);
            }
        }
    }
    let status = child
        .wait()
        .map_err(io_err(format!("wait for the process of {what}")))?;
    if !status.success() {
        return Err(BenchError::Broken(format!(
            "the process of {what} failed ({status})"
        )));
    }
    // Text, as every JSON Lever reads: one deserializer's code in the
    // board's binary, not one per input kind (docs/install.md "Size").
    let text =
        std::fs::read_to_string(&out).map_err(io_err(format!("read the result of {what}")))?;
    let tests: Vec<PassTest> = serde_json::from_str(&text)
        .map_err(|e| BenchError::Broken(format!("the result of {what}: {e}")))?;
    let got: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    let want: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    if got != want {
        return Err(BenchError::Broken(format!(
            "the process of {what} ran other tests than asked ({} of {})",
            got.len(),
            want.len()
        )));
    }
    Ok(tests)
}

/// The helper mode's `pass`: read a request on stdin, run that pass of
/// the catalog's tests it names, write the result where it says.
pub fn pass_main() -> Result<(), BenchError> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
        .map_err(io_err("read the pass request".into()))?;
    let req: Request = serde_json::from_str(&text)
        .map_err(|e| BenchError::Broken(format!("bad pass request: {e}")))?;
    let mut opts = req.options;
    opts.helper = Some(req.helper);
    let caches = crate::host_caches_kb(&lever_kernel::KernelFs::system());
    let mut defs: Vec<TestDef> = crate::catalog::all(opts.quick, caches.last().copied())
        .into_iter()
        .filter(|d| req.names.contains(&d.name))
        .collect();
    defs.sort_by_key(|d| req.names.iter().position(|n| *n == d.name));
    let dir = crate::scratch_dir(opts.dir.as_deref())?;
    let env = Env {
        helper: opts.helper.clone(),
        dir: dir.path().to_path_buf(),
        quick: opts.quick,
    };
    let stdout = std::io::stdout();
    let tests = run_pass(
        &opts,
        &defs,
        &env,
        req.pass,
        req.peer_cpu,
        &mut |i, name| {
            let mut out = stdout.lock();
            let _ = writeln!(out, "{PROGRESS}{i}\t{name}");
            let _ = out.flush();
        },
    );
    let text = serde_json::to_vec(&tests).expect("results serialize");
    std::fs::write(&req.out, text).map_err(io_err(format!("write {}", req.out.display())))
}

/// The calling thread pinned to one CPU until [`Pin::release`] puts its
/// affinity back: a two-ended test's samples then all have both ends on
/// that CPU. Unpinned, a pipe round trip on a 2-vCPU VM was 1.8 µs or
/// 75 µs by whether the peer woke on the same CPU, and three runs
/// disagreed far outside each one's ±2 % interval.
struct Pin {
    cpu: usize,
    before: rustix::thread::CpuSet,
}

impl Pin {
    /// `None` where the affinity cannot be read or set (then the test
    /// runs unpinned).
    fn to(cpu: usize) -> Option<Pin> {
        let before = rustix::thread::sched_getaffinity(None).ok()?;
        if cpu >= rustix::thread::CpuSet::MAX_CPU {
            return None;
        }
        let mut one = rustix::thread::CpuSet::new();
        one.set(cpu);
        rustix::thread::sched_setaffinity(None, &one).ok()?;
        Some(Pin { cpu, before })
    }

    /// Restore the affinity; the CPU it was pinned to.
    fn release(self) -> usize {
        let _ = rustix::thread::sched_setaffinity(None, &self.before);
        self.cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_take_the_allowed_cpus_in_turn() {
        let opts = Options::quick();
        let turns: Vec<_> = (0..4).map(|p| peer_cpu(&opts, &[0, 2, 3], p)).collect();
        assert_eq!(turns, [Some(0), Some(2), Some(3), Some(0)]);
        assert_eq!(peer_cpu(&opts, &[], 1), None);
        let pinned = Options {
            cpu: Some(5),
            ..Options::quick()
        };
        assert_eq!(peer_cpu(&pinned, &[0, 1], 1), Some(5));
    }

    /// Two passes in this process: a two-ended test runs on the first
    /// allowed CPU, then the next, and each pass gives a median.
    #[test]
    fn a_two_ended_test_moves_to_the_next_cpu_each_pass() {
        let opts = Options {
            passes: 2,
            ..Options::quick()
        };
        let defs: Vec<TestDef> = crate::catalog::all(true, None)
            .into_iter()
            .filter(|d| d.name == "lat_pipe")
            .collect();
        assert_eq!(defs.len(), 1);
        assert!(defs[0].peers);
        let report = crate::run_defs(&opts, defs, &mut |_, _, _| {}).unwrap();
        let t = &report.tests[0];
        let allowed = allowed_cpus();
        let want: Vec<usize> = (0..2).map(|p| allowed[p % allowed.len()]).collect();
        assert_eq!(t.pass_cpus, want, "{t:?}");
        assert_eq!(t.pinned_cpu, Some(want[0]));
        assert_eq!(t.pass_medians.len(), 2, "{t:?}");
    }
}
