"""Bounded waits shared by the integration tests (one copy, issue 34).

A wait polls a predicate until it returns a true value or a deadline
passes; nothing here can hang.  The predicate is always called at least
once, and once more after the deadline when the last sleep crossed it, so
a condition met just in time is not reported as a timeout."""
import time


def poll(pred, timeout=10.0, step=0.02, ignore=()):
    """Calls pred() every step seconds for up to timeout seconds; returns
    its first true value, or its last (false) value on timeout.  Exceptions
    of the types in ignore count as a false value (None)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = pred()
        except ignore:
            v = None
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


def wait_for(pred, timeout=10.0, what="condition", step=0.02, ignore=()):
    """Like poll, but a timeout fails the test (AssertionError naming what);
    returns pred's true value."""
    v = poll(pred, timeout, step, ignore)
    if not v:
        raise AssertionError("timed out after %g s waiting for %s" % (timeout, what))
    return v
