"""SCRIPT DEBUG: the Lua debugger, driven by `redis-cli --ldb` (forked
sessions) and `redis-cli --ldb-sync-mode` (sessions in the server), and by
raw RESP, compared with redis-server 7.0.15 byte for byte (pointers
printed for functions are masked)."""
import os
import re
import socket
import subprocess
import time

import pytest

from conftest import cairn_bin
from resphelp import encode as cmd, value_end

CLI = "redis-cli"


def lua_engine(srv):
    return srv.client().info("server").get("cairn_lua_engine", "lua5.1")


@pytest.fixture(autouse=True)
def _lua51_only(request):
    """The LuaJIT build refuses SCRIPT DEBUG YES|SYNC (test_luajit_refuses)."""
    if request.node.name.startswith("test_luajit"):
        return
    if "luajit" in os.path.basename(cairn_bin()) or "luajit" in cairn_bin():
        pytest.skip("the LuaJIT build has no Lua debugger")


def cli(srv, mode, path, stdin, args=()):
    opt = "--ldb" if mode == "yes" else "--ldb-sync-mode"
    out = subprocess.run([CLI, "-h", srv.host, "-p", str(srv.port), opt, "--eval", path] + list(args),
                         input=stdin.encode(), capture_output=True, timeout=60)
    text = (out.stdout + out.stderr).decode("utf-8", "replace")
    return re.sub(r"0x[0-9a-f]+", "PTR", text)


SCRIPTS = {
    "basic": """local a = 1
local t = {1,2,"x"}
redis.call('set', KEYS[1], ARGV[1])
redis.debug(a, t)
return redis.call('get', KEYS[1])
""",
    "replies": """local m = {a=1}
local x = 3.5
redis.call('rpush','L','a','b')
redis.call('lrange','L',0,-1)
redis.call('get','nokey')
redis.pcall('incr','L')
redis.setresp(3)
redis.call('hset','H','f','v')
redis.call('hgetall','H')
redis.call('get','nokey')
redis.call('smembers','L2')
return 1
""",
    "funcs": """local function f(a)
  local b = a * 2
  redis.call('set', 'x', b)
  return b
end
local r = f(3)
redis.breakpoint()
local z = redis.call('get', 'x')
return {r, z, redis.call('incr','cnt')}
""",
    "long": """local s = string.rep("x", 300)
redis.breakpoint()
local y = 2
redis.debug(s)
return s
""",
    "resp3": """redis.setresp(3)
redis.call('zadd','Z','3.5','m')
redis.call('zscore','Z','m')
redis.call('zrange','Z',0,-1,'withscores')
local t = {1, nil, 3, x={}, y={{{{{{{{{{{1}}}}}}}}}}}}
local f = redis.call
return 1
""",
}

CASES = [
    ("yes", "basic", "help\nn\nn\np\nb 5\nc\nl\nw\nt\ne 1+1\nr ping\nm 10\np t\nc\n", ["k", ",", "v"]),
    ("sync", "basic", "n\na\n", ["k", ",", "v"]),
    ("sync", "basic", "s\ns\ns\ns\ns\n", ["k", ",", "v"]),
    ("yes", "basic", "restart\nc\n", ["k", ",", "v"]),
    ("yes", "replies", "n\nn\np\nn\nn\nn\nn\nn\nn\nn\nn\nn\np nosuch\np KEYS\np ARGV\nb\nb 99\nb -3\nb x\n"
     "m 0\nm\nl 3 1\nl 0\nt\ne error('x')\ne return {1,{2}}\ne 1 +\nr\nfoo\nr set\nc\n", ["k", ",", "v"]),
    ("sync", "funcs", "s\ns\ns\nt\np\np a\ns\ns\ns\ns\np\ns\ns\nc\n", []),
    ("yes", "funcs", "b 3\nc\nt\nb\nb 8 9 -3 0\nb\nc\nc\n", []),
    ("yes", "long", "c\np s\nn\nm 70\np\nm -3\nm 0\np\nc\n", []),
    ("yes", "resp3", "n\nn\nn\nn\nn\nn\np\ne {}\ne nil\nr set a\nr incr Z\nr get Z\nt\nb 1 2 3\nb\n"
     "l 100\nl 2 0\nl -1 1\nwhole 5\nb 0\nb -1\nc\n", []),
]


