//! Parsing and resolving profiles: precise errors, includes, built-ins on a
//! simulated QCS6490.

mod common;

use lever_profiles::{load, parse, resolve, Chain, Options, ProfileError, Resolved};

fn chain_of(text: &str) -> Chain {
    Chain {
        profiles: vec![parse("p.yaml", text).unwrap()],
    }
}

fn resolve_text(b: &common::Board, text: &str) -> Result<Resolved, ProfileError> {
    resolve(&chain_of(text), &b.target, &b.fs, &Options::default())
}

fn rt13() -> Options {
    Options {
        rt_cpus: Some(vec![1, 2, 3]),
    }
}

#[test]
fn mistakes_point_at_file_line_col_and_field() {
    let e = parse("p.yaml", "profile: x\nresorces: {}\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("p.yaml:2:1: field `(top)`: unknown key `resorces`"),
        "{e}"
    );
    let e = parse(
        "p.yaml",
        "profile: x\nsysctl:\n  vm.swappiness: 1\n  vm.swappiness: 2\n",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "p.yaml:4:3: field `sysctl.vm.swappiness`: duplicate key (first given at 3:3)"
    );
    let e = parse("p.yaml", "description: no name\n").unwrap_err();
    assert!(e.to_string().contains("missing `profile:`"), "{e}");
    let e = parse("p.yaml", "profile: x\nresources: [a, b]\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("p.yaml:2:12: field `resources`: expected a mapping"),
        "{e}"
    );
    let e = parse(
        "p.yaml",
        "profile: x\ncpuidle_disable: { cpus: 1, states: [0, x] }\n",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("field `cpuidle_disable.states`: `x` is not a non-negative number"),
        "{e}"
    );
    let e = parse("p.yaml", "profile: [x\n").unwrap_err();
    assert!(
        matches!(
            e,
            ProfileError::Syntax(lever_profiles::SyntaxError { line: 2, .. })
        ),
        "{e}"
    );
}

#[test]
fn values_are_checked_against_the_target_with_their_position() {
    let b = common::qcs6490();
    let error = |text: &str| resolve_text(&b, text).unwrap_err().to_string();
    let res = |key_value: &str| error(&format!("profile: x\nresources:\n  {key_value}\n"));
    assert_eq!(
        res("cpu_min_freq.silver: 99"),
        "p.yaml:3:24: field `resources.cpu_min_freq.silver`: cpu_min_freq.silver: 99 is outside 300000..1958400 kHz"
    );
    // (needle, error) pairs: each error must contain its needle.
    let cases = [
        (
            "1000000 kHz is not one of the node's steps (nearest: 940800, 1152000)",
            res("cpu_min_freq.silver: 1000000"),
        ),
        (
            "`turbo` is not one of: powersave, schedutil, performance, min, max",
            res("cpu_governor: turbo"),
        ),
        (
            "p.yaml:3:3: field `resources.cpu_governr`: target qcs6490 has no resource `cpu_governr`",
            res("cpu_governr: performance"),
        ),
        ("open file descriptor", res("pm_qos_cpu_dma_latency: 0")),
        // A sysctl that is a target resource is checked as that resource.
        (
            "vm_swappiness (/proc/sys/vm/swappiness): 300 is outside 0..200",
            error("profile: x\nsysctl:\n  vm.swappiness: 300\n"),
        ),
        (
            "p.yaml:3:3: field `sysfs./sys/nothing/here`: node /sys/nothing/here does not exist on this kernel",
            error("profile: x\nsysfs:\n  /sys/nothing/here: 1\n"),
        ),
        (
            "below /sys/ or /proc/sys/",
            error("profile: x\nsysfs:\n  /etc/passwd: 1\n"),
        ),
        (
            "CPU 9 is not online here (online: 0-7)",
            error("profile: x\ncpuidle_disable: 9\n"),
        ),
    ];
    for (needle, e) in cases {
        assert!(e.contains(needle), "{needle:?} not in: {e}");
    }
}

