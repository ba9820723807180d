//! The zbus side: the two ppd objects and GameMode's on one connection,
//! a thread that ends what callers held when they leave the bus, and one
//! that emits `PropertiesChanged` when what the daemon reports changes
//! (whoever changed it). Games need no thread: the daemon watches their
//! processes.
//!
//! Every call is made as its caller: the bus daemon says who sent it
//! (`GetConnectionCredentials`: unix uid and pid, cached per unique name
//! until the name leaves), and the backend speaks to Lever as that caller.
//! What Lever refuses it is refused here too — `AccessDenied` for a
//! permission, `LimitsExceeded` for a cap — with the daemon's reason.

use crate::backend::{Backend, Caller};
use crate::gamemode::{self, Games};
use crate::ppd::{Holds, PpdError, PpdProfile, Released};
use crate::DbusError;
use lever_client::{ClientError, Code};
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
    /// Callers seen, by unique bus name (forgotten when the name leaves).
    callers: HashMap<String, Caller>,
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

    /// Who sent the message `header` is of, as the bus daemon says.
    async fn caller(
        &self,
        conn: &zbus::Connection,
        header: Option<&zbus::message::Header<'_>>,
    ) -> fdo::Result<Caller> {
        let sender = header
            .and_then(|h| h.sender())
            .map(|s| s.to_string())
            .ok_or_else(|| {
                fdo::Error::AccessDenied("the message has no sender: who called is unknown".into())
            })?;
        if let Some(c) = self.lock().callers.get(&sender) {
            return Ok(c.clone());
        }
        let proxy = zbus::fdo::DBusProxy::new(conn).await?;
        let name = BusName::try_from(sender.as_str()).map_err(zbus::Error::from)?;
        let creds = proxy.get_connection_credentials(name).await?;
        let (Some(uid), Some(pid)) = (creds.unix_user_id(), creds.process_id()) else {
            return Err(fdo::Error::AccessDenied(format!(
                "the bus gives no unix uid and pid for {sender}: who called is unknown"
            )));
        };
        let caller = Caller {
            name: sender.clone(),
            uid,
            pid,
        };
        self.lock().callers.insert(sender, caller.clone());
        Ok(caller)
    }

    /// A GameMode call as its caller: `call`'s answer, or GameMode's
    /// error when the bus cannot say who called.
    async fn as_caller(
        &self,
        conn: &zbus::Connection,
        header: &zbus::message::Header<'_>,
        call: impl FnOnce(&Shared, &Caller) -> i32,
    ) -> i32 {
        match self.caller(conn, Some(header)).await {
            Ok(caller) => call(self, &caller),
            Err(_) => gamemode::ERROR,
        }
    }

    fn register_game(&self, caller: &Caller, requester: i32, game: i32) -> i32 {
        let result = {
            let mut s = self.lock();
            let State { backend, games, .. } = &mut *s;
            games.register(backend.as_mut(), caller, requester, game)
        };
        if let Err(e) = &result {
            eprintln!(
                "lever daemon: D-Bus: RegisterGame({game}) from uid {} pid {}: {e}",
                caller.uid, caller.pid
            );
        }
        self.refresh();
        gamemode::code(&result)
    }

    fn unregister_game(&self, caller: &Caller, game: i32) -> i32 {
        let result = {
            let mut s = self.lock();
            let State { backend, games, .. } = &mut *s;
            games.unregister(backend.as_mut(), caller, game)
        };
        self.refresh();
        gamemode::code(&result)
    }

    /// A bus name left: end what it held through its connection to Lever,
    /// and forget who it was.
    fn sender_left(&self, name: &str) {
        let mut s = self.lock();
        if s.callers.remove(name).is_none() {
            return;
        }
        let State { backend, holds, .. } = &mut *s;
        let ended = holds.sender_left(backend.as_mut(), name);
        drop(s);
        if !ended.is_empty() {
            self.refresh();
        }
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
        PpdError::Daemon(e) => daemon_error(e),
        e => fdo::Error::Failed(e.to_string()),
    }
}

