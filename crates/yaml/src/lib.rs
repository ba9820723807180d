//! A small YAML tree that remembers where everything came from, for the
//! configuration files Lever reads (target files, boot-stage marker files):
//! their errors must say `file:line:col` and which field is wrong.
//!
//! yaml-rust2's own `Yaml` type drops positions, so the text is read with
//! its event parser and folded into this tree: every scalar, sequence and
//! mapping — and every mapping *key* — keeps the 1-based line and column it
//! started at ([`Pos`]). Mappings keep all their entries in file order
//! (duplicates included), so a reader can report a duplicate key instead of
//! silently keeping the last one; [`Node::mapping`] does that check, and
//! the check for unknown keys, for every reader.
//!
//! Deliberately unsupported, with an [`Error`] rather than a guess: aliases
//! (`*name`; an anchor without an alias is a harmless label and is
//! ignored), more than one document, an empty file, and nesting deeper than
//! [`MAX_DEPTH`]. The caller words these for its own file type
//! ([`ErrorKind`]).
//!
//! ```
//! use lever_yaml::{parse, Pos, Value};
//!
//! let doc = parse("start:\n  match: \"enforcing=1\"\n").unwrap();
//! let top = doc.mapping(&["start", "end"]).unwrap();
//! assert_eq!(top.key_pos("start"), Some(Pos { line: 1, col: 1 }));
//! let start = top.get("start").unwrap().mapping(&["name", "match"]).unwrap();
//! let pattern = start.get("match").unwrap();
//! assert_eq!(pattern.pos, Pos { line: 2, col: 10 });
//! assert_eq!(pattern.as_str(), Some("enforcing=1"));
//! assert!(matches!(pattern.value, Value::Scalar { plain: false, .. }));
//!
//! // Errors carry the position of the mistake.
//! let err = parse("a: 1\n b: [\n").unwrap_err();
//! assert_eq!(err.pos, Pos { line: 2, col: 3 });
//! let err = doc.mapping(&["begin"]).unwrap_err();
//! assert_eq!(err.to_string(), "1:1: unknown key `start` (expected one of: begin)");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod build;
mod file;
mod mapping;

pub use build::{parse, MAX_DEPTH};
pub use file::{parse_file, Builtins, FieldError, Found, LoadError, SyntaxError};
pub use mapping::{Entry, MapError, Mapping};

use std::fmt;

/// A 1-based line and column in a YAML file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    /// Line, starting at 1.
    pub line: usize,
    /// Column, starting at 1.
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the node starts. A block mapping is placed at its first key; an
    /// empty mapping value (`key:` with nothing after it) at its key.
    pub pos: Pos,
    /// What it holds.
    pub value: Value,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar; `plain` is false for quoted and block scalars, whose text is
    /// always a string (`"1"` is not the integer 1, `""` is not null).
    Scalar {
        /// The text, unquoted and unescaped.
        text: String,
        /// True when written without quotes or block indicators.
        plain: bool,
    },
    /// A sequence (`- a` or `[a, b]`).
    Seq(Vec<Node>),
    /// A mapping, as (key, value) pairs in file order, duplicates included.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// True for `~`, `null`, `Null`, `NULL` and an empty plain scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, plain: true }
            if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// The text of a scalar (a null scalar too), `None` for a list or
    /// mapping.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// A short name of the node's type, for "expected X, found Y" messages:
    /// `nothing (null)`, `a scalar`, `a list`, `a mapping`.
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            _ if self.is_null() => "nothing (null)",
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Why a text is not a tree this crate returns, at [`Error::pos`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The YAML scanner's or parser's own explanation (bad indentation, an
    /// unclosed quote or bracket, ...).
    Syntax(String),
    /// An alias (`*name`).
    Alias,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// No document at all (an empty file, or only comments); at 1:1.
    Empty,
    /// A second document (`---`); at its start.
    SecondDocument,
}

/// A YAML syntax problem, or a construct this reader refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {kind}")]
pub struct Error {
    /// Where the problem is.
    pub pos: Pos,
    /// What it is.
    pub kind: ErrorKind,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Syntax(info) => f.write_str(info),
            ErrorKind::Alias => f.write_str("YAML aliases (`*name`) are not supported"),
            ErrorKind::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
            ErrorKind::Empty => f.write_str("the file is empty"),
            ErrorKind::SecondDocument => f.write_str("more than one YAML document"),
        }
    }
}
