//! The cgroup v2 hierarchy at `/sys/fs/cgroup` (a systemd system: unified
//! mode), as `lever-tasks` reads and writes it: the root with the `cpu`
//! and `cpuset` controllers enabled for its children, `system.slice` and
//! `user.slice` with their `cpu.*` and `cpuset.*` files at kernel
//! defaults, and `/proc/mounts` naming the mount. `cpu.uclamp.*` exist
//! only with CONFIG_UCLAMP_TASK_GROUP, which boards with uclamp have here.
//!
//! No process is simulated (there is no `/proc/<pid>`: tools say so), so
//! every `cgroup.procs` is empty except the root's, which lists PID 1 as a
//! booted system's does.

use super::{all_cpus, cpu_list};
use crate::model::Board;
use crate::tree::Tree;
use crate::SimError;

const MOUNT: &str = "/sys/fs/cgroup";

/// Children of the root, as systemd creates them.
const SLICES: &[&str] = &["system.slice", "user.slice"];

pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    tree.text(
        "/proc/mounts",
        "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n\
         proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n\
         cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot 0 0\n",
    )?;
    let cpus = cpu_list(&all_cpus(board));
    tree.line(
        &format!("{MOUNT}/cgroup.controllers"),
        "cpuset cpu io memory pids",
    )?;
    tree.line(
        &format!("{MOUNT}/cgroup.subtree_control"),
        "cpuset cpu io memory pids",
    )?;
    tree.line(&format!("{MOUNT}/cgroup.procs"), 1)?;
    tree.text(&format!("{MOUNT}/cgroup.threads"), "1\n")?;
    tree.line(&format!("{MOUNT}/cpuset.cpus.effective"), &cpus)?;
    for slice in SLICES {
        let dir = format!("{MOUNT}/{slice}");
        tree.line(
            &format!("{dir}/cgroup.controllers"),
            "cpuset cpu io memory pids",
        )?;
        tree.text(&format!("{dir}/cgroup.subtree_control"), "\n")?;
        tree.text(&format!("{dir}/cgroup.procs"), "")?;
        tree.text(&format!("{dir}/cgroup.threads"), "")?;
        tree.line(&format!("{dir}/cgroup.type"), "domain")?;
        // Kernel defaults (Documentation/admin-guide/cgroup-v2.rst).
        tree.line(&format!("{dir}/cpu.weight"), 100)?;
        tree.line(&format!("{dir}/cpu.max"), "max 100000")?;
        if board.config.uclamp {
            tree.line(&format!("{dir}/cpu.uclamp.min"), "0.00")?;
            tree.line(&format!("{dir}/cpu.uclamp.max"), "max")?;
        }
        // An empty cpuset.cpus means "the parent's CPUs".
        tree.text(&format!("{dir}/cpuset.cpus"), "\n")?;
        tree.line(&format!("{dir}/cpuset.cpus.effective"), &cpus)?;
        tree.line(&format!("{dir}/cpuset.cpus.partition"), "member")?;
    }
    Ok(())
}
