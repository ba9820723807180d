//! The remaining NBench index kernels: FP emulation and assignment
//! (integer index) and the neural net (floating-point index).

// The kernels keep the published algorithms' index notation (u[p[j]],
// w[o][h]), which iterator chains would obscure.
#![allow(clippy::needless_range_loop)]

use super::{Kernel, Lcg};
use std::hint::black_box;

/// A software floating-point number as NBench's emulator keeps it: sign,
/// binary exponent and a 64-bit mantissa normalised with its top bit set
/// (value = mantissa · 2^(exp − 63)); zero has a zero mantissa.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftFloat {
    neg: bool,
    exp: i32,
    mant: u64,
}

impl SoftFloat {
    /// Zero.
    pub const ZERO: SoftFloat = SoftFloat {
        neg: false,
        exp: 0,
        mant: 0,
    };

    /// From an integer ratio `num / den` (the emulator's inputs are built
    /// from integers, never from hardware floats).
    pub fn ratio(num: i64, den: i64) -> SoftFloat {
        SoftFloat::int(num) / SoftFloat::int(den)
    }

    fn int(v: i64) -> SoftFloat {
        SoftFloat {
            neg: v < 0,
            exp: 63,
            mant: v.unsigned_abs(),
        }
        .normalised()
    }

    /// Shift left one bit at a time until the top bit is set, as the
    /// emulator's normalise loop does.
    fn normalised(mut self) -> SoftFloat {
        if self.mant == 0 {
            return SoftFloat::ZERO;
        }
        while self.mant & (1 << 63) == 0 {
            self.mant <<= 1;
            self.exp -= 1;
        }
        self
    }

    /// Hardware value, to check the emulator.
    pub fn to_f64(self) -> f64 {
        let v = self.mant as f64 * 2f64.powi(self.exp - 63);
        if self.neg {
            -v
        } else {
            v
        }
    }

    /// Sum: align the smaller exponent one bit at a time, then add or
    /// subtract the mantissas (with a guard bit of carry).
    fn sum(self, other: SoftFloat) -> SoftFloat {
        if self.mant == 0 {
            return other;
        }
        if other.mant == 0 {
            return self;
        }
        let (mut a, mut b) = if self.exp >= other.exp {
            (self, other)
        } else {
            (other, self)
        };
        while b.exp < a.exp {
            b.mant >>= 1;
            b.exp += 1;
            if b.mant == 0 {
                return a;
            }
        }
        if a.neg == b.neg {
            let (sum, carry) = a.mant.overflowing_add(b.mant);
            a.mant = sum;
            if carry {
                a.mant = a.mant >> 1 | 1 << 63;
                a.exp += 1;
            }
            a
        } else {
            if b.mant > a.mant {
                std::mem::swap(&mut a, &mut b);
            }
            a.mant -= b.mant;
            a.normalised()
        }
    }

    fn difference(self, other: SoftFloat) -> SoftFloat {
        self.sum(SoftFloat {
            neg: !other.neg,
            ..other
        })
    }

    /// Product: shift-and-add over the 64 multiplier bits.
    fn product(self, other: SoftFloat) -> SoftFloat {
        if self.mant == 0 || other.mant == 0 {
            return SoftFloat::ZERO;
        }
        let mut acc: u128 = 0;
        let mut m = other.mant;
        let mut a = u128::from(self.mant);
        while m != 0 {
            if m & 1 == 1 {
                acc += a;
            }
            a <<= 1;
            m >>= 1;
        }
        // acc = m1·m2 < 2^128, value = acc · 2^(e1 + e2 − 126).
        let top = 127 - acc.leading_zeros() as i32;
        SoftFloat {
            neg: self.neg != other.neg,
            exp: self.exp + other.exp - 126 + top,
            mant: (acc >> (top - 63)) as u64,
        }
    }

