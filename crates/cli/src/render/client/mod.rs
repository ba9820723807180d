//! How the client commands look: `lever acquire`, `release` (here),
//! `status` and `explain` (their own modules). A function per output;
//! `--json` prints the daemon's typed documents as they are. Every line
//! goes through [`crate::render::out`], so a closed stdout ends quietly.

mod explain;
mod status;

pub use explain::explain;
pub use status::status;

use crate::render::{out, outln, print_json};
use lever_client::{
    Acquired, Applied, Bound, Cause, Handle, Lease, PairRule, Priority, SnapDirection, VoteInfo,
};
use serde::Serialize;

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
    match profile_of(v.usecase.as_deref()) {
        Some(p) => format!("{value} (profile {p}, the lowest priority class)"),
        None => format!("{value} (request {}, {})", v.handle, v.priority),
    }
}

/// The profile behind a vote: the daemon names its request's use case
/// `profile:NAME`.
fn profile_of(usecase: Option<&str>) -> Option<&str> {
    usecase.and_then(|u| u.strip_prefix("profile:"))
}

/// Why a node holds another value than `mine` asked for, if it does.
fn overruled(a: &Applied, mine: Handle, priority: Priority) -> Option<String> {
    match &a.cause {
        Cause::Vote { vote } if vote.handle == lever_client::Holder::Handle(mine) => None,
        Cause::Vote { vote } => {
            let why = if vote.priority > priority {
                "its value wins under the resource's rule, or its higher class where the rule cannot order values"
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
pub(crate) fn report_lines(report: &Acquired, priority: Priority) -> String {
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
        return Ok(());
    }
    held(handle, lease)?;
    out(&report_lines(report, priority))?;
    Ok(())
}

/// A request held by this process (perflock form: the handle only).
pub fn held(handle: Handle, lease: Lease) -> anyhow::Result<()> {
    if let Some(d) = lease.duration() {
        outln!(
            "acquired handle {handle}; holding for {} ms (Ctrl-C releases it)",
            d.as_millis()
        )?;
    } else {
        outln!("acquired handle {handle}; holding until Ctrl-C")?;
    }
    // Shown (out flushes) before the process sleeps on the lease.
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
    outln!("{}", report.handle)?;
    Ok(())
}

/// A released request.
pub fn released(handle: Handle, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&serde_json::json!({ "released": handle }));
    }
    outln!("released {handle}")?;
    Ok(())
}
