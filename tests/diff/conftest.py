"""Fixtures for the differential tests (reuses tests/integration/conftest.py).

Test modules elsewhere do `from conftest import ...`; when tests/integration
and tests/diff are collected in one session either conftest may be the one
registered as `conftest`, so this module re-exports everything the
integration conftest defines."""
import importlib.util
import os
import shutil

import pytest

_p = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                  "integration", "conftest.py")
_spec = importlib.util.spec_from_file_location("cairn_integration_fixtures", _p)
_fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fx)
globals().update({k: v for k, v in vars(_fx).items()
                  if not k.startswith("__") and k not in ("pytest", "os", "shutil")})


def _run_factories(request, specs):
    gens = [_fx._factory(request, binary, name) for binary, name in specs]
    servers = [next(g)() for g in gens]
    yield servers
    errors = []
    for g in gens:
        try:
            for _ in g:  # teardown: stop server, check for sanitizer reports
                pass
        except BaseException as e:  # pytest.fail raises Failed (BaseException)
            errors.append(e)
    if errors:
        raise errors[0]


@pytest.fixture(scope="module")
def pair(request):
    """(server under test, oracle redis-server), shared by all areas."""
    oracle = shutil.which(_fx.ORACLE_BIN) or _fx.ORACLE_BIN
    yield from _run_factories(request, [(_fx.cairn_bin(), "cairn"), (oracle, "oracle")])
