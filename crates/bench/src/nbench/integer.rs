//! NBench's integer-index kernels: numeric sort, string sort, bitfield,
//! IDEA and Huffman, with NBench's array sizes.

use super::{Kernel, Lcg};
use std::hint::black_box;

/// NBench's array size for the sorts.
pub const SORT_SIZE: usize = 8111;

/// Heapsort over `0..n` with caller-supplied compare and swap, the shape
/// of NBench's NumHeapSort / StrHeapSort (build the heap, then move the
/// root to the end and sift).
fn heapsort(
    n: usize,
    less: &mut dyn FnMut(usize, usize) -> bool,
    swap: &mut dyn FnMut(usize, usize),
) {
    let sift = |less: &mut dyn FnMut(usize, usize) -> bool,
                swap: &mut dyn FnMut(usize, usize),
                mut i: usize,
                end: usize| {
        while 2 * i + 1 < end {
            let mut k = 2 * i + 1;
            if k + 1 < end && less(k, k + 1) {
                k += 1;
            }
            if !less(i, k) {
                break;
            }
            swap(i, k);
            i = k;
        }
    };
    for i in (0..n / 2).rev() {
        sift(less, swap, i, n);
    }
    for end in (1..n).rev() {
        swap(0, end);
        sift(less, swap, 0, end);
    }
}

/// Numeric sort: heapsort of 8111 random signed 32-bit integers.
pub struct NumSort {
    orig: Vec<i32>,
    work: Vec<i32>,
}

impl NumSort {
    /// The kernel with NBench's array size.
    pub fn standard() -> NumSort {
        let mut r = Lcg::new(13);
        let orig: Vec<i32> = (0..SORT_SIZE)
            .map(|_| r.next_u31() as i32 - (1 << 30))
            .collect();
        NumSort {
            work: orig.clone(),
            orig,
        }
    }

    /// The array after the last pass.
    pub fn result(&self) -> &[i32] {
        &self.work
    }
}

impl Kernel for NumSort {
    fn prepare(&mut self) {
        self.work.copy_from_slice(&self.orig);
    }
    fn pass(&mut self) {
        let a = std::cell::RefCell::new(&mut self.work);
        heapsort(
            SORT_SIZE,
            &mut |i, j| {
                let a = a.borrow();
                a[i] < a[j]
            },
            &mut |i, j| a.borrow_mut().swap(i, j),
        );
        black_box(&self.work);
    }
}

/// String sort: heapsort of random strings of 4–80 bytes packed one after
/// another into an 8111-byte buffer (length byte, then the bytes). As in
/// NBench, a swap physically exchanges the two strings in the buffer,
/// moving everything between them.
pub struct StrSort {
    orig: Vec<u8>,
    orig_offs: Vec<usize>,
    buf: Vec<u8>,
    offs: Vec<usize>,
    tmp: Vec<u8>,
}

impl StrSort {
    /// The kernel with NBench's buffer size.
    pub fn standard() -> StrSort {
        let mut r = Lcg::new(17);
        let (mut buf, mut offs) = (Vec::new(), Vec::new());
        loop {
            let len = 4 + r.below(77) as usize;
            if buf.len() + len + 1 > SORT_SIZE {
                break;
            }
            offs.push(buf.len());
            buf.push(len as u8);
            buf.extend((0..len).map(|_| 1 + r.below(254) as u8));
        }
        StrSort {
            orig: buf.clone(),
            orig_offs: offs.clone(),
            tmp: Vec::with_capacity(buf.len()),
            buf,
            offs,
        }
    }

    /// String `i` (after the last pass: in sorted order).
    pub fn string(&self, i: usize) -> &[u8] {
        str_at(&self.buf, self.offs[i])
    }

    /// How many strings there are.
    pub fn len(&self) -> usize {
        self.offs.len()
    }