    /// Quotient: restoring division, one quotient bit per step.
    fn quotient(self, other: SoftFloat) -> SoftFloat {
        if self.mant == 0 || other.mant == 0 {
            return SoftFloat::ZERO;
        }
        let (mut rem, d) = (u128::from(self.mant), u128::from(other.mant));
        let mut q: u64 = 0;
        let mut exp = self.exp - other.exp + 63;
        for _ in 0..64 {
            q <<= 1;
            if rem >= d {
                rem -= d;
                q |= 1;
            }
            rem <<= 1;
        }
        if q & (1 << 63) == 0 {
            // The dividend's mantissa was smaller: one more bit, one less
            // in the exponent.
            q <<= 1;
            if rem >= d {
                q |= 1;
            }
            exp -= 1;
        }
        SoftFloat {
            neg: self.neg != other.neg,
            exp: exp - 63,
            mant: q,
        }
    }
}

macro_rules! soft_op {
    ($trait:ident, $method:ident, $body:ident, $doc:literal) => {
        #[doc = $doc]
        impl std::ops::$trait for SoftFloat {
            type Output = SoftFloat;
            fn $method(self, other: SoftFloat) -> SoftFloat {
                self.$body(other)
            }
        }
    };
}

soft_op!(Add, add, sum, "Emulated addition.");
soft_op!(Sub, sub, difference, "Emulated subtraction.");
soft_op!(Mul, mul, product, "Emulated multiplication.");
soft_op!(Div, div, quotient, "Emulated division.");

/// FP emulation: 3000 operations per pass on software floats, cycling
/// add, subtract, multiply, divide over random operands (NBench's
/// emfloat loop).
pub struct FpEmulation {
    a: Vec<SoftFloat>,
    b: Vec<SoftFloat>,
    /// Results of the last pass.
    pub c: Vec<SoftFloat>,
}

/// Operations per pass.
const EMF_SIZE: usize = 3000;

impl FpEmulation {
    /// The kernel.
    pub fn standard() -> FpEmulation {
        let mut r = Lcg::new(37);
        let mut num = || {
            SoftFloat::ratio(
                i64::from(r.below(50000)) - 25000,
                i64::from(r.below(99)) + 1,
            )
        };
        let a = (0..EMF_SIZE).map(|_| num()).collect();
        let b = (0..EMF_SIZE).map(|_| num()).collect();
        FpEmulation {
            a,
            b,
            c: vec![SoftFloat::ZERO; EMF_SIZE],
        }
    }

    /// The hardware result of operation `i`, to check the emulator.
    pub fn expected(&self, i: usize) -> f64 {
        let (a, b) = (self.a[i].to_f64(), self.b[i].to_f64());
        match i % 4 {
            0 => a + b,
            1 => a - b,
            2 => a * b,
            _ => a / b,
        }
    }
}

impl Kernel for FpEmulation {
    fn prepare(&mut self) {}
    fn pass(&mut self) {
        for i in 0..EMF_SIZE {
            let (a, b) = (self.a[i], self.b[i]);
            self.c[i] = match i % 4 {
                0 => a + b,
                1 => a - b,
                2 => a * b,
                _ => a / b,
            };
        }
        black_box(&self.c);
    }
}

/// Assignment: the least-cost assignment of a 101 × 101 random cost
/// matrix by the Hungarian method (Kuhn 1955, Munkres 1957; here in its
/// O(n³) shortest-augmenting-path form with row and column potentials).
pub struct Assignment {
    cost: Vec<i64>,
    n: usize,
    /// Column assigned to each row after the last pass.
    pub row_to_col: Vec<usize>,
}

impl Assignment {
    /// NBench's size, 101 × 101.
    pub fn standard() -> Assignment {
        Assignment::of_size(101, 41)
    }

    /// An `n × n` matrix of random costs below 5,000,000.
    pub fn of_size(n: usize, seed: u64) -> Assignment {
        let mut r = Lcg::new(seed);
        Assignment {
            cost: (0..n * n).map(|_| i64::from(r.below(5_000_000))).collect(),
            n,
            row_to_col: vec![0; n],
        }
    }

