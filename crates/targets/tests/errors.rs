//! One test per error class: each asserts the exact `file:line:col`, the
//! field path and the gist of the message.

mod common;

use lever_targets::{parse, TargetError};

/// A valid file; tests edit one line and expect the error there.
const BASE: &str = "\
target: bad
clusters:
  - { name: little, id: 0, policy: 0, cpus: 0-1 }
  - { name: big, id: 1, policy: 2, cpus: 2-3 }
resources:
  - name: min_freq
    opcode: 0x44008000
    per: cluster
    node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_min_freq
    kind: pair-min
    pair: max_freq
    unit: kHz
    low: /sys/devices/system/cpu/cpufreq/policy{policy}/cpuinfo_min_freq
    high: /sys/devices/system/cpu/cpufreq/policy{policy}/cpuinfo_max_freq
    aggregation: max
    permission: third-party
  - name: max_freq
    opcode: 0x4400C000
    per: cluster
    node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_max_freq
    kind: pair-max
    pair: min_freq
    unit: kHz
    low: 300000
    high: 3000000
    aggregation: min
    permission: third-party
  - name: swappiness
    opcode: 0x48800000
    node: /proc/sys/vm/swappiness
    unit: count
    low: 0
    high: 200
    aggregation: newest
    permission: third-party
";

/// BASE with exactly one occurrence of `from` replaced.
fn edit(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "{from:?} must occur once");
    BASE.replacen(from, to, 1)
}

