//! Precise errors: a truncated or corrupt DTB, a phandle to nowhere and a
//! cell-count mismatch each name the node path (and the byte offset for
//! the blob). Blobs are compiled from small sources with dtc, then
//! damaged at a known place.

mod common;

use lever_dt::{carveouts, dvfs, DtError, Widths};

const SOURCE: &str = r#"/dts-v1/;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;
		mpss_mem: mpss@8b800000 {
			reg = <0x0 0x8b800000 0x0 0xf600000>;
			marker = <0xdeadbeef>;
			no-map;
		};
	};
};
"#;

fn need_dtc(test: &str) -> bool {
    if common::have_dtc() {
        return true;
    }
    common::skip(
        test,
        "dtc is not installed (apt-get install device-tree-compiler)",
    );
    false
}

/// Offset of the value 0xdeadbeef (the `marker` property's).
fn marker(blob: &[u8]) -> usize {
    blob.windows(4)
        .position(|w| w == [0xde, 0xad, 0xbe, 0xef])
        .unwrap()
}

#[test]
fn truncated_blob_names_where() {
    if !need_dtc("truncated") {
        return;
    }
    let blob = common::dtc_compile(SOURCE);
    // Cut anywhere: always an error, never a panic.
    for len in 0..blob.len() {
        assert!(lever_dt::fdt::parse(&blob[..len]).is_err(), "cut at {len}");
    }
    let err = lever_dt::fdt::parse(&blob[..blob.len() / 2]).unwrap_err();
    assert!(err.to_string().contains("truncated DTB"), "{err}");
    // A property whose length runs past the structure block.
    let mut bad = blob.clone();
    let at = marker(&bad) - 8;
    bad[at..at + 4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let err = lever_dt::fdt::parse(&bad).unwrap_err();
    assert!(matches!(err, DtError::Truncated { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("value of property marker"), "{msg}");
    assert!(
        msg.contains("in node /reserved-memory/mpss@8b800000"),
        "{msg}"
    );
}

#[test]
fn corrupt_blob_names_node_and_offset() {
    if !need_dtc("corrupt") {
        return;
    }
    let blob = common::dtc_compile(SOURCE);
    let mut bad = blob.clone();
    let tok = marker(&bad) - 12;
    bad[tok..tok + 4].copy_from_slice(&0x77u32.to_be_bytes());
    let err = lever_dt::fdt::parse(&bad).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&format!("corrupt DTB at byte {tok}")), "{msg}");
    assert!(
        msg.contains("in node /reserved-memory/mpss@8b800000"),
        "{msg}"
    );
    assert!(msg.contains("unknown structure token 0x77"), "{msg}");
    let mut bad = blob.clone();
    bad[0] = 0;
    assert!(lever_dt::fdt::parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("not a DTB"));
    // A property name offset outside the strings block.
    let mut bad = blob;
    let nameoff = marker(&bad) - 4;
    bad[nameoff..nameoff + 4].copy_from_slice(&0x00ff_ffffu32.to_be_bytes());
    let msg = lever_dt::fdt::parse(&bad).unwrap_err().to_string();
    assert!(
        msg.contains("outside the strings block") && msg.contains("/reserved-memory/mpss@8b800000"),
        "{msg}"
    );
}

#[test]
fn dangling_phandle_names_node_and_property() {
    if !need_dtc("dangling") {
        return;
    }
    let src = SOURCE.replace("\t};\n};", "\t};\n\tmodem { memory-region = <0x99>; };\n};");
    let tree = lever_dt::fdt::parse(&common::dtc_compile(&src)).unwrap();
    let err = carveouts(&tree).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/modem: property memory-region refers to phandle 0x99, which no node has"
    );
    let src = r#"/dts-v1/;
/ { cpus { #address-cells = <1>; #size-cells = <0>;
    cpu@0 { device_type = "cpu"; reg = <0>; operating-points-v2 = <0x42>; }; }; };"#;
    let tree = lever_dt::fdt::parse(&common::dtc_compile(src)).unwrap();
    let err = dvfs(&tree, Widths::SEED).unwrap_err();
    assert!(
        matches!(&err, DtError::DanglingPhandle { path, phandle: 0x42, .. } if path == "/cpus/cpu@0"),
        "{err}"
    );
}