    /// Never: the buffer always holds strings.
    pub fn is_empty(&self) -> bool {
        self.offs.is_empty()
    }
}

fn str_at(buf: &[u8], off: usize) -> &[u8] {
    &buf[off + 1..off + 1 + buf[off] as usize]
}

/// Exchange strings `i < j` in place: [si][middle][sj] → [sj][middle][si];
/// the strings of the middle move by the difference of their lengths.
fn str_swap(buf: &mut [u8], offs: &mut [usize], tmp: &mut Vec<u8>, i: usize, j: usize) {
    let (i, j) = (i.min(j), i.max(j));
    if i == j {
        return;
    }
    let (oi, oj) = (offs[i], offs[j]);
    let (li, lj) = (1 + buf[oi] as usize, 1 + buf[oj] as usize);
    tmp.clear();
    tmp.extend_from_slice(&buf[oj..oj + lj]);
    tmp.extend_from_slice(&buf[oi + li..oj]);
    tmp.extend_from_slice(&buf[oi..oi + li]);
    buf[oi..oj + lj].copy_from_slice(tmp);
    for o in &mut offs[i + 1..j] {
        *o = *o + lj - li;
    }
    offs[j] = oj + lj - li;
}

impl Kernel for StrSort {
    fn prepare(&mut self) {
        self.buf.copy_from_slice(&self.orig);
        self.offs.copy_from_slice(&self.orig_offs);
    }
    fn pass(&mut self) {
        let st = std::cell::RefCell::new((&mut self.buf, &mut self.offs, &mut self.tmp));
        heapsort(
            self.orig_offs.len(),
            &mut |i, j| {
                let s = st.borrow();
                str_at(s.0, s.1[i]) < str_at(s.0, s.1[j])
            },
            &mut |i, j| {
                let mut s = st.borrow_mut();
                let (buf, offs, tmp) = &mut *s;
                str_swap(buf, offs, tmp, i, j)
            },
        );
        black_box(&self.buf);
    }
}

/// Bitfield: runs of bits set, cleared and complemented one bit at a
/// time (word index and mask per bit, as NBench's ToggleBitRun and
/// FlipBitRun) in a 32768-word bitmap; 1000 operations per pass, cycling
/// set / clear / flip, at random offsets with random lengths of 1–1024.
pub struct Bitfield {
    map: Vec<u32>,
    ops: Vec<(usize, usize)>,
}

/// Words of the bitmap.
const BITMAP_WORDS: usize = 32768;

impl Bitfield {
    /// The kernel.
    pub fn standard() -> Bitfield {
        let mut r = Lcg::new(19);
        let bits = (BITMAP_WORDS * 32) as u32;
        let ops = (0..1000)
            .map(|_| {
                let len = 1 + r.below(1024);
                (r.below(bits - len) as usize, len as usize)
            })
            .collect();
        Bitfield {
            map: vec![0; BITMAP_WORDS],
            ops,
        }
    }

    /// Bits set after the last pass.
    pub fn ones(&self) -> u32 {
        self.map.iter().map(|w| w.count_ones()).sum()
    }
}

impl Kernel for Bitfield {
    fn prepare(&mut self) {
        // NBench fills the map with an alternating pattern.
        self.map.iter_mut().for_each(|w| *w = 0x5555_5555);
    }
    fn pass(&mut self) {
        for (n, &(start, len)) in self.ops.iter().enumerate() {
            for bit in start..start + len {
                let (word, mask) = (bit / 32, 1u32 << (bit % 32));
                match n % 3 {
                    0 => self.map[word] |= mask,
                    1 => self.map[word] &= !mask,
                    _ => self.map[word] ^= mask,
                }
            }
        }
        black_box(&self.map);
    }
}

/// IDEA (Lai and Massey, 1991): encrypt a 4000-byte buffer in ECB mode
/// with a random 128-bit key, decrypt it, and check the round trip.
pub struct Idea {
    plain: Vec<u16>,
    crypt: Vec<u16>,
    back: Vec<u16>,
    ek: [u16; 52],
    dk: [u16; 52],
}

