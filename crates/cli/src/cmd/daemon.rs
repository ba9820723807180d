//! `lever daemon` and `lever restore`. For `--sim BOARD` the CLI creates
//! the simulated board and starts the daemon on it: the daemon itself knows
//! nothing of simulators.

use crate::args::Global;
use crate::cmd::client::duration_ms;
use clap::Args;
use lever_text::{parse_duration, TimeUnit};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `lever daemon` flags.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Built-in target name or YAML file (default: detected from --root,
    /// or from the --sim board: with --sim, your own target file runs on
    /// the simulated board).
    #[arg(long, short = 't', value_name = "TARGET", value_parser = crate::cmd::util::target_name(), hide_possible_values = true)]
    pub target: Option<String>,
    /// Run from a URM configuration directory (common, target, custom
    /// layered as `target import-urm` does), imported in memory at start
    /// and again on SIGHUP.
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    pub urm: Option<PathBuf>,
    /// Run on a simulated board, created (or reused) under STATE_DIR/sim.
    #[arg(long, value_name = "BOARD", value_parser = crate::cmd::util::sim_board())]
    pub sim: Option<String>,
    /// Socket to listen on.
    #[arg(long, value_name = "PATH", default_value = lever_daemon::DEFAULT_SOCKET)]
    pub socket: PathBuf,
    /// State directory: journal of originals (crash-safe restore), and the
    /// simulated board of --sim.
    #[arg(long, value_name = "DIR", default_value = lever_daemon::DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// Group whose members are system clients, besides root.
    #[arg(long, value_name = "GROUP", default_value = "lever")]
    pub system_group: String,
    /// Live requests one third-party client may hold.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_requests: usize,
    /// Longest timed request a third-party client may make (`10m`, `30s`;
    /// a bare number is ms).
    #[arg(long, value_name = "DURATION", default_value = "600000", value_parser = duration_ms)]
    pub max_duration_ms: Duration,
    /// Log only warnings, not every change.
    #[arg(long)]
    pub quiet: bool,
    /// After each burst of requests, keep polling for this many µs before
    /// sleeping: answers the next request without waking an idle CPU, for
    /// at most this much CPU time per burst (0 = always sleep; `2ms`; a
    /// bare number is µs).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = duration_us)]
    pub busy_poll_us: Duration,
    /// Do not detect the target's `apps:` (the netlink process connector).
    #[arg(long)]
    pub no_apps: bool,
    /// Serve the daemon's counters for Prometheus (`GET /metrics`,
    /// OpenMetrics or 0.0.4 text) on a loopback address (`127.0.0.1:9464`)
    /// or a Unix socket path.
    #[arg(long, value_name = "ADDR|PATH")]
    pub metrics: Option<lever_daemon::exporter::Endpoint>,
    /// Write `lever.prom` for node_exporter's textfile collector into DIR.
    #[arg(long, value_name = "DIR")]
    pub metrics_textfile: Option<PathBuf>,
    /// How often the textfile is rewritten (`15s`; a bare number is ms).
    #[arg(long, value_name = "DURATION", default_value = "15000", value_parser = duration_ms)]
    pub metrics_interval: Duration,
    /// Serve power-profiles-daemon's and GameMode's D-Bus interfaces on the
    /// system bus (docs/dbus.md; needs packaging/dbus/lever-dbus.conf).
    #[arg(long)]
    pub dbus: bool,
    /// Serve them on the bus at ADDR instead (`unix:path=/tmp/bus`).
    #[arg(long, value_name = "ADDR")]
    pub dbus_address: Option<String>,
}

/// `lever restore` flags.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// State directory of the daemon whose journal to replay.
    #[arg(long, value_name = "DIR", default_value = lever_daemon::DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
}

/// A duration flag whose bare numbers are microseconds.
pub fn duration_us(text: &str) -> Result<Duration, lever_text::UnitError> {
    parse_duration(text, TimeUnit::Micros)
}

/// The root for `--sim BOARD`: the board under `STATE_DIR/sim`, created
/// unless it is already there (so a restarted daemon sees the device as it
/// was left).
fn sim_root(board: &str, state_dir: &Path, quiet: bool) -> anyhow::Result<PathBuf> {
    let dir = state_dir.join("sim");
    let opened = lever_sim::open_or_create(board, &dir)
        .map_err(|e| anyhow::anyhow!("cannot create simulated board: {e}"))?;
    let note = match opened {
        lever_sim::Opened::Existing => format!("using simulated {board} in {}", dir.display()),
        lever_sim::Opened::Created(created) => format!(
            "created simulated {board} in {} ({} files)",
            created.root.display(),
            created.files
        ),
    };
    if !quiet {
        eprintln!("lever daemon: {note}");
    }
    Ok(dir)
}

