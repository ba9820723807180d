//! GPU and other devfreq devices.
//!
//! Qualcomm's Adreno driver (KGSL) exports `/sys/class/kgsl/kgsl-3d0/`
//! (seed 000 §5.2): `gpu_model` (`Adreno643v1`), `gpuclk` and `max_gpuclk`
//! in Hz, `gpu_available_frequencies` from the fastest power level down
//! (`812000000 700000000 … `), `gpu_busy_percentage` as `<n> %`,
//! `min_pwrlevel`/`max_pwrlevel`/`num_pwrlevels`.
//!
//! Every devfreq device (GPU, DDR bus, …) has `/sys/class/devfreq/<name>/`
//! with `cur_freq`, `min_freq`, `max_freq` (Hz), `governor` and
//! `available_frequencies`.

use lever_kernel::{paths, KernelFs};
use serde::Serialize;

use crate::{opt_text, opt_u64, CpuError, ParseError};

/// The KGSL (Adreno) GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kgsl {
    /// `gpu_model`.
    pub model: Option<String>,
    /// `gpuclk`, Hz.
    pub cur_hz: Option<u64>,
    /// `max_gpuclk`, Hz.
    pub max_hz: Option<u64>,
    /// `gpu_available_frequencies`, Hz, fastest first.
    pub available_hz: Vec<u64>,
    /// `gpu_busy_percentage`.
    pub busy_percent: Option<u64>,
    /// `max_pwrlevel` (0 = fastest allowed).
    pub max_pwrlevel: Option<u64>,
    /// `min_pwrlevel` (slowest allowed).
    pub min_pwrlevel: Option<u64>,
    /// `num_pwrlevels`.
    pub num_pwrlevels: Option<u64>,
}

/// One devfreq device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Devfreq {
    /// Directory name under `/sys/class/devfreq`.
    pub name: String,
    /// `cur_freq`, Hz.
    pub cur_hz: Option<u64>,
    /// `min_freq`, Hz.
    pub min_hz: Option<u64>,
    /// `max_freq`, Hz.
    pub max_hz: Option<u64>,
    /// `governor`.
    pub governor: Option<String>,
    /// `available_frequencies`, Hz, as listed.
    pub available_hz: Vec<u64>,
}

/// GPU-side inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// The KGSL GPU, when present.
    pub kgsl: Option<Kgsl>,
    /// All devfreq devices.
    pub devfreq: Vec<Devfreq>,
    /// Why both are empty, when they are.
    pub note: Option<String>,
}

fn freq_list(fs: &KernelFs, path: &str) -> Result<Vec<u64>, CpuError> {
    let Some(text) = fs.read_optional(path)? else {
        return Ok(Vec::new());
    };
    // `812000000 700000000 608000000 `
    text.split_whitespace()
        .map(|w| {
            w.parse::<u64>().map_err(|_| {
                CpuError::from(ParseError::new(
                    path,
                    1,
                    &text,
                    "frequencies in Hz separated by spaces",
                ))
            })
        })
        .collect()
}

/// Read the KGSL GPU and the devfreq devices.
pub fn read(fs: &KernelFs) -> Result<Gpu, CpuError> {
    let dir = format!("{}/kgsl-3d0", paths::KGSL);
    let kgsl = if fs.exists(&dir) {
        let num = |f: &str| opt_u64(fs, &format!("{dir}/{f}"));
        // `gpu_busy_percentage`: `12 %`.
        let busy_path = format!("{dir}/gpu_busy_percentage");
        let busy_percent = match opt_text(fs, &busy_path)? {
            None => None,
            Some(t) => Some(
                t.trim_end_matches('%')
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| CpuError::from(ParseError::new(&busy_path, 1, &t, "`<n> %`")))?,
            ),
        };
        Some(Kgsl {
            model: opt_text(fs, &format!("{dir}/gpu_model"))?,
            cur_hz: num("gpuclk")?,
            max_hz: num("max_gpuclk")?,
            available_hz: freq_list(fs, &format!("{dir}/gpu_available_frequencies"))?,
            busy_percent,
            max_pwrlevel: num("max_pwrlevel")?,
            min_pwrlevel: num("min_pwrlevel")?,
            num_pwrlevels: num("num_pwrlevels")?,
        })
    } else {
        None
    };
    let names = match fs.list_dir(paths::DEVFREQ) {
        Ok(n) => n,
        Err(e) if e.is_missing() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let mut devfreq = Vec::new();
    for name in names {
        let d = format!("{}/{name}", paths::DEVFREQ);
        let num = |f: &str| opt_u64(fs, &format!("{d}/{f}"));
        devfreq.push(Devfreq {
            cur_hz: num("cur_freq")?,
            min_hz: num("min_freq")?,
            max_hz: num("max_freq")?,
            governor: opt_text(fs, &format!("{d}/governor"))?,
            available_hz: freq_list(fs, &format!("{d}/available_frequencies"))?,
            name,
        });
    }
    let note = (kgsl.is_none() && devfreq.is_empty()).then(|| {
        format!(
            "no GPU frequency nodes: neither {dir} nor any device under {} exists",
            paths::DEVFREQ
        )
    });
    Ok(Gpu {
        kgsl,
        devfreq,
        note,
    })
}
