//! The arm64 kernel stage, read back on the host (issue 32).
//! `scripts/arm64-kernel.sh` boots Debian's arm64 kernels (generic and
//! PREEMPT_RT) under qemu-system-aarch64 and runs Lever inside on the real
//! root; its output directory holds, per flavour, the console's step lines
//! (`steps.txt`: `LEVER-STEP|FLAVOUR|NAME|RESULT|MS|DETAIL`) and the files
//! the steps wrote (`files/`). This test checks both: every check named
//! and passed, and the JSON the guest's lever printed, parsed here
//! (the cpu ipc message, the breach's cause, the clusters, `rt check`'s
//! verdicts and fixes), plus the host's own `trace analyze` of the guest's
//! traces and `report render` of its run.
//!
//! It reads `LEVER_ARM64_KERNEL_OUT` (`.ci/run` sets it after running the
//! script). Without it the test says why it skips; with it set, missing
//! output is a failure. Emulated timing means nothing: figures are only
//! printed, labelled "emulated".

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const LEVER: &str = env!("CARGO_BIN_EXE_lever");

/// Every step the guest runs, in order.
const STEPS: &[&str] = &[
    "kernel",
    "topology",
    "daemon_start",
    "pm_qos",
    "uclamp",
    "sysctl",
    "usecase",
    "kill9_restore",
    "trace",
    "latency_breach",
    "cpu_ipc",
    "mem_map",
    "dt",
    "rt_check",
    "report_collect",
];

/// Steps that may SKIP, with the words their reason must hold.
const MAY_SKIP: &[(&str, &str)] = &[("uclamp", "not available here because")];

fn out_dir() -> Option<PathBuf> {
    match std::env::var_os("LEVER_ARM64_KERNEL_OUT") {
        Some(d) => {
            let d = PathBuf::from(d);
            assert!(
                d.join("generic/steps.txt").exists() && d.join("rt/steps.txt").exists(),
                "LEVER_ARM64_KERNEL_OUT={} but the stage left no generic/ and rt/ steps there: \
                 scripts/arm64-kernel.sh should have run",
                d.display()
            );
            Some(d)
        }
        None => {
            println!(
                "skipped: LEVER_ARM64_KERNEL_OUT is not set (run scripts/arm64-kernel.sh, then \
                 LEVER_ARM64_KERNEL_OUT=/var/tmp/lever-ci/arm64-kernel/out cargo test -p lever \
                 --test arm64_kernel; .ci/run does both after the ARM builds)"
            );
            None
        }
    }
}

struct Step {
    name: String,
    result: String,
    ms: u64,
    detail: String,
}

fn steps(dir: &Path) -> Vec<Step> {
    let text = std::fs::read_to_string(dir.join("steps.txt")).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.splitn(6, '|').collect();
            assert_eq!(f.len(), 6, "a step line with 6 fields: {l}");
            assert_eq!(f[0], "LEVER-STEP", "{l}");
            Step {
                name: f[2].to_string(),
                result: f[3].to_string(),
                ms: f[4].parse().unwrap_or_else(|_| panic!("milliseconds: {l}")),
                detail: f[5].to_string(),
            }
        })
        .collect()
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn host_lever(args: &[&str]) -> String {
    let out = Command::new(LEVER).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "lever {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_check_is_named_and_passes_on_both_kernels() {
    let Some(out) = out_dir() else { return };
    for flavour in ["generic", "rt"] {
        let steps = steps(&out.join(flavour));
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, STEPS, "{flavour}: the steps in order");
        for s in &steps {
            println!(
                "{flavour:8} {:16} {:4} {:>7} ms (emulated)  {}",
                s.name, s.result, s.ms, s.detail
            );
            match s.result.as_str() {
                "PASS" => {}
                "SKIP" => {
                    let why = MAY_SKIP.iter().find(|(n, _)| *n == s.name);
                    let Some((_, words)) = why else {
                        panic!("{flavour}: {} may not skip: {}", s.name, s.detail)
                    };
                    assert!(
                        s.detail.contains(words),
                        "{flavour} {}: {}",
                        s.name,
                        s.detail
                    );
                }
                _ => panic!("{flavour}: {} {}: {}", s.name, s.result, s.detail),
            }
        }
    }
}