@pytest.mark.parametrize("mode,script,stdin,args", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_cli_session_matches_redis(server, oracle, tmp_path, mode, script, stdin, args):
    path = str(tmp_path / (script + ".lua"))
    with open(path, "w") as f:
        f.write(SCRIPTS[script])
    ours = cli(server, mode, path, stdin, args)
    theirs = cli(oracle, mode, path, stdin, args)
    assert ours == theirs
    assert "Lua debugging session started" in ours


def test_writes_rolled_back_in_fork_mode_kept_in_sync_mode(server, oracle, tmp_path):
    path = str(tmp_path / "w.lua")
    with open(path, "w") as f:
        f.write("redis.call('incr', KEYS[1])\nreturn 1\n")
    for srv in (server, oracle):
        r = srv.client()
        assert "rolled back" in cli(srv, "yes", path, "c\n", ["ctr"])
        assert r.get("ctr") is None
        assert "ended" in cli(srv, "sync", path, "c\n", ["ctr"])
        assert r.get("ctr") == b"1"


# ---------------------------------------------------------------------------
# Raw RESP


def complete_values(buf):
    """How many complete RESP values buf holds."""
    n, i = 0, 0
    while i < len(buf):
        i = value_end(buf, i)
        if i is None:
            break
        n += 1
    return n


def session(srv, steps):
    """steps: (bytes to send, replies to wait for, or -1: until closed)."""
    s = socket.create_connection((srv.host, srv.port), timeout=20)
    out = b""
    try:
        for data, want in steps:
            have = complete_values(out)
            s.sendall(data)
            deadline = time.time() + 20
            while time.time() < deadline:
                if want >= 0 and complete_values(out) >= have + want:
                    break
                try:
                    d = s.recv(65536)
                except ConnectionResetError:  # closed with our bytes unread
                    d = b""
                if not d:
                    out += b"<EOF>"
                    break
                out += d
    finally:
        s.close()
    return out


RAW = [
    [(cmd("MULTI"), 1), (cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EXEC"), 1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVALSHA", "0" * 40, 0), 1), (cmd("EVAL_RO", "return 1", 0), 1),
     (cmd("c"), -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("EVAL", 'redis.call("set","a","1")\nreturn 1', 0), 1),
     (cmd("n"), 1), (cmd("c"), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("SCRIPT", "DEBUG", "NO"), 1), (cmd("EVAL", "return 1", 0), 1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "return 1", 0), 1), (b"PING\r\n", -1)],
    [(cmd("SCRIPT", "DEBUG", "maybe"), 1), (cmd("SCRIPT", "DEBUG"), 1), (cmd("SCRIPT", "DEBUG", "yes", "x"), 1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "return 1", 5), -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("EVAL", "return +", 0), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "local x = 1\nreturn x", 0), 1), (b"*1\r\n$0\r\n\r\n", -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "local x = 1\nreturn x", 0), 1), (b"*1\r\n$1\r\np", 0),
     (b"\r\n", 1), (cmd("c"), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "", 0), 1), (cmd("a"), -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("EVAL", 'redis.call("nosuch")', 0), 1), (cmd("s"), -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("EVAL", "redis.call()", 0), 1), (cmd("s"), -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("EVAL", 'redis.call("get",{})', 0), 1), (cmd("s"), -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("EVAL", '#!lua flags=no-writes\nredis.call("set","a","b")', 0), 1),
     (cmd("s"), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "return 1", 0), 1),
     (cmd("r", "set", "a", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 1), (cmd("r", "mget", "a", "b"), 1),
     (cmd("r", "hset", "h", "a", 1), 1), (cmd("r", "hgetall", "h"), 1), (cmd("r", "sadd", "s", "x"), 1),
     (cmd("r", "smembers", "s"), 1), (cmd("r", "zadd", "z", "inf", "q"), 1), (cmd("r", "zscore", "z", "q"), 1),
     (cmd("r", "client", "info"), 1), (cmd("r", "xinfo", "stream", "nokey"), 1),
     (cmd("eval", "redis.setresp(3)"), 1), (cmd("r", "hgetall", "h"), 1), (cmd("r", "smembers", "s"), 1),
     (cmd("r", "zscore", "z", "q"), 1), (cmd("r", "get", "nokey"), 1), (cmd("r", "lrange", "nokey", 0, 1), 1),
     (cmd("e", "redis.pcall('get', 'a')"), 1), (cmd("e", "x = 1"), 1), (cmd("p", "x", "y"), 1),
     (cmd("r" * 2000), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "return 1", 0), 1), (b"*2000\r\n", -1)],
    [(cmd("SCRIPT", "DEBUG", "SYNC"), 1), (cmd("MULTI"), 1), (cmd("SET", "q", 1), 1), (cmd("EVAL", "return 1", 0), 1),
     (cmd("EXEC"), 1), (cmd("c"), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("MULTI"), 1), (cmd("SET", "q", 1), 1), (cmd("EVAL", "return 1", 0), 1),
     (cmd("EXEC"), 1), (cmd("c"), -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "return 1", 0), 1), (b"*1\r\n$2000\r\n", -1)],
    [(cmd("SCRIPT", "DEBUG", "YES"), 1), (cmd("EVAL", "return 1", 0), 1), (b"*1\r\n$1\r\nsX\r\n", -1)],
]


