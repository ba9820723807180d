//! Rust client for `lever daemon`.
//!
//! One [`Client`] is one connection, and the daemon ties requests to the
//! connection that made them (a lease): when the connection closes or the
//! process dies, everything it acquired is released, unless a timed request
//! was acquired with `detach`.
//!
//! The socket is `$LEVER_SOCKET` when set, else [`DEFAULT_SOCKET`].
//!
//! ```no_run
//! use lever_client::{Client, Lease, Priority};
//! use std::time::Duration;
//! let mut client = Client::connect_default()?;
//! // Silver cluster min frequency to 1.9 GHz for 2 s (seed 000 §3.4), as a
//! // new request (no handle to update).
//! let lease = Lease::timed(Duration::from_secs(2)).unwrap();
//! let handle = client.acquire(None, lease, Priority::ThirdPartyLow, &[(0x44008100, 1958400)])?;
//! let status = client.status()?;
//! println!("{} live request(s) on {}", status.live_requests, status.target);
//! client.release(handle)?;
//! # Ok::<(), lever_client::ClientError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use lever_protocol::{decode_reply, ErrorCode, ProtocolError, Reply, Request};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

pub use lever_protocol::ErrorCode as Code;
pub use lever_protocol::{
    Acquire, Acquired, Applied, Bound, Cause, Explain, Handle, Holder, Lease, NotApplied, PairRule,
    Priority, Profile, Register, Signal, SignalLease, SnapDirection, Status, UrmCluster, UrmCode,
    UrmPer, UrmView, VoteInfo,
};

mod run;
pub use run::{run_app, RunError};

/// Where the daemon listens unless `LEVER_SOCKET` says otherwise.
pub const DEFAULT_SOCKET: &str = "/run/lever/lever.sock";

/// The socket path clients use: `$LEVER_SOCKET`, else [`DEFAULT_SOCKET`].
pub fn socket_path() -> PathBuf {
    std::env::var_os("LEVER_SOCKET")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SOCKET))
}

