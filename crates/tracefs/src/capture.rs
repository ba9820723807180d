//! Capturing a trace through tracefs: seed 000 §4.1's procedure as code,
//! leaving tracefs as it was found.
//!
//! Preferred path: a private instance (`instances/lever-<pid>`), which has
//! its own buffer, events, tracer and `tracing_on`, so nothing of the
//! top-level state is touched and removing the instance is the whole
//! restore. When instances are unavailable (kernels before 3.10, or
//! `mkdir` refused), the top level is used: `tracing_on`, `current_tracer`,
//! `buffer_size_kb` and the enabled events are saved first and written
//! back on [`Capture::finish`] or drop (so also on an error or a panic;
//! the CLI turns Ctrl-C into a normal return). The top-level buffer is
//! cleared before recording: its previous content cannot be restored.
//!
//! Nothing here writes `/proc/sys/kernel/ftrace_enabled` or
//! `set_ftrace_pid`; they are not writable on some systems (EPERM) and
//! the procedure does not need them.
//!
//! Every path goes through [`KernelFs`], so tests run this against a fake
//! tracefs tree.

use lever_kernel::{paths, KernelError, KernelFs};
use lever_trace_input::dat::write::DatVersion;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Errors from capturing.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// tracefs is not mounted and could not be mounted.
    #[error("tracefs is not available here: {0}")]
    NoTracefs(String),
    /// A tracefs node could not be read or written.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// An event name that the kernel does not have.
    #[error("no such trace event {event:?} (see {available})")]
    UnknownEvent {
        /// The requested event.
        event: String,
        /// Where the list of events is.
        available: String,
    },
    /// A tracer the kernel does not have.
    #[error("tracer {tracer:?} is not available (available: {available})")]
    UnknownTracer {
        /// The requested tracer.
        tracer: String,
        /// The kernel's `available_tracers`.
        available: String,
    },
    /// Creating, removing or copying a file failed.
    #[error("{path}: {op} failed: {source}")]
    Io {
        /// Host path.
        path: PathBuf,
        /// Operation.
        op: &'static str,
        /// The error.
        source: io::Error,
    },
}

/// A located tracefs mount.
#[derive(Debug, Clone)]
pub struct Tracefs {
    fs: KernelFs,
    dir: String,
}

impl Tracefs {
    /// The kernel path of tracefs: `/sys/kernel/tracing`, or the old
    /// `/sys/kernel/debug/tracing`.
    pub fn locate(fs: &KernelFs) -> Option<Tracefs> {
        [
            format!("{}/kernel/tracing", paths::SYS),
            format!("{}/kernel/debug/tracing", paths::SYS),
        ]
        .into_iter()
        .find(|d| fs.exists(&format!("{d}/tracing_on")))
        .map(|dir| Tracefs {
            fs: fs.clone(),
            dir,
        })
    }

    /// Locate tracefs, mounting it at `/sys/kernel/tracing` when this is
    /// the real system and it is not mounted yet.
    pub fn locate_or_mount(fs: &KernelFs) -> Result<Tracefs, CaptureError> {
        if let Some(t) = Self::locate(fs) {
            return Ok(t);
        }
        let dir = format!("{}/kernel/tracing", paths::SYS);
        if !fs.is_system() {
            return Err(CaptureError::NoTracefs(format!(
                "{dir} has no tracing_on under root {}",
                fs.root().display()
            )));
        }
        let status = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev", &dir])
            .status()
            .map_err(|e| CaptureError::NoTracefs(format!("cannot run mount: {e}")))?;
        match Self::locate(fs) {
            Some(t) => Ok(t),
            None => Err(CaptureError::NoTracefs(format!(
                "`mount -t tracefs nodev {dir}` failed ({status}); need root and CONFIG_TRACING"
            ))),
        }
    }

    /// The kernel path of the tracefs directory.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The kernel path of `trace_marker`.
    pub fn marker_path(&self) -> String {
        format!("{}/trace_marker", self.dir)
    }

    /// Write one marker (`lever trace mark`).
    pub fn mark(&self, text: &str) -> Result<(), CaptureError> {
        Ok(self.fs.write_raw(&self.marker_path(), text)?)
    }

    fn host(&self, kernel_path: &str) -> Result<PathBuf, CaptureError> {
        Ok(self.fs.resolve(kernel_path)?)
    }

