//! The Lever wire protocol, version 1: framing, encoding and a decoder that
//! never trusts its input.
//!
//! Clients talk to `lever daemon` over a Unix stream socket. Every message
//! is one **frame**: an 8-byte header followed by a body. All integers are
//! little-endian.
//!
//! ```text
//! offset size field
//! 0      1    magic   0x4C ('L')
//! 1      1    version 1
//! 2      1    kind    (see below)
//! 3      1    flags   0, except bit 0 (MORE) on JSON replies; others refused
//! 4      4    length  body length in bytes, at most MAX_BODY (65528)
//! 8      n    body
//! ```
//!
//! Requests (client → daemon), each answered by exactly one reply, in order:
//!
//! | kind | name | body |
//! |---|---|---|
//! | 0x01 | ACQUIRE | handle u32 (0 = new), duration_ms u32 (0 = until released), priority u8 (0 third-party-low, 1 third-party-high, 2 system-low, 3 system-high), flags u8 (bit 0 = detach, bit 1 = report), count u16, then count × (opcode u32, value i64) |
//! | 0x02 | RELEASE | handle u32 |
//! | 0x03 | STATUS | empty |
//! | 0x04 | EXPLAIN | UTF-8 resource name or opcode (`0x44008100`) |
//! | 0x05 | PING | empty |
//! | 0x06 | SIGNAL | duration_ms u32 (0 = the use case's own duration, 0xFFFFFFFF = until released, else that many ms), priority u8, flags u8 (as ACQUIRE's), reserved u16 (0), fps u32, width u32, height u32 (each 0 = not given), then the use case's name or id (`camera-preview`, `0x00030002`) in UTF-8, 1..=255 bytes |
//! | 0x07 | REGISTER | pid u32 (> 0), then the name of an `apps:` entry of the daemon's target in UTF-8, 1..=255 bytes; answered with DONE |
//! | 0x08 | PROFILE | flags u8 (bit 0 = hold), reserved u8 (0), rt_cpus length u16, then rt_cpus (a CPU list such as `2-3`, UTF-8, may be empty), then the profile's name (a built-in or a profile the daemon can load) in UTF-8, 1..=255 bytes |
//! | 0x09 | PROFILE_OFF | empty |
//! | 0x0C | URM | empty; answered with JSON ([`UrmView`]: URM resource codes → opcodes, clusters, `PropertiesConfig` values) by a daemon started with `--urm`, else ERROR 7 |
//!
//! Replies (daemon → client):
//!
//! | kind | name | body |
//! |---|---|---|
//! | 0x81 | HANDLE | handle u32 (> 0); the reply to an ACQUIRE or SIGNAL without the report flag |
//! | 0x82 | DONE | empty |
//! | 0x83 | JSON | UTF-8 JSON document, or a piece of one: a document longer than a frame is sent as several JSON frames, all but the last with the MORE flag; the reader concatenates them. STATUS, EXPLAIN, and an ACQUIRE with the report flag ([`Acquired`]: the handle and, per resource, the value asked, held and applied and why they differ) |
//! | 0x85 | PONG | protocol version u8 |
//! | 0xFF | ERROR | code u16, then a UTF-8 message |
//!
//! A SIGNAL triggers a use case of the daemon's target (`docs/usecases.md`):
//! it becomes one request like an ACQUIRE's, released with RELEASE of its
//! handle. An unknown use case is refused with code 9 (UnknownUseCase), a
//! system-only one asked by a third-party client with 4 (NotPermitted).
//!
//! A REGISTER names a running process as an app of the target (`lever run
//! --app NAME -- CMD`, for machines without the process connector): the
//! daemon applies the app's configuration as a request owned by that
//! process, not by the connection, and releases it when the process exits.
//! An unknown app is refused with code 10 (UnknownApp); a process of
//! another uid, asked by a client that is not root or in the system group,
//! with 4 (NotPermitted); a pid that is not running or already registered
//! with 7 (Invalid).
//!
//! A PROFILE applies a profile (`docs/profiles.md`) through the daemon, as
//! the lowest-priority request, so any perflock or use case beats it while
//! it lives. Without the hold flag it becomes the daemon's **base
//! profile**: it replaces the previous base, is kept across daemon restarts
//! until PROFILE_OFF, and is answered with DONE. With the hold flag it is
//! held only while this connection lives (power-profiles-daemon's
//! `HoldProfile`), answered with HANDLE and ended by RELEASE. PROFILE_OFF
//! removes the base profile (holds stay) and is answered with DONE.
//!
//! A URM request serves URM's client API (`libUrmClient.so`, crate
//! `lever-urm-capi`): the table that turns a URM `ResCode`/`ResInfo`
//! into an opcode of the daemon's target, and URM's properties for
//! `getProp`.
//!
//! The body length must match the kind exactly (ACQUIRE: 12 + 12·count).
//! Anything else — bad magic, unknown version or kind, a length over the
//! limit, a truncated or overlong body, invalid UTF-8 — is a
//! [`ProtocolError`], and the daemon answers with an ERROR frame.
//!
//! ```
//! use lever_protocol::*;
//! let req = Request::Acquire(Acquire {
//!     handle: None,                 // a new request (0 on the wire)
//!     lease: Lease::from_ms(30_000), // 30 s (0 on the wire = until released)
//!     priority: Priority::ThirdPartyLow,
//!     detach: false,
//!     report: false,                // answer with HANDLE, as perflock clients expect
//!     pairs: vec![(0x44008100, 1958400)],
//! });
//! let bytes = req.encode();
//! let (decoded, used) = decode_request(&bytes).unwrap().unwrap();
//! assert_eq!((decoded, used), (req, bytes.len()));
//! // A partial frame asks for more bytes instead of failing.
//! assert_eq!(decode_request(&bytes[..5]).unwrap(), None);
//! ```
//!
//! The typed fields of an ACQUIRE ([`Priority`], [`Handle`], [`Lease`]) are
//! in [`fields`]; the JSON documents of STATUS, EXPLAIN and reported
//! ACQUIRE replies ([`Status`], [`Explain`], [`Acquired`]) in [`reply`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::num::NonZeroU32;

