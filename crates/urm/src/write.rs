//! Writing the merged URM configuration as a Lever target file (the
//! format of `docs/targets.md` and `docs/usecases.md`), warning about
//! everything that is not carried over as written.

use crate::read::{self, At, UrmResource, UrmSignal};
use crate::{Config, Warning};
use lever_targets::Cluster;
use lever_tasks::CgroupKnob;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Lever's major for URM resource type 0 (`0x30`..`0x3F` hold types 0..15).
const URM_MAJOR: u32 = 0x30;

/// A URM resource as the writer placed it.
enum Placed {
    /// A Lever resource: its template name and what it expands over.
    Node {
        name: String,
        apply: String,
        low: Option<i64>,
        high: Option<i64>,
        /// URM's `Unit` factor: the value written is the value times this.
        factor: i64,
    },
    /// A cgroup file Lever's task rules write (a use case's `cgroups:`).
    Cgroup(CgroupKnob),
    /// Any other cgroup value file: one Lever resource per cgroup.
    PerCgroup {
        /// Cgroup ID → the resource's name.
        names: Vec<(u32, String)>,
        /// URM's `Unit` factor.
        factor: i64,
        /// The value is a set of CPUs.
        cpus: bool,
    },
}

/// Lever opcodes for URM codes: ResType 0..=0xE with ResID 0..=0xFF keep
/// their numbers (major `0x30 + ResType`, minor ResID); any other code is
/// given the next free minor of major 0x3F, in file order; the instances
/// of cgroup resources (one per cgroup) take its minors from 0xFF down, so
/// they do not move the others.
struct Opcodes {
    next_spare: u32,
    /// One past the next minor from the top (0x100 at first).
    next_top: u32,
}

impl Opcodes {
    fn get(&mut self, res_type: u32, res_id: u32) -> Option<u32> {
        if res_type <= 0xE && res_id <= 0xFF {
            Some(0x4000_0000 | (URM_MAJOR + res_type) << 22 | res_id << 14)
        } else {
            self.spare()
        }
    }

    /// The next free minor of major 0x3F from the bottom.
    fn spare(&mut self) -> Option<u32> {
        if self.next_spare >= self.next_top {
            return None;
        }
        self.next_spare += 1;
        Some(Self::spare_opcode(self.next_spare - 1))
    }

    /// The next free minor of major 0x3F from the top (cgroup instances).
    fn top(&mut self) -> Option<u32> {
        if self.next_spare >= self.next_top {
            return None;
        }
        self.next_top -= 1;
        Some(Self::spare_opcode(self.next_top))
    }

    fn spare_opcode(minor: u32) -> u32 {
        0x4000_0000 | (URM_MAJOR + 0xF) << 22 | minor << 14
    }
}

/// One Lever resource as the target file declares it.
struct Declared<'a> {
    name: &'a str,
    opcode: u32,
    per: &'a str,
    node: &'a str,
    kind: &'a str,
    unit: &'a str,
    low: i64,
    high: i64,
    aggregation: &'a str,
    system: bool,
    description: String,
}

impl Declared<'_> {
    fn write(&self, y: &mut String) {
        let _ = writeln!(y, "  - name: {}", self.name);
        let _ = writeln!(y, "    opcode: 0x{:08X}", self.opcode);
        if self.per != "none" {
            let _ = writeln!(y, "    per: {}", self.per);
        }
        if self.kind != "plain" {
            let _ = writeln!(y, "    kind: {}", self.kind);
        }
        let _ = writeln!(y, "    node: {}", quote(self.node));
        let _ = writeln!(y, "    unit: {}", quote(self.unit));
        let _ = writeln!(y, "    low: {}", self.low);
        let _ = writeln!(y, "    high: {}", self.high);
        let _ = writeln!(y, "    aggregation: {}", self.aggregation);
        let _ = writeln!(
            y,
            "    permission: {}",
            if self.system { "system" } else { "third-party" }
        );
        let _ = writeln!(y, "    optional: true");
        let _ = writeln!(y, "    description: {}", quote(&self.description));
    }
}

