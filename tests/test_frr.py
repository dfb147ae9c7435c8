# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests with real FRR: zebra (-M dplane_fpm_nl) and staticd on
r1, routes entered with vtysh, fpmd on r1 taking them over FPM, real XDP.

What a user relies on: a route configured in FRR reaches the fast path and
is forwarded by XDP (fpmd's counters move, r1's kernel forwarding counters
stay flat); a route removed in FRR leaves it, and the kernel does what it
does without it; ECMP spreads flows and survives a link loss; neighbors are
learned from the kernel within 100 ms; restarts of zebra and of fpmd lose
nothing and leave nothing stale; malformed FPM input changes nothing.

Each test builds its own namespaces and FRR instance (tests/lib/frr.py) and
removes them. Run:
  FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_frr.py
"""
import datetime
import json
import os
import re
import socket
import struct
import subprocess
import time

import pytest

from lib.fpmwire import (NHA_GATEWAY, NHA_GROUP, NHA_ID, NHA_OIF, RTA_DST,
                         RTA_GATEWAY, RTA_MULTIPATH, RTA_NH_ID, RTA_TABLE,
                         RTM_DELROUTE, RTM_NEWNEXTHOP, RTM_NEWROUTE,
                         FpmClient, fpm_frame, nla, nlmsg, route_msg,
                         rtmsg)
from lib.feeds import (SETTLE, flap_leaves_no_stale_ids, fpm, fpm_routes,
                       map_values, map_writes, nexthops_view, start_fpm,
                       wait_connected, wait_no_route, wait_route)
from lib.frr import ns_wait_tentative
from lib.lab import (BH_DST, BH_NET, H2_DST, H2_DST6, H2_NET, H2_NET6, PY,
                     h2_loopback, ping, ping_result, ping_stream, wait_for)
from lib.traffic import (Snap, Udp, assert_kernel_flat, assert_lossless, fwd4,
                         measure, udp_send, wait_through_xdp)

GONE_NET = "10.97.0.0/24"                           # a second static route


# ---- fixtures ---------------------------------------------------------------

@pytest.fixture
def lab(frrlab):
    return frrlab


# ---- helpers ----------------------------------------------------------------

def gateways(d, prefix):
    """The gateways of fpmd's FPM route for prefix, through its group."""
    rt = fpm_routes(d).get(prefix)
    if not rt:
        return []
    if not rt.get("isGroup"):
        return [n.get("ip") for n in rt.get("nexthops", [])]
    if "nexthopGroupId" not in rt:
        return None           # fpmd's own group (RTA_MULTIPATH): not shown
    nhs = d.show("nexthops")
    g = nhs.get(str(rt["nexthopGroupId"]), {})
    return sorted(nhs[str(m["id"])].get("ip") for m in g.get("nexthops", []))


def live_gateways(d, prefix):
    """The gateways XDP spreads prefix's flows over: the members of its
    group whose egress is up. FRR 8.4 resends a group without a member
    whose link went down; FRR 10 leaves that to the kernel, which drops
    dead nexthops from groups itself, and so does fpmd's XDP."""
    rt = fpm_routes(d).get(prefix)
    if not rt or not rt.get("isGroup") or "nexthopGroupId" not in rt:
        return gateways(d, prefix)
    nhs = d.show("nexthops")
    g = nhs.get(str(rt["nexthopGroupId"]), {})
    return sorted(nhs[str(m["id"])].get("ip") for m in g.get("nexthops", [])
                  if nhs[str(m["id"])].get("state") != "egress-down")


def nexthop_via(d, ip):
    """fpmd's nexthops with this gateway (any id)."""
    return [n for n in d.show("nexthops").values() if n.get("ip") == ip]


def zebra_selected(f, v6=False):
    """zebra's selected, installed prefixes of the main table."""
    return {p for p, es in f.routes(v6).items()
            if any(e.get("selected") and e.get("installed") for e in es)}


def routes_view(d):
    """fpmd's FPM routes by content: what they forward to, not zebra's
    nexthop ids (zebra numbers them afresh when it restarts) nor fpmd's own
    slots. fe80::/64 is left out: zebra has one per interface and may pick
    another after a restart; fpmd passes link-local traffic up anyway."""
    nhs = d.show("nexthops")

    def members(e):
        if not e.get("isGroup"):
            return sorted(json.dumps(n, sort_keys=True)
                          for n in e.get("nexthops", []))
        g = nhs.get(str(e.get("nexthopGroupId")), {})
        return sorted(json.dumps({**{k: v for k, v in
                                      nhs[str(m["id"])].items()
                                      if k in ("ip", "interfaceName")},
                                  "weight": m.get("weight")},
                                 sort_keys=True)
                      for m in g.get("nexthops", []))
    out = {}
    for p, e in fpm_routes(d).items():
        if p.startswith("fe80:"):
            continue
        out[p] = {k: v for k, v in e.items()
                  if k not in ("fpmdIndex", "nexthopGroupId", "nexthops")}
        out[p]["via"] = members(e)
    return out


def quiet_fpm(d, quiet=1.0, timeout=20):
    """Waits until zebra's FPM stream has been quiet for `quiet` s: a burst
    (a replay, staticd's resend) has been applied as a whole."""
    last, since = fpm(d)["messages"], time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = fpm(d)["messages"]
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise AssertionError(f"FPM stream not quiet for {quiet} s in {timeout} s")


def changed_values(old, new, skip=()):
    return {p: (old[p], new.get(p)) for p in old
            if p not in skip and old[p] != new.get(p)}


# ---- a. a static route from vtysh, forwarded by XDP, then removed -----------

