//! `lever usecases`: the qcs6490 use cases as a table and as JSON, an extra
//! file of use cases, and a typo's file:line error with exit code 3.

mod common;

#[test]
fn lists_the_qcs6490_use_cases() {
    let text = common::ok(&["usecases", "-t", "qcs6490"]);
    for want in [
        "app-launch",
        "camera-preview",
        "video-decode",
        "0x00030003",
        "4k30(fps=30,width=3840,height=2160)",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&common::ok(&["usecases", "-t", "qcs6490", "--json"])).unwrap();
    assert_eq!(json["target"], "qcs6490");
    assert_eq!(json["usecases"][1]["name"], "camera-preview");
    assert_eq!(
        json["usecases"][1]["settings"]["nodes"][0]["opcode"],
        "0x44008000"
    );
}

#[test]
fn extra_file_and_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("game.yaml");
    std::fs::write(&good, "usecases:\n  - name: benchmark\n    id: 0x00040001\n    resources: { cpu_min_freq.prime: 2035200 }\n").unwrap();
    let text = common::ok(&[
        "usecases",
        "-t",
        "qcs6490",
        "--usecases",
        good.to_str().unwrap(),
    ]);
    assert!(
        text.contains("benchmark") && text.contains("0x00040001"),
        "{text}"
    );

    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "usecases:\n  - name: benchmark\n    id: 0x00040001\n    resources: { cpu_min_freq.mega: 1 }\n",
    )
    .unwrap();
    let out = common::lever(&[
        "usecases",
        "-t",
        "qcs6490",
        "--usecases",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:4:18: field `usecases[0].resources.cpu_min_freq.mega`",
            bad.display()
        )),
        "{err}"
    );
}

#[test]
fn import_urm_writes_a_target_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let root = board.to_str().unwrap();
    let urm = concat!(env!("CARGO_MANIFEST_DIR"), "/../urm/tests/fixtures/urm");
    let out = dir.path().join("kodiak.yaml");
    let text = common::ok(&[
        "--root",
        root,
        "target",
        "import-urm",
        urm,
        "-o",
        out.to_str().unwrap(),
        "--name",
        "kodiak",
    ]);
    assert!(
        text.contains("use cases: app-launch, camera-preview, video-decode, low-memory"),
        "{text}"
    );
    assert!(
        text.contains("# warning: ") && text.contains("lower_is_better on a floor"),
        "{text}"
    );
    let checked = common::ok(&["--root", root, "target", "check", out.to_str().unwrap()]);
    assert!(checked.starts_with("kodiak ("), "{checked}");
    // Printed instead of written: the YAML comes first, then the summary.
    let printed = common::ok(&["--root", root, "target", "import-urm", urm]);
    assert!(
        printed.starts_with("# Imported from a URM configuration"),
        "{printed}"
    );
    let json: serde_json::Value = serde_json::from_str(&common::ok(&[
        "--root",
        root,
        "--json",
        "target",
        "import-urm",
        urm,
    ]))
    .unwrap();
    assert_eq!(json["apps"][0], "gst-launch-1-0");

    // A typo in a URM key: exit 3, file:line:col and field.
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(
        bad.join("PerApp.yaml"),
        "PerAppConfigs:\n  - App: x\n    Thread: []\n",
    )
    .unwrap();
    let o = common::lever(&[
        "--root",
        root,
        "target",
        "import-urm",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("PerApp.yaml:3:5: field `PerAppConfigs[0].Thread`: unknown key"),
        "{err}"
    );
}

/// URM's `RES_CPU_DMA_LATENCY` (`/dev/cpu_dma_latency`, PM QoS) imports as
/// a hold-fd resource: it reads as a number, not the device's binary, and
/// the daemon holds a request on it as a binary s32 while it lasts (issue
/// 27 item 7).
#[test]
fn an_imported_cpu_dma_latency_is_hold_fd_and_reads_as_a_number() {
    let dir = common::daemon::state_dir();
    let board = dir.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let root = board.to_str().unwrap();
    let urm = dir.path().join("urm");
    std::fs::create_dir(&urm).unwrap();
    std::fs::write(
        urm.join("ResourcesConfig.yaml"),
        "ResourceConfigs:\n  - ResType: \"0x01\"\n    ResID: \"0x0000\"\n    Name: \"RES_CPU_DMA_LATENCY\"\n    Path: \"/dev/cpu_dma_latency\"\n    Supported: true\n    LowThreshold: 0\n    HighThreshold: 2000000000\n    Permissions: \"third_party\"\n    Policy: \"lower_is_better\"\n    ApplyType: \"global\"\n",
    )
    .unwrap();
    let target = dir.path().join("urm.yaml");
    let target = target.to_str().unwrap();
    common::ok(&[
        "--root",
        root,
        "target",
        "import-urm",
        urm.to_str().unwrap(),
        "-o",
        target,
    ]);
    let doc: serde_json::Value = serde_json::from_str(&common::ok(&[
        "--root",
        root,
        "--json",
        "resources",
        "--target",
        target,
    ]))
    .unwrap();
    let qos = &doc["resources"][0];
    assert_eq!(qos["name"], "res_cpu_dma_latency", "{doc}");
    assert_eq!(qos["kind"]["type"], "hold-fd", "{doc}");
    assert_eq!(qos["value"], "2000000000", "{doc}");
    assert_eq!(qos["level"], 2_000_000_000, "{doc}");
    let table = common::ok(&["--root", root, "resources", "--target", target]);
    let row = table
        .lines()
        .find(|l| l.contains("res_cpu_dma_latency"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains(" 2000000000 "), "{row}");
    assert!(!row.contains('\0') && !row.contains('\u{fffd}'), "{row:?}");

    // Through the daemon: the request is written as a binary s32 and
    // held while it lasts.
    let d = common::daemon::Daemon::start(dir.path(), &["--target", target]);
    let out = std::process::Command::new(common::LEVER)
        .args(["acquire", "--detach", "-d", "30s", "res_cpu_dma_latency=10"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    common::assert_success(&out);
    let node = d.dir.join("sim/dev/cpu_dma_latency");
    assert_eq!(std::fs::read(&node).unwrap(), 10i32.to_ne_bytes());
    let logged = common::daemon::wait_until(std::time::Duration::from_secs(5), || {
        d.log().contains("-> 10 held")
    });
    assert!(logged.is_some(), "{}", d.log());
}