/// The finding of issue 32: a PMU is there; INST_RETIRED is not.
#[test]
fn cpu_ipc_says_what_the_cpu_model_lacks_not_that_there_is_no_counter() {
    let Some(out) = out_dir() else { return };
    for flavour in ["generic", "rt"] {
        let v = json(&out.join(flavour).join("files/ipc.json"));
        let r = &v["report"];
        let cycles = r["cycles"]["count"].as_u64().unwrap_or(0);
        assert!(
            cycles > 0,
            "{flavour}: cycles counted through the PMU: {v:#}"
        );
        let note = r["hardware_note"].as_str().unwrap_or_default();
        if r["instructions"].is_null() {
            assert!(
                note.contains("instructions cannot be counted here because this CPU model does not implement INST_RETIRED (Arm event 0x0008)"),
                "{flavour}: {note}"
            );
            assert!(note.contains("armv8_pmuv3"), "{flavour}: {note}");
        } else {
            // A CPU model with INST_RETIRED (qemu with -icount): counted.
            assert!(
                r["instructions"]["count"].as_u64().unwrap_or(0) > 0,
                "{v:#}"
            );
        }
        assert!(!note.contains("no hardware counter"), "{flavour}: {note}");
        // The seed's cache chain: tried as raw Arm events, and what this
        // CPU model lacks said as such.
        let chain = r["chain_note"].as_str().unwrap_or_default();
        let counted = r["chain"].as_array().map_or(0, Vec::len);
        assert!(
            counted > 0 || chain.contains("this CPU model does not implement l1d_cache_lmiss_rd"),
            "{flavour}: {v:#}"
        );
        println!("{flavour}: cycles {cycles} (emulated); {note}; {chain}");
    }
}

