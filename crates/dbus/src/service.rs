//! The zbus side: the two ppd objects and GameMode's on one connection,
//! a thread that ends holds whose callers left the bus, one per game that
//! waits for its process to exit, and one that emits `PropertiesChanged`
//! when what the daemon reports changes (whoever changed it).

use crate::backend::Backend;
use crate::gamemode::{self, GameError, Games};
use crate::ppd::{Holds, PpdError, PpdProfile, Released};
use crate::DbusError;
use lever_procwatch::PidFd;
use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use zbus::fdo;
use zbus::names::BusName;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedValue, Str};

/// power-profiles-daemon's name, interface and path today.
pub const PPD_NAME: &str = "org.freedesktop.UPower.PowerProfiles";
/// Its object path.
pub const PPD_PATH: &str = "/org/freedesktop/UPower/PowerProfiles";
/// Its name and interface before 0.20 (what `powerprofilesctl` of Debian 12 calls).
pub const PPD_LEGACY_NAME: &str = "net.hadess.PowerProfiles";
/// The legacy object path.
pub const PPD_LEGACY_PATH: &str = "/net/hadess/PowerProfiles";
/// GameMode's name and interface.
pub const GAMEMODE_NAME: &str = "com.feralinteractive.GameMode";
/// GameMode's object path.
pub const GAMEMODE_PATH: &str = "/com/feralinteractive/GameMode";

/// How often the notifier re-reads the daemon's profiles, to see changes
/// made by other Lever clients (`lever profile apply`).
const POLL: Duration = Duration::from_secs(1);

/// What the services share: Lever, the holds and the games.
pub(crate) struct State {
    backend: Box<dyn Backend>,
    holds: Holds,
    games: Games,
}

/// Work for the notifier thread, which owns every emission so that no
/// D-Bus method waits on the bus.
enum Notice {
    /// Re-read and emit what changed.
    Refresh,
    /// Tell a holder its hold was cancelled.
    Released(Released),
}

/// The state and the notifier's queue, shared by the interfaces.
#[derive(Clone)]
pub(crate) struct Shared {
    state: Arc<Mutex<State>>,
    notices: Sender<Notice>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in another handler leaves consistent maps behind (every
        // change is one insert or remove), so a poisoned lock is usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn refresh(&self) {
        // The notifier only ends with the connection; nothing to do then.
        let _ = self.notices.send(Notice::Refresh);
    }

    fn active(&self) -> fdo::Result<String> {
        let mut s = self.lock();
        let State { backend, holds, .. } = &mut *s;
        Ok(holds
            .active(backend.as_mut())
            .map_err(ppd_error)?
            .ppd_name()
            .to_string())
    }

    fn holds_list(&self) -> Vec<HashMap<String, OwnedValue>> {
        self.lock()
            .holds
            .list()
            .map(|(_, h)| {
                dict(&[
                    ("Profile", h.profile.ppd_name()),
                    ("Reason", &h.reason),
                    ("ApplicationId", &h.application_id),
                ])
            })
            .collect()
    }

    fn game_count(&self) -> i32 {
        self.lock().games.count()
    }

    fn register_game(&self, requester: i32, game: i32) -> i32 {
        // The pidfd first: a pid that is not a live process is refused,
        // and the fd keeps a recycled pid from being mistaken for the game.
        let Ok(pidfd) = PidFd::open(game) else {
            return gamemode::ERROR;
        };
        let result = {
            let mut s = self.lock();
            let State { backend, games, .. } = &mut *s;
            games.register(backend.as_mut(), requester, game)
        };
        if let Ok(generation) = result {
            let shared = self.clone();
            std::thread::spawn(move || shared.watch_game(pidfd, generation));
        }
        self.refresh();
        gamemode::code(&result)
    }

    fn unregister_game(&self, game: i32) -> i32 {
        let result = {
            let mut s = self.lock();
            let State { backend, games, .. } = &mut *s;
            games.unregister(backend.as_mut(), game)
        };
        self.refresh();
        gamemode::code(&result)
    }