pub mod fields;
pub mod reply;
pub mod urm;

pub use fields::{Handle, Lease, LeaseError, Priority, PriorityError};
pub use reply::{
    Acquired, Applied, Bound, Cause, Clamped, Explain, Holder, KindInfo, NotApplied, PairInfo,
    PairRule, ProfileHold, ProfileStatus, RequestInfo, ResourceState, SnapDirection, Snapped,
    SpecInfo, Status, Vote, VoteInfo,
};
pub use urm::{UrmCluster, UrmCode, UrmPer, UrmView};

/// First byte of every frame.
pub const MAGIC: u8 = 0x4C;
/// Protocol version this crate speaks.
pub const VERSION: u8 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 8;
/// Largest body accepted.
pub const MAX_BODY: usize = 65536 - HEADER_LEN;
/// Largest number of opcode/value pairs in one ACQUIRE that fits a frame.
pub const MAX_PAIRS: usize = (MAX_BODY - 12) / 12;

/// Frame kinds.
pub mod kind {
    /// Acquire or update a request.
    pub const ACQUIRE: u8 = 0x01;
    /// Release a request.
    pub const RELEASE: u8 = 0x02;
    /// Daemon status as JSON.
    pub const STATUS: u8 = 0x03;
    /// Explain one resource as JSON.
    pub const EXPLAIN: u8 = 0x04;
    /// Liveness check.
    pub const PING: u8 = 0x05;
    /// Trigger a use case.
    pub const SIGNAL: u8 = 0x06;
    /// Register a running process as an app of the target.
    pub const REGISTER: u8 = 0x07;
    /// Apply a profile (as the base profile, or held by this connection).
    pub const PROFILE: u8 = 0x08;
    /// Remove the base profile.
    pub const PROFILE_OFF: u8 = 0x09;
    /// Act for a bus caller (the daemon's own D-Bus service only).
    pub const BEHALF: u8 = 0x0A;
    /// Trigger a use case for as long as a process runs.
    pub const BIND: u8 = 0x0B;
    /// The URM view of a daemon started from a URM directory.
    pub const URM: u8 = 0x0C;
    /// Reply: the request's handle.
    pub const HANDLE: u8 = 0x81;
    /// Reply: done, nothing to return.
    pub const DONE: u8 = 0x82;
    /// Reply: a JSON document.
    pub const JSON: u8 = 0x83;
    /// Reply to PING.
    pub const PONG: u8 = 0x85;
    /// Reply: an error.
    pub const ERROR: u8 = 0xFF;
}