#[test]
fn a_template_name_sets_every_instance_and_min_max_are_the_bounds() {
    let b = common::qcs6490();
    let r = resolve_text(
        &b,
        "profile: x\nresources:\n  cpu_governor: performance\n  cpu_max_freq.prime: min\n",
    )
    .unwrap();
    let govs: Vec<&str> = r
        .writes
        .iter()
        .filter(|w| w.node.ends_with("scaling_governor"))
        .map(|w| w.resource.as_deref().unwrap())
        .collect();
    assert_eq!(
        govs,
        [
            "cpu_governor.silver",
            "cpu_governor.gold",
            "cpu_governor.prime"
        ]
    );
    let prime = r
        .writes
        .iter()
        .find(|w| w.node.contains("policy7/scaling_max"))
        .unwrap();
    assert_eq!(prime.value, "806400", "policy7's cpuinfo_min_freq");
    assert_eq!(
        prime.from.to_string(),
        "p.yaml:4 resources.cpu_max_freq.prime"
    );
}

#[test]
fn optional_entries_missing_here_are_skipped_and_said() {
    let b = common::qcs6490();
    let r = resolve_text(
        &b,
        "profile: x\nresources:\n  gpu_boost: 1\nsysfs:\n  /sys/nothing: 1\noptional: [gpu_boost, /sys/nothing]\n",
    )
    .unwrap();
    assert!(r.writes.is_empty());
    let keys: Vec<&str> = r.skipped.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["gpu_boost", "/sys/nothing"]);
    assert!(r.skipped[0].why.contains("has no resource `gpu_boost`"));
}

#[test]
fn includes_override_and_cycles_are_named() {
    let b = common::qcs6490();
    let chain = load("memory-low-latency").unwrap();
    assert_eq!(chain.names(), ["memory-defaults", "memory-low-latency"]);
    let r = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap();
    let scale: Vec<&str> = r
        .writes
        .iter()
        .filter(|w| w.node.ends_with("watermark_scale_factor"))
        .map(|w| w.value.as_str())
        .collect();
    assert_eq!(scale, ["200"], "the including profile wins, once");
    assert_eq!(r.writes.len(), 4);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "profile: a\ninclude: b.yaml\n").unwrap();
    std::fs::write(dir.path().join("b.yaml"), "profile: b\ninclude: c.yaml\n").unwrap();
    std::fs::write(dir.path().join("c.yaml"), "profile: c\n\ninclude: a.yaml\n").unwrap();
    let e = load(dir.path().join("a.yaml").to_str().unwrap()).unwrap_err();
    assert!(
        matches!(
            e,
            ProfileError::IncludeCycle {
                line: 3,
                col: 10,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().ends_with("include cycle: a -> b -> c -> a"),
        "{e}"
    );
    std::fs::write(
        dir.path().join("d.yaml"),
        "profile: d\ninclude: performance\n",
    )
    .unwrap();
    let chain = load(dir.path().join("d.yaml").to_str().unwrap()).unwrap();
    assert_eq!(chain.names(), ["performance", "d"]);
    assert!(matches!(
        load("nonesuch"),
        Err(ProfileError::Load(
            lever_profiles::LoadError::Unknown { .. }
        ))
    ));
}

#[test]
fn rt_follows_the_seeds_for_the_rt_cpus() {
    let b = common::qcs6490();
    let chain = load("rt").unwrap();
    let e = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("needs the RT CPUs: give --rt-cpus LIST"),
        "{e}"
    );

    let r = resolve(&chain, &b.target, &b.fs, &rt13()).unwrap();
    let value = |node: &str| {
        r.writes
            .iter()
            .find(|w| w.node == node)
            .map(|w| w.value.as_str())
    };
    assert_eq!(value("/proc/sys/kernel/timer_migration"), Some("0"));
    assert_eq!(value("/proc/sys/kernel/sched_rt_runtime_us"), Some("-1"));
    // Housekeeping CPUs 0,4-7 → bits 0,4,5,6,7.
    assert_eq!(value("/sys/devices/virtual/workqueue/cpumask"), Some("f1"));
    assert_eq!(
        value("/sys/devices/virtual/workqueue/writeback/cpumask"),
        Some("f1")
    );
    assert_eq!(value("/proc/irq/27/smp_affinity_list"), Some("0,4-7"));
    assert!(r
        .writes
        .iter()
        .filter(|w| w.node.starts_with("/proc/irq"))
        .all(|w| !w.required));
    let idle: Vec<&str> = r
        .writes
        .iter()
        .filter(|w| w.node.ends_with("/disable"))
        .map(|w| w.node.as_str())
        .collect();
    assert_eq!(idle.len(), 9, "3 states on each of CPUs 1-3: {idle:?}");
    assert!(idle
        .iter()
        .all(|n| ["cpu1/", "cpu2/", "cpu3/"].iter().any(|c| n.contains(c))));
    assert_eq!(
        r.cmdline_line(),
        "isolcpus=1-3 nohz_full=1-3 rcu_nocbs=1-3 irqaffinity=0,4-7 rcupdate.rcu_expedited=1"
    );
    // tracefs is not in the simulated tree: skipped, and said.
    assert_eq!(r.skipped.len(), 1);
    assert_eq!(r.skipped[0].key, "/sys/kernel/tracing/tracing_on");
}