fn error(text: &str) -> String {
    match parse("bad.yaml", text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[track_caller]
fn assert_starts(msg: &str, prefix: &str) {
    assert!(
        msg.starts_with(prefix),
        "\n  got: {msg}\n want: {prefix}..."
    );
}

#[test]
fn base_is_valid() {
    let file = parse("bad.yaml", BASE).unwrap();
    assert_eq!(file.resources.len(), 3);
}

// --- unknown keys -----------------------------------------------------------

#[test]
fn unknown_key_in_a_resource() {
    let text = "\
target: bad
resources:
  - name: swappiness
    opcode: 0x48800000
    node: /proc/sys/vm/swappiness
    unit: count
    colour: blue
    low: 0
    high: 200
    aggregation: newest
    permission: third-party
";
    assert_eq!(
        error(text),
        "bad.yaml:7:5: field `resources[0].colour`: unknown key (expected one of: name, opcode, \
         per, index, index_name, node, kind, pair, values, unit, low, high, steps, aggregation, \
         permission, description, optional)"
    );
}

#[test]
fn misspelt_key_gets_a_suggestion() {
    let msg = error(&edit("    aggregation: newest", "    aggregtion: newest"));
    assert_starts(&msg, "bad.yaml:34:5: field `resources[2].aggregtion`: unknown key (expected one of: name, opcode, per, ");
    assert!(msg.ends_with("; did you mean `aggregation`?"), "{msg}");
}

#[test]
fn unknown_key_at_top_level_and_in_a_cluster() {
    let msg = error(&edit("resources:\n", "resource_list: []\nresources:\n"));
    assert_starts(&msg, "bad.yaml:5:1: field `resource_list`: unknown key (expected one of: target, description, compatible, clusters, resources, usecases, apps, app_filter)");
    let msg = error(&edit("cpus: 2-3 }", "cpus: 2-3, speed: 3 }"));
    assert_starts(&msg, "bad.yaml:4:47: field `clusters[1].speed`: unknown key (expected one of: name, id, policy, cpus)");
}

// --- duplicate keys ---------------------------------------------------------

#[test]
fn duplicate_key_in_a_resource() {
    let msg = error(&edit(
        "    unit: count\n",
        "    unit: count\n    unit: percent\n",
    ));
    assert_eq!(
        msg,
        "bad.yaml:32:5: field `resources[2].unit`: duplicate key (first given at line 31, column 5)"
    );
}

#[test]
fn duplicate_key_at_top_level_and_in_a_flow_mapping() {
    let msg = error(&format!("{BASE}target: again\n"));
    assert_eq!(
        msg,
        "bad.yaml:36:1: field `target`: duplicate key (first given at line 1, column 1)"
    );
    let msg = error(&edit("{ name: big, id: 1,", "{ name: big, id: 1, id: 3,"));
    assert_starts(
        &msg,
        "bad.yaml:4:25: field `clusters[1].id`: duplicate key (first given at line 4, column 18)",
    );
}

// --- missing required fields ------------------------------------------------

#[test]
fn missing_required_field_points_at_its_mapping() {
    let msg = error(&edit("    node: /proc/sys/vm/swappiness\n", ""));
    assert_eq!(
        msg,
        "bad.yaml:28:5: field `resources[2].node`: missing required field `node` (the kernel path this resource writes)"
    );
    let msg = error(&edit("    aggregation: newest\n", ""));
    assert_starts(&msg, "bad.yaml:28:5: field `resources[2].aggregation`: missing required field `aggregation` (max, min, newest or oldest)");
    let msg = error(&edit("    low: 0\n", ""));
    assert_starts(
        &msg,
        "bad.yaml:28:5: field `resources[2].low`: missing required field `low`",
    );
    let msg = error("target: bad\n");
    assert_eq!(
        msg,
        "bad.yaml:1:1: field `resources`: missing required field `resources`"
    );
}

#[test]
fn cluster_without_policy() {
    let msg = error(&edit(
        "{ name: big, id: 1, policy: 2, cpus: 2-3 }",
        "{ name: big, id: 1, cpus: 2-3 }",
    ));
    assert_eq!(
        msg,
        "bad.yaml:4:5: field `clusters[1].policy`: missing required field `policy`: every cluster \
         needs its cpufreq policy number (the N of /sys/devices/system/cpu/cpufreq/policyN)"
    );
}

// --- wrong types ------------------------------------------------------------

#[test]
fn wrong_types() {
    let msg = error(&edit("    low: 0\n", "    low: [0, 1]\n"));
    assert_eq!(msg, "bad.yaml:32:10: field `resources[2].low`: expected an integer or a node path, found a list");
    let msg = error(&edit("    low: 0\n", "    low: lots\n"));
    assert_eq!(msg, "bad.yaml:32:10: field `resources[2].low`: expected an integer or a node path (starting with /), found `lots`");
    let msg = error(&edit("    unit: count\n", "    unit: { a: 1 }\n"));
    assert_eq!(
        msg,
        "bad.yaml:31:11: field `resources[2].unit`: expected a string, found a mapping"
    );
    let msg = error(&edit("    unit: count\n", "    unit:\n"));
    assert_eq!(
        msg,
        "bad.yaml:31:5: field `resources[2].unit`: expected a string, found nothing (null)"
    );
    let msg = error(&format!("{BASE}    optional: maybe\n"));
    assert_eq!(
        msg,
        "bad.yaml:36:15: field `resources[2].optional`: expected true or false, found `maybe`"
    );
    let msg = error("target: bad\nresources: none\n");
    assert_eq!(
        msg,
        "bad.yaml:2:12: field `resources`: expected a list, found a scalar"
    );
    let msg = error("- a\n- b\n");
    assert_eq!(
        msg,
        "bad.yaml:1:1: field `<root>`: expected a mapping, found a list"
    );
    let msg = error("target: bad\nclusters: 3\nresources: []\n");
    assert_starts(
        &msg,
        "bad.yaml:2:11: field `clusters`: expected a list of clusters or `auto`, found `3`",
    );
    let msg = error(&edit("id: 1,", "id: one,"));
    assert_eq!(
        msg,
        "bad.yaml:4:22: field `clusters[1].id`: expected an integer, found `one`"
    );
    let msg = error(&edit("cpus: 2-3 }", "cpus: 3-2 }"));
    assert_eq!(
        msg,
        "bad.yaml:4:42: field `clusters[1].cpus`: `3-2` is not a list such as `0-3,7`"
    );
    let msg = error(&edit("cpus: 2-3 }", "cpus: 1-3 }"));
    assert_eq!(
        msg,
        "bad.yaml:4:42: field `clusters[1].cpus`: CPU 1 is already in cluster `little`"
    );
}

// --- opcodes ----------------------------------------------------------------

#[test]
fn bad_opcodes() {
    let msg = error(&edit("0x48800000", "0x148800000"));
    assert_eq!(
        msg,
        "bad.yaml:29:13: field `resources[2].opcode`: `0x148800000` does not fit in 32 bits"
    );
    let msg = error(&edit("0x48800000", "0x88800000"));
    assert_starts(&msg, "bad.yaml:29:13: field `resources[2].opcode`: opcode 0x88800000 is not a Lever opcode: it must read 0x4xxxxxxx");
    let msg = error(&edit("0x48800000", "0x28800000"));
    assert_starts(
        &msg,
        "bad.yaml:29:13: field `resources[2].opcode`: opcode 0x28800000 is not a Lever opcode",
    );
    let msg = error(&edit("0x48800000", "swappy"));
    assert_starts(
        &msg,
        "bad.yaml:29:13: field `resources[2].opcode`: `swappy` is not a number",
    );
    let msg = error(&edit("0x48800000", "0x48802000"));
    assert_starts(&msg, "bad.yaml:29:13: field `resources[2].opcode`: opcode 0x48802000 has the reserved bit 13 set");
    // A per-cluster template leaves the cluster bits to expansion.
    let msg = error(&edit("0x44008000", "0x44008100"));
    assert_starts(&msg, "bad.yaml:7:13: field `resources[0].opcode`: opcode 0x44008100: bits 12..8 (the cluster id) must be 0 in a per: cluster template");
}

#[test]
fn duplicate_opcode_after_expansion_names_both() {
    // 0x44008100 is min_freq expanded for cluster `big` (id 1).
    let msg = error(&edit("0x48800000", "0x44008100"));
    assert_eq!(
        msg,
        "bad.yaml:29:13: field `resources[2].opcode`: duplicate opcode after expansion: 0x44008100 \
         of `swappiness` is also the opcode of `min_freq.big` (line 6)"
    );
    // With discovered clusters the overlap is caught from the bit masks.
    let text = edit(
        "clusters:\n  - { name: little, id: 0, policy: 0, cpus: 0-1 }\n  - { name: big, id: 1, policy: 2, cpus: 2-3 }\n",
        "clusters: auto\n\n\n",
    )
    .replace("0x48800000", "0x44008300");
    assert_eq!(
        error(&text),
        "bad.yaml:29:13: field `resources[2].opcode`: opcode 0x44008300 (per: none) can expand to \
         the same opcodes as `min_freq` (line 6, opcode 0x44008000, per: cluster); use another minor"
    );
}

#[test]
fn duplicate_name() {
    let msg = error(&edit("  - name: swappiness", "  - name: min_freq"));
    assert_eq!(msg, "bad.yaml:28:11: field `resources[2].name`: duplicate resource name `min_freq` (first defined at line 6)");
    let msg = error(&edit("  - name: swappiness", "  - name: vm.swappiness"));
    assert_starts(
        &msg,
        "bad.yaml:28:11: field `resources[2].name`: `vm.swappiness` is not a valid name",
    );
}

// --- bounds -----------------------------------------------------------------

#[test]
fn literal_bounds_out_of_order() {
    let msg = error(&edit("    low: 0\n", "    low: 300\n"));
    assert_eq!(
        msg,
        "bad.yaml:32:10: field `resources[2].low`: low bound 300 is above high bound 200"
    );
    let msg = error(&edit(
        "    high: 200\n",
        "    high: 200\n    steps: [0, 100, 250]\n",
    ));
    assert_eq!(
        msg,
        "bad.yaml:34:12: field `resources[2].steps`: step 250 is outside the bounds 0..=200"
    );
}

/// A tree where everything BASE needs exists.
fn base_tree() -> lever_testkit::FakeTree {
    let tree = lever_testkit::FakeTree::new();
    common::policy(&tree, 0, "0 1", common::SILVER_KHZ);
    common::policy(&tree, 2, "2 3", common::GOLD_KHZ);
    tree.node("/proc/sys/vm/swappiness", "60\n");
    tree
}

fn bind_error(text: &str, fs: &lever_kernel::KernelFs) -> String {
    let file = parse("bad.yaml", text).unwrap();
    file.bind(fs).unwrap_err().to_string()
}

#[test]
fn base_binds() {
    let tree = base_tree();
    let fs = tree.fs();
    let t = parse("bad.yaml", BASE).unwrap().bind(fs).unwrap();
    assert_eq!(t.resources.len(), 5);
}

#[test]
fn bound_node_unreadable_or_missing_at_bind() {
    let tree = base_tree();
    let fs = tree.fs();
    tree.node(
        "/sys/devices/system/cpu/cpufreq/policy2/cpuinfo_min_freq",
        "fast\n",
    );
    let msg = bind_error(BASE, fs);
    assert_eq!(
        msg,
        "bad.yaml:13:10: field `resources[0].low`: bound node \
         /sys/devices/system/cpu/cpufreq/policy2/cpuinfo_min_freq (for `min_freq.big`): \
         /sys/devices/system/cpu/cpufreq/policy2/cpuinfo_min_freq: cannot parse \"fast\" as an integer"
    );

    let msg = missing_max_freq_error();
    assert_starts(
        &msg,
        "bad.yaml:14:11: field `resources[0].high`: bound node \
         /sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq (for `min_freq.little`) does not exist below root ",
    );
}

#[test]
fn bound_nodes_out_of_order_at_bind() {
    let tree = base_tree();
    let fs = tree.fs();
    tree.node(
        "/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_min_freq",
        "2000000\n",
    );
    let msg = bind_error(BASE, fs);
    assert_eq!(
        msg,
        "bad.yaml:13:10: field `resources[0].low`: low bound 2000000 is above high bound 1958400 \
         for `min_freq.little` (low: /sys/devices/system/cpu/cpufreq/policy0/cpuinfo_min_freq, \
         high: /sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq)"
    );
}

#[test]
fn missing_node_at_bind_names_the_expanded_path() {
    let tree = base_tree();
    let fs = tree.fs();
    std::fs::remove_file(
        fs.resolve("/sys/devices/system/cpu/cpufreq/policy2/scaling_min_freq")
            .unwrap(),
    )
    .unwrap();
    let text = BASE;
    let err = parse("bad.yaml", text).unwrap().bind(fs).unwrap_err();
    assert_eq!(err.location(), Some(("bad.yaml", 9, 11)));
    assert_eq!(err.field(), Some("resources[0].node"));
    assert_starts(
        &err.to_string(),
        "bad.yaml:9:11: field `resources[0].node`: node \
         /sys/devices/system/cpu/cpufreq/policy2/scaling_min_freq (for `min_freq.big`) does not exist below root ",
    );
    // The same resource marked optional is left out instead — with its pair.
    let optional = edit(
        "    kind: pair-min\n",
        "    kind: pair-min\n    optional: true\n",
    );
    let t = parse("bad.yaml", &optional).unwrap().bind(fs).unwrap();
    let names: Vec<&str> = t.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["min_freq.little", "max_freq.little", "swappiness"]);
}

#[test]
fn steps_node_missing_or_empty_at_bind() {
    let tree = base_tree();
    let fs = tree.fs();
    let text = edit(
        "    high: 3000000\n",
        "    high: 3000000\n    steps: /sys/devices/system/cpu/cpufreq/policy{policy}/freqs\n",
    );
    assert_starts(
        &bind_error(&text, fs),
        "bad.yaml:26:12: field `resources[1].steps`: steps node /sys/devices/system/cpu/cpufreq/policy0/freqs (for `max_freq.little`) does not exist",
    );
    tree.node("/sys/devices/system/cpu/cpufreq/policy0/freqs", "\n");
    assert_eq!(
        bind_error(&text, fs),
        "bad.yaml:26:12: field `resources[1].steps`: steps node /sys/devices/system/cpu/cpufreq/policy0/freqs (for `max_freq.little`) is empty"
    );
}

// --- enumerated values ------------------------------------------------------

#[test]
fn unknown_enumerated_values_list_the_allowed_ones() {
    let msg = error(&edit("    aggregation: newest", "    aggregation: latest"));
    assert_eq!(msg, "bad.yaml:34:18: field `resources[2].aggregation`: unknown value `latest` (allowed: max, min, newest, oldest)");
    let msg = error(&edit("    kind: pair-max", "    kind: pair-maximum"));
    assert_eq!(msg, "bad.yaml:21:11: field `resources[1].kind`: unknown value `pair-maximum` (allowed: plain, pair-min, pair-max, enum, hold-fd, cpulist)");
    let msg = error(&edit(
        "    aggregation: newest\n    permission: third-party",
        "    aggregation: newest\n    permission: everyone",
    ));
    assert_eq!(msg, "bad.yaml:35:17: field `resources[2].permission`: unknown value `everyone` (allowed: system, third-party)");
    let msg = error(&edit("    per: cluster\n    node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_max_freq", "    per: socket\n    node: /sys/devices/system/cpu/cpufreq/policy{policy}/scaling_max_freq"));
    assert_eq!(msg, "bad.yaml:19:10: field `resources[1].per`: unknown value `socket` (allowed: none, cluster, cpu)");
}

// --- pairs ------------------------------------------------------------------

#[test]
fn pair_to_an_unknown_resource() {
    let msg = error(&edit("    pair: max_freq", "    pair: max_frequency"));
    assert_eq!(msg, "bad.yaml:11:11: field `resources[0].pair`: `max_frequency` is not a resource of this file (resources: min_freq, max_freq, swappiness)");
}

#[test]
fn pair_to_a_resource_of_the_wrong_kind() {
    let msg = error(&edit("    pair: max_freq", "    pair: swappiness"));
    assert_eq!(msg, "bad.yaml:11:11: field `resources[0].pair`: `swappiness` (line 28) is kind plain; the partner of a pair-min must be kind pair-max");
    let msg = error(&edit("    kind: pair-max", "    kind: pair-min"));
    assert_eq!(msg, "bad.yaml:11:11: field `resources[0].pair`: `max_freq` (line 17) is kind pair-min; the partner of a pair-min must be kind pair-max");
}

#[test]
fn pair_with_a_different_per() {
    let text = edit(
        "    opcode: 0x4400C000\n    per: cluster\n",
        "    opcode: 0x4400C000\n    per: none\n",
    )
    .replace(
        "policy{policy}/scaling_max_freq",
        "policy0/scaling_max_freq",
    );
    assert_eq!(
        error(&text),
        "bad.yaml:11:11: field `resources[0].pair`: `max_freq` (line 17) is per: none but `min_freq` is per: cluster; a pair must expand the same way"
    );
}

#[test]
fn pair_that_does_not_point_back_and_pair_on_a_plain_resource() {
    let text = format!(
        "{BASE}  - name: other_max\n    opcode: 0x48804000\n    node: /proc/sys/vm/x\n    kind: pair-max\n    pair: min_freq\n    unit: u\n    low: 0\n    high: 1\n    aggregation: min\n    permission: system\n"
    );
    assert_eq!(
        error(&text),
        "bad.yaml:40:11: field `resources[3].pair`: `min_freq` (line 6) pairs with `max_freq`, not with `other_max`"
    );
    let msg = error(&edit(
        "    unit: count\n",
        "    unit: count\n    pair: min_freq\n",
    ));
    assert_eq!(msg, "bad.yaml:32:5: field `resources[2].pair`: only used with kind pair-min or pair-max, not plain");
    let msg = error(&edit("    pair: max_freq\n", ""));
    assert_eq!(msg, "bad.yaml:6:5: field `resources[0].pair`: missing required field `pair`: a pair-min resource names its partner");
}

// --- enums ------------------------------------------------------------------

#[test]
fn enum_without_values() {
    let text = edit(
        "    unit: count\n    low: 0\n    high: 200\n",
        "    kind: enum\n",
    );
    assert_eq!(
        error(&text),
        "bad.yaml:28:5: field `resources[2].values`: missing required field `values`: an enum lists its values, lowest first"
    );
    let text = edit(
        "    unit: count\n    low: 0\n    high: 200\n",
        "    kind: enum\n    values: []\n",
    );
    assert_eq!(
        error(&text),
        "bad.yaml:32:13: field `resources[2].values`: an enum needs at least one value"
    );
    let text = edit(
        "    unit: count\n    low: 0\n    high: 200\n",
        "    kind: enum\n    values: [a, b, a]\n",
    );
    assert_eq!(
        error(&text),
        "bad.yaml:32:20: field `resources[2].values[2]`: `a` is listed twice"
    );
    let text = edit(
        "    unit: count\n    low: 0\n",
        "    kind: enum\n    values: [a, b]\n",
    );
    assert_eq!(
        error(&text),
        "bad.yaml:33:5: field `resources[2].high`: not used with kind enum: its levels are the indexes of `values`"
    );
    let msg = error(&edit(
        "    unit: count\n",
        "    unit: count\n    values: [a]\n",
    ));
    assert_eq!(
        msg,
        "bad.yaml:32:5: field `resources[2].values`: only used with kind enum, not plain"
    );
}

// --- placeholders -----------------------------------------------------------

#[test]
fn placeholder_not_available_for_per() {
    let msg = error(&edit(
        "/proc/sys/vm/swappiness",
        "/proc/sys/vm/{policy}/swappiness",
    ));
    assert_eq!(
        msg,
        "bad.yaml:30:11: field `resources[2].node`: placeholder `{policy}` is not available with per: none (needs per: cluster; available here: none)"
    );
    let msg = error(&edit(
        "policy{policy}/scaling_min_freq",
        "cpu{cpu}/scaling_min_freq",
    ));
    assert_eq!(
        msg,
        "bad.yaml:9:11: field `resources[0].node`: placeholder `{cpu}` is not available with per: cluster (needs per: cpu; available here: {policy}, {cluster})"
    );
    let msg = error(&edit("/proc/sys/vm/swappiness", "/proc/sys/vm/{swap}"));
    assert_starts(
        &msg,
        "bad.yaml:30:11: field `resources[2].node`: unknown placeholder `{swap}`",
    );
    let msg = error(&edit(
        "    high: 200\n",
        "    high: 200\n    description: CPU {cpu}\n",
    ));
    assert_starts(&msg, "bad.yaml:34:18: field `resources[2].description`: placeholder `{cpu}` is not available with per: none");
    let msg = error(&edit("/proc/sys/vm/swappiness", "proc/sys/vm/swappiness"));
    assert_starts(&msg, "bad.yaml:30:11: field `resources[2].node`: `proc/sys/vm/swappiness` is not an absolute kernel path");
}

#[test]
fn per_cluster_without_clusters() {
    let text = "target: bad\nresources:\n  - name: f\n    opcode: 0x44008000\n    per: cluster\n    node: /sys/f{policy}\n    unit: kHz\n    low: 0\n    high: 1\n    aggregation: max\n    permission: system\n";
    assert_eq!(
        error(text),
        "bad.yaml:5:10: field `resources[0].per`: per: cluster needs CPU clusters, but the file has no `clusters:` (a list, or `auto`)"
    );
}

// --- other file-level checks ------------------------------------------------

#[test]
fn unquoted_compatible_is_split_by_yaml() {
    let msg = error(&edit(
        "target: bad\n",
        "target: bad\ncompatible: [qcom,qcs6490]\n",
    ));
    assert_starts(&msg, "bad.yaml:2:14: field `compatible[0]`: `qcom` is not a device-tree compatible string (`vendor,model`); inside [ ] a comma separates items, so quote it");
}

#[test]
fn index_needs_room_and_a_clear_opcode_field() {
    let msg = error(&edit(
        "    unit: count\n",
        "    unit: count\n    index: 0-16\n",
    ));
    assert_eq!(
        msg,
        "bad.yaml:32:12: field `resources[2].index`: index 16 is out of range 0..=15"
    );
    let msg = error(
        &edit("0x48800000", "0x48800001")
            .replace("    unit: count\n", "    unit: count\n    index: 0-2\n"),
    );
    assert_starts(&msg, "bad.yaml:29:13: field `resources[2].opcode`: opcode 0x48800001: bits 3..0 (the sub-index) must be 0 when `index` is set");
    let msg = error(&edit(
        "    unit: count\n",
        "    unit: count\n    index_name: state\n",
    ));
    assert_eq!(
        msg,
        "bad.yaml:32:5: field `resources[2].index_name`: only meaningful together with `index:`"
    );
}

#[test]
fn duplicate_cluster_ids() {
    let msg = error(&edit("{ name: big, id: 1,", "{ name: big, id: 0,"));
    assert_eq!(
        msg,
        "bad.yaml:4:22: field `clusters[1].id`: id 0 is already used by cluster `little` (line 3)"
    );
    let msg = error(&edit("{ name: big, id: 1,", "{ name: big, id: 32,"));
    assert_eq!(
        msg,
        "bad.yaml:4:22: field `clusters[1].id`: cluster id 32 is out of range 0..=31"
    );
}

// --- YAML syntax ------------------------------------------------------------

#[test]
fn yaml_syntax_errors_carry_the_scanner_position() {
    let err = parse("bad.yaml", &edit("    unit: count\n", "    unit: [count\n")).unwrap_err();
    assert!(matches!(err, TargetError::Syntax(_)), "{err:?}");
    // An unclosed flow list is noticed where the next line starts.
    assert_starts(
        &err.to_string(),
        "bad.yaml:33:9: YAML syntax error: while parsing a flow sequence, expected ',' or ']'",
    );
    let err = parse("bad.yaml", "target: x\n  bad: indent\n").unwrap_err();
    assert_starts(
        &err.to_string(),
        "bad.yaml:2:6: YAML syntax error: mapping values are not allowed in this context",
    );
    let err = parse("bad.yaml", "a: &x 1\nb: *x\n").unwrap_err();
    assert_eq!(err.to_string(), "bad.yaml:2:4: YAML syntax error: YAML aliases (`*name`) are not supported in target files; write the value out");
    let err = parse("bad.yaml", "").unwrap_err();
    assert_starts(
        &err.to_string(),
        "bad.yaml:1:1: YAML syntax error: the file is empty",
    );
}

#[test]
fn a_builtin_target_missing_a_node_says_what_a_user_can_do() {
    // An empty machine: the built-in qcs6490 needs nodes it lacks.
    let tree = lever_testkit::FakeTree::new();
    let err = lever_targets::load_builtin("qcs6490")
        .unwrap()
        .bind(tree.fs())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("builtin:qcs6490.yaml:"), "{err}");
    assert!(
        err.contains("`qcs6490` is a built-in target and cannot be edited: use `--target generic`")
            && err.contains("copy Lever's crates/targets/targets/qcs6490.yaml"),
        "{err}"
    );
    // A user's own file keeps the advice that works for it.
    assert!(missing_max_freq_error().ends_with("mark the resource `optional: true` to skip it"));
}

