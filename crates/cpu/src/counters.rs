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
use crate::pmu::{ArchEvent, CpuPmu, Source, CYCLES, INSTRUCTIONS};

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
    /// Where each counter was opened; empty for perf's generic events.
    sources: Vec<Source>,
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
        if !self.sources.is_empty() {
            let labels: Vec<String> = self.sources.iter().map(Source::label).collect();
            count.via = Some(labels.join(" + "));
        }
        Ok(count)
    }

    /// True when every counter is a raw Arm event its PMU does not list
    /// (see [`crate::pmu`]): a 0 from it means "not implemented".
    fn only_unlisted_raw(&self) -> bool {
        !self.sources.is_empty() && self.sources.iter().all(|s| matches!(s, Source::Raw { .. }))
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
    /// Why `cycles`/`instructions` did not open, per event.
    hardware_missing: Vec<(&'static str, String)>,
    chain: Vec<(ChainEvent, Open)>,
    chain_notes: Vec<String>,
    software: Vec<Open>,
    user_space_only: bool,
    /// The CPU PMUs, for the verdict on raw events that counted 0.
    pmus: Vec<CpuPmu>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field(
                "chain",
                &self.chain.iter().map(|(e, _)| e.name).collect::<Vec<_>>(),
            )
            .field("hardware", &self.hardware_missing.is_empty())
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

/// The event of `source` on its PMU: its `type`, and `config*` from its
/// `format/` fields set as the `events/` file (or the raw number) says.
/// Format fields the event does not name are 0, as perf leaves them (the
/// Arm PMUv3's `long`, `config1:0`); a parameter the user must give
/// (`field=?`) is refused.
pub fn pmu_event(fs: &KernelFs, source: &Source) -> io::Result<Dynamic> {
    let dir = match source {
        Source::Named { dir, .. } | Source::Raw { dir, .. } => dir,
    };
    let host = fs
        .resolve(dir)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut db = Dynamic::builder(host)?;
    match source {
        Source::Named { event, .. } => {
            let file = format!("{dir}/events/{event}");
            let text = fs
                .read(&file)
                .map_err(|e| io::Error::new(io::ErrorKind::NotFound, e.to_string()))?;
            if text.contains("=?") {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{file} ({text}) needs a parameter Lever does not give"),
                ));
            }
            db.event(event.as_str())?;
        }
        Source::Raw { number, .. } => {
            db.field("event", u64::from(*number))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        }
    }
    let unset: Vec<String> = db.params().map(str::to_string).collect();
    for field in unset {
        db.field(&field, 0)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    }
    db.build()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Open `sources`, one counter each; the ones that failed are described.
fn open_sources(
    fs: &KernelFs,
    name: &str,
    sources: Vec<Source>,
    user_only: &mut bool,
    failed: &mut Vec<String>,
) -> Option<Open> {
    let mut counters = Vec::new();
    let mut opened = Vec::new();
    for s in sources {
        match open_one(|| pmu_event(fs, &s).map(Builder::new), user_only) {
            Ok(c) => {
                counters.push(c);
                opened.push(s);
            }
            Err(e) => failed.push(format!("{} ({name}): {e}", s.label())),
        }
    }
    (!counters.is_empty()).then(|| Open {
        name: name.to_string(),
        counters,
        sources: opened,
    })
}

/// ENOENT, EOPNOTSUPP, ENODEV: the PMU has no such event (not a refusal).
fn no_such_event(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(2 | 95 | 19))
}