/// Lever's aggregation for URM's `Policy`, with a warning where the two
/// differ or the declared policy looks wrong (it is honoured as declared).
fn aggregation(r: &UrmResource, warn: &mut dyn FnMut(&str, String)) -> &'static str {
    match r.policy.as_str() {
        "higher_is_better" => "max",
        "lower_is_better" => {
            if is_floor(r) {
                warn("Policy", "lower_is_better on a floor (a minimum frequency or uclamp min): the lowest request wins, so any small request undoes a boost; imported as declared (aggregation: min), check the configuration".into());
            }
            "min"
        }
        "instant_apply" => "newest",
        "lazy_apply" => {
            warn("Policy", "lazy_apply (URM keeps the first request until it ends) is imported as aggregation: oldest".into());
            "oldest"
        }
        "pass_through_append" => {
            warn("Policy", "pass_through_append (URM appends every request to the node) is imported as aggregation: newest".into());
            "newest"
        }
        _ => {
            warn("Policy", "pass_through (URM writes every request as it comes) is imported as aggregation: newest".into());
            "newest"
        }
    }
}

/// A kHz node (cpufreq, a devfreq in kHz): URM's `Hz` on it is wrong.
fn khz_node(path: &str) -> bool {
    path.contains("/cpufreq/") && path.contains("_freq")
}

fn ident(text: &str, sep: char) -> String {
    let s: String = text
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { sep })
        .collect();
    let s = s.trim_matches(sep).to_string();
    if s.is_empty() {
        "unnamed".into()
    } else {
        s
    }
}

fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A path (or a cgroup floor) that is a performance floor: a higher value
/// is a bigger boost, so the highest request must win.
fn is_floor(r: &UrmResource) -> bool {
    let p = format!("{} {}", r.path.as_deref().unwrap_or(""), r.name).to_lowercase();
    [
        "min_freq",
        "uclamp.min",
        "uclamp_min",
        "util_clamp_min",
        "min_pwrlevel_freq",
    ]
    .iter()
    .any(|w| p.contains(w))
}

