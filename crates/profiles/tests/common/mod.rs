//! A simulated QCS6490 with the nodes the simulator does not write yet:
//! `/proc/irq/N/smp_affinity_list` and the workqueue cpumasks.

#![allow(dead_code)]

use lever_kernel::KernelFs;
use lever_targets::Target;

pub struct Board {
    _dir: tempfile::TempDir,
    pub fs: KernelFs,
    pub target: Target,
}

impl Board {
    pub fn root(&self) -> &std::path::Path {
        self.fs.root()
    }
}

/// qcs6490 from lever-sim, plus IRQs 0, 9, 27 and 200 (all on CPUs 0-7,
/// as the kernel shows them: `0-7\n`) and the workqueue masks (`ff\n`).
pub fn qcs6490() -> Board {
    let dir = tempfile::tempdir().unwrap();
    let made = lever_sim::create("qcs6490", &dir.path().join("board")).unwrap();
    let fs = KernelFs::new(&made.root);
    for irq in [0, 9, 27, 200] {
        fs.create_node(&format!("/proc/irq/{irq}/smp_affinity_list"), "0-7\n")
            .unwrap();
        fs.create_node(&format!("/proc/irq/{irq}/smp_affinity"), "ff\n")
            .unwrap();
    }
    fs.create_node("/sys/devices/virtual/workqueue/cpumask", "ff\n")
        .unwrap();
    fs.create_node("/sys/devices/virtual/workqueue/writeback/cpumask", "ff\n")
        .unwrap();
    let target = lever_targets::load_builtin("qcs6490")
        .unwrap()
        .bind(&fs)
        .unwrap();
    Board {
        _dir: dir,
        fs,
        target,
    }
}
