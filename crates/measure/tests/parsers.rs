//! Parsers and models on real kernel files (this VM, kernel
//! 6.18.44-fc-v657; see fixtures/README.md) and on malformed input.

mod common;
use common::{fixture, tree};
use lever_measure::devicetree::{parse_reg, DtMemory};
use lever_measure::diskstats::Diskstats;
use lever_measure::dmesg::DmesgMemory;
use lever_measure::iomem::Iomem;
use lever_measure::meminfo::Meminfo;
use lever_measure::memmap::{MemSample, MemoryMap, PageSizeSource, StaticMemory, TotalRamSource};
use lever_measure::pressure::Pressure;
use lever_measure::smaps::{
    parse_rollup, parse_status, Denied, DeniedAs, DeniedReason, ProcRaw, ProcScan, Procrank,
    Reader, SortKey, View,
};
use lever_measure::thrash::{Level, ThrashInterval, ThrashSample, Verdict};
use lever_measure::vmstat::Vmstat;
use lever_measure::{Avail, MeasureError};

#[test]
fn vm_meminfo_and_vmstat() {
    let m = Meminfo::parse("/proc/meminfo", &fixture("vm_meminfo")).unwrap();
    assert_eq!(m.get("MemTotal"), Some(24684092));
    assert_eq!(m.get("HugePages_Total"), Some(0));
    let v = Vmstat::parse("/proc/vmstat", &fixture("vm_vmstat")).unwrap();
    assert_eq!(v.get("nr_shmem"), Some(2214));
    assert_eq!(v.get("nr_kernel_misc_reclaimable"), Some(0));
    assert!(v.counters.len() > 150);
}

#[test]
fn vm_iomem_real_and_unprivileged() {
    let io = Iomem::parse("/proc/iomem", &fixture("vm_iomem")).unwrap();
    let s = io.system_ram().unwrap();
    // 00001000-0009fbff, 00100000-bfffffff, 100000000-63fffffff
    assert_eq!(s.ranges, 3);
    assert_eq!(s.bytes, 0x9ec00 + 0xbff0_0000 + 0x5_4000_0000);
    assert_eq!(s.overlap_bytes, 0);
    assert!(io
        .entries
        .iter()
        .any(|e| e.depth == 1 && e.name == "Kernel code"));

    let hidden = Iomem::parse("/proc/iomem", &fixture("vm_iomem_unprivileged")).unwrap();
    assert!(hidden.addresses_hidden());
    assert_eq!(hidden.system_ram(), None);
    assert_eq!(hidden.entries.len(), io.entries.len());
}

#[test]
fn hidden_iomem_is_reported_not_zero() {
    let (_d, fs) = tree(&[
        ("/proc/meminfo", fixture("vm_meminfo")),
        ("/proc/vmstat", fixture("vm_vmstat")),
        ("/proc/iomem", fixture("vm_iomem_unprivileged")),
    ]);
    let fixed = StaticMemory::read(&fs, Some(fixture("vm_dmesg_memory_line")), None).unwrap();
    let map = MemoryMap::new(&fixed, &MemSample::read(&fs).unwrap(), None).unwrap();
    for a in [&map.kernel_static_kb, &map.non_linux_kb] {
        match a {
            Avail::Unavailable(r) => assert!(r.contains("zero addresses"), "{r}"),
            other => panic!("expected unavailable, got {other:?}"),
        }
    }
    // Free memory still works; the VM's page size is derived (Shmem/nr_shmem).
    assert_eq!(map.page_size.kb, 4);
    assert_eq!(map.page_size.source, PageSizeSource::Derived);
    assert_eq!(map.free.free_kb, 22519928 + (1768784 - 8856) + 5140);
}

