//! What every Lever configuration-file reader shares: errors that point at
//! `file:line:col` (and the field), and the rule "a built-in by name, or a
//! file by path".
//!
//! Target files and profiles use these so a mistake reads the same in
//! both, e.g. `` rt.yaml:22:3: field `resources.cpu_governr`: ... ``.

use crate::{Error, ErrorKind, Node, Pos};
use std::path::{Path, PathBuf};

/// A wrong field of a configuration file, printed so an editor can jump
/// there: `` FILE:LINE:COL: field `FIELD`: message ``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: field `{field}`: {message}")]
pub struct FieldError {
    /// The file (`builtin:NAME.yaml` for built-in files).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Path of the field, e.g. `resources[2].low`.
    pub field: String,
    /// What is wrong and, where it helps, what is allowed.
    pub message: String,
}

impl FieldError {
    /// An error in `file` at `pos` about `field`.
    pub fn new(file: &str, pos: Pos, field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            file: file.to_string(),
            line: pos.line,
            col: pos.col,
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A file that is not valid YAML, or uses a construct this reader refuses:
/// `FILE:LINE:COL: YAML syntax error: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: YAML syntax error: {message}")]
pub struct SyntaxError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The scanner's explanation, or the reader's wording of it.
    pub message: String,
}

/// [`crate::parse`] for a named file. `explain` words the refusals for
/// this file type (e.g. what an empty file should have held); where it
/// returns `None` the kind's own text is used.
pub fn parse_file(
    file: &str,
    text: &str,
    explain: impl Fn(&ErrorKind) -> Option<String>,
) -> Result<Node, SyntaxError> {
    crate::parse(text).map_err(|Error { pos, kind }| SyntaxError {
        file: file.to_string(),
        line: pos.line,
        col: pos.col,
        message: explain(&kind).unwrap_or_else(|| kind.to_string()),
    })
}

/// Loading a built-in or a file failed before any YAML was read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: cannot read {kind} file: {source}")]
    Read {
        /// What the file holds (`target`, `profile`).
        kind: &'static str,
        /// The path as given.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A name that is neither a built-in nor a file.
    #[error("unknown {kind} `{name}` (built-in {kind}s: {}; or give the path of a .yaml {kind} file)", known.join(", "))]
    Unknown {
        /// What the file holds (`target`, `profile`).
        kind: &'static str,
        /// What was asked for.
        name: String,
        /// The built-in names.
        known: Vec<String>,
    },
}

/// A set of YAML files compiled into the binary, named, of one kind.
#[derive(Debug, Clone, Copy)]
pub struct Builtins {
    /// What the files hold, for messages (`target`, `profile`).
    pub kind: &'static str,
    /// `(name, text)` in listing order.
    pub files: &'static [(&'static str, &'static str)],
}

/// The text of one file found by [`Builtins::find`] and the names it goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What the document records as its origin: `builtin:NAME` or the path.
    pub source: String,
    /// The name errors use: `builtin:NAME.yaml` or the path.
    pub file: String,
    /// The YAML text.
    pub text: String,
}

impl Builtins {
    /// The names, in listing order.
    pub fn names(&self) -> Vec<&'static str> {
        self.files.iter().map(|(n, _)| *n).collect()
    }

    /// The text of the built-in `name`.
    pub fn text(&self, name: &str) -> Option<&'static str> {
        self.files.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// The built-in `name`.
    pub fn builtin(&self, name: &str) -> Result<Found, LoadError> {
        let text = self.text(name).ok_or_else(|| self.unknown(name))?;
        Ok(Found {
            source: format!("builtin:{name}"),
            file: format!("builtin:{name}.yaml"),
            text: text.to_string(),
        })
    }

    /// The file at `path`.
    pub fn path(&self, path: &Path) -> Result<Found, LoadError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
            kind: self.kind,
            path: shown.clone(),
            source,
        })?;
        Ok(Found {
            source: shown.clone(),
            file: shown,
            text,
        })
    }

    /// What a name given by a user means: a built-in name, else the path
    /// of a file (anything with a `/` or a `.yaml`/`.yml` ending, or an
    /// existing file). A relative path is taken below `dir` when given (an
    /// include is relative to the including file).
    pub fn find(&self, name_or_path: &str, dir: Option<&Path>) -> Result<Found, LoadError> {
        if self.text(name_or_path).is_some() {
            return self.builtin(name_or_path);
        }
        let path = match dir {
            Some(dir) if Path::new(name_or_path).is_relative() => dir.join(name_or_path),
            _ => PathBuf::from(name_or_path),
        };
        let looks_like_path = name_or_path.contains('/')
            || name_or_path.ends_with(".yaml")
            || name_or_path.ends_with(".yml");
        if looks_like_path || path.exists() {
            return self.path(&path);
        }
        Err(self.unknown(name_or_path))
    }

    fn unknown(&self, name: &str) -> LoadError {
        LoadError::Unknown {
            kind: self.kind,
            name: name.to_string(),
            known: self.names().iter().map(|s| s.to_string()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Builtins = Builtins {
        kind: "thing",
        files: &[("one", "a: 1\n"), ("two", "b: 2\n")],
    };

    #[test]
    fn builtins_by_name_and_files_by_path() {
        let f = B.find("one", None).unwrap();
        assert_eq!(
            (f.source.as_str(), f.file.as_str()),
            ("builtin:one", "builtin:one.yaml")
        );
        let e = B.find("three", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown thing `three` (built-in things: one, two; or give the path of a .yaml thing file)"
        );
        let e = B
            .find("missing.yaml", Some(Path::new("/nonexistent")))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/missing.yaml: cannot read thing file: "),
            "{e}"
        );
        let dir = tempfile_dir();
        std::fs::write(dir.join("x"), "c: 3\n").unwrap();
        let f = B.find("x", Some(&dir)).unwrap();
        assert_eq!(f.text, "c: 3\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("lever-yaml-file-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn errors_point_at_the_place() {
        let e = parse_file("f.yaml", "a: [\n", |_| None).unwrap_err();
        assert!(e.to_string().starts_with("f.yaml:"), "{e}");
        let e = parse_file("f.yaml", "", |k| {
            (*k == ErrorKind::Empty).then(|| "nothing here".to_string())
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "f.yaml:1:1: YAML syntax error: nothing here");
        let e = FieldError::new("f.yaml", Pos { line: 2, col: 3 }, "a.b", "bad");
        assert_eq!(e.to_string(), "f.yaml:2:3: field `a.b`: bad");
    }
}
