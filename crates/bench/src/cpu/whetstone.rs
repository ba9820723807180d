//! Whetstone (Curnow and Wichmann, 1976), the modules of the classic C
//! translation with its standard loop counts: one pass (`LOOP` = 1) is
//! 100,000 Whetstone instructions, so MWIPS = 0.1 · passes / second.
//! Modules 1, 5 and 10 have zero iterations in the standard counts and
//! are left out, as there.

use std::hint::black_box;

const T: f64 = 0.499975;
const T1: f64 = 0.50025;
const T2: f64 = 2.0;

/// The loop counts of modules 2, 3, 4, 6, 7, 8, 9, 11 for one pass.
const N2: u64 = 12;
const N3: u64 = 14;
const N4: u64 = 345;
const N6: u64 = 210;
const N7: u64 = 32;
const N8: u64 = 899;
const N9: u64 = 616;
const N11: u64 = 93;

/// What the modules leave behind, so none of them can be optimised away.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checksum {
    /// E1[1..=4] after module 9.
    pub e1: [f64; 4],
    /// J, K, L after module 6.
    pub jkl: (i64, i64, i64),
    /// X, Y after module 7; Z after 8; X after 11.
    pub xyz: [f64; 4],
}

fn pa(e: &mut [f64; 5]) {
    for _ in 0..6 {
        e[1] = (e[1] + e[2] + e[3] - e[4]) * T;
        e[2] = (e[1] + e[2] - e[3] + e[4]) * T;
        e[3] = (e[1] - e[2] + e[3] + e[4]) * T;
        e[4] = (-e[1] + e[2] + e[3] + e[4]) / T2;
    }
}

fn p3(x: f64, y: f64) -> f64 {
    let x1 = T * (x + y);
    let y1 = T * (x1 + y);
    (x1 + y1) / T2
}

fn p0(e: &mut [f64; 5], j: usize, k: usize, l: usize) {
    e[j] = e[k];
    e[k] = e[l];
    e[l] = e[j];
}

/// `passes` passes of the program.
pub fn run(passes: u64) -> Checksum {
    let scale = black_box(passes);
    // Module 2: array elements.
    let mut e1 = [0.0, 1.0, -1.0, -1.0, -1.0];
    for _ in 0..N2 * scale {
        e1[1] = (e1[1] + e1[2] + e1[3] - e1[4]) * T;
        e1[2] = (e1[1] + e1[2] - e1[3] + e1[4]) * T;
        e1[3] = (e1[1] - e1[2] + e1[3] + e1[4]) * T;
        e1[4] = (-e1[1] + e1[2] + e1[3] + e1[4]) * T;
    }
    // Module 3: array as parameter.
    for _ in 0..N3 * scale {
        pa(black_box(&mut e1));
    }
    // Module 4: conditional jumps.
    let mut j: i64 = black_box(1);
    for _ in 0..N4 * scale {
        j = if j == 1 { 2 } else { 3 };
        j = if j > 2 { 0 } else { 1 };
        j = if j < 1 { 1 } else { 0 };
    }
    // Module 6: integer arithmetic.
    black_box(j);
    let (mut j, mut k, mut l) = black_box((1i64, 2i64, 3i64));
    for _ in 0..N6 * scale {
        j = j * (k - j) * (l - k);
        k = l * k - (l - j) * k;
        l = (l - k) * (k + j);
        e1[(l - 1).clamp(0, 4) as usize] = (j + k + l) as f64;
        e1[(k - 1).clamp(0, 4) as usize] = (j * k * l) as f64;
    }
    // Module 7: trigonometric functions.
    let (mut x, mut y) = black_box((0.5f64, 0.5f64));
    for _ in 0..N7 * scale {
        x = T * (T2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        y = T * (T2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
    }
    // Module 8: procedure calls.
    let (xx, yy) = black_box((1.0f64, 1.0f64));
    let mut z = 1.0;
    for _ in 0..N8 * scale {
        z = p3(black_box(xx), yy);
    }
    // Module 9: array references.
    e1[1] = 1.0;
    e1[2] = 2.0;
    e1[3] = 3.0;
    for _ in 0..N9 * scale {
        p0(black_box(&mut e1), 1, 2, 3);
    }
    // Module 11: standard functions.
    let mut x11 = black_box(0.75f64);
    for _ in 0..N11 * scale {
        x11 = (x11.ln() / T1).exp().sqrt();
    }
    Checksum {
        e1: [e1[1], e1[2], e1[3], e1[4]],
        jkl: (j, k, l),
        xyz: [x, y, z, x11],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modules_compute_the_published_values() {
        let c = run(1);
        // Module 6 keeps J, K, L at 1, 2, 3 (the program's design).
        assert_eq!(c.jkl, (1, 2, 3));
        // Module 9: P0 turns 1, 2, 3 into 2, 3, 2, then alternates with
        // 3, 2, 3; 616 calls (even) end on 3, 2, 3.
        assert_eq!(&c.e1[..3], &[3.0, 2.0, 3.0]);
        // Module 8's fixed point: Z = (T(X+Y) + T(T(X+Y)+Y)) / 2.
        let x1 = T * 2.0;
        assert!((c.xyz[2] - (x1 + T * (x1 + 1.0)) / 2.0).abs() < 1e-12);
        // Module 11 converges towards 1 from 0.75.
        assert!(c.xyz[3] > 0.75 && c.xyz[3] < 1.0);
    }
}
