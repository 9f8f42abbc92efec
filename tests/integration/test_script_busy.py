"""Long-running scripts: BUSY replies to other clients after
busy-reply-threshold (alias lua-time-limit), SCRIPT KILL, UNKILLABLE once the
script has written, and SHUTDOWN NOSAVE as the way out.

Two raw connections per test: `a` runs the script (its reply is read later),
`b` is the other client.  The only waits are "until b sees BUSY" and
generous timeouts; nothing asserts how long anything took.  Expected texts
are redis-server 7.0.15's."""
import hashlib
import select
import time

import pytest

from script_resp import Conn

BUSY = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
UNKILLABLE = (b"-UNKILLABLE Sorry the script already executed write commands against the dataset. "
              b"You can either wait the script termination or kill the server in a hard way using the "
              b"SHUTDOWN NOSAVE command.\r\n")
BUSY_FUNCTION = b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
NOTBUSY = b"-NOTBUSY No scripts in execution right now.\r\n"
LOOP = "while true do end"


def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()


def killed(script, line=1):
    """What the client running `script` gets when it is killed."""
    return b"-ERR Script killed by user with SCRIPT KILL... script: %s, on @user_script:%d.\r\n" % (
        sha1(script).encode(), line)


def busy_pair(srv, threshold=100):
    a, b = Conn(srv), Conn(srv)
    assert b.call("CONFIG", "SET", "busy-reply-threshold", threshold) == b"+OK\r\n"
    return a, b


