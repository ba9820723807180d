//! A URM configuration directory (tests/fixtures/urm: common, target and
//! custom layers, written for these tests in URM's documented format)
//! imported for a simulated QCS6490: every signal and app present, the
//! override order kept, every unmapped field warned about, and a typo an
//! error at its file:line.

use lever_engine::resource::Permission;
use lever_kernel::KernelFs;
use lever_targets::usecase::parse_attrs;
use lever_urm::{import, UrmError};

fn fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/urm")
}

fn board() -> (tempfile::TempDir, KernelFs) {
    let dir = tempfile::tempdir().unwrap();
    lever_sim::create("qcs6490", dir.path()).unwrap();
    let fs = KernelFs::new(dir.path());
    (dir, fs)
}

#[test]
fn every_signal_and_app_is_imported_and_binds() {
    let (_d, fs) = board();
    let clusters = lever_targets::discover_clusters(&fs).unwrap();
    let out = import(&fixture(), "kodiak-urm", &clusters).unwrap();
    let t = &out.target;
    let names: Vec<&str> = t.usecases.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        names,
        ["app-launch", "camera-preview", "video-decode", "low-memory"]
    );
    // Signal codes are use case ids.
    let ids: Vec<u32> = t.usecases.iter().map(|u| u.id).collect();
    assert_eq!(ids, [0x0002_0001, 0x0002_0002, 0x0002_0003, 0x0002_0004]);
    let apps: Vec<&str> = t.apps.iter().map(|a| a.pattern.name.as_str()).collect();
    assert_eq!(apps, ["gst-launch-1-0", "game"]);
    assert_eq!(t.apps[0].pattern.exec, "gst-launch-1.0");
    assert_eq!(t.apps[0].usecases, ["camera-preview"]);
    assert_eq!(
        t.apps[0].threads[0].cgroup.as_deref(),
        Some("camera-cgroup")
    );
    assert!(t.app_filter.require_tty_or_display);

    // custom/ overrides common/: APP_LAUNCH lasts 3 s and boosts prime.
    let launch = &t.usecases[0];
    assert_eq!(launch.duration_ms, 3000);
    let target = t.bind(&fs).unwrap();
    let resolved = target.usecase("app-launch").unwrap().resolve(&[]);
    let nodes: Vec<(&str, i64)> = resolved
        .settings
        .nodes
        .iter()
        .map(|n| (n.resource.as_str(), n.value))
        .collect();
    assert_eq!(
        nodes,
        [
            ("cpu_min_freq.big", 1516800),
            ("cpu_min_freq.prime", 2035200),
            ("sched_util_clamp_min", 1024)
        ]
    );
    // target/ overrides common/: swappiness thresholds 10..100.
    let swap = target.by_name("vm_swappiness").unwrap();
    assert_eq!((swap.low, swap.high), (10, 100));
    // Timeout -1 = until released; variants by ExtraAttrs.
    let video = target.usecase("video-decode").unwrap();
    assert_eq!(video.duration_ms, 0);
    let r = video.resolve(&parse_attrs("fps=60,width=1920,height=1080").unwrap());
    assert_eq!(r.variant.as_deref(), Some("f60-w1920-h1080"));
    assert_eq!(r.settings.nodes[0].value, 1228800);
    // A cgroup resource becomes a cgroup write.
    let cam = target.usecase("camera-preview").unwrap().resolve(&[]);
    assert_eq!(cam.settings.cgroups[0].cgroup, "camera-cgroup");
    assert_eq!(
        target.usecase("low-memory").unwrap().permission,
        Permission::System
    );
}

#[test]
fn every_unmapped_field_is_named() {
    let (_d, fs) = board();
    let clusters = lever_targets::discover_clusters(&fs).unwrap();
    let out = import(&fixture(), "kodiak-urm", &clusters).unwrap();
    let text: Vec<String> = out.warnings.iter().map(|w| w.to_string()).collect();
    let has = |file: &str, field: &str, gist: &str| {
        assert!(
            text.iter().any(|w| w.contains(file)
                && w.contains(&format!("field `{field}`"))
                && w.contains(gist)),
            "no warning {file} {field} {gist:?} in:\n{}",
            text.join("\n")
        )
    };
    has(
        "common/ResourcesConfig.yaml:12",
        "ResourceConfigs[0].Modes",
        "display state",
    );
    has(
        "common/ResourcesConfig.yaml:4",
        "ResourceConfigs[0].Policy",
        "lower_is_better on a floor",
    );
    has(
        "common/ResourcesConfig.yaml:24",
        "ResourceConfigs[2].Unit",
        "on a kHz node",
    );
    // The same warning for another entry is said once, with its line.
    has(
        "common/ResourcesConfig.yaml:4",
        "ResourceConfigs[0].Policy",
        "(2 entries like this one; also at lines 24)",
    );
    has(
        "common/ResourcesConfig.yaml",
        "ResourceConfigs[6].Path",
        "custom resource",
    );
    has(
        "common/SignalsConfig.yaml",
        "SignalConfigs[3].Resources[0]",
        "URM writes the first (1228800)",
    );
    has(
        "common/SignalsConfig.yaml",
        "SignalConfigs[5].Enable",
        "left out",
    );
    has(
        "common/InitConfig.yaml",
        "InitConfigs[2].IRQConfigs",
        "IRQ affinity",
    );
    has(
        "target/PerApp.yaml",
        "PerAppConfigs[1].Configurations",
        "0x00020009 is not an imported use case",
    );
    // CPU max frequency is a ceiling: lower_is_better stays min, no warning.
    assert!(
        !text.iter().any(|w| w.contains("ResourceConfigs[3].Policy")),
        "{text:?}"
    );
    assert!(
        out.yaml
            .contains("name: cpu_max_freq\n    opcode: 0x4C804000\n    per: cluster"),
        "{}",
        out.yaml
    );
}

#[test]
fn a_typo_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("custom")).unwrap();
    let file = dir.path().join("custom/SignalsConfig.yaml");
    std::fs::write(
        &file,
        "SignalConfigs:\n  - SigId: \"0x1\"\n    Category: \"0x2\"\n    Timout: 200\n    Resources: []\n",
    )
    .unwrap();
    let e = import(dir.path(), "t", &[]).unwrap_err();
    assert!(
        matches!(
            e,
            UrmError::Field(lever_urm::FieldError {
                line: 4,
                col: 5,
                ..
            })
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "{}:4:5: field `SignalConfigs[0].Timout`: unknown key",
            file.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("Timeout"), "{msg}");

    std::fs::write(&file, "SignalConfigs:\n  - SigId: \"0x1\"\n    Category: \"0x2\"\n    Resources:\n      - {ResCode: \"0x1\", Value: [1]}\n").unwrap();
    let msg = import(dir.path(), "t", &[]).unwrap_err().to_string();
    assert!(
        msg.contains(":5:26: field `SignalConfigs[0].Resources[0].Value`: unknown key"),
        "{msg}"
    );

    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        import(empty.path(), "t", &[]),
        Err(UrmError::Empty { .. })
    ));
}