/// An ACQUIRE request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acquire {
    /// Request to update; `None` for a new one (0 on the wire).
    pub handle: Option<Handle>,
    /// How long it lasts (`duration_ms` on the wire, 0 = until released).
    pub lease: Lease,
    /// Requested priority class (the daemon refuses the system classes to
    /// third-party clients).
    pub priority: Priority,
    /// Keep the request after this connection closes (timed requests only).
    pub detach: bool,
    /// Answer with an [`Acquired`] JSON document (what was applied and
    /// why) instead of a bare HANDLE. Flag bit 1; daemons before it refuse
    /// the frame as malformed, and old clients never set it.
    pub report: bool,
    /// Opcode/value pairs.
    pub pairs: Vec<(u32, i64)>,
}

/// How long a triggered use case lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignalLease {
    /// The use case's own duration (0 on the wire).
    #[default]
    UseCaseDefault,
    /// This lease instead (`UntilReleased` is 0xFFFFFFFF on the wire; a
    /// timed lease of 0xFFFFFFFF ms cannot be sent).
    Given(Lease),
}

/// Wire value of [`SignalLease::Given`]`(Lease::UntilReleased)`.
pub const SIGNAL_UNTIL_RELEASED: u32 = u32::MAX;

impl SignalLease {
    /// From the wire number.
    pub fn from_wire(ms: u32) -> SignalLease {
        match ms {
            0 => SignalLease::UseCaseDefault,
            SIGNAL_UNTIL_RELEASED => SignalLease::Given(Lease::UntilReleased),
            ms => SignalLease::Given(Lease::from_ms(ms)),
        }
    }

    /// The wire number.
    pub fn to_wire(self) -> u32 {
        match self {
            SignalLease::UseCaseDefault => 0,
            SignalLease::Given(Lease::UntilReleased) => SIGNAL_UNTIL_RELEASED,
            SignalLease::Given(l) => l.ms(),
        }
    }
}

/// A SIGNAL request: trigger a use case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// The use case's name, or its id as text (`0x00030002`).
    pub usecase: String,
    /// How long it lasts.
    pub lease: SignalLease,
    /// Requested priority class (as for ACQUIRE).
    pub priority: Priority,
    /// Keep the request after this connection closes (timed only).
    pub detach: bool,
    /// Answer with an [`Acquired`] document instead of HANDLE.
    pub report: bool,
    /// Frames per second, if given (chooses the variant).
    pub fps: Option<NonZeroU32>,
    /// Width in pixels, if given.
    pub width: Option<NonZeroU32>,
    /// Height in pixels, if given.
    pub height: Option<NonZeroU32>,
}

impl Signal {
    /// Use case `usecase` as a plain trigger: for `lease`, at
    /// third-party-low, attached to the connection, answered with HANDLE,
    /// no fps/width/height (change the fields for more).
    pub fn of(usecase: &str, lease: SignalLease) -> Signal {
        Signal {
            usecase: usecase.to_string(),
            lease,
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            fps: None,
            width: None,
            height: None,
        }
    }
}

/// Longest use case key in a SIGNAL, bytes.
pub const MAX_USECASE_KEY: usize = 255;

/// A REGISTER request: process `pid` runs app `app` of the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// The process (its thread group id).
    pub pid: NonZeroU32,
    /// The name of an `apps:` entry, 1..=255 bytes.
    pub app: String,
}

/// A BEHALF request: from now on this connection speaks for the D-Bus
/// caller `uid`/`pid` (its permissions, its caps, its view). Only the
/// daemon's own process may send it: its D-Bus service, which learned the
/// caller's identity from the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behalf {
    /// The caller's user id, as the bus daemon reported it.
    pub uid: u32,
    /// The caller's process id, as the bus daemon reported it.
    pub pid: NonZeroU32,
}

/// A BIND request: a SIGNAL that lasts while process `pid` runs (its
/// lease is that process, watched through a pidfd, not the connection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// The process whose life the use case lasts (a game); a third-party
    /// client may name only a process of its own uid.
    pub pid: NonZeroU32,
    /// The use case, as in SIGNAL (`detach` must be false).
    pub signal: Signal,
}

