//! URM's own command-line client, `client/ClientCLI.cpp` from the shared
//! URM tree, compiled unchanged and linked against this crate's
//! `libUrmClient.so.1` instead of URM's, against `lever daemon --urm` on a
//! simulated qcs6490 with URM's `configs/` (common) and `tests/Configs`
//! (custom): getProp, tune, retune, untune, signal and untuneSignal, each
//! checked on the board's node or in the daemon's STATUS.
//!
//! Needs the shared tree and g++; without them the test says why it
//! skips, and fails under `CI=true` (`.ci/run` installs g++).

#[path = "../../capi/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn urm_tree() -> PathBuf {
    common::repo_root().join("../shared/third-party/userspace-resource-manager")
}

/// `target/<profile>/libUrmClient.so`, built with the cargo running the
/// tests (`cargo test` does not write the cdylib).
fn lib_urm_client() -> Result<PathBuf, String> {
    let dir = common::profile_dir().ok_or("cannot locate the target directory")?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "-q", "-p", "lever-urm-capi"])
        .current_dir(common::repo_root())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(dir.join("libUrmClient.so"))
}

/// urmCli built from URM's ClientCLI.cpp against `lib` (as
/// `libUrmClient.so.1`, its soname, in `dir/lib`).
fn build_urm_cli(tree: &Path, lib: &Path, dir: &Path) -> PathBuf {
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::fs::copy(lib, libdir.join("libUrmClient.so.1")).unwrap();
    std::os::unix::fs::symlink("libUrmClient.so.1", libdir.join("libUrmClient.so")).unwrap();
    let exe = dir.join("urmCli");
    let out = Command::new("g++")
        .args(["-std=c++17", "-O1", "-o"])
        .arg(&exe)
        .arg(tree.join("client/ClientCLI.cpp"))
        .arg(format!("-I{}", tree.join("client/APIs/Include").display()))
        .arg(format!(
            "-I{}",
            tree.join("modula/Common/Include").display()
        ))
        .arg(format!("-L{}", libdir.display()))
        .arg("-lUrmClient")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .output()
        .expect("run g++");
    assert!(
        out.status.success(),
        "g++ ClientCLI.cpp:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

struct Board {
    daemon: std::process::Child,
    root: PathBuf,
    socket: PathBuf,
}

impl Drop for Board {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// `lever daemon --urm` on a simulated qcs6490 with URM's test nodes.
fn start_board(lever: &Path, tree: &Path, dir: &Path) -> Board {
    let root = dir.join("root");
    let ok = Command::new(lever)
        .args(["sim", "create", "qcs6490"])
        .arg(&root)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success());
    let nodes = root.join("etc/urm/tests/nodes");
    std::fs::create_dir_all(&nodes).unwrap();
    for e in std::fs::read_dir(tree.join("tests/Configs/ResourceSysFsNodes")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), nodes.join(e.file_name())).unwrap();
    }
    let urm = dir.join("urm");
    for (layer, from, files) in [
        (
            "common",
            "configs",
            &[
                "ResourcesConfig",
                "SignalsConfig",
                "InitConfig",
                "PropertiesConfig",
            ][..],
        ),
        (
            "custom",
            "tests/Configs",
            &[
                "ResourcesConfig",
                "SignalsConfig",
                "InitConfig",
                "PropertiesConfig",
                "PerApp",
            ][..],
        ),
    ] {
        std::fs::create_dir_all(urm.join(layer)).unwrap();
        for f in files {
            let name = format!("{f}.yaml");
            std::fs::copy(tree.join(from).join(&name), urm.join(layer).join(&name)).unwrap();
        }
    }
    let socket = dir.join("lever.sock");
    let daemon = Command::new(lever)
        .arg("daemon")
        .arg("--root")
        .arg(&root)
        .arg("--urm")
        .arg(&urm)
        .arg("--socket")
        .arg(&socket)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args(["--no-apps", "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let board = Board {
        daemon,
        root,
        socket,
    };
    let t = Instant::now();
    while !board.socket.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "daemon did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    board
}

fn urm_cli(exe: &Path, board: &Board, args: &[&str]) -> String {
    let out = Command::new(exe)
        .args(args)
        .env("LEVER_SOCKET", &board.socket)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `urmCli --tune` of `num` resources `res` for 20 s at high priority.
fn tune(exe: &Path, board: &Board, num: u32, res: &str) -> String {
    let num = num.to_string();
    urm_cli(
        exe,
        board,
        &[
            "--tune",
            "--duration",
            "20000",
            "--priority",
            "0",
            "--num",
            &num,
            "--res",
            res,
        ],
    )
}

fn handle_in(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("Handle Received from Server is: "))
        .unwrap_or_else(|| panic!("no handle in:\n{out}"))
        .trim()
        .to_string()
}

/// The daemon's STATUS request with handle `h` (its JSON), if live.
fn request(lever: &Path, board: &Board, h: &str) -> Option<serde_json::Value> {
    let out = Command::new(lever)
        .args(["status", "--json"])
        .env("LEVER_SOCKET", &board.socket)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["handle"].as_u64().map(|v| v.to_string()).as_deref() == Some(h))
        .cloned()
}