impl Session {
    /// Open `cycles`, `instructions` and whatever chain events the PMU has.
    ///
    /// Where perf's generic `cycles`/`instructions` do not open but the
    /// kernel lists a CPU PMU, the PMU's own events are tried, by sysfs
    /// name, then by Arm event number ([`crate::pmu`]).
    pub fn open(fs: &KernelFs) -> Result<Session, NotCountable> {
        if !fs.is_system() {
            return Err(NotCountable::NotTheRunningKernel {
                root: fs.root().display().to_string(),
            });
        }
        let mut user_only = false;
        type Make<'a> = &'a dyn Fn() -> io::Result<Builder<'static>>;
        let generic = |event: &'static str, make: Make<'_>, user_only: &mut bool| {
            open_one(make, user_only).map(|c| Open {
                name: event.to_string(),
                counters: vec![c],
                sources: Vec::new(),
            })
        };
        let cpu_pmus = crate::pmu::cpu_pmus(fs);
        let mut hw_errors = Vec::new();
        let mut hardware_missing = Vec::new();
        let mut hardware = |arch: &ArchEvent, which: Hardware, user_only: &mut bool| {
            let err = match generic(arch.perf_name, &|| Ok(Builder::new(which)), user_only) {
                Ok(o) => return Some(o),
                Err(e) => e,
            };
            if cpu_pmus.is_empty() || !no_such_event(&err) {
                hw_errors.push((arch.perf_name, err));
                return None;
            }
            // A PMU is there; perf's generic event is not mapped on it.
            let sources = crate::pmu::sources(&cpu_pmus, arch.sysfs_names, Some(arch.arm_number));
            if sources.is_empty() {
                hardware_missing.push((arch.perf_name, crate::pmu::no_source(&cpu_pmus, arch)));
                return None;
            }
            let mut failed = Vec::new();
            let open = open_sources(fs, arch.perf_name, sources, user_only, &mut failed);
            if open.is_none() {
                hardware_missing.push((
                    arch.perf_name,
                    format!(
                        "the kernel maps no `{}` to this CPU's PMU (perf_event_open: {err}) \
                         and its own events did not open: {}",
                        arch.perf_name,
                        failed.join("; ")
                    ),
                ));
            }
            open
        };
        let instructions = hardware(&INSTRUCTIONS, Hardware::INSTRUCTIONS, &mut user_only);
        let cycles = hardware(&CYCLES, Hardware::CPU_CYCLES, &mut user_only);
        let mut software = Vec::new();
        let mut sw_failed = Vec::new();
        for (event, which) in SOFTWARE_EVENTS {
            match generic(event, &|| Ok(Builder::new(which)), &mut user_only) {
                Ok(o) => software.push(o),
                Err(e) => sw_failed.push((event, e)),
            }
        }
        if software.is_empty() && instructions.is_none() && cycles.is_none() {
            let (event, e) = sw_failed.swap_remove(0);
            return Err(NotCountable::NoCounter {
                event,
                reason: explain(&e, fs),
            });
        }
        for (event, e) in &hw_errors {
            hardware_missing.push((event, explain(e, fs)));
        }
        let mut chain = Vec::new();
        let mut missing = Vec::new();
        let mut failed = Vec::new();
        for event in CACHE_CHAIN {
            let sources = crate::pmu::sources(&cpu_pmus, &[event.name], Some(event.arm_number));
            // A PMU outside the CPU list (a vendor PMU without `cpus`)
            // that names the event is used too.
            let mut sources = sources;
            for dir in pmus_with_event(fs, event.name) {
                if !sources
                    .iter()
                    .any(|s| format!("{EVENT_SOURCES}/{}", s.pmu()) == dir)
                {
                    let pmu = dir.rsplit('/').next().unwrap_or_default().to_string();
                    sources.push(Source::Named {
                        pmu,
                        dir,
                        event: event.name.to_string(),
                    });
                }
            }
            if sources.is_empty() {
                missing.push(event.name);
                continue;
            }
            if let Some(open) = open_sources(fs, event.name, sources, &mut user_only, &mut failed) {
                chain.push((*event, open));
            }
        }
        let mut chain_notes = Vec::new();
        if !missing.is_empty() {
            chain_notes.push(format!(
                "no PMU under {EVENT_SOURCES} defines {} (the seed's Arm cache events)",
                missing.join(", ")
            ));
        }
        if !failed.is_empty() {
            chain_notes.push(format!("could not open {}", failed.join("; ")));
        }
        if let Some(sw) = missing_note(
            &sw_failed
                .iter()
                .map(|(event, e)| (*event, explain(e, fs)))
                .collect::<Vec<_>>(),
        ) {
            chain_notes.push(format!("software counters: {sw}"));
        }
        Ok(Session {
            cycles,
            instructions,
            hardware_missing,
            chain,
            chain_notes,
            software,
            user_space_only: user_only,
            pmus: cpu_pmus,
        })
    }

