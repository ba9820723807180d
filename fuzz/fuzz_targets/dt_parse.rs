//! Any bytes given to the DTB parser give a tree or a typed error, never a
//! panic or a hang; a tree that parses is analysed (DVFS maps, carveouts)
//! without a panic either.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(tree) = lever_dt::fdt::parse(data) {
        let _ = lever_dt::dvfs(&tree, lever_dt::Widths::SEED);
        let _ = lever_dt::carveouts(&tree);
    }
});
