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
