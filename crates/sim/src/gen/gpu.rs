//! Adreno GPU behind KGSL: `/sys/class/kgsl/kgsl-3d0/` and its devfreq
//! directory, `/sys/class/kgsl/kgsl/page_alloc`, and the
//! `/sys/class/devfreq/<name>` link.
//!
//! KGSL lists frequencies from the fastest power level (0) down, each
//! followed by a space (`812000000 700000000 ... 315000000 `), and prints
//! `gpu_busy_percentage` as `<n> %`.

use lever_kernel::paths;

use crate::model::Board;
use crate::tree::Tree;
use crate::SimError;

pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    let Some(gpu) = &board.gpu else {
        return Ok(());
    };
    let dir = format!("{}/kgsl-3d0", paths::KGSL);
    let levels = gpu.freqs_hz.len();
    let cur = gpu.freqs_hz.get(gpu.cur_pwrlevel).copied().unwrap_or(0);
    let max = gpu.freqs_hz.first().copied().unwrap_or(0);
    let min = gpu.freqs_hz.last().copied().unwrap_or(0);
    let list: String = gpu.freqs_hz.iter().map(|f| format!("{f} ")).collect();
    tree.line(&format!("{dir}/gpuclk"), cur)?;
    tree.line(&format!("{dir}/max_gpuclk"), max)?;
    tree.line(&format!("{dir}/gpu_available_frequencies"), &list)?;
    tree.line(&format!("{dir}/max_pwrlevel"), 0)?;
    tree.line(&format!("{dir}/min_pwrlevel"), levels.saturating_sub(1))?;
    tree.line(&format!("{dir}/num_pwrlevels"), levels)?;
    tree.line(&format!("{dir}/default_pwrlevel"), gpu.default_pwrlevel)?;
    tree.line(&format!("{dir}/thermal_pwrlevel"), 0)?;
    tree.line(
        &format!("{dir}/gpu_busy_percentage"),
        format!("{} %", gpu.busy_percent),
    )?;
    tree.line(&format!("{dir}/gpubusy"), format!("{:7} {:7}", 0, 0))?;
    tree.line(&format!("{dir}/gpu_model"), gpu.model)?;
    // KGSL idle timer, ms (plausible default).
    tree.line(&format!("{dir}/idle_timer"), 80)?;

    let df = format!("{dir}/devfreq");
    tree.line(&format!("{df}/min_freq"), min)?;
    tree.line(&format!("{df}/max_freq"), max)?;
    tree.line(&format!("{df}/cur_freq"), cur)?;
    tree.line(&format!("{df}/target_freq"), cur)?;
    tree.line(&format!("{df}/available_frequencies"), &list)?;
    tree.line(&format!("{df}/governor"), gpu.devfreq_governor)?;
    let govs: String = gpu
        .devfreq_governors
        .iter()
        .map(|g| format!("{g} "))
        .collect();
    tree.line(&format!("{df}/available_governors"), govs)?;
    tree.line(&format!("{df}/polling_interval"), 10)?;
    tree.symlink(
        &format!("{}/{}", paths::DEVFREQ, gpu.devfreq_name),
        "../kgsl/kgsl-3d0/devfreq",
    )?;

    tree.line(
        &format!("{}/kgsl/page_alloc", paths::KGSL),
        gpu.page_alloc_bytes,
    )?;
    Ok(())
}
