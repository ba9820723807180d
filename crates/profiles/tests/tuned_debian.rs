//! Every profile of Debian's `tuned` package (/usr/lib/tuned/NAME/tuned.conf)
//! imported and resolved on a simulated QCS6490, with the writes TuneD
//! would make there, plugin by plugin: `cpu` (the first governor a cluster
//! offers), `sysctl` (quotes removed, `>N` only if greater, conditional
//! sections only where their regexes match, missing sysctls skipped),
//! `vm` (transparent hugepages), `sysfs` (missing nodes skipped), and
//! `bootloader` (the command line to add). Without the package the test
//! says why it skips; under CI=true (`.ci/run` provides it) it fails.

mod common;

use lever_profiles::tuned::import;
use lever_profiles::{load, resolve, Options, Resolved};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where Debian puts TuneD's profiles (and newer upstream layouts).
const DIRS: &[&str] = &["/usr/lib/tuned", "/usr/lib/tuned/profiles"];

/// The profile directories of the package, by name: where
/// `LEVER_TUNED_PROFILES` says (`.ci/run` extracts the package there
/// rather than installing it), else where Debian installs them.
fn debian_profiles() -> Option<BTreeMap<String, PathBuf>> {
    let given = std::env::var("LEVER_TUNED_PROFILES").ok();
    for dir in given.iter().map(String::as_str).chain(DIRS.iter().copied()) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let found: BTreeMap<String, PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("tuned.conf").is_file())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    None
}

fn value<'a>(r: &'a Resolved, node: &str) -> Option<&'a str> {
    r.writes
        .iter()
        .find(|w| w.node == node)
        .map(|w| w.value.as_str())
}

const GOVERNORS: [&str; 3] = [
    "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
    "/sys/devices/system/cpu/cpufreq/policy4/scaling_governor",
    "/sys/devices/system/cpu/cpufreq/policy7/scaling_governor",
];
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// A simulated QCS6490 with the nodes a server kernel has and the
/// simulator does not, at values that make `>` and the quotes visible.
fn board() -> common::Board {
    let b = common::qcs6490();
    for (node, v) in [
        ("/proc/sys/net/core/somaxconn", "4096\n"),
        ("/proc/sys/kernel/pid_max", "32768\n"),
        ("/proc/sys/kernel/numa_balancing", "1\n"),
        ("/proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n"),
        (THP, "always [madvise] never\n"),
    ] {
        b.fs.create_node(node, v).unwrap();
    }
    b
}

/// [`debian_profiles`], or `None` after saying why the test skips (and
/// failing under `CI=true`, where `.ci/run` provides them).
fn profiles_or_skip() -> Option<BTreeMap<String, PathBuf>> {
    let found = debian_profiles();
    if found.is_none() {
        let why = format!(
            "no TuneD profiles in $LEVER_TUNED_PROFILES or {DIRS:?} (Debian package `tuned`)"
        );
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{why}; .ci/run installs it"
        );
        eprintln!("skipped: {why}: apt-get install tuned");
    }
    found
}

