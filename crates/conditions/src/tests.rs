//! The record from real-shaped snapshots (a QCS6490's policies and zones,
//! this VM's `/proc/loadavg`), and comparisons of two records.

use super::*;

fn load(load_1m: f64, runnable: u32) -> Avail<Load> {
    Avail::Value(Load {
        load_1m,
        load_5m: load_1m,
        load_15m: load_1m,
        runnable,
        tasks: 180,
    })
}

/// QCS6490's three policies under schedutil, as `lever sim create
/// qcs6490` writes them.
fn policies(gold_max_khz: u64) -> Avail<Vec<Policy>> {
    let p = |name: &str, cpus: &str, max, hw, cur| Policy {
        name: name.into(),
        cpus: cpus.into(),
        governor: Some("schedutil".into()),
        min_khz: Some(300_000),
        max_khz: Some(max),
        cur_khz: Some(cur),
        cpuinfo_max_khz: Some(hw),
    };
    Avail::Value(vec![
        p("policy0", "0-3", 1_958_400, 1_958_400, 691_200),
        p("policy4", "4-6", gold_max_khz, 2_400_000, 940_800),
        p("policy7", "7", 2_707_200, 2_707_200, 1_056_000),
    ])
}

fn thermal(cpu4_mc: i64, cdev_state: u64) -> Avail<ThermalState> {
    Avail::Value(ThermalState {
        zones: vec![
            ZoneTemp {
                zone: "thermal_zone0".into(),
                kind: "cpu0-thermal".into(),
                temp_mc: Some(41_200),
            },
            ZoneTemp {
                zone: "thermal_zone4".into(),
                kind: "cpu4-thermal".into(),
                temp_mc: Some(cpu4_mc),
            },
        ],
        cooling: vec![CoolingState {
            device: "cooling_device1".into(),
            kind: "cpufreq-cpu4".into(),
            cur_state: Some(cdev_state),
            max_state: Some(17),
        }],
    })
}

fn snap(elapsed_s: f64, l: Avail<Load>, gold_max: u64, cpu4_mc: i64, state: u64) -> Snapshot {
    Snapshot {
        elapsed_s,
        load: l,
        cpufreq: policies(gold_max),
        thermal: thermal(cpu4_mc, state),
    }
}

fn fixed() -> Fixed {
    Fixed {
        lever_version: "0.1.0 (abc1234)".into(),
        simulated: None,
        machine: Avail::Value(Machine {
            hostname: Some("rb3gen2".into()),
            model: Some("Qualcomm Technologies, Inc. Robotics RB3gen2".into()),
            arch: Some("aarch64".into()),
            cpus_online: 8,
        }),
        kernel_release: Avail::Value("6.6.52-qli-1.3".into()),
        cmdline: Avail::Value("console=ttyMSM0,115200n8".into()),
        isolated_cpus: Avail::Value(String::new()),
    }
}

fn quiet_run() -> Conditions {
    let before = snap(0.0, load(0.12, 1), 2_400_000, 44_100, 0);
    let during = vec![
        snap(1.0, load(0.3, 2), 2_400_000, 52_000, 0),
        snap(2.0, load(0.5, 2), 2_400_000, 55_300, 0),
    ];
    let after = snap(2.4, load(0.6, 1), 2_400_000, 50_000, 0);
    Conditions::new(fixed(), &before, Avail::Value(during), &after)
}

#[test]
fn a_quiet_run_has_no_disturbance_and_keeps_the_peak() {
    let c = quiet_run();
    assert!(c.disturbances().is_empty(), "{:?}", c.disturbances());
    let d = c.load_during.value().unwrap();
    assert_eq!((d.samples, d.max_runnable), (2, 2));
    assert_eq!(d.mean_runnable, 2.0);
    assert_eq!(d.max_load_1m, 0.5);
    let peak = c.thermal_peak.value().unwrap();
    assert_eq!(peak[1].kind, "cpu4-thermal");
    assert_eq!(peak[1].temp_mc, Some(55_300));
    assert_eq!(c.throttling.value().unwrap(), &Vec::new());
}

