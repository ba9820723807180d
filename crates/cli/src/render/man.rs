//! `lever man -o DIR`: the pages written.

use std::path::PathBuf;

/// One path a line, then how to read them.
pub fn written(paths: &[PathBuf]) -> String {
    let mut text: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
    if let Some(first) = paths.first() {
        text.push_str(&format!(
            "{} pages; read one with: man -l {}\n",
            paths.len(),
            first.display()
        ));
    }
    text
}
