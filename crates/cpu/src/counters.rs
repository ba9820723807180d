//! Counting a command with `perf_event_open(2)` — what `perf stat -e
//! cycles,instructions` does in seed 000 §7.1 — through the `perf-event2`
//! crate, whose safe API keeps the syscall's `unsafe` out of Lever.
//!
//! How: every counter observes this process with `inherit` set, starts
//! disabled, is enabled right before the command is spawned and disabled
//! after it exits. Children inherit counters at fork and fold their counts
//! back into ours when they exit, so the counts cover the whole command
//! (plus Lever's own few hundred instructions of spawn and wait). Kernel
//! mode is counted when `perf_event_paranoid` allows it, else user space
//! only (said in the report).
//!
//! The cache-miss chain of seed 000 §7.2 uses PMU-specific events. They are
//! found the way `perf` finds them: a PMU directory
//! `/sys/bus/event_source/devices/<pmu>/` whose `events/<name>` exists
//! (e.g. `armv8_pmuv3_0/events/l2d_cache_lmiss_rd` = `event=0x4009`). On
//! big.LITTLE parts each cluster type has its own PMU; the event is opened
//! on every PMU that has it and the counts are added.
//!
//! Without a PMU (most VMs, some SoCs' kernels) the hardware counters do
//! not open; the session then says which are missing and why, and still
//! counts the software events every perf-enabled kernel has (`task-clock`,
//! `context-switches`, `cpu-migrations`, `page-faults`), as `perf stat`
//! does.
//!
//! Counting needs the running kernel: with a `--root` other than `/` (a
//! simulated or copied tree) there is nothing to count, and
//! [`Session::open`] says so.

use std::io;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
use crate::no_perf::{
    events::{Dynamic, Hardware, Software},
    Builder, Counter,
};
use lever_kernel::{paths, KernelFs};
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
use perf_event::events::{Dynamic, Hardware, Software};
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
use perf_event::{Builder, Counter};

use crate::ipc::{self, ChainEvent, EventCount, IpcReport, CACHE_CHAIN};

/// Where PMUs are listed.
pub const EVENT_SOURCES: &str = "/sys/bus/event_source/devices";

/// Why a command cannot be counted here.
#[derive(Debug, thiserror::Error)]
pub enum NotCountable {
    /// The root is not the running system.
    #[error("counting needs the running kernel's PMU; --root {root} is a file tree, not a kernel")]
    NotTheRunningKernel {
        /// The root given.
        root: String,
    },
    /// The kernel refused to open any counter, software ones included.
    #[error("`{event}` cannot be counted here because {reason}")]
    NoCounter {
        /// Event name.
        event: &'static str,
        /// Precise explanation (errno, PMUs, paranoid level).
        reason: String,
    },
}

/// An error while reading counters that were open.
#[derive(Debug, thiserror::Error)]
#[error("perf counter `{event}`: {op} failed: {source}")]
pub struct CounterError {
    /// Event name.
    pub event: String,
    /// `enable`, `disable` or `read`.
    pub op: &'static str,
    /// The errno.
    pub source: io::Error,
}

struct Open {
    name: String,
    counters: Vec<Counter>,
}

impl Open {
    fn each(
        &mut self,
        op: &'static str,
        f: fn(&mut Counter) -> io::Result<()>,
    ) -> Result<(), CounterError> {
        for c in &mut self.counters {
            f(c).map_err(|source| CounterError {
                event: self.name.clone(),
                op,
                source,
            })?;
        }
        Ok(())
    }

