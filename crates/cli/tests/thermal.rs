//! `lever thermal` through the binary: a simulated QCS6490's zones (the
//! names of sc7280's device tree), trip points, cooling devices and
//! bindings, as a table and as JSON; `--watch` while a command heats a
//! zone and engages a cooling device; a board without zones (exit 4 with
//! the reason); bad values (exit 3).

mod common;

use common::{lever, ok};
use std::path::Path;

fn board(dir: &Path, name: &str) -> String {
    let root = dir.join(name);
    ok(&["sim", "create", name, root.to_str().unwrap()]);
    root.to_string_lossy().into_owned()
}

#[test]
fn zones_trips_and_cooling_devices_of_a_simulated_qcs6490() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path(), "qcs6490");
    let text = ok(&["--root", &root, "thermal"]);
    assert!(text.contains("not live readings"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("thermal_zone4 "))
        .unwrap();
    for cell in [
        "cpu4-thermal",
        "43.1",
        "enabled",
        "step_wise",
        "passive 90.0 ±2.0, passive 95.0 ±2.0, critical 110.0",
        "cpufreq-cpu4 at trips 0,1; cpufreq-cpu7 at trips 0,1",
    ] {
        assert!(row.contains(cell), "{cell:?} not in {row:?}");
    }
    let gpu = text
        .lines()
        .find(|l| l.starts_with("cooling_device3 "))
        .unwrap();
    assert!(gpu.contains("devfreq-3d00000.qcom,kgsl-3d0"), "{gpu}");
    assert!(gpu.contains("thermal_zone16, thermal_zone17"), "{gpu}");

    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--root", &root, "thermal", "--json"])).unwrap();
    assert_eq!(json["zones"].as_array().unwrap().len(), 30);
    assert_eq!(json["zones"][0]["kind"], "cpu0-thermal");
    assert_eq!(json["zones"][0]["temp_mc"]["value"], 41200);
    assert_eq!(json["zones"][0]["trips"][2]["temp_mc"], 110000);
    assert_eq!(json["zones"][0]["bindings"][1]["trip_point"], 1);
    // 10 silver frequencies: states 0..9.
    assert_eq!(json["cooling"][0]["max_state"], 9);
    assert!(json["watch"].is_null());
}

#[test]
fn watch_during_a_command_keeps_the_peak_and_the_cooling() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path(), "qcs6490");
    let zone = format!("{root}/sys/devices/virtual/thermal/thermal_zone10/temp");
    let cdev = format!("{root}/sys/devices/virtual/thermal/cooling_device1/cur_state");
    let script = format!("sleep 0.15; echo 96300 > {zone}; echo 4 > {cdev}; sleep 0.3; echo 71000 > {zone}; sleep 0.15");
    let out = ok(&[
        "--root",
        &root,
        "thermal",
        "--json",
        "--interval",
        "0.1",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w = &json["watch"];
    assert_eq!(w["exit_code"], 0);
    let z = &w["zones"][10];
    assert_eq!(z["kind"], "cpu10-thermal");
    assert_eq!(
        (
            z["first_mc"].as_i64(),
            z["peak_mc"].as_i64(),
            z["last_mc"].as_i64()
        ),
        (Some(44500), Some(96300), Some(71000))
    );
    assert_eq!(z["tripped"], 0, "96.3 °C is past the 90 °C passive trip");
    assert_eq!(w["cooling"][1]["max_seen"], 4);
    assert!(w["samples"].as_array().unwrap().len() >= 5);

    let text = ok(&[
        "--root",
        &root,
        "thermal",
        "--duration",
        "0.2",
        "--interval",
        "0.1",
    ]);
    assert!(text.contains("watched 3 samples every 0.1 s"), "{text}");
    // The state written above is still there: the table says so.
    assert!(text.contains("cpufreq-cpu4 4/11"), "{text}");
    assert!(
        text.contains("cooling engaged: cooling_device1 (cpufreq-cpu4) up to state 4"),
        "{text}"
    );
}

#[test]
fn no_zones_is_not_available_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path(), "am437x");
    let out = lever(&["--root", &root, "thermal"]);
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "thermal zones are not available here because /sys/class/thermal does not exist"
        ),
        "{err}"
    );
}

#[test]
fn bad_values_and_a_failing_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path(), "qcs6490");
    for args in [
        vec!["--root", root.as_str(), "thermal", "--interval", "0"],
        vec!["--root", root.as_str(), "thermal", "--duration", "soon"],
    ] {
        assert_eq!(lever(&args).status.code(), Some(3), "{args:?}");
    }
    let out = lever(&[
        "--root",
        &root,
        "thermal",
        "--interval",
        "0.05",
        "--",
        "false",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("while `false` ran"));
}
