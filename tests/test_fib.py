# SPDX-License-Identifier: GPL-2.0-or-later
"""Differential tests of the fast route tables: one pytest test per case
of tests/fib_check.c.

fib_check drives fpmd's DIR-24-8 (fpmd/fib/fib4.c) and IPv6 binary search on
prefix lengths (fpmd/fib/fib6.c) through random and hand-made insert/delete
sequences, mirrors every change into the kernel's LPM trie, and compares
both over millions of addresses inside BPF (bpf/fib_check.bpf.c), with
the XDP router's own lookup code. `fib_check --list` names the cases.

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_fib.py
"""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.environ.get("FPMD_BUILDDIR", os.path.join(REPO, "build"))
FIB_CHECK = os.path.join(BUILDDIR, "tests", "fib_check")
NOT_BUILT = "(fib_check not built)"


def case_names():
    if not os.access(FIB_CHECK, os.X_OK):
        return [NOT_BUILT]
    out = subprocess.run([FIB_CHECK, "--list"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return out.split()


@pytest.mark.parametrize("case", case_names())
def test_fib_differential(case):
    if case == NOT_BUILT:
        pytest.fail(f"{FIB_CHECK} not built (make tests/fib_check)")
    r = subprocess.run([FIB_CHECK, case], capture_output=True, text=True,
                       timeout=300)
    report = f"fib_check {case} exited {r.returncode}:\n{r.stdout}{r.stderr}"
    if r.returncode != 0:
        pytest.fail(report, pytrace=False)
    if not r.stdout.startswith(f"PASS {case}:"):
        pytest.fail(report, pytrace=False)