    /// Wait for the game's process to exit, then end its use case.
    fn watch_game(&self, pidfd: PidFd, generation: u64) {
        loop {
            match pidfd.wait_exit(Duration::from_secs(3600)) {
                Ok(true) | Err(_) => break,
                Ok(false) => continue,
            }
        }
        let result: Result<bool, GameError> = {
            let mut s = self.lock();
            let State { backend, games, .. } = &mut *s;
            games.exited(backend.as_mut(), pidfd.pid(), generation)
        };
        if let Err(e) = result {
            eprintln!("lever daemon: D-Bus: ending game {}: {e}", pidfd.pid());
        }
        self.refresh();
    }

    /// A bus name left: end the holds it had.
    fn sender_left(&self, name: &str) {
        let mut s = self.lock();
        if !s.holds.has_sender(name) {
            return;
        }
        let State { backend, holds, .. } = &mut *s;
        if let Err(e) = holds.sender_left(backend.as_mut(), name) {
            eprintln!("lever daemon: D-Bus: releasing the holds of {name}: {e}");
        }
        drop(s);
        self.refresh();
    }
}

/// An a{sv} of strings.
fn dict(pairs: &[(&str, &str)]) -> HashMap<String, OwnedValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), OwnedValue::from(Str::from(v.to_string()))))
        .collect()
}

fn ppd_error(e: PpdError) -> fdo::Error {
    match e {
        PpdError::InvalidArgs(m) => fdo::Error::InvalidArgs(m),
        e => fdo::Error::Failed(e.to_string()),
    }
}

