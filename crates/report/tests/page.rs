//! The page at seed 002's level: the summary strip reads every figure
//! from the run document, the benchmarks are seed 002's per-category
//! tables with "value (min, max)" and the 95 % CI, figures are in human
//! units with readable names, the Markdown holds no HTML entity, the
//! title names the board as `lever results list` does, a simulated
//! daemon is labelled, and each run's conditions are shown.

use lever_report::model::{Better, Cpu, Device, Metric, Run, Section};
use lever_report::render::summary::figures;
use lever_report::render::{html, markdown};

fn sampled(name: &str, unit: &str, better: Better, samples: Vec<f64>) -> Metric {
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    let mut m = Metric::new(name, unit, sorted[sorted.len() / 2]);
    m.samples = samples;
    m.better = Some(better);
    m
}

/// Twelve samples around `v` (±1 %).
fn around(v: f64) -> Vec<f64> {
    (0..12)
        .map(|i| v * (0.99 + 0.02 * i as f64 / 11.0))
        .collect()
}

/// A run with every figure the strip shows: Dhrystone on CPUs that share
/// one maximum clock, latency under load, a boot total, free memory after
/// boot and a daemon round trip.
fn full_run() -> Run {
    let cpus = (0..4)
        .map(|cpu| Cpu {
            cpu,
            cluster: Some(0),
            model: Some("Cortex-A55".into()),
            max_khz: Some(2_000_000),
            capacity: Some(1024),
        })
        .collect();
    let mut r = Run::new(
        "2026-11-26T20:00:00Z",
        Device {
            board: Some("qcs6490".into()),
            cpus,
            ..Device::default()
        },
    );
    let mut boot = Section::measured("boot", "serial log");
    boot.detail = serde_json::json!({"stages": [
        {"stage": "PBL+XBL", "ms": 1818.0, "kind": "stage"},
        {"stage": "Total before kernel", "ms": 3469.0, "kind": "subtotal"},
        {"stage": "Total until Recorder init", "ms": 11408.539, "kind": "total"}]});
    r.sections.push(boot);
    let mut mem = Section::measured("memory", "lever mem map");
    for (n, v) in [
        ("memory.total_ram", 6_291_456.0),
        ("memory.non_linux", -3.0),
        ("memory.free", 4_625_760.0),
    ] {
        mem.metrics
            .push(Metric::new(n, "kB", v).label("usecase", "after boot"));
    }
    mem.metrics.push(
        Metric::new("memory.kernel_dynamic", "kB", 14_000.0)
            .label("usecase", "after boot")
            .label("item", "Kernel stack"),
    );
    // A use case with its CPU (`lever top`'s figures, as collect keeps
    // them).
    for (n, v) in [
        ("memory.apps_framework", 1_500_000.0),
        ("memory.free", 4_000_000.0),
    ] {
        mem.metrics
            .push(Metric::new(n, "kB", v).label("usecase", "camera"));
    }
    mem.metrics
        .push(Metric::new("cpu.usecase", "%", 142.5).label("usecase", "camera"));
    mem.metrics
        .push(Metric::new("cpu.total", "%", 180.25).label("usecase", "camera"));
    for (p, v) in [("gst-launch-1.0", 130.0), ("sh", 0.5), ("camx", 12.0)] {
        mem.metrics.push(
            Metric::new("cpu.process", "%", v)
                .label("usecase", "camera")
                .label("process", p),
        );
    }
    mem.detail = serde_json::json!({"columns": [
        {"usecase": "after boot"},
        {"usecase": "camera", "cpu": {"capacity_pct": 400.0}},
        {"usecase": "gallery", "not_measured": "a use case on a file tree would sample this machine"}]});
    r.sections.push(mem);
    let mut lat = Section::measured("latency", "lever latency kpi");
    for (cond, cpu, v) in [
        ("no load", "0", 86.0),
        ("60 % CPU load on every CPU", "0", 53.0),
        ("60 % CPU load on every CPU", "1", 80.0),
    ] {
        lat.metrics.push(
            Metric::new("latency.max", "us", v)
                .label("condition", cond)
                .label("cpu", cpu),
        );
    }
    r.sections.push(lat);
    let mut bench = Section::measured("bench", "lever bench --quick");
    bench.metrics.push(sampled(
        "bench.dhrystone",
        "DMIPS",
        Better::Higher,
        around(5000.0),
    ));
    bench.metrics.push(sampled(
        "bench.lat_syscall-null",
        "us",
        Better::Lower,
        around(0.4),
    ));
    bench.metrics.push(sampled(
        "bench.lat_syscall-read",
        "us",
        Better::Lower,
        around(0.8),
    ));
    bench.metrics.push(sampled(
        "bench.bw_mem-rd-1mb",
        "MB/s",
        Better::Higher,
        around(12_000.0),
    ));
    // Two clusters (a pipe whose ends share a CPU or not): both modes,
    // no interval.
    bench.metrics.push(sampled(
        "bench.lat_pipe",
        "us",
        Better::Lower,
        [1.8; 6].into_iter().chain([75.0; 6]).collect(),
    ));
    // Not in the catalog, no recorded category: "Other tests".
    bench.metrics.push(sampled(
        "bench.glbench-egypt",
        "fps",
        Better::Higher,
        around(16.0),
    ));
    bench.detail = serde_json::json!({"skipped": [{"test": "lat_tcp", "why": "no loopback"}]});
    r.sections.push(bench);
    let mut daemon = Section::measured("daemon", "lever-client STATUS");
    daemon.metrics.push(sampled(
        "daemon.round_trip",
        "us",
        Better::Lower,
        around(25.0),
    ));
    daemon.detail = serde_json::json!({"root": "/tmp/b", "simulated_board": "qcs6490"});
    r.sections.push(daemon);
    r
}

