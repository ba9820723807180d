"""The Lever wire protocol, version 1 (pure Python).

A byte-exact port of ``crates/protocol`` (see its module docs and
``docs/protocol.md``): the same frame format, the same validation and the
same error messages, checked against the shared vectors in
``crates/protocol/testdata/vectors.json``.

Frame: an 8-byte header — magic ``0x4C``, version ``1``, kind, flags (0,
except :data:`FLAG_MORE` on a JSON reply continued by the next frame), body
length (u32, little-endian, at most :data:`MAX_BODY`) — then the body.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

MAGIC = 0x4C
VERSION = 1
HEADER_LEN = 8
MAX_BODY = 65536 - HEADER_LEN
MAX_PAIRS = (MAX_BODY - 12) // 12
#: Header flag: this JSON frame is continued by the next one.
FLAG_MORE = 1


class Kind(enum.IntEnum):
    """Frame kinds."""

    ACQUIRE = 0x01
    RELEASE = 0x02
    STATUS = 0x03
    EXPLAIN = 0x04
    PING = 0x05
    SIGNAL = 0x06
    REGISTER = 0x07
    HANDLE = 0x81
    DONE = 0x82
    JSON = 0x83
    PONG = 0x85
    ERROR = 0xFF


REQUEST_KINDS = frozenset({Kind.ACQUIRE, Kind.RELEASE, Kind.STATUS, Kind.EXPLAIN, Kind.PING, Kind.SIGNAL}) | {Kind.REGISTER}
REPLY_KINDS = frozenset({Kind.HANDLE, Kind.DONE, Kind.JSON, Kind.PONG, Kind.ERROR})


class ErrorCode(enum.IntEnum):
    """Error codes carried by ERROR replies."""

    MALFORMED = 1
    VERSION = 2
    UNKNOWN_RESOURCE = 3
    NOT_PERMITTED = 4
    NO_SUCH_REQUEST = 5
    LIMIT = 6
    INVALID = 7
    INTERNAL = 8
    UNKNOWN_USECASE = 9
    UNKNOWN_APP = 10

    @classmethod
    def from_u16(cls, value: int) -> "ErrorCode":
        """From the wire value; unknown values map to INTERNAL (as in Rust)."""
        try:
            return cls(value)
        except ValueError:
            return cls.INTERNAL


class LeverError(Exception):
    """Any failure of the client. ``code`` is an :class:`ErrorCode` when
    the daemon refused (or the bytes were malformed), else ``None``."""

    def __init__(self, message: str, code: Optional[ErrorCode] = None):
        super().__init__(message)
        self.message = message
        self.code = code


class ProtocolError(LeverError):
    """Bytes that cannot be decoded. ``reason`` names the Rust variant
    (``bad_magic``, ``version``, ``unknown_kind``, ``flags``,
    ``too_large``, ``length``, ``field``, ``utf8``); ``str()`` is the Rust
    message, word for word."""

    def __init__(self, reason: str, message: str):
        super().__init__(message, ErrorCode.VERSION if reason == "version" else ErrorCode.MALFORMED)
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ProtocolError)
            and (self.reason, self.message) == (other.reason, other.message)
        )

    def __hash__(self) -> int:
        return hash((self.reason, self.message))

    def __repr__(self) -> str:
        return f"ProtocolError({self.reason!r}, {self.message!r})"


#: ACQUIRE body flags: keep the request after the connection closes; answer
#: with a JSON report instead of HANDLE.
ACQUIRE_DETACH = 1
ACQUIRE_REPORT = 2


# ---- messages -------------------------------------------------------------


@dataclass(frozen=True)
class Acquire:
    """Acquire (handle 0) or update a request of opcode/value pairs."""

    handle: int = 0
    duration_ms: int = 0
    priority: int = 0
    detach: bool = False
    pairs: Tuple[Tuple[int, int], ...] = field(default_factory=tuple)
    #: ACQUIRE flag bit 1: the daemon answers with a JSON document (handle,
    #: and per resource the value asked, held, applied and why) instead of
    #: HANDLE. Daemons that predate it refuse the frame.
    report: bool = False


#: SIGNAL duration_ms: hold until released (0 = the use case's own).
SIGNAL_UNTIL_RELEASED = 0xFFFFFFFF
#: Longest use case name or id text in a SIGNAL, bytes.
MAX_USECASE_KEY = 255


@dataclass(frozen=True)
class Signal:
    """Trigger a use case by name (``camera-preview``) or id text
    (``0x00030002``). ``duration_ms``: 0 = the use case's own duration,
    :data:`SIGNAL_UNTIL_RELEASED` = until released. ``fps``, ``width``,
    ``height``: 0 = not given."""

    usecase: str
    duration_ms: int = 0
    priority: int = 0
    detach: bool = False
    report: bool = False
    fps: int = 0
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class Register:
    """Process ``pid`` (> 0) runs app ``app`` (an ``apps:`` entry of the
    daemon's target): its configuration holds until the process exits."""

    pid: int
    app: str


@dataclass(frozen=True)
class Release:
    handle: int


@dataclass(frozen=True)
class Status:
    pass


@dataclass(frozen=True)
class Explain:
    resource: str


@dataclass(frozen=True)
class Ping:
    pass


@dataclass(frozen=True)
class Handle:
    handle: int


@dataclass(frozen=True)
class Done:
    pass


@dataclass(frozen=True)
class Json:
    text: str


@dataclass(frozen=True)
class JsonMore:
    """A piece of a JSON document that continues in the next frame."""

    text: str


@dataclass(frozen=True)
class Pong:
    version: int


@dataclass(frozen=True)
class Error:
    code: ErrorCode
    message: str


Request = Union[Acquire, Release, Status, Explain, Ping, Signal, Register]
Reply = Union[Handle, Done, Json, JsonMore, Pong, Error]


# ---- encoding -------------------------------------------------------------


def _frame(kind: int, body: bytes, flags: int = 0) -> bytes:
    return struct.pack("<BBBBI", MAGIC, VERSION, kind, flags, len(body)) + body


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} {value} is not in {lo}..={hi}")


