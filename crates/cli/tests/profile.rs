//! `lever profile`: list, show, diff, verify, apply --direct / off --direct
//! and import-tuned against a simulated QCS6490.

mod common;

use common::{changed, lever, ok, snapshot};
use std::path::Path;

fn board(dir: &Path) -> String {
    let root = dir.join("board");
    ok(&["sim", "create", "qcs6490", root.to_str().unwrap()]);
    root.to_str().unwrap().to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut argv = args.to_vec();
    argv.push("--json");
    serde_json::from_str(&ok(&argv)).expect("JSON")
}

#[test]
fn list_names_every_builtin_with_its_seed_sections() {
    let out = ok(&["profile", "list"]);
    for name in [
        "performance",
        "balanced",
        "powersave",
        "rt",
        "memory-low-latency",
    ] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name}: {out}");
    }
    assert!(out.contains("seed 000 §3.6, seed 001"), "{out}");
    let list = json(&["profile", "list"]);
    let rt = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "rt")
        .unwrap();
    assert_eq!(rt["needs_rt_cpus"], true);
}

#[test]
fn show_prints_writes_in_order_and_the_command_line_to_add() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path());
    let out = ok(&["--root", &root, "profile", "show", "rt", "--rt-cpus", "1-3"]);
    assert!(
        out.starts_with("profile rt on target qcs6490, RT CPUs 1-3: 23 writes"),
        "{out}"
    );
    assert!(
        out.contains("/proc/sys/kernel/sched_rt_runtime_us                      -1"),
        "{out}"
    );
    assert!(out.contains("kernel command line to add (boot time only, not written): isolcpus=1-3 nohz_full=1-3 rcu_nocbs=1-3 irqaffinity=0,4-7"), "{out}");
    // The simulated board has IRQs and workqueue masks; it has no tracefs.
    assert!(
        out.lines().any(|l| l
            .split_whitespace()
            .take(2)
            .eq(["/proc/irq/27/smp_affinity_list", "0,4-7"])),
        "{out}"
    );
    assert!(
        out.contains("skipped /sys/kernel/tracing/tracing_on"),
        "{out}"
    );
    let r = json(&["--root", &root, "profile", "show", "rt", "--rt-cpus", "7"]);
    assert_eq!(r["rt_cpus"], "7");
    assert_eq!(r["cmdline"][3]["value"], "0-6");
}

#[test]
fn mistakes_are_classified() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path());
    let out = lever(&["--root", &root, "profile", "show", "rt"]);
    assert_eq!(out.status.code(), Some(3), "no --rt-cpus is bad input");
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --rt-cpus LIST"));
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "profile: bad\nresources:\n  vm_swappiness: 999\n").unwrap();
    let out = lever(&[
        "--root",
        &root,
        "profile",
        "show",
        bad.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"]["code"], "bad_input");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bad.yaml:3:18: field `resources.vm_swappiness`"),
        "{e}"
    );
    let out = lever(&["profile", "show", "nonesuch"]);
    assert_eq!(out.status.code(), Some(3));
    // Without --direct, apply and off go through the daemon: with none
    // at the socket they say so (daemon_unreachable, 7).
    let sock = dir.path().join("no-daemon.sock");
    for verb in [&["apply", "performance"][..], &["off"][..]] {
        let mut args = vec!["profile"];
        args.extend_from_slice(verb);
        args.extend(["--socket", sock.to_str().unwrap()]);
        let out = lever(&args);
        assert_eq!(out.status.code(), Some(7), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("start `lever daemon` or use --direct"),
            "{args:?}"
        );
    }
}

