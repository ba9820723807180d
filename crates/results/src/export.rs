//! `lever results export --parquet DIR`: the store as Parquet files for
//! pandas, pyarrow and DuckDB.
//!
//! Three flat tables, one row group each, uncompressed (the `parquet`
//! crate is built without codecs to keep Lever small; DuckDB and pyarrow
//! read plain pages):
//! - `runs.parquet`: id, board, soc, arch, collected_at, kernel_release,
//!   lever_version;
//! - `metrics.parquet`: id, run_id, board, collected_at, section, name,
//!   unit, value, labels (a JSON object), better;
//! - `samples.parquet`: metric_id, seq, value.
//!
//! Without the `parquet` feature (a board's build) the export says which
//! feature and build provide it.
#[cfg(feature = "parquet")]
use crate::db::Cell;
use crate::error::StoreError;
use crate::store::Store;
#[cfg(feature = "parquet")]
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;
#[cfg(feature = "parquet")]
use parquet::file::writer::SerializedFileWriter;
use serde::Serialize;
use std::path::{Path, PathBuf};
#[cfg(feature = "parquet")]
use std::sync::Arc;

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exported {
    /// The directory.
    pub dir: PathBuf,
    /// Rows of runs.parquet.
    pub runs: usize,
    /// Rows of metrics.parquet.
    pub metrics: usize,
    /// Rows of samples.parquet.
    pub samples: usize,
    /// The files, in the order written.
    pub files: Vec<PathBuf>,
}

/// A column's type in the export.
#[cfg(feature = "parquet")]
#[derive(Clone, Copy)]
enum Kind {
    Int,
    /// A 64-bit integer that may be null.
    OptInt,
    Real,
    /// UTF-8 text; `true` if it may be null.
    Text(bool),
}

/// One exported table: its columns and the query that fills them.
#[cfg(feature = "parquet")]
struct Table {
    file: &'static str,
    columns: &'static [(&'static str, Kind)],
    sql: &'static str,
}

#[cfg(feature = "parquet")]
const TABLES: &[Table] = &[
    Table {
        file: "runs.parquet",
        columns: &[
            ("id", Kind::Int),
            ("board", Kind::Text(false)),
            ("soc", Kind::Text(true)),
            ("arch", Kind::Text(true)),
            ("collected_at", Kind::Text(false)),
            ("kernel_release", Kind::Text(true)),
            ("lever_version", Kind::Text(false)),
        ],
        sql: "SELECT r.id, b.name, b.soc, b.arch, r.collected_at, r.kernel_release, \
              r.lever_version FROM runs r JOIN boards b ON b.id = r.board_id ORDER BY r.id",
    },
    Table {
        file: "metrics.parquet",
        columns: &[
            ("id", Kind::Int),
            ("run_id", Kind::Int),
            ("board", Kind::Text(false)),
            ("collected_at", Kind::Text(false)),
            ("section", Kind::Text(false)),
            ("name", Kind::Text(false)),
            ("unit", Kind::Text(false)),
            ("value", Kind::Real),
            ("labels", Kind::Text(false)),
            ("better", Kind::Text(true)),
        ],
        sql: "SELECT m.id, m.run_id, b.name, r.collected_at, m.section, m.name, m.unit, \
              m.value, m.labels, m.better FROM metrics m JOIN runs r ON r.id = m.run_id \
              JOIN boards b ON b.id = r.board_id ORDER BY m.id",
    },
    Table {
        file: "samples.parquet",
        columns: &[
            ("metric_id", Kind::Int),
            ("seq", Kind::Int),
            ("value", Kind::Real),
            ("pass", Kind::OptInt),
        ],
        sql: "SELECT metric_id, seq, value, pass FROM samples ORDER BY metric_id, seq",
    },
];

#[cfg(feature = "parquet")]
impl Store {
    /// Write the store's runs, metrics and samples as Parquet files into
    /// `dir` (created if missing; files there of the same names replaced).
    pub fn export_parquet(&mut self, dir: &Path) -> Result<Exported, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut counts = Vec::new();
        let mut files = Vec::new();
        for table in TABLES {
            let rows = self.rows(table.sql)?;
            let path = dir.join(table.file);
            write_table(&path, table, &rows).map_err(|source| StoreError::Export {
                path: path.clone(),
                source,
            })?;
            counts.push(rows.len());
            files.push(path);
        }
        Ok(Exported {
            dir: dir.to_path_buf(),
            runs: counts[0],
            metrics: counts[1],
            samples: counts[2],
            files,
        })
    }
}

