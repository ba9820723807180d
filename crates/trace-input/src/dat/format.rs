//! Event formats: the text of `events/<system>/<event>/format`, stored in
//! the trace.dat, that says where each field of a payload is.
//!
//! ```text
//! name: sched_switch
//! ID: 372
//! format:
//!     field:unsigned short common_type;    offset:0;    size:2;    signed:0;
//!     field:char prev_comm[16];    offset:8;    size:16;    signed:0;
//!     field:__data_loc char[] name;    offset:12;    size:4;    signed:0;
//! print fmt: "prev_comm=%s ...", REC->prev_comm
//! ```

/// How a field's bytes are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// An integer of `size` bytes.
    Int,
    /// A fixed array (`char comm[16]`); `size` 0 means "to the end" (`char buf[]`).
    Array,
    /// `__data_loc`: a u32 whose low 16 bits are the offset and high 16
    /// bits the length of the bytes in the payload.
    DataLoc,
}

/// One field of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Name (`prev_comm`).
    pub name: String,
    /// Its C type as written (`char`, `pid_t`, `unsigned long`).
    pub ctype: String,
    /// Offset in the payload.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// Signed integer.
    pub signed: bool,
    /// Layout.
    pub layout: Layout,
}

/// One event format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// System (`sched`; `ftrace` for the tracer's own events).
    pub system: String,
    /// Event name.
    pub name: String,
    /// `common_type` value of this event.
    pub id: u16,
    /// Fields, common ones first.
    pub fields: Vec<Field>,
}

impl Format {
    /// Parse a format file's text; `None` when it has no name or ID.
    pub fn parse(system: &str, text: &str) -> Option<Format> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        for line in text.lines() {
            let l = line.trim();
            if let Some(n) = l.strip_prefix("name:") {
                name = Some(n.trim().to_string());
            } else if let Some(n) = l.strip_prefix("ID:") {
                id = n.trim().parse::<u16>().ok();
            } else if l.starts_with("field:") {
                if let Some(f) = parse_field(l) {
                    fields.push(f);
                }
            }
        }
        Some(Format {
            system: system.to_string(),
            name: name?,
            id: id?,
            fields,
        })
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

// "field:char prev_comm[16];	offset:8;	size:16;	signed:0;"
fn parse_field(l: &str) -> Option<Field> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in l.split(';') {
        let p = part.trim();
        if let Some(d) = p.strip_prefix("field:") {
            decl = Some(d.trim());
        } else if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse::<usize>().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse::<usize>().ok();
        } else if let Some(v) = p.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl?;
    let (decl, data_loc) = match decl.strip_prefix("__data_loc ") {
        Some(d) => (d, true),
        None => (decl, false),
    };
    // The name is the last word, without an array suffix.
    let last = decl.rsplit(' ').next()?;
    let (name, array) = match last.find('[') {
        Some(i) => (&last[..i], true),
        None => (last, decl.contains('[')),
    };
    let ctype = decl[..decl.len() - last.len()]
        .trim()
        .trim_end_matches("[]");
    let layout = if data_loc {
        Layout::DataLoc
    } else if array {
        Layout::Array
    } else {
        Layout::Int
    };
    Some(Field {
        name: name.to_string(),
        ctype: ctype.to_string(),
        offset: offset?,
        size: size?,
        signed,
        layout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_arrays_and_data_loc() {
        let f = Format::parse(
            "irq",
            "name: irq_handler_entry\nID: 125\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\nprint fmt: \"irq=%d\", REC->irq\n",
        )
        .unwrap();
        assert_eq!(
            (f.name.as_str(), f.id, f.fields.len()),
            ("irq_handler_entry", 125, 4)
        );
        let irq = f.field("irq").unwrap();
        assert_eq!(
            (irq.offset, irq.size, irq.signed, irq.layout),
            (8, 4, true, Layout::Int)
        );
        assert_eq!(f.field("name").unwrap().layout, Layout::DataLoc);
        let buf = f.field("buf").unwrap();
        assert_eq!(
            (buf.layout, buf.size, buf.ctype.as_str()),
            (Layout::Array, 0, "char")
        );
        assert_eq!(f.field("common_type").unwrap().ctype, "unsigned short");
    }

    #[test]
    fn no_name_or_id_is_none() {
        assert_eq!(Format::parse("x", "ID: 3\n"), None);
        assert_eq!(Format::parse("x", "name: a\nID: 99999\n"), None);
    }
}