def wait_busy(a, b, timeout=30):
    """Ping from b until the server answers BUSY (the script that a sent
    started and passed the threshold).  Fails at once if a's script already
    answered (it never looped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = b.call("PING")
        if r == BUSY:
            return
        assert r == b"+PONG\r\n", r
        if select.select([a.sock], [], [], 0.02)[0]:
            pytest.fail("the script answered instead of looping: %r" % a.reply())
    pytest.fail("no BUSY reply within %s s" % timeout)


def test_busy_reply_and_script_kill(server):
    a, b = busy_pair(server)
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    for cmd in [("GET", "x"), ("SET", "x", "1"), ("EVAL", "return 1", 0), ("EVALSHA", "f" * 40, 0),
                ("SCRIPT", "LOAD", "return 1"), ("SCRIPT", "EXISTS", "x"), ("SCRIPT", "FLUSH"),
                ("CONFIG", "GET", "maxmemory"), ("INFO", "server"), ("CLIENT", "LIST"),
                ("DBSIZE",), ("SUBSCRIBE", "ch"), ("SELECT", "1"), ("ECHO", "x")]:
        assert b.call(*cmd) == BUSY, cmd
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)
    assert a.call("PING") == b"+PONG\r\n"
    assert b.call("PING") == b"+PONG\r\n"
    assert b.call("SCRIPT", "KILL") == NOTBUSY
    # The cache still has the script.
    assert b.call("SCRIPT", "EXISTS", sha1(LOOP)) == b"*1\r\n:1\r\n"


def test_scripts_after_a_kill_are_timed_again(server):
    """The time-limit hook stays set between runs; a kill switches it to
    every line, and the next run must get the usual one back."""
    a, b = busy_pair(server)
    for _ in range(2):
        a.send("EVAL", LOOP, 0)
        wait_busy(a, b)
        assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
        assert a.reply() == killed(LOOP)
        assert a.call("EVAL", "local n = 0 for i = 1, 300000 do n = n + i end return n", 0) == b":45000150000\r\n"
        assert b.call("PING") == b"+PONG\r\n"


def test_busy_checks_come_after_arity_and_unknown_command(server):
    a, b = busy_pair(server)
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert b.call("NOSUCH") == b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"
    assert b.call("SCRIPT", "KILLX") == b"-ERR unknown subcommand 'KILLX'. Try SCRIPT HELP.\r\n"
    assert b.call("SCRIPT", "KILL", "x") == b"-ERR wrong number of arguments for 'script|kill' command\r\n"
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)


def test_connection_commands_still_run_while_busy(server):
    a, b = busy_pair(server)
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("HELLO", "3").startswith(b"%7\r\n")
    assert b.call("HELLO", "2").startswith(b"*14\r\n")
    assert b.call("AUTH", "a", "b") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert b.call("WATCH", "x") == b"+OK\r\n"
    assert b.call("UNWATCH") == b"+OK\r\n"
    assert b.call("RESET") == b"+RESET\r\n"
    # MULTI is accepted; what would be queued answers BUSY and dooms EXEC.
    assert b.call("MULTI") == b"+OK\r\n"
    assert b.call("GET", "x") == BUSY
    assert b.call("WATCH", "x") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    assert b.call("EXEC") == (b"-EXECABORT Transaction discarded because of: BUSY Redis is busy running a "
                              b"script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n")
    assert b.call("MULTI") == b"+OK\r\n"
    assert b.call("SET", "a", "b") == BUSY
    assert b.call("DISCARD") == b"+OK\r\n"
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)
    assert b.call("EXISTS", "a") == b":0\r\n"


def test_resp3_client_gets_the_same_busy(server):
    a, b = busy_pair(server)
    assert b.call("HELLO", "3").startswith(b"%7\r\n")
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("GET", "x") == BUSY
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)


@pytest.mark.parametrize("cmd,script,line", [
    (("EVAL", "local i = 0 while true do i = i + 1 end", 0), "local i = 0 while true do i = i + 1 end", 1),
    (("EVAL_RO", LOOP, 0), LOOP, 1),
    (("EVAL", "#!lua flags=no-writes\n" + LOOP, 0), "#!lua flags=no-writes\n" + LOOP, 2),
    (("EVAL", "redis.call('get','x') " + LOOP, 0), "redis.call('get','x') " + LOOP, 1),
    (("EVAL", "redis.pcall('publish','ch','m') " + LOOP, 0), "redis.pcall('publish','ch','m') " + LOOP, 1),
    # A write refused for its arity never ran: still killable.
    (("EVAL", "redis.pcall('lpush','x') " + LOOP, 0), "redis.pcall('lpush','x') " + LOOP, 1),
    (("EVAL", "local function spin()\n  while true do end\nend\nspin()", 0),
     "local function spin()\n  while true do end\nend\nspin()", 2),
])
def test_killable_scripts(server, cmd, script, line):
    a, b = busy_pair(server)
    a.send(*cmd)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(script, line)
    assert b.call("DBSIZE") == b":0\r\n"


@pytest.mark.parametrize("script,where", [
    ("return coroutine.wrap(function() while true do end end)()", "@user_script:1"),
    ("return loadstring('while true do end')()", "while true do end:1"),
])
def test_loops_in_coroutines_and_loaded_chunks_are_killable(server, script, where):
    a, b = busy_pair(server)
    a.send("EVAL", script, 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == b"-ERR Script killed by user with SCRIPT KILL... script: %s, on %s.\r\n" % (
        sha1(script).encode(), where.encode())


def test_busy_after_a_quiet_while(server):
    """A script that loops after a second without scripts still gets the
    time limit (LuaJIT's watchdog thread rests while no script runs)."""
    a, b = busy_pair(server)
    assert a.call("EVAL", "return 1", 0) == b":1\r\n"
    time.sleep(1.5)
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)
    assert a.call("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', function() "
                  "while true do end end)") == b"$4\r\nspin\r\n"
    time.sleep(1.5)
    a.send("FCALL", "spin", 0)
    deadline = time.monotonic() + 30
    while (r := b.call("PING")) == b"+PONG\r\n" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert r == BUSY_FUNCTION
    assert b.call("FUNCTION", "KILL") == b"+OK\r\n"
    assert a.reply() == (b"-ERR Script killed by user with SCRIPT KILL... script: spin, "
                         b"on @user_function:2.\r\n")


def test_kill_evalsha(server):
    a, b = busy_pair(server)
    sha = sha1(LOOP)
    assert b.call("SCRIPT", "LOAD", LOOP) == b"$40\r\n%s\r\n" % sha.encode()
    a.send("EVALSHA", sha, 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)


