//! The `metadata` file: TSDL (Trace Stream Description Language) text,
//! plain or cut into packets.
//!
//! Plain text starts with `/* CTF 1.8 */` (perf, barectf). LTTng writes
//! it in packets, each a 37-byte header then text:
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `0x75D11D57` (the byte order it reads in is the trace's) |
//! | 4..20 | trace UUID |
//! | 20..24 | checksum (0) |
//! | 24..28 | content size in bits (header included) |
//! | 28..32 | packet size in bits |
//! | 32, 33, 34 | compression, encryption, checksum scheme (0 = none) |
//! | 35, 36 | major, minor (1, 8) |
//!
//! The text declares, in any order (LTTng-modules 2.x, one line of each):
//!
//! ```text
//! typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
//! trace { major = 1; minor = 8; byte_order = le; packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
//! env { hostname = "VM1"; domain = "kernel"; };
//! clock { name = monotonic; freq = 1000000000; offset = 1361203559332331489; };
//! struct packet_context { uint64_clock_monotonic_t timestamp_begin; uint64_t content_size; };
//! stream { id = 0; event.header := struct event_header_large; packet.context := struct packet_context; };
//! event { name = sched_switch; id = 35; stream_id = 0; fields := struct { integer { size = 32; align = 8; signed = 1; } _prev_tid; }; };
//! ```
//!
//! [`parse`] reads it into a [`Metadata`]: every scope's [`Type`], with
//! variant tags and sequence lengths resolved to registers and the
//! integers that move the clock marked.

use crate::types::*;
use crate::CtfError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Magic number of a metadata packet.
pub const METADATA_MAGIC: u32 = 0x75D1_1D57;
/// Size of a metadata packet header in bytes.
const METADATA_HEADER: usize = 37;
/// Tokens of metadata text at most (a bound on hostile input).
const MAX_TOKENS: usize = 16 << 20;
/// Nesting depth of types at most.
const MAX_DEPTH: usize = 64;

/// A clock declared by `clock { ... }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Clock {
    /// `name`.
    pub name: String,
    /// `freq`, in Hz (1 GHz when absent).
    pub freq_hz: u64,
    /// `offset_s`: seconds from the origin (the Unix epoch when
    /// `absolute` or LTTng) to cycle 0.
    pub offset_s: i64,
    /// `offset`: further cycles from the origin to cycle 0.
    pub offset_cycles: i64,
    /// `description`.
    pub description: Option<String>,
    /// `uuid`.
    pub uuid: Option<String>,
}

impl Clock {
    /// Nanoseconds from the origin of a clock value `cycles`, as
    /// babeltrace2 counts them: the offsets' seconds, then the offset
    /// cycles and the value each converted to ns.
    pub fn ns_from_origin(&self, cycles: u64) -> i128 {
        let freq = self.freq_hz.max(1) as i128;
        // Whole seconds in the cycle offset move to the seconds first.
        let off_s = self.offset_s as i128 + (self.offset_cycles as i128).div_euclid(freq);
        let off_c = (self.offset_cycles as i128).rem_euclid(freq);
        off_s * 1_000_000_000 + to_ns(off_c, freq) + to_ns(cycles as i128, freq)
    }
}

fn to_ns(cycles: i128, freq: i128) -> i128 {
    if freq == 1_000_000_000 {
        cycles
    } else {
        cycles * 1_000_000_000 / freq
    }
}

/// A value in `env { ... }`.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    /// `key = 12;`
    Int(i64),
    /// `key = "text";` (or a bare identifier)
    Str(String),
}

/// `stream { ... }`: how the packets and events of one kind of stream are
/// laid out.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// `id`.
    pub id: u64,
    /// `packet.context`.
    pub packet_context: Type,
    /// `event.header`.
    pub event_header: Type,
    /// `event.context` (common to every event of the stream).
    pub event_context: Type,
}

/// `event { ... }`.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// `name`.
    pub name: String,
    /// `id`, unique in its stream.
    pub id: u64,
    /// `stream_id`.
    pub stream_id: u64,
    /// `loglevel`, when given.
    pub loglevel: Option<i64>,
    /// `context` (specific to this event).
    pub context: Type,
    /// `fields`: the payload.
    pub fields: Type,
}

/// Everything the metadata declares.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// The trace's byte order.
    pub byte_order: ByteOrder,
    /// `trace.uuid`.
    pub uuid: Option<String>,
    /// `trace.packet.header`.
    pub packet_header: Type,
    /// `env`, in order.
    pub env: Vec<(String, EnvValue)>,
    /// The clocks.
    pub clocks: Vec<Clock>,
    /// The stream classes.
    pub streams: Vec<StreamClass>,
    /// The event classes.
    pub events: Vec<EventClass>,
    /// Registers that variant tags and sequence lengths use.
    pub registers: usize,
}

