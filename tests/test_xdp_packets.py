# SPDX-License-Identifier: GPL-2.0-or-later
"""BPF packet tests: one pytest test per case of tests/xdp_test.c.

xdp_test pushes crafted frames through the real XDP program with
BPF_PROG_TEST_RUN, in a network namespace of its own (it unshares at
start, so nothing is left behind). The case table lives in the C file;
`xdp_test --list` names the cases and `xdp_test NAME` runs one.
Every case runs three times: with the LPM tries (`--fib lpm`), with the
program built for DIR-24-8 and the IPv6 binary search on prefix lengths,
routes written by fpmd's own fib4.c / fib6.c (`--fib fast`), and with
IPv4 in DXR written by fib4c.c (`--fib dxr`). The cases of one --fib run
in one process (tests/lib/ctests.py run_batched), each on a fixture
loaded afresh; a failure's report names the command that runs it alone.

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_xdp_packets.py
"""
import pytest

from lib import ctests

XDP_TEST = ctests.program("xdp_test")


@pytest.mark.parametrize("fib", ["lpm", "fast", "dxr"])
@pytest.mark.parametrize("case", ctests.case_names(XDP_TEST))
def test_xdp_packet(case, fib):
    # All the cases of one --fib in one xdp_test process (each with a
    # fixture of its own), run by the first of them: ~0.2 s of process,
    # namespace and veths per case saved. The report names the command
    # that runs the case alone.
    ctests.run_batched(XDP_TEST, ["--fib", fib], case, timeout=1200)


@pytest.mark.parametrize("fib", ["lpm", "fast", "dxr"])
def test_xdp_process_clean(fib):
    """The one process of each --fib ended as its cases say: exit status,
    and no sanitizer report (a leak is reported at exit)."""
    ctests.batch_check(XDP_TEST, ["--fib", fib], timeout=1200)