def test_pcall_catches_the_kill(server):
    """In 7.0 the kill is a Lua error, so a script's pcall catches it and
    the script returns normally."""
    a, b = busy_pair(server)
    a.send("EVAL", "local ok, e = pcall(function() while true do end end) return {tostring(ok), e}", 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == b"*2\r\n$5\r\nfalse\r\n$45\r\nERR Script killed by user with SCRIPT KILL...\r\n"


def test_kill_inside_exec(server):
    a, b = busy_pair(server)
    assert a.call("MULTI") == b"+OK\r\n"
    for cmd in [("SET", "before", "1"), ("EVAL", LOOP, 0), ("SET", "after", "1")]:
        assert a.call(*cmd) == b"+QUEUED\r\n"
    a.send("EXEC")
    wait_busy(a, b)
    # The transaction's own write before the script does not make it unkillable.
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == b"*3\r\n+OK\r\n" + killed(LOOP) + b"+OK\r\n"
    assert b.call("MGET", "before", "after") == b"*2\r\n$1\r\n1\r\n$1\r\n1\r\n"


def test_function_kill_does_not_kill_an_eval(server):
    a, b = busy_pair(server)
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("FUNCTION", "KILL") == BUSY
    assert b.call("PING") == BUSY
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)


def test_threshold_config_and_alias(server):
    b = Conn(server)
    assert b.call("CONFIG", "GET", "busy-reply-threshold") == (
        b"*2\r\n$20\r\nbusy-reply-threshold\r\n$4\r\n5000\r\n")
    assert b.call("CONFIG", "GET", "lua-time-limit") == b"*2\r\n$14\r\nlua-time-limit\r\n$4\r\n5000\r\n"
    assert b.call("CONFIG", "SET", "lua-time-limit", "150") == b"+OK\r\n"
    assert b.call("CONFIG", "GET", "busy-reply-threshold") == (
        b"*2\r\n$20\r\nbusy-reply-threshold\r\n$3\r\n150\r\n")
    a = Conn(server)
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)


def test_threshold_from_startup_config(start_server):
    srv = start_server(lua_time_limit=100)
    a, b = Conn(srv), Conn(srv)
    assert b.call("CONFIG", "GET", "busy-reply-threshold") == (
        b"*2\r\n$20\r\nbusy-reply-threshold\r\n$3\r\n100\r\n")
    a.send("EVAL", LOOP, 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply() == killed(LOOP)


def test_no_busy_before_the_threshold(server):
    # A script well under a 60 s threshold: the other client just waits.
    a, b = busy_pair(server, threshold=60000)
    a.send("EVAL", "local n = 0 for i = 1, 3000000 do n = n + i end return n", 0)
    b.send("PING")
    assert a.reply() == b":4500001500000\r\n"
    assert b.reply() == b"+PONG\r\n"


@pytest.mark.parametrize("before", [
    "redis.call('set','w','1')",
    "redis.pcall('del','nokey')",            # a write command that changed nothing
    "redis.pcall('incr','s')",                # a write command that failed
    "redis.pcall('expire','nokey','100')",
])
def test_unkillable_after_a_write_then_shutdown_nosave(server, before):
    a, b = busy_pair(server)
    assert b.call("SET", "s", "str") == b"+OK\r\n"
    a.send("EVAL", before + " " + LOOP, 0)
    wait_busy(a, b)
    assert b.call("SCRIPT", "KILL") == UNKILLABLE
    assert b.call("FUNCTION", "KILL") == UNKILLABLE
    assert b.call("GET", "w") == BUSY
    assert b.call("SHUTDOWN", "SAVE") == BUSY
    assert b.call("SHUTDOWN", "ABORT") == b"-ERR No shutdown in progress.\r\n"
    b.send("SHUTDOWN", "NOSAVE")
    assert b.closed()
    assert server.proc.wait(timeout=30) == 0
    with pytest.raises((EOFError, ConnectionError, OSError)):
        a.reply()
