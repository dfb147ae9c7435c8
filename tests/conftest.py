# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures every test file shares; the helpers behind them are in lib/.

lab: h1 -- r1 -- h2 (lib/lab.py). frrlab: the same with FRR (lib/frr.py),
or h1 -- r1 -- {r2, r3} -- h2 when parametrized indirectly with "ecmp";
plugin_lab: an frrlab for the zebra plugin (skips if it is not built).
topology: lab topologies of several routers (lib/topo.py). The FRR
fixtures turn CI's SIGTERM into KeyboardInterrupt for the test's
duration, so that their teardown still stops FRR (daemonized, it would
outlive pytest) and prints what pytest shows on failure.
"""
import contextlib
import os
import signal
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from lib.frr import PLUGIN, FrrLab, diagnostics  # noqa: E402
from lib.lab import FPMD, Lab  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="needs root (namespaces, XDP)")
        for item in items:
            item.add_marker(skip)


def need_fpmd():
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")


@contextlib.contextmanager
def sigterm_interrupts():
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@pytest.fixture
def lab():
    need_fpmd()
    lab = Lab()
    try:
        yield lab
    finally:
        lab.cleanup()


def frr_lab(request, **diag):
    need_fpmd()
    with sigterm_interrupts():
        lab = FrrLab(topo=getattr(request, "param", "line"))
        try:
            yield lab
        finally:
            try:
                diagnostics(lab, **diag)
            finally:
                lab.cleanup()


@pytest.fixture
def frrlab(request):
    """An FrrLab fed over FPM; parametrize indirectly with "ecmp" for that
    topology."""
    yield from frr_lab(request)


@pytest.fixture
def needs_plugin():
    if not os.path.exists(PLUGIN):
        pytest.skip(f"zebra plugin not built ({PLUGIN} missing): configure "
                    "--with-frr-source=DIR (scripts/frr-source.sh DIR) "
                    "builds it")


@pytest.fixture
def plugin_lab(request, needs_plugin):
    """An FrrLab for the zebra plugin (lib/frr.py start_frr, lib/feeds.py
    start_fpmd); parametrize indirectly with "ecmp" for that topology."""
    yield from frr_lab(request, shows=("plugin", "routes", "nexthops",
                                       "counters"), plugin=True)


@pytest.fixture
def server():
    """Tests that need fpmd's side of the plugin feed."""
    r = subprocess.run([FPMD, "--help"], capture_output=True, text=True)
    if "--plugin-socket" not in r.stdout + r.stderr:
        pytest.skip(f"{FPMD} has no --plugin-socket (no plugin server)")


@pytest.fixture
def topology(needs_plugin):
    """Builds lib/topo.py topologies: topology(nodes, links, **kw); each
    is cleaned up when the test ends, its logs printed (pytest shows them
    on failure). The zebra plugin must be built (tests skip otherwise)."""
    from lib.topo import Topology
    need_fpmd()
    built = []

    def make(nodes, links, **kw):
        t = Topology(nodes, links, **kw)
        built.append(t)
        return t
    with sigterm_interrupts():
        try:
            yield make
        finally:
            for t in built:
                try:
                    print(t.logs())
                finally:
                    t.cleanup()