    /// Whether process `pid` runs (a zombie, killed but not yet reaped,
    /// does not).
    fn alive(&self, pid: u32) -> bool {
        match self
            .fs
            .read_optional(&format!("{}/{pid}/stat", paths::PROC))
        {
            // "16289 (lever) Z 1 ...": the state follows the last ')'.
            Ok(Some(stat)) => stat.rsplit_once(')').is_none_or(|(_, rest)| {
                !matches!(rest.trim_start().as_bytes().first(), Some(b'Z' | b'X'))
            }),
            Ok(None) => false,
            Err(_) => self.fs.exists(&format!("{}/{pid}", paths::PROC)),
        }
    }

    /// Remove the `instances/lever-PID` instances whose recorder (process
    /// PID) is gone — a `trace record` killed with SIGKILL leaves its
    /// instance tracing into its buffer — after stopping them. This
    /// process's own instance and those of live processes are left.
    /// Returns what was found, each with whether it could be removed.
    pub fn remove_stale_instances(&self) -> Vec<StaleInstance> {
        let instances = format!("{}/instances", self.dir);
        let Ok(names) = self.fs.list_dir(&instances) else {
            return Vec::new();
        };
        let me = std::process::id();
        let mut found = Vec::new();
        for name in names {
            let Some(pid) = name
                .strip_prefix("lever-")
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me || self.alive(pid) {
                continue;
            }
            let dir = format!("{instances}/{name}");
            let _ = self.fs.write_raw(&format!("{dir}/tracing_on"), "0");
            let removed = self
                .host(&dir)
                .and_then(|host| {
                    fs::remove_dir(&host).map_err(|source| CaptureError::Io {
                        path: host,
                        op: "remove instance",
                        source,
                    })
                })
                .map_err(|e| e.to_string());
            found.push(StaleInstance { name, pid, removed });
        }
        found
    }
}

/// A `lever-PID` tracefs instance whose recorder is gone
/// ([`Tracefs::remove_stale_instances`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleInstance {
    /// Its name under `instances/`.
    pub name: String,
    /// The recorder's pid, no longer running.
    pub pid: u32,
    /// Removed, or why not.
    pub removed: Result<(), String>,
}

impl std::fmt::Display for StaleInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.removed {
            Ok(()) => write!(
                f,
                "removed the stale tracefs instance {} (its recorder, pid {}, is gone)",
                self.name, self.pid
            ),
            Err(e) => write!(
                f,
                "the stale tracefs instance {} (recorder pid {} is gone) could not be removed: {e}",
                self.name, self.pid
            ),
        }
    }
}

/// The tracefs state a capture must leave unchanged (of the top level or
/// an instance directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracefsState {
    /// `tracing_on`
    pub tracing_on: String,
    /// `current_tracer`
    pub current_tracer: String,
    /// `buffer_size_kb` (may read `7 (expanded: 1408)` before first use).
    pub buffer_size_kb: String,
    /// `set_event`: enabled events as `system:event`, sorted.
    pub enabled_events: Vec<String>,
    /// Names under `instances/`, sorted.
    pub instances: Vec<String>,
}

impl TracefsState {
    /// Read the state of a tracefs directory (`dir` is a kernel path).
    pub fn read(fs: &KernelFs, dir: &str) -> Result<TracefsState, CaptureError> {
        let mut enabled_events: Vec<String> = fs
            .read(&format!("{dir}/set_event"))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        enabled_events.sort();
        let instances = match fs.list_dir(&format!("{dir}/instances")) {
            Ok(v) => v,
            Err(e) if e.is_missing() => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        Ok(TracefsState {
            tracing_on: fs.read(&format!("{dir}/tracing_on"))?,
            current_tracer: fs.read(&format!("{dir}/current_tracer"))?,
            buffer_size_kb: fs.read(&format!("{dir}/buffer_size_kb"))?,
            enabled_events,
            instances,
        })
    }
}

/// What to capture.
#[derive(Debug, Clone, Default)]
pub struct CaptureConfig {
    /// Events: `sched` (a system), `sched:sched_switch`,
    /// `sched/sched_switch`, or a bare event name (`sched_switch`).
    pub events: Vec<String>,
    /// Tracer (`function`, `function_graph`, `irqsoff`, ...); `None` keeps
    /// `nop`.
    pub tracer: Option<String>,
    /// Per-CPU buffer size in KiB.
    pub buffer_kb: Option<u64>,
    /// Use the top level even when instances exist.
    pub top_level: bool,
}

/// Where a capture records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A private instance (kernel path of its directory).
    Instance(String),
    /// The top level, with the state to restore.
    TopLevel(Box<TracefsState>),
}