#[test]
fn urm_cli_unchanged_against_lever() {
    let tree = urm_tree();
    if !tree.join("client/ClientCLI.cpp").is_file() {
        return common::skip("urm_cli", &format!("no URM tree at {}", tree.display()));
    }
    if Command::new("g++").arg("--version").output().is_err() {
        return common::skip("urm_cli", "g++ is not installed");
    }
    let lever = common::lever_bin().expect("lever binary");
    let lib = lib_urm_client().expect("libUrmClient.so");
    let dir = tempfile::tempdir().unwrap();
    let exe = build_urm_cli(&tree, &lib, dir.path());
    let board = start_board(&lever, &tree, dir.path());
    let node = board.root.join("etc/urm/tests/nodes/scaling_min_freq.txt");
    let read = || std::fs::read_to_string(&node).unwrap().trim().to_string();
    assert_eq!(read(), "107");

    // getProp: custom/ replaces common/'s pulse duration; an unknown key
    // gives the default urmCli passes.
    let out = urm_cli(
        &exe,
        &board,
        &["--getProp", "--key", "resource_tuner.pulse.duration"],
    );
    assert!(out.contains("Prop Retrieved, value is: 60000000"), "{out}");
    let out = urm_cli(
        &exe,
        &board,
        &[
            "--getProp",
            "--key",
            "resource_tuner.maximum.concurrent.requests",
        ],
    );
    assert!(out.contains("Prop Retrieved, value is: 60"), "{out}");
    let out = urm_cli(&exe, &board, &["--getProp", "--key", "no.such.key"]);
    assert!(
        out.contains("Prop Retrieved, value is: prop_not_found"),
        "{out}"
    );

    // tune: TEST_RESOURCE_3 (0xff/0x0002) for 20 s outlives urmCli, as
    // URM keeps a urmCli request for its parent.
    let out = tune(&exe, &board, 1, "0x00ff0002:55");
    let h = handle_in(&out);
    assert_eq!(read(), "55", "{out}");
    assert_eq!(request(&lever, &board, &h).unwrap()["duration_ms"], 20000);

    // retune from another urmCli process: the same request, 30 s.
    let out = urm_cli(
        &exe,
        &board,
        &["--retune", "--handle", &h, "--duration", "30000"],
    );
    assert!(
        out.contains("Retune Request Successfully Submitted"),
        "{out}"
    );
    let r = request(&lever, &board, &h).expect("retuned request live");
    assert_eq!(r["duration_ms"], 30000, "{r}");
    assert_eq!(read(), "55");

    // untune: the node is back to its original.
    let out = urm_cli(&exe, &board, &["--untune", "--handle", &h]);
    assert!(
        out.contains("Untune Request Successfully Submitted"),
        "{out}"
    );
    assert!(request(&lever, &board, &h).is_none());
    assert_eq!(read(), "107");

    // A cgroup resource (URM's RES_CGRP_RUN_CORES and RES_CGRP_UCLAMP_MIN,
    // system-only; this test runs as root): Values[0] is the cgroup ID of
    // InitConfig's CgroupsInfo (802, audio-cgroup, `Create: true`: the
    // daemon made it at start, as URM does), the rest the value, here the
    // CPUs to run on. Both are written, and restored at untune.
    let cg = board.root.join("sys/fs/cgroup/audio-cgroup");
    let file = |f: &str| {
        std::fs::read_to_string(cg.join(f))
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .trim()
            .to_string()
    };
    let cpus = || file("cpuset.cpus");
    let uclamp = || file("cpu.uclamp.min");
    assert_eq!((cpus(), uclamp()), ("".to_string(), "0.00".to_string()));
    let out = tune(&exe, &board, 2, "0x00090002:802,0,1,3;0x00090007:802,52");
    let h = handle_in(&out);
    assert_eq!(
        (cpus(), uclamp()),
        ("0-1,3".to_string(), "52".to_string()),
        "{out}"
    );
    let out = urm_cli(&exe, &board, &["--untune", "--handle", &h]);
    assert!(
        out.contains("Untune Request Successfully Submitted"),
        "{out}"
    );
    assert_eq!((cpus(), uclamp()), ("".to_string(), "0.00".to_string()));
    // A cgroup ID CgroupsInfo does not have is refused (URM drops it): the
    // handle holds nothing, and nothing is written.
    let out = tune(&exe, &board, 1, "0x00090007:999,52");
    let h = handle_in(&out);
    assert!(request(&lever, &board, &h).is_none(), "{out}");
    assert_eq!(uclamp(), "0.00");

    // signal TEST_SIGNAL_1 (Category 0x0d, SigId 0): its use case, for its
    // own Timeout (4000 ms); urmCli waits 3 s before it exits.
    let out = urm_cli(&exe, &board, &["--signal", "--scode", "0x000d0000"]);
    let h = handle_in(&out);
    let r = request(&lever, &board, &h).unwrap_or_else(|| panic!("signal {h} not live:\n{out}"));
    assert_eq!(r["usecase"], "test-signal-1", "{r}");
    assert_eq!(r["duration_ms"], 4000, "{r}");
    let out = urm_cli(&exe, &board, &["--untuneSignal", "--handle", &h]);
    assert!(
        out.contains("Untune Request Successfully Submitted"),
        "{out}"
    );
    assert!(request(&lever, &board, &h).is_none());
}