    fn all(&mut self) -> impl Iterator<Item = &mut Open> {
        [&mut self.cycles, &mut self.instructions]
            .into_iter()
            .flatten()
            .chain(self.chain.iter_mut().map(|(_, o)| o))
            .chain(self.software.iter_mut())
    }

    /// Which hardware counters are missing and why (`None` when both
    /// opened). Raw events found missing only when counted are added by
    /// [`Session::finish`].
    pub fn hardware_note(&self) -> Option<String> {
        missing_note(&self.hardware_missing)
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
        let software = self
            .software
            .iter_mut()
            .map(Open::read)
            .collect::<Result<Vec<_>, _>>()?;
        let mut cycles = self.cycles.as_mut().map(Open::read).transpose()?;
        let mut instructions = self.instructions.as_mut().map(Open::read).transpose()?;
        // What the command did while counted, for the verdict on a raw
        // event that counted 0.
        let mut ran = Vec::new();
        if let Some(ns) = software
            .iter()
            .find(|c| c.name == "task-clock")
            .and_then(|c| c.count)
        {
            ran.push(format!(
                "the command ran {:.3} ms on a CPU",
                ns as f64 / 1e6
            ));
        }
        let ran_with = |other: &Option<EventCount>| {
            let mut r = ran.clone();
            if let Some(n) = other.as_ref().and_then(|c| c.count).filter(|n| *n > 0) {
                let name = other.as_ref().map_or("", |c| c.name.as_str());
                r.push(format!("{name} counted {n}"));
            }
            if r.is_empty() {
                "the command ran".to_string()
            } else {
                r.join(" and ")
            }
        };
        let lacking = |open: &Option<Open>, count: &Option<EventCount>| {
            open.as_ref().is_some_and(Open::only_unlisted_raw)
                && count.as_ref().and_then(|c| c.count) == Some(0)
        };
        let pmus_of = |open: &Open| -> Vec<&CpuPmu> {
            self.pmus
                .iter()
                .filter(|p| open.sources.iter().any(|s| s.pmu() == p.name))
                .collect()
        };
        let mut missing = self.hardware_missing.clone();
        if let Some(open) = self
            .instructions
            .as_ref()
            .filter(|_| lacking(&self.instructions, &instructions))
        {
            let text = crate::pmu::not_implemented(
                &pmus_of(open),
                INSTRUCTIONS.perf_name,
                INSTRUCTIONS.arm_name,
                INSTRUCTIONS.arm_number,
                &ran_with(&cycles),
            );
            missing.push((INSTRUCTIONS.perf_name, text));
        }
        if let Some(open) = self
            .cycles
            .as_ref()
            .filter(|_| lacking(&self.cycles, &cycles))
        {
            let text = crate::pmu::not_implemented(
                &pmus_of(open),
                CYCLES.perf_name,
                CYCLES.arm_name,
                CYCLES.arm_number,
                &ran_with(&instructions),
            );
            missing.push((CYCLES.perf_name, text));
        }
        if missing.iter().any(|(e, _)| *e == INSTRUCTIONS.perf_name) {
            instructions = None;
        }
        if missing.iter().any(|(e, _)| *e == CYCLES.perf_name) {
            cycles = None;
        }
        let mut chain = Vec::new();
        let mut not_counted = Vec::new();
        let chain_ran = ran_with(&cycles);
        for (event, open) in &mut self.chain {
            let count = open.read()?;
            if open.only_unlisted_raw() && count.count == Some(0) {
                not_counted.push(format!(
                    "{} ({} {:#06x})",
                    event.name, event.arm_name, event.arm_number
                ));
                continue;
            }
            chain.push((*event, count));
        }
        let mut chain_notes = std::mem::take(&mut self.chain_notes);
        if !not_counted.is_empty() {
            let names: Vec<&str> = self
                .pmus
                .iter()
                .filter(|p| p.arm_pmuv3)
                .map(|p| p.name.as_str())
                .collect();
            chain_notes.push(format!(
                "this CPU model does not implement {}: {} does not list them (events/ follows the CPU's PMCEID registers) and their raw events counted 0 while {chain_ran}",
                not_counted.join(", "),
                names.join(", "),
            ));
        }
        let mut report = ipc::report(
            cycles,
            instructions,
            self.user_space_only,
            chain,
            (!chain_notes.is_empty()).then(|| chain_notes.join("; ")),
        );
        report.hardware_note = missing_note(&missing);
        report.software = software;
        Ok(report)
    }
}

