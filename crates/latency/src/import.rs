//! Import: other tools' outputs into a [`LatencyReport`].
//!
//! Four formats, told apart by their content:
//!
//! - **cyclictest stdout** — status lines (the last one per thread wins),
//!   `--spike` lines, and the `-h` histogram block (format in
//!   [`crate::cyclictest`]). min/avg/max come from the `# … Latencies:`
//!   lines when present (exactly what cyclictest printed), else from the
//!   last status line; percentiles from the histogram.
//! - **cyclictest `--json`** — `thread.N.{histogram,cycles,min,max,avg,cpu}`.
//! - **`stress-ng --cyclic`** — its `cyclic:` log lines: `mean: … ns`,
//!   `min: … ns, max: … ns`, and the `latency percentiles:` block
//!   (nanoseconds; converted to µs, truncated like cyclictest).
//! - **`rtla timerlat hist`** — the documented table (`Index IRQ-000
//!   Thr-000 Usr-000 …`, one row per µs, then `over:`, `count:`, `min:`,
//!   `avg:`, `max:`). The thread (`Thr-`) columns are what cyclictest
//!   measures: one report thread per CPU. Not verified against a real
//!   capture: this machine's kernel has no `timerlat` tracer.

use crate::error::LatencyError;
use crate::report::{Ended, LatencyReport, Percentiles, Source, ThreadReport};
use crate::stats::{Histogram, Percentile, Spike};
use lever_text::ParseError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Read `path` and import it, whatever its format.
pub fn import_file(path: &Path) -> Result<LatencyReport, LatencyError> {
    let text = std::fs::read_to_string(path).map_err(|source| LatencyError::File {
        path: path.to_path_buf(),
        source,
    })?;
    import_text(&path.display().to_string(), &text)
}

/// Import `text` (read from `name`).
pub fn import_text(name: &str, text: &str) -> Result<LatencyReport, LatencyError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return cyclictest_json(name, text);
    }
    if text.contains("cyclic:") && text.contains("stress-ng") {
        return stress_ng(name, text);
    }
    if text
        .lines()
        .any(|l| l.starts_with("Index") && l.contains("Thr-"))
    {
        return rtla_hist(name, text);
    }
    if text.lines().any(|l| l.contains("T:") && l.contains("Max:")) || text.contains("# Histogram")
    {
        return cyclictest_text(name, text);
    }
    Err(LatencyError::UnknownFormat {
        path: name.into(),
        why: "no `T: … Max:` status line, `# Histogram` block, JSON object, stress-ng `cyclic:` line or rtla `Index … Thr-` header".into(),
    })
}

fn imported(format: &str, name: &str, threads: Vec<ThreadReport>) -> LatencyReport {
    LatencyReport {
        source: Source::Imported {
            format: format.into(),
            path: name.into(),
        },
        policy: None,
        threads,
        histogram_us: None,
        spike_threshold_us: None,
        spikes: Vec::new(),
        spike_count: 0,
        ended: Ended::Unknown,
        elapsed_s: None,
        notes: Vec::new(),
        loads: Vec::new(),
        trace_file: None,
        analyses: Vec::new(),
    }
}

fn blank(index: usize) -> ThreadReport {
    ThreadReport::empty(index)
}