/// A PROFILE request: apply a profile through the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The profile's name: a built-in (`performance`, `rt`, ...) or one the
    /// daemon can load.
    pub name: String,
    /// Held only while this connection lives (answered with HANDLE);
    /// otherwise the daemon's base profile (answered with DONE).
    pub hold: bool,
    /// The CPUs of the `rt` profile (`--rt-cpus`), e.g. `2-3`; `None` for
    /// the profile's default.
    pub rt_cpus: Option<String>,
}

/// Longest profile name in a PROFILE, bytes.
pub const MAX_PROFILE_NAME: usize = 255;

/// PROFILE flag bits.
pub mod profile_flag {
    /// Held only while the connection lives.
    pub const HOLD: u8 = 1;
}

/// A message from a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Acquire or update.
    Acquire(Acquire),
    /// Release a handle.
    Release {
        /// The handle.
        handle: u32,
    },
    /// Ask for the daemon's status.
    Status,
    /// Ask about one resource.
    Explain {
        /// Resource name or opcode text.
        resource: String,
    },
    /// Liveness check.
    Ping,
    /// Trigger a use case.
    Signal(Signal),
    /// Register a running process as an app.
    Register(Register),
    /// Apply a profile.
    Profile(Profile),
    /// Remove the base profile.
    ProfileOff,
    /// Speak for a D-Bus caller (the daemon's own D-Bus service only).
    Behalf(Behalf),
    /// Trigger a use case while a process runs.
    Bind(Bind),
    /// Ask for the URM view ([`UrmView`]).
    Urm,
}

/// Error codes carried by ERROR replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum ErrorCode {
    /// The frame could not be decoded.
    Malformed = 1,
    /// Unsupported protocol version.
    Version = 2,
    /// Unknown opcode or resource.
    UnknownResource = 3,
    /// The client may not do this (system-only resource, priority).
    NotPermitted = 4,
    /// No such request visible to this client.
    NoSuchRequest = 5,
    /// A per-client limit was reached.
    Limit = 6,
    /// The request's content is invalid (empty, repeated opcode, ...).
    Invalid = 7,
    /// The daemon failed internally (e.g. could not journal).
    Internal = 8,
    /// No use case of that name or id in the daemon's target.
    UnknownUseCase = 9,
    /// No app of that name in the daemon's target (REGISTER).
    UnknownApp = 10,
}

impl ErrorCode {
    /// From the wire value; unknown values map to `Internal`.
    pub fn from_u16(v: u16) -> ErrorCode {
        match v {
            1 => ErrorCode::Malformed,
            2 => ErrorCode::Version,
            3 => ErrorCode::UnknownResource,
            4 => ErrorCode::NotPermitted,
            5 => ErrorCode::NoSuchRequest,
            6 => ErrorCode::Limit,
            7 => ErrorCode::Invalid,
            9 => ErrorCode::UnknownUseCase,
            10 => ErrorCode::UnknownApp,
            _ => ErrorCode::Internal,
        }
    }
}

/// Header flag: this JSON frame is continued by the next one.
pub const FLAG_MORE: u8 = 1;

/// ACQUIRE flag bits (the `flags` byte of the body, not of the header).
pub mod acquire_flag {
    /// The request outlives its connection (timed requests only).
    pub const DETACH: u8 = 1;
    /// Reply with an `Acquired` JSON document instead of HANDLE.
    pub const REPORT: u8 = 2;
}

/// A message from the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The handle of an acquired request.
    Handle(u32),
    /// Done.
    Done,
    /// A JSON document (or its last piece).
    Json(String),
    /// A piece of a JSON document that continues in the next frame.
    JsonMore(String),
    /// Answer to PING, with the daemon's protocol version.
    Pong(u8),
    /// An error.
    Error {
        /// What kind of error.
        code: ErrorCode,
        /// A precise message for people.
        message: String,
    },
}

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// First byte is not [`MAGIC`].
    #[error("bad magic byte 0x{0:02x} (expected 0x4c)")]
    BadMagic(u8),
    /// Unsupported version.
    #[error("unsupported protocol version {0} (this side speaks 1)")]
    Version(u8),
    /// Unknown frame kind.
    #[error("unknown frame kind 0x{0:02x}")]
    UnknownKind(u8),
    /// Non-zero reserved flags.
    #[error("reserved header flags 0x{0:02x} must be 0")]
    Flags(u8),
    /// Declared body longer than [`MAX_BODY`].
    #[error("frame body of {0} bytes exceeds the limit of 65528")]
    TooLarge(u32),
    /// The body length does not fit its kind.
    #[error("{kind} body has {got} bytes, expected {expected}")]
    Length {
        /// Frame kind name.
        kind: &'static str,
        /// Bytes present.
        got: usize,
        /// Bytes expected.
        expected: usize,
    },
    /// Invalid field value.
    #[error("{0}")]
    Field(String),
    /// Text that is not UTF-8.
    #[error("{0} is not valid UTF-8")]
    Utf8(&'static str),
}