/// What Lever refused, as the D-Bus error a desktop client understands.
fn daemon_error(e: ClientError) -> fdo::Error {
    match &e {
        ClientError::Refused {
            code: Code::NotPermitted,
            message,
        } => fdo::Error::AccessDenied(format!("lever daemon: {message}")),
        ClientError::Refused {
            code: Code::Limit,
            message,
        } => fdo::Error::LimitsExceeded(format!("lever daemon: {message}")),
        _ => fdo::Error::Failed(format!("lever daemon: {e}")),
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
            async fn hold_profile(
                &self,
                profile: &str,
                reason: &str,
                application_id: &str,
                #[zbus(header)] header: zbus::message::Header<'_>,
                #[zbus(connection)] conn: &zbus::Connection,
            ) -> fdo::Result<u32> {
                let caller = self.0.caller(conn, Some(&header)).await?;
                let cookie = {
                    let mut s = self.0.lock();
                    let State { backend, holds, .. } = &mut *s;
                    holds
                        .hold(backend.as_mut(), &caller, profile, reason, application_id)
                        .map_err(ppd_error)?
                };
                self.0.refresh();
                Ok(cookie)
            }

            /// End a hold (the holder's own, or any for root).
            async fn release_profile(
                &self,
                cookie: u32,
                #[zbus(header)] header: zbus::message::Header<'_>,
                #[zbus(connection)] conn: &zbus::Connection,
            ) -> fdo::Result<()> {
                let caller = self.0.caller(conn, Some(&header)).await?;
                {
                    let mut s = self.0.lock();
                    let State { backend, holds, .. } = &mut *s;
                    holds
                        .release(backend.as_mut(), &caller, cookie)
                        .map_err(ppd_error)?;
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

            /// The user's choice: the daemon's base profile; cancels the
            /// holds. A system caller's only (root or the system group), as
            /// on Lever's socket.
            #[zbus(property)]
            async fn set_active_profile(
                &mut self,
                profile: String,
                #[zbus(header)] header: Option<zbus::message::Header<'_>>,
                #[zbus(connection)] conn: &zbus::Connection,
            ) -> fdo::Result<()> {
                let caller = self.0.caller(conn, header.as_ref()).await?;
                let released = {
                    let mut s = self.0.lock();
                    let State { backend, holds, .. } = &mut *s;
                    holds
                        .set_active(backend.as_mut(), &caller, &profile)
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
    /// Register the calling game (a process of the caller's, unless it is
    /// a system client).
    async fn register_game(
        &self,
        pid: i32,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> i32 {
        self.0
            .as_caller(conn, &header, |s, c| s.register_game(c, pid, pid))
            .await
    }

    /// Unregister the calling game (one of the caller's uid, unless it is
    /// a system client).
    async fn unregister_game(
        &self,
        pid: i32,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> i32 {
        self.0
            .as_caller(conn, &header, |s, c| s.unregister_game(c, pid))
            .await
    }

    /// 0 inactive, 1 active, 2 active and this game registered.
    fn query_status(&self, pid: i32) -> i32 {
        self.0.lock().games.query(pid)
    }

    /// Register `game` on behalf of `caller` (the bus's caller is who is
    /// checked; the `caller` argument is only recorded).
    #[zbus(name = "RegisterGameByPID")]
    async fn register_game_by_pid(
        &self,
        caller: i32,
        game: i32,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> i32 {
        self.0
            .as_caller(conn, &header, |s, who| s.register_game(who, caller, game))
            .await
    }

    /// Unregister `game` on behalf of `caller` (checked as the bus's caller).
    #[zbus(name = "UnregisterGameByPID")]
    async fn unregister_game_by_pid(
        &self,
        _caller: i32,
        game: i32,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> i32 {
        self.0
            .as_caller(conn, &header, |s, who| s.unregister_game(who, game))
            .await
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
            callers: HashMap::new(),
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
