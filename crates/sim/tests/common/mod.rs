//! Shared test helpers: render a simulated tree as one text snapshot.
//!
//! Format (sorted by path; directories are implied by their files):
//!
//! ```text
//! === /proc/version
//! Linux version ...
//! === /sys/firmware/devicetree/base/memory@80000000/reg [binary, 32 bytes]
//! 00 00 00 00 80 00 00 00 00 00 00 00 80 00 00 00
//! === /proc/device-tree -> ../sys/firmware/devicetree/base
//! ```
//!
//! Text files are shown as is; a file without a final newline is followed by
//! `\ no newline at end of file`. Files with NUL or other control bytes
//! (device-tree strings, binary cells) are shown as hex.

#![allow(dead_code)]

use std::fs;
use std::path::Path;

/// Render every file and symlink below `root`.
pub fn snapshot(root: &Path) -> String {
    let mut entries = Vec::new();
    walk(root, root, &mut entries);
    entries.sort();
    let mut out = String::new();
    for rel in entries {
        let host = root.join(&rel[1..]);
        let meta = fs::symlink_metadata(&host).unwrap();
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&host).unwrap();
            out.push_str(&format!("=== {rel} -> {}\n", target.display()));
            continue;
        }
        let bytes = fs::read(&host).unwrap();
        match text_of(&bytes) {
            Some(text) => {
                out.push_str(&format!("=== {rel}\n{text}"));
                if !text.is_empty() && !text.ends_with('\n') {
                    out.push_str("\n\\ no newline at end of file\n");
                }
            }
            None => {
                out.push_str(&format!("=== {rel} [binary, {} bytes]\n", bytes.len()));
                for chunk in bytes.chunks(16) {
                    let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
                    out.push_str(&hex.join(" "));
                    out.push('\n');
                }
            }
        }
    }
    out
}

fn text_of(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let printable = text
        .chars()
        .all(|c| c == '\n' || c == '\t' || !c.is_control());
    printable.then_some(text)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            walk(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap();
            out.push(format!("/{}", rel.display()));
        }
    }
}