impl ProtocolError {
    /// The error code to send back for this decoding error.
    pub fn code(&self) -> ErrorCode {
        match self {
            ProtocolError::Version(_) => ErrorCode::Version,
            _ => ErrorCode::Malformed,
        }
    }
}

fn frame(kind: u8, body: &[u8]) -> Vec<u8> {
    frame_flags(kind, 0, body)
}

fn frame_flags(kind: u8, flags: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&[MAGIC, VERSION, kind, flags]);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

impl Request {
    /// Encode as one frame. Panics never; bodies larger than the limit are
    /// the caller's concern (the decoder on the other side refuses them).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Request::Acquire(a) => {
                let mut b = Vec::with_capacity(12 + 12 * a.pairs.len());
                b.extend_from_slice(&Handle::to_wire(a.handle).to_le_bytes());
                b.extend_from_slice(&a.lease.ms().to_le_bytes());
                b.push(a.priority as u8);
                b.push(flag_bits(a.detach, a.report));
                b.extend_from_slice(&(a.pairs.len().min(u16::MAX as usize) as u16).to_le_bytes());
                for (op, v) in &a.pairs {
                    b.extend_from_slice(&op.to_le_bytes());
                    b.extend_from_slice(&v.to_le_bytes());
                }
                frame(kind::ACQUIRE, &b)
            }
            Request::Release { handle } => frame(kind::RELEASE, &handle.to_le_bytes()),
            Request::Status => frame(kind::STATUS, &[]),
            Request::Explain { resource } => frame(kind::EXPLAIN, resource.as_bytes()),
            Request::Ping => frame(kind::PING, &[]),
            Request::Signal(s) => frame(kind::SIGNAL, &signal_body(s)),
            Request::Register(r) => {
                let mut b = r.pid.get().to_le_bytes().to_vec();
                b.extend_from_slice(r.app.as_bytes());
                frame(kind::REGISTER, &b)
            }
            Request::Profile(p) => {
                let cpus = p.rt_cpus.as_deref().unwrap_or("");
                let mut b = Vec::with_capacity(4 + cpus.len() + p.name.len());
                b.push(if p.hold { profile_flag::HOLD } else { 0 });
                b.push(0);
                b.extend_from_slice(&(cpus.len().min(u16::MAX as usize) as u16).to_le_bytes());
                b.extend_from_slice(cpus.as_bytes());
                b.extend_from_slice(p.name.as_bytes());
                frame(kind::PROFILE, &b)
            }
            Request::ProfileOff => frame(kind::PROFILE_OFF, &[]),
            Request::Urm => frame(kind::URM, &[]),
            Request::Behalf(b) => {
                let mut body = b.uid.to_le_bytes().to_vec();
                body.extend_from_slice(&b.pid.get().to_le_bytes());
                frame(kind::BEHALF, &body)
            }
            Request::Bind(b) => {
                let mut body = b.pid.get().to_le_bytes().to_vec();
                body.extend_from_slice(&signal_body(&b.signal));
                frame(kind::BIND, &body)
            }
        }
    }
}

