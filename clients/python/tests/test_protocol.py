"""The pure-Python protocol against the Rust one: the shared vectors byte
for byte, the same refusals with the same messages, partial frames."""

import json
import random
import struct
from pathlib import Path

import pytest

from lever_client.protocol import (
    HEADER_LEN,
    MAGIC,
    MAX_BODY,
    MAX_PAIRS,
    VERSION,
    Acquire,
    Done,
    Error,
    ErrorCode,
    Explain,
    Handle,
    FLAG_MORE,
    Json,
    JsonMore,
    Kind,
    Ping,
    Pong,
    ProtocolError,
    Release,
    Status,
    decode_reply,
    decode_request,
    encode,
)

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "crates" / "protocol" / "testdata" / "vectors.json"

# The messages behind each vector, as in crates/protocol/tests/protocol.rs.
EXPECTED = {
    "acquire seed example: new handle, indefinite, silver min 1958400": Acquire(
        0, 0, 0, False, ((0x44008100, 1958400),)
    ),
    "acquire update handle 5, 30 s, system-high, detach, two pairs": Acquire(
        5, 30000, 3, True, ((0x44008100, 1958400), (0x4400C100, -1))
    ),
    "acquire with report flag: new handle, 10 s, silver min 99999999": Acquire(
        0, 10000, 0, False, ((0x44008100, 99999999),), report=True
    ),
    "release handle 0x01020304": Release(0x01020304),
    "status": Status(),
    "explain cpu_min_freq.silver": Explain("cpu_min_freq.silver"),
    "ping": Ping(),
    "reply handle 1234567": Handle(1234567),
    "reply done": Done(),
    "reply json": Json('{"ok":true}'),
    "reply json piece (MORE flag)": JsonMore('{"a":'),
    "reply pong": Pong(1),
    "reply error not permitted": Error(ErrorCode.NOT_PERMITTED, "system-only"),
}


def load_vectors():
    return [(v["name"], bytes.fromhex(v["hex"])) for v in json.loads(VECTORS.read_text())]


def test_every_shared_vector_is_known():
    names = [name for name, _ in load_vectors()]
    assert len(names) >= 11
    unknown = set(names) - set(EXPECTED)
    assert not unknown, f"new vectors in vectors.json: add their messages here: {unknown}"


@pytest.mark.parametrize("name,data", load_vectors(), ids=[n for n, _ in load_vectors()])
def test_shared_vector_encodes_and_decodes_byte_exactly(name, data):
    message = EXPECTED[name]
    assert encode(message) == data
    decoder = decode_reply if name.startswith("reply") else decode_request
    assert decoder(data) == (message, len(data))
    # With a following frame, only the first is consumed.
    assert decoder(data + encode(Ping() if decoder is decode_request else Done())) == (
        message,
        len(data),
    )


def test_seed_vector_by_hand():
    # magic, version 1, ACQUIRE, flags 0, length 24; handle 0, duration 0,
    # priority 0, flags 0, count 1; opcode 0x44008100, value 1958400.
    expected = "4c010100180000000000000000000000000001000081004400e21d0000000000"
    assert encode(EXPECTED["acquire seed example: new handle, indefinite, silver min 1958400"]).hex() == expected


def test_partial_frames_wait_for_more_at_every_split():
    data = encode(Acquire(7, 1000, 1, True, ((0x44008100, 1958400), (0x4400C100, 2100000))))
    for cut in range(len(data)):
        assert decode_request(data[:cut]) is None, cut
    two = data + encode(Ping())
    req, used = decode_request(two)
    assert used == len(data) and isinstance(req, Acquire)
    assert decode_request(two[used:]) == (Ping(), 8)
    reply = encode(Error(ErrorCode.LIMIT, "too many requests"))
    for cut in range(len(reply)):
        assert decode_reply(reply[:cut]) is None, cut


def refusal(decoder, data):
    with pytest.raises(ProtocolError) as info:
        decoder(bytes(data))
    return info.value


def acquire_bytes(**kw):
    fields = dict(handle=7, duration_ms=1000, priority=1, detach=True, pairs=((1, 1),))
    fields.update(kw)
    return bytearray(encode(Acquire(**fields)))


