//! The process's one connection to the daemon, and what URM's calls
//! become on it (safe Rust; the C arguments are already read).
//!
//! URM's API promises only that a request was *sent*: `tuneResources`
//! returns a handle unless the request could not reach the server, and
//! the server checks it afterwards, dropping a bad one with a log line.
//! Lever's daemon checks before it answers, so a refusal is known at
//! once. To keep URM's contract, a refused request still gets a handle
//! (from [`REFUSED_BASE`] up, beyond any daemon handle): untuning or
//! retuning it succeeds and does nothing, and the daemon's reason goes to
//! syslog (as URM's server logs its own) and to `lever_urm_last_error()`.

use lever_client::{
    socket_path, Acquire, Client, ClientError, Code, Handle, Lease, Priority, Signal, SignalLease,
    UrmView,
};
use std::sync::Mutex;

/// First handle of a refused request: above every `u32` daemon handle.
pub const REFUSED_BASE: i64 = 1 << 32;

/// Why a call returns -1: it could not be sent.
#[derive(Debug)]
pub enum Error {
    /// The caller's arguments are wrong (URM's client checks them too,
    /// before sending).
    Invalid(String),
    /// The daemon could not be reached, or the connection failed.
    Unreachable(ClientError),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Invalid(m) => f.write_str(m),
            Error::Unreachable(e) => write!(f, "{e}"),
        }
    }
}

/// What the daemon made of a request that was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent<T> {
    /// Granted (or done).
    Done(T),
    /// Refused, with the reason.
    Refused(String),
}

/// One `SysResource` as read from the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `mResCode`: `ResType << 16 | ResID`.
    pub code: u32,
    /// `mResInfo`: bits 15..8 the logical cluster, 7..0 the core.
    pub info: u32,
    /// The value(s).
    pub values: Vec<i32>,
}

/// The URM client's request classes: URM makes a request from a root
/// process (effective uid 0) a system one, from anyone else a third-party
/// one; the low byte of `properties` says high (0) or low (1).
pub fn priority(properties: i32, system: bool) -> Option<Priority> {
    match (properties & 0xFF, system) {
        (0, true) => Some(Priority::SystemHigh),
        (1, true) => Some(Priority::SystemLow),
        (0, false) => Some(Priority::ThirdPartyHigh),
        (1, false) => Some(Priority::ThirdPartyLow),
        _ => None,
    }
}

/// A URM duration in ms (-1 = until released) as a lease; `None` for a
/// duration URM refuses (0, below -1) or one beyond Lever's 32-bit ms.
pub fn lease(duration_ms: i64) -> Option<Lease> {
    match duration_ms {
        -1 => Some(Lease::UntilReleased),
        d if d > 0 => u32::try_from(d).ok().map(Lease::from_ms),
        _ => None,
    }
}

/// The session of this process.
pub struct Session {
    pid: u32,
    client: Option<Client>,
    view: Option<UrmView>,
    next_refused: i64,
}

static SESSION: Mutex<Option<Session>> = Mutex::new(None);

fn unreachable(e: ClientError) -> Error {
    Error::Unreachable(e)
}

/// A daemon refusal becomes [`Sent::Refused`]; anything else stays an
/// error (the request did not get through).
fn sent<T>(r: Result<T, ClientError>) -> Result<Sent<T>, Error> {
    match r {
        Ok(v) => Ok(Sent::Done(v)),
        Err(ClientError::Refused { message, .. }) => Ok(Sent::Refused(message)),
        Err(e) => Err(unreachable(e)),
    }
}

