//! SIGNAL in the daemon core: a use case becomes one request that
//! aggregates with perflocks, is refused whole to the wrong client, and
//! whose cgroup settings are journalled and put back however it ends; a
//! use case that only sets cgroups or threads works; the report says what
//! of a use case was not applied, and why.

mod common;

use common::{client, fixture_of, Fixture, RT, TARGET, UCLAMP};
use lever_daemon::core::{Client, Limits};
use lever_daemon::tasks::TaskJournal;
use lever_protocol::{
    Acquire, ErrorCode, Lease, Priority, Reply, Request, Signal, SignalLease, Status,
};
use lever_testkit::FakeTree;
use std::num::NonZeroU32;
use std::time::Duration;

const USECASES: &str = "
usecases:
  - name: ui-boost
    id: 0x00030010
    duration: 0
    resources:
      sched_util_clamp_min: 512
    cgroups:
      lever/ui:
        cpu.weight: \"400\"
  - name: rt-tune
    id: 0x00030011
    permission: system
    resources:
      sched_rt_runtime_us: 900000
  - name: video
    id: 0x00030012
    duration: 2s
    resources:
      sched_util_clamp_min: 100
    variants:
      - name: 30fps
        when: { fps: 30 }
        resources: { sched_util_clamp_min: 300 }
      - name: 60fps
        when: { fps: 60 }
        resources: { sched_util_clamp_min: 600 }
  - name: bg-cgroup
    id: 0x00030013
    cgroups:
      lever/bg:
        cpu.weight: \"50\"
  - name: ui-threads
    id: 0x00030014
    threads:
      - comm: \"ui*\"
        nice: -5
";

const WEIGHT: &str = "/sys/fs/cgroup/lever/ui/cpu.weight";