def test_refusals_are_precise():
    e = refusal(decode_request, b"X")
    assert (e.reason, str(e), e.code) == ("bad_magic", "bad magic byte 0x58 (expected 0x4c)", ErrorCode.MALFORMED)
    e = refusal(decode_request, [MAGIC, 2])
    assert (e.reason, str(e), e.code) == ("version", "unsupported protocol version 2 (this side speaks 1)", ErrorCode.VERSION)
    e = refusal(decode_request, [MAGIC, 1, 0x42, 0, 0, 0, 0, 0])
    assert (e.reason, str(e)) == ("unknown_kind", "unknown frame kind 0x42")
    e = refusal(decode_request, [MAGIC, 1, Kind.PING, 1, 0, 0, 0, 0])
    assert (e.reason, str(e)) == ("flags", "reserved header flags 0x01 must be 0")
    # A huge declared length is refused at once, not buffered.
    e = refusal(decode_request, [MAGIC, 1, Kind.ACQUIRE, 0, 0xFF, 0xFF, 0xFF, 0x7F])
    assert (e.reason, str(e)) == ("too_large", "frame body of 2147483647 bytes exceeds the limit of 65528")
    # Count says 2 pairs, body has 1.
    b = acquire_bytes()
    b[HEADER_LEN + 10] = 2
    assert str(refusal(decode_request, b)) == "ACQUIRE body has 24 bytes, expected 36"
    b = acquire_bytes()
    b[HEADER_LEN + 8] = 9
    assert str(refusal(decode_request, b)) == "ACQUIRE priority 9 is not 0..=3"
    b = acquire_bytes()
    b[HEADER_LEN + 9] = 0x80
    assert str(refusal(decode_request, b)) == "ACQUIRE flags 0x80 has unknown bits"
    b[HEADER_LEN + 9] = 0x03  # detach | report: both known
    assert decode_request(bytes(b))[0].report
    b[HEADER_LEN + 9] = 0x04
    assert str(refusal(decode_request, b)) == "ACQUIRE flags 0x04 has unknown bits"
    short = bytes([MAGIC, 1, Kind.ACQUIRE, 0, 4, 0, 0, 0, 0, 0, 0, 0])
    assert str(refusal(decode_request, short)) == "ACQUIRE body has 4 bytes, expected 12"
    b = bytearray(encode(Explain("x")))
    b[HEADER_LEN] = 0xFF
    e = refusal(decode_request, b)
    assert (e.reason, str(e)) == ("utf8", "EXPLAIN resource is not valid UTF-8")
    e = refusal(decode_request, [MAGIC, 1, Kind.RELEASE, 0, 3, 0, 0, 0, 1, 2, 3])
    assert str(e) == "RELEASE body has 3 bytes, expected 4"
    assert str(refusal(decode_request, [MAGIC, 1, Kind.STATUS, 0, 1, 0, 0, 0, 0])) == "STATUS body has 1 bytes, expected 0"
    assert str(refusal(decode_request, [MAGIC, 1, Kind.PING, 0, 1, 0, 0, 0, 0])) == "PING body has 1 bytes, expected 0"
    # Replies are not requests and vice versa.
    assert refusal(decode_request, encode(Done())) == ProtocolError("unknown_kind", "unknown frame kind 0x82")
    assert refusal(decode_reply, encode(Ping())) == ProtocolError("unknown_kind", "unknown frame kind 0x05")


def test_reply_refusals_are_precise():
    assert str(refusal(decode_reply, [MAGIC, 1, Kind.HANDLE, 0, 2, 0, 0, 0, 1, 2])) == "HANDLE body has 2 bytes, expected 4"
    assert str(refusal(decode_reply, [MAGIC, 1, Kind.DONE, 0, 1, 0, 0, 0, 1])) == "DONE body has 1 bytes, expected 0"
    assert str(refusal(decode_reply, [MAGIC, 1, Kind.PONG, 0, 0, 0, 0, 0])) == "PONG body has 0 bytes, expected 1"
    assert str(refusal(decode_reply, [MAGIC, 1, Kind.ERROR, 0, 1, 0, 0, 0, 4])) == "ERROR body has 1 bytes, expected 2"
    assert str(refusal(decode_reply, [MAGIC, 1, Kind.JSON, 0, 1, 0, 0, 0, 0xC3])) == "JSON reply is not valid UTF-8"
    assert str(refusal(decode_reply, [MAGIC, 1, Kind.ERROR, 0, 3, 0, 0, 0, 1, 0, 0xFF])) == "ERROR message is not valid UTF-8"
    # Unknown error codes map to INTERNAL, like the Rust decoder.
    reply, _ = decode_reply(bytes([MAGIC, 1, Kind.ERROR, 0, 2, 0, 0, 0, 99, 0]))
    assert reply == Error(ErrorCode.INTERNAL, "")


