//! The k-way merge of the per-CPU streams: the next event is the one with
//! the smallest (timestamp, CPU, stream index), so equal timestamps go to
//! the lower CPU, as the kernel's own text output orders them.
//!
//! For the usual handful of CPUs the heads are a small array scanned
//! linearly (no heap bookkeeping, and a run of events from one CPU costs
//! one compare per other CPU); past [`LINEAR_MAX`] streams, a binary heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A stream's next event: (timestamp, CPU, stream index).
pub type Key = (u64, u32, usize);

/// Most streams merged by a linear scan.
pub const LINEAR_MAX: usize = 8;

/// The heads of the streams not being read from right now.
pub enum Heads {
    /// Up to [`LINEAR_MAX`] keys, unordered.
    Linear(Vec<Key>),
    /// More.
    Heap(BinaryHeap<Reverse<Key>>),
}

impl Heads {
    /// Empty heads for `streams` streams.
    pub fn new(streams: usize) -> Heads {
        if streams <= LINEAR_MAX {
            Heads::Linear(Vec::with_capacity(streams))
        } else {
            Heads::Heap(BinaryHeap::with_capacity(streams))
        }
    }

    /// Add a stream's head.
    pub fn push(&mut self, k: Key) {
        match self {
            Heads::Linear(v) => v.push(k),
            Heads::Heap(h) => h.push(Reverse(k)),
        }
    }

    /// Take out the smallest head.
    pub fn pop(&mut self) -> Option<Key> {
        match self {
            Heads::Linear(v) => {
                let i = min_at(v)?;
                Some(v.swap_remove(i))
            }
            Heads::Heap(h) => h.pop().map(|Reverse(k)| k),
        }
    }

    /// Put `k` (the stream just read from, advanced) back and take out the
    /// smallest head, which is `k` itself while its stream stays earliest.
    #[inline(always)]
    pub fn push_pop(&mut self, k: Key) -> Key {
        match self {
            Heads::Linear(v) => match min_at(v) {
                Some(i) if v[i] < k => std::mem::replace(&mut v[i], k),
                _ => k,
            },
            Heads::Heap(h) => heap_push_pop(h, k),
        }
    }
}

fn heap_push_pop(h: &mut BinaryHeap<Reverse<Key>>, k: Key) -> Key {
    match h.peek_mut() {
        Some(mut top) if top.0 < k => std::mem::replace(&mut *top, Reverse(k)).0,
        _ => k,
    }
}

#[inline(always)]
fn min_at(v: &[Key]) -> Option<usize> {
    let mut best = 0;
    for (i, k) in v.iter().enumerate().skip(1) {
        if *k < v[best] {
            best = i;
        }
    }
    (!v.is_empty()).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Merge sorted per-stream timestamp lists (CPU = given) with heads
    /// built for `streams` streams of the given kind.
    fn merge(streams: &[(u32, Vec<u64>)], heads: &mut Heads) -> Vec<Key> {
        let mut pos = vec![0; streams.len()];
        for (i, (cpu, ts)) in streams.iter().enumerate() {
            if let Some(&t) = ts.first() {
                heads.push((t, *cpu, i));
            }
        }
        let mut out = Vec::new();
        let mut next = heads.pop();
        while let Some(k) = next {
            out.push(k);
            let i = k.2;
            pos[i] += 1;
            next = match streams[i].1.get(pos[i]) {
                Some(&t) => Some(heads.push_pop((t, streams[i].0, i))),
                None => heads.pop(),
            };
        }
        out
    }

    fn both(streams: &[(u32, Vec<u64>)]) -> Vec<Key> {
        let linear = merge(streams, &mut Heads::Linear(Vec::new()));
        let heap = merge(streams, &mut Heads::Heap(BinaryHeap::new()));
        assert_eq!(linear, heap);
        let mut sorted = linear.clone();
        sorted.sort();
        assert_eq!(linear, sorted, "not in (ts, cpu, stream) order");
        linear
    }

    #[test]
    fn ties_go_to_the_lower_cpu_then_the_lower_stream() {
        // CPU numbers out of stream order, equal timestamps everywhere.
        let s = vec![(3, vec![5, 5]), (1, vec![5, 7]), (1, vec![5]), (0, vec![9])];
        let got = both(&s);
        assert_eq!(
            got,
            [
                (5, 1, 1),
                (5, 1, 2),
                (5, 3, 0),
                (5, 3, 0),
                (7, 1, 1),
                (9, 0, 3)
            ]
        );
    }

    #[test]
    fn more_than_eight_cpus_use_the_heap_and_merge_the_same() {
        assert!(matches!(Heads::new(LINEAR_MAX), Heads::Linear(_)));
        assert!(matches!(Heads::new(LINEAR_MAX + 1), Heads::Heap(_)));
        let s: Vec<(u32, Vec<u64>)> = (0..12)
            .map(|c| (11 - c, (0..20).map(|t| t / 3 + (c as u64 % 2)).collect()))
            .collect();
        assert_eq!(both(&s).len(), 240);
    }

    proptest! {
        #[test]
        fn linear_and_heap_give_the_sorted_order(
            s in prop::collection::vec(
                (0u32..6, prop::collection::vec(0u64..8, 0..12)), 0..12)
        ) {
            let s: Vec<(u32, Vec<u64>)> = s
                .into_iter()
                .map(|(c, mut t)| {
                    t.sort();
                    (c, t)
                })
                .collect();
            let n: usize = s.iter().map(|x| x.1.len()).sum();
            prop_assert_eq!(both(&s).len(), n);
        }
    }
}
