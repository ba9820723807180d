//! The example in docs/targets.md parses and binds as the text says.

mod common;

use lever_engine::resource::Opcode;

const DOC: &str = include_str!("../../../docs/targets.md");

fn first_yaml_block(text: &str) -> &str {
    let start = text.find("```yaml\n").expect("a yaml block") + "```yaml\n".len();
    let len = text[start..].find("```").expect("closed block");
    &text[start..start + len]
}

#[test]
fn documented_example_binds() {
    let file = lever_targets::parse("example.yaml", first_yaml_block(DOC)).unwrap();
    assert_eq!(file.compatible, ["vendor,myboard", "vendor,mysoc"]);
    let tree = lever_testkit::FakeTree::new();
    let fs = tree.fs();
    common::policy(&tree, 0, "0 1 2 3", common::SILVER_KHZ);
    common::policy(&tree, 4, "4 5 6 7", common::GOLD_KHZ);
    common::cpus(&tree, 8, 3);
    common::common(&tree);
    let t = file.bind(fs).unwrap();
    // 2x2 frequencies + 2 governors + 1 pwrlevel + 8x3 cpuidle + PM QoS
    assert_eq!(t.resources.len(), 32);
    assert_eq!(
        t.by_name("cpu_min_freq.little").unwrap().opcode,
        Opcode(0x44008000)
    );
    assert_eq!(
        t.by_name("cpu_min_freq.big").unwrap().opcode,
        Opcode(0x44008100)
    );
    assert_eq!(
        t.by_name("cpuidle_disable.cpu7.state2").unwrap().opcode,
        Opcode(0x49400072)
    );
    assert_eq!(t.by_name("gpu_min_pwrlevel").unwrap().high, 5);
}
