//! The `device` section: the board, its kernel and its CPUs.
//!
//! Sources, first found wins, all under the root:
//!
//! | field | source |
//! |---|---|
//! | board | the simulated board's marker (`.lever-sim`), `/proc/device-tree/model`, DMI `product_name` |
//! | SoC | `/sys/devices/soc0/machine`, the last `/proc/device-tree/compatible` entry |
//! | host name | `/proc/sys/kernel/hostname` |
//! | kernel | `/proc/sys/kernel/osrelease`, `/proc/sys/kernel/version` (else the `#…` part of `/proc/version`), `/proc/cmdline` |
//! | arch | `uname -m`, only when the root is this machine |
//! | CPUs | `lever-cpu`'s topology (policy = cluster, capacity, cpuinfo max), `/proc/cpuinfo` model |

use crate::model::{Cpu, Device, Metric, Section};
use lever_kernel::KernelFs;
use std::collections::BTreeMap;

/// Read the device; the section lists what could not be read and why.
pub fn collect(fs: &KernelFs) -> (Device, Section) {
    let mut missing: Vec<String> = Vec::new();
    let text = |path: &str| -> Option<String> {
        match fs.read_optional(path) {
            Ok(Some(t)) => {
                let t = t.trim_matches(|c: char| c == '\0' || c.is_whitespace());
                (!t.is_empty()).then(|| t.to_string())
            }
            _ => None,
        }
    };
    let simulated = lever_sim::board_in(fs.root());
    let board = simulated
        .clone()
        .or_else(|| text("/proc/device-tree/model"))
        .or_else(|| text("/sys/class/dmi/id/product_name"));
    let soc = text("/sys/devices/soc0/machine").or_else(|| {
        text("/proc/device-tree/compatible")
            .and_then(|c| c.split('\0').rfind(|s| !s.is_empty()).map(str::to_string))
    });
    let uname = fs.is_system().then(rustix::system::uname);
    let arch = uname
        .as_ref()
        .map(|u| u.machine().to_string_lossy().into_owned());
    let kernel_release = text("/proc/sys/kernel/osrelease");
    let kernel_version = text("/proc/sys/kernel/version").or_else(|| {
        // `Linux version 6.6.52-qli-1.3 (oe-user@oe-host) (gcc …) #1 SMP PREEMPT Tue Jan 14 …`
        text("/proc/version").and_then(|v| v.find(" #").map(|i| v[i + 1..].to_string()))
    });
    let device = Device {
        board,
        soc,
        hostname: text("/proc/sys/kernel/hostname"),
        arch,
        kernel_release,
        kernel_version,
        cmdline: text("/proc/cmdline"),
        cpus: cpus(fs, &mut missing),
    };
    for (field, value, from) in [
        (
            "board",
            &device.board,
            "no device tree model and no DMI product name",
        ),
        (
            "SoC",
            &device.soc,
            "no soc0/machine and no device tree compatible",
        ),
        (
            "host name",
            &device.hostname,
            "no /proc/sys/kernel/hostname",
        ),
        (
            "kernel release",
            &device.kernel_release,
            "no /proc/sys/kernel/osrelease",
        ),
        (
            "kernel version",
            &device.kernel_version,
            "no /proc/sys/kernel/version or /proc/version",
        ),
        ("kernel command line", &device.cmdline, "no /proc/cmdline"),
    ] {
        if value.is_none() {
            missing.push(format!("{field}: {from}"));
        }
    }
    if device.arch.is_none() {
        missing.push(format!(
            "arch: `uname -m` describes this machine, not the tree under --root {}",
            fs.root().display()
        ));
    }
    let mut method = format!(
        "files under {}: .lever-sim, /proc/device-tree/{{model,compatible}}, /sys/class/dmi/id, /sys/devices/soc0/machine, /proc/sys/kernel/{{hostname,osrelease,version}}, /proc/version, /proc/cmdline, /proc/cpuinfo; CPUs from lever-cpu's topology (cpufreq policies, cpu_capacity)",
        fs.root().display()
    );
    if simulated.is_some() {
        method.push_str("; a simulated board (lever sim)");
    }
    let mut section = Section::measured("device", &method);
    section
        .metrics
        .push(Metric::new("device.cpus", "CPUs", device.cpus.len() as f64));
    if !missing.is_empty() {
        section.detail = serde_json::json!({ "not_read": missing });
    }
    (device, section)
}

/// The CPU inventory; what is missing goes to `missing`.
fn cpus(fs: &KernelFs, missing: &mut Vec<String>) -> Vec<Cpu> {
    let topo = match lever_cpu::topology::read(fs) {
        Ok(t) => t,
        Err(e) => {
            missing.push(format!("CPUs: {e}"));
            return Vec::new();
        }
    };
    if let Some(note) = &topo.cpufreq_note {
        missing.push(format!("CPU frequencies: {note}"));
    }
    let models = cpuinfo_models(fs);
    topo.cpus
        .iter()
        .map(|c| Cpu {
            cpu: c.cpu,
            cluster: c.policy,
            model: models.get(&c.cpu).cloned(),
            max_khz: topo
                .clusters
                .iter()
                .find(|k| k.cpus.contains(&c.cpu))
                .and_then(|k| k.freq.as_ref())
                .and_then(|f| f.cpuinfo_max_khz),
            capacity: c.capacity.and_then(|v| u32::try_from(v).ok()),
        })
        .collect()
}

/// CPU number → model, from `/proc/cpuinfo`: `model name` (x86), else the
/// Arm core named by `CPU implementer`/`CPU part`.
fn cpuinfo_models(fs: &KernelFs) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    let Ok(Some(text)) = fs.read_optional("/proc/cpuinfo") else {
        return out;
    };
    for block in text.split("\n\n") {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let Some(cpu) = field("processor").and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let model = field("model name").or_else(|| {
            let part = field("CPU part")?;
            Some(match field("CPU implementer").as_deref() {
                Some("0x41") => {
                    arm_core(&part).map_or_else(|| format!("Arm part {part}"), str::to_string)
                }
                Some(imp) => format!("implementer {imp} part {part}"),
                None => format!("part {part}"),
            })
        });
        if let Some(m) = model {
            out.insert(cpu, m);
        }
    }
    out
}

/// Arm Ltd. (implementer 0x41) core names by `CPU part`, from Arm's
/// technical reference manuals (MIDR_EL1.PartNum).
fn arm_core(part: &str) -> Option<&'static str> {
    Some(match part {
        "0xd03" => "Cortex-A53",
        "0xd04" => "Cortex-A35",
        "0xd05" => "Cortex-A55",
        "0xd07" => "Cortex-A57",
        "0xd08" => "Cortex-A72",
        "0xd09" => "Cortex-A73",
        "0xd0a" => "Cortex-A75",
        "0xd0b" => "Cortex-A76",
        "0xd0d" => "Cortex-A77",
        "0xd41" => "Cortex-A78",
        "0xd44" => "Cortex-X1",
        "0xd46" => "Cortex-A510",
        "0xd47" => "Cortex-A710",
        "0xd48" => "Cortex-X2",
        "0xd4d" => "Cortex-A715",
        "0xd4e" => "Cortex-X3",
        "0xd80" => "Cortex-A520",
        "0xd81" => "Cortex-A720",
        "0xd82" => "Cortex-X4",
        _ => return None,
    })
}
