//! TuneD import: a `tuned.conf` mapped to a Lever profile, naming every
//! section and key that has no Lever equivalent (with its line).
//!
//! TuneD's profile file is INI: `[section]` lines, then `key=value` lines
//! (spaces around `=` allowed), `#` comments. A section is named after its
//! plugin, or carries `type=PLUGIN`. `[variables]` defines `${name}`
//! substitutions; `${f:function:...}` calls TuneD's built-in functions,
//! which Lever does not evaluate. Example input:
//!
//! ```text
//! [main]
//! summary=Low latency for a control loop
//! include=latency-performance
//! [sysctl]
//! kernel.timer_migration=0
//! ```
//!
//! | TuneD | Lever profile |
//! |---|---|
//! | `[main] summary` / `include` | `description` / `include: NAME.yaml` |
//! | `[sysctl] NAME=V` | `sysctl: {NAME: V}`, optional (TuneD skips a missing one); `>V`/`<V` kept |
//! | `[sysfs] /sys/PATH=V` | `sysfs: {/sys/PATH: V}`, optional, globs kept |
//! | `[cpu] governor=A\|B` | `resources: {cpu_governor: A\|B}`, optional (each cluster: the first it offers) |
//! | `[cpu] min_perf_pct`, `max_perf_pct`, `no_turbo` | `sysfs:` under `/sys/devices/system/cpu/intel_pstate/` |
//! | `[vm] transparent_hugepages`, `transparent_hugepage.defrag` | `sysfs:` under `/sys/kernel/mm/transparent_hugepage/` |
//! | `[vm] dirty_*` | `sysctl: {vm.dirty_*: V}` |
//! | `[scheduler] isolated_cores=L` | `rt_cpus: L`, IRQs and workqueues on `{housekeeping}` |
//! | `[bootloader] cmdline=...` | `cmdline:`, one entry per argument (`+` adds, `-` removes) |
//! | a section with `uname_regex`/`cpuinfo_regex` | a `when:` entry |

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// A section or key the import could not map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmapped {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The section, without brackets.
    pub section: String,
    /// The key; `None` for a whole section.
    pub key: Option<String>,
    /// Why.
    pub why: String,
}

impl fmt::Display for Unmapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: [{}]", self.file, self.line, self.section)?;
        if let Some(k) = &self.key {
            write!(f, " {k}")?;
        }
        write!(f, ": {}", self.why)
    }
}

/// The result of an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Imported {
    /// The tuned.conf read.
    pub source: String,
    /// The profile's name (the directory's).
    pub name: String,
    /// The Lever profile, as YAML (unmapped entries listed as comments).
    pub yaml: String,
    /// Settings mapped.
    pub mapped: usize,
    /// What could not be mapped.
    pub unmapped: Vec<Unmapped>,
    /// Where the YAML was written, if not to stdout.
    pub written_to: Option<String>,
}

