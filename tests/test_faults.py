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
import subprocess
import time

import pytest

from lib.feeds import (SETTLE, fpm, map_values, map_writes, nexthops_view,
                       start_fpm, wait_connected, wait_no_route, wait_route)
from lib.lab import (BH_DST, BH_NET, BUILDDIR, H2_DST, H2_NET, PY,
                     h2_loopback, ping, ping_result, ping_stream, shquote,
                     wait_for, xdp_attached)
from lib.traffic import (Udp, assert_kernel_flat, assert_lossless, fwd4,
                         measure, stats_key, stats_map_packets, udp_send,
                         wait_through_xdp)

GONE_NET = "10.97.0.0/24"                           # a second static route
NEW_NET, NEW_DST = "10.96.0.0/24", "10.96.0.1"      # added while fpmd is dead


@pytest.fixture
def lab(frrlab):
    return frrlab


# ---- SIGKILL and restart under a stream -------------------------------------

def test_sigkill_then_restart_forwards_throughout(lab):
    """fpmd is killed (no cleanup runs): its XDP program forwards on from
    the pinned maps, the kernel forwards nothing. A new fpmd adopts the
    maps, zebra reconnects and replays: a route changed in vtysh while fpmd
    was dead is applied (one added, one removed, one changed from blackhole
    to a gateway), nothing else is rewritten, and neither the 10 ms
    ping nor the UDP stream loses a packet over the whole sequence."""
    h2_loopback(lab, H2_DST + "/24", NEW_DST + "/24", BH_DST + "/24")
    d, f = start_fpm(lab)
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
    t0 = time.monotonic()
    # Long enough to cover the whole sequence (checked below, not assumed).
    stream = ping_stream(lab.h1, H2_DST, 1500)
    udp = udp_send(lab.h1, H2_DST, flows=4, interval=0.01, duration=25,
                   background=True)
    try:
        wait_through_xdp(d)
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
                    f"ip route {NEW_NET} {lab.H2_V4}",
                    f"no ip route {BH_NET} blackhole",
                    f"ip route {BH_NET} {lab.H2_V4}")
        f.wait_route(NEW_NET)
        f.wait_route(GONE_NET, present=False)
        wait_for(lambda: any(e.get("ip") == lab.H2_V4
                             for x in f.routes().get(BH_NET, [])
                             if x.get("selected")
                             for e in x.get("nexthops", [])),
                 what=f"zebra: {BH_NET} via h2")

        os.rename(d.log, d.log + ".1")   # wait_ready looks for "started:"
        d2 = lab.fpmd(extra=SETTLE)
        assert "bpffs: adopted the maps" in d2.logtext(), d2.logtext()
        assert '"maps-adopted": true' in d2.ctl("show", "state").stdout
        w0 = map_writes(d2)
        wait_connected(d2)               # zebra reconnects and replays
        wait_route(d2, NEW_NET)
        wait_route(d2, BH_NET)
        wait_no_route(d2, GONE_NET)
        # Exactly the three changes were written: NEW_NET added, BH_NET
        # changed, GONE_NET swept; every other route kept its value.
        assert map_writes(d2) - w0 == 3, \
            f"{map_writes(d2) - w0} route writes for 3 changes"
        values1 = map_values(d2)
        assert values1[BH_NET] == values1[H2_NET], values1
        del values0[GONE_NET], values0[BH_NET]
        del values1[NEW_NET], values1[BH_NET]
        assert values1 == values0, "unchanged routes were rewritten"
        # The nexthops are the adopted ones (ids, interfaces, MACs), the
        # gateway h2 with one route more (GONE_NET gone, NEW_NET and BH_NET
        # added).
        nhs1 = nexthops_view(d2)
        gw = [k for k, n in nhs1.items()
              if n.get("ip") == lab.H2_V4 and n["source"] == "fpm"]
        assert len(gw) == 1 and nhs1[gw[0]]["refCount"] == \
            nhs0[gw[0]]["refCount"] + 1, (nhs0, nhs1)
        for n in (nhs0, nhs1):
            for v in n.values():
                v.pop("refCount")
        assert nhs1 == nhs0, "nexthops differ after the replay"
        assert fpm(d2)["replaySwept"] == 1

        # The streams still run: they covered the whole sequence.
        assert stream.poll() is None and udp.poll() is None, \
            "the streams ended before the restart was over"
        print(f"kill, restart and replay within the first "
              f"{time.monotonic() - t0:.1f} s of the streams")
        for dst in (NEW_DST, BH_DST):
            got, dl = measure(lab, d2,
                              lambda dst=dst: ping(lab.h1, dst, 5, 0.02))
            assert got == 5 and dl["r1-eth0"]["forwarded"] >= 5, (dst, dl)

        sent, rcvd, out = ping_result(stream, timeout=60)
        uout, uerr = udp.communicate(timeout=60)
        usent = sum(json.loads(uout)["sent"].values())
        ugot = rx.stop()["total"]
    finally:
        for p in (stream, udp, rx.proc):
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f"ping {rcvd}/{sent}, UDP {ugot}/{usent}, kernel forwarded "
          f"{fwd4(lab.r1) - f0}")
    assert_lossless("ping", sent, rcvd, 1000)
    assert_lossless("UDP", usent, ugot, 2000)
    assert_kernel_flat(lab.r1, f0, "in the sequence")


