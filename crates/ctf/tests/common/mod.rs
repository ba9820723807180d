//! Shared by the tests: Lever's decoding and babeltrace2's
//! `sink.text.details` output of the same trace, both as the same lines
//! per event.
#![allow(dead_code)]

use lever_ctf::decode::Value;
use lever_ctf::types::TypeKind;
use lever_ctf::{FieldValue, Trace};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One event as text: `@ns cycles name` then one line per field.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ev {
    pub ns: i64,
    pub text: String,
}

/// The shared folder of real traces (`../shared/third-party/ctf` from the
/// project's root).
pub fn third_party() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/third-party/ctf")
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Is `tool` on the PATH? Under CI=true a missing tool fails the test
/// (.ci/run installs it); elsewhere the test prints why it skips.
pub fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !in_ci(),
            "{tool} is missing under CI=true (.ci/run installs it)"
        );
        eprintln!("SKIP: {tool} not installed here (apt-get install babeltrace2 lttng-tools liblttng-ust-dev)");
    }
    ok
}

/// A value as babeltrace2's details sink would show it, normalised:
/// numbers in decimal without grouping.
pub fn norm(v: &str) -> String {
    let v = v.trim_end();
    let digits = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == ',')
    };
    if let Some(h) = v.strip_prefix("0x") {
        if !h.is_empty() && digits(h) {
            let h: String = h.chars().filter(|c| *c != ':' && *c != ',').collect();
            if let Ok(n) = u64::from_str_radix(&h, 16) {
                return n.to_string();
            }
        }
    }
    let body = v.strip_prefix('-').unwrap_or(v);
    if !body.is_empty()
        && body.chars().all(|c| c.is_ascii_digit() || c == ',')
        && body.chars().next().unwrap().is_ascii_digit()
    {
        return v.replace(',', "");
    }
    v.to_string()
}

fn field_lines(name: &str, f: FieldValue<'_>, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match f.raw() {
        Some(Value::Struct { .. }) => {
            let m = f.members();
            if m.is_empty() {
                out.push(format!("{pad}{name}: Empty"));
            } else {
                out.push(format!("{pad}{name}:"));
                for (n, v) in m {
                    field_lines(n, v, indent + 2, out);
                }
            }
        }
        Some(Value::Array { len, .. }) => {
            if len == 0 {
                out.push(format!("{pad}{name}: Empty"));
            } else {
                out.push(format!("{pad}{name}: Length {len}:"));
                for (i, e) in f.elements().into_iter().enumerate() {
                    field_lines(&format!("[{i}]"), e, indent + 2, out);
                }
            }
        }
        Some(Value::Variant { .. }) => {
            if let Some((_, v)) = f.option() {
                field_lines(name, v, indent, out);
            }
        }
        Some(Value::Str { .. }) => out.push(format!(
            "{pad}{name}: {}",
            norm(&f.as_str().unwrap_or_default())
        )),
        Some(Value::Unsigned(u)) => out.push(format!("{pad}{name}: {}", enum_suffix(f, u as i128))),
        Some(Value::Signed(s)) => out.push(format!("{pad}{name}: {}", enum_suffix(f, s as i128))),
        Some(Value::Float(x)) => out.push(format!("{pad}{name}: {x}")),
        None => {}
    }
}

fn enum_suffix(f: FieldValue<'_>, v: i128) -> String {
    match &f.ty().kind {
        TypeKind::Enum(_) => format!("{v}"),
        _ => format!("{v}"),
    }
}

fn section(title: &str, f: FieldValue<'_>, out: &mut Vec<String>) {
    let m = f.members();
    if m.is_empty() {
        return;
    }
    out.push(format!("  {title}:"));
    for (n, v) in m {
        field_lines(n, v, 4, out);
    }
}

