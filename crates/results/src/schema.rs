//! The store's tables and their migrations (documented in docs/results.md).
//!
//! The schema is the same on SQLite and PostgreSQL; `{id}` in a statement
//! is the dialect's database-assigned id column (`Dialect::id_column`).
//! Types are those both databases read alike: `BIGINT`, `DOUBLE PRECISION`
//! (8-byte IEEE on both, so values read back bit-exact), `TEXT`. Times are
//! RFC 3339 UTC text, which sorts as time does.
use crate::db::{Db, Dialect};

/// The newest schema version this build writes.
pub const VERSION: i64 = 2;

/// The statements that take a store from version N to N+1, `MIGRATIONS[N]`.
/// Add a step for a change; never edit a released one.
const MIGRATIONS: &[&[&str]] = &[
    // 0 -> 1: the first schema.
    &[
        "CREATE TABLE lever_schema (version BIGINT NOT NULL)",
        "INSERT INTO lever_schema (version) VALUES (0)",
        // One row per board name (the run's device.board, else its host
        // name, else `unknown`).
        "CREATE TABLE boards ({id}, name TEXT NOT NULL UNIQUE, soc TEXT, arch TEXT)",
        // One row per stored run; `document` is the run's JSON exactly as
        // stored, which `show` returns.
        "CREATE TABLE runs ({id}, board_id BIGINT NOT NULL REFERENCES boards (id), \
         collected_at TEXT NOT NULL, kernel_release TEXT, lever_version TEXT NOT NULL, \
         document TEXT NOT NULL)",
        "CREATE INDEX runs_by_board_time ON runs (board_id, collected_at)",
        "CREATE INDEX runs_by_time ON runs (collected_at)",
        // One row per metric of a run; `labels` is a JSON object of text.
        "CREATE TABLE metrics ({id}, run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, \
         section TEXT NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL, \
         value DOUBLE PRECISION NOT NULL, labels TEXT NOT NULL, better TEXT)",
        "CREATE INDEX metrics_by_name ON metrics (name, run_id)",
        "CREATE INDEX metrics_by_run ON metrics (run_id)",
        // A metric's individual samples, in order.
        "CREATE TABLE samples (metric_id BIGINT NOT NULL REFERENCES metrics (id) ON DELETE CASCADE, \
         seq BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL, PRIMARY KEY (metric_id, seq))",
    ],
    // 1 -> 2: the pass of `lever bench` each sample was taken in (NULL for
    // samples not taken in passes); filled for stored runs from their
    // documents ([`backfill_passes`]).
    &["ALTER TABLE samples ADD COLUMN pass BIGINT"],
];

/// The tables a store has, for telling a store from a foreign database.
pub(crate) const TABLES: &[&str] = &["boards", "lever_schema", "metrics", "runs", "samples"];

/// The statements of step `from` -> `from + 1` in `dialect`.
pub(crate) fn step(from: i64, dialect: Dialect) -> Vec<String> {
    MIGRATIONS[from as usize]
        .iter()
        .map(|s| s.replace("{id}", dialect.id_column()))
        .collect()
}

/// Apply every step above `current` (inside the caller's transaction).
pub(crate) fn migrate(
    db: &mut dyn Db,
    current: i64,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    for from in current..VERSION {
        for sql in step(from, db.dialect()) {
            db.batch(&sql)?;
        }
        if from == 1 {
            backfill_passes(db)?;
        }
        db.batch(&format!("UPDATE lever_schema SET version = {}", from + 1))?;
    }
    Ok(())
}

/// Step 1 -> 2's data: each stored run's samples get the pass they were
/// taken in, from its document's `pass_samples` (the document is the
/// truth, the tables its index). Metrics were stored in the document's
/// order, so the run's metric rows by id pair with its metrics; a run
/// whose rows do not pair by name, or whose document this Lever cannot
/// read, keeps NULL. One statement per pass of a metric.
fn backfill_passes(db: &mut dyn Db) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    for r in db.query("SELECT id, document FROM runs ORDER BY id", &[])? {
        let Ok(run) = serde_json::from_str::<crate::model::Run>(&r[1].text()) else {
            continue;
        };
        let rows = db.query(
            "SELECT id, name FROM metrics WHERE run_id = $1 ORDER BY id",
            &[r[0].int().into()],
        )?;
        let metrics: Vec<&crate::model::Metric> =
            run.sections.iter().flat_map(|s| &s.metrics).collect();
        if rows.len() != metrics.len()
            || rows
                .iter()
                .zip(&metrics)
                .any(|(r, m)| r[1].text() != m.name)
        {
            continue;
        }
        for (row, m) in rows.iter().zip(metrics) {
            let passes = m.sample_passes();
            let mut seq = 0i64;
            for (pass, &n) in (0i64..).zip(&m.pass_samples) {
                if passes.is_empty() {
                    break;
                }
                db.query(
                    "UPDATE samples SET pass = $1 WHERE metric_id = $2 AND seq >= $3 AND seq < $4",
                    &[
                        pass.into(),
                        row[0].int().into(),
                        seq.into(),
                        (seq + n as i64).into(),
                    ],
                )?;
                seq += n as i64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_names_its_ids_per_dialect() {
        assert_eq!(MIGRATIONS.len() as i64, VERSION);
        let lite = step(0, Dialect::Sqlite).join(";");
        let pg = step(0, Dialect::Postgres).join(";");
        assert!(!lite.contains("{id}") && !pg.contains("{id}"));
        assert!(lite.contains("id INTEGER PRIMARY KEY"));
        assert!(pg.contains("GENERATED BY DEFAULT AS IDENTITY"));
        for t in TABLES {
            assert!(lite.contains(&format!("CREATE TABLE {t} ")), "{t}");
        }
    }
}