def _utf8_cut(data: bytes, limit: int) -> int:
    """The largest length <= limit that ends on a UTF-8 character boundary."""
    if len(data) <= limit:
        return len(data)
    end = limit
    # Back off to a character boundary (continuation bytes are 0b10xxxxxx).
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return end


def _truncate_utf8(text: str, limit: int) -> bytes:
    data = text.encode("utf-8")
    return data[: _utf8_cut(data, limit)]


def encode(message: Union[Request, Reply]) -> bytes:
    """Encode one message (the same bytes as the Rust encoder): one frame,
    except a JSON document longer than a frame, which becomes MORE-flagged
    pieces split at UTF-8 boundaries; an error message longer than a frame
    is cut. Values out of range for their field raise ``ValueError``."""
    if isinstance(message, Acquire):
        _check_range("handle", message.handle, 0, 0xFFFFFFFF)
        _check_range("duration_ms", message.duration_ms, 0, 0xFFFFFFFF)
        _check_range("priority", message.priority, 0, 3)
        if len(message.pairs) > MAX_PAIRS:
            raise ValueError(f"{len(message.pairs)} pairs exceed the limit of {MAX_PAIRS}")
        body = bytearray(
            struct.pack(
                "<IIBBH",
                message.handle,
                message.duration_ms,
                message.priority,
                (ACQUIRE_DETACH if message.detach else 0) | (ACQUIRE_REPORT if message.report else 0),
                len(message.pairs),
            )
        )
        for opcode, value in message.pairs:
            _check_range("opcode", opcode, 0, 0xFFFFFFFF)
            _check_range("value", value, -(1 << 63), (1 << 63) - 1)
            body += struct.pack("<Iq", opcode, value)
        return _frame(Kind.ACQUIRE, bytes(body))
    if isinstance(message, Signal):
        _check_range("duration_ms", message.duration_ms, 0, 0xFFFFFFFF)
        _check_range("priority", message.priority, 0, 3)
        for name in ("fps", "width", "height"):
            _check_range(name, getattr(message, name), 0, 0xFFFFFFFF)
        key = message.usecase.encode("utf-8")
        if not 1 <= len(key) <= MAX_USECASE_KEY:
            raise ValueError(f"use case key of {len(key)} bytes is not 1..={MAX_USECASE_KEY}")
        flags = (ACQUIRE_DETACH if message.detach else 0) | (ACQUIRE_REPORT if message.report else 0)
        body = struct.pack(
            "<IBBHIII",
            message.duration_ms,
            message.priority,
            flags,
            0,
            message.fps,
            message.width,
            message.height,
        )
        return _frame(Kind.SIGNAL, body + key)
    if isinstance(message, Register):
        _check_range("pid", message.pid, 1, 0xFFFFFFFF)
        key = message.app.encode("utf-8")
        if not 1 <= len(key) <= MAX_USECASE_KEY:
            raise ValueError(f"app name of {len(key)} bytes is not 1..={MAX_USECASE_KEY}")
        return _frame(Kind.REGISTER, struct.pack("<I", message.pid) + key)
    if isinstance(message, Release):
        _check_range("handle", message.handle, 0, 0xFFFFFFFF)
        return _frame(Kind.RELEASE, struct.pack("<I", message.handle))
    if isinstance(message, Status):
        return _frame(Kind.STATUS, b"")
    if isinstance(message, Explain):
        body = message.resource.encode("utf-8")
        if len(body) > MAX_BODY:
            raise ValueError(f"EXPLAIN resource of {len(body)} bytes exceeds the limit of {MAX_BODY}")
        return _frame(Kind.EXPLAIN, body)
    if isinstance(message, Ping):
        return _frame(Kind.PING, b"")
    if isinstance(message, Handle):
        _check_range("handle", message.handle, 0, 0xFFFFFFFF)
        return _frame(Kind.HANDLE, struct.pack("<I", message.handle))
    if isinstance(message, Done):
        return _frame(Kind.DONE, b"")
    if isinstance(message, Json):
        rest = message.text.encode("utf-8")
        out = bytearray()
        while True:
            cut = _utf8_cut(rest, MAX_BODY)
            piece, rest = rest[:cut], rest[cut:]
            out += _frame(Kind.JSON, piece, FLAG_MORE if rest else 0)
            if not rest:
                return bytes(out)
    if isinstance(message, JsonMore):
        return _frame(Kind.JSON, _truncate_utf8(message.text, MAX_BODY), FLAG_MORE)
    if isinstance(message, Pong):
        _check_range("version", message.version, 0, 255)
        return _frame(Kind.PONG, bytes([message.version]))
    if isinstance(message, Error):
        return _frame(
            Kind.ERROR,
            struct.pack("<H", int(message.code)) + _truncate_utf8(message.message, MAX_BODY - 2),
        )
    raise TypeError(f"not a protocol message: {message!r}")