def test_a_static_route_reaches_xdp_and_leaves(lab):
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_fpm(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}")
    lab.warm_kernel_neighbors()          # r1's kernel learns h1 and h2
    rt = wait_route(d, H2_NET)
    assert rt["type"] == "unicast" and not rt["isGroup"], rt
    assert rt["nexthops"][0]["ip"] == lab.H2_V4 and \
        rt["nexthops"][0]["interfaceName"] == "r1-eth1", rt
    nh = nexthop_via(d, lab.H2_V4)
    assert nh and nh[0]["resolved"] and \
        nh[0]["mac"] == lab.h2.mac("h2-eth0"), nh
    # zebra's connected routes come over FPM too: the replies use one.
    assert fpm_routes(d)["172.16.101.0/24"]["state"] == "forwarding"

    n = 20
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == n, f"{got}/{n} replies ({dl})"
    assert dl["r1-eth0"]["forwarded"] >= n, dl
    assert dl["r1-eth1"]["tx"] >= n, dl
    assert dl["r1-eth1"]["forwarded"] >= n, dl      # the replies
    assert dl.f4 == 0, f"kernel forwarded: {dl}"

    f.configure(f"no ip route {H2_NET} {lab.H2_V4}")
    wait_no_route(d, H2_NET)
    f.wait_route(H2_NET, present=False)
    assert H2_NET not in lab.r1.run("ip route").stdout
    # The kernel has no route either now: it drops them, counts InNoRoutes
    # and answers (rate-limited) net unreachable.
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == 0, f"{got} replies without a route"
    assert dl["r1-eth0"]["pass-no-route"] >= n, dl
    assert dl["r1-eth0"]["forwarded"] == 0, dl
    assert dl.k["InNoRoutes"] >= n and dl.f4 == 0, dl

    # A route added to the kernel by hand: zebra learns it (K) and sends
    # it over FPM like its own, so XDP forwards it too.
    lab.r1.run(f"ip route add {H2_NET} via {lab.H2_V4}")
    f.wait_route(H2_NET)
    assert f.routes()[H2_NET][0]["protocol"] == "kernel"
    wait_route(d, H2_NET)
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == n, f"{got}/{n} replies on the kernel route ({dl})"
    assert dl["r1-eth0"]["forwarded"] >= n and dl.f4 == 0, dl


# ---- a2. ids zebra frees without telling: gone from fpmd too ---------------

@pytest.mark.frr_releases("bookworm", "forky")
def test_a2_ids_zebra_frees_unannounced_leave_fpmd(lab):
    """As the plugin's test_i: a link flap makes the kernel flush the
    nexthop objects on it and zebra free the unused ones without an FPM
    delete; fpmd drops them too, and XDP still forwards. Not 10.3: its
    FPM sends no delete for the connected IPv6 route the flap removes
    (test_a3), which keeps naming its id."""
    flap_leaves_no_stale_ids(lab, start_fpm, "fpm")


# ---- a3. a connected route leaves with its address -------------------------

@pytest.mark.frr_releases("bookworm", "forky")
def test_a3_connected_route_leaves_with_its_address(lab):
    """r1's IPv6 address on r1-eth1 removed: the kernel drops the
    connected /64, zebra sends the delete over FPM and fpmd drops it,
    else XDP would forward what the kernel answers with "no route".
    Added back: the route returns, XDP forwards. Not 10.3: its FPM sends
    no delete for a route zebra took from the kernel (connected, kernel;
    FRR issue 19637, reported on 10.4; 10.7.1 sends it): the route stays
    in fpmd until the address returns or zebra reconnects (README, "FRR
    versions")."""
    p6 = "2001:db8:102::/64"
    d, f = start_fpm(lab)
    lab.warm_kernel_neighbors()
    wait_route(d, p6)
    n = 10
    got, dl = measure(lab, d, lambda: ping(lab.h1, lab.H2_V6, n, 0.02,
                                           v6=True))
    assert got == n and dl["r1-eth0"]["forwarded"] >= n, dl

    lab.r1.run(f"ip -6 addr del {lab.R1_V6_1}/64 dev r1-eth1")
    f.wait_route(p6, v6=True, present=False)
    wait_no_route(d, p6)
    got, dl = measure(lab, d, lambda: ping(lab.h1, lab.H2_V6, n, 0.02,
                                           v6=True))
    assert got == 0 and dl["r1-eth0"]["forwarded"] == 0, dl
    assert dl["r1-eth0"]["pass-no-route"] >= n, dl

    lab.r1.run(f"ip -6 addr add {lab.R1_V6_1}/64 dev r1-eth1 nodad")
    wait_route(d, p6, state=None)
    lab.warm_kernel_neighbors()
    wait_route(d, p6)
    got, dl = measure(lab, d, lambda: ping(lab.h1, lab.H2_V6, n, 0.02,
                                           v6=True))
    assert got == n and dl["r1-eth0"]["forwarded"] >= n, dl


# ---- b. ECMP over r2 and r3, then one link down -----------------------------

ECMP_TWIN = "10.250.7.0/24"  # no traffic: only shares H2_NET's paths

