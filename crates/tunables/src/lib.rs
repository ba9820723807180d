//! Tunables: reading and writing the kernel nodes behind engine resources.
//!
//! `lever-engine` decides *what* each resource should hold; this crate knows
//! *how* a resource's node is read and written through a [`KernelFs`]:
//! integers and enumerated strings as text, and hold-fd devices such as
//! `/dev/cpu_dma_latency` (PM QoS) as a native-endian 32-bit integer.
//!
//! ```
//! use lever_engine::*;
//! use lever_kernel::KernelFs;
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "schedutil\n").unwrap();
//! let spec = ResourceSpec {
//!     name: "cpu_governor.silver".into(), opcode: Opcode(0x48000100),
//!     node: "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor".into(),
//!     unit: "governor".into(), low: 0, high: 2, steps: None, aggregation: Aggregation::Max,
//!     permission: Permission::ThirdParty, description: String::new(),
//!     kind: ResourceKind::Enum { values: vec!["powersave".into(), "schedutil".into(), "performance".into()] },
//! };
//! let now = lever_tunables::read_current(&fs, &spec).unwrap();
//! assert_eq!(now.text, "schedutil");
//! assert_eq!(now.level, Some(1));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use lever_engine::{ResourceKind, ResourceSpec};
use lever_kernel::{KernelError, KernelFs};
use serde::Serialize;

/// What a resource's node holds right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reading {
    /// The node's text as the kernel shows it (trailing newline removed); for
    /// a hold-fd device, the decoded integer, or empty when nothing is held.
    pub text: String,
    /// The same as a level the engine understands (an integer, or the index
    /// of an enum value); `None` when the text is not one.
    pub level: Option<i64>,
}

/// Read the current value of a resource's node.
pub fn read_current(fs: &KernelFs, spec: &ResourceSpec) -> Result<Reading, KernelError> {
    let text = match spec.kind {
        ResourceKind::HoldFd => {
            // The PM QoS device reads as the current aggregate target, a
            // native-endian s32 (drivers/base/power/qos.c / kernel/power/qos.c).
            let bytes = fs.read_bytes(&spec.node)?;
            match <[u8; 4]>::try_from(bytes.as_slice()) {
                Ok(b) => i32::from_ne_bytes(b).to_string(),
                Err(_) => String::from_utf8_lossy(&bytes).trim().to_string(),
            }
        }
        _ => fs.read(&spec.node)?,
    };
    let level = spec.parse_level(&text);
    Ok(Reading { text, level })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_engine::{Aggregation, Opcode, Permission};

    fn spec(node: &str, kind: ResourceKind) -> ResourceSpec {
        ResourceSpec {
            name: "r".into(),
            opcode: Opcode(0x40000000),
            node: node.into(),
            unit: "us".into(),
            low: 0,
            high: 2_000_000_000,
            steps: None,
            aggregation: Aggregation::Min,
            permission: Permission::System,
            kind,
            description: String::new(),
        }
    }

    #[test]
    fn reads_hold_fd_as_binary_s32() {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path());
        let node = lever_kernel::paths::CPU_DMA_LATENCY;
        std::fs::create_dir_all(dir.path().join("dev")).unwrap();
        std::fs::write(fs.resolve(node).unwrap(), 2_000_000_000i32.to_ne_bytes()).unwrap();
        let r = read_current(&fs, &spec(node, ResourceKind::HoldFd)).unwrap();
        assert_eq!(r.level, Some(2_000_000_000));
        std::fs::write(fs.resolve(node).unwrap(), b"").unwrap();
        let r = read_current(&fs, &spec(node, ResourceKind::HoldFd)).unwrap();
        assert_eq!((r.text.as_str(), r.level), ("", None));
    }

    #[test]
    fn missing_node_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path());
        let err = read_current(&fs, &spec("/proc/sys/kernel/x", ResourceKind::Plain)).unwrap_err();
        assert!(err.is_missing());
        assert_eq!(err.path(), "/proc/sys/kernel/x");
    }
}
