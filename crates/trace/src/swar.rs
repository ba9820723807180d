//! Byte scans eight bytes at a time ("SIMD within a register") for the
//! short, variable-length fields of an event line: a byte loop over a
//! 5-digit pid or a 15-letter event name costs a mispredicted branch at
//! its end on every line, one 64-bit word test mostly none. Safe code:
//! the words are read with `u64::from_le_bytes`, so byte `k` of a word is
//! the `k`-th byte of the text.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes at `b[i..]` as a word, if there are 8.
#[inline(always)]
pub(crate) fn word(b: &[u8], i: usize) -> Option<u64> {
    let bytes: [u8; 8] = b.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// High bit set in every byte of `x` that is zero (exact for the lowest
/// zero byte, which is all the callers use).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// High bit set in every byte of `x` that is not zero (exact).
#[inline(always)]
fn nonzero_bytes(x: u64) -> u64 {
    (((x & !HIGHS).wrapping_add(!HIGHS)) | x) & HIGHS
}

/// Index of the first byte of `w` equal to `c` or `d` (8 when none).
#[inline(always)]
fn first_of2(w: u64, c: u8, d: u8) -> usize {
    let m = zero_bytes(w ^ (ONES * c as u64)) | zero_bytes(w ^ (ONES * d as u64));
    (m.trailing_zeros() / 8) as usize
}

/// Index of the first byte at or after `from` equal to `c` or `d`, or
/// `b.len()`.
#[inline(always)]
pub(crate) fn find2(b: &[u8], from: usize, c: u8, d: u8) -> usize {
    let mut i = from;
    while let Some(w) = word(b, i) {
        let k = first_of2(w, c, d);
        if k < 8 {
            return i + k;
        }
        i += 8;
    }
    while i < b.len() && b[i] != c && b[i] != d {
        i += 1;
    }
    i
}

/// True when some byte of `w` is `c`.
#[inline(always)]
pub(crate) fn has_byte(w: u64, c: u8) -> bool {
    zero_bytes(w ^ (ONES * c as u64)) != 0
}

/// Index of the first byte of `w` that is not `c` (8 when all are).
#[inline(always)]
pub(crate) fn first_not(w: u64, c: u8) -> usize {
    (nonzero_bytes(w ^ (ONES * c as u64)).trailing_zeros() / 8) as usize
}

/// The decimal number of 1 to 7 digits at `b[i..]` and its length, read
/// as one word: `None` when fewer than 8 bytes remain, no digit starts
/// there, or 8 digits follow (the callers then take their byte loop).
///
/// ```text
/// "18561.820489:" at 0 → (18561, 5)
/// ```
#[inline(always)]
pub(crate) fn digits(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let w = word(b, i)?;
    let n = (non_digits(w).trailing_zeros() / 8) as usize;
    if n == 0 || n == 8 {
        return None;
    }
    // Digits to their values, the n digits moved to the top of the word
    // (the bytes after them, and any borrow from them, shift out).
    Some((
        combine(w.wrapping_sub(0x3030_3030_3030_3030) << (8 * (8 - n))),
        n,
    ))
}

/// Per byte of `w`: high bit set when the byte is not an ASCII digit.
#[inline(always)]
fn non_digits(w: u64) -> u64 {
    // A digit's high nibble is 3 and its low nibble below 10 (nibble + 6
    // does not reach 16): per byte, no carries between bytes.
    let high = (w & 0xF0F0_F0F0_F0F0_F0F0) ^ 0x3030_3030_3030_3030;
    let low = ((w & 0x0F0F_0F0F_0F0F_0F0F) + 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0;
    nonzero_bytes(high | low)
}

/// The value of the 8 digit values in `v` (byte 0 the most significant).
#[inline(always)]
fn combine(v: u64) -> u64 {
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    (v.wrapping_mul(10000) + (v >> 32)) & 0xFFFF_FFFF
}

/// The decimal number of 1 to 7 digits that ends at `b[end]` (exclusive)
/// and its length, read as one word: `None` when `end < 8`, no digit
/// ends there, or 8 digits do (the callers then take their byte loop).
///
/// ```text
/// "pid=25908" with end 9 → (25908, 5)
/// ```
#[inline(always)]
pub(crate) fn digits_back(b: &[u8], end: usize) -> Option<(u64, usize)> {
    let w = word(b, end.checked_sub(8)?)?;
    let n = (non_digits(w).leading_zeros() / 8) as usize;
    if n == 0 || n == 8 {
        return None;
    }
    // Only the top n bytes (the digits): masked before the subtraction,
    // so the bytes below cannot borrow from them.
    let top = !0u64 << (8 * (8 - n));
    Some((combine((w & top) - (0x3030_3030_3030_3030 & top)), n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_every_length_and_what_follows() {
        for n in 1..=7usize {
            for follow in [b' ', b'.', b':', b']', b'a', 0u8, 0xff] {
                let num: String = (0..n).map(|k| char::from(b'1' + (k % 9) as u8)).collect();
                let mut s = num.clone().into_bytes();
                s.push(follow);
                s.extend_from_slice(b"9999999");
                assert_eq!(digits(&s, 0), Some((num.parse().unwrap(), n)), "{s:?}");
            }
        }
        assert_eq!(digits(b"0000000 x", 0), Some((0, 7)));
        assert_eq!(digits(b"9999999 x", 0), Some((9_999_999, 7)));
        assert_eq!(digits(b"12345678 ", 0), None, "8 digits: the byte loop");
        assert_eq!(digits(b" 1234567 ", 0), None, "no digit first");
        assert_eq!(digits(b"1234", 0), None, "fewer than 8 bytes");
        assert_eq!(
            digits(b"/:123456789", 0),
            None,
            "'/' and ':' border the digits"
        );
    }

    #[test]
    fn digits_backwards_of_every_length_and_what_precedes() {
        for n in 1..=7usize {
            for before in [b' ', b'=', b'-', b'/', b':', 0u8, 0xff] {
                let num: String = (0..n).map(|k| char::from(b'9' - (k % 9) as u8)).collect();
                let mut s = b"xxxxxxx".to_vec();
                s.push(before);
                s.extend_from_slice(num.as_bytes());
                assert_eq!(
                    digits_back(&s, s.len()),
                    Some((num.parse().unwrap(), n)),
                    "{s:?}"
                );
            }
        }
        assert_eq!(digits_back(b"pid=25908 prio", 9), Some((25908, 5)));
        assert_eq!(digits_back(b"x=0000000", 9), Some((0, 7)));
        assert_eq!(digits_back(b"12345678", 8), None, "8 digits: the byte loop");
        assert_eq!(digits_back(b"1234567 ", 8), None, "no digit last");
        assert_eq!(digits_back(b"=123", 4), None, "fewer than 8 bytes");
    }

    #[test]
    fn finds_the_first_of_two_bytes() {
        let s = b"sched_switch: prev_comm=a b";
        assert_eq!(find2(s, 0, b':', b' '), 12);
        assert_eq!(find2(s, 13, b'=', b'='), 23);
        assert_eq!(find2(b"abc", 0, b':', b' '), 3);
        assert_eq!(find2(b"abcdefghijklmnopq:", 0, b':', b' '), 17);
        assert_eq!(find2(b"abcdefghijklmnopq", 0, b':', b' '), 17);
        let w = word(b"    ab[d", 0).unwrap();
        assert_eq!(first_not(w, b' '), 4);
        assert!(has_byte(w, b'['));
        assert!(!has_byte(w, b']'));
        assert_eq!(first_not(word(b"        ", 0).unwrap(), b' '), 8);
    }
}