#[test]
fn every_debian_tuned_profile_imports_and_resolves_on_a_simulated_qcs6490() {
    let Some(profiles) = profiles_or_skip() else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    for (name, dir) in &profiles {
        import(dir, Some(&out.path().join(format!("{name}.yaml"))))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let b = board();
    let mut resolved = BTreeMap::new();
    let mut failed = Vec::new();
    for name in profiles.keys() {
        let file = out.path().join(format!("{name}.yaml"));
        let r = load(file.to_str().unwrap())
            .and_then(|chain| resolve(&chain, &b.target, &b.fs, &Options::default()));
        match r {
            Ok(r) => {
                // No condition line, summary or unquoted value is a write.
                for w in &r.writes {
                    assert!(
                        !w.node.contains("regex") && !w.value.starts_with(['>', '<', '"']),
                        "{name}: {w:?}"
                    );
                }
                resolved.insert(name.clone(), r);
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "{} of {} TuneD profiles from {} resolve on a simulated qcs6490",
        resolved.len(),
        profiles.len(),
        profiles
            .values()
            .next()
            .unwrap()
            .parent()
            .unwrap()
            .display()
    );
    assert!(failed.is_empty(), "{failed:#?}");
    let r = |name: &str| {
        resolved
            .get(name)
            .unwrap_or_else(|| panic!("Debian's tuned has no profile {name}"))
    };

    // cpu: the first governor each cluster offers (qcs6490 offers
    // powersave, schedutil, performance), every cluster.
    for (name, governor) in [
        ("throughput-performance", "performance"),
        ("latency-performance", "performance"),
        ("balanced", "powersave"),  // conservative|powersave
        ("desktop", "powersave"),   // includes balanced
        ("powersave", "powersave"), // ondemand|powersave
    ] {
        for node in GOVERNORS {
            assert_eq!(value(r(name), node), Some(governor), "{name} {node}");
        }
    }

    // sysctl: values, includes overriding node by node, quotes removed.
    let tp = r("throughput-performance");
    assert_eq!(value(tp, "/proc/sys/vm/dirty_ratio"), Some("40"));
    assert_eq!(value(tp, "/proc/sys/vm/swappiness"), Some("10"));
    assert_eq!(
        value(r("virtual-guest"), "/proc/sys/vm/dirty_ratio"),
        Some("30")
    );
    assert_eq!(
        value(r("network-throughput"), "/proc/sys/net/ipv4/tcp_rmem"),
        Some("4096 87380 16777216")
    );
    // `>2048` against 4096: nothing written, and said why.
    assert_eq!(value(tp, "/proc/sys/net/core/somaxconn"), None);
    assert!(
        tp.skipped
            .iter()
            .any(|s| s.key == "net.core.somaxconn" && s.why.contains("holds 4096")),
        "{:#?}",
        tp.skipped
    );
    // `>4194304` against 32768: written.
    assert_eq!(
        value(r("openshift"), "/proc/sys/kernel/pid_max"),
        Some("4194304")
    );
    // A sysctl this kernel lacks is skipped with its reason, as TuneD logs
    // and goes on.
    assert!(r("hpc-compute")
        .skipped
        .iter()
        .any(|s| s.key == "vm.zone_reclaim_mode" && s.why.contains("does not exist")));
    // [sysctl.thunderx] and [vm.thunderx]: aarch64, but not a ThunderX
    // CPU part: neither applies.
    assert_eq!(value(tp, "/proc/sys/kernel/numa_balancing"), None);
    assert_eq!(value(tp, THP), None);
    assert!(tp
        .skipped
        .iter()
        .any(|s| s.key == "when[1]" && s.why.contains("cpuinfo_regex")));

    // vm: transparent hugepages.
    assert_eq!(value(r("network-latency"), THP), Some("never"));
    assert_eq!(value(r("hpc-compute"), THP), Some("always"));

    // sysfs: a node this kernel lacks is skipped, as TuneD's glob finds
    // nothing.
    assert!(r("openshift")
        .skipped
        .iter()
        .any(|s| s.key == "/sys/module/nvme_core/parameters/io_timeout"));

    // bootloader: `+` appends; [bootloader.thunderx] (uname aarch64 only)
    // applies on this aarch64 board.
    assert_eq!(
        r("aws").cmdline_line(),
        "net.ifnames=0 nvme_core.io_timeout=4294967295 iommu.strict=0"
    );
    assert_eq!(r("network-latency").cmdline_line(), "skew_tick=1");
}

#[test]
fn conditional_sections_apply_where_their_regexes_match() {
    let Some(profiles) = profiles_or_skip() else {
        return;
    };
    // The package's own directory (where `LEVER_TUNED_PROFILES` put it).
    let tp = &profiles["throughput-performance"];
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("tp.yaml");
    import(tp, Some(&file)).unwrap();
    let chain = load(file.to_str().unwrap()).unwrap();

    // A ThunderX: the same board with a CPU part the regex names.
    let b = board();
    let cpuinfo = b.fs.read("/proc/cpuinfo").unwrap();
    let thunderx = cpuinfo.replacen("CPU part", "CPU part\t: 0x0af\nCPU part", 1);
    std::fs::write(b.root().join("proc/cpuinfo"), thunderx).unwrap();
    let r = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap();
    assert_eq!(value(&r, "/proc/sys/kernel/numa_balancing"), Some("0"));
    assert_eq!(value(&r, THP), Some("never"));

    // The same CPU on an x86_64 kernel: uname_regex=aarch64 does not match.
    b.fs.create_node("/proc/sys/kernel/arch", "x86_64\n")
        .unwrap();
    let r = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap();
    assert_eq!(value(&r, "/proc/sys/kernel/numa_balancing"), None);
    assert!(r
        .skipped
        .iter()
        .any(|s| s.why.contains("uname_regex `aarch64`")));
}

#[test]
fn a_board_without_cpufreq_skips_the_governor_as_tuned_does() {
    let Some(profiles) = profiles_or_skip() else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("lp.yaml");
    let lp = &profiles["latency-performance"];
    import(lp, Some(&file)).unwrap();
    let imported = import(lp, None).unwrap();
    // governor, min_perf_pct and three sysctls; not the summary.
    assert_eq!(imported.mapped, 5, "{}", imported.yaml);
    let chain = load(file.to_str().unwrap()).unwrap();

    // A board whose kernel has no cpufreq: the generic target finds no
    // cpu_governor.
    let dir = tempfile::tempdir().unwrap();
    let made = lever_sim::create("qcs6490", &dir.path().join("b")).unwrap();
    std::fs::remove_dir_all(made.root.join("sys/devices/system/cpu/cpufreq")).unwrap();
    let fs = lever_kernel::KernelFs::new(&made.root);
    let target = lever_targets::load_builtin("generic")
        .unwrap()
        .bind(&fs)
        .unwrap();
    let r = resolve(&chain, &target, &fs, &Options::default()).unwrap();
    assert!(r.writes.iter().all(|w| !w.node.contains("cpufreq")));
    assert!(r.skipped.iter().any(|s| s.key == "cpu_governor"), "{r:#?}");
    assert_eq!(value(&r, "/proc/sys/vm/swappiness"), Some("10"));
}
