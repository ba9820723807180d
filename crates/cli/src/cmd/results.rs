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
    #[arg(long, global = true, value_name = "PATH|URL")]
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
    /// The metric's name (`latency.max`, `memory.used`).
    pub metric: String,
    #[command(flatten)]
    pub runs: ListArgs,
    /// Only metrics with this label (repeat for several): cpu=1.
    #[arg(long, value_name = "KEY=VALUE", value_parser = label)]
    pub label: Vec<(String, String)>,
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
            emit(json, &ops::trend(db, &query)?, render::results::trend)
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
