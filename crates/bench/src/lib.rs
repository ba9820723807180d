//! Micro-benchmarks: LMBench's latency and bandwidth tests and the CPU
//! benchmarks of seed 002, run natively with honest statistics, and a
//! comparison of two runs that tells a real regression from noise.
//!
//! [`run`] takes [`Options`], runs every selected test of the
//! [`catalog`] (calibrate → warm up → sample until the 95% interval of
//! the median is within ±2% or the time budget is spent, see [`stats`]),
//! and returns a [`BenchReport`] (serde: it is the `--json` file, samples
//! included). [`compare::compare`] sets two reports side by side.
//!
//! ```
//! use lever_bench::{run, Options};
//! let opts = Options { only: Some("lat_syscall-null".into()), ..Options::quick() };
//! let report = run(&opts, &mut |_, _, _| {}).unwrap();
//! let t = &report.tests[0];
//! assert_eq!((t.name.as_str(), t.unit.as_str()), ("lat_syscall-null", "us"));
//! assert!(t.summary.as_ref().unwrap().median > 0.0);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod catalog;
pub mod compare;
pub mod conditions;
pub mod cpu;
pub mod ipc;
pub mod memory;
pub mod nbench;
pub mod ops;
pub mod os;
pub mod pagefault;
pub mod passes;
pub mod runner;
pub mod speed;
pub mod stats;

use catalog::{Better, Env, Section};
use conditions::Conditions;
use lever_kernel::KernelFs;
use serde::{Deserialize, Serialize};
use stats::{Policy, Stop, Summary};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Errors of the benchmarks.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A system call or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done (`open /dev/zero`, `fork`).
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The test needs the `lever` binary's helper mode, which this
    /// caller did not provide.
    #[error("needs the lever binary's helper mode (run it through `lever bench`)")]
    NeedsHelper,
    /// A test misbehaved (a helper failed, a signal was lost).
    #[error("{0}")]
    Broken(String),
    /// `--only` selected nothing.
    #[error("--only {0:?} matches no test (`lever bench --list` names them)")]
    NothingSelected(String),
    /// `--cpu N` could not be applied.
    #[error("cannot run on CPU {cpu}: {source}")]
    Affinity {
        /// The CPU asked for.
        cpu: usize,
        /// The error.
        source: std::io::Error,
    },
    /// A report file is not a `lever bench` report.
    #[error("{path}: {message}")]
    Report {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A report file could not be read or written.
    #[error("{path}: {source}")]
    ReportFile {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// `map_err` helper: an I/O error with what was being done.
pub(crate) fn io_err(what: String) -> impl FnOnce(std::io::Error) -> BenchError {
    move |source| BenchError::Io { what, source }
}

/// How to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// `--quick`: short samples, fewer sizes, the whole suite in about a
    /// minute on a small machine.
    pub quick: bool,
    /// `--only`: comma-separated globs of test names.
    pub only: Option<String>,
    /// `--cpu N`: pin the benchmark (and its peer threads) to one CPU.
    pub cpu: Option<usize>,
    /// The sampling policy.
    pub policy: Policy,
    /// Length of one sample.
    pub sample_time: Duration,
    /// Program and arguments of the helper mode (not recorded).
    #[serde(skip)]
    pub helper: Option<Vec<OsString>>,
    /// The root the user gave (`--root`): a simulated board is not what
    /// is measured, and the report says so.
    pub root: PathBuf,
    /// Passes over the suite: each test takes its samples in this many
    /// parts, one per pass, a pass apart in time and (through the helper
    /// mode) each pass in a process of its own with the two-ended tests on
    /// the next CPU ([`passes`]), so a run shows how far a test drifts
    /// between reruns as well as its spread within one
    /// ([`TestResult::pass_medians`]; `lever bench compare` does not call
    /// a change within that drift one). Reports before passes had 1.
    #[serde(default = "one_pass")]
    pub passes: usize,
    /// `--dir DIR`: where the file tests (`lat_fs`, `bw_file_rd`,
    /// `bw_mmap_rd`, `lat_mmap`, the stat/open tests) make their scratch
    /// directory, LMBench's `FSDIR`: their figures are that file
    /// system's. `None`: the system's temporary directory (`$TMPDIR`,
    /// else `/tmp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
}

/// A scratch directory for one run or pass, in `dir` when given.
pub(crate) fn scratch_dir(dir: Option<&std::path::Path>) -> Result<tempfile::TempDir, BenchError> {
    match dir {
        Some(d) => tempfile::Builder::new()
            .prefix("lever-bench-")
            .tempdir_in(d)
            .map_err(io_err(format!(
                "create a scratch directory in {}",
                d.display()
            ))),
        None => tempfile::tempdir().map_err(io_err("create a scratch directory".into())),
    }
}

fn one_pass() -> usize {
    1
}

impl Options {
    /// `--quick` defaults.
    pub fn quick() -> Options {
        Options {
            quick: true,
            only: None,
            cpu: None,
            policy: Policy {
                warmup: Duration::from_millis(10),
                min_samples: 6,
                max_samples: 200,
                target_ci_pct: 2.0,
                max_time: Duration::from_millis(250),
                fixed: None,
            },
            sample_time: Duration::from_millis(4),
            helper: None,
            root: PathBuf::from("/"),
            // Each pass calibrates and warms up again, and a pass's few
            // samples rarely reach the ±2 % target: two passes took 57 s
            // where one took 38 s, past --quick's minute.
            passes: 1,
            dir: None,
        }
    }

    /// Default (`--full` is the same with a longer budget).
    pub fn standard() -> Options {
        Options {
            quick: false,
            policy: Policy {
                warmup: Duration::from_millis(100),
                min_samples: 10,
                max_samples: 1000,
                target_ci_pct: 2.0,
                max_time: Duration::from_secs(2),
                fixed: None,
            },
            sample_time: Duration::from_millis(20),
            passes: 2,
            ..Options::quick()
        }
    }
}

/// What built the benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// `rustc --version` of the compiler.
    pub compiler: String,
    /// Optimisation level and profile (`opt-level=3 (release)`).
    pub flags: String,
    /// Target triple.
    pub target: String,
    /// Lever's version.
    pub lever_version: String,
}

