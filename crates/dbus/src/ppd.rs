//! power-profiles-daemon's model: its three profile names and their Lever
//! profiles, and the holds (`HoldProfile` cookies) with who asked for them.
//! Which profile wins is the daemon's decision (power-saver beats
//! performance, as in ppd); this keeps what only the D-Bus side knows: the
//! cookie, the reason and application id, and the caller's bus name so the
//! hold ends when that caller leaves the bus.

use crate::backend::{Backend, Caller, Profiles};
use lever_client::{ClientError, Handle};
use std::collections::BTreeMap;

/// One of ppd's profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PpdProfile {
    /// `power-saver` → Lever's `powersave`.
    PowerSaver,
    /// `balanced` → Lever's `balanced`.
    Balanced,
    /// `performance` → Lever's `performance`.
    Performance,
}

impl PpdProfile {
    /// Every profile, in the order ppd lists them in `Profiles`.
    pub const ALL: [PpdProfile; 3] = [
        PpdProfile::PowerSaver,
        PpdProfile::Balanced,
        PpdProfile::Performance,
    ];

    /// ppd's name (`power-saver`).
    pub fn ppd_name(self) -> &'static str {
        match self {
            PpdProfile::PowerSaver => "power-saver",
            PpdProfile::Balanced => "balanced",
            PpdProfile::Performance => "performance",
        }
    }

    /// The built-in Lever profile it applies (`docs/profiles.md`).
    pub fn lever_name(self) -> &'static str {
        match self {
            PpdProfile::PowerSaver => "powersave",
            PpdProfile::Balanced => "balanced",
            PpdProfile::Performance => "performance",
        }
    }

    /// From ppd's name; `None` for anything else.
    pub fn from_ppd(name: &str) -> Option<PpdProfile> {
        PpdProfile::ALL.into_iter().find(|p| p.ppd_name() == name)
    }

    /// What ppd shows for the Lever profile in effect. No profile is ppd's
    /// default, `balanced`; a Lever profile ppd has no name for (`rt`,
    /// `memory-*`, a file) also shows as `balanced`, the neutral choice,
    /// since `ActiveProfile` must be one of the three.
    pub fn from_lever(effective: Option<&str>) -> PpdProfile {
        PpdProfile::ALL
            .into_iter()
            .find(|p| Some(p.lever_name()) == effective)
            .unwrap_or(PpdProfile::Balanced)
    }
}

/// A refused ppd call, with the D-Bus error it becomes.
#[derive(Debug, thiserror::Error)]
pub enum PpdError {
    /// Not one of ppd's profile names (or `balanced` for a hold).
    #[error("{0}")]
    InvalidArgs(String),
    /// No hold with that cookie.
    #[error("no hold with cookie {0}")]
    NoSuchCookie(u32),
    /// The Lever daemon refused or could not be reached.
    #[error("lever daemon: {0}")]
    Daemon(#[from] ClientError),
}

/// One `HoldProfile`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// The profile held (power-saver or performance).
    pub profile: PpdProfile,
    /// The caller's reason.
    pub reason: String,
    /// The caller's application id.
    pub application_id: String,
    /// The caller's unique bus name (`:1.42`): the hold ends when it leaves.
    pub sender: String,
    /// The daemon's handle of the hold.
    pub handle: Handle,
}

/// A hold that ended, and whether its holder must be told
/// (`ProfileReleased` goes only to holders whose hold was cancelled by a
/// change of `ActiveProfile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// The hold's cookie.
    pub cookie: u32,
    /// Its holder's unique bus name.
    pub sender: String,
}

/// The live holds, by cookie.
#[derive(Debug, Default)]
pub struct Holds {
    holds: BTreeMap<u32, Hold>,
    last_cookie: u32,
}

impl Holds {
    /// No holds.
    pub fn new() -> Holds {
        Holds::default()
    }

