//! Aligned text tables for people, JSON for programs.

use serde::Serialize;
use std::io::{self, Write};

/// A text table with a header row, printed with aligned columns.
pub struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[&'static str]) -> Self {
        Table {
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Add a row (one cell per header).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Render to a string; the last column is not padded.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.len()).collect();
        for row in &self.rows {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.headers.iter().map(|h| h.to_string()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let last = row.len().saturating_sub(1);
            for (i, cell) in row.iter().enumerate() {
                if i == last {
                    out.push_str(cell);
                } else {
                    let pad = widths[i] - cell.chars().count();
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad + 2));
                }
            }
            out.push('\n');
        }
        out
    }

    /// Print to stdout.
    pub fn print(&self) -> anyhow::Result<()> {
        out(&self.render())
    }
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    out(&text)
}

/// Stdout was closed before everything was written (`lever … | head -1`).
/// Not a failure of the command: `main` ends quietly on it, like `cat`.
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed")]
pub struct StdoutClosed;

/// Write `text` to stdout: the one place the CLI writes its results, so a
/// closed pipe (EPIPE) is one typed error instead of a panic in `println!`.
pub fn out(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["A", "LONG"]);
        t.row(vec!["wide cell".into(), "x".into()]);
        assert_eq!(t.render(), "A          LONG\nwide cell  x\n");
    }
}
