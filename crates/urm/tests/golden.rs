//! Golden tests: every URM configuration directory of the shared
//! third-party tree (`../shared/third-party/userspace-resource-manager`
//! from the repository root) imported for a simulated QCS6490, or refused
//! where URM refuses. The output (target file and warnings, or the error)
//! is compared with `tests/golden/NAME.txt`; `LEVER_BLESS_URM=1` rewrites
//! them. Without the shared tree the test says why it skips, and fails
//! under `CI=true`.

use lever_kernel::KernelFs;
use std::path::{Path, PathBuf};

fn urm_tree() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/third-party/userspace-resource-manager");
    if dir.join("configs").is_dir() {
        return Some(dir);
    }
    let why = format!("{}: URM's tree is not there; skipped", dir.display());
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{why} (CI=true: the shared tree is required)");
    }
    eprintln!("{why}");
    None
}

/// The import's text, with the tree's and the temporary paths shortened.
fn run(dir: &Path, tree: &Path) -> String {
    let sim = tempfile::tempdir().unwrap();
    lever_sim::create("qcs6490", sim.path()).unwrap();
    let clusters = lever_targets::discover_clusters(&KernelFs::new(sim.path())).unwrap();
    let text = match lever_urm::import(dir, "urm", &clusters) {
        Ok(out) => {
            let mut t = out.yaml.clone();
            t.push_str(&format!("# {} warnings\n", out.warnings.len()));
            for w in &out.warnings {
                t.push_str(&format!("# warning: {w}\n"));
            }
            t
        }
        Err(e) => format!("refused: {e}\n"),
    };
    text.replace(&tree.display().to_string(), "URM")
        .replace(&dir.display().to_string(), "DIR")
}