/// The value after `key` in a status line:
/// `T: 0 (14658) P:90 I:1000 C:    500 Min:     12 Act:   14 Avg:   14 Max:      34`
fn field(line: &str, key: &str) -> Option<u64> {
    let rest = &line[line.find(key)? + key.len()..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    num.parse().ok()
}

fn numbers(rest: &str) -> Vec<u64> {
    rest.split_whitespace()
        .map_while(|w| w.parse().ok())
        .collect()
}

fn cyclictest_text(name: &str, text: &str) -> Result<LatencyReport, LatencyError> {
    let mut threads: BTreeMap<usize, ThreadReport> = BTreeMap::new();
    let mut rows: Vec<Vec<u64>> = Vec::new();
    let mut summary: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut overflow_cycles: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    let mut spikes = Vec::new();
    let mut spike_count = None;
    let mut in_hist = false;
    for (i, raw) in text.lines().enumerate() {
        // Live status lines start with a cursor-up escape (`ESC[4A`).
        let line = match raw.rfind('\u{1b}') {
            Some(p) => raw[p..].split_once('A').map_or(raw, |(_, r)| r),
            None => raw,
        };
        let bad = |expected| ParseError::new(name, i + 1, raw, expected);
        if let Some(rest) = line.strip_prefix("T:") {
            if line.contains("Spike:") {
                // `T: 1 Spike:      92: TS:   3957212876`
                let thread = numbers(rest).first().copied();
                let (Some(thread), Some(lat), Some(ts)) =
                    (thread, field(line, "Spike:"), field(line, "TS:"))
                else {
                    return Err(bad("`T: N Spike: US: TS: US`").into());
                };
                spikes.push(Spike {
                    thread: thread as usize,
                    latency_us: lat,
                    timestamp_us: ts,
                });
                continue;
            }
            let Some(&index) = numbers(rest).first() else {
                return Err(bad("a thread number after `T:`").into());
            };
            let t = threads
                .entry(index as usize)
                .or_insert_with(|| blank(index as usize));
            t.tid = line
                .split_once('(')
                .and_then(|(_, r)| r.split_once(')'))
                .and_then(|(n, _)| n.trim().parse().ok());
            t.priority = field(line, "P:").map(|p| p as u32);
            t.interval_us = field(line, "I:");
            t.cycles = field(line, "C:").ok_or_else(|| bad("`C: cycles`"))?;
            t.min_us = field(line, "Min:").filter(|_| t.cycles > 0);
            t.act_us = field(line, "Act:");
            t.avg_us = field(line, "Avg:").map(|a| a as f64);
            t.max_us = field(line, "Max:");
        } else if let Some(rest) = line.strip_prefix("spikes = ") {
            spike_count = rest.trim().parse().ok();
        } else if line == "# Histogram" {
            in_hist = true;
        } else if let Some(rest) = line.strip_prefix("# Thread ") {
            // `# Thread 1: 00584 00601 # 00009 others`
            let (n, list) = rest
                .split_once(':')
                .ok_or_else(|| bad("`# Thread N: cycles`"))?;
            let n: usize = n.trim().parse().map_err(|_| bad("a thread number"))?;
            overflow_cycles.insert(n, numbers(list));
        } else if let Some(rest) = line.strip_prefix("# ") {
            if let Some((key, vals)) = rest.split_once(':') {
                summary.insert(key, numbers(vals));
            }
            in_hist = in_hist && !rest.starts_with("Total");
        } else if in_hist && !line.is_empty() {
            // `000017 000029	000108`
            let v = numbers(line);
            if v.len() < 2 {
                return Err(bad("a histogram row: µs, then a count per thread").into());
            }
            rows.push(v);
        }
    }
    let hist_threads = rows.first().map_or(0, |r| r.len() - 1);
    let get = |key: &str, j: usize| summary.get(key).and_then(|v| v.get(j)).copied();
    for j in 0..hist_threads {
        let t = threads.entry(j).or_insert_with(|| blank(j));
        let mut h = Histogram::new(rows.len());
        for (us, r) in rows.iter().enumerate() {
            h.buckets[us] = r.get(j + 1).copied().unwrap_or(0);
        }
        h.overflows = get("Histogram Overflows", j).unwrap_or(0);
        if let Some(v) = get("Min Latencies", j) {
            t.min_us = Some(v);
        }
        if let Some(v) = get("Avg Latencies", j) {
            t.avg_us = Some(v as f64);
        }
        if let Some(v) = get("Max Latencies", j) {
            t.max_us = Some(v);
        }
        if t.cycles == 0 {
            t.cycles = h.total();
        }
        t.overflows = h.overflows;
        t.overflow_cycles = overflow_cycles.remove(&j).unwrap_or_default();
        t.percentiles = Some(Percentiles::of(&h));
        t.histogram = Some(h);
    }
    if threads.is_empty() {
        return Err(LatencyError::UnknownFormat {
            path: name.into(),
            why: "no thread status line and no histogram".into(),
        });
    }
    let mut r = imported("cyclictest", name, threads.into_values().collect());
    r.histogram_us = (!rows.is_empty()).then_some(rows.len() as u32);
    r.spike_count = spike_count.unwrap_or(spikes.len() as u64);
    r.spikes = spikes;
    Ok(r)
}

fn cyclictest_json(name: &str, text: &str) -> Result<LatencyReport, LatencyError> {
    let bad = |what: &'static str| {
        LatencyError::Parse(ParseError::new(
            name,
            1,
            what,
            "cyclictest's --json document",
        ))
    };
    let doc: Value = serde_json::from_str(text).map_err(|_| bad("not JSON"))?;
    let threads_obj = doc
        .get("thread")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("no `thread` object"))?;
    // The histogram size is on the command line (`-h 30`, `--histogram=30`).
    let cmdline = doc.get("cmdline:").and_then(Value::as_str).unwrap_or("");
    let words: Vec<&str> = cmdline.split_whitespace().collect();
    let hist_size = words.iter().enumerate().find_map(|(i, w)| {
        if *w == "-h" || *w == "--histogram" || *w == "-H" {
            words.get(i + 1)?.parse::<u32>().ok()
        } else {
            w.strip_prefix("--histogram=")?.parse().ok()
        }
    });
    let mut threads = Vec::new();
    let mut keys: Vec<(usize, &Value)> = threads_obj
        .iter()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
        .collect();
    keys.sort_by_key(|(k, _)| *k);
    for (index, v) in keys {
        let mut t = blank(index);
        let u = |k: &str| v.get(k).and_then(Value::as_u64);
        t.cycles = u("cycles").ok_or_else(|| bad("a thread without `cycles`"))?;
        t.min_us = u("min").filter(|_| t.cycles > 0);
        t.max_us = u("max");
        t.avg_us = v.get("avg").and_then(Value::as_f64);
        t.cpu = v
            .get("cpu")
            .and_then(Value::as_i64)
            .and_then(|c| u32::try_from(c).ok());
        if let Some(hist) = v.get("histogram").and_then(Value::as_object) {
            let buckets: BTreeMap<usize, u64> = hist
                .iter()
                .filter_map(|(k, n)| Some((k.parse().ok()?, n.as_u64()?)))
                .collect();
            let size = hist_size
                .map(|s| s as usize)
                .unwrap_or_else(|| buckets.keys().last().map_or(0, |k| k + 1));
            let mut h = Histogram::new(size);
            for (us, n) in buckets {
                if us < size {
                    h.buckets[us] = n;
                }
            }
            h.overflows = t.cycles.saturating_sub(h.in_range());
            t.overflows = h.overflows;
            t.percentiles = Some(Percentiles::of(&h));
            t.histogram = Some(h);
        }
        threads.push(t);
    }
    let mut r = imported("cyclictest-json", name, threads);
    r.histogram_us = hist_size;
    Ok(r)
}