#[test]
fn a_cooling_device_and_a_lowered_max_are_throttling() {
    let before = snap(0.0, load(0.1, 1), 2_400_000, 60_000, 0);
    let during = vec![
        snap(1.0, load(0.2, 2), 2_400_000, 92_000, 3),
        snap(2.0, load(0.2, 2), 1_804_800, 96_000, 7),
    ];
    let after = snap(3.0, load(0.2, 1), 2_131_200, 90_000, 2);
    let c = Conditions::new(fixed(), &before, Avail::Value(during), &after);
    let t = c.throttling.value().unwrap();
    assert_eq!(t.len(), 2, "{t:?}");
    assert_eq!(t[0].what, "cooling_device1 (cpufreq-cpu4)");
    assert_eq!(
        (t[0].kind, t[0].first_seen),
        (ThrottleKind::Cooling, Phase::During)
    );
    assert_eq!(t[0].detail, "cur_state 7 of 17", "the worst state is kept");
    assert_eq!(t[1].kind, ThrottleKind::MaxLowered);
    assert_eq!(
        t[1].detail,
        "scaling_max_freq 2400000 → 1804800 kHz (cpuinfo_max_freq 2400000 kHz)"
    );
    let d = c.disturbances();
    assert_eq!(d.len(), 2);
    assert_eq!(
        d[0].text,
        "throttled (during the run): cooling_device1 (cpufreq-cpu4): cur_state 7 of 17"
    );
}

#[test]
fn a_standing_cap_is_a_setting_not_a_disturbance() {
    let s = snap(0.0, load(0.1, 1), 1_804_800, 40_000, 0);
    let c = Conditions::new(fixed(), &s, Avail::Value(vec![s.clone()]), &s);
    let t = c.throttling.value().unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(
        (t[0].kind, t[0].first_seen),
        (ThrottleKind::Capped, Phase::Before)
    );
    assert!(c.disturbances().is_empty());
    // Against an uncapped run it is a difference, not a reason to decline.
    let cmp = compare(Some(&quiet_run()), Some(&c), false);
    assert!(cmp.judged);
    let whats: Vec<&str> = cmp.differences.iter().map(|d| d.what.as_str()).collect();
    assert!(whats.contains(&"policy4 scaling_max_freq"), "{whats:?}");
    assert!(whats.contains(&"standing clock caps"), "{whats:?}");
}

#[test]
fn held_down_under_performance() {
    let mut s = snap(0.0, load(0.1, 1), 2_400_000, 40_000, 0);
    if let Avail::Value(p) = &mut s.cpufreq {
        p[1].governor = Some("performance".into());
        p[1].cur_khz = Some(1_497_600);
    }
    let c = Conditions::new(fixed(), &s, Avail::Value(vec![]), &s);
    let t = c.throttling.value().unwrap();
    assert_eq!(t[0].kind, ThrottleKind::HeldDown);
    assert_eq!(c.disturbances().len(), 1);
}

