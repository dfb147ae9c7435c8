# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures every test file shares; the helpers behind them are in lib/.

lab: h1 -- r1 -- h2 (lib/lab.py). frrlab: the same with FRR (lib/frr.py),
or h1 -- r1 -- {r2, r3} -- h2 when parametrized indirectly with "ecmp";
plugin_lab: an frrlab for the zebra plugin (fails if it is not built,
skips with FPMD_NO_PLUGIN=1).
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
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from lib import leftovers  # noqa: E402
from lib.frr import PLUGIN, FrrLab, Release, diagnostics  # noqa: E402
from lib.lab import FPMD, Lab  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="needs root (namespaces, XDP)")
        for item in items:
            item.add_marker(skip)


# --- skips -----------------------------------------------------------------
# A green run has run what it claims: every skip is listed at the end, and
# a skip that is not allowed here fails the run (doc/testing.md, "Skips").
# Each entry: (reason starts with, when it is allowed, why). CI's .ci/run
# sets FPMD_TEST_INSTALLED=1 and never FPMD_NO_PLUGIN, so none applies there.
ALLOWED_SKIPS = [
    ("FPMD_TEST_INSTALLED=1 not set",
     lambda: os.environ.get("FPMD_TEST_INSTALLED") != "1",
     "the installed packages are tested by .ci/run, after it has built "
     "and installed them (scripts/package.sh --install)"),
    ("zebra plugin not built",
     lambda: os.environ.get("FPMD_NO_PLUGIN") == "1",
     "FPMD_NO_PLUGIN=1: the run was asked to do without the zebra plugin"),
]
_skips = []


def _skip_reason(report):
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ")
    return str(lr)


def _note_skip(report):
    if report.skipped:
        _skips.append((report.nodeid or report.fspath, _skip_reason(report)))


def pytest_runtest_logreport(report):
    _note_skip(report)


def pytest_collectreport(report):
    _note_skip(report)


def _allowed(reason):
    for start, when, _why in ALLOWED_SKIPS:
        if reason.startswith(start) and when():
            return True
    return False


# --- leftovers ---------------------------------------------------------------
# With FPMD_CHECK_LEFTOVERS=1 (scripts/test.sh) the run fails when it leaves
# namespaces, pins, FRR pathspaces or processes behind (lib/leftovers.py).
_before = None
_left = []


def pytest_sessionstart(session):
    global _before
    if os.environ.get("FPMD_CHECK_LEFTOVERS") == "1":
        _before = leftovers.snapshot()


def _leftovers():
    # FRR daemons take a second or two to exit after their stop.
    deadline = time.monotonic() + 10
    while True:
        left = leftovers.new_since(_before)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    bad = any(not _allowed(r) for _, r in _skips)
    if _before is not None:
        _left.extend(_leftovers())
        bad = bad or bool(_left)
    if bad and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    if _before is not None:
        if _left:
            tr.section(f"left behind by the tests ({len(_left)})")
            for kind, name in _left:
                tr.write_line(f"{kind}: {name}")
        else:
            tr.write_line("left behind by the tests: nothing (namespaces, "
                          "pins, FRR pathspaces, processes)")
    if not _skips:
        tr.write_line("skipped tests: none")
        return
    bad = [(n, r) for n, r in _skips if not _allowed(r)]
    tr.section(f"skipped tests ({len(_skips)}, {len(bad)} not allowed)")
    for nodeid, reason in _skips:
        mark = "allowed" if _allowed(reason) else "NOT ALLOWED"
        tr.write_line(f"{mark}: {nodeid}: {reason}")
    if bad:
        tr.write_line("a skip that is not allowed fails the run "
                      "(tests/conftest.py ALLOWED_SKIPS, doc/testing.md)")


