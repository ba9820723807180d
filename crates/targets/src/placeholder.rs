//! Placeholders in node paths and descriptions: `{policy}`, `{cluster}`,
//! `{cpu}` and `{index}`, filled once per instance when a template expands.
//!
//! ```text
//! node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_min_freq
//! ```
//!
//! Which ones a template may use depends on what it expands over
//! ([`check`]); the decoder checks that, and expansion fills them
//! ([`substitute`]).

use crate::model::Per;

/// Placeholders that may appear in paths and descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placeholder {
    Policy,
    Cluster,
    Cpu,
    Index,
}

impl Placeholder {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "policy" => Some(Placeholder::Policy),
            "cluster" => Some(Placeholder::Cluster),
            "cpu" => Some(Placeholder::Cpu),
            "index" => Some(Placeholder::Index),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Placeholder::Policy => "policy",
            Placeholder::Cluster => "cluster",
            Placeholder::Cpu => "cpu",
            Placeholder::Index => "index",
        }
    }
}

/// A piece of a template string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Slot(Placeholder),
}

/// Split a template string into literal text and placeholders.
/// `/sys/.../policy{policy}/scaling_min_freq` → `["/sys/.../policy", {policy}, "/scaling_min_freq"]`.
pub(crate) fn split_template(text: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err(format!("unmatched `}}` in `{text}`"));
        }
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in `{text}`"))?;
        let name = &after[..close];
        let p = Placeholder::parse(name).ok_or_else(|| {
            format!(
                "unknown placeholder `{{{name}}}` (known: {{policy}}, {{cluster}}, {{cpu}}, {{index}})"
            )
        })?;
        out.push(Piece::Slot(p));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// Check that a template string is well formed and only uses the
/// placeholders a template expanding over `per` (and an index) has; the
/// error is the message for the field.
pub(crate) fn check(text: &str, per: Per, has_index: bool) -> Result<(), String> {
    let pieces = split_template(text)?;
    let mut available = Vec::new();
    if per == Per::Cluster {
        available.extend([Placeholder::Policy, Placeholder::Cluster]);
    }
    if per == Per::Cpu {
        available.push(Placeholder::Cpu);
    }
    if has_index {
        available.push(Placeholder::Index);
    }
    for piece in pieces {
        if let Piece::Slot(p) = piece {
            if !available.contains(&p) {
                let names: Vec<String> = available
                    .iter()
                    .map(|a| format!("{{{}}}", a.name()))
                    .collect();
                let why = match p {
                    Placeholder::Policy | Placeholder::Cluster => "needs per: cluster",
                    Placeholder::Cpu => "needs per: cpu",
                    Placeholder::Index => "needs an `index:` range",
                };
                return Err(format!(
                    "placeholder `{{{}}}` is not available with per: {}{} ({why}; available here: {})",
                    p.name(),
                    per.as_str(),
                    if has_index { " and index" } else { "" },
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ));
            }
        }
    }
    Ok(())
}

/// Fill the placeholders of a (checked) template string with `fill`'s
/// values; a string that does not split is returned as it is.
pub(crate) fn substitute(text: &str, fill: impl Fn(Placeholder) -> String) -> String {
    let Ok(pieces) = split_template(text) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Slot(p) => out.push_str(&fill(p)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_split() {
        assert_eq!(
            split_template("/a/policy{policy}/b").unwrap(),
            vec![
                Piece::Text("/a/policy"),
                Piece::Slot(Placeholder::Policy),
                Piece::Text("/b")
            ]
        );
        assert!(split_template("/a/{x}")
            .unwrap_err()
            .contains("unknown placeholder"));
        assert!(split_template("/a/{cpu").unwrap_err().contains("unclosed"));
        assert!(split_template("/a/cpu}").unwrap_err().contains("unmatched"));
    }

    #[test]
    fn availability_follows_per_and_index() {
        assert!(check("/a/policy{policy}/{cluster}", Per::Cluster, false).is_ok());
        assert!(check("/a/cpu{cpu}/state{index}", Per::Cpu, true).is_ok());
        let e = check("/a/cpu{cpu}", Per::Cluster, false).unwrap_err();
        assert!(e.contains("needs per: cpu"), "{e}");
        assert!(e.contains("available here: {policy}, {cluster}"), "{e}");
        let e = check("/a/{index}", Per::None, false).unwrap_err();
        assert!(e.contains("available here: none"), "{e}");
    }

    #[test]
    fn substitution() {
        let fill = |p: Placeholder| p.name().to_uppercase();
        assert_eq!(substitute("/p{policy}/c{cpu}", fill), "/pPOLICY/cCPU");
        assert_eq!(substitute("/a/{bad}", fill), "/a/{bad}");
    }
}
