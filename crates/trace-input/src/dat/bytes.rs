//! Bounded little/big-endian reads from a byte slice, each failure naming
//! the file offset and what was expected there.

use super::DatError;

/// Byte order of the numbers in a trace.dat (its header says which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Flag 0.
    Little,
    /// Flag 1.
    Big,
}

impl Endian {
    /// A u16 from 2 bytes.
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    /// A u32 from 4 bytes.
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    /// A u64 from 8 bytes.
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
    /// An unsigned number of 1, 2, 4 or 8 bytes at `at` in `b`; `None`
    /// when out of range or another size.
    #[inline]
    pub fn uint(self, b: &[u8], at: usize, size: usize) -> Option<u64> {
        let s = b.get(at..at.checked_add(size)?)?;
        Some(match size {
            1 => s[0] as u64,
            2 => self.u16(s.try_into().ok()?) as u64,
            4 => self.u32(s.try_into().ok()?) as u64,
            8 => self.u64(s.try_into().ok()?),
            _ => return None,
        })
    }
}

/// A cursor over part of the file held in memory; `base` is the file
/// offset of `data[0]`, for error messages.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    endian: Endian,
}

impl<'a> Bytes<'a> {
    /// A cursor at the start of `data`, which sits at file offset `base`.
    pub fn new(data: &'a [u8], base: u64, endian: Endian) -> Self {
        Bytes {
            data,
            pos: 0,
            base,
            endian,
        }
    }

    /// The file offset of the cursor.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], DatError> {
        if n > self.remaining() as u64 {
            return Err(DatError::bad(
                self.offset(),
                format!(
                    "{what}: {n} bytes, only {} left in this part",
                    self.remaining()
                ),
            ));
        }
        let s = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    /// A u16.
    pub fn u16(&mut self, what: &str) -> Result<u16, DatError> {
        let e = self.endian;
        Ok(e.u16(self.take(2, what)?.try_into().unwrap_or_default()))
    }

    /// A u32.
    pub fn u32(&mut self, what: &str) -> Result<u32, DatError> {
        let e = self.endian;
        Ok(e.u32(self.take(4, what)?.try_into().unwrap_or_default()))
    }

    /// A u64.
    pub fn u64(&mut self, what: &str) -> Result<u64, DatError> {
        let e = self.endian;
        Ok(e.u64(self.take(8, what)?.try_into().unwrap_or_default()))
    }

    /// A NUL-terminated string (without the NUL), lossy UTF-8.
    pub fn cstr(&mut self, what: &str) -> Result<String, DatError> {
        let rest = &self.data[self.pos..];
        let Some(n) = rest.iter().position(|&b| b == 0) else {
            return Err(DatError::bad(
                self.offset(),
                format!("{what}: a NUL-terminated string, none before the end"),
            ));
        };
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }

    /// Expect the exact bytes `lit` (e.g. `header_page\0`).
    pub fn expect(&mut self, lit: &[u8]) -> Result<(), DatError> {
        let at = self.offset();
        let got = self.take(lit.len() as u64, "a section name")?;
        if got != lit {
            return Err(DatError::bad(
                at,
                format!(
                    "expected {:?}, found {:?}",
                    String::from_utf8_lossy(lit),
                    String::from_utf8_lossy(got)
                ),
            ));
        }
        Ok(())
    }
}
