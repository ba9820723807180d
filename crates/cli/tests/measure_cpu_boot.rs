//! `lever cpu`, `lever cpu ipc` and `lever boot` through the binary: golden
//! output on every simulated board, the real machine, the seed's boot
//! examples and error messages.

use lever_testkit::{fixture_path, FakeTree};
use std::path::Path;
use std::process::{Command, Output};

fn lever(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lever"))
        .args(args)
        .output()
        .expect("run lever")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = lever(args);
    assert!(o.status.success(), "lever {args:?} failed: {}", stderr(&o));
    stdout(&o)
}

fn boot_fixture(name: &str) -> String {
    let boot = concat!(env!("CARGO_MANIFEST_DIR"), "/../boot");
    fixture_path(boot, name).display().to_string()
}

/// Compare with `tests/golden/<name>`; `LEVER_UPDATE_GOLDEN=1` rewrites it.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    lever_testkit::golden(&path, actual);
}

fn cpu_golden(board: &str) {
    let tree = FakeTree::new();
    let created = lever_sim::create(board, tree.root()).unwrap();
    let root = created.root.display().to_string();
    golden(&format!("cpu-{board}.txt"), &ok(&["--root", &root, "cpu"]));
    let json = ok(&["--root", &root, "cpu", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["topology"]["clusters"].is_array());
    golden(&format!("cpu-{board}.json"), &json);
}

#[test]
fn cpu_golden_qcs6490() {
    cpu_golden("qcs6490");
}

#[test]
fn cpu_golden_qcs5430_fp1() {
    cpu_golden("qcs5430-fp1");
}

#[test]
fn cpu_golden_am437x() {
    cpu_golden("am437x");
}

#[test]
fn cpu_on_this_machine() {
    let out = ok(&["cpu"]);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus = lever_kernel::parse_cpu_list(&online).unwrap();
    assert!(
        out.starts_with(&format!("CPUs online: {} ({})", online.trim(), cpus.len())),
        "{out}"
    );
    let has_policy = std::fs::read_dir("/sys/devices/system/cpu/cpufreq")
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("policy"))
        })
        .unwrap_or(false);
    if has_policy {
        assert!(out.contains("cpufreq residency, policy"), "{out}");
    } else {
        assert!(out.contains("cpufreq: not available here because"), "{out}");
    }
    let v: serde_json::Value = serde_json::from_str(&ok(&["cpu", "--json"])).unwrap();
    assert_eq!(
        v["topology"]["online"].as_array().unwrap().len(),
        cpus.len()
    );
}

/// A CPU PMU that perf_event_open can count cycles with.
fn host_has_cpu_pmu() -> bool {
    std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|d| {
            d.flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n == "cpu"
                    || n.starts_with("cpu_")
                    || n.starts_with("armv")
                    || n.starts_with("arm_")
            })
        })
        .unwrap_or(false)
}

