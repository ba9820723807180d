//! Decoding one scope (a packet header, an event's fields, ...) from a
//! packet's bytes into a flat list of [`Value`]s.
//!
//! Positions are in bits from the start of the packet. An integer of
//! `size` bits at bit `p` (little endian) is bits `p % 8 ..` of byte
//! `p / 8` upwards, the least significant first; big endian counts from
//! the most significant bit of the first byte. Every field is first
//! aligned: `p` rounds up to a multiple of its type's alignment.
//!
//! A compound value is one slot saying how many slots follow it
//! ([`Value::Struct`], [`Value::Array`], [`Value::Variant`]), then its
//! members in order, so a value list is walked without its type and a
//! sibling is skipped in one step.

use crate::types::*;

/// Values in one scope of one event at most.
const MAX_VALUES: usize = 1 << 22;
/// Elements of zero width in one array at most (nothing else bounds them).
const MAX_EMPTY_ELEMENTS: u64 = 1 << 16;

/// One decoded value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An unsigned integer (or enum).
    Unsigned(u64),
    /// A signed integer (or enum).
    Signed(i64),
    /// A floating point number.
    Float(f64),
    /// A string: bytes `start..start+len` of the packet (the NUL and
    /// anything after it in a character array left out).
    Str {
        /// Byte offset in the packet.
        start: u32,
        /// Length in bytes.
        len: u32,
    },
    /// A structure; its members follow.
    Struct {
        /// Slots after this one that belong to it.
        slots: u32,
    },
    /// An array or sequence; its elements follow.
    Array {
        /// Elements.
        len: u32,
        /// Slots after this one that belong to it.
        slots: u32,
    },
    /// A variant; the chosen option's value follows.
    Variant {
        /// Index of the chosen option.
        option: u32,
        /// Slots after this one that belong to it.
        slots: u32,
    },
}

impl Value {
    /// Slots this value and its members take.
    #[inline]
    pub fn width(&self) -> usize {
        match *self {
            Value::Struct { slots } | Value::Array { slots, .. } | Value::Variant { slots, .. } => {
                1 + slots as usize
            }
            _ => 1,
        }
    }
}

/// Why a scope did not decode, at which bit of the packet.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// Bit position in the packet.
    pub bit: u64,
    /// What.
    pub msg: String,
}

/// The state decoding reads and moves.
pub struct Decoder<'a> {
    /// The packet.
    pub buf: &'a [u8],
    /// End of what may be read, in bits (the packet's content size).
    pub end_bits: u64,
    /// Current position in bits.
    pub pos: u64,
    /// Values that variant tags and sequence lengths read.
    pub regs: &'a mut [i128],
    /// The stream's clock, in cycles.
    pub clock: &'a mut u64,
    /// The last event id the header gave.
    pub event_id: &'a mut Option<u64>,
}

#[inline(always)]
fn align_up(pos: u64, align: u32) -> u64 {
    let a = align as u64;
    (pos + a - 1) & !(a - 1)
}