impl Metadata {
    /// An `env` entry.
    pub fn env(&self, key: &str) -> Option<&EnvValue> {
        self.env.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// An `env` entry as text.
    pub fn env_str(&self, key: &str) -> Option<String> {
        self.env(key).map(|v| match v {
            EnvValue::Int(i) => i.to_string(),
            EnvValue::Str(s) => s.clone(),
        })
    }
}

/// The TSDL text of a metadata file: packets unwrapped, or the text as
/// is.
pub fn metadata_text(bytes: &[u8], path: &Path) -> Result<String, CtfError> {
    let bad = |offset: usize, msg: String| CtfError::MetadataPacket {
        path: path.to_path_buf(),
        offset: offset as u64,
        msg,
    };
    let le =
        bytes.len() >= 4 && u32::from_le_bytes(bytes[..4].try_into().unwrap()) == METADATA_MAGIC;
    let be =
        bytes.len() >= 4 && u32::from_be_bytes(bytes[..4].try_into().unwrap()) == METADATA_MAGIC;
    if !le && !be {
        return String::from_utf8(bytes.to_vec()).map_err(|e| {
            bad(
                e.utf8_error().valid_up_to(),
                "metadata text is not UTF-8 (and not packetized: no magic 0x75d11d57)".into(),
            )
        });
    }
    let u32_at = |o: usize| -> u32 {
        let b: [u8; 4] = bytes[o..o + 4].try_into().unwrap();
        if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let mut text = Vec::new();
    let mut off = 0usize;
    // Each packet moves `off` forward by at least the header: bounded.
    while off < bytes.len() {
        if bytes.len() - off < METADATA_HEADER {
            return Err(bad(
                off,
                format!(
                    "metadata packet header cut short ({} of 37 bytes)",
                    bytes.len() - off
                ),
            ));
        }
        if u32_at(off) != METADATA_MAGIC {
            return Err(bad(
                off,
                format!("bad metadata packet magic {:#010x}", u32_at(off)),
            ));
        }
        let content_bits = u32_at(off + 24) as usize;
        let packet_bits = u32_at(off + 28) as usize;
        let (compression, encryption) = (bytes[off + 32], bytes[off + 33]);
        if compression != 0 || encryption != 0 {
            return Err(bad(
                off,
                format!("compressed or encrypted metadata packet (scheme {compression}/{encryption}) is not supported"),
            ));
        }
        if content_bits % 8 != 0 || packet_bits % 8 != 0 {
            return Err(bad(off, "metadata packet sizes are not whole bytes".into()));
        }
        let (content, packet) = (content_bits / 8, packet_bits / 8);
        if content < METADATA_HEADER || packet < content || packet > bytes.len() - off {
            return Err(bad(
                off,
                format!(
                    "metadata packet sizes out of range (content {content} bytes, packet {packet} bytes, {} left)",
                    bytes.len() - off
                ),
            ));
        }
        text.extend_from_slice(&bytes[off + METADATA_HEADER..off + content]);
        off += packet;
    }
    String::from_utf8(text).map_err(|e| {
        bad(
            0,
            format!(
                "metadata text is not UTF-8 (at text byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Parse metadata text.
pub fn parse(text: &str, path: &Path) -> Result<Metadata, CtfError> {
    let toks = lex(text, path)?;
    let mut p = Parser {
        toks,
        pos: 0,
        path: path.to_path_buf(),
        aliases: HashMap::new(),
        byte_order: None,
        uuid: None,
        packet_header: None,
        env: Vec::new(),
        clocks: Vec::new(),
        streams: Vec::new(),
        events: Vec::new(),
        depth: 0,
    };
    p.top()?;
    p.finish()
}

#[derive(Debug, Clone, PartialEq)]
enum T {
    Ident(String),
    Int(i128),
    Str(String),
    Punct(&'static str),
}

#[derive(Debug, Clone)]
struct Tok {
    t: T,
    line: u32,
}

fn lex(text: &str, path: &Path) -> Result<Vec<Tok>, CtfError> {
    let err = |line: u32, msg: String| CtfError::Metadata {
        path: path.to_path_buf(),
        line,
        msg,
    };
    let b = text.as_bytes();
    let mut i = 0;
    let mut line = 1u32;
    let mut out = Vec::new();
    while i < b.len() {
        if out.len() > MAX_TOKENS {
            return Err(err(line, "metadata too large".into()));
        }
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c | 0 => i += 1,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = line;
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err(err(start, "unterminated comment".into()));
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let start = line;
                i += 1;
                let mut s = Vec::new();
                loop {
                    match b.get(i) {
                        None => return Err(err(start, "unterminated string".into())),
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => {
                            let e = b.get(i + 1).copied().unwrap_or(b'\\');
                            s.push(match e {
                                b'n' => b'\n',
                                b't' => b'\t',
                                b'0' => 0,
                                other => other,
                            });
                            i += 2;
                        }
                        Some(&ch) => {
                            if ch == b'\n' {
                                line += 1;
                            }
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push(Tok {
                    t: T::Str(String::from_utf8_lossy(&s).into_owned()),
                    line,
                });
            }
            b'0'..=b'9' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                let word = &text[start..i];
                let w = word.trim_end_matches(['u', 'U', 'l', 'L']);
                let v = if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
                    i128::from_str_radix(h, 16)
                } else if let Some(bn) = w.strip_prefix("0b").or_else(|| w.strip_prefix("0B")) {
                    i128::from_str_radix(bn, 2)
                } else if w.len() > 1 && w.starts_with('0') {
                    i128::from_str_radix(&w[1..], 8)
                } else {
                    w.parse::<i128>()
                }
                .map_err(|_| err(line, format!("bad number `{word}`")))?;
                out.push(Tok { t: T::Int(v), line });
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push(Tok {
                    t: T::Ident(text[start..i].to_string()),
                    line,
                });
            }
            _ => {
                let rest = &b[i..];
                let p: &'static str = if rest.starts_with(b":=") {
                    ":="
                } else if rest.starts_with(b"...") {
                    "..."
                } else if rest.starts_with(b"->") {
                    "->"
                } else {
                    match c {
                        b'{' => "{",
                        b'}' => "}",
                        b'[' => "[",
                        b']' => "]",
                        b'(' => "(",
                        b')' => ")",
                        b'<' => "<",
                        b'>' => ">",
                        b';' => ";",
                        b',' => ",",
                        b'=' => "=",
                        b':' => ":",
                        b'.' => ".",
                        b'-' => "-",
                        b'+' => "+",
                        b'*' => "*",
                        _ => {
                            return Err(err(
                                line,
                                format!("unexpected character {:?}", char::from(c)),
                            ))
                        }
                    }
                };
                i += p.len();
                out.push(Tok {
                    t: T::Punct(p),
                    line,
                });
            }
        }
    }
    Ok(out)
}

/// A value on the right of `=` in a block.
#[derive(Debug, Clone)]
enum Val {
    Int(i128),
    Str(String),
    /// `le`, `clock.monotonic.value`, `true`: identifiers joined by `.`.
    Path(String),
}

/// Where a scope's type lives while references are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Scope {
    PacketHeader,
    PacketContext(usize),
    EventHeader(usize),
    StreamEventContext(usize),
    EventContext(usize),
    EventFields(usize),
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    path: PathBuf,
    aliases: HashMap<String, Type>,
    byte_order: Option<ByteOrder>,
    uuid: Option<String>,
    packet_header: Option<Type>,
    env: Vec<(String, EnvValue)>,
    clocks: Vec<Clock>,
    streams: Vec<StreamClass>,
    events: Vec<EventClass>,
    depth: usize,
}

/// Byte order "not given": fixed to the trace's once it is known.
const NATIVE: ByteOrder = ByteOrder::Little;

fn strip(name: &str) -> String {
    name.strip_prefix('_').unwrap_or(name).to_string()
}

impl Parser {
    fn err(&self, msg: impl Into<String>) -> CtfError {
        let line = self
            .toks
            .get(self.pos)
            .or(self.toks.last())
            .map(|t| t.line)
            .unwrap_or(0);
        CtfError::Metadata {
            path: self.path.clone(),
            line,
            msg: msg.into(),
        }
    }

    fn peek(&self) -> Option<&T> {
        self.toks.get(self.pos).map(|t| &t.t)
    }

    fn peek_at(&self, n: usize) -> Option<&T> {
        self.toks.get(self.pos + n).map(|t| &t.t)
    }

    fn next(&mut self) -> Result<T, CtfError> {
        let t = self
            .toks
            .get(self.pos)
            .map(|t| t.t.clone())
            .ok_or_else(|| self.err("unexpected end of metadata"))?;
        self.pos += 1;
        Ok(t)
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(T::Punct(q)) if *q == p)
    }

    fn is_ident(&self, w: &str) -> bool {
        matches!(self.peek(), Some(T::Ident(q)) if q == w)
    }

    fn expect(&mut self, p: &str) -> Result<(), CtfError> {
        if self.is_punct(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format!("expected `{p}`, found {}", self.describe())))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of metadata".into(),
            Some(T::Ident(s)) => format!("`{s}`"),
            Some(T::Int(i)) => format!("`{i}`"),
            Some(T::Str(s)) => format!("\"{s}\""),
            Some(T::Punct(p)) => format!("`{p}`"),
        }
    }

    fn ident(&mut self) -> Result<String, CtfError> {
        match self.next()? {
            T::Ident(s) => Ok(s),
            _ => {
                self.pos -= 1;
                Err(self.err(format!("expected a name, found {}", self.describe())))
            }
        }
    }

    fn top(&mut self) -> Result<(), CtfError> {
        while let Some(t) = self.peek().cloned() {
            match t {
                T::Punct(";") => self.pos += 1,
                T::Ident(w) => match w.as_str() {
                    "typealias" => {
                        self.pos += 1;
                        self.typealias()?;
                    }
                    "typedef" => {
                        self.pos += 1;
                        self.typedef()?;
                    }
                    "trace" => {
                        self.pos += 1;
                        self.trace_block()?;
                    }
                    "env" => {
                        self.pos += 1;
                        self.env_block()?;
                    }
                    "clock" => {
                        self.pos += 1;
                        self.clock_block()?;
                    }
                    "stream" => {
                        self.pos += 1;
                        self.stream_block()?;
                    }
                    "event" => {
                        self.pos += 1;
                        self.event_block()?;
                    }
                    "callsite" => {
                        self.pos += 1;
                        // Source locations of events: not needed to decode.
                        self.entries(|_, _, _| Ok(()))?;
                    }
                    "struct" | "variant" | "enum" => {
                        self.type_spec(false)?;
                        // `struct name { ... } align(8);` declares; a
                        // declarator after it would be meaningless here.
                        while !self.is_punct(";") && self.peek().is_some() {
                            self.pos += 1;
                        }
                    }
                    _ => return Err(self.err(format!("unexpected `{w}` at top level"))),
                },
                _ => return Err(self.err(format!("unexpected {} at top level", self.describe()))),
            }
        }
        Ok(())
    }

    fn typealias(&mut self) -> Result<(), CtfError> {
        let ty = self.type_spec(false)?;
        self.expect(":=")?;
        let mut words = Vec::new();
        while let Some(T::Ident(w)) = self.peek() {
            words.push(w.clone());
            self.pos += 1;
        }
        while self.is_punct("*") {
            self.pos += 1;
            words.push("*".into());
        }
        if words.is_empty() {
            return Err(self.err("typealias without a name"));
        }
        self.aliases.insert(words.join(" "), ty);
        Ok(())
    }

    fn typedef(&mut self) -> Result<(), CtfError> {
        let ty = self.type_spec(true)?;
        let (name, ty) = self.declarator(ty)?;
        self.aliases.insert(name, ty);
        Ok(())
    }

    /// `name [len]...` after a type: the name and the (array) type.
    fn declarator(&mut self, ty: Type) -> Result<(String, Type), CtfError> {
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.is_punct("[") {
            self.pos += 1;
            let dim = match self.next()? {
                T::Int(n) if n >= 0 && n <= u32::MAX as i128 => Ok(n as u64),
                T::Ident(first) => {
                    let mut path = vec![strip(&first)];
                    while self.is_punct(".") {
                        self.pos += 1;
                        path.push(strip(&self.ident()?));
                    }
                    Err(path)
                }
                _ => {
                    self.pos -= 1;
                    return Err(self.err(format!("bad array length {}", self.describe())));
                }
            };
            self.expect("]")?;
            dims.push(dim);
        }
        let mut ty = ty;
        for dim in dims.into_iter().rev() {
            let align = ty.align_bits;
            ty = Type {
                align_bits: align,
                kind: match dim {
                    Ok(n) => TypeKind::Array(Box::new(ty), n),
                    Err(path) => TypeKind::Sequence(Box::new(ty), FieldRef { path, reg: None }),
                },
            };
        }
        Ok((name, ty))
    }

    /// `{ key = value; key := type; ... }` then `;`: `f(key, Some(value),
    /// None)` or `f(key, None, Some(type))` for each entry.
    fn entries(
        &mut self,
        mut f: impl FnMut(&mut Self, String, Result<Val, Type>) -> Result<(), CtfError>,
    ) -> Result<(), CtfError> {
        self.expect("{")?;
        while !self.is_punct("}") {
            if self.is_punct(";") {
                self.pos += 1;
                continue;
            }
            let mut key = self.ident()?;
            while self.is_punct(".") {
                self.pos += 1;
                key.push('.');
                key.push_str(&self.ident()?);
            }
            if self.is_punct(":=") {
                self.pos += 1;
                let ty = self.type_spec(false)?;
                f(self, key, Err(ty))?;
            } else {
                self.expect("=")?;
                let v = self.value()?;
                f(self, key, Ok(v))?;
            }
            self.expect(";")?;
        }
        self.expect("}")?;
        Ok(())
    }

    fn value(&mut self) -> Result<Val, CtfError> {
        match self.next()? {
            T::Int(i) => Ok(Val::Int(i)),
            T::Str(s) => Ok(Val::Str(s)),
            T::Punct("-") => match self.next()? {
                T::Int(i) => Ok(Val::Int(-i)),
                _ => Err(self.err("expected a number after `-`")),
            },
            T::Punct("+") => match self.next()? {
                T::Int(i) => Ok(Val::Int(i)),
                _ => Err(self.err("expected a number after `+`")),
            },
            T::Ident(w) => {
                let mut s = w;
                while self.is_punct(".") {
                    self.pos += 1;
                    s.push('.');
                    s.push_str(&self.ident()?);
                }
                Ok(Val::Path(s))
            }
            _ => {
                self.pos -= 1;
                Err(self.err(format!("expected a value, found {}", self.describe())))
            }
        }
    }

    fn int_val(&self, key: &str, v: &Val) -> Result<i128, CtfError> {
        match v {
            Val::Int(i) => Ok(*i),
            Val::Path(p) if p.eq_ignore_ascii_case("true") => Ok(1),
            Val::Path(p) if p.eq_ignore_ascii_case("false") => Ok(0),
            _ => Err(self.err(format!("`{key}` wants a number"))),
        }
    }

    fn byte_order_val(&self, v: &Val) -> Result<Option<ByteOrder>, CtfError> {
        match v {
            Val::Path(p) => match p.as_str() {
                "le" | "little" => Ok(Some(ByteOrder::Little)),
                "be" | "big" | "network" => Ok(Some(ByteOrder::Big)),
                "native" => Ok(None),
                _ => Err(self.err(format!("unknown byte order `{p}`"))),
            },
            _ => Err(self.err("byte_order wants le, be, network or native")),
        }
    }

    fn trace_block(&mut self) -> Result<(), CtfError> {
        self.entries(|p, key, v| {
            match (key.as_str(), v) {
                ("byte_order", Ok(v)) => {
                    p.byte_order = Some(
                        p.byte_order_val(&v)?
                            .ok_or_else(|| p.err("trace byte order cannot be native"))?,
                    )
                }
                ("uuid", Ok(Val::Str(s))) => p.uuid = Some(s),
                ("major", Ok(v)) => {
                    let m = p.int_val("major", &v)?;
                    if m != 1 {
                        return Err(p.err(format!("CTF major version {m}: only CTF 1.x is read")));
                    }
                }
                ("packet.header", Err(ty)) => p.packet_header = Some(ty),
                _ => {}
            }
            Ok(())
        })
    }

    fn env_block(&mut self) -> Result<(), CtfError> {
        self.entries(|p, key, v| {
            let v = match v {
                Ok(Val::Int(i)) => EnvValue::Int(i as i64),
                Ok(Val::Str(s)) => EnvValue::Str(s),
                Ok(Val::Path(s)) => EnvValue::Str(s),
                Err(_) => return Err(p.err("env entries are values, not types")),
            };
            p.env.push((key, v));
            Ok(())
        })
    }

    fn clock_block(&mut self) -> Result<(), CtfError> {
        let mut c = Clock {
            name: String::new(),
            freq_hz: 1_000_000_000,
            offset_s: 0,
            offset_cycles: 0,
            description: None,
            uuid: None,
        };
        self.entries(|p, key, v| {
            let Ok(v) = v else { return Ok(()) };
            match key.as_str() {
                "name" => {
                    c.name = match v {
                        Val::Str(s) | Val::Path(s) => s,
                        Val::Int(i) => i.to_string(),
                    }
                }
                "freq" => {
                    let f = p.int_val("freq", &v)?;
                    if f <= 0 || f > u64::MAX as i128 {
                        return Err(p.err(format!("clock frequency {f} Hz out of range")));
                    }
                    c.freq_hz = f as u64;
                }
                "offset_s" => c.offset_s = clamp_i64(p.int_val("offset_s", &v)?),
                "offset" => c.offset_cycles = clamp_i64(p.int_val("offset", &v)?),
                "description" => {
                    if let Val::Str(s) = v {
                        c.description = Some(s)
                    }
                }
                "uuid" => {
                    if let Val::Str(s) = v {
                        c.uuid = Some(s)
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        if c.name.is_empty() {
            return Err(self.err("clock without a name"));
        }
        self.clocks.push(c);
        Ok(())
    }

    fn stream_block(&mut self) -> Result<(), CtfError> {
        let mut s = StreamClass {
            id: 0,
            packet_context: Type::empty_struct(),
            event_header: Type::empty_struct(),
            event_context: Type::empty_struct(),
        };
        self.entries(|p, key, v| {
            match (key.as_str(), v) {
                ("id", Ok(v)) => s.id = p.int_val("id", &v)?.clamp(0, u64::MAX as i128) as u64,
                ("packet.context", Err(ty)) => s.packet_context = ty,
                ("event.header", Err(ty)) => s.event_header = ty,
                ("event.context", Err(ty)) => s.event_context = ty,
                _ => {}
            }
            Ok(())
        })?;
        if self.streams.iter().any(|o| o.id == s.id) {
            return Err(self.err(format!("stream id {} declared twice", s.id)));
        }
        self.streams.push(s);
        Ok(())
    }

    fn event_block(&mut self) -> Result<(), CtfError> {
        let mut e = EventClass {
            name: String::new(),
            id: 0,
            stream_id: 0,
            loglevel: None,
            context: Type::empty_struct(),
            fields: Type::empty_struct(),
        };
        self.entries(|p, key, v| {
            match (key.as_str(), v) {
                ("name", Ok(Val::Str(s) | Val::Path(s))) => e.name = s,
                ("id", Ok(v)) => e.id = p.int_val("id", &v)?.clamp(0, u64::MAX as i128) as u64,
                ("stream_id", Ok(v)) => {
                    e.stream_id = p.int_val("stream_id", &v)?.clamp(0, u64::MAX as i128) as u64
                }
                ("loglevel", Ok(v)) => e.loglevel = Some(clamp_i64(p.int_val("loglevel", &v)?)),
                ("context", Err(ty)) => e.context = ty,
                ("fields", Err(ty)) => e.fields = ty,
                _ => {}
            }
            Ok(())
        })?;
        self.events.push(e);
        Ok(())
    }

    /// A type specifier. `declarator_follows`: a field name comes after
    /// it, so an alias made of several words must leave the last word.
    fn type_spec(&mut self, declarator_follows: bool) -> Result<Type, CtfError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("types nested too deep"));
        }
        let r = self.type_spec_inner(declarator_follows);
        self.depth -= 1;
        r
    }

    fn type_spec_inner(&mut self, declarator_follows: bool) -> Result<Type, CtfError> {
        let word = match self.peek() {
            Some(T::Ident(w)) => w.clone(),
            _ => return Err(self.err(format!("expected a type, found {}", self.describe()))),
        };
        match word.as_str() {
            "integer" => {
                self.pos += 1;
                self.integer()
            }
            "floating_point" => {
                self.pos += 1;
                self.floating_point()
            }
            "string" => {
                self.pos += 1;
                if self.is_punct("{") {
                    // `string { encoding = UTF8; }`: the encoding changes
                    // nothing in how it is read.
                    self.entries(|_, _, _| Ok(()))?;
                }
                Ok(Type {
                    align_bits: 8,
                    kind: TypeKind::String,
                })
            }
            "enum" => {
                self.pos += 1;
                self.enumeration()
            }
            "struct" => {
                self.pos += 1;
                self.structure()
            }
            "variant" => {
                self.pos += 1;
                self.variant()
            }
            _ => {
                let mut words = Vec::new();
                let mut n = 0;
                while let Some(T::Ident(w)) = self.peek_at(n) {
                    words.push(w.clone());
                    n += 1;
                }
                let mut take = words.len();
                if declarator_follows && take > 1 {
                    take -= 1;
                }
                while take > 0 {
                    let name = words[..take].join(" ");
                    if let Some(t) = self.aliases.get(&name) {
                        let t = t.clone();
                        self.pos += take;
                        return Ok(t);
                    }
                    take -= 1;
                }
                Err(self.err(format!("unknown type `{word}`")))
            }
        }
    }

    fn integer(&mut self) -> Result<Type, CtfError> {
        let mut size = None;
        let mut align = None;
        let mut int = IntType {
            size_bits: 0,
            signed: false,
            byte_order: NATIVE,
            base: Base::Dec,
            is_char: false,
            clock: None,
            role: Role::Plain,
            reg: None,
        };
        let mut native = true;
        self.entries(|p, key, v| {
            let Ok(v) = v else {
                return Err(p.err(format!("`{key}` in an integer is a value")));
            };
            match key.as_str() {
                "size" => size = Some(p.int_val("size", &v)?),
                "align" => align = Some(p.int_val("align", &v)?),
                "signed" => int.signed = p.int_val("signed", &v)? != 0,
                "byte_order" => {
                    if let Some(bo) = p.byte_order_val(&v)? {
                        int.byte_order = bo;
                        native = false;
                    }
                }
                "base" => {
                    int.base = match &v {
                        Val::Int(2) => Base::Bin,
                        Val::Int(8) => Base::Oct,
                        Val::Int(10) => Base::Dec,
                        Val::Int(16) => Base::Hex,
                        Val::Path(s) => match s.as_str() {
                            "binary" | "bin" | "b" => Base::Bin,
                            "octal" | "oct" | "o" => Base::Oct,
                            "decimal" | "dec" | "d" | "i" | "u" => Base::Dec,
                            "hexadecimal" | "hex" | "x" | "X" | "p" => Base::Hex,
                            _ => return Err(p.err(format!("unknown base `{s}`"))),
                        },
                        _ => return Err(p.err("bad integer base")),
                    }
                }
                "encoding" => {
                    int.is_char = matches!(&v, Val::Path(s) if s.eq_ignore_ascii_case("utf8") || s.eq_ignore_ascii_case("ascii"))
                }
                "map" => {
                    if let Val::Path(s) = &v {
                        let parts: Vec<&str> = s.split('.').collect();
                        if parts.len() == 3 && parts[0] == "clock" && parts[2] == "value" {
                            int.clock = Some(parts[1].to_string());
                        }
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        let size = size.ok_or_else(|| self.err("integer without a size"))?;
        if !(1..=64).contains(&size) {
            return Err(self.err(format!("integer size {size} bits: 1 to 64 are read")));
        }
        int.size_bits = size as u32;
        let align = align.unwrap_or(if size % 8 == 0 { 8 } else { 1 });
        check_align(self, align)?;
        if native {
            int.reg = Some(u16::MAX); // marker: native order, fixed in `finish`
        }
        Ok(Type {
            align_bits: align as u32,
            kind: TypeKind::Int(int),
        })
    }

    fn floating_point(&mut self) -> Result<Type, CtfError> {
        let (mut exp, mut mant, mut align) = (None, None, None);
        let mut bo = None;
        self.entries(|p, key, v| {
            let Ok(v) = v else { return Ok(()) };
            match key.as_str() {
                "exp_dig" => exp = Some(p.int_val("exp_dig", &v)?),
                "mant_dig" => mant = Some(p.int_val("mant_dig", &v)?),
                "align" => align = Some(p.int_val("align", &v)?),
                "byte_order" => bo = p.byte_order_val(&v)?,
                _ => {}
            }
            Ok(())
        })?;
        let (exp, mant) = (
            exp.ok_or_else(|| self.err("floating_point without exp_dig"))?,
            mant.ok_or_else(|| self.err("floating_point without mant_dig"))?,
        );
        if !matches!((exp, mant), (8, 24) | (11, 53)) {
            return Err(self.err(format!(
                "floating_point exp_dig={exp} mant_dig={mant}: only 32-bit (8/24) and 64-bit (11/53) are read"
            )));
        }
        let align = align.unwrap_or(8);
        check_align(self, align)?;
        Ok(Type {
            align_bits: align as u32,
            kind: TypeKind::Float(FloatType {
                exp_dig: exp as u32,
                mant_dig: mant as u32,
                // `None` is native: marked by a Big/Little fixed in
                // `finish` through the trace order (floats are rare; the
                // trace order is what producers mean).
                byte_order: bo.unwrap_or(NATIVE_FLOAT),
            }),
        })
    }

    fn enumeration(&mut self) -> Result<Type, CtfError> {
        let mut name = None;
        if let Some(T::Ident(w)) = self.peek() {
            if !self.is_punct(":") {
                name = Some(w.clone());
                self.pos += 1;
            }
        }
        let container = if self.is_punct(":") {
            self.pos += 1;
            Some(self.type_spec(false)?)
        } else {
            None
        };
        if !self.is_punct("{") {
            let n = name.ok_or_else(|| self.err("enum without a body or a name"))?;
            return self
                .aliases
                .get(&format!("enum {n}"))
                .cloned()
                .ok_or_else(|| self.err(format!("unknown enum `{n}`")));
        }
        let container = match container {
            Some(c) => c,
            None => self
                .aliases
                .get("int")
                .cloned()
                .ok_or_else(|| self.err("enum without a container type and no `int` alias"))?,
        };
        let int = match container.kind {
            TypeKind::Int(i) => i,
            _ => return Err(self.err("enum container is not an integer")),
        };
        self.expect("{")?;
        let mut mappings = Vec::new();
        let mut next_value: i128 = 0;
        while !self.is_punct("}") {
            let label = match self.next()? {
                T::Ident(s) | T::Str(s) => s,
                _ => {
                    self.pos -= 1;
                    return Err(
                        self.err(format!("expected an enum label, found {}", self.describe()))
                    );
                }
            };
            let (low, high) = if self.is_punct("=") {
                self.pos += 1;
                let low = self.signed_int()?;
                let high = if self.is_punct("...") {
                    self.pos += 1;
                    self.signed_int()?
                } else {
                    low
                };
                (low, high)
            } else {
                (next_value, next_value)
            };
            next_value = high.saturating_add(1);
            mappings.push(EnumMapping { label, low, high });
            if self.is_punct(",") {
                self.pos += 1;
            } else if !self.is_punct("}") {
                return Err(self.err(format!(
                    "expected `,` or `}}` in enum, found {}",
                    self.describe()
                )));
            }
        }
        self.expect("}")?;
        let ty = Type {
            align_bits: container.align_bits,
            kind: TypeKind::Enum(EnumType { int, mappings }),
        };
        if let Some(n) = name {
            self.aliases.insert(format!("enum {n}"), ty.clone());
        }
        Ok(ty)
    }

    fn signed_int(&mut self) -> Result<i128, CtfError> {
        match self.value()? {
            Val::Int(i) => Ok(i),
            _ => Err(self.err("expected a number")),
        }
    }

    fn structure(&mut self) -> Result<Type, CtfError> {
        let mut name = None;
        if let Some(T::Ident(w)) = self.peek() {
            name = Some(w.clone());
            self.pos += 1;
        }
        if !self.is_punct("{") {
            let n = name.ok_or_else(|| self.err("struct without a body or a name"))?;
            let mut t = self
                .aliases
                .get(&format!("struct {n}"))
                .cloned()
                .ok_or_else(|| self.err(format!("unknown struct `{n}`")))?;
            self.struct_align(&mut t)?;
            return Ok(t);
        }
        let fields = self.fields()?;
        let align = fields.iter().map(|f| f.ty.align_bits).max().unwrap_or(1);
        let mut t = Type {
            align_bits: align,
            kind: TypeKind::Struct(fields),
        };
        self.struct_align(&mut t)?;
        if let Some(n) = name {
            self.aliases.insert(format!("struct {n}"), t.clone());
        }
        Ok(t)
    }

    fn struct_align(&mut self, t: &mut Type) -> Result<(), CtfError> {
        if self.is_ident("align") && matches!(self.peek_at(1), Some(T::Punct("("))) {
            self.pos += 2;
            let a = self.signed_int()?;
            check_align(self, a)?;
            self.expect(")")?;
            t.align_bits = t.align_bits.max(a as u32);
        }
        Ok(())
    }

    fn variant(&mut self) -> Result<Type, CtfError> {
        let mut name = None;
        if let Some(T::Ident(w)) = self.peek() {
            name = Some(w.clone());
            self.pos += 1;
        }
        let tag = if self.is_punct("<") {
            self.pos += 1;
            let mut path = vec![strip(&self.ident()?)];
            while self.is_punct(".") {
                self.pos += 1;
                path.push(strip(&self.ident()?));
            }
            self.expect(">")?;
            Some(FieldRef { path, reg: None })
        } else {
            None
        };
        let mut t = if self.is_punct("{") {
            let options = self.fields()?;
            let t = Type {
                align_bits: 1,
                kind: TypeKind::Variant(VariantType {
                    tag: FieldRef {
                        path: Vec::new(),
                        reg: None,
                    },
                    options,
                    selector: Vec::new(),
                }),
            };
            if let Some(n) = &name {
                self.aliases.insert(format!("variant {n}"), t.clone());
            }
            t
        } else {
            let n = name.ok_or_else(|| self.err("variant without a body or a name"))?;
            self.aliases
                .get(&format!("variant {n}"))
                .cloned()
                .ok_or_else(|| self.err(format!("unknown variant `{n}`")))?
        };
        if let (Some(tag), TypeKind::Variant(v)) = (tag, &mut t.kind) {
            v.tag = tag;
        }
        Ok(t)
    }

    /// `{ type name; type name[3]; typealias ...; }`
    fn fields(&mut self) -> Result<Vec<Field>, CtfError> {
        self.expect("{")?;
        let mut out: Vec<Field> = Vec::new();
        while !self.is_punct("}") {
            if self.is_punct(";") {
                self.pos += 1;
                continue;
            }
            if self.is_ident("typealias") {
                self.pos += 1;
                self.typealias()?;
                self.expect(";")?;
                continue;
            }
            if self.is_ident("typedef") {
                self.pos += 1;
                self.typedef()?;
                self.expect(";")?;
                continue;
            }
            let ty = self.type_spec(true)?;
            loop {
                let (name, t) = self.declarator(ty.clone())?;
                let name = strip(&name);
                if out.iter().any(|f| f.name == name) {
                    return Err(self.err(format!("field `{name}` declared twice")));
                }
                out.push(Field { name, ty: t });
                if self.is_punct(",") {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            self.expect(";")?;
        }
        self.expect("}")?;
        Ok(out)
    }

    fn finish(mut self) -> Result<Metadata, CtfError> {
        let bo = self.byte_order.ok_or_else(|| CtfError::Metadata {
            path: self.path.clone(),
            line: 0,
            msg: "no `trace { byte_order = ...; }`".into(),
        })?;
        let mut packet_header = self.packet_header.take().unwrap_or_else(Type::empty_struct);
        let mut streams = std::mem::take(&mut self.streams);
        let mut events = std::mem::take(&mut self.events);
        if streams.is_empty() {
            // A trace with one implicit stream (no `stream` block).
            streams.push(StreamClass {
                id: 0,
                packet_context: Type::empty_struct(),
                event_header: Type::empty_struct(),
                event_context: Type::empty_struct(),
            });
        }
        let single_clock = (self.clocks.len() == 1).then(|| self.clocks[0].name.clone());
        fix_native(&mut packet_header, bo);
        mark_roles(&mut packet_header, Scope::PacketHeader, "", &single_clock);
        for (i, s) in streams.iter_mut().enumerate() {
            fix_native(&mut s.packet_context, bo);
            fix_native(&mut s.event_header, bo);
            fix_native(&mut s.event_context, bo);
            mark_roles(
                &mut s.packet_context,
                Scope::PacketContext(i),
                "",
                &single_clock,
            );
            mark_roles(
                &mut s.event_header,
                Scope::EventHeader(i),
                "",
                &single_clock,
            );
            mark_roles(
                &mut s.event_context,
                Scope::StreamEventContext(i),
                "",
                &single_clock,
            );
        }
        for (i, e) in events.iter_mut().enumerate() {
            if !streams.iter().any(|s| s.id == e.stream_id) {
                return Err(CtfError::Metadata {
                    path: self.path.clone(),
                    line: 0,
                    msg: format!(
                        "event `{}` names stream {} that is not declared",
                        e.name, e.stream_id
                    ),
                });
            }
            fix_native(&mut e.context, bo);
            fix_native(&mut e.fields, bo);
            mark_roles(&mut e.context, Scope::EventContext(i), "", &single_clock);
            mark_roles(&mut e.fields, Scope::EventFields(i), "", &single_clock);
        }
        for c in &self.clocks {
            if self.clocks.iter().filter(|o| o.name == c.name).count() > 1 {
                return Err(CtfError::Metadata {
                    path: self.path.clone(),
                    line: 0,
                    msg: format!("clock `{}` declared twice", c.name),
                });
            }
        }
        let mut m = Metadata {
            byte_order: bo,
            uuid: self.uuid.take(),
            packet_header,
            env: std::mem::take(&mut self.env),
            clocks: std::mem::take(&mut self.clocks),
            streams,
            events,
            registers: 0,
        };
        resolve(&mut m, &self.path)?;
        Ok(m)
    }
}

/// Float "native" marker (see [`Parser::floating_point`]): floats
/// without a byte order take the trace's in [`fix_native`], which cannot
/// tell an explicit `le` from none; producers that write floats (barectf)
/// give the trace order anyway.
const NATIVE_FLOAT: ByteOrder = ByteOrder::Little;

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn check_align(p: &Parser, a: i128) -> Result<(), CtfError> {
    if a <= 0 || a > 1 << 20 || (a & (a - 1)) != 0 {
        return Err(p.err(format!("alignment {a} is not a power of two")));
    }
    Ok(())
}

/// Integers without an explicit byte order (marked `reg = u16::MAX` by the
/// parser) take the trace's.
fn fix_native(t: &mut Type, bo: ByteOrder) {
    match &mut t.kind {
        TypeKind::Int(i) => fix_int(i, bo),
        TypeKind::Enum(e) => fix_int(&mut e.int, bo),
        TypeKind::Float(f) => {
            if bo == ByteOrder::Big {
                f.byte_order = ByteOrder::Big
            }
        }
        TypeKind::String => {}
        TypeKind::Struct(fs) => fs.iter_mut().for_each(|f| fix_native(&mut f.ty, bo)),
        TypeKind::Variant(v) => v.options.iter_mut().for_each(|f| fix_native(&mut f.ty, bo)),
        TypeKind::Array(e, _) | TypeKind::Sequence(e, _) => fix_native(e, bo),
    }
}

fn fix_int(i: &mut IntType, bo: ByteOrder) {
    if i.reg == Some(u16::MAX) {
        i.byte_order = bo;
        i.reg = None;
    }
}

/// Mark the integers that move the clock or carry the event id.
fn mark_roles(t: &mut Type, scope: Scope, name: &str, single_clock: &Option<String>) {
    match &mut t.kind {
        TypeKind::Int(i) => mark_int(i, scope, name, single_clock),
        TypeKind::Enum(e) => mark_int(&mut e.int, scope, name, single_clock),
        TypeKind::Struct(fs) => fs
            .iter_mut()
            .for_each(|f| mark_roles(&mut f.ty, scope, &f.name, single_clock)),
        TypeKind::Variant(v) => v
            .options
            .iter_mut()
            .for_each(|f| mark_roles(&mut f.ty, scope, &f.name, single_clock)),
        // Elements of arrays have no role.
        _ => {}
    }
}

fn mark_int(i: &mut IntType, scope: Scope, name: &str, single_clock: &Option<String>) {
    let implicit_clock = match scope {
        Scope::EventHeader(_) => name == "timestamp",
        Scope::PacketContext(_) => name == "timestamp_begin",
        _ => false,
    };
    if i.clock.is_none() && implicit_clock {
        i.clock = single_clock.clone();
    }
    i.role = if matches!(scope, Scope::EventHeader(_)) && name == "id" {
        Role::EventId
    } else if i.clock.is_some()
        && !(matches!(scope, Scope::PacketContext(_)) && name == "timestamp_end")
    {
        Role::Clock
    } else {
        Role::Plain
    };
}

// ---- resolving variant tags and sequence lengths to registers ----

/// Index path to a field from a scope's root.
type Loc = (Scope, Vec<usize>);

fn scope_type(m: &Metadata, s: Scope) -> &Type {
    match s {
        Scope::PacketHeader => &m.packet_header,
        Scope::PacketContext(i) => &m.streams[i].packet_context,
        Scope::EventHeader(i) => &m.streams[i].event_header,
        Scope::StreamEventContext(i) => &m.streams[i].event_context,
        Scope::EventContext(i) => &m.events[i].context,
        Scope::EventFields(i) => &m.events[i].fields,
    }
}

fn scope_type_mut(m: &mut Metadata, s: Scope) -> &mut Type {
    match s {
        Scope::PacketHeader => &mut m.packet_header,
        Scope::PacketContext(i) => &mut m.streams[i].packet_context,
        Scope::EventHeader(i) => &mut m.streams[i].event_header,
        Scope::StreamEventContext(i) => &mut m.streams[i].event_context,
        Scope::EventContext(i) => &mut m.events[i].context,
        Scope::EventFields(i) => &mut m.events[i].fields,
    }
}

/// The scopes decoded before (and including) `s`, innermost first: where a
/// relative path that is not in `s` is looked up.
fn outer_scopes(m: &Metadata, s: Scope) -> Vec<Scope> {
    let stream_of_event = |e: usize| {
        m.streams
            .iter()
            .position(|st| st.id == m.events[e].stream_id)
            .unwrap_or(0)
    };
    match s {
        Scope::PacketHeader => vec![],
        Scope::PacketContext(_) => vec![Scope::PacketHeader],
        Scope::EventHeader(i) => vec![Scope::PacketContext(i), Scope::PacketHeader],
        Scope::StreamEventContext(i) => {
            vec![
                Scope::EventHeader(i),
                Scope::PacketContext(i),
                Scope::PacketHeader,
            ]
        }
        Scope::EventContext(e) => {
            let i = stream_of_event(e);
            vec![
                Scope::StreamEventContext(i),
                Scope::EventHeader(i),
                Scope::PacketContext(i),
                Scope::PacketHeader,
            ]
        }
        Scope::EventFields(e) => {
            let i = stream_of_event(e);
            vec![
                Scope::EventContext(e),
                Scope::StreamEventContext(i),
                Scope::EventHeader(i),
                Scope::PacketContext(i),
                Scope::PacketHeader,
            ]
        }
    }
}

/// Follow `path` from the members of `t`.
fn walk(t: &Type, path: &[String], mut at: Vec<usize>) -> Option<Vec<usize>> {
    let (first, rest) = path.split_first()?;
    let fields = match &t.kind {
        TypeKind::Struct(fs) => fs,
        TypeKind::Variant(v) => &v.options,
        _ => return None,
    };
    let i = fields.iter().position(|f| &f.name == first)?;
    at.push(i);
    if rest.is_empty() {
        Some(at)
    } else {
        walk(&fields[i].ty, rest, at)
    }
}

fn at_path<'a>(t: &'a Type, idx: &[usize]) -> Option<&'a Type> {
    let Some((&i, rest)) = idx.split_first() else {
        return Some(t);
    };
    let f = match &t.kind {
        TypeKind::Struct(fs) => fs.get(i)?,
        TypeKind::Variant(v) => v.options.get(i)?,
        _ => return None,
    };
    at_path(&f.ty, rest)
}

fn at_path_mut<'a>(t: &'a mut Type, idx: &[usize]) -> Option<&'a mut Type> {
    let Some((&i, rest)) = idx.split_first() else {
        return Some(t);
    };
    let f = match &mut t.kind {
        TypeKind::Struct(fs) => fs.get_mut(i)?,
        TypeKind::Variant(v) => v.options.get_mut(i)?,
        _ => return None,
    };
    at_path_mut(&mut f.ty, rest)
}

/// Find what a reference at `from` (a field path in `scope`) names.
fn lookup(m: &Metadata, scope: Scope, from: &[usize], path: &[String]) -> Option<Loc> {
    let abs: Option<(Scope, usize)> = match path.first().map(String::as_str) {
        Some("trace")
            if path.get(1).is_some_and(|p| p == "packet")
                && path.get(2).is_some_and(|p| p == "header") =>
        {
            Some((Scope::PacketHeader, 3))
        }
        Some("stream") if path.len() > 3 => {
            let outer = outer_scopes(m, scope);
            let mut cands = outer.clone();
            cands.push(scope);
            let want = match (path[1].as_str(), path[2].as_str()) {
                ("packet", "context") => |s: &Scope| matches!(s, Scope::PacketContext(_)),
                ("event", "header") => |s: &Scope| matches!(s, Scope::EventHeader(_)),
                ("event", "context") => |s: &Scope| matches!(s, Scope::StreamEventContext(_)),
                _ => return None,
            };
            cands.into_iter().find(want).map(|s| (s, 3))
        }
        Some("event") if path.len() > 2 => {
            let mut cands = outer_scopes(m, scope);
            cands.push(scope);
            let want = match path[1].as_str() {
                "context" => |s: &Scope| matches!(s, Scope::EventContext(_)),
                "fields" => |s: &Scope| matches!(s, Scope::EventFields(_)),
                _ => return None,
            };
            cands.into_iter().find(want).map(|s| (s, 2))
        }
        _ => None,
    };
    if let Some((s, skip)) = abs {
        return walk(scope_type(m, s), &path[skip..], Vec::new()).map(|p| (s, p));
    }
    // Relative: the enclosing structures of `from`, innermost first.
    let root = scope_type(m, scope);
    for depth in (0..from.len()).rev() {
        let parent = at_path(root, &from[..depth])?;
        if let Some(p) = walk(parent, path, from[..depth].to_vec()) {
            return Some((scope, p));
        }
    }
    for s in outer_scopes(m, scope) {
        if let Some(p) = walk(scope_type(m, s), path, Vec::new()) {
            return Some((s, p));
        }
    }
    None
}

/// Every variant and sequence in a type, with its field path.
fn refs(t: &Type, at: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Vec<String>)>) {
    match &t.kind {
        TypeKind::Struct(fs) => {
            for (i, f) in fs.iter().enumerate() {
                at.push(i);
                refs(&f.ty, at, out);
                at.pop();
            }
        }
        TypeKind::Variant(v) => {
            out.push((at.clone(), v.tag.path.clone()));
            for (i, f) in v.options.iter().enumerate() {
                at.push(i);
                refs(&f.ty, at, out);
                at.pop();
            }
        }
        TypeKind::Sequence(_, r) => out.push((at.clone(), r.path.clone())),
        // Elements of arrays and sequences that are variants or sequences
        // themselves would need a path into the element; not produced by
        // the tracers this reads (checked when decoding: no register).
        _ => {}
    }
}

fn resolve(m: &mut Metadata, path: &Path) -> Result<(), CtfError> {
    let mut scopes = vec![Scope::PacketHeader];
    for i in 0..m.streams.len() {
        scopes.extend([
            Scope::PacketContext(i),
            Scope::EventHeader(i),
            Scope::StreamEventContext(i),
        ]);
    }
    for i in 0..m.events.len() {
        scopes.extend([Scope::EventContext(i), Scope::EventFields(i)]);
    }
    let mut regs: HashMap<(Scope, Vec<usize>), u16> = HashMap::new();
    for scope in scopes {
        let mut found = Vec::new();
        refs(scope_type(m, scope), &mut Vec::new(), &mut found);
        for (at, ref_path) in found {
            let err = |msg: String| CtfError::Metadata {
                path: path.to_path_buf(),
                line: 0,
                msg,
            };
            let target = lookup(m, scope, &at, &ref_path)
                .ok_or_else(|| err(format!("`{}` names no field before it", ref_path.join("."))))?;
            let target_ty = at_path(scope_type(m, target.0), &target.1).cloned();
            let enum_maps = match target_ty.as_ref().map(|t| &t.kind) {
                Some(TypeKind::Enum(e)) => Some(e.mappings.clone()),
                Some(TypeKind::Int(_)) => None,
                _ => {
                    return Err(err(format!(
                        "`{}` is not an integer or an enum",
                        ref_path.join(".")
                    )))
                }
            };
            let next = regs.len();
            if next >= u16::MAX as usize - 1 {
                return Err(err("too many variant tags and sequence lengths".into()));
            }
            let reg = *regs.entry(target.clone()).or_insert(next as u16);
            if let Some(t) = at_path_mut(scope_type_mut(m, target.0), &target.1) {
                match &mut t.kind {
                    TypeKind::Int(i) => i.reg = Some(reg),
                    TypeKind::Enum(e) => e.int.reg = Some(reg),
                    _ => {}
                }
            }
            let Some(me) = at_path_mut(scope_type_mut(m, scope), &at) else {
                continue;
            };
            match &mut me.kind {
                TypeKind::Sequence(_, r) => r.reg = Some(reg),
                TypeKind::Variant(v) => {
                    let maps = enum_maps.ok_or_else(|| {
                        err(format!(
                            "variant tag `{}` is not an enum",
                            ref_path.join(".")
                        ))
                    })?;
                    v.tag.reg = Some(reg);
                    v.selector.clear();
                    for mp in &maps {
                        let label = mp.label.strip_prefix('_').unwrap_or(&mp.label);
                        if let Some(oi) = v
                            .options
                            .iter()
                            .position(|o| o.name == mp.label || o.name == label)
                        {
                            v.selector.push((mp.low, mp.high, oi as u32));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    m.registers = regs.len();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lttng_header_parses_and_resolves() {
        let text = r#"
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 27; align = 1; signed = false; } := uint27_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
trace { major = 1; minor = 8; byte_order = be; packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
clock { name = monotonic; freq = 1000000000; offset = 1361203559332331489; };
typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
struct event_header_compact {
	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
	variant <id> {
		struct { uint27_clock_monotonic_t timestamp; } compact;
		struct { uint32_t id; unsigned long timestamp; } extended;
	} v;
} align(8);
stream { id = 0; event.header := struct event_header_compact; };
event { name = "a:b"; id = 3; stream_id = 0; fields := struct {
  uint32_t __len; integer { size = 8; align = 8; signed = 1; encoding = UTF8; } _msg[ __len ];
}; };
"#;
        let m = parse(text, Path::new("m")).unwrap();
        assert_eq!(m.byte_order, ByteOrder::Big);
        let h = &m.streams[0].event_header;
        assert_eq!(h.align_bits, 8);
        let TypeKind::Enum(e) = &h.fields()[0].ty.kind else {
            panic!()
        };
        assert_eq!(e.int.role, Role::EventId);
        assert_eq!(e.int.byte_order, ByteOrder::Big);
        let TypeKind::Variant(v) = &h.fields()[1].ty.kind else {
            panic!()
        };
        assert_eq!(v.selector, vec![(0, 30, 0), (31, 31, 1)]);
        assert_eq!(v.tag.reg, e.int.reg);
        let f = &m.events[0].fields;
        assert_eq!(f.fields()[0].name, "_len");
        assert!(f.fields()[1].ty.is_text());
        assert_eq!(m.clocks[0].ns_from_origin(5), 1361203559332331494);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("trace {\n byte_order = le;\n};\nfoo bar;", Path::new("md")).unwrap_err();
        assert!(e.to_string().contains("md:4"), "{e}");
        let e = parse(
            "trace { byte_order = le; packet.header := struct { nosuch x; }; };",
            Path::new("md"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown type `nosuch`"), "{e}");
    }
}