impl Reply {
    /// Encode as frames: one, except a JSON document longer than a frame,
    /// which is split at UTF-8 boundaries into MORE-flagged pieces. An
    /// error message longer than a frame is cut.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Reply::Handle(h) => frame(kind::HANDLE, &h.to_le_bytes()),
            Reply::Done => frame(kind::DONE, &[]),
            Reply::Json(text) => {
                let mut out = Vec::with_capacity(text.len() + HEADER_LEN);
                let mut rest = text.as_str();
                loop {
                    let piece = truncate_utf8(rest, MAX_BODY);
                    rest = &rest[piece.len()..];
                    let flags = if rest.is_empty() { 0 } else { FLAG_MORE };
                    out.extend(frame_flags(kind::JSON, flags, piece.as_bytes()));
                    if rest.is_empty() {
                        return out;
                    }
                }
            }
            Reply::JsonMore(text) => frame_flags(
                kind::JSON,
                FLAG_MORE,
                truncate_utf8(text, MAX_BODY).as_bytes(),
            ),
            Reply::Pong(v) => frame(kind::PONG, &[*v]),
            Reply::Error { code, message } => {
                let mut b = (*code as u16).to_le_bytes().to_vec();
                b.extend_from_slice(truncate_utf8(message, MAX_BODY - 2).as_bytes());
                frame(kind::ERROR, &b)
            }
        }
    }
}

fn flag_bits(detach: bool, report: bool) -> u8 {
    let mut flags = 0;
    if detach {
        flags |= acquire_flag::DETACH;
    }
    if report {
        flags |= acquire_flag::REPORT;
    }
    flags
}

/// The detach and report bits of a request's flags byte; other bits are
/// refused.
fn request_flags(what: &str, flags: u8) -> Result<(bool, bool), ProtocolError> {
    if flags & !(acquire_flag::DETACH | acquire_flag::REPORT) != 0 {
        return Err(ProtocolError::Field(format!(
            "{what} flags 0x{flags:02x} has unknown bits"
        )));
    }
    Ok((
        flags & acquire_flag::DETACH != 0,
        flags & acquire_flag::REPORT != 0,
    ))
}

fn decode_signal(body: &[u8]) -> Result<Signal, ProtocolError> {
    if body.len() < 21 {
        return Err(ProtocolError::Length {
            kind: "SIGNAL",
            got: body.len(),
            expected: 21,
        });
    }
    if body.len() > 20 + MAX_USECASE_KEY {
        return Err(ProtocolError::Length {
            kind: "SIGNAL",
            got: body.len(),
            expected: 20 + MAX_USECASE_KEY,
        });
    }
    let priority =
        Priority::try_from(body[4]).map_err(|e| ProtocolError::Field(format!("SIGNAL {e}")))?;
    let (detach, report) = request_flags("SIGNAL", body[5])?;
    if body[6] != 0 || body[7] != 0 {
        return Err(ProtocolError::Field(
            "SIGNAL reserved bytes must be 0".to_string(),
        ));
    }
    Ok(Signal {
        usecase: std::str::from_utf8(&body[20..])
            .map_err(|_| ProtocolError::Utf8("SIGNAL use case"))?
            .to_string(),
        lease: SignalLease::from_wire(u32_at(body, 0)),
        priority,
        detach,
        report,
        fps: NonZeroU32::new(u32_at(body, 8)),
        width: NonZeroU32::new(u32_at(body, 12)),
        height: NonZeroU32::new(u32_at(body, 16)),
    })
}

/// A SIGNAL's body (also the tail of a BIND's).
fn signal_body(s: &Signal) -> Vec<u8> {
    let mut b = Vec::with_capacity(20 + s.usecase.len());
    b.extend_from_slice(&s.lease.to_wire().to_le_bytes());
    b.push(s.priority as u8);
    b.push(flag_bits(s.detach, s.report));
    b.extend_from_slice(&[0, 0]);
    for v in [s.fps, s.width, s.height] {
        b.extend_from_slice(&v.map_or(0, NonZeroU32::get).to_le_bytes());
    }
    b.extend_from_slice(s.usecase.as_bytes());
    b
}

fn decode_behalf(body: &[u8]) -> Result<Behalf, ProtocolError> {
    exact("BEHALF", body, 8)?;
    let pid = NonZeroU32::new(u32_at(body, 4))
        .ok_or_else(|| ProtocolError::Field("BEHALF pid must be > 0".to_string()))?;
    Ok(Behalf {
        uid: u32_at(body, 0),
        pid,
    })
}

fn decode_bind(body: &[u8]) -> Result<Bind, ProtocolError> {
    if body.len() < 4 {
        return Err(ProtocolError::Length {
            kind: "BIND",
            got: body.len(),
            expected: 4 + 21,
        });
    }
    let pid = NonZeroU32::new(u32_at(body, 0))
        .ok_or_else(|| ProtocolError::Field("BIND pid must be > 0".to_string()))?;
    let signal = decode_signal(&body[4..])?;
    if signal.detach {
        return Err(ProtocolError::Field(
            "BIND cannot be detached: its lease is the process".to_string(),
        ));
    }
    Ok(Bind { pid, signal })
}

