//! How the client commands look: `lever acquire`, `release`, `status`,
//! `explain`. A function per output; `--json` prints the daemon's typed
//! documents as they are.

use crate::render::{print_json, Table};
use lever_client::{
    Acquired, Applied, Bound, Cause, Explain, Handle, Lease, PairRule, Priority, SnapDirection,
    Status, VoteInfo,
};
use serde::Serialize;
use std::io::Write;

/// `--json` form of an acquire: the handle, the wire duration and, when the
/// daemon reported it, what became of each pair.
#[derive(Serialize)]
struct AcquiredJson<'a> {
    handle: Handle,
    duration_ms: Lease,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    detached: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<&'a [Applied]>,
}

/// A value as a person reads it in its unit: frequencies scaled to GHz,
/// MHz or kHz (`2000000 kHz` → `2.0 GHz`, `315000000 Hz` → `315 MHz`,
/// `1958400 kHz` → `1.9584 GHz`), other units appended (`500 us`), and
/// unitless levels and enum names as they are.
pub fn with_unit(value: &str, unit: &str) -> String {
    let hz_per_unit: Option<u64> = match unit {
        "Hz" => Some(1),
        "kHz" => Some(1_000),
        "MHz" => Some(1_000_000),
        _ => None,
    };
    let Ok(n) = value.trim().parse::<i64>() else {
        return value.to_string();
    };
    if let Some(scale) = hz_per_unit {
        let hz = i128::from(n) * i128::from(scale);
        let (div, name) = match hz.unsigned_abs() {
            a if a >= 1_000_000_000 => (1_000_000_000, "GHz"),
            a if a >= 1_000_000 => (1_000_000, "MHz"),
            a if a >= 1_000 => (1_000, "kHz"),
            _ => (1, "Hz"),
        };
        // Whole Hz are exact; only the display is scaled.
        let text = format!("{:.6}", hz as f64 / div as f64);
        let text = text.trim_end_matches('0');
        // GHz keeps one decimal (`2.0 GHz`); smaller units drop the point.
        let text = match (text.strip_suffix('.'), name) {
            (Some(whole), "GHz") => format!("{whole}.0"),
            (Some(whole), _) => whole.to_string(),
            (None, _) => text.to_string(),
        };
        return format!("{text} {name}");
    }
    match unit {
        "" | "level" => n.to_string(),
        "percent" => format!("{n} %"),
        u => format!("{n} {u}"),
    }
}

/// A value in the resource's own unit, unscaled (`1958400 kHz`): the number
/// space a user types `RES=VALUE` in.
fn raw(value: i64, unit: &str) -> String {
    match unit {
        "" | "level" => value.to_string(),
        u => format!("{value} {u}"),
    }
}

fn table_word(unit: &str) -> &'static str {
    if unit.ends_with("Hz") {
        "frequency"
    } else {
        "value"
    }
}

/// Why a request holds another value than it asked: clamped, snapped.
fn adjustment(a: &Applied) -> Option<String> {
    let u = |v: i64| raw(v, &a.unit);
    let mut why = Vec::new();
    if let Some(c) = a.clamped {
        let bound = match c.bound {
            Bound::Min => "min",
            Bound::Max => "max",
        };
        why.push(format!("clamped to the resource's {bound} {}", u(c.to)));
    }
    if let Some(s) = a.snapped {
        let way = match s.direction {
            SnapDirection::Up => "up to the next",
            SnapDirection::Down => "down to the previous",
            SnapDirection::Nearest => "to the nearest",
        };
        why.push(format!(
            "snapped {way} table {} {}",
            table_word(&a.unit),
            u(s.to)
        ));
    }
    (!why.is_empty()).then(|| why.join(", then "))
}

fn vote_text(v: &VoteInfo, unit: &str) -> String {
    let value = match v.shown.parse::<i64>() {
        Ok(n) => raw(n, unit),
        Err(_) => v.shown.clone(),
    };
    format!("{value} (request {}, {})", v.handle, v.priority)
}