/// Reading the TuneD profile or writing the Lever one failed.
#[derive(Debug, thiserror::Error)]
pub enum TunedError {
    /// Reading.
    #[error("{}: cannot read TuneD profile: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file has no `[section]` line: not a TuneD profile (every
    /// tuned.conf has `[main]` or a plugin's section).
    #[error("{}: not a TuneD profile (no `[main]` or plugin section such as `[cpu]`)", path.display())]
    NotAProfile {
        /// The file.
        path: PathBuf,
    },
    /// Writing.
    #[error("{}: cannot write the Lever profile: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Import `dir/tuned.conf` (or `dir` itself when it is a file); write the
/// YAML to `output` when given.
pub fn import(dir: &Path, output: Option<&Path>) -> Result<Imported, TunedError> {
    let (file, name_dir) = if dir.is_dir() {
        (dir.join("tuned.conf"), dir.to_path_buf())
    } else {
        (
            dir.to_path_buf(),
            dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
        )
    };
    let text = std::fs::read_to_string(&file).map_err(|source| TunedError::Read {
        path: file.clone(),
        source,
    })?;
    let has_section = text
        .lines()
        .map(str::trim)
        .any(|l| l.len() > 2 && l.starts_with('[') && l.ends_with(']'));
    if !has_section {
        return Err(TunedError::NotAProfile { path: file });
    }
    let name = name_dir
        .canonicalize()
        .unwrap_or(name_dir)
        .file_name()
        .map_or_else(|| "tuned".to_string(), |n| n.to_string_lossy().into_owned());
    let mut imported = convert(&name, &file.display().to_string(), &text);
    if let Some(out) = output {
        std::fs::write(out, &imported.yaml).map_err(|source| TunedError::Write {
            path: out.into(),
            source,
        })?;
        imported.written_to = Some(out.display().to_string());
    }
    Ok(imported)
}

/// Settings of the profile, or of one conditional section.
#[derive(Default)]
struct Block {
    resources: Vec<(String, String)>,
    sysctl: Vec<(String, String)>,
    sysfs: Vec<(String, String)>,
    cmdline: Vec<(String, String)>,
}

/// A section with `uname_regex` / `cpuinfo_regex`: a `when:` entry.
struct Cond {
    section: String,
    uname: Option<String>,
    cpuinfo: Option<String>,
    block: Block,
}

/// The Lever profile being built.
#[derive(Default)]
struct Out {
    description: Option<String>,
    include: Option<String>,
    rt_cpus: Option<String>,
    main: Block,
    when: Vec<Cond>,
    /// Where the section being mapped writes: `None` = `main`, else the
    /// index in `when`.
    into: Option<usize>,
    optional: Vec<String>,
    notes: Vec<String>,
    mapped: usize,
}

impl Out {
    fn block(&mut self) -> &mut Block {
        match self.into {
            Some(i) => &mut self.when[i].block,
            None => &mut self.main,
        }
    }

