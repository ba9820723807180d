//! `lever results`: the store of collected runs (an SQLite file by
//! default, or a PostgreSQL server) — list, show, trend, export, import.

use crate::args::Global;
use crate::render::{self, emit};
use clap::{Args, Subcommand};
use lever_results::{ops, store, Filter, RunId, TrendQuery};
use std::path::PathBuf;

/// `lever results ...`
#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// The store: an SQLite file, or PostgreSQL (`postgres://user@host/db`,
    /// `host=/run/postgresql dbname=lab`). Default:
    /// $XDG_DATA_HOME/lever/results.db, else ~/.local/share/lever/results.db,
    /// else /var/lib/lever/results.db.
    #[arg(long, global = true, value_name = "PATH|URL", value_parser = db)]
    pub db: Option<String>,
    #[command(subcommand)]
    pub command: ResultsCommand,
}

/// What to do with the store.
#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// The stored runs, oldest first: id, board, time, kernel, metrics.
    List(ListArgs),
    /// One run: device, sections and metrics (`--json`: the run document
    /// exactly as stored).
    Show {
        /// Run id (`lever results list`).
        run: i64,
    },
    /// One metric across runs, in order of collection.
    Trend(TrendArgs),
    /// Write runs.parquet, metrics.parquet and samples.parquet for
    /// pandas / pyarrow / DuckDB.
    Export {
        /// Directory for the files (created if missing).
        #[arg(long, value_name = "DIR", required = true)]
        parquet: PathBuf,
    },
    /// Store a run document (`lever report collect -o RUN.json`) collected
    /// elsewhere.
    Import {
        /// The run document.
        file: PathBuf,
    },
}

/// Which runs.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this board.
    #[arg(long, value_name = "BOARD")]
    pub board: Option<String>,
    /// Only runs collected at or after DATE (2026-11-01, or an RFC 3339
    /// time such as 2026-11-23T14:00:00Z).
    #[arg(long, value_name = "DATE", value_parser = since)]
    pub since: Option<String>,
}

/// `lever results trend`
#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The metric's name (`latency.max`, `memory.apps_framework`,
    /// `bench.lat_syscall-null`; `lever results show RUN` lists a run's).
    pub metric: String,
    #[command(flatten)]
    pub runs: ListArgs,
    /// Only metrics with this label (repeat for several): cpu=1.
    #[arg(long, value_name = "KEY=VALUE", value_parser = label)]
    pub label: Vec<(String, String)>,
}

/// Why `trend METRIC` found nothing: no stored metric has that name (with
/// the closest names), or the filters leave no run. A failed check, exit 1.
fn no_trend(db: Option<&str>, metric: &str) -> anyhow::Result<anyhow::Error> {
    let names = ops::metric_names(db)?;
    let message = if names.iter().any(|n| n == metric) {
        format!("no stored run has metric {metric} with these filters")
    } else {
        let close = closest(metric, &names);
        if close.is_empty() {
            format!(
                "no stored run has a metric named {metric} ({} metric names stored; `lever results show RUN` lists a run's)",
                names.len()
            )
        } else {
            format!(
                "no stored run has a metric named {metric}; did you mean {}?",
                close.join(", ")
            )
        }
    };
    Ok(crate::exit::ChecksFailed(message).into())
}

/// Up to three names near `word`: those it is part of (or that are part
/// of it), then those a few edits away.
fn closest(word: &str, names: &[String]) -> Vec<String> {
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|n| {
            let d = edits(word, n);
            let near = n.contains(word) || word.contains(n.as_str()) || d <= word.len().max(8) / 4;
            near.then_some((d, n))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n.clone()).collect()
}

/// Levenshtein distance, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `--db`'s form, checked by clap: a file path or a PostgreSQL location
/// (also `lever report collect --db`).
pub fn db(v: &str) -> Result<String, String> {
    lever_results::Location::parse(v).map_err(|e| e.to_string())?;
    Ok(v.to_string())
}

fn since(v: &str) -> Result<String, String> {
    store::parse_since(v).map_err(|e| e.to_string())
}

fn label(v: &str) -> Result<(String, String), String> {
    store::parse_label(v).map_err(|e| e.to_string())
}

pub fn run(global: &Global, args: ResultsArgs) -> anyhow::Result<()> {
    let db = args.db.as_deref();
    let json = global.json;
    match args.command {
        ResultsCommand::List(a) => {
            let filter = Filter {
                board: a.board,
                since: a.since,
            };
            emit(json, &ops::list(db, &filter)?, render::results::list)
        }
        ResultsCommand::Show { run } => {
            emit(json, &ops::show(db, RunId(run))?, render::results::show)
        }
        ResultsCommand::Trend(a) => {
            let query = TrendQuery {
                metric: a.metric,
                board: a.runs.board,
                since: a.runs.since,
                labels: a.label.into_iter().collect(),
            };
            let points = ops::trend(db, &query)?;
            emit(json, &points, render::results::trend)?;
            if points.is_empty() {
                return Err(no_trend(db, &query.metric)?);
            }
            Ok(())
        }
        ResultsCommand::Export { parquet } => emit(
            json,
            &ops::export_parquet(db, &parquet)?,
            render::results::exported,
        ),
        ResultsCommand::Import { file } => {
            emit(json, &ops::import(db, &file)?, render::results::stored)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_the_near_names() {
        let names: Vec<String> = [
            "latency.max",
            "latency.min",
            "memory.free",
            "bench.lat_syscall-null",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            closest("latency.mx", &names),
            ["latency.max", "latency.min"]
        );
        assert_eq!(closest("free", &names), ["memory.free"]);
        assert!(closest("memory.used", &names).is_empty());
        assert_eq!(edits("kitten", "sitting"), 3);
    }
}
