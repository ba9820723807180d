//! TuneD import of two profile directories written for these tests in
//! TuneD's format (tests/fixtures/tuned/): what maps, what is named as not
//! mapped (section, key, line), and that the result resolves.

mod common;

use lever_profiles::tuned::{convert, import, Unmapped};
use lever_profiles::{load, resolve, Options};
use std::path::Path;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tuned")
        .join(name)
}

fn names(u: &[Unmapped]) -> Vec<(usize, String, Option<String>)> {
    u.iter()
        .map(|u| (u.line, u.section.clone(), u.key.clone()))
        .collect()
}

#[test]
fn lab_latency_maps_cpu_vm_sysctl_sysfs_and_names_the_rest() {
    let i = import(&fixture("lab-latency"), None).unwrap();
    assert_eq!(i.name, "lab-latency");
    let missing = names(&i.unmapped);
    let want: Vec<(usize, String, Option<String>)> = vec![
        (13, "cpu".into(), Some("force_latency".into())),
        (26, "disk".into(), None),
        (29, "script".into(), None),
    ];
    assert_eq!(missing, want, "{:#?}", i.unmapped);
    assert!(i.unmapped[0]
        .why
        .contains("lever acquire pm_qos_cpu_dma_latency"));
    assert_eq!(i.mapped, 7);
    let y = &i.yaml;
    assert!(
        y.contains("description: \"Lab latency box: fixed governor, few stalls\"\n"),
        "{y}"
    );
    assert!(
        y.contains("resources:\n  cpu_governor: \"performance|schedutil\"\n"),
        "{y}"
    );
    assert!(y.contains("# note: [cpu] governor=performance|schedutil: each cluster gets the first of them it offers, as in TuneD"), "{y}");
    // A sysfs glob is kept: resolving writes every node it matches.
    assert!(
        y.contains("  \"/sys/class/net/*/queues/rx-0/rps_cpus\": \"0\"\n"),
        "{y}"
    );
    assert!(y.contains("  kernel.sched_rt_runtime_us: \"-1\"\n"), "{y}");
    assert!(
        y.contains("  /sys/kernel/mm/transparent_hugepage/enabled: madvise\n"),
        "{y}"
    );
    assert!(
        y.contains("  /sys/devices/system/cpu/intel_pstate/min_perf_pct: \"100\"\n"),
        "{y}"
    );
    assert!(y.contains("# not mapped: "), "{y}");
    // The YAML is a profile Lever reads back.
    let p = lever_profiles::parse("lab-latency.yaml", y).unwrap();
    assert_eq!(p.sysctl.len(), 2);
    // What TuneD skips where the kernel lacks it: the governor, every
    // sysfs node and every sysctl.
    let optional: Vec<&str> = p.optional.iter().map(|o| o.value.as_str()).collect();
    assert_eq!(
        optional,
        [
            "cpu_governor",
            "/sys/devices/system/cpu/intel_pstate/min_perf_pct",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "vm.swappiness",
            "kernel.sched_rt_runtime_us",
            "/sys/module/workqueue/parameters/power_efficient",
            "/sys/class/net/*/queues/rx-0/rps_cpus",
        ]
    );
}

#[test]
fn lab_rt_uses_variables_includes_and_the_boot_command_line() {
    let i = import(&fixture("lab-rt"), None).unwrap();
    let missing = names(&i.unmapped);
    assert_eq!(
        missing,
        vec![
            (14, "scheduler".into(), Some("ps_blacklist".into())),
            (26, "bootloader".into(), Some("cmdline_irq".into())),
        ],
        "{:#?}",
        i.unmapped
    );
    assert!(
        i.unmapped[1]
            .why
            .contains("variable `housekeeping` has no value Lever can compute"),
        "{}",
        i.unmapped[1]
    );
    let y = &i.yaml;
    assert!(
        y.contains("description: Lab RT box on CPUs 2-3\n")
            || y.contains("description: \"Lab RT box on CPUs 2-3\"\n"),
        "{y}"
    );
    assert!(y.contains("include: lab-latency.yaml\n"), "{y}");
    assert!(y.contains("rt_cpus: 2-3\n"), "{y}");
    assert!(
        y.contains("  kernel.timer_migration: \"0\"\n"),
        "a type=sysctl section: {y}"
    );
    assert!(
        y.contains("cmdline:\n  isolcpus: 2-3\n  nohz_full: 2-3\n  nosoftlockup: \"\"\n"),
        "{y}"
    );
    assert!(
        y.contains("# note: [audio] is disabled (enabled=false) in TuneD"),
        "{y}"
    );
    assert!(!y.contains("timeout"), "{y}");
}