#[test]
fn the_breach_names_the_fifo_hog_by_pid() {
    let Some(out) = out_dir() else { return };
    for flavour in ["generic", "rt"] {
        let files = out.join(flavour).join("files");
        let hog: i64 = std::fs::read_to_string(files.join("hog.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let v = json(&files.join("latency.json"));
        assert_eq!(v["ended"]["reason"], "breach", "{flavour}: {v:#}");
        let a = &v["analyses"][0];
        let cause = &a["parts"][0];
        // A higher-priority task; or, when the emulated vCPU took the
        // timer interrupt late (a loaded host), that lateness, charged to
        // the task that ran meanwhile: the hog either way.
        let kind = cause["kind"].as_str().unwrap_or_default();
        assert!(
            ["higher-priority-task", "timer-irq-late"].contains(&kind),
            "{flavour}: {a:#}"
        );
        assert_eq!(cause["pid"].as_i64(), Some(hog), "{flavour}: {a:#}");
        assert_eq!(
            cause["name"].as_str(),
            Some(format!("fifo-hog:{hog}").as_str()),
            "{flavour}: {a:#}"
        );
        // The trace was kept and the host reads it the same way.
        let trace = files.join("breach.trace");
        let text = std::fs::read_to_string(&trace).unwrap();
        assert!(text.contains("lever-latency breach: thread=0"), "{flavour}");
        println!(
            "{flavour}: breach {} µs (emulated), cause {kind} {} {:.1}%",
            a["window_ns"].as_u64().unwrap_or(0) / 1000,
            cause["name"],
            cause["share_pct"].as_f64().unwrap_or(0.0)
        );
    }
}

/// The guest's text and dat traces, analysed by this host's lever: the
/// dat's analysis equals the guest's own, and the text one has the same
/// tasks.
#[test]
fn the_guests_traces_analyse_the_same_on_the_host() {
    let Some(out) = out_dir() else { return };
    for flavour in ["generic", "rt"] {
        let files = out.join(flavour).join("files");
        let dat = files.join("trace.dat");
        let here: Value = serde_json::from_str(&host_lever(&[
            "trace",
            "analyze",
            "--sched",
            "--wakeups",
            "--json",
            dat.to_str().unwrap(),
        ]))
        .unwrap();
        let there = json(&files.join("trace-analyze-dat.json"));
        assert_eq!(
            here, there,
            "{flavour}: the dat analysed on arm64 and on the host"
        );
        let text = host_lever(&[
            "trace",
            "analyze",
            "--sched",
            "--wakeups",
            files.join("trace.txt").to_str().unwrap(),
        ]);
        assert!(text.contains("lever"), "{flavour}: {text}");
    }
}

#[test]
fn the_board_shaped_guest_has_two_clusters() {
    let Some(out) = out_dir() else { return };
    for flavour in ["generic", "rt"] {
        let v = json(&out.join(flavour).join("files/cpu.json"));
        let clusters = v["topology"]["clusters"].as_array().unwrap();
        let caps: Vec<(String, u64)> = clusters
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["capacity"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            caps,
            [("cpus 0".to_string(), 512), ("cpus 1".to_string(), 1024)],
            "{flavour}"
        );
    }
}

/// `rt check`: on the PREEMPT_RT kernel booted with the seed's command
/// line, those checks pass; after the runtime fixes it printed were run,
/// they pass too; on the generic kernel PREEMPT_RT fails with a fix.
#[test]
fn rt_check_passes_where_the_settings_are_and_fixes_the_rest() {
    let Some(out) = out_dir() else { return };
    let verdicts = |path: &Path| -> Vec<(String, String, String)> {
        json(path)["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["verdict"].as_str().unwrap().to_string(),
                    c["fix"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    let verdict = |v: &[(String, String, String)], name: &str| {
        v.iter()
            .find(|c| c.0 == name)
            .unwrap_or_else(|| panic!("no check {name}: {v:?}"))
            .clone()
    };
    let rt = out.join("rt/files");
    let before = verdicts(&rt.join("rt-check.json"));
    for name in [
        "preempt_rt",
        "isolcpus",
        "nohz_full",
        "rcu_nocbs",
        "irqaffinity",
    ] {
        assert_eq!(
            verdict(&before, name).1,
            "pass",
            "rt kernel: {name}: {before:?}"
        );
    }
    let after = verdicts(&rt.join("rt-check-fixed.json"));
    for name in ["sched_rt_runtime_us", "timer_migration"] {
        let (_, v0, fix) = verdict(&before, name);
        assert_ne!(v0, "pass", "{name} starts at the kernel's default");
        assert!(!fix.is_empty(), "{name}: a runnable fix");
        assert_eq!(
            verdict(&after, name).1,
            "pass",
            "{name} after `{fix}`: {after:?}"
        );
    }
    let generic = verdicts(&out.join("generic/files/rt-check.json"));
    let (_, v, fix) = verdict(&generic, "preempt_rt");
    assert_eq!(v, "fail");
    assert!(fix.contains("PREEMPT_RT"), "{fix}");
}

#[test]
fn mem_map_and_the_device_tree_read_the_live_board() {
    let Some(out) = out_dir() else { return };
    for flavour in ["generic", "rt"] {
        let files = out.join(flavour).join("files");
        let text = std::fs::read_to_string(files.join("mem_map.txt")).unwrap();
        // qemu's -m 1024, read from the DT's /memory node.
        assert!(
            text.contains("total RAM        1048576 kB from device tree memory nodes"),
            "{flavour}: total RAM and its source: {text}"
        );
        let dt = std::fs::read_to_string(files.join("dt.txt")).unwrap();
        assert!(
            dt.contains("capacity-dmips-mhz = <0x400>"),
            "{flavour}: {dt}"
        );
        // opp and carveouts on a board that has neither say so, and exit 0.
        assert!(dt.contains("== dt opp"), "{flavour}: {dt}");
        assert_eq!(dt.matches("exit 0").count(), 2, "{flavour}: {dt}");
    }
}

/// `report collect` ran inside; `report render` runs here.
#[test]
fn the_guests_report_renders_on_the_host() {
    let Some(out) = out_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    for flavour in ["generic", "rt"] {
        let run = out.join(flavour).join("files/run.json");
        let v = json(&run);
        assert!(v.is_object(), "{flavour}: run.json");
        let html = dir.path().join(format!("{flavour}.html"));
        let md = dir.path().join(format!("{flavour}.md"));
        host_lever(&[
            "report",
            "render",
            run.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--md",
            md.to_str().unwrap(),
        ]);
        let page = std::fs::read_to_string(&md).unwrap();
        assert!(
            page.contains("aarch64") || page.contains("arm64"),
            "{flavour}: {page}"
        );
        assert!(std::fs::metadata(&html).unwrap().len() > 1000);
    }
}