/// "`cycles`, `instructions`: <why>" for the counters that did not open,
/// grouped by explanation; `None` when all opened.
fn missing_note(missing: &[(&'static str, String)]) -> Option<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (event, why) in missing {
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

    /// The Arm PMUv3's `format/` as Linux 6.1 has it: `long` (config1:0)
    /// is not in any event file and must be 0, not a missing parameter.
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "riscv64"
    ))]
    fn arm_pmu(tree: &lever_testkit::FakeTree) -> String {
        let d = format!("{EVENT_SOURCES}/armv8_pmuv3");
        tree.node(&format!("{d}/type"), "8\n");
        tree.node(&format!("{d}/cpus"), "0-1\n");
        tree.node(&format!("{d}/format/event"), "config:0-15\n");
        tree.node(&format!("{d}/format/long"), "config1:0\n");
        tree.node(&format!("{d}/events/cpu_cycles"), "event=0x0011\n");
        tree.node(&format!("{d}/events/odd"), "event=0x0011,long=?\n");
        d
    }

    // Where perf-event2 has bindings: elsewhere (32-bit ARM) every event
    // fails to open, which `no_perf` says, and there is no attr to check.
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "riscv64"
    ))]
    #[test]
    fn pmu_events_by_name_and_raw_number() {
        let tree = lever_testkit::FakeTree::new();
        let dir = arm_pmu(&tree);
        let fs = tree.fs();
        let named = Source::Named {
            pmu: "armv8_pmuv3".into(),
            dir: dir.clone(),
            event: "cpu_cycles".into(),
        };
        let ev = format!("{:?}", pmu_event(fs, &named).unwrap());
        assert!(
            ev.contains("ty: 8") && ev.contains("config: 17") && ev.contains("config1: 0"),
            "{ev}"
        );
        let raw = Source::Raw {
            pmu: "armv8_pmuv3".into(),
            dir: dir.clone(),
            number: 0x4009,
        };
        let ev = format!("{:?}", pmu_event(fs, &raw).unwrap());
        assert!(
            ev.contains("config: 16393") && ev.contains("config1: 0"),
            "{ev}"
        );
        let param = Source::Named {
            pmu: "armv8_pmuv3".into(),
            dir,
            event: "odd".into(),
        };
        let err = pmu_event(fs, &param).unwrap_err().to_string();
        assert!(
            err.contains("events/odd") && err.contains("needs a parameter"),
            "{err}"
        );
    }

    #[test]
    fn notes_group_events_by_reason() {
        let note = missing_note(&[
            (
                "instructions",
                "this CPU model does not implement INST_RETIRED".into(),
            ),
            ("cycles", "x".into()),
        ])
        .unwrap();
        assert_eq!(
            note,
            "instructions cannot be counted here because this CPU model does not implement \
             INST_RETIRED; cycles cannot be counted here because x"
        );
        assert_eq!(missing_note(&[]), None);
    }
}
