//! Use cases: named bundles of resource values a client triggers by name or
//! 32-bit id (URM calls them signals), and the pure function that turns one
//! plus the request's attributes into the adjustments to make.
//!
//! A use case holds
//!
//! - **settings** of the target's resources (anything a perflock can name,
//!   referred to by expanded name such as `cpu_min_freq.gold` or by
//!   opcode), resolved to opcodes when the file is read;
//! - **cgroup writes** (`cpu.uclamp.min`, `cpu.weight`, ... of a
//!   Lever-managed cgroup);
//! - **thread rules** for the requesting process's threads (affinity,
//!   policy, uclamp, cgroup), matched by thread `comm`;
//! - **variants** chosen by attributes (`fps`, `width`, `height`), whose
//!   settings override the base ones.
//!
//! # Which variant wins
//!
//! The variant with the smallest distance to the request's attributes:
//!
//! ```text
//! distance(variant, request) = Σ over the attributes the variant names:
//!     |request − variant| / variant    if the request gives it
//!     1                                if it does not
//! ```
//!
//! Each term is a relative difference, so 60 vs 30 fps weighs as much as
//! 3840 vs 1920 pixels of width. Ties go to the variant first in the file.
//! With no attributes at all, the variant naming the fewest attributes
//! wins (the first one, if they name as many).

use lever_engine::resource::{Opcode, Permission};
pub use lever_tasks::{CgroupSetting, ThreadRule};
use serde::Serialize;
use std::fmt;

/// An attribute a variant is chosen by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attr {
    /// Frames per second.
    Fps,
    /// Width in pixels.
    Width,
    /// Height in pixels.
    Height,
}

impl Attr {
    /// Every attribute.
    pub const ALL: [Attr; 3] = [Attr::Fps, Attr::Width, Attr::Height];

    /// The word used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Attr::Fps => "fps",
            Attr::Width => "width",
            Attr::Height => "height",
        }
    }

    /// The attribute named `word`.
    pub fn from_word(word: &str) -> Option<Attr> {
        Attr::ALL.into_iter().find(|a| a.as_str() == word)
    }
}

/// Attribute values of a request or a variant, in [`Attr`] order.
pub type Attrs = Vec<(Attr, u32)>;

