//! A mapping whose keys were checked: all text, none twice, none unknown.
//!
//! Every configuration reader needs the same three checks before it looks
//! at a value; they live here once, and each reader words the
//! [`MapError`] for its own file.

use crate::{Node, Pos, Value};

/// One checked entry of a [`Mapping`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry<'n> {
    /// The key's text.
    pub key: &'n str,
    /// Where the key is.
    pub key_pos: Pos,
    /// The value.
    pub value: &'n Node,
}

/// A mapping node whose keys are text, unique and among the allowed ones.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping<'n> {
    /// Where the mapping is (its first key for a block mapping, its brace
    /// for a flow mapping).
    pub pos: Pos,
    entries: Vec<Entry<'n>>,
}

impl<'n> Mapping<'n> {
    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entry(key).map(|e| e.value)
    }

    /// Where `key` is, if given.
    pub fn key_pos(&self, key: &str) -> Option<Pos> {
        self.entry(key).map(|e| e.key_pos)
    }

    /// The entry of `key`, if given.
    pub fn entry(&self, key: &str) -> Option<&Entry<'n>> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[Entry<'n>] {
        &self.entries
    }
}

/// Why a node is not a [`Mapping`] with the allowed keys. The first problem
/// in file order wins.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// The node is a scalar or a list.
    #[error("{pos}: expected a mapping, found {found}")]
    NotAMapping {
        /// Where the node is.
        pos: Pos,
        /// Its type ([`Node::type_name`]).
        found: &'static str,
    },
    /// A key is a list or a mapping.
    #[error("{pos}: a key must be a plain name, found {found}")]
    KeyNotText {
        /// Where the key is.
        pos: Pos,
        /// Its type ([`Node::type_name`]).
        found: &'static str,
    },
    /// A key given twice; reported at the second one.
    #[error("{pos}: duplicate key `{key}` (first given at {first})")]
    Duplicate {
        /// The key.
        key: String,
        /// Where the second one is.
        pos: Pos,
        /// Where the first one is.
        first: Pos,
    },
    /// A key that is not allowed.
    #[error("{pos}: unknown key `{key}` (expected one of: {})", allowed.join(", "))]
    Unknown {
        /// The key.
        key: String,
        /// Where it is.
        pos: Pos,
        /// The allowed keys, as given to [`Node::mapping`].
        allowed: Vec<&'static str>,
    },
}

impl MapError {
    /// Where the problem is.
    pub fn pos(&self) -> Pos {
        match self {
            MapError::NotAMapping { pos, .. }
            | MapError::KeyNotText { pos, .. }
            | MapError::Duplicate { pos, .. }
            | MapError::Unknown { pos, .. } => *pos,
        }
    }
}

impl Node {
    /// This node as a [`Mapping`] whose keys are all text, each given once,
    /// each one of `allowed`.
    pub fn mapping(&self, allowed: &[&'static str]) -> Result<Mapping<'_>, MapError> {
        let Value::Map(pairs) = &self.value else {
            return Err(MapError::NotAMapping {
                pos: self.pos,
                found: self.type_name(),
            });
        };
        let mut entries: Vec<Entry> = Vec::with_capacity(pairs.len());
        for (k, value) in pairs {
            let Some(key) = k.as_str() else {
                return Err(MapError::KeyNotText {
                    pos: k.pos,
                    found: k.type_name(),
                });
            };
            if let Some(first) = entries.iter().find(|e| e.key == key) {
                return Err(MapError::Duplicate {
                    key: key.to_string(),
                    pos: k.pos,
                    first: first.key_pos,
                });
            }
            if !allowed.contains(&key) {
                return Err(MapError::Unknown {
                    key: key.to_string(),
                    pos: k.pos,
                    allowed: allowed.to_vec(),
                });
            }
            entries.push(Entry {
                key,
                key_pos: k.pos,
                value,
            });
        }
        Ok(Mapping {
            pos: self.pos,
            entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse, MapError, Pos};

    fn at(line: usize, col: usize) -> Pos {
        Pos { line, col }
    }

    #[test]
    fn entries_in_file_order_with_positions() {
        let doc = parse("b: 1\na:\n  - x\n").unwrap();
        let m = doc.mapping(&["a", "b"]).unwrap();
        let keys: Vec<(&str, Pos)> = m.entries().iter().map(|e| (e.key, e.key_pos)).collect();
        assert_eq!(keys, vec![("b", at(1, 1)), ("a", at(2, 1))]);
        assert_eq!(m.get("a").unwrap().pos, at(3, 3));
        assert_eq!(m.key_pos("a"), Some(at(2, 1)));
        assert_eq!(m.get("c"), None);
        assert_eq!(m.pos, at(1, 1));
    }

    #[test]
    fn each_problem_at_its_position() {
        let e = parse("a: 1\nb: 2\na: 3\n")
            .unwrap()
            .mapping(&["a", "b"])
            .unwrap_err();
        assert_eq!(
            e,
            MapError::Duplicate {
                key: "a".into(),
                pos: at(3, 1),
                first: at(1, 1)
            }
        );
        let e = parse("a: 1\nc: 2\n")
            .unwrap()
            .mapping(&["a", "b"])
            .unwrap_err();
        assert_eq!(e.pos(), at(2, 1));
        assert_eq!(
            e.to_string(),
            "2:1: unknown key `c` (expected one of: a, b)"
        );
        let e = parse("- a\n").unwrap().mapping(&["a"]).unwrap_err();
        assert_eq!(
            e,
            MapError::NotAMapping {
                pos: at(1, 1),
                found: "a list"
            }
        );
        let e = parse("{ [k]: 1 }\n").unwrap().mapping(&["k"]).unwrap_err();
        assert!(
            matches!(
                e,
                MapError::KeyNotText {
                    found: "a list",
                    ..
                }
            ),
            "{e:?}"
        );
        // An unknown key that is also repeated is unknown at its first use.
        let e = parse("x: 1\nx: 2\n").unwrap().mapping(&["a"]).unwrap_err();
        assert!(matches!(e, MapError::Unknown { pos, .. } if pos == at(1, 1)));
    }
}
