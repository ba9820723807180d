//! Boot-stage markers: the journal lines that start and end a measured
//! boot stage, configurable per board in a small YAML file.
//!
//! Seed 000 §8.3 measures "kernel init" up to the SELinux policy load (the
//! audit line `enforcing=1 old_enforcing=0`) and "recorder init" up to the
//! camera driver's `Spectra camera driver initialized`; other boards and
//! use cases end elsewhere. A marker file names both ends:
//!
//! ```yaml
//! # lever boot --markers qcs6490-recorder.yaml
//! board: qcs6490            # optional, for the report
//! start:
//!   name: Kernel init       # optional; defaults to the match text
//!   match: "enforcing=1 old_enforcing=0"
//! end:
//!   name: Recorder init
//!   match: "Spectra camera driver initialized"
//! ```
//!
//! `match` is a plain substring of the journal line. Every other key, a
//! missing `match`, a non-string value, a duplicate key, aliases and YAML
//! syntax errors are reported as `file:line:col: message` (positions come
//! from `lever-yaml`, the reader target files use too).
//! [`Markers::default`] is the seed's pair.

use lever_yaml::{ErrorKind, MapError, Mapping, Node, Pos};
use serde::Serialize;

use crate::BootError;

/// One marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Marker {
    /// Display name (`Kernel init`).
    pub name: String,
    /// Substring that identifies the journal line.
    pub pattern: String,
}

/// A start and an end marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Markers {
    /// The board the file is for, if it says.
    pub board: Option<String>,
    /// Start of the measured span.
    pub start: Marker,
    /// End of the measured span.
    pub end: Marker,
    /// Where the markers came from (file name or `built-in (seed 000 §8.3)`).
    pub source: String,
}

impl Default for Markers {
    /// Seed 000 §8.3's Qualcomm markers.
    fn default() -> Self {
        Markers {
            board: Some("qcs6490".into()),
            start: Marker {
                name: "Kernel init".into(),
                pattern: "enforcing=1 old_enforcing=0".into(),
            },
            end: Marker {
                name: "Recorder init".into(),
                pattern: "Spectra camera driver initialized".into(),
            },
            source: "built-in (seed 000 §8.3)".into(),
        }
    }
}

/// Builds [`BootError::Config`]s that point into one marker file.
struct InFile<'a>(&'a str);

impl InFile<'_> {
    fn err(&self, pos: Pos, message: impl Into<String>) -> BootError {
        BootError::Config {
            file: self.0.to_string(),
            line: pos.line,
            col: pos.col,
            message: message.into(),
        }
    }

    /// A mapping with only `allowed` keys, each once; `what` names it.
    fn mapping<'n>(
        &self,
        node: &'n Node,
        what: &str,
        allowed: &[&'static str],
    ) -> Result<Mapping<'n>, BootError> {
        node.mapping(allowed).map_err(|e| match e {
            MapError::NotAMapping { pos, found } => {
                self.err(pos, format!("{what} must be a mapping, found {found}"))
            }
            MapError::KeyNotText { pos, found } => {
                self.err(pos, format!("keys must be text, found {found}"))
            }
            MapError::Duplicate { key, pos, .. } => {
                self.err(pos, format!("duplicate key `{key}` in {what}"))
            }
            MapError::Unknown { key, pos, allowed } => self.err(
                pos,
                format!(
                    "unknown key `{key}` in {what}; expected one of: {}",
                    allowed.join(", ")
                ),
            ),
        })
    }

    /// A non-empty text value of `key`.
    fn string(&self, node: &Node, key: &str) -> Result<String, BootError> {
        match node.as_str() {
            Some("") => Err(self.err(node.pos, format!("`{key}` is empty; expected text"))),
            Some(text) => Ok(text.to_string()),
            None => Err(self.err(
                node.pos,
                format!("`{key}` must be text, found {}", node.type_name()),
            )),
        }
    }

    /// A `start:`/`end:` mapping; `key_pos` is where its key is.
    fn marker(&self, node: &Node, which: &str, key_pos: Pos) -> Result<Marker, BootError> {
        let m = self.mapping(node, &format!("`{which}`"), &["name", "match"])?;
        let name = m.get("name").map(|n| self.string(n, "name")).transpose()?;
        let pattern = match m.get("match") {
            Some(n) => self.string(n, "match")?,
            None => {
                return Err(self.err(
                    key_pos,
                    format!("`{which}` needs `match:` (the journal text to look for)"),
                ))
            }
        };
        Ok(Marker {
            name: name.unwrap_or_else(|| pattern.clone()),
            pattern,
        })
    }
}

