//! GameMode's model: registered games by pid, each holding the target's
//! `game` use case through the daemon for as long as the game's process
//! runs (the daemon watches its pidfd in its event loop: no thread here),
//! and GameMode's integer answers (0 success, -1 error; `QueryStatus` 0
//! inactive, 1 active, 2 active and registered for that pid).
//!
//! Who may do what is the daemon's decision, made for the bus caller: a
//! caller registers only processes it owns (checked through a pidfd, so a
//! recycled pid cannot be claimed) and unregisters only games of its own
//! uid, unless it is a system client; each game counts against the
//! caller's caps.

use crate::backend::{Backend, Caller};
use lever_client::{ClientError, Handle};
use lever_procwatch::PidFd;
use std::collections::BTreeMap;
use std::time::Duration;

/// GameMode's "success".
pub const OK: i32 = 0;
/// GameMode's "error" (unknown pid, already registered, daemon refused).
pub const ERROR: i32 = -1;
/// `QueryStatus`: no game registered.
pub const INACTIVE: i32 = 0;
/// `QueryStatus`: games registered, but not this one.
pub const ACTIVE: i32 = 1;
/// `QueryStatus`: this game is registered.
pub const ACTIVE_REGISTERED: i32 = 2;

/// Why a GameMode call answers [`ERROR`].
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    /// The game is registered already.
    #[error("game {0} is registered already")]
    AlreadyRegistered(i32),
    /// No process has that pid.
    #[error("no process {0} is running")]
    NoProcess(i32),
    /// The game is not registered.
    #[error("game {0} is not registered")]
    NotRegistered(i32),
    /// The Lever daemon refused the use case or could not be reached.
    #[error("lever daemon: {0}")]
    Daemon(#[from] ClientError),
}

/// One registered game.
#[derive(Debug)]
pub struct Game {
    /// Who registered it (the game itself, or the `ByPID` caller), as the
    /// call said (GameMode's `requester` argument; not trusted for anything).
    pub requester: i32,
    /// The daemon's handle of its `game` use case.
    pub handle: Handle,
    /// The game's process: readable once it exits (the daemon has ended
    /// its use case by then; this is how the list learns it).
    pidfd: PidFd,
}

/// The registered games.
#[derive(Debug, Default)]
pub struct Games {
    games: BTreeMap<i32, Game>,
}

impl Games {
    /// No games.
    pub fn new() -> Games {
        Games::default()
    }

    /// `RegisterGame` / `RegisterGameByPID`: trigger the `game` use case
    /// for `game`, as `caller`, while its process runs.
    pub fn register(
        &mut self,
        backend: &mut dyn Backend,
        caller: &Caller,
        requester: i32,
        game: i32,
    ) -> Result<(), GameError> {
        self.reap();
        if self.games.contains_key(&game) {
            return Err(GameError::AlreadyRegistered(game));
        }
        // The pidfd first: a pid that is no live process is refused here,
        // and the daemon checks the same process (its own pidfd) is the
        // caller's.
        let pidfd = PidFd::open(game).map_err(|_| GameError::NoProcess(game))?;
        let pid = u32::try_from(game).map_err(|_| GameError::NoProcess(game))?;
        let handle = backend.start_game(caller, pid)?;
        self.games.insert(
            game,
            Game {
                requester,
                handle,
                pidfd,
            },
        );
        Ok(())
    }

    /// `UnregisterGame` / `UnregisterGameByPID`: end `game`'s use case, as
    /// `caller` (the daemon refuses a game of another uid to a third-party
    /// caller; then the game stays registered).
    pub fn unregister(
        &mut self,
        backend: &mut dyn Backend,
        caller: &Caller,
        game: i32,
    ) -> Result<(), GameError> {
        self.reap();
        let g = self
            .games
            .get(&game)
            .ok_or(GameError::NotRegistered(game))?;
        backend.release(caller, g.handle)?;
        self.games.remove(&game);
        Ok(())
    }

    /// Forget the games whose process exited (a zero-timeout `poll` of
    /// each pidfd; the daemon released their use cases already). Returns
    /// how many were forgotten.
    pub fn reap(&mut self) -> usize {
        let exited: Vec<i32> = self
            .games
            .iter()
            .filter(|(_, g)| g.pidfd.wait_exit(Duration::ZERO).unwrap_or(true))
            .map(|(pid, _)| *pid)
            .collect();
        for pid in &exited {
            self.games.remove(pid);
        }
        exited.len()
    }

    /// `QueryStatus`: [`INACTIVE`], [`ACTIVE`] or [`ACTIVE_REGISTERED`].
    pub fn query(&mut self, game: i32) -> i32 {
        self.reap();
        if self.games.contains_key(&game) {
            ACTIVE_REGISTERED
        } else if self.games.is_empty() {
            INACTIVE
        } else {
            ACTIVE
        }
    }

    /// `ClientCount`: the registered games.
    pub fn count(&mut self) -> i32 {
        self.reap();
        i32::try_from(self.games.len()).unwrap_or(i32::MAX)
    }
}

/// GameMode's answer for a register/unregister result.
pub fn code<T>(result: &Result<T, GameError>) -> i32 {
    if result.is_ok() {
        OK
    } else {
        ERROR
    }
}