#[test]
fn cell_count_mismatch_names_node_and_cells() {
    if !need_dtc("cell mismatch") {
        return;
    }
    let src = SOURCE.replace("0x0 0x8b800000 0x0 0xf600000", "0x0 0x8b800000 0xf600000");
    let tree = lever_dt::fdt::parse(&common::dtc_compile(&src)).unwrap();
    let err = carveouts(&tree).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/reserved-memory/mpss@8b800000: property reg is 12 bytes, not a whole number of 4-cell entries (#address-cells 2 + #size-cells 2 of /reserved-memory)"
    );
    // interconnects cut short of the provider's #interconnect-cells, and
    // an OPP with more votes than paths.
    let opp = |ic: &str, peak: &str| {
        format!(
            r#"/dts-v1/;
/ {{ noc: interconnect {{ compatible = "qcom,x-mc-virt"; #interconnect-cells = <2>; }};
  cpus {{ #address-cells = <1>; #size-cells = <0>;
    cpu@0 {{ device_type = "cpu"; reg = <0>; operating-points-v2 = <&t>; interconnects = <{ic}>; }}; }};
  t: opp-table {{ compatible = "operating-points-v2";
    opp-300000000 {{ opp-hz = /bits/ 64 <300000000>; opp-peak-kBps = <{peak}>; }}; }}; }};"#
        )
    };
    let tree =
        lever_dt::fdt::parse(&common::dtc_compile(&opp("&noc 1 3 &noc 2", "800000"))).unwrap();
    let msg = dvfs(&tree, Widths::SEED).unwrap_err().to_string();
    assert!(
        msg.starts_with("/cpus/cpu@0: property interconnects"),
        "{msg}"
    );
    assert!(
        msg.contains("#interconnect-cells 2 of /interconnect"),
        "{msg}"
    );
    let tree =
        lever_dt::fdt::parse(&common::dtc_compile(&opp("&noc 1 3 &noc 2 3", "800000 1"))).unwrap();
    let msg = dvfs(&tree, Widths::SEED).unwrap_err().to_string();
    assert_eq!(
        msg,
        "/opp-table/opp-300000000: property opp-peak-kBps: cell-count mismatch: 2 values for the 1 interconnect paths of /cpus/cpu@0"
    );
    let tree =
        lever_dt::fdt::parse(&common::dtc_compile(&opp("&noc 1 3 &noc 2 3", "800000"))).unwrap();
    let d = dvfs(&tree, Widths::SEED).unwrap();
    assert_eq!(d.clusters[0].rows[0].votes[0].implied_khz, Some(200_000));
}

/// The rest of the error paths: a blob cut inside its header, phandles to
/// nowhere in `interconnects` and `required-opps`, `opp-hz` with an odd
/// number of cells, a property whose length is not whole cells, and the
/// live tree's form (a directory) with a bad `reg`.
#[test]
fn more_errors_name_the_node() {
    if !need_dtc("more errors") {
        return;
    }
    let blob = common::dtc_compile(SOURCE);
    let msg = lever_dt::fdt::parse(&blob[..20]).unwrap_err().to_string();
    assert!(msg.starts_with("truncated DTB: header"), "{msg}");
    assert!(msg.contains("(20 bytes), in node /"), "{msg}");

    let cpu = |extra: &str, table: &str| {
        format!(
            r#"/dts-v1/;
/ {{ noc: interconnect {{ compatible = "qcom,x-mc-virt"; #interconnect-cells = <1>; }};
  cpus {{ #address-cells = <1>; #size-cells = <0>;
    cpu@0 {{ device_type = "cpu"; reg = <0>; operating-points-v2 = <&t>; {extra} }}; }};
  t: opp-table {{ compatible = "operating-points-v2"; {table} }}; }};"#
        )
    };
    let parse = |src: &str| lever_dt::fdt::parse(&common::dtc_compile(src)).unwrap();
    let tree = parse(&cpu("interconnects = <&noc 1 0x77 1>;", ""));
    assert_eq!(
        dvfs(&tree, Widths::SEED).unwrap_err().to_string(),
        "/cpus/cpu@0: property interconnects refers to phandle 0x77, which no node has"
    );
    let tree = parse(&cpu(
        "",
        "opp-1 { opp-hz = /bits/ 64 <300000000>; required-opps = <0x66>; };",
    ));
    assert_eq!(
        dvfs(&tree, Widths::SEED).unwrap_err().to_string(),
        "/opp-table/opp-1: property required-opps refers to phandle 0x66, which no node has"
    );
    let tree = parse(&cpu("", "opp-1 { opp-hz = <0 300000000 7>; };"));
    assert_eq!(
        dvfs(&tree, Widths::SEED).unwrap_err().to_string(),
        "/opp-table/opp-1: property opp-hz is 12 bytes, not a whole number of 2-cell entries (one 64-bit value per clock)"
    );
    let tree = parse(&cpu(
        "interconnects = <&noc 1 &noc 2>;",
        "opp-1 { opp-hz = /bits/ 64 <300000000>; opp-peak-kBps = [00 0c 35 00 00 01]; };",
    ));
    assert_eq!(
        dvfs(&tree, Widths::SEED).unwrap_err().to_string(),
        "/opp-table/opp-1: property opp-peak-kBps is 6 bytes, not a whole number of 1-cell entries"
    );

    // The live tree's form: a directory per node, a file per property.
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("reserved-memory/mpss@8b800000");
    std::fs::create_dir_all(&node).unwrap();
    for (name, cells) in [("#address-cells", 2u32), ("#size-cells", 2)] {
        std::fs::write(
            dir.path().join("reserved-memory").join(name),
            cells.to_be_bytes(),
        )
        .unwrap();
    }
    std::fs::write(node.join("reg"), [0u8; 12]).unwrap();
    std::fs::write(node.join("no-map"), []).unwrap();
    let tree = lever_dt::source::read_dir_tree(dir.path()).unwrap();
    assert_eq!(
        carveouts(&tree).unwrap_err().to_string(),
        "/reserved-memory/mpss@8b800000: property reg is 12 bytes, not a whole number of 4-cell entries (#address-cells 2 + #size-cells 2 of /reserved-memory)"
    );
    let err = lever_dt::source::read_dir_tree(&dir.path().join("nowhere")).unwrap_err();
    assert!(
        err.to_string().starts_with("cannot read ") && err.to_string().ends_with("/nowhere"),
        "{err}"
    );
}