fn check(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.txt"));
    if std::env::var("LEVER_BLESS_URM").as_deref() == Ok("1") {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (LEVER_BLESS_URM=1 writes it)", path.display()));
    assert!(
        want == got,
        "{name}: the import drifted from {} (LEVER_BLESS_URM=1 rewrites it):\n{got}",
        path.display()
    );
}

/// A directory in URM's layout made of files of the tree.
fn layout(files: &[(&str, &Path)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (to, from) in files {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to).unwrap();
    }
    dir
}

#[test]
fn configs_dir_imports() {
    let Some(tree) = urm_tree() else { return };
    let got = run(&tree.join("configs"), &tree);
    assert!(!got.starts_with("refused"), "{got}");
    check("configs", &got);
}

#[test]
fn tests_configs_dir_imports() {
    let Some(tree) = urm_tree() else { return };
    let got = run(&tree.join("tests/Configs"), &tree);
    assert!(!got.starts_with("refused"), "{got}");
    check("tests-configs", &got);
}

/// URM's layout on a board: configs/ as common/, the test configuration
/// as target/, the add-on files as custom/.
#[test]
fn layered_board_dir_imports() {
    let Some(tree) = urm_tree() else { return };
    let c = tree.join("configs");
    let t = tree.join("tests/Configs");
    let dir = layout(&[
        (
            "common/ResourcesConfig.yaml",
            &c.join("ResourcesConfig.yaml"),
        ),
        ("common/SignalsConfig.yaml", &c.join("SignalsConfig.yaml")),
        ("common/InitConfig.yaml", &c.join("InitConfig.yaml")),
        (
            "target/ResourcesConfig.yaml",
            &t.join("ResourcesConfig.yaml"),
        ),
        ("target/SignalsConfig.yaml", &t.join("SignalsConfig.yaml")),
        ("target/InitConfig.yaml", &t.join("InitConfig.yaml")),
        ("target/PerApp.yaml", &t.join("PerApp.yaml")),
        (
            "custom/ResourcesConfig.yaml",
            &t.join("ResourcesConfigAddOn.yaml"),
        ),
        (
            "custom/SignalsConfig.yaml",
            &t.join("SignalsConfigAddOn.yaml"),
        ),
    ]);
    let got = run(dir.path(), &tree);
    assert!(!got.starts_with("refused"), "{got}");
    check("layered", &got);
}

/// URM's deliberately invalid file (tests/Configs/InvalidSyntax.yaml) is
/// refused at its syntax error, as libyaml refuses it.
#[test]
fn invalid_syntax_is_refused() {
    let Some(tree) = urm_tree() else { return };
    let dir = layout(&[(
        "custom/ResourcesConfig.yaml",
        &tree.join("tests/Configs/InvalidSyntax.yaml"),
    )]);
    let got = run(dir.path(), &tree);
    assert!(
        got.starts_with("refused: DIR/custom/ResourcesConfig.yaml:"),
        "{got}"
    );
    check("invalid-syntax", &got);
}

/// URM's cgroups: those with `Create: true` are made (with their parents
/// and controllers) as URM makes them at start, and each cgroup of
/// `CgroupsInfo` gets the cgroup resources, selected by `Values[0]`, that
/// bind once it exists.
#[test]
fn cgroups_are_created_and_their_resources_bind() {
    let Some(tree) = urm_tree() else { return };
    let c = tree.join("configs");
    let t = tree.join("tests/Configs");
    let dir = layout(&[
        (
            "common/ResourcesConfig.yaml",
            &c.join("ResourcesConfig.yaml"),
        ),
        ("common/InitConfig.yaml", &c.join("InitConfig.yaml")),
        ("custom/InitConfig.yaml", &t.join("InitConfig.yaml")),
    ]);
    let sim = tempfile::tempdir().unwrap();
    lever_sim::create("qcs6490", sim.path()).unwrap();
    let fs = KernelFs::new(sim.path());
    let clusters = lever_targets::discover_clusters(&fs).unwrap();
    let import = lever_urm::import(dir.path(), "urm", &clusters).unwrap();
    assert_eq!(
        import.cgroups,
        ["urm.slice/focused.apps", "camera-cgroup", "audio-cgroup"],
        "video-cgroup is threaded: not created"
    );
    let (done, failed) = import.create_cgroups(&fs);
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(done.len(), 3, "{done:?}");
    assert!(done[2].contains("audio-cgroup: created"), "{done:?}");
    let read = |p: &str| fs.read(p).unwrap();
    assert_eq!(read("/sys/fs/cgroup/audio-cgroup/memory.max"), "max");
    assert_eq!(read("/sys/fs/cgroup/audio-cgroup/cpu.uclamp.min"), "0.00");
    assert!(read("/sys/fs/cgroup/urm.slice/cgroup.subtree_control").contains("cpu"));
    // Made again (a reload): found, not remade.
    let (again, _) = import.create_cgroups(&fs);
    assert!(
        again[2].contains("audio-cgroup: already there"),
        "{again:?}"
    );

    let target = import.target.bind(&fs).unwrap();
    let spec = |name: &str| {
        target
            .resources
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let cpus = spec("res_cgrp_run_cores_audio_cgroup");
    assert_eq!(cpus.kind.as_str(), "cpulist");
    assert_eq!(cpus.node, "/sys/fs/cgroup/audio-cgroup/cpuset.cpus");
    assert_eq!(spec("res_cgrp_max_mem_audio_cgroup").unit, "bytes");
    // The threaded cgroup was not made: its resources are dropped (optional).
    assert!(!target
        .resources
        .iter()
        .any(|r| r.name.ends_with("_video_cgroup")));
    let view = import.view();
    let (opcode, value) = view.pair(0x0009_000B, 0, &[802, 950]).unwrap();
    assert_eq!(value, 950 * 1024);
    assert_eq!(
        opcode,
        spec("res_cgrp_max_mem_audio_cgroup").opcode.0,
        "Values[0] 802 is audio-cgroup"
    );
    let (_, mask) = view.pair(0x0009_0002, 0, &[802, 0, 1, 3]).unwrap();
    assert_eq!(cpus.render(mask), "0-1,3");
}