#[test]
fn vm_memory_map_with_dmesg_total() {
    let (_d, fs) = tree(&[
        ("/proc/meminfo", fixture("vm_meminfo")),
        ("/proc/vmstat", fixture("vm_vmstat")),
        ("/proc/iomem", fixture("vm_iomem")),
    ]);
    let fixed = StaticMemory::read(&fs, Some(fixture("vm_dmesg_memory_line")), None).unwrap();
    let t = fixed.total_ram.value().unwrap();
    assert_eq!((t.kb, t.source), (25165432, TotalRamSource::Dmesg));
    let map = MemoryMap::new(&fixed, &MemSample::read(&fs).unwrap(), None).unwrap();
    assert_eq!(map.linux_ram_kb, Avail::Value(25165435));
    assert_eq!(map.non_linux_kb, Avail::Value(25165432 - 25165435));
    assert_eq!(map.kernel_static_kb, Avail::Value(25165435 - 24684092));
    let vml = map.vmlinux.value().unwrap();
    assert_eq!(vml.image_kb, Some(18470 + 2544 + 10280 + 3728 + 1168));
    // No /proc/modules, zram, dma-buf or KGSL in this tree: reasons, not 0.
    let names: Vec<_> = map
        .kernel_dynamic
        .iter()
        .filter(|i| matches!(i.kb, Avail::Unavailable(_)))
        .map(|i| i.name)
        .collect();
    // This VM's kernel has CONFIG_CMA off: no CmaTotal in its meminfo.
    assert_eq!(
        names,
        ["Modules", "CMA used", "ZRAM used", "dma-buf (ION)", "KGSL"]
    );
}

