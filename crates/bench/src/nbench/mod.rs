//! NBench (BYTEmark, BYTE magazine 1995; Linux port by Uwe Mayer) index
//! kernels, ported from the published algorithms: numeric sort, string
//! sort, bitfield, FP emulation, assignment, IDEA, Huffman (integer index)
//! and Fourier, neural net, LU decomposition (floating-point index). Each test's score is iterations
//! per second of one kernel pass over NBench's array sizes, with the data
//! regenerated untimed before each pass as NBench does; the compiler and
//! flags are in every report ([`crate::Build`]), since these scores mean
//! little without them.

pub mod float;
pub mod integer;
pub mod more;

use crate::catalog::{Section, TestDef};
use crate::runner::boxed;
use std::time::{Duration, Instant};

/// NBench's own generator shape: a deterministic linear congruential
/// sequence, so every run sorts, encrypts and compresses the same data.
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    /// The next 31-bit value.
    pub fn next_u31(&mut self) -> u32 {
        // Knuth's MMIX constants; the high bits are the good ones.
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u31() % n.max(1)
    }
}

/// A kernel: `prepare` resets its data (untimed), `pass` is the timed
/// work of one iteration.
pub trait Kernel {
    /// Reset the data for the next pass (not timed).
    fn prepare(&mut self);
    /// One timed pass.
    fn pass(&mut self);
}

/// Time `iters` passes of `k`, each prepared untimed.
pub fn timed_passes(k: &mut dyn Kernel, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        k.prepare();
        let start = Instant::now();
        k.pass();
        total += start.elapsed();
    }
    total
}

fn test<K: Kernel + 'static>(name: &str, make: fn() -> K) -> TestDef {
    TestDef::rate(
        format!("nbench-{name}"),
        Section::Nbench,
        "iter/s",
        1.0,
        1.0,
        move |_| {
            let mut k = make();
            boxed(move |n| Ok(timed_passes(&mut k, n)))
        },
    )
}

/// The NBench tests, integer index first.
pub fn tests() -> Vec<TestDef> {
    vec![
        test("numsort", integer::NumSort::standard),
        test("strsort", integer::StrSort::standard),
        test("bitfield", integer::Bitfield::standard),
        test("fpemu", more::FpEmulation::standard),
        test("assignment", more::Assignment::standard),
        test("idea", integer::Idea::standard),
        test("huffman", integer::Huffman::standard),
        test("fourier", float::Fourier::standard),
        test("neural", more::NeuralNet::standard),
        test("lu", float::Lu::standard),
    ]
}
