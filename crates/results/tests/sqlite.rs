//! The store on SQLite files.
mod common;

use lever_results::{ErrorKind, Store, StoreError};

fn open(path: &std::path::Path) -> Result<Store, StoreError> {
    Store::open(Some(path.to_str().unwrap()))
}

#[test]
fn a_run_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    common::round_trip(&mut open(&dir.path().join("r.db")).unwrap());
}

#[test]
fn trend_orders_filters_and_matches_labels() {
    let dir = tempfile::tempdir().unwrap();
    common::trend(&mut open(&dir.path().join("r.db")).unwrap());
}

#[test]
fn an_empty_file_is_migrated_and_reopening_keeps_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let mut store = open(&path).unwrap();
    let id = store
        .save(&common::run("b", "2026-11-23T14:00:00Z", 1.0))
        .unwrap();
    drop(store);
    let check = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = check
        .query_row("SELECT version FROM lever_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, lever_results::schema::VERSION);
    let mut tables: Vec<String> = check
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables.sort();
    assert_eq!(
        tables,
        ["boards", "lever_schema", "metrics", "runs", "samples"]
    );
    drop(check);
    let mut again = open(&path).unwrap();
    assert_eq!(again.get(id).unwrap().collected_at, "2026-11-23T14:00:00Z");
    assert_eq!(again.list(&Default::default()).unwrap().len(), 1);
}

/// The `pass` of every sample of `path`'s store, in metric and seq order.
fn passes(path: &std::path::Path) -> Vec<Option<i64>> {
    let db = rusqlite::Connection::open(path).unwrap();
    let mut q = db
        .prepare("SELECT pass FROM samples ORDER BY metric_id, seq")
        .unwrap();
    q.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Each sample keeps the pass of `lever bench` it was taken in (NULL when
/// it was not taken in passes), and a store of schema 1, which had no such
/// column, gets it from its runs' documents when opened.
#[test]
fn samples_keep_their_pass_and_an_older_store_gets_it_from_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut store = open(&path).unwrap();
    store
        .save(&common::run("b", "2026-11-23T14:00:00Z", 1.0))
        .unwrap();
    let mut uneven = common::run("b", "2026-11-24T14:00:00Z", 2.0);
    uneven.sections[0].metrics[0].pass_samples = vec![1, 1];
    // Counts that would wrap round to the 4 samples (a run file is input).
    uneven.sections[0].metrics[1].pass_samples = vec![usize::MAX, 5];
    store.save(&uneven).unwrap();
    drop(store);
    let want: Vec<Option<i64>> = [Some(0), Some(1), Some(1), Some(1)]
        .into_iter()
        .chain([None; 4])
        // Passes that do not add up to the samples: no pass is said.
        .chain([None; 8])
        .collect();
    assert_eq!(passes(&path), want);
    // The same store as schema 1 wrote it: no pass column.
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch("ALTER TABLE samples DROP COLUMN pass; UPDATE lever_schema SET version = 1")
        .unwrap();
    drop(db);
    let mut store = open(&path).unwrap();
    assert_eq!(store.list(&Default::default()).unwrap().len(), 2);
    drop(store);
    assert_eq!(passes(&path), want);
}

#[test]
fn a_corrupt_file_is_named_as_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    std::fs::write(&path, "these are my notes, not a database\n".repeat(200)).unwrap();
    let err = open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::BadInput);
    assert!(
        err.to_string().contains("notes.db: not an SQLite database"),
        "{err}"
    );
    // The file is left as it was.
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .starts_with("these are my notes"));
}

#[test]
fn a_foreign_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE runs (x TEXT); CREATE TABLE photos (y BLOB)")
        .unwrap();
    drop(conn);
    let err = open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
    assert!(err.to_string().contains("photos, runs"), "{err}");
    assert_eq!(err.kind(), ErrorKind::BadInput);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    drop(open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("UPDATE lever_schema SET version = 99")
        .unwrap();
    drop(conn);
    let err = open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found: 99, .. }),
        "{err:?}"
    );
}

#[test]
fn a_missing_directory_is_not_available() {
    let dir = tempfile::tempdir().unwrap();
    let err = open(&dir.path().join("no/such/dir/r.db")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotAvailable, "{err}");
    assert!(err.to_string().contains("no/such/dir/r.db"), "{err}");
}

#[test]
fn a_run_without_an_rfc3339_time_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir.path().join("r.db")).unwrap();
    let err = store
        .save(&common::run("b", "Mon Nov 23", 1.0))
        .unwrap_err();
    assert!(matches!(err, StoreError::BadTime { .. }), "{err:?}");
    assert!(store.list(&Default::default()).unwrap().is_empty());
}

#[test]
fn two_writers_on_one_file_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut store = open(&path).unwrap();
                for i in 0..25 {
                    let at = format!("2026-11-{:02}T10:00:00Z", i % 28 + 1);
                    store
                        .save(&common::run(&format!("w{w}"), &at, f64::from(i)))
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let mut store = open(&path).unwrap();
    assert_eq!(store.list(&Default::default()).unwrap().len(), 50);
}