    /// Total cost of the last assignment.
    pub fn total(&self) -> i64 {
        (0..self.n)
            .map(|i| self.cost[i * self.n + self.row_to_col[i]])
            .sum()
    }

    fn solve(&mut self) {
        let n = self.n;
        let inf = i64::MAX / 4;
        // 1-based as the method is usually stated; column 0 is virtual.
        let (mut u, mut v) = (vec![0i64; n + 1], vec![0i64; n + 1]);
        let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
        for i in 1..=n {
            p[0] = i;
            let mut j0 = 0;
            let mut minv = vec![inf; n + 1];
            let mut used = vec![false; n + 1];
            loop {
                used[j0] = true;
                let i0 = p[j0];
                let (mut delta, mut j1) = (inf, 0);
                for j in 1..=n {
                    if !used[j] {
                        let cur = self.cost[(i0 - 1) * n + j - 1] - u[i0] - v[j];
                        if cur < minv[j] {
                            minv[j] = cur;
                            way[j] = j0;
                        }
                        if minv[j] < delta {
                            delta = minv[j];
                            j1 = j;
                        }
                    }
                }
                for j in 0..=n {
                    if used[j] {
                        u[p[j]] += delta;
                        v[j] -= delta;
                    } else {
                        minv[j] -= delta;
                    }
                }
                j0 = j1;
                if p[j0] == 0 {
                    break;
                }
            }
            loop {
                let j1 = way[j0];
                p[j0] = p[j1];
                j0 = j1;
                if j0 == 0 {
                    break;
                }
            }
        }
        for j in 1..=n {
            self.row_to_col[p[j] - 1] = j - 1;
        }
    }
}

impl Kernel for Assignment {
    fn prepare(&mut self) {}
    fn pass(&mut self) {
        self.solve();
        black_box(&self.row_to_col);
    }
}

/// Neural net: back-propagation training of a 35-8-8 sigmoid network
/// (5 × 7 input bitmaps, 8 output bits: NBench's sizes) on 26 patterns,
/// 20 epochs per pass from the same starting weights, learning rate 0.3
/// and momentum 0.5. NBench reads its 26 letter bitmaps from NNET.DAT;
/// here they are fixed pseudo-random bitmaps with each pattern's index as
/// its target code, which is the same arithmetic per epoch.
pub struct NeuralNet {
    inputs: Vec<[f64; 35]>,
    targets: Vec<[f64; 8]>,
    w_mid0: Vec<[f64; 35]>,
    w_out0: Vec<[f64; 8]>,
    w_mid: Vec<[f64; 35]>,
    w_out: Vec<[f64; 8]>,
    dw_mid: Vec<[f64; 35]>,
    dw_out: Vec<[f64; 8]>,
    /// Sum of squared errors over the patterns after the last pass.
    pub error: f64,
}

