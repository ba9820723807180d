//! The process's one connection to the daemon and the table of its locks
//! (safe Rust).
//!
//! A fork while another thread is inside a call does not deadlock the
//! child: a `pthread_atfork` child handler gives the child a fresh session
//! (tests/fork.rs).
//!
//! A daemon that closed the connection does not kill the program with
//! SIGPIPE: std's `UnixStream` sends with `MSG_NOSIGNAL`, so the write
//! fails with EPIPE and the call reconnects (tests/mock_daemon.rs checks
//! this with SIGPIPE at its default action).

use lever_client::{
    socket_path, Acquire, Client, ClientError, Code, Handle, Lease, Priority, Signal,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, Once};
use std::time::Instant;

/// Why a call failed; its text becomes `lever_last_error()`.
#[derive(Debug)]
pub enum Error {
    /// The caller's arguments are wrong (checked before any I/O).
    Invalid(String),
    /// The handle is not one this process holds.
    UnknownHandle(i32),
    /// Talking to the daemon failed or it refused.
    Client(ClientError),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Invalid(m) => f.write_str(m),
            Error::UnknownHandle(h) => write!(f, "handle {h} is not held by this process"),
            Error::Client(e) => write!(f, "{e}"),
        }
    }
}

impl From<ClientError> for Error {
    fn from(e: ClientError) -> Error {
        Error::Client(e)
    }
}

/// One lock as the library remembers it, keyed by the handle the C caller
/// sees.
#[derive(Debug, Clone)]
struct Lock {
    /// The daemon's handle; `None` once the connection that held it died.
    daemon: Option<Handle>,
    priority: Priority,
    pairs: Vec<(u32, i64)>,
    /// When a timed lock ends (the daemon expires it on its own).
    expires: Option<Instant>,
}

/// Above this many remembered locks, expired timed ones are forgotten.
const PRUNE_ABOVE: usize = 1024;

/// The connection of one process plus its locks.
#[derive(Debug)]
pub struct Session {
    pid: u32,
    client: Option<Client>,
    locks: HashMap<i32, Lock>,
}

/// The process's session. A pointer to a leaked, never-freed mutex so that
/// a forked child can start from a fresh, unlocked one: a thread of the
/// parent may have held the lock at the moment of `fork()`, and that thread
/// does not exist in the child to unlock it.
static SESSION: AtomicPtr<Mutex<Option<Session>>> = AtomicPtr::new(std::ptr::null_mut());
static AT_FORK: Once = Once::new();

fn session_lock() -> &'static Mutex<Option<Session>> {
    AT_FORK.call_once(crate::register_at_fork);
    let current = SESSION.load(Ordering::Acquire);
    if !current.is_null() {
        // SAFETY: non-null values of SESSION come from Box::into_raw and
        // are never freed, so they are valid for 'static.
        return unsafe { &*current };
    }
    let fresh = Box::into_raw(Box::new(Mutex::new(None)));
    match SESSION.compare_exchange(
        std::ptr::null_mut(),
        fresh,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        // SAFETY: just leaked from a Box, never freed.
        Ok(_) => unsafe { &*fresh },
        Err(existing) => {
            // SAFETY: `fresh` was never shared; reclaim it.
            drop(unsafe { Box::from_raw(fresh) });
            // SAFETY: as above, a leaked, never-freed Box.
            unsafe { &*existing }
        }
    }
}

/// In a forked child (from `pthread_atfork`): replace the session with a
/// fresh, unlocked one. The parent's mutex is leaked on purpose — it may be
/// locked by a thread that does not exist here. The child is single-threaded
/// at this point, and glibc makes `malloc` safe after fork.
pub fn reset_after_fork() {
    let fresh = Box::into_raw(Box::new(Mutex::new(None)));
    SESSION.store(fresh, Ordering::Release);
}

impl Session {
    fn new(pid: u32) -> Session {
        Session {
            pid,
            client: None,
            locks: HashMap::new(),
        }
    }