@pytest.mark.parametrize("frrlab", ["ecmp"], indirect=True)
@pytest.mark.parametrize("nhg", [True, False], ids=["nhg", "no-nhg"])
def test_b_ecmp_spreads_and_survives_link_down(lab, nhg):
    """nhg: FRR's default, nexthop groups (RTM_NEWNEXTHOP + RTA_NH_ID);
    no-nhg: `no fpm use-next-hop-groups` (RTA_MULTIPATH), with kernel
    nexthop objects off too (FRR-LAB.md: the kernel stays right)."""
    ifs = ("r1-eth0", "r1-eth1", "r1-eth2")
    d, f = start_fpm(lab, ifnames=ifs, nhg=nhg, kernel_nhg=nhg)
    f.configure(f"ip route {H2_NET} {lab.R2_V4}",
                f"ip route {H2_NET} {lab.R3_V4}")
    # The kernel resolves r2, r3 and h1 (fpmd learns them from it).
    lab.r1.run(f"ping -c1 -W1 {lab.R2_V4} && ping -c1 -W1 {lab.R3_V4}")
    lab.h1.run(f"ping -c1 -W1 {lab.R1_V4_0}")
    rt = wait_route(d, H2_NET)
    assert rt["isGroup"], rt
    # A second prefix over the same two paths shares the group (without
    # nhg, fpmd's own group of the member set: one, not one per route).
    f.configure(f"ip route {ECMP_TWIN} {lab.R2_V4}",
                f"ip route {ECMP_TWIN} {lab.R3_V4}")
    assert wait_route(d, ECMP_TWIN)["isGroup"]
    assert d.show("summary")["groups"] == 1, d.show("groups")
    if nhg:   # fpmctl lists the members of zebra's groups only
        assert gateways(d, H2_NET) == sorted([lab.R2_V4, lab.R3_V4]), \
            d.show("nexthops")

    flows, per = 64, 10
    path_of = {"h2-eth0": "r2", "h2-eth1": "r3"}

    def burst():
        rx = Udp(lab.h2)
        sent = udp_send(lab.h1, H2_DST, flows=flows, count=per)
        return sent, rx.stop()

    def fwd_r2_r3():
        return fwd4(lab.r2), fwd4(lab.r3)

    r0 = fwd_r2_r3()
    (sent, rx), dl = measure(lab, d, burst)
    r1_ = fwd_r2_r3()
    total = flows * per
    assert sum(sent.values()) == total and rx["total"] == total, \
        f"received {rx['total']}/{total}"
    # Each flow keeps to one path; both paths carry flows.
    paths = {}
    for sport, ifs_ in rx["received"].items():
        assert len(ifs_) == 1, f"flow {sport} split over {ifs_}"
        paths.setdefault(path_of[next(iter(ifs_))], []).append(sport)
    assert len(paths.get("r2", [])) >= 8 and len(paths.get("r3", [])) >= 8, \
        {k: len(v) for k, v in paths.items()}
    assert dl["r1-eth0"]["forwarded"] >= total, dl
    assert dl["r1-eth1"]["tx"] == len(paths["r2"]) * per, dl
    assert dl["r1-eth2"]["tx"] == len(paths["r3"]) * per, dl
    assert r1_[0] - r0[0] >= len(paths["r2"]) * per and \
        r1_[1] - r0[1] >= len(paths["r3"]) * per, (r0, r1_)
    assert dl.f4 == 0, f"r1's kernel forwarded: {dl}"

    # r1-r2 down: zebra drops that nexthop and tells fpmd; all flows go
    # by r3, still in XDP.
    lab.r1.run("ip link set r1-eth1 down")

    def zebra_active():
        return sorted(h.get("ip") for e in f.routes().get(H2_NET, [])
                      if e.get("selected") for h in e.get("nexthops", [])
                      if h.get("active"))
    # fpmd's own group of RTA_MULTIPATH paths is not shown (None): the
    # measurement below says where XDP sends the flows.
    wait_for(lambda: zebra_active() == [lab.R3_V4] and
             live_gateways(d, H2_NET) in ([lab.R3_V4], None), timeout=5,
             what="route via r3 only")
    assert wait_route(d, H2_NET)["installed"]
    (sent, rx), dl = measure(lab, d, burst)
    assert rx["total"] == total, f"received {rx['total']}/{total} ({dl})"
    assert all(set(v) == {"h2-eth1"} for v in rx["received"].values()), \
        rx["received"]
    assert dl["r1-eth0"]["forwarded"] >= total, dl
    assert dl["r1-eth2"]["tx"] >= total and dl["r1-eth1"]["tx"] == 0, dl
    assert dl.f4 == 0, f"r1's kernel forwarded: {dl}"


# ---- c. a fresh neighbor: kernel first, then XDP within 100 ms --------------

