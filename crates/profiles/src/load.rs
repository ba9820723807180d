//! Finding and reading profiles: built-ins by name, files by path, and the
//! `include:` chain with cycle detection.

use crate::error::ProfileError;
use crate::model::{self, Profile};
use lever_yaml::ErrorKind;
use std::path::{Path, PathBuf};

/// The built-in profiles, embedded at build time.
const BUILTINS: &[(&str, &str)] = &[
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
];

/// Names of the built-in profiles, in the order `lever profile list` shows.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(n, _)| *n).collect()
}

/// The YAML text of a built-in profile.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Parse and check a profile file. `source` names it in errors.
pub fn parse(source: &str, text: &str) -> Result<Profile, ProfileError> {
    parse_labeled(source, source, text)
}

fn parse_labeled(source: &str, file: &str, text: &str) -> Result<Profile, ProfileError> {
    let doc = lever_yaml::parse(text).map_err(|e| ProfileError::Syntax {
        file: file.to_string(),
        line: e.pos.line,
        col: e.pos.col,
        message: match e.kind {
            ErrorKind::Alias => {
                "YAML aliases (`*name`) are not supported in profiles; write the value out"
                    .to_string()
            }
            ErrorKind::Empty => "the file is empty: expected a mapping with `profile:`".to_string(),
            other => other.to_string(),
        },
    })?;
    model::decode(file, source, &doc)
}

/// A built-in profile by name; its source is `builtin:NAME`.
pub fn load_builtin(name: &str) -> Result<Profile, ProfileError> {
    let text = builtin_text(name).ok_or_else(|| ProfileError::Unknown {
        name: name.to_string(),
        known: builtin_names().iter().map(|s| s.to_string()).collect(),
    })?;
    parse_labeled(
        &format!("builtin:{name}"),
        &format!("builtin:{name}.yaml"),
        text,
    )
}

/// A profile file on disk.
pub fn load_path(path: &Path) -> Result<Profile, ProfileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&shown, &text)
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
    if builtin_text(name).is_some() {
        return load_builtin(name);
    }
    // A file included from a file is relative to that file's directory.
    let path = match included_from.filter(|s| !s.starts_with("builtin:")) {
        Some(parent) if Path::new(name).is_relative() => Path::new(parent)
            .parent()
            .unwrap_or(Path::new(""))
            .join(name),
        _ => PathBuf::from(name),
    };
    let looks_like_path = name.contains('/') || name.ends_with(".yaml") || name.ends_with(".yml");
    if looks_like_path || path.exists() {
        return load_path(&path);
    }
    Err(ProfileError::Unknown {
        name: name.to_string(),
        known: builtin_names().iter().map(|s| s.to_string()).collect(),
    })
}