    /// Sum of the (scaled) counts of every PMU's counter.
    fn read(&mut self) -> Result<EventCount, CounterError> {
        let (mut raw, mut enabled, mut running, mut scaled, mut never_ran) =
            (0u64, 0, 0, 0u64, false);
        for c in &mut self.counters {
            let data = c.read_full().map_err(|source| CounterError {
                event: self.name.clone(),
                op: "read",
                source,
            })?;
            let en = data.time_enabled().map_or(0, |d| d.as_nanos() as u64);
            let run = data.time_running().map_or(0, |d| d.as_nanos() as u64);
            raw += data.count();
            enabled = enabled.max(en);
            running = running.max(run);
            match ipc::scale(data.count(), en, run) {
                Some(v) => scaled += v,
                None => never_ran = true,
            }
        }
        let mut count = EventCount::new(&self.name, raw, enabled, running);
        count.count = if never_ran && scaled == 0 {
            None
        } else {
            Some(scaled)
        };
        Ok(count)
    }
}

/// The software events counted everywhere, in `perf stat`'s order.
pub const SOFTWARE_EVENTS: [(&str, Software); 4] = [
    ("task-clock", Software::TASK_CLOCK),
    ("context-switches", Software::CONTEXT_SWITCHES),
    ("cpu-migrations", Software::CPU_MIGRATIONS),
    ("page-faults", Software::PAGE_FAULTS),
];

/// Open counters, ready to count one command.
pub struct Session {
    cycles: Option<Open>,
    instructions: Option<Open>,
    hardware_note: Option<String>,
    chain: Vec<(ChainEvent, Open)>,
    chain_note: Option<String>,
    software: Vec<Open>,
    user_space_only: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field(
                "chain",
                &self.chain.iter().map(|(e, _)| e.name).collect::<Vec<_>>(),
            )
            .field("hardware", &self.hardware_note.is_none())
            .field("user_space_only", &self.user_space_only)
            .finish()
    }
}

fn configure(b: &mut Builder<'_>, user_only: bool) {
    b.inherit(true).enabled(false).exclude_kernel(user_only);
}

/// Open one counter: kernel + user when allowed, else user only.
fn open_one<F>(make: F, user_only: &mut bool) -> io::Result<Counter>
where
    F: Fn() -> io::Result<Builder<'static>>,
{
    let mut b = make()?;
    configure(&mut b, *user_only);
    match b.build() {
        Ok(c) => Ok(c),
        Err(e) if !*user_only && matches!(e.raw_os_error(), Some(1 | 13)) => {
            let mut b = make()?;
            configure(&mut b, true);
            let c = b.build()?;
            *user_only = true;
            Ok(c)
        }
        Err(e) => Err(e),
    }
}

/// PMUs the kernel lists, for explanations.
pub fn pmus(fs: &KernelFs) -> Vec<String> {
    fs.list_dir(EVENT_SOURCES).unwrap_or_default()
}

/// Explain an errno from `perf_event_open` in the machine's terms.
pub fn explain(err: &io::Error, fs: &KernelFs) -> String {
    let pmu_list = pmus(fs);
    let pmus_text = if pmu_list.is_empty() {
        format!("{EVENT_SOURCES} lists no PMU")
    } else {
        format!("{EVENT_SOURCES} lists only {}", pmu_list.join(", "))
    };
    let paranoid_path = format!("{}/perf_event_paranoid", paths::SYSCTL_KERNEL);
    let paranoid = fs.read_optional(&paranoid_path).ok().flatten();
    match err.raw_os_error() {
        Some(2) | Some(95) | Some(19) => format!(
            "the kernel exposes no hardware counter (perf_event_open: {err}); {pmus_text} \
             — typical of a VM without a virtual PMU"
        ),
        Some(1) | Some(13) => format!(
            "perf_event_open was refused ({err}); {paranoid_path} is {}: run as root or lower it",
            paranoid.as_deref().unwrap_or("unreadable")
        ),
        Some(38) => format!("the kernel was built without CONFIG_PERF_EVENTS (perf_event_open: {err})"),
        _ => match paranoid {
            None => format!(
                "perf_event_open failed ({err}) and {paranoid_path} is missing: no perf events in this kernel"
            ),
            Some(_) => format!("perf_event_open failed: {err}; {pmus_text}"),
        },
    }
}

