//! Decoding `apps:` entries and the `app_filter:` mapping.
//!
//! ```yaml
//! app_filter: { require_tty_or_display: true, blocklist: [sshd] }
//! apps:
//!   - name: camera
//!     exec: gst-launch-1.0
//!     cmdline: "qtiqmmfsrc"
//!     usecases: [camera-preview]
//!     move_to: lever/focused
//!     threads:
//!       - { comm: "qmmf*", affinity: 4-7 }
//! ```

use super::access::{boolean, identifier, integer, seq, string, MapView, Result};
use super::usecase::thread_rule;
use crate::error::InFile;
use crate::usecase::{App, UseCase};
use lever_procwatch::{AppFilter, AppPattern};
use lever_yaml::Node;

const APP_KEYS: &[&str] = &[
    "name", "exec", "cmdline", "cgroup", "usecases", "move_to", "threads",
];
const FILTER_KEYS: &[&str] = &["require_tty_or_display", "uids", "blocklist"];

/// Decode an `apps:` list; use cases are looked up in `usecases`.
pub(crate) fn apps(
    d: &InFile,
    node: &Node,
    usecases: &[UseCase],
    known: &[App],
) -> Result<Vec<App>> {
    let mut out: Vec<App> = Vec::new();
    for (i, item) in seq(d, node, "apps")?.iter().enumerate() {
        let m = MapView::open(d, item, &format!("apps[{i}]"), APP_KEYS)?;
        let name_node = m.req(d, "name", "")?;
        let name = identifier(d, name_node, &m.field("name"))?;
        if let Some(a) = known
            .iter()
            .chain(out.iter())
            .find(|a| a.pattern.name == name)
        {
            return Err(d.err(
                name_node.pos,
                m.field("name"),
                format!(
                    "duplicate app `{name}` (first defined at {}:{})",
                    a.file, a.line
                ),
            ));
        }
        let exec_node = m.req(d, "exec", " (the executable's name, as `comm` shows it)")?;
        let exec = string(d, exec_node, &m.field("exec"))?;
        if exec.contains('/') {
            return Err(d.err(
                exec_node.pos,
                m.field("exec"),
                format!("`{exec}` is a path; give the executable's name only (its comm)"),
            ));
        }
        let cmdline = match m.get("cmdline") {
            None => None,
            Some(n) => {
                let re = string(d, n, &m.field("cmdline"))?;
                if let Err(why) = lever_procwatch::check_regex(&re) {
                    return Err(d.err(
                        n.pos,
                        m.field("cmdline"),
                        format!(
                            "not a regular expression: {}",
                            why.lines().last().unwrap_or("")
                        ),
                    ));
                }
                Some(re)
            }
        };
        let cgroup = opt_cgroup(d, &m, "cgroup")?;
        let move_to = opt_cgroup(d, &m, "move_to")?;
        let mut names = Vec::new();
        if let Some(n) = m.get("usecases") {
            for (j, u) in seq(d, n, &m.field("usecases"))?.iter().enumerate() {
                let f = m.field(&format!("usecases[{j}]"));
                let key = string(d, u, &f)?;
                let Some(found) = crate::usecase::find(usecases, &key) else {
                    let all: Vec<&str> = usecases.iter().map(|u| u.name.as_str()).collect();
                    return Err(d.err(
                        u.pos,
                        f,
                        format!(
                            "`{key}` is not a use case of this target (use cases: {})",
                            all.join(", ")
                        ),
                    ));
                };
                names.push(found.name.clone());
            }
        }
        let mut threads = Vec::new();
        if let Some(n) = m.get("threads") {
            for (j, t) in seq(d, n, &m.field("threads"))?.iter().enumerate() {
                threads.push(thread_rule(d, t, &m.field(&format!("threads[{j}]")))?);
            }
        }
        if names.is_empty() && threads.is_empty() && move_to.is_none() {
            return Err(d.err(
                m.pos(),
                m.field("usecases"),
                "the app entry does nothing: give `usecases:`, `threads:` or `move_to:`",
            ));
        }
        out.push(App {
            pattern: AppPattern {
                name,
                exec,
                cmdline,
                cgroup,
            },
            usecases: names,
            move_to,
            threads,
            file: d.file.to_string(),
            line: m.pos().line,
        });
    }
    Ok(out)
}

fn opt_cgroup(d: &InFile, m: &MapView, key: &str) -> Result<Option<String>> {
    match m.get(key) {
        None => Ok(None),
        Some(n) => Ok(Some(super::usecase::cgroup_name(d, n, &m.field(key))?)),
    }
}

/// Decode `app_filter:`.
pub(crate) fn filter(d: &InFile, node: &Node) -> Result<AppFilter> {
    let m = MapView::open(d, node, "app_filter", FILTER_KEYS)?;
    let mut f = AppFilter::default();
    if let Some(n) = m.get("require_tty_or_display") {
        f.require_tty_or_display = boolean(d, n, &m.field("require_tty_or_display"))?;
    }
    if let Some(n) = m.get("uids") {
        for (i, u) in seq(d, n, &m.field("uids"))?.iter().enumerate() {
            let field = m.field(&format!("uids[{i}]"));
            let v = integer(d, u, &field)?;
            f.uids.push(
                u32::try_from(v).map_err(|_| d.err(u.pos, field, format!("{v} is not a uid")))?,
            );
        }
    }
    if let Some(n) = m.get("blocklist") {
        for (i, b) in seq(d, n, &m.field("blocklist"))?.iter().enumerate() {
            f.blocklist
                .push(string(d, b, &m.field(&format!("blocklist[{i}]")))?);
        }
    }
    Ok(f)
}