    fn optional(&mut self, key: &str) {
        if !self.optional.iter().any(|o| o == key) {
            self.optional.push(key.to_string());
        }
    }
}

/// TuneD's unit options that say where a section applies, not what it
/// sets (`uname_regex`/`cpuinfo_regex` become a `when:` entry).
const CONDITIONS: &[&str] = &["uname_regex", "cpuinfo_regex"];

/// One `key=value` line: its line number, key and value.
type KeyValue = (usize, String, String);
/// A `[section]`: its name, the line of its header, its entries.
type Section = (String, usize, Vec<KeyValue>);

/// Map the text of a tuned.conf (pure: no file access).
pub fn convert(name: &str, file: &str, text: &str) -> Imported {
    let mut out = Out::default();
    let mut unmapped = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(sec) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sections.push((sec.trim().to_string(), i + 1, Vec::new()));
            continue;
        }
        let current = sections.last().map_or("(none)".into(), |s| s.0.clone());
        let skip = |why: &str| Unmapped {
            file: file.into(),
            line: i + 1,
            section: current.clone(),
            key: None,
            why: why.into(),
        };
        let Some((k, v)) = line.split_once('=') else {
            unmapped.push(skip("not a `key=value` line"));
            continue;
        };
        match sections.last_mut() {
            Some(s) => {
                s.2.push((i + 1, k.trim().to_string(), v.trim().to_string()))
            }
            None => unmapped.push(skip("a setting before any [section]")),
        }
    }
    // TuneD expands `${name}` anywhere in the profile from every
    // [variables] section, so they are read first. A variable whose own
    // value needs a TuneD function keeps the reason it has no value.
    let mut vars: Vars = Vec::new();
    for (_, _, entries) in sections.iter().filter(|s| s.0 == "variables") {
        for (_, key, value) in entries.iter().filter(|e| e.1 != "include") {
            let v = substitute(value, &vars);
            vars.push((key.clone(), v));
        }
    }
    for (section, line, entries) in &sections {
        let kind = entries
            .iter()
            .find(|(_, k, _)| k == "type")
            .map_or(section.as_str(), |(_, _, v)| v.as_str());
        let miss = |line: usize, key: Option<&str>, why: &str| Unmapped {
            file: file.into(),
            line,
            section: section.clone(),
            key: key.map(str::to_string),
            why: why.into(),
        };
        if entries
            .iter()
            .any(|(_, k, v)| k == "enabled" && v == "false")
        {
            out.notes
                .push(format!("[{section}] is disabled (enabled=false) in TuneD"));
            continue;
        }
        if !matches!(
            kind,
            "main" | "variables" | "sysctl" | "sysfs" | "cpu" | "vm" | "scheduler" | "bootloader"
        ) {
            unmapped.push(miss(
                *line,
                None,
                &format!("TuneD's `{kind}` plugin has no Lever equivalent"),
            ));
            continue;
        }
        out.into = None;
        let conds: Vec<&KeyValue> = entries
            .iter()
            .filter(|(_, k, _)| CONDITIONS.contains(&k.as_str()))
            .collect();
        if !conds.is_empty() {
            if matches!(kind, "main" | "variables" | "scheduler") {
                unmapped.push(miss(
                    *line,
                    None,
                    &format!("a conditional `{kind}` section: Lever conditions only sysctl, sysfs, cpu, vm and bootloader settings"),
                ));
                continue;
            }
            let mut cond = Cond {
                section: section.clone(),
                uname: None,
                cpuinfo: None,
                block: Block::default(),
            };
            let mut bad = None;
            for (l, k, v) in conds {
                match substitute(v, &vars) {
                    Ok(v) if k == "uname_regex" => cond.uname = Some(v),
                    Ok(v) => cond.cpuinfo = Some(v),
                    Err(why) => {
                        bad = Some(miss(
                            *l,
                            Some(k),
                            &format!("the section's condition: {why}"),
                        ))
                    }
                }
            }
            if let Some(bad) = bad {
                unmapped.push(bad);
                continue;
            }
            out.when.push(cond);
            out.into = Some(out.when.len() - 1);
        }
        for (l, key, value) in entries {
            if key == "type"
                || (key == "enabled" && kind != "main")
                || CONDITIONS.contains(&key.as_str())
            {
                continue;
            }
            if kind == "variables" {
                if key == "include" {
                    unmapped.push(miss(
                        *l,
                        Some(key),
                        "variables from another file are not read",
                    ));
                }
                continue;
            }
            // `${f:virt_check:VIRTUAL:BARE}` picks by whether TuneD runs
            // in a virtual machine; a board is bare metal.
            let value = match (kind, key.as_str(), virt_check(value)) {
                ("main", "include", Some((virt, bare))) => {
                    out.notes.push(format!(
                        "include={value}: TuneD includes `{virt}` in a virtual machine and `{bare}` on bare metal; Lever takes `{bare}`"
                    ));
                    Ok(bare.to_string())
                }
                _ => substitute(value, &vars),
            };
            let value = match value {
                Ok(v) => v,
                Err(why) => {
                    unmapped.push(miss(*l, Some(key), &why));
                    continue;
                }
            };
            if let Err(why) = map_one(&mut out, kind, key, &value) {
                unmapped.push(miss(*l, Some(key), &why));
            }
        }
    }
    let yaml = render(name, file, &out, &unmapped);
    Imported {
        source: file.into(),
        name: name.into(),
        yaml,
        mapped: out.mapped,
        unmapped,
        written_to: None,
    }
}

/// `${f:virt_check:A:B}` as `(A, B)`.
fn virt_check(value: &str) -> Option<(&str, &str)> {
    let inner = value
        .trim()
        .strip_prefix("${f:virt_check:")?
        .strip_suffix('}')?;
    let (virt, bare) = inner.split_once(':')?;
    (!virt.contains(['$', ':']) && !bare.contains(['$', ':'])).then_some((virt, bare))
}

/// TuneD's `unquote`: one pair of double quotes around the whole value
/// removed.
fn unquote(v: &str) -> &str {
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(v)
}

/// `[variables]`: each name with its value, or why it has none.
type Vars = Vec<(String, Result<String, String>)>;