# ---- a flood of route adds and deletes over FPM: memory comes back ----------

NOSAN = os.path.join(BUILDDIR, "tests", "fpmd-nosan")
ROUNDS = 3

# Per round: 200k routes of every kind zebra sends, added and then deleted.
# Fresh zebra nexthop ids each round (as a zebra restart gives), so id
# tables churn too.
FLOOD_V4_24 = 140000    # 20.0.0.0/24 on: RTA_NH_ID, singles and groups
FLOOD_V4_32 = 10000     # /32s in 40 /24s (DIR-24-8 tbl8 groups)
FLOOD_V6 = 40000        # RTA_GATEWAY + RTA_OIF, every 4th RTA_MULTIPATH
FLOOD_OTHER = 10000     # table 10 (fpmd keeps these apart)
FLOOD_NH, FLOOD_GRP = 64, 16
FLOOD_ROUTES = FLOOD_V4_24 + FLOOD_V4_32 + FLOOD_V6 + FLOOD_OTHER

# Runs in r1 (a TCP client only: `ip netns exec` is fine). Reads commands
# "add R" / "del R" on stdin, sends round R's adds or deletes as zebra
# frames them (4-byte FPM header, netlink messages, <= 400 per frame) and
# answers with the number of netlink messages sent.
FLOOD_CLIENT = r"""
import socket, struct, sys

NV4, N32, NV6, NOTHER, NNH, NGRP = %(sizes)s
OIF = %(oif)d
s = socket.create_connection(("127.0.0.1", 2620))

def nla(t, data):
    b = struct.pack("=HH", 4 + len(data), t) + data
    return b + b"\0" * (-len(b) %% 4)

def nlmsg(t, body, flags):
    return struct.pack("=IHHII", 16 + len(body), t, flags, 0, 0) + body

def u32(t, v):
    return nla(t, struct.pack("=I", v))

# IPv4 replaces (NLM_F_REPLACE), IPv6 does not: as zebra sends them.
NEW4, NEW6, DEL = 0x1 | 0x400 | 0x100, 0x1 | 0x400, 0x1
TBL_MAIN, TBL_OTHER, OIF_A = u32(15, 254), u32(15, 10), u32(4, OIF)

def rt(fam, plen, table=254):
    return struct.pack("=BBBBBBBBI", fam, plen, 0, 0, table, 11, 0, 1, 0)

# (rtmsg + RTA_DST + RTA_TABLE, kind): kind picks the nexthop attributes.
routes = []
for k in range(NV4):
    a = (20 << 24) + (k << 8)
    routes.append((rt(2, 24) + nla(1, struct.pack("!I", a)) + TBL_MAIN, k))
for k in range(N32):
    a = (30 << 24) + ((k // 250) << 8) + k %% 250 + 1
    routes.append((rt(2, 32) + nla(1, struct.pack("!I", a)) + TBL_MAIN, k))
for k in range(NV6):
    a = socket.inet_pton(socket.AF_INET6, "2001:db9:0:%%x::" %% k)
    routes.append((rt(10, 64) + nla(1, a) + TBL_MAIN, -1 - k))
for k in range(NOTHER):
    a = (40 << 24) + (k << 8)
    routes.append((rt(2, 24, 10) + nla(1, struct.pack("!I", a)) + TBL_OTHER,
                   k))

def gw6(i):
    return socket.inet_pton(socket.AF_INET6, "2001:db8:102::%%x" %% i)

def rtnh(gw):
    attrs = nla(5, gw)
    return struct.pack("=HBBi", 8 + len(attrs), 0, 0, OIF) + attrs

def nh_ids(r):
    base = 100000 + r * 1000
    return ([base + i for i in range(NNH)],
            [base + 500 + g for g in range(NGRP)])

def nexthops(r):
    singles, groups = nh_ids(r)
    out = []
    for i, nid in enumerate(singles):
        gw = bytes([172, 16, 102, 1 if i == 0 else 100 + i])
        out.append(nlmsg(104, struct.pack("=BBBBI", 2, 0, 11, 0, 0) +
                         u32(1, nid) + OIF_A + nla(6, gw), NEW4))
    for g, gid in enumerate(groups):
        members = b"".join(struct.pack("=IBBH", singles[(2 * g + j) %% NNH],
                                       0, 0, 0) for j in range(2))
        out.append(nlmsg(104, struct.pack("=BBBBI", 0, 0, 11, 0, 0) +
                         u32(1, gid) + nla(2, members), NEW4))
    return out

def add_msgs(r):
    singles, groups = nh_ids(r)
    ids = singles + groups
    out = nexthops(r)
    for body, k in routes:
        if k >= 0:
            out.append(nlmsg(24, body + u32(30, ids[k %% len(ids)]), NEW4))
            continue
        k = -1 - k
        if k %% 4 == 0:
            nh = nla(9, rtnh(gw6(1)) + rtnh(gw6(0x100 + k %% 8)))
        else:
            nh = nla(5, gw6(0x100 + k %% 32)) + OIF_A
        out.append(nlmsg(24, body + nh, NEW6))
    return out

def del_msgs(r):
    singles, groups = nh_ids(r)
    out = [nlmsg(25, body, DEL) for body, k in routes]
    for nid in groups + singles:
        out.append(nlmsg(105, struct.pack("=BBBBI", 0, 0, 11, 0, 0) +
                         u32(1, nid), DEL))
    return out

for line in sys.stdin:
    cmd, r = line.split()
    msgs = add_msgs(int(r)) if cmd == "add" else del_msgs(int(r))
    for i in range(0, len(msgs), 400):
        body = b"".join(msgs[i:i + 400])
        s.sendall(struct.pack(">BBH", 1, 1, 4 + len(body)) + body)
    print(len(msgs), flush=True)
"""


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