# ---- decoding -------------------------------------------------------------


def _header(buf: bytes) -> Optional[Tuple[int, int, int]]:
    # Refuse garbage at its first byte, before a full header arrived.
    if len(buf) >= 1 and buf[0] != MAGIC:
        raise ProtocolError("bad_magic", f"bad magic byte 0x{buf[0]:02x} (expected 0x4c)")
    if len(buf) >= 2 and buf[1] != VERSION:
        raise ProtocolError("version", f"unsupported protocol version {buf[1]} (this side speaks 1)")
    if len(buf) < HEADER_LEN:
        return None
    (length,) = struct.unpack_from("<I", buf, 4)
    if length > MAX_BODY:
        raise ProtocolError("too_large", f"frame body of {length} bytes exceeds the limit of 65528")
    return buf[2], buf[3], length


def _bad_flags(flags: int) -> ProtocolError:
    return ProtocolError("flags", f"reserved header flags 0x{flags:02x} must be 0")


def _exact(kind: str, body: bytes, expected: int) -> None:
    if len(body) != expected:
        raise ProtocolError("length", f"{kind} body has {len(body)} bytes, expected {expected}")


def _text(body: bytes, what: str) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("utf8", f"{what} is not valid UTF-8") from None


def _unknown_kind(kind: int) -> ProtocolError:
    return ProtocolError("unknown_kind", f"unknown frame kind 0x{kind:02x}")


def _decode_signal(body: bytes) -> Signal:
    if len(body) < 21:
        raise ProtocolError("length", f"SIGNAL body has {len(body)} bytes, expected 21")
    if len(body) > 20 + MAX_USECASE_KEY:
        raise ProtocolError("length", f"SIGNAL body has {len(body)} bytes, expected {20 + MAX_USECASE_KEY}")
    duration_ms, priority, flags, reserved, fps, width, height = struct.unpack_from("<IBBHIII", body, 0)
    if priority > 3:
        raise ProtocolError("field", f"SIGNAL priority {priority} is not 0..=3")
    if flags & ~(ACQUIRE_DETACH | ACQUIRE_REPORT):
        raise ProtocolError("field", f"SIGNAL flags 0x{flags:02x} has unknown bits")
    if reserved:
        raise ProtocolError("field", "SIGNAL reserved bytes must be 0")
    return Signal(
        _text(body[20:], "SIGNAL use case"),
        duration_ms,
        priority,
        bool(flags & ACQUIRE_DETACH),
        bool(flags & ACQUIRE_REPORT),
        fps,
        width,
        height,
    )


