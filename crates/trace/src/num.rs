//! Decimal fields of ftrace text (`pid=1977`, `cpu_id=0`, `[001]`): the
//! number readers both the line parser ([`crate::line`]) and the event
//! payload parsers ([`crate::event`]) use. They accept digits only (no
//! sign but `-`, no hex, no spaces) and never allocate; `None` on anything
//! else or an overflow.

/// Decimal digits only → u64 (None on empty, non-digits or overflow).
#[inline]
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    if b.len() <= 19 {
        // 19 digits cannot overflow a u64: no overflow test per digit.
        for &c in b {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + (c - b'0') as u64;
        }
        return Some(v);
    }
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Decimal digits only → u32.
#[inline]
pub(crate) fn parse_u32(s: &str) -> Option<u32> {
    parse_u64(s).and_then(|v| u32::try_from(v).ok())
}

/// An optional `-`, then decimal digits → i32.
#[inline]
pub(crate) fn parse_i32(s: &str) -> Option<i32> {
    parse_signed(s).and_then(|v| i32::try_from(v).ok())
}

/// Like [`parse_i32`] for i64, ignoring surrounding spaces (marker counter
/// values: `C|1234|queue|3`).
pub(crate) fn parse_i64(s: &str) -> Option<i64> {
    parse_signed(s.trim())
}

#[inline]
fn parse_signed(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(r) => parse_u64(r).and_then(|v| i64::try_from(v).ok()).map(|v| -v),
        None => parse_u64(s).and_then(|v| i64::try_from(v).ok()),
    }
}

/// The highest CPU number a trace may name, plus one: the kernel's
/// largest `CONFIG_NR_CPUS` (x86 `MAXSMP`). Per-CPU tables in the
/// analyses grow to the highest CPU seen, so a corrupt `[4294967295]`
/// must not reach them.
pub const MAX_CPUS: u32 = 8192;

/// A CPU number (`001`, `cpu_id=3`) below [`MAX_CPUS`].
#[inline]
pub(crate) fn parse_cpu(s: &str) -> Option<u32> {
    parse_u32(s).filter(|&c| c < MAX_CPUS)
}
