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
import pytest

from lib import ctests

FIB_CHECK = ctests.program("fib_check")


@pytest.mark.parametrize("case", ctests.case_names(FIB_CHECK))
def test_fib_differential(case):
    out, report = ctests.run(FIB_CHECK, [], case, timeout=300)
    if not out.startswith(f"PASS {case}:"):
        pytest.fail(report, pytrace=False)
