//! A simulated QCS6490 and its bound target. The simulator writes the
//! IRQ affinities (`/proc/irq/{9,27,45,56,120,200}`, all on CPUs 0-7) and
//! the workqueue masks (global, `blkcg_punt_bio`, `writeback`: `ff`).

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

/// qcs6490 from lever-sim, bound to the built-in qcs6490 target.
pub fn qcs6490() -> Board {
    let dir = tempfile::tempdir().unwrap();
    let made = lever_sim::create("qcs6490", &dir.path().join("board")).unwrap();
    let fs = KernelFs::new(&made.root);
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
