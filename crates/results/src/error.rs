//! What can go wrong with a results store, each error naming the store
//! (a path, or a PostgreSQL location with its password removed).
use std::path::PathBuf;

/// A failed store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `--db` is neither a path nor a PostgreSQL URL / key=value string.
    #[error("--db {location:?}: {reason}")]
    BadLocation {
        /// What was given.
        location: String,
        /// Why it is not a store location.
        reason: String,
    },
    /// The SQLite file (or its directory) could not be opened.
    #[error("results store {}: {source}", path.display())]
    Io {
        /// The database file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The file exists but is not an SQLite database (or is corrupt).
    #[error("results store {}: not an SQLite database (corrupt, or another kind of file)", path.display())]
    NotADatabase {
        /// The file.
        path: PathBuf,
    },
    /// The database holds tables that are not a Lever results store.
    #[error("results store {location}: not a Lever results store (it has tables {} but no lever_schema table); give another --db", tables.join(", "))]
    Foreign {
        /// The store.
        location: String,
        /// The tables found.
        tables: Vec<String>,
    },
    /// The store was written by a newer Lever.
    #[error("results store {location}: schema version {found} is newer than this Lever's {known}; use a newer lever")]
    TooNew {
        /// The store.
        location: String,
        /// Version in the store.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
    /// The PostgreSQL server could not be reached (no server, no such
    /// database, a broken connection).
    #[error("results store {location}: cannot connect: {source}")]
    Unreachable {
        /// The store, password removed.
        location: String,
        /// The driver's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The PostgreSQL server refused the user (authentication, privileges).
    #[error("results store {location}: access denied: {source}")]
    Denied {
        /// The store, password removed.
        location: String,
        /// The driver's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A statement failed.
    #[error("results store {location}: {source}")]
    Database {
        /// The store.
        location: String,
        /// The driver's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No run with this id in the store.
    #[error("results store {location}: no run {id} (`lever results list` shows the runs)")]
    NoSuchRun {
        /// The store.
        location: String,
        /// The id asked for.
        id: i64,
    },
    /// A run document (a file, or a stored one) that does not parse.
    #[error("{what}: not a run document: {source}")]
    BadRun {
        /// The file, or `run N in STORE`.
        what: String,
        /// serde's error, with line and column.
        source: serde_json::Error,
    },
    /// A run whose `collected_at` is not RFC 3339 (`2026-11-23T14:00:00Z`):
    /// the store orders and filters runs by that text.
    #[error("{what}: collected_at {value:?} is not an RFC 3339 time such as 2026-11-23T14:00:00Z")]
    BadTime {
        /// The file or run.
        what: String,
        /// The value found.
        value: String,
    },
    /// A `--since` or `--label` value that does not parse.
    #[error("{flag} {value:?}: {expected}")]
    BadFilter {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A run file that could not be read.
    #[error("{}: {source}", path.display())]
    ReadRun {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// What was asked for needs a part of Lever this build was made
    /// without (a board's build has no PostgreSQL client or Parquet
    /// writer; docs/install.md lists the features of each build).
    #[error("{what} needs the `{feature}` feature, which this lever was built without: build with `--features {feature}`, or use the host build (the default features)")]
    NotInThisBuild {
        /// What was asked for (`--db postgres://lab/results`,
        /// `results export --parquet`), passwords removed.
        what: String,
        /// The cargo feature that provides it.
        feature: &'static str,
    },
    /// Writing the Parquet export failed.
    #[error("{}: {source}", path.display())]
    Export {
        /// The file being written.
        path: PathBuf,
        /// What failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// What kind of failure a [`StoreError`] is, for exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A location, file or filter value that does not parse; a file that is
    /// not a store.
    BadInput,
    /// Something asked for is not there (a run id, a file, a server).
    NotAvailable,
    /// A permission is missing.
    NotAllowed,
    /// Anything else.
    Failed,
}

impl StoreError {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        use StoreError as E;
        let io = |e: &std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotAvailable,
            std::io::ErrorKind::PermissionDenied => ErrorKind::NotAllowed,
            _ => ErrorKind::Failed,
        };
        match self {
            E::BadLocation { .. }
            | E::NotADatabase { .. }
            | E::Foreign { .. }
            | E::TooNew { .. }
            | E::BadRun { .. }
            | E::BadTime { .. }
            | E::BadFilter { .. } => ErrorKind::BadInput,
            E::Unreachable { .. } | E::NoSuchRun { .. } | E::NotInThisBuild { .. } => {
                ErrorKind::NotAvailable
            }
            E::Denied { .. } => ErrorKind::NotAllowed,
            E::Io { source, .. } | E::ReadRun { source, .. } => io(source),
            E::Database { .. } | E::Export { .. } => ErrorKind::Failed,
        }
    }
}
