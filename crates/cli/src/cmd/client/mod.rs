//! Client commands: `lever acquire`, `release`, `status`, `explain`,
//! `perflock` (the seed's `perflock_native_test --acq` form). Parsing and
//! calling only; `render::client` prints.

use crate::args::Global;
use crate::exit::bad_value;
use crate::render::client as render;
use anyhow::{bail, Context};
use clap::Args;
use lever_client::{Acquire, Client, Handle, Lease, Priority};
use lever_text::{parse_duration, parse_int, TimeUnit};
use std::path::PathBuf;
use std::time::Duration;

/// Where to reach the daemon.
#[derive(Debug, Args)]
pub struct SocketArg {
    /// Daemon socket (default: $LEVER_SOCKET, else /run/lever/lever.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

impl SocketArg {
    fn path(&self) -> PathBuf {
        self.socket
            .clone()
            .unwrap_or_else(lever_client::socket_path)
    }

    /// Connect for `lever COMMAND`, refusing a `--root`: the global flag is
    /// accepted by every subcommand, but a client never reads a kernel
    /// path — the daemon it talks to has its own root — so a `--root` here
    /// is a mistake to point out, not to ignore.
    pub(crate) fn connect(&self, global: &Global, command: &str) -> anyhow::Result<Client> {
        if global.root != std::path::Path::new("/") {
            return Err(bad_value(format!(
                "--root has no meaning for `lever {command}` (it talks to the daemon at {}, \
                 which has its own root: see `lever status`); use --socket to pick a daemon",
                self.path().display()
            )));
        }
        Ok(Client::connect(&self.path())?)
    }
}

/// A duration flag: `500ms`, `10s`, `1.5s`; a bare number is milliseconds.
pub fn duration_ms(text: &str) -> Result<Duration, lever_text::UnitError> {
    parse_duration(text, TimeUnit::Millis)
}

/// `lever acquire` flags.
#[derive(Debug, Args)]
pub struct AcquireArgs {
    /// Update this live request instead of making a new one.
    #[arg(long, value_name = "H")]
    pub handle: Option<Handle>,
    /// How long to hold: `10s`, `500ms`, or a bare number of ms; 0 = until
    /// Ctrl-C.
    #[arg(long, short = 'd', visible_alias = "duration-ms", value_name = "DURATION", value_parser = duration_ms)]
    pub duration: Duration,
    /// Priority class: third-party-low (default), third-party-high,
    /// system-low, system-high (or 0..3).
    #[arg(long, short = 'p', default_value = "third-party-low")]
    pub priority: Priority,
    /// Leave a timed request with the daemon and return at once.
    #[arg(long)]
    pub detach: bool,
    /// RES=VALUE pairs; RES is an opcode (0x44008100) or a resource name
    /// (cpu_min_freq.silver); VALUE an integer or an enum value (performance).
    #[arg(required = true, value_name = "RES=VALUE", value_parser = crate::cmd::util::resource_pair(res_value), hide_possible_values = true)]
    pub pairs: Vec<String>,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever release` flags.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// Handle to release.
    pub handle: Handle,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever status` flags.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// List every resource of the target, also those at their original
    /// value (by default only the resources held or voted for).
    #[arg(long, short = 'a')]
    pub all: bool,
    /// Only the resources held or voted for: the default (kept for old
    /// command lines).
    #[arg(long, hide = true, conflicts_with = "all")]
    pub held: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever explain` flags.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Resource name or opcode.
    #[arg(value_parser = crate::cmd::util::resource_name(), hide_possible_values = true)]
    pub resource: String,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever perflock` flags: `--acq <handle> <duration> <opcode,value,...>`.
#[derive(Debug, Args)]
pub struct PerflockArgs {
    /// Acquire: HANDLE DURATION_MS OPCODE,VALUE[,OPCODE,VALUE...]
    #[arg(long = "acq", num_args = 3, value_names = ["HANDLE", "DURATION", "LIST"], required_unless_present = "rel", value_parser = perflock_word)]
    pub acq: Option<Vec<String>>,
    /// Release a handle.
    #[arg(long = "rel", value_name = "HANDLE")]
    pub rel: Option<Handle>,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `RES=VALUE`'s form (the daemon's table resolves both sides): clap
/// refuses a pair without `=` or with an empty side, naming the argument.
fn res_value(pair: &str) -> Result<String, String> {
    match pair.split_once('=') {
        Some((res, value)) if !res.trim().is_empty() && !value.trim().is_empty() => {
            Ok(pair.to_string())
        }
        _ => Err(
            "expected RES=VALUE, e.g. 0x44008100=1958400 or cpu_governor.silver=performance".into(),
        ),
    }
}

/// One word of `perflock --acq`: a handle or a duration (an integer, or a
/// number with a time unit), or the `OPCODE,VALUE,...` list.
fn perflock_word(word: &str) -> Result<String, String> {
    let ints = word.split(',').all(|x| parse_int(x).is_some());
    if ints || duration_ms(word).is_ok() {
        Ok(word.to_string())
    } else {
        Err(
            "expected an integer (handle), a duration (100, 500ms) or OPCODE,VALUE,... integers"
                .into(),
        )
    }
}

/// `perflock --acq`'s words: the handle (0 asks for a new lock), the
/// duration and the `(opcode, value)` pairs.
type PerflockAcq = (i64, Duration, Vec<(u32, i64)>);

/// `perflock --acq`'s three words, checked before the daemon is asked.
fn perflock_acq(words: &[String]) -> anyhow::Result<PerflockAcq> {
    let [handle, duration, list] = words else {
        return Err(bad_value(
            "--acq: expected <handle> <duration> <opcode,value,...>",
        ));
    };
    let handle = parse_int(handle)
        .ok_or_else(|| bad_value(format!("--acq: handle {handle:?} is not an integer")))?;
    let duration = duration_ms(duration)
        .map_err(|e| bad_value(format!("--acq: duration {duration:?}: {e}")))?;
    let ints = list
        .split(',')
        .map(|x| {
            parse_int(x)
                .ok_or_else(|| bad_value(format!("--acq: {x:?} in {list:?} is not an integer")))
        })
        .collect::<anyhow::Result<Vec<i64>>>()?;
    if ints.is_empty() || ints.len() % 2 != 0 {
        return Err(bad_value(format!(
            "--acq: {list:?}: expected opcode,value pairs"
        )));
    }
    let mut pairs = Vec::new();
    for w in ints.chunks(2) {
        let opcode = u32::try_from(w[0])
            .map_err(|_| bad_value(format!("--acq: opcode {:#x} is not a 32-bit opcode", w[0])))?;
        pairs.push((opcode, w[1]));
    }
    Ok((handle, duration, pairs))
}

/// A duration as the command line means it: 0 holds until Ctrl-C.
pub(crate) fn lease(duration: Duration) -> anyhow::Result<Lease> {
    if duration.is_zero() {
        return Ok(Lease::UntilReleased);
    }
    Ok(Lease::timed(duration)?)
}

/// Resolve `RES=VALUE` with the daemon's own resource table (names and
/// enum values), so the CLI never disagrees with the daemon's target.
fn resolve_pair(client: &mut Client, pair: &str) -> anyhow::Result<(u32, i64)> {
    let (res, value) = pair.split_once('=').ok_or_else(|| {
        bad_value(format!(
            "{pair:?}: expected RES=VALUE, e.g. 0x44008100=1958400"
        ))
    })?;
    let doc = client.explain(res.trim())?;
    let opcode = parse_int(&doc.resource.opcode)
        .and_then(|o| u32::try_from(o).ok())
        .with_context(|| format!("daemon returned no opcode for {res}"))?;
    let value = match parse_int(value) {
        Some(v) => v,
        None => {
            let values = doc.spec.kind.values();
            match values.iter().position(|v| v == value.trim()) {
                Some(i) => i as i64,
                None if values.is_empty() => {
                    return Err(bad_value(format!(
                        "RES=VALUE {pair:?}: {value:?} is not an integer"
                    )))
                }
                None => {
                    return Err(bad_value(format!(
                        "RES=VALUE {pair:?}: {value:?} is not one of {}",
                        values.join(", ")
                    )))
                }
            }
        }
    };
    Ok((opcode, value))
}

/// Hold the lease for its duration (or until Ctrl-C): the lease is this
/// process's connection, so Ctrl-C ends the process, the connection closes
/// and the daemon releases everything it held.
pub(crate) fn hold(lease: Lease) -> anyhow::Result<()> {
    match lease.duration() {
        Some(d) => std::thread::sleep(d),
        None => loop {
            std::thread::park();
        },
    }
    Ok(())
}

pub fn acquire(global: &Global, args: AcquireArgs) -> anyhow::Result<()> {
    let lease = lease(args.duration)?;
    if args.detach && lease == Lease::UntilReleased {
        bail!("--detach needs --duration > 0: an indefinite request must stay tied to a running client");
    }
    let mut client = args.socket.connect(global, "acquire")?;
    let pairs = args
        .pairs
        .iter()
        .map(|p| resolve_pair(&mut client, p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // The report says, per pair, what was clamped or snapped and who
    // decided the node's value when it is not ours.
    let report = client.acquire_report(Acquire {
        handle: args.handle,
        lease,
        priority: args.priority,
        detach: args.detach,
        report: true,
        pairs,
    })?;
    if args.detach {
        return render::detached(&report, lease, args.priority, global.json);
    }
    render::acquired(&report, lease, args.priority, global.json)?;
    hold(lease)
}

pub fn release(global: &Global, args: ReleaseArgs) -> anyhow::Result<()> {
    args.socket
        .connect(global, "release")?
        .release(args.handle)?;
    render::released(args.handle, global.json)
}

pub fn status(global: &Global, args: StatusArgs) -> anyhow::Result<()> {
    let status = args.socket.connect(global, "status")?.status()?;
    render::status(&status, !args.all, global.json)
}

pub fn explain(global: &Global, args: ExplainArgs) -> anyhow::Result<()> {
    let doc = args
        .socket
        .connect(global, "explain")?
        .explain(&args.resource)?;
    render::explain(&doc, global.json)
}

pub fn perflock(global: &Global, args: PerflockArgs) -> anyhow::Result<()> {
    if let Some(h) = args.rel {
        args.socket.connect(global, "perflock")?.release(h)?;
        return render::released(h, false);
    }
    // Every word is checked before the daemon is asked anything.
    let (handle, duration, pairs) = perflock_acq(&args.acq.unwrap_or_default())?;
    let lease = lease(duration)?;
    let mut client = args.socket.connect(global, "perflock")?;
    for (i, (opcode, value)) in pairs.iter().enumerate() {
        eprintln!("resource_list[{}] = {:x}", 2 * i, opcode);
        eprintln!("resource_list[{}] = {:x}", 2 * i + 1, value);
    }
    let handle = client.acquire_with(Acquire {
        // perflock's handle 0 (or one that is no u32) asks for a new lock.
        handle: u32::try_from(handle).ok().and_then(Handle::new),
        lease,
        priority: Priority::ThirdPartyLow,
        detach: false,
        report: false,
        pairs,
    })?;
    if global.json {
        render::held_json(handle, lease)?;
    } else {
        render::held(handle, lease)?;
    }
    hold(lease)
}

#[cfg(test)]
mod tests;
