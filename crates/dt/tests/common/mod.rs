//! Shared helpers: the shared device trees, `dtc`, skipping with a
//! printed reason (a failure under `CI=true`, where CI provides both), and
//! a reader for the source `dtc -I dtb -O dts` prints, independent of the
//! crate's parser, to check it against.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// True under `CI=true`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Say why a test skips; under CI=true, fail instead.
pub fn skip(test: &str, why: &str) {
    assert!(
        !in_ci(),
        "{test} cannot run under CI=true: {why} (CI must provide it; see .ci/run)"
    );
    println!("SKIPPED {test}: {why}");
}

/// The shared real device trees (`../shared/third-party/dtb`), sorted.
pub fn shared_dtbs() -> Result<Vec<PathBuf>, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/third-party/dtb");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("no shared device trees at {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dtb"))
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(format!("no .dtb in {}", dir.display()));
    }
    Ok(v)
}

/// Whether `dtc` runs.
pub fn have_dtc() -> bool {
    Command::new("dtc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Compile dts text with `dtc -@` into a blob.
pub fn dtc_compile(dts: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("t.dts");
    std::fs::write(&src, dts).unwrap();
    let out = Command::new("dtc")
        .args(["-q", "-@", "-I", "dts", "-O", "dtb", "-o", "-"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dtc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `dtc -I dtb -O dts FILE`.
pub fn dtc_decompile(dtb: &Path) -> String {
    let out = Command::new("dtc")
        .args(["-q", "-I", "dtb", "-O", "dts"])
        .arg(dtb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dtc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A tree as dtc prints it: node path → properties (name, raw bytes) in order.
pub type DtsTree = BTreeMap<String, Vec<(String, Vec<u8>)>>;

/// Read `dtc -O dts` output: nodes, properties with `<cells>`, `"strings"`
/// (with dtc's escapes) and `[bytes]` values.
pub fn parse_dts(text: &str) -> DtsTree {
    let b = text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<String> = Vec::new();
    let mut tree = DtsTree::new();
    let ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] as char).is_whitespace() {
            *i += 1;
        }
    };
    let path_of = |stack: &[String]| -> String {
        if stack.len() <= 1 {
            "/".to_string()
        } else {
            format!("/{}", stack[1..].join("/"))
        }
    };
    loop {
        ws(&mut i);
        if i >= b.len() {
            break;
        }
        if text[i..].starts_with("/dts-v1/;") {
            i += 9;
            continue;
        }
        if text[i..].starts_with("/memreserve/") {
            i += text[i..].find(';').unwrap() + 1;
            continue;
        }
        if b[i] == b'}' {
            assert_eq!(b[i + 1], b';');
            i += 2;
            stack.pop();
            continue;
        }
        let start = i;
        while !matches!(b[i], b' ' | b'\t' | b'\n' | b'{' | b';' | b'=') {
            i += 1;
        }
        let word = text[start..i].to_string();
        ws(&mut i);
        if word.ends_with(':') {
            continue; // a label
        }
        match b[i] {
            b'{' => {
                i += 1;
                stack.push(word);
                tree.entry(path_of(&stack)).or_default();
            }
            b';' => {
                i += 1;
                tree.get_mut(&path_of(&stack))
                    .unwrap()
                    .push((word, Vec::new()));
            }
            b'=' => {
                i += 1;
                let mut value = Vec::new();
                loop {
                    ws(&mut i);
                    match b[i] {
                        b'<' => {
                            i += 1;
                            loop {
                                ws(&mut i);
                                if b[i] == b'>' {
                                    i += 1;
                                    break;
                                }
                                let s = i;
                                while !matches!(b[i], b' ' | b'>') {
                                    i += 1;
                                }
                                let t = &text[s..i];
                                let v = if let Some(h) = t.strip_prefix("0x") {
                                    u32::from_str_radix(h, 16).unwrap()
                                } else {
                                    t.parse::<u32>().unwrap()
                                };
                                value.extend(v.to_be_bytes());
                            }
                        }
                        b'"' => {
                            i += 1;
                            while b[i] != b'"' {
                                if b[i] == b'\\' {
                                    i += 1;
                                    let c = b[i];
                                    i += 1;
                                    match c {
                                        b'a' => value.push(7),
                                        b'b' => value.push(8),
                                        b't' => value.push(9),
                                        b'n' => value.push(10),
                                        b'v' => value.push(11),
                                        b'f' => value.push(12),
                                        b'r' => value.push(13),
                                        b'x' => {
                                            let s = i;
                                            while i < s + 2 && b[i].is_ascii_hexdigit() {
                                                i += 1;
                                            }
                                            value
                                                .push(u8::from_str_radix(&text[s..i], 16).unwrap());
                                        }
                                        // dtc writes a NUL as `\0` and nothing
                                        // else in octal, also before a digit
                                        // ("\02K" is NUL, '2', 'K').
                                        b'0' => value.push(0),
                                        other => value.push(other),
                                    }
                                } else {
                                    value.push(b[i]);
                                    i += 1;
                                }
                            }
                            i += 1;
                            value.push(0);
                        }
                        b'[' => {
                            i += 1;
                            let e = i + text[i..].find(']').unwrap();
                            for h in text[i..e].split_whitespace() {
                                value.push(u8::from_str_radix(h, 16).unwrap());
                            }
                            i = e + 1;
                        }
                        other => panic!("unexpected {:?} at {i}", other as char),
                    }
                    ws(&mut i);
                    if b[i] == b',' {
                        i += 1;
                        continue;
                    }
                    assert_eq!(b[i], b';', "at {i}");
                    i += 1;
                    break;
                }
                tree.get_mut(&path_of(&stack)).unwrap().push((word, value));
            }
            other => panic!("unexpected {:?} after {word:?}", other as char),
        }
    }
    tree
}

/// A property of the dtc tree.
pub fn dts_prop<'a>(t: &'a DtsTree, path: &str, name: &str) -> Option<&'a [u8]> {
    t.get(path)?
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
}

/// Big-endian cells of a value.
pub fn cells(v: &[u8]) -> Vec<u32> {
    v.chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
