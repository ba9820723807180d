"""Client behaviour against a scripted daemon speaking the protocol."""

import os
import socket
import threading

import pytest

from lever_client import Client, ErrorCode, LeverError, socket_path
from lever_client.protocol import (
    Acquire,
    Done,
    Error,
    Handle,
    Json,
    Pong,
    Release,
    Status,
    decode_request,
    encode,
)


class Mock:
    """One-connection-at-a-time daemon: records requests, answers them,
    optionally one byte per send (to exercise partial frames)."""

    def __init__(self, path, dribble=False):
        self.path = str(path)
        self.log = []
        self.dribble = dribble
        self.next = 41
        self.live = set()
        self.closed = threading.Event()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen()
        threading.Thread(target=self._run, daemon=True).start()

    def _answer(self, req):
        if isinstance(req, Acquire):
            if req.handle == 0:
                self.next += 1
                self.live.add(self.next)
                return Handle(self.next)
            if req.handle in self.live:
                return Handle(req.handle)
            return Error(ErrorCode.NO_SUCH_REQUEST, f"no request {req.handle}")
        if isinstance(req, Release):
            if req.handle in self.live:
                self.live.remove(req.handle)
                return Done()
            return Error(ErrorCode.NO_SUCH_REQUEST, f"no request {req.handle}")
        if isinstance(req, Status):
            # Pad past one frame so the reply comes as MORE-flagged pieces.
            return Json('{"live": %d, "pad": "%s"}' % (len(self.live), "é" * 40000))
        if req.__class__.__name__ == "Explain":
            if req.resource == "nope":
                return Error(ErrorCode.UNKNOWN_RESOURCE, "unknown resource nope")
            return Json('{"resource": "%s"}' % req.resource)
        return Pong(1)

    def _run(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            buf = b""
            with conn:
                while True:
                    decoded = decode_request(buf)
                    if decoded is None:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        buf += chunk
                        continue
                    req, used = decoded
                    buf = buf[used:]
                    self.log.append(req)
                    if getattr(req, "resource", None) == "hangup":
                        break
                    data = encode(self._answer(req))
                    if self.dribble:
                        for i in range(len(data)):
                            conn.sendall(data[i : i + 1])
                    else:
                        conn.sendall(data)
            self.live.clear()  # the lease ends with the connection
            self.closed.set()


@pytest.fixture
def mock(tmp_path):
    m = Mock(tmp_path / "lever.sock")
    yield m
    m.listener.close()


def test_acquire_sends_the_request_and_returns_the_handle(mock):
    with Client(mock.path) as c:
        h = c.acquire([(0x44008100, 1958400)], duration_ms=30000)
        assert h == 42
        assert mock.log[-1] == Acquire(0, 30000, 0, False, ((0x44008100, 1958400),))
        assert c.acquire({0x44008100: 1000000}, handle=h, priority=1, detach=True) == h
        assert mock.log[-1] == Acquire(42, 0, 1, True, ((0x44008100, 1000000),))
        status = c.status()
        assert status["live"] == 1 and len(status["pad"]) == 40000
        assert c.explain(0x44008100) == {"resource": "0x44008100"}
        assert c.explain("cpu_min_freq.silver") == {"resource": "cpu_min_freq.silver"}
        assert c.ping() == 1
        c.release(h)
        assert mock.log[-1] == Release(42)


def test_refusals_carry_code_and_message(mock):
    with Client(mock.path) as c:
        with pytest.raises(LeverError) as info:
            c.release(7)
        assert info.value.code == ErrorCode.NO_SUCH_REQUEST
        assert info.value.message == "no request 7" == str(info.value)
        with pytest.raises(LeverError) as info:
            c.explain("nope")
        assert info.value.code == ErrorCode.UNKNOWN_RESOURCE
        # The connection is still usable after a refusal.
        assert c.ping() == 1
        with pytest.raises(ValueError):
            c.acquire([])
        with pytest.raises(ValueError):
            c.acquire([(1, 1)], priority=7)


def test_hold_releases_on_exit_even_on_exception(mock):
    with Client(mock.path) as c:
        with c.hold([(0x44008100, 1958400)]) as h:
            assert mock.live == {h}
        assert mock.live == set() and mock.log[-1] == Release(h)
        with pytest.raises(RuntimeError):
            with c.hold([(0x44008100, 1)], duration_ms=500):
                raise RuntimeError("boom")
        assert mock.live == set()
        # A timed hold that the daemon already expired exits quietly.
        with c.hold([(1, 1)], duration_ms=10) as h:
            mock.live.discard(h)
        # An indefinite one whose release fails does not.
        with pytest.raises(LeverError):
            with c.hold([(1, 1)]) as h:
                mock.live.discard(h)


def test_closing_the_client_ends_the_connection(mock):
    c = Client(mock.path)
    c.acquire([(1, 2)])
    c.close()
    assert mock.closed.wait(5)
    assert mock.live == set()
    with pytest.raises(LeverError, match="client is closed"):
        c.ping()


def test_replies_arriving_byte_by_byte(tmp_path):
    m = Mock(tmp_path / "s.sock", dribble=True)
    with Client(m.path) as c:
        assert c.acquire([(5, 6)]) == 42
        assert c.ping() == 1
    m.listener.close()


def test_daemon_hanging_up_is_an_error(mock):
    with Client(mock.path) as c:
        with pytest.raises(LeverError, match="closed the connection"):
            c.explain("hangup")


def test_socket_path_and_connect_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("LEVER_SOCKET", raising=False)
    assert socket_path() == "/run/lever/lever.sock"
    monkeypatch.setenv("LEVER_SOCKET", "")
    assert socket_path() == "/run/lever/lever.sock"
    missing = str(tmp_path / "nothing.sock")
    monkeypatch.setenv("LEVER_SOCKET", missing)
    assert socket_path() == missing
    with pytest.raises(LeverError) as info:
        Client()
    assert missing in str(info.value) and "lever daemon" in str(info.value)
    assert info.value.code is None


def test_lever_socket_is_honoured(mock, monkeypatch):
    monkeypatch.setenv("LEVER_SOCKET", mock.path)
    with Client() as c:
        assert c.path == mock.path and c.ping() == 1
    assert os.path.exists(mock.path)
