//! NBench's floating-point-index kernels: Fourier coefficients and LU
//! decomposition, with NBench's sizes.

use super::{Kernel, Lcg};
use std::f64::consts::PI;
use std::hint::black_box;

/// Fourier: the first 100 coefficient pairs of the Fourier series of
/// f(x) = (x + 1)^x on [0, 2], each integral by the trapezoid rule with
/// 200 intervals (NBench's DoFPUTransIteration).
pub struct Fourier {
    /// a₀ … a₉₉ after the last pass.
    pub a: Vec<f64>,
    /// b₀ … b₉₉ (b₀ = 0) after the last pass.
    pub b: Vec<f64>,
}

/// Coefficient pairs per pass.
const FOURIER_TERMS: usize = 100;

/// (x + 1)^x times cos(ωx) (`select` 1), sin(ωx) (2) or 1 (0).
fn fourier_f(x: f64, omega_n: f64, select: u8) -> f64 {
    let f = (x + 1.0).powf(x);
    match select {
        0 => f,
        1 => f * (omega_n * x).cos(),
        _ => f * (omega_n * x).sin(),
    }
}

/// ∫₀² by the trapezoid rule with `steps` intervals.
fn trapezoid(steps: usize, omega_n: f64, select: u8) -> f64 {
    let h = 2.0 / steps as f64;
    let mut x = 0.0;
    let mut sum = fourier_f(0.0, omega_n, select) / 2.0;
    for _ in 1..steps {
        x += h;
        sum += fourier_f(x, omega_n, select);
    }
    sum += fourier_f(2.0, omega_n, select) / 2.0;
    sum * h
}

impl Fourier {
    /// The kernel.
    pub fn standard() -> Fourier {
        Fourier {
            a: vec![0.0; FOURIER_TERMS],
            b: vec![0.0; FOURIER_TERMS],
        }
    }
}

impl Kernel for Fourier {
    fn prepare(&mut self) {}
    fn pass(&mut self) {
        // The period is 2, so ω = π.
        self.a[0] = trapezoid(200, 0.0, 0) / 2.0;
        for n in 1..FOURIER_TERMS {
            let w = PI * n as f64;
            self.a[n] = trapezoid(200, w, 1);
            self.b[n] = trapezoid(200, w, 2);
        }
        black_box(&self.a);
    }
}

/// LU decomposition: Crout's method with implicit scaling and partial
/// pivoting, then forward and back substitution, on a random 101 × 101
/// system (NBench's LU, after Numerical Recipes' ludcmp/lubksb).
pub struct Lu {
    orig: Vec<f64>,
    a: Vec<f64>,
    rhs: Vec<f64>,
    /// The solution after the last pass (all ones).
    pub x: Vec<f64>,
    index: Vec<usize>,
    scale: Vec<f64>,
}

/// NBench's matrix order.
pub const LU_N: usize = 101;

impl Lu {
    /// A random, diagonally dominant system whose solution is all ones.
    pub fn standard() -> Lu {
        let n = LU_N;
        let mut r = Lcg::new(31);
        let mut a: Vec<f64> = (0..n * n)
            .map(|_| f64::from(r.below(2001)) / 1000.0 - 1.0)
            .collect();
        for i in 0..n {
            a[i * n + i] += n as f64;
        }
        let rhs = (0..n).map(|i| a[i * n..(i + 1) * n].iter().sum()).collect();
        Lu {
            a: a.clone(),
            orig: a,
            rhs,
            x: vec![0.0; n],
            index: vec![0; n],
            scale: vec![0.0; n],
        }
    }

    /// Crout decomposition in place (row-major); false when singular.
    fn decompose(&mut self) -> bool {
        let n = LU_N;
        let a = &mut self.a;
        for i in 0..n {
            let big = a[i * n..(i + 1) * n]
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            if big == 0.0 {
                return false;
            }
            self.scale[i] = 1.0 / big;
        }
        for j in 0..n {
            for i in 0..j {
                let mut sum = a[i * n + j];
                for k in 0..i {
                    sum -= a[i * n + k] * a[k * n + j];
                }
                a[i * n + j] = sum;
            }
            let (mut big, mut imax) = (0.0, j);
            for i in j..n {
                let mut sum = a[i * n + j];
                for k in 0..j {
                    sum -= a[i * n + k] * a[k * n + j];
                }
                a[i * n + j] = sum;
                let merit = self.scale[i] * sum.abs();
                if merit >= big {
                    big = merit;
                    imax = i;
                }
            }
            if imax != j {
                for k in 0..n {
                    a.swap(imax * n + k, j * n + k);
                }
                self.scale[imax] = self.scale[j];
            }
            self.index[j] = imax;
            if a[j * n + j] == 0.0 {
                return false;
            }
            let d = 1.0 / a[j * n + j];
            for i in j + 1..n {
                a[i * n + j] *= d;
            }
        }
        true
    }

    /// Forward and back substitution with the factors.
    fn substitute(&mut self) {
        let n = LU_N;
        let (a, b) = (&self.a, &mut self.x);
        b.copy_from_slice(&self.rhs);
        for i in 0..n {
            let p = self.index[i];
            let mut sum = b[p];
            b[p] = b[i];
            for j in 0..i {
                sum -= a[i * n + j] * b[j];
            }
            b[i] = sum;
        }
        for i in (0..n).rev() {
            let mut sum = b[i];
            for j in i + 1..n {
                sum -= a[i * n + j] * b[j];
            }
            b[i] = sum / a[i * n + i];
        }
    }
}

impl Kernel for Lu {
    fn prepare(&mut self) {
        self.a.copy_from_slice(&self.orig);
    }
    fn pass(&mut self) {
        if self.decompose() {
            self.substitute();
        }
        black_box(&self.x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourier_coefficients_match_a_fine_integration() {
        let mut f = Fourier::standard();
        f.prepare();
        f.pass();
        // a₀ against Simpson's rule with 20000 intervals.
        let n = 20000;
        let h = 2.0 / n as f64;
        let simpson: f64 = (0..=n)
            .map(|i| {
                let w = if i == 0 || i == n {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                w * fourier_f(i as f64 * h, 0.0, 0)
            })
            .sum::<f64>()
            * h
            / 3.0;
        assert!(
            (f.a[0] - simpson / 2.0).abs() < 1e-3,
            "{} vs {}",
            f.a[0],
            simpson / 2.0
        );
        assert!(f.a[0] > 2.8 && f.a[0] < 2.9, "{}", f.a[0]);
        // The coefficients decay.
        assert!(f.a[99].abs() < f.a[1].abs() && f.b[99].abs() < f.b[1].abs());
    }

    #[test]
    fn lu_solves_to_ones() {
        let mut lu = Lu::standard();
        lu.prepare();
        lu.pass();
        let err = lu.x.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10, "{err}");
    }
}