# --- FRR releases --------------------------------------------------------------
# The tests of these files that run a real zebra (fixtures frrlab,
# plugin_lab, topology) run once per FRR release: the host's (Debian 12's,
# "bookworm") and each Debian suite of FPMD_FRR_SUITES (default trixie,
# FRR 10.3, and forky, the newest), from a root file system of its own
# (scripts/frr-root.sh, tests/lib/frr.py Release). FPMD_FRR_SUITES=""
# runs the host's only. A test marked frr_releases("bookworm", ...) runs
# with those releases only (never a skip: the others are not generated).
RELEASE_MODULES = {"test_frr", "test_fpm_status", "test_protocol",
                   "test_offload", "test_plugin", "test_plugin_feed",
                   "test_lab"}
FRR_SUITES = os.environ.get("FPMD_FRR_SUITES", "trixie forky").split()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "frr_releases(*suites): run with these FRR releases only "
        "(bookworm is the host's)")


def pytest_generate_tests(metafunc):
    if "frr_release" not in metafunc.fixturenames or \
            metafunc.module.__name__ not in RELEASE_MODULES:
        return
    suites = ["bookworm"] + FRR_SUITES
    m = metafunc.definition.get_closest_marker("frr_releases")
    if m:
        suites = [x for x in suites if x in m.args]
    metafunc.parametrize("frr_release", suites, indirect=True)


@pytest.fixture
def frr_release(request):
    """The FRR a test's zebra runs (tests/lib/frr.py Release)."""
    suite = getattr(request, "param", "bookworm")
    return Release(None if suite == "bookworm" else suite)


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


def frr_lab(request, release, **diag):
    need_fpmd()
    with sigterm_interrupts():
        lab = FrrLab(topo=getattr(request, "param", "line"),
                     release=release)
        try:
            yield lab
        finally:
            try:
                diagnostics(lab, **diag)
            finally:
                lab.cleanup()


@pytest.fixture
def frrlab(request, frr_release):
    """An FrrLab fed over FPM; parametrize indirectly with "ecmp" for that
    topology."""
    yield from frr_lab(request, frr_release)


@pytest.fixture
def needs_plugin(frr_release):
    """The zebra plugin, built with --with-frr-source (for a release of
    another suite: built in its root, tests/lib/frr.py Release.plugin): a
    failure unless the run opted out with FPMD_NO_PLUGIN=1 (then a skip,
    allowed)."""
    if frr_release.chroot and os.environ.get("FPMD_NO_PLUGIN") != "1":
        frr_release.plugin()
        return
    if os.path.exists(PLUGIN):
        return
    why = (f"zebra plugin not built ({PLUGIN} missing): configure "
           "--with-frr-source=DIR (scripts/frr-source.sh DIR) builds it")
    if os.environ.get("FPMD_NO_PLUGIN") == "1":
        pytest.skip(why)
    pytest.fail(why + "; FPMD_NO_PLUGIN=1 skips its tests instead")


@pytest.fixture
def plugin_lab(request, needs_plugin, frr_release):
    """An FrrLab for the zebra plugin (lib/frr.py start_frr, lib/feeds.py
    start_fpmd); parametrize indirectly with "ecmp" for that topology."""
    yield from frr_lab(request, frr_release,
                       shows=("plugin", "routes", "nexthops", "counters"),
                       plugin=True)


@pytest.fixture
def server():
    """Tests that need fpmd's side of the plugin feed."""
    r = subprocess.run([FPMD, "--help"], capture_output=True, text=True)
    if "--plugin-socket" not in r.stdout + r.stderr:
        pytest.fail(f"{FPMD} --help names no --plugin-socket: the plugin "
                    "server's option was renamed or removed")


@pytest.fixture
def topology(needs_plugin, frr_release):
    """Builds lib/topo.py topologies: topology(nodes, links, **kw); each
    is cleaned up when the test ends, its logs printed (pytest shows them
    on failure). The zebra plugin must be built (see needs_plugin)."""
    from lib.topo import Topology
    need_fpmd()
    built = []

    def make(nodes, links, **kw):
        kw.setdefault("release", frr_release)
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
