//! Changing the DVFS map (seed 000 §6.3, "Customize static map DVFS
//! governor"): new L3 / LLCC / DDR frequencies for some CPU frequencies of
//! one cluster become new `opp-peak-kBps` votes, vote = kHz × w (the
//! inverse of [`crate::opp`]'s kBps / w), and those are written out as
//!
//! - a device-tree overlay ([`overlay`]): `/dts-v1/; /plugin/;` with one
//!   fragment per changed OPP, `target-path` naming the OPP node (a path
//!   works on a base tree compiled without `dtc -@`, such as the kernel
//!   packages' DTBs; the node's label is given in a comment), and
//!   `__overlay__` holding the new `opp-peak-kBps`; or
//! - a unified diff ([`patch`]) against `dtc -O dts`'s source of the same
//!   tree, replacing the `opp-peak-kBps` lines of those nodes.
//!
//! Nothing here touches a board: the text is for the engineer's build.
//!
//! The seed's example: on sc7280, CPU 0 at 300 MHz votes
//! `<800000 9600000>` (DDR 200 MHz, L3 300 MHz); asking L3 at 556.8 MHz
//! there gives 556800 × 32 = 17817600 kBps, `<800000 17817600>`.

use crate::opp::{Cluster, DvfsReport, PathKind, Widths};
use serde::Serialize;

/// Why a change cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CustomizeError {
    /// No cluster matches `--cluster`.
    #[error("no cluster {given:?}; the tree's clusters: {}", known.join("; "))]
    UnknownCluster {
        /// What was asked.
        given: String,
        /// The clusters, described.
        known: Vec<String>,
    },
    /// The cluster's OPP table has no row at this CPU frequency.
    #[error("{table} has no OPP at {freq_khz} kHz; its frequencies (kHz): {}", available.iter().map(u64::to_string).collect::<Vec<_>>().join(" "))]
    UnknownFrequency {
        /// The cluster's table.
        table: String,
        /// The frequency asked for.
        freq_khz: u64,
        /// The table's frequencies.
        available: Vec<u64>,
    },
    /// The cluster's CPUs have no interconnect path to this target.
    #[error("the CPUs of {table} vote on no {} path (their paths: {})", kind.label(), paths.join(", "))]
    NoPath {
        /// The cluster's table.
        table: String,
        /// The target asked for.
        kind: PathKind,
        /// The paths they have.
        paths: Vec<String>,
    },
    /// kHz × w does not fit a 32-bit vote.
    #[error("{} {khz} kHz × w {width} = {} kBps does not fit a 32-bit opp-peak-kBps cell", kind.label(), u64::from(*width) * *khz)]
    VoteTooLarge {
        /// The target.
        kind: PathKind,
        /// Its frequency asked for.
        khz: u64,
        /// Its width.
        width: u32,
    },
    /// Nothing to change: no frequency or no target given.
    #[error("nothing to change: {0}")]
    Nothing(&'static str),
    /// The source text does not hold a node the change names.
    #[error("the dts has no node {0} (is it dtc's output of the same tree?)")]
    NodeNotInSource(String),
}

/// One changed OPP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OppChange {
    /// The OPP node's path.
    pub node: String,
    /// Its label, where the tree has `__symbols__`.
    pub label: Option<String>,
    /// The CPU frequency, kHz.
    pub cpu_khz: u64,
    /// The votes before, one per path (`None` where the OPP had none).
    pub old_peak_kbps: Vec<Option<u32>>,
    /// The votes after.
    pub new_peak_kbps: Vec<u32>,
    /// Each path's target and width, in vote order.
    pub paths: Vec<(PathKind, Option<u32>)>,
}

