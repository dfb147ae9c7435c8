# SPDX-License-Identifier: GPL-2.0-or-later
import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from lib.frr import FrrLab  # noqa: E402
from lib.lab import FPMD, Lab  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="needs root (namespaces, XDP)")
        for item in items:
            item.add_marker(skip)


@pytest.fixture
def lab():
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    lab = Lab()
    try:
        yield lab
    finally:
        lab.cleanup()


@pytest.fixture
def frrlab():
    """A lab for real FRR daemons (tests/lib/frr.py); their logs are printed
    when the test ends (pytest shows them on failure)."""
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    lab = FrrLab()
    try:
        yield lab
    finally:
        for name in sorted(os.listdir(lab.tmp)):
            if name.endswith(".log"):
                with open(os.path.join(lab.tmp, name),
                          errors="replace") as f:
                    print(f"---- {name} ----\n{f.read()[-8000:]}")
        lab.cleanup()
        signal.signal(signal.SIGTERM, old)


@pytest.fixture
def topology():
    """Builds lib/topo.py topologies: topology(nodes, links, **kw); each
    is cleaned up when the test ends, its logs printed (pytest shows them
    on failure). The zebra plugin must be built (tests skip otherwise)."""
    from lib.topo import PLUGIN, Topology
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    if not os.path.exists(PLUGIN):
        pytest.skip(f"zebra plugin not built ({PLUGIN} missing): configure "
                    "--with-frr-source=DIR builds it")
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    built = []

    def make(nodes, links, **kw):
        t = Topology(nodes, links, **kw)
        built.append(t)
        return t
    try:
        yield make
    finally:
        for t in built:
            try:
                print(t.logs())
            finally:
                t.cleanup()
        signal.signal(signal.SIGTERM, old)
