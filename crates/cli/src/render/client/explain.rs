//! `lever explain`: why a resource holds its value.

use super::vote_text;
use crate::render::num::or_dash;
use crate::render::{outln, print_json};
use lever_client::{Cause, Explain, PairRule};

/// `lever explain`: the resource, its rule, its votes (strongest first)
/// and what is applied.
pub fn explain(doc: &Explain, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    let r = &doc.resource;
    let spec = &doc.spec;
    outln!("{} ({}) — {}", r.name, r.opcode, spec.description)?;
    outln!("  node:        {}", r.node)?;
    outln!(
        "  unit:        {}  range {}..{}",
        r.unit,
        spec.low,
        spec.high
    )?;
    outln!(
        "  kind:        {}  aggregation {}  access {}",
        spec.kind.as_str(),
        r.aggregation,
        r.permission
    )?;
    if let Some(pair) = &doc.pair {
        outln!("  paired with: {pair} (min <= max kept at every write)")?;
    }
    outln!("  current:     {}", or_dash(r.current.as_ref()))?;
    outln!(
        "  original:    {}",
        if r.held {
            or_dash(r.original.as_ref())
        } else {
            "(not held: current is the original)".into()
        }
    )?;
    outln!("  rule:        {}", doc.rule)?;
    if doc.votes.is_empty() {
        outln!("  votes:       none")?;
        return Ok(());
    }
    outln!("  votes (strongest first):")?;
    for v in &doc.votes {
        if let Some(p) = super::profile_of(v.usecase.as_deref()) {
            outln!(
                "    profile {p:<13} {:<12} the lowest priority class, until the profile ends",
                v.shown
            )?;
            continue;
        }
        outln!(
            "    handle {:<14} {:<12} priority {:<16} expires {}",
            v.handle.to_string(),
            v.shown,
            v.priority.to_string(),
            v.expires_in_ms
                .map_or_else(|| "never".into(), |ms| format!("in {ms} ms"))
        )?;
    }
    if doc.other_votes > 0 {
        outln!(
            "    and {} vote(s) of other clients (only root sees them one by one)",
            doc.other_votes
        )?;
    }
    outln!("  applied:     {}", or_dash(doc.applied.as_ref()))?;
    if let Some(why) = doc.cause.as_ref().and_then(|c| decided_by(c, &r.unit)) {
        outln!("  decided by:  {why}")?;
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