impl Build {
    /// This binary's build.
    pub fn current() -> Build {
        Build {
            compiler: env!("LEVER_BENCH_RUSTC").into(),
            flags: format!(
                "opt-level={} ({}, debuginfo={})",
                env!("LEVER_BENCH_OPT_LEVEL"),
                env!("LEVER_BENCH_PROFILE"),
                env!("LEVER_BENCH_DEBUG")
            ),
            target: env!("LEVER_BENCH_TARGET").into(),
            lever_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// LMBench's name.
    pub name: String,
    /// Seed 002's section.
    pub section: Section,
    /// Unit of every value.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// Statistics; `None` when skipped.
    pub summary: Option<Summary>,
    /// Every sample, in the order taken.
    pub samples: Vec<f64>,
    /// Why sampling stopped.
    pub stop: Option<Stop>,
    /// Iterations per sample.
    pub iterations: u64,
    /// Wall time of the test, seconds.
    pub elapsed_s: f64,
    /// Why the test did not run.
    pub skipped: Option<String>,
    /// The CPU a test with peer threads or processes ran on in the first
    /// pass, with its peers ([`catalog::TestDef::peers`]): without `--cpu`
    /// pass *k* pins such a test to the *k*-th CPU the run may use
    /// ([`passes`]), so that every sample has its two ends on one CPU, the
    /// passes cover the placements, and a rerun gives the same ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_cpu: Option<usize>,
    /// The CPU each pass ran a two-ended test on, in pass order; empty
    /// for other tests and for a run of one pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_cpus: Vec<usize>,
    /// The median of each pass's samples ([`Options::passes`]), in pass
    /// order; empty for a run of one pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_medians: Vec<f64>,
    /// How many of [`TestResult::samples`] each pass took, in pass order
    /// (the samples are kept in that order); empty for a run of one pass
    /// and in reports written before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_samples: Vec<usize>,
}

/// A whole run: the `--json` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// What built it.
    pub build: Build,
    /// How it ran.
    pub options: Options,
    /// The machine's conditions.
    pub conditions: Conditions,
    /// Set when `--root` names a simulated board or copied tree: every
    /// test measured the host, not that board.
    pub host_note: Option<String>,
    /// The results, in catalog order.
    pub tests: Vec<TestResult>,
    /// `lat_mem_rd`'s plateaus, with the cache sizes they should match.
    pub plateaus: Vec<memory::Plateau>,
    /// Dhrystone's median DMIPS over the clock in
    /// [`Conditions::clock`]; `None` when either is unknown.
    #[serde(default)]
    pub dmips_per_mhz: Option<f64>,
    /// Wall time of the whole run, seconds.
    pub elapsed_s: f64,
}

/// Data and unified cache sizes of CPU 0 by level, KiB (`lever cpu`'s
/// reading of the host).
pub fn host_caches_kb(fs: &KernelFs) -> Vec<u64> {
    let mut v: Vec<(u8, u64)> = lever_cpu::topology::caches(fs, 0)
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| (c.level, c.size_kb))
        .collect();
    v.sort();
    v.into_iter().map(|(_, kb)| kb).collect()
}