impl Session {
    fn client(&mut self) -> Result<&mut Client, Error> {
        if self.client.is_none() {
            let mut client = Client::connect(&socket_path()).map_err(unreachable)?;
            client
                .set_timeout(Some(lever_client::call_timeout()))
                .map_err(unreachable)?;
            self.client = Some(client);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// A handle for a refused request (never one the daemon gives).
    pub fn refused_handle(&mut self) -> i64 {
        self.next_refused += 1;
        REFUSED_BASE + self.next_refused
    }

    /// The daemon's URM view, fetched now (`fresh`) or the one fetched
    /// before. A daemon not started with `--urm` is a refusal.
    fn view(&mut self, fresh: bool) -> Result<Sent<&UrmView>, Error> {
        if fresh || self.view.is_none() {
            match sent(self.client()?.urm())? {
                Sent::Done(v) => self.view = Some(v),
                Sent::Refused(m) => return Ok(Sent::Refused(m)),
            }
        }
        Ok(Sent::Done(self.view.as_ref().expect("fetched above")))
    }

    /// The opcode/value pairs of `resources`, or why there are none.
    fn pairs(
        &mut self,
        resources: &[Resource],
        fresh: bool,
    ) -> Result<Sent<Vec<(u32, i64)>>, Error> {
        let view = match self.view(fresh)? {
            Sent::Done(v) => v,
            Sent::Refused(m) => return Ok(Sent::Refused(m)),
        };
        let mut pairs = Vec::with_capacity(resources.len());
        for r in resources {
            match view.pair(r.code, r.info, &r.values) {
                Ok(pair) => pairs.push(pair),
                Err(m) => return Ok(Sent::Refused(m)),
            }
        }
        Ok(Sent::Done(pairs))
    }

    /// `tuneResources`: a new request.
    pub fn tune(
        &mut self,
        lease: Lease,
        priority: Priority,
        detach: bool,
        resources: &[Resource],
    ) -> Result<Sent<Handle>, Error> {
        // A code the cached view lacks may be new since a reload.
        let pairs = match self.pairs(resources, false)? {
            Sent::Done(p) => p,
            Sent::Refused(_) => match self.pairs(resources, true)? {
                Sent::Done(p) => p,
                Sent::Refused(m) => return Ok(Sent::Refused(m)),
            },
        };
        let acquire = Acquire {
            handle: None,
            lease,
            priority,
            detach: detach && lease != Lease::UntilReleased,
            report: false,
            pairs,
        };
        sent(self.client()?.acquire_with(acquire))
    }

    /// `retuneResources`: the same request with a new lease. The pairs,
    /// class and detachment come from the daemon's STATUS, so a handle
    /// another process of this uid made (a detached `urmCli` request)
    /// can be retuned too.
    pub fn retune(&mut self, handle: i64, lease: Lease) -> Result<Sent<()>, Error> {
        let Some(h) = u32::try_from(handle).ok().and_then(Handle::new) else {
            return Ok(Sent::Refused(format!("handle {handle} holds nothing")));
        };
        let status = match sent(self.client()?.status())? {
            Sent::Done(s) => s,
            Sent::Refused(m) => return Ok(Sent::Refused(m)),
        };
        let Some(r) = status.requests.into_iter().find(|r| r.handle == h) else {
            return Ok(Sent::Refused(format!(
                "handle {handle} is not a live request of this client (it ended, or is another's)"
            )));
        };
        if let Some(usecase) = r.usecase {
            return Ok(Sent::Refused(format!(
                "handle {handle} is signal {usecase}: tune the signal again to change it"
            )));
        }
        let mut pairs = Vec::with_capacity(r.pairs.len());
        for p in &r.pairs {
            let digits = p.opcode.trim_start_matches("0x");
            match u32::from_str_radix(digits, 16) {
                Ok(op) => pairs.push((op, p.value)),
                Err(_) => {
                    return Ok(Sent::Refused(format!(
                        "the daemon's STATUS shows opcode {:?}, not a hex number",
                        p.opcode
                    )))
                }
            }
        }
        let acquire = Acquire {
            handle: Some(h),
            lease,
            priority: r.priority,
            detach: r.detached && lease != Lease::UntilReleased,
            report: false,
            pairs,
        };
        Ok(match sent(self.client()?.acquire_with(acquire))? {
            Sent::Done(_) => Sent::Done(()),
            Sent::Refused(m) => Sent::Refused(m),
        })
    }

    /// `untuneResources`, `untuneSignal`.
    pub fn untune(&mut self, handle: i64) -> Result<Sent<()>, Error> {
        if handle > REFUSED_BASE {
            return Ok(Sent::Done(()));
        }
        let Some(h) = u32::try_from(handle).ok().and_then(Handle::new) else {
            return Ok(Sent::Refused(format!("handle {handle} holds nothing")));
        };
        match self.client()?.release(h) {
            Ok(()) => Ok(Sent::Done(())),
            Err(ClientError::Refused {
                code: Code::NoSuchRequest,
                message,
            }) => Ok(Sent::Refused(message)),
            other => sent(other),
        }
    }

    /// `tuneSignal`: use case `id` of the daemon's target.
    pub fn signal(
        &mut self,
        id: u32,
        lease: SignalLease,
        priority: Priority,
        detach: bool,
    ) -> Result<Sent<Handle>, Error> {
        let mut signal = Signal::of(&format!("0x{id:08X}"), lease);
        signal.priority = priority;
        signal.detach = detach && lease != SignalLease::Given(Lease::UntilReleased);
        sent(self.client()?.signal(signal))
    }

    /// `getProp`: the value of URM property `name`, `None` when the
    /// daemon has none of that name (or was not started from URM).
    pub fn property(&mut self, name: &str) -> Result<Option<String>, Error> {
        Ok(match self.view(true)? {
            Sent::Done(v) => v.properties.get(name).cloned(),
            Sent::Refused(_) => None,
        })
    }

    /// `relaySignal`: the daemon answers (Lever has no URM extensions to
    /// relay a signal to).
    pub fn ping(&mut self) -> Result<(), Error> {
        self.client()?.ping().map(|_| ()).map_err(unreachable)
    }
}

/// Whether an error means the connection is dead (worth one reconnect).
fn is_disconnect(e: &Error) -> bool {
    matches!(e, Error::Unreachable(c) if c.is_disconnect())
}

/// Run `op` on this process's session: connect lazily, start afresh in a
/// forked child, and when the daemon closed the connection (restarted)
/// reconnect and retry once. A call that timed out drops the connection,
/// since a late reply would be read as the next call's.
pub fn with_session<T>(mut op: impl FnMut(&mut Session) -> Result<T, Error>) -> Result<T, Error> {
    let mut guard = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if guard.as_ref().is_none_or(|s| s.pid != pid) {
        *guard = Some(Session {
            pid,
            client: None,
            view: None,
            next_refused: 0,
        });
    }
    let session = guard.as_mut().expect("set above");
    match op(session) {
        Err(e) if is_disconnect(&e) => {
            session.client = None;
            session.view = None;
            op(session)
        }
        Err(e) => {
            if matches!(e, Error::Unreachable(_)) {
                session.client = None;
            }
            Err(e)
        }
        ok => ok,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_follow_urm() {
        assert_eq!(priority(0, true), Some(Priority::SystemHigh));
        assert_eq!(priority(1, true), Some(Priority::SystemLow));
        assert_eq!(priority(0x0100, false), Some(Priority::ThirdPartyHigh));
        assert_eq!(priority(1, false), Some(Priority::ThirdPartyLow));
        assert_eq!(priority(2, false), None);
    }

    #[test]
    fn durations_follow_urm() {
        assert_eq!(lease(-1), Some(Lease::UntilReleased));
        assert_eq!(lease(2000), Some(Lease::from_ms(2000)));
        assert_eq!(lease(0), None);
        assert_eq!(lease(-2), None);
        assert_eq!(lease(1 << 40), None);
    }
}
