//! The report page in a real headless Chromium (Debian's `chromium`,
//! installed by `.ci/run`): loaded from `file://` it logs no console
//! message and makes no network request, and a screenshot is taken of a
//! one-run and a two-run page. `LEVER_UPDATE_SCREENSHOTS=1` copies them
//! to `docs/report-one-run.png` and `docs/report-two-runs.png`.
//!
//! The checks are proven able to fail on a planted page with a
//! `console.error` and an external image and script.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    })
}

/// What one page load showed.
struct Load {
    /// Console messages Chromium logged for the page.
    console: Vec<String>,
    /// http(s)/ws(s) URLs the page (not the browser itself) requested.
    requests: Vec<String>,
    /// The screenshot.
    png: Vec<u8>,
}

/// Load `page` from file:// in a fresh headless Chromium with every host
/// name unresolvable and the browser's own background traffic off.
fn load(browser: &Path, page: &Path, work: &Path, height: u32) -> Load {
    let (shot, netlog, profile) = (
        work.join("shot.png"),
        work.join("net.json"),
        work.join("profile"),
    );
    let _ = std::fs::remove_dir_all(&profile);
    let out = Command::new(browser)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=1",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    // `[…:INFO:CONSOLE:1] "message", source: file:///…/page.html (1)`
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    Load {
        console,
        requests: page_requests(&netlog),
        png: std::fs::read(&shot).expect("screenshot written"),
    }
}

/// The network URLs a page asked for, from Chromium's net log: each
/// `URL_REQUEST_START_JOB` whose initiator is an origin (the page's is
/// `null` for file://). The browser's own requests (component updates,
/// time sync) are `not an origin` and are not the page's doing.
fn page_requests(netlog: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(netlog).expect("net log written");
    // A log cut short by the browser's exit lacks its closing brackets.
    let doc: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .expect("net log is JSON");
    let start_job = doc["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_u64()
        .expect("net log names its event types");
    doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_u64() == Some(start_job))
        .filter(|e| e["params"]["initiator"].as_str() != Some("not an origin"))
        .filter_map(|e| e["params"]["url"].as_str())
        .filter(|u| {
            ["http:", "https:", "ws:", "wss:"]
                .iter()
                .any(|s| u.starts_with(s))
        })
        .map(str::to_string)
        .collect()
}

fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000
}

/// A run of the simulated board with boot stages, a trace KPI and a bench
/// section whose `lat_syscall-null` samples are multiplied by `scale`.
fn collect_run(dir: &Path, board: &Path, name: &str, scale: f64) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../boot/tests/fixtures");
    let trace = dir.join("trace.txt");
    std::fs::write(
        &trace,
        " app-1 [000] ....  273.082629: tracing_mark_write: B Connect\n \
         app-1 [000] ....  277.306283: tracing_mark_write: E FirstVidFrame 1\n",
    )
    .unwrap();
    let out = dir.join(name);
    common::ok(&[
        "--root",
        board.to_str().unwrap(),
        "report",
        "collect",
        "--no-store",
        "-o",
        out.to_str().unwrap(),
        "--boot-log",
        &format!(
            "serial={}",
            fixtures.join("seed000-8.3-serial.log").display()
        ),
        "--boot-log",
        &format!(
            "journal={}",
            fixtures.join("seed000-8.3-journal.txt").display()
        ),
        "--boot-log",
        &fixtures
            .join("seed000-8.3-systemd-time.txt")
            .display()
            .to_string(),
        "--trace",
        trace.to_str().unwrap(),
        "--kpi",
        "record=Connect..FirstVidFrame",
    ]);
    // The benchmarks measure this machine, not the tree: plant their
    // section (as `--bench FILE` would read it) to show the comparison.
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let samples = |base: f64, s: f64| -> Vec<f64> {
        (0..10).map(|i| (base + i as f64 * 0.003) * s).collect()
    };
    // Seed 002's categories: system calls, file and VM, memory bandwidth,
    // the CPU benchmarks (Dhrystone's DMIPS/MHz in the summary strip).
    let metric = |name: &str, unit: &str, base: f64, s: f64, better: &str| {
        serde_json::json!({"name": format!("bench.{name}"), "unit": unit, "value": (base + 0.0135) * s,
                           "samples": samples(base, s), "better": better})
    };
    let bench = serde_json::json!({
        "name": "bench", "method": "planted for the page test", "status": {"state": "measured"},
        "metrics": [
            metric("lat_syscall-null", "us", 0.4, scale, "lower"),
            metric("lat_syscall-read", "us", 0.7, 1.0, "lower"),
            metric("lat_syscall-open", "us", 2.1, 1.0, "lower"),
            metric("lat_pagefault", "us", 0.9, 1.0, "lower"),
            metric("bw_mem-rd-1mb", "MB/s", 12000.0, 1.0, "higher"),
            metric("bw_mem-wr-1mb", "MB/s", 9500.0, 1.0, "higher"),
            metric("bw_mem-cp-1mb", "MB/s", 6100.0, 1.0, "higher"),
            metric("dhrystone", "DMIPS", 17732.0, 1.0, "higher"),
            metric("whetstone", "MWIPS", 3333.0, 1.0, "higher")],
        "detail": {"skipped": [], "dhrystone_cpu": 7}});
    let sections = run["sections"].as_array_mut().unwrap();
    let at = sections.iter().position(|s| s["name"] == "bench").unwrap();
    sections[at] = bench;
    std::fs::write(&out, serde_json::to_string(&run).unwrap()).unwrap();
    out
}