/// BASE bound on a tree without policy0's `cpuinfo_max_freq`.
fn missing_max_freq_error() -> String {
    let tree = base_tree();
    let fs = tree.fs();
    std::fs::remove_file(
        fs.resolve("/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq")
            .unwrap(),
    )
    .unwrap();
    bind_error(BASE, fs)
}

// --- PM QoS devices ---------------------------------------------------------

/// `/dev/cpu_dma_latency` takes a binary s32 held while the file is open:
/// a resource on it is hold-fd without saying so (an imported target never
/// does), and any other kind is refused at its line (issue 27 item 7: an
/// imported one became a text node and read back as binary).
#[test]
fn a_pm_qos_device_is_hold_fd() {
    let qos = |kind: &str| {
        edit(
            "    node: /proc/sys/vm/swappiness\n",
            &format!("    node: /dev/cpu_dma_latency\n{kind}"),
        )
    };
    let file = parse("bad.yaml", &qos("")).unwrap();
    assert_eq!(file.resources[2].kind, lever_targets::TemplateKind::HoldFd);
    let file = parse("bad.yaml", &qos("    kind: hold-fd\n")).unwrap();
    assert_eq!(file.resources[2].kind, lever_targets::TemplateKind::HoldFd);
    let msg = error(&qos("    kind: plain\n"));
    assert_eq!(msg, "bad.yaml:31:11: field `resources[2].kind`: /dev/cpu_dma_latency is a PM QoS device: it takes a binary 32-bit value and holds it only while the file is open, so its kind is hold-fd (the default for this node), not plain");
}