/// Why a node holds another value than `mine` asked for, if it does.
fn overruled(a: &Applied, mine: Handle, priority: Priority) -> Option<String> {
    match &a.cause {
        Cause::Vote { vote } if vote.handle == lever_client::Holder::Handle(mine) => None,
        Cause::Vote { vote } => {
            let why = if vote.priority > priority {
                "a higher priority class wins"
            } else {
                "it wins under the resource's rule"
            };
            Some(format!("the vote {} wins: {why}", vote_text(vote, &a.unit)))
        }
        Cause::Pair {
            partner, rule, by, ..
        } => {
            let by = by.as_ref().map_or_else(
                || format!("{partner}'s own value (no request holds it)"),
                |v| format!("{partner} = {}", vote_text(v, &a.unit)),
            );
            Some(match rule {
                PairRule::CeilingBeatsFloor => {
                    format!("capped by the ceiling {by}: a ceiling beats a floor")
                }
                PairRule::HigherClassFloorWins => {
                    format!("raised by the floor {by}: a floor of a higher class beats a ceiling")
                }
            })
        }
        Cause::Original => Some("the original value is in place".into()),
    }
}

/// Per resource of an acquire: asked, held and why, applied and why.
fn report_lines(report: &Acquired, priority: Priority) -> String {
    let mut out = String::new();
    for a in &report.resources {
        let asked = raw(a.asked, &a.unit);
        let held = raw(a.held, &a.unit);
        let head = format!("  {} ({}): asked {asked}", a.name, a.opcode);
        match adjustment(a) {
            Some(why) => out.push_str(&format!("{head}, holds {held}: {why}\n")),
            None => out.push_str(&format!("{head}\n")),
        }
        let now = match a.applied {
            Some(level) if a.shown == level.to_string() => raw(level, &a.unit),
            _ => a.shown.clone(),
        };
        match overruled(a, report.handle, priority) {
            Some(why) => out.push_str(&format!("    node now {now}: {why}\n")),
            None => out.push_str(&format!("    node now {now}\n")),
        }
    }
    out
}

/// A request acquired and held by this process, with the daemon's report
/// of each pair.
pub fn acquired(
    report: &Acquired,
    lease: Lease,
    priority: Priority,
    json: bool,
) -> anyhow::Result<()> {
    let handle = report.handle;
    if json {
        print_json(&AcquiredJson {
            handle,
            duration_ms: lease,
            detached: false,
            resources: Some(&report.resources),
        })?;
        std::io::stdout().flush()?;
        return Ok(());
    }
    held(handle, lease)?;
    print!("{}", report_lines(report, priority));
    std::io::stdout().flush()?;
    Ok(())
}

/// A request held by this process (perflock form: the handle only).
pub fn held(handle: Handle, lease: Lease) -> anyhow::Result<()> {
    if let Some(d) = lease.duration() {
        println!(
            "acquired handle {handle}; holding for {} ms (Ctrl-C releases it)",
            d.as_millis()
        );
    } else {
        println!("acquired handle {handle}; holding until Ctrl-C");
    }
    // Shown before the process sleeps on the lease.
    std::io::stdout().flush()?;
    Ok(())
}

/// `--json` for a perflock-form acquire: the handle alone.
pub fn held_json(handle: Handle, lease: Lease) -> anyhow::Result<()> {
    print_json(&AcquiredJson {
        handle,
        duration_ms: lease,
        detached: false,
        resources: None,
    })?;
    std::io::stdout().flush()?;
    Ok(())
}

/// A detached request left with the daemon: its handle alone on stdout,
/// for scripts; the report on stderr.
pub fn detached(
    report: &Acquired,
    lease: Lease,
    priority: Priority,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        return print_json(&AcquiredJson {
            handle: report.handle,
            duration_ms: lease,
            detached: true,
            resources: Some(&report.resources),
        });
    }
    eprint!("{}", report_lines(report, priority));
    println!("{}", report.handle);
    Ok(())
}

/// A released request.
pub fn released(handle: Handle, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&serde_json::json!({ "released": handle }));
    }
    println!("released {handle}");
    Ok(())
}

fn or_dash(v: Option<impl ToString>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn expires(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |ms| ms.to_string())
}

