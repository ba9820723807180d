//! Records the compiler and optimisation level, so every result says what
//! built the benchmark (seed 002's numbers mean nothing without it).
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    println!("cargo:rustc-env=LEVER_BENCH_RUSTC={}", version.trim());
    for var in ["OPT_LEVEL", "PROFILE", "TARGET", "DEBUG"] {
        let v = std::env::var(var).unwrap_or_default();
        println!("cargo:rustc-env=LEVER_BENCH_{var}={v}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
