//! Writing the merged URM configuration as a Lever target file (the
//! format of `docs/targets.md` and `docs/usecases.md`), warning about
//! everything that is not carried over as written.

use crate::read::{At, UrmResource, UrmSignal};
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
        low: i64,
        high: i64,
    },
    /// A cgroup file.
    Cgroup(CgroupKnob),
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
    for (i, r) in cfg.resources.iter().enumerate() {
        let field = |k: &str| format!("ResourceConfigs[{i}].{k}");
        let code = r.res_type << 16 | r.res_id;
        let warn =
            |w: &mut Vec<Warning>, k: &str, m: String| w.push(Warning::new(&r.at, &field(k), m));
        for (k, line) in &r.ignored {
            let at = At {
                file: r.at.file.clone(),
                line: *line,
            };
            warnings.push(Warning::new(&at, &field(k), format!("{k} is not imported: Lever has no display modes or per-target lists in a target file")));
        }
        if !r.supported {
            warn(
                warnings,
                "Supported",
                "Supported: false; the resource is left out".into(),
            );
            continue;
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
        if r.apply_type == "cgroup" {
            let file = path.rsplit('/').next().unwrap_or("");
            match CgroupKnob::from_file(file) {
                Some(k) => {
                    placed.insert(code, Placed::Cgroup(k));
                }
                None => warn(
                    warnings,
                    "Path",
                    format!("cgroup file `{file}` is not one Lever writes; left out"),
                ),
            }
            continue;
        }
        if r.res_type > 0xF || r.res_id > 0xFF {
            warn(warnings, "ResID", format!("code 0x{code:08X} does not fit Lever's opcode layout (ResType <= 0xF, ResID <= 0xFF); left out"));
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
                    "`{path}` has a placeholder Lever cannot fill for ApplyType {}; left out",
                    r.apply_type
                ),
            );
            continue;
        }
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
        let aggregation = match r.policy.as_str() {
            "higher_is_better" => "max",
            "lower_is_better" if is_floor(r) => {
                warn(warnings, "Policy", "lower_is_better on a floor (a minimum frequency or uclamp min) makes the lowest request win, so any small request undoes a boost: a URM configuration bug; imported as aggregation: max".into());
                "max"
            }
            "lower_is_better" => "min",
            "instant_apply" => "newest",
            "lazy_apply" => {
                warn(warnings, "Policy", "lazy_apply (the first request is kept until it ends) is imported as aggregation: oldest".into());
                "oldest"
            }
            _ => {
                warn(warnings, "Policy", "pass_through (every request written as it comes) is imported as aggregation: newest".into());
                "newest"
            }
        };
        let unit = match r.unit.as_deref() {
            None => "count".to_string(),
            Some("KHz") | Some("khz") => "kHz".into(),
            Some(u) => u.to_string(),
        };
        let (low, high) = (r.low.min(r.high), r.low.max(r.high));
        let opcode = 0x4000_0000 | (URM_MAJOR + r.res_type) << 22 | r.res_id << 14;
        let _ = writeln!(y, "  - name: {tname}");
        let _ = writeln!(y, "    opcode: 0x{opcode:08X}");
        if per != "none" {
            let _ = writeln!(y, "    per: {per}");
        }
        let _ = writeln!(y, "    node: {}", quote(&node));
        let _ = writeln!(y, "    unit: {}", quote(&unit));
        let _ = writeln!(y, "    low: {low}");
        let _ = writeln!(y, "    high: {high}");
        let _ = writeln!(y, "    aggregation: {aggregation}");
        let _ = writeln!(
            y,
            "    permission: {}",
            if r.system { "system" } else { "third-party" }
        );
        let _ = writeln!(y, "    optional: true");
        let _ = writeln!(
            y,
            "    description: {}",
            quote(&format!(
                "URM {} (ResType 0x{:X}, ResID 0x{:X}, code 0x{code:08X}; {}:{})",
                r.name, r.res_type, r.res_id, r.at.file, r.at.line
            ))
        );
        placed.insert(
            code,
            Placed::Node {
                name: tname,
                apply: r.apply_type.clone(),
                low,
                high,
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
    i: usize,
    cfg: &Config,
    clusters: &[Cluster],
    placed: &BTreeMap<u32, Placed>,
    warnings: &mut Vec<Warning>,
    indent: &str,
) -> String {
    let mut nodes: Vec<(String, i64)> = Vec::new();
    let mut cgroups: Vec<(String, CgroupKnob, String)> = Vec::new();
    for (j, r) in s.resources.iter().enumerate() {
        let at = At {
            file: s.at.file.clone(),
            line: r.line,
        };
        let field = format!("SignalConfigs[{i}].Resources[{j}]");
        let mut warn = |m: String| warnings.push(Warning::new(&at, &field, m));
        let Some(&value) = r.values.first() else {
            warn("Values is empty; left out".into());
            continue;
        };
        if r.values.len() > 1 {
            warn(format!(
                "{} values given; Lever sets one per resource, the first ({value}) is used",
                r.values.len()
            ));
        }
        match placed.get(&r.code) {
            None => warn(format!(
                "ResCode 0x{:08X} is not an imported resource; left out",
                r.code
            )),
            Some(Placed::Cgroup(knob)) => {
                let Some((_, cg)) = cfg.init.cgroups.iter().find(|(id, _)| *id == r.info) else {
                    warn(format!(
                        "ResInfo {} is not a cgroup ID of InitConfig's CgroupsInfo; left out",
                        r.info
                    ));
                    continue;
                };
                let v = value.to_string();
                if let Some(why) = knob.check(&v) {
                    warn(format!("{why}; left out"));
                    continue;
                }
                cgroups.push((format!("lever/{}", ident(cg, '-')), *knob, v));
            }
            Some(Placed::Node {
                name,
                apply,
                low,
                high,
            }) => {
                let full = match apply.as_str() {
                    "cluster" => match clusters.iter().find(|c| c.id == r.info) {
                        Some(c) => format!("{name}.{}", c.name),
                        None => {
                            warn(format!(
                                "ResInfo {} is not a logical cluster of this board; left out",
                                r.info
                            ));
                            continue;
                        }
                    },
                    "core" => format!("{name}.cpu{}", r.info),
                    _ => name.clone(),
                };
                let v = value.clamp(*low, *high);
                if v != value {
                    warn(format!(
                        "value {value} is outside the thresholds {low}..{high}; clamped to {v}"
                    ));
                }
                match nodes.iter_mut().find(|(n, _)| *n == full) {
                    Some(n) => n.1 = v,
                    None => nodes.push((full, v)),
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

fn usecases(
    cfg: &Config,
    clusters: &[Cluster],
    placed: &BTreeMap<u32, Placed>,
    warnings: &mut Vec<Warning>,
) -> String {
    // One use case per (Category, SigId); entries with ExtraAttrs are its
    // variants.
    let mut order: Vec<u32> = Vec::new();
    for s in &cfg.signals {
        let id = s.category << 16 | s.sig_id;
        if !order.contains(&id) {
            order.push(id);
        }
    }
    let mut y = String::new();
    let mut used: Vec<String> = Vec::new();
    for id in order {
        let entries: Vec<(usize, &UrmSignal)> = cfg
            .signals
            .iter()
            .enumerate()
            .filter(|(_, s)| (s.category << 16 | s.sig_id) == id)
            .collect();
        let (bi, base) = entries
            .iter()
            .find(|(_, s)| s.attrs.is_empty())
            .copied()
            .unwrap_or(entries[0]);
        for (i, s) in &entries {
            for (k, line) in &s.ignored {
                let at = At {
                    file: s.at.file.clone(),
                    line: *line,
                };
                let msg = if k == "SigType" {
                    "SigType is not imported: a Lever use case is triggered by name or id only"
                } else {
                    "not imported: Lever target files have no per-target lists or derivatives"
                };
                warnings.push(Warning::new(&at, &format!("SignalConfigs[{i}].{k}"), msg));
            }
        }
        if !base.enable {
            warnings.push(Warning::new(
                &base.at,
                &format!("SignalConfigs[{bi}].Enable"),
                "Enable: false; the signal is left out",
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
        let base_settings = if base.attrs.is_empty() {
            settings(base, bi, cfg, clusters, placed, warnings, "    ")
        } else {
            String::new()
        };
        let mut variants = String::new();
        for (i, s) in entries.iter().filter(|(_, s)| !s.attrs.is_empty()) {
            let when: Vec<String> = s.attrs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let vname: Vec<String> = s
                .attrs
                .iter()
                .map(|(k, v)| format!("{}{v}", &k[..1]))
                .collect();
            let body = settings(s, *i, cfg, clusters, placed, warnings, "        ");
            if body.is_empty() {
                continue;
            }
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
                "URM signal {} (Category 0x{:X}, SigId 0x{:X}; {}:{})",
                base.name, base.category, base.sig_id, base.at.file, base.at.line
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
    for (i, a) in cfg.apps.iter().enumerate() {
        let mut usecases = Vec::new();
        for code in &a.signals {
            // A signal left out above is named here too.
            let found = cfg
                .signals
                .iter()
                .find(|s| (s.category << 16 | s.sig_id) == *code && s.enable);
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
        // URM moves a detected app into its focused.apps cgroup.
        let _ = writeln!(y, "    move_to: lever/focused.apps");
        if !a.threads.is_empty() {
            let _ = writeln!(y, "    threads:");
            for (comm, cg) in &a.threads {
                let _ = writeln!(
                    y,
                    "      - {{ comm: {}, cgroup: lever/{} }}",
                    quote(comm),
                    ident(cg, '-')
                );
            }
        }
    }
}
