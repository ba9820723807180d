//! Use cases: the qcs6490 built-ins, resolution to engine adjustments,
//! variants, a file of their own, and every error at its file:line:col.

mod common;

use lever_engine::resource::{Opcode, Permission};
use lever_targets::usecase::{parse_attrs, Attr};
use lever_targets::{load_builtin, parse, TargetError};
use lever_tasks::{CgroupKnob, ThreadSetting};

#[test]
fn qcs6490_defines_the_seed_use_cases() {
    let file = load_builtin("qcs6490").unwrap();
    let names: Vec<&str> = file.usecases.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        names,
        ["app-launch", "camera-preview", "video-decode", "game"]
    );
    let tree = common::qcs6490();
    let target = file.bind(tree.fs()).unwrap();

    let launch = target.usecase("app-launch").unwrap();
    assert_eq!(launch.duration_ms, 2000);
    assert_eq!(launch.permission, Permission::ThirdParty);
    assert_eq!(target.usecase("0x00030001").unwrap().name, "app-launch");

    let cam = target.usecase("camera-preview").unwrap().resolve(&[]);
    assert_eq!(cam.variant, None);
    // Gold min frequency is 0x44008000 with cluster id 0 (seed 000 §3.4).
    assert!(cam.adjustments().contains(&(Opcode(0x44008000), 1228800)));
    // Every adjustment names a bound resource.
    for (op, _) in cam.adjustments() {
        assert!(target.by_opcode(op).is_some(), "{op}");
    }
    assert_eq!(cam.settings.cgroups[0].cgroup, "lever/camera");
    assert_eq!(cam.settings.cgroups[0].knob, CgroupKnob::UclampMin);
    let rule = &cam.settings.threads[0];
    assert!(rule.matches("cam-isp") && !rule.matches("weston"));
    assert_eq!(
        rule.settings[0],
        ThreadSetting::Affinity {
            cpus: vec![4, 5, 6, 7]
        }
    );
    assert_eq!(rule.cgroup.as_deref(), Some("lever/camera"));
    // The part lever_tasks::apply_plan takes.
    let plan = cam.task_plan();
    assert_eq!((plan.cgroups.len(), plan.threads.len()), (2, 1));
    assert_eq!(plan.move_to, None);
}

#[test]
fn video_decode_variants_by_attributes() {
    let file = load_builtin("qcs6490").unwrap();
    let video = file
        .usecases
        .iter()
        .find(|u| u.name == "video-decode")
        .unwrap();
    let gold = Opcode(0x44008000);
    let gpu = file
        .resources
        .iter()
        .find(|t| t.name == "gpu_min_freq")
        .unwrap()
        .opcode;
    let r = video.resolve(&parse_attrs("fps=30,width=3840,height=2160").unwrap());
    assert_eq!(r.variant.as_deref(), Some("4k30"));
    let adj = r.adjustments();
    // Base (silver) plus the variant's settings.
    assert!(adj.contains(&(Opcode(0x44008100), 1152000)), "{adj:?}");
    assert!(adj.contains(&(gold, 1516800)));
    assert!(adj.contains(&(gpu, 550000000)));
    let r = video.resolve(&[(Attr::Fps, 60), (Attr::Height, 1080)]);
    assert_eq!(r.variant.as_deref(), Some("1080p60"));
    assert!(r.adjustments().contains(&(gold, 1228800)));
}

const TARGET: &str = "\
target: t
clusters:
  - { name: little, id: 0, policy: 0, cpus: 0-1 }
resources:
  - name: min_freq
    opcode: 0x44008000
    per: cluster
    node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_min_freq
    unit: kHz
    low: 0
    high: 3000000
    aggregation: max
    permission: third-party
  - name: governor
    opcode: 0x48000000
    node: /sys/devices/system/cpu/cpufreq/policy0/scaling_governor
    kind: enum
    values: [powersave, schedutil, performance]
    aggregation: max
    permission: third-party
";

fn with_usecases(body: &str) -> String {
    format!("{TARGET}usecases:\n{body}")
}