#[test]
fn total_ram_fallbacks() {
    let (_d, fs) = tree(&[("/proc/iomem", fixture("vm_iomem"))]);
    let none = StaticMemory::read(&fs, Some(String::new()), None).unwrap();
    assert!(matches!(none.total_ram, Avail::Unavailable(ref r) if r.contains("--total-ram")));
    let user = StaticMemory::read(&fs, Some(String::new()), Some(1234)).unwrap();
    let t = user.total_ram.value().unwrap();
    assert_eq!((t.kb, t.source), (1234, TotalRamSource::User));
    // No /dev/kmsg in the tree: the reason names it and the way out.
    let nolog = StaticMemory::read(&fs, None, None).unwrap();
    match nolog.dmesg {
        Avail::Unavailable(r) => assert!(r.contains("/dev/kmsg") && r.contains("--dmesg"), "{r}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn total_ram_from_the_user_wins_over_dmesg() {
    // This VM's dmesg total (25165432 kB) leaves out firmware-reserved
    // pages; the user's 24 GiB is the board's size and is kept.
    let (_d, fs) = tree(&[
        ("/proc/meminfo", fixture("vm_meminfo")),
        ("/proc/vmstat", fixture("vm_vmstat")),
        ("/proc/iomem", fixture("vm_iomem")),
    ]);
    let log = Some(fixture("vm_dmesg_memory_line"));
    let fixed = StaticMemory::read(&fs, log, Some(24 << 20)).unwrap();
    let t = fixed.total_ram.value().unwrap();
    assert_eq!((t.kb, t.source), (24 << 20, TotalRamSource::User));
    // The dmesg line is still read (vmlinux sections come from it).
    assert_eq!(fixed.dmesg.value().unwrap().total_kb, 25165432);
    let map = MemoryMap::new(&fixed, &MemSample::read(&fs).unwrap(), None).unwrap();
    assert_eq!(map.non_linux_kb, Avail::Value((24 << 20) - 25165435));
}

#[test]
fn device_tree_cells() {
    // 2/2 cells: 0x80000000 + 2 GiB, 0x1_0000_0000 + 4 GiB.
    let mut reg = Vec::new();
    for c in [0u32, 0x8000_0000, 0, 0x8000_0000, 1, 0, 1, 0] {
        reg.extend(c.to_be_bytes());
    }
    let banks = parse_reg("reg", "memory@80000000", &reg, 2, 2).unwrap();
    assert_eq!(banks.len(), 2);
    assert_eq!(banks[1].address, 0x1_0000_0000);
    assert_eq!(banks[0].size_bytes + banks[1].size_bytes, 6 << 30);
    // 1/1 cells (32-bit board): same bytes read as four banks.
    assert_eq!(parse_reg("reg", "m", &reg, 1, 1).unwrap().len(), 4);
    // 2/1 does not divide 32 bytes.
    assert!(matches!(
        parse_reg("reg", "m", &reg, 2, 1),
        Err(MeasureError::BadCells {
            len: 32,
            cells: 3,
            ..
        })
    ));

    // Without #address-cells/#size-cells in the root, 2/2 is assumed.
    let t = lever_testkit::FakeTree::with(&[("/proc/device-tree/compatible", "x")]);
    // `reg` is binary (big-endian cells), so it is written as bytes.
    let reg_path = t.host_path("/proc/device-tree/memory@80000000/reg");
    std::fs::create_dir_all(reg_path.parent().unwrap()).unwrap();
    std::fs::write(&reg_path, &reg).unwrap();
    let dt = DtMemory::read(t.fs()).unwrap().unwrap();
    assert!(!dt.cells_from_root);
    assert_eq!(dt.total_bytes(), 6 << 30);
}

#[test]
fn dmesg_line_variants() {
    let m = DmesgMemory::find(&fixture("vm_dmesg_memory_line")).unwrap();
    assert_eq!((m.available_kb, m.total_kb), (3218236, 25165432));
    assert_eq!(m.section_kb("cma-reserved"), Some(0));
    let log = "[    0.1] foo\n<6>[    0.2] Memory: 1005396K/1048576K available (9216K kernel code, 798K rwdata, 2444K rodata, 1024K init, 271K bss, 43180K reserved, 0K cma-reserved, 0K highmem)\n";
    let m = DmesgMemory::find(log).unwrap();
    assert_eq!(m.section_kb("highmem"), Some(0));
    assert_eq!(m.vmlinux_kb(), Some(9216 + 798 + 2444 + 1024 + 271));
    assert!(DmesgMemory::find("Memory: lots available").is_none());
}

#[test]
fn pressure_and_errors() {
    let p = Pressure::parse("/proc/pressure/memory", &fixture("vm_pressure_memory")).unwrap();
    assert_eq!(p.some.total_us, 0);
    assert!(p.full.is_some());
    let p = Pressure::parse("p", "some avg10=1.50 avg60=0.20 avg300=0.00 total=147600\n").unwrap();
    assert_eq!((p.some.avg10, p.some.total_us, p.full), (1.5, 147600, None));
    let e = Pressure::parse("/proc/pressure/memory", "some avg10=x\n").unwrap_err();
    assert!(e.to_string().starts_with("/proc/pressure/memory:1:"), "{e}");

    let e = Meminfo::parse("/proc/meminfo", "MemTotal: 1 kB\nbogus\n").unwrap_err();
    assert!(
        matches!(
            e,
            MeasureError::Parse(lever_text::ParseError { line: 2, .. })
        ),
        "{e:?}"
    );
    let e = Vmstat::parse("/proc/vmstat", "pgpgin\n").unwrap_err();
    assert!(e.to_string().contains("/proc/vmstat:1"), "{e}");
    let e = Iomem::parse("/proc/iomem", "zzzz-1 : System RAM\n").unwrap_err();
    assert!(matches!(e, MeasureError::Parse(_)));
    let e = Diskstats::parse("/proc/diskstats", "8 0 sda 1 2 3\n").unwrap_err();
    assert!(e.to_string().contains("/proc/diskstats:1"), "{e}");
}

#[test]
fn vm_diskstats() {
    let d = Diskstats::parse("/proc/diskstats", &fixture("vm_diskstats")).unwrap();
    assert!(d.devices.iter().any(|x| x.name == "vda"));
    assert_eq!(d.devices.len(), fixture("vm_diskstats").lines().count());
}

#[test]
fn vm_rollup_and_status() {
    let mut raw = ProcRaw::default();
    assert!(parse_rollup("r", &fixture("vm_smaps_rollup"), &mut raw).unwrap());
    parse_status(&fixture("vm_status"), &mut raw);
    assert_eq!(raw.name, "cat");
    assert!(raw.rss_kb >= raw.pss_kb && raw.pss_kb > 0);
    assert!(raw.pss_anon_kb.is_some() && raw.rss_anon_kb.is_some());
    assert!(raw.vm_size_kb >= raw.rss_kb);
    // A kernel thread's rollup is empty.
    let mut k = ProcRaw::default();
    assert!(!parse_rollup("r", "", &mut k).unwrap());
    assert!(parse_rollup("r", "Rss: x kB\n", &mut k).is_err());
}

fn raw(pid: u32, pss: u64, uss: u64, swap: u64) -> ProcRaw {
    ProcRaw {
        pid,
        name: format!("p{pid}"),
        vm_size_kb: 1000 * pid as u64,
        rss_kb: pss * 2,
        pss_kb: pss,
        private_kb: uss,
        swap_kb: swap,
        rss_anon_kb: Some(pss),
        rss_shmem_kb: Some(1),
        rss_file_kb: Some(pss),
        pss_anon_kb: Some(pss / 2),
        pss_shmem_kb: Some(0),
        pss_file_kb: Some(pss / 2),
        ..ProcRaw::default()
    }
}

#[test]
fn procrank_sorts_views_and_totals() {
    let scan = ProcScan {
        procs: vec![raw(1, 100, 10, 5), raw(2, 300, 5, 0), raw(3, 200, 50, 9)],
        kernel_threads: 4,
        vanished: 1,
        denied: Denied::default(),
    };
    let p = Procrank::new(&scan, View::All, SortKey::Pss);
    assert_eq!(p.procs.iter().map(|r| r.pid).collect::<Vec<_>>(), [2, 3, 1]);
    assert_eq!(p.total.pss_kb, Some(600));
    assert_eq!(p.total.uss_kb, Some(65));
    assert_eq!(p.vanished, 1);
    let p = Procrank::new(&scan, View::All, SortKey::Uss);
    assert_eq!(p.procs[0].pid, 3);
    let p = Procrank::new(&scan, View::All, SortKey::Swap);
    assert_eq!(p.procs.iter().map(|r| r.pid).collect::<Vec<_>>(), [3, 1, 2]);
    let p = Procrank::new(&scan, View::Anon, SortKey::Rss);
    assert_eq!(p.procs[0].rss_kb, Some(301));
    assert_eq!((p.total.uss_kb, p.total.vss_kb), (None, None));
    let p = Procrank::new(&scan, View::File, SortKey::Pss);
    assert_eq!(p.total.pss_kb, Some(300));
    assert_eq!(p.total.swap_kb, Some(0));
}

#[test]
fn refused_rollups_say_why_for_root_and_for_users() {
    // Real status files of this VM whose smaps_rollup answered EACCES to
    // root with CAP_SYS_PTRACE (the sandbox's security module): PID 1
    // (process_api, uid 0) and kthreadd (no VmSize).
    let pid1 = fixture("vm_status_pid1_denied");
    let kthreadd = fixture("vm_status_kthreadd");
    let root = Reader {
        euid: 0,
        cap_sys_ptrace: true,
    };
    let user = Reader {
        euid: 1000,
        cap_sys_ptrace: false,
    };
    assert_eq!(
        Denied::classify(root, Some(&status(&pid1))),
        DeniedAs::Refused(DeniedReason::RootRefused)
    );
    let capless_root = Reader {
        cap_sys_ptrace: false,
        ..root
    };
    assert_eq!(
        Denied::classify(capless_root, Some(&status(&pid1))),
        DeniedAs::Refused(DeniedReason::RootWithoutCapSysPtrace)
    );
    assert_eq!(
        Denied::classify(user, Some(&status(&pid1))),
        DeniedAs::Refused(DeniedReason::OtherUser)
    );
    // A process of uid 0 read by uid 0 that is not root cannot exist; a
    // non-root reader whose uid matches gets "not dumpable".
    let as_owner = pid1.replace("Uid:\t0\t0\t0\t0", "Uid:\t1000\t1000\t1000\t1000");
    assert_ne!(as_owner, pid1);
    assert_eq!(
        Denied::classify(user, Some(&status(&as_owner))),
        DeniedAs::Refused(DeniedReason::NotDumpable)
    );
    // A kernel thread has no user memory: skipped as one, not "refused".
    assert_eq!(
        Denied::classify(root, Some(&status(&kthreadd))),
        DeniedAs::KernelThread
    );
    assert_eq!(
        Denied::classify(root, None),
        DeniedAs::Refused(DeniedReason::Unknown)
    );

    let mut d = Denied::default();
    d.add(DeniedReason::RootRefused);
    d.add(DeniedReason::OtherUser);
    d.add(DeniedReason::OtherUser);
    assert_eq!(d.total(), 3);
    let text: Vec<_> = d.explained();
    assert_eq!(text.len(), 2);
    assert_eq!(text[0].0, 2);
    assert!(text[0].1.contains("another user"));
    assert!(text[1].1.contains("although running as root"));
    assert!(!text[1].1.contains("run as root"));
}

#[test]
fn procrank_on_a_tree_with_vanished_and_kernel_threads() {
    let (_d, fs) = tree(&[
        ("/proc/100/smaps_rollup", fixture("vm_smaps_rollup")),
        ("/proc/100/status", fixture("vm_status")),
        ("/proc/100/cmdline", "cat\0/proc/self/status\0".into()),
        // kernel thread: empty rollup
        ("/proc/2/smaps_rollup", String::new()),
        ("/proc/2/status", "Name:\tkthreadd\n".into()),
        // vanished: the directory is there, its files are gone
        ("/proc/77/x", String::new()),
        // kernel thread on a real kernel: smaps_rollup answers ESRCH, which a
        // tree cannot imitate; a status without VmSize and no rollup file
        // reads as Missing + status without VmSize.
        ("/proc/3/status", "Name:\tkworker/0:0\n".into()),
        ("/proc/meminfo", fixture("vm_meminfo")),
    ]);
    let scan = ProcScan::read(&fs).unwrap().unwrap();
    assert_eq!(
        (scan.procs.len(), scan.kernel_threads, scan.vanished),
        (1, 2, 1)
    );
    assert_eq!(scan.procs[0].cmdline, "cat /proc/self/status");
    // A tree without processes says so.
    let (_d2, empty) = tree(&[("/proc/meminfo", fixture("vm_meminfo"))]);
    assert!(ProcScan::read(&empty).unwrap().is_err());
}

fn sample(t: f64, refault: u64, swap: u64, scan: u64, steal: u64, full_us: u64) -> ThrashSample {
    let v = Vmstat::parse(
        "v",
        &format!(
            "workingset_refault_anon {refault}\nworkingset_refault_file {refault}\n\
             workingset_activate_anon 0\nworkingset_activate_file 0\n\
             pgpgin {swap}\npgpgout {swap}\npswpin {swap}\npswpout {swap}\n\
             pgsteal_kswapd {steal}\npgsteal_direct 0\npgscan_kswapd {scan}\npgscan_direct 0\n"
        ),
    )
    .unwrap();
    let psi = Pressure::parse(
        "p",
        &format!("some avg10=0 avg60=0 avg300=0 total={full_us}\nfull avg10=0 avg60=0 avg300=0 total={full_us}\n"),
    )
    .unwrap();
    ThrashSample::from_parts(t, &v, Some(psi))
}

/// `k` intervals of the same rates: sustained evidence.
fn repeated(a: &ThrashSample, b: &ThrashSample, k: usize) -> Vec<ThrashInterval> {
    vec![ThrashInterval::new(b, a); k]
}

#[test]
fn thrash_verdicts() {
    let calm = [sample(0.0, 5, 5, 0, 0, 0), sample(1.0, 5, 5, 0, 0, 0)];
    let i = [ThrashInterval::new(&calm[1], &calm[0])];
    assert_eq!(Verdict::new(&i).level, Level::Calm);
    assert_eq!(i[0].reclaim_efficiency, None);

    // Sustained reclaim at 90 % efficiency, no refaults: pressure, not
    // thrashing.
    let p = [sample(0.0, 0, 0, 0, 0, 0), sample(1.0, 0, 0, 1000, 900, 0)];
    let i = repeated(&p[0], &p[1], 4);
    let v = Verdict::new(&i);
    assert_eq!(v.level, Level::Pressure);
    assert!((i[0].reclaim_efficiency.unwrap() - 0.9).abs() < 1e-12);

    // Refaults with paging and swapping, efficiency 20 %, 50 % full stall,
    // sustained.
    let t = [
        sample(0.0, 0, 0, 0, 0, 0),
        sample(1.0, 500, 300, 1000, 200, 500_000),
    ];
    let i = repeated(&t[0], &t[1], 4);
    assert_eq!(i[0].refaults_per_s, Some(1000.0));
    assert_eq!(i[0].psi_full_pct, Some(50.0));
    let v = Verdict::new(&i);
    assert_eq!(v.level, Level::Thrashing, "{v:?}");
    assert!(v.reasons.iter().any(|r| r.contains("efficiency below 50%")));

    // A trickle of refaults without reclaim is page-cache churn: calm.
    let churn = [sample(0.0, 0, 0, 0, 0, 0), sample(1.0, 19, 0, 0, 0, 0)];
    let i = [ThrashInterval::new(&churn[1], &churn[0])];
    assert_eq!(i[0].refaults_per_s, Some(38.0));
    let v = Verdict::new(&i);
    assert_eq!(v.level, Level::Calm, "{v:?}");
    assert!(v.reasons[0].contains("page-cache churn"), "{v:?}");
    // At the thrashing rate, sustained, but without reclaim or swapping:
    // pressure.
    let fast = [sample(0.0, 0, 0, 0, 0, 0), sample(1.0, 100, 0, 0, 0, 0)];
    let i = repeated(&fast[0], &fast[1], 4);
    assert_eq!(Verdict::new(&i).level, Level::Pressure);

    // A counter reset gives no rate instead of a negative one.
    let i = ThrashInterval::new(&calm[0], &t[1]);
    assert_eq!(i.refaults_per_s, None);
    assert_eq!(Verdict::new(&[]).level, Level::Calm);
}

/// This VM's real /proc/vmstat and PSI with `refaults` added to its
/// refault counters and the given PSI totals, at `t_s`.
fn vm_sample(t_s: f64, refaults: u64, psi_some_us: u64) -> ThrashSample {
    let mut v = Vmstat::parse("/proc/vmstat", &fixture("vm_vmstat")).unwrap();
    for (name, value) in v.counters.iter_mut() {
        if name == "workingset_refault_anon" {
            *value += refaults;
        }
    }
    let psi = Pressure::parse("/proc/pressure/memory", &fixture("vm_pressure_memory")).unwrap();
    let mut psi = psi;
    psi.some.total_us += psi_some_us;
    ThrashSample::from_parts(t_s, &v, Some(psi))
}

#[test]
fn a_lone_refault_spike_with_no_stall_is_a_brief_burst() {
    // The report of issue 10: 10 intervals on this VM (24 GB, 23 GB free),
    // one with 215 refaults/s, PSI 0.0 throughout. It used to say "memory
    // pressure, but not thrashing".
    let mut samples = vec![vm_sample(0.0, 0, 0)];
    for k in 1..=10u64 {
        let extra = if k >= 4 { 215 } else { 0 };
        samples.push(vm_sample(k as f64, extra, 0));
    }
    let i: Vec<ThrashInterval> = samples
        .windows(2)
        .map(|w| ThrashInterval::new(&w[1], &w[0]))
        .collect();
    assert_eq!(i[3].refaults_per_s, Some(215.0));
    assert_eq!(i[3].psi_some_pct, Some(0.0));
    let v = Verdict::new(&i);
    assert_eq!(v.level, Level::BriefBurst, "{v:?}");
    assert!(
        v.reasons.iter().any(|r| r.contains("1 of 10 intervals")),
        "{v:?}"
    );
    assert!(v.reasons.iter().any(|r| r.contains("PSI agrees")), "{v:?}");
    // A single interval is never sustained either.
    let one = [ThrashInterval::new(&samples[4], &samples[3])];
    assert_eq!(Verdict::new(&one).level, Level::BriefBurst);
}

/// File-cache thrashing: file refaults and reclaim, no swap at all.
fn file_sample(t: f64, file_refaults: u64, scan: u64, steal: u64, some_us: u64) -> ThrashSample {
    let v = Vmstat::parse(
        "v",
        &format!(
            "workingset_refault_anon 0\nworkingset_refault_file {file_refaults}\n\
             workingset_activate_anon 0\nworkingset_activate_file {file_refaults}\n\
             pgpgin {file_refaults}\npgpgout 0\npswpin 0\npswpout 0\n\
             pgsteal_kswapd {steal}\npgsteal_direct 0\npgscan_kswapd {scan}\npgscan_direct 0\n"
        ),
    )
    .unwrap();
    let psi = Pressure::parse(
        "p",
        &format!("some avg10=0 avg60=0 avg300=0 total={some_us}\nfull avg10=0 avg60=0 avg300=0 total=0\n"),
    )
    .unwrap();
    ThrashSample::from_parts(t, &v, Some(psi))
}

#[test]
fn file_cache_thrashing_without_swap() {
    // 800 file refaults/s, 4000 pages scanned/s at 90 %, tasks stalled 30 %.
    let s = [
        file_sample(0.0, 0, 0, 0, 0),
        file_sample(1.0, 800, 4000, 3600, 300_000),
    ];
    let i = repeated(&s[0], &s[1], 5);
    assert_eq!(i[0].rate("pswpin"), Some(0.0));
    let v = Verdict::new(&i);
    assert_eq!(v.level, Level::Thrashing, "{v:?}");
    assert!(
        v.reasons.iter().any(|r| r.contains("file-cache thrashing")),
        "{v:?}"
    );
    // The same counters with no task stalled: PSI disagrees, not thrashing.
    let quiet = [
        file_sample(0.0, 0, 0, 0, 0),
        file_sample(1.0, 800, 4000, 3600, 0),
    ];
    let v = Verdict::new(&repeated(&quiet[0], &quiet[1], 5));
    assert_eq!(v.level, Level::Pressure, "{v:?}");
    assert!(
        v.reasons
            .iter()
            .any(|r| r.contains("PSI shows no task stalled")),
        "{v:?}"
    );
}

#[test]
fn cgroup_memory_stat_gives_reclaim_efficiency() {
    // A cgroup v2 memory.stat as kernels before the kswapd/direct split
    // print it (pgscan/pgsteal totals), and its memory.pressure.
    let dir = "/sys/fs/cgroup/app.slice";
    let (_d, fs) = tree(&[
        (
            &format!("{dir}/memory.stat") as &str,
            fixture("cgroup_memory_stat_before"),
        ),
        (
            &format!("{dir}/memory.pressure"),
            fixture("vm_pressure_memory"),
        ),
    ]);
    let a = ThrashSample::read_cgroup(&fs, dir, 0.0).unwrap();
    std::fs::write(
        _d.root().join(&dir[1..]).join("memory.stat"),
        fixture("cgroup_memory_stat_after"),
    )
    .unwrap();
    let b = ThrashSample::read_cgroup(&fs, dir, 1.0).unwrap();
    let i = ThrashInterval::new(&b, &a);
    assert_eq!(i.scanned_per_s, Some(2000.0));
    assert_eq!(i.stolen_per_s, Some(500.0));
    assert_eq!(i.reclaim_efficiency, Some(0.25));
    assert_eq!(i.file_refaults_per_s(), Some(450.0));
    // cgroup v2 has no pswpin: unknown, not 0.
    assert_eq!(i.rate("pswpin"), None);
    assert_eq!(i.psi_some_pct, Some(0.0));
    let missing = ThrashSample::read_cgroup(&fs, "/sys/fs/cgroup/nope", 0.0).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("/sys/fs/cgroup/nope/memory.stat"),
        "{missing}"
    );
}

#[test]
fn csv_and_svg() {
    let t = [
        sample(0.0, 0, 0, 0, 0, 0),
        sample(1.0, 10, 5, 100, 50, 0),
        sample(2.0, 30, 5, 100, 50, 0),
    ];
    let i: Vec<_> = t
        .windows(2)
        .map(|w| ThrashInterval::new(&w[1], &w[0]))
        .collect();
    let csv = lever_measure::thrash::to_csv(&i);
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
    assert!(
        lines[1].starts_with("1.000,1.000,10.000,10.000,"),
        "{}",
        lines[1]
    );
    let svg = lever_measure::thrash::to_svg(&i);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // Seven rate series (file refaults added) and PSI some/full below them.
    assert_eq!(svg.matches("<polyline").count(), 9);
    assert!(svg.contains("refaults/s"));
    assert!(svg.contains("PSI some %") && svg.contains("PSI full %"));
    // refaults/s and pswpin/s are drawn differently (here both are 20/s).
    let style_of = |name: &str| {
        let legend = svg.find(&format!(">{name}</text>")).unwrap();
        let line = svg[..legend].rfind("<line").unwrap();
        svg[line..legend]
            .split(" stroke=")
            .nth(1)
            .unwrap()
            .split("/>")
            .next()
            .unwrap()
            .to_string()
    };
    assert_ne!(style_of("refaults/s"), style_of("pswpin/s"));
}

#[test]
fn io_verdict_from_real_psi_around_a_direct_write() {
    use lever_measure::iobound::{IoLevel, IoVerdict, IoWait};
    use std::time::Duration;
    let before = Pressure::parse("/proc/pressure/io", &fixture("vm_pressure_io_before")).unwrap();
    let after = Pressure::parse("/proc/pressure/io", &fixture("vm_pressure_io_after")).unwrap();
    let wall = Duration::from_nanos(42_703_879);
    // This VM: delay accounting off, so the child's field 42 read 0.
    let w = IoWait::new(
        wall,
        Some(Duration::ZERO),
        Some(false),
        Some(&before),
        Some(&after),
    );
    assert_eq!(w.blkio_s, None, "0 with accounting off is unknown, not 0");
    assert_eq!(w.psi_some_s, Some((23660603 - 23629052) as f64 / 1e6));
    let v = IoVerdict::new(&w);
    assert_eq!(v.level, IoLevel::IoBound);
    let pct = v.blocked_pct.unwrap();
    assert!((pct - 73.88).abs() < 0.01, "{pct}");
    assert!(
        v.reasons[0].contains("delay accounting is off"),
        "{:?}",
        v.reasons
    );
    assert!(v.reasons[1].contains("PSI io some"), "{:?}", v.reasons);

    // With delay accounting on, the command's own time decides.
    let own = IoWait::new(
        Duration::from_secs(2),
        Some(Duration::from_millis(100)),
        Some(true),
        Some(&before),
        Some(&after),
    );
    let v = IoVerdict::new(&own);
    assert_eq!(v.level, IoLevel::NotIoBound);
    assert_eq!(v.blocked_pct, Some(5.0));
    let half = IoWait::new(wall, None, None, None, None);
    assert_eq!(IoVerdict::new(&half).level, IoLevel::Unknown);
    let partly = IoWait::new(
        Duration::from_secs(1),
        Some(Duration::from_millis(200)),
        Some(true),
        None,
        None,
    );
    assert_eq!(IoVerdict::new(&partly).level, IoLevel::PartlyIo);
}

/// A `status` fixture parsed by the one reader of that file.
fn status(text: &str) -> lever_measure::process::Status {
    lever_measure::process::parse_status("status", text).unwrap()
}
