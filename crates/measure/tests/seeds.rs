//! Seed 000's worked examples, reproduced to the unit.

mod common;
use common::{fixture, tree};
use lever_measure::diskstats::{DiskDelta, Diskstats, IoReport};
use lever_measure::dmesg::DmesgMemory;
use lever_measure::iomem::Iomem;
use lever_measure::meminfo::Meminfo;
use lever_measure::memmap::{
    FreeMemory, MemSample, MemoryMap, PageSize, PageSizeSource, StaticMemory, TotalRamSource,
};
use lever_measure::thrash::{ThrashInterval, ThrashSample, COUNTERS};
use lever_measure::vmstat::Vmstat;
use lever_measure::Avail;

/// §8.3 "Free memory calculation": MemFree 3471436 + (Cached 574856 −
/// Shmem 24776) + Buffers 9216 + ION cache (16217 pages × 4 kB = 64868 kB).
#[test]
fn seed_8_3_free_memory() {
    let m = Meminfo::parse("seed", &fixture("seed_8_3_meminfo")).unwrap();
    let v = Vmstat::parse("seed", &fixture("seed_8_3_vmstat")).unwrap();
    let page = PageSize {
        kb: 4,
        source: PageSizeSource::Given,
    };
    let f = FreeMemory::new(&m, &v, page).unwrap();
    assert_eq!(f.mem_free_kb, 3471436);
    assert_eq!(f.cached_kb, 574856);
    assert_eq!(f.shmem_kb, 24776);
    assert_eq!(f.buffers_kb, 9216);
    assert_eq!(f.misc_reclaimable_pages, Some(16217));
    assert_eq!(
        f.ion_cache_kb, 64868,
        "seed: 16217 pages × 4 kB = 64,868 kB"
    );
    // 64868 kB ÷ 1024 = 63.3 MB, as the seed rounds it.
    assert_eq!(format!("{:.1}", f.ion_cache_kb as f64 / 1024.0), "63.3");
    assert_eq!(f.free_kb, 4095600);
}

/// §8.3 end to end through a tree: apps + framework = MemTotal − free; the
/// page size is not derivable from the seed's six lines, so it is assumed
/// 4 kB and says so.
#[test]
fn seed_8_3_memory_map() {
    let (_d, fs) = tree(&[
        ("/proc/meminfo", fixture("seed_8_3_meminfo")),
        ("/proc/vmstat", fixture("seed_8_3_vmstat")),
        ("/proc/iomem", fixture("seed_8_3_iomem")),
    ]);
    let fixed = StaticMemory::read(&fs, Some(fixture("seed_3_5_dmesg_memory_line")), None).unwrap();
    // No device tree here, so the dmesg line gives total RAM.
    let total = fixed.total_ram.value().unwrap();
    assert_eq!(total.source, TotalRamSource::Dmesg);
    assert_eq!(total.kb, 4134912);
    let map = MemoryMap::new(&fixed, &MemSample::read(&fs).unwrap(), None).unwrap();
    assert_eq!(map.page_size.source, PageSizeSource::Assumed);
    assert_eq!(map.free.free_kb, 4095600);
    assert_eq!(map.mem_total_kb, 4513944);
    assert_eq!(map.apps_framework_kb, 4513944 - 4095600);
    // The seed's System RAM excerpt: union of the listed ranges.
    assert_eq!(map.linux_ram_kb, Avail::Value(62448));
    assert_eq!(map.kernel_static_kb, Avail::Value(62448 - 4513944));
}

/// §8.3 "Non-Linux memory": 839fffff − 83600000 = 4194303 (+1 = 4 MiB per
/// range, `end − start + 1`); the seed's listing repeats three lines, which
/// are counted once.
#[test]
fn seed_8_3_system_ram() {
    let io = Iomem::parse("seed", &fixture("seed_8_3_iomem")).unwrap();
    assert_eq!(io.entries[0].size_bytes(), 4194303 + 1);
    let s = io.system_ram().unwrap();
    assert_eq!(s.ranges, 14);
    assert_eq!(
        s.bytes + s.overlap_bytes,
        85970944,
        "naive sum of all 14 lines"
    );
    assert_eq!(s.bytes, 63946752);
    assert!(!io.addresses_hidden());
}

