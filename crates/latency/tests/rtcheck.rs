//! `rt check` on a simulated QCS6490: set up as seed 000 §3.6 describes,
//! every check passes; as the simulator creates it, each fail says why.
use lever_kernel::KernelFs;
use lever_latency::rtcheck::{check, Verdict};
use lever_testkit::FakeTree;

fn board() -> (FakeTree, KernelFs) {
    let tree = FakeTree::new();
    lever_sim::create("qcs6490", tree.root()).unwrap();
    let fs = tree.fs().clone();
    (tree, fs)
}

#[test]
fn qcs6490_set_up_like_seed_000_passes_everything() {
    let (tree, fs) = board();
    // The RT kernel and its command line (seed 000 §3.6 KERNEL_CMDLINE_EXTRA).
    tree.node("/sys/kernel/realtime", "1\n");
    tree.node(
        "/proc/cmdline",
        "pcie_pme=nomsi net.ifnames=0 rcu_nocbs=1-3 isolcpus=1-3 irqaffinity=4-7 nohz_full=1-3\n",
    );
    // Every IRQ of the simulator's, and two more, on the housekeeping CPUs.
    let mut irqs: Vec<String> = fs.list_dir("/proc/irq").unwrap();
    irqs.retain(|n| n.parse::<u32>().is_ok());
    assert!(irqs.len() >= 4, "{irqs:?}");
    irqs.extend(["1".to_string(), "17".to_string()]);
    for irq in irqs {
        tree.node(&format!("/proc/irq/{irq}/smp_affinity_list"), "4-7\n");
    }
    // Presetting: workqueues on E0 (CPUs 5-7) and housekeeping, governors,
    // cpuidle off, seed 001's sysctls.
    let wq = "/sys/devices/virtual/workqueue";
    let mut queues: Vec<String> = fs.list_dir(wq).unwrap();
    queues.retain(|q| fs.exists(&format!("{wq}/{q}/cpumask")));
    assert!(queues.contains(&"writeback".to_string()), "{queues:?}");
    queues.extend(["kgsl-workqueue".to_string(), "scsi_tmf_0".to_string()]);
    for q in queues {
        tree.node(&format!("{wq}/{q}/cpumask"), "E0\n");
    }
    tree.node("/sys/devices/virtual/workqueue/cpumask", "f1\n");
    for p in fs.list_dir("/sys/devices/system/cpu/cpufreq").unwrap() {
        tree.node(
            &format!("/sys/devices/system/cpu/cpufreq/{p}/scaling_governor"),
            "performance\n",
        );
    }
    for cpu in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
        for s in fs.list_dir(&dir).unwrap_or_default() {
            tree.node(&format!("{dir}/{s}/disable"), "1\n");
        }
    }
    tree.node("/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
    tree.node("/proc/sys/kernel/timer_migration", "0\n");
    let r = check(&fs, None).unwrap();
    assert_eq!(r.rt_cpus, [1, 2, 3]);
    for c in &r.checks {
        assert_eq!(c.verdict, Verdict::Pass, "{c:?}");
    }
    assert_eq!(r.checks.len(), 12);
}

#[test]
fn default_qcs6490_explains_each_fail() {
    let (_tree, fs) = board();
    let r = check(&fs, Some(&[1, 2, 3])).unwrap();
    let get = |n: &str| r.checks.iter().find(|c| c.name == n).unwrap();
    // The simulator's /proc/cmdline sets none of the RT parameters: each
    // fails with the parameter to add.
    for key in ["isolcpus", "nohz_full", "rcu_nocbs"] {
        let c = get(key);
        assert_eq!((c.verdict, c.current.as_str()), (Verdict::Fail, "not set"));
        assert_eq!(
            c.fix,
            format!("add {key}=1-3 to the kernel command line (KERNEL_CMDLINE_EXTRA)")
        );
    }
    assert_eq!(get("preempt_rt").verdict, Verdict::Fail);
    assert!(get("preempt_rt").fix.contains("CONFIG_PREEMPT_RT=y"));
    let rt = get("sched_rt_runtime_us");
    assert_eq!(rt.verdict, Verdict::Warn);
    assert_eq!(rt.current, "950000");
    assert_eq!(rt.fix, "echo -1 > /proc/sys/kernel/sched_rt_runtime_us");
    assert_eq!(get("governor").verdict, Verdict::Warn);
    assert!(get("governor").current.contains("cpu1="));
    assert_eq!(get("cpuidle").verdict, Verdict::Warn);
    // The simulator's IRQs and unbound workqueues start on every CPU.
    let irq = get("irq_affinity");
    assert_eq!(irq.verdict, Verdict::Warn);
    assert!(
        irq.current.starts_with("6 of 6 IRQs may run on CPU 1-3"),
        "{}",
        irq.current
    );
    assert_eq!(get("workqueue_cpumask").verdict, Verdict::Warn);
    assert!(r
        .checks
        .iter()
        .all(|c| c.verdict == Verdict::Pass || !c.fix.is_empty()));
}

/// Every shell fix runs in bash as printed (no `cpu{1}` left literal, no
/// redirect to a glob of several files) and does what it says: run
/// against the simulated tree (its paths moved under the tree's root),
/// the checks it fixes pass afterwards.
#[test]
fn shell_fixes_run_as_printed() {
    for rt in [&[3][..], &[1, 2, 3][..]] {
        let (tree, fs) = board();
        let root = tree.root().to_str().unwrap().to_string();
        let r = check(&fs, Some(rt)).unwrap();
        for name in ["governor", "cpuidle", "timer_migration"] {
            let c = r.checks.iter().find(|c| c.name == name).unwrap();
            assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
            let line = c.fix.split(" (or ").next().unwrap();
            assert!(!line.contains('{'), "brace left for bash: {line}");
            let line = line.replace(" /sys/", &format!(" {root}/sys/"));
            let line = line.replace(" /proc/", &format!(" {root}/proc/"));
            let out = std::process::Command::new("bash")
                .args(["-euc", &line])
                .output()
                .unwrap();
            assert!(out.status.success(), "{line}: {out:?}");
        }
        let r = check(&fs, Some(rt)).unwrap();
        for name in ["governor", "cpuidle", "timer_migration"] {
            let c = r.checks.iter().find(|c| c.name == name).unwrap();
            assert_eq!(c.verdict, Verdict::Pass, "{rt:?}: {c:?}");
        }
    }
}

/// `--rt-cpus` naming a CPU the machine does not have is refused, naming
/// the flag and the online CPUs.
#[test]
fn rt_cpus_must_be_online() {
    let (_tree, fs) = board();
    let err = check(&fs, Some(&[1, 99])).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("--rt-cpus") && text.contains("99") && text.contains("0-7"),
        "{text}"
    );
}
