//! `sched_getattr(2)` / `sched_setattr(2)`, which neither libc nor rustix
//! wraps: the only `unsafe` of this crate, one thin function per call.
//!
//! The kernel's `struct sched_attr` (include/uapi/linux/sched/types.h),
//! `SCHED_ATTR_SIZE_VER1` = 56 bytes, with the utilization clamps that
//! Linux 5.3 added at the end.

#![allow(unsafe_code)]

use std::io;

/// `SCHED_FLAG_RESET_ON_FORK`.
pub(crate) const FLAG_RESET_ON_FORK: u64 = 0x01;
/// `SCHED_FLAG_KEEP_POLICY`: leave policy alone (uclamp-only change).
pub(crate) const FLAG_KEEP_POLICY: u64 = 0x08;
/// `SCHED_FLAG_KEEP_PARAMS`: leave priority/nice alone.
pub(crate) const FLAG_KEEP_PARAMS: u64 = 0x10;
/// `SCHED_FLAG_UTIL_CLAMP_MIN`.
pub(crate) const FLAG_UTIL_CLAMP_MIN: u64 = 0x20;
/// `SCHED_FLAG_UTIL_CLAMP_MAX`.
pub(crate) const FLAG_UTIL_CLAMP_MAX: u64 = 0x40;

/// `struct sched_attr`, VER1 layout.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SchedAttr {
    pub size: u32,
    pub sched_policy: u32,
    pub sched_flags: u64,
    pub sched_nice: i32,
    pub sched_priority: u32,
    pub sched_runtime: u64,
    pub sched_deadline: u64,
    pub sched_period: u64,
    pub sched_util_min: u32,
    pub sched_util_max: u32,
}

const SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;

/// `sched_getattr(tid, &attr, sizeof attr, 0)`.
pub(crate) fn sched_getattr(tid: i32) -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is a valid, writable `struct sched_attr` of exactly
    // `SIZE` bytes that outlives the call; the kernel writes at most `SIZE`
    // bytes into it and reads nothing else of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid as libc::c_long,
            &mut attr as *mut SchedAttr,
            SIZE as libc::c_long,
            0 as libc::c_long,
        )
    };
    if rc == 0 {
        Ok(attr)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_setattr(tid, &attr, 0)`; `attr.size` is set here.
pub(crate) fn sched_setattr(tid: i32, mut attr: SchedAttr) -> io::Result<()> {
    attr.size = SIZE;
    // SAFETY: `attr` is an initialised `struct sched_attr` whose `size`
    // field says how many bytes the kernel may read; it lives across the
    // call and the kernel only reads it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            tid as libc::c_long,
            &attr as *const SchedAttr,
            0 as libc::c_long,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn layout_is_ver1() {
        assert_eq!(super::SIZE, 56);
    }

    #[test]
    fn own_thread_reads() {
        let attr = super::sched_getattr(0).unwrap();
        assert_eq!(attr.size, 56);
    }
}