fn stress_ng(name: &str, text: &str) -> Result<LatencyReport, LatencyError> {
    let mut t = blank(0);
    let mut pct: BTreeMap<String, u64> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        // `stress-ng: info:  [29065] cyclic:   min: 6979 ns, max: 999823 ns, std.dev. 11478.26`
        let Some((_, rest)) = line.split_once("cyclic:") else {
            continue;
        };
        let rest = rest.trim();
        let ns = |after: &str| -> Option<f64> {
            let r = &rest[rest.find(after)? + after.len()..];
            r.split_whitespace()
                .next()?
                .trim_end_matches(',')
                .parse()
                .ok()
        };
        if rest.starts_with("mean:") {
            t.avg_us = ns("mean:").map(|v| v / 1000.0);
        } else if rest.starts_with("min:") {
            t.min_us = ns("min:").map(|v| v as u64 / 1000);
            t.max_us = ns("max:").map(|v| v as u64 / 1000);
        } else if let Some((p, v)) = rest.split_once("%:") {
            // `  99.90%:      88239 ns`
            let v: f64 = v
                .trim()
                .trim_end_matches("ns")
                .trim()
                .parse()
                .map_err(|_| ParseError::new(name, i + 1, line, "`P%: N ns`"))?;
            pct.insert(p.trim().to_string(), v as u64 / 1000);
        } else if rest.contains("delay,") && rest.ends_with("samples") {
            // `sched SCHED_DEADLINE: 100000 ns delay, 10000 samples`
            t.cycles = rest
                .split(',')
                .next_back()
                .and_then(|s| numbers(s).first().copied())
                .unwrap_or(0);
        }
    }
    if t.min_us.is_none() {
        return Err(LatencyError::UnknownFormat {
            path: name.into(),
            why: "stress-ng output without a cyclic `min: … ns` line (was it run with --cyclic?)"
                .into(),
        });
    }
    let p = |k: &str| pct.get(k).map(|&v| Percentile::Us(v));
    t.percentiles = Some(Percentiles {
        p50: p("50.00"),
        p90: p("90.00"),
        p99: p("99.00"),
        p99_9: p("99.90"),
        p99_99: p("99.99"),
    });
    Ok(imported("stress-ng-cyclic", name, vec![t]))
}

