//! Linpack: LU factorisation with partial pivoting (`dgefa`) and the
//! solve (`dgesl`) of netlib's LINPACK benchmark, on its pseudo-random
//! matrix (`matgen`: `x = 3125·x mod 65536`, seed 1325). Matrices are
//! column-major as in the Fortran original. Only the factor and solve are
//! timed; the matrix is regenerated before each.

use crate::BenchError;
use std::time::{Duration, Instant};

/// Floating-point operations of one factor + solve of order n.
pub fn flops(n: usize) -> f64 {
    let n = n as f64;
    2.0 / 3.0 * n * n * n + 2.0 * n * n
}

/// A system `A x = b` of order `n` (leading dimension `n`).
pub struct System {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    ipvt: Vec<usize>,
}

impl System {
    /// A system of order `n`, generated.
    pub fn new(n: usize) -> System {
        let mut s = System {
            n,
            a: vec![0.0; n * n],
            b: vec![0.0; n],
            ipvt: vec![0; n],
        };
        s.generate();
        s
    }

    /// `matgen`: the benchmark's matrix, and b = row sums (so x = 1).
    pub fn generate(&mut self) -> f64 {
        let n = self.n;
        let mut init: i64 = 1325;
        let mut norma = 0.0f64;
        for j in 0..n {
            for i in 0..n {
                init = 3125 * init % 65536;
                let v = (init as f64 - 32768.0) / 16384.0;
                self.a[j * n + i] = v;
                norma = norma.max(v);
            }
        }
        self.b.iter_mut().for_each(|b| *b = 0.0);
        for j in 0..n {
            for i in 0..n {
                self.b[i] += self.a[j * n + i];
            }
        }
        norma
    }

    /// `dgefa`: factor in place; `Err(k)` when column k has a zero pivot.
    pub fn factor(&mut self) -> Result<(), usize> {
        let n = self.n;
        let mut singular = None;
        for k in 0..n.saturating_sub(1) {
            let col_k = k * n;
            let l = idamax(&self.a[col_k + k..col_k + n]) + k;
            self.ipvt[k] = l;
            if self.a[col_k + l] == 0.0 {
                singular = Some(k);
                continue;
            }
            self.a.swap(col_k + l, col_k + k);
            let t = -1.0 / self.a[col_k + k];
            self.a[col_k + k + 1..col_k + n]
                .iter_mut()
                .for_each(|x| *x *= t);
            for j in k + 1..n {
                let (left, right) = self.a.split_at_mut(j * n);
                let col_j = &mut right[..n];
                let t = col_j[l];
                if l != k {
                    col_j[l] = col_j[k];
                    col_j[k] = t;
                }
                daxpy(t, &left[col_k + k + 1..col_k + n], &mut col_j[k + 1..]);
            }
        }
        if n > 0 {
            self.ipvt[n - 1] = n - 1;
            if self.a[(n - 1) * n + n - 1] == 0.0 {
                singular = Some(n - 1);
            }
        }
        singular.map_or(Ok(()), Err)
    }

    /// `dgesl` (job 0): solve with the factors; b becomes x.
    pub fn solve(&mut self) {
        let n = self.n;
        for k in 0..n.saturating_sub(1) {
            let l = self.ipvt[k];
            let t = self.b[l];
            if l != k {
                self.b[l] = self.b[k];
                self.b[k] = t;
            }
            let col_k = k * n;
            let (head, tail) = self.b.split_at_mut(k + 1);
            let _ = head;
            daxpy(t, &self.a[col_k + k + 1..col_k + n], tail);
        }
        for k in (0..n).rev() {
            let col_k = k * n;
            self.b[k] /= self.a[col_k + k];
            let t = -self.b[k];
            let (head, _) = self.b.split_at_mut(k);
            daxpy(t, &self.a[col_k..col_k + k], head);
        }
    }

    /// The solution (after [`System::solve`]).
    pub fn x(&self) -> &[f64] {
        &self.b
    }
}

/// Index of the largest absolute value.
fn idamax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, v) in x.iter().enumerate() {
        if v.abs() > x[best].abs() {
            best = i;
        }
    }
    best
}

/// y += t · x.
fn daxpy(t: f64, x: &[f64], y: &mut [f64]) {
    if t == 0.0 {
        return;
    }
    for (y, x) in y.iter_mut().zip(x) {
        *y += t * x;
    }
}

/// `iters` timed factor + solve runs, regenerating the matrix untimed.
pub fn timed_solves(sys: &mut System, iters: u64) -> Result<Duration, BenchError> {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        sys.generate();
        let start = Instant::now();
        sys.factor()
            .map_err(|k| BenchError::Broken(format!("linpack: zero pivot in column {k}")))?;
        sys.solve();
        total += start.elapsed();
        std::hint::black_box(sys.x());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_the_benchmark_system_to_the_expected_residual() {
        for n in [1, 2, 100, 200] {
            let mut s = System::new(n);
            s.factor().unwrap();
            s.solve();
            // b was the row sums, so x = 1; netlib's check is the
            // normalised residual, "should be O(1)".
            let err = s.x().iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
            assert!(err < 1e-9, "n={n}: max |x - 1| = {err}");
        }
        assert_eq!(flops(100), 2.0 / 3.0 * 1e6 + 2e4);
    }
}
