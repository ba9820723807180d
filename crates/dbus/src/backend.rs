//! What the D-Bus services ask of Lever, as a trait: the real one is a
//! client of the daemon's own socket ([`DaemonBackend`]) that speaks for
//! each bus caller as that caller, so a ppd hold or a GameMode game is an
//! ordinary request the daemon checks, counts, arbitrates and releases;
//! unit tests use a fake.

use lever_client::{Client, ClientError, Handle, Profile, Signal, SignalLease};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The use case a GameMode game triggers (`docs/dbus.md`).
pub const GAME_USECASE: &str = "game";

/// Who called, as the bus daemon reported it (`GetConnectionCredentials`):
/// never what the message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Its unique bus name (`:1.42`): what it holds ends when it leaves.
    pub name: String,
    /// Its unix user id.
    pub uid: u32,
    /// Its process id.
    pub pid: u32,
}

/// The daemon's profiles, as STATUS reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    /// The base profile (`powerprofilesctl set`), if any.
    pub base: Option<String>,
    /// The profile in effect: the winning hold, else the base.
    pub effective: Option<String>,
}

/// Lever, as the D-Bus services use it. Handles are the daemon's. Every
/// call a bus caller makes is made **as that caller**: the daemon gives it
/// exactly the class, caps and view a socket client of its uid gets.
pub trait Backend: Send {
    /// Make `profile` (a Lever name) the daemon's base profile (the
    /// daemon refuses a third-party caller).
    fn set_base(&mut self, caller: &Caller, profile: &str) -> Result<(), ClientError>;
    /// Hold `profile` for `caller` until released or the caller leaves.
    fn hold(&mut self, caller: &Caller, profile: &str) -> Result<Handle, ClientError>;
    /// Trigger the [`GAME_USECASE`] while process `game` runs (the daemon
    /// refuses a process that is not the caller's, unless it is system).
    fn start_game(&mut self, caller: &Caller, game: u32) -> Result<Handle, ClientError>;
    /// End a hold or a game, as `caller` (the daemon decides if it may).
    fn release(&mut self, caller: &Caller, handle: Handle) -> Result<(), ClientError>;
    /// End a hold on the service's own authority: the holds a system
    /// caller's change of `ActiveProfile` cancelled.
    fn cancel(&mut self, handle: Handle) -> Result<(), ClientError>;
    /// `name` left the bus: what it held through its connection ends.
    fn caller_left(&mut self, name: &str);
    /// The daemon's base and effective profiles.
    fn profiles(&mut self) -> Result<Profiles, ClientError>;
}

/// The daemon, through its socket: one connection of the service's own
/// (root, in the daemon's process) for what the service reads and for
/// cancelling holds, and one per bus caller, turned into that caller's by
/// BEHALF, for everything the caller asks. A caller's holds belong to its
/// connection, which is closed when it leaves the bus; its games belong to
/// their processes. If the D-Bus thread dies, the daemon ends it all.
#[derive(Debug)]
pub struct DaemonBackend {
    socket: PathBuf,
    service: Client,
    callers: HashMap<String, Client>,
}

impl DaemonBackend {
    /// Connect to the daemon at `socket`, retrying for up to `wait` while
    /// it starts (the D-Bus thread starts beside the daemon, before its
    /// socket exists).
    pub fn connect(socket: &Path, wait: Duration) -> Result<DaemonBackend, ClientError> {
        let deadline = Instant::now() + wait;
        loop {
            match Client::connect(socket) {
                Ok(service) => {
                    return Ok(DaemonBackend {
                        socket: socket.to_path_buf(),
                        service,
                        callers: HashMap::new(),
                    })
                }
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// The socket path, for messages.
    pub fn default_socket() -> PathBuf {
        lever_client::socket_path()
    }

    /// `caller`'s own connection, opened (and turned into the caller's
    /// by BEHALF) on its first call. A refused BEHALF (a cap) is the call's
    /// refusal, and nothing is kept.
    fn as_caller(&mut self, caller: &Caller) -> Result<&mut Client, ClientError> {
        if !self.callers.contains_key(&caller.name) {
            let mut client = Client::connect(&self.socket)?;
            client.behalf(caller.uid, caller.pid)?;
            self.callers.insert(caller.name.clone(), client);
        }
        Ok(self
            .callers
            .get_mut(&caller.name)
            .expect("inserted just above"))
    }
}

impl Backend for DaemonBackend {
    fn set_base(&mut self, caller: &Caller, profile: &str) -> Result<(), ClientError> {
        self.as_caller(caller)?.profile(Profile {
            name: profile.to_string(),
            hold: false,
            rt_cpus: None,
        })?;
        Ok(())
    }

    fn hold(&mut self, caller: &Caller, profile: &str) -> Result<Handle, ClientError> {
        let reply = self.as_caller(caller)?.profile(Profile {
            name: profile.to_string(),
            hold: true,
            rt_cpus: None,
        })?;
        // A hold is always answered with HANDLE; DONE would mean the daemon
        // took it as a base profile.
        reply.ok_or(ClientError::Unexpected(lever_protocol::Reply::Done))
    }

    fn start_game(&mut self, caller: &Caller, game: u32) -> Result<Handle, ClientError> {
        // A game lasts until it unregisters or exits, however long; a
        // desktop request, like any application's (third-party-low):
        // system clients' requests keep their precedence over it.
        let game_usecase = Signal::of(
            GAME_USECASE,
            SignalLease::Given(lever_client::Lease::UntilReleased),
        );
        self.as_caller(caller)?.bind(game, game_usecase)
    }

    fn release(&mut self, caller: &Caller, handle: Handle) -> Result<(), ClientError> {
        self.as_caller(caller)?.release(handle)
    }

    fn cancel(&mut self, handle: Handle) -> Result<(), ClientError> {
        self.service.release(handle)
    }

    fn caller_left(&mut self, name: &str) {
        self.callers.remove(name);
    }

    fn profiles(&mut self) -> Result<Profiles, ClientError> {
        let status = self.service.status()?;
        Ok(status
            .profile
            .map(|p| Profiles {
                base: p.base,
                effective: p.effective,
            })
            .unwrap_or_default())
    }
}
