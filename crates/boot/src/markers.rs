//! Journal start/end markers, configurable per board in a small YAML file.
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
//! missing `match`, a non-string value, a duplicate key, anchors/aliases
//! and YAML syntax errors are reported as `file:line:col: message`.
//! [`Markers::default`] is the seed's pair.

use serde::Serialize;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker as Pos;

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

struct Reader<'a> {
    file: &'a str,
    parser: Parser<std::str::Chars<'a>>,
}

impl<'a> Reader<'a> {
    fn err(&self, pos: Pos, message: impl Into<String>) -> BootError {
        BootError::Config {
            file: self.file.to_string(),
            // yaml-rust2: line is 1-based, column 0-based.
            line: pos.line().max(1),
            col: pos.col() + 1,
            message: message.into(),
        }
    }

    fn next(&mut self) -> Result<(Event, Pos), BootError> {
        self.parser.next_token().map_err(|e| BootError::Config {
            file: self.file.to_string(),
            line: e.marker().line().max(1),
            col: e.marker().col() + 1,
            message: format!("YAML syntax: {}", e.info()),
        })
    }

    fn what(ev: &Event) -> &'static str {
        match ev {
            Event::Scalar(..) => "a scalar",
            Event::SequenceStart(..) => "a list",
            Event::MappingStart(..) => "a mapping",
            Event::Alias(_) => "an alias",
            _ => "nothing",
        }
    }

    /// A string scalar value.
    fn string(&mut self, key: &str) -> Result<String, BootError> {
        let (ev, pos) = self.next()?;
        match ev {
            Event::Scalar(s, _, anchor, _) if anchor == 0 && !s.is_empty() => Ok(s),
            Event::Scalar(..) if matches!(ev, Event::Scalar(_, _, a, _) if a != 0) => {
                Err(self.err(pos, "anchors and aliases are not supported"))
            }
            Event::Scalar(..) => Err(self.err(pos, format!("`{key}` is empty; expected text"))),
            other => Err(self.err(
                pos,
                format!("`{key}` must be text, found {}", Self::what(&other)),
            )),
        }
    }

    /// Walk a mapping, calling `entry(reader, key, key_pos)` for each key;
    /// returns where its first key is.
    fn mapping(
        &mut self,
        what: &str,
        allowed: &[&str],
        mut entry: impl FnMut(&mut Self, &str, Pos) -> Result<(), BootError>,
    ) -> Result<Pos, BootError> {
        let (ev, start) = self.next()?;
        if !matches!(ev, Event::MappingStart(0, _)) {
            return Err(self.err(
                start,
                format!("{what} must be a mapping, found {}", Self::what(&ev)),
            ));
        }
        let mut seen: Vec<String> = Vec::new();
        let mut first_key = start;
        loop {
            let (ev, pos) = self.next()?;
            match ev {
                Event::MappingEnd => return Ok(first_key),
                Event::Scalar(key, ..) => {
                    if seen.is_empty() {
                        first_key = pos;
                    }
                    if !allowed.contains(&key.as_str()) {
                        return Err(self.err(
                            pos,
                            format!(
                                "unknown key `{key}` in {what}; expected one of: {}",
                                allowed.join(", ")
                            ),
                        ));
                    }
                    if seen.contains(&key) {
                        return Err(self.err(pos, format!("duplicate key `{key}` in {what}")));
                    }
                    seen.push(key.clone());
                    entry(self, &key, pos)?;
                }
                other => {
                    return Err(self.err(
                        pos,
                        format!("keys must be text, found {}", Self::what(&other)),
                    ))
                }
            }
        }
    }

    /// A `start:`/`end:` mapping; `key_pos` is where its key is.
    fn marker(&mut self, which: &str, key_pos: Pos) -> Result<Marker, BootError> {
        let (mut name, mut pattern) = (None, None);
        self.mapping(&format!("`{which}`"), &["name", "match"], |r, key, _| {
            let v = r.string(key)?;
            if key == "name" {
                name = Some(v);
            } else {
                pattern = Some(v);
            }
            Ok(())
        })?;
        let pattern = pattern.ok_or_else(|| {
            self.err(
                key_pos,
                format!("`{which}` needs `match:` (the journal text to look for)"),
            )
        })?;
        Ok(Marker {
            name: name.unwrap_or_else(|| pattern.clone()),
            pattern,
        })
    }
}

/// Parse a marker file. `file` is only used in messages.
pub fn parse(file: &str, text: &str) -> Result<Markers, BootError> {
    let mut r = Reader {
        file,
        parser: Parser::new_from_str(text),
    };
    // StreamStart, then DocumentStart (or StreamEnd for an empty file).
    r.next()?;
    let (ev, pos) = r.next()?;
    if !matches!(ev, Event::DocumentStart) {
        return Err(r.err(
            pos,
            "the marker file is empty; expected `start:` and `end:`",
        ));
    }
    let (mut board, mut start, mut end) = (None, None, None);
    let top = r.mapping(
        "the marker file",
        &["board", "start", "end"],
        |r, key, pos| {
            match key {
                "board" => board = Some(r.string(key)?),
                "start" => start = Some(r.marker("start", pos)?),
                _ => end = Some(r.marker("end", pos)?),
            }
            Ok(())
        },
    )?;
    let (ev, pos) = r.next()?;
    if !matches!(ev, Event::DocumentEnd) {
        return Err(r.err(pos, "more than one YAML document; expected one"));
    }
    if let (Event::DocumentStart, pos) = r.next()? {
        return Err(r.err(pos, "more than one YAML document; expected one"));
    }
    let missing = |k: &str| r.err(top, format!("the marker file needs `{k}:` with `match:`"));
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
    }
}