fn board() -> Fixture {
    let tree = FakeTree::with(&[
        (UCLAMP, "0\n"),
        (RT, "950000\n"),
        (
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "schedutil\n",
        ),
        ("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
        ("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n"),
        ("/sys/fs/cgroup/cgroup.subtree_control", "cpu cpuset\n"),
        ("/sys/fs/cgroup/cgroup.procs", ""),
    ]);
    fixture_of(tree, &format!("{TARGET}{USECASES}"), Limits::default())
}

fn app(conn: u64) -> Client {
    client(conn, 1000 + conn as u32, false)
}

fn signal(name: &str, fps: u32) -> Request {
    Request::Signal(Signal {
        usecase: name.into(),
        lease: SignalLease::UseCaseDefault,
        priority: Priority::ThirdPartyLow,
        detach: false,
        report: false,
        fps: NonZeroU32::new(fps),
        width: None,
        height: None,
    })
}

fn handle(reply: Reply) -> u32 {
    match reply {
        Reply::Handle(h) => h,
        other => panic!("expected a handle, got {other:?}"),
    }
}

fn status(f: &mut Fixture, c: &Client) -> Status {
    match f.core.handle(c, Request::Status, Duration::ZERO) {
        Reply::Json(t) => serde_json::from_str(&t).unwrap(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_use_case_sets_its_nodes_and_cgroup_files_and_release_puts_them_back() {
    let mut f = board();
    let c = app(1);
    let h = handle(f.core.handle(&c, signal("ui-boost", 0), Duration::ZERO));
    assert_eq!(f.node(UCLAMP), "512");
    assert_eq!(f.tree.read(WEIGHT).trim(), "400");
    let st = status(&mut f, &c);
    assert_eq!(st.requests.len(), 1);
    assert_eq!(st.requests[0].usecase.as_deref(), Some("ui-boost"));
    assert_eq!(st.requests[0].lease, Lease::UntilReleased);
    assert_eq!(f.core.task_holders(), 1);
    assert_eq!(
        f.core
            .handle(&c, Request::Release { handle: h }, Duration::ZERO),
        Reply::Done
    );
    assert_eq!(f.node(UCLAMP), "0");
    // The cgroups Lever created (lever/ui and lever) are gone again.
    assert!(!f.tree.fs().exists(WEIGHT));
    assert!(!f.tree.fs().exists("/sys/fs/cgroup/lever"));
    assert_eq!(f.core.task_holders(), 0);
}

#[test]
fn by_id_and_variants_and_the_use_case_duration() {
    let mut f = board();
    let c = app(1);
    handle(f.core.handle(&c, signal("0x00030012", 60), Duration::ZERO));
    assert_eq!(f.node(UCLAMP), "600");
    let st = status(&mut f, &c);
    assert_eq!(st.requests[0].usecase.as_deref(), Some("video/60fps"));
    assert_eq!(st.requests[0].lease, Lease::from_ms(2000));
    f.core.expire(Duration::from_millis(1999));
    assert_eq!(f.node(UCLAMP), "600");
    f.core.expire(Duration::from_millis(2000));
    assert_eq!(f.node(UCLAMP), "0");
}

#[test]
fn a_perflock_and_a_use_case_aggregate_by_the_resource_policy() {
    let mut f = board();
    let (a, b) = (app(1), app(2));
    let lock = handle(f.core.handle(
        &a,
        Request::Acquire(Acquire {
            handle: None,
            lease: Lease::UntilReleased,
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            pairs: vec![(0x44000000, 700)],
        }),
        Duration::ZERO,
    ));
    assert_eq!(f.node(UCLAMP), "700");
    // max: the perflock's 700 beats the use case's 512.
    let uc = handle(f.core.handle(&b, signal("ui-boost", 0), Duration::ZERO));
    assert_eq!(f.node(UCLAMP), "700");
    f.core
        .handle(&a, Request::Release { handle: lock }, Duration::ZERO);
    assert_eq!(f.node(UCLAMP), "512");
    // The use case dies with its client.
    f.core.client_gone(2);
    assert_eq!(f.node(UCLAMP), "0");
    assert!(
        !f.tree.fs().exists(WEIGHT),
        "the cgroup Lever created is removed"
    );
    assert!(f
        .core
        .handle(&b, Request::Release { handle: uc }, Duration::ZERO)
        .ne(&Reply::Done));
}

#[test]
fn refusals_name_the_use_case_and_write_nothing() {
    let mut f = board();
    let c = app(1);
    match f.core.handle(&c, signal("rt-tune", 0), Duration::ZERO) {
        Reply::Error { code, message } => {
            assert_eq!(code, ErrorCode::NotPermitted);
            assert!(
                message.contains("rt-tune") && message.contains("system-only"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(f.node(RT), "950000");
    match f.core.handle(&c, signal("no-such", 0), Duration::ZERO) {
        Reply::Error { code, message } => {
            assert_eq!(code, ErrorCode::UnknownUseCase);
            assert!(message.contains("\"no-such\""), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // A system client may.
    let root = client(9, 0, true);
    handle(f.core.handle(&root, signal("rt-tune", 0), Duration::ZERO));
    assert_eq!(f.node(RT), "900000");
}

#[test]
fn a_crash_with_a_live_use_case_is_undone_at_the_next_start() {
    let mut f = board();
    let c = app(1);
    handle(f.core.handle(&c, signal("ui-boost", 0), Duration::ZERO));
    assert_eq!(f.tree.read(WEIGHT).trim(), "400");
    // kill -9: the core is gone without restoring anything.
    let Fixture { tree, state, core } = f;
    std::mem::forget(core);
    let (_, recovered) = TaskJournal::recover_and_open(state.path(), tree.fs()).unwrap();
    // The file's original, then the two cgroups Lever created, child
    // first: all gone again.
    assert_eq!(recovered.len(), 3, "{recovered:?}");
    assert!(recovered.iter().all(|r| r.result.is_ok()), "{recovered:?}");
    assert!(!tree.fs().exists("/sys/fs/cgroup/lever"));
}

#[test]
fn a_created_cgroup_stays_while_another_request_uses_it_and_goes_with_the_last() {
    let mut f = board();
    let (a, b) = (app(1), app(2));
    let first = handle(f.core.handle(&a, signal("ui-boost", 0), Duration::ZERO));
    let second = handle(f.core.handle(&b, signal("ui-boost", 0), Duration::ZERO));
    // The creator ends first: the cgroup (and its parent) stay for b.
    // (Its file values are not aggregated: a's end put back a's original.)
    f.core
        .handle(&a, Request::Release { handle: first }, Duration::ZERO);
    assert!(f.tree.fs().exists(WEIGHT));
    f.core
        .handle(&b, Request::Release { handle: second }, Duration::ZERO);
    assert!(
        !f.tree.fs().exists("/sys/fs/cgroup/lever"),
        "gone with the last"
    );
    // The hand-over was journalled: a restart owes nothing.
    let Fixture { tree, state, core } = f;
    drop(core);
    let (_, recovered) = TaskJournal::recover_and_open(state.path(), tree.fs()).unwrap();
    assert!(recovered.is_empty(), "{recovered:?}");
}

#[test]
fn a_crash_after_a_hand_over_still_removes_the_cgroup_at_the_next_start() {
    let mut f = board();
    let (a, b) = (app(1), app(2));
    let first = handle(f.core.handle(&a, signal("ui-boost", 0), Duration::ZERO));
    handle(f.core.handle(&b, signal("ui-boost", 0), Duration::ZERO));
    f.core
        .handle(&a, Request::Release { handle: first }, Duration::ZERO);
    let Fixture { tree, state, core } = f;
    std::mem::forget(core);
    let (_, recovered) = TaskJournal::recover_and_open(state.path(), tree.fs()).unwrap();
    assert!(recovered.iter().all(|r| r.result.is_ok()), "{recovered:?}");
    assert!(!tree.fs().exists("/sys/fs/cgroup/lever"), "{recovered:?}");
}

#[test]
fn a_cgroup_lever_did_not_create_or_that_holds_tasks_is_left_in_place() {
    // lever/ui exists before: only its file is put back.
    let mut f = board();
    f.tree.node(WEIGHT, "100\n");
    f.tree.node("/sys/fs/cgroup/lever/ui/cgroup.procs", "");
    let c = app(1);
    let h = handle(f.core.handle(&c, signal("ui-boost", 0), Duration::ZERO));
    f.core
        .handle(&c, Request::Release { handle: h }, Duration::ZERO);
    assert_eq!(f.tree.read(WEIGHT).trim(), "100");
    // Created by Lever, but someone else put a task in it meanwhile.
    let mut f = board();
    let h = handle(f.core.handle(&c, signal("ui-boost", 0), Duration::ZERO));
    f.tree
        .node("/sys/fs/cgroup/lever/ui/cgroup.procs", "4242\n");
    f.core
        .handle(&c, Request::Release { handle: h }, Duration::ZERO);
    assert_eq!(
        f.tree.read(WEIGHT).trim(),
        "100",
        "its file is still put back"
    );
    assert!(f.tree.fs().exists("/sys/fs/cgroup/lever/ui/cgroup.procs"));
}

fn report_of(reply: Reply) -> lever_protocol::Acquired {
    match reply {
        Reply::Json(t) => serde_json::from_str(&t).unwrap(),
        other => panic!("expected a report, got {other:?}"),
    }
}

fn signal_report(name: &str) -> Request {
    match signal(name, 0) {
        Request::Signal(s) => Request::Signal(Signal { report: true, ..s }),
        other => other,
    }
}

/// Issue 27 item 3: a use case that only sets cgroup files, or only has
/// thread rules, is a request like any other (it was refused: "sets no
/// resource this board has").
#[test]
fn a_use_case_with_only_cgroups_or_only_thread_rules_is_granted_and_ends() {
    let mut f = board();
    let c = app(1);
    let bg = "/sys/fs/cgroup/lever/bg/cpu.weight";
    let h = handle(f.core.handle(&c, signal("bg-cgroup", 0), Duration::ZERO));
    assert_eq!(f.tree.read(bg).trim(), "50");
    let st = status(&mut f, &c);
    assert_eq!(st.requests.len(), 1);
    assert_eq!(st.requests[0].usecase.as_deref(), Some("bg-cgroup"));
    assert!(st.requests[0].pairs.is_empty());
    assert_eq!(
        f.core
            .handle(&c, Request::Release { handle: h }, Duration::ZERO),
        Reply::Done
    );
    assert!(!f.tree.fs().exists(bg), "the cgroup Lever created is gone");
    // Timed and ended with its client like any request.
    let timed = Request::Signal(Signal {
        lease: SignalLease::Given(Lease::from_ms(100)),
        ..match signal("ui-threads", 0) {
            Request::Signal(s) => s,
            _ => unreachable!(),
        }
    });
    handle(f.core.handle(&c, timed, Duration::ZERO));
    assert_eq!(f.core.live(), 1);
    f.core.expire(Duration::from_millis(100));
    assert_eq!(f.core.live(), 0);
    handle(f.core.handle(&c, signal("ui-threads", 0), Duration::ZERO));
    f.core.client_gone(1);
    assert_eq!(f.core.live(), 0);
}

/// Issue 27 item 3, from app detection: an app whose use case only has
/// thread rules gets it (its request lives while the app runs).
#[test]
fn an_app_whose_use_case_only_has_thread_rules_gets_it() {
    let tree = FakeTree::with(&[
        (UCLAMP, "0\n"),
        (RT, "950000\n"),
        (
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "schedutil\n",
        ),
    ]);
    let apps = "app_filter:\n  require_tty_or_display: false\napps:\n  - name: ui\n    exec: ui-app\n    usecases: [ui-threads]\n";
    let mut f = fixture_of(
        tree,
        &format!("{TARGET}{USECASES}{apps}"),
        Limits::default(),
    );
    let id = app(1).id.clone();
    let problems = f
        .core
        .app_started(1 << 40, 4242, &id, "ui", Duration::ZERO)
        .unwrap();
    assert!(
        problems.iter().all(|p| !p.contains("sets no")),
        "{problems:?}"
    );
    assert_eq!(f.core.live(), 1);
    let st = status(&mut f, &client(9, 0, true));
    assert_eq!(st.requests[0].usecase.as_deref(), Some("ui-threads"));
    f.core.app_exited(1 << 40);
    assert_eq!(f.core.live(), 0);
}

/// Issue 27 item 4: what was not applied is in the report, with why: a
/// client process that is not in the (fake) root's /proc gets no thread
/// rule; a kernel without a cgroup2 hierarchy (cgroup v1, as on the VM the
/// issue was filed from) gets no cpu.weight. STATUS says once that thread
/// rules cannot reach this machine's processes.
#[test]
fn the_report_says_what_of_a_use_case_was_not_applied_and_why() {
    let mut f = board();
    let c = app(1);
    let doc = report_of(
        f.core
            .handle(&c, signal_report("ui-threads"), Duration::ZERO),
    );
    assert_eq!(doc.usecase.as_deref(), Some("ui-threads"));
    assert!(doc.resources.is_empty());
    assert_eq!(doc.tasks_applied, Some(0));
    assert_eq!(doc.not_applied.len(), 1, "{doc:?}");
    assert_eq!(doc.not_applied[0].what, "thread rule for comm ui*");
    assert!(
        doc.not_applied[0].why.contains("process 1001 is not in"),
        "{doc:?}"
    );
    let st = status(&mut f, &c);
    let why = st
        .task_rules
        .expect("STATUS says thread rules cannot apply");
    assert!(why.contains("a simulated board"), "{why}");
    // Everything applied: nothing listed, the count given.
    let doc = report_of(
        f.core
            .handle(&c, signal_report("bg-cgroup"), Duration::ZERO),
    );
    assert!(doc.not_applied.is_empty(), "{doc:?}");
    assert_eq!(doc.tasks_applied, Some(3), "lever, lever/bg, cpu.weight");

    // No cgroup2 hierarchy (cgroup v1): the node is set, cpu.weight is
    // not, and the report says so (the request holds the rest).
    let tree = FakeTree::with(&[
        (UCLAMP, "0\n"),
        (RT, "950000\n"),
        (
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "schedutil\n",
        ),
        ("/proc/mounts", ""),
    ]);
    let mut f = fixture_of(tree, &format!("{TARGET}{USECASES}"), Limits::default());
    let doc = report_of(f.core.handle(&c, signal_report("ui-boost"), Duration::ZERO));
    assert_eq!(f.node(UCLAMP), "512");
    assert_eq!(doc.not_applied.len(), 1, "{doc:?}");
    assert_eq!(doc.not_applied[0].what, "cpu.weight of lever/ui");
    assert!(doc.not_applied[0].why.contains("cgroup v1"), "{doc:?}");
    // A cgroup2 hierarchy without the cpu controller (bound to v1).
    let tree = FakeTree::with(&[
        (UCLAMP, "0\n"),
        (RT, "950000\n"),
        (
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "schedutil\n",
        ),
        ("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
        ("/sys/fs/cgroup/cgroup.controllers", "cpuset memory\n"),
        ("/sys/fs/cgroup/cgroup.subtree_control", "cpuset\n"),
        ("/sys/fs/cgroup/cgroup.procs", ""),
    ]);
    let mut f = fixture_of(tree, &format!("{TARGET}{USECASES}"), Limits::default());
    let doc = report_of(f.core.handle(&c, signal_report("ui-boost"), Duration::ZERO));
    assert_eq!(doc.not_applied.len(), 1, "{doc:?}");
    assert!(
        doc.not_applied[0]
            .why
            .contains("the cpu controller is not available")
            && doc.not_applied[0].why.contains("cgroup v1"),
        "{doc:?}"
    );
    // Without the report flag the reply is the HANDLE it always was.
    handle(
        f.core
            .handle(&app(2), signal("ui-boost", 0), Duration::ZERO),
    );
}