/// Bytes NBench encrypts per pass.
const IDEA_BYTES: usize = 4000;

/// Multiplication modulo 2^16 + 1, where 0 stands for 2^16.
fn mul(a: u16, b: u16) -> u16 {
    if a == 0 {
        return 1u16.wrapping_sub(b);
    }
    if b == 0 {
        return 1u16.wrapping_sub(a);
    }
    let p = u32::from(a) * u32::from(b);
    let (lo, hi) = ((p & 0xffff) as u16, (p >> 16) as u16);
    lo.wrapping_sub(hi).wrapping_add(u16::from(lo < hi))
}

/// Multiplicative inverse modulo 2^16 + 1 (0 and 1 are their own).
fn inv(x: u16) -> u16 {
    if x <= 1 {
        return x;
    }
    let (mut a, mut b) = (0x10001i64, i64::from(x));
    let (mut s0, mut s1) = (0i64, 1i64);
    while b != 0 {
        let q = a / b;
        (a, b) = (b, a - q * b);
        (s0, s1) = (s1, s0 - q * s1);
    }
    s0.rem_euclid(0x10001) as u16
}

/// The 52 encryption subkeys: the key's eight words, then the key rotated
/// left by 25 bits, eight words at a time.
pub fn idea_key(key: [u16; 8]) -> [u16; 52] {
    let mut k: u128 = key.iter().fold(0, |acc, &w| acc << 16 | u128::from(w));
    let mut out = [0u16; 52];
    for chunk in out.chunks_mut(8) {
        for (i, w) in chunk.iter_mut().enumerate() {
            *w = (k >> (112 - 16 * i)) as u16;
        }
        k = k.rotate_left(25);
    }
    out
}

/// The decryption subkeys: inverses in reverse round order, with the two
/// middle additive keys of every inner round exchanged.
pub fn idea_decrypt_key(ek: &[u16; 52]) -> [u16; 52] {
    let mut dk = [0u16; 52];
    for r in 0..9 {
        // Round r of decryption uses encryption round 8 − r's keys.
        let e = &ek[6 * (8 - r)..];
        let d = &mut dk[6 * r..];
        let swap = r != 0 && r != 8;
        d[0] = inv(e[0]);
        d[1] = e[if swap { 2 } else { 1 }].wrapping_neg();
        d[2] = e[if swap { 1 } else { 2 }].wrapping_neg();
        d[3] = inv(e[3]);
        if r < 8 {
            d[4] = ek[6 * (7 - r) + 4];
            d[5] = ek[6 * (7 - r) + 5];
        }
    }
    dk
}

/// Encrypt (or, with decryption keys, decrypt) one 64-bit block.
pub fn idea_block(k: &[u16; 52], x: [u16; 4]) -> [u16; 4] {
    let [mut x1, mut x2, mut x3, mut x4] = x;
    for r in k[..48].chunks_exact(6) {
        x1 = mul(x1, r[0]);
        x2 = x2.wrapping_add(r[1]);
        x3 = x3.wrapping_add(r[2]);
        x4 = mul(x4, r[3]);
        let t0 = mul(x1 ^ x3, r[4]);
        let t1 = mul(t0.wrapping_add(x2 ^ x4), r[5]);
        let t0 = t0.wrapping_add(t1);
        x1 ^= t1;
        x4 ^= t0;
        let m = x2 ^ t0;
        x2 = x3 ^ t1;
        x3 = m;
    }
    [
        mul(x1, k[48]),
        x3.wrapping_add(k[49]),
        x2.wrapping_add(k[50]),
        mul(x4, k[51]),
    ]
}

