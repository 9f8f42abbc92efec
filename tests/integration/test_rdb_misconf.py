"""MISCONF for scripts after a failed background save, side by side with
redis-server 7.0.15 (Redis 7.0's rules): a script with a shebang or a
function without the no-writes flag is a write and is refused before it
runs; a script without a shebang is refused at its first write command
(redis.call raises, redis.pcall returns the error); read-only scripts and
no-writes functions run; a good save lifts it all."""
import os
import socket


from resphelp import read_file_value
from test_rdb import wait_for
from test_rdb_loading import resp

LIB = ("#!lua name=misconf\n"
       "redis.register_function('w', function() return redis.call('set', 'f', '1') end)\n"
       "redis.register_function{function_name='r', callback=function() return 2 end, "
       "flags={'no-writes'}}\n")

SCRIPTS = [
    ("EVAL", "return redis.call('set','x','1')", "0"),
    ("EVAL", "return redis.call('get','x')", "0"),
    ("EVAL", "return redis.pcall('set','x','1')", "0"),
    ("EVAL", "redis.call('get','x'); return redis.pcall('incr','n')", "0"),
    ("EVAL", "#!lua\nreturn redis.call('get','x')", "0"),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "0"),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('set','x','2')", "0"),
    ("EVAL_RO", "#!lua\nreturn redis.call('get','x')", "0"),
    ("EVAL_RO", "return redis.call('get','x')", "0"),
    ("FCALL", "w", "0"),
    ("FCALL", "r", "0"),
    ("FCALL_RO", "w", "0"),
    ("FCALL_RO", "r", "0"),
    ("FUNCTION", "DELETE", "misconf"),
    ("MULTI",), ("EVAL", "#!lua\nreturn 1", "0"), ("EXEC",),
    ("MULTI",), ("EVAL", "return redis.call('set','y','1')", "0"), ("EXEC",),
    ("PING",),
]


def replies(port, cmds):
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        f = c.makefile("rb")
        for cmd in cmds:
            c.sendall(resp(*cmd))
            out.append(read_file_value(f))
    return out


def failed_save(start):
    s = start(save="3600 1", **{"enable-protected-configs": "yes"})
    r = s.client()
    r.execute_command("FUNCTION", "LOAD", LIB)
    r.set("x", "0")
    os.mkdir(os.path.join(s.tmp, "blocked"))
    r.config_set("dbfilename", "blocked")
    r.execute_command("BGSAVE")
    assert wait_for(lambda: r.info("persistence")["rdb_last_bgsave_status"] == "err")
    return s, r


def test_scripts_misconf_like_redis(start_server, start_oracle):
    got = []
    for start in (start_server, start_oracle):
        s, r = failed_save(start)
        seen = replies(s.port, SCRIPTS)
        # A good save clears it: the writable script runs again.
        r.config_set("dbfilename", "dump.rdb")
        r.execute_command("BGSAVE")
        assert wait_for(lambda: r.info("persistence")["rdb_last_bgsave_status"] == "ok"
                        and r.info("persistence")["rdb_bgsave_in_progress"] == 0)
        seen += replies(s.port, [("EVAL", "#!lua\nreturn redis.call('set','x','3')", "0"),
                                 ("EVAL", "return redis.call('set','x','4')", "0")])
        got.append(seen)
    cairn, redis_ = got
    for cmd, a, b in zip(SCRIPTS + [("after",), ("after",)], cairn, redis_):
        assert a == b, cmd
    assert cairn[0].startswith(b"-MISCONF ")
    assert cairn[-2:] == [b"+OK\r\n", b"+OK\r\n"]


def test_exec_of_writes_queued_before_the_failure(start_server, start_oracle):
    """Writes queued while saves were fine, EXEC after a save failed: the
    EXEC counts as a write and answers EXECABORT (a read-only queue runs)."""
    got = []
    for start in (start_server, start_oracle):
        s = start(save="3600 1", **{"enable-protected-configs": "yes"})
        r = s.client()
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:
            f = c.makefile("rb")

            def call(*cmd):
                c.sendall(resp(*cmd))
                return read_file_value(f)

            seen = [call("MULTI"), call("SET", "q", "1"), call("GET", "q")]
            seen += [call("MULTI"), call("GET", "q")]  # a second MULTI: an error, the queue stays
            os.mkdir(os.path.join(s.tmp, "blocked"))
            r.config_set("dbfilename", "blocked")
            r.execute_command("BGSAVE")
            assert wait_for(lambda: r.info("persistence")["rdb_last_bgsave_status"] == "err")
            seen += [call("EXEC"), call("GET", "q"), call("MULTI"), call("GET", "q"), call("EXEC")]
        got.append(seen)
    assert got[0] == got[1]
    assert got[0][5].startswith(b"-EXECABORT Transaction discarded because of: MISCONF ")
