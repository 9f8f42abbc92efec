"""The gateway's .msg / .msgpack replies (issue 37): Webdis's msgpack format
(Debian's Webdis is built without it, so the documented format of its
formats/msgpack.c is the reference): application/x-msgpack, a one-pair map
of the verb to the value, strings in the old raw family (fixraw, raw16,
raw32: no str8, no UTF-8 check), integers in their smallest form, [true,
status] / [false, error], nil, INFO and HGETALL as maps.  Decoded with
python3-msgpack and checked byte for byte where the encoding matters."""
import pytest

from conftest import free_port
from webdishelp import HttpConn, build, request

msgpack = pytest.importorskip("msgpack", reason="python3-msgpack (scripts/deps.sh test installs it)")


@pytest.fixture
def gw(start_server):
    hp = free_port()
    s = start_server(http_port=hp)
    s.http = hp
    return s


def get(s, path):
    r = request(s.http, "GET", path)
    assert r.status == 200, (path, r.status)
    assert r.header("Content-Type") == "application/x-msgpack"
    return r.body


def dec(b):
    return msgpack.unpackb(b, raw=True, strict_map_key=False)


def test_values(gw):
    assert get(gw, "/SET/k/v.msg") == b"\x81\xa3SET\x92\xc3\xa2OK"
    assert dec(get(gw, "/GET/k.msgpack")) == {b"GET": b"v"}
    assert get(gw, "/GET/nokey.msg") == b"\x81\xa3GET\xc0"
    assert dec(get(gw, "/FOO.msg")) == {b"FOO": [False, b"ERR unknown command 'FOO', with args beginning with: "]}
    assert dec(get(gw, "/INCRBY/n/300.msg")) == {b"INCRBY": 300}
    assert get(gw, "/INCRBY/m/-5.msg") == b"\x81\xa6INCRBY\xfb"  # negative fixint
    for v, tail in [(5, b"\x05"), (200, b"\xcc\xc8"), (70000, b"\xce\x00\x01\x11\x70"),
                    (-100, b"\xd0\x9c"), (-40000, b"\xd2\xff\xff\x63\xc0"),
                    (2 ** 40, b"\xcf\x00\x00\x01\x00\x00\x00\x00\x00"),
                    (-(2 ** 40), b"\xd3\xff\xff\xff\x00\x00\x00\x00\x00")]:
        gw.client().set("i", v)
        assert get(gw, "/INCRBY/i/0.msg") == b"\x81\xa6INCRBY" + tail, v
        assert dec(get(gw, "/INCRBY/i/0.msg")) == {b"INCRBY": v}


def test_strings_are_raw(gw):
    c = gw.client()
    for n, head in [(0, b"\xa0"), (31, b"\xbf"), (32, b"\xda\x00\x20"), (255, b"\xda\x00\xff"),
                    (65535, b"\xda\xff\xff"), (65536, b"\xdb\x00\x01\x00\x00")]:
        c.set("s", b"x" * n)
        assert get(gw, "/GET/s.msg") == b"\x81\xa3GET" + head + b"x" * n, n
    # Bytes as they are: not UTF-8, a NUL inside.
    c.set("bin", b"\xff\x00\xfe")
    assert get(gw, "/GET/bin.msg") == b"\x81\xa3GET\xa3\xff\x00\xfe"


def test_aggregates(gw):
    c = gw.client()
    c.rpush("l", "a", "b", "c")
    assert dec(get(gw, "/LRANGE/l/0/-1.msg")) == {b"LRANGE": [b"a", b"b", b"c"]}
    assert get(gw, "/LRANGE/nol/0/-1.msg") == b"\x81\xa6LRANGE\x90"
    c.hset("h", mapping={"f": "1", "g": "2"})
    assert dec(get(gw, "/HGETALL/h.msg")) == {b"HGETALL": {b"f": b"1", b"g": b"2"}}
    assert dec(get(gw, "/HGETALL/noh.msg")) == {b"HGETALL": {}}
    assert dec(get(gw, "/MGET/l/nokey/s.msg")) == {b"MGET": [None, None, None]}
    c.set("s", "v")
    assert dec(get(gw, "/MGET/nokey/s.msg")) == {b"MGET": [None, b"v"]}
    c.zadd("z", {"m": 1})
    assert dec(get(gw, "/ZRANGE/z/0/-1/WITHSCORES.msg")) == {b"ZRANGE": [b"m", b"1"]}
    # 20 items: array16.
    c.rpush("big", *[str(i) for i in range(20)])
    b = get(gw, "/LRANGE/big/0/-1.msg")
    assert b.startswith(b"\x81\xa6LRANGE\xdc\x00\x14")
    assert dec(b) == {b"LRANGE": [str(i).encode() for i in range(20)]}
    # Nested arrays are arrays (Webdis writes nil there, as its JSON).
    c.xadd("st", {"f": "v"}, id="1-1")
    assert dec(get(gw, "/XRANGE/st/-/%2B.msg")) == {b"XRANGE": [[b"1-1", [b"f", b"v"]]]}
    # INFO: a map of its key:value lines, no section headers.
    info = dec(get(gw, "/INFO/server.msg"))[b"INFO"]
    assert info[b"redis_version"] == b"7.0.15"
    assert all(not k.startswith(b"#") for k in info)
    assert info[b"tcp_port"] == str(gw.port).encode()


def test_pipelined_and_pubsub(gw):
    with HttpConn(gw.http) as h:
        h.send(build("GET", "/SET/a/1.msg") + build("GET", "/GET/a.msg"))
        r1, r2 = h.read_response(), h.read_response()
        assert dec(r1.body) == {b"SET": [True, b"OK"]}
        assert dec(r2.body) == {b"GET": b"1"}
    # A pub/sub stream: chunked, each chunk one message in MessagePack.
    with HttpConn(gw.http) as h:
        h.send(build("GET", "/SUBSCRIBE/ch.msg"))
        head = h.read_head()
        assert head.status == 200 and head.header("Transfer-Encoding") == "chunked"
        assert head.header("Content-Type") == "application/x-msgpack"
        assert dec(h.read_chunk()) == {b"SUBSCRIBE": [b"subscribe", b"ch", 1]}
        assert gw.client().publish("ch", b"\xffbin") == 1
        assert dec(h.read_chunk()) == {b"SUBSCRIBE": [b"message", b"ch", b"\xffbin"]}
