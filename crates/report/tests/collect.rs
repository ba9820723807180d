//! `collect` on a simulated qcs6490: every section is present, measured or
//! with the reason it is not, and the run reads back through the model.

use lever_report::collect::{collect, BenchSource, BootLog, Options, UseCase, SECTIONS};
use lever_report::model::{Run, Status};
use std::path::{Path, PathBuf};

fn boot_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../boot/tests/fixtures")
        .join(name)
}

/// Seed 000 §8.3's reference markers, as trace_pipe lines.
const TRACE: &str = "\
 app-1 [000] ....  273.082629: tracing_mark_write: B Connect
 app-1 [000] ....  273.119992: tracing_mark_write: B StartCamera
 app-1 [000] ....  277.306283: tracing_mark_write: E FirstVidFrame 1
";

fn sim_options(dir: &Path) -> Options {
    let root = dir.join("board");
    lever_sim::create("qcs6490", &root).unwrap();
    let trace = dir.join("trace.txt");
    std::fs::write(&trace, TRACE).unwrap();
    let mut o = Options::new(&root);
    o.boot_logs = vec![
        BootLog::parse(&format!(
            "serial={}",
            boot_fixture("seed000-8.3-serial.log").display()
        )),
        BootLog::parse(
            &boot_fixture("seed000-8.3-systemd-time.txt")
                .display()
                .to_string(),
        ),
        BootLog::parse(&format!(
            "journal={}",
            boot_fixture("seed000-8.3-journal.txt").display()
        )),
    ];
    o.usecases = vec![UseCase::parse("camera=true").unwrap()];
    o.latency = Some(std::time::Duration::from_secs(2));
    o.bench = Some(BenchSource::Quick);
    o.trace = Some(trace);
    o.kpis = vec!["record=Connect..FirstVidFrame".into()];
    o.daemon_socket = dir.join("no-daemon.sock");
    o
}

#[test]
fn a_simulated_board_has_every_section_measured_or_explained() {
    let dir = tempfile::tempdir().unwrap();
    let opts = sim_options(dir.path());
    let mut seen = Vec::new();
    let run = collect(&opts, "2026-11-23T14:00:00Z", &mut |i, name| {
        seen.push((i, name.to_string()))
    })
    .unwrap();
    assert_eq!(seen.len(), SECTIONS.len());
    let names: Vec<&str> = run.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, SECTIONS);
    for s in &run.sections {
        match &s.status {
            Status::Measured => assert!(!s.method.is_empty(), "{} has no method", s.name),
            Status::NotMeasured { why } => assert!(!why.is_empty(), "{} has no reason", s.name),
        }
    }
    assert_eq!(run.device.board.as_deref(), Some("qcs6490"));
    assert_eq!(run.device.cpus.len(), 8);
    assert_eq!(run.device.cpus[7].model.as_deref(), Some("Cortex-A78"));
    assert!(run
        .device
        .kernel_release
        .as_deref()
        .unwrap()
        .starts_with("6.6.52"));
    // The boot logs of seed 000 §8.3: its serial log's 3469 ms before the kernel.
    let boot = run.section("boot").unwrap();
    assert_eq!(boot.status, Status::Measured);
    assert!(run
        .metrics()
        .any(|m| m.name == "boot.total_before_kernel" && m.value == 3469.0));
    // Memory after boot is measured; the use case cannot run on a file tree.
    let mem = run.section("memory").unwrap();
    assert_eq!(mem.status, Status::Measured);
    assert!(run
        .metrics()
        .any(|m| m.name == "memory.free" && m.labels["usecase"] == "after boot"));
    let cols = mem.detail["columns"].as_array().unwrap();
    assert!(cols[1]["not_measured"]
        .as_str()
        .unwrap()
        .contains("file tree"));
    // Latency and benchmarks measure the machine itself, not a tree.
    for name in ["latency", "bench"] {
        match &run.section(name).unwrap().status {
            Status::NotMeasured { why } => assert!(why.contains("file tree"), "{name}: {why}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    // Seed 000 §8.3's record KPI: 277.306283 − 273.082629 s.
    let kpi = run.metrics().find(|m| m.name == "markers.kpi").unwrap();
    assert!((kpi.value - 4223.654).abs() < 0.001, "{}", kpi.value);
    match &run.section("daemon").unwrap().status {
        Status::NotMeasured { why } => assert!(why.contains("no-daemon.sock"), "{why}"),
        other => panic!("daemon: {other:?}"),
    }
    // The JSON form reads back into the same run.
    let text = serde_json::to_string_pretty(&run).unwrap();
    let back: Run = serde_json::from_str(&text).unwrap();
    assert_eq!(back, run);
}

#[test]
fn a_boot_log_that_does_not_parse_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = sim_options(dir.path());
    let bad = dir.path().join("time.txt");
    std::fs::write(&bad, "Startup finished in nonsense\n").unwrap();
    opts.boot_logs = vec![BootLog::parse(&format!("time={}", bad.display()))];
    opts.latency = None;
    let err = collect(&opts, "t", &mut |_, _| {}).unwrap_err();
    assert!(
        matches!(err, lever_report::ReportError::BadFile { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("time.txt"), "{err}");
}

#[test]
fn malformed_options_are_refused() {
    assert!(UseCase::parse("nocommand").is_err());
    assert!(UseCase::parse("=true").is_err());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = sim_options(dir.path());
    opts.latency = None;
    opts.kpis = vec!["no-range".into()];
    let err = collect(&opts, "t", &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("--kpi"), "{err}");
}

#[test]
fn a_bench_report_brings_the_machines_speed_into_the_runs_conditions() {
    // A real `lever bench -o` report of one test: its machine-speed
    // probes are what the run's conditions keep, as the bench figures
    // were measured at that speed. Taken in two passes, the metric keeps
    // how many samples each took (`report render A B` judges a slow pass
    // as drift, as `bench compare` does).
    let dir = tempfile::tempdir().unwrap();
    let mut b = lever_bench::Options::quick();
    b.only = Some("lat_syscall-null".into());
    b.passes = 2;
    let report = lever_bench::run(&b, &mut |_, _, _| {}).unwrap();
    let speed = report.conditions.run.as_ref().unwrap().speed.clone();
    assert_eq!(speed.as_ref().map(|s| s.probes.len()), Some(3), "{speed:?}");
    let file = dir.path().join("bench.json");
    std::fs::write(&file, serde_json::to_string(&report).unwrap()).unwrap();
    let mut opts = sim_options(dir.path());
    opts.bench = Some(BenchSource::File(file));
    opts.latency = None;
    let run = collect(&opts, "2026-11-27T09:00:00Z", &mut |_, _| {}).unwrap();
    assert_eq!(run.section("bench").unwrap().status, Status::Measured);
    assert_eq!(run.conditions.as_ref().unwrap().speed, speed);
    let m = &run.section("bench").unwrap().metrics[0];
    assert_eq!(m.pass_samples.len(), 2, "{m:?}");
    assert_eq!(m.pass_samples, report.tests[0].pass_samples);
    assert_eq!(m.pass_samples.iter().sum::<usize>(), m.samples.len());
    // The file system the file tests ran on is kept with the section.
    let kept = &run.section("bench").unwrap().detail["file_system"];
    assert_eq!(
        kept["fs_type"],
        report.conditions.scratch.as_ref().unwrap().fs_type.as_str(),
        "{kept}"
    );
}