/// A running capture. Dropping it restores tracefs.
#[derive(Debug)]
pub struct Capture {
    tfs: Tracefs,
    base: String,
    target: Target,
    done: bool,
}

impl Capture {
    /// Configure and start recording.
    pub fn start(tfs: &Tracefs, cfg: &CaptureConfig) -> Result<Capture, CaptureError> {
        let instances = format!("{}/instances", tfs.dir);
        let mut target = None;
        if !cfg.top_level && tfs.fs.exists(&instances) {
            let dir = format!("{instances}/lever-{}", std::process::id());
            // mkdir in tracefs creates a full instance (kernel ≥ 3.10).
            let host = tfs.host(&dir)?;
            if fs::create_dir(&host).is_ok() {
                if tfs.fs.exists(&format!("{dir}/trace")) {
                    target = Some(Target::Instance(dir));
                } else {
                    // Not a tracefs instance after all: leave no trace.
                    let _ = fs::remove_dir(&host);
                }
            }
        }
        let target = match target {
            Some(t) => t,
            None => Target::TopLevel(Box::new(TracefsState::read(&tfs.fs, &tfs.dir)?)),
        };
        let base = match &target {
            Target::Instance(d) => d.clone(),
            Target::TopLevel(_) => tfs.dir.clone(),
        };
        let mut cap = Capture {
            tfs: tfs.clone(),
            base,
            target,
            done: false,
        };
        // On error the drop below restores whatever was changed.
        cap.configure(cfg)?;
        Ok(cap)
    }

    /// Configure and start recording into a private instance named
    /// `name` (`instances/<name>`), never the top level: an error when
    /// the kernel has no instances or the directory cannot be made, with
    /// nothing left behind. `trace_clock` (e.g. `mono`, so time stamps
    /// are CLOCK_MONOTONIC) is set in the instance only.
    pub fn start_instance(
        tfs: &Tracefs,
        name: &str,
        trace_clock: Option<&str>,
        cfg: &CaptureConfig,
    ) -> Result<Capture, CaptureError> {
        let instances = format!("{}/instances", tfs.dir);
        if name.is_empty() || name.contains(['/', '.']) {
            return Err(CaptureError::NoTracefs(format!(
                "{name:?} is not a usable instance name"
            )));
        }
        if !tfs.fs.exists(&instances) {
            return Err(CaptureError::NoTracefs(format!(
                "{instances} is missing: this kernel has no tracefs instances (before 3.10)"
            )));
        }
        let dir = format!("{instances}/{name}");
        let host = tfs.host(&dir)?;
        fs::create_dir(&host).map_err(|source| CaptureError::Io {
            path: host.clone(),
            op: "create instance",
            source,
        })?;
        // From here on, drop removes the directory whatever fails.
        let mut cap = Capture {
            tfs: tfs.clone(),
            base: dir.clone(),
            target: Target::Instance(dir.clone()),
            done: false,
        };
        if !tfs.fs.exists(&format!("{dir}/trace")) {
            return Err(CaptureError::NoTracefs(format!(
                "{dir} was created but holds no `trace` file: not a tracefs instance"
            )));
        }
        if let Some(clock) = trace_clock {
            tfs.fs.write_raw(&cap.path("trace_clock"), clock)?;
        }
        cap.configure(cfg)?;
        Ok(cap)
    }

    /// Write `text` to this capture's own `trace_marker` (an instance's
    /// marker lands in that instance's buffer only).
    pub fn mark(&self, text: &str) -> Result<(), CaptureError> {
        Ok(self.tfs.fs.write_raw(&self.path("trace_marker"), text)?)
    }

    /// Stop recording (`tracing_on` = 0) and keep the buffer, e.g. right
    /// at the event the trace is about; [`Capture::finish`] saves it.
    pub fn stop(&self) -> Result<(), CaptureError> {
        Ok(self.tfs.fs.write_raw(&self.path("tracing_on"), "0")?)
    }

    fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    fn configure(&mut self, cfg: &CaptureConfig) -> Result<(), CaptureError> {
        let fs = &self.tfs.fs;
        fs.write(&self.path("tracing_on"), "0")?;
        if let Some(kb) = cfg.buffer_kb {
            fs.write_raw(&self.path("buffer_size_kb"), &kb.to_string())?;
        }
        if matches!(self.target, Target::TopLevel(_)) {
            // Start from no events, as §4.1 does (`echo "" > set_event`).
            fs.write_raw(&self.path("set_event"), "")?;
        }
        for ev in &cfg.events {
            let enable = self.event_enable_path(ev)?;
            fs.write_raw(&enable, "1")?;
        }
        if let Some(tracer) = &cfg.tracer {
            let available = fs
                .read_optional(&self.path("available_tracers"))?
                .or(fs.read_optional(&format!("{}/available_tracers", self.tfs.dir))?)
                .unwrap_or_default();
            if !available.split_whitespace().any(|t| t == tracer) {
                return Err(CaptureError::UnknownTracer {
                    tracer: tracer.clone(),
                    available,
                });
            }
            fs.write_raw(&self.path("current_tracer"), tracer)?;
        }
        if matches!(self.target, Target::Instance(_)) {
            // Let `lever trace mark` (top-level trace_marker) reach us too.
            let copy = self.path("options/copy_trace_marker");
            if fs.exists(&copy) {
                let _ = fs.write_raw(&copy, "1");
            }
        }
        // Clear the buffer (opening `trace` with O_TRUNC), then start.
        fs.write_raw(&self.path("trace"), "")?;
        fs.write_raw(&self.path("tracing_on"), "1")?;
        Ok(())
    }

    /// `sched` → events/sched/enable; `sched:sched_switch` or
    /// `sched/sched_switch` → events/sched/sched_switch/enable; a bare
    /// `sched_switch` is looked up among the systems.
    fn event_enable_path(&self, ev: &str) -> Result<String, CaptureError> {
        let events = self.path("events");
        let ev = ev.trim();
        let candidate = match ev.split_once([':', '/']) {
            Some((sys, "*")) => Some(format!("{events}/{sys}/enable")),
            Some((sys, name)) => Some(format!("{events}/{sys}/{name}/enable")),
            None if ev == "all" => Some(format!("{events}/enable")),
            None if self.tfs.fs.exists(&format!("{events}/{ev}/enable")) => {
                Some(format!("{events}/{ev}/enable"))
            }
            None => self
                .tfs
                .fs
                .list_dir(&events)?
                .into_iter()
                .map(|sys| format!("{events}/{sys}/{ev}/enable"))
                .find(|p| self.tfs.fs.exists(p)),
        };
        match candidate {
            Some(p) if !ev.is_empty() && !ev.contains("..") && self.tfs.fs.exists(&p) => Ok(p),
            _ => Err(CaptureError::UnknownEvent {
                event: ev.to_string(),
                available: format!("{}/available_events", self.tfs.dir),
            }),
        }
    }

    /// Where this capture records.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The kernel path of the directory being recorded into.
    pub fn dir(&self) -> &str {
        &self.base
    }

    /// Stop recording, save the trace text to `out`, restore tracefs.
    /// Returns the number of bytes saved.
    pub fn finish(mut self, out: &Path) -> Result<u64, CaptureError> {
        let saved = self.stop_and_save(out);
        let restored = self.restore();
        let n = saved?;
        restored?;
        Ok(n)
    }

    /// Stop recording (`tracing_on` 0), keeping the buffer and tracefs as
    /// they are until [`Capture::finish`] or [`Capture::finish_dat`].
    pub fn pause(&self) -> Result<(), CaptureError> {
        Ok(self.tfs.fs.write_raw(&self.path("tracing_on"), "0")?)
    }

    /// Stop recording, save the ring-buffer pages with their formats as a
    /// trace.dat (v6) at `out`, restore tracefs. Returns the bytes saved.
    pub fn finish_dat(self, out: &Path) -> Result<u64, CaptureError> {
        self.finish_dat_as(out, DatVersion::V6)
    }

    /// [`Capture::finish_dat`] writing file version `version`.
    pub fn finish_dat_as(self, out: &Path, version: DatVersion) -> Result<u64, CaptureError> {
        self.finish_raw(|fs, dir, meta| crate::raw::save_dat(fs, dir, meta, out, version))
    }

    /// Start reading the ring-buffer pages while recording (one thread
    /// per CPU, spooled next to `out`), for [`Capture::finish_streamed`].
    pub fn stream_raw(&self, out: &Path) -> Result<crate::raw::RawRecorder, CaptureError> {
        crate::raw::RawRecorder::start(&self.tfs.fs, &self.base, out)
    }