fn rtla_hist(name: &str, text: &str) -> Result<LatencyReport, LatencyError> {
    let mut columns: Vec<(usize, u32)> = Vec::new(); // (column, cpu) of Thr- columns
    let mut threads: Vec<ThreadReport> = Vec::new();
    let mut hists: Vec<Vec<(usize, u64)>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = words.first() else {
            continue;
        };
        let bad = || ParseError::new(name, i + 1, line, "an rtla timerlat hist row");
        if first == "Index" {
            // `Index   IRQ-000   Thr-000   Usr-000   IRQ-001   Thr-001`
            for (c, w) in words.iter().enumerate() {
                if let Some(cpu) = w.strip_prefix("Thr-") {
                    let cpu = cpu.parse().map_err(|_| bad())?;
                    columns.push((c, cpu));
                    let mut t = blank(threads.len());
                    t.cpu = Some(cpu);
                    threads.push(t);
                    hists.push(Vec::new());
                }
            }
        } else if first.starts_with('#') || columns.is_empty() {
            continue;
        } else if first == "ALL:" {
            break;
        } else {
            let vals: Vec<Option<u64>> = columns
                .iter()
                .map(|(c, _)| words.get(*c).and_then(|w| w.parse().ok()))
                .collect();
            let mut set = |f: &mut dyn FnMut(&mut ThreadReport, u64)| {
                for (t, v) in threads.iter_mut().zip(&vals) {
                    if let Some(v) = v {
                        f(t, *v);
                    }
                }
            };
            match first {
                "over:" => set(&mut |t, v| t.overflows = v),
                "count:" => set(&mut |t, v| t.cycles = v),
                "min:" => set(&mut |t, v| t.min_us = Some(v)),
                "max:" => set(&mut |t, v| t.max_us = Some(v)),
                "avg:" => set(&mut |t, v| t.avg_us = Some(v as f64)),
                _ => {
                    let us: usize = first.parse().map_err(|_| bad())?;
                    for (h, v) in hists.iter_mut().zip(&vals) {
                        h.push((us, v.unwrap_or(0)));
                    }
                }
            }
        }
    }
    for (t, rows) in threads.iter_mut().zip(hists) {
        let size = rows.iter().map(|(us, _)| us + 1).max().unwrap_or(0);
        let mut h = Histogram::new(size);
        for (us, n) in rows {
            h.buckets[us] = n;
        }
        h.overflows = t.overflows;
        t.percentiles = Some(Percentiles::of(&h));
        t.histogram = Some(h);
    }
    Ok(imported("rtla-timerlat-hist", name, threads))
}
