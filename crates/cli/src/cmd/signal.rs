//! `lever signal NAME` and `lever unsignal HANDLE`: trigger a use case of
//! the daemon's target and hold it like `lever acquire` holds a request
//! (until Ctrl-C, or for its duration), or end one. Parsing and calling
//! only; `render::signal` prints.

use crate::args::Global;
use crate::cmd::client::{duration_ms, hold, lease, SocketArg};
use crate::render::signal as render;
use anyhow::{bail, Context};
use clap::Args;
use lever_client::{Handle, Priority, Signal, SignalLease};
use lever_targets::usecase::{parse_attrs, Attr};
use std::num::NonZeroU32;
use std::time::Duration;

/// `lever signal` flags.
#[derive(Debug, Args)]
pub struct SignalArgs {
    /// The use case: its name (`camera-preview`) or id (`0x00030002`), as
    /// `lever usecases` lists them.
    #[arg(value_parser = crate::cmd::util::usecase_name(), hide_possible_values = true)]
    pub usecase: String,
    /// How long to hold: `10s`, `500ms`, a bare number of ms; 0 = until
    /// Ctrl-C. Default: the use case's own duration.
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = duration_ms)]
    pub duration: Option<Duration>,
    /// Attributes choosing the variant: `fps=30,width=3840,height=2160`.
    #[arg(long, value_name = "NAME=VALUE,...", value_parser = attrs)]
    pub attr: Option<String>,
    /// Priority class: third-party-low (default), third-party-high,
    /// system-low, system-high (or 0..3).
    #[arg(long, short = 'p', default_value = "third-party-low")]
    pub priority: Priority,
    /// Leave a timed use case with the daemon and return at once (prints
    /// the handle; `lever unsignal HANDLE` ends it early).
    #[arg(long)]
    pub detach: bool,
    /// Fail (exit 1) when any part of the use case was not applied (a
    /// cgroup controller missing, a thread setting refused): the report is
    /// printed, the request released.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever unsignal` flags.
#[derive(Debug, Args)]
pub struct UnsignalArgs {
    /// Handle `lever signal --detach` printed.
    pub handle: Handle,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `--attr`'s parser: clap refuses a list `parse_attrs` refuses, or a 0.
fn attrs(text: &str) -> Result<String, String> {
    let attrs = parse_attrs(text)?;
    match attrs.iter().find(|(_, v)| *v == 0) {
        Some((a, _)) => Err(format!("{}=0: attributes are > 0", a.as_str())),
        None => Ok(text.to_string()),
    }
}

fn attr(attrs: &[(Attr, u32)], which: Attr) -> anyhow::Result<Option<NonZeroU32>> {
    match attrs.iter().find(|(a, _)| *a == which) {
        None => Ok(None),
        Some((a, v)) => NonZeroU32::new(*v)
            .map(Some)
            .with_context(|| format!("--attr {}=0: attributes are > 0", a.as_str())),
    }
}

pub fn signal(global: &Global, args: SignalArgs) -> anyhow::Result<()> {
    let attrs = parse_attrs(args.attr.as_deref().unwrap_or(""))
        .map_err(|e| anyhow::anyhow!("--attr {e}"))?;
    let asked = match args.duration {
        None => SignalLease::UseCaseDefault,
        Some(d) => SignalLease::Given(lease(d)?),
    };
    let mut client = args.socket.connect(global, "signal")?;
    let report = client.signal_report(Signal {
        usecase: args.usecase,
        lease: asked,
        priority: args.priority,
        detach: args.detach,
        report: true,
        fps: attr(&attrs, Attr::Fps)?,
        width: attr(&attrs, Attr::Width)?,
        height: attr(&attrs, Attr::Height)?,
    })?;
    let held = report.lease.unwrap_or_default();
    if args.strict && !report.not_applied.is_empty() {
        // The request must not outlive the error: release it first.
        client.release(report.handle)?;
        eprint!("{}", render::not_applied_lines(&report));
        let first = &report.not_applied[0];
        bail!(
            "use case {} not wholly applied (--strict): {} part(s) not applied, first {}: {}; released",
            report.usecase.as_deref().unwrap_or("?"),
            report.not_applied.len(),
            first.what,
            first.why
        );
    }
    if args.detach {
        if held.duration().is_none() {
            // The daemon refuses an indefinite detached request; this is
            // an old daemon that did not say.
            bail!("--detach needs a timed use case or --duration > 0");
        }
        return render::detached(&report, args.priority, global.json);
    }
    render::signalled(&report, args.priority, global.json)?;
    hold(held)
}

pub fn unsignal(global: &Global, args: UnsignalArgs) -> anyhow::Result<()> {
    args.socket
        .connect(global, "unsignal")?
        .release(args.handle)?;
    crate::render::client::released(args.handle, global.json)
}
