# SPDX-License-Identifier: GPL-2.0-or-later
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from lab import FPMD, Lab  # noqa: E402


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
