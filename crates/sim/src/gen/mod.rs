//! The one generator that writes any [`Board`] as a tree.
//!
//! Each submodule owns one area (CPUs, memory, the rest of procfs, GPU,
//! block devices) and derives every file from the board data, so numbers
//! that appear in several files (MemTotal, frequencies, uptime) always
//! agree. Nothing here reads a clock or a random source: the same board
//! always gives the same bytes.

mod cgroup;
mod cpu;
mod dt;
mod gpu;
mod irq;
mod mem;
mod procfs;
mod thermal;

use crate::model::Board;
use crate::tree::Tree;
use crate::SimError;

/// Write every node of `board` into `tree`.
pub(crate) fn write_board(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    cpu::write(board, tree)?;
    let mem = mem::write(board, tree)?;
    dt::write(board, tree)?;
    procfs::write(board, &mem, tree)?;
    gpu::write(board, tree)?;
    cgroup::write(board, tree)?;
    irq::write(board, tree)?;
    thermal::write(board, tree)?;
    Ok(())
}

/// All CPU numbers of a board, ascending.
pub(crate) fn all_cpus(board: &Board) -> Vec<u32> {
    board
        .clusters
        .iter()
        .flat_map(|c| c.first_cpu..c.first_cpu + c.cpus)
        .collect()
}

/// Format CPUs as the kernel's `%*pbl`: `0-3,7`.
pub(crate) use lever_kernel::format_cpu_list as cpu_list;

/// Format CPUs as the kernel's `%*pb` over `nr_cpu_ids` bits: hex, one
/// digit per four CPUs, 32-bit groups separated by commas (`0f`, `ff`).
pub(crate) use lever_kernel::format_cpu_mask as cpu_mask;

/// A deterministic pseudo-random number from a few integers (splitmix64),
/// used to make counters look uneven without any real randomness.
pub(crate) fn mix(parts: &[u64]) -> u64 {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for p in parts {
        x = x.wrapping_add(*p).wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
    }
    x
}

/// Split `total` in proportion to `weights`; the parts add up to `total`
/// exactly (the rounding remainder goes to the first part).
pub(crate) fn split(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u64 = weights.iter().sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut parts: Vec<u64> = weights
        .iter()
        .map(|w| (u128::from(total) * u128::from(*w) / u128::from(sum)) as u64)
        .collect();
    let given: u64 = parts.iter().sum();
    if let Some(first) = parts.first_mut() {
        *first += total - given;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list_formats_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(cpu_list(&[7]), "7");
        assert_eq!(cpu_list(&[0, 1, 2, 3, 7]), "0-3,7");
        assert_eq!(cpu_list(&[]), "");
    }

    #[test]
    fn cpu_mask_formats_hex() {
        assert_eq!(cpu_mask(&[0], 8), "01");
        assert_eq!(cpu_mask(&[0, 1, 2, 3, 4, 5, 6, 7], 8), "ff");
        assert_eq!(cpu_mask(&[4, 5], 6), "30");
        assert_eq!(cpu_mask(&[0], 1), "1");
        assert_eq!(cpu_mask(&[33], 40), "02,00000000");
    }

    #[test]
    fn split_adds_up() {
        let parts = split(1001, &[1, 1, 1]);
        assert_eq!(parts.iter().sum::<u64>(), 1001);
        assert_eq!(split(10, &[0, 0]), vec![0, 0]);
    }

    #[test]
    fn mix_is_deterministic() {
        assert_eq!(mix(&[1, 2]), mix(&[1, 2]));
        assert_ne!(mix(&[1, 2]), mix(&[2, 1]));
    }
}
