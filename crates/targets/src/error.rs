//! Errors, each pointing at a file, line, column and field.

use lever_kernel::KernelError;
use lever_yaml::{FieldError, LoadError, Pos, SyntaxError};

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
    /// that is missing or unreadable on this kernel). The file is as given
    /// to [`crate::parse`] (`builtin:NAME.yaml` for built-in targets).
    #[error("{error}")]
    Field {
        /// File, line, column, field and message.
        error: FieldError,
        /// The kernel error behind a bind-time failure, if any (its text is
        /// already part of the message).
        kernel: Option<Box<KernelError>>,
    },
    /// The file is not valid YAML (or uses a construct target files forbid,
    /// such as aliases). Line and column come from the YAML scanner.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A target file could not be read, or a name is neither a built-in
    /// target nor a file.
    #[error(transparent)]
    Load(#[from] LoadError),
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
            TargetError::Field { error: e, .. } => Some((&e.file, e.line, e.col)),
            TargetError::Syntax(e) => Some((&e.file, e.line, e.col)),
            _ => None,
        }
    }

    /// The field path for [`TargetError::Field`].
    pub fn field(&self) -> Option<&str> {
        match self {
            TargetError::Field { error, .. } => Some(&error.field),
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
            error: FieldError::new(self.file, pos, field, message),
            kernel: None,
        }
    }
}