impl Idea {
    /// The kernel with NBench's buffer size and a random key.
    pub fn standard() -> Idea {
        let mut r = Lcg::new(23);
        let key: [u16; 8] = std::array::from_fn(|_| r.next_u31() as u16);
        let ek = idea_key(key);
        let words = IDEA_BYTES / 2;
        Idea {
            plain: (0..words).map(|_| r.next_u31() as u16).collect(),
            crypt: vec![0; words],
            back: vec![0; words],
            dk: idea_decrypt_key(&ek),
            ek,
        }
    }

    /// Did the last pass decrypt to the plaintext?
    pub fn round_trips(&self) -> bool {
        self.back == self.plain && self.crypt != self.plain
    }
}

fn ecb(k: &[u16; 52], from: &[u16], to: &mut [u16]) {
    for (f, t) in from.chunks_exact(4).zip(to.chunks_exact_mut(4)) {
        t.copy_from_slice(&idea_block(k, [f[0], f[1], f[2], f[3]]));
    }
}

impl Kernel for Idea {
    fn prepare(&mut self) {}
    fn pass(&mut self) {
        ecb(&self.ek, &self.plain, &mut self.crypt);
        ecb(&self.dk, &self.crypt, &mut self.back);
        black_box(&self.back);
    }
}

/// Huffman: build the code of a 5000-byte text made of words (NBench's
/// generator strings words together), compress it bit by bit, expand it,
/// and check the round trip. The tree is built NBench's way: repeatedly
/// scan for the two lightest free nodes.
pub struct Huffman {
    text: Vec<u8>,
    packed: Vec<u8>,
    back: Vec<u8>,
}

/// Bytes of text per pass.
const HUFF_BYTES: usize = 5000;

#[derive(Clone, Copy)]
struct Node {
    freq: u32,
    parent: Option<usize>,
    children: Option<(usize, usize)>,
}

impl Huffman {
    /// The kernel.
    pub fn standard() -> Huffman {
        const WORDS: [&str; 12] = [
            "the ",
            "benchmark ",
            "measures ",
            "latency ",
            "of ",
            "a ",
            "kernel ",
            "path ",
            "under ",
            "load, ",
            "and ",
            "memory.\n",
        ];
        let mut r = Lcg::new(29);
        let mut text = Vec::with_capacity(HUFF_BYTES);
        while text.len() < HUFF_BYTES {
            text.extend_from_slice(WORDS[r.below(WORDS.len() as u32) as usize].as_bytes());
        }
        text.truncate(HUFF_BYTES);
        Huffman {
            text,
            packed: Vec::new(),
            back: Vec::new(),
        }
    }

    /// Did the last pass expand to the text, and was it smaller packed?
    pub fn round_trips(&self) -> bool {
        self.back == self.text && self.packed.len() < self.text.len()
    }
}