    fn client(&mut self) -> Result<&mut Client, Error> {
        if self.client.is_none() {
            let mut client = Client::connect(&socket_path())?;
            // A hung daemon must not hang the application that asked for a
            // boost: calls give up after LEVER_TIMEOUT_MS (default 5000).
            client.set_timeout(Some(lever_client::call_timeout()))?;
            self.client = Some(client);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// The daemon dropped us: every request of this connection is gone,
    /// but the pairs stay remembered so `lever_retune` can re-acquire.
    fn disconnected(&mut self) {
        self.client = None;
        for lock in self.locks.values_mut() {
            lock.daemon = None;
        }
    }

    /// A C handle for a new daemon handle: the daemon's own number when it
    /// fits a positive `int` and is free (so `lever status` shows what the
    /// program printed), else the next free positive `int`.
    fn alloc(&self, daemon: Handle) -> i32 {
        let mut h = (daemon.get() & 0x7fff_ffff) as i32;
        if h == 0 {
            h = 1;
        }
        while self.locks.contains_key(&h) {
            h = if h == i32::MAX { 1 } else { h + 1 };
        }
        h
    }

    fn prune(&mut self) {
        if self.locks.len() > PRUNE_ABOVE {
            let now = Instant::now();
            self.locks.retain(|_, l| l.expires.is_none_or(|t| t > now));
        }
    }

    /// Acquire a new lock, or update the one behind `handle` when this
    /// process holds it, for `duration_ms` (0 = until released, as
    /// perflock has it). `priority` `None` keeps the lock's priority (or
    /// third-party-low for a new one). Returns the C handle.
    pub fn acquire(
        &mut self,
        handle: i32,
        duration_ms: u32,
        priority: Option<Priority>,
        pairs: &[(u32, i64)],
    ) -> Result<i32, Error> {
        let lease = Lease::from_ms(duration_ms);
        let known = if handle > 0 {
            self.locks.get(&handle).cloned()
        } else {
            None
        };
        let priority = priority
            .or(known.as_ref().map(|l| l.priority))
            .unwrap_or_default();
        let old = known.as_ref().and_then(|l| l.daemon);
        let request = |handle: Option<Handle>| Acquire {
            handle,
            lease,
            priority,
            detach: false,
            report: false,
            pairs: pairs.to_vec(),
        };
        let client = self.client()?;
        let daemon = match client.acquire_with(request(old)) {
            // The lock expired (or was released) meanwhile: make a new one,
            // as for an unknown handle.
            Err(ClientError::Refused {
                code: Code::NoSuchRequest,
                ..
            }) if old.is_some() => client.acquire_with(request(None))?,
            other => other?,
        };
        let c_handle = if known.is_some() {
            handle
        } else {
            self.alloc(daemon)
        };
        self.locks.insert(
            c_handle,
            Lock {
                daemon: Some(daemon),
                priority,
                pairs: pairs.to_vec(),
                expires: lease.duration().map(|d| Instant::now() + d),
            },
        );
        self.prune();
        Ok(c_handle)
    }

    /// Trigger a use case; returns the C handle. The lock remembers no
    /// pairs (the daemon resolved them), so `retune` refuses it.
    pub fn signal(&mut self, signal: &Signal) -> Result<i32, Error> {
        let priority = signal.priority;
        let daemon = self.client()?.signal(signal.clone())?;
        let c_handle = self.alloc(daemon);
        self.locks.insert(
            c_handle,
            Lock {
                daemon: Some(daemon),
                priority,
                pairs: Vec::new(),
                expires: None,
            },
        );
        self.prune();
        Ok(c_handle)
    }

    /// Acquire again with the remembered pairs and priority and a new
    /// duration.
    pub fn retune(&mut self, handle: i32, duration_ms: u32) -> Result<i32, Error> {
        let lock = self
            .locks
            .get(&handle)
            .cloned()
            .ok_or(Error::UnknownHandle(handle))?;
        if lock.pairs.is_empty() {
            return Err(Error::Invalid(format!(
                "handle {handle} is a use case (lever_signal): signal it again instead"
            )));
        }
        self.acquire(handle, duration_ms, Some(lock.priority), &lock.pairs)
    }

    /// Release a lock. A lock this process knows that the daemon no longer
    /// has (it expired, or the daemon restarted) counts as released.
    pub fn release(&mut self, handle: i32) -> Result<(), Error> {
        if handle <= 0 {
            return Err(Error::Invalid(format!(
                "handle {handle} is not a lock handle (handles are > 0)"
            )));
        }
        let (known, daemon) = match self.locks.get(&handle) {
            Some(l) => (true, l.daemon),
            None => (false, Handle::new(handle as u32)),
        };
        let Some(daemon) = daemon else {
            self.locks.remove(&handle);
            return Ok(());
        };
        match self.client()?.release(daemon) {
            Ok(()) => {}
            Err(ClientError::Refused {
                code: Code::NoSuchRequest,
                ..
            }) if known => {}
            Err(e) => return Err(e.into()),
        }
        self.locks.remove(&handle);
        Ok(())
    }

    /// The daemon's STATUS document.
    pub fn status(&mut self) -> Result<String, Error> {
        Ok(self.client()?.status_json()?)
    }

    /// PING; the daemon's protocol version.
    pub fn register(&mut self, pid: u32, app: &str) -> Result<(), Error> {
        Ok(self.client()?.register(pid, app)?)
    }

    pub fn ping(&mut self) -> Result<u8, Error> {
        Ok(self.client()?.ping()?)
    }
}

/// Whether a call gave up waiting (LEVER_TIMEOUT_MS).
fn is_timeout(e: &Error) -> bool {
    matches!(e, Error::Client(ClientError::Io(io))
        if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

/// Whether an error means the connection is dead (worth one reconnect).
fn is_disconnect(e: &Error) -> bool {
    matches!(e, Error::Client(c) if c.is_disconnect())
}

/// Run `op` on this process's session: connect lazily, start afresh after
/// a fork (the parent's connection and locks are not ours), and when the
/// daemon closed the connection reconnect and retry once.
pub fn with_session<T>(mut op: impl FnMut(&mut Session) -> Result<T, Error>) -> Result<T, Error> {
    let mut guard = session_lock()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let pid = std::process::id();
    if guard.as_ref().is_none_or(|s| s.pid != pid) {
        // After fork the child drops its copy of the parent's socket; the
        // parent's connection (and its leases) are unaffected.
        *guard = Some(Session::new(pid));
    }
    let session = guard.as_mut().expect("set above");
    match op(session) {
        Err(e) if is_timeout(&e) => {
            // A reply may still arrive and would be read as the answer to
            // the next call: this connection cannot be trusted any more.
            session.disconnected();
            Err(e)
        }
        Err(e) if is_disconnect(&e) => {
            session.disconnected();
            op(session)
        }
        other => other,
    }
}