def test_c_fresh_neighbor_kernel_then_xdp_within_100ms(lab):
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_fpm(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}")
    lab.h1.run(f"ping -c1 -W1 {lab.R1_V4_0}")   # h1 <-> r1 resolved only
    wait_route(d, H2_NET, state=None)
    assert not lab.r1.run(f"ip neigh show {lab.H2_V4}").stdout.strip()
    nh = nexthop_via(d, lab.H2_V4)
    assert nh and not nh[0]["resolved"], nh
    assert fpm_routes(d)[H2_NET]["state"] == "unresolved"

    mon = subprocess.Popen(["ip", "-ts", "-n", lab.r1.name, "monitor",
                            "neigh"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.2)                  # the monitor is listening
        before = Snap(lab, d)
        first = lab.h1.popen(f"exec ping -c1 -W2 {H2_DST}",
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        # Poll fpmd as fast as fpmctl goes while the kernel resolves.
        t_resolved = None
        deadline = time.time() + 3
        while time.time() < deadline:
            nh = nexthop_via(d, lab.H2_V4)
            if nh and nh[0]["resolved"]:
                t_resolved = time.time()
                break
        out, _ = first.communicate(timeout=5)
        assert " 0% packet loss" in out, out
        dl = Snap(lab, d).since(before)
        assert t_resolved, f"nexthop never resolved: {nh}"
    finally:
        mon.terminate()
        mon_out, _ = mon.communicate(timeout=5)
    # The first packet went to the kernel, which forwarded it (and ARPed).
    assert dl["r1-eth0"]["pass-unresolved"] >= 1, dl
    assert dl["r1-eth0"]["forwarded"] == 0 and dl.f4 >= 1, dl
    t_kernel = None
    for line in mon_out.splitlines():
        m = re.match(r"\[([^\]]+)\] (\S+) dev r1-eth1 lladdr \S+ "
                     r"(REACHABLE|STALE|DELAY)", line)
        if m and m.group(2) == lab.H2_V4:
            t_kernel = datetime.datetime.fromisoformat(
                m.group(1)).timestamp()
            break
    assert t_kernel, f"kernel never showed the neighbor:\n{mon_out}"
    # When fpmd wrote the nexthop, from its own (debug) log line: fpmctl's
    # poll above only shows that it happened, and its own latency on a
    # loaded 2-core machine is no part of fpmd's reaction.
    t_fpmd = None
    for line in d.logtext()[d.log_start:].splitlines():
        m = re.match(r"(\S+ \S+) fpmd debug: maps: nexthop "
                     r"(?:\d+|\(implicit\)) \(slot \d+\) via (\S+): "
                     r"resolved, ", line)
        if m and m.group(2) == lab.H2_V4:
            t_fpmd = datetime.datetime.strptime(
                m.group(1), "%Y/%m/%d %H:%M:%S.%f").timestamp()
            break
    assert t_fpmd, f"no 'resolved' line in fpmd's log:\n{d.logtext()}"
    lag = t_fpmd - t_kernel
    print(f"nexthop written by fpmd {lag * 1000:.1f} ms after the kernel "
          f"learned the neighbor (fpmctl saw it after "
          f"{(t_resolved - t_kernel) * 1000:.1f} ms)")
    assert lag < 0.100, f"fpmd took {lag * 1000:.0f} ms"
    assert nh[0]["mac"] == lab.h2.mac("h2-eth0")
    assert fpm_routes(d)[H2_NET]["state"] == "forwarding"

    n = 10
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == n, f"{got}/{n} ({dl})"
    assert dl["r1-eth0"]["forwarded"] >= n and \
        dl["r1-eth0"]["pass-unresolved"] == 0, dl
    assert dl.f4 == 0, f"kernel forwarded: {dl}"


# ---- d. IPv6 with a link-local nexthop, as FRR uses them --------------------

def test_d_ipv6_link_local_nexthop(lab):
    h2_loopback(lab, H2_DST6 + "/64")
    ns_wait_tentative(lab.h2)
    ns_wait_tentative(lab.r1)
    ll = lab.h2.run("ip -6 -br addr show dev h2-eth0 scope link").stdout
    ll = ll.split()[2].split("/")[0]
    d, f = start_fpm(lab)
    f.configure(f"ipv6 route {H2_NET6} {ll} r1-eth1")
    lab.warm_kernel_neighbors()
    lab.r1.run(f"ping -6 -c1 -W1 {ll}%r1-eth1")    # the kernel resolves it
    rt = wait_route(d, H2_NET6)
    assert rt["nexthops"][0]["ip"] == ll and \
        rt["nexthops"][0]["interfaceName"] == "r1-eth1", rt
    nh = nexthop_via(d, ll)
    assert nh and nh[0]["resolved"] and \
        nh[0]["mac"] == lab.h2.mac("h2-eth0"), nh

    n = 20
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST6, n, 0.02,
                                           v6=True))
    assert got == n, f"{got}/{n} ({dl})"
    assert dl["r1-eth0"]["forwarded"] >= n, dl
    assert dl["r1-eth1"]["tx"] >= n, dl
    assert dl["r1-eth1"]["forwarded"] >= n, dl      # replies, connected /64
    assert dl.f6 == 0, f"kernel forwarded: {dl}"

    f.configure(f"no ipv6 route {H2_NET6} {ll} r1-eth1")
    wait_no_route(d, H2_NET6)
    f.wait_route(H2_NET6, v6=True, present=False)
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST6, n, 0.02,
                                           v6=True))
    assert got == 0, f"{got} replies without a route"
    assert dl["r1-eth0"]["pass-no-route"] >= n, dl
    assert dl.k["Ip6InNoRoutes"] >= n and dl.f6 == 0, dl


# ---- e. blackhole (and reject) routes ---------------------------------------

