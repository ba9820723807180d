//! A fake Lever for the D-Bus services: it records what was asked and
//! decides the profile in effect as the daemon does (a power-saver hold
//! beats a performance hold, any hold beats the base).
#![allow(dead_code)]

use lever_client::{ClientError, Code, Handle};
use lever_dbus::{Backend, Caller, Profiles};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the fake daemon holds.
#[derive(Debug, Default)]
pub struct FakeState {
    pub base: Option<String>,
    /// (handle, profile) of live holds.
    pub holds: Vec<(u32, String)>,
    /// Handles and pids of live `game` use cases (the real daemon ends one
    /// when its process exits; the fake keeps it until released).
    pub games: Vec<(u32, u32)>,
    /// The callers of every call, in order (who the service said called).
    pub callers: Vec<Caller>,
    /// Bus names whose connection the service closed (they left).
    pub left: Vec<String>,
    /// Which caller made each hold (as the daemon, the fake ends a
    /// caller's holds when its connection closes).
    pub holders: Vec<(u32, String)>,
    last: u32,
    /// Refuse every call, as a daemon that went away.
    pub refuse: bool,
}

#[derive(Clone, Default)]
pub struct Fake(pub Arc<Mutex<FakeState>>);

impl Fake {
    pub fn state(&self) -> std::sync::MutexGuard<'_, FakeState> {
        self.0.lock().unwrap()
    }

    fn next(&self) -> Result<Handle, ClientError> {
        let mut s = self.state();
        if s.refuse {
            return Err(ClientError::Refused {
                code: Code::Internal,
                message: "fake refuses".into(),
            });
        }
        s.last += 1;
        Ok(Handle::new(s.last).unwrap())
    }
}

impl Backend for Fake {
    fn set_base(&mut self, caller: &Caller, profile: &str) -> Result<(), ClientError> {
        self.state().callers.push(caller.clone());
        self.next()?;
        self.state().base = Some(profile.to_string());
        Ok(())
    }

    fn hold(&mut self, caller: &Caller, profile: &str) -> Result<Handle, ClientError> {
        self.state().callers.push(caller.clone());
        let h = self.next()?;
        let mut s = self.state();
        s.holds.push((h.get(), profile.to_string()));
        s.holders.push((h.get(), caller.name.clone()));
        Ok(h)
    }

    fn start_game(&mut self, caller: &Caller, game: u32) -> Result<Handle, ClientError> {
        self.state().callers.push(caller.clone());
        let h = self.next()?;
        self.state().games.push((h.get(), game));
        Ok(h)
    }

    fn release(&mut self, caller: &Caller, handle: Handle) -> Result<(), ClientError> {
        self.state().callers.push(caller.clone());
        self.cancel(handle)
    }

    fn cancel(&mut self, handle: Handle) -> Result<(), ClientError> {
        let mut s = self.state();
        let before = s.holds.len() + s.games.len();
        s.holds.retain(|(h, _)| *h != handle.get());
        s.games.retain(|(h, _)| *h != handle.get());
        if before == s.holds.len() + s.games.len() {
            return Err(ClientError::Refused {
                code: Code::NoSuchRequest,
                message: format!("no request {}", handle.get()),
            });
        }
        Ok(())
    }

    fn caller_left(&mut self, name: &str) {
        let mut s = self.state();
        s.left.push(name.to_string());
        let gone: Vec<u32> = s
            .holders
            .iter()
            .filter(|(_, n)| n == name)
            .map(|(h, _)| *h)
            .collect();
        s.holds.retain(|(h, _)| !gone.contains(h));
    }

    fn profiles(&mut self) -> Result<Profiles, ClientError> {
        let s = self.state();
        let held = |name: &str| s.holds.iter().any(|(_, p)| p == name);
        let effective = if held("powersave") {
            Some("powersave".to_string())
        } else if held("performance") {
            Some("performance".to_string())
        } else {
            s.base.clone()
        };
        Ok(Profiles {
            base: s.base.clone(),
            effective,
        })
    }
}

/// Poll `f` until it is true or `timeout` passes.
pub fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A caller as the bus would report it.
pub fn caller(name: &str, uid: u32) -> Caller {
    Caller {
        name: name.to_string(),
        uid,
        pid: 1,
    }
}
