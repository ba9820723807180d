//! Properties of the transaction, over random node contents, values and a
//! random refusing node: a failed apply leaves every node as it was; a
//! successful apply then rollback does too; the error names the node that
//! refused.

use lever_kernel::{KernelError, KernelFs};
use lever_profiles::{apply, rollback, From, Nodes, Write};
use lever_testkit::{changed, snapshot, FakeTree};
use proptest::prelude::*;

/// Refuses writes to one node with EINVAL, like a sysfs store() would.
struct Refusing<'a> {
    fs: &'a KernelFs,
    node: Option<String>,
}

impl Nodes for Refusing<'_> {
    fn read(&self, node: &str) -> Result<String, KernelError> {
        self.fs.read(node)
    }

    fn write(&self, node: &str, value: &str) -> Result<(), KernelError> {
        if self.node.as_deref() == Some(node) {
            return Err(KernelError::Rejected {
                path: node.into(),
                value: value.into(),
                source: std::io::Error::from_raw_os_error(22),
            });
        }
        self.fs.write_raw(node, value)
    }
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (-5i64..2_000_000).prop_map(|v| v.to_string()),
        prop::sample::select(vec!["performance", "schedutil", "0-7", "f1", ""])
            .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_transaction_is_all_or_nothing_and_rollback_is_exact(
        nodes in prop::collection::vec((value(), value()), 1..12),
        refuse in prop::option::of(0usize..12),
    ) {
        let tree = FakeTree::new();
        let mut writes = Vec::new();
        for (i, (original, new)) in nodes.iter().enumerate() {
            let node = format!("/sys/fake/n{i}");
            tree.node(&node, &format!("{original}\n"));
            writes.push(Write {
                node,
                value: new.clone(),
                resource: None,
                required: true,
                from: From { file: "p.yaml".into(), line: i + 1, field: "sysfs".into() },
            });
        }
        let refusing_node = refuse.filter(|&k| k < nodes.len()).map(|k| format!("/sys/fake/n{k}"));
        let backend = Refusing { fs: tree.fs(), node: refusing_node.clone() };
        let before = snapshot(tree.root());
        match apply(&backend, &writes) {
            Ok(applied) => {
                // Only a refusing node that already held its value is never written.
                if let Some(node) = &refusing_node {
                    let k: usize = node.trim_start_matches("/sys/fake/n").parse().unwrap();
                    prop_assert_eq!(&nodes[k].0, &nodes[k].1);
                }
                for (w, e) in writes.iter().zip(&applied.entries) {
                    prop_assert_eq!(&tree.read(&w.node), &w.value);
                    prop_assert_eq!(e.changed, e.original != w.value);
                }
                rollback(tree.fs(), &applied.entries).unwrap();
            }
            Err(e) => {
                prop_assert_eq!(Some(e.node.clone()), refusing_node);
                prop_assert_eq!(e.errno, Some(22));
                prop_assert!(e.failed_restores.is_empty());
            }
        }
        prop_assert_eq!(changed(&before, &snapshot(tree.root())), Vec::<String>::new());
    }
}
