//! No panic on hostile blobs: mutated real DTBs (byte flips, overwritten
//! words, truncations) are parsed and, when they parse, analysed (DVFS
//! maps, carveouts) for a bounded time, from a fixed seed so a failure
//! reproduces. `fuzz/fuzz_targets/dt_parse.rs` is the cargo-fuzz target
//! of the same property.

mod common;

use std::time::{Duration, Instant};

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn exercise(blob: &[u8]) {
    if let Ok(tree) = lever_dt::fdt::parse(blob) {
        let _ = lever_dt::dvfs(&tree, lever_dt::Widths::SEED);
        let _ = lever_dt::carveouts(&tree);
    }
}

#[test]
fn mutated_dtbs_never_panic() {
    let dtbs = match common::shared_dtbs() {
        Ok(v) => v,
        Err(why) => return common::skip("fuzz", &why),
    };
    let blobs: Vec<Vec<u8>> = dtbs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let mut rng = XorShift(0x5eed_0000_0030);
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        let mut blob = blobs[rng.below(blobs.len())].clone();
        match rng.below(4) {
            0 => {
                for _ in 0..=rng.below(8) {
                    let i = rng.below(blob.len());
                    blob[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                // Overwrite an aligned word with a value structure
                // fields react to (tokens, lengths, offsets, cells).
                let i = rng.below(blob.len() / 4) * 4;
                let v: u32 = [
                    0,
                    1,
                    2,
                    3,
                    4,
                    9,
                    0xffff_ffff,
                    0x7fff_ffff,
                    0x1000,
                    rng.next() as u32,
                ][rng.below(10)];
                blob[i..i + 4].copy_from_slice(&v.to_be_bytes());
            }
            2 => blob.truncate(rng.below(blob.len())),
            _ => {
                // A header field.
                let i = rng.below(10) * 4;
                let v = rng.next() as u32 % (blob.len() as u32 * 2);
                blob[i..i + 4].copy_from_slice(&v.to_be_bytes());
            }
        }
        exercise(&blob);
        runs += 1;
    }
    println!("{runs} mutated blobs parsed and analysed without a panic");
    assert!(runs > 100, "only {runs} runs in the time bound");
}

/// Found by `fuzz/run.sh 300 dt_parse` (a mutated seed-6.5.dtb): no-map
/// regions whose sizes add past 2^64 overflowed the totals; they saturate.
#[test]
fn carveout_totals_past_u64_saturate() {
    if !common::have_dtc() {
        common::skip("carveout_totals_past_u64_saturate", "no dtc");
        return;
    }
    let src = r#"/dts-v1/;
/ { #address-cells = <2>; #size-cells = <2>;
  reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;
    a@0 { reg = <0x0 0x0 0xfbffffff 0xffffffff>; no-map; };
    b@1000 { reg = <0x0 0x1000 0x10000000 0x0>; no-map; };
  }; };"#;
    let tree = lever_dt::fdt::parse(&common::dtc_compile(src)).unwrap();
    let report = lever_dt::carveouts(&tree).unwrap();
    assert_eq!(report.totals.no_map_bytes, u64::MAX);
    assert!(!report.overlaps.is_empty());
}