/// The cluster `--cluster` names: `silver`, `gold`, `prime` (the first,
/// second and third clusters by first CPU, as Qualcomm names them), a CPU
/// number (the cluster holding it), or the table's path or label.
pub fn find_cluster<'a>(
    report: &'a DvfsReport,
    given: &str,
) -> Result<&'a Cluster, CustomizeError> {
    let by_name = ["silver", "gold", "prime"]
        .iter()
        .position(|n| n.eq_ignore_ascii_case(given));
    let found = if let Some(i) = by_name {
        report.clusters.get(i)
    } else if let Ok(cpu) = given.trim_start_matches("cpu").parse::<usize>() {
        report
            .clusters
            .iter()
            .find(|c| c.cpus.iter().any(|r| r.cpu == cpu))
    } else {
        report
            .clusters
            .iter()
            .find(|c| c.table == given || c.labels.iter().any(|l| l == given))
    };
    found.ok_or_else(|| CustomizeError::UnknownCluster {
        given: given.to_string(),
        known: report
            .clusters
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let name = ["silver", "gold", "prime"].get(i).copied().unwrap_or("-");
                let cpus: Vec<String> = c.cpus.iter().map(|r| r.cpu.to_string()).collect();
                format!("{name} (CPUs {}, {})", cpus.join(","), c.table)
            })
            .collect(),
    })
}

/// The changes that give `cluster`'s OPPs at `cpu_khz` the target
/// frequencies `targets` (kind, kHz), votes = kHz × w.
pub fn plan(
    cluster: &Cluster,
    cpu_khz: &[u64],
    targets: &[(PathKind, u64)],
    widths: Widths,
    labels: impl Fn(&str) -> Option<String>,
) -> Result<Vec<OppChange>, CustomizeError> {
    if cpu_khz.is_empty() {
        return Err(CustomizeError::Nothing("give a CPU frequency (--freq KHZ)"));
    }
    if targets.is_empty() {
        return Err(CustomizeError::Nothing(
            "give a target frequency (--l3, --llcc or --ddr KHZ)",
        ));
    }
    let mut votes: Vec<(usize, u32)> = Vec::new();
    for &(kind, khz) in targets {
        let i = cluster
            .paths
            .iter()
            .position(|p| p.kind == kind)
            .ok_or_else(|| CustomizeError::NoPath {
                table: cluster.table.clone(),
                kind,
                paths: cluster.paths.iter().map(|p| p.name.clone()).collect(),
            })?;
        let width = widths.of(kind).unwrap_or(1);
        let kbps = u32::try_from(khz.saturating_mul(u64::from(width)))
            .map_err(|_| CustomizeError::VoteTooLarge { kind, khz, width })?;
        votes.push((i, kbps));
    }
    let available: Vec<u64> = cluster
        .rows
        .iter()
        .filter_map(|r| r.freq_hz.map(|hz| hz / 1000))
        .collect();
    let mut changes = Vec::new();
    for &khz in cpu_khz {
        let row = cluster
            .rows
            .iter()
            .find(|r| r.freq_hz.map(|hz| hz / 1000) == Some(khz))
            .ok_or_else(|| CustomizeError::UnknownFrequency {
                table: cluster.table.clone(),
                freq_khz: khz,
                available: available.clone(),
            })?;
        let old: Vec<Option<u32>> = (0..cluster.paths.len())
            .map(|i| row.votes.get(i).and_then(|v| v.peak_kbps))
            .collect();
        let mut new: Vec<u32> = old.iter().map(|v| v.unwrap_or(0)).collect();
        for &(i, kbps) in &votes {
            new[i] = kbps;
        }
        changes.push(OppChange {
            node: row.node.clone(),
            label: labels(&row.node),
            cpu_khz: khz,
            old_peak_kbps: old,
            new_peak_kbps: new,
            paths: cluster
                .paths
                .iter()
                .map(|p| (p.kind, p.width_bytes))
                .collect(),
        });
    }
    Ok(changes)
}

/// kBps as the frequency it implies, in MHz (`1516.8`), or `kBps` alone.
fn implied(kbps: Option<u32>, width: Option<u32>) -> String {
    match (kbps, width) {
        (None, _) => "none".into(),
        (Some(k), Some(w)) if w > 0 => {
            let khz = u64::from(k) / u64::from(w);
            let mhz = format!("{}.{:03}", khz / 1000, khz % 1000);
            let mhz = mhz.trim_end_matches('0').trim_end_matches('.');
            format!("{k} kBps ({mhz} MHz)")
        }
        (Some(k), _) => format!("{k} kBps"),
    }
}

