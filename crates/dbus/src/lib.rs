//! The desktop's D-Bus interfaces on `lever daemon --dbus`:
//! power-profiles-daemon's (`org.freedesktop.UPower.PowerProfiles` and the
//! legacy `net.hadess.PowerProfiles`) and GameMode's
//! (`com.feralinteractive.GameMode`), so `powerprofilesctl`, GNOME/KDE and
//! GameMode clients drive Lever unchanged (`docs/dbus.md`).
//!
//! The service is a client of the daemon's own socket, running as root in
//! the daemon's process: a ppd hold is a held profile
//! ([`lever_client::Client::profile`]), `ActiveProfile` is the base
//! profile, and a registered game triggers the target's `game` use case.
//! The daemon arbitrates them like any request (power-saver beats
//! performance) and releases them if this connection ends.
//!
//! ppd's profile names map to Lever's built-ins:
//!
//! ```
//! use lever_dbus::ppd::PpdProfile;
//! let p = PpdProfile::from_ppd("power-saver").unwrap();
//! assert_eq!(p.lever_name(), "powersave");
//! // No profile in effect is ppd's default.
//! assert_eq!(PpdProfile::from_lever(None).ppd_name(), "balanced");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod backend;
pub mod gamemode;
pub mod ppd;
mod service;
pub mod testbus;

pub use backend::{Backend, Caller, DaemonBackend, Profiles, GAME_USECASE};
pub use service::{
    GAMEMODE_NAME, GAMEMODE_PATH, PPD_LEGACY_NAME, PPD_LEGACY_PATH, PPD_NAME, PPD_PATH,
};

use std::path::PathBuf;
use std::time::Duration;

/// Which bus to serve on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bus {
    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
    System,
    /// A bus at this address (`unix:path=/tmp/bus`), for tests.
    Address(String),
}

/// Where to serve and whom to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// The bus.
    pub bus: Bus,
    /// The Lever daemon's socket.
    pub socket: PathBuf,
    /// How long to wait for the daemon's socket to accept connections.
    pub wait: Duration,
}

/// Why the D-Bus service cannot run.
#[derive(Debug, thiserror::Error)]
pub enum DbusError {
    /// The bus refused us (no bus, or its policy does not let us own the
    /// names: install `packaging/dbus/lever-dbus.conf`).
    #[error("D-Bus: {0}")]
    Bus(#[from] zbus::Error),
    /// The Lever daemon could not be reached.
    #[error("cannot reach the lever daemon: {0}")]
    Daemon(#[from] lever_client::ClientError),
    /// A thread could not be started.
    #[error("cannot start a D-Bus thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Connect to the daemon and serve ppd and GameMode on `options.bus`
/// until the bus connection ends.
pub fn serve(options: &Options) -> Result<(), DbusError> {
    let backend = DaemonBackend::connect(&options.socket, options.wait)?;
    serve_with(&options.bus, Box::new(backend))
}

/// [`serve`] with another Lever (a fake, in tests).
pub fn serve_with(bus: &Bus, backend: Box<dyn Backend>) -> Result<(), DbusError> {
    let builder = match bus {
        Bus::System => zbus::blocking::connection::Builder::system()?,
        Bus::Address(a) => zbus::blocking::connection::Builder::address(a.as_str())?,
    };
    service::serve(builder, backend)
}

/// [`serve`] in a thread of its own, for `lever daemon --dbus`: the daemon
/// runs without D-Bus if the bus fails, and says why on stderr.
pub fn spawn(options: Options) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("lever-dbus".into())
        .spawn(move || {
            if let Err(e) = serve(&options) {
                eprintln!("lever daemon: {e}; the daemon goes on without D-Bus");
            }
        })
}