/// Lever's events of the trace in `dir`.
pub fn ours(dir: &Path) -> Vec<Ev> {
    let trace = Trace::open(dir).unwrap_or_else(|e| panic!("{e}"));
    let mut events = trace.events();
    let mut out = Vec::new();
    while let Some(e) = events.next().unwrap_or_else(|e| panic!("{e}")) {
        let mut lines = vec![format!(
            "@{} {} {}",
            e.timestamp_ns(),
            e.timestamp_cycles(),
            e.name()
        )];
        section("Common context", e.stream_context(), &mut lines);
        section("Specific context", e.context(), &mut lines);
        section("Payload", e.payload(), &mut lines);
        out.push(Ev {
            ns: e.timestamp_ns(),
            text: lines.join("\n"),
        });
    }
    out
}

/// babeltrace2's events of the trace in `dir` (one stream: straight from
/// the source, without the muxer, which refuses a packet that begins
/// before the previous packet's last event, as in the synctraces).
pub fn theirs(dir: &Path, streams: usize) -> Vec<Ev> {
    let mut cmd = Command::new("babeltrace2");
    if streams == 1 {
        cmd.args(["run", "-c", "src:source.ctf.fs", "-p"])
            .arg(format!("inputs=[\"{}\"]", dir.display()))
            .args([
                "-c",
                "sink:sink.text.details",
                "-p",
                "with-metadata=no,color=never",
                "-x",
                "src:sink",
            ]);
    } else {
        cmd.arg(dir).args([
            "-c",
            "sink.text.details",
            "-p",
            "with-metadata=no,color=never",
        ]);
    }
    let o = cmd.output().expect("run babeltrace2");
    assert!(
        o.status.success(),
        "babeltrace2 failed on {}: {}",
        dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    parse_details(&String::from_utf8_lossy(&o.stdout))
}

/// Parse `sink.text.details` output: events only.
pub fn parse_details(text: &str) -> Vec<Ev> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        // [26,135,350,893,061 cycles, 1,378,850,463,596,911,581 ns from origin]
        let Some(ts) = l
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(" ns from origin]"))
        else {
            continue;
        };
        let Some((cycles, ns)) = ts.split_once(" cycles, ") else {
            continue;
        };
        let _stream = lines.next();
        let Some(head) = lines.next() else { break };
        // Event `sched_switch` (Class ID 35):
        let Some(name) = head
            .strip_prefix("Event `")
            .and_then(|r| r.rsplit_once("` (Class ID"))
            .map(|(n, _)| n)
        else {
            continue;
        };
        let ns: i64 = ns.replace(',', "").parse().unwrap();
        let mut ev = vec![format!("@{ns} {} {name}", cycles.replace(',', ""))];
        while let Some(&l) = lines.peek() {
            if l.is_empty() {
                break;
            }
            lines.next();
            let t = l.trim_end();
            if t.ends_with(": Empty") && !t.starts_with("    ") {
                continue; // an empty scope: Lever shows none
            }
            match t.split_once(": ") {
                Some((k, v)) if !v.starts_with("Length ") => ev.push(format!("{k}: {}", norm(v))),
                _ => ev.push(t.to_string()),
            }
        }
        out.push(Ev {
            ns,
            text: ev.join("\n"),
        });
    }
    out
}

/// Compare event for event; events with equal times may come in either
/// order (the two merge ties differently), so each run of equal times is
/// compared as a sorted list.
pub fn compare(what: &str, ours: &[Ev], theirs: &[Ev]) {
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{what}: Lever decodes {} events, babeltrace2 {}",
        ours.len(),
        theirs.len()
    );
    let mut i = 0;
    while i < ours.len() {
        let mut j = i + 1;
        while j < ours.len() && ours[j].ns == ours[i].ns {
            j += 1;
        }
        let mut a = ours[i..j].to_vec();
        let mut b = theirs[i..j.min(theirs.len())].to_vec();
        a.sort();
        b.sort();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                x.text, y.text,
                "{what}: event #{i} differs (Lever left, babeltrace2 right)"
            );
        }
        assert_eq!(a.len(), b.len(), "{what}: events around #{i}");
        i = j;
    }
}