/// §3.5: vmlinux = 28800K + 2090K + 10688K + 3072K + 969K.
#[test]
fn seed_3_5_vmlinux_sections() {
    let m = DmesgMemory::find(&fixture("seed_3_5_dmesg_memory_line")).unwrap();
    assert_eq!(m.available_kb, 3061872);
    assert_eq!(m.total_kb, 4134912);
    assert_eq!(m.section_kb("kernel code"), Some(28800));
    assert_eq!(m.section_kb("cma-reserved"), Some(393216));
    assert_eq!(m.vmlinux_kb(), Some(28800 + 2090 + 10688 + 3072 + 969));
    assert_eq!(m.sections_kb.len(), 7);
}

/// §7.2 "Identify I/O bound use cases": sda10 before/after lmdd.
#[test]
fn seed_7_2_io_example() {
    let before = Diskstats::parse("b", &fixture("seed_7_2_diskstats_before")).unwrap();
    let after = Diskstats::parse("a", &fixture("seed_7_2_diskstats_after")).unwrap();
    let d = DiskDelta::new(&before.devices[0], &after.devices[0], 10.0);
    assert_eq!(d.name, "sda10");
    assert_eq!(d.sectors_read, 4209448 - 15056);
    assert_eq!(d.sectors_read, 4194392);
    assert_eq!(d.read_ms, 12768);
    assert_eq!(d.sectors_written, 4194680);
    assert_eq!(d.write_ms, 164365);
    assert_eq!(d.io_ms, 6328);
    // "= 2GB": 4194392 sectors × 512 B = 2.0 GiB.
    assert_eq!(d.bytes_read, 2147528704);
    assert_eq!(
        format!("{:.1}", d.bytes_read as f64 / (1u64 << 30) as f64),
        "2.0"
    );
    assert_eq!(
        format!("{:.1}", d.bytes_written as f64 / (1u64 << 30) as f64),
        "2.0"
    );
    assert_eq!(d.read_bytes_per_s, 2147528704.0 / 10.0);
    assert!((d.utilization_pct - 63.28).abs() < 1e-9);

    let vb = Vmstat::parse("b", &fixture("seed_7_2_vmstat_before")).unwrap();
    let va = Vmstat::parse("a", &fixture("seed_7_2_vmstat_after")).unwrap();
    let r = IoReport::new((&before, &vb), (&after, &va), 10.0);
    assert_eq!(r.pgpgin_kb, Some(2446172 - 348632));
    assert_eq!(r.pgpgout_kb, Some(4197396 - 2100056));
    // pgpgin counts kB: 2097540 kB = 2.0 GiB, the seed's "2GB".
    assert_eq!(
        format!("{:.1}", r.pgpgin_kb.unwrap() as f64 / 1048576.0),
        "2.0"
    );
    assert!(r.changed_devices.is_empty());
}

/// §7.2 "Identify memory thrashing": the seed's counters as the second of
/// two samples one second apart from zero: rates equal the counters and the
/// reclaim efficiency is (3946686 + 59226) / (4660928 + 73719).
#[test]
fn seed_7_2_thrash_counters() {
    let v = Vmstat::parse("seed", &fixture("seed_7_2_thrash_vmstat")).unwrap();
    let zero = ThrashSample {
        t_s: 0.0,
        counters: vec![Some(0); COUNTERS.len()],
        psi: None,
    };
    let cur = ThrashSample::from_parts(1.0, &v, None);
    assert!(cur.counters.iter().all(|c| c.is_some()));
    let i = ThrashInterval::new(&cur, &zero);
    assert_eq!(i.rate("pswpout"), Some(2101230.0));
    assert_eq!(i.refaults_per_s, Some(984111.0 + 1838690.0));
    let eff = i.reclaim_efficiency.unwrap();
    assert!((eff - 4005912.0 / 4734647.0).abs() < 1e-12);
    assert_eq!(format!("{:.1}", eff * 100.0), "84.6");
}
