//! `lever run --app NAME -- CMD`: start a command and register it as an
//! app of the daemon's target, for machines where the daemon cannot see
//! processes start (no process connector: a container, no CAP_NET_ADMIN).

use crate::{Client, ClientError};
use lever_protocol::ErrorCode;
use std::process::{Command, ExitStatus};

/// Why [`run_app`] could not run the command as the app.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The command could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program as given.
        program: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The daemon did not register it (the command was killed).
    #[error("cannot register {program} (pid {pid}) as app {app}: {source}")]
    Register {
        /// The program as given.
        program: String,
        /// Its pid.
        pid: u32,
        /// The app name asked for.
        app: String,
        /// The daemon's refusal or the connection's failure.
        #[source]
        source: ClientError,
    },
    /// Waiting for the command failed.
    #[error("waiting for {program}: {source}")]
    Wait {
        /// The program as given.
        program: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// Start `command`, register its pid as app `app` with the daemon behind
/// `client`, and wait for it; returns its exit status.
///
/// `spawn` returns once the child has exec'd (std reports a failed exec
/// through a close-on-exec pipe), so the daemon sees the command's own
/// threads and comm, as it would at the connector's exec event. A refused
/// registration kills the command: it must not run unconfigured while the
/// caller believes otherwise. The configuration is owned by the command's
/// process, not by this connection: it ends when the command exits.
///
/// ```no_run
/// let mut client = lever_client::Client::connect_default()?;
/// let mut cmd = std::process::Command::new("gst-launch-1.0");
/// cmd.arg("videotestsrc");
/// let status = lever_client::run_app(&mut client, "gst-camera", &mut cmd)?;
/// std::process::exit(status.code().unwrap_or(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_app(
    client: &mut Client,
    app: &str,
    command: &mut Command,
) -> Result<ExitStatus, RunError> {
    let program = command.get_program().to_string_lossy().into_owned();
    // Looked up first, as a shell would: under qemu-user a failed exec
    // is not reported to `spawn` (lever_syscalls::find_program).
    let spawn_error = |source| RunError::Spawn {
        program: program.clone(),
        source,
    };
    lever_syscalls::find_program(command.get_program()).map_err(spawn_error)?;
    let mut child = command.spawn().map_err(spawn_error)?;
    let pid = child.id();
    if let Err(source) = client.register(pid, app) {
        // A command that already ran to its end (the daemon found no
        // process to configure) needed no configuration: its status is
        // the answer. Any other refusal stands.
        let gone =
            matches!(&source, ClientError::Refused { code, .. } if *code == ErrorCode::Invalid);
        if gone {
            if let Ok(Some(status)) = child.try_wait() {
                return Ok(status);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        return Err(RunError::Register {
            program,
            pid,
            app: app.to_string(),
            source,
        });
    }
    child
        .wait()
        .map_err(|source| RunError::Wait { program, source })
}
