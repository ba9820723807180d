//! One owner for "what RT-ready means": `lever rt check`
//! (`lever_latency::rtcheck`) judges a kernel against seed 000 §3.6 and
//! seed 001; the built-in `rt` profile is the way to get there. This test
//! holds them together: after `rt` is applied (and its command line is on
//! the kernel's), every check a tunable or the boot command line can
//! satisfy passes — so a change to either side that breaks the other fails
//! here.

mod common;

use lever_latency::rtcheck::{check, Verdict};
use lever_profiles::{apply, load, resolve, Options};

#[test]
fn applying_rt_satisfies_every_tunable_check_of_lever_rt_check() {
    let b = common::qcs6490();
    let rt_cpus = vec![1, 2, 3];
    let before = check(&b.fs, Some(&rt_cpus)).unwrap();
    let failing = |r: &lever_latency::rtcheck::RtReport| -> Vec<&'static str> {
        r.checks
            .iter()
            .filter(|c| c.verdict != Verdict::Pass)
            .map(|c| c.name)
            .collect()
    };
    assert!(failing(&before).contains(&"timer_migration"), "{before:?}");

    let chain = load("rt").unwrap();
    let opts = Options {
        rt_cpus: Some(rt_cpus.clone()),
    };
    let resolved = resolve(&chain, &b.target, &b.fs, &opts).unwrap();
    apply(&b.fs, &resolved.writes).unwrap();
    // What the boot loader would pass after the profile's advice.
    b.fs.create_node(
        "/proc/cmdline",
        &format!("console=ttyMSM0 {}\n", resolved.cmdline_line()),
    )
    .unwrap();

    let after = check(&b.fs, Some(&rt_cpus)).unwrap();
    // Left: the kernel build (PREEMPT_RT), not a tunable.
    assert_eq!(failing(&after), ["preempt_rt"], "{:#?}", after.checks);
}
