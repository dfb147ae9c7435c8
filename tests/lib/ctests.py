# SPDX-License-Identifier: GPL-2.0-or-later
"""The C test programs with a case table (tests/xdp_test.c,
tests/fib_check.c): `PROGRAM --list` names the cases, `PROGRAM [ARGS] CASE`
runs one; pytest makes a test of each case.
"""
import os
import subprocess

import pytest

from lib.lab import BUILDDIR


def program(name):
    return os.path.join(BUILDDIR, "tests", name)


def not_built(path):
    return f"({os.path.basename(path)} not built)"


def case_names(path):
    """The program's cases; one placeholder case if it is not built, which
    run() fails with the make target to run."""
    if not os.access(path, os.X_OK):
        return [not_built(path)]
    out = subprocess.run([path, "--list"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return out.split()


def run(path, args, case, timeout):
    """Runs one case; returns (stdout, report for a failure). Fails the
    test when the program is not built or exits non-zero."""
    name = os.path.basename(path)
    if case == not_built(path):
        pytest.fail(f"{path} not built (make tests/{name})")
    r = subprocess.run([path, *args, case], capture_output=True, text=True,
                       timeout=timeout)
    report = (f"{' '.join([name, *args, case])} exited {r.returncode}:\n"
              f"{r.stdout}{r.stderr}")
    if r.returncode != 0:
        pytest.fail(report, pytrace=False)
    return r.stdout, report