/// `${name}` replaced from `[variables]`; `${f:...}` refused.
fn substitute(value: &str, vars: &Vars) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .map(|e| start + e)
            .ok_or_else(|| format!("unclosed `${{` in `{value}`"))?;
        let name = &rest[start + 2..end];
        if name.starts_with("f:") {
            return Err(format!(
                "TuneD function `${{{name}}}` is not evaluated by Lever; write the value out"
            ));
        }
        let v = vars
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .ok_or_else(|| format!("variable `${{{name}}}` is not defined in [variables]"))?;
        let v = v
            .1
            .as_ref()
            .map_err(|why| format!("variable `{name}` has no value Lever can compute: {why}"))?;
        out.push_str(v);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

const PSTATE: &str = "/sys/devices/system/cpu/intel_pstate";
const THP: &str = "/sys/kernel/mm/transparent_hugepage";

fn map_one(out: &mut Out, kind: &str, key: &str, value: &str) -> Result<(), String> {
    let sysfs = |out: &mut Out, path: String| {
        // TuneD globs every sysfs path and writes the nodes that exist.
        out.optional(&path);
        out.block().sysfs.push((path, value.to_string()));
    };
    match (kind, key) {
        ("main", "summary") => {
            out.description = Some(value.into());
            return Ok(());
        }
        ("main", "include") => {
            let mut names = value.split(',').map(str::trim).filter(|n| !n.is_empty());
            let first = names.next().ok_or("empty include")?;
            if names.next().is_some() {
                return Err("includes more than one profile; a Lever profile includes one".into());
            }
            out.include = Some(format!("{first}.yaml"));
            out.notes.push(format!(
                "include `{first}`: import that TuneD profile too, as {first}.yaml next to this file"
            ));
            return Ok(());
        }
        ("sysctl", _) => {
            // TuneD reads each sysctl first and skips (with an error in its
            // log) one the kernel lacks.
            out.optional(key);
            out.block()
                .sysctl
                .push((key.into(), unquote(value).to_string()));
        }
        ("sysfs", _) if key.starts_with("/sys/") => sysfs(out, key.into()),
        ("cpu", "governor") => {
            if value.split('|').any(|g| g.trim().is_empty()) {
                return Err(format!("an empty governor in `{value}`"));
            }
            // TuneD sets the first governor a CPU offers, and leaves CPUs
            // without cpufreq (or without any of them) alone.
            out.optional("cpu_governor");
            if value.contains('|') {
                out.notes.push(format!(
                    "[cpu] governor={value}: each cluster gets the first of them it offers, as in TuneD"
                ));
            }
            out.block()
                .resources
                .push(("cpu_governor".into(), value.replace(' ', "")));
        }
        ("cpu", "min_perf_pct" | "max_perf_pct" | "no_turbo") => {
            sysfs(out, format!("{PSTATE}/{key}"))
        }
        ("cpu", "force_latency") => {
            return Err("a PM QoS request held by an open /dev/cpu_dma_latency; ask the daemon (lever acquire pm_qos_cpu_dma_latency=N)".into())
        }
        ("vm", "transparent_hugepages" | "transparent_hugepage") => {
            sysfs(out, format!("{THP}/enabled"))
        }
        ("vm", "transparent_hugepage.defrag") => sysfs(out, format!("{THP}/defrag")),
        ("vm", k) if k.starts_with("dirty_") => {
            let name = format!("vm.{k}");
            out.optional(&name);
            out.block().sysctl.push((name, value.into()));
        }
        ("scheduler", "isolated_cores") => {
            out.rt_cpus = Some(value.into());
            out.optional("irq_affinity");
            out.optional("workqueue_cpumask");
            out.notes.push("[scheduler] isolated_cores: IRQs and unbound workqueues go to the other CPUs ({housekeeping}); TuneD also moves processes, which profiles do not".into());
        }
        ("bootloader", k) if k == "cmdline" || k.starts_with("cmdline_") => cmdline(out, value)?,
        _ => return Err(format!("no Lever equivalent for `{key}` of TuneD's `{kind}` plugin")),
    }
    out.mapped += 1;
    Ok(())
}