/// `lever status`: the target, the resources (all, or only those held or
/// voted for), and the requests this client may see.
pub fn status(doc: &Status, held_only: bool, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    println!(
        "target {} ({}), root {}, {} live request(s)",
        doc.target, doc.source, doc.root, doc.live_requests
    );
    let mut t = Table::new(&["OPCODE", "NAME", "CURRENT", "ORIGINAL", "WINNER", "NODE"]);
    let shown = doc
        .resources
        .iter()
        .filter(|r| !held_only || r.held || r.winner.is_some());
    let mut any = false;
    for r in shown {
        any = true;
        t.row(vec![
            r.opcode.clone(),
            r.name.clone(),
            r.current
                .as_deref()
                .map_or_else(|| "(unreadable)".into(), |v| with_unit(v, &r.unit)),
            or_dash(r.original.as_deref().map(|v| with_unit(v, &r.unit))),
            or_dash(r.winner),
            r.node.clone(),
        ]);
    }
    if any {
        t.print()?;
    } else {
        println!("no resource is held");
    }
    if doc.requests.is_empty() {
        return Ok(());
    }
    println!();
    let mut t = Table::new(&[
        "HANDLE",
        "PID",
        "UID",
        "PRIORITY",
        "EXPIRES_IN_MS",
        "PAIRS",
        "EXE",
    ]);
    for r in &doc.requests {
        let pairs: Vec<String> = r
            .pairs
            .iter()
            .map(|p| format!("{}={}", p.name, with_unit(&p.shown, &p.unit)))
            .collect();
        t.row(vec![
            r.handle.to_string(),
            r.pid.to_string(),
            r.uid.to_string(),
            r.priority.to_string(),
            expires(r.expires_in_ms),
            pairs.join(" "),
            or_dash(r.exe.as_ref()),
        ]);
    }
    t.print()?;
    Ok(())
}

/// `lever explain`: the resource, its rule, its votes (strongest first)
/// and what is applied.
pub fn explain(doc: &Explain, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    let r = &doc.resource;
    let spec = &doc.spec;
    println!("{} ({}) — {}", r.name, r.opcode, spec.description);
    println!("  node:        {}", r.node);
    println!(
        "  unit:        {}  range {}..{}",
        r.unit, spec.low, spec.high
    );
    println!(
        "  kind:        {}  aggregation {}  access {}",
        spec.kind.as_str(),
        r.aggregation,
        r.permission
    );
    if let Some(pair) = &doc.pair {
        println!("  paired with: {pair} (min <= max kept at every write)");
    }
    println!("  current:     {}", or_dash(r.current.as_ref()));
    println!(
        "  original:    {}",
        if r.held {
            or_dash(r.original.as_ref())
        } else {
            "(not held: current is the original)".into()
        }
    );
    println!("  rule:        {}", doc.rule);
    if doc.votes.is_empty() {
        println!("  votes:       none");
        return Ok(());
    }
    println!("  votes (strongest first):");
    for v in &doc.votes {
        println!(
            "    handle {:<14} {:<12} priority {:<16} expires {}",
            v.handle.to_string(),
            v.shown,
            v.priority.to_string(),
            v.expires_in_ms
                .map_or_else(|| "never".into(), |ms| format!("in {ms} ms"))
        );
    }
    println!("  applied:     {}", or_dash(doc.applied.as_ref()));
    if let Some(why) = doc.cause.as_ref().and_then(|c| decided_by(c, &r.unit)) {
        println!("  decided by:  {why}");
    }
    Ok(())
}

/// Who decided a resource's applied value, in a sentence (`None` when the
/// original is in place).
fn decided_by(cause: &Cause, unit: &str) -> Option<String> {
    match cause {
        Cause::Original => None,
        Cause::Vote { vote } => Some(format!("the winning vote {}", vote_text(vote, unit))),
        Cause::Pair {
            partner,
            rule,
            by,
            overridden,
        } => {
            let by = by.as_ref().map_or_else(
                || format!("{partner}'s own value (no request holds it)"),
                |v| format!("{partner} = {}", vote_text(v, unit)),
            );
            let mut text = match rule {
                PairRule::CeilingBeatsFloor => {
                    format!("the ceiling {by}, which beats a floor")
                }
                PairRule::HigherClassFloorWins => {
                    format!("the floor {by}, whose higher class beats a ceiling")
                }
            };
            if let Some(own) = overridden {
                text.push_str(&format!(
                    "; this resource's own winner {} is overridden",
                    vote_text(own, unit)
                ));
            }
            Some(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_unit;

    #[test]
    fn values_read_in_their_unit() {
        assert_eq!(with_unit("2000000000", "Hz"), "2.0 GHz");
        assert_eq!(with_unit("2000000", "kHz"), "2.0 GHz");
        assert_eq!(with_unit("315000000", "Hz"), "315 MHz");
        assert_eq!(with_unit("1958400", "kHz"), "1.9584 GHz");
        assert_eq!(with_unit("806400", "kHz"), "806.4 MHz");
        assert_eq!(with_unit("300000", "kHz"), "300 MHz");
        assert_eq!(with_unit("950000", "us"), "950000 us");
        assert_eq!(with_unit("512", "level"), "512");
        assert_eq!(with_unit("60", "percent"), "60 %");
        assert_eq!(with_unit("performance", "level"), "performance");
        assert_eq!(with_unit("-1", "us"), "-1 us");
    }
}