impl Kernel for Huffman {
    fn prepare(&mut self) {
        self.packed.clear();
        self.back.clear();
    }
    fn pass(&mut self) {
        let mut nodes: Vec<Node> = (0..256)
            .map(|_| Node {
                freq: 0,
                parent: None,
                children: None,
            })
            .collect();
        for &b in &self.text {
            nodes[b as usize].freq += 1;
        }
        // Join the two lightest parentless nodes until one root is left.
        let root = loop {
            let mut light = [None::<usize>; 2];
            for (i, n) in nodes.iter().enumerate() {
                if n.freq == 0 || n.parent.is_some() {
                    continue;
                }
                match light {
                    [None, _] => light[0] = Some(i),
                    [Some(a), _] if n.freq < nodes[a].freq => light = [Some(i), Some(a)],
                    [Some(_), None] => light[1] = Some(i),
                    [Some(_), Some(b)] if n.freq < nodes[b].freq => light[1] = Some(i),
                    _ => {}
                }
            }
            match light {
                [Some(a), Some(b)] => {
                    let p = nodes.len();
                    nodes.push(Node {
                        freq: nodes[a].freq + nodes[b].freq,
                        parent: None,
                        children: Some((a, b)),
                    });
                    nodes[a].parent = Some(p);
                    nodes[b].parent = Some(p);
                }
                [Some(a), None] => break a,
                _ => return,
            }
        };
        // Codes: the path from each leaf up to the root, reversed.
        let codes: Vec<Vec<bool>> = (0..256)
            .map(|leaf| {
                let mut bits = Vec::new();
                let mut n = leaf;
                while let Some(p) = nodes[n].parent {
                    bits.push(nodes[p].children.is_some_and(|(_, right)| right == n));
                    n = p;
                }
                bits.reverse();
                bits
            })
            .collect();
        let mut nbits = 0usize;
        for &b in &self.text {
            for &bit in &codes[b as usize] {
                if nbits % 8 == 0 {
                    self.packed.push(0);
                }
                if bit {
                    *self.packed.last_mut().unwrap_or(&mut 0) |= 1 << (nbits % 8);
                }
                nbits += 1;
            }
        }
        // Expand: walk from the root, one bit at a time.
        let mut n = root;
        for i in 0..nbits {
            let bit = self.packed[i / 8] >> (i % 8) & 1 == 1;
            if let Some((l, r)) = nodes[n].children {
                n = if bit { r } else { l };
            }
            if nodes[n].children.is_none() {
                self.back.push(n as u8);
                n = root;
            }
        }
        black_box(&self.back);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn once(k: &mut dyn Kernel) {
        k.prepare();
        k.pass();
    }

    #[test]
    fn the_sorts_sort() {
        let mut n = NumSort::standard();
        once(&mut n);
        assert!(n.result().windows(2).all(|w| w[0] <= w[1]));
        let mut orig = n.orig.clone();
        orig.sort();
        assert_eq!(n.result(), &orig[..]);
        let mut s = StrSort::standard();
        let mut want: Vec<Vec<u8>> = (0..s.len()).map(|i| s.string(i).to_vec()).collect();
        want.sort();
        once(&mut s);
        let got: Vec<Vec<u8>> = (0..s.len()).map(|i| s.string(i).to_vec()).collect();
        assert!(s.len() > 100);
        assert_eq!(got, want);
        // The next pass starts from the unsorted data again.
        s.prepare();
        assert_ne!(
            (0..s.len())
                .map(|i| s.string(i).to_vec())
                .collect::<Vec<_>>(),
            want
        );
    }

    #[test]
    fn bitfield_operations_change_the_map() {
        let mut b = Bitfield::standard();
        b.prepare();
        assert_eq!(b.ones(), 16 * BITMAP_WORDS as u32);
        b.pass();
        assert_ne!(b.ones(), 16 * BITMAP_WORDS as u32);
    }

    #[test]
    fn idea_matches_the_published_test_vector_and_round_trips() {
        // Lai's test vector: key 1…8, plaintext 0 1 2 3.
        let ek = idea_key([1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(idea_block(&ek, [0, 1, 2, 3]), [4603, 60715, 408, 28133]);
        let dk = idea_decrypt_key(&ek);
        assert_eq!(idea_block(&dk, [4603, 60715, 408, 28133]), [0, 1, 2, 3]);
        // 0 stands for 2^16 = −1 (mod 2^16 + 1), its own inverse.
        for x in [0u16, 1, 2, 3, 65535, 40000] {
            assert_eq!(mul(x, inv(x)), 1, "{x}");
        }
        let mut k = Idea::standard();
        once(&mut k);
        assert!(k.round_trips());
    }

    #[test]
    fn huffman_round_trips_and_compresses() {
        let mut h = Huffman::standard();
        once(&mut h);
        assert!(h.round_trips(), "{} packed bytes", h.packed.len());
        // Twelve words of at most 19 distinct letters: well under 8 bits each.
        assert!(h.packed.len() < HUFF_BYTES * 5 / 8, "{}", h.packed.len());
    }
}
