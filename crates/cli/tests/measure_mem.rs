//! End-to-end tests of `lever mem …` and `lever io` on a simulated QCS6490
//! (golden tables and JSON) and on this machine.
//!
//! Goldens live in `crates/measure/tests/golden/`; after an intended change
//! run `LEVER_UPDATE_GOLDEN=1 cargo test -p lever --test measure_mem` and
//! review the diff.

mod common;

use common::{lever, ok};
use lever_testkit::FakeTree;
use std::path::{Path, PathBuf};

/// A simulated board in a fake tree, and its root as a `--root` argument.
fn board(name: &str) -> (FakeTree, String) {
    let tree = FakeTree::new();
    lever_sim::create(name, tree.root()).unwrap();
    let root = tree.root().to_str().unwrap().to_string();
    (tree, root)
}

fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../measure/tests/golden")
        .join(name);
    lever_testkit::golden(&path, actual);
}

#[test]
fn mem_map_golden_on_qcs6490() {
    let (_d, root) = board("qcs6490");
    let table = ok(&["--root", &root, "mem", "map"]);
    golden("qcs6490_mem_map.txt", &table);
    let json = ok(&["--root", &root, "mem", "map", "--json"]).replace(&root, "<ROOT>");
    golden("qcs6490_mem_map.json", &json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["after_boot"]["total_ram"]["value"]["source"],
        "device_tree"
    );
    assert!(v["during"].is_null());
}