def test_e_blackhole_drops_in_xdp(lab):
    h2_loopback(lab, BH_DST + "/24")
    d, f = start_fpm(lab)
    f.configure(f"ip route {BH_NET} {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    wait_route(d, BH_NET)
    n = 10
    assert ping(lab.h1, BH_DST, n, 0.02) == n, "reachable before"

    f.configure(f"no ip route {BH_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole")
    rt = wait_for(lambda: (fpm_routes(d).get(BH_NET) or {}).get("type")
                  == "blackhole" and fpm_routes(d)[BH_NET],
                  what="blackhole route in fpmd")
    assert rt["installed"] and rt["state"] == "blackhole", rt
    got, dl = measure(lab, d, lambda: ping(lab.h1, BH_DST, n, 0.02))
    assert got == 0, f"{got} replies through a blackhole"
    assert dl["r1-eth0"]["drop-blackhole"] == n, dl
    # Dropped in XDP: r1's IP stack never saw them.
    assert dl.k["InReceives"] == 0 and dl.f4 == 0, dl
    assert all(dl["r1-eth0"][k] == 0 for k in (
        "forwarded", "pass-no-route", "pass-unreachable", "pass-unresolved",
        "pass-local")), dl

    # reject = unreachable: to the kernel, which answers with an ICMP error.
    f.configure(f"no ip route {BH_NET} blackhole",
                f"ip route {BH_NET} reject")
    wait_for(lambda: (fpm_routes(d).get(BH_NET) or {}).get("type")
             == "unreachable", what="unreachable route in fpmd")
    got, dl = measure(lab, d, lambda: ping(lab.h1, BH_DST, n, 0.02))
    assert got == 0 and dl["r1-eth0"]["pass-unreachable"] >= n, dl
    assert dl["r1-eth0"]["drop-blackhole"] == 0, dl


# ---- f. restarts ------------------------------------------------------------

# CI time: the oldest and newest FRR 10 cover it (10.3 has the feeds' tests).
@pytest.mark.frr_releases("bookworm", "forky")
def test_f1_zebra_graceful_restart(lab):
    """zebra -r exits, comes back with -K: fpmd forwards all along, sweeps
    what zebra no longer has, rewrites nothing that did not change."""
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_fpm(lab, fpmd_extra=("--fpm-settle", "1000"), retain=True)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {GONE_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole")
    lab.warm_kernel_neighbors()
    for p in (H2_NET, GONE_NET):
        wait_route(d, p)
    wait_route(d, BH_NET, state="blackhole")
    before, vals0 = routes_view(d), map_values(d)
    ll0 = map_values(d, linklocal=True)
    problems = []          # checked at the end, so one run shows them all

    stream = ping_stream(lab.h1, H2_DST, 1100)
    try:
        c0 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c0 + 20,
                 what="the ping stream through XDP")
        f0 = fwd4(lab.r1)

        f.stop("zebra")                          # -r: the kernel keeps all
        wait_for(lambda: not fpm(d)["connected"], what="FPM closed")
        # While zebra is away: GONE is removed from staticd and from the
        # kernel, so zebra's replay will not have it.
        f.configure(f"no ip route {GONE_NET} {lab.H2_V4}")
        lab.r1.run(f"ip route del {GONE_NET}")
        c1 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c1 + 50,
                 timeout=15, interval=0.1,
                 what="XDP forwarding 50 pings while zebra is gone")
        # The rest stays exactly; GONE may already be gone, since fpmd
        # follows the kernel's main table while zebra is away.
        assert {p: e for p, e in routes_view(d).items() if p != GONE_NET} \
            == {p: e for p, e in before.items() if p != GONE_NET}, \
            "routes changed while zebra was away"
        assert fwd4(lab.r1) == f0, "kernel forwarded while zebra was away"

        w0 = map_writes(d)
        t_start = time.time()
        f.start_zebra(retain=True, graceful=15)  # > staticd's ~9 s resend
        s = wait_connected(d, connections=2)
        # The replay refreshed everything zebra still has; only GONE went.
        assert GONE_NET not in fpm_routes(d), "stale route left"
        now = routes_view(d)
        assert now == {p: e for p, e in before.items() if p != GONE_NET}, \
            "a refreshed route changed"
        w1 = map_writes(d)
        moved = changed_values(vals0, map_values(d), skip=(GONE_NET,))
        # Writes allowed: the sweep, and link-local routes that really
        # changed (moved interface).
        real = changed_values(ll0, map_values(d, linklocal=True),
                              skip=(GONE_NET,))
        if w1 - w0 > s["replaySwept"] + len(real) or moved:
            problems.append(
                f"replay: {w1 - w0} route map writes for "
                f"{s['replaySwept']} swept; unchanged routes rewritten "
                f"(zebra gave them new nexthop ids): {moved}")

        # FRR 8.4's staticd resends its routes ~9 s after zebra is back
        # (new zebra nexthop ids, same content): still nothing to
        # rewrite. FRR 10's staticd resends them at once, into the replay.
        m0, vals1 = fpm(d)["messages"], map_values(d)
        if f.rel.major < 10:
            wait_for(lambda: fpm(d)["messages"] > m0,
                     timeout=max(1, 15 - (time.time() - t_start)),
                     interval=0.2, what="staticd's resend")
        quiet_fpm(d)
        assert routes_view(d) == now, "routes changed with staticd's resend"
        moved = changed_values(vals1, map_values(d))
        if map_writes(d) != w1 or moved:
            problems.append(
                f"staticd resend: {map_writes(d) - w1} route map writes; "
                f"rewritten: {moved}")
        # Converged to zebra's state, IPv4 and IPv6.
        fp = set(fpm_routes(d))
        z = zebra_selected(f) | zebra_selected(f, v6=True)
        assert fp == z, f"fpmd {sorted(fp)} != zebra {sorted(z)}"

        sent, got, out = ping_result(stream)
    finally:
        if stream.poll() is None:
            stream.kill()
            stream.wait()
    assert_lossless("ping", sent, got, 1000, out)
    assert_kernel_flat(lab.r1, f0)
    assert not problems, "\n".join(problems)


def test_f2_frr_withdrawals_followed(lab):
    """staticd stopping withdraws its routes over FPM; zebra stopping
    without -r removes them from the kernel: fpmd follows both."""
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_fpm(lab)
    routes = (f"ip route {H2_NET} {lab.H2_V4}",
              f"ip route {GONE_NET} {lab.H2_V4}")
    f.configure(*routes)
    lab.warm_kernel_neighbors()
    for p in (H2_NET, GONE_NET):
        wait_route(d, p)

    f.stop("staticd")                            # DELROUTE for each
    for p in (H2_NET, GONE_NET):
        wait_no_route(d, p, timeout=2)
    assert fpm(d)["connected"]
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
    assert got == 0 and dl["r1-eth0"]["pass-no-route"] >= 5, dl

    f.start("staticd")
    f.configure(*routes)
    for p in (H2_NET, GONE_NET):
        wait_route(d, p)
    assert ping(lab.h1, H2_DST, 5, 0.02) == 5

    # zebra without -r: it deletes its routes from the kernel on exit but
    # sends nothing over FPM. The kernel path has no route now; the fast
    # path must not go on forwarding what the kernel no longer would.
    f.stop("zebra")
    wait_for(lambda: H2_NET not in lab.r1.run("ip route").stdout,
             what="zebra's routes gone from the kernel")
    for p in (H2_NET, GONE_NET):
        wait_no_route(d, p, timeout=5)
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
    assert got == 0, f"{got} replies after zebra withdrew the route"
    assert dl["r1-eth0"]["forwarded"] == 0, dl