fn figure(run: &Run, label: &str) -> Result<String, String> {
    figures(run)
        .into_iter()
        .find(|f| f.label == label)
        .unwrap_or_else(|| panic!("no figure {label}"))
        .value
}

#[test]
fn the_summary_strip_reads_every_figure_from_the_document() {
    let r = full_run();
    // The medians of the planted samples, in human units.
    let dmips = r
        .metrics()
        .find(|m| m.name == "bench.dhrystone")
        .unwrap()
        .value;
    assert_eq!(
        figure(&r, "DMIPS"),
        Ok(lever_report::render::units::number(dmips))
    );
    assert_eq!(
        figure(&r, "DMIPS/MHz"),
        Ok(format!("{:.2}", dmips / 2000.0))
    );
    assert_eq!(figure(&r, "worst latency under load"), Ok("80 µs".into()));
    assert_eq!(figure(&r, "boot total"), Ok("11.4 s".into()));
    assert_eq!(figure(&r, "free memory after boot"), Ok("4.41 GiB".into()));
    let rt = r
        .metrics()
        .find(|m| m.name == "daemon.round_trip")
        .unwrap()
        .value;
    assert_eq!(
        figure(&r, "daemon round trip"),
        Ok(lever_report::render::units::us(rt))
    );
    let page = html(std::slice::from_ref(&r));
    let strip = &page[page.find("<div class=\"strip\">").unwrap()..];
    let strip = &strip[..strip.find("</div>\n</div>").unwrap()];
    for want in ["80 µs", "11.4 s", "4.41 GiB"] {
        assert!(strip.contains(want), "{want}: {strip}");
    }

    // Change the document, and the strip changes with it.
    let mut hotter = r.clone();
    for m in hotter
        .sections
        .iter_mut()
        .flat_map(|s| s.metrics.iter_mut())
    {
        if m.name == "latency.max" && m.labels["cpu"] == "0" {
            m.value = 900.0;
        }
    }
    assert_eq!(
        figure(&hotter, "worst latency under load"),
        Ok("900 µs".into())
    );
    // The no-load maximum (86 µs) is never the figure under load.
    let mut no_load_only = r.clone();
    no_load_only.sections[2]
        .metrics
        .retain(|m| m.labels["condition"] == "no load");
    assert!(figure(&no_load_only, "worst latency under load").is_err());
}

#[test]
fn a_figure_the_document_lacks_says_why() {
    let mut r = full_run();
    // Cores with different maxima and an unpinned benchmark: no one clock.
    r.device.cpus[3].max_khz = Some(2_707_200);
    let why = figure(&r, "DMIPS/MHz").unwrap_err();
    assert!(
        why.starts_with("not available because the benchmark was not pinned"),
        "{why}"
    );
    assert!(why.contains("2,000–2,707 MHz"), "{why}");
    // Pinned to CPU 3: its own maximum.
    r.sections[3].detail["dhrystone_cpu"] = 3.into();
    let dmips = r
        .metrics()
        .find(|m| m.name == "bench.dhrystone")
        .unwrap()
        .value;
    assert_eq!(
        figure(&r, "DMIPS/MHz"),
        Ok(format!("{:.2}", dmips / 2707.2))
    );
    // No clock anywhere (a VM without cpufreq).
    for c in &mut r.device.cpus {
        c.max_khz = None;
    }
    assert!(figure(&r, "DMIPS/MHz")
        .unwrap_err()
        .starts_with("not available because"));
    // Sections not measured: their reason.
    r.sections.retain(|s| s.name != "bench");
    r.sections
        .push(Section::not_measured("bench", "not asked for (--bench)"));
    assert_eq!(
        figure(&r, "DMIPS"),
        Err("the bench section was not measured: not asked for (--bench)".into())
    );
    let page = html(&[r]);
    assert!(page.contains("the bench section was not measured: not asked for (--bench)"));
}

