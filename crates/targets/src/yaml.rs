//! A small YAML tree that remembers where everything came from.
//!
//! yaml-rust2's own `Yaml` type drops positions, so target files are read
//! with its event parser and folded into this tree: every scalar, sequence
//! and mapping — and every mapping *key* — keeps the 1-based line and column
//! it started at. Mappings keep all their entries in file order (duplicates
//! included), so the decoder can report a duplicate key instead of silently
//! keeping the last one.
//!
//! Deliberately unsupported, with an error rather than a guess: aliases
//! (`*name`), more than one document per file, and an empty file.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A 1-based line and column in a target file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line, starting at 1.
    pub line: usize,
    /// Column, starting at 1.
    pub col: usize,
}

impl Pos {
    fn of(m: Marker) -> Pos {
        // yaml-rust2 markers: line is 1-based, column 0-based.
        Pos {
            line: m.line().max(1),
            col: m.col() + 1,
        }
    }
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub pos: Pos,
    pub value: Value,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A scalar; `plain` is false for quoted and block scalars, whose text is
    /// always a string (`"1"` is not the integer 1, `""` is not null).
    Scalar {
        text: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// True for `~`, `null`, `Null`, `NULL` and an empty plain scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, plain: true }
            if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// A short name of the node's type, for "expected X, found Y" messages.
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            _ if self.is_null() => "nothing (null)",
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// A YAML syntax problem, or a construct target files do not allow.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

enum Open {
    Seq(Pos, Vec<Node>),
    Map {
        pos: Pos,
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    docs: Vec<(Pos, Node)>,
    doc_start: Pos,
    error: Option<SyntaxError>,
}

impl Builder {
    fn fail(&mut self, pos: Pos, message: &str) {
        if self.error.is_none() {
            self.error = Some(SyntaxError {
                pos,
                message: message.to_string(),
            });
        }
    }

    /// Attach a finished node to whatever is open, or make it a document.
    fn finish(&mut self, mut node: Node) {
        match self.stack.last_mut() {
            None => self.docs.push((self.doc_start, node)),
            Some(Open::Seq(_, items)) => items.push(node),
            Some(Open::Map { pos, entries, key }) => match key.take() {
                None => {
                    // A block mapping's start event points at its first
                    // value; the first key is where a reader looks. A flow
                    // mapping keeps its brace, which comes first.
                    if entries.is_empty() && (node.pos.line, node.pos.col) < (pos.line, pos.col) {
                        *pos = node.pos;
                    }
                    *key = Some(node);
                }
                Some(k) => {
                    // An empty value's event points past the line end (often
                    // the next line); report it at its key instead.
                    if node.is_null() {
                        node.pos = k.pos;
                    }
                    entries.push((k, node));
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let pos = Pos::of(mark);
        match ev {
            Event::DocumentStart => self.doc_start = pos,
            Event::Scalar(text, style, _anchor, _tag) => self.finish(Node {
                pos,
                value: Value::Scalar {
                    text,
                    plain: style == TScalarStyle::Plain,
                },
            }),
            Event::SequenceStart(..) => self.stack.push(Open::Seq(pos, Vec::new())),
            Event::MappingStart(..) => self.stack.push(Open::Map {
                pos,
                entries: Vec::new(),
                key: None,
            }),
            Event::SequenceEnd => {
                if let Some(Open::Seq(p, items)) = self.stack.pop() {
                    self.finish(Node {
                        pos: p,
                        value: Value::Seq(items),
                    });
                }
            }
            Event::MappingEnd => {
                if let Some(Open::Map { pos, entries, .. }) = self.stack.pop() {
                    self.finish(Node {
                        pos,
                        value: Value::Map(entries),
                    });
                }
            }
            Event::Alias(_) => self.fail(
                pos,
                "YAML aliases (`*name`) are not supported in target files; write the value out",
            ),
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }
}

/// Deepest nesting accepted. Target files need 3 levels; the limit keeps a
/// hostile file from exhausting memory or stack.
const MAX_DEPTH: usize = 64;

/// Parse `text` into one marked document tree.
///
/// Events are pulled one at a time (`Parser::next_token`) rather than with
/// `Parser::load`, which recurses once per nesting level: a file of a
/// hundred thousand `- ` would overflow the stack before any limit applied.
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    loop {
        let (event, mark) = parser.next_token().map_err(|e| SyntaxError {
            pos: Pos::of(*e.marker()),
            message: e.info().to_string(),
        })?;
        let end = event == Event::StreamEnd;
        builder.on_event(event, mark);
        if builder.error.is_none() && builder.stack.len() > MAX_DEPTH {
            builder.fail(
                Pos::of(mark),
                &format!("nesting deeper than {MAX_DEPTH} levels"),
            );
        }
        if end || builder.error.is_some() {
            break;
        }
    }
    if let Some(e) = builder.error {
        return Err(e);
    }
    let mut docs = builder.docs.into_iter();
    let Some((_, doc)) = docs.next() else {
        return Err(SyntaxError {
            pos: Pos { line: 1, col: 1 },
            message: "the file is empty: expected a mapping with `target:` and `resources:`"
                .to_string(),
        });
    };
    if let Some((pos, _)) = docs.next() {
        return Err(SyntaxError {
            pos,
            message: "a target file holds one YAML document; found a second one".to_string(),
        });
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(n: &Node) -> (&str, Pos) {
        match &n.value {
            Value::Scalar { text, .. } => (text, n.pos),
            other => panic!("not a scalar: {other:?}"),
        }
    }

    #[test]
    fn keys_and_values_keep_positions() {
        let doc = parse("target: x\nresources:\n  - name: a\n    low: 5\n    d:\n").unwrap();
        let Value::Map(top) = &doc.value else {
            panic!()
        };
        assert_eq!(doc.pos, Pos { line: 1, col: 1 });
        assert_eq!(scalar(&top[0].1), ("x", Pos { line: 1, col: 9 }));
        let Value::Seq(items) = &top[1].1.value else {
            panic!()
        };
        let Value::Map(res) = &items[0].value else {
            panic!()
        };
        assert_eq!(items[0].pos, Pos { line: 3, col: 5 });
        assert_eq!(scalar(&res[1].0), ("low", Pos { line: 4, col: 5 }));
        assert_eq!(scalar(&res[1].1), ("5", Pos { line: 4, col: 10 }));
        // An empty value is reported at its key.
        assert!(res[2].1.is_null());
        assert_eq!(res[2].1.pos, Pos { line: 5, col: 5 });
    }

    #[test]
    fn duplicate_keys_are_kept() {
        let doc = parse("a: 1\na: 2\n").unwrap();
        let Value::Map(top) = &doc.value else {
            panic!()
        };
        assert_eq!(top.len(), 2);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse("a: 1\n b: [\n").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 3 });
        let e = parse("a: &x 1\nb: *x\n").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 4 });
        assert!(parse("# nothing\n").is_err());
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(e.pos.line, 2);
        // Deep nesting is refused, without recursion.
        let deep = "- ".repeat(200_000) + "x\n";
        assert!(parse(&deep).unwrap_err().message.contains("nesting deeper"));
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn quoted_scalars_are_not_plain() {
        let doc = parse("a: \"1\"\n").unwrap();
        let Value::Map(top) = &doc.value else {
            panic!()
        };
        assert!(matches!(
            &top[0].1.value,
            Value::Scalar { plain: false, .. }
        ));
    }
}
