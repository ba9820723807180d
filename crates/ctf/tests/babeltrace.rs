//! Lever's CTF reader against babeltrace2, event for event (name, time in
//! cycles and ns from the origin, every context and payload field), on
//! every trace in the shared folder and on UST traces recorded here with
//! liblttng-ust-cyg-profile.

mod common;
use common::*;
use lever_testkit::lttng;
use std::path::Path;

fn check(dir: &Path) -> usize {
    let streams = lever_ctf::Trace::open(dir).unwrap().stream_paths().count();
    let a = ours(dir);
    let b = theirs(dir, streams);
    compare(&dir.display().to_string(), &a, &b);
    a.len()
}

#[test]
fn shared_traces_equal_babeltrace2() {
    let root = third_party();
    if !root.is_dir() {
        assert!(!in_ci(), "{} is missing", root.display());
        eprintln!("SKIP: {} not here", root.display());
        return;
    }
    if !have("babeltrace2") {
        return;
    }
    let traces = lever_ctf::find_traces(&root);
    assert_eq!(traces.len(), 6, "{traces:?}");
    let mut total = 0;
    for t in &traces {
        let n = check(t);
        eprintln!("{}: {n} events equal", t.display());
        assert!(n > 1000, "{}: only {n} events", t.display());
        total += n;
    }
    eprintln!("{total} events equal in {} traces", traces.len());
}

#[test]
fn recorded_cyg_profile_traces_equal_babeltrace2() {
    if !have("babeltrace2") || !have("lttng") || !have("gcc") {
        return;
    }
    for preload in [
        "liblttng-ust-cyg-profile.so",
        "liblttng-ust-cyg-profile-fast.so",
    ] {
        let work = tempfile::tempdir().unwrap();
        if !lttng::build_prog(work.path()) {
            return;
        }
        let dir = match lttng::record(work.path(), preload, lttng::CYG_EVENTS, &["3000"]) {
            Ok(out) => lever_ctf::find_traces(&out)
                .into_iter()
                .next()
                .expect("a trace below the session's output"),
            Err(why) => {
                assert!(!in_ci(), "cannot record a UST trace under CI=true: {why}");
                eprintln!("SKIP: not available here because {why}");
                return;
            }
        };
        assert!(
            dir.join("index").is_dir(),
            "LTTng 2.13 writes packet indexes"
        );
        let n = check(&dir);
        // 2 threads × (1 top + 3000 mid + 9000 leaf) calls, entry and exit.
        let calls = lever_ctf::Trace::open(&dir).unwrap();
        let mut ev = calls.events();
        let mut cyg = 0;
        while let Some(e) = ev.next().unwrap() {
            if e.name().starts_with("lttng_ust_cyg_profile") {
                cyg += 1;
            }
        }
        let discarded: u64 = ev.discarded().iter().map(|d| d.events).sum();
        // main and worker are instrumented too: +2 calls.
        assert_eq!(cyg as u64 + discarded, (2 * 12001 + 2) * 2, "{preload}");
        eprintln!("{preload}: {n} events equal to babeltrace2 ({cyg} function entries/exits)");
    }
}

/// The comparison sees a single changed field value (so the tests above
/// can fail).
#[test]
#[should_panic(expected = "differs")]
fn comparison_catches_one_changed_value() {
    let dir = third_party().join("cyg-profile/glxgears-cyg-profile");
    if !dir.is_dir() {
        panic!("differs (trace missing: nothing to compare)");
    }
    let a = ours(&dir);
    let mut b = a.clone();
    b[100].text = b[100].text.replacen("addr: ", "addr: 1", 1);
    compare("changed", &a, &b);
}