impl Decoder<'_> {
    fn err(&self, msg: impl Into<String>) -> DecodeError {
        DecodeError {
            bit: self.pos,
            msg: msg.into(),
        }
    }

    #[inline(always)]
    fn need(&self, bits: u64, what: &'static str) -> Result<(), DecodeError> {
        if bits > self.end_bits.saturating_sub(self.pos) {
            return Err(self.past_end(bits, what));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn past_end(&self, bits: u64, what: &str) -> DecodeError {
        self.err(format!(
            "{what} of {bits} bits runs past the packet content ({} bits left)",
            self.end_bits.saturating_sub(self.pos)
        ))
    }

    /// Read `size` bits at the current position (already aligned).
    #[inline(always)]
    fn bits(&mut self, size: u32, bo: ByteOrder) -> Result<u64, DecodeError> {
        self.need(size as u64, "integer")?;
        let byte = (self.pos / 8) as usize;
        let shift = (self.pos % 8) as u32;
        self.pos += size as u64;
        if shift == 0 {
            // Whole bytes: the common case.
            let b = self.buf;
            match (size, bo) {
                (8, _) => return Ok(b[byte] as u64),
                (16, ByteOrder::Little) => {
                    return Ok(u16::from_le_bytes([b[byte], b[byte + 1]]) as u64)
                }
                (32, ByteOrder::Little) => {
                    return Ok(u32::from_le_bytes(b[byte..byte + 4].try_into().unwrap()) as u64)
                }
                (64, ByteOrder::Little) => {
                    return Ok(u64::from_le_bytes(b[byte..byte + 8].try_into().unwrap()))
                }
                (16, ByteOrder::Big) => {
                    return Ok(u16::from_be_bytes([b[byte], b[byte + 1]]) as u64)
                }
                (32, ByteOrder::Big) => {
                    return Ok(u32::from_be_bytes(b[byte..byte + 4].try_into().unwrap()) as u64)
                }
                (64, ByteOrder::Big) => {
                    return Ok(u64::from_be_bytes(b[byte..byte + 8].try_into().unwrap()))
                }
                _ => {}
            }
        }
        let nbytes = (shift + size).div_ceil(8) as usize;
        let mut tmp = [0u8; 16];
        tmp[..nbytes].copy_from_slice(&self.buf[byte..byte + nbytes]);
        let mask = if size == 64 {
            u64::MAX as u128
        } else {
            (1u128 << size) - 1
        };
        Ok(match bo {
            ByteOrder::Little => ((u128::from_le_bytes(tmp) >> shift) & mask) as u64,
            ByteOrder::Big => ((u128::from_be_bytes(tmp) >> (128 - shift - size)) & mask) as u64,
        })
    }

    #[inline(always)]
    fn int(&mut self, t: &IntType, align: u32, out: &mut Vec<Value>) -> Result<(), DecodeError> {
        self.pos = align_up(self.pos, align);
        let raw = self.bits(t.size_bits, t.byte_order)?;
        let (v, wide) = if t.signed && t.size_bits < 64 {
            let sh = 64 - t.size_bits;
            let s = ((raw << sh) as i64) >> sh;
            (Value::Signed(s), s as i128)
        } else if t.signed {
            (Value::Signed(raw as i64), raw as i64 as i128)
        } else {
            (Value::Unsigned(raw), raw as i128)
        };
        out.push(v);
        if let Some(r) = t.reg {
            if let Some(slot) = self.regs.get_mut(r as usize) {
                *slot = wide;
            }
        }
        match t.role {
            Role::Plain => {}
            Role::EventId => *self.event_id = Some(raw),
            Role::Clock => {
                // CTF 1.8 §8: an N-bit clock field gives the low N bits;
                // smaller than the current low bits means they wrapped.
                if t.size_bits >= 64 {
                    *self.clock = raw;
                } else {
                    let mask = (1u64 << t.size_bits) - 1;
                    let mut c = *self.clock;
                    if raw < c & mask {
                        c = c.wrapping_add(1u64 << t.size_bits);
                    }
                    *self.clock = (c & !mask) | raw;
                }
            }
        }
        Ok(())
    }

    fn text(&mut self, n: u64, out: &mut Vec<Value>) -> Result<(), DecodeError> {
        self.pos = align_up(self.pos, 8);
        self.need(n.saturating_mul(8), "character array")?;
        let start = (self.pos / 8) as usize;
        let bytes = &self.buf[start..start + n as usize];
        let len = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
        out.push(Value::Str {
            start: start as u32,
            len: len as u32,
        });
        self.pos += n * 8;
        Ok(())
    }

    fn elements(&mut self, elem: &Type, n: u64, out: &mut Vec<Value>) -> Result<(), DecodeError> {
        let min = elem.min_bits();
        if min == 0 && n > MAX_EMPTY_ELEMENTS {
            return Err(self.err(format!("{n} elements of zero width")));
        }
        if n.saturating_mul(min) > self.end_bits.saturating_sub(self.pos) {
            return Err(self.err(format!(
                "{n} elements of at least {min} bits run past the packet content"
            )));
        }
        if n > u32::MAX as u64 {
            return Err(self.err(format!("{n} elements")));
        }
        let at = out.len();
        out.push(Value::Array {
            len: n as u32,
            slots: 0,
        });
        for _ in 0..n {
            if out.len() >= MAX_VALUES {
                return Err(self.err(format!("more than {MAX_VALUES} values in one scope")));
            }
            self.value(elem, out)?;
        }
        let slots = (out.len() - at - 1) as u32;
        out[at] = Value::Array {
            len: n as u32,
            slots,
        };
        Ok(())
    }

    /// Decode one value of type `t`, appending to `out`.
    pub fn value(&mut self, t: &Type, out: &mut Vec<Value>) -> Result<(), DecodeError> {
        match &t.kind {
            TypeKind::Int(i) => self.int(i, t.align_bits, out),
            TypeKind::Enum(e) => self.int(&e.int, t.align_bits, out),
            TypeKind::Float(f) => {
                self.pos = align_up(self.pos, t.align_bits);
                let raw = self.bits(f.size_bits(), f.byte_order)?;
                out.push(Value::Float(if f.size_bits() == 32 {
                    f32::from_bits(raw as u32) as f64
                } else {
                    f64::from_bits(raw)
                }));
                Ok(())
            }
            TypeKind::String => {
                self.pos = align_up(self.pos, 8);
                self.need(8, "string")?;
                let start = (self.pos / 8) as usize;
                let end = (self.end_bits / 8) as usize;
                let len = self.buf[start..end]
                    .iter()
                    .position(|&c| c == 0)
                    .ok_or_else(|| {
                        self.err("string without its NUL before the packet content ends")
                    })?;
                out.push(Value::Str {
                    start: start as u32,
                    len: len as u32,
                });
                self.pos += (len as u64 + 1) * 8;
                Ok(())
            }
            TypeKind::Struct(fields) => {
                self.pos = align_up(self.pos, t.align_bits);
                let at = out.len();
                out.push(Value::Struct { slots: 0 });
                for f in fields {
                    // Integers, the most common member, without a call.
                    match &f.ty.kind {
                        TypeKind::Int(i) => self.int(i, f.ty.align_bits, out)?,
                        TypeKind::Enum(e) => self.int(&e.int, f.ty.align_bits, out)?,
                        _ => self.value(&f.ty, out)?,
                    }
                }
                out[at] = Value::Struct {
                    slots: (out.len() - at - 1) as u32,
                };
                Ok(())
            }
            TypeKind::Variant(v) => {
                let r = v.tag.reg.ok_or_else(|| {
                    self.err(format!("variant tag `{}` unresolved", v.tag.path.join(".")))
                })?;
                let tag = self.regs.get(r as usize).copied().unwrap_or(0);
                let option = v
                    .selector
                    .iter()
                    .find(|(lo, hi, _)| *lo <= tag && tag <= *hi)
                    .map(|s| s.2)
                    .ok_or_else(|| {
                        self.err(format!(
                            "variant tag `{}` = {tag} selects no option",
                            v.tag.path.join(".")
                        ))
                    })?;
                let at = out.len();
                out.push(Value::Variant { option, slots: 0 });
                self.value(&v.options[option as usize].ty, out)?;
                out[at] = Value::Variant {
                    option,
                    slots: (out.len() - at - 1) as u32,
                };
                Ok(())
            }
            TypeKind::Array(elem, n) => {
                if t.is_text() {
                    self.text(*n, out)
                } else {
                    self.elements(elem, *n, out)
                }
            }
            TypeKind::Sequence(elem, r) => {
                let reg = r.reg.ok_or_else(|| {
                    self.err(format!("sequence length `{}` unresolved", r.path.join(".")))
                })?;
                let n = self.regs.get(reg as usize).copied().unwrap_or(0);
                if n < 0 || n > u32::MAX as i128 {
                    return Err(self.err(format!("sequence length `{}` = {n}", r.path.join("."))));
                }
                if t.is_text() {
                    self.text(n as u64, out)
                } else {
                    self.elements(elem, n as u64, out)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(size: u32, bo: ByteOrder, signed: bool) -> Type {
        Type {
            align_bits: 1,
            kind: TypeKind::Int(IntType {
                size_bits: size,
                signed,
                byte_order: bo,
                base: Base::Dec,
                is_char: false,
                clock: None,
                role: Role::Plain,
                reg: None,
            }),
        }
    }

    fn run(buf: &[u8], types: &[Type]) -> Vec<Value> {
        let (mut regs, mut clock, mut id) = (vec![], 0, None);
        let mut d = Decoder {
            buf,
            end_bits: buf.len() as u64 * 8,
            pos: 0,
            regs: &mut regs,
            clock: &mut clock,
            event_id: &mut id,
        };
        let mut out = vec![];
        for t in types {
            d.value(t, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn bit_packed_little_and_big_endian() {
        // 0b1010_1101: LE 5-bit field = low bits 01101 = 13, then 3 bits 101 = 5.
        let le = run(
            &[0xAD],
            &[
                int(5, ByteOrder::Little, false),
                int(3, ByteOrder::Little, false),
            ],
        );
        assert_eq!(le, vec![Value::Unsigned(13), Value::Unsigned(5)]);
        // BE: first 5 bits from the top: 10101 = 21, then 101 = 5.
        let be = run(
            &[0xAD],
            &[int(5, ByteOrder::Big, false), int(3, ByteOrder::Big, false)],
        );
        assert_eq!(be, vec![Value::Unsigned(21), Value::Unsigned(5)]);
        // 27 bits after 5, crossing four bytes, and sign extension.
        let v = run(
            &[0xFF, 0xFF, 0xFF, 0xFF],
            &[
                int(5, ByteOrder::Little, false),
                int(27, ByteOrder::Little, true),
            ],
        );
        assert_eq!(v, vec![Value::Unsigned(31), Value::Signed(-1)]);
    }

    #[test]
    fn clock_wraps() {
        let mut t = match int(27, ByteOrder::Little, false).kind {
            TypeKind::Int(i) => i,
            _ => unreachable!(),
        };
        t.role = Role::Clock;
        let ty = Type {
            align_bits: 1,
            kind: TypeKind::Int(t),
        };
        let (mut regs, mut id) = (vec![], None);
        let mut clock = (5u64 << 27) | 100;
        let buf = 50u32.to_le_bytes();
        let mut d = Decoder {
            buf: &buf,
            end_bits: 27,
            pos: 0,
            regs: &mut regs,
            clock: &mut clock,
            event_id: &mut id,
        };
        d.value(&ty, &mut vec![]).unwrap();
        assert_eq!(clock, (6u64 << 27) | 50);
    }
}