#[test]
fn load_before_and_during() {
    // The issue's run: load average 6.80 on 2 CPUs.
    let mut f = fixed();
    f.machine = Avail::Value(Machine {
        cpus_online: 2,
        ..Machine::default()
    });
    let before = snap(0.0, load(6.80, 7), 2_400_000, 40_000, 0);
    let c = Conditions::new(f.clone(), &before, Avail::Value(vec![]), &before);
    let d = c.disturbances();
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].text,
        "loaded before the run: load average 6.80 on 2 CPUs, 6 other tasks runnable"
    );
    // The average alone (an earlier run still in it, nothing runnable but
    // the reader now) is not a loaded machine; nor is a blip alone.
    for (avg, runnable) in [(0.53, 1), (1.9, 1), (0.1, 5)] {
        let before = snap(0.0, load(avg, runnable), 2_400_000, 40_000, 0);
        let c = Conditions::new(f.clone(), &before, Avail::Value(vec![]), &before);
        assert_eq!(c.disturbances(), vec![], "{avg} {runnable}");
    }
    assert_eq!(
        c.load_during,
        Avail::Unavailable(
            "no sample was taken while the run ran (it ended within one interval)".into()
        )
    );
    // Quiet before, a stress-ng worker during: 3 runnable where the run
    // itself accounts for 2.
    let before = snap(0.0, load(0.1, 1), 2_400_000, 40_000, 0);
    let during: Vec<_> = (1..=4)
        .map(|i| snap(i as f64, load(0.2 * i as f64, 3), 2_400_000, 40_000, 0))
        .collect();
    let c = Conditions::new(f, &before, Avail::Value(during), &before);
    let d = c.disturbances();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]
        .text
        .starts_with("loaded during the run: 3.0 runnable tasks on average on 2 CPUs"));
}

#[test]
fn identical_conditions_compare_clean() {
    let c = compare(Some(&quiet_run()), Some(&quiet_run()), false);
    assert_eq!(c.differences, Vec::new());
    assert_eq!(c.disturbed, Vec::<String>::new());
    assert!(c.judged && !c.forced);
    assert_eq!(c.withheld_reason(), None);
}

#[test]
fn a_loaded_run_is_not_judged_unless_forced() {
    let quiet = quiet_run();
    let mut loaded = quiet_run();
    loaded.load_before = load(6.8, 7);
    let c = compare(Some(&loaded), Some(&quiet), false);
    assert!(!c.judged);
    assert_eq!(
        c.disturbed,
        ["base run: loaded before the run: load average 6.80 on 8 CPUs, 6 other tasks runnable"]
    );
    assert_eq!(c.differences[0].what, "load");
    assert_eq!(c.differences[0].new, "quiet");
    assert!(c
        .withheld_reason()
        .unwrap()
        .starts_with("not judged: base run: loaded before the run"));
    let forced = compare(Some(&loaded), Some(&quiet), true);
    assert!(forced.judged && forced.forced);
    assert_eq!(forced.disturbed, c.disturbed, "still shown when forced");
}

#[test]
fn differences_name_what_changed() {
    let base = quiet_run();
    let mut new = quiet_run();
    new.kernel_release = Avail::Value("6.6.60-qli-1.4".into());
    new.isolated_cpus = Avail::Value("6-7".into());
    if let Avail::Value(p) = &mut new.cpufreq_before {
        p[0].governor = Some("performance".into());
    }
    if let Avail::Value(t) = &mut new.thermal_before {
        t.zones[1].temp_mc = Some(71_000);
    }
    let c = compare(Some(&base), Some(&new), false);
    let rows: Vec<(&str, &str, &str)> = c
        .differences
        .iter()
        .map(|d| (d.what.as_str(), d.base.as_str(), d.new.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("kernel release", "6.6.52-qli-1.3", "6.6.60-qli-1.4"),
            ("isolated CPUs", "none", "6-7"),
            ("policy0 governor", "schedutil", "performance"),
            (
                "hottest zone before the run",
                "44.1 °C (cpu4-thermal)",
                "71.0 °C (cpu4-thermal)"
            ),
        ]
    );
    assert!(c.judged);
}

#[test]
fn runs_without_a_record_are_shown_and_still_judged() {
    let c = compare(None, Some(&quiet_run()), false);
    assert!(c.judged);
    assert_eq!(
        c.differences[0].base,
        "not recorded (written by an older Lever)"
    );
    assert_eq!(compare(None, None, false).differences, Vec::new());
}

#[test]
fn the_record_reads_back_from_json() {
    let c = quiet_run();
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        json.contains(r#""kernel_release":{"value":"6.6.52-qli-1.3"}"#),
        "{json}"
    );
    let back: Conditions = serde_json::from_str(&json).unwrap();
    assert_eq!(back, c);
}
