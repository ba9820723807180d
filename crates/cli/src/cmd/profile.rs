//! `lever profile`: built-in and file profiles, resolved against `--root`;
//! `apply` / `off` / `hold` go through the daemon, `apply --direct` /
//! `off --direct` write without it.

use crate::args::Global;
use crate::cmd::client::SocketArg;
use crate::exit::CommandExit;
use crate::render::profile::ByDaemon;
use crate::render::{self, emit};
use anyhow::bail;
use clap::{Args, Subcommand};
use lever_client::{Client, ClientError, Profile};
use lever_kernel::KernelFs;
use lever_latency::config;
use lever_profiles::{Options, Request};
use std::path::PathBuf;

/// `lever profile ...`
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// The built-in profiles and the seed sections they come from.
    List,
    /// The writes a profile resolves to under --root, in order, and the
    /// kernel command line it needs at boot.
    Show(ProfileArgs),
    /// What applying a profile would change: node, current -> new.
    Diff(ProfileArgs),
    /// Nodes that no longer hold an applied profile's values (from the
    /// state file of `apply --direct`, else NAME resolved now).
    Verify(VerifyArgs),
    /// Apply a profile through the daemon as its base profile (kept across
    /// restarts, below every perflock); --direct writes it once, held by
    /// nobody.
    Apply(ApplyArgs),
    /// Remove the daemon's base profile (every node back to its original);
    /// --direct undoes an `apply --direct`.
    Off(OffArgs),
    /// Hold a profile through the daemon while a command runs; exits with
    /// the command's status.
    Hold(HoldArgs),
    /// Map a TuneD profile directory (its tuned.conf) to a Lever profile;
    /// names what cannot be mapped.
    ImportTuned(ImportArgs),
}

/// A profile to resolve.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Built-in profile name or path to a profile YAML file.
    #[arg(value_parser = crate::cmd::util::profile_name(), hide_possible_values = true)]
    pub name: String,
    /// The RT CPUs for `{rt_cpus}` (housekeeping = the other online CPUs).
    #[arg(long, value_name = "LIST", value_parser = crate::cmd::util::cpu_list)]
    pub rt_cpus: Option<String>,
    /// Built-in target name or target YAML file (default: detected).
    #[arg(long, short = 't', value_name = "TARGET", value_parser = crate::cmd::util::target_name(), hide_possible_values = true)]
    pub target: Option<String>,
}

/// Where `apply --direct` records originals.
#[derive(Debug, Args)]
pub struct StateArg {
    /// State file of `apply --direct` / `off --direct`.
    #[arg(long, value_name = "FILE", default_value = "/run/lever/profile.json")]
    pub state: PathBuf,
}

/// `lever profile verify`
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Compare with this profile resolved now (default: the state file).
    #[arg(value_parser = crate::cmd::util::profile_name(), hide_possible_values = true)]
    pub name: Option<String>,
    /// The RT CPUs for `{rt_cpus}`.
    #[arg(long, value_name = "LIST", value_parser = crate::cmd::util::cpu_list)]
    pub rt_cpus: Option<String>,
    /// Built-in target name or target YAML file (default: detected).
    #[arg(long, short = 't', value_name = "TARGET", value_parser = crate::cmd::util::target_name(), hide_possible_values = true)]
    pub target: Option<String>,
    #[command(flatten)]
    pub state: StateArg,
}

/// `lever profile apply`
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Write directly under --root, without the daemon.
    #[arg(long)]
    pub direct: bool,
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub state: StateArg,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever profile off`
#[derive(Debug, Args)]
pub struct OffArgs {
    /// Undo a direct apply.
    #[arg(long)]
    pub direct: bool,
    #[command(flatten)]
    pub state: StateArg,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever profile hold`
#[derive(Debug, Args)]
pub struct HoldArgs {
    /// Built-in profile name or path to a profile YAML file.
    #[arg(value_parser = crate::cmd::util::profile_name(), hide_possible_values = true)]
    pub name: String,
    /// The RT CPUs for `{rt_cpus}`.
    #[arg(long, value_name = "LIST", value_parser = crate::cmd::util::cpu_list)]
    pub rt_cpus: Option<String>,
    #[command(flatten)]
    pub socket: SocketArg,
    /// The command to run while the profile is held (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `lever profile import-tuned`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A TuneD profile directory (holding tuned.conf), or the file itself.
    pub dir: PathBuf,
    /// Write the Lever profile here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn request<'a>(
    name: &'a str,
    rt_cpus: Option<&str>,
    target: Option<&'a str>,
) -> anyhow::Result<Request<'a>> {
    let rt_cpus = rt_cpus
        .map(|l| config::parse_cpu_list("--rt-cpus", l))
        .transpose()?;
    Ok(Request {
        profile: name,
        target,
        options: Options { rt_cpus },
    })
}