/// One line per change: what each vote was and becomes.
pub fn describe(c: &OppChange) -> String {
    let mut parts = Vec::new();
    for (i, (kind, w)) in c.paths.iter().enumerate() {
        let old = c.old_peak_kbps.get(i).copied().flatten();
        let new = c.new_peak_kbps.get(i).copied();
        if old == new {
            continue;
        }
        parts.push(format!(
            "{} {} -> {}",
            kind.label(),
            implied(old, *w),
            implied(new, *w)
        ));
    }
    if parts.is_empty() {
        parts.push("no change (the votes are already these)".into());
    }
    format!(
        "{} at {} kHz: {}",
        c.label.as_deref().unwrap_or(&c.node),
        c.cpu_khz,
        parts.join(", ")
    )
}

fn cells(v: &[u32]) -> String {
    let s: Vec<String> = v.iter().map(u32::to_string).collect();
    format!("<{}>", s.join(" "))
}

/// The overlay source (`dtc -@ -I dts -O dtb` compiles it;
/// `fdtoverlay -i BASE.dtb -o NEW.dtb OVERLAY.dtbo` applies it).
pub fn overlay(changes: &[OppChange], source: &str, widths: Widths) -> String {
    let mut s = String::from("/dts-v1/;\n/plugin/;\n\n");
    s.push_str(&format!(
        concat!(
            "/*\n * lever dt customize: seed 000 §6.3 static map of {}\n",
            " * vote kBps = target kHz × w; w: DDR {}, LLCC {}, L3 {} bytes per clock\n */\n\n"
        ),
        source, widths.ddr_bytes, widths.llcc_bytes, widths.l3_bytes
    ));
    s.push_str("/ {\n");
    for (i, c) in changes.iter().enumerate() {
        s.push_str(&format!("\tfragment@{i} {{\n"));
        s.push_str(&format!("\t\t/* {} */\n", describe(c)));
        s.push_str(&format!("\t\ttarget-path = \"{}\";\n", c.node));
        s.push_str("\t\t__overlay__ {\n");
        s.push_str(&format!(
            "\t\t\topp-peak-kBps = {};\n",
            cells(&c.new_peak_kbps)
        ));
        s.push_str("\t\t};\n\t};\n");
    }
    s.push_str("};\n");
    s
}

/// A unified diff (`patch -p1` applies it) of `dts`, `dtc -O dts`'s source
/// of the tree, named `name` in the diff's headers: the `opp-peak-kBps`
/// line of each changed OPP node replaced (or added after `opp-hz` where
/// the node had none).
pub fn patch(dts: &str, name: &str, changes: &[OppChange]) -> Result<String, CustomizeError> {
    let old: Vec<&str> = dts.lines().collect();
    // Each node's line and depth, by full path, from dtc's layout: a node
    // opens with `NAME {` (or `LABEL: NAME {`), indented one tab per level,
    // and closes with `};`.
    let mut stack: Vec<String> = Vec::new();
    let mut opens: Vec<(String, usize, usize)> = Vec::new();
    for (i, line) in old.iter().enumerate() {
        let t = line.trim();
        if let Some(head) = t.strip_suffix(" {") {
            let name = head.rsplit(": ").next().unwrap_or(head).trim();
            let path = if name == "/" {
                "/".to_string()
            } else {
                match stack.last() {
                    Some(p) if p == "/" => format!("/{name}"),
                    Some(p) => format!("{p}/{name}"),
                    None => format!("/{name}"),
                }
            };
            opens.push((path.clone(), i, stack.len()));
            stack.push(path);
        } else if t == "};" {
            stack.pop();
        }
    }
    // (line index, replacement) or (after line index, insertion).
    let mut edits: Vec<(usize, bool, String)> = Vec::new();
    for c in changes {
        let &(_, open, depth) = opens
            .iter()
            .find(|(p, _, _)| *p == c.node)
            .ok_or_else(|| CustomizeError::NodeNotInSource(c.node.clone()))?;
        let indent = "\t".repeat(depth + 1);
        let new_line = format!("{indent}opp-peak-kBps = {};", cells(&c.new_peak_kbps));
        let mut found = None;
        let mut hz = None;
        let mut j = open + 1;
        while j < old.len() {
            let t = old[j].trim();
            if t == "};" || t.ends_with(" {") {
                break;
            }
            if t.starts_with("opp-peak-kBps ") || t == "opp-peak-kBps;" {
                found = Some(j);
            }
            if t.starts_with("opp-hz ") {
                hz = Some(j);
            }
            j += 1;
        }
        match found {
            Some(j) => edits.push((j, true, new_line)),
            None => edits.push((hz.unwrap_or(open), false, new_line)),
        }
    }
    edits.sort_by_key(|e| e.0);
    Ok(unified(&old, &edits, name))
}

