# SPDX-License-Identifier: GPL-2.0-or-later
"""Fault tests (issue 11 item 9): fpmd killed with SIGKILL and started again
under a live stream, and a flood of route adds and deletes over FPM that
must not leave fpmd's memory grown.

Real parts: zebra (-M dplane_fpm_nl) and staticd on r1, fpmd on r1 with its
XDP program on r1's veths, streams from h1 to h2 through r1. The flood uses a
raw FPM client (zebra cannot produce 200k routes per second cheaply) and a
build of fpmd without ASan/UBSan (tests/fpmd-nosan, a check program):
ASan's quarantine holds freed memory back, so a sanitized fpmd's RSS says
nothing about leaks.

The foreign-program, deleted-egress and exhaustion faults are in
tests/test_faults_iface.py.

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_faults.py
"""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import time

import pytest

from frr import FrrLab
from lab import BUILDDIR, FPMD, Fpmd, ping, ping_result, ping_stream, sh, \
    wait_for
from test_e2e import stats_key, stats_map_packets, xdp_attached
from test_frr import (BH_NET, GONE_NET, H2_DST, H2_NET, PY, SETTLE, Udp,
                      diagnostics, fpm, fwd4, h2_loopback, map_values,
                      map_writes, measure, nexthops_view, sigterm_cleans_up,
                      start, udp_send, wait_connected, wait_no_route,
                      wait_route)

__all__ = ["sigterm_cleans_up"]      # a module fixture: CI's SIGTERM

NEW_NET, NEW_DST = "10.96.0.0/24", "10.96.0.1"      # added while fpmd is dead


@pytest.fixture
def lab():
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    lab = FrrLab()
    try:
        yield lab
    finally:
        try:
            diagnostics(lab)
        finally:
            lab.cleanup()


# ---- SIGKILL and restart under a stream -------------------------------------

def test_sigkill_then_restart_forwards_throughout(lab):
    """fpmd is killed (no cleanup runs): its XDP program forwards on from
    the pinned maps, the kernel forwards nothing. A new fpmd adopts the
    maps, zebra reconnects and replays: a route changed in vtysh while fpmd
    was dead is applied, nothing else is rewritten, and neither the 10 ms
    ping nor the UDP stream loses a packet over the whole sequence."""
    h2_loopback(lab, H2_DST + "/24", NEW_DST + "/24")
    d, f = start(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {GONE_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole")
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET)
    wait_route(d, GONE_NET)
    wait_route(d, BH_NET, state="blackhole")
    values0, nhs0 = map_values(d), nexthops_view(d)
    key = stats_key(d, "r1-eth0", "forwarded")

    rx = Udp(lab.h2)
    # Long enough to cover the whole sequence (checked below, not assumed).
    stream = ping_stream(lab.h1, H2_DST, 1500)
    udp = udp_send(lab.h1, H2_DST, flows=4, interval=0.01, duration=25,
                   background=True)
    try:
        c0 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c0 + 50,
                 what="the streams through XDP")
        f0 = fwd4(lab.r1)

        d.proc.kill()
        assert d.proc.wait(10) == -signal.SIGKILL
        # Nothing ran: the program stays attached, the maps pinned, and
        # XDP alone forwards (the pinned counters move, the kernel's not).
        for ifname in ("r1-eth0", "r1-eth1"):
            assert xdp_attached(lab.r1, ifname), f"{ifname} lost its XDP"
        s0 = stats_map_packets(lab.pin, key)
        wait_for(lambda: stats_map_packets(lab.pin, key) >= s0 + 50,
                 timeout=5, what="XDP forwarding with fpmd dead")
        assert fwd4(lab.r1) == f0, "the kernel forwarded with fpmd dead"

        # Changes zebra cannot send while nobody listens on the FPM port;
        # it replays its whole table on reconnect instead.
        f.configure(f"no ip route {GONE_NET} {lab.H2_V4}",
                    f"ip route {NEW_NET} {lab.H2_V4}")
        f.wait_route(NEW_NET)
        f.wait_route(GONE_NET, present=False)

        os.rename(d.log, d.log + ".1")   # wait_ready looks for "started:"
        d2 = lab.fpmd(extra=SETTLE)
        assert "bpffs: adopted the maps" in d2.logtext(), d2.logtext()
        assert '"maps-adopted": true' in d2.ctl("show", "state").stdout
        w0 = map_writes(d2)
        wait_connected(d2)               # zebra reconnects and replays
        wait_route(d2, NEW_NET)
        wait_no_route(d2, GONE_NET)
        # Exactly the two changes were written: NEW_NET added, GONE_NET
        # swept; every other route kept its value, every nexthop its id.
        assert map_writes(d2) - w0 == 2, \
            f"{map_writes(d2) - w0} route writes for 2 changes"
        values1 = map_values(d2)
        del values0[GONE_NET], values1[NEW_NET]
        assert values1 == values0, "unchanged routes were rewritten"
        assert nexthops_view(d2) == nhs0, "nexthops differ after the replay"
        assert fpm(d2)["replaySwept"] == 1

        # The streams still run: they covered the whole sequence.
        assert stream.poll() is None and udp.poll() is None, \
            "the streams ended before the restart was over"
        got, dl = measure(lab, d2, lambda: ping(lab.h1, NEW_DST, 5, 0.02))
        assert got == 5 and dl["r1-eth0"]["forwarded"] >= 5, dl

        sent, rcvd, out = ping_result(stream, timeout=60)
        uout, uerr = udp.communicate(timeout=60)
        usent = sum(json.loads(uout)["sent"].values())
        ugot = rx.stop()["total"]
    finally:
        for p in (stream, udp):
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f"ping {rcvd}/{sent}, UDP {ugot}/{usent}, kernel forwarded "
          f"{fwd4(lab.r1) - f0}")
    assert rcvd == sent and sent >= 1000, f"ping lost {sent - rcvd}/{sent}"
    assert ugot == usent and usent >= 2000, \
        f"UDP lost {usent - ugot}/{usent}"
    assert fwd4(lab.r1) == f0, \
        f"the kernel forwarded {fwd4(lab.r1) - f0} packets in the sequence"