#[test]
fn benchmarks_are_seed_002s_tables_per_category() {
    let r = full_run();
    let page = html(std::slice::from_ref(&r));
    let bench = &page[page.find("<section id=\"bench\">").unwrap()..];
    let bench = &bench[..bench.find("</section>").unwrap()];
    // Categories in seed 002's order, the unknown test last.
    let at = |s: &str| bench.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("<h3>System calls</h3>") < at("<h3>Memory bandwidth</h3>"));
    assert!(at("<h3>Memory bandwidth</h3>") < at("<h3>CPU benchmarks</h3>"));
    assert!(at("<h3>CPU benchmarks</h3>") < at("<h3>Other tests</h3>"));
    // Each row: value (min, max), n and the CI, as `lever bench` prints them.
    let m = r
        .metrics()
        .find(|m| m.name == "bench.lat_syscall-null")
        .unwrap();
    let s = lever_bench::stats::Summary::new(&m.samples).unwrap();
    let cell = format!("{:.2} (min {:.2}, max {:.2})", s.median, s.min, s.max);
    let row = &bench[at("<td title=\"bench.lat_syscall-null\">")..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains(&cell), "{cell}: {row}");
    assert!(row.contains("<td class=\"num\">12</td>"), "{row}");
    assert!(
        row.contains(&format!(
            "{:.2} … {:.2} (±{:.1} %)",
            s.ci_low.unwrap(),
            s.ci_high.unwrap(),
            s.ci_half_width_pct().unwrap()
        )),
        "{row}"
    );
    let pipe = &bench[at("<td title=\"bench.lat_pipe\">")..];
    let pipe = &pipe[..pipe.find("</tr>").unwrap()];
    assert!(
        pipe.contains("two modes: 1.80 ×6 | 75.00 ×6 (no interval of the median)"),
        "{pipe}"
    );
    // Dhrystone's derived rows: per second and per MHz.
    assert!(bench.contains("dhrystone_per_second"));
    assert!(bench.contains("dhrystone_per_mhz"));
    assert!(bench.contains("lat_tcp skipped: no loopback"));
    // One chart per category and unit, one scale for all its tests.
    assert!(bench.contains("System calls (µs): median"));
    assert!(bench.contains("one scale for every test"));
    let md = markdown(&[r]);
    assert!(md.contains("### System calls"), "{md}");
    assert!(
        md.contains(&format!("| lat\\_syscall-null | µs | {cell} | 12 |")),
        "{md}"
    );
}

#[test]
fn human_units_and_readable_names() {
    let page = html(&[full_run()]);
    let mem = &page[page.find("<section id=\"memory\">").unwrap()..];
    let mem = &mem[..mem.find("</section>").unwrap()];
    assert!(mem.contains(">6.00 GiB<"), "{mem}");
    assert!(mem.contains(">13.7 MiB<"), "{mem}");
    assert!(!mem.contains(" kB<") && !mem.contains("k kB") && !mem.contains("M kB"));
    // The readable name, the id as the tooltip.
    assert!(mem.contains(
        "<td title=\"memory.kernel_dynamic{item=Kernel stack,usecase=after boot}\">Kernel stack (kernel dynamic), after boot</td>"
    ), "{mem}");
    // A negative difference keeps its sign and says why.
    assert!(mem.contains("−3 KiB*"), "{mem}");
    assert!(mem.contains("* negative: the RAM Linux maps exceeds the total RAM figure"));
    let md = markdown(&[full_run()]);
    assert!(
        md.contains("| Kernel stack (kernel dynamic), after boot | 13.7 MiB |"),
        "{md}"
    );
    assert!(md.contains("−3 KiB \\*"), "{md}");
}