# CI time: the oldest and newest FRR 10 cover it (10.3 has the feeds' tests).
@pytest.mark.frr_releases("bookworm", "forky")
def test_f3_fpmd_restart_without_loss(lab):
    """fpmd --keep-forwarding stops, a new fpmd adopts the pinned maps and
    takes zebra's replay: not one packet of the streams is lost."""
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_fpm(lab, fpmd_extra=SETTLE + ("--keep-forwarding",))
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole")
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET)
    wait_route(d, BH_NET, state="blackhole")
    before = (routes_view(d), nexthops_view(d))

    rx = Udp(lab.h2)
    stream = ping_stream(lab.h1, H2_DST, 600)
    udp = udp_send(lab.h1, H2_DST, flows=4, interval=0.002, duration=9,
                   background=True)
    try:
        wait_through_xdp(d)
        f0 = fwd4(lab.r1)
        assert d.stop() == 0, "fpmd --keep-forwarding did not exit cleanly"
        os.rename(d.log, d.log + ".1")   # wait_ready looks for "started:"
        time.sleep(0.5)                  # XDP alone forwards meanwhile
        d2 = lab.fpmd(extra=SETTLE)
        assert "adopted" in d2.logtext(), d2.logtext()
        w0 = map_writes(d2)
        wait_connected(d2)               # zebra reconnects (~3 s) and replays
        after = (routes_view(d2), nexthops_view(d2))
        assert after[0] == before[0], "routes differ after the replay"
        assert after[1] == before[1], "nexthops differ after the replay"
        assert map_writes(d2) == w0, \
            f"the replay rewrote {map_writes(d2) - w0} unchanged entries"
        assert fpm(d2)["replaySwept"] == 0

        sent, got, out = ping_result(stream)
        uout, uerr = udp.communicate(timeout=30)
        usent = sum(json.loads(uout)["sent"].values())
        ugot = rx.stop()["total"]
    finally:
        for p in (stream, udp):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert_lossless("ping", sent, got, 500)
    assert_lossless("UDP", usent, ugot, 3000)
    assert_kernel_flat(lab.r1, f0)


# ---- g. malformed FPM input -------------------------------------------------

VALID_PREFIX = H2_NET


def malformed_cases(ok):
    """(what, bytes, words in fpmd's log line). ok is a valid netlink
    NEWROUTE message; each case breaks exactly one thing."""
    bad_attr = bytearray(ok)
    # The first attribute (RTA_DST, 8 bytes at offset 28) claims 64 bytes.
    struct.pack_into("=H", bad_attr, 16 + 12, 64)
    unknown = bytearray(ok)
    struct.pack_into("=H", unknown, 4, 0x77)       # nlmsg_type
    zero_len = bytearray(ok)
    struct.pack_into("=I", zero_len, 0, 0)         # nlmsg_len 0
    long_nl = bytearray(ok)
    struct.pack_into("=I", long_nl, 0, len(ok) + 40)
    return [
        ("bad version", fpm_frame(ok, version=2), ["version"]),
        ("unknown frame type", fpm_frame(ok, ftype=7), ["type"]),
        ("frame length below the header", fpm_frame(ok, length=3),
         ["length"]),
        ("netlink message longer than its frame", fpm_frame(bytes(long_nl)),
         ["truncated"]),
        ("netlink length zero", fpm_frame(bytes(zero_len)), ["truncated"]),
        ("truncated attribute", fpm_frame(bytes(bad_attr)),
         ["truncated", "attribute"]),
        ("unknown netlink message type", fpm_frame(bytes(unknown)),
         ["unknown", "type"]),
    ]