/// Parse `fps=30,width=3840` into [`Attrs`] (what `--attr` takes).
pub fn parse_attrs(text: &str) -> Result<Attrs, String> {
    let mut out: Attrs = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}`: expected NAME=VALUE such as fps=30"))?;
        let attr = Attr::from_word(k.trim())
            .ok_or_else(|| format!("`{k}`: unknown attribute (known: fps, width, height)"))?;
        let value = v
            .trim()
            .parse::<u32>()
            .map_err(|_| format!("`{v}`: {k} must be a whole number"))?;
        if out.iter().any(|(a, _)| *a == attr) {
            return Err(format!("`{k}` given twice"));
        }
        out.push((attr, value));
    }
    out.sort();
    Ok(out)
}

/// One setting of a target resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeSetting {
    /// The resource's expanded name (`cpu_min_freq.gold`).
    pub resource: String,
    /// Its opcode.
    pub opcode: Opcode,
    /// The level to request (an index for enum resources).
    pub value: i64,
}

/// Everything one use case (or one of its variants) sets.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Settings {
    /// Target resources.
    pub nodes: Vec<NodeSetting>,
    /// Cgroup files.
    pub cgroups: Vec<CgroupSetting>,
    /// Rules for the requesting process's threads.
    pub threads: Vec<ThreadRule>,
}

impl Settings {
    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.cgroups.is_empty() && self.threads.is_empty()
    }
}

/// A variant: settings that apply when the request's attributes are
/// closest to `when`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// Its name, e.g. `4k30`.
    pub name: String,
    /// The attributes it is for.
    pub when: Attrs,
    /// Its settings; they override the base's for the same resource or
    /// cgroup file, and add thread rules.
    pub settings: Settings,
}

impl Variant {
    /// Distance to `request` (module docs: relative difference per named
    /// attribute, 1 per attribute the request lacks).
    pub fn distance(&self, request: &[(Attr, u32)]) -> f64 {
        self.when
            .iter()
            .map(
                |(attr, want)| match request.iter().find(|(a, _)| a == attr) {
                    Some((_, got)) => {
                        (f64::from(*got) - f64::from(*want)).abs() / f64::from((*want).max(1))
                    }
                    None => 1.0,
                },
            )
            .sum()
    }
}

/// A use case as declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UseCase {
    /// Its name, e.g. `camera-preview`.
    pub name: String,
    /// Its 32-bit id (URM's signal code, for imported ones).
    pub id: u32,
    /// What it is for.
    pub description: String,
    /// How long a trigger lasts unless the request says otherwise, in ms;
    /// 0 = until released.
    pub duration_ms: u64,
    /// Who may trigger it.
    pub permission: Permission,
    /// Settings that always apply.
    pub settings: Settings,
    /// Variants, in file order.
    pub variants: Vec<Variant>,
    /// The file it was read from.
    pub file: String,
    /// 1-based line of its entry.
    pub line: usize,
}

/// What triggering a use case with some attributes means: the pure result
/// the daemon hands to the engine (nodes) and to `lever-tasks` (cgroups,
/// threads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The use case.
    pub usecase: String,
    /// Its id.
    pub id: u32,
    /// The variant chosen, if it has variants.
    pub variant: Option<String>,
    /// The settings: base merged with the variant.
    pub settings: Settings,
}

impl Resolved {
    /// The task part, for [`lever_tasks::apply_plan`] on the requesting
    /// process.
    pub fn task_plan(&self) -> lever_tasks::TaskPlan {
        lever_tasks::TaskPlan {
            cgroups: self.settings.cgroups.clone(),
            move_to: None,
            threads: self.settings.threads.clone(),
        }
    }

    /// The target-resource part as the engine takes it: `(opcode, level)`.
    pub fn adjustments(&self) -> Vec<(Opcode, i64)> {
        self.settings
            .nodes
            .iter()
            .map(|n| (n.opcode, n.value))
            .collect()
    }
}

impl UseCase {
    /// The variant closest to `attrs`, if there are variants.
    pub fn variant_for(&self, attrs: &[(Attr, u32)]) -> Option<&Variant> {
        let mut best: Option<(&Variant, f64)> = None;
        for v in &self.variants {
            let d = v.distance(attrs);
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((v, d));
            }
        }
        best.map(|(v, _)| v)
    }

    /// What triggering this use case with `attrs` sets: the base settings,
    /// overridden and extended by the closest variant's.
    pub fn resolve(&self, attrs: &[(Attr, u32)]) -> Resolved {
        let mut settings = self.settings.clone();
        let variant = self.variant_for(attrs);
        if let Some(v) = variant {
            for n in &v.settings.nodes {
                match settings.nodes.iter_mut().find(|b| b.opcode == n.opcode) {
                    Some(b) => b.value = n.value,
                    None => settings.nodes.push(n.clone()),
                }
            }
            for c in &v.settings.cgroups {
                match settings
                    .cgroups
                    .iter_mut()
                    .find(|b| b.cgroup == c.cgroup && b.knob == c.knob)
                {
                    Some(b) => b.value = c.value.clone(),
                    None => settings.cgroups.push(c.clone()),
                }
            }
            settings.threads.extend(v.settings.threads.iter().cloned());
        }
        Resolved {
            usecase: self.name.clone(),
            id: self.id,
            variant: variant.map(|v| v.name.clone()),
            settings,
        }
    }
}

/// An `apps:` entry: how to recognise the app, and what to do while it
/// runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct App {
    /// How the process is recognised (name, exec, cmdline, cgroup).
    pub pattern: lever_procwatch::AppPattern,
    /// Use cases to trigger for it (names), held until it exits.
    pub usecases: Vec<String>,
    /// A Lever-managed cgroup to move the whole process into (URM's
    /// `focused.apps`).
    pub move_to: Option<String>,
    /// Rules for its threads.
    pub threads: Vec<ThreadRule>,
    /// The file it was read from.
    pub file: String,
    /// 1-based line of its entry.
    pub line: usize,
}

impl App {
    /// The app's own task part (its `move_to` and thread rules), for
    /// [`lever_tasks::apply_plan`] on the matched process; its use cases'
    /// parts come from resolving them.
    pub fn task_plan(&self) -> lever_tasks::TaskPlan {
        lever_tasks::TaskPlan {
            cgroups: Vec::new(),
            move_to: self.move_to.clone(),
            threads: self.threads.clone(),
        }
    }
}

/// The use case named `key`, or whose id is `key` read as a number.
pub fn find<'u>(usecases: &'u [UseCase], key: &str) -> Option<&'u UseCase> {
    let id = lever_text::parse_int(key).and_then(|v| u32::try_from(v).ok());
    usecases.iter().find(|u| u.name == key || Some(u.id) == id)
}

/// A use case id as written: `0x00030001`.
pub struct Id(pub u32);

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(name: &str, when: Attrs) -> Variant {
        Variant {
            name: name.into(),
            when,
            settings: Settings::default(),
        }
    }

    fn video() -> UseCase {
        UseCase {
            name: "video-decode".into(),
            id: 1,
            description: String::new(),
            duration_ms: 0,
            permission: Permission::ThirdParty,
            settings: Settings::default(),
            variants: vec![
                variant(
                    "4k30",
                    vec![(Attr::Fps, 30), (Attr::Width, 3840), (Attr::Height, 2160)],
                ),
                variant(
                    "1080p60",
                    vec![(Attr::Fps, 60), (Attr::Width, 1920), (Attr::Height, 1080)],
                ),
            ],
            file: "t.yaml".into(),
            line: 1,
        }
    }

    fn chosen(attrs: &str) -> String {
        video()
            .resolve(&parse_attrs(attrs).unwrap())
            .variant
            .unwrap()
    }

    #[test]
    fn closest_variant_wins() {
        assert_eq!(chosen("fps=30,width=3840,height=2160"), "4k30");
        assert_eq!(chosen("fps=60,width=1920,height=1080"), "1080p60");
        // 4K at 60 fps: width/height match 4k30 exactly, fps is 100% off
        // (1.0); 1080p60 is 1.0 + 1.0 off in size.
        assert_eq!(chosen("fps=60,width=3840,height=2160"), "4k30");
        assert_eq!(chosen("fps=50"), "1080p60");
        assert_eq!(chosen("width=3000"), "4k30");
        // No attributes: a tie (3 vs 3), the first wins.
        assert_eq!(chosen(""), "4k30");
    }

    #[test]
    fn attrs_parse_and_say_what_is_wrong() {
        assert_eq!(
            parse_attrs("width=3840, fps=30").unwrap(),
            vec![(Attr::Fps, 30), (Attr::Width, 3840)]
        );
        assert!(parse_attrs("fps").unwrap_err().contains("NAME=VALUE"));
        assert!(parse_attrs("depth=3")
            .unwrap_err()
            .contains("unknown attribute"));
        assert!(parse_attrs("fps=x").unwrap_err().contains("whole number"));
        assert!(parse_attrs("fps=1,fps=2").unwrap_err().contains("twice"));
    }
}
