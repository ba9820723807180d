//! The field types a TSDL metadata file declares, as the decoder walks
//! them.
//!
//! Every type knows its alignment in bits. Variant tags and sequence
//! lengths name another field by path in the metadata; once the whole
//! trace is parsed those paths are resolved to *registers*: the referred
//! field stores its value in a small per-stream table as it is decoded,
//! and the variant or sequence reads it from there (no lookup by name per
//! event).

/// Byte order of an integer or floating point field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little endian: bit 0 is the least significant bit of the first byte.
    Little,
    /// Big endian: bit 0 is the most significant bit of the first byte.
    Big,
}

/// The preferred display base of an integer (`base = 16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// Binary.
    Bin,
    /// Octal.
    Oct,
    /// Decimal.
    Dec,
    /// Hexadecimal.
    Hex,
}

/// What decoding an integer does besides giving its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Nothing.
    Plain,
    /// Updates the stream's clock (`map = clock.NAME.value`, or a
    /// `timestamp` in the event header): the low `size` bits are replaced,
    /// with a wrap-around when the new low bits are smaller.
    Clock,
    /// The event id (`id` in the event header; the last one decoded wins,
    /// so LTTng's extended header's 32-bit id overrides the 5-bit one).
    EventId,
}

/// `integer { size = 32; align = 8; signed = false; ... }`
#[derive(Debug, Clone, PartialEq)]
pub struct IntType {
    /// Width in bits (1..=64).
    pub size_bits: u32,
    /// Signed (two's complement).
    pub signed: bool,
    /// Byte order.
    pub byte_order: ByteOrder,
    /// Display base.
    pub base: Base,
    /// `encoding = UTF8/ASCII`: a character (arrays of them are strings).
    pub is_char: bool,
    /// The clock it maps to (`map = clock.NAME.value`), by name.
    pub clock: Option<String>,
    /// What decoding it does besides giving a value.
    pub role: Role,
    /// Register this value is stored into (a variant tag or a sequence
    /// length refers to it).
    pub reg: Option<u16>,
}

/// `floating_point { exp_dig = 8; mant_dig = 24; }`
#[derive(Debug, Clone, PartialEq)]
pub struct FloatType {
    /// Exponent bits.
    pub exp_dig: u32,
    /// Mantissa bits, with the implicit one.
    pub mant_dig: u32,
    /// Byte order.
    pub byte_order: ByteOrder,
}

impl FloatType {
    /// Total width in bits.
    pub fn size_bits(&self) -> u32 {
        self.exp_dig + self.mant_dig
    }
}

/// One label of an enumeration: `NAME = LOW ... HIGH`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    /// The label.
    pub label: String,
    /// Lowest value (inclusive).
    pub low: i128,
    /// Highest value (inclusive).
    pub high: i128,
}

/// `enum : uint8_t { A, B = 3, C = 4 ... 6 }`
#[derive(Debug, Clone, PartialEq)]
pub struct EnumType {
    /// The container integer.
    pub int: IntType,
    /// The labels.
    pub mappings: Vec<EnumMapping>,
}

impl EnumType {
    /// The labels whose range holds `value`.
    pub fn labels(&self, value: i128) -> impl Iterator<Item = &str> {
        self.mappings
            .iter()
            .filter(move |m| m.low <= value && value <= m.high)
            .map(|m| m.label.as_str())
    }
}

/// A named member of a structure or an option of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Name, with the one leading underscore CTF 1.8 producers add to
    /// escape identifiers removed (`_prev_comm` is `prev_comm`), as
    /// babeltrace2 shows it.
    pub name: String,
    /// Its type.
    pub ty: Type,
}

/// A reference from a variant or a sequence to the field that holds its
/// tag or length.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldRef {
    /// The path as written in the metadata (underscores removed as in
    /// [`Field::name`]).
    pub path: Vec<String>,
    /// The register it was resolved to.
    pub reg: Option<u16>,
}

/// `variant <tag> { ... }`
#[derive(Debug, Clone, PartialEq)]
pub struct VariantType {
    /// The tag.
    pub tag: FieldRef,
    /// The options.
    pub options: Vec<Field>,
    /// Tag value ranges → option index (from the tag enum's labels; filled
    /// in when the tag is resolved).
    pub selector: Vec<(i128, i128, u32)>,
}

/// The shape of a type.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeKind {
    /// An integer.
    Int(IntType),
    /// A floating point number (32 or 64 bits).
    Float(FloatType),
    /// A NUL-terminated string.
    String,
    /// An integer with labels.
    Enum(EnumType),
    /// Members in order.
    Struct(Vec<Field>),
    /// One of several options, chosen by a tag.
    Variant(VariantType),
    /// A fixed number of elements.
    Array(Box<Type>, u64),
    /// A number of elements given by another field.
    Sequence(Box<Type>, FieldRef),
}

/// A type and its alignment.
#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    /// Alignment in bits (a power of two).
    pub align_bits: u32,
    /// What it is.
    pub kind: TypeKind,
}

impl Type {
    /// An empty structure (a scope the metadata does not declare).
    pub fn empty_struct() -> Type {
        Type {
            align_bits: 1,
            kind: TypeKind::Struct(Vec::new()),
        }
    }

    /// The members, when this is a structure.
    pub fn fields(&self) -> &[Field] {
        match &self.kind {
            TypeKind::Struct(f) => f,
            _ => &[],
        }
    }

    /// The smallest number of bits a value of this type takes (to bound
    /// element counts against the bytes left).
    pub fn min_bits(&self) -> u64 {
        match &self.kind {
            TypeKind::Int(i) => i.size_bits as u64,
            TypeKind::Enum(e) => e.int.size_bits as u64,
            TypeKind::Float(f) => f.size_bits() as u64,
            TypeKind::String => 8,
            TypeKind::Struct(fs) => fs.iter().map(|f| f.ty.min_bits()).sum(),
            TypeKind::Variant(v) => v.options.iter().map(|f| f.ty.min_bits()).min().unwrap_or(0),
            TypeKind::Array(e, n) => e.min_bits().saturating_mul(*n),
            TypeKind::Sequence(..) => 0,
        }
    }

    /// Is this an array or sequence of characters (shown as a string)?
    pub fn is_text(&self) -> bool {
        match &self.kind {
            TypeKind::Array(e, _) | TypeKind::Sequence(e, _) => matches!(
                &e.kind,
                TypeKind::Int(i) if i.is_char && i.size_bits == 8 && e.align_bits == 8
            ),
            _ => false,
        }
    }
}