def test_long_json_is_split_into_more_frames_at_char_boundaries():
    text = "é" * (MAX_BODY + 1)  # 2 bytes each: three frames
    data = encode(Json(text))
    at, joined, frames = 0, "", 0
    while True:
        reply, used = decode_reply(data[at:])
        at += used
        frames += 1
        joined += reply.text
        assert used <= HEADER_LEN + MAX_BODY
        if isinstance(reply, Json):
            break
        assert isinstance(reply, JsonMore)
    assert (frames, at, joined) == (3, len(data), text)
    # A document of exactly one frame is one frame without MORE.
    assert encode(Json("x" * MAX_BODY))[3] == 0
    # MORE is refused on anything but JSON replies, and on requests.
    done = bytearray(encode(Done()))
    done[3] = FLAG_MORE
    assert refusal(decode_reply, done) == ProtocolError("flags", "reserved header flags 0x01 must be 0")
    json_flags = bytearray(encode(Json("{}")))
    json_flags[3] = 2
    assert str(refusal(decode_reply, json_flags)) == "reserved header flags 0x02 must be 0"
    ping = bytearray(encode(Ping()))
    ping[3] = FLAG_MORE
    assert str(refusal(decode_request, ping)) == "reserved header flags 0x01 must be 0"
    # An error message longer than a frame is cut to one frame.
    assert len(encode(Error(ErrorCode.INVALID, "x" * 70000))) == HEADER_LEN + MAX_BODY
    data = encode(Error(ErrorCode.INVALID, "€" * MAX_BODY))  # 3 bytes each
    reply, _ = decode_reply(data)
    assert len(reply.message.encode()) <= MAX_BODY - 2 and set(reply.message) == {"€"}


def test_encoder_refuses_out_of_range_fields():
    for bad in (
        dict(priority=4),
        dict(handle=-1),
        dict(handle=1 << 32),
        dict(duration_ms=-5),
        dict(pairs=((1 << 32, 0),)),
        dict(pairs=((1, 1 << 63),)),
        dict(pairs=((0, 0),) * (MAX_PAIRS + 1)),
    ):
        with pytest.raises(ValueError):
            acquire_bytes(**bad)
    with pytest.raises(TypeError):
        acquire_bytes(handle=True)
    with pytest.raises(TypeError):
        encode("PING")
    # The largest acquire that fits is accepted both ways.
    big = Acquire(1, 2, 0, False, tuple((i, -i) for i in range(MAX_PAIRS)))
    assert decode_request(encode(big)) == (big, HEADER_LEN + 12 + 12 * MAX_PAIRS)


def test_random_round_trips_and_garbage():
    rng = random.Random(6490)
    for _ in range(500):
        req = rng.choice(
            [
                Acquire(
                    rng.getrandbits(32),
                    rng.getrandbits(32),
                    rng.randrange(4),
                    rng.random() < 0.5,
                    tuple((rng.getrandbits(32), rng.getrandbits(64) - (1 << 63)) for _ in range(rng.randrange(40))),
                ),
                Release(rng.getrandbits(32)),
                Status(),
                Explain("".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(64)))),
                Ping(),
            ]
        )
        data = encode(req)
        assert decode_request(data) == (req, len(data))
    for _ in range(2000):
        data = bytearray(rng.getrandbits(8) for _ in range(rng.randrange(200)))
        if len(data) >= 2 and rng.random() < 0.5:
            data[0], data[1] = MAGIC, VERSION
        for decoder in (decode_request, decode_reply):
            try:
                out = decoder(bytes(data))
            except ProtocolError:
                continue
            assert out is None or out[1] <= len(data)


def test_header_layout():
    assert encode(Ping()) == struct.pack("<BBBBI", 0x4C, 1, 0x05, 0, 0)


def test_signal_round_trips_with_the_rust_layout():
    from lever_client.protocol import Signal, SIGNAL_UNTIL_RELEASED

    sig = Signal("camera-preview", fps=30)
    data = encode(sig)
    # Header, then duration u32, priority u8, flags u8, reserved u16,
    # fps/width/height u32, key: as crates/protocol's test expects.
    assert len(data) == 8 + 20 + 14
    assert data[2] == 0x06
    assert data[16:20] == (30).to_bytes(4, "little")
    assert decode_request(data) == (sig, len(data))
    full = Signal("0x00030003", SIGNAL_UNTIL_RELEASED, 3, True, True, 60, 1920, 1080)
    assert decode_request(encode(full)) == (full, len(encode(full)))
    bad = bytearray(data)
    bad[14] = 1
    with pytest.raises(ProtocolError) as info:
        decode_request(bytes(bad))
    assert "reserved" in str(info.value)
    with pytest.raises(ValueError):
        encode(Signal(""))


def test_register_matches_the_rust_layout():
    from lever_client.protocol import Register

    reg = Register(4242, "gst-camera")
    data = encode(reg)
    # Header, pid u32, app name: as crates/protocol's test expects.
    assert data[2] == 0x07
    assert len(data) == 8 + 4 + 10
    assert data[8:12] == (4242).to_bytes(4, "little")
    assert decode_request(data) == (reg, len(data))
    zero = bytearray(data)
    zero[8:12] = bytes(4)
    with pytest.raises(ProtocolError) as info:
        decode_request(bytes(zero))
    assert "pid" in str(info.value)
    with pytest.raises(ValueError):
        encode(Register(1, ""))
    with pytest.raises(ValueError):
        encode(Register(0, "x"))
