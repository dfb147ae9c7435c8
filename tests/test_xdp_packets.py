# SPDX-License-Identifier: GPL-2.0-or-later
"""BPF packet tests: one pytest test per case of tests/xdp_test.c.

xdp_test pushes crafted frames through the real XDP program with
BPF_PROG_TEST_RUN, in a network namespace of its own (it unshares at
start, so nothing is left behind). The case table lives in the C file;
`xdp_test --list` names the cases and `xdp_test NAME` runs one.
Every case runs twice: with the LPM tries (`--fib lpm`) and with the
program built for DIR-24-8 and the IPv6 binary search on prefix lengths,
routes written by fpmd's own fib4.c / fib6.c (`--fib fast`).

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_xdp_packets.py
"""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.environ.get("FPMD_BUILDDIR", os.path.join(REPO, "build"))
XDP_TEST = os.path.join(BUILDDIR, "tests", "xdp_test")
NOT_BUILT = "(xdp_test not built)"


def case_names():
    if not os.access(XDP_TEST, os.X_OK):
        return [NOT_BUILT]
    out = subprocess.run([XDP_TEST, "--list"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return out.split()


@pytest.mark.parametrize("fib", ["lpm", "fast"])
@pytest.mark.parametrize("case", case_names())
def test_xdp_packet(case, fib):
    if case == NOT_BUILT:
        pytest.fail(f"{XDP_TEST} not built (make tests/xdp_test)")
    r = subprocess.run([XDP_TEST, "--fib", fib, case], capture_output=True,
                       text=True, timeout=120)
    report = (f"xdp_test --fib {fib} {case} exited {r.returncode}:\n"
              f"{r.stdout}{r.stderr}")
    if r.returncode != 0:
        pytest.fail(report, pytrace=False)
    # The argument is a pattern: make sure exactly this case ran.
    lines = r.stdout.splitlines()
    if not lines or lines[-1] != "1 passed, 0 failed":
        pytest.fail(report, pytrace=False)
