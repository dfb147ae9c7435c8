# SPDX-License-Identifier: GPL-2.0-or-later
"""Fault tests (issue 11, items 9 and 10), real kernel XDP path on the
h1-r1-h2 lab with a 10 ms ping through r1:

- the egress interface deleted and created again: fpmd attaches again and
  the routes through it (added by fpmctl, which name the interface) are
  forwarded by XDP again, state and counters say so;
- tables and nexthop ids exhausted: a clear error naming the limit to the
  caller (fpmctl exits non-zero with it) and in the log (naming the
  route or nexthop), the daemon keeps running and what fitted keeps
  being forwarded by XDP."""
import json
import socket
import struct

from lib.fpmwire import (RTA_GATEWAY, RTA_MULTIPATH, fpm_frame, fpm_keeper,
                         nla, route_msg)
from lib.lab import H2_DST, H2_NET, ping, ping_result, ping_stream, wait_for
from lib.traffic import fwd4

def h2_side(lab):
    """h2's addresses, default route and receive offloads (again, after
    its veth was re-created), and h2's lo prefix behind it."""
    h2 = lab.h2
    h2.run(f"ip addr add {lab.H2_V4}/24 dev h2-eth0 && "
           f"ip route add default via {lab.R1_V4_1} && "
           "ethtool -K h2-eth0 tx off >/dev/null && "
           "ethtool -K h2-eth0 gro on >/dev/null")


def r1_side(lab):
    lab.r1.run(f"ip addr add {lab.R1_V4_1}/24 dev r1-eth1 && "
               f"ip route add {H2_NET} via {lab.H2_V4}")


def route_state(d, prefix):
    es = d.show("routes").get(prefix, [])
    return es[0]["state"] if es else None


def forwarded_by_xdp(lab, d, count=20):
    """(replies, fpmd's forwarded on r1-eth0, r1's kernel forwarding) for
    count pings h1 -> h2's lo."""
    c0, k0 = d.counter("r1-eth0", "forwarded"), fwd4(lab.r1)
    got = ping(lab.h1, H2_DST, count, 0.02)
    return (got, d.counter("r1-eth0", "forwarded") - c0,
            fwd4(lab.r1) - k0)


def test_egress_recreated_xdp_resumes(lab):
    lab.h2.run(f"ip addr add {H2_DST}/32 dev lo")
    lab.r1.run(f"ip route add {H2_NET} via {lab.H2_V4}")
    d = lab.fpmd()
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("route", "add", H2_NET, "via", lab.H2_V4, "dev", "r1-eth1")
    # A neighbor by hand names the interface too.
    d.ctl("neighbor", "add", "172.16.102.50", "lladdr", "02:00:00:00:00:50",
          "dev", "r1-eth1")
    lab.warm_kernel_neighbors()
    wait_for(lambda: route_state(d, H2_NET) == "forwarding",
             what=f"{H2_NET} forwarding")
    got, xdp, kern = forwarded_by_xdp(lab, d)
    assert got == 20 and xdp >= 20 and kern == 0, (got, xdp, kern)
    old_idx = d.show("interfaces")["r1-eth1"]["ifindex"]

    # A 10 ms ping runs through the whole fault.
    stream = ping_stream(lab.h1, H2_DST, 600)
    lab.r1.run("ip link del r1-eth1")       # takes h2-eth0 with it
    wait_for(lambda: route_state(d, H2_NET) == "egress-kernel",
             what="route on the kernel path while r1-eth1 is gone")
    assert d.show("interfaces")["r1-eth1"]["xdpMode"] == "none"
    lab.link(lab.r1, "r1-eth1", lab.h2, "h2-eth0")
    h2_side(lab)
    r1_side(lab)
    lab.warm_kernel_neighbors()
    wait_for(lambda: route_state(d, H2_NET) == "forwarding", timeout=10,
             what=f"{H2_NET} forwarding again (now "
                  f"{route_state(d, H2_NET)})")
    # A tx port again once fpmd has seen h2's end receive (GRO on).
    ifs = wait_for(lambda: (lambda i: i if i["txPort"] else None)(
        d.show("interfaces")["r1-eth1"]), what="r1-eth1 a tx port again")
    assert ifs["ifindex"] != old_idx and ifs["xdpMode"] != "none", ifs
    static = [n for n in d.show("neighbors") if n["source"] == "static"]
    assert [(n["ip"], n["interfaceName"], n["ifindex"]) for n in static] \
        == [("172.16.102.50", "r1-eth1", ifs["ifindex"])], static
    lk = json.loads(d.ctl("--json", "lookup", H2_DST).stdout)
    assert lk["verdict"] == "forwarded" and lk["fastPath"], lk
    assert f"was {old_idx}): " in d.logtext()

    # Forwarded by XDP again, the kernel forwards nothing.
    got, xdp, kern = forwarded_by_xdp(lab, d)
    assert got == 20 and xdp >= 20 and kern == 0, (got, xdp, kern)
    sent, recv, out = ping_result(stream)
    # The stream survived the fault: replies before and after it.
    assert recv > 0 and sent - recv < sent, out
    assert d.proc.poll() is None


# ---- tables and nexthop ids exhausted ---------------------------------------

