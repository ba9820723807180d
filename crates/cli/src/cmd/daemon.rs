//! `lever daemon` and `lever restore`.

use crate::args::Global;
use clap::Args;
use std::path::PathBuf;

/// `lever daemon` flags.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Built-in target name or YAML file (default: detected from --root).
    #[arg(long, short = 't', value_name = "TARGET", conflicts_with = "sim")]
    pub target: Option<String>,
    /// Run on a simulated board, created (or reused) under STATE_DIR/sim.
    #[arg(long, value_name = "BOARD")]
    pub sim: Option<String>,
    /// Socket to listen on.
    #[arg(long, value_name = "PATH", default_value = lever_daemon::DEFAULT_SOCKET)]
    pub socket: PathBuf,
    /// State directory: journal of originals (crash-safe restore), simulated board.
    #[arg(long, value_name = "DIR", default_value = lever_daemon::DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// Group whose members are system clients, besides root.
    #[arg(long, value_name = "GROUP", default_value = "lever")]
    pub system_group: String,
    /// Live requests one third-party client may hold.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_requests: usize,
    /// Longest timed request a third-party client may make (ms).
    #[arg(long, value_name = "MS", default_value_t = 600_000)]
    pub max_duration_ms: u32,
    /// Log only warnings, not every change.
    #[arg(long)]
    pub quiet: bool,
    /// After each burst of requests, keep polling for this many µs before
    /// sleeping: answers the next request without waking an idle CPU, for
    /// at most this much CPU time per burst (0 = always sleep).
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub busy_poll_us: u64,
}

/// `lever restore` flags.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// State directory of the daemon whose journal to replay.
    #[arg(long, value_name = "DIR", default_value = lever_daemon::DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
}

pub fn run_daemon(global: &Global, args: DaemonArgs) -> anyhow::Result<()> {
    let limits = lever_daemon::core::Limits {
        third_party_requests: args.max_requests,
        third_party_max_duration_ms: args.max_duration_ms,
        ..Default::default()
    };
    lever_daemon::run(lever_daemon::Config {
        root: global.root.clone(),
        target: args.target,
        sim: args.sim,
        socket: args.socket,
        state_dir: args.state_dir,
        system_group: args.system_group,
        limits,
        quiet: args.quiet,
        busy_poll: std::time::Duration::from_micros(args.busy_poll_us),
    })?;
    Ok(())
}

pub fn run_restore(global: &Global, args: RestoreArgs) -> anyhow::Result<()> {
    // A journal written for a simulated board names that board's root.
    let sim_root = args.state_dir.join("sim");
    let root =
        if global.root == std::path::Path::new("/") && sim_root.join(lever_sim::MARKER).exists() {
            sim_root
        } else {
            global.root.clone()
        };
    let recovery = lever_daemon::restore(&args.state_dir, &root)?;
    let restored = &recovery.restored;
    let failed = restored.iter().filter(|r| r.result.is_err()).count();
    if global.json {
        let rows: Vec<serde_json::Value> = restored
            .iter()
            .map(|r| serde_json::json!({"node": r.node, "original": r.original, "error": r.result.as_ref().err()}))
            .collect();
        crate::render::print_json(&serde_json::json!({
            "restored": rows,
            "earlier_boot": recovery.earlier_boot.as_ref().map(|(boot, n)| serde_json::json!({"boot_id": boot, "nodes": n})),
        }))?;
    } else {
        if let Some((boot, n)) = &recovery.earlier_boot {
            println!(
                "the journal is from an earlier boot ({boot}): the reboot already reset its {n} node(s), so nothing was written back"
            );
        }
        for r in restored {
            match &r.result {
                Ok(()) => println!("restored {} to {:?}", r.node, r.original),
                Err(e) => println!("FAILED {}: {e}", r.node),
            }
        }
        if restored.is_empty() && recovery.earlier_boot.is_none() {
            println!(
                "nothing to restore: the journal in {} is clean",
                args.state_dir.display()
            );
        }
    }
    anyhow::ensure!(failed == 0, "{failed} node(s) could not be restored");
    Ok(())
}
