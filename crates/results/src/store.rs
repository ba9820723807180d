//! The results store: runs kept in SQLite (a file, the default) or
//! PostgreSQL (a lab's server), queried by board, time and metric.
use crate::db::{Cell, Db, Param, Sqlite};
use crate::error::StoreError;
use crate::model::{Better, Run};
use crate::schema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A stored run's id, handed out by the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A PostgreSQL server's connection settings.
#[cfg(feature = "postgres")]
pub type PostgresConfig = postgres::Config;

/// A PostgreSQL server's connection settings, in a build without the
/// `postgres` feature: such a location is recognised (so that `--db
/// postgres://...` is not taken for a file name) but opening it says which
/// feature is missing.
#[cfg(not(feature = "postgres"))]
#[derive(Debug, Clone)]
pub struct PostgresConfig;

/// Where a store is: `--db PATH`, or `--db postgres://...` / a
/// `host=... dbname=...` connection string.
#[derive(Debug, Clone)]
pub enum Location {
    /// An SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL server, and how it is named in messages (no password).
    Postgres(Box<PostgresConfig>, String),
}

impl Location {
    /// Parse a `--db` value. `postgres://`/`postgresql://` URLs (`postgres:///lab?host=/run/postgresql`
    /// for a Unix socket) and libpq key=value strings (`host=/tmp/pg
    /// dbname=lab`) are PostgreSQL; any other `scheme://` is refused; the
    /// rest is a file path.
    pub fn parse(text: &str) -> Result<Location, StoreError> {
        let bad = |reason: String| StoreError::BadLocation {
            location: redact(text),
            reason,
        };
        let is_url = text.starts_with("postgres://") || text.starts_with("postgresql://");
        // libpq's key=value form starts with one of its keys.
        let is_keywords = text.split_once('=').is_some_and(|(k, _)| {
            [
                "host",
                "hostaddr",
                "port",
                "dbname",
                "user",
                "password",
                "application_name",
            ]
            .contains(&k.trim())
        });
        if is_url || is_keywords {
            #[cfg(feature = "postgres")]
            let config: PostgresConfig = text
                .parse()
                .map_err(|e| bad(format!("not a PostgreSQL connection string: {e}")))?;
            #[cfg(not(feature = "postgres"))]
            let config = PostgresConfig;
            return Ok(Location::Postgres(Box::new(config), redact(text)));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(bad(format!(
                "{scheme}:// is not a store; use a file path or postgres://user@host/db"
            )));
        }
        if text.is_empty() {
            return Err(bad("empty path".into()));
        }
        Ok(Location::Sqlite(PathBuf::from(text)))
    }

    /// The location as errors and reports name it (no password).
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(_, shown) => shown.clone(),
        }
    }
}