/// Names of every test `opts` selects, in order.
pub fn list(opts: &Options) -> Vec<(String, Section, &'static str)> {
    let caches = host_caches_kb(&KernelFs::system());
    catalog::all(opts.quick, caches.last().copied())
        .into_iter()
        .filter(|t| {
            opts.only
                .as_deref()
                .is_none_or(|p| runner::matches_any(p, &t.name))
        })
        .map(|t| (t.name, t.section, t.unit))
        .collect()
}

/// Run the selected tests. `progress(done, total, name)` is called before
/// each test.
pub fn run(
    opts: &Options,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<BenchReport, BenchError> {
    let caches = host_caches_kb(&KernelFs::system());
    let defs: Vec<_> = catalog::all(opts.quick, caches.last().copied())
        .into_iter()
        .filter(|t| {
            opts.only
                .as_deref()
                .is_none_or(|p| runner::matches_any(p, &t.name))
        })
        .collect();
    if defs.is_empty() {
        return Err(BenchError::NothingSelected(
            opts.only.clone().unwrap_or_default(),
        ));
    }
    // Several passes through the binary's helper mode: each in a fresh
    // process (`passes`).
    let in_processes = opts.passes > 1 && opts.helper.is_some();
    measure(opts, defs, in_processes, progress)
}

/// How often the run's conditions are sampled while the tests run: a few
/// dozen small reads a second, under 0.1 % of one CPU.
pub const CONDITIONS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Run `defs` (the catalog's, or a caller's own) with `opts`' policy, every
/// pass in this process.
pub fn run_defs(
    opts: &Options,
    defs: Vec<catalog::TestDef>,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<BenchReport, BenchError> {
    measure(opts, defs, false, progress)
}

fn measure(
    opts: &Options,
    defs: Vec<catalog::TestDef>,
    in_processes: bool,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<BenchReport, BenchError> {
    let fs = KernelFs::system();
    let caches = host_caches_kb(&fs);
    // Started before the pinning below, so the sampling thread is not
    // confined to the benchmark's CPU.
    let recorder = lever_measure::conditions::Recorder::start(
        &fs,
        &Build::current().lever_version,
        Some(CONDITIONS_EVERY),
        "",
    );
    let allowed = passes::allowed_cpus();
    if let Some(cpu) = opts.cpu {
        // CpuSet::set panics past its fixed size: refuse such a CPU first.
        if cpu >= rustix::thread::CpuSet::MAX_CPU {
            return Err(BenchError::Affinity {
                cpu,
                source: std::io::Error::from_raw_os_error(22),
            });
        }
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        // A pass's process inherits it.
        rustix::thread::sched_setaffinity(None, &set).map_err(|e| BenchError::Affinity {
            cpu,
            source: e.into(),
        })?;
    }
    let mut conditions = Conditions::read(&fs);
    let dir = scratch_dir(opts.dir.as_deref())?;
    // The directory is always this system's, whatever --root says.
    conditions.scratch =
        lever_measure::mounts::file_system(&KernelFs::system(), dir.path()).map(|mut f| {
            // The run's own subdirectory goes when the run ends.
            f.dir = opts
                .dir
                .as_deref()
                .map_or_else(std::env::temp_dir, |d| d.to_path_buf())
                .display()
                .to_string();
            f
        });
    let env = Env {
        helper: opts.helper.clone(),
        dir: dir.path().to_path_buf(),
        quick: opts.quick,
    };
    let started = Instant::now();
    let passes = opts.passes.max(1);
    let total = defs.len() * passes;
    let mut tests: Vec<TestResult> = defs
        .iter()
        .map(|def| TestResult {
            name: def.name.clone(),
            section: def.section,
            unit: def.unit.into(),
            better: def.better,
            summary: None,
            samples: Vec::new(),
            stop: None,
            iterations: 0,
            elapsed_s: 0.0,
            skipped: None,
            pinned_cpu: None,
            pass_cpus: Vec::new(),
            pass_medians: Vec::new(),
            pass_samples: Vec::new(),
        })
        .collect();
    // The machine's own speed, timed before each test of each pass.
    let mut speed = speed::Record::new(passes::l2_kb());
    for pass in 0..passes {
        let cpu = passes::peer_cpu(opts, &allowed, pass);
        let mut part_progress = |i: usize, name: &str| progress(pass * defs.len() + i, total, name);
        let part = match (in_processes, opts.helper.as_deref()) {
            (true, Some(helper)) => {
                passes::run_pass_process(opts, helper, &defs, pass, cpu, &mut part_progress)?
            }
            _ => passes::run_pass(opts, &defs, &env, pass, cpu, &mut part_progress),
        };
        for (r, p) in tests.iter_mut().zip(part) {
            speed.add(&p.speed_ns);
            merge_pass(r, p, pass == 0);
        }
    }
    if passes == 1 {
        for r in &mut tests {
            r.pass_medians.clear();
            r.pass_samples.clear();
            r.pass_cpus.clear();
        }
    }
    progress(total, total, "");
    let mut run = recorder.finish();
    run.speed = speed.finish();
    conditions.finish(&fs, Some(run));
    if defs.iter().any(|d| d.name.starts_with("lat_fs")) {
        conditions
            .warnings
            .extend(conditions.scratch.as_ref().and_then(|f| f.note()));
    }
    let points: Vec<(u64, f64)> = tests
        .iter()
        .filter_map(|t| {
            Some((
                memory::lat_mem_rd_size_kb(&t.name)?,
                t.summary.as_ref()?.median,
            ))
        })
        .collect();
    let host_note = (opts.root != std::path::Path::new("/")).then(|| {
        format!(
            "--root {} is not what runs these tests: every test measured this host ({}), not that board",
            opts.root.display(),
            conditions.cpu_model.as_deref().unwrap_or("CPU model unknown")
        )
    });
    let dmips_per_mhz = dmips_per_mhz(&tests, &conditions);
    Ok(BenchReport {
        dmips_per_mhz,
        build: Build::current(),
        options: opts.clone(),
        conditions,
        host_note,
        plateaus: if points.len() >= 4 {
            memory::plateaus(&points, &caches)
        } else {
            Vec::new()
        },
        tests,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// Add one pass's part of a test to its result: its samples, and their
/// median as the pass's. A test skipped in one pass is skipped.
fn merge_pass(r: &mut TestResult, p: passes::PassTest, first: bool) {
    if first {
        r.pinned_cpu = p.pinned_cpu;
    }
    r.pass_cpus.extend(p.pinned_cpu);
    r.elapsed_s += p.elapsed_s;
    if let Some(why) = p.skipped {
        r.skipped = Some(why);
        r.summary = None;
        r.samples.clear();
        r.pass_medians.clear();
        r.pass_samples.clear();
        return;
    }
    if r.skipped.is_some() {
        return;
    }
    if let Some(m) = Summary::new(&p.samples).map(|m| m.median) {
        r.pass_medians.push(m);
        r.pass_samples.push(p.samples.len());
    }
    r.samples.extend(p.samples);
    r.summary = Summary::new(&r.samples);
    r.stop = p.stop;
    r.iterations = p.iterations;
}

/// Dhrystone's median over the clock, when both are known.
fn dmips_per_mhz(tests: &[TestResult], c: &Conditions) -> Option<f64> {
    let dmips = tests
        .iter()
        .find(|t| t.name == "dhrystone")?
        .summary
        .as_ref()?
        .median;
    Some(dmips / c.clock.as_ref()?.mhz)
}

/// Write `report` as pretty JSON to `path` (the file `compare` reads).
pub fn write_report(path: &std::path::Path, report: &BenchReport) -> Result<(), BenchError> {
    let text = serde_json::to_string_pretty(report).map_err(|e| BenchError::Report {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    std::fs::write(path, text + "\n").map_err(|source| BenchError::ReportFile {
        path: path.to_path_buf(),
        source,
    })
}

/// The hidden helper mode (`lever bench __helper MODE …`): `null` exits at
/// once; `proc KIND N` times `lat_proc`'s fork, exec or shell N times in
/// a small process of its own and prints the nanoseconds; `ctx KB` is a `lat_ctx` ring
/// member on stdin/stdout; `pass` runs one pass of a run in a process of
/// its own ([`passes`]).
pub fn helper_main(args: &[String]) -> Result<(), BenchError> {
    match args {
        [m] if m == "null" => Ok(()),
        [m] if m == "pass" => passes::pass_main(),
        [m, kind, n] if m == "proc" => os::proc_main(kind, n),
        [m, kb] if m == "ctx" => ipc::ctx_member(
            kb.parse()
                .map_err(|_| BenchError::Broken(format!("ctx: bad size {kb:?}")))?,
        ),
        _ => Err(BenchError::Broken(format!("unknown helper mode {args:?}"))),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn empty_report() -> BenchReport {
        BenchReport {
            build: Build::current(),
            options: Options::quick(),
            conditions: Conditions::read(&KernelFs::new("/nonexistent")),
            host_note: None,
            tests: Vec::new(),
            plateaus: Vec::new(),
            dmips_per_mhz: None,
            elapsed_s: 0.0,
        }
    }

    #[test]
    fn dmips_per_mhz_needs_dhrystone_and_a_clock() {
        let dhry = TestResult {
            name: "dhrystone".into(),
            section: Section::Cpu,
            unit: "DMIPS".into(),
            better: Better::Higher,
            summary: Summary::new(&[4000.0, 5000.0, 6000.0]),
            samples: vec![4000.0, 5000.0, 6000.0],
            stop: None,
            iterations: 1,
            elapsed_s: 0.0,
            skipped: None,
            pinned_cpu: None,
            pass_cpus: Vec::new(),
            pass_medians: Vec::new(),
            pass_samples: Vec::new(),
        };
        let mut c = empty_report().conditions;
        assert_eq!(dmips_per_mhz(std::slice::from_ref(&dhry), &c), None);
        c.clock = Some(conditions::Clock {
            mhz: 2500.0,
            source: "test".into(),
        });
        assert_eq!(dmips_per_mhz(&[dhry], &c), Some(2.0));
        assert_eq!(dmips_per_mhz(&[], &c), None);
    }

    #[test]
    fn a_report_round_trips_through_json() {
        let r = empty_report();
        let text = serde_json::to_string(&r).unwrap();
        let back: BenchReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back.build, r.build);
        assert!(r.build.compiler.starts_with("rustc"));
    }
}