fn err(text: &str) -> String {
    match parse("t.yaml", text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn names_opcodes_and_enum_words_resolve() {
    let text = with_usecases(
        "  - name: boost\n    id: 7\n    permission: system\n    duration: 500\n    resources:\n      min_freq.little: 1000000\n      0x48000000: performance\n",
    );
    let f = parse("t.yaml", &text).unwrap();
    let u = &f.usecases[0];
    assert_eq!(
        (u.id, u.duration_ms, u.permission),
        (7, 500, Permission::System)
    );
    assert_eq!(u.line, 22);
    assert_eq!(
        u.resolve(&[]).adjustments(),
        vec![(Opcode(0x44008000), 1000000), (Opcode(0x48000000), 2)]
    );
}

#[test]
fn each_mistake_at_its_line_and_field() {
    let cases: &[(&str, &str)] = &[
        (
            "  - name: a\n    id: 1\n    resorces: {}\n",
            "t.yaml:24:5: field `usecases[0].resorces`: unknown key (expected one of: name, id, description, duration, permission, resources, cgroups, threads, variants); did you mean `resources`?",
        ),
        (
            "  - name: a\n    id: 1\n    resources: { min_freq.big: 1 }\n",
            "t.yaml:24:18: field `usecases[0].resources.min_freq.big`: `min_freq.big` is not a resource of this target",
        ),
        (
            "  - name: a\n    id: 1\n    resources: { min_freq.little: 4000000 }\n",
            "t.yaml:24:35: field `usecases[0].resources.min_freq.little`: 4000000 is above the resource's high bound 3000000 kHz",
        ),
        (
            "  - name: a\n    id: 1\n    resources: { governor: turbo }\n",
            "t.yaml:24:28: field `usecases[0].resources.governor`: unknown value `turbo` (allowed: powersave, schedutil, performance)",
        ),
        (
            "  - name: a\n    id: 0x100000000\n    resources: { governor: schedutil }\n",
            "t.yaml:23:9: field `usecases[0].id`: the id must fit in 32 bits",
        ),
        (
            "  - name: a\n    id: 1\n    resources: { governor: schedutil }\n  - name: b\n    id: 1\n    resources: { governor: schedutil }\n",
            "t.yaml:26:9: field `usecases[1].id`: id 0x00000001 is already use case `a` (t.yaml:22)",
        ),
        (
            "  - name: a\n    id: 1\n    duration: soon\n    resources: { governor: schedutil }\n",
            "t.yaml:24:15: field `usecases[0].duration`: `soon`:",
        ),
        (
            "  - name: a\n    id: 1\n    cgroups: { lever/x: { cpu.weight: 0 } }\n",
            "t.yaml:24:39: field `usecases[0].cgroups.lever/x.cpu.weight`: `0` is not a value of cpu.weight",
        ),
        (
            "  - name: a\n    id: 1\n    cgroups: { lever/x: { cpu.wieght: 5 } }\n",
            "t.yaml:24:27: field `usecases[0].cgroups.lever/x.cpu.wieght`: unknown cgroup file",
        ),
        (
            "  - name: a\n    id: 1\n    cgroups: { /abs: { cpu.weight: 5 } }\n",
            "t.yaml:24:16: field `usecases[0].cgroups`: `/abs` is not a cgroup path",
        ),
        (
            "  - name: a\n    id: 1\n    threads:\n      - { comm: x, policy: fifo, priority: 0 }\n",
            "t.yaml:25:44: field `usecases[0].threads[0].priority`: policy fifo takes priority 1..=99, not 0",
        ),
        (
            "  - name: a\n    id: 1\n    threads:\n      - { comm: x, uclamp_min: 2000 }\n",
            "t.yaml:25:32: field `usecases[0].threads[0].uclamp_min`: 2000 is out of range 0..=1024",
        ),
        (
            "  - name: a\n    id: 1\n    threads:\n      - { comm: x, nice: 20 }\n",
            "t.yaml:25:26: field `usecases[0].threads[0].nice`: 20 is out of range -20..=19",
        ),
        (
            "  - name: a\n    id: 1\n    variants:\n      - name: v\n        when: { fps: 30, depth: 8 }\n        resources: { governor: schedutil }\n",
            "t.yaml:26:26: field `usecases[0].variants[0].when.depth`: unknown key (expected one of: fps, width, height)",
        ),
        (
            "  - name: a\n    id: 1\n",
            "t.yaml:22:5: field `usecases[0].resources`: the use case sets nothing",
        ),
    ];
    for (body, want) in cases {
        let got = err(&with_usecases(body));
        assert!(got.starts_with(want), "\n  got: {got}\n want: {want}...");
    }
}

#[test]
fn a_file_of_their_own_adds_to_the_target() {
    let mut f = parse(
        "t.yaml",
        &with_usecases("  - name: a\n    id: 1\n    resources: { governor: schedutil }\n"),
    )
    .unwrap();
    let added = f
        .add_usecases(
            "extra.yaml",
            "target: t\nusecases:\n  - name: game\n    id: 2\n    threads:\n      - { comm: render*, policy: fifo, priority: 5 }\n",
        )
        .unwrap();
    assert_eq!(added, 1);
    assert_eq!(f.usecases[1].file, "extra.yaml");
    let e = f
        .add_usecases(
            "dup.yaml",
            "usecases:\n  - name: a\n    id: 3\n    resources: { governor: powersave }\n",
        )
        .unwrap_err();
    assert!(
        e.to_string().starts_with("dup.yaml:2:11: field `usecases[0].name`: duplicate use case `a` (first defined at t.yaml:22)"),
        "{e}"
    );
    let e = f
        .add_usecases("other.yaml", "target: u\nusecases: []\n")
        .unwrap_err();
    assert!(
        matches!(
            e,
            TargetError::Field {
                error: lever_yaml::FieldError { line: 1, .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("for target `u`, not `t`"), "{e}");
}

#[test]
fn qcs6490_apps_and_their_matcher() {
    let tree = common::qcs6490();
    let target = load_builtin("qcs6490").unwrap().bind(tree.fs()).unwrap();
    let app = target.app("gst-camera").unwrap();
    assert_eq!(app.pattern.exec, "gst-launch-1.0");
    assert_eq!(app.usecases, ["camera-preview"]);
    assert_eq!(app.move_to.as_deref(), Some("lever/focused"));
    assert_eq!(app.task_plan().move_to.as_deref(), Some("lever/focused"));
    assert!(target.app_filter.require_tty_or_display);
    let m = target.app_matcher().unwrap();
    assert!(m.wants_comm("gst-launch-1.0"));
}

#[test]
fn app_mistakes_at_their_line() {
    let base = with_usecases("  - name: cam\n    id: 1\n    resources: { governor: schedutil }\n");
    let cases: &[(&str, &str)] = &[
        (
            "apps:\n  - name: a\n    exec: x\n    usecases: [camera]\n",
            "t.yaml:28:16: field `apps[0].usecases[0]`: `camera` is not a use case of this target (use cases: cam)",
        ),
        (
            "apps:\n  - name: a\n    exec: /usr/bin/x\n    usecases: [cam]\n",
            "t.yaml:27:11: field `apps[0].exec`: `/usr/bin/x` is a path",
        ),
        (
            "apps:\n  - name: a\n    exec: x\n    cmdline: \"(\"\n    usecases: [cam]\n",
            "t.yaml:28:14: field `apps[0].cmdline`: not a regular expression",
        ),
        (
            "apps:\n  - name: a\n    exec: x\n    usecase: [cam]\n",
            "t.yaml:28:5: field `apps[0].usecase`: unknown key (expected one of: name, exec, cmdline, cgroup, usecases, move_to, threads); did you mean `usecases`?",
        ),
        (
            "app_filter: { require_tty: true }\n",
            "t.yaml:25:15: field `app_filter.require_tty`: unknown key",
        ),
    ];
    for (tail, want) in cases {
        let got = err(&format!("{base}{tail}"));
        assert!(got.starts_with(want), "\n  got: {got}\n want: {want}...");
    }
    let f = parse(
        "t.yaml",
        &format!("{base}apps:\n  - name: a\n    exec: x\n    usecases: [\"0x1\"]\n"),
    )
    .unwrap();
    assert_eq!(f.apps[0].usecases, ["cam"]);
}

#[test]
fn qcs6490_game_use_case_floors_cpu_and_gpu_until_released() {
    let file = load_builtin("qcs6490").unwrap();
    let tree = common::qcs6490();
    let target = file.bind(tree.fs()).unwrap();
    let game = target.usecase("game").unwrap();
    // GameMode clients hold it until they unregister (docs/dbus.md).
    assert_eq!(game.duration_ms, 0);
    assert_eq!(game.permission, Permission::ThirdParty);
    assert_eq!(target.usecase("0x00030004").unwrap().name, "game");
    let resolved = game.resolve(&[]);
    // Gold min frequency (cluster id 0, seed 000 §3.4) gets a floor.
    assert!(resolved
        .adjustments()
        .contains(&(Opcode(0x44008000), 1516800)));
    assert_eq!(resolved.adjustments().len(), 3);
}

/// A `kind: cpulist` resource (a cgroup's `cpuset.cpus`): its values are
/// CPU lists, held as masks, written back in the kernel's list form.
#[test]
fn a_cpulist_resource_takes_and_writes_cpu_lists() {
    let text = "\
target: t
resources:
  - name: audio_cpus
    opcode: 0x4FFC0000
    kind: cpulist
    node: /sys/fs/cgroup/audio/cpuset.cpus
    unit: cpus
    low: 0
    high: 0xFF
    aggregation: newest
    permission: system
usecases:
  - name: pin
    id: 1
    resources:
      audio_cpus: \"0-1,3\"
";
    let f = parse("t.yaml", text).unwrap();
    assert_eq!(
        f.usecases[0].resolve(&[]).adjustments(),
        vec![(Opcode(0x4FFC0000), 0b1011)]
    );
    let bad = text.replace("\"0-1,3\"", "\"0-x\"");
    let e = err(&bad);
    assert!(e.contains("`0-x` is not a CPU list such as 0-1,3"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let fs = lever_kernel::KernelFs::new(dir.path());
    fs.create_node("/sys/fs/cgroup/audio/cpuset.cpus", "\n")
        .unwrap();
    let t = f.bind(&fs).unwrap();
    let spec = &t.resources[0];
    assert_eq!(spec.kind.as_str(), "cpulist");
    assert_eq!(spec.render(0b1011), "0-1,3");
    assert_eq!(spec.render(0), "");
    assert_eq!(spec.parse_level("0-1,3\n"), Some(0b1011));
    assert_eq!(spec.parse_level(""), Some(0));
    assert_eq!(spec.parse_level("63"), None);
}
