//! The list of tests: name, seed 002 section, unit, which way is better,
//! and how to build the benchmark body. The bodies live in the modules
//! named after what they exercise ([`crate::os`], [`crate::ipc`],
//! [`crate::memory`], [`crate::ops`], [`crate::cpu`]).

use crate::runner::{Bench, Metric};
use crate::BenchError;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::PathBuf;

/// Seed 002's grouping of the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// `lat_syscall-*`.
    Syscalls,
    /// `lat_sig-*`.
    Signals,
    /// Pipe, Unix socket, TCP, UDP, connect, select, semaphore latencies.
    Ipc,
    /// `lat_proc-*`.
    Processes,
    /// `lat_ctx-*`.
    ContextSwitch,
    /// `lat_pagefault`, `lat_mmap`, `lat_fs-*`.
    FileAndVm,
    /// `lat_mem_rd-*`.
    MemoryLatency,
    /// `lat_ops-*`.
    Operations,
    /// `bw_mem-*`.
    MemoryBandwidth,
    /// `bw_file_rd`, `bw_mmap_rd`, `bw_pipe`, `bw_unix`, `bw_tcp`.
    IoBandwidth,
    /// Dhrystone, Whetstone, Linpack.
    Cpu,
    /// NBench's index kernels (`nbench-*`).
    Nbench,
}

impl Section {
    /// The heading a table prints.
    pub fn title(self) -> &'static str {
        match self {
            Section::Syscalls => "System calls",
            Section::Signals => "Signals",
            Section::Ipc => "IPC latency",
            Section::Processes => "Process creation",
            Section::ContextSwitch => "Context switch",
            Section::FileAndVm => "File system and VM",
            Section::MemoryLatency => "Memory read latency",
            Section::Operations => "Arithmetic operations",
            Section::MemoryBandwidth => "Memory bandwidth",
            Section::IoBandwidth => "Pipe, socket and file bandwidth",
            Section::Cpu => "CPU benchmarks",
            Section::Nbench => {
                "NBench index kernels (iterations/s; compiler and flags in the header)"
            }
        }
    }
}

/// Which direction is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Latencies: smaller is better.
    Lower,
    /// Bandwidths, rates and scores: bigger is better.
    Higher,
}

/// What the tests may use.
pub struct Env {
    /// Program and arguments that run the `lever` binary's hidden helper
    /// mode (`lever bench __helper`); `None` where there is no such binary
    /// (library tests), and tests that need it are skipped with a reason.
    pub helper: Option<Vec<OsString>>,
    /// A private scratch directory for files the tests create.
    pub dir: PathBuf,
    /// `--quick`: fewer sizes and combinations.
    pub quick: bool,
}

type Make = Box<dyn Fn(&Env) -> Result<Box<dyn Bench>, BenchError>>;

/// One test of the suite.
pub struct TestDef {
    /// LMBench's name (`lat_syscall-null`, `bw_mem-rd-1mb`).
    pub name: String,
    /// Where it is grouped.
    pub section: Section,
    /// `us`, `ns`, `MB/s`, `files/s`, `DMIPS`, …
    pub unit: &'static str,
    /// Which way is better.
    pub better: Better,
    /// How a sample's value is computed.
    pub metric: Metric,
    /// Build the benchmark body.
    pub make: Make,
    /// The body talks to peer threads or processes it starts (a pipe's
    /// other end, `lat_ctx`'s ring): the runner pins the test, and with it
    /// the peers, to one CPU unless `--cpu` did ([`crate::TestResult::pinned_cpu`]).
    pub peers: bool,
}

impl TestDef {
    /// The same test, marked as one with peers ([`TestDef::peers`]).
    pub fn with_peers(mut self) -> TestDef {
        self.peers = true;
        self
    }

    /// A latency in µs, `ops` operations per iteration.
    pub fn us(
        name: impl Into<String>,
        section: Section,
        ops: f64,
        make: impl Fn(&Env) -> Result<Box<dyn Bench>, BenchError> + 'static,
    ) -> TestDef {
        TestDef::lower(name, section, "us", Metric::Us { ops }, Box::new(make))
    }

    /// A latency in ns, `ops` operations per iteration.
    pub fn ns(
        name: impl Into<String>,
        section: Section,
        ops: f64,
        make: impl Fn(&Env) -> Result<Box<dyn Bench>, BenchError> + 'static,
    ) -> TestDef {
        TestDef::lower(name, section, "ns", Metric::Ns { ops }, Box::new(make))
    }

    fn lower(
        name: impl Into<String>,
        section: Section,
        unit: &'static str,
        metric: Metric,
        make: Make,
    ) -> TestDef {
        TestDef {
            name: name.into(),
            section,
            unit,
            better: Better::Lower,
            metric,
            make,
            peers: false,
        }
    }

    /// A bandwidth in LMBench's MB/s (2^20 bytes), `bytes` per iteration.
    pub fn mb_per_s(
        name: impl Into<String>,
        section: Section,
        bytes: f64,
        make: impl Fn(&Env) -> Result<Box<dyn Bench>, BenchError> + 'static,
    ) -> TestDef {
        TestDef::rate(name, section, "MB/s", bytes, 1048576.0, make)
    }

    /// Any higher-is-better rate: `amount` per iteration per second, over
    /// `divisor`.
    pub fn rate(
        name: impl Into<String>,
        section: Section,
        unit: &'static str,
        amount: f64,
        divisor: f64,
        make: impl Fn(&Env) -> Result<Box<dyn Bench>, BenchError> + 'static,
    ) -> TestDef {
        TestDef {
            name: name.into(),
            section,
            unit,
            better: Better::Higher,
            metric: Metric::Rate { amount, divisor },
            make: Box::new(make),
            peers: false,
        }
    }
}

/// Every test, in seed 002's order of sections.
pub fn all(env_quick: bool, llc_kb: Option<u64>) -> Vec<TestDef> {
    let mut v = Vec::new();
    v.extend(crate::os::tests(env_quick));
    v.extend(crate::ipc::tests(env_quick));
    v.extend(crate::memory::tests(env_quick, llc_kb));
    v.extend(crate::ops::tests());
    v.extend(crate::cpu::tests(env_quick));
    v.extend(crate::nbench::tests());
    v
}