    /// Stop recording, let `rec` drain the rest, save everything it read
    /// as a trace.dat (v6) at `out`, restore tracefs. Returns the bytes.
    pub fn finish_streamed(
        self,
        rec: crate::raw::RawRecorder,
        out: &Path,
    ) -> Result<u64, CaptureError> {
        self.finish_streamed_as(rec, out, DatVersion::V6)
    }

    /// [`Capture::finish_streamed`] writing file version `version`.
    pub fn finish_streamed_as(
        self,
        rec: crate::raw::RawRecorder,
        out: &Path,
        version: DatVersion,
    ) -> Result<u64, CaptureError> {
        self.finish_raw(|_, _, meta| rec.finish(meta, out, version))
    }

    /// Pause, read the formats, `save`, restore (also when saving fails).
    fn finish_raw(
        mut self,
        save: impl FnOnce(
            &KernelFs,
            &str,
            &lever_trace_input::dat::write::DatMeta,
        ) -> Result<lever_trace_input::dat::write::Written, CaptureError>,
    ) -> Result<u64, CaptureError> {
        let saved = (|| {
            self.pause()?;
            let meta = crate::raw::collect_meta(&self.tfs.fs, &self.base, &self.tfs.dir)?;
            save(&self.tfs.fs, &self.base, &meta)
        })();
        let restored = self.restore();
        let w = saved?;
        restored?;
        Ok(w.bytes)
    }

    fn stop_and_save(&mut self, out: &Path) -> Result<u64, CaptureError> {
        self.tfs.fs.write_raw(&self.path("tracing_on"), "0")?;
        let src = self.tfs.host(&self.path("trace"))?;
        let mut input = fs::File::open(&src).map_err(|source| CaptureError::Io {
            path: src.clone(),
            op: "open",
            source,
        })?;
        let mut output = fs::File::create(out).map_err(|source| CaptureError::Io {
            path: out.to_path_buf(),
            op: "create",
            source,
        })?;
        // What the ring buffer overwrote, as header lines the analyzer
        // reads (the kernel's text does not say).
        let mut head = String::new();
        for (cpu, stats) in crate::raw::cpu_stats(&self.tfs.fs, &self.base)? {
            if let Some(n) = crate::raw::overrun(&stats) {
                head += &format!("# lever: cpu {cpu} overrun {n}\n");
            }
        }
        io::Write::write_all(&mut output, head.as_bytes()).map_err(|source| CaptureError::Io {
            path: out.to_path_buf(),
            op: "write",
            source,
        })?;
        let n = head.len() as u64;
        io::copy(&mut input, &mut output)
            .map(|c| c + n)
            .map_err(|source| CaptureError::Io {
                path: out.to_path_buf(),
                op: "copy trace to",
                source,
            })
    }

    /// Put tracefs back as found. Idempotent; also run on drop.
    pub fn restore(&mut self) -> Result<(), CaptureError> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        let fs = &self.tfs.fs;
        match &self.target {
            Target::Instance(dir) => {
                let _ = fs.write_raw(&format!("{dir}/tracing_on"), "0");
                let host = self.tfs.host(dir)?;
                fs::remove_dir(&host).map_err(|source| CaptureError::Io {
                    path: host,
                    op: "remove instance",
                    source,
                })
            }
            Target::TopLevel(saved) => {
                let d = &self.tfs.dir;
                // Stop first, then put back tracer, events and size, and
                // only then the saved tracing_on.
                fs.write_raw(&format!("{d}/tracing_on"), "0")?;
                fs.write(&format!("{d}/current_tracer"), &saved.current_tracer)?;
                let set_event = format!("{d}/set_event");
                fs.write_raw(&set_event, "")?;
                for ev in &saved.enabled_events {
                    // One appending write per event, as `echo ev >> set_event`.
                    let host = self.tfs.host(&set_event)?;
                    fs::OpenOptions::new()
                        .append(true)
                        .open(&host)
                        .and_then(|mut f| {
                            io::Write::write_all(&mut f, format!("{ev}\n").as_bytes())
                        })
                        .map_err(|source| CaptureError::Io {
                            path: host,
                            op: "append to",
                            source,
                        })?;
                }
                // "7 (expanded: 1408)" means never expanded; writing 7 back
                // is the closest the kernel allows.
                let kb = saved
                    .buffer_size_kb
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string();
                if !kb.is_empty() {
                    fs.write(&format!("{d}/buffer_size_kb"), &kb)?;
                }
                fs.write_raw(&format!("{d}/tracing_on"), &saved.tracing_on)?;
                Ok(())
            }
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}