/// Parse a marker file. `file` is only used in messages.
pub fn parse(file: &str, text: &str) -> Result<Markers, BootError> {
    let at = InFile(file);
    let doc = lever_yaml::parse(text).map_err(|e| {
        at.err(
            e.pos,
            match e.kind {
                ErrorKind::Empty => {
                    "the marker file is empty; expected `start:` and `end:`".to_string()
                }
                ErrorKind::SecondDocument => {
                    "more than one YAML document; expected one".to_string()
                }
                ErrorKind::Alias => "anchors and aliases are not supported".to_string(),
                ErrorKind::Syntax(info) => format!("YAML syntax: {info}"),
                other => other.to_string(),
            },
        )
    })?;
    let top = at.mapping(&doc, "the marker file", &["board", "start", "end"])?;
    // The top-level keys are checked first, then each marker in file order.
    let (mut board, mut start, mut end) = (None, None, None);
    for entry in top.entries() {
        match entry.key {
            "board" => board = Some(at.string(entry.value, "board")?),
            "start" => start = Some(at.marker(entry.value, "start", entry.key_pos)?),
            _ => end = Some(at.marker(entry.value, "end", entry.key_pos)?),
        }
    }
    let missing = |k: &str| {
        at.err(
            top.pos,
            format!("the marker file needs `{k}:` with `match:`"),
        )
    };
    Ok(Markers {
        board,
        start: start.ok_or_else(|| missing("start"))?,
        end: end.ok_or_else(|| missing("end"))?,
        source: file.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "board: qcs6490\nstart:\n  name: Kernel init\n  match: \"enforcing=1 old_enforcing=0\"\nend:\n  match: Spectra camera driver initialized\n";

    #[test]
    fn reads_the_documented_form() {
        let m = parse("m.yaml", GOOD).unwrap();
        assert_eq!(m.board.as_deref(), Some("qcs6490"));
        assert_eq!(m.start.name, "Kernel init");
        assert_eq!(m.end.name, "Spectra camera driver initialized");
        assert_eq!(m.start.pattern, Markers::default().start.pattern);
    }

    fn err(text: &str) -> String {
        parse("m.yaml", text).unwrap_err().to_string()
    }

    #[test]
    fn errors_carry_file_line_col() {
        assert_eq!(
            err("start:\n  match: a\n  macth: b\nend:\n  match: c\n"),
            "m.yaml:3:3: unknown key `macth` in `start`; expected one of: name, match"
        );
        assert_eq!(
            err("start:\n  name: x\nend:\n  match: c\n"),
            "m.yaml:1:1: `start` needs `match:` (the journal text to look for)"
        );
        assert_eq!(
            err("start:\n  match: [a, b]\nend:\n  match: c\n"),
            "m.yaml:2:10: `match` must be text, found a list"
        );
        assert_eq!(
            err("start:\n  match: a\nstart:\n  match: b\n"),
            "m.yaml:3:1: duplicate key `start` in the marker file"
        );
        assert_eq!(
            err("start:\n  match: a\n"),
            "m.yaml:1:1: the marker file needs `end:` with `match:`"
        );
        let syntax = err("start:\n  match: \"open\nend:\n");
        assert!(
            syntax.starts_with("m.yaml:") && syntax.contains(": YAML syntax:"),
            "{syntax}"
        );
        assert!(err("").starts_with("m.yaml:1:1: the marker file is empty"));
        assert_eq!(
            err("- a\n"),
            "m.yaml:1:1: the marker file must be a mapping, found a list"
        );
        assert_eq!(
            err("start:\n  match: &a x\nend:\n  match: *a\n"),
            "m.yaml:4:10: anchors and aliases are not supported"
        );
        assert_eq!(
            err("start: {match: a}\nend: {match: b}\n---\nx: 1\n"),
            "m.yaml:3:1: more than one YAML document; expected one"
        );
        assert_eq!(
            err("start:\n  match: \"\"\nend:\n  match: c\n"),
            "m.yaml:2:10: `match` is empty; expected text"
        );
        assert_eq!(
            err("board: x\nstart: a\nend:\n  match: c\n"),
            "m.yaml:2:8: `start` must be a mapping, found a scalar"
        );
    }
}