/// Generates ppd's interface under one name: the two names are the same
/// interface on two paths (ppd answers on both since 0.20).
macro_rules! ppd_interface {
    ($ty:ident, $name:tt) => {
        /// power-profiles-daemon's interface under one of its names.
        pub(crate) struct $ty(pub(crate) Shared);

        #[zbus::interface(name = $name)]
        impl $ty {
            /// Hold power-saver or performance until released, the caller
            /// leaves the bus, or `ActiveProfile` is set.
            fn hold_profile(
                &self,
                profile: &str,
                reason: &str,
                application_id: &str,
                #[zbus(header)] header: zbus::message::Header<'_>,
            ) -> fdo::Result<u32> {
                let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
                let cookie = {
                    let mut s = self.0.lock();
                    let State { backend, holds, .. } = &mut *s;
                    holds
                        .hold(backend.as_mut(), profile, reason, application_id, &sender)
                        .map_err(ppd_error)?
                };
                self.0.refresh();
                Ok(cookie)
            }

            /// End a hold.
            fn release_profile(&self, cookie: u32) -> fdo::Result<()> {
                {
                    let mut s = self.0.lock();
                    let State { backend, holds, .. } = &mut *s;
                    holds.release(backend.as_mut(), cookie).map_err(ppd_error)?;
                }
                self.0.refresh();
                Ok(())
            }

            /// Sent to a holder whose hold a change of `ActiveProfile` cancelled.
            #[zbus(signal)]
            async fn profile_released(emitter: &SignalEmitter<'_>, cookie: u32)
                -> zbus::Result<()>;

            /// The profile in effect.
            #[zbus(property)]
            fn active_profile(&self) -> fdo::Result<String> {
                self.0.active()
            }

            /// The user's choice: the daemon's base profile; cancels the holds.
            #[zbus(property)]
            fn set_active_profile(&mut self, profile: String) -> fdo::Result<()> {
                let released = {
                    let mut s = self.0.lock();
                    let State { backend, holds, .. } = &mut *s;
                    holds
                        .set_active(backend.as_mut(), &profile)
                        .map_err(ppd_error)?
                };
                for r in released {
                    let _ = self.0.notices.send(Notice::Released(r));
                }
                self.0.refresh();
                Ok(())
            }

            /// The three profiles, in ppd's order, all driven by Lever.
            #[zbus(property)]
            fn profiles(&self) -> Vec<HashMap<String, OwnedValue>> {
                PpdProfile::ALL
                    .iter()
                    .map(|p| {
                        dict(&[
                            ("Profile", p.ppd_name()),
                            ("Driver", "lever"),
                            ("PlatformDriver", "lever"),
                            ("CpuDriver", "lever"),
                        ])
                    })
                    .collect()
            }

            /// The live holds.
            #[zbus(property)]
            fn active_profile_holds(&self) -> Vec<HashMap<String, OwnedValue>> {
                self.0.holds_list()
            }

            /// Never degraded: Lever has no lap or temperature sensor input.
            #[zbus(property)]
            fn performance_degraded(&self) -> String {
                String::new()
            }

            /// Deprecated in ppd since 0.9; kept empty for old clients.
            #[zbus(property)]
            fn performance_inhibited(&self) -> String {
                String::new()
            }

            /// No ppd actions (they are ppd's own device tweaks).
            #[zbus(property)]
            fn actions(&self) -> Vec<String> {
                Vec::new()
            }

            /// Lever's version.
            #[zbus(property)]
            fn version(&self) -> String {
                format!("lever {}", env!("CARGO_PKG_VERSION"))
            }
        }
    };
}

ppd_interface!(PowerProfiles, "org.freedesktop.UPower.PowerProfiles");
ppd_interface!(LegacyPowerProfiles, "net.hadess.PowerProfiles");

/// GameMode's interface.
pub(crate) struct GameMode(pub(crate) Shared);

#[zbus::interface(name = "com.feralinteractive.GameMode")]
impl GameMode {
    /// Register the calling game.
    fn register_game(&self, pid: i32) -> i32 {
        self.0.register_game(pid, pid)
    }

    /// Unregister the calling game.
    fn unregister_game(&self, pid: i32) -> i32 {
        self.0.unregister_game(pid)
    }

    /// 0 inactive, 1 active, 2 active and this game registered.
    fn query_status(&self, pid: i32) -> i32 {
        self.0.lock().games.query(pid)
    }

    /// Register `game` on behalf of `caller`.
    #[zbus(name = "RegisterGameByPID")]
    fn register_game_by_pid(&self, caller: i32, game: i32) -> i32 {
        self.0.register_game(caller, game)
    }

    /// Unregister `game` on behalf of `caller`.
    #[zbus(name = "UnregisterGameByPID")]
    fn unregister_game_by_pid(&self, _caller: i32, game: i32) -> i32 {
        self.0.unregister_game(game)
    }

    /// `QueryStatus` for `game`, asked by `caller`.
    #[zbus(name = "QueryStatusByPID")]
    fn query_status_by_pid(&self, _caller: i32, game: i32) -> i32 {
        self.0.lock().games.query(game)
    }

    /// The registered games.
    #[zbus(property)]
    fn client_count(&self) -> i32 {
        self.0.game_count()
    }
}

/// Serve on `conn`'s bus until the connection ends. `backend` is Lever.
pub(crate) fn serve(
    builder: zbus::blocking::connection::Builder<'static>,
    backend: Box<dyn Backend>,
) -> Result<(), DbusError> {
    let (tx, rx) = mpsc::channel();
    let shared = Shared {
        state: Arc::new(Mutex::new(State {
            backend,
            holds: Holds::new(),
            games: Games::new(),
        })),
        notices: tx,
    };
    let conn = builder
        .serve_at(PPD_PATH, PowerProfiles(shared.clone()))?
        .serve_at(PPD_LEGACY_PATH, LegacyPowerProfiles(shared.clone()))?
        .serve_at(GAMEMODE_PATH, GameMode(shared.clone()))?
        .name(PPD_NAME)?
        .name(PPD_LEGACY_NAME)?
        .name(GAMEMODE_NAME)?
        .build()?;
    let watcher = {
        let conn = conn.clone();
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("lever-dbus-names".into())
            .spawn(move || watch_names(&conn, &shared))?
    };
    notify(&conn, &shared, rx);
    let _ = watcher.join();
    Ok(())
}

/// End the holds of every bus name that leaves.
fn watch_names(conn: &zbus::blocking::Connection, shared: &Shared) {
    let changes = zbus::blocking::fdo::DBusProxy::new(conn)
        .and_then(|proxy| proxy.receive_name_owner_changed());
    let changes = match changes {
        Ok(c) => c,
        Err(e) => {
            eprintln!("lever daemon: D-Bus: cannot watch callers leaving the bus: {e}");
            return;
        }
    };
    for change in changes {
        let Ok(args) = change.args() else { continue };
        if args.new_owner().is_none() {
            shared.sender_left(args.name().as_str());
        }
    }
}

/// What was last announced, to emit only changes.
#[derive(Default, PartialEq)]
struct Announced {
    active: Option<String>,
    holds: Vec<u32>,
    games: i32,
}

/// Emit signals: on each notice, and every [`POLL`] for changes made by
/// other Lever clients.
fn notify(conn: &zbus::blocking::Connection, shared: &Shared, notices: Receiver<Notice>) {
    let mut last = Announced::default();
    loop {
        match notices.recv_timeout(POLL) {
            Ok(Notice::Released(r)) => released(conn, r),
            Ok(Notice::Refresh) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let active = shared.active().ok();
        // One statement per lock: a guard lives to the end of its statement.
        let holds = shared.lock().holds.list().map(|(c, _)| c).collect();
        let games = shared.game_count();
        let now = Announced {
            active,
            holds,
            games,
        };
        if now != last {
            if let Err(e) = announce(conn, &now, &last) {
                eprintln!("lever daemon: D-Bus: cannot emit PropertiesChanged: {e}");
            }
            last = now;
        }
    }
}

fn released(conn: &zbus::blocking::Connection, r: Released) {
    let sent = BusName::try_from(r.sender.as_str())
        .map_err(zbus::Error::from)
        .and_then(|dest| {
            let mut result = Ok(());
            for path in [PPD_PATH, PPD_LEGACY_PATH] {
                let emitter = SignalEmitter::new(conn.inner(), path)?.set_destination(dest.clone());
                let sent = if path == PPD_PATH {
                    zbus::block_on(PowerProfiles::profile_released(&emitter, r.cookie))
                } else {
                    zbus::block_on(LegacyPowerProfiles::profile_released(&emitter, r.cookie))
                };
                result = result.and(sent);
            }
            result
        });
    if let Err(e) = sent {
        eprintln!(
            "lever daemon: D-Bus: cannot send ProfileReleased to {}: {e}",
            r.sender
        );
    }
}

fn announce(
    conn: &zbus::blocking::Connection,
    now: &Announced,
    last: &Announced,
) -> zbus::Result<()> {
    let server = conn.object_server();
    let ppd = server.interface::<_, PowerProfiles>(PPD_PATH)?;
    let legacy = server.interface::<_, LegacyPowerProfiles>(PPD_LEGACY_PATH)?;
    if now.active != last.active {
        zbus::block_on(ppd.get().active_profile_changed(ppd.signal_emitter()))?;
        zbus::block_on(legacy.get().active_profile_changed(legacy.signal_emitter()))?;
    }
    if now.holds != last.holds {
        zbus::block_on(ppd.get().active_profile_holds_changed(ppd.signal_emitter()))?;
        zbus::block_on(
            legacy
                .get()
                .active_profile_holds_changed(legacy.signal_emitter()),
        )?;
    }
    if now.games != last.games {
        let gm = server.interface::<_, GameMode>(GAMEMODE_PATH)?;
        zbus::block_on(gm.get().client_count_changed(gm.signal_emitter()))?;
    }
    Ok(())
}
