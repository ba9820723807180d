//! `lever report collect|render`: what was written, per section measured
//! or why not.

use crate::render::{emit, outln, print_json, Table};
use lever_report::model::{Run, Status};
use std::path::{Path, PathBuf};

/// After `collect`: one line per section, the file and where the run is
/// stored (with `--json`, the run document; the store's line goes to
/// stderr).
pub fn collected(
    json: bool,
    run: &Run,
    output: &Path,
    stored: Option<&lever_results::ops::Stored>,
) -> anyhow::Result<()> {
    let stored_line = stored.map(|s| format!("stored as run {} in {}", s.id, s.store));
    if json {
        if let Some(line) = &stored_line {
            eprintln!("lever report collect: {line}");
        }
        return print_json(run);
    }
    let mut t = Table::new(&["SECTION", "STATE", "METRICS", "HOW / WHY NOT"]);
    for s in &run.sections {
        let (state, how) = match &s.status {
            Status::Measured => ("measured", s.method.as_str()),
            Status::NotMeasured { why } => ("not measured", why.as_str()),
        };
        t.row(vec![
            s.name.clone(),
            state.to_string(),
            s.metrics.len().to_string(),
            how.to_string(),
        ]);
    }
    outln!("{}", t.render().trim_end())?;
    outln!("wrote {}", output.display())?;
    if let Some(line) = stored_line {
        outln!("{line}")?;
    }
    Ok(())
}

/// After `render`: with several runs, each one's conditions against the
/// base's; then the files written. With `--json`, the JSON document on
/// stdout.
pub fn rendered(
    json: bool,
    runs: &[Run],
    written: &[PathBuf],
    judging: lever_report::compare::Judging<'_>,
    first: Option<String>,
) -> anyhow::Result<()> {
    if json {
        return crate::render::out(&lever_report::render::json_with(runs, judging));
    }
    let mut out = first.map(|l| l + "\n").unwrap_or_default();
    for (i, c) in lever_report::compare::conditions(runs, judging.force)
        .iter()
        .enumerate()
    {
        out += &format!("run #{} against #1: ", i + 2);
        out += &crate::render::conditions::comparison(c);
    }
    if runs.len() > 1 {
        let j = lever_report::compare::judged(runs, lever_report::compare::THRESHOLD_PCT, judging);
        for (i, reach) in j.cache_reach.iter().enumerate() {
            for r in reach {
                out += &format!("run #{} against #1: {}\n", i + 2, r.warning(judging.force));
            }
        }
        for (i, why) in j.file_history.iter().enumerate() {
            if let Some(why) = why {
                out += &format!(
                    "run #{} against #1: {}\n",
                    i + 2,
                    lever_bench::compare::file_history_warning(why, judging.force)
                );
            }
        }
        if !judging.base_reruns.is_empty() {
            out += &format!(
                "base reruns: {} of {} give the spread a change must leave\n",
                j.base_reruns,
                judging.base_reruns.len()
            );
            for why in &j.reruns_left_out {
                out += &format!("WARNING: {why}\n");
            }
        }
    }
    out += &if written.is_empty() {
        "nothing written: give --html FILE, --md FILE or --json FILE\n".to_string()
    } else {
        written
            .iter()
            .map(|p| format!("wrote {}\n", p.display()))
            .collect()
    };
    emit(false, &out, |o| o.clone())
}
