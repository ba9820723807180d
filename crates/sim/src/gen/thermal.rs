//! Thermal zones and cooling devices: `/sys/class/thermal`.
//!
//! As on a kernel: the devices live in `/sys/devices/virtual/thermal/`
//! and the class directory links to them. Cooling devices are registered
//! first (cpufreq registers one per policy, `cpufreq-cpuN` after the
//! policy's first CPU; the GPU's devfreq one, `devfreq-<device>`), then
//! each zone binds, trip by trip, the cooling devices its cooling maps
//! name — a CPU phandle without a policy of its own (cpu1..3) binds
//! nothing, exactly as `thermal_of` matches devices by node. A cpufreq
//! device's `max_state` is its policy's frequency count minus one, a
//! devfreq device's its OPP count minus one; every state is 0 (no
//! cooling on an idle board).

use crate::model::{Board, Cooler};
use crate::tree::Tree;
use crate::SimError;
use lever_kernel::paths;

const DEVICES: &str = "/sys/devices/virtual/thermal";

/// The cooling device a `cooling-device` phandle names, if the kernel
/// registered one for it: its number.
fn cooler_index(board: &Board, cooler: Cooler) -> Option<usize> {
    let cpufreq = board.clusters.len();
    match cooler {
        Cooler::Cpu(cpu) => board.clusters.iter().position(|c| c.first_cpu == cpu),
        Cooler::Gpu => board.gpu.as_ref().map(|_| cpufreq),
    }
}

pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    if board.thermal_zones.is_empty() {
        return Ok(());
    }
    let mut devices: Vec<(String, usize)> = board
        .clusters
        .iter()
        .map(|c| (format!("cpufreq-cpu{}", c.first_cpu), c.freqs_khz.len()))
        .collect();
    if let Some(gpu) = &board.gpu {
        devices.push((format!("devfreq-{}", gpu.devfreq_name), gpu.freqs_hz.len()));
    }
    for (n, (kind, states)) in devices.iter().enumerate() {
        let dir = format!("{DEVICES}/cooling_device{n}");
        tree.line(&format!("{dir}/type"), kind)?;
        tree.line(&format!("{dir}/cur_state"), 0)?;
        tree.line(&format!("{dir}/max_state"), states.saturating_sub(1))?;
        tree.symlink(
            &format!("{}/cooling_device{n}", paths::THERMAL),
            &format!("../../devices/virtual/thermal/cooling_device{n}"),
        )?;
    }
    for (n, zone) in board.thermal_zones.iter().enumerate() {
        let dir = format!("{DEVICES}/thermal_zone{n}");
        tree.line(&format!("{dir}/type"), zone.name)?;
        tree.line(&format!("{dir}/temp"), zone.temp_mc)?;
        tree.line(&format!("{dir}/mode"), "enabled")?;
        tree.line(&format!("{dir}/policy"), "step_wise")?;
        tree.line(
            &format!("{dir}/available_policies"),
            "step_wise fair_share power_allocator user_space",
        )?;
        for (i, trip) in zone.trips.iter().enumerate() {
            tree.line(&format!("{dir}/trip_point_{i}_type"), trip.kind)?;
            tree.line(&format!("{dir}/trip_point_{i}_temp"), trip.temp_mc)?;
            tree.line(&format!("{dir}/trip_point_{i}_hyst"), trip.hyst_mc)?;
        }
        let mut link = 0;
        for map in zone.maps {
            for cooler in map.devices {
                let Some(dev) = cooler_index(board, *cooler) else {
                    continue;
                };
                tree.symlink(
                    &format!("{dir}/cdev{link}"),
                    &format!("../cooling_device{dev}"),
                )?;
                tree.line(&format!("{dir}/cdev{link}_trip_point"), map.trip)?;
                tree.line(&format!("{dir}/cdev{link}_weight"), 0)?;
                link += 1;
            }
        }
        tree.symlink(
            &format!("{}/thermal_zone{n}", paths::THERMAL),
            &format!("../../devices/virtual/thermal/thermal_zone{n}"),
        )?;
    }
    Ok(())
}
