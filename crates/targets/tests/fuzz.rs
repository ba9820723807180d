//! Fuzz-ish properties: no input makes `parse` or `bind` panic, and every
//! error located in the file has a 1-based position inside it.

mod common;

use lever_targets::{builtin_text, parse, TargetError};
use proptest::prelude::*;

fn check_located(text: &str, err: &TargetError) {
    if let Some((file, line, col)) = err.location() {
        assert_eq!(file, "fuzz.yaml");
        assert!(line >= 1 && col >= 1, "{err}");
        // The scanner may point one line past the end (unexpected EOF).
        assert!(line <= text.lines().count() + 2, "{err}");
    }
}

fn parse_and_bind(text: &str) {
    match parse("fuzz.yaml", text) {
        Ok(file) => {
            let tree = lever_testkit::FakeTree::new();
            let fs = tree.fs();
            if let Err(e) = file.bind(fs) {
                check_located(text, &e);
            }
        }
        Err(e) => check_located(text, &e),
    }
}

/// Apply `edits` (position, cut length, insertion) to `base`, by chars.
fn mutate(base: &str, edits: &[(usize, usize, String)]) -> String {
    let mut chars: Vec<char> = base.chars().collect();
    for (at, cut, insert) in edits {
        let at = at % (chars.len() + 1);
        let end = (at + cut).min(chars.len());
        chars.splice(at..end, insert.chars());
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        parse_and_bind(&text);
    }

    #[test]
    fn yaml_shaped_strings_never_panic(text in "[a-z_:{}\\[\\],\\- \n#&*!|>\"'0-9x/.]{0,300}") {
        parse_and_bind(&text);
    }

    #[test]
    fn mutated_builtins_never_panic(
        which in 0usize..3,
        edits in proptest::collection::vec(
            (any::<usize>(), 0usize..12, "[a-z0-9:{}\\[\\], \n\\-/x]{0,8}"),
            1..4,
        ),
    ) {
        let name = lever_targets::builtin_names()[which];
        let text = mutate(builtin_text(name).unwrap(), &edits);
        parse_and_bind(&text);
    }
}
