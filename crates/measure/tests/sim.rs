//! The models on simulated boards (lever-sim), read through KernelFs.

mod common;
use common::sim;
use lever_measure::diskstats::{Diskstats, IoReport};
use lever_measure::memmap::{MemSample, MemoryMap, PageSizeSource, StaticMemory, TotalRamSource};
use lever_measure::smaps::ProcScan;
use lever_measure::thrash::{Level, ThrashInterval, ThrashSample, Verdict};
use lever_measure::vmstat::Vmstat;
use lever_measure::Avail;

#[test]
fn qcs6490_memory_map() {
    let (_d, fs) = sim("qcs6490");
    let fixed = StaticMemory::read(&fs, None, None).unwrap();
    let dt = fixed.dt_memory.as_ref().unwrap();
    assert!(dt.cells_from_root);
    assert_eq!((dt.address_cells, dt.size_cells), (2, 2));
    assert_eq!(dt.banks.len(), 2);
    let total = fixed.total_ram.value().unwrap();
    assert_eq!(
        (total.kb, total.source),
        (6 * 1024 * 1024, TotalRamSource::DeviceTree)
    );
    // The sim has no kernel log device: said, not invented.
    assert!(matches!(&fixed.dmesg, Avail::Unavailable(r) if r.contains("/dev/kmsg")));

    let sample = MemSample::read(&fs).unwrap();
    let map = MemoryMap::new(&fixed, &sample, None).unwrap();
    assert_eq!(map.page_size.kb, 4);
    assert_eq!(map.page_size.source, PageSizeSource::Derived);
    let linux = *map.linux_ram_kb.value().unwrap();
    // docs/sim.md: System RAM + the 441 MB of no-map carve-outs = DT total.
    assert_eq!(
        map.non_linux_kb,
        Avail::Value(6 * 1024 * 1024 - linux as i64)
    );
    assert_eq!(
        format!("{:.1}", *map.non_linux_kb.value().unwrap() as f64 / 1024.0),
        "441.1"
    );
    assert_eq!(map.kernel_static_kb, Avail::Value(linux as i64 - 5634960));
    // free = MemFree + (Cached − Shmem) + Buffers + 9000 pages × 4 kB
    assert_eq!(map.free.free_kb, 3679760 + (946000 - 48000) + 12000 + 36000);
    assert_eq!(map.apps_framework_kb, 5634960 - map.free.free_kb as i64);
    let kgsl = map
        .kernel_dynamic
        .iter()
        .find(|i| i.name == "KGSL")
        .unwrap();
    assert_eq!(kgsl.kb, Avail::Value(25165824 / 1024));
    let zram = map
        .kernel_dynamic
        .iter()
        .find(|i| i.name == "ZRAM used")
        .unwrap();
    assert_eq!(zram.kb, Avail::Value(6123520 / 1024));
    let cma = map
        .kernel_dynamic
        .iter()
        .find(|i| i.name == "CMA used")
        .unwrap();
    assert_eq!(cma.kb, Avail::Value(393216 - 371200));
}

#[test]
fn am437x_has_no_psi_and_32bit_cells() {
    let (_d, fs) = sim("am437x");
    let fixed = StaticMemory::read(&fs, None, None).unwrap();
    let dt = fixed.dt_memory.as_ref().unwrap();
    assert_eq!((dt.address_cells, dt.size_cells), (1, 1));
    assert_eq!(fixed.total_ram.value().unwrap().kb, 1024 * 1024);
    let s = ThrashSample::read(&fs, 0.0).unwrap();
    assert!(s.psi.is_none());
    let v = Verdict::new(&[ThrashInterval::new(
        &ThrashSample::read(&fs, 1.0).unwrap(),
        &s,
    )]);
    assert_eq!(v.level, Level::Calm);
    assert!(v.reasons.iter().any(|r| r.contains("no PSI")));
}

#[test]
fn sim_has_no_processes_and_static_disks() {
    let (_d, fs) = sim("qcs6490");
    assert!(ProcScan::read(&fs).unwrap().is_err());
    let d = Diskstats::read(&fs).unwrap();
    let v = Vmstat::read(&fs).unwrap();
    assert!(d.devices.iter().any(|x| x.name == "sda"));
    let r = IoReport::new((&d, &v), (&d, &v), 1.0);
    assert!(r.devices.iter().all(|x| !x.is_active()));
    assert_eq!((r.pgpgin_kb, r.pgpgout_kb), (Some(0), Some(0)));
}