/// The target of `--urm DIR`: the directory imported as
/// `lever target import-urm` does, over the clusters of the daemon's root;
/// each warning one log line.
fn urm_loader(dir: PathBuf) -> lever_daemon::TargetLoader {
    lever_daemon::TargetLoader(std::sync::Arc::new(move |fs| {
        let import = lever_urm::import_dir(&dir, "urm", fs, None)?;
        // URM creates its cgroups at start; their files must be there
        // before the target binds the cgroup resources.
        let (created, not_created) = import.create_cgroups(fs);
        let urm = Some(import.view());
        let mut file = import.target;
        file.source = format!("urm:{}", dir.display());
        Ok(lever_daemon::Loaded {
            file,
            warnings: import
                .warnings
                .iter()
                .map(|w| format!("URM import: {w}"))
                .chain(not_created)
                .collect(),
            notes: created,
            urm,
        })
    }))
}

pub fn run_daemon(global: &Global, args: DaemonArgs) -> anyhow::Result<()> {
    // A board's build has no D-Bus doors: said before anything starts.
    #[cfg(not(feature = "dbus"))]
    if args.dbus || args.dbus_address.is_some() {
        return Err(crate::exit::not_in_this_build(
            "lever daemon --dbus",
            "dbus",
        ));
    }
    let max_ms = u32::try_from(args.max_duration_ms.as_millis())
        .map_err(|_| anyhow::anyhow!("--max-duration-ms: at most 4294967295 ms"))?;
    let limits = lever_daemon::core::Limits {
        third_party_requests: args.max_requests,
        third_party_max_duration_ms: max_ms,
        ..Default::default()
    };
    // The state directory is this daemon's before anything in it is read
    // or written (the simulated board included): a second daemon on it
    // stops here, naming the first's pid.
    let lock = lever_daemon::lock_state_dir(&args.state_dir, &args.socket)?;
    let root = match &args.sim {
        Some(board) => sim_root(board, &args.state_dir, args.quiet)?,
        None => global.root.clone(),
    };
    #[cfg(feature = "dbus")]
    let bus = match (args.dbus_address.clone(), args.dbus) {
        (Some(address), _) => Some(lever_dbus::Bus::Address(address)),
        (None, true) => Some(lever_dbus::Bus::System),
        (None, false) => None,
    };
    #[cfg(feature = "dbus")]
    if let Some(bus) = bus {
        // A root client of the daemon's own socket, in a thread of this
        // process: it waits for the socket the daemon is about to open.
        lever_dbus::spawn(lever_dbus::Options {
            bus,
            socket: args.socket.clone(),
            wait: Duration::from_secs(30),
        })?;
    }
    lever_daemon::run_locked(
        lever_daemon::Config {
            root,
            target: args.target,
            socket: args.socket,
            state_dir: args.state_dir,
            system_group: args.system_group,
            limits,
            quiet: args.quiet,
            busy_poll: args.busy_poll_us,
            apps: !args.no_apps,
            metrics: args.metrics,
            metrics_textfile: args.metrics_textfile,
            metrics_interval: args.metrics_interval,
            loader: args.urm.map(urm_loader),
        },
        lock,
    )?;
    Ok(())
}

pub fn run_restore(global: &Global, args: RestoreArgs) -> anyhow::Result<()> {
    // A journal written for a simulated board names that board's root.
    let sim_root = args.state_dir.join("sim");
    let root = if global.root == Path::new("/") && lever_sim::board_in(&sim_root).is_some() {
        sim_root
    } else {
        global.root.clone()
    };
    let recovery = lever_daemon::restore(&args.state_dir, &root)?;
    crate::render::daemon::restore(&recovery, &args.state_dir, global.json)?;
    // A `trace record` killed with SIGKILL left its tracefs instance
    // tracing: remove it too, and say so.
    let fs = lever_kernel::KernelFs::new(&global.root);
    if let Some(tfs) = lever_tracefs::Tracefs::locate(&fs) {
        for stale in tfs.remove_stale_instances() {
            eprintln!("lever: {stale}");
        }
    }
    let failed = recovery
        .restored
        .iter()
        .filter(|r| r.result.is_err())
        .count();
    anyhow::ensure!(failed == 0, "{failed} node(s) could not be restored");
    Ok(())
}