/// Epochs per pass.
const EPOCHS: usize = 20;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl NeuralNet {
    /// The kernel.
    pub fn standard() -> NeuralNet {
        let mut r = Lcg::new(43);
        let inputs = (0..26)
            .map(|_| std::array::from_fn(|_| f64::from(r.below(2))))
            .collect();
        let targets = (0..26u32)
            .map(|p| std::array::from_fn(|b| f64::from((p + 65) >> b & 1)))
            .collect();
        let mut w = || f64::from(r.below(1000)) / 1000.0 - 0.5;
        let w_mid0: Vec<[f64; 35]> = (0..8).map(|_| std::array::from_fn(|_| w())).collect();
        let w_out0: Vec<[f64; 8]> = (0..8).map(|_| std::array::from_fn(|_| w())).collect();
        NeuralNet {
            inputs,
            targets,
            w_mid: w_mid0.clone(),
            w_out: w_out0.clone(),
            dw_mid: vec![[0.0; 35]; 8],
            dw_out: vec![[0.0; 8]; 8],
            w_mid0,
            w_out0,
            error: 0.0,
        }
    }

    fn epoch(&mut self) -> f64 {
        let (rate, momentum) = (0.3, 0.5);
        let mut err = 0.0;
        for (x, t) in self.inputs.iter().zip(&self.targets) {
            let mid: [f64; 8] = std::array::from_fn(|h| {
                sigmoid(self.w_mid[h].iter().zip(x).map(|(w, x)| w * x).sum())
            });
            let out: [f64; 8] = std::array::from_fn(|o| {
                sigmoid(self.w_out[o].iter().zip(&mid).map(|(w, m)| w * m).sum())
            });
            let d_out: [f64; 8] =
                std::array::from_fn(|o| (t[o] - out[o]) * out[o] * (1.0 - out[o]));
            let d_mid: [f64; 8] = std::array::from_fn(|h| {
                let back: f64 = (0..8).map(|o| d_out[o] * self.w_out[o][h]).sum();
                back * mid[h] * (1.0 - mid[h])
            });
            for o in 0..8 {
                err += (t[o] - out[o]).powi(2);
                for h in 0..8 {
                    let dw = rate * d_out[o] * mid[h] + momentum * self.dw_out[o][h];
                    self.w_out[o][h] += dw;
                    self.dw_out[o][h] = dw;
                }
            }
            for h in 0..8 {
                for i in 0..35 {
                    let dw = rate * d_mid[h] * x[i] + momentum * self.dw_mid[h][i];
                    self.w_mid[h][i] += dw;
                    self.dw_mid[h][i] = dw;
                }
            }
        }
        err
    }
}

impl Kernel for NeuralNet {
    fn prepare(&mut self) {
        self.w_mid.clone_from(&self.w_mid0);
        self.w_out.clone_from(&self.w_out0);
        self.dw_mid.iter_mut().for_each(|r| *r = [0.0; 35]);
        self.dw_out.iter_mut().for_each(|r| *r = [0.0; 8]);
    }
    fn pass(&mut self) {
        for _ in 0..EPOCHS {
            self.error = self.epoch();
        }
        black_box(self.error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emulator_agrees_with_hardware_floats() {
        let mut k = FpEmulation::standard();
        k.pass();
        for i in 0..EMF_SIZE {
            let (got, want) = (k.c[i].to_f64(), k.expected(i));
            let tol = want.abs() * 1e-12 + 1e-9;
            assert!((got - want).abs() <= tol, "op {i}: {got} vs {want}");
        }
        assert_eq!(SoftFloat::ratio(3, 4).to_f64(), 0.75);
        assert_eq!(
            (SoftFloat::ratio(-7, 2) * SoftFloat::ratio(2, 1)).to_f64(),
            -7.0
        );
    }

    #[test]
    fn assignment_finds_the_least_cost() {
        // Against every permutation of a 6 × 6 matrix.
        let mut a = Assignment::of_size(6, 5);
        a.pass();
        let mut perm: Vec<usize> = (0..6).collect();
        let mut best = i64::MAX;
        permute(&mut perm, 0, &mut |p| {
            best = best.min((0..6).map(|i| a.cost[i * 6 + p[i]]).sum());
        });
        assert_eq!(a.total(), best);
        let mut cols = a.row_to_col.clone();
        cols.sort();
        assert_eq!(cols, [0, 1, 2, 3, 4, 5]);
    }

    fn permute(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
        if k == v.len() {
            return f(v);
        }
        for i in k..v.len() {
            v.swap(k, i);
            permute(v, k + 1, f);
            v.swap(k, i);
        }
    }

    #[test]
    fn the_network_learns_and_every_pass_starts_afresh() {
        let mut n = NeuralNet::standard();
        n.prepare();
        let first = n.epoch();
        n.prepare();
        n.pass();
        assert!(n.error < first, "{} !< {first}", n.error);
        let after = n.error;
        n.prepare();
        n.pass();
        assert_eq!(n.error, after);
    }
}
