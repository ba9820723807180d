//! Golden tests: each board's whole tree against `tests/golden/<board>.txt`.
//!
//! Set `LEVER_UPDATE_GOLDEN=1` to rewrite the golden files after an
//! intended change, then review the diff.

mod common;

use std::path::PathBuf;

fn golden_path(board: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{board}.txt"))
}

fn check(board: &str) {
    let dir = tempfile::tempdir().unwrap();
    let created = lever_sim::create(board, dir.path()).unwrap();
    let actual = common::snapshot(&created.root);
    let path = golden_path(board);
    if std::env::var("LEVER_UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, &actual).unwrap();
        eprintln!("updated {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with LEVER_UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{board}: tree differs from {} at line {}:\n  actual:   {:?}\n  expected: {:?}\n\
             (LEVER_UPDATE_GOLDEN=1 rewrites it)",
            path.display(),
            line + 1,
            actual.lines().nth(line),
            expected.lines().nth(line)
        );
    }
}

#[test]
fn golden_qcs6490() {
    check("qcs6490");
}

#[test]
fn golden_qcs5430_fp1() {
    check("qcs5430-fp1");
}

#[test]
fn golden_am437x() {
    check("am437x");
}

#[test]
fn create_is_deterministic_and_recreates_in_place() {
    for info in lever_sim::boards() {
        let dir = tempfile::tempdir().unwrap();
        let first = lever_sim::create(info.name, dir.path()).unwrap();
        let a = common::snapshot(dir.path());
        let second = lever_sim::create(info.name, dir.path()).unwrap();
        let b = common::snapshot(dir.path());
        assert_eq!(a, b, "{}", info.name);
        assert_eq!(first, second);
        // Every node plus the marker appears in the snapshot.
        assert_eq!(
            a.matches("\n=== ").count() + 1,
            first.files + 1,
            "{}",
            info.name
        );
    }
}
