//! One call per `lever results` command (and `lever report collect`'s
//! store step): open the store named by `--db` (or the default file), do
//! one thing.
use crate::error::StoreError;
use crate::model::Run;
use crate::store::{Filter, RunId, RunSummary, Store, TrendPoint, TrendQuery};
use crate::Exported;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `lever results list`.
pub fn list(db: Option<&str>, filter: &Filter) -> Result<Vec<RunSummary>, StoreError> {
    Store::open(db)?.list(filter)
}

/// A stored run for `show`: `--json` prints the document as stored (with
/// any keys a newer collector added), the table view reads the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The run.
    pub run: Run,
    /// Its document as stored.
    pub document: serde_json::Value,
}

impl Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.document.serialize(s)
    }
}

/// `lever results show RUN`.
pub fn show(db: Option<&str>, id: RunId) -> Result<Shown, StoreError> {
    let mut store = Store::open(db)?;
    let document = store.document(id)?;
    let run = crate::store::run_from(&document).map_err(|source| StoreError::BadRun {
        what: format!("run {id} in {}", store.location()),
        source,
    })?;
    Ok(Shown { run, document })
}

/// The stored runs of `base`'s build, oldest first, each with its id
/// (`lever report render --base-reruns-from-store`): the same board as
/// filed ([`crate::store::board_name`]), kernel release and Lever
/// version, other than the runs in `given` (the same board and
/// collection time).
pub fn reruns_of(
    db: Option<&str>,
    base: &Run,
    given: &[Run],
) -> Result<Vec<(RunId, Run)>, StoreError> {
    let mut store = Store::open(db)?;
    let board = crate::store::board_name(base);
    let filter = Filter {
        board: Some(board),
        since: None,
    };
    let ids: Vec<RunId> = store
        .list(&filter)?
        .into_iter()
        .filter(|s| {
            s.kernel_release == base.device.kernel_release && s.lever_version == base.lever_version
        })
        .filter(|s| {
            !given
                .iter()
                .any(|g| crate::store::board_name(g) == s.board && g.collected_at == s.collected_at)
        })
        .map(|s| s.id)
        .collect();
    ids.into_iter()
        .map(|id| {
            let document = store.document(id)?;
            let run = crate::store::run_from(&document).map_err(|source| StoreError::BadRun {
                what: format!("run {id} in {}", store.location()),
                source,
            })?;
            Ok((id, run))
        })
        .collect()
}

/// `lever results trend METRIC`.
pub fn trend(db: Option<&str>, query: &TrendQuery) -> Result<Vec<TrendPoint>, StoreError> {
    Store::open(db)?.trend(query)
}

/// Every metric name in the store (`lever results trend`'s suggestions).
pub fn metric_names(db: Option<&str>) -> Result<Vec<String>, StoreError> {
    Store::open(db)?.metric_names()
}

/// `lever results export --parquet DIR`.
pub fn export_parquet(db: Option<&str>, dir: &Path) -> Result<Exported, StoreError> {
    #[cfg(feature = "parquet")]
    {
        Store::open(db)?.export_parquet(dir)
    }
    // Said before the store is opened (or created).
    #[cfg(not(feature = "parquet"))]
    {
        let _ = db;
        Err(crate::export::not_built(dir))
    }
}

/// What storing a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stored {
    /// The new run's id.
    pub id: RunId,
    /// The board it is filed under.
    pub board: String,
    /// When it was collected.
    pub collected_at: String,
    /// The store (a path, or PostgreSQL without password).
    pub store: String,
    /// The file it came from, for `import`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// `import` found the same document already stored (run `id`) and
    /// stored nothing: importing a run twice keeps one copy.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_stored: bool,
}

/// Store a run just collected (what `lever report collect` calls).
pub fn save(db: Option<&str>, run: &Run) -> Result<Stored, StoreError> {
    let mut store = Store::open(db)?;
    let id = store.save(run)?;
    Ok(stored(&store, id, run))
}

fn stored(store: &Store, id: RunId, run: &Run) -> Stored {
    Stored {
        id,
        board: crate::store::board_name(run),
        collected_at: run.collected_at.clone(),
        store: store.location().to_string(),
        file: None,
        already_stored: false,
    }
}

/// `lever results import RUN.json`: store a run collected elsewhere.
pub fn import(db: Option<&str>, file: &Path) -> Result<Stored, StoreError> {
    let text = std::fs::read_to_string(file).map_err(|source| StoreError::ReadRun {
        path: file.to_path_buf(),
        source,
    })?;
    let bad = |source| StoreError::BadRun {
        what: file.display().to_string(),
        source,
    };
    let document: serde_json::Value = serde_json::from_str(&text).map_err(bad)?;
    let run: Run = serde_json::from_str(&text).map_err(bad)?;
    let mut store = Store::open(db)?;
    let (id, already_stored) = match store.find_document(&run, &document)? {
        Some(id) => (id, true),
        None => (store.save_document(&run, &document)?, false),
    };
    let mut stored = stored(&store, id, &run);
    stored.file = Some(file.to_path_buf());
    stored.already_stored = already_stored;
    Ok(stored)
}