pub(crate) fn target(
    cfg: &Config,
    name: &str,
    files: &[String],
    discovered: &[Cluster],
    warnings: &mut Vec<Warning>,
    codes: &mut Vec<lever_protocol::UrmCode>,
) -> String {
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# Imported from a URM configuration by `lever target import-urm`:"
    );
    for f in files {
        let _ = writeln!(y, "#   {f}");
    }
    let _ = writeln!(y, "target: {}", ident(name, '-'));
    let _ = writeln!(
        y,
        "description: Imported from URM ({} resources, {} signals, {} apps)",
        cfg.resources.len(),
        cfg.signals.len(),
        cfg.apps.len()
    );

    // Clusters: URM's ClusterMap (logical id, type) paired in order with
    // the board's cpufreq policies.
    let mut map = cfg.init.clusters.clone();
    map.sort();
    let clusters: Vec<Cluster> = if map.is_empty() {
        discovered.to_vec()
    } else {
        if map.len() != discovered.len() {
            warnings.push(Warning {
                file: files.last().cloned().unwrap_or_default(),
                line: 1,
                field: "InitConfigs.ClusterMap".into(),
                message: format!(
                    "URM names {} clusters, the board has {} cpufreq policies; the first {} are paired",
                    map.len(),
                    discovered.len(),
                    map.len().min(discovered.len())
                ),
                count: 1,
            });
        }
        map.iter()
            .zip(discovered)
            .map(|((id, ty), c)| Cluster {
                name: ident(ty, '_'),
                id: *id,
                ..c.clone()
            })
            .collect()
    };
    if !clusters.is_empty() {
        let _ = writeln!(y, "clusters:");
        for c in &clusters {
            let _ = writeln!(
                y,
                "  - {{ name: {}, id: {}, policy: {}, cpus: \"{}\" }}",
                c.name,
                c.id,
                c.policy,
                c.cpus
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
    }

    let mut placed: BTreeMap<u32, Placed> = BTreeMap::new();
    let _ = writeln!(y, "resources:");
    let mut names: Vec<String> = Vec::new();
    let mut opcodes = Opcodes {
        next_spare: 0,
        next_top: 0x100,
    };
    for r in &cfg.resources {
        let i = r.index;
        let field = |k: &str| format!("ResourceConfigs[{i}].{k}");
        let code = r.res_type << 16 | r.res_id;
        let warn =
            |w: &mut Vec<Warning>, k: &str, m: String| w.push(Warning::new(&r.at, &field(k), m));
        for (k, line) in &r.ignored {
            let at = At {
                file: r.at.file.clone(),
                line: *line,
            };
            warnings.push(Warning::new(
                &at,
                &field(k),
                format!("{k} is not imported: Lever applies a resource whatever the display state"),
            ));
        }
        if r.res_type == 0 {
            warn(
                warnings,
                "ResType",
                "ResType 0 is URM's mark of an invalid resource, which URM drops; left out".into(),
            );
            continue;
        }
        if !r.supported {
            warn(
                warnings,
                "Supported",
                "Supported is not true; URM drops the resource and so does the import".into(),
            );
            continue;
        }
        if !r.targets_enabled.is_empty() {
            warn(warnings, "TargetsEnabled", format!("URM uses this resource only on targets {:?} (its machine name); Lever imports it for this board", r.targets_enabled));
        }
        if !r.targets_disabled.is_empty() {
            warn(warnings, "TargetsDisabled", format!("URM drops this resource on targets {:?} (its machine name); Lever imports it for this board", r.targets_disabled));
        }
        let Some(path) = &r.path else {
            warn(
                warnings,
                "Path",
                format!(
                    "no Path (a URM extension's custom resource); code 0x{code:08X} is left out"
                ),
            );
            continue;
        };
        let factor = r
            .unit
            .as_deref()
            .and_then(|u| read::UNITS.iter().find(|(w, _)| *w == u))
            .map(|(_, f)| *f)
            .unwrap_or(1);
        if r.apply_type == "cgroup" {
            let file = path.rsplit('/').next().unwrap_or("");
            // A use case's `cgroups:` settings (signals) take the files
            // Lever's task rules write.
            let knob = CgroupKnob::from_file(file).filter(|_| factor == 1);
            if let Some(k) = knob {
                placed.insert(code, Placed::Cgroup(k));
            }
            // tuneResources takes every value file: one resource per cgroup.
            match file {
                "cgroup.procs" | "cgroup.threads" => warn(
                    warnings,
                    "Path",
                    format!("`{file}` moves a process or thread into a cgroup: through tuneResources Lever moves nothing (a use case's or app's thread rule does, and restores it); left out of tuneResources"),
                ),
                "cpuset.cpus.partition" => warn(
                    warnings,
                    "Path",
                    "`cpuset.cpus.partition` takes a word (member, root, isolated), not URM's number; left out of tuneResources".into(),
                ),
                _ if !path.contains("%s") => warn(
                    warnings,
                    "Path",
                    format!("`{path}` has no %s for the cgroup's name; left out"),
                ),
                _ => {
                    let mut w = |k: &str, m: String| warnings.push(Warning::new(&r.at, &field(k), m));
                    let aggregation = aggregation(r, &mut w);
                    let cpus = file == "cpuset.cpus" || file == "cpuset.cpus.exclusive";
                    let all_cpus = clusters
                        .iter()
                        .flat_map(|c| c.cpus.iter())
                        .filter(|&&c| c < 63)
                        .fold(0i64, |m, c| m | 1 << c);
                    let range = match (r.low, r.high) {
                        (Some(l), Some(h)) if !cpus => Some((l.min(h) * factor, l.max(h) * factor)),
                        _ => None,
                    };
                    let (low, high) = match range {
                        Some(lh) => lh,
                        None if cpus => (0, if all_cpus == 0 { i64::MAX } else { all_cpus }),
                        None => (i64::from(i32::MIN) * factor, i64::from(i32::MAX) * factor),
                    };
                    let unit = if cpus {
                        "cpus"
                    } else if factor == 1024 {
                        "bytes"
                    } else {
                        "count"
                    };
                    let mut per_cgroup = Vec::new();
                    for (id, cg) in &cfg.init.cgroups {
                        let Some(opcode) = opcodes.top() else {
                            warn(warnings, "ResID", format!("cgroup {cg}: more than 256 URM resources outside ResType 0..=0xE, ResID 0..=0xFF or per cgroup; left out"));
                            continue;
                        };
                        let mut tname = format!("{}_{}", ident(if r.name.is_empty() { "cgroup" } else { &r.name }, '_'), ident(cg, '_'));
                        if names.contains(&tname) {
                            tname = format!("{tname}_{code:x}");
                        }
                        names.push(tname.clone());
                        per_cgroup.push((*id, tname.clone()));
                        let node = path.replace("%s", cg);
                        Declared {
                            name: &tname,
                            opcode,
                            per: "none",
                            node: &node,
                            kind: if cpus { "cpulist" } else { "plain" },
                            unit,
                            low,
                            high,
                            aggregation,
                            system: r.system,
                            description: format!(
                                "URM {} of cgroup {cg} (ID {id}; code 0x{code:08X}, Values [{id}, VALUE]; {}:{})",
                                r.name, r.at.file, r.at.line
                            ),
                        }
                        .write(&mut y);
                        codes.push(lever_protocol::UrmCode {
                            code,
                            opcode,
                            per: lever_protocol::UrmPer::Cgroup,
                            factor,
                            range,
                            cgroup: Some(*id),
                            cpus,
                        });
                    }
                    if knob.is_none() && !per_cgroup.is_empty() {
                        placed.insert(
                            code,
                            Placed::PerCgroup {
                                names: per_cgroup,
                                factor,
                                cpus,
                            },
                        );
                    }
                }
            }
            continue;
        }
        let (per, node) = match r.apply_type.as_str() {
            "cluster" => ("cluster", path.replace("%d", "{policy}")),
            "core" => ("cpu", path.replace("%d", "{cpu}")),
            _ => ("none", path.clone()),
        };
        if per != "none" && clusters.is_empty() {
            warn(
                warnings,
                "ApplyType",
                format!(
                    "ApplyType {} needs the board's clusters (none found under --root); left out",
                    r.apply_type
                ),
            );
            continue;
        }
        if node.contains('%') {
            warn(
                warnings,
                "Path",
                format!(
                    "`{path}` has a placeholder Lever cannot fill for ApplyType {} (URM fills it from a second value); left out",
                    r.apply_type
                ),
            );
            continue;
        }
        let Some(opcode) = opcodes.get(r.res_type, r.res_id) else {
            warn(warnings, "ResID", format!("code 0x{code:08X}: more than 256 URM resources outside ResType 0..=0xE, ResID 0..=0xFF; left out"));
            continue;
        };
        let mut tname = ident(
            if r.name.is_empty() {
                "resource"
            } else {
                &r.name
            },
            '_',
        );
        if names.contains(&tname) {
            tname = format!("{tname}_{code:x}");
        }
        names.push(tname.clone());
        // A declared policy is honoured as declared.
        let aggregation = aggregation(r, &mut |k: &str, m: String| {
            warnings.push(Warning::new(&r.at, &field(k), m))
        });
        let unit = match r.unit.as_deref() {
            None | Some("NA") | Some("na") => "count".to_string(),
            Some("Hz") | Some("hz") if khz_node(path) => {
                warn(warnings, "Unit", format!("Unit {} on a kHz node: URM writes the value as given (factor 1), so the value is in kHz; imported as unit kHz", r.unit.as_deref().unwrap_or_default()));
                "kHz".into()
            }
            Some("KHz") | Some("khz") => "kHz".into(),
            Some("KB") | Some("kb") => "KiB".into(),
            Some(u) => u.to_string(),
        };
        if factor != 1 {
            warn(warnings, "Unit", format!("URM multiplies a value by {factor} ({}) before writing it: signal values and thresholds are imported multiplied; a client of the URM API gives the unmultiplied value", r.unit.as_deref().unwrap_or_default()));
        }
        // URM checks a value against the thresholds only when both are given.
        let (low, high) = match (r.low, r.high) {
            (Some(l), Some(h)) => (Some(l.min(h) * factor), Some(l.max(h) * factor)),
            (l, h) => {
                if l.is_some() != h.is_some() {
                    warn(warnings, if l.is_some() { "LowThreshold" } else { "HighThreshold" }, "only one threshold given: URM checks values only when both are, so no range is imported".into());
                }
                (None, None)
            }
        };
        Declared {
            name: &tname,
            opcode,
            per,
            node: &node,
            kind: "plain",
            unit: &unit,
            // Without both thresholds URM takes any 32-bit value.
            low: low.unwrap_or(i64::from(i32::MIN) * factor),
            high: high.unwrap_or(i64::from(i32::MAX) * factor),
            aggregation,
            system: r.system,
            description: format!(
                "URM {} (ResType 0x{:X}, ResID 0x{:X}, code 0x{code:08X}; {}:{})",
                r.name, r.res_type, r.res_id, r.at.file, r.at.line
            ),
        }
        .write(&mut y);
        codes.push(lever_protocol::UrmCode {
            code,
            opcode,
            per: match per {
                "cluster" => lever_protocol::UrmPer::Cluster,
                "cpu" => lever_protocol::UrmPer::Cpu,
                _ => lever_protocol::UrmPer::None,
            },
            factor,
            range: low.zip(high),
            cgroup: None,
            cpus: false,
        });
        placed.insert(
            code,
            Placed::Node {
                name: tname,
                apply: r.apply_type.clone(),
                low,
                high,
                factor,
            },
        );
    }
    if names.is_empty() {
        // A target file needs `resources:`; an empty list is one.
        y.push_str("  []\n");
        y = y.replace("resources:\n  []\n", "resources: []\n");
    }

    let signals = usecases(cfg, &clusters, &placed, warnings);
    if !signals.is_empty() {
        y.push_str("usecases:\n");
        y.push_str(&signals);
    }
    apps(cfg, &mut y, warnings);
    y
}

/// Settings of one signal entry, as YAML lines at `indent`.
fn settings(
    s: &UrmSignal,
    cfg: &Config,
    clusters: &[Cluster],
    placed: &BTreeMap<u32, Placed>,
    warnings: &mut Vec<Warning>,
    indent: &str,
) -> String {
    let i = s.index;
    let mut nodes: Vec<(String, String)> = Vec::new();
    let mut cgroups: Vec<(String, CgroupKnob, String)> = Vec::new();
    for (j, r) in s.resources.iter().enumerate() {
        let at = At {
            file: s.at.file.clone(),
            line: r.line,
        };
        let field = format!("SignalConfigs[{i}].Resources[{j}]");
        let mut warn = |m: String| warnings.push(Warning::new(&at, &field, m));
        if r.values.is_empty() {
            warn("Values is empty; left out".into());
            continue;
        }
        if r.values.iter().any(Option::is_none) {
            warn(format!(
                "\"%d\" is a value the client gives at run time (tuneSignal's list); Lever's use cases have fixed values; ResCode 0x{:08X} left out",
                r.code
            ));
            continue;
        }
        let values: Vec<i64> = r.values.iter().flatten().copied().collect();
        match placed.get(&r.code) {
            None => warn(format!(
                "ResCode 0x{:08X} is not an imported resource; left out",
                r.code
            )),
            Some(Placed::Cgroup(knob)) => {
                // URM: Values[0] is the cgroup ID, the rest the value;
                // cpuset.cpus takes a CPU per value.
                if values.len() < 2 {
                    warn("a cgroup resource takes [CGROUP_ID, VALUE...]; one value given, which URM ignores; left out".into());
                    continue;
                }
                let id = values[0];
                let Some((_, cg)) = cfg.init.cgroups.iter().find(|(x, _)| i64::from(*x) == id)
                else {
                    warn(format!(
                        "Values[0] {id} is not a cgroup ID of InitConfig's CgroupsInfo; left out"
                    ));
                    continue;
                };
                let v = if *knob == CgroupKnob::CpusetCpus {
                    values[1..]
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                } else {
                    if values.len() > 2 {
                        warn(format!("{} values given: URM's writer takes exactly [CGROUP_ID, VALUE] and ignores the entry; left out", values.len()));
                        continue;
                    }
                    values[1].to_string()
                };
                if let Some(why) = knob.check(&v) {
                    warn(format!("{why}; left out"));
                    continue;
                }
                cgroups.push((cg.clone(), *knob, v));
            }
            Some(Placed::PerCgroup {
                names,
                factor,
                cpus,
            }) => {
                // URM: Values[0] is the cgroup ID, the rest the value (a
                // CPU per value for a set of CPUs).
                let Some((&id, rest)) = values.split_first().filter(|(_, r)| !r.is_empty()) else {
                    warn("a cgroup resource takes [CGROUP_ID, VALUE...]; one value given, which URM ignores; left out".into());
                    continue;
                };
                let Some((_, name)) = names.iter().find(|(g, _)| i64::from(*g) == id) else {
                    warn(format!(
                        "Values[0] {id} is not a cgroup ID of InitConfig's CgroupsInfo; left out"
                    ));
                    continue;
                };
                let v = if *cpus {
                    let list: Vec<String> = rest.iter().map(|c| c.to_string()).collect();
                    match lever_text::cpu_list_mask(&list.join(",")) {
                        Some(mask) => quote(&lever_text::mask_cpu_list(mask)),
                        None => {
                            warn(format!(
                                "CPUs {} are not CPUs 0 to 62; left out",
                                list.join(",")
                            ));
                            continue;
                        }
                    }
                } else {
                    if rest.len() > 1 {
                        warn(format!("{} values given: URM's writer takes exactly [CGROUP_ID, VALUE] and ignores the entry; left out", values.len()));
                        continue;
                    }
                    (rest[0] * factor).to_string()
                };
                match nodes.iter_mut().find(|(n, _)| n == name) {
                    Some(n) => n.1 = v,
                    None => nodes.push((name.clone(), v)),
                }
            }
            Some(Placed::Node {
                name,
                apply,
                low,
                high,
                factor,
            }) => {
                // URM's global writer: with two values, the second is the
                // value (the first fills a `%d` of the path); otherwise the
                // first.
                let first = if apply == "global" && values.len() == 2 {
                    warn(format!("2 values given: URM writes the second ({}) to this node, its path filled with the first ({}); so does Lever", values[1], values[0]));
                    values[1]
                } else {
                    if values.len() > 1 {
                        warn(format!(
                            "{} values given; URM writes the first ({}) to this node, so does Lever",
                            values.len(),
                            values[0]
                        ));
                    }
                    values[0]
                };
                // URM's ResInfo: bits 15..8 logical cluster, 7..0 core.
                let cluster = (r.info >> 8) & 0xFF;
                let core = r.info & 0xFF;
                let logical = || clusters.get(cluster as usize);
                let full: Vec<String> = match apply.as_str() {
                    "cluster" => match logical() {
                        Some(c) => vec![format!("{name}.{}", c.name)],
                        None => {
                            warn(format!("ResInfo 0x{:08X}: logical cluster {cluster} is not on this board ({} clusters); left out", r.info, clusters.len()));
                            continue;
                        }
                    },
                    "core" => match logical() {
                        Some(c) if core == 0 => {
                            c.cpus.iter().map(|n| format!("{name}.cpu{n}")).collect()
                        }
                        Some(c) => match c.cpus.get(core as usize - 1) {
                            Some(n) => vec![format!("{name}.cpu{n}")],
                            None => {
                                warn(format!("ResInfo 0x{:08X}: cluster {cluster} has {} cores, not a core {core}; left out", r.info, c.cpus.len()));
                                continue;
                            }
                        },
                        None => {
                            warn(format!("ResInfo 0x{:08X}: logical cluster {cluster} is not on this board ({} clusters); left out", r.info, clusters.len()));
                            continue;
                        }
                    },
                    _ => vec![name.clone()],
                };
                let value = first * factor;
                let v = match (low, high) {
                    (Some(l), Some(h)) => value.clamp(*l, *h),
                    _ => value,
                };
                if v != value {
                    warn(format!(
                        "value {value} is outside the thresholds {}..{}; clamped to {v}",
                        low.unwrap_or_default(),
                        high.unwrap_or_default()
                    ));
                }
                for f in full {
                    match nodes.iter_mut().find(|(n, _)| *n == f) {
                        Some(n) => n.1 = v.to_string(),
                        None => nodes.push((f, v.to_string())),
                    }
                }
            }
        }
    }
    let mut y = String::new();
    if !nodes.is_empty() {
        let _ = writeln!(y, "{indent}resources:");
        for (n, v) in &nodes {
            let _ = writeln!(y, "{indent}  {n}: {v}");
        }
    }
    if !cgroups.is_empty() {
        let _ = writeln!(y, "{indent}cgroups:");
        let mut seen: Vec<&str> = Vec::new();
        for (cg, _, _) in &cgroups {
            if seen.contains(&cg.as_str()) {
                continue;
            }
            seen.push(cg);
            let _ = writeln!(y, "{indent}  {cg}:");
            for (_, k, v) in cgroups.iter().filter(|(c, _, _)| c == cg) {
                let _ = writeln!(y, "{indent}    {}: \"{v}\"", k.file());
            }
        }
    }
    y
}

/// The use case id of a URM signal: its code `Category << 16 | SigId`,
/// with a non-zero `SigType` in bits 31..24 (URM keys a signal by code and
/// SigType; the code's top byte is always 0).
pub(crate) fn usecase_id(s: &UrmSignal) -> u32 {
    (s.sig_type & 0xFF) << 24 | s.category << 16 | s.sig_id
}

fn usecases(
    cfg: &Config,
    clusters: &[Cluster],
    placed: &BTreeMap<u32, Placed>,
    warnings: &mut Vec<Warning>,
) -> String {
    // One use case per (Category, SigId, SigType), as URM keys them;
    // entries with ExtraAttrs are its variants.
    let mut order: Vec<u32> = Vec::new();
    for s in &cfg.signals {
        if s.sig_type > 0xFF {
            warnings.push(Warning::new(
                &s.at,
                &format!("SignalConfigs[{}].SigType", s.index),
                format!(
                    "SigType {} does not fit the use case id's top byte (0..=255); left out",
                    s.sig_type
                ),
            ));
            continue;
        }
        let id = usecase_id(s);
        if !order.contains(&id) {
            order.push(id);
        }
    }
    let mut y = String::new();
    let mut used: Vec<String> = Vec::new();
    for id in order {
        let entries: Vec<&UrmSignal> = cfg
            .signals
            .iter()
            .filter(|s| s.sig_type <= 0xFF && usecase_id(s) == id)
            .collect();
        let base = entries
            .iter()
            .find(|s| !s.has_attrs)
            .copied()
            .unwrap_or(entries[0]);
        let bi = base.index;
        for s in &entries {
            for (k, line) in &s.ignored {
                let at = At {
                    file: s.at.file.clone(),
                    line: *line,
                };
                warnings.push(Warning::new(
                    &at,
                    &format!("SignalConfigs[{}].{k}", s.index),
                    format!("{k} is not imported: Lever target files have no per-target lists or derivatives"),
                ));
            }
        }
        if !base.enable {
            warnings.push(Warning::new(
                &base.at,
                &format!("SignalConfigs[{bi}].Enable"),
                "Enable is not true; the signal is left out (URM's parser reads Enable but registers the signal anyway)",
            ));
            continue;
        }
        let mut name = ident(
            if base.name.is_empty() {
                "signal"
            } else {
                &base.name
            },
            '-',
        );
        if used.contains(&name) {
            name = format!("{name}-{id:x}");
        }
        used.push(name.clone());
        if !base.timeout_given {
            warnings.push(Warning::new(
                &base.at,
                &format!("SignalConfigs[{bi}].Timeout"),
                "no Timeout: URM's default is 1 ms, imported as duration 1",
            ));
        }
        let duration = match base.timeout_ms {
            t if t > 0 => t,
            -1 => 0,
            t => {
                warnings.push(Warning::new(
                    &base.at,
                    &format!("SignalConfigs[{bi}].Timeout"),
                    format!("Timeout {t}: Lever's 0 means until released; imported as 0"),
                ));
                0
            }
        };
        let base_settings = if base.has_attrs {
            String::new()
        } else {
            settings(base, cfg, clusters, placed, warnings, "    ")
        };
        let mut variants = String::new();
        let mut whens: Vec<String> = Vec::new();
        for s in entries.iter().filter(|s| s.has_attrs) {
            let field = format!("SignalConfigs[{}].ExtraAttrs", s.index);
            if let Some((src, _)) = &s.mm_src {
                warnings.push(Warning::new(&s.at, &field, format!("MmSrc `{src}` is not matched: Lever picks a variant by fps, width and height")));
            }
            let when: Vec<String> = s.attrs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            if whens.contains(&when.join(", ")) {
                warnings.push(Warning::new(&s.at, &field, "the same fps, width and height as an earlier variant (they differ in MmSrc only); left out"));
                continue;
            }
            if when.is_empty() {
                warnings.push(Warning::new(
                    &s.at,
                    &field,
                    "ExtraAttrs with no Fps, Width or Height: nothing to pick it by; left out",
                ));
                continue;
            }
            let vname: Vec<String> = s
                .attrs
                .iter()
                .map(|(k, v)| format!("{}{v}", &k[..1]))
                .collect();
            let body = settings(s, cfg, clusters, placed, warnings, "        ");
            if body.is_empty() {
                continue;
            }
            whens.push(when.join(", "));
            let _ = writeln!(variants, "      - name: {}", vname.join("-"));
            let _ = writeln!(variants, "        when: {{ {} }}", when.join(", "));
            variants.push_str(&body);
        }
        if base_settings.is_empty() && variants.is_empty() {
            warnings.push(Warning::new(
                &base.at,
                &format!("SignalConfigs[{bi}].Resources"),
                "none of its resources was imported; the signal is left out",
            ));
            continue;
        }
        let _ = writeln!(y, "  - name: {name}");
        let _ = writeln!(y, "    id: 0x{id:08X}");
        let _ = writeln!(
            y,
            "    description: {}",
            quote(&format!(
                "URM signal {} (Category 0x{:X}, SigId 0x{:X}, SigType {}; {}:{})",
                base.name, base.category, base.sig_id, base.sig_type, base.at.file, base.at.line
            ))
        );
        let _ = writeln!(y, "    duration: {duration}");
        let _ = writeln!(
            y,
            "    permission: {}",
            if base.system_only {
                "system"
            } else {
                "third-party"
            }
        );
        y.push_str(&base_settings);
        if !variants.is_empty() {
            y.push_str("    variants:\n");
            y.push_str(&variants);
        }
    }
    y
}

fn apps(cfg: &Config, y: &mut String, warnings: &mut Vec<Warning>) {
    if cfg.apps.is_empty() {
        return;
    }
    // URM only considers processes with a tty or a display.
    y.push_str("app_filter:\n  require_tty_or_display: true\n");
    y.push_str("apps:\n");
    let mut used: Vec<String> = Vec::new();
    // URM moves a detected app into its focused cgroup (ID 4 by default).
    let focused = cfg
        .init
        .cgroups
        .iter()
        .find(|(id, _)| *id == 4)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| "urm.slice/focused.apps".to_string());
    for a in &cfg.apps {
        let i = a.index;
        let mut usecases = Vec::new();
        for code in &a.signals {
            // A signal left out above is named here too.
            let found = cfg
                .signals
                .iter()
                .find(|s| s.sig_type == 0 && (s.category << 16 | s.sig_id) == *code && s.enable);
            match found {
                Some(_) => usecases.push(format!("\"0x{code:08X}\"")),
                None => warnings.push(Warning::new(
                    &a.at,
                    &format!("PerAppConfigs[{i}].Configurations"),
                    format!("signal 0x{code:08X} is not an imported use case; left out"),
                )),
            }
        }
        let mut name = ident(&a.app, '-');
        if used.contains(&name) {
            name = format!("{name}-{i}");
        }
        used.push(name.clone());
        let _ = writeln!(y, "  - name: {name}");
        let _ = writeln!(y, "    exec: {}", quote(&a.app));
        if !usecases.is_empty() {
            let _ = writeln!(y, "    usecases: [{}]", usecases.join(", "));
        }
        let _ = writeln!(y, "    move_to: {}", quote(&focused));
        let mut rules = Vec::new();
        for (comm, id) in &a.threads {
            match cfg.init.cgroups.iter().find(|(x, _)| x == id) {
                Some((_, cg)) => rules.push(format!(
                    "      - {{ comm: {}, cgroup: {} }}",
                    quote(comm),
                    quote(cg)
                )),
                None => warnings.push(Warning::new(
                    &a.at,
                    &format!("PerAppConfigs[{i}].Threads"),
                    format!("thread `{comm}`: cgroup ID {id} is not in InitConfig's CgroupsInfo; left out"),
                )),
            }
        }
        if !rules.is_empty() {
            let _ = writeln!(y, "    threads:");
            for r in rules {
                let _ = writeln!(y, "{r}");
            }
        }
    }
}