#[test]
fn diff_apply_verify_off_round_trip_leaves_the_board_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path());
    let state = dir.path().join("state.json");
    let state = state.to_str().unwrap();
    let before = snapshot(Path::new(&root));

    let d = json(&["--root", &root, "profile", "diff", "performance"]);
    let changes = d["changes"].as_array().unwrap().len();
    assert!(changes >= 6, "{d}");
    let out = ok(&["--root", &root, "profile", "diff", "performance"]);
    assert!(
        out.contains(
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor  schedutil  ->  performance"
        ),
        "{out}"
    );

    let out = ok(&[
        "--root",
        &root,
        "profile",
        "apply",
        "--direct",
        "performance",
        "--state",
        state,
    ]);
    assert!(
        out.starts_with(&format!(
            "applied performance directly (no daemon holds it): {changes} node(s) written"
        )),
        "{out}"
    );
    assert_eq!(changed(&before, &snapshot(Path::new(&root))).len(), changes);
    let again = lever(&[
        "--root", &root, "profile", "apply", "--direct", "balanced", "--state", state,
    ]);
    assert_eq!(
        again.status.code(),
        Some(3),
        "bad input, as docs/cli.md says"
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("already applied"));

    let v = json(&["--root", &root, "profile", "verify", "--state", state]);
    assert_eq!(v["drifted"].as_array().unwrap().len(), 0, "{v}");
    let gov = Path::new(&root).join("sys/devices/system/cpu/cpufreq/policy7/scaling_governor");
    std::fs::write(&gov, "schedutil\n").unwrap();
    // Drift is a failed check: the report, then exit 1.
    let out = lever(&["--root", &root, "profile", "verify", "--state", state]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of "));
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("1 changed since"), "{out}");
    assert!(
        out.contains("policy7/scaling_governor  performance  schedutil"),
        "{out}"
    );
    std::fs::write(&gov, "performance\n").unwrap();

    let out = ok(&[
        "--root", &root, "profile", "off", "--direct", "--state", state,
    ]);
    assert_eq!(
        out,
        format!("profile performance off: {changes} node(s) restored to their originals\n")
    );
    assert_eq!(
        changed(&before, &snapshot(Path::new(&root))),
        Vec::<String>::new()
    );
    // Without a state file, verify compares with the profile resolved now.
    let out = lever(&[
        "--root",
        &root,
        "profile",
        "verify",
        "performance",
        "--state",
        state,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "drifted");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["drifted"].as_array().unwrap().len(), changes);
    let out = lever(&["--root", &root, "profile", "verify", "--state", state]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn import_tuned_writes_a_profile_that_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path());
    let tuned = dir.path().join("rt-lab");
    std::fs::create_dir(&tuned).unwrap();
    std::fs::write(
        tuned.join("tuned.conf"),
        "[main]\nsummary=Lab RT box\n\n[sysctl]\nkernel.timer_migration = 0\nvm.swappiness=10\n\n[scheduler]\nisolated_cores=2-3\n\n[disk]\nelevator=none\n",
    )
    .unwrap();
    let out_file = dir.path().join("rt-lab.yaml");
    let out = ok(&[
        "profile",
        "import-tuned",
        tuned.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    // Two sysctls and isolated_cores; the summary is a description, not
    // a setting.
    assert!(out.contains("3 setting(s) mapped"), "{out}");
    assert!(
        out.contains("tuned.conf:11: [disk]: TuneD's `disk` plugin has no Lever equivalent"),
        "{out}"
    );
    let r = json(&[
        "--root",
        &root,
        "profile",
        "show",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(r["rt_cpus"], "2-3");
    let yaml = ok(&["profile", "import-tuned", tuned.to_str().unwrap()]);
    assert!(yaml.contains("profile: rt-lab\n"), "{yaml}");
}

/// The verdict of one `lever rt check` check.
fn rt_verdict(root: &str, check: &str) -> (String, String) {
    // Exit 1 while a check fails; the report is on stdout either way.
    let out = lever(&["--root", root, "rt", "check", "--rt-cpus", "6-7", "--json"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == check)
        .unwrap_or_else(|| panic!("no check {check}: {r}"))
        .clone();
    (
        c["verdict"].as_str().unwrap().to_string(),
        c["current"].as_str().unwrap().to_string(),
    )
}

#[test]
fn rt_on_a_simulated_board_moves_irqs_and_workqueues_and_off_restores_every_byte() {
    // The state file inside the root, as `--state D/p.json` in docs/cli.md.
    let dir = tempfile::tempdir().unwrap();
    let root = board(dir.path());
    let state = format!("{root}/p.json");
    let before = snapshot(Path::new(&root));
    // Fresh from `sim create`: every IRQ may run anywhere.
    let (verdict, current) = rt_verdict(&root, "irq_affinity");
    assert_eq!(verdict, "warn", "{current}");
    assert!(
        current.starts_with("6 of 6 IRQs may run on CPU 6-7"),
        "{current}"
    );

    let out = ok(&[
        "--root",
        &root,
        "profile",
        "apply",
        "rt",
        "--rt-cpus",
        "6-7",
        "--direct",
        "--state",
        &state,
    ]);
    assert!(out.contains("node(s) written"), "{out}");
    assert!(!out.contains("skipped /proc/irq"), "{out}");
    assert!(!out.contains("workqueue"), "{out}");
    let read = |p: &str| {
        std::fs::read_to_string(Path::new(&root).join(p))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(read("proc/irq/27/smp_affinity_list"), "0-5");
    assert_eq!(read("sys/devices/virtual/workqueue/cpumask"), "3f");
    assert_eq!(
        read("sys/devices/virtual/workqueue/writeback/cpumask"),
        "3f"
    );
    assert_eq!(
        rt_verdict(&root, "irq_affinity"),
        ("pass".to_string(), "all 6 IRQs off CPU 6-7".to_string())
    );
    assert_eq!(rt_verdict(&root, "workqueue_cpumask").0, "pass");

    ok(&[
        "--root", &root, "profile", "off", "--direct", "--state", &state,
    ]);
    assert_eq!(
        changed(&before, &snapshot(Path::new(&root))),
        Vec::<String>::new()
    );
}

/// A file that is not a TuneD profile (no `[main]` or plugin section) is
/// bad input, not a profile of "not mapped" lines.
#[test]
fn import_tuned_of_a_non_profile_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let passwd = dir.path().join("passwd");
    std::fs::write(&passwd, "root:x:0:0:root:/root:/bin/bash\nbin=x\n").unwrap();
    let out = lever(&["profile", "import-tuned", passwd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a TuneD profile"));
    assert!(out.stdout.is_empty());
}
