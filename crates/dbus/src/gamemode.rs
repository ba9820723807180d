//! GameMode's model: registered games by pid, each holding the target's
//! `game` use case through the daemon, and GameMode's integer answers
//! (0 success, -1 error; `QueryStatus` 0 inactive, 1 active, 2 active and
//! registered for that pid).

use crate::backend::Backend;
use lever_client::{ClientError, Handle};
use std::collections::BTreeMap;

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
    /// The game is not registered.
    #[error("game {0} is not registered")]
    NotRegistered(i32),
    /// The Lever daemon refused the use case or could not be reached.
    #[error("lever daemon: {0}")]
    Daemon(#[from] ClientError),
}

/// One registered game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// Who registered it (the game itself, or the `ByPID` caller).
    pub requester: i32,
    /// The daemon's handle of its `game` use case.
    pub handle: Handle,
    /// Which registration of this pid it is: the exit watcher of an
    /// earlier registration must not end a later one.
    pub generation: u64,
}

/// The registered games.
#[derive(Debug, Default)]
pub struct Games {
    games: BTreeMap<i32, Game>,
    generations: u64,
}

impl Games {
    /// No games.
    pub fn new() -> Games {
        Games::default()
    }

    /// `RegisterGame` / `RegisterGameByPID`: trigger the `game` use case
    /// for `game`; returns the registration's generation (for
    /// [`Games::exited`]).
    pub fn register(
        &mut self,
        backend: &mut dyn Backend,
        requester: i32,
        game: i32,
    ) -> Result<u64, GameError> {
        if self.games.contains_key(&game) {
            return Err(GameError::AlreadyRegistered(game));
        }
        let handle = backend.start_game()?;
        self.generations += 1;
        let generation = self.generations;
        self.games.insert(
            game,
            Game {
                requester,
                handle,
                generation,
            },
        );
        Ok(generation)
    }

    /// `UnregisterGame` / `UnregisterGameByPID`: end `game`'s use case.
    pub fn unregister(&mut self, backend: &mut dyn Backend, game: i32) -> Result<(), GameError> {
        let g = self
            .games
            .remove(&game)
            .ok_or(GameError::NotRegistered(game))?;
        backend.release(g.handle)?;
        Ok(())
    }

    /// The process `game` exited: end its use case if registration
    /// `generation` is still the live one. True if it was.
    pub fn exited(
        &mut self,
        backend: &mut dyn Backend,
        game: i32,
        generation: u64,
    ) -> Result<bool, GameError> {
        match self.games.get(&game) {
            Some(g) if g.generation == generation => {
                self.unregister(backend, game)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// `QueryStatus`: [`INACTIVE`], [`ACTIVE`] or [`ACTIVE_REGISTERED`].
    pub fn query(&self, game: i32) -> i32 {
        if self.games.contains_key(&game) {
            ACTIVE_REGISTERED
        } else if self.games.is_empty() {
            INACTIVE
        } else {
            ACTIVE
        }
    }

    /// `ClientCount`: the registered games.
    pub fn count(&self) -> i32 {
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
