//! Cross-crate checks on every simulated board: the detected target builds
//! an engine, and the seed's perflock example runs end to end on the tree.
use lever_engine::*;
use lever_kernel::KernelFs;
use lever_testkit::FakeTree;
use lever_tunables::{read_current, Applier};
use std::time::Duration;

fn board(name: &str) -> (FakeTree, KernelFs) {
    let tree = FakeTree::new();
    lever_sim::create(name, tree.root()).unwrap();
    let fs = tree.fs().clone();
    (tree, fs)
}

fn engine_for(fs: &KernelFs) -> Engine {
    let target = lever_targets::detect(fs).unwrap();
    let mut engine = Engine::new(target.resources.clone()).expect("target is a valid engine");
    for (i, spec) in target.resources.iter().enumerate() {
        let level = read_current(fs, spec).ok().and_then(|r| r.level);
        engine.set_original(i, level);
    }
    engine
}

#[test]
fn every_board_target_builds_an_engine() {
    for b in lever_sim::boards() {
        let (_d, fs) = board(b.name);
        let engine = engine_for(&fs);
        assert!(engine.specs().len() > 10, "{}", b.name);
    }
}

#[test]
fn seed_perflock_example_on_simulated_qcs6490() {
    let (_d, fs) = board("qcs6490");
    let mut engine = engine_for(&fs);
    let mut applier = Applier::new(fs.clone());
    let min = "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";
    let max = "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq";
    let (orig_min, orig_max) = (fs.read(min).unwrap(), fs.read(max).unwrap());

    // perf_lock_acq(0, 0, {0x44008100, 1958400}, 2): Silver min to 1.9 GHz.
    let req = Request {
        id: RequestId(1),
        owner: OwnerId(1),
        priority: PriorityClass::ThirdPartyLow,
        deadline: None,
        pairs: vec![(Opcode(0x44008100), 1958400)],
    };
    let plan = engine.acquire(req, Duration::ZERO).unwrap();
    for a in applier.apply(&engine, &plan) {
        a.result.unwrap();
    }
    assert_eq!(fs.read(min).unwrap(), "1958400");

    // A Silver ceiling of 1.5 GHz from a second client: the ceiling wins and
    // the floor follows it down, in an order the kernel accepts.
    let req = Request {
        id: RequestId(2),
        owner: OwnerId(2),
        priority: PriorityClass::ThirdPartyLow,
        deadline: Some(Duration::from_millis(30_000)),
        pairs: vec![(Opcode(0x4400C100), 1516800)],
    };
    let plan = engine.acquire(req, Duration::ZERO).unwrap();
    assert_eq!(
        plan.writes[0].opcode,
        Opcode(0x44008100),
        "min must go down first"
    );
    for a in applier.apply(&engine, &plan) {
        a.result.unwrap();
    }
    assert_eq!(fs.read(min).unwrap(), "1516800");
    assert_eq!(fs.read(max).unwrap(), "1516800");

    // The timed ceiling expires, then the floor is released: originals back.
    let plan = engine.expire(Duration::from_millis(30_000));
    applier.apply(&engine, &plan);
    assert_eq!(fs.read(min).unwrap(), "1958400");
    let plan = engine.release(RequestId(1)).unwrap();
    applier.apply(&engine, &plan);
    assert_eq!(
        (fs.read(min).unwrap(), fs.read(max).unwrap()),
        (orig_min, orig_max)
    );
    assert!(applier.originals().is_empty());
}

#[test]
fn governor_enum_and_pm_qos_hold_fd_on_simulated_qcs6490() {
    let (_d, fs) = board("qcs6490");
    let mut engine = engine_for(&fs);
    let mut applier = Applier::new(fs.clone());
    let gov = engine
        .specs()
        .position(|s| s.name == "cpu_governor.gold")
        .expect("gold governor");
    let performance = engine
        .spec(gov)
        .unwrap()
        .parse_level("performance")
        .unwrap();
    let qos = engine
        .specs()
        .position(|s| s.kind == ResourceKind::HoldFd)
        .unwrap();
    let req = Request {
        id: RequestId(9),
        owner: OwnerId(1),
        priority: PriorityClass::SystemHigh,
        deadline: None,
        pairs: vec![
            (engine.spec(gov).unwrap().opcode, performance),
            (engine.spec(qos).unwrap().opcode, 0),
        ],
    };
    let node = "/sys/devices/system/cpu/cpufreq/policy4/scaling_governor";
    let before = fs.read(node).unwrap();
    let plan = engine.acquire(req, Duration::ZERO).unwrap();
    for a in applier.apply(&engine, &plan) {
        a.result.unwrap();
    }
    assert_eq!(fs.read(node).unwrap(), "performance");
    let r = read_current(&fs, engine.spec(qos).unwrap()).unwrap();
    assert_eq!(r.level, Some(0));
    let plan = engine.release(RequestId(9)).unwrap();
    applier.apply(&engine, &plan);
    assert_eq!(fs.read(node).unwrap(), before);
}