#[test]
fn imported_profiles_include_each_other_and_resolve_on_a_simulated_board() {
    let dir = tempfile::tempdir().unwrap();
    import(
        &fixture("lab-latency"),
        Some(&dir.path().join("lab-latency.yaml")),
    )
    .unwrap();
    let i = import(
        &fixture("lab-rt/tuned.conf"),
        Some(&dir.path().join("lab-rt.yaml")),
    )
    .unwrap();
    assert!(i.written_to.is_some());
    let chain = load(dir.path().join("lab-rt.yaml").to_str().unwrap()).unwrap();
    assert_eq!(chain.names(), ["lab-latency", "lab-rt"]);

    let b = common::qcs6490();
    // A real kernel has this module parameter; the simulated board does not.
    b.fs.create_node("/sys/module/workqueue/parameters/power_efficient", "Y\n")
        .unwrap();
    let r = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap();
    assert_eq!(r.rt_cpus.as_deref(), Some("2-3"));
    assert_eq!(r.cmdline_line(), "isolcpus=2-3 nohz_full=2-3 nosoftlockup");
    let value = |n: &str| {
        r.writes
            .iter()
            .find(|w| w.node == n)
            .map(|w| w.value.clone())
    };
    assert_eq!(value("/proc/sys/vm/swappiness").as_deref(), Some("10"));
    assert_eq!(
        value("/proc/sys/kernel/timer_migration").as_deref(),
        Some("0")
    );
    assert_eq!(
        value("/proc/irq/9/smp_affinity_list").as_deref(),
        Some("0-1,4-7")
    );
    assert_eq!(
        value("/sys/devices/virtual/workqueue/cpumask").as_deref(),
        Some("f3")
    );
    let skipped: Vec<&str> = r.skipped.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        skipped,
        [
            "/sys/devices/system/cpu/intel_pstate/min_perf_pct",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/class/net/*/queues/rx-0/rps_cpus",
        ]
    );
}

#[test]
fn odd_lines_are_named_not_dropped() {
    let i = convert(
        "x",
        "tuned.conf",
        "orphan=1\n[main]\nthis is not a setting\ninclude=a, b\n[sysfs]\nrelative/path=1\n[cpu]\nlatency_low=1\nmax_perf_pct=${undefined}\n[bootloader]\ncmdline=-quiet\n[vm.x]\ntype=vm\nuname_regex=${f:exec:uname}\ntransparent_hugepages=never\n",
    );
    let why: Vec<String> = i.unmapped.iter().map(|u| u.to_string()).collect();
    assert_eq!(
        why,
        [
            "tuned.conf:1: [(none)]: a setting before any [section]",
            "tuned.conf:3: [main]: not a `key=value` line",
            "tuned.conf:4: [main] include: includes more than one profile; a Lever profile includes one",
            "tuned.conf:6: [sysfs] relative/path: no Lever equivalent for `relative/path` of TuneD's `sysfs` plugin",
            "tuned.conf:8: [cpu] latency_low: no Lever equivalent for `latency_low` of TuneD's `cpu` plugin",
            "tuned.conf:9: [cpu] max_perf_pct: variable `${undefined}` is not defined in [variables]",
            "tuned.conf:11: [bootloader] cmdline: removes `quiet` from the command line other profiles add; a Lever profile cannot remove an included argument",
            "tuned.conf:14: [vm.x] uname_regex: the section's condition: TuneD function `${f:exec:uname}` is not evaluated by Lever; write the value out",
        ]
    );
    assert_eq!(i.mapped, 0);
    assert!(import(Path::new("/nonexistent/dir"), None).is_err());
}
