"""Client-side caching: CLIENT TRACKING (default, BCAST, PREFIX, OPTIN,
OPTOUT, NOLOOP, REDIRECT), CLIENT CACHING / GETREDIR / TRACKINGINFO and the
invalidation messages, compared byte for byte with redis-server 7.0.15.

Expected bytes were taken from the oracle; every test also passes with
CAIRN_BIN=redis-server.  "No message arrived" is checked with a sentinel
command on the same connection: anything the server had queued for it comes
before the sentinel's reply.
"""
import time

from pubsub_helpers import call, enc, inval, pubsub_inval, read_values
from requires import require_commands
from waithelp import wait_for as wait_until


INVAL_NULL3 = b">2\r\n$10\r\ninvalidate\r\n_\r\n"
PONG = b"+PONG\r\n"
SUB_PONG = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"


def resp3(srv):
    c = srv.connect()
    c.send(enc("HELLO", "3"))
    read_values(c, 1)
    return c


def client_id(conn):
    return int(call(conn, "CLIENT", "ID")[1:-2])


def nothing_pending(conn, sentinel=PONG):
    conn.send(enc("PING"))
    assert read_values(conn, 1) == sentinel


def info_field(srv, section, name):
    return int(srv.client().info(section)[name])


# --- default mode ---------------------------------------------------------

def test_resp3_invalidation_once_per_read(server):
    t, w = resp3(server), server.connect()
    assert call(t, "CLIENT", "TRACKING", "ON") == b"+OK\r\n"
    assert call(t, "GET", "k") == b"_\r\n"
    assert call(w, "SET", "k", "v") == b"+OK\r\n"
    assert read_values(t, 1) == inval(b"k")
    # The key was forgotten: a second write sends nothing.
    assert call(w, "SET", "k", "w") == b"+OK\r\n"
    nothing_pending(t)
    # Writes to keys never read send nothing either.
    assert call(w, "SET", "other", "1") == b"+OK\r\n"
    nothing_pending(t)


def test_own_write_invalidates_after_its_reply(server):
    t = resp3(server)
    call(t, "CLIENT", "TRACKING", "ON")
    t.send(enc("GET", "k") + enc("SET", "k", "v") + enc("GET", "k") + enc("SET", "k", "w"))
    assert read_values(t, 6) == b"_\r\n+OK\r\n" + inval(b"k") + b"$1\r\nv\r\n+OK\r\n" + inval(b"k")


def test_exec_invalidations_follow_exec_reply(server):
    t = resp3(server)
    call(t, "CLIENT", "TRACKING", "ON")
    t.send(enc("GET", "k") + enc("MULTI") + enc("SET", "k", "1") + enc("GET", "k") +
           enc("SET", "k", "2") + enc("EXEC"))
    got = read_values(t, 8)
    assert got == (b"_\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n$1\r\n1\r\n+OK\r\n"
                   + inval(b"k") + inval(b"k"))


def test_noloop_skips_own_writes_only(server):
    t, w = resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON", "NOLOOP")
    call(t, "GET", "k")
    assert call(t, "SET", "k", "1") == b"+OK\r\n"
    nothing_pending(t)
    call(t, "GET", "k")
    call(w, "SET", "k", "2")
    assert read_values(t, 1) == inval(b"k")


def test_table_is_global_across_databases(server):
    t, w = resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON")
    call(t, "GET", "k")
    call(w, "SELECT", "1")
    call(w, "SET", "k", "v")
    assert read_values(t, 1) == inval(b"k")


def test_reads_that_fail_are_tracked(server):
    require_commands(server, "lpush")
    t, w = resp3(server), server.connect()
    call(w, "LPUSH", "l", "x")
    call(t, "CLIENT", "TRACKING", "ON")
    assert call(t, "GET", "l").startswith(b"-WRONGTYPE")
    call(w, "LPUSH", "l", "y")
    assert read_values(t, 1) == inval(b"l")


def test_multi_key_write_sends_one_message_per_key(server):
    t, w = resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON")
    call(t, "MGET", "a", "b", "c")
    call(w, "MSET", "a", "1", "c", "3")
    assert read_values(t, 2) == inval(b"a") + inval(b"c")
    call(w, "DEL", "b")  # absent: no change, no message
    call(w, "SET", "b", "2")
    assert read_values(t, 1) == inval(b"b")


