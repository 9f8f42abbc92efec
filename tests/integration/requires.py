"""Skip a test until the server under test has the commands it needs.

Some tests pin behaviour that involves a data type or feature built by a
later issue (a WRONGTYPE error needs a list key; keyspace events need
PSUBSCRIBE).  They skip, naming what is missing, while the command answers
Redis's unknown-command error, and run as soon as it exists.
"""
import pytest


def require_commands(srv, *names):
    c = srv.client()
    missing = []
    for name in names:
        # Without arguments a known command answers an arity error (or runs,
        # for PING-like ones); an unknown one answers "unknown command".
        try:
            c.execute_command(name)
        except Exception as e:  # redis.ResponseError
            if str(e).startswith("unknown command"):
                missing.append(name)
    if missing:
        pytest.skip("server lacks %s (a later issue)" % ", ".join(missing))