/// The daemon, or an error that says how to start it.
fn daemon(global: &Global, socket: &SocketArg, command: &str) -> anyhow::Result<Client> {
    socket.connect(global, command).map_err(|e| {
        let path = match e.downcast_ref::<ClientError>() {
            Some(ClientError::Connect { path, .. }) => path.display().to_string(),
            _ => return e,
        };
        e.context(format!(
            "no daemon at {path}: start `lever daemon` or use --direct"
        ))
    })
}

fn daemon_apply(global: &Global, a: ApplyArgs) -> anyhow::Result<()> {
    if a.profile.target.is_some() {
        bail!("--target has no meaning through the daemon (it uses its own target); use --direct");
    }
    let mut client = daemon(global, &a.socket, "profile apply")?;
    client.profile(Profile {
        name: a.profile.name.clone(),
        hold: false,
        rt_cpus: a.profile.rt_cpus.clone(),
    })?;
    let done = ByDaemon::new("applied", a.profile.name, None);
    emit(global.json, &done, render::profile::by_daemon)
}

/// Hold the profile while CMD runs; its exit status becomes ours.
fn hold(global: &Global, a: HoldArgs) -> anyhow::Result<()> {
    // Looked up before anything is held, as a shell would: under qemu-user
    // a failed exec is not reported to `spawn` (lever_syscalls::find_program).
    let program = a.command[0].clone();
    let cannot_run = |source| crate::exit::CannotRun {
        program: program.clone(),
        source,
    };
    lever_syscalls::find_program(program.as_ref()).map_err(cannot_run)?;
    let mut client = daemon(global, &a.socket, "profile hold")?;
    let handle = client.profile(Profile {
        name: a.name.clone(),
        hold: true,
        rt_cpus: a.rt_cpus,
    })?;
    let held = ByDaemon::new("held", a.name, handle.map(|h| h.get()));
    emit(global.json, &held, render::profile::by_daemon)?;
    let status = std::process::Command::new(&a.command[0])
        .args(&a.command[1..])
        .status()
        .map_err(cannot_run)?;
    if let Some(h) = handle {
        client.release(h)?;
    }
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    if code != 0 {
        return Err(CommandExit(u8::try_from(code).unwrap_or(1)).into());
    }
    Ok(())
}

fn from(a: &ProfileArgs) -> anyhow::Result<Request<'_>> {
    request(&a.name, a.rt_cpus.as_deref(), a.target.as_deref())
}

/// Run `lever profile ...`.
pub fn run(global: &Global, cmd: ProfileCommand) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let json = global.json;
    match cmd {
        ProfileCommand::List => emit(json, &lever_profiles::catalog()?, render::profile::list),
        ProfileCommand::Show(a) => emit(
            json,
            &lever_profiles::show(&fs, &from(&a)?)?,
            render::profile::show,
        ),
        ProfileCommand::Diff(a) => emit(
            json,
            &lever_profiles::diff_profile(&fs, &from(&a)?)?,
            render::profile::diff,
        ),
        ProfileCommand::Verify(a) => {
            let req = match &a.name {
                Some(n) => Some(request(n, a.rt_cpus.as_deref(), a.target.as_deref())?),
                None => None,
            };
            let report = lever_profiles::verify_profile(&fs, &a.state.state, req.as_ref())?;
            emit(json, &report, render::profile::verify)?;
            // Drift is a failed check (exit 1), like `latency kpi`.
            let v = &report.verification;
            if !v.drifted.is_empty() {
                return Err(crate::exit::ChecksFailed(format!(
                    "profile {}: {} of {} node(s) drifted",
                    report.profile,
                    v.drifted.len(),
                    v.checked
                ))
                .into());
            }
            Ok(())
        }
        ProfileCommand::Apply(a) if a.direct => {
            let req = from(&a.profile)?;
            let done = lever_profiles::apply_profile_direct(&fs, &req, &a.state.state)?;
            emit(json, &done, render::profile::applied)
        }
        ProfileCommand::Apply(a) => daemon_apply(global, a),
        ProfileCommand::Off(a) if a.direct => emit(
            json,
            &lever_profiles::off_profile_direct(&fs, &a.state.state)?,
            render::profile::off,
        ),
        ProfileCommand::Off(a) => {
            daemon(global, &a.socket, "profile off")?.profile_off()?;
            emit(
                json,
                &ByDaemon::new("off", String::new(), None),
                render::profile::by_daemon,
            )
        }
        ProfileCommand::Hold(a) => hold(global, a),
        ProfileCommand::ImportTuned(a) => {
            let imported = lever_profiles::tuned::import(&a.dir, a.output.as_deref())?;
            emit(json, &imported, render::profile::imported)
        }
    }
}