fn decode_register(body: &[u8]) -> Result<Register, ProtocolError> {
    if !(5..=4 + MAX_USECASE_KEY).contains(&body.len()) {
        return Err(ProtocolError::Length {
            kind: "REGISTER",
            got: body.len(),
            expected: if body.len() < 5 {
                5
            } else {
                4 + MAX_USECASE_KEY
            },
        });
    }
    let pid = NonZeroU32::new(u32_at(body, 0))
        .ok_or_else(|| ProtocolError::Field("REGISTER pid must be > 0".to_string()))?;
    Ok(Register {
        pid,
        app: std::str::from_utf8(&body[4..])
            .map_err(|_| ProtocolError::Utf8("REGISTER app"))?
            .to_string(),
    })
}

fn decode_profile(body: &[u8]) -> Result<Profile, ProtocolError> {
    if body.len() < 5 {
        return Err(ProtocolError::Length {
            kind: "PROFILE",
            got: body.len(),
            expected: 5,
        });
    }
    if body[0] & !profile_flag::HOLD != 0 {
        return Err(ProtocolError::Field(format!(
            "PROFILE flags 0x{:02x} has unknown bits",
            body[0]
        )));
    }
    if body[1] != 0 {
        return Err(ProtocolError::Field(
            "PROFILE reserved byte must be 0".to_string(),
        ));
    }
    let cpus_len = u16::from_le_bytes([body[2], body[3]]) as usize;
    let name = body.get(4 + cpus_len..).unwrap_or_default();
    if name.is_empty() || name.len() > MAX_PROFILE_NAME {
        return Err(ProtocolError::Length {
            kind: "PROFILE",
            got: body.len(),
            expected: if name.is_empty() {
                5 + cpus_len
            } else {
                4 + cpus_len + MAX_PROFILE_NAME
            },
        });
    }
    let cpus = std::str::from_utf8(&body[4..4 + cpus_len])
        .map_err(|_| ProtocolError::Utf8("PROFILE rt_cpus"))?;
    Ok(Profile {
        name: std::str::from_utf8(name)
            .map_err(|_| ProtocolError::Utf8("PROFILE name"))?
            .to_string(),
        hold: body[0] & profile_flag::HOLD != 0,
        rt_cpus: (!cpus.is_empty()).then(|| cpus.to_string()),
    })
}

fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A validated header: (kind, flags, body length).
fn header(buf: &[u8]) -> Result<Option<(u8, u8, usize)>, ProtocolError> {
    // Check what we have as early as possible, so garbage is refused at
    // its first byte rather than after waiting for a full header.
    if let Some(&m) = buf.first() {
        if m != MAGIC {
            return Err(ProtocolError::BadMagic(m));
        }
    }
    if let Some(&v) = buf.get(1) {
        if v != VERSION {
            return Err(ProtocolError::Version(v));
        }
    }
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]);
    if len as usize > MAX_BODY {
        return Err(ProtocolError::TooLarge(len));
    }
    Ok(Some((buf[2], buf[3], len as usize)))
}

