//! Finding and reading profiles: built-ins by name, files by path, and the
//! `include:` chain with cycle detection.

use crate::error::ProfileError;
use crate::model::{self, Profile};
use lever_yaml::{Builtins, ErrorKind, Found};
use std::path::Path;

/// The built-in profiles, embedded at build time.
const BUILTINS: Builtins = Builtins {
    kind: "profile",
    files: &[
        ("performance", include_str!("../profiles/performance.yaml")),
        ("balanced", include_str!("../profiles/balanced.yaml")),
        ("powersave", include_str!("../profiles/powersave.yaml")),
        ("rt", include_str!("../profiles/rt.yaml")),
        (
            "memory-low-latency",
            include_str!("../profiles/memory-low-latency.yaml"),
        ),
        (
            "memory-defaults",
            include_str!("../profiles/memory-defaults.yaml"),
        ),
        (
            "memory-conserve",
            include_str!("../profiles/memory-conserve.yaml"),
        ),
    ],
};

/// Names of the built-in profiles, in the order `lever profile list` shows.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.names()
}

/// The YAML text of a built-in profile.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTINS.text(name)
}

/// Parse and check a profile file. `source` names it in errors.
pub fn parse(source: &str, text: &str) -> Result<Profile, ProfileError> {
    parse_labeled(source, source, text)
}

fn parse_labeled(source: &str, file: &str, text: &str) -> Result<Profile, ProfileError> {
    let doc = lever_yaml::parse_file(file, text, |kind| {
        Some(
            match kind {
                ErrorKind::Alias => {
                    "YAML aliases (`*name`) are not supported in profiles; write the value out"
                }
                ErrorKind::Empty => "the file is empty: expected a mapping with `profile:`",
                _ => return None,
            }
            .to_string(),
        )
    })?;
    model::decode(file, source, &doc)
}

fn parse_found(found: Found) -> Result<Profile, ProfileError> {
    parse_labeled(&found.source, &found.file, &found.text)
}

/// A built-in profile by name; its source is `builtin:NAME`.
pub fn load_builtin(name: &str) -> Result<Profile, ProfileError> {
    parse_found(BUILTINS.builtin(name)?)
}

/// A profile file on disk.
pub fn load_path(path: &Path) -> Result<Profile, ProfileError> {
    parse_found(BUILTINS.path(path)?)
}

/// A profile and everything it includes, the deepest include first and
/// the named profile last: later profiles override earlier ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// Base first, the named profile last.
    pub profiles: Vec<Profile>,
}

impl Chain {
    /// The named (last) profile.
    pub fn top(&self) -> &Profile {
        self.profiles
            .last()
            .expect("a chain holds at least one profile")
    }

    /// The names, base first (`performance -> rt`).
    pub fn names(&self) -> Vec<String> {
        self.profiles.iter().map(|p| p.name.clone()).collect()
    }
}

/// What a profile name means: a built-in name, or the path of a YAML file
/// (anything with a `/` or a `.yaml`/`.yml` ending, or an existing file).
/// Its includes are loaded too; a cycle is an error naming the chain.
pub fn load(name_or_path: &str) -> Result<Chain, ProfileError> {
    let first = load_one(name_or_path, None)?;
    let mut profiles = vec![first];
    loop {
        let last = profiles.last().expect("not empty");
        let Some(inc) = last.include.clone() else {
            break;
        };
        let next = load_one(&inc.value, Some(&last.source))?;
        if profiles.iter().any(|p| p.source == next.source) {
            let mut chain: Vec<String> = profiles.iter().map(|p| p.name.clone()).collect();
            chain.push(next.name);
            return Err(ProfileError::IncludeCycle {
                file: last.file.clone(),
                line: inc.pos.line,
                col: inc.pos.col,
                chain,
            });
        }
        profiles.push(next);
    }
    profiles.reverse();
    Ok(Chain { profiles })
}

fn load_one(name: &str, included_from: Option<&str>) -> Result<Profile, ProfileError> {
    // A file included from a file is relative to that file's directory.
    let dir = included_from
        .filter(|s| !s.starts_with("builtin:"))
        .map(|parent| Path::new(parent).parent().unwrap_or(Path::new("")));
    parse_found(BUILTINS.find(name, dir)?)
}
