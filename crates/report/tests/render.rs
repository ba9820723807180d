//! Rendering one and two runs: the charts are there, a planted significant
//! change is marked and an insignificant one is not, and text from a run
//! (untrusted) renders as text.

use lever_report::model::{Better, Device, Metric, Run, Section};
use lever_report::render::{html, json, markdown};

fn sampled(name: &str, unit: &str, samples: Vec<f64>) -> Metric {
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    let mut m = Metric::new(name, unit, sorted[sorted.len() / 2]);
    m.samples = samples;
    m.better = Some(Better::Lower);
    m
}

/// A run with every chart's data; `scale` multiplies the samples of
/// `bench.lat_syscall-null` (the planted change).
fn run(board: &str, scale: f64) -> Run {
    let mut r = Run::new(
        "2026-11-23T14:00:00Z",
        Device {
            board: Some(board.into()),
            soc: Some("qcom,qcm6490".into()),
            ..Device::default()
        },
    );
    r.sections
        .push(Section::measured("device", "files under /"));
    let mut boot = Section::measured("boot", "serial log");
    boot.metrics
        .push(Metric::new("boot.total_before_kernel", "ms", 3469.0));
    boot.detail = serde_json::json!({"stages": [
        {"stage": "PBL+XBL", "ms": 1818.0, "kind": "stage"},
        {"stage": "Core UEFI", "ms": 1071.0, "kind": "stage"},
        {"stage": "Kernel init", "ms": 2400.0, "kind": "mark"},
        {"stage": "Total before kernel", "ms": 3469.0, "kind": "total"}]});
    r.sections.push(boot);
    let mut mem = Section::measured("memory", "lever mem map");
    for (uc, apps) in [("after boot", 1_000_000.0), ("camera", 2_000_000.0)] {
        for (n, v) in [
            ("memory.non_linux", 500_000.0),
            ("memory.kernel_static", 200_000.0),
            ("memory.apps_framework", apps),
            ("memory.free", 4_000_000.0 - apps),
        ] {
            mem.metrics
                .push(Metric::new(n, "kB", v).label("usecase", uc));
        }
    }
    mem.detail = serde_json::json!({
        "columns": [{"usecase": "after boot"}, {"usecase": "camera"}],
        "series": [{"usecase": "camera", "t_s": [0.0, 0.2, 0.4], "free_kb": [3.0e6, 2.1e6, 2.0e6]}]});
    r.sections.push(mem);
    let mut lat = Section::measured("latency", "lever latency kpi");
    lat.metrics.push(
        Metric::new("latency.max", "us", 42.0)
            .label("cpu", "1")
            .label("condition", "no load"),
    );
    lat.detail = serde_json::json!({"histograms": [
        {"condition": "no load", "cpu": 1, "bucket_us": 1, "counts": [0, 0, 5, 900, 12000, 40, 1], "overflows": 0}]});
    r.sections.push(lat);
    let mut bench = Section::measured("bench", "lever bench --quick");
    let base: Vec<f64> = (0..12).map(|i| 0.40 + (i % 5) as f64 * 0.004).collect();
    bench.metrics.push(sampled(
        "bench.lat_syscall-null",
        "us",
        base.iter().map(|v| v * scale).collect(),
    ));
    // Same distribution in every run, in another order: not significant.
    let read: Vec<f64> = (0..12)
        .map(|i| 0.70 + ((i * 7) % 12) as f64 * 0.002)
        .collect();
    let read = if scale == 1.0 {
        read
    } else {
        read.into_iter().rev().collect()
    };
    bench
        .metrics
        .push(sampled("bench.lat_syscall-read", "us", read));
    r.sections.push(bench);
    r.sections.push(Section::not_measured(
        "daemon",
        "no daemon at /run/lever/lever.sock",
    ));
    r
}

/// The `<tr …>` of the table row whose first cell is metric `key` (its
/// tooltip).
fn row<'a>(page: &'a str, key: &str) -> &'a str {
    let at = page
        .find(&format!("<td title=\"{key}\">"))
        .unwrap_or_else(|| panic!("no row {key}"));
    let start = page[..at].rfind("<tr").unwrap();
    let end = at + page[at..].find("</tr>").unwrap();
    &page[start..end]
}