@pytest.mark.parametrize("steps", RAW, ids=[str(i) for i in range(len(RAW))])
def test_raw_protocol_matches_redis(server, oracle, steps):
    assert session(server, steps) == session(oracle, steps)


def test_script_help_lists_debug(server, oracle):
    assert server.client().execute_command("SCRIPT", "HELP") == oracle.client().execute_command("SCRIPT", "HELP")


def test_client_gone_mid_session(server):
    for mode, expect in ((b"SYNC", b"1"), (b"YES", b"1")):
        s = socket.create_connection((server.host, server.port), timeout=20)
        s.sendall(cmd("SCRIPT", "DEBUG", mode))
        assert s.recv(100) == b"+OK\r\n"
        s.sendall(cmd("EVAL", 'redis.call("incr","dc")\nreturn 1', 0))
        buf = b""
        while complete_values(buf) < 1:
            buf += s.recv(4096)
        s.close()
        r = server.client()
        deadline = time.time() + 10
        while mode == b"SYNC" and r.get("dc") != expect and time.time() < deadline:
            time.sleep(0.05)
        assert r.get("dc") == expect  # the forked run's write is gone
        assert r.ping()


def test_parent_serves_during_fork_session_and_shutdown_ends_it(start_server):
    srv = start_server()
    s = socket.create_connection((srv.host, srv.port), timeout=20)
    s.sendall(cmd("SCRIPT", "DEBUG", "YES"))
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(cmd("EVAL", "return 1", 0))
    buf = b""
    while complete_values(buf) < 1:
        buf += s.recv(4096)
    r = srv.client()
    assert r.ping()
    assert r.set("k", "v")
    r2 = socket.create_connection((srv.host, srv.port), timeout=20)
    r2.sendall(cmd("SHUTDOWN", "NOSAVE"))
    assert r2.recv(100) == b""
    s.settimeout(20)
    assert s.recv(100) == b""  # the session's child was killed


def test_timeout_stops_an_endless_script(server, oracle, tmp_path):
    path = str(tmp_path / "loop.lua")
    with open(path, "w") as f:
        f.write("local i = 0\nwhile true do\n  i = i + 1\nend\n")
    outs = []
    for srv in (server, oracle):
        srv.client().config_set("busy-reply-threshold", 100)
        outs.append(cli(srv, "sync", path, "c\nl\na\n"))
    assert outs[0] == outs[1]
    assert "timeout reached, infinite loop?" in outs[0]


def test_luajit_refuses(server):
    c = server.client()
    if lua_engine(server) != "luajit":
        pytest.skip("Lua 5.1 build")
    for mode in ("YES", "SYNC"):
        with pytest.raises(Exception, match="SCRIPT DEBUG is not supported by the LuaJIT build"):
            c.execute_command("SCRIPT", "DEBUG", mode)
    assert c.execute_command("SCRIPT", "DEBUG", "NO") == b"OK"
    assert c.eval("return 1", 0) == 1