def multipath_msg(prefix, paths):
    """RTM_NEWROUTE with RTA_MULTIPATH [(gw, oif)], as zebra sends ECMP
    without nexthop groups."""
    nhs = b""
    for gw, oif in paths:
        attrs = nla(RTA_GATEWAY, socket.inet_aton(gw))
        nhs += struct.pack("=HBBi", 8 + len(attrs), 0, 0, oif) + attrs
    return route_msg(prefix, None, None, attrs=nla(RTA_MULTIPATH, nhs))


MAX_NH, MAX_GRP = 4, 3


def test_tables_exhausted_clear_errors_forwarding_kept(lab):
    lab.h2.run(f"ip addr add {H2_DST}/32 dev lo")
    lab.r1.run(f"ip route add {H2_NET} via {lab.H2_V4}")
    d = lab.fpmd(extra=("--max-nexthops", str(MAX_NH), "--max-groups",
                        str(MAX_GRP), "--max-routes-v4", "40"))
    # What fits: two implicit nexthops (h1's subnet, via h2).
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("route", "add", H2_NET, "via", lab.H2_V4, "dev", "r1-eth1")
    lab.warm_kernel_neighbors()
    wait_for(lambda: route_state(d, H2_NET) == "forwarding",
             what=f"{H2_NET} forwarding")
    c0, k0 = d.counter("r1-eth0", "forwarded"), fwd4(lab.r1)
    stream = ping_stream(lab.h1, H2_DST, 400)

    def refused(args, words):
        log0 = len(d.logtext())
        r = d.ctl(*args, check=False)
        assert r.returncode != 0, f"{args}: exit 0, {r.stdout!r}"
        for w in words:
            assert w in r.stderr, f"{args}: {r.stderr!r} lacks {w!r}"
        return d.logtext()[log0:]

    # Nexthop ids: two more fit, the fifth is refused, naming the limit.
    nh_full = "nexthop table full (tables/max-nexthops = 4)"
    for k in (1, 2):
        d.ctl("nexthop", "add", k, "via", f"172.16.102.{10 + k}", "dev",
              "r1-eth1")
    log = refused(("nexthop", "add", 3, "via", "172.16.102.13", "dev",
                   "r1-eth1"), [nh_full])
    assert f"nexthop add refused: nexthop 3: {nh_full}" in log, log
    assert "3" not in {str(k) for k in d.show("nexthops")}
    # A route needing a new nexthop: refused too, and not left behind.
    log = refused(("route", "add", "10.97.0.0/24", "via", "172.16.102.14",
                   "dev", "r1-eth1"), [nh_full])
    assert f"route add refused: route 10.97.0.0/24: {nh_full}" in log, log
    assert "nexthop 0" not in d.logtext()
    assert "10.97.0.0/24" not in d.show("routes")

    # Over FPM: a route through a new gateway is kept on the kernel path
    # and the log names the nexthop; an ECMP route with a member that has
    # no slot is not forwarded by the group's other member.
    oif = lab.r1.ifindex("r1-eth1")
    keeper = fpm_keeper(lab, fpm_frame(
        route_msg("10.96.0.0/24", "172.16.102.77", oif) +
        multipath_msg("10.95.0.0/24", [(lab.H2_V4, oif),
                                       ("172.16.102.78", oif)])))
    try:
        wait_for(lambda: route_state(d, "10.96.0.0/24") ==
                 "nexthop-map-full", what="FPM route on the kernel path")
        assert f"maps: {nh_full}: nexthop via 172.16.102.77 dev r1-eth1 " \
            "kept out of the fast path" in d.logtext()
        wait_for(lambda: route_state(d, "10.95.0.0/24") is not None,
                 what="FPM ECMP route")
        lk = json.loads(d.ctl("--json", "lookup", "10.95.0.1").stdout)
        assert lk["verdict"] == "kernel" and not lk["fastPath"], lk
        assert "no nexthop slot" in lk["reason"], lk
        assert route_state(d, "10.95.0.0/24") == "member-map-full"
        assert d.proc.poll() is None

        # Groups: with the FPM one, three fit; the fourth is refused.
        d.ctl("nexthop", "add", 100, "group", "1/2")
        d.ctl("nexthop", "add", 101, "group", "1,2/2")
        grp_full = "nexthop group table full (tables/max-groups = 3)"
        log = refused(("nexthop", "add", 102, "group", "1/2,3"), [grp_full])
        assert f"nexthop add refused: nexthop 102: {grp_full}" in log, log

        # Routes: fill the IPv4 table with routes through an existing
        # nexthop until one is refused, naming the limit and the prefix.
        rt_full = "route table full (tables/max-routes-v4 = 40)"
        for k in range(60):
            pfx = f"10.200.{k}.0/24"
            r = d.ctl("route", "add", pfx, "nhid", 1, check=False)
            if r.returncode:
                assert rt_full in r.stderr, r.stderr
                assert f"route add refused: route {pfx}: {rt_full}" in d.logtext()
                assert pfx not in d.show("routes")
                break
        else:
            raise AssertionError("the route table never filled")
    finally:
        keeper.kill()
        keeper.wait()

    # The routes that fitted kept being forwarded by XDP throughout.
    sent, recv, out = ping_result(stream)
    assert recv >= sent - 2, out
    c1, k1 = d.counter("r1-eth0", "forwarded"), fwd4(lab.r1)
    assert c1 - c0 >= recv and k1 - k0 == 0, (c1 - c0, recv, k1 - k0)
    s = d.show("summary")
    assert s["nexthopMapFull"] >= 2 and s["groupMapFull"] >= 1 and \
        s["routeMapFull"] >= 1, s