def decode_request(buf: bytes) -> Optional[Tuple[Request, int]]:
    """Decode one request from the front of ``buf``. ``None`` means the frame
    is not complete yet; otherwise ``(request, bytes_used)``. Malformed input
    raises :class:`ProtocolError`."""
    buf = bytes(buf)
    header = _header(buf)
    if header is None:
        return None
    kind, flags, length = header
    if flags != 0:
        raise _bad_flags(flags)
    if kind not in REQUEST_KINDS:
        raise _unknown_kind(kind)
    if len(buf) < HEADER_LEN + length:
        return None
    body = buf[HEADER_LEN : HEADER_LEN + length]
    request: Request
    if kind == Kind.ACQUIRE:
        if len(body) < 12:
            raise ProtocolError("length", f"ACQUIRE body has {len(body)} bytes, expected 12")
        handle, duration_ms, priority, acquire_flags, count = struct.unpack_from("<IIBBH", body, 0)
        _exact("ACQUIRE", body, 12 + 12 * count)
        if priority > 3:
            raise ProtocolError("field", f"ACQUIRE priority {priority} is not 0..=3")
        if acquire_flags & ~(ACQUIRE_DETACH | ACQUIRE_REPORT):
            raise ProtocolError("field", f"ACQUIRE flags 0x{acquire_flags:02x} has unknown bits")
        pairs = tuple(struct.unpack_from("<Iq", body, 12 + 12 * i) for i in range(count))
        request = Acquire(
            handle,
            duration_ms,
            priority,
            bool(acquire_flags & ACQUIRE_DETACH),
            pairs,
            bool(acquire_flags & ACQUIRE_REPORT),
        )
    elif kind == Kind.RELEASE:
        _exact("RELEASE", body, 4)
        request = Release(struct.unpack("<I", body)[0])
    elif kind == Kind.STATUS:
        _exact("STATUS", body, 0)
        request = Status()
    elif kind == Kind.EXPLAIN:
        request = Explain(_text(body, "EXPLAIN resource"))
    elif kind == Kind.SIGNAL:
        request = _decode_signal(body)
    elif kind == Kind.REGISTER:
        if not 5 <= len(body) <= 4 + MAX_USECASE_KEY:
            raise ProtocolError("length", f"REGISTER body has {len(body)} bytes, expected 5..={4 + MAX_USECASE_KEY}")
        pid = struct.unpack_from("<I", body, 0)[0]
        if pid == 0:
            raise ProtocolError("field", "REGISTER pid must be > 0")
        request = Register(pid, _text(body[4:], "REGISTER app"))
    else:
        _exact("PING", body, 0)
        request = Ping()
    return request, HEADER_LEN + length


def decode_reply(buf: bytes) -> Optional[Tuple[Reply, int]]:
    """Decode one reply from the front of ``buf`` (same contract as
    :func:`decode_request`). A JSON frame with the MORE flag decodes to
    :class:`JsonMore`; the reader concatenates pieces up to the next
    :class:`Json`."""
    buf = bytes(buf)
    header = _header(buf)
    if header is None:
        return None
    kind, flags, length = header
    if flags != 0 and not (kind == Kind.JSON and flags == FLAG_MORE):
        raise _bad_flags(flags)
    if kind not in REPLY_KINDS:
        raise _unknown_kind(kind)
    if len(buf) < HEADER_LEN + length:
        return None
    body = buf[HEADER_LEN : HEADER_LEN + length]
    reply: Reply
    if kind == Kind.HANDLE:
        _exact("HANDLE", body, 4)
        reply = Handle(struct.unpack("<I", body)[0])
    elif kind == Kind.DONE:
        _exact("DONE", body, 0)
        reply = Done()
    elif kind == Kind.JSON:
        text = _text(body, "JSON reply")
        reply = JsonMore(text) if flags == FLAG_MORE else Json(text)
    elif kind == Kind.PONG:
        _exact("PONG", body, 1)
        reply = Pong(body[0])
    else:
        if len(body) < 2:
            raise ProtocolError("length", f"ERROR body has {len(body)} bytes, expected 2")
        (code,) = struct.unpack_from("<H", body, 0)
        reply = Error(ErrorCode.from_u16(code), _text(body[2:], "ERROR message"))
    return reply, HEADER_LEN + length


__all__ = [
    "MAGIC", "VERSION", "HEADER_LEN", "MAX_BODY", "MAX_PAIRS", "FLAG_MORE", "Kind", "ErrorCode",
    "LeverError", "ProtocolError", "Acquire", "Release", "Status", "Explain", "Ping",
    "Handle", "Done", "Json", "JsonMore", "Pong", "Error", "Request", "Reply", "encode",
    "decode_request", "decode_reply",
]  # fmt: skip
