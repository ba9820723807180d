//! Two runs whose conditions differ: `lever report render A B` puts the
//! difference at the top (HTML, Markdown, JSON) and calls no change
//! significant when a run was taken under load or throttling, unless
//! forced; identical quiet conditions change nothing.

use lever_conditions::{
    Avail, Conditions, CoolingState, Fixed, Load, Machine, Policy, Snapshot, ThermalState, ZoneTemp,
};
use lever_report::compare::Judging;
use lever_report::model::{Better, Device, Metric, Run, Section};
use lever_report::render::{html_with, json_with, markdown_with};

/// A QCS6490 (RB3gen2, kernel 6.6) before a run: its three policies
/// under schedutil, two of its zones, its gold cooling device.
fn snapshot(load_1m: f64, runnable: u32, gold_state: u64) -> Snapshot {
    let policy = |name: &str, cpus: &str, hw: u64, cur: u64| Policy {
        name: name.into(),
        cpus: cpus.into(),
        governor: Some("schedutil".into()),
        min_khz: Some(300_000),
        max_khz: Some(hw),
        cur_khz: Some(cur),
        cpuinfo_max_khz: Some(hw),
    };
    Snapshot {
        elapsed_s: 0.0,
        load: Avail::Value(Load {
            load_1m,
            load_5m: load_1m,
            load_15m: load_1m,
            runnable,
            tasks: 412,
        }),
        cpufreq: Avail::Value(vec![
            policy("policy0", "0-3", 1_958_400, 691_200),
            policy("policy4", "4-6", 2_400_000, 940_800),
            policy("policy7", "7", 2_707_200, 1_056_000),
        ]),
        thermal: Avail::Value(ThermalState {
            zones: vec![
                ZoneTemp {
                    zone: "thermal_zone0".into(),
                    kind: "cpu0-thermal".into(),
                    temp_mc: Some(41_200),
                },
                ZoneTemp {
                    zone: "thermal_zone4".into(),
                    kind: "cpu4-thermal".into(),
                    temp_mc: Some(43_100),
                },
            ],
            cooling: vec![CoolingState {
                device: "cooling_device1".into(),
                kind: "cpufreq-cpu4".into(),
                cur_state: Some(gold_state),
                max_state: Some(11),
            }],
        }),
    }
}

fn conditions(load_1m: f64, runnable: u32, gold_state: u64) -> Conditions {
    let fixed = Fixed {
        lever_version: "0.1.0 (5ca6f79)".into(),
        simulated: None,
        machine: Avail::Value(Machine {
            hostname: Some("rb3gen2".into()),
            model: Some("Qualcomm Technologies, Inc. Robotics RB3gen2".into()),
            arch: Some("aarch64".into()),
            cpus_online: 8,
        }),
        kernel_release: Avail::Value("6.6.52-qli-1.3".into()),
        cmdline: Avail::Value("console=ttyMSM0,115200n8 root=/dev/sda1".into()),
        isolated_cpus: Avail::Value(String::new()),
    };
    let s = snapshot(load_1m, runnable, gold_state);
    let during = vec![s.clone(), s.clone()];
    Conditions::new(fixed, &s, Avail::Value(during), &s)
}

/// A run with Dhrystone's samples around `dmips`.
fn run(dmips: f64, c: Conditions) -> Run {
    let mut r = Run::new(
        "2026-11-26T19:00:00Z",
        Device {
            board: Some("rb3gen2".into()),
            ..Device::default()
        },
    );
    let mut s = Section::measured("bench", "lever bench --quick");
    let samples: Vec<f64> = (0..12)
        .map(|i| dmips * (1.0 + (i % 4) as f64 * 0.004))
        .collect();
    let mut m = Metric::new("bench.dhrystone", "DMIPS", dmips);
    m.samples = samples;
    m.better = Some(Better::Higher);
    s.metrics.push(m);
    r.sections.push(s);
    r.conditions = Some(c);
    r
}

#[test]
fn a_run_under_load_is_warned_about_not_judged() {
    // The pair: 17,732 DMIPS under load, 39,702 quiet.
    let loaded = run(17_732.0, conditions(6.80, 9, 0));
    let quiet = run(39_702.0, conditions(0.12, 1, 0));
    let runs = [loaded, quiet];

    let md = markdown_with(&runs, judging(false));
    let top = md
        .find("## Conditions against #1")
        .expect("conditions section");
    let changes = md.find("## Significant changes against #1").unwrap();
    assert!(top < changes, "conditions come first:\n{md}");
    assert!(
        md.contains("WARNING: base run: loaded before the run: load average 6.80 on 8 CPUs"),
        "{md}"
    );
    assert!(md.contains("no change is called significant"), "{md}");
    assert!(!md.contains("significantly better"), "{md}");

    let page = html_with(&runs, judging(false));
    assert!(page.contains("<h2>Conditions against #1</h2>"), "{page}");
    assert!(page.contains("load: loaded before the run"), "{page}");
    assert!(!page.contains("significantly better"));

    let doc: serde_json::Value = serde_json::from_str(&json_with(&runs, judging(false))).unwrap();
    assert_eq!(doc["conditions"][0]["judged"], false);
    let row = doc["comparison"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "bench.dhrystone")
        .unwrap();
    assert_eq!(row["vs_base"][0]["verdict"], "not_judged");
    // The run documents keep their conditions.
    assert_eq!(
        doc["runs"][0]["conditions"]["load_before"]["value"]["load_1m"],
        6.8
    );

    // Forced: judged, and still warned about.
    let md = markdown_with(&runs, judging(true));
    assert!(md.contains("significantly better"), "{md}");
    assert!(md.contains("judged anyway (--force)"), "{md}");
}

#[test]
fn throttling_is_warned_about_and_identical_conditions_compare_clean() {
    let base = run(39_702.0, conditions(0.12, 1, 0));
    let throttled = run(30_100.0, conditions(0.12, 1, 3));
    let md = markdown_with(&[base.clone(), throttled], judging(false));
    assert!(
        md.contains("WARNING: new run: throttled (before the run): cooling\\_device1 (cpufreq-cpu4): cur\\_state 3 of 11"),
        "{md}"
    );
    assert!(!md.contains("significantly worse"), "{md}");

    let same = run(39_702.0, conditions(0.12, 1, 0));
    let md = markdown_with(&[base.clone(), same], judging(false));
    assert!(md.contains("the same conditions as \\#1"), "{md}");
    assert!(!md.contains("WARNING"), "{md}");
    let faster = run(44_000.0, conditions(0.12, 1, 0));
    assert!(markdown_with(&[base, faster], judging(false)).contains("significantly better"));
}

/// `force` alone, no reruns.
fn judging(force: bool) -> Judging<'static> {
    Judging {
        force,
        base_reruns: &[],
    }
}
