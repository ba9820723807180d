//! `lever bench-daemon`: flags, one call into `lever-bench-daemon`, and the
//! report (`render::bench_daemon`).

use crate::args::Global;
use crate::cmd::daemon::duration_us;
use crate::cmd::util::Progress;
use anyhow::Context;
use clap::Args;
use lever_text::{parse_duration, TimeUnit};
use std::os::fd::AsFd;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::Duration;

/// `lever bench-daemon` flags.
#[derive(Debug, Args)]
pub struct BenchDaemonArgs {
    /// Client counts to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    pub clients: Vec<usize>,
    /// Acquire + release pairs per client count (split over the clients).
    #[arg(long, default_value_t = 20_000)]
    pub operations: usize,
    /// Pace each client: one acquire every this long (`500us`, `2ms`; a bare
    /// number is µs; 0 = back to back, which saturates the CPUs and measures
    /// queueing as much as Lever).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = duration_us)]
    pub interval_us: Duration,
    /// Measure PING round trips instead of acquire + release: Lever's event
    /// loop and protocol with no node written.
    #[arg(long)]
    pub ping: bool,
    /// Skip the echo-floor rows.
    #[arg(long)]
    pub no_floor: bool,
    /// Internal: be the echo-floor process, serving on this socket until
    /// stdin closes.
    #[arg(long, value_name = "PATH", hide = true)]
    pub serve_echo: Option<PathBuf>,
    /// Idle window for the idle-CPU check (`10s`, `500ms`; a bare number is
    /// seconds; 0 skips it).
    #[arg(long, value_name = "DURATION", default_value = "10", value_parser = duration_s)]
    pub idle_secs: Duration,
    /// Start the daemon with `--busy-poll-us` this long (a bare number is µs).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = duration_us)]
    pub busy_poll_us: Duration,
    /// Simulated board to run on.
    #[arg(long, default_value = "qcs6490", value_parser = crate::cmd::util::sim_board())]
    pub sim: String,
}

fn duration_s(text: &str) -> Result<Duration, lever_text::UnitError> {
    parse_duration(text, TimeUnit::Seconds)
}

pub fn run(global: &Global, args: BenchDaemonArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.serve_echo {
        let listener = UnixListener::bind(path)
            .with_context(|| format!("echo floor: bind {}", path.display()))?;
        let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
        return Ok(lever_bench_daemon::echo::serve(listener, stdin)?);
    }
    let options = lever_bench_daemon::Options {
        clients: args.clients,
        operations: args.operations,
        interval: args.interval_us,
        ping: args.ping,
        floor: !args.no_floor,
        idle: args.idle_secs,
        busy_poll: args.busy_poll_us,
        sim: args.sim,
    };
    let progress = Progress::new("bench-daemon");
    let report = lever_bench_daemon::run(
        &std::env::current_exe()?,
        &options,
        &mut |done, total, what| progress.update(done, total, what),
    );
    progress.finish();
    crate::render::emit(global.json, &report?, crate::render::bench_daemon::report)
}