/// Client errors.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Could not connect.
    #[error("cannot connect to lever daemon at {path}: {source} (is `lever daemon` running? set LEVER_SOCKET to its socket)")]
    Connect {
        /// Socket path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// I/O on an established connection.
    #[error("connection to lever daemon failed: {0}")]
    Io(#[from] std::io::Error),
    /// The daemon closed the connection.
    #[error("lever daemon closed the connection")]
    Closed,
    /// The daemon sent bytes we cannot decode.
    #[error("bad reply from lever daemon: {0}")]
    Protocol(#[from] ProtocolError),
    /// The daemon refused the request.
    #[error("lever daemon refused: {message}")]
    Refused {
        /// Error class.
        code: ErrorCode,
        /// The daemon's message.
        message: String,
    },
    /// The daemon answered with a reply that does not fit the request.
    #[error("unexpected reply from lever daemon: {0:?}")]
    Unexpected(Reply),
    /// A JSON reply that is not the document the request asks for.
    #[error("bad {what} document from lever daemon: {source}")]
    Document {
        /// `status` or `explain`.
        what: &'static str,
        /// Why it does not parse.
        source: serde_json::Error,
    },
}

impl ClientError {
    /// Whether the connection is dead — the daemon closed it or went away
    /// (restarted) — so that one reconnect is worth trying.
    pub fn is_disconnect(&self) -> bool {
        use std::io::ErrorKind::*;
        match self {
            ClientError::Closed => true,
            ClientError::Io(io) => matches!(
                io.kind(),
                BrokenPipe | ConnectionReset | ConnectionAborted | NotConnected | UnexpectedEof
            ),
            _ => false,
        }
    }
}

/// How long one call of a library client (the C libraries) waits for the
/// daemon: `$LEVER_TIMEOUT_MS` when set to a positive number, else 5 s.
pub fn call_timeout() -> std::time::Duration {
    let ms = std::env::var("LEVER_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&v| v > 0)
        .unwrap_or(5000);
    std::time::Duration::from_millis(ms)
}

/// A connection to the daemon.
#[derive(Debug)]
pub struct Client {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Client {
    /// Connect to the daemon at `path`.
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(path).map_err(|source| ClientError::Connect {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Client {
            stream,
            buf: Vec::with_capacity(256),
        })
    }

    /// Connect to [`socket_path`].
    pub fn connect_default() -> Result<Client, ClientError> {
        Self::connect(&socket_path())
    }

    /// Give up on a call after `timeout` waiting to send or for the reply
    /// (`None`: wait forever, the default). A call that times out returns
    /// an I/O error; the connection should then be dropped, since a late
    /// reply would be taken for the next call's.
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) -> Result<(), ClientError> {
        self.stream.set_read_timeout(timeout)?;
        self.stream.set_write_timeout(timeout)?;
        Ok(())
    }

    /// Send one request and wait for its reply (a JSON document sent in
    /// several frames is joined).
    pub fn call(&mut self, request: &Request) -> Result<Reply, ClientError> {
        self.stream.write_all(&request.encode())?;
        let mut json = String::new();
        loop {
            if let Some((reply, used)) = decode_reply(&self.buf)? {
                self.buf.drain(..used);
                return match reply {
                    Reply::Error { code, message } => Err(ClientError::Refused { code, message }),
                    Reply::JsonMore(piece) => {
                        json.push_str(&piece);
                        continue;
                    }
                    Reply::Json(last) if !json.is_empty() => {
                        json.push_str(&last);
                        Ok(Reply::Json(json))
                    }
                    other => Ok(other),
                };
            }
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(ClientError::Closed);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Acquire a new request (`handle` `None`) or update a live one, for
    /// `lease`; returns its handle.
    pub fn acquire(
        &mut self,
        handle: Option<Handle>,
        lease: Lease,
        priority: Priority,
        pairs: &[(u32, i64)],
    ) -> Result<Handle, ClientError> {
        self.acquire_with(Acquire {
            handle,
            lease,
            priority,
            detach: false,
            report: false,
            pairs: pairs.to_vec(),
        })
    }

    /// Acquire with every field of the protocol (e.g. `detach`); `report`
    /// must be false (see [`Client::acquire_report`]).
    pub fn acquire_with(&mut self, acquire: Acquire) -> Result<Handle, ClientError> {
        self.handle_of(&Request::Acquire(acquire))
    }

    /// Acquire and get the daemon's report: the handle and, per resource,
    /// the value asked, the value held after clamping and snapping (and
    /// why), and the value the node has now and who decided it. Sets the
    /// protocol's report flag whatever `acquire.report` says.
    pub fn acquire_report(&mut self, acquire: Acquire) -> Result<Acquired, ClientError> {
        self.report(
            Request::Acquire(Acquire {
                report: true,
                ..acquire
            }),
            "acquire report",
        )
    }

    /// The handle of a HANDLE reply to `request`.
    fn handle_of(&mut self, request: &Request) -> Result<Handle, ClientError> {
        match self.call(request)? {
            Reply::Handle(h) => Handle::new(h).ok_or(ClientError::Unexpected(Reply::Handle(h))),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// The [`Acquired`] document answering `request` (report flag set).
    fn report(&mut self, request: Request, what: &'static str) -> Result<Acquired, ClientError> {
        let text = self.json(request)?;
        serde_json::from_str(&text).map_err(|source| ClientError::Document { what, source })
    }

    /// Trigger a use case of the daemon's target (`signal.report` must be
    /// false, see [`Client::signal_report`]); release it with
    /// [`Client::release`] of the handle.
    pub fn signal(&mut self, signal: Signal) -> Result<Handle, ClientError> {
        self.handle_of(&Request::Signal(signal))
    }

    /// Trigger a use case and get the daemon's report (as
    /// [`Client::acquire_report`], with `usecase` naming the use case and
    /// the variant chosen).
    pub fn signal_report(&mut self, signal: Signal) -> Result<Acquired, ClientError> {
        self.report(
            Request::Signal(Signal {
                report: true,
                ..signal
            }),
            "signal report",
        )
    }

    /// Apply a profile through the daemon (`docs/profiles.md`): with
    /// `profile.hold` it lasts while this connection does and the handle is
    /// returned (end it early with [`Client::release`]); without, it becomes
    /// the daemon's base profile, kept across restarts until
    /// [`Client::profile_off`], and `None` is returned.
    pub fn profile(&mut self, profile: Profile) -> Result<Option<Handle>, ClientError> {
        match self.call(&Request::Profile(profile))? {
            Reply::Done => Ok(None),
            Reply::Handle(h) => Handle::new(h)
                .map(Some)
                .ok_or(ClientError::Unexpected(Reply::Handle(h))),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// Remove the daemon's base profile (holds stay).
    pub fn profile_off(&mut self) -> Result<(), ClientError> {
        match self.call(&Request::ProfileOff)? {
            Reply::Done => Ok(()),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// Register running process `pid` as app `app` of the daemon's target
    /// (`apps:`): the daemon applies the app's configuration as a request
    /// owned by that process, released when it exits (see [`run_app`]).
    /// Without root or the system group, only a process of this client's
    /// own uid.
    pub fn register(&mut self, pid: u32, app: &str) -> Result<(), ClientError> {
        let pid = std::num::NonZeroU32::new(pid).ok_or_else(|| ClientError::Refused {
            code: ErrorCode::Invalid,
            message: "pid 0 is not a process".into(),
        })?;
        match self.call(&Request::Register(Register {
            pid,
            app: app.to_string(),
        }))? {
            Reply::Done => Ok(()),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// BEHALF: from now on this connection speaks for D-Bus caller
    /// `uid`/`pid` (its class, caps and view). Only the daemon's own D-Bus
    /// service may send it; anyone else gets ERROR 4.
    pub fn behalf(&mut self, uid: u32, pid: u32) -> Result<(), ClientError> {
        let pid = std::num::NonZeroU32::new(pid).ok_or_else(|| ClientError::Refused {
            code: ErrorCode::Invalid,
            message: "pid 0 is not a process".into(),
        })?;
        match self.call(&Request::Behalf(lever_protocol::Behalf { uid, pid }))? {
            Reply::Done => Ok(()),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// BIND: trigger `signal`'s use case for as long as process `pid` runs
    /// (the daemon watches it through a pidfd); without root or the system
    /// group, only a process of this client's own uid. Ended early by
    /// [`Client::release`] of the handle from any connection of this uid.
    pub fn bind(&mut self, pid: u32, signal: Signal) -> Result<Handle, ClientError> {
        let pid = std::num::NonZeroU32::new(pid).ok_or_else(|| ClientError::Refused {
            code: ErrorCode::Invalid,
            message: "pid 0 is not a process".into(),
        })?;
        self.handle_of(&Request::Bind(lever_protocol::Bind { pid, signal }))
    }

    /// Release a request.
    pub fn release(&mut self, handle: Handle) -> Result<(), ClientError> {
        match self.call(&Request::Release {
            handle: handle.get(),
        })? {
            Reply::Done => Ok(()),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// The daemon's status: every resource and the requests this client
    /// may see.
    pub fn status(&mut self) -> Result<Status, ClientError> {
        let text = self.status_json()?;
        serde_json::from_str(&text).map_err(|source| ClientError::Document {
            what: "status",
            source,
        })
    }

    /// The daemon's status as the JSON text it sent (for the C API, which
    /// hands the text to its caller).
    pub fn status_json(&mut self) -> Result<String, ClientError> {
        self.json(Request::Status)
    }

    /// One resource (name or opcode text) explained: its rule, votes and
    /// original.
    pub fn explain(&mut self, resource: &str) -> Result<Explain, ClientError> {
        let text = self.json(Request::Explain {
            resource: resource.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|source| ClientError::Document {
            what: "explain",
            source,
        })
    }

    /// The URM view of a daemon started with `--urm DIR`: URM resource
    /// codes → opcodes, the clusters, and URM's properties (refused with
    /// [`Code::Invalid`] by a daemon started otherwise).
    pub fn urm(&mut self) -> Result<UrmView, ClientError> {
        let text = self.json(Request::Urm)?;
        serde_json::from_str(&text).map_err(|source| ClientError::Document {
            what: "urm",
            source,
        })
    }

    fn json(&mut self, request: Request) -> Result<String, ClientError> {
        match self.call(&request)? {
            Reply::Json(j) => Ok(j),
            other => Err(ClientError::Unexpected(other)),
        }
    }

    /// Liveness check; returns the daemon's protocol version.
    pub fn ping(&mut self) -> Result<u8, ClientError> {
        match self.call(&Request::Ping)? {
            Reply::Pong(v) => Ok(v),
            other => Err(ClientError::Unexpected(other)),
        }
    }
}