#[derive(Clone, Copy, PartialEq)]
enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// A unified diff with 3 lines of context from `old` and the edits
/// (sorted by line: replace that line, or insert after it).
fn unified(old: &[&str], edits: &[(usize, bool, String)], name: &str) -> String {
    let mut ops: Vec<Op> = Vec::new();
    let mut e = edits.iter().peekable();
    for (i, line) in old.iter().enumerate() {
        let mut replaced = false;
        let mut after: Vec<&str> = Vec::new();
        while let Some((at, replace, new)) = e.peek() {
            if *at != i {
                break;
            }
            if *replace {
                replaced = true;
                ops.push(Op::Del(line));
                ops.push(Op::Add(new));
            } else {
                after.push(new);
            }
            e.next();
        }
        if !replaced {
            ops.push(Op::Same(line));
        }
        ops.extend(after.into_iter().map(Op::Add));
    }
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| !matches!(o, Op::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let mut out = format!("--- a/{name}\n+++ b/{name}\n");
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        // Line numbers of the hunk's first op in old and new.
        let (mut a, mut b) = (1, 1);
        for o in &ops[..start] {
            match o {
                Op::Same(_) => {
                    a += 1;
                    b += 1
                }
                Op::Del(_) => a += 1,
                Op::Add(_) => b += 1,
            }
        }
        let hunk = &ops[start..end];
        let a_len = hunk.iter().filter(|o| !matches!(o, Op::Add(_))).count();
        let b_len = hunk.iter().filter(|o| !matches!(o, Op::Del(_))).count();
        out.push_str(&format!("@@ -{a},{a_len} +{b},{b_len} @@\n"));
        for o in hunk {
            match o {
                Op::Same(l) => out.push_str(&format!(" {l}\n")),
                Op::Del(l) => out.push_str(&format!("-{l}\n")),
                Op::Add(l) => out.push_str(&format!("+{l}\n")),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_merges_near_edits_and_counts_lines() {
        let old: Vec<String> = (1..=20).map(|i| format!("l{i}")).collect();
        let old: Vec<&str> = old.iter().map(String::as_str).collect();
        let edits = vec![(4, true, "x5".to_string()), (6, false, "y".to_string())];
        let d = unified(&old, &edits, "f.dts");
        assert_eq!(
            d,
            "--- a/f.dts\n+++ b/f.dts\n@@ -2,9 +2,10 @@\n l2\n l3\n l4\n-l5\n+x5\n l6\n l7\n+y\n l8\n l9\n l10\n"
        );
        let far = vec![(0, true, "a".to_string()), (19, true, "z".to_string())];
        let d = unified(&old, &far, "f.dts");
        assert!(d.contains("@@ -1,4 +1,4 @@\n-l1\n+a\n"), "{d}");
        assert!(
            d.contains("@@ -17,4 +17,4 @@\n l17\n l18\n l19\n-l20\n+z\n"),
            "{d}"
        );
    }
}
