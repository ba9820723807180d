//! Reading YAML nodes as the values target files hold — strings,
//! integers, names, CPU lists, checked mappings — each mistake an error at
//! the node's position with the field's path.

use crate::error::{InFile, TargetError};
use lever_yaml::{MapError, Mapping, Node, Pos, Value};
use std::collections::BTreeSet;

pub(super) type Result<T> = std::result::Result<T, TargetError>;

/// A mapping whose keys were checked (no duplicates, none unknown), with
/// the field path of its keys.
pub(super) struct MapView<'n> {
    map: Mapping<'n>,
    path: String,
}

impl<'n> MapView<'n> {
    pub fn open(d: &InFile, node: &'n Node, path: &str, allowed: &[&'static str]) -> Result<Self> {
        let map = node.mapping(allowed).map_err(|e| match e {
            MapError::NotAMapping { pos, found } => d.err(
                pos,
                display_path(path),
                format!("expected a mapping, found {found}"),
            ),
            MapError::KeyNotText { pos, found } => d.err(
                pos,
                display_path(path),
                format!("a key must be a plain name, found {found}"),
            ),
            MapError::Duplicate { key, pos, first } => d.err(
                pos,
                join(path, &key),
                format!(
                    "duplicate key (first given at line {}, column {})",
                    first.line, first.col
                ),
            ),
            MapError::Unknown { key, pos, allowed } => {
                let mut message = format!("unknown key (expected one of: {})", allowed.join(", "));
                if let Some(near) = closest(&key, &allowed) {
                    message.push_str(&format!("; did you mean `{near}`?"));
                }
                d.err(pos, join(path, &key), message)
            }
        })?;
        Ok(MapView {
            map,
            path: path.to_string(),
        })
    }

    /// Where the mapping is.
    pub fn pos(&self) -> Pos {
        self.map.pos
    }

    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.map.get(key)
    }

    pub fn entries(&self) -> &[lever_yaml::Entry<'n>] {
        self.map.entries()
    }

    pub fn key_pos(&self, key: &str) -> Option<Pos> {
        self.map.key_pos(key)
    }

    pub fn req(&self, d: &InFile, key: &str, hint: &str) -> Result<&'n Node> {
        self.get(key).ok_or_else(|| {
            d.err(
                self.pos(),
                self.field(key),
                format!("missing required field `{key}`{hint}"),
            )
        })
    }

    pub fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        "<root>".to_string()
    } else {
        path.to_string()
    }
}

/// The allowed word closest to a misspelling, if it is close enough.
pub(super) fn closest<'a>(word: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (edit_distance(word, a), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

pub(super) fn scalar<'n>(d: &InFile, node: &'n Node, field: &str, what: &str) -> Result<&'n str> {
    match &node.value {
        Value::Scalar { text, .. } if !node.is_null() => Ok(text),
        _ => Err(d.err(
            node.pos,
            field,
            format!("expected {what}, found {}", node.type_name()),
        )),
    }
}

pub(super) fn string(d: &InFile, node: &Node, field: &str) -> Result<String> {
    scalar(d, node, field, "a string").map(str::to_string)
}

pub(super) fn integer(d: &InFile, node: &Node, field: &str) -> Result<i64> {
    let text = scalar(d, node, field, "an integer")?;
    lever_text::parse_int(text).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("expected an integer, found `{text}`"),
        )
    })
}

pub(super) fn small_uint(
    d: &InFile,
    node: &Node,
    field: &str,
    max: u32,
    what: &str,
) -> Result<u32> {
    let v = integer(d, node, field)?;
    u32::try_from(v).ok().filter(|v| *v <= max).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("{what} {v} is out of range 0..={max}"),
        )
    })
}

pub(super) fn boolean(d: &InFile, node: &Node, field: &str) -> Result<bool> {
    match scalar(d, node, field, "true or false")? {
        "true" | "True" | "TRUE" => Ok(true),
        "false" | "False" | "FALSE" => Ok(false),
        other => Err(d.err(
            node.pos,
            field,
            format!("expected true or false, found `{other}`"),
        )),
    }
}

pub(super) fn one_of<'a>(
    d: &InFile,
    node: &Node,
    field: &str,
    allowed: &[&'a str],
) -> Result<&'a str> {
    let text = scalar(d, node, field, "a word")?;
    allowed.iter().copied().find(|a| *a == text).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("unknown value `{text}` (allowed: {})", allowed.join(", ")),
        )
    })
}

pub(super) fn seq<'n>(d: &InFile, node: &'n Node, field: &str) -> Result<&'n [Node]> {
    match &node.value {
        Value::Seq(items) => Ok(items),
        _ => Err(d.err(
            node.pos,
            field,
            format!("expected a list, found {}", node.type_name()),
        )),
    }
}

/// A name usable in expanded resource names: no dots (they separate the
/// cluster/CPU/index suffixes), no spaces.
pub(super) fn identifier(d: &InFile, node: &Node, field: &str) -> Result<String> {
    let text = string(d, node, field)?;
    let ok = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok {
        return Err(d.err(
            node.pos,
            field,
            format!("`{text}` is not a valid name: use letters, digits, `_` and `-` only"),
        ));
    }
    Ok(text)
}

/// A CPU list: `0-3`, `7`, `0-3,7` or a YAML list of numbers.
pub(super) fn cpu_list(
    d: &InFile,
    node: &Node,
    field: &str,
    max: u32,
    what: &str,
) -> Result<Vec<u32>> {
    let list = match &node.value {
        Value::Seq(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                out.push(small_uint(d, item, &format!("{field}[{i}]"), max, what)?);
            }
            out
        }
        _ => {
            let text = scalar(d, node, field, "a list such as `0-3,7`")?;
            lever_kernel::parse_cpu_list(text).ok_or_else(|| {
                d.err(
                    node.pos,
                    field,
                    format!("`{text}` is not a list such as `0-3,7`"),
                )
            })?
        }
    };
    if list.is_empty() {
        return Err(d.err(node.pos, field, "the list is empty"));
    }
    if let Some(v) = list.iter().find(|v| **v > max) {
        return Err(d.err(
            node.pos,
            field,
            format!("{what} {v} is out of range 0..={max}"),
        ));
    }
    let set: BTreeSet<u32> = list.iter().copied().collect();
    if set.len() != list.len() {
        return Err(d.err(node.pos, field, "a number appears twice in the list"));
    }
    Ok(set.into_iter().collect())
}