#[test]
fn every_builtin_resolves_on_the_simulated_boards() {
    for board in ["qcs6490", "qcs5430-fp1", "am437x"] {
        let dir = tempfile::tempdir().unwrap();
        let made = lever_sim::create(board, &dir.path().join("b")).unwrap();
        let fs = lever_kernel::KernelFs::new(&made.root);
        let target = lever_targets::detect(&fs).unwrap();
        for name in lever_profiles::builtin_names() {
            let chain = load(name).unwrap();
            assert!(
                !chain.top().seed.is_empty(),
                "{name} names its seed sections"
            );
            let opts = Options {
                rt_cpus: Some(vec![0]),
            };
            let r = resolve(&chain, &target, &fs, &opts);
            if name == "rt" && board == "am437x" {
                let e = r.unwrap_err().to_string();
                assert!(
                    e.contains("RT CPUs 0 leave no housekeeping CPU (online: 0)"),
                    "{e}"
                );
                continue;
            }
            let r = r.unwrap_or_else(|e| panic!("{name} on {board}: {e}"));
            assert!(!r.writes.is_empty(), "{name} on {board}");
        }
    }
}

#[test]
fn a_minimum_raised_above_the_current_maximum_is_written_after_it() {
    let b = common::qcs6490();
    let policy0 = "/sys/devices/system/cpu/cpufreq/policy0";
    let set = |node: &str, v: &str| b.fs.write_raw(&format!("{policy0}/{node}"), v).unwrap();
    // The order in which a profile with these two keys writes them.
    let order = |first: &str, second: &str| -> Vec<String> {
        let text = format!("profile: x\nresources:\n  {first}\n  {second}\n");
        let r = resolve_text(&b, &text).unwrap();
        r.writes.iter().filter_map(|w| w.resource.clone()).collect()
    };
    set("scaling_max_freq", "300000");
    assert_eq!(
        order("cpu_min_freq.silver: max", "cpu_max_freq.silver: max"),
        ["cpu_max_freq.silver", "cpu_min_freq.silver"]
    );
    // A lowered maximum below the current minimum: the minimum goes first.
    set("scaling_max_freq", "1958400");
    set("scaling_min_freq", "1958400");
    assert_eq!(
        order("cpu_max_freq.silver: min", "cpu_min_freq.silver: min"),
        ["cpu_min_freq.silver", "cpu_max_freq.silver"]
    );
    let e = resolve_text(
        &b,
        "profile: x\nresources:\n  cpu_min_freq.silver: max\n  cpu_max_freq.silver: min\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cpu_min_freq.silver = 1958400 is above cpu_max_freq.silver = 300000"),
        "{e}"
    );
}