/// A connection string without its password (`user:secret@` and
/// `password=secret` become `***`).
fn redact(text: &str) -> String {
    let mut out = text.to_string();
    if let Some(rest) = text.split_once("://").map(|(_, r)| r) {
        if let Some((auth, _)) = rest.split_once('@') {
            if let Some((user, _)) = auth.split_once(':') {
                out = text.replacen(auth, &format!("{user}:***"), 1);
            }
        }
    }
    out.split(' ')
        .map(|w| match w.split_once('=') {
            Some(("password", _)) => "password=***".to_string(),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The default store file: `$XDG_DATA_HOME/lever/results.db`, else
/// `$HOME/.local/share/lever/results.db`, else (root, or a service with no
/// home) `/var/lib/lever/results.db`.
pub fn default_path(xdg_data_home: Option<&OsStr>, home: Option<&OsStr>) -> PathBuf {
    // The XDG spec says a relative value is invalid and to be ignored.
    let absolute = |v: Option<&OsStr>| v.filter(|v| Path::new(v).is_absolute()).map(PathBuf::from);
    if let Some(d) = absolute(xdg_data_home) {
        return d.join("lever/results.db");
    }
    if let Some(h) = absolute(home) {
        return h.join(".local/share/lever/results.db");
    }
    PathBuf::from("/var/lib/lever/results.db")
}

/// Which runs `list` returns.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this board.
    pub board: Option<String>,
    /// Only runs collected at or after this time ([`parse_since`]).
    pub since: Option<String>,
}

/// A stored run in `list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Its id.
    pub id: RunId,
    /// Board name as stored.
    pub board: String,
    /// When it was collected (RFC 3339).
    pub collected_at: String,
    /// Kernel release, where known.
    pub kernel_release: Option<String>,
    /// The collecting Lever's version.
    pub lever_version: String,
    /// How many metrics it holds.
    pub metrics: i64,
}

/// What `trend` follows.
#[derive(Debug, Clone, Default)]
pub struct TrendQuery {
    /// The metric's name (`latency.max`).
    pub metric: String,
    /// Only this board.
    pub board: Option<String>,
    /// Only runs collected at or after this time ([`parse_since`]).
    pub since: Option<String>,
    /// Only metrics carrying every one of these labels with these values.
    pub labels: BTreeMap<String, String>,
}

/// One value of a metric in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendPoint {
    /// The run.
    pub run: RunId,
    /// Its board.
    pub board: String,
    /// When it was collected.
    pub collected_at: String,
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// The metric's labels.
    pub labels: BTreeMap<String, String>,
    /// Which way is better, where known.
    pub better: Option<Better>,
}

/// Check a `--since` value: a date (`2026-11-01`) or an RFC 3339 time
/// (`2026-11-23T14:00:00Z`); returned as given, since stored times compare
/// as text.
pub fn parse_since(value: &str) -> Result<String, StoreError> {
    if starts_with_date(value) && (value.len() == 10 || value.as_bytes()[10] == b'T') {
        Ok(value.to_string())
    } else {
        Err(StoreError::BadFilter {
            flag: "--since",
            value: value.to_string(),
            expected: "a date (2026-11-01) or an RFC 3339 UTC time (2026-11-23T14:00:00Z)",
        })
    }
}

/// Parse a `--label k=v`.
pub fn parse_label(value: &str) -> Result<(String, String), StoreError> {
    match value.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(StoreError::BadFilter {
            flag: "--label",
            value: value.to_string(),
            expected: "KEY=VALUE, such as cpu=1",
        }),
    }
}

/// `YYYY-MM-DD` at the start of `s`.
fn starts_with_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// An open results store.
pub struct Store {
    db: Box<dyn Db + Send>,
    location: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .finish()
    }
}

