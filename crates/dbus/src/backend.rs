//! What the D-Bus services ask of Lever, as a trait: the real one is a root
//! client of the daemon's own socket ([`DaemonBackend`]), so a ppd hold or a
//! GameMode game is an ordinary request the daemon arbitrates and releases
//! when that connection closes; unit tests use a fake.

use lever_client::{Client, ClientError, Handle, Priority, Profile, Signal, SignalLease};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The use case a GameMode game triggers (`docs/dbus.md`).
pub const GAME_USECASE: &str = "game";

/// The daemon's profiles, as STATUS reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    /// The base profile (`powerprofilesctl set`), if any.
    pub base: Option<String>,
    /// The profile in effect: the winning hold, else the base.
    pub effective: Option<String>,
}

/// Lever, as the D-Bus services use it. Handles are the daemon's.
pub trait Backend: Send {
    /// Make `profile` (a Lever name) the daemon's base profile.
    fn set_base(&mut self, profile: &str) -> Result<(), ClientError>;
    /// Hold `profile` until [`Backend::release`].
    fn hold(&mut self, profile: &str) -> Result<Handle, ClientError>;
    /// Trigger the [`GAME_USECASE`] until [`Backend::release`].
    fn start_game(&mut self) -> Result<Handle, ClientError>;
    /// End a hold or a game.
    fn release(&mut self, handle: Handle) -> Result<(), ClientError>;
    /// The daemon's base and effective profiles.
    fn profiles(&mut self) -> Result<Profiles, ClientError>;
}

/// The daemon, through one connection to its socket. Everything this
/// backend holds belongs to that connection: if the D-Bus thread dies, the
/// daemon releases it all.
#[derive(Debug)]
pub struct DaemonBackend {
    client: Client,
}

impl DaemonBackend {
    /// Connect to the daemon at `socket`, retrying for up to `wait` while
    /// it starts (the D-Bus thread starts beside the daemon, before its
    /// socket exists).
    pub fn connect(socket: &Path, wait: Duration) -> Result<DaemonBackend, ClientError> {
        let deadline = Instant::now() + wait;
        loop {
            match Client::connect(socket) {
                Ok(client) => return Ok(DaemonBackend { client }),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// The socket path, for messages.
    pub fn default_socket() -> PathBuf {
        lever_client::socket_path()
    }
}

impl Backend for DaemonBackend {
    fn set_base(&mut self, profile: &str) -> Result<(), ClientError> {
        self.client.profile(Profile {
            name: profile.to_string(),
            hold: false,
            rt_cpus: None,
        })?;
        Ok(())
    }

    fn hold(&mut self, profile: &str) -> Result<Handle, ClientError> {
        let reply = self.client.profile(Profile {
            name: profile.to_string(),
            hold: true,
            rt_cpus: None,
        })?;
        // A hold is always answered with HANDLE; DONE would mean the daemon
        // took it as a base profile.
        reply.ok_or(ClientError::Unexpected(lever_protocol::Reply::Done))
    }

    fn start_game(&mut self) -> Result<Handle, ClientError> {
        self.client.signal(Signal {
            usecase: GAME_USECASE.to_string(),
            // A game lasts until it unregisters or exits, however long.
            lease: SignalLease::Given(lever_client::Lease::UntilReleased),
            // A desktop request, like any application's: system clients'
            // requests keep their precedence over it.
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            fps: None,
            width: None,
            height: None,
        })
    }

    fn release(&mut self, handle: Handle) -> Result<(), ClientError> {
        self.client.release(handle)
    }

    fn profiles(&mut self) -> Result<Profiles, ClientError> {
        let status = self.client.status()?;
        Ok(status
            .profile
            .map(|p| Profiles {
                base: p.base,
                effective: p.effective,
            })
            .unwrap_or_default())
    }
}
