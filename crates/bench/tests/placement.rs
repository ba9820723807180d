//! A test with peers runs pinned, with its peers, to one CPU, and the
//! runner's own affinity is put back after it; a test without peers is
//! left where the scheduler puts it.

use lever_bench::catalog::{Section, TestDef};
use lever_bench::runner::timed;
use lever_bench::{run_defs, Options};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn allowed_cpus() -> usize {
    rustix::thread::sched_getaffinity(None).unwrap().count() as usize
}

/// A test whose body records how many CPUs it and a thread it spawns
/// may run on.
fn probe(name: &str, seen: Arc<Mutex<Vec<(usize, usize)>>>) -> TestDef {
    TestDef::us(name, Section::Ipc, 1.0, move |_| {
        let peer = std::thread::spawn(allowed_cpus).join().unwrap();
        let seen = seen.clone();
        Ok(Box::new(move |n| {
            seen.lock().unwrap().push((allowed_cpus(), peer));
            timed(n, || Ok(()))
        }))
    })
}

#[test]
fn peers_are_pinned_with_the_test_and_the_runner_is_unpinned_after() {
    let before = allowed_cpus();
    if before < 2 {
        println!(
            "skipped: this process may run on one CPU only, so pinning changes nothing to see"
        );
        return;
    }
    let opts = Options {
        policy: lever_bench::stats::Policy {
            fixed: Some(6),
            ..Options::quick().policy
        },
        sample_time: Duration::from_micros(50),
        ..Options::quick()
    };
    let pinned = Arc::new(Mutex::new(Vec::new()));
    let free = Arc::new(Mutex::new(Vec::new()));
    let r = run_defs(
        &opts,
        vec![
            probe("with-peers", pinned.clone()).with_peers(),
            probe("alone", free.clone()),
        ],
        &mut |_, _, _| {},
    )
    .unwrap();
    let pinned = pinned.lock().unwrap();
    assert!(!pinned.is_empty());
    assert!(
        pinned.iter().all(|&(me, peer)| me == 1 && peer == 1),
        "{pinned:?}"
    );
    let cpu = r.tests[0].pinned_cpu.expect("the CPU is reported");
    assert!(cpu < rustix::thread::CpuSet::MAX_CPU);
    let free = free.lock().unwrap();
    assert!(
        free.iter()
            .all(|&(me, peer)| me == before && peer == before),
        "{free:?}"
    );
    assert_eq!(r.tests[1].pinned_cpu, None);
    assert_eq!(allowed_cpus(), before, "the runner's affinity is back");
}
