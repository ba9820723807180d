//! Row names for people: `memory.kernel_dynamic{item=Kernel
//! stack,usecase=after boot}` reads "Kernel stack (kernel dynamic), after
//! boot". The id stays the key the comparison and the results store use;
//! the page puts it in the row's tooltip (`title`).
//!
//! The names of the metrics `lever report collect` writes are a table
//! here; a metric it does not know (a newer collector, a hand-written
//! run) is named from its id: the section prefix dropped, `_` as spaces,
//! its labels after it.

use std::collections::BTreeMap;

/// Names of the metrics without labels that tell them apart.
const NAMES: &[(&str, &str)] = &[
    ("device.cpus", "CPUs"),
    ("memory.total_ram", "Total RAM"),
    ("memory.non_linux", "Not Linux (firmware, carve-outs)"),
    ("memory.linux_ram", "RAM Linux maps (System RAM)"),
    (
        "memory.kernel_static",
        "Kernel static (code, data, reserved)",
    ),
    ("memory.mem_total", "MemTotal"),
    (
        "memory.apps_framework",
        "Apps + framework (MemTotal − MemFree)",
    ),
    ("memory.free", "Free (MemFree)"),
    ("markers.count", "Trace markers"),
    ("daemon.live_requests", "Live requests"),
    ("daemon.resources", "Resources"),
    ("daemon.unrestored", "Nodes not yet restored"),
    ("daemon.round_trip", "Round trip (PING)"),
    ("cpu.total", "CPU, all cores together"),
    ("cpu.usecase", "CPU of the use case's processes"),
];

/// How a negative figure comes about, for the metrics that are
/// differences of two readings.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "memory.non_linux",
        "negative: the RAM Linux maps exceeds the total RAM figure by this much (the two sources round differently)",
    ),
    (
        "memory.kernel_static",
        "negative: MemTotal exceeds the RAM Linux maps by this much",
    ),
    (
        "memory.apps_framework",
        "negative: MemFree exceeds MemTotal by this much",
    ),
];

/// Why `name`'s negative value is negative, where it is a difference.
pub fn why_negative(name: &str) -> Option<&'static str> {
    DIFFERENCES.iter().find(|(n, _)| *n == name).map(|d| d.1)
}

/// The use case a memory or CPU figure belongs to: `after boot`, or
/// `during NAME`.
fn usecase(labels: &BTreeMap<String, String>) -> Option<String> {
    labels.get("usecase").map(|u| match u.as_str() {
        "after boot" => u.clone(),
        _ => format!("during {u}"),
    })
}

/// The readable name of metric `name` with `labels`.
pub fn readable(name: &str, labels: &BTreeMap<String, String>) -> String {
    let label = |k: &str| labels.get(k).map(String::as_str);
    let base = match (name, label("item"), label("stage"), label("kpi")) {
        ("memory.kernel_dynamic", Some(item), _, _) => format!("{item} (kernel dynamic)"),
        (_, _, Some(stage), _) if name.starts_with("boot.") => stage.to_string(),
        ("markers.kpi", _, _, Some(kpi)) => format!("KPI {kpi}"),
        _ if name.starts_with("bench.") => name["bench.".len()..].to_string(),
        _ if name.starts_with("latency.") => {
            let what = match &name["latency.".len()..] {
                "min" => "Minimum",
                "avg" => "Average",
                "max" => "Maximum",
                other => other,
            };
            let mut s = format!("{what} latency");
            if let Some(cpu) = label("cpu") {
                s += &format!(", CPU {cpu}");
            }
            if let Some(c) = label("condition") {
                s += &format!(", {c}");
            }
            return s;
        }
        ("cpu.core", _, _, _) => format!("CPU {} busy", label("cpu").unwrap_or("?")),
        ("cpu.process", _, _, _) => format!("Process {}", label("process").unwrap_or("?")),
        _ => match NAMES.iter().find(|(n, _)| *n == name) {
            Some((_, readable)) => readable.to_string(),
            None => return derived(name, labels),
        },
    };
    match usecase(labels) {
        Some(u) => format!("{base}, {u}"),
        None => base,
    }
}

/// A name from an id the table does not know: `section.some_thing{k=v}`
/// → `Some thing (k v)`.
fn derived(name: &str, labels: &BTreeMap<String, String>) -> String {
    let tail = name
        .split_once('.')
        .map_or(name, |(_, t)| t)
        .replace('_', " ");
    let mut s: String = tail
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect();
    if !labels.is_empty() {
        let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k} {v}")).collect();
        s += &format!(" ({})", l.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn ids_become_names() {
        // (id, labels, readable name)
        type Case = (
            &'static str,
            &'static [(&'static str, &'static str)],
            &'static str,
        );
        let table: &[Case] = &[
            (
                "memory.kernel_dynamic",
                &[("item", "Kernel stack"), ("usecase", "after boot")],
                "Kernel stack (kernel dynamic), after boot",
            ),
            (
                "memory.free",
                &[("usecase", "camera")],
                "Free (MemFree), during camera",
            ),
            ("boot.pbl_xbl", &[("stage", "PBL+XBL")], "PBL+XBL"),
            (
                "latency.max",
                &[("condition", "no load"), ("cpu", "3")],
                "Maximum latency, CPU 3, no load",
            ),
            ("bench.lat_syscall-null", &[], "lat_syscall-null"),
            ("markers.kpi", &[("kpi", "record")], "KPI record"),
            ("daemon.live_requests", &[], "Live requests"),
            (
                "cpu.process",
                &[("process", "gst-launch-1.0"), ("usecase", "camera")],
                "Process gst-launch-1.0, during camera",
            ),
            ("gpu.fill_rate", &[("test", "x")], "Fill rate (test x)"),
        ];
        for (name, l, want) in table {
            assert_eq!(readable(name, &labels(l)), *want, "{name}");
        }
    }
}