def test_expiry_invalidates(server):
    t, w = resp3(server), server.connect()
    call(w, "SET", "k", "v", "PX", "50")
    call(t, "CLIENT", "TRACKING", "ON")
    call(t, "GET", "k")
    time.sleep(0.1)
    assert call(w, "GET", "k") == b"$-1\r\n"
    assert read_values(t, 1) == inval(b"k")


def test_flush_sends_null_to_every_tracking_client(server):
    t, own, w = resp3(server), resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON")
    call(own, "CLIENT", "TRACKING", "ON", "BCAST")
    assert call(w, "FLUSHDB") == b"+OK\r\n"
    assert read_values(t, 1) == INVAL_NULL3
    assert read_values(own, 1) == INVAL_NULL3
    # The flushing client gets its own after the reply.
    own.send(enc("FLUSHALL"))
    assert read_values(own, 2) == b"+OK\r\n" + INVAL_NULL3
    assert read_values(t, 1) == INVAL_NULL3
    # The table was emptied: a write after the flush sends nothing.
    call(w, "SET", "k", "v")
    nothing_pending(t)


def test_resp2_without_redirect_gets_nothing(server):
    t, w = server.connect(), server.connect()
    assert call(t, "CLIENT", "TRACKING", "ON") == b"+OK\r\n"
    call(t, "GET", "k")
    call(w, "SET", "k", "v")
    nothing_pending(t)


# --- redirection ------------------------------------------------------------

def test_redirect_to_resp2_subscriber(server):
    s, t, w = server.connect(), server.connect(), server.connect()
    sid = client_id(s)
    call(s, "SUBSCRIBE", "__redis__:invalidate")
    assert call(t, "CLIENT", "TRACKING", "ON", "REDIRECT", sid) == b"+OK\r\n"
    assert call(t, "CLIENT", "GETREDIR") == b":%d\r\n" % sid
    call(t, "MGET", "k", "j")
    call(w, "MSET", "k", "1", "j", "2")
    assert read_values(s, 2) == pubsub_inval(b"k") + pubsub_inval(b"j")
    call(w, "FLUSHALL")
    assert read_values(s, 1) == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n"
    nothing_pending(s, SUB_PONG)
    nothing_pending(t)
    line = call(t, "CLIENT", "INFO")
    assert b" redir=%d " % sid in line and b"flags=t " in line


def test_redirect_to_resp2_non_subscriber_gets_nothing(server):
    n, t, w = server.connect(), server.connect(), server.connect()
    call(t, "CLIENT", "TRACKING", "ON", "REDIRECT", client_id(n))
    call(t, "GET", "k")
    call(w, "SET", "k", "1")
    nothing_pending(n)


def test_redirect_to_resp3_uses_trackers_null(server):
    r, t, w = resp3(server), server.connect(), server.connect()
    call(t, "CLIENT", "TRACKING", "ON", "REDIRECT", client_id(r))
    call(t, "GET", "k")
    call(w, "SET", "k", "1")
    assert read_values(r, 1) == inval(b"k")
    call(w, "FLUSHALL")
    # The null is in the tracking client's protocol (RESP2 here).
    assert read_values(r, 1) == b">2\r\n$10\r\ninvalidate\r\n$-1\r\n"


def test_broken_redirect(server):
    r, t, w = resp3(server), resp3(server), server.connect()
    rid = client_id(r)
    call(t, "CLIENT", "TRACKING", "ON", "REDIRECT", rid)
    call(t, "GET", "k")
    r.close()
    wait_until(lambda: b"id=%d " % rid not in server.client().execute_command("CLIENT", "LIST"))
    nothing_pending(t)  # nothing is said until an invalidation is due
    call(w, "SET", "k", "1")
    broken = b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % rid
    assert read_values(t, 1) == broken
    assert call(t, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n"
        b"$8\r\nredirect\r\n:" + str(rid).encode() + b"\r\n$8\r\nprefixes\r\n*0\r\n")
    assert b" flags=tR " in call(t, "CLIENT", "INFO")
    call(w, "FLUSHALL")
    assert read_values(t, 1) == broken


# --- BCAST ------------------------------------------------------------------