#[test]
fn ipc_of_true_counts_or_says_why() {
    let out = ok(&["cpu", "ipc", "--", "true"]);
    // The command always runs, and software counters always count.
    assert!(out.starts_with("command: true (exit 0"), "{out}");
    for sw in [
        "task-clock",
        "context-switches",
        "cpu-migrations",
        "page-faults",
    ] {
        assert!(out.contains(sw), "{sw}: {out}");
    }
    if out.contains("hardware counters: ") {
        // This VM: no PMU. Which counters are missing, and why.
        assert!(
            !host_has_cpu_pmu(),
            "a CPU PMU exists but nothing was counted: {out}"
        );
        assert!(
            out.contains("instructions, cycles cannot be counted here because"),
            "{out}"
        );
        assert!(out.contains("/sys/bus/event_source/devices lists"), "{out}");
        assert!(out.contains("IPC: not available here because"), "{out}");
        println!("no hardware counters on this machine; software fallback: {out}");
    } else {
        assert!(out.contains("instructions"), "{out}");
        assert!(out.contains("IPC: "), "{out}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["cpu", "ipc", "--json", "--", "true"])).unwrap();
    assert_eq!(v["exit_code"], 0);
    let sw = v["report"]["software"].as_array().unwrap();
    let task_clock = sw.iter().find(|c| c["name"] == "task-clock").unwrap();
    assert!(task_clock["count"].as_u64().unwrap() > 0, "{v}");
    if v["report"]["instructions"].is_null() {
        assert!(v["report"]["hardware_note"]
            .as_str()
            .unwrap()
            .contains("because"));
    } else {
        assert!(v["report"]["instructions"]["raw_count"].as_u64().unwrap() > 0);
    }
}

#[test]
fn ipc_runs_the_command_and_passes_its_exit_status() {
    // On this VM (no PMU) the command used to be skipped with exit 0.
    // The tree has /proc so that it is a kernel tree for --root below.
    let tree = FakeTree::with(&[("/proc/version", "Linux version 6.18.44\n")]);
    let marker = tree.root().join("ran");
    let script = format!(
        "dd if=/dev/zero of={} bs=64k count=16 2>/dev/null; exit 7",
        marker.display()
    );
    let out = lever(&["cpu", "ipc", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(marker.exists(), "the command must run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(exit 7,"), "{text}");
    // dd touched 1 MiB of fresh pages: the software counters saw faults.
    assert!(text.contains("page-faults"), "{text}");

    // A file tree cannot be counted, but the command still runs.
    let root = tree.root().display().to_string();
    std::fs::remove_file(&marker).unwrap();
    let out = lever(&["--root", &root, "cpu", "ipc", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(7));
    assert!(marker.exists());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("is a file tree, not a kernel"), "{text}");
}

#[test]
fn ipc_on_a_file_tree_is_not_countable() {
    // A kernel tree (it has /proc) that is files, not a kernel.
    let tree = FakeTree::with(&[("/proc/version", "Linux version 6.18.44\n")]);
    let root = tree.root().display().to_string();
    let out = ok(&["--root", &root, "cpu", "ipc", "--", "true"]);
    assert!(out.contains("is a file tree, not a kernel"), "{out}");
    assert!(out.contains("command: true (exit 0"), "{out}");
}

#[test]
fn ipc_needs_a_command() {
    let o = lever(&["cpu", "ipc"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("CMD"), "{}", stderr(&o));
}

#[test]
fn boot_seed_8_3_stage_table() {
    let out = ok(&[
        "boot",
        "--serial",
        &boot_fixture("seed000-8.3-serial.log"),
        "--systemd-time",
        &boot_fixture("seed000-8.3-systemd-time.txt"),
        "--journal",
        &boot_fixture("seed000-8.3-journal.txt"),
        "--blame",
        &boot_fixture("seed000-7.2-blame.txt"),
        "--top",
        "3",
    ]);
    golden("boot-seed-8.3.txt", &out);
    for want in [
        "PBL+XBL ",
        "1.818",
        "1.071",
        "0.580",
        "3.300",
        "1.854",
        "6.494",
        "4.640",
        "Total until Recorder init",
        "11.409",
        "android-tools-adbd.service",
    ] {
        assert!(out.contains(want), "{want} missing:\n{out}");
    }
    assert!(
        !out.contains("sshdgenkeys"),
        "--top 3 shows three units:\n{out}"
    );
}

#[test]
fn boot_seed_7_2_serial_json() {
    let out = ok(&[
        "boot",
        "--json",
        "--serial",
        &boot_fixture("seed000-7.2-serial.log"),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["stages"]["rows"].as_array().unwrap();
    let us: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["stage"].as_str().unwrap().to_string(),
                r["us"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        us,
        vec![
            ("PBL+XBL".into(), 1_547_000),
            ("Core UEFI".into(), 1_015_000),
            ("Kernel loader".into(), 574_000),
            ("Total before kernel".into(), 3_136_000),
        ]
    );
    assert_eq!(rows[3]["kind"], "total");
}

#[test]
fn boot_on_this_machine_says_what_is_missing() {
    let out = ok(&["boot"]);
    let pid1 = std::fs::read_to_string("/proc/1/comm").unwrap_or_default();
    if pid1.trim() == "systemd" {
        assert!(
            out.contains("Kernel total") || out.contains("systemd-analyze"),
            "{out}"
        );
    } else {
        assert!(
            out.contains(&format!("PID 1 is `{}`, not systemd", pid1.trim())),
            "{out}"
        );
        assert!(out.contains("no serial log (--serial LOG)"), "{out}");
    }
}

#[test]
fn boot_errors_name_file_and_line() {
    let bad = boot_fixture("bad-markers.yaml");
    let o = lever(&["boot", "--markers", &bad]);
    assert_eq!(o.status.code(), Some(3), "bad input (docs/cli.md)");
    assert!(
        stderr(&o).contains("bad-markers.yaml:7:3: unknown key `matches` in `end`"),
        "{}",
        stderr(&o)
    );

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serial.log");
    std::fs::write(
        &log,
        "[2024-02-06 15:26:06.978] UEFI Start\n[2024-02-06 15:26:08.543] UEFI Total : soon ms\n",
    )
    .unwrap();
    let o = lever(&["boot", "--serial", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("serial.log:1: `UEFI Start` has no [ms] value"),
        "{}",
        stderr(&o)
    );
    let time = dir.path().join("time.txt");
    std::fs::write(
        &time,
        "Startup finished in 1.2s (kernel) + later (userspace) = 3s\n",
    )
    .unwrap();
    let o = lever(&["boot", "--systemd-time", time.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("time.txt:1: cannot read the time `later` of (userspace)"),
        "{}",
        stderr(&o)
    );
    let o = lever(&["boot", "--journal", "/nonexistent/journal.txt"]);
    assert!(
        stderr(&o).contains("/nonexistent/journal.txt: cannot read"),
        "{}",
        stderr(&o)
    );
}

/// `boot --journal FILE` on a file that is no short-monotonic journal (not
/// one `[seconds]` line) is bad input naming the file, not a table of
/// markers "not found".
#[test]
fn boot_journal_that_is_no_journal_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let passwd = dir.path().join("passwd");
    std::fs::write(&passwd, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let out = lever(&["boot", "--journal", passwd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("passwd:1: no line has a [seconds] time"),
        "{}",
        stderr(&out)
    );
}
