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
    pub fn print(&self) -> io::Result<()> {
        io::stdout().lock().write_all(self.render().as_bytes())
    }
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
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