impl Store {
    /// Open the store at `--db` (a path or PostgreSQL string), or the
    /// default file ([`default_path`], its directory created) when `None`.
    /// A new store gets the schema; an older one is migrated.
    pub fn open(db: Option<&str>) -> Result<Store, StoreError> {
        let location = match db {
            Some(text) => Location::parse(text)?,
            None => {
                let path = default_path(
                    std::env::var_os("XDG_DATA_HOME").as_deref(),
                    std::env::var_os("HOME").as_deref(),
                );
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                        path: dir.to_path_buf(),
                        source,
                    })?;
                }
                Location::Sqlite(path)
            }
        };
        Store::open_location(&location)
    }

    /// Open the store at `location`.
    pub fn open_location(location: &Location) -> Result<Store, StoreError> {
        let shown = location.display();
        let db: Box<dyn Db + Send> = match location {
            Location::Sqlite(path) => Box::new(Sqlite::open(path)?),
            #[cfg(feature = "postgres")]
            Location::Postgres(config, _) => {
                Box::new(crate::db::Postgres::connect(config, &shown)?)
            }
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(..) => {
                return Err(StoreError::NotInThisBuild {
                    what: format!("--db {shown:?} (a PostgreSQL store)"),
                    feature: "postgres",
                })
            }
        };
        let mut store = Store {
            db,
            location: shown,
        };
        store.prepare(location)?;
        Ok(store)
    }

    /// The store's location as reports name it.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Check that this is a store (or an empty database) and bring its
    /// schema up to date, under the dialect's write lock.
    fn prepare(&mut self, location: &Location) -> Result<(), StoreError> {
        let dialect = self.db.dialect();
        let tables: Vec<String> = self
            .query(dialect.list_tables(), &[])
            .map_err(|e| match (e, location) {
                // Opening does not read the file; the first query finds
                // out whether it is a database.
                (StoreError::Database { source, .. }, Location::Sqlite(path)) => {
                    match source.downcast::<rusqlite::Error>() {
                        Ok(e) => crate::db::sqlite_error(path, *e),
                        Err(source) => StoreError::Database {
                            location: path.display().to_string(),
                            source,
                        },
                    }
                }
                (e, _) => e,
            })?
            .iter()
            .map(|r| r[0].text())
            .collect();
        let ours = |t: &String| schema::TABLES.contains(&t.as_str());
        let version = if tables.iter().any(|t| t == "lever_schema") {
            self.version()?
        } else {
            // An SQLite file is ours alone; a PostgreSQL database may hold
            // a lab's other tables, as long as none has our names.
            let foreign: Vec<String> = match location {
                Location::Sqlite(_) => tables.clone(),
                Location::Postgres(..) => tables.iter().filter(|t| ours(t)).cloned().collect(),
            };
            if !foreign.is_empty() {
                return Err(StoreError::Foreign {
                    location: self.location.clone(),
                    tables: foreign,
                });
            }
            0
        };
        if version > schema::VERSION {
            return Err(StoreError::TooNew {
                location: self.location.clone(),
                found: version,
                known: schema::VERSION,
            });
        }
        if version == schema::VERSION {
            return Ok(());
        }
        self.write(|store| {
            if let Some(lock) = dialect.migration_lock() {
                store.batch(lock)?;
            }
            // Another writer may have migrated while this one waited.
            let current = if store.has_schema_table()? {
                store.version()?
            } else {
                0
            };
            schema::migrate(store.db.as_mut(), current).map_err(|e| store.db_error(e))
        })
    }

    fn has_schema_table(&mut self) -> Result<bool, StoreError> {
        let sql = self.db.dialect().list_tables();
        Ok(self
            .query(sql, &[])?
            .iter()
            .any(|r| r[0].text() == "lever_schema"))
    }

    fn version(&mut self) -> Result<i64, StoreError> {
        let rows = self.query("SELECT MAX(version) FROM lever_schema", &[])?;
        Ok(rows.first().map(|r| r[0].int()).unwrap_or(0))
    }

    fn db_error(&self, source: Box<dyn std::error::Error + Send + Sync>) -> StoreError {
        StoreError::Database {
            location: self.location.clone(),
            source,
        }
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>, StoreError> {
        self.db.query(sql, params).map_err(|e| self.db_error(e))
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.db.batch(sql).map_err(|e| self.db_error(e))
    }

    /// Run `f` in one write transaction: all of it is stored, or nothing.
    fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.batch(self.db.dialect().begin_write())?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                // The first error is the one to report; a failed rollback
                // ends the connection anyway.
                let _ = self.db.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Store `run` with its metrics and samples, in one transaction; the
    /// id comes from the database, so concurrent writers never collide.
    pub fn save(&mut self, run: &Run) -> Result<RunId, StoreError> {
        let document = serde_json::to_value(run).map_err(|source| StoreError::BadRun {
            what: format!("run collected at {}", run.collected_at),
            source,
        })?;
        self.save_document(run, &document)
    }

    /// Store `run` with `document` as its stored JSON: the file it was read
    /// from, keeping keys a newer collector wrote that [`Run`] drops.
    pub fn save_document(
        &mut self,
        run: &Run,
        document: &serde_json::Value,
    ) -> Result<RunId, StoreError> {
        if !starts_with_date(&run.collected_at) {
            return Err(StoreError::BadTime {
                what: format!("run collected at {}", run.collected_at),
                value: run.collected_at.clone(),
            });
        }
        let document = document.to_string();
        let d = &run.device;
        let board = board_name(run);
        self.write(|s| {
            // One statement, so two writers adding the same new board both
            // get its id (the second waits for the first's row lock).
            let board_id = s.query(
                "INSERT INTO boards (name, soc, arch) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET soc = COALESCE(excluded.soc, boards.soc), \
                 arch = COALESCE(excluded.arch, boards.arch) RETURNING id",
                &[board.as_str().into(), d.soc.as_deref().into(), d.arch.as_deref().into()],
            )?[0][0]
                .int();
            let run_id = s.query(
                "INSERT INTO runs (board_id, collected_at, kernel_release, lever_version, document) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                &[
                    board_id.into(),
                    run.collected_at.as_str().into(),
                    d.kernel_release.as_deref().into(),
                    run.lever_version.as_str().into(),
                    document.as_str().into(),
                ],
            )?[0][0]
                .int();
            for section in &run.sections {
                for m in &section.metrics {
                    let labels = serde_json::to_string(&m.labels).unwrap_or_default();
                    let better = m.better.map(|b| match b {
                        Better::Lower => "lower",
                        Better::Higher => "higher",
                    });
                    let metric_id = s.query(
                        "INSERT INTO metrics (run_id, section, name, unit, value, labels, better) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                        &[
                            run_id.into(),
                            section.name.as_str().into(),
                            m.name.as_str().into(),
                            m.unit.as_str().into(),
                            m.value.into(),
                            labels.as_str().into(),
                            better.into(),
                        ],
                    )?[0][0]
                        .int();
                    let passes = m.sample_passes();
                    for (seq, v) in m.samples.iter().enumerate() {
                        s.query(
                            "INSERT INTO samples (metric_id, seq, value, pass) \
                             VALUES ($1, $2, $3, $4)",
                            &[
                                metric_id.into(),
                                (seq as i64).into(),
                                (*v).into(),
                                Param::Int(passes.get(seq).copied()),
                            ],
                        )?;
                    }
                }
            }
            Ok(RunId(run_id))
        })
    }

    /// The stored runs, oldest first.
    pub fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = String::from(
            "SELECT r.id, b.name, r.collected_at, r.kernel_release, r.lever_version, \
             (SELECT COUNT(*) FROM metrics m WHERE m.run_id = r.id) \
             FROM runs r JOIN boards b ON b.id = r.board_id WHERE 1 = 1",
        );
        let params = where_board_since(&mut sql, &filter.board, &filter.since);
        sql.push_str(" ORDER BY r.collected_at, r.id");
        Ok(self
            .query(&sql, &params)?
            .iter()
            .map(|r| RunSummary {
                id: RunId(r[0].int()),
                board: r[1].text(),
                collected_at: r[2].text(),
                kernel_release: r[3].opt_text(),
                lever_version: r[4].text(),
                metrics: r[5].int(),
            })
            .collect())
    }

    /// The run `id`, exactly as it was stored.
    pub fn get(&mut self, id: RunId) -> Result<Run, StoreError> {
        run_from(&self.document(id)?).map_err(|source| StoreError::BadRun {
            what: format!("run {id} in {}", self.location),
            source,
        })
    }

    /// The run document `id` as stored, keys this build does not know
    /// included.
    pub fn document(&mut self, id: RunId) -> Result<serde_json::Value, StoreError> {
        let rows = self.query("SELECT document FROM runs WHERE id = $1", &[id.0.into()])?;
        let Some(row) = rows.first() else {
            return Err(StoreError::NoSuchRun {
                location: self.location.clone(),
                id: id.0,
            });
        };
        serde_json::from_str(&row[0].text()).map_err(|source| StoreError::BadRun {
            what: format!("run {id} in {}", self.location),
            source,
        })
    }

    /// The run already stored with exactly this document (same board,
    /// same collection time, same JSON), if any: `import` of a file twice
    /// finds the first copy.
    pub fn find_document(
        &mut self,
        run: &Run,
        document: &serde_json::Value,
    ) -> Result<Option<RunId>, StoreError> {
        let rows = self.query(
            "SELECT r.id FROM runs r JOIN boards b ON b.id = r.board_id \
             WHERE b.name = $1 AND r.collected_at = $2 AND r.document = $3 ORDER BY r.id",
            &[
                board_name(run).as_str().into(),
                run.collected_at.as_str().into(),
                document.to_string().as_str().into(),
            ],
        )?;
        Ok(rows.first().map(|r| RunId(r[0].int())))
    }

    /// Every metric name in the store, sorted (for "did you mean").
    pub fn metric_names(&mut self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .query("SELECT DISTINCT name FROM metrics ORDER BY name", &[])?
            .iter()
            .map(|r| r[0].text())
            .collect())
    }

    /// A metric's values across runs, in order of collection (then run id,
    /// then storage order within a run).
    pub fn trend(&mut self, q: &TrendQuery) -> Result<Vec<TrendPoint>, StoreError> {
        let mut sql = String::from(
            "SELECT r.id, b.name, r.collected_at, m.value, m.unit, m.labels, m.better \
             FROM metrics m JOIN runs r ON r.id = m.run_id JOIN boards b ON b.id = r.board_id \
             WHERE m.name = $1",
        );
        let mut params = vec![Param::from(q.metric.as_str())];
        let rest = where_board_since_from(&mut sql, &q.board, &q.since, 1);
        params.extend(rest);
        sql.push_str(" ORDER BY r.collected_at, r.id, m.id");
        let rows = self.query(&sql, &params)?;
        let mut out = Vec::new();
        for r in rows {
            // Labels are few and their filter is rare: matched here rather
            // than in SQL, which would need each dialect's JSON operators.
            let labels: BTreeMap<String, String> =
                serde_json::from_str(&r[5].text()).unwrap_or_default();
            if q.labels.iter().any(|(k, v)| labels.get(k) != Some(v)) {
                continue;
            }
            out.push(TrendPoint {
                run: RunId(r[0].int()),
                board: r[1].text(),
                collected_at: r[2].text(),
                value: r[3].real(),
                unit: r[4].text(),
                labels,
                better: match r[6].opt_text().as_deref() {
                    Some("lower") => Some(Better::Lower),
                    Some("higher") => Some(Better::Higher),
                    _ => None,
                },
            });
        }
        Ok(out)
    }

    /// Every row of a query, for the export.
    #[cfg(feature = "parquet")]
    pub(crate) fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Cell>>, StoreError> {
        self.query(sql, &[])
    }
}