#[cfg(not(feature = "parquet"))]
impl Store {
    /// Write the store's runs, metrics and samples as Parquet files: not
    /// in this build, which says which feature provides it.
    pub fn export_parquet(&mut self, dir: &Path) -> Result<Exported, StoreError> {
        Err(not_built(dir))
    }
}

/// The export asked of a build without the `parquet` feature.
#[cfg(not(feature = "parquet"))]
pub(crate) fn not_built(dir: &Path) -> StoreError {
    StoreError::NotInThisBuild {
        what: format!("results export --parquet {}", dir.display()),
        feature: "parquet",
    }
}

/// The Parquet schema of `table`, in Parquet's message syntax.
#[cfg(feature = "parquet")]
fn message(table: &Table) -> String {
    let fields: Vec<String> = table
        .columns
        .iter()
        .map(|(name, kind)| match kind {
            Kind::Int => format!("REQUIRED INT64 {name};"),
            Kind::OptInt => format!("OPTIONAL INT64 {name};"),
            Kind::Real => format!("REQUIRED DOUBLE {name};"),
            Kind::Text(false) => format!("REQUIRED BYTE_ARRAY {name} (UTF8);"),
            Kind::Text(true) => format!("OPTIONAL BYTE_ARRAY {name} (UTF8);"),
        })
        .collect();
    format!(
        "message {} {{ {} }}",
        table.file.trim_end_matches(".parquet"),
        fields.join(" ")
    )
}

#[cfg(feature = "parquet")]
fn write_table(
    path: &Path,
    table: &Table,
    rows: &[Vec<Cell>],
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let schema = Arc::new(parquet::schema::parser::parse_message_type(&message(
        table,
    ))?);
    let props = Arc::new(WriterProperties::builder().build());
    // Written beside the target and renamed, so a reader never sees half a
    // file.
    let tmp = path.with_extension("parquet.tmp");
    let file = std::fs::File::create(&tmp)?;
    let mut writer = SerializedFileWriter::new(file, schema, props)?;
    let mut group = writer.next_row_group()?;
    let mut index = 0;
    while let Some(mut col) = group.next_column()? {
        let kind = table.columns[index].1;
        let cells = rows.iter().map(|r| &r[index]);
        match kind {
            Kind::Int => {
                let v: Vec<i64> = cells.map(Cell::int).collect();
                col.typed::<Int64Type>().write_batch(&v, None, None)?;
            }
            Kind::OptInt => {
                let v: Vec<Option<i64>> = cells.map(Cell::opt_int).collect();
                // Definition level 1 = present, 0 = null.
                let levels: Vec<i16> = v.iter().map(|x| i16::from(x.is_some())).collect();
                let values: Vec<i64> = v.into_iter().flatten().collect();
                col.typed::<Int64Type>()
                    .write_batch(&values, Some(&levels), None)?;
            }
            Kind::Real => {
                let v: Vec<f64> = cells.map(Cell::real).collect();
                col.typed::<DoubleType>().write_batch(&v, None, None)?;
            }
            Kind::Text(nullable) => {
                let texts: Vec<Option<String>> = cells.map(Cell::opt_text).collect();
                // Definition level 1 = present, 0 = null; values only for
                // the present ones.
                let levels: Vec<i16> = texts.iter().map(|t| i16::from(t.is_some())).collect();
                let values: Vec<ByteArray> = texts
                    .into_iter()
                    .map(|t| ByteArray::from(t.unwrap_or_default().into_bytes()))
                    .collect();
                let values: Vec<ByteArray> = if nullable {
                    values
                        .into_iter()
                        .zip(&levels)
                        .filter(|(_, l)| **l == 1)
                        .map(|(v, _)| v)
                        .collect()
                } else {
                    values
                };
                let levels = nullable.then_some(levels.as_slice());
                col.typed::<ByteArrayType>()
                    .write_batch(&values, levels, None)?;
            }
        }
        col.close()?;
        index += 1;
    }
    group.close()?;
    writer.close()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