/// The PMU directories (kernel paths) that define `event`.
pub fn pmus_with_event(fs: &KernelFs, event: &str) -> Vec<String> {
    pmus(fs)
        .into_iter()
        .map(|p| format!("{EVENT_SOURCES}/{p}"))
        .filter(|dir| fs.exists(&format!("{dir}/events/{event}")))
        .collect()
}

fn dynamic(fs: &KernelFs, pmu_dir: &str, event: &str) -> io::Result<Builder<'static>> {
    let host = fs
        .resolve(pmu_dir)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut db = Dynamic::builder(host)?;
    db.event(event)?;
    let ev = db
        .build()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    Ok(Builder::new(ev))
}

impl Session {
    /// Open `cycles`, `instructions` and whatever chain events the PMU has.
    pub fn open(fs: &KernelFs) -> Result<Session, NotCountable> {
        if !fs.is_system() {
            return Err(NotCountable::NotTheRunningKernel {
                root: fs.root().display().to_string(),
            });
        }
        let mut user_only = false;
        type Make<'a> = &'a dyn Fn() -> io::Result<Builder<'static>>;
        let mut open = |event: &'static str, make: Make<'_>| {
            open_one(make, &mut user_only)
                .map(|c| Open {
                    name: event.to_string(),
                    counters: vec![c],
                })
                .map_err(|e| (event, e))
        };
        let mut hw_failed = Vec::new();
        let mut hw = |event, which: Hardware| match open(event, &|| Ok(Builder::new(which))) {
            Ok(o) => Some(o),
            Err(f) => {
                hw_failed.push(f);
                None
            }
        };
        let instructions = hw("instructions", Hardware::INSTRUCTIONS);
        let cycles = hw("cycles", Hardware::CPU_CYCLES);
        let mut software = Vec::new();
        let mut sw_failed = Vec::new();
        for (event, which) in SOFTWARE_EVENTS {
            match open(event, &|| Ok(Builder::new(which))) {
                Ok(o) => software.push(o),
                Err(f) => sw_failed.push(f),
            }
        }
        if software.is_empty() && instructions.is_none() && cycles.is_none() {
            let (event, e) = sw_failed.swap_remove(0);
            return Err(NotCountable::NoCounter {
                event,
                reason: explain(&e, fs),
            });
        }
        let hardware_note = missing_note(&hw_failed, fs);
        let mut chain = Vec::new();
        let mut missing = Vec::new();
        let mut failed = Vec::new();
        for event in CACHE_CHAIN {
            let dirs = pmus_with_event(fs, event.name);
            if dirs.is_empty() {
                missing.push(event.name);
                continue;
            }
            let mut counters = Vec::new();
            for dir in &dirs {
                match open_one(|| dynamic(fs, dir, event.name), &mut user_only) {
                    Ok(c) => counters.push(c),
                    Err(e) => failed.push(format!("{} on {dir}: {e}", event.name)),
                }
            }
            if !counters.is_empty() {
                chain.push((
                    *event,
                    Open {
                        name: event.name.to_string(),
                        counters,
                    },
                ));
            }
        }
        let mut notes = Vec::new();
        if !missing.is_empty() {
            notes.push(format!(
                "no PMU under {EVENT_SOURCES} defines {} (the seed's Arm cache events)",
                missing.join(", ")
            ));
        }
        if !failed.is_empty() {
            notes.push(format!("could not open {}", failed.join("; ")));
        }
        if let Some(sw) = missing_note(&sw_failed, fs) {
            notes.push(format!("software counters: {sw}"));
        }
        Ok(Session {
            cycles,
            instructions,
            hardware_note,
            chain,
            chain_note: (!notes.is_empty()).then(|| notes.join("; ")),
            software,
            user_space_only: user_only,
        })
    }

