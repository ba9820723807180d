//! `lever target list|check`.

use crate::render::Table;
use serde::Serialize;

/// A built-in target in `target list`.
#[derive(Serialize)]
pub struct Builtin {
    pub name: String,
    pub description: String,
    pub compatible: Vec<String>,
}

/// What `target check` bound.
#[derive(Serialize)]
pub struct Checked<'a> {
    pub target: &'a str,
    pub source: &'a str,
    pub root: &'a std::path::Path,
    pub resources: usize,
}

/// The built-in targets, one row each.
pub fn list(list: &Vec<Builtin>) -> String {
    let mut t = Table::new(&["TARGET", "COMPATIBLE", "DESCRIPTION"]);
    for b in list {
        t.row(vec![
            b.name.clone(),
            b.compatible.join(","),
            b.description.clone(),
        ]);
    }
    t.render()
}

/// The check's one line.
pub fn checked(c: &Checked) -> String {
    format!(
        "{} ({}): ok, {} resources bound under {}\n",
        c.target,
        c.source,
        c.resources,
        c.root.display()
    )
}

/// What `lever usecases` lists.
#[derive(Serialize)]
pub struct UsecaseList {
    pub target: String,
    pub usecases: Vec<lever_targets::UseCase>,
}

/// One row per use case, then one line per variant.
pub fn usecases(list: &UsecaseList) -> String {
    if list.usecases.is_empty() {
        return format!("target {} defines no use cases\n", list.target);
    }
    let mut t = Table::new(&[
        "USECASE",
        "ID",
        "DURATION",
        "WHO",
        "SETS",
        "VARIANTS",
        "DESCRIPTION",
    ]);
    for u in &list.usecases {
        let s = &u.settings;
        let duration = if u.duration_ms == 0 {
            "until released".to_string()
        } else {
            format!("{} ms", u.duration_ms)
        };
        let variants: Vec<String> = u
            .variants
            .iter()
            .map(|v| {
                let when: Vec<String> = v
                    .when
                    .iter()
                    .map(|(a, n)| format!("{}={n}", a.as_str()))
                    .collect();
                format!("{}({})", v.name, when.join(","))
            })
            .collect();
        t.row(vec![
            u.name.clone(),
            lever_targets::usecase::Id(u.id).to_string(),
            duration,
            match u.permission {
                lever_engine::resource::Permission::System => "system".into(),
                lever_engine::resource::Permission::ThirdParty => "third-party".into(),
            },
            format!(
                "{} nodes, {} cgroup files, {} thread rules",
                s.nodes.len(),
                s.cgroups.len(),
                s.threads.len()
            ),
            if variants.is_empty() {
                "-".into()
            } else {
                variants.join(" ")
            },
            u.description.clone(),
        ]);
    }
    t.render()
}

/// What `target import-urm` did.
#[derive(Serialize)]
pub struct Imported<'a> {
    pub files: &'a [String],
    pub output: Option<&'a std::path::Path>,
    pub resources: usize,
    pub usecases: Vec<&'a str>,
    pub apps: Vec<&'a str>,
    pub warnings: &'a [lever_urm::Warning],
    /// The target file, when it was not written to `output`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yaml: Option<&'a str>,
}

impl<'a> Imported<'a> {
    pub fn new(i: &'a lever_urm::Import, output: Option<&'a std::path::Path>) -> Imported<'a> {
        Imported {
            files: &i.files,
            output,
            resources: i.target.resources.len(),
            usecases: i.target.usecases.iter().map(|u| u.name.as_str()).collect(),
            apps: i
                .target
                .apps
                .iter()
                .map(|a| a.pattern.name.as_str())
                .collect(),
            warnings: &i.warnings,
            yaml: output.is_none().then_some(i.yaml.as_str()),
        }
    }
}

/// The target file (unless written to a file), then a summary and one
/// `# warning:` line per warning, so the output stays valid YAML.
pub fn imported(i: &Imported) -> String {
    let mut out = String::new();
    if let Some(y) = i.yaml {
        out.push_str(y);
    }
    let dest = i
        .output
        .map(|p| format!("wrote {}", p.display()))
        .unwrap_or_else(|| "imported".to_string());
    out.push_str(&format!(
        "# {dest}: {} files, {} resource templates, use cases: {}; apps: {}; {} warnings\n",
        i.files.len(),
        i.resources,
        i.usecases.join(", "),
        i.apps.join(", "),
        i.warnings.len()
    ));
    for w in i.warnings {
        out.push_str(&format!("# warning: {w}\n"));
    }
    out
}
