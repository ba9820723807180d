//! CPU benchmarks of seed 002, as ports of the published algorithms:
//! Dhrystone 2.1 (DMIPS = Dhrystones per second / 1757, the VAX 11/780's
//! score), Whetstone (the Curnow–Wichmann modules with the standard loop
//! counts, MWIPS) and Linpack (the netlib `dgefa`/`dgesl` solve of a
//! random dense system, MFLOPS = (2/3·n³ + 2·n²) / time). The compiler
//! and flags are in every report ([`crate::Build`]): these scores mean
//! little without them.

pub mod dhrystone;
pub mod linpack;
pub mod whetstone;

use crate::catalog::{Section, TestDef};
use crate::runner::boxed;
use std::time::Instant;

/// The CPU benchmark tests.
pub fn tests(quick: bool) -> Vec<TestDef> {
    let mut v = vec![
        TestDef::rate("dhrystone", Section::Cpu, "DMIPS", 1.0, 1757.0, |_| {
            boxed(|n| {
                let start = Instant::now();
                std::hint::black_box(dhrystone::run(n));
                Ok(start.elapsed())
            })
        }),
        // One iteration is one pass of the standard module counts: 100,000
        // Whetstone instructions.
        TestDef::rate("whetstone", Section::Cpu, "MWIPS", 0.1, 1.0, |_| {
            boxed(|n| {
                let start = Instant::now();
                std::hint::black_box(whetstone::run(n));
                Ok(start.elapsed())
            })
        }),
    ];
    let sizes: &[usize] = if quick {
        &[100, 500]
    } else {
        &[100, 500, 1000]
    };
    for &n in sizes {
        v.push(TestDef::rate(
            format!("linpack-n{n}"),
            Section::Cpu,
            "MFLOPS",
            linpack::flops(n),
            1e6,
            move |_| {
                let mut sys = linpack::System::new(n);
                boxed(move |iters| linpack::timed_solves(&mut sys, iters))
            },
        ));
    }
    v
}