/// `[bootloader] cmdline*=`: `+ARGS` (or plain) adds, `-ARGS` removes
/// arguments added before; `\+`, `\-`, `\\` escape the first character.
fn cmdline(out: &mut Out, value: &str) -> Result<(), String> {
    let (remove, args) = match value.split_at_checked(1) {
        Some(("+", rest)) => (false, rest),
        Some(("-", rest)) => (true, rest),
        Some(("\\", rest)) if rest.starts_with(['\\', '+', '-']) => (false, rest),
        _ => (false, value),
    };
    let list = &mut out.block().cmdline;
    let mut not_here = Vec::new();
    for arg in args.split_whitespace() {
        let (k, v) = arg.split_once('=').unwrap_or((arg, ""));
        if remove {
            let before = list.len();
            list.retain(|(ok, ov)| !(ok == k && ov == v));
            if list.len() == before {
                not_here.push(arg);
            }
        } else {
            list.retain(|(old, _)| old != k);
            list.push((k.into(), v.into()));
        }
    }
    if !not_here.is_empty() {
        return Err(format!(
            "removes `{}` from the command line other profiles add; a Lever profile cannot remove an included argument",
            not_here.join(" ")
        ));
    }
    Ok(())
}

/// `resources:`, `sysctl:`, `sysfs:`, `cmdline:` of one block, indented.
fn block(y: &mut String, indent: &str, b: &Block) {
    for (key, list) in [
        ("resources", &b.resources),
        ("sysctl", &b.sysctl),
        ("sysfs", &b.sysfs),
        ("cmdline", &b.cmdline),
    ] {
        if list.is_empty() {
            continue;
        }
        y.push_str(&format!("{indent}{key}:\n"));
        for (k, v) in list {
            y.push_str(&format!("{indent}  {}: {}\n", scalar(k), scalar(v)));
        }
    }
}

/// A YAML scalar: plain when safe, else double-quoted (JSON escaping is
/// valid YAML).
fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-,".contains(c))
        && !s.starts_with(['-', '.', ','])
        && s.parse::<f64>().is_err();
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

fn render(name: &str, file: &str, out: &Out, unmapped: &[Unmapped]) -> String {
    let mut y =
        format!("# Imported from the TuneD profile {file} by `lever profile import-tuned`.\n");
    for n in &out.notes {
        y.push_str(&format!("# note: {n}\n"));
    }
    for u in unmapped {
        y.push_str(&format!("# not mapped: {u}\n"));
    }
    y.push_str(&format!("profile: {}\n", scalar(name)));
    let desc = out
        .description
        .clone()
        .unwrap_or_else(|| format!("TuneD profile {name}"));
    y.push_str(&format!("description: {}\n", scalar(&desc)));
    y.push_str(&format!("seed: {}\n", scalar(&format!("TuneD {file}"))));
    if let Some(inc) = &out.include {
        y.push_str(&format!("include: {}\n", scalar(inc)));
    }
    if let Some(rt) = &out.rt_cpus {
        y.push_str(&format!("rt_cpus: {}\n", scalar(rt)));
        y.push_str("irq_affinity: { cpus: \"{housekeeping}\" }\n");
        y.push_str("workqueue_cpumask: \"{housekeeping}\"\n");
    }
    block(&mut y, "", &out.main);
    if !out.when.is_empty() {
        y.push_str("when:\n");
        for c in &out.when {
            y.push_str(&format!("  # [{}]\n", c.section));
            let mut first = true;
            for (key, re) in [("uname_regex", &c.uname), ("cpuinfo_regex", &c.cpuinfo)] {
                if let Some(re) = re {
                    let dash = if first { "- " } else { "  " };
                    first = false;
                    y.push_str(&format!("  {dash}{key}: {}\n", scalar(re)));
                }
            }
            block(&mut y, "    ", &c.block);
        }
    }
    if !out.optional.is_empty() {
        y.push_str("# TuneD skips what a kernel lacks (sysctls, sysfs nodes, cpufreq, intel_pstate,\n# transparent hugepages, /proc/irq, the workqueue mask): skipped here too, and said so\noptional:\n");
        for o in &out.optional {
            y.push_str(&format!("  - {}\n", scalar(o)));
        }
    }
    y
}
