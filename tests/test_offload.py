# SPDX-License-Identifier: GPL-2.0-or-later
"""Fast-path status in zebra's RIB through fpmd's zebra plugin.

What an operator relies on: `show ip route json` says "offloaded": true
for the routes XDP forwards and "offloaded": false (FRR 8.4's way of showing
ZEBRA_FLAG_OFFLOAD_FAILED) for those fpmd keeps on the kernel path, and
`show ip route summary json` counts the first as fibOffLoaded; a route
zebra replaces (a new route entry) is marked again; a guard diverting an
egress flips the mark, and clearing it restores it; with fpmd gone no
route is marked, and its return marks them again.

Real zebra 8.4.4 and staticd with the plugin module, real fpmd with XDP on
the lab's veths (tests/lib/frr.py). Needs the plugin (configure
--with-frr-source=DIR); without it the tests fail. Run:
  /usr/bin/python3 -m pytest -v tests/test_offload.py
"""
import os
import time

import pytest

from lib.feeds import routes_of, start_fpmd, start_plugin, wait_replayed
from lib.feeds import wait_plugin_route as wait_route
from lib.frr import fib_offloaded, wait_marks, zebra_marks, zplugin
from lib.lab import (BH_NET, BUILDDIR, H2_DST, H2_NET, H2_NET6, h2_loopback,
                     wait_for)

MTU_NET = "10.94.0.0/24"   # a kernel route with an mtu: fpmd's kernel path
CONN1, CONN2 = "172.16.101.0/24", "172.16.102.0/24"
CONN1_6, CONN2_6 = "2001:db8:101::/64", "2001:db8:102::/64"
OFFLOADED_STATES = ("forwarding", "blackhole")


@pytest.fixture
def lab(plugin_lab):
    return plugin_lab


# ---- helpers ----------------------------------------------------------------

def fpmd_offloaded(d, v6=False):
    """Plugin routes fpmd forwards (or drops) in XDP now, by its show."""
    return {p for p, e in routes_of(d, "plugin").items()
            if (":" in p) == v6 and e.get("state") in OFFLOADED_STATES}


def start_all(lab):
    """fpmd and zebra + staticd with the plugin; a forwarded static route,
    a blackhole, an IPv6 route, and a kernel route with an mtu (kept on the
    kernel path: the kernel forwards by it)."""
    h2_loopback(lab, H2_DST + "/24")
    d, f = start_plugin(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole",
                f"ipv6 route {H2_NET6} {lab.H2_V6}")
    lab.r1.run(f"ip route add {MTU_NET} via {lab.H2_V4} mtu 1400")
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET)
    wait_route(d, BH_NET, state="blackhole")
    wait_route(d, H2_NET6)
    wait_route(d, MTU_NET, state="mtu-metric")
    return d, f


# ---- tests ------------------------------------------------------------------

def test_routes_marked_and_counted(lab, server):
    d, f = start_all(lab)
    wait_marks(f, {H2_NET: True, BH_NET: True, CONN1: True,
                   CONN2: True, MTU_NET: False})
    wait_marks(f, {H2_NET6: True}, v6=True)
    # Exactly the routes start_all configured that XDP forwards or drops,
    # and the links' subnets, are marked and counted; fpmd says the same.
    for v6, want in ((False, {H2_NET, BH_NET, CONN1, CONN2}),
                     (True, {H2_NET6, CONN1_6, CONN2_6})):
        wait_for(lambda: (lambda m: m if {p for p, o in m.items() if o}
                          == want else None)(zebra_marks(f, v6)),
                 timeout=10, interval=0.1,
                 what=f"zebra's offloaded routes = {want} (now "
                      f"{zebra_marks(f, v6)})")
        assert fib_offloaded(f, v6) == len(want), \
            (v6, fib_offloaded(f, v6), want)
        assert fpmd_offloaded(d, v6) == want, (v6, fpmd_offloaded(d, v6))
    # The mtu route: in the kernel, but fpmd keeps it off the fast path.
    assert routes_of(d, "plugin")[MTU_NET]["state"] == "mtu-metric"
    assert f.routes()[MTU_NET][0].get("installed"), f.routes()[MTU_NET]
    st = zplugin(f)
    assert st["statusReceived"] > 0 and st["statusDropped"] == 0, st


