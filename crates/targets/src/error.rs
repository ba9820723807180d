//! Errors, each pointing at a file, line, column and field.

use lever_kernel::KernelError;
use lever_yaml::Pos;

/// Everything that can go wrong loading, parsing or binding a target.
///
/// Problems inside a target file are [`TargetError::Field`] and print as
/// `` FILE:LINE:COL: field `FIELD`: message ``, so an editor can jump there:
///
/// ```text
/// qcs6490.yaml:14:5: field `resources[2].aggregtion`: unknown key (expected one of: name, opcode, ...)
/// ```
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// A problem with one field of a target file (also at bind time: a node
    /// that is missing or unreadable on this kernel).
    #[error("{file}:{line}:{col}: field `{field}`: {message}")]
    Field {
        /// The file as given to [`crate::parse`] (`builtin:NAME.yaml` for
        /// built-in targets).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// Path of the field, e.g. `resources[2].low`.
        field: String,
        /// What is wrong and, where it helps, what is allowed.
        message: String,
        /// The kernel error behind a bind-time failure, if any (its text is
        /// already part of `message`).
        kernel: Option<Box<KernelError>>,
    },
    /// The file is not valid YAML (or uses a construct target files forbid,
    /// such as aliases). Line and column come from the YAML scanner.
    #[error("{file}:{line}:{col}: YAML syntax error: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The scanner's explanation.
        message: String,
    },
    /// A target file could not be read.
    #[error("{path}: cannot read target file: {source}")]
    Read {
        /// The path as given.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A name that is neither a built-in target nor a file.
    #[error("unknown target `{name}` (built-in targets: {}; or give the path of a .yaml target file)", known.join(", "))]
    Unknown {
        /// What was asked for.
        name: String,
        /// The built-in target names.
        known: Vec<String>,
    },
    /// The device's compatible strings could not be read for detection.
    #[error("cannot detect the target: {source}")]
    Detect {
        /// The kernel error (e.g. permission denied on
        /// `/proc/device-tree/compatible`).
        source: KernelError,
    },
}

impl TargetError {
    /// `(file, line, col)` for errors located in a target file.
    pub fn location(&self) -> Option<(&str, usize, usize)> {
        match self {
            TargetError::Field {
                file, line, col, ..
            }
            | TargetError::Syntax {
                file, line, col, ..
            } => Some((file, *line, *col)),
            _ => None,
        }
    }

    /// The field path for [`TargetError::Field`].
    pub fn field(&self) -> Option<&str> {
        match self {
            TargetError::Field { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// Builds [`TargetError::Field`]s that point into one target file; shared
/// by the decoder and binding.
pub(crate) struct InFile<'a> {
    /// The file's name in messages.
    pub file: &'a str,
}

impl InFile<'_> {
    /// An error at `pos` about `field`.
    pub fn err(
        &self,
        pos: Pos,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> TargetError {
        TargetError::Field {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            field: field.into(),
            message: message.into(),
            kernel: None,
        }
    }
}