fn exact(kind: &'static str, body: &[u8], expected: usize) -> Result<(), ProtocolError> {
    if body.len() != expected {
        return Err(ProtocolError::Length {
            kind,
            got: body.len(),
            expected,
        });
    }
    Ok(())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decode one request from the front of `buf`. `Ok(None)` means the frame
/// is not complete yet; `Ok(Some((request, used)))` consumed `used` bytes.
/// An error means the stream cannot be trusted any more (the daemon replies
/// with an ERROR and closes the connection).
pub fn decode_request(buf: &[u8]) -> Result<Option<(Request, usize)>, ProtocolError> {
    let Some((k, flags, len)) = header(buf)? else {
        return Ok(None);
    };
    if flags != 0 {
        return Err(ProtocolError::Flags(flags));
    }
    if !matches!(
        k,
        kind::ACQUIRE
            | kind::RELEASE
            | kind::STATUS
            | kind::EXPLAIN
            | kind::PING
            | kind::SIGNAL
            | kind::REGISTER
            | kind::PROFILE
            | kind::PROFILE_OFF
            | kind::BEHALF
            | kind::BIND
            | kind::URM
    ) {
        return Err(ProtocolError::UnknownKind(k));
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    let body = &buf[HEADER_LEN..HEADER_LEN + len];
    let req = match k {
        kind::ACQUIRE => {
            if body.len() < 12 {
                return Err(ProtocolError::Length {
                    kind: "ACQUIRE",
                    got: body.len(),
                    expected: 12,
                });
            }
            let count = u16::from_le_bytes([body[10], body[11]]) as usize;
            exact("ACQUIRE", body, 12 + 12 * count)?;
            let priority = Priority::try_from(body[8])
                .map_err(|e| ProtocolError::Field(format!("ACQUIRE {e}")))?;
            let (detach, report) = request_flags("ACQUIRE", body[9])?;
            let pairs = body[12..]
                .chunks_exact(12)
                .map(|c| {
                    let mut v = [0u8; 8];
                    v.copy_from_slice(&c[4..12]);
                    (u32_at(c, 0), i64::from_le_bytes(v))
                })
                .collect();
            Request::Acquire(Acquire {
                handle: Handle::new(u32_at(body, 0)),
                lease: Lease::from_ms(u32_at(body, 4)),
                priority,
                detach,
                report,
                pairs,
            })
        }
        kind::RELEASE => {
            exact("RELEASE", body, 4)?;
            Request::Release {
                handle: u32_at(body, 0),
            }
        }
        kind::STATUS => {
            exact("STATUS", body, 0)?;
            Request::Status
        }
        kind::EXPLAIN => Request::Explain {
            resource: std::str::from_utf8(body)
                .map_err(|_| ProtocolError::Utf8("EXPLAIN resource"))?
                .to_string(),
        },
        kind::SIGNAL => Request::Signal(decode_signal(body)?),
        kind::REGISTER => Request::Register(decode_register(body)?),
        kind::PROFILE => Request::Profile(decode_profile(body)?),
        kind::PROFILE_OFF => {
            exact("PROFILE_OFF", body, 0)?;
            Request::ProfileOff
        }
        kind::BEHALF => Request::Behalf(decode_behalf(body)?),
        kind::BIND => Request::Bind(decode_bind(body)?),
        kind::URM => {
            exact("URM", body, 0)?;
            Request::Urm
        }
        _ => {
            exact("PING", body, 0)?;
            Request::Ping
        }
    };
    Ok(Some((req, HEADER_LEN + len)))
}

/// Decode one reply from the front of `buf` (same contract as
/// [`decode_request`]).
pub fn decode_reply(buf: &[u8]) -> Result<Option<(Reply, usize)>, ProtocolError> {
    let Some((k, flags, len)) = header(buf)? else {
        return Ok(None);
    };
    if flags != 0 && !(k == kind::JSON && flags == FLAG_MORE) {
        return Err(ProtocolError::Flags(flags));
    }
    if !matches!(
        k,
        kind::HANDLE | kind::DONE | kind::JSON | kind::PONG | kind::ERROR
    ) {
        return Err(ProtocolError::UnknownKind(k));
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    let body = &buf[HEADER_LEN..HEADER_LEN + len];
    let reply = match k {
        kind::HANDLE => {
            exact("HANDLE", body, 4)?;
            Reply::Handle(u32_at(body, 0))
        }
        kind::DONE => {
            exact("DONE", body, 0)?;
            Reply::Done
        }
        kind::JSON => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ProtocolError::Utf8("JSON reply"))?
                .to_string();
            if flags == FLAG_MORE {
                Reply::JsonMore(text)
            } else {
                Reply::Json(text)
            }
        }
        kind::PONG => {
            exact("PONG", body, 1)?;
            Reply::Pong(body[0])
        }
        _ => {
            if body.len() < 2 {
                return Err(ProtocolError::Length {
                    kind: "ERROR",
                    got: body.len(),
                    expected: 2,
                });
            }
            Reply::Error {
                code: ErrorCode::from_u16(u16::from_le_bytes([body[0], body[1]])),
                message: std::str::from_utf8(&body[2..])
                    .map_err(|_| ProtocolError::Utf8("ERROR message"))?
                    .to_string(),
            }
        }
    };
    Ok(Some((reply, HEADER_LEN + len)))
}
