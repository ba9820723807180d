//! The `bench` section: `lever-bench`'s suite (`lever bench --quick`) run
//! now, or an existing `lever bench -o FILE` report; one metric per test,
//! the median with every sample (the page's whiskers and the comparison's
//! significance test use them).

use super::{not_this_machine, skipped, BenchSource, Options};
use crate::model::{Better, Metric, Section};
use crate::ReportError;
use lever_bench::BenchReport;
use lever_kernel::KernelFs;

/// Run or read the benchmarks, if asked: the section, and the machine's
/// own speed while the benchmarks ran (`lever bench`'s probes, which the
/// run's conditions keep; `None` for a report of an older Lever).
pub fn collect(
    fs: &KernelFs,
    opts: &Options,
) -> Result<(Section, Option<lever_conditions::Speed>), ReportError> {
    let (report, method) = match &opts.bench {
        None => {
            return Ok((
                skipped("bench", "not asked for (--bench[=quick|FILE.json])"),
                None,
            ))
        }
        Some(BenchSource::File(path)) => {
            let r = lever_bench::compare::read_report(path).map_err(|e| ReportError::BadFile {
                path: path.clone(),
                message: e.to_string(),
            })?;
            (
                r,
                format!("read from `lever bench -o` report {}", path.display()),
            )
        }
        Some(BenchSource::Quick) => {
            if let Some(why) = not_this_machine(fs) {
                return Ok((skipped("bench", why), None));
            }
            let mut b = lever_bench::Options::quick();
            b.root = opts.root.clone();
            b.helper = opts.bench_helper.clone();
            match lever_bench::run(&b, &mut |_, _, _| {}) {
                Ok(r) => (r, "lever-bench's suite, quick (`lever bench --quick`): LMBench micro-benchmarks and Dhrystone/Whetstone/Linpack, sampled until the 95 % interval of the median is within ±2 % or 250 ms".to_string()),
                Err(e) => return Ok((skipped("bench", format!("the benchmarks could not run: {e}")), None)),
            }
        }
    };
    let speed = report.conditions.run.as_ref().and_then(|c| c.speed.clone());
    Ok((section(&report, &method), speed))
}

/// The report as metrics: the median, the samples, which way is better;
/// in `detail` the skipped tests, each test's category and the CPU
/// Dhrystone was pinned to (`null`: not pinned), for DMIPS/MHz.
fn section(report: &BenchReport, method: &str) -> Section {
    let mut s = Section::measured("bench", method);
    let mut skipped_tests = Vec::new();
    for t in &report.tests {
        match (&t.summary, &t.skipped) {
            (Some(sum), None) => {
                let mut m = Metric::new(&format!("bench.{}", t.name), &t.unit, sum.median);
                m.samples = t.samples.clone();
                m.pass_samples = t.pass_samples.clone();
                m.better = Some(match t.better {
                    lever_bench::catalog::Better::Lower => Better::Lower,
                    lever_bench::catalog::Better::Higher => Better::Higher,
                });
                s.metrics.push(m);
            }
            (_, why) => skipped_tests.push(serde_json::json!({
                "test": t.name,
                "why": why.clone().unwrap_or_else(|| "no samples".into()),
            })),
        }
    }
    // Each test's seed 002 category, so the page groups tests the
    // catalog of the reader's Lever may not know.
    let categories: serde_json::Map<String, serde_json::Value> = report
        .tests
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                serde_json::to_value(t.section).unwrap_or_default(),
            )
        })
        .collect();
    s.detail = serde_json::json!({
        "skipped": skipped_tests,
        "host_note": report.host_note,
        "dmips_per_mhz": report.dmips_per_mhz,
        "categories": categories,
        // `lat_mem_rd`'s plateaus: where two runs' caches ended
        // (`lever_bench::compare::cache_reach`).
        "plateaus": report.plateaus,
        // The file system the file tests ran on (`lever bench --dir`).
        "file_system": report.conditions.scratch,
        "dhrystone_cpu": report
            .tests
            .iter()
            .find(|t| t.name == "dhrystone")
            .and_then(|t| t.pinned_cpu)
            .or(report.options.cpu),
    });
    s
}
