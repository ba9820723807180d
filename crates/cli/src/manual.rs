//! Shell completions and man pages, made from the clap definitions in
//! `args.rs` at run time, so they never drift from `lever --help` and a
//! board without the package can still get them (`lever completions bash`,
//! `lever man -o DIR`).

use clap_complete::Shell;
use std::path::{Path, PathBuf};

/// A man page: its file name (`lever-sim-create.1`) and its roff text.
pub struct Page {
    /// File name, the command path joined by `-`, section 1.
    pub file: String,
    /// The page in roff.
    pub roff: String,
}

/// A man page that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write man page {path}")]
pub struct WriteError {
    /// The file or directory that failed.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The completion script for `shell`, for `source <(lever completions bash)`
/// or the shell's completion directory.
pub fn completions(shell: Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut crate::args::command(), "lever", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// `lever(1)` and one page per subcommand (`lever-mem-thrash(1)`), parent
/// first.
pub fn pages() -> Vec<Page> {
    // Built once so every subcommand carries its display name
    // (`lever-sim-create`) and the global flags; `help` is clap's, not ours.
    let cmd = crate::args::command();
    let mut pages = Vec::new();
    collect(cmd, &mut pages);
    pages
}

fn collect(cmd: clap::Command, pages: &mut Vec<Page>) {
    let subcommands: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .cloned()
        .collect();
    let man = clap_mangen::Man::new(cmd);
    let mut roff = Vec::new();
    // Rendering into a Vec cannot fail.
    man.render(&mut roff).expect("render into memory");
    pages.push(Page {
        file: man.get_filename(),
        roff: String::from_utf8_lossy(&roff).into_owned(),
    });
    for sub in subcommands {
        collect(sub, pages);
    }
}

/// Write every page of [`pages`] into `dir` (created if missing, but
/// only `dir` itself: a mistyped parent is an error, not a new tree); the
/// paths written, `lever.1` first.
pub fn write_pages(dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
        other => other.map_err(|source| WriteError {
            path: dir.to_path_buf(),
            source,
        })?,
    }
    pages()
        .into_iter()
        .map(|page| {
            let path = dir.join(&page.file);
            std::fs::write(&path, page.roff)
                .map(|()| path.clone())
                .map_err(|source| WriteError { path, source })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_has_a_page() {
        let files: Vec<String> = pages().into_iter().map(|p| p.file).collect();
        assert_eq!(files[0], "lever.1");
        for name in ["lever-sim-create.1", "lever-mem-thrash.1", "lever-man.1"] {
            assert!(files.iter().any(|f| f == name), "{name} missing: {files:?}");
        }
        assert!(!files.iter().any(|f| f.starts_with("lever-help")));
    }

    #[test]
    fn completions_name_the_subcommands() {
        let bash = completions(Shell::Bash);
        assert!(bash.contains("complete -F _lever"), "{bash}");
        assert!(bash.contains("resources"));
        assert!(completions(Shell::Fish).contains("complete -c lever"));
        assert!(completions(Shell::Zsh).starts_with("#compdef lever"));
    }
}