#[test]
fn the_page_loads_in_chromium_without_console_errors_or_network() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed but CI is set: .ci/run installs it"
        );
        println!("skipped: no chromium on PATH (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let one = collect_run(dir.path(), &board, "one.json", 1.0);
    let two = collect_run(dir.path(), &board, "two.json", 1.6);
    let (page1, page2) = (dir.path().join("one.html"), dir.path().join("two.html"));
    common::ok(&[
        "report",
        "render",
        one.to_str().unwrap(),
        "--html",
        page1.to_str().unwrap(),
    ]);
    common::ok(&[
        "report",
        "render",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--html",
        page2.to_str().unwrap(),
    ]);
    let two_runs = std::fs::read_to_string(&page2).unwrap();
    assert!(two_runs.contains("<tr class=\"sig\"><td title=\"bench.lat_syscall-null\">"));
    assert!(!two_runs.contains("<tr class=\"sig\"><td title=\"bench.lat_pagefault\">"));
    let one_run = std::fs::read_to_string(&page1).unwrap();
    assert!(
        one_run.contains("<h3>System calls</h3>") && one_run.contains("<h3>CPU benchmarks</h3>")
    );
    // Dhrystone pinned to CPU 7, the qcs6490's prime core (2707.2 MHz).
    assert!(
        one_run.contains(&format!("{:.2}</div>", (17732.0 + 0.0135) / 2707.2)),
        "no DMIPS/MHz"
    );

    let work = dir.path().join("chromium");
    std::fs::create_dir(&work).unwrap();
    let mut shots = Vec::new();
    for (page, height) in [(&page1, 4300), (&page2, 5600)] {
        let l = load(&browser, page, &work, height);
        assert!(
            l.console.is_empty(),
            "{}: console messages: {:?}",
            page.display(),
            l.console
        );
        assert!(
            l.requests.is_empty(),
            "{}: network requests: {:?}",
            page.display(),
            l.requests
        );
        assert!(is_png(&l.png), "{}: no screenshot", page.display());
        shots.push(l.png);
    }
    if std::env::var_os("LEVER_UPDATE_SCREENSHOTS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        std::fs::write(docs.join("report-one-run.png"), &shots[0]).unwrap();
        std::fs::write(docs.join("report-two-runs.png"), &shots[1]).unwrap();
    }

    // The checks can fail: a page with a console error and external
    // resources is caught by both.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\">\
         <script>console.error(\"planted\")</script>\
         <script src=\"https://cdn.example.invalid/x.js\"></script></body></html>",
    )
    .unwrap();
    let l = load(&browser, &bad, &work, 600);
    assert!(
        l.console.iter().any(|c| c.contains("planted")),
        "{:?}",
        l.console
    );
    assert!(
        l.requests
            .iter()
            .any(|u| u == "http://example.invalid/x.png"),
        "{:?}",
        l.requests
    );
    assert!(
        l.requests
            .iter()
            .any(|u| u.starts_with("https://cdn.example.invalid/")),
        "{:?}",
        l.requests
    );
}