    /// `ActiveProfile`: the profile in effect, as ppd names it.
    pub fn active(&self, backend: &mut dyn Backend) -> Result<PpdProfile, PpdError> {
        let Profiles { effective, .. } = backend.profiles()?;
        Ok(PpdProfile::from_lever(effective.as_deref()))
    }

    /// Setting `ActiveProfile`: the user's choice becomes the base profile
    /// and, as in ppd, cancels every hold. Returns the cancelled holds,
    /// whose holders get `ProfileReleased`.
    pub fn set_active(
        &mut self,
        backend: &mut dyn Backend,
        caller: &Caller,
        name: &str,
    ) -> Result<Vec<Released>, PpdError> {
        let profile = PpdProfile::from_ppd(name).ok_or_else(|| {
            PpdError::InvalidArgs(format!(
                "invalid profile name '{name}': one of power-saver, balanced, performance"
            ))
        })?;
        backend.set_base(caller, profile.lever_name())?;
        // The daemon took the caller's change (a system caller): the
        // cancelled holds are ended on the service's authority.
        let mut released = Vec::with_capacity(self.holds.len());
        for (cookie, hold) in std::mem::take(&mut self.holds) {
            backend.cancel(hold.handle)?;
            released.push(Released {
                cookie,
                sender: hold.sender,
            });
        }
        Ok(released)
    }

    /// `HoldProfile`: hold `profile` for `sender`; returns the cookie.
    pub fn hold(
        &mut self,
        backend: &mut dyn Backend,
        caller: &Caller,
        name: &str,
        reason: &str,
        application_id: &str,
    ) -> Result<u32, PpdError> {
        let profile = match PpdProfile::from_ppd(name) {
            Some(p @ (PpdProfile::PowerSaver | PpdProfile::Performance)) => p,
            _ => {
                return Err(PpdError::InvalidArgs(format!(
                    "only profiles 'power-saver' and 'performance' can be held, not '{name}'"
                )))
            }
        };
        let handle = backend.hold(caller, profile.lever_name())?;
        // Cookies are never reused while the service runs, so a stale
        // ReleaseProfile cannot end someone else's hold; 0 is never given.
        self.last_cookie = self.last_cookie.wrapping_add(1).max(1);
        let cookie = self.last_cookie;
        self.holds.insert(
            cookie,
            Hold {
                profile,
                reason: reason.to_string(),
                application_id: application_id.to_string(),
                sender: caller.name.clone(),
                handle,
            },
        );
        Ok(cookie)
    }

    /// `ReleaseProfile`: end the hold `cookie`, as `caller` (the daemon
    /// lets only the holder, or root, end it).
    pub fn release(
        &mut self,
        backend: &mut dyn Backend,
        caller: &Caller,
        cookie: u32,
    ) -> Result<Released, PpdError> {
        let hold = self
            .holds
            .get(&cookie)
            .ok_or(PpdError::NoSuchCookie(cookie))?;
        backend.release(caller, hold.handle)?;
        let hold = self
            .holds
            .remove(&cookie)
            .ok_or(PpdError::NoSuchCookie(cookie))?;
        Ok(Released {
            cookie,
            sender: hold.sender,
        })
    }

    /// `sender` left the bus: its connection to the daemon is closed, which
    /// ends its holds there. Returns their cookies.
    pub fn sender_left(&mut self, backend: &mut dyn Backend, sender: &str) -> Vec<u32> {
        let cookies: Vec<u32> = self
            .holds
            .iter()
            .filter(|(_, h)| h.sender == sender)
            .map(|(c, _)| *c)
            .collect();
        for cookie in &cookies {
            self.holds.remove(cookie);
        }
        backend.caller_left(sender);
        cookies
    }

    /// The live holds, oldest first (`ActiveProfileHolds`).
    pub fn list(&self) -> impl Iterator<Item = (u32, &Hold)> {
        self.holds.iter().map(|(c, h)| (*c, h))
    }

    /// Whether `sender` holds anything (the watcher ignores everyone else).
    pub fn has_sender(&self, sender: &str) -> bool {
        self.holds.values().any(|h| h.sender == sender)
    }
}
