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
    std::fs::write(&good, "usecases:\n  - name: game\n    id: 0x00040001\n    resources: { cpu_min_freq.prime: 2035200 }\n").unwrap();
    let text = common::ok(&[
        "usecases",
        "-t",
        "qcs6490",
        "--usecases",
        good.to_str().unwrap(),
    ]);
    assert!(
        text.contains("game") && text.contains("0x00040001"),
        "{text}"
    );

    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "usecases:\n  - name: game\n    id: 0x00040001\n    resources: { cpu_min_freq.mega: 1 }\n",
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
