"""A blocking client for ``lever daemon`` (same behaviour as the Rust
``lever_client::Client``).

One :class:`Client` is one connection, and the daemon ties requests to the
connection that made them: when it is closed (or the process dies),
everything acquired through it is released, except timed requests acquired
with ``detach=True``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union

from .protocol import (
    Acquire,
    Done,
    Error,
    ErrorCode,
    Explain,
    Handle,
    Json,
    JsonMore,
    LeverError,
    Ping,
    Pong,
    Release,
    Signal,
    Register,
    Reply,
    Request,
    Status,
    decode_reply,
    encode,
)

DEFAULT_SOCKET = "/run/lever/lever.sock"

Pairs = Union[Mapping[int, int], Iterable[Tuple[int, int]]]


def socket_path() -> str:
    """``$LEVER_SOCKET`` when set and not empty, else :data:`DEFAULT_SOCKET`."""
    return os.environ.get("LEVER_SOCKET") or DEFAULT_SOCKET


def _pairs(pairs: Pairs) -> Tuple[Tuple[int, int], ...]:
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    out = []
    for item in items:
        opcode, value = item
        out.append((int(opcode), int(value)))
    if not out:
        raise ValueError("a request needs at least one (opcode, value) pair")
    return tuple(out)


class Client:
    """A connection to the daemon at ``path`` (default: :func:`socket_path`).

    ``timeout`` (seconds, ``None`` = wait forever) bounds each call.
    """

    def __init__(self, path: Optional[Union[str, os.PathLike]] = None, timeout: Optional[float] = None):
        self.path = os.fspath(path) if path is not None else socket_path()
        self._buf = b""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(self.path)
        except OSError as e:
            sock.close()
            raise LeverError(
                f"cannot connect to lever daemon at {self.path}: {e.strerror or e} "
                "(is `lever daemon` running? set LEVER_SOCKET to its socket)"
            ) from e
        self._sock: Optional[socket.socket] = sock

    # -- plumbing -----------------------------------------------------------

    def call(self, request: Request) -> Reply:
        """Send one request and wait for its reply (a JSON document sent in
        several MORE-flagged frames is joined). An ERROR reply raises
        :class:`LeverError` with the daemon's code and message."""
        if self._sock is None:
            raise LeverError("client is closed")
        data = encode(request)
        pieces = []
        try:
            self._sock.sendall(data)
            while True:
                decoded = decode_reply(self._buf)
                if decoded is not None:
                    reply, used = decoded
                    self._buf = self._buf[used:]
                    if isinstance(reply, JsonMore):
                        pieces.append(reply.text)
                        continue
                    if pieces and isinstance(reply, Json):
                        reply = Json("".join(pieces) + reply.text)
                    break
                chunk = self._sock.recv(65536)
                if not chunk:
                    raise LeverError("lever daemon closed the connection")
                self._buf += chunk
        except OSError as e:
            raise LeverError(f"connection to lever daemon failed: {e}") from e
        if isinstance(reply, Error):
            raise LeverError(reply.message, reply.code)
        return reply

    @classmethod
    def _handle_or_report(cls, reply: Reply, report: bool) -> Any:
        """HANDLE's number, or with ``report`` the JSON report as a dict."""
        if not report and isinstance(reply, Handle):
            return reply.handle
        if report and isinstance(reply, Json):
            return json.loads(reply.text)
        raise cls._unexpected(reply)

    @staticmethod
    def _unexpected(reply: Reply) -> LeverError:
        return LeverError(f"unexpected reply from lever daemon: {reply!r}")

    # -- API ----------------------------------------------------------------

    def acquire(
        self,
        pairs: Pairs,
        duration_ms: int = 0,
        handle: int = 0,
        priority: int = 0,
        detach: bool = False,
        report: bool = False,
    ) -> Any:
        """Acquire (``handle=0``) or update a request of ``(opcode, value)``
        pairs (or an ``{opcode: value}`` dict) for ``duration_ms`` (0 = until
        released). ``priority``: 0 third-party-low .. 3 system-high.
        Returns the handle; with ``report=True`` the daemon's report instead
        (a dict: ``handle``, and per resource ``asked``, ``held``,
        ``clamped``, ``snapped``, ``applied`` and the ``cause``)."""
        reply = self.call(
            Acquire(
                handle=handle,
                duration_ms=duration_ms,
                priority=priority,
                detach=detach,
                pairs=_pairs(pairs),
                report=report,
            )
        )
        return self._handle_or_report(reply, report)

    def signal(
        self,
        usecase: str,
        duration_ms: int = 0,
        priority: int = 0,
        detach: bool = False,
        report: bool = False,
        fps: int = 0,
        width: int = 0,
        height: int = 0,
    ) -> Any:
        """Trigger the use case ``usecase`` (name or id text, as ``lever
        usecases`` lists them; URM's ``tuneSignal``). ``duration_ms``: 0 =
        the use case's own, ``SIGNAL_UNTIL_RELEASED`` = until released;
        ``fps``/``width``/``height`` choose the variant (0 = not given).
        Returns the handle (end it with :meth:`release`); with
        ``report=True`` the daemon's report (as :meth:`acquire`'s, plus
        ``usecase`` and ``duration_ms``)."""
        reply = self.call(
            Signal(
                usecase=usecase,
                duration_ms=duration_ms,
                priority=priority,
                detach=detach,
                report=report,
                fps=fps,
                width=width,
                height=height,
            )
        )
        return self._handle_or_report(reply, report)

    def register(self, app: str, pid: Optional[int] = None) -> None:
        """Register process ``pid`` (default: this one) as app ``app`` of the
        daemon's target (``lever run --app``): the daemon applies its
        configuration until that process exits. Without root or the system
        group, only a process of this uid."""
        reply = self.call(Register(os.getpid() if pid is None else pid, app))
        if not isinstance(reply, Done):
            raise self._unexpected(reply)

    def release(self, handle: int) -> None:
        """Release a request."""
        reply = self.call(Release(handle))
        if not isinstance(reply, Done):
            raise self._unexpected(reply)

    def status(self) -> Dict[str, Any]:
        """The daemon's status document."""
        return self._json(self.call(Status()))

    def explain(self, resource: Union[str, int]) -> Dict[str, Any]:
        """One resource, by name or opcode (an int is sent as ``0x...``)."""
        if isinstance(resource, int):
            resource = f"0x{resource:08x}"
        return self._json(self.call(Explain(resource)))

    def ping(self) -> int:
        """Liveness check; returns the daemon's protocol version."""
        reply = self.call(Ping())
        if isinstance(reply, Pong):
            return reply.version
        raise self._unexpected(reply)

    @contextlib.contextmanager
    def hold(self, pairs: Pairs, duration_ms: int = 0, priority: int = 0) -> Iterator[int]:
        """Hold a request for the duration of a ``with`` block; yields the
        handle and releases on exit (a timed request that already expired
        counts as released)."""
        handle = self.acquire(pairs, duration_ms=duration_ms, priority=priority)
        try:
            yield handle
        finally:
            try:
                self.release(handle)
            except LeverError as e:
                if not (e.code == ErrorCode.NO_SUCH_REQUEST and duration_ms > 0):
                    raise

    def close(self) -> None:
        """Close the connection: the daemon releases its requests."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()

    @staticmethod
    def _json(reply: Reply) -> Dict[str, Any]:
        if not isinstance(reply, Json):
            raise Client._unexpected(reply)
        try:
            return json.loads(reply.text)
        except ValueError as e:
            raise LeverError(f"lever daemon sent invalid JSON: {e}") from e