/// The name a run is stored under.
pub fn board_name(run: &Run) -> String {
    let d = &run.device;
    d.board
        .clone()
        .or_else(|| d.hostname.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

fn where_board_since(
    sql: &mut String,
    board: &Option<String>,
    since: &Option<String>,
) -> Vec<Param> {
    where_board_since_from(sql, board, since, 0)
}

/// Append `AND b.name = $n` / `AND r.collected_at >= $n` for the filters
/// given, numbering after `used` parameters.
fn where_board_since_from(
    sql: &mut String,
    board: &Option<String>,
    since: &Option<String>,
    used: usize,
) -> Vec<Param> {
    let mut params = Vec::new();
    if let Some(b) = board {
        params.push(Param::from(b.as_str()));
        sql.push_str(&format!(" AND b.name = ${}", used + params.len()));
    }
    if let Some(s) = since {
        params.push(Param::from(s.as_str()));
        sql.push_str(&format!(" AND r.collected_at >= ${}", used + params.len()));
    }
    params
}

/// A stored document as a [`Run`]: through its text, as every run Lever
/// reads is parsed (one deserializer's code for `Run` in the board's
/// binary, not a second for `serde_json::Value`; docs/install.md "Size").
pub(crate) fn run_from(document: &serde_json::Value) -> Result<Run, serde_json::Error> {
    serde_json::from_str(&document.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_path_follows_xdg_then_home_then_var_lib() {
        let p =
            |x: Option<&str>, h: Option<&str>| default_path(x.map(OsStr::new), h.map(OsStr::new));
        assert_eq!(p(Some("/x"), Some("/h")), Path::new("/x/lever/results.db"));
        assert_eq!(
            p(Some("rel"), Some("/h")),
            Path::new("/h/.local/share/lever/results.db")
        );
        assert_eq!(p(None, None), Path::new("/var/lib/lever/results.db"));
    }

    #[test]
    fn locations_are_told_apart_and_passwords_never_shown() {
        assert!(matches!(
            Location::parse("/tmp/r.db"),
            Ok(Location::Sqlite(_))
        ));
        assert!(matches!(Location::parse("r.db"), Ok(Location::Sqlite(_))));
        let pg = Location::parse("postgres://lab:s3cret@db.lab/results").unwrap();
        assert!(matches!(pg, Location::Postgres(..)));
        assert_eq!(pg.display(), "postgres://lab:***@db.lab/results");
        let kv = Location::parse("host=/tmp/pg dbname=lab password=s3cret").unwrap();
        assert_eq!(kv.display(), "host=/tmp/pg dbname=lab password=***");
        let e = Location::parse("mysql://x/y").unwrap_err();
        assert!(e.to_string().contains("mysql:// is not a store"), "{e}");
        #[cfg(feature = "postgres")]
        {
            let e = Location::parse("postgres://u:pw@h:notaport/db").unwrap_err();
            assert!(!e.to_string().contains("pw@"), "{e}");
            assert!(matches!(e, StoreError::BadLocation { .. }));
        }
    }

    /// A board's build (no `postgres` feature) still knows a server's
    /// location from a file name, and opening it names the feature, with
    /// the password removed; the export names its own.
    #[cfg(not(feature = "postgres"))]
    #[test]
    fn without_postgres_a_server_location_names_the_feature() {
        let Err(e) = Store::open(Some("postgres://lab:s3cret@db.lab/results")) else {
            panic!("opened a PostgreSQL store without the postgres feature");
        };
        let text = e.to_string();
        assert!(text.contains("needs the `postgres` feature"), "{text}");
        assert!(text.contains("--features postgres"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
        assert_eq!(e.kind(), crate::ErrorKind::NotAvailable);
    }

    #[cfg(not(feature = "parquet"))]
    #[test]
    fn without_parquet_the_export_names_the_feature_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.db");
        let out = dir.path().join("out");
        let e = crate::ops::export_parquet(db.to_str(), &out).unwrap_err();
        assert!(e.to_string().contains("needs the `parquet` feature"), "{e}");
        assert_eq!(e.kind(), crate::ErrorKind::NotAvailable);
        assert!(!db.exists() && !out.exists());
    }

    #[test]
    fn floats_parse_from_text_bit_exact() {
        // serde_json's default parser rounds this to 1.6; the run
        // document needs its float_roundtrip feature.
        let v: f64 = serde_json::from_str("1.5999999999999999").unwrap();
        assert_eq!(v.to_bits(), 1.5999999999999999f64.to_bits());
    }

    #[test]
    fn since_and_labels_are_checked() {
        assert!(parse_since("2026-11-01").is_ok());
        assert!(parse_since("2026-11-23T14:00:00Z").is_ok());
        assert!(parse_since("yesterday").is_err());
        assert!(parse_since("2026-11-01 10:00").is_err());
        assert_eq!(parse_label("cpu=1").unwrap(), ("cpu".into(), "1".into()));
        assert!(parse_label("=1").is_err() && parse_label("cpu").is_err());
    }
}
