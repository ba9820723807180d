//! Folding yaml-rust2's marked events into a [`Node`] tree.

use crate::{Error, ErrorKind, Node, Pos, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Deepest nesting accepted. Configuration files need 3 or 4 levels; the
/// limit keeps a hostile file from exhausting memory or stack.
pub const MAX_DEPTH: usize = 64;

impl Pos {
    fn of(m: Marker) -> Pos {
        // yaml-rust2 markers: line is 1-based, column 0-based.
        Pos {
            line: m.line().max(1),
            col: m.col() + 1,
        }
    }
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
    error: Option<Error>,
}

impl Builder {
    fn fail(&mut self, pos: Pos, kind: ErrorKind) {
        if self.error.is_none() {
            self.error = Some(Error { pos, kind });
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
                    if entries.is_empty() && node.pos < *pos {
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
            Event::Alias(_) => self.fail(pos, ErrorKind::Alias),
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }
}

/// Parse `text` into one marked document tree.
///
/// Events are pulled one at a time (`Parser::next_token`) rather than with
/// `Parser::load`, which recurses once per nesting level: a file of a
/// hundred thousand `- ` would overflow the stack before any limit applied.
pub fn parse(text: &str) -> Result<Node, Error> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    loop {
        let (event, mark) = parser.next_token().map_err(|e| Error {
            pos: Pos::of(*e.marker()),
            kind: ErrorKind::Syntax(e.info().to_string()),
        })?;
        let end = event == Event::StreamEnd;
        builder.on_event(event, mark);
        if builder.stack.len() > MAX_DEPTH {
            builder.fail(Pos::of(mark), ErrorKind::TooDeep);
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
        return Err(Error {
            pos: Pos { line: 1, col: 1 },
            kind: ErrorKind::Empty,
        });
    };
    if let Some((pos, _)) = docs.next() {
        return Err(Error {
            pos,
            kind: ErrorKind::SecondDocument,
        });
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(n: &Node) -> (&str, Pos) {
        (n.as_str().expect("a scalar"), n.pos)
    }

    fn at(line: usize, col: usize) -> Pos {
        Pos { line, col }
    }

    fn map(n: &Node) -> &[(Node, Node)] {
        match &n.value {
            Value::Map(entries) => entries,
            other => panic!("not a mapping: {other:?}"),
        }
    }

    fn seq(n: &Node) -> &[Node] {
        match &n.value {
            Value::Seq(items) => items,
            other => panic!("not a list: {other:?}"),
        }
    }

    #[test]
    fn keys_and_values_keep_positions() {
        let doc = parse("target: x\nresources:\n  - name: a\n    low: 5\n    d:\n").unwrap();
        let top = map(&doc);
        assert_eq!(doc.pos, at(1, 1));
        assert_eq!(scalar(&top[0].1), ("x", at(1, 9)));
        let items = seq(&top[1].1);
        let res = map(&items[0]);
        assert_eq!(items[0].pos, at(3, 5));
        assert_eq!(scalar(&res[1].0), ("low", at(4, 5)));
        assert_eq!(scalar(&res[1].1), ("5", at(4, 10)));
        // An empty value is reported at its key.
        assert!(res[2].1.is_null());
        assert_eq!(res[2].1.pos, at(5, 5));
    }

    #[test]
    fn flow_collections_start_at_their_bracket() {
        let doc = parse("a: { b: 1, c: [x, y] }\n").unwrap();
        let inner = &map(&doc)[0].1;
        assert_eq!(inner.pos, at(1, 4));
        let list = &map(inner)[1].1;
        assert_eq!(list.pos, at(1, 15));
        assert_eq!(scalar(&seq(list)[1]), ("y", at(1, 19)));
    }

    #[test]
    fn duplicate_keys_are_kept() {
        let doc = parse("a: 1\na: 2\n").unwrap();
        assert_eq!(map(&doc).len(), 2);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse("a: 1\n b: [\n").unwrap_err();
        assert_eq!(e.pos, at(2, 3));
        assert!(matches!(e.kind, ErrorKind::Syntax(_)), "{e:?}");
        let e = parse("a: &x 1\nb: *x\n").unwrap_err();
        assert_eq!((e.pos, e.kind), (at(2, 4), ErrorKind::Alias));
        let e = parse("# nothing\n").unwrap_err();
        assert_eq!((e.pos, e.kind), (at(1, 1), ErrorKind::Empty));
        assert_eq!(parse("").unwrap_err().kind, ErrorKind::Empty);
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!((e.pos.line, e.kind), (2, ErrorKind::SecondDocument));
        // Deep nesting is refused, without recursion.
        let deep = "- ".repeat(200_000) + "x\n";
        let e = parse(&deep).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep);
        assert!(
            e.to_string().contains("nesting deeper than 64 levels"),
            "{e}"
        );
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert_eq!(parse(&deep).unwrap_err().kind, ErrorKind::TooDeep);
    }

    #[test]
    fn an_anchor_without_an_alias_is_only_a_label() {
        let doc = parse("a: &x 1\n").unwrap();
        assert_eq!(scalar(&map(&doc)[0].1), ("1", at(1, 7)));
    }

    #[test]
    fn types_of_scalars() {
        let doc = parse("a: \"1\"\nb: 1\nc: ~\nd: ''\ne: |\n  text\n").unwrap();
        let top = map(&doc);
        assert!(matches!(
            &top[0].1.value,
            Value::Scalar { plain: false, .. }
        ));
        assert!(matches!(&top[1].1.value, Value::Scalar { plain: true, .. }));
        assert!(top[2].1.is_null());
        assert_eq!(top[2].1.type_name(), "nothing (null)");
        // A quoted empty string is a string, not null.
        assert!(!top[3].1.is_null());
        assert_eq!(top[3].1.type_name(), "a scalar");
        assert_eq!(top[4].1.as_str(), Some("text\n"));
        assert_eq!(doc.type_name(), "a mapping");
        assert_eq!(doc.as_str(), None);
        assert_eq!(parse("- 1\n").unwrap().type_name(), "a list");
    }
}
