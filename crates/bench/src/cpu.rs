//! CPU benchmarks of seed 002 (Dhrystone, Whetstone, Linpack, NBench).

use crate::catalog::TestDef;

/// The CPU benchmark tests.
pub fn tests(_quick: bool) -> Vec<TestDef> {
    Vec::new()
}