#[test]
fn one_run_has_every_chart_and_says_what_was_not_measured() {
    let page = html(&[run("qcs6490", 1.0)]);
    for chart in ["waterfall", "stacked", "histogram", "whiskers"] {
        assert!(
            page.contains(&format!("<svg class=\"chart {chart}\"")),
            "no {chart} chart"
        );
    }
    assert!(
        page.contains("<polyline") || page.contains("<path"),
        "no time series"
    );
    assert!(page.contains("free during camera"));
    assert!(page.contains("not measured: no daemon at /run/lever/lever.sock"));
    // Self-contained: no script, no external reference of any kind.
    assert!(!page.contains("<script"));
    assert!(!page.contains("src="));
    assert!(!page.contains("href="));
    assert!(!page.contains("@import"));
    assert!(!page.contains("url("));
    let md = markdown(&[run("qcs6490", 1.0)]);
    assert!(md.contains("| lat\\_syscall-null | µs |"), "{md}");
    assert!(md.contains("- not measured: no daemon at /run/lever/lever.sock"));
}

#[test]
fn two_runs_mark_the_planted_change_and_not_the_noise() {
    let runs = [run("qcs6490", 1.0), run("qcs6490", 2.0)];
    let page = html(&runs);
    let null = row(&page, "bench.lat_syscall-null");
    assert!(null.starts_with("<tr class=\"sig\""), "{null}");
    assert!(null.contains("class=\"worse\""), "{null}");
    assert!(null.contains("significantly worse (regression)"), "{null}");
    let read = row(&page, "bench.lat_syscall-read");
    assert!(
        !read.contains("class=\"sig\"") && !read.contains("class=\"worse\""),
        "{read}"
    );
    assert!(read.contains("no significant change"), "{read}");
    // A single value is shown with its change but not judged.
    let max = row(&page, "latency.max{condition=no load,cpu=1}");
    assert!(max.contains("not judged"), "{max}");
    // The summary lists the planted change only.
    let summary = &page[page.find("Significant changes").unwrap()..page.find("<section").unwrap()];
    assert!(summary.contains("bench.lat_syscall-null"));
    assert!(!summary.contains("bench.lat_syscall-read"));
    let md = markdown(&runs);
    assert!(
        md.contains("**+100.0 % significantly worse (regression)"),
        "{md}"
    );
    let doc: serde_json::Value = serde_json::from_str(&json(&runs)).unwrap();
    let rows = doc["comparison"].as_array().unwrap();
    let verdict = |name: &str| {
        rows.iter().find(|r| r["name"] == name).unwrap()["vs_base"][0]["verdict"].clone()
    };
    assert_eq!(verdict("bench.lat_syscall-null"), "regressed");
    assert_eq!(verdict("bench.lat_syscall-read"), "unchanged");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
}

#[test]
fn text_from_a_run_is_escaped() {
    let evil = "<script>alert(1)</script>";
    let mut r = run(evil, 1.0);
    r.collected_at = "\"><img src=x onerror=alert(2)>".into();
    r.sections
        .push(Section::not_measured("<b>x</b>", "why <i>|</i>"));
    r.sections[2]
        .metrics
        .push(Metric::new("memory.x", "kB", 1.0).label("usecase", "<svg onload=alert(3)>"));
    let page = html(&[r.clone(), r.clone()]);
    assert!(!page.contains("<script"), "a script tag got through");
    assert!(!page.contains("<img"), "an img tag got through");
    assert!(!page.contains("<svg onload"), "an svg tag got through");
    assert!(!page.contains("<b>x</b>") && !page.contains("<i>|</i>"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let md = markdown(&[r]);
    // Every `<` is backslash-escaped: no tag can open.
    for (i, _) in md.match_indices('<') {
        assert!(
            md[..i].ends_with('\\'),
            "a bare < at {i}: {}",
            &md[i.saturating_sub(40)..]
        );
    }
    assert!(md.contains("why \\<i\\>\\|\\</i\\>"), "{md}");
    assert!(md.contains("\\<script\\>alert(1)\\</script\\>"), "{md}");
}