# fpmd's own handling of raw FPM input: the FRR release does not matter.
@pytest.mark.frr_releases("bookworm")
def test_g_malformed_fpm_input(lab):
    h2_loopback(lab, H2_DST + "/24")
    d = lab.fpmd(extra=SETTLE)
    lab.warm_kernel_neighbors()
    oif = lab.r1.ifindex("r1-eth1")
    # The raw client's route is in the kernel too, as zebra's would be:
    # while no FPM peer is connected, fpmd drops held routes the kernel
    # does not have (a second after each disconnect), and on a loaded
    # machine the cases below take longer than that.
    lab.r1.run(f"ip route add {VALID_PREFIX} via {lab.H2_V4}")

    # A well-formed frame from the raw client is taken (so the broken ones
    # below are broken only where they say): two messages, h2's prefix via
    # h2 and h1's connected subnet for the replies.
    ok = route_msg(VALID_PREFIX, lab.H2_V4, oif)
    good = fpm_frame(ok + route_msg("172.16.101.0/24", None,
                                    lab.r1.ifindex("r1-eth0")))
    assert FpmClient(lab).run(good, close_early=True) == "sent-and-closed"
    wait_route(d, VALID_PREFIX)
    wait_route(d, "172.16.101.0/24")
    routes, nhs = fpm_routes(d), d.show("nexthops")
    errors = fpm(d)["errors"]

    for what, data, words in malformed_cases(ok):
        log0 = len(d.logtext())
        # A good frame first: it is applied; the bad one is not.
        res = FpmClient(lab).run(fpm_frame(ok) + data)
        assert res == "closed-by-peer", f"{what}: connection {res}"
        line = wait_for(lambda: [x for x in d.logtext()[log0:].splitlines()
                                 if "closing the connection" in x],
                        timeout=3, what=f"{what}: log line")[0]
        for w in words:
            assert w in line.lower(), f"{what}: log line {line!r} lacks {w}"
        assert d.proc.poll() is None, f"{what}: fpmd died"
        assert fpm_routes(d) == routes, f"{what}: routes changed"
        assert d.show("nexthops") == nhs, f"{what}: nexthops changed"
        errors += 1
        s = fpm(d)
        assert s["errors"] == errors and not s["connected"], (what, s)

    # Half a frame, then the client hangs up.
    log0 = len(d.logtext())
    frame = fpm_frame(ok)
    assert FpmClient(lab).run(frame[:len(frame) // 2], close_early=True) \
        == "sent-and-closed"
    wait_for(lambda: "middle of a frame" in d.logtext()[log0:], timeout=3,
             what="half-frame log line")
    assert fpm_routes(d) == routes and d.proc.poll() is None

    # The fast path still forwards on the raw client's route.
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
    assert got == 5 and dl["r1-eth0"]["forwarded"] >= 5 and dl.f4 == 0, dl

    # A real zebra after all that: connects, its replay lands, and the
    # raw client's route (zebra never had it) is swept.
    conns = fpm(d)["connections"]
    lab.r1.run(f"ip route del {VALID_PREFIX}")
    f = lab.frr()
    f.configure(f"ip route {BH_NET} blackhole")
    wait_connected(d, connections=conns + 1)
    wait_route(d, BH_NET, state="blackhole")
    wait_no_route(d, VALID_PREFIX, timeout=5)
    assert fpm(d)["connected"]


IDLE_SAID = "has sent nothing for the settle time"


def idle_client(lab):
    """A TCP client of fpmd's FPM port that sends nothing and stays until
    its stdin closes."""
    p = lab.r1.popen(f"exec {PY} -c 'import socket, sys; "
                     "s = socket.create_connection((\"127.0.0.1\", 2620)); "
                     "print(\"connected\", flush=True); sys.stdin.read()'",
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "connected"
    return p


def idle_close(p):
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


# fpmd's own handling of raw FPM input: the FRR release does not matter.
@pytest.mark.frr_releases("bookworm")
def test_g2_idle_client_changes_nothing(lab):
    """A client that connects and says nothing (a port scan, a stuck peer)
    has replayed nothing: it must not sweep zebra's routes. With zebra
    connected it is refused; with zebra away (its routes held) it is the
    connection, and its settle time passes (fpmd says so) with nothing
    swept."""
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_fpm(lab, retain=True)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET)
    routes = routes_view(d)
    conns = fpm(d)["connections"]

    log0 = len(d.logtext())
    idle = idle_client(lab)
    try:
        wait_for(lambda: "refusing a second FPM connection" in
                 d.logtext()[log0:], timeout=10,
                 what="the idle connection refused while zebra is connected")
        s = fpm(d)
        assert s["connected"] and s["connections"] == conns and \
            s["replayState"] == "settled", s
        assert routes_view(d) == routes, \
            f"an idle connection changed the routes: {sorted(fpm_routes(d))}"
    finally:
        idle_close(idle)

    f.stop("zebra")                      # -r: the kernel keeps its routes
    wait_for(lambda: fpm(d)["replayState"] == "held", timeout=10,
             what="zebra's routes held")
    log0 = len(d.logtext())
    idle = idle_client(lab)
    try:
        wait_for(lambda: fpm(d)["connections"] == conns + 1, timeout=10,
                 what="the idle client taken as the FPM connection")
        # The settle timer has run for it (> --fpm-settle, 300 ms) ...
        wait_for(lambda: IDLE_SAID in d.logtext()[log0:] or
                 "replay settled" in d.logtext()[log0:], timeout=10,
                 what="the settle time passed on the idle connection")
        # ... and swept nothing.
        assert routes_view(d) == routes, \
            f"an idle connection changed the routes: {sorted(fpm_routes(d))}"
        assert IDLE_SAID in d.logtext()[log0:], d.logtext()[log0:]
        s = fpm(d)
        assert s["connected"] and s["replayState"] == "in-progress", s
        got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
        assert got == 5 and dl["r1-eth0"]["forwarded"] >= 5, dl
    finally:
        idle_close(idle)
    # Gone again: zebra's routes held, as they were.
    wait_for(lambda: fpm(d)["replayState"] == "held", timeout=10,
             what="zebra's routes held again")
    assert routes_view(d) == routes


# Debian's zebra is built with --enable-multipath=256: a group or an
# RTA_MULTIPATH route may have more paths than fpmd's 64 buckets. Such a
# route is valid and takes the kernel path; fpmd once closed the FPM
# connection on the group (so a covering route went on forwarding the
# prefix in XDP) and silently forwarded a wide RTA_MULTIPATH route over
# its first 64 paths only.
WIDE_NET = "10.96.0.0/24"


def nexthop_msg(nhid, oif=0, gw=None, group=()):
    body = struct.pack("=BBBBI", socket.AF_INET, 0, 196, 0, 0) + \
        nla(NHA_ID, struct.pack("=I", nhid))
    if group:
        body += nla(NHA_GROUP, b"".join(struct.pack("=IBBH", m, 0, 0, 0)
                                        for m in group))
    else:
        body += nla(NHA_OIF, struct.pack("=I", oif)) + \
            nla(NHA_GATEWAY, socket.inet_aton(gw))
    return nlmsg(RTM_NEWNEXTHOP, body)


def route_attrs_msg(prefix, attrs):
    net, plen = prefix.split("/")
    return nlmsg(RTM_NEWROUTE, rtmsg(int(plen)) +
                 nla(RTA_DST, socket.inet_aton(net)) +
                 nla(RTA_TABLE, struct.pack("=I", 254)) + attrs)


# fpmd's own handling of raw FPM input: the FRR release does not matter.
@pytest.mark.frr_releases("bookworm")
def test_g4_wider_ecmp_than_fpmd_takes_kernel_path(lab):
    h2_loopback(lab, H2_DST + "/24", "10.96.0.1/24")
    d = lab.fpmd(extra=SETTLE)
    lab.warm_kernel_neighbors()
    oif = lab.r1.ifindex("r1-eth1")
    gw = lab.H2_V4
    lab.r1.run(f"ip route add {H2_NET} via {gw} && "
               f"ip route add {WIDE_NET} via {gw}")
    # A covering route XDP forwards, in a frame of its own.
    cover = fpm_frame(route_msg("10.0.0.0/8", gw, oif) +
                      route_msg("172.16.101.0/24", None,
                                lab.r1.ifindex("r1-eth0")))
    singles = b"".join(nexthop_msg(i, oif, gw) for i in range(1, 66))
    group = fpm_frame(singles + nexthop_msg(100, group=range(1, 66)) +
                      route_attrs_msg(H2_NET, nla(RTA_NH_ID,
                                                  struct.pack("=I", 100))))
    paths = b"".join(struct.pack("=HBBi", 16, 0, 0, oif) +
                     nla(RTA_GATEWAY, socket.inet_aton(gw))
                     for _ in range(65))
    multipath = fpm_frame(route_attrs_msg(WIDE_NET, nla(RTA_MULTIPATH,
                                                         paths)))
    log0 = len(d.logtext())
    assert FpmClient(lab).run(cover + group + multipath) == "still-open"
    assert fpm(d)["errors"] == 0, fpm(d)
    wait_route(d, H2_NET, state="unsupported-nexthop")
    wait_route(d, WIDE_NET, state="unsupported-nexthop")
    log = d.logtext()[log0:]
    assert "nexthop group 100: 65 members" in log, log
    assert f"route {WIDE_NET}: more than 64 paths" in log, log
    for dst in (H2_DST, "10.96.0.1"):
        got, dl = measure(lab, d, lambda: ping(lab.h1, dst, 5, 0.02))
        assert got == 5 and dl["r1-eth0"]["forwarded"] == 0 and \
            dl.f4 >= 5, (dst, dl)


# zebra 8.4.4 replays its nexthops in hash order: on a (re)connect a
# group can come before its members (seen in the lab's ECMP diamond with
# kernel nexthop objects). fpmd once refused such a group ("group member
# nexthop unknown") and every route using it took the kernel path until
# the group changed; now the group is held until its last member is in.
# fpmd's own handling of raw FPM input: the FRR release does not matter.
@pytest.mark.frr_releases("bookworm")
def test_g5_group_ahead_of_its_members_is_held(lab):
    h2_loopback(lab, H2_DST + "/24")
    d = lab.fpmd(extra=SETTLE)
    lab.warm_kernel_neighbors()
    oif = lab.r1.ifindex("r1-eth1")
    gw = lab.H2_V4
    lab.r1.run(f"ip route add {H2_NET} via {gw}")
    nhid = nla(RTA_NH_ID, struct.pack("=I", 100))
    frame = fpm_frame(nexthop_msg(100, group=(1, 2)) +
                      route_attrs_msg(H2_NET, nhid) +
                      nexthop_msg(1, oif, gw))
    late = fpm_frame(nexthop_msg(2, oif, gw))
    log0 = len(d.logtext())
    assert FpmClient(lab).run(frame + late) == "still-open"
    assert fpm(d)["errors"] == 0, fpm(d)
    wait_route(d, H2_NET)
    log = d.logtext()[log0:]
    assert "group member nexthop unknown" not in log, log
    assert "was never sent" not in log, log
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
    assert got == 5 and dl["r1-eth0"]["forwarded"] >= 5, dl


# Issue 11 item 0: an RTM_DELROUTE of family AF_UNSPEC (neither IPv4 nor IPv6)
# with a long RTA_DST, then an RTM_NEWROUTE, in one frame. route_key() once
# copied RTA_DST unchecked into a 16-byte prefix (stack overflow: ASan
# stack-buffer-overflow, SIGSEGV with 4,000 bytes). Also kept as a fuzzing
# regression input (tests/fuzz/regress/fpm/).
ROUTE_KEY_OVERFLOW = bytes.fromhex(
    "010100643400000019000104000000000000000000000000fe0b0001000000001800"
    "010041414141414141414141414141414141414141412c0000001800010400000000"
    "0000000002180000fe0b000100000000080001000a00000008000f00fe000000")


def long_dst_frame(n):
    """The same two messages with an n-byte RTA_DST in the first."""
    bad = nlmsg(RTM_DELROUTE,
                struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 254, 11, 0, 1, 0) +
                nla(RTA_DST, b"A" * n), flags=0x401)
    return fpm_frame(bad + ROUTE_KEY_OVERFLOW[4 + 52:])


# fpmd's own handling of raw FPM input: the FRR release does not matter.
@pytest.mark.frr_releases("bookworm")
def test_g3_foreign_family_long_dst(lab):
    h2_loopback(lab, H2_DST + "/24")
    d = lab.fpmd(extra=SETTLE)
    lab.warm_kernel_neighbors()
    oif = lab.r1.ifindex("r1-eth1")
    # The raw client's routes are in the kernel too, as zebra's would be:
    # the client hangs up before the checks below, and a second later
    # fpmd drops held routes the kernel does not have (test_g above).
    lab.r1.run(f"ip route add {VALID_PREFIX} via {lab.H2_V4} && "
               "ip route add blackhole 10.0.0.0/24")
    ok = fpm_frame(route_msg(VALID_PREFIX, lab.H2_V4, oif) +
                   route_msg("172.16.101.0/24", None,
                             lab.r1.ifindex("r1-eth0")))
    assert long_dst_frame(20) == ROUTE_KEY_OVERFLOW
    data = ROUTE_KEY_OVERFLOW + long_dst_frame(4000) + ok
    # The frames are well formed (a foreign family is ignored, not an
    # error): the connection stays open and the last frame is applied.
    assert FpmClient(lab).run(data) == "still-open"
    wait_route(d, VALID_PREFIX)
    assert d.proc.poll() is None, "fpmd died"
    assert "10.0.0.0/24" in fpm_routes(d), sorted(fpm_routes(d))
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
    assert got == 5 and dl["r1-eth0"]["forwarded"] >= 5, dl


def test_z_route_mtu_metric_kept_on_kernel_path(lab):
    """A kernel route with an mtu (ip route ... mtu N): zebra learns it and
    sends it over FPM with RTA_METRICS; the kernel forwards by that mtu,
    so fpmd leaves the route to it (state mtu-metric) instead of
    forwarding past it. The same route without mtu is forwarded."""
    d, f = start_fpm(lab)
    lab.r1.run(f"ip route add 10.66.1.0/24 via {lab.H2_V4} mtu 1300 && "
               f"ip route add 10.66.2.0/24 via {lab.H2_V4}")
    e = wait_route(d, "10.66.1.0/24", state="mtu-metric")
    assert e["state"] == "mtu-metric", e
    e = wait_route(d, "10.66.2.0/24", state=None)
    assert e["state"] != "mtu-metric", e
