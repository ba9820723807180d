//! `lever profile`: built-in and file profiles, resolved against `--root`;
//! `apply --direct` / `off --direct` write without the daemon.

use crate::args::Global;
use crate::render::{self, emit};
use clap::{Args, Subcommand};
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
    /// Apply a profile. Only --direct exists until the daemon takes
    /// profiles: written once by this command, held by nobody.
    Apply(ApplyArgs),
    /// Put back every original an `apply --direct` recorded.
    Off(OffArgs),
    /// Map a TuneD profile directory (its tuned.conf) to a Lever profile;
    /// names what cannot be mapped.
    ImportTuned(ImportArgs),
}

/// A profile to resolve.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Built-in profile name or path to a profile YAML file.
    pub name: String,
    /// The RT CPUs for `{rt_cpus}` (housekeeping = the other online CPUs).
    #[arg(long, value_name = "LIST")]
    pub rt_cpus: Option<String>,
    /// Built-in target name or target YAML file (default: detected).
    #[arg(long, short = 't', value_name = "TARGET")]
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
    pub name: Option<String>,
    /// The RT CPUs for `{rt_cpus}`.
    #[arg(long, value_name = "LIST")]
    pub rt_cpus: Option<String>,
    /// Built-in target name or target YAML file (default: detected).
    #[arg(long, short = 't', value_name = "TARGET")]
    pub target: Option<String>,
    #[command(flatten)]
    pub state: StateArg,
}

/// `lever profile apply`
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Write directly, without the daemon (required for now).
    #[arg(long, required = true)]
    pub direct: bool,
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub state: StateArg,
}

/// `lever profile off`
#[derive(Debug, Args)]
pub struct OffArgs {
    /// Undo a direct apply (required for now).
    #[arg(long, required = true)]
    pub direct: bool,
    #[command(flatten)]
    pub state: StateArg,
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
            emit(json, &report, render::profile::verify)
        }
        ProfileCommand::Apply(a) => {
            let req = from(&a.profile)?;
            let done = lever_profiles::apply_profile_direct(&fs, &req, &a.state.state)?;
            emit(json, &done, render::profile::applied)
        }
        ProfileCommand::Off(a) => emit(
            json,
            &lever_profiles::off_profile_direct(&fs, &a.state.state)?,
            render::profile::off,
        ),
        ProfileCommand::ImportTuned(a) => {
            let imported = lever_profiles::tuned::import(&a.dir, a.output.as_deref())?;
            emit(json, &imported, render::profile::imported)
        }
    }
}
