//! Where interrupts and unbound work may run: `/proc/irq/N/*`,
//! `/proc/irq/default_smp_affinity`, `/proc/interrupts`, and the unbound
//! workqueue masks under `/sys/devices/virtual/workqueue`.
//!
//! Every mask starts on all CPUs, as after a boot without `irqaffinity=`.
//! The GIC delivers an SPI to one CPU of its mask, the first, so each
//! IRQ's `effective_affinity` is that CPU and its counts stand in that
//! CPU's column of `/proc/interrupts`:
//!
//! ```text
//!            CPU0       CPU1
//!  27:       4120          0     GICv3 297 Level     ufshcd
//! IPI0:      8811       9020       Rescheduling interrupts
//! ```

use super::{all_cpus, cpu_list, cpu_mask, mix};
use crate::model::{Arch, Board};
use crate::tree::Tree;
use crate::SimError;

/// Width of the IRQ number column (the kernel's `prec`, 3 below 1000 IRQs).
const PREC: usize = 3;

/// arm64 (6.6) IPI names, in IPI order.
const IPIS_ARM64: &[&str] = &[
    "Rescheduling interrupts",
    "Function call interrupts",
    "CPU stop interrupts",
    "CPU stop (for crash dump) interrupts",
    "Timer broadcast interrupts",
    "IRQ work interrupts",
    "CPU wake-up interrupts",
];

/// arm32 (6.1) IPI names, in IPI order.
const IPIS_ARM32: &[&str] = &[
    "CPU wakeup interrupts",
    "Timer broadcast interrupts",
    "Rescheduling interrupts",
    "Function call interrupts",
    "Single function call interrupts",
    "CPU stop interrupts",
    "IRQ work interrupts",
    "completion interrupts",
];

pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    let cpus = all_cpus(board);
    let nr = cpus.len() as u32;
    let all_mask = cpu_mask(&cpus, nr);
    let first = cpus.first().copied().unwrap_or(0);
    tree.line("/proc/irq/default_smp_affinity", &all_mask)?;
    for irq in board.irqs {
        let dir = format!("/proc/irq/{}", irq.number);
        tree.line(&format!("{dir}/smp_affinity"), &all_mask)?;
        tree.line(&format!("{dir}/smp_affinity_list"), cpu_list(&cpus))?;
        tree.line(&format!("{dir}/effective_affinity"), cpu_mask(&[first], nr))?;
        tree.line(&format!("{dir}/effective_affinity_list"), first)?;
        tree.line(&format!("{dir}/node"), 0)?;
    }
    tree.text("/proc/interrupts", interrupts(board, &cpus, first))?;

    let wq = "/sys/devices/virtual/workqueue";
    tree.line(&format!("{wq}/cpumask"), &all_mask)?;
    for name in board.workqueues {
        let dir = format!("{wq}/{name}");
        tree.line(&format!("{dir}/cpumask"), &all_mask)?;
        tree.line(&format!("{dir}/max_active"), 256)?;
        tree.line(&format!("{dir}/nice"), 0)?;
        tree.line(&format!("{dir}/per_cpu"), 0)?;
        // Affinity scopes came with 6.5.
        if board.config.version >= (6, 5) {
            tree.line(&format!("{dir}/affinity_scope"), "default")?;
            tree.line(&format!("{dir}/affinity_strict"), 0)?;
        }
    }
    Ok(())
}

/// `/proc/interrupts` as `show_interrupts()` prints it: a header of the
/// CPUs, a row per device IRQ, then the IPIs and `Err:`.
fn interrupts(board: &Board, cpus: &[u32], first: u32) -> String {
    let up = board.uptime_s;
    let mut out = " ".repeat(PREC + 8);
    for cpu in cpus {
        out.push_str(&format!("CPU{cpu:<8}"));
    }
    out.push('\n');
    for irq in board.irqs {
        out.push_str(&format!("{:>PREC$}: ", irq.number));
        let count = mix(&[up, u64::from(irq.number)]) % (up * 20 + 1);
        for cpu in cpus {
            let n = if *cpu == first { count } else { 0 };
            out.push_str(&format!("{n:>10} "));
        }
        let trigger = if irq.level { "Level" } else { "Edge" };
        out.push_str(&format!(
            " {:>8} {:>PREC$} {trigger:<8}  {}\n",
            irq.chip, irq.hwirq, irq.name
        ));
    }
    // arm64 prints `IPI0:` and six spaces before the name, arm32 `IPI0: `
    // and one.
    let (ipis, sep, before_name) = match board.arch {
        Arch::Arm64 { .. } => (IPIS_ARM64, "", "      "),
        _ => (IPIS_ARM32, " ", " "),
    };
    for (i, name) in ipis.iter().enumerate() {
        out.push_str(&format!("{:>w$}{i}:{sep}", "IPI", w = PREC - 1));
        for cpu in cpus {
            // Stopping and waking CPUs happens at boot and shutdown only.
            let rare = ["stop", "wake", "completion"]
                .iter()
                .any(|w| name.contains(w));
            let n = if rare {
                0
            } else {
                mix(&[up, i as u64, u64::from(*cpu)]) % (up * 10 + 1)
            };
            out.push_str(&format!("{n:>10} "));
        }
        out.push_str(&format!("{before_name}{name}\n"));
    }
    out.push_str(&format!("{:>PREC$}: {:>10}\n", "Err", 0));
    out
}