    fn all(&mut self) -> impl Iterator<Item = &mut Open> {
        [&mut self.cycles, &mut self.instructions]
            .into_iter()
            .flatten()
            .chain(self.chain.iter_mut().map(|(_, o)| o))
            .chain(self.software.iter_mut())
    }

    /// Which hardware counters are missing and why (`None` with a PMU).
    pub fn hardware_note(&self) -> Option<&str> {
        self.hardware_note.as_deref()
    }

    /// Enable every counter; call right before spawning the command.
    pub fn start(&mut self) -> Result<(), CounterError> {
        for o in self.all() {
            o.each("reset", Counter::reset)?;
            o.each("enable", Counter::enable)?;
        }
        Ok(())
    }

    /// Disable the counters and build the report; call after the command
    /// exited (so its counts were folded back into ours).
    pub fn finish(mut self) -> Result<IpcReport, CounterError> {
        for o in self.all() {
            o.each("disable", Counter::disable)?;
        }
        let cycles = self.cycles.as_mut().map(Open::read).transpose()?;
        let instructions = self.instructions.as_mut().map(Open::read).transpose()?;
        let mut chain = Vec::new();
        for (event, open) in &mut self.chain {
            chain.push((*event, open.read()?));
        }
        let software = self
            .software
            .iter_mut()
            .map(Open::read)
            .collect::<Result<Vec<_>, _>>()?;
        let mut report = ipc::report(
            cycles,
            instructions,
            self.user_space_only,
            chain,
            self.chain_note,
        );
        report.hardware_note = self.hardware_note;
        report.software = software;
        Ok(report)
    }
}

/// "`cycles`, `instructions`: <why>" for the counters that did not open,
/// grouped by explanation; `None` when all opened.
fn missing_note(failed: &[(&'static str, io::Error)], fs: &KernelFs) -> Option<String> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (event, e) in failed {
        let why = explain(e, fs);
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, events)) => events.push(event),
            None => groups.push((why, vec![event])),
        }
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(why, events)| format!("{} cannot be counted here because {why}", events.join(", ")))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_tree_is_not_countable() {
        let tree = lever_testkit::FakeTree::new();
        let err = Session::open(tree.fs()).unwrap_err();
        assert!(matches!(err, NotCountable::NotTheRunningKernel { .. }));
        assert!(err.to_string().contains("not a kernel"));
    }

    #[test]
    fn explanations_name_the_machine() {
        let tree = lever_testkit::FakeTree::with(&[
            (&format!("{EVENT_SOURCES}/software/type"), "1\n"),
            (&format!("{EVENT_SOURCES}/tracepoint/type"), "2\n"),
            ("/proc/sys/kernel/perf_event_paranoid", "2\n"),
        ]);
        let fs = tree.fs();
        let enoent = io::Error::from_raw_os_error(2);
        let text = explain(&enoent, fs);
        assert!(text.contains("lists only software, tracepoint"), "{text}");
        assert!(text.contains("no hardware counter"), "{text}");
        let eacces = io::Error::from_raw_os_error(13);
        assert!(explain(&eacces, fs).contains("perf_event_paranoid is 2"));
    }

    #[test]
    fn chain_events_found_per_pmu() {
        let tree = lever_testkit::FakeTree::new();
        for pmu in ["armv8_cortex_a55", "armv8_cortex_a78"] {
            tree.node(
                &format!("{EVENT_SOURCES}/{pmu}/events/l2d_cache_lmiss_rd"),
                "event=0x4009\n",
            );
        }
        tree.node(&format!("{EVENT_SOURCES}/software/type"), "1\n");
        let fs = tree.fs();
        assert_eq!(
            pmus_with_event(fs, "l2d_cache_lmiss_rd"),
            vec![
                format!("{EVENT_SOURCES}/armv8_cortex_a55"),
                format!("{EVENT_SOURCES}/armv8_cortex_a78")
            ]
        );
        assert!(pmus_with_event(fs, "ll_cache_miss_rd").is_empty());
    }
}