#[test]
fn markdown_has_no_html_entities() {
    let mut r = full_run();
    r.sections[0].method = "lever-cpu's topology & \"policies\" <cpufreq>".into();
    let md = markdown(&[r.clone(), r]);
    for entity in ["&#39;", "&amp;", "&quot;", "&lt;", "&gt;"] {
        assert!(!md.contains(entity), "{entity} in:\n{md}");
    }
    assert!(
        md.contains("lever-cpu's topology \\& \"policies\" \\<cpufreq\\>"),
        "{md}"
    );
}

#[test]
fn the_title_names_the_board_as_results_list_does() {
    let mut vm = full_run();
    vm.device.board = None;
    vm.device.hostname = Some("vm".into());
    let page = html(std::slice::from_ref(&vm));
    assert!(page.contains("<h1>Lever report: vm</h1>"), "{page}");
    assert!(!page.contains("unknown board"));
    assert!(markdown(&[vm]).starts_with("# Lever report: vm\n"));
}

#[test]
fn a_daemon_of_a_simulated_board_is_labelled() {
    let page = html(&[full_run()]);
    assert!(page.contains(
        "<p class=\"note\">this daemon serves the simulated board qcs6490 (lever sim) at /tmp/b, not this machine"
    ), "{page}");
    let mut real = full_run();
    real.sections[4].detail = serde_json::json!({"root": "/"});
    assert!(!html(&[real]).contains("class=\"note\""));
}

#[test]
fn each_run_shows_its_conditions_or_why_not() {
    let page = html(&[full_run()]);
    assert!(page.contains("<section id=\"conditions\"><h2>Conditions</h2>"));
    assert!(
        page.contains("not recorded: the runs were collected by a Lever that kept no conditions")
    );
}

#[test]
fn each_use_case_shows_its_cpu_beside_its_memory() {
    let page = html(&[full_run()]);
    let t = &page[page.find("<table class=\"usecases\">").unwrap()..];
    let t = &t[..t.find("</table>").unwrap()];
    assert!(
        t.contains(
            "<tr><td>camera</td><td class=\"num\">1.43 GiB</td><td class=\"num\">3.81 GiB</td>\
         <td class=\"num\">143 % of one core</td><td class=\"num\">180 % of 400 %</td>\
         <td>gst-launch-1.0 130 %, camx 12.0 %, sh 0.5 %</td></tr>"
        ),
        "{t}"
    );
    assert!(t.contains("<td>gallery</td>"), "{t}");
    assert!(t.contains("not measured: a use case on a file tree would sample this machine"));
    assert!(!t.contains("after boot"), "no command ran after boot: {t}");
    let md = markdown(&[full_run()]);
    assert!(
        md.contains("| camera | 1.43 GiB | 3.81 GiB | 143 % of one core | 180 % of 400 % |"),
        "{md}"
    );
}

#[test]
fn a_busy_run_leads_its_conditions_with_the_load_one_column_per_run() {
    use lever_conditions::{Avail, Conditions, Fixed, Load, Snapshot};
    let snap = |load_1m: f64| Snapshot {
        elapsed_s: 0.0,
        load: Avail::Value(Load {
            load_1m,
            load_5m: 1.0,
            load_15m: 1.0,
            // Busy (the 6.80) with tasks runnable beside the reader.
            runnable: if load_1m > 1.0 { 7 } else { 1 },
            tasks: 120,
        }),
        cpufreq: Avail::Unavailable(
            "no cpufreq policies: this kernel has no cpufreq driver".into(),
        ),
        thermal: Avail::Unavailable("no thermal zones".into()),
    };
    let record = |load: f64| {
        Conditions::new(
            Fixed::unknown("0.1.0", 2),
            &snap(load),
            Avail::Value(vec![]),
            &snap(load),
        )
    };
    let (mut quiet, mut busy) = (full_run(), full_run());
    quiet.conditions = Some(record(0.05));
    busy.conditions = Some(record(6.8));
    let page = html(&[quiet, busy]);
    let panel = &page[page.find("<section id=\"conditions\">").unwrap()..];
    let panel = &panel[..panel.find("</section>").unwrap()];
    assert!(
        panel.contains(
            "<tr class=\"warn\"><th>disturbed (load)</th><td>—</td><td>loaded before the run: load average 6.80 on 2 CPUs, 6 other tasks runnable</td></tr>"
        ),
        "{panel}"
    );
    assert!(panel.contains(
        "<td>not available: no cpufreq policies: this kernel has no cpufreq driver</td>"
    ));
    // The load row comes before the facts that did not disturb the run.
    assert!(panel.find("disturbed (load)").unwrap() < panel.find("<th>kernel</th>").unwrap());
}