def test_bcast_prefixes_batched_sorted_and_deduplicated(server):
    t, w = resp3(server), server.connect()
    assert call(t, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b:", "PREFIX", "a:") == b"+OK\r\n"
    w.send(enc("MULTI") + enc("MSET", "b:1", "x", "a:2", "x", "c:3", "x") + enc("SET", "a:1", "y") +
           enc("SET", "a:2", "z") + enc("EXEC"))
    read_values(w, 5)
    assert read_values(t, 2) == inval(b"a:1", b"a:2") + inval(b"b:1")
    nothing_pending(t)
    assert b" flags=tB " in call(t, "CLIENT", "INFO")


def test_bcast_without_prefix_and_noloop(server):
    t, w = resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP")
    assert call(t, "SET", "mine", "1") == b"+OK\r\n"
    nothing_pending(t)
    call(w, "SET", "theirs", "1")
    assert read_values(t, 1) == inval(b"theirs")
    # Reads are not remembered in BCAST mode: only writes matter.
    call(t, "GET", "x")
    nothing_pending(t)


def test_bcast_redirect_to_subscriber(server):
    s, t, w = server.connect(), server.connect(), server.connect()
    sid = client_id(s)
    call(s, "SUBSCRIBE", "__redis__:invalidate")
    call(t, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "REDIRECT", sid)
    call(w, "SET", "user:1", "x")
    call(w, "SET", "other", "x")
    assert read_values(s, 1) == pubsub_inval(b"user:1")
    nothing_pending(s, SUB_PONG)


# --- OPTIN / OPTOUT ---------------------------------------------------------

def test_optin_tracks_only_after_caching_yes(server):
    t, w = resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON", "OPTIN")
    call(t, "GET", "a")
    assert call(t, "CLIENT", "CACHING", "YES") == b"+OK\r\n"
    call(t, "GET", "b")
    call(t, "GET", "c")  # CACHING applied to the previous command only
    call(w, "MSET", "a", "1", "b", "1", "c", "1")
    assert read_values(t, 1) == inval(b"b")
    nothing_pending(t)
    # A CLIENT subcommand in between keeps it; MULTI carries it to EXEC.
    call(t, "CLIENT", "CACHING", "YES")
    call(t, "CLIENT", "ID")
    call(t, "GET", "d")
    call(t, "CLIENT", "CACHING", "YES")
    t.send(enc("MULTI") + enc("GET", "e") + enc("GET", "f") + enc("EXEC"))
    read_values(t, 4)
    call(w, "MSET", "d", "1", "e", "1", "f", "1")
    assert read_values(t, 3) == inval(b"d") + inval(b"e") + inval(b"f")


def test_optout_skips_after_caching_no(server):
    t, w = resp3(server), server.connect()
    call(t, "CLIENT", "TRACKING", "ON", "OPTOUT")
    call(t, "CLIENT", "CACHING", "NO")
    call(t, "GET", "a")
    call(t, "GET", "b")
    call(w, "MSET", "a", "1", "b", "1")
    assert read_values(t, 1) == inval(b"b")
    nothing_pending(t)


# --- commands, errors, state -----------------------------------------------

def test_error_texts_and_replies(server):
    c = server.connect()
    keep = server.connect()  # a client to redirect to, kept open
    other = client_id(keep)
    cases = [
        (("CLIENT", "TRACKING", "ON", "PREFIX", "a"), b"-ERR PREFIX option requires BCAST mode to be enabled\r\n"),
        (("CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"),
         b"-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"),
        (("CLIENT", "TRACKING", "ON", "BCAST", "OPTIN", "OPTOUT"),
         b"-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"),
        (("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "ab"),
         b"-ERR Prefix 'a' overlaps with another provided prefix 'ab'. "
         b"Prefixes for a single client must not overlap.\r\n"),
        (("CLIENT", "TRACKING", "ON", "REDIRECT", "999999"),
         b"-ERR The client ID you want redirect to does not exist\r\n"),
        (("CLIENT", "TRACKING", "ON", "REDIRECT", "0"),
         b"-ERR The client ID you want redirect to does not exist\r\n"),
        (("CLIENT", "TRACKING", "ON", "REDIRECT", "x"), b"-ERR value is not an integer or out of range\r\n"),
        (("CLIENT", "TRACKING", "ON", "REDIRECT", other, "REDIRECT", other),
         b"-ERR A client can only redirect to a single other client\r\n"),
        (("CLIENT", "TRACKING", "MAYBE"), b"-ERR syntax error\r\n"),
        (("CLIENT", "TRACKING", "ON", "FOO"), b"-ERR syntax error\r\n"),
        (("CLIENT", "TRACKING", "ON", "REDIRECT"), b"-ERR syntax error\r\n"),
        (("CLIENT", "TRACKING"), b"-ERR wrong number of arguments for 'client|tracking' command\r\n"),
        (("CLIENT", "CACHING", "YES"),
         b"-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
         b"OPTOUT mode enabled\r\n"),
        (("CLIENT", "CACHING"), b"-ERR wrong number of arguments for 'client|caching' command\r\n"),
        (("CLIENT", "GETREDIR"), b":-1\r\n"),
        (("CLIENT", "GETREDIR", "x"), b"-ERR wrong number of arguments for 'client|getredir' command\r\n"),
        (("CLIENT", "TRACKINGINFO"),
         b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n"),
        (("CLIENT", "TRACKING", "OFF", "BCAST", "PREFIX", "a"), b"+OK\r\n"),
        (("CLIENT", "TRACKING", "ON", "OPTIN"), b"+OK\r\n"),
        (("CLIENT", "TRACKING", "ON", "BCAST"),
         b"-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
         b"re-enabling it with a different mode.\r\n"),
        (("CLIENT", "TRACKING", "ON", "OPTOUT"),
         b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
         b"re-enabling it with a different mode.\r\n"),
        (("CLIENT", "CACHING", "NO"),
         b"-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n"),
        (("CLIENT", "CACHING", "MAYBE"), b"-ERR syntax error\r\n"),
        (("CLIENT", "CACHING", "YES"), b"+OK\r\n"),
        (("CLIENT", "TRACKINGINFO"),
         b"*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n"
         b"$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n"),
        (("CLIENT", "GETREDIR"), b":0\r\n"),
        (("CLIENT", "TRACKING", "OFF"), b"+OK\r\n"),
        (("CLIENT", "TRACKING", "ON", "OPTOUT"), b"+OK\r\n"),
        (("CLIENT", "CACHING", "YES"),
         b"-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n"),
        (("CLIENT", "TRACKING", "OFF"), b"+OK\r\n"),
    ]
    for args, want in cases:
        assert call(c, *args) == want, args


def test_bcast_prefix_state_and_overlaps(server):
    c = server.connect()
    # Redis 7.0 quirk: an overlap between given prefixes found past the
    # first one replies the error and then still enables tracking.
    c.send(enc("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b", "PREFIX", "bc"))
    assert read_values(c, 2) == (b"-ERR Prefix 'b' overlaps with another provided prefix 'bc'. "
                                 b"Prefixes for a single client must not overlap.\r\n+OK\r\n")
    assert call(c, "CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n"
        b"$8\r\nprefixes\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$2\r\nbc\r\n")
    assert call(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ax") == (
        b"-ERR Prefix 'ax' overlaps with an existing prefix 'a'. "
        b"Prefixes for a single client must not overlap.\r\n")
    # Re-enabling adds prefixes and resets the other options.
    assert call(c, "CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP", "PREFIX", "c") == b"+OK\r\n"
    assert call(c, "CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n"
        b"$8\r\nprefixes\r\n*4\r\n$1\r\na\r\n$1\r\nb\r\n$2\r\nbc\r\n$1\r\nc\r\n")
    call(c, "CLIENT", "TRACKING", "OFF")
    assert call(c, "CLIENT", "TRACKING", "ON", "BCAST") == b"+OK\r\n"
    assert call(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "x") == (
        b"-ERR Prefix 'x' overlaps with an existing prefix ''. "
        b"Prefixes for a single client must not overlap.\r\n")
    assert call(c, "CLIENT", "TRACKINGINFO").endswith(b"$8\r\nprefixes\r\n*1\r\n$0\r\n\r\n")


def test_reset_and_disconnect_stop_tracking(server):
    a, b = resp3(server), resp3(server)
    call(a, "CLIENT", "TRACKING", "ON", "BCAST")
    call(b, "CLIENT", "TRACKING", "ON")
    assert info_field(server, "clients", "tracking_clients") == 2
    assert call(a, "RESET") == b"+RESET\r\n"
    assert call(a, "CLIENT", "GETREDIR") == b":-1\r\n"
    assert info_field(server, "clients", "tracking_clients") == 1
    call(server.connect(), "SET", "k", "1")
    nothing_pending(a)  # RESET went back to RESP2, but BCAST is off anyway
    b.close()
    wait_until(lambda: info_field(server, "clients", "tracking_clients") == 0)
