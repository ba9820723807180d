//! Recording the events a breach analysis needs, while measuring, into a
//! private tracefs instance (`instances/lever-latency-<pid>`): its own
//! buffer, events and `trace_clock` (`mono`, the measuring threads'
//! clock), nothing of the top level touched. The instance is removed when
//! the measurement ends, whatever the outcome ([`lever_tracefs::Capture`]
//! removes it on drop too), after its text is saved to the trace file.

use crate::breach::{self, Analysis, Wakeup};
use crate::error::LatencyError;
use lever_kernel::{paths, KernelFs};
use lever_tracefs::{Capture, CaptureConfig, CaptureError, Tracefs};
use std::path::{Path, PathBuf};

/// The events recorded; the ones this kernel lacks are left out (the
/// x86-only `irq_vectors` ones, for instance).
pub const EVENTS: [&str; 15] = [
    "sched/sched_switch",
    "sched/sched_waking",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "timer/hrtimer_expire_entry",
    "timer/hrtimer_expire_exit",
    "power/cpu_idle",
    "irq_vectors/local_timer_entry",
    "irq_vectors/local_timer_exit",
    "irq_vectors/reschedule_entry",
    "irq_vectors/reschedule_exit",
    "irq_vectors/call_function_single_entry",
    "irq_vectors/call_function_single_exit",
];

/// The events no analysis can do without.
const REQUIRED: [&str; 2] = ["sched/sched_switch", "sched/sched_waking"];

/// Per-CPU buffer of the instance, KiB: at 1 kHz per thread plus the
/// system's own events this holds several seconds.
pub const BUFFER_KB: u64 = 4096;

/// A running recording.
pub struct BreachTrace {
    capture: Capture,
    out: PathBuf,
    /// Declared last, so it is dropped after the capture (whose instance
    /// must be removed first).
    _mounted: Option<Mounted>,
}

/// tracefs mounted by this run (it was not mounted before): unmounted
/// when the recording ends, so the system is left as found.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.0)
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The instance's name: `lever-latency-<pid>`.
pub fn instance_name() -> String {
    format!("lever-latency-{}", std::process::id())
}

/// Where the trace is kept without `--trace-out`.
pub fn default_out() -> PathBuf {
    std::env::temp_dir().join(format!("{}.trace", instance_name()))
}

fn trace_error(option: &'static str, why: String, denied: bool) -> LatencyError {
    LatencyError::Trace {
        option,
        why,
        denied,
    }
}

fn capture_error(option: &'static str, e: CaptureError) -> LatencyError {
    use lever_kernel::KernelError as K;
    let denied = match &e {
        CaptureError::Kernel(K::NotAllowed { .. }) => true,
        CaptureError::Io { source, .. } => source.kind() == std::io::ErrorKind::PermissionDenied,
        _ => false,
    };
    trace_error(option, e.to_string(), denied)
}

impl BreachTrace {
    /// Locate tracefs under `fs` (mounting it on the real system when
    /// absent) and start recording. `option` names the flag that asked
    /// for it, for the error.
    pub fn start(
        fs: &KernelFs,
        option: &'static str,
        out: &Path,
    ) -> Result<BreachTrace, LatencyError> {
        let tracing = format!("{}/kernel/tracing", paths::SYS);
        // Not root: tracefs is mode 700, which looks like "absent" to a
        // lookup; say what it is instead of trying to mount.
        if let Ok(host) = fs.resolve(&tracing) {
            if let Err(e) = std::fs::read_dir(&host) {
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    return Err(trace_error(
                        option,
                        format!(
                            "{}: permission denied (tracefs needs root; \
                             --no-trace stops at the breach without the analysis)",
                            host.display()
                        ),
                        true,
                    ));
                }
            }
        }
        let was_mounted = Tracefs::locate(fs).is_some();
        let tfs = Tracefs::locate_or_mount(fs).map_err(|e| capture_error(option, e))?;
        // From here every way out (an error below, the end, a drop)
        // unmounts what this run mounted.
        let mounted = match was_mounted {
            true => None,
            false => Some(Mounted(fs.resolve(tfs.dir())?)),
        };
        let events: Vec<String> = EVENTS
            .iter()
            .filter(|e| fs.exists(&format!("{}/events/{e}/enable", tfs.dir())))
            .map(|e| e.replace('/', ":"))
            .collect();
        for r in REQUIRED {
            if !events.contains(&r.replace('/', ":")) {
                return Err(trace_error(
                    option,
                    format!("this kernel has no {r} event ({}/events)", tfs.dir()),
                    false,
                ));
            }
        }
        let cfg = CaptureConfig {
            events,
            tracer: None,
            buffer_kb: Some(BUFFER_KB),
            top_level: false,
        };
        let capture = Capture::start_instance(&tfs, &instance_name(), Some("mono"), &cfg)
            .map_err(|e| capture_error(option, e))?;
        // Check the output can be written now, not after the measurement,
        // without leaving a file behind if none is saved in the end.
        let existed = out.exists();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(out)
            .map_err(|source| LatencyError::File {
                path: out.to_path_buf(),
                source,
            })?;
        if !existed {
            let _ = std::fs::remove_file(out);
        }
        Ok(BreachTrace {
            capture,
            out: out.to_path_buf(),
            _mounted: mounted,
        })
    }

    /// End the recording without saving it: the instance is removed (and
    /// tracefs unmounted if this run mounted it); no file is written.
    pub fn discard(self) {
        drop(self);
    }

    /// At a breach, from the measuring thread: the marker naming the
    /// wake-up, then stop, so the window stays at the end of the buffer.
    pub fn mark_and_stop(&self, wakeup: &Wakeup) {
        // A failed marker only loses the self-description of the file;
        // the analysis gets the wake-up from the report.
        let _ = self.capture.mark(&wakeup.marker());
        let _ = self.capture.stop();
    }

    /// Stop, save the trace to the file, remove the instance, and analyse
    /// each wake-up in the saved text.
    pub fn finish(self, wakeups: &[Wakeup]) -> Result<(PathBuf, Vec<Analysis>), LatencyError> {
        let instance = self.capture.dir().to_string();
        self.capture.finish(&self.out).map_err(|e| {
            let out = self.out.display();
            capture_error("trace", e).with_why(|why| format!("saving {instance} to {out}: {why}"))
        })?;
        let analyses = analyze_file(&self.out, wakeups)?;
        Ok((self.out, analyses))
    }
}

/// Analyse wake-ups in a saved trace file (one pass for all of them).
pub fn analyze_file(path: &Path, wakeups: &[Wakeup]) -> Result<Vec<Analysis>, LatencyError> {
    if wakeups.is_empty() {
        return Ok(Vec::new());
    }
    let (file, _) = lever_trace::open(path).map_err(|e| LatencyError::File {
        path: e.path,
        source: e.source,
    })?;
    breach::analyze_all(std::io::BufReader::new(file), wakeups).map_err(|source| {
        LatencyError::File {
            path: path.to_path_buf(),
            source,
        }
    })
}
