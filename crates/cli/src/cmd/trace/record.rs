//! `lever trace record`: seed 000 §4.1's capture, tracefs left as found
//! also on Ctrl-C or a failing command.

use crate::args::Global;
use crate::cmd::util::seconds;
use crate::render::trace::RecordResult;
use crate::render::{self, emit, Progress};
use anyhow::Context;
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::sampling::{spawn, wait};
use lever_tracefs::{Capture, CaptureConfig, DatVersion, Target, Tracefs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// `lever trace record`
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Events, comma-separated: a system (`sched`), `sched:sched_switch`
    /// or a bare event name. Default: sched_switch, sched_waking,
    /// sched_wakeup, sched_wakeup_new, sched_migrate_task, cpu_frequency,
    /// cpu_idle, irq, and markers (always on).
    #[arg(short, long, value_delimiter = ',')]
    pub events: Vec<String>,
    /// Tracer (function, function_graph, irqsoff, preemptoff, ...).
    #[arg(long)]
    pub tracer: Option<String>,
    /// Per-CPU buffer size in KiB (seed 000 §4.1 uses 25600).
    #[arg(long, value_name = "N")]
    pub buffer_kb: Option<u64>,
    /// Record this long: `10s`, `500ms`, `1m`; a bare number is seconds
    /// (default 5 s without a command).
    #[arg(long, value_name = "TIME", value_parser = seconds, conflicts_with = "command")]
    pub duration: Option<Duration>,
    /// Record into the top-level buffer (state saved and restored) instead
    /// of a private instance.
    #[arg(long)]
    pub top_level: bool,
    /// Output file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Output format: `text` (the kernel's `trace`) or `dat` (the raw
    /// ring-buffer pages as a trace-cmd trace.dat, which `trace-cmd
    /// report` and KernelShark open; see `--dat-version`). Default: `dat` when the output
    /// ends in `.dat`, else `text`.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// trace.dat file version: 6 (every trace-cmd) or 7 (sections,
    /// zstd-compressed; trace-cmd ≥ 3.0).
    #[arg(long, value_name = "6|7", default_value_t = 6, value_parser = clap::value_parser!(u8).range(6..=7))]
    pub dat_version: u8,
    /// With `--format dat`: read the pages after the run instead of while
    /// recording (the window is then bounded by the buffer size).
    #[arg(long)]
    pub no_stream: bool,
    /// With `--dat-version 7`: do not compress.
    #[arg(long, requires = "dat_version")]
    pub uncompressed: bool,
    /// Command to run while recording (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// `--format`
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// ftrace text.
    Text,
    /// trace-cmd trace.dat (v6, or v7 with `--dat-version 7`).
    Dat,
}

const DEFAULT_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_wakeup_new",
    "sched:sched_migrate_task",
    "power:cpu_frequency",
    "power:cpu_idle",
    "irq",
];

/// Record a trace.
pub fn run(global: &Global, a: RecordArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let tfs = Tracefs::locate_or_mount(&fs)?;
    // A recorder killed with SIGKILL left its instance tracing: remove it.
    for stale in tfs.remove_stale_instances() {
        eprintln!("lever: {stale}");
    }
    let events: Vec<String> = if a.events.is_empty() {
        DEFAULT_EVENTS
            .iter()
            .map(|e| e.to_string())
            .filter(|e| {
                // Defaults the kernel lacks are skipped, not errors.
                let p = e.replace(':', "/");
                fs.exists(&format!("{}/events/{p}/enable", tfs.dir()))
            })
            .collect()
    } else {
        a.events.clone()
    };
    let cfg = CaptureConfig {
        events,
        tracer: a.tracer.clone(),
        buffer_kb: a.buffer_kb,
        top_level: a.top_level,
    };
    // Ctrl-C and SIGTERM become a message instead of killing us, so the
    // capture is saved and tracefs restored; the command (same process
    // group) gets the terminal's SIGINT itself.
    let (tx, rx) = mpsc::channel::<i32>();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .context("installing the signal handler")?;
    let handle = signals.handle();
    let sig_thread = std::thread::spawn(move || {
        for s in signals.forever() {
            if tx.send(s).is_err() {
                break;
            }
        }
    });
    // Before and after only: a sampling thread's wake-ups and reads would
    // be in the trace.
    let recorder = lever_measure::conditions::Recorder::start(
        &fs,
        env!("LEVER_VERSION"),
        None,
        "not sampled during `trace record`: a sampling thread's wake-ups and reads would be in the trace",
    );
    let result = (|| -> anyhow::Result<RecordResult> {
        let cap = Capture::start(&tfs, &cfg)?;
        let target = match cap.target() {
            Target::Instance(d) => format!("instance {d}"),
            Target::TopLevel(_) => "top-level buffer (state saved)".to_string(),
        };
        let dat = a
            .format
            .unwrap_or(match a.output.extension().and_then(|e| e.to_str()) {
                Some("dat") => OutputFormat::Dat,
                _ => OutputFormat::Text,
            })
            == OutputFormat::Dat;
        // A dat capture reads the pages while recording (one reader per
        // CPU), so the window is not bounded by the kernel's buffer.
        let rec = if dat && !a.no_stream {
            Some(cap.stream_raw(&a.output)?)
        } else {
            None
        };
        let ticker = rec.as_ref().map(|r| progress_ticker(r.bytes_read()));
        let start = Instant::now();
        let mut status = None;
        if a.command.is_empty() {
            let d = a.duration.unwrap_or(Duration::from_secs(5));
            if rx.recv_timeout(d).is_ok() {
                eprintln!("lever: interrupted; saving the trace and restoring tracefs");
            }
        } else {
            // The instance name, so the command can use it (e.g.
            // `trace-cmd extract -B $LEVER_TRACE_INSTANCE`).
            if let Target::Instance(d) = cap.target() {
                let name = d.rsplit('/').next().unwrap_or(d);
                std::env::set_var("LEVER_TRACE_INSTANCE", name);
            }
            let mut child = spawn(&a.command)?;
            let st = wait(&mut child)?;
            status = st.code();
            if !st.success() {
                eprintln!("lever: command exited with {st}; trace saved anyway");
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        if let Some(t) = ticker {
            t.stop();
        }
        // Without streaming, the pages are read after the run (as
        // `trace-cmd extract` does): checked equal to the kernel's text of
        // the same window.
        let version = match a.dat_version {
            7 => DatVersion::V7 {
                zstd: !a.uncompressed,
            },
            _ => DatVersion::V6,
        };
        let bytes = if let Some(rec) = rec {
            cap.finish_streamed_as(rec, &a.output, version)?
        } else if dat {
            cap.finish_dat_as(&a.output, version)?
        } else {
            cap.finish(&a.output)?
        };
        Ok(RecordResult {
            output: a.output.clone(),
            bytes,
            target,
            seconds,
            command_status: status,
            conditions: None,
        })
    })();
    handle.close();
    let _ = sig_thread.join();
    let mut result = result?;
    result.conditions = Some(recorder.finish());
    emit(global.json, &result, render::trace::record)
}

/// A progress line (on a terminal only) with the pages read so far.
struct Ticker {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Ticker {
    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.thread.join();
    }
}

fn progress_ticker(read: Arc<AtomicU64>) -> Ticker {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        let p = Progress::new("recording: pages read");
        while !flag.load(Ordering::Acquire) {
            p.update(read.load(Ordering::Relaxed) >> 10, None, "KiB");
            std::thread::sleep(Duration::from_millis(250));
        }
        p.finish();
    });
    Ticker { stop, thread }
}