class Flood:
    """The flood client in r1, driven round by round."""

    def __init__(self, lab):
        src = FLOOD_CLIENT % {
            "sizes": (FLOOD_V4_24, FLOOD_V4_32, FLOOD_V6, FLOOD_OTHER,
                      FLOOD_NH, FLOOD_GRP),
            "oif": lab.r1.ifindex("r1-eth1")}
        self.proc = lab.r1.popen(f"exec {PY} -c {shquote(src)}",
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)

    def send(self, cmd, r):
        self.proc.stdin.write(f"{cmd} {r}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line.strip().isdigit(), f"flood client: {line!r}"
        return int(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def summary(d):
    """What the flood changes (the kernel's own routes may grow meanwhile:
    IPv6 addresses finishing DAD)."""
    s = d.show("summary")
    out = {k: s[k] for k in ("otherTable", "nexthops", "groups",
                             "notProgrammed", "mapErrors")}
    out["fpm"] = s["routesBySource"].get("fpm", 0)
    return out


def test_route_flood_rss_back_to_baseline(lab):
    """200k route adds then 200k deletes over FPM, three rounds: once the
    routes are gone, fpmd's RSS is back within 10 % of its baseline.

    Baseline: RSS once fpmd has started (its maps created and mmapped,
    before any route). fpmd gives freed memory back after a mass delete
    (rib_trim: hash tables shrunk, malloc_trim), so the flood must leave
    nothing: neither a leak nor the tables' high-water mark. The first
    round's figure after the deletes is printed too: a leak grows with
    every round, a high-water mark does not."""
    if not os.access(NOSAN, os.X_OK):
        pytest.fail(f"{NOSAN} not built: make check builds it, or "
                    f"make -C {BUILDDIR} tests/fpmd-nosan")
    doc = lab.config_doc(logging={"level": "info"})
    d = lab.fpmd(config=lab.write_config(doc), binary=NOSAN,
                 extra=SETTLE)
    empty = summary(d)
    base = rss_kib(d.proc.pid)
    heap0 = d.show("summary")
    assert heap0["resident"] > heap0["heapInUse"] > 0, heap0
    bound = base * 1.10
    flood = Flood(lab)
    msgs = 0

    def settled_rss():
        """RSS once fpmd's periodic trim has run (guard-interval 200 ms):
        at most bound, or what it is after 10 s; and once no chunk is
        still being dropped (a drop's bookkeeping is heap until the
        reaper's job comes back: a busy machine reads it mid-way)."""
        try:
            wait_for(lambda: rss_kib(d.proc.pid) <= bound, timeout=10,
                     interval=0.2)
        except AssertionError:
            pass
        wait_for(lambda: d.show("summary")["mapChunksDropping"] == 0,
                 timeout=30, interval=0.2, what="the chunks' drops")
        return rss_kib(d.proc.pid)

    def round_trip(r):
        nonlocal msgs
        for cmd in ("add", "del"):
            t0 = time.monotonic()
            msgs += flood.send(cmd, r)
            wait_for(lambda: fpm(d)["messages"] >= msgs, timeout=120,
                     interval=0.2, what=f"round {r}: {cmd} taken")
            dt = time.monotonic() - t0
            s = summary(d)
            if cmd == "add":
                peak = rss_kib(d.proc.pid)
                want = {"fpm": FLOOD_V4_24 + FLOOD_V4_32 + FLOOD_V6,
                        "otherTable": empty["otherTable"] + FLOOD_OTHER,
                        "notProgrammed": 0, "mapErrors": 0}
                got = {k: s[k] for k in want}
                assert got == want, f"round {r}: after the adds {s}"
            else:
                assert s == empty, f"round {r}: after the deletes {s}"
            print(f"round {r}: {cmd} {FLOOD_ROUTES} routes in {dt:.1f} s"
                  + (f", RSS {peak} KiB with them" if cmd == "add" else ""))
        assert fpm(d)["errors"] == 0 and d.proc.poll() is None

    heaps = []  # heap in use after each round but the last
    try:
        round_trip(0)
        first = settled_rss()
        heap1 = d.show("summary")
        heaps.append(heap1["heapInUse"])
        for r in range(1, ROUNDS):
            round_trip(r)
            if r < ROUNDS - 1:
                settled_rss()
                heaps.append(d.show("summary")["heapInUse"])
        after = settled_rss()
    finally:
        flood.close()
    heap = d.show("summary")
    print(f"fpmd-nosan RSS: baseline {base} KiB, after round 0 {first} KiB, "
          f"after {ROUNDS} rounds of {FLOOD_ROUTES} adds and deletes "
          f"{after} KiB ({(after - base) * 100 / base:+.1f} %); heap in "
          f"use {heap0['heapInUse'] >> 10} -> {heap1['heapInUse'] >> 10} "
          f"after round 0 -> {heap['heapInUse'] >> 10} KiB; fpmd's own "
          f"RSS figure {heap['resident'] >> 10} KiB")
    # fpmd's own count of its heap says the same: the last round keeps
    # nothing the earlier ones did not (a leak grows with every round;
    # 64 KiB of slack; lists sized by how much work waited at once reach
    # their largest in round 0 or 1, as the machine's timing has it),
    # and those high-water marks (lists sized for 200k routes) stay
    # under 1 MiB; its RSS figure is /proc's.
    assert heap["heapInUse"] <= max(heaps) + (64 << 10), (heaps, heap)
    assert heap["heapInUse"] <= heap0["heapInUse"] + (1 << 20), \
        (heap0, heap)
    assert abs(heap["resident"] / 1024 - after) <= 0.1 * after, \
        (heap, after)
    assert after <= bound, \
        f"RSS {after} KiB after the flood, baseline {base} KiB (> +10 %)"