def test_replaced_route_marked_again(lab, server):
    d, f = start_all(lab)
    wait_marks(f, {H2_NET: True})
    # A tag: staticd sends the route again and zebra makes a new route
    # entry with the same nexthop (fpmd's map value does not change); it
    # must be marked too.
    f.configure(f"ip route {H2_NET} {lab.H2_V4} tag 7")

    def replaced():
        es = f.routes().get(H2_NET, [])
        return es if (len(es) == 1 and es[0].get("tag") == 7 and
                      es[0].get("installed")) else None
    wait_for(replaced, timeout=10, interval=0.05,
             what=f"{H2_NET} replaced by its tag 7 entry "
                  f"(now {f.routes().get(H2_NET)})")
    wait_marks(f, {H2_NET: True})


def test_guard_flips_marks(lab, server):
    d, f = start_all(lab)
    wait_marks(f, {H2_NET: True, CONN2: True, CONN1: True})
    n0 = fib_offloaded(f)
    # tc egress on r1-eth1: XDP would bypass it, the egress takes the
    # kernel path, and so do the routes leaving by it.
    t0 = time.monotonic()
    lab.r1.run("tc qdisc add dev r1-eth1 clsact && tc filter add dev "
               "r1-eth1 egress protocol ip pref 10 u32 match u32 0 0")
    wait_marks(f, {H2_NET: False, CONN2: False, CONN1: True})
    print(f"tc egress added -> zebra marks: {time.monotonic() - t0:.3f} s")
    assert routes_of(d, "plugin")[H2_NET]["state"] == "egress-kernel"
    assert fib_offloaded(f) == n0 - 2, (fib_offloaded(f), n0)
    t0 = time.monotonic()
    lab.r1.run("tc qdisc del dev r1-eth1 clsact")
    wait_marks(f, {H2_NET: True, CONN2: True, CONN1: True})
    print(f"tc egress removed -> zebra marks: {time.monotonic() - t0:.3f} s")
    assert fib_offloaded(f) == n0


FOREIGN = os.path.join(BUILDDIR, "tests", "xdp_foreign.bpf.o")


def test_xdp_replaced_and_back(lab, server):
    """Another program takes fpmd's place on r1-eth1: routes leaving by
    it are no longer offloaded; removed, fpmd re-attaches and they are."""
    d, f = start_all(lab)
    wait_marks(f, {H2_NET: True, CONN2: True, CONN1: True})
    lab.r1.run(f"ip -force link set dev r1-eth1 xdpdrv obj {FOREIGN} "
               "sec xdp")
    wait_marks(f, {H2_NET: False, CONN2: False, CONN1: True})
    assert routes_of(d, "plugin")[H2_NET]["state"] == "egress-kernel"
    lab.r1.run("ip link set dev r1-eth1 xdp off")
    wait_marks(f, {H2_NET: True, CONN2: True, CONN1: True})


def test_no_ingress_for_a_family(lab, server):
    """net.ipv4.ip_forward_use_pmtu sends every IPv4 packet to the kernel
    on every interface: no IPv4 route is offloaded (state ingress-kernel)
    although its egress forwards; IPv6 stays offloaded."""
    d, f = start_all(lab)
    wait_marks(f, {H2_NET: True, CONN1: True})
    wait_marks(f, {H2_NET6: True}, v6=True)
    lab.r1.sysctl("net.ipv4.ip_forward_use_pmtu", 1)
    wait_marks(f, {H2_NET: False, CONN1: False, BH_NET: False})
    assert fib_offloaded(f) == 0
    assert zebra_marks(f, True)[H2_NET6] is True
    lab.r1.sysctl("net.ipv4.ip_forward_use_pmtu", 0)
    wait_marks(f, {H2_NET: True, CONN1: True, BH_NET: True})


def test_fpmd_gone_clears_marks(lab, server):
    d, f = start_all(lab)
    wait_marks(f, {H2_NET: True, MTU_NET: False})
    d.stop()

    def cleared():
        m = zebra_marks(f)
        return m if all(v is None for v in m.values()) else None
    wait_for(cleared, timeout=10, interval=0.1,
             what=f"no marks with fpmd gone (now {zebra_marks(f)})")
    assert fib_offloaded(f) == 0 and fib_offloaded(f, True) == 0
    assert zplugin(f)["marksCleared"] >= 1
    # Back: the replay's statuses mark them again.
    d = start_fpmd(lab)
    wait_replayed(d)
    lab.warm_kernel_neighbors()
    wait_marks(f, {H2_NET: True, MTU_NET: False, CONN1: True})