#[test]
fn mem_map_total_ram_fallback_and_saved_dmesg() {
    let (dir, root) = board("qcs6490");
    // Without the device tree, the saved dmesg line gives total RAM.
    std::fs::remove_dir_all(dir.root().join("sys/firmware/devicetree")).unwrap();
    let log = dir.root().join("dmesg.txt");
    std::fs::write(
        &log,
        "[    0.000000] Memory: 3061872K/4134912K available (28800K kernel code, 2090K rwdata, 10688K rodata, 3072K init, 969K bss, 679824K reserved, 393216K cma-reserved)\n",
    )
    .unwrap();
    let out = ok(&[
        "--root",
        &root,
        "mem",
        "map",
        "--dmesg",
        log.to_str().unwrap(),
    ]);
    assert!(
        out.contains("4134912 kB from dmesg `Memory:` line"),
        "{out}"
    );
    assert!(
        out.contains("vmlinux = code + rwdata + rodata + init + bss  45619"),
        "{out}"
    );
    // Neither: --total-ram, and it says so.
    let out = ok(&["--root", &root, "mem", "map", "--total-ram", "6G"]);
    assert!(out.contains("6291456 kB from --total-ram"), "{out}");
    let out = ok(&["--root", &root, "mem", "map"]);
    assert!(
        out.contains("total RAM: not available here because"),
        "{out}"
    );
    assert!(out.contains("Total RAM                 n/a"), "{out}");
    let bad = lever(&["--root", &root, "mem", "map", "--total-ram", "6144"]);
    assert!(!bad.status.success());
    // With no device tree, non-Linux is total RAM − Linux RAM, and says why.
    let json = ok(&["--root", &root, "mem", "map", "--total-ram", "6G", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let m = &v["after_boot"];
    assert_eq!(m["non_linux_source"], "iomem");
    assert_eq!(m["non_linux_kb"], m["non_linux_iomem_kb"]);
    assert!(m["non_linux_difference_kb"].is_null());
    let out = ok(&["--root", &root, "mem", "map", "--total-ram", "6G"]);
    assert!(
        out.contains(
            "non-Linux        451696 kB (total RAM − Linux RAM); no device tree carveouts: \
             no device tree (/sys/firmware/devicetree/base)"
        ),
        "{out}"
    );
}

/// Big-endian 32-bit cells, as a live tree's property files hold them.
fn be_cells(cells: &[u32]) -> Vec<u8> {
    cells.iter().flat_map(|c| c.to_be_bytes()).collect()
}

#[test]
fn mem_map_takes_non_linux_from_the_device_tree_carveouts() {
    // The simulated QCS6490 (its /proc/iomem: 451696 kB of holes in 6 GiB),
    // with a live tree of our own: /memory with 2/2 cells, and
    // /reserved-memory with its own 1/1 cells.
    let (dir, root) = board("qcs6490");
    let base = dir.root().join("sys/firmware/devicetree/base");
    std::fs::remove_dir_all(&base).unwrap();
    let file = |path: &str, value: &[u8]| {
        let p = base.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, value).unwrap();
    };
    file("#address-cells", &be_cells(&[2]));
    file("#size-cells", &be_cells(&[2]));
    file("memory@80000000/device_type", b"memory\0");
    file(
        "memory@80000000/reg",
        &be_cells(&[0, 0x8000_0000, 0, 0x8000_0000, 1, 0, 1, 0]),
    );
    file("reserved-memory/#address-cells", &be_cells(&[1]));
    file("reserved-memory/#size-cells", &be_cells(&[1]));
    file("reserved-memory/ranges", b"");
    // Counted: two no-map regions, 246 MiB + 40 MiB = 292864 kB.
    file(
        "reserved-memory/mpss@8b800000/reg",
        &be_cells(&[0x8b80_0000, 0x0f60_0000]),
    );
    file("reserved-memory/mpss@8b800000/no-map", b"");
    file(
        "reserved-memory/adsp@86100000/reg",
        &be_cells(&[0x8610_0000, 0x0280_0000]),
    );
    file("reserved-memory/adsp@86100000/no-map", b"");
    // Not counted: a reusable (CMA) pool and a disabled no-map region.
    file("reserved-memory/linux,cma/compatible", b"shared-dma-pool\0");
    file("reserved-memory/linux,cma/reusable", b"");
    file("reserved-memory/linux,cma/size", &be_cells(&[0x0200_0000]));
    file(
        "reserved-memory/wpss@84800000/reg",
        &be_cells(&[0x8480_0000, 0x0190_0000]),
    );
    file("reserved-memory/wpss@84800000/no-map", b"");
    file("reserved-memory/wpss@84800000/status", b"disabled\0");

    let out = ok(&["--root", &root, "mem", "map"]);
    let row = out.lines().find(|l| l.starts_with("Non-Linux")).unwrap();
    assert_eq!(row.split_whitespace().last(), Some("286.0"), "{out}");
    assert!(
        out.contains(
            "non-Linux        292864 kB = Σ 2 no-map /reserved-memory region(s) of the device \
             tree (/sys/firmware/devicetree/base); from /proc/iomem: 451696 kB (total RAM − \
             Linux RAM)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("the two differ by -158832 kB (device tree − iomem)"),
        "{out}"
    );
    let json = ok(&["--root", &root, "mem", "map", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let m = &v["after_boot"];
    assert_eq!(m["non_linux_source"], "device_tree");
    assert_eq!(m["non_linux_kb"]["value"], 292864);
    assert_eq!(m["non_linux_iomem_kb"]["value"], 451696);
    assert_eq!(m["non_linux_difference_kb"], -158832);
    let c = &v["static"]["dt_carveouts"]["value"];
    assert_eq!(c["no_map_kb"], 292864);
    assert_eq!(c["no_map_regions"], 2);
    assert_eq!(c["reusable_kb"], 32768);

    // A tree without /reserved-memory: back to /proc/iomem, saying why.
    std::fs::remove_dir_all(base.join("reserved-memory")).unwrap();
    let out = ok(&["--root", &root, "mem", "map"]);
    let row = out.lines().find(|l| l.starts_with("Non-Linux")).unwrap();
    assert_eq!(row.split_whitespace().last(), Some("441.1"), "{out}");
    assert!(out.contains("has no /reserved-memory node"), "{out}");
}

#[test]
fn mem_map_on_the_simulated_qcs6490_uses_its_device_tree() {
    // The simulator's live tree declares the same no-map carveouts that it
    // cuts out of System RAM: both figures agree.
    let (_d, root) = board("qcs6490");
    let out = ok(&["--root", &root, "mem", "map"]);
    assert!(
        out.contains("451696 kB = Σ 16 no-map /reserved-memory region(s)")
            && out.contains("451696 kB (total RAM − Linux RAM), the same\n"),
        "{out}"
    );
}

/// A fixture of `lever-measure` (real files of this VM; see its
/// fixtures/README.md).
fn measure_fixture(name: &str) -> String {
    lever_testkit::fixture(&format!("{}/../measure", env!("CARGO_MANIFEST_DIR")), name)
}

#[test]
fn mem_map_total_ram_flag_wins_over_device_tree_and_dmesg() {
    // The simulated board has a device tree: --total-ram still wins.
    let (_d, root) = board("qcs6490");
    let out = ok(&["--root", &root, "mem", "map", "--total-ram", "24G"]);
    assert!(
        out.contains("25165824 kB from --total-ram (overrides: device tree says"),
        "{out}"
    );
    assert!(out.contains("Total RAM                 24576.0"), "{out}");
    let json = ok(&[
        "--root",
        &root,
        "--json",
        "mem",
        "map",
        "--total-ram",
        "24g",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["after_boot"]["total_ram"]["value"]["source"], "user");
    assert_eq!(v["after_boot"]["total_ram"]["value"]["kb"], 25165824);

    // This VM's real files, with a dmesg total: the flag wins there too.
    let tree = FakeTree::with(&[
        ("/proc/meminfo", &measure_fixture("vm_meminfo")),
        ("/proc/vmstat", &measure_fixture("vm_vmstat")),
        ("/proc/iomem", &measure_fixture("vm_iomem")),
    ]);
    let log = tree.root().join("dmesg.txt");
    std::fs::write(&log, measure_fixture("vm_dmesg_memory_line")).unwrap();
    let root = tree.root().to_str().unwrap();
    let args = [
        "--root",
        root,
        "mem",
        "map",
        "--dmesg",
        log.to_str().unwrap(),
    ];
    let kernel = ok(&args);
    assert!(kernel.contains("25165432 kB from dmesg"), "{kernel}");
    let user = ok(&[&args[..], &["--total-ram", "24G"]].concat());
    assert!(
        user.contains(
            "25165824 kB from --total-ram (overrides: dmesg `Memory:` line says 25165432 kB)"
        ),
        "{user}"
    );
    // With the real size, non-Linux is no longer negative.
    assert!(!user.contains("read non-Linux as 0"), "{user}");
    assert!(kernel.contains("read non-Linux as 0"), "{kernel}");
}

#[test]
fn mem_map_explains_a_negative_kernel_static_from_an_excerpted_iomem() {
    // This VM's /proc/iomem cut before its last System RAM range (above
    // 4 GiB), as one pastes part of it: Σ System RAM < MemTotal.
    let iomem = measure_fixture("vm_iomem");
    let cut = iomem.find("100000000-63fffffff : System RAM").unwrap();
    let tree = FakeTree::with(&[
        ("/proc/meminfo", &measure_fixture("vm_meminfo")),
        ("/proc/vmstat", &measure_fixture("vm_vmstat")),
        ("/proc/iomem", &iomem[..cut]),
    ]);
    let root = tree.root().to_str().unwrap();
    let out = ok(&["--root", root, "mem", "map", "--total-ram", "24G"]);
    assert!(
        out.contains("kernel static    -21538") && out.contains("lists only part of RAM"),
        "{out}"
    );
}

#[test]
fn mem_map_during_a_command() {
    let (_d, root) = board("qcs6490");
    let out = ok(&[
        "--root",
        &root,
        "mem",
        "map",
        "--interval",
        "0.05",
        "--",
        "sleep",
        "0.2",
    ]);
    assert!(out.contains("After boot  During CMD"), "{out}");
    assert!(out.contains("During CMD: `sleep 0.2`"), "{out}");
    let json = ok(&["--root", &root, "--json", "mem", "map", "--", "true"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["during"]["exit_code"], 0);
    assert!(v["during"]["samples"].as_u64().unwrap() >= 1);
    // A failing command is reported after the table, with exit status 1.
    let out = lever(&["--root", &root, "mem", "map", "--", "false"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("During CMD"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`false` exited with status 1"));
}

#[test]
fn mem_procs_on_sim_says_why() {
    let (_d, root) = board("qcs6490");
    let out = ok(&["--root", &root, "mem", "procs"]);
    golden("qcs6490_mem_procs.txt", &out);
    let json = ok(&["--root", &root, "mem", "procs", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["unavailable"].as_str().unwrap().contains("/proc/<pid>"));
}

#[test]
fn mem_procs_on_this_machine() {
    if !Path::new("/proc/self/smaps_rollup").exists() {
        eprintln!("skipped: this kernel has no /proc/self/smaps_rollup");
        return;
    }
    let json = ok(&["mem", "procs", "--json", "--sort", "rss"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let procs = v["procs"].as_array().unwrap();
    // At least this very `lever` process is there, with real figures.
    let me = procs
        .iter()
        .find(|p| {
            p["cmdline"]
                .as_str()
                .unwrap_or("")
                .contains("mem procs --json")
        })
        .expect("lever itself in the list");
    assert!(me["pss_kb"].as_u64().unwrap() > 0);
    assert!(me["rss_kb"].as_u64().unwrap() >= me["pss_kb"].as_u64().unwrap());
    let rss: Vec<u64> = procs
        .iter()
        .map(|p| p["rss_kb"].as_u64().unwrap())
        .collect();
    assert!(rss.windows(2).all(|w| w[0] >= w[1]), "sorted by RSS");
    let total: u64 = rss.iter().sum();
    assert_eq!(v["total"]["rss_kb"].as_u64().unwrap(), total);
    let anon = ok(&["mem", "procs", "-C", "--limit", "3"]);
    assert!(anon.contains("anonymous + shmem"), "{anon}");
    let file = ok(&["mem", "procs", "-c"]);
    assert!(file.contains("file-backed"), "{file}");
    assert!(!lever(&["mem", "procs", "-c", "-C"]).status.success());
}

#[test]
fn mem_procs_as_root_never_says_run_as_root() {
    // On this VM root (with CAP_SYS_PTRACE) is refused PID 1's rollup by the
    // sandbox: the report must say that, not "not readable without root".
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root (this checks what root is told)");
        return;
    }
    if std::fs::read("/proc/1/smaps_rollup").is_ok() {
        eprintln!("skipped: this machine lets root read /proc/1/smaps_rollup");
        return;
    }
    let out = ok(&["mem", "procs", "--limit", "1"]);
    assert!(!out.contains("without root"), "{out}");
    assert!(!out.contains("run as root"), "{out}");
    assert!(
        out.contains("although running as root"),
        "PID 1 refused to root must be explained: {out}"
    );
    let json = ok(&["mem", "procs", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["denied"]["root_refused"].as_u64().unwrap() >= 1, "{json}");
}

#[test]
fn mem_thrash_on_sim_writes_series() {
    let (d, root) = board("qcs6490");
    let out_dir = d.root().join("out");
    let out = ok(&[
        "--root",
        &root,
        "mem",
        "thrash",
        "--interval",
        "0.05",
        "--duration",
        "0.15",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    // The simulated counters do not move: calm, and every rate is 0.
    assert!(out.contains("verdict: no memory pressure"), "{out}");
    let csv = std::fs::read_to_string(out_dir.join("thrash.csv")).unwrap();
    assert!(csv.starts_with("t_s,elapsed_s,workingset_refault_anon_per_s"));
    assert!(csv.lines().count() >= 3, "{csv}");
    let svg = std::fs::read_to_string(out_dir.join("thrash.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("pgscan/s"));
    let series: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("thrash.json")).unwrap())
            .unwrap();
    assert_eq!(series.as_array().unwrap().len() + 1, csv.lines().count());

    let json = ok(&[
        "--root",
        &root,
        "--json",
        "mem",
        "thrash",
        "--interval",
        "0.05",
        "--duration",
        "0.1",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["verdict"]["level"], "calm");
    assert_eq!(v["psi_available"], true);
    assert!(
        !lever(&["--root", &root, "mem", "thrash", "--interval", "0"])
            .status
            .success()
    );
}

#[test]
fn mem_thrash_am437x_without_psi() {
    let (_d, root) = board("am437x");
    let out = ok(&[
        "--root",
        &root,
        "mem",
        "thrash",
        "--interval",
        "0.05",
        "--",
        "true",
    ]);
    assert!(out.contains("PSI: not available here because"), "{out}");
}

#[test]
fn mem_thrash_on_this_machine_during_a_command() {
    if !Path::new("/proc/vmstat").exists() {
        eprintln!("skipped: no /proc/vmstat on this machine");
        return;
    }
    let json = ok(&[
        "--json",
        "mem",
        "thrash",
        "--interval",
        "0.1",
        "--",
        "sleep",
        "0.25",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["exit_code"], 0);
    assert!(v["intervals"].as_array().unwrap().len() >= 2);
    assert!(["calm", "brief_burst", "pressure", "thrashing"]
        .contains(&v["verdict"]["level"].as_str().unwrap()));
}

#[test]
fn io_on_sim_and_here() {
    let (_d, root) = board("qcs6490");
    let out = ok(&["--root", &root, "io", "--", "true"]);
    assert!(
        out.contains("no block device did I/O during the command (5 devices"),
        "{out}"
    );
    assert!(out.contains("pgpgin +0 kB"), "{out}");
    let all = ok(&["--root", &root, "io", "--all", "--", "true"]);
    assert!(all.contains("mmcblk0") && all.contains("zram0"), "{all}");
    let json = ok(&["--root", &root, "--json", "io", "--all", "--", "true"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["devices"].as_array().unwrap().len(), 5);
    assert_eq!(v["pgpgout_kb"], 0);
    assert!(
        !lever(&["--root", &root, "io"]).status.success(),
        "CMD is required"
    );
    let fail = lever(&["--root", &root, "io", "--", "false"]);
    assert!(!fail.status.success());

    // This machine: reading a file we just wrote with O_DIRECT is not needed
    // to check the arithmetic; a real run must simply produce a report.
    let json = ok(&["--json", "io", "--", "true"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["elapsed_s"].as_f64().unwrap() > 0.0);
    assert!(v["pgpgin_kb"].is_u64());
}

#[test]
fn mem_thrash_reads_a_cgroup() {
    // A memory-limited cgroup reclaiming its page cache: the command swaps
    // in the second memory.stat mid-run (see the fixtures' README).
    let dir = "sys/fs/cgroup/app.slice";
    let tree = FakeTree::with(&[
        (
            &format!("/{dir}/memory.stat") as &str,
            &measure_fixture("cgroup_memory_stat_before"),
        ),
        (
            &format!("/{dir}/memory.pressure"),
            &measure_fixture("vm_pressure_memory"),
        ),
    ]);
    let after = tree.root().join("after");
    std::fs::write(&after, measure_fixture("cgroup_memory_stat_after")).unwrap();
    let stat = tree.root().join(dir).join("memory.stat");
    let script = format!(
        "sleep 0.25; cp {} {}; sleep 0.25",
        after.display(),
        stat.display()
    );
    let root = tree.root().to_str().unwrap();
    let json = ok(&[
        "--root",
        root,
        "--json",
        "mem",
        "thrash",
        "--cgroup",
        "app.slice",
        "--interval",
        "0.1",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["cgroup"], "/sys/fs/cgroup/app.slice");
    let effs: Vec<f64> = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["reclaim_efficiency"].as_f64())
        .collect();
    // pgsteal +500 / pgscan +2000 in the interval that saw the change.
    assert_eq!(effs, [0.25], "{json}");
    let bad = lever(&[
        "--root",
        root,
        "mem",
        "thrash",
        "--cgroup",
        "nope",
        "--duration",
        "0.1",
    ]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("/sys/fs/cgroup/nope/memory.stat"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn io_gives_a_verdict_with_its_reason() {
    // The simulated board has static PSI: nothing stalled during the run.
    let (_d, root) = board("qcs6490");
    let out = ok(&["--root", &root, "io", "--", "true"]);
    assert!(out.contains("\nverdict: "), "{out}");

    // This machine: a verdict, and what the blocked time rests on.
    let out = ok(&["io", "--", "sh", "-c", "sleep 0.1"]);
    assert!(out.contains("\nverdict: "), "{out}");
    let delayacct = std::fs::read_to_string("/proc/sys/kernel/task_delayacct").ok();
    if delayacct.as_deref().map(str::trim) == Some("0") {
        // This VM: accounting off, so field 42 is 0 and must not be taken
        // as "never blocked".
        assert!(out.contains("delay accounting is off"), "{out}");
        assert!(out.contains("kernel.task_delayacct=1"), "{out}");
    }
    if Path::new("/proc/pressure/io").exists() {
        assert!(out.contains("PSI io some"), "{out}");
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["--json", "io", "--", "true"])).unwrap();
        assert!(v["verdict"]["blocked_pct"].is_f64(), "{v}");
        assert!(v["wait"]["psi_some_s"].is_f64(), "{v}");
    }
}
