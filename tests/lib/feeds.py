# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd's two route feeds as the FRR tests see them: the routes fpmd took
from a feed, waiting for a route, for zebra's FPM connection and replay
to settle, for the plugin's replay to complete, and starting fpmd and FRR
on r1 of an FrrLab (lib/frr.py) in the order each feed wants.
"""
import re
import time

from lib.frr import start_frr
from lib.lab import H2_DST, H2_NET, h2_loopback, ping, wait_for
from lib.traffic import measure

SETTLE = ("--fpm-settle", "300")                    # ms; default is 3000


def routes_of(d, protocol):
    """{prefix: entry} for the routes fpmd took from one feed."""
    out = {}
    for p, entries in d.show("routes").items():
        for e in entries:
            if e.get("source") == protocol:
                out[p] = e
    return out


def wait_route(d, prefix, state="forwarding", timeout=10, protocol="fpm"):
    """Until fpmd has prefix from the feed, installed, in state (None:
    any)."""
    def ok():
        e = routes_of(d, protocol).get(prefix)
        if e and e.get("installed") and state in (None, e.get("state")):
            return e
        return None
    return wait_for(ok, timeout=timeout, interval=0.05,
                    what=f"{protocol} route {prefix} {state or ''} in fpmd "
                         f"(now {routes_of(d, protocol).get(prefix)})")


def wait_no_route(d, prefix, timeout=5, protocol="fpm"):
    return wait_for(lambda: prefix not in routes_of(d, protocol),
                    timeout=timeout, interval=0.05,
                    what=f"{prefix} gone from fpmd")


def wait_feed(d, feed, state, connections=1, timeout=15):
    """The feed ("fpm", "plugin") connected (the n-th connection) and its
    replay in state ("settled", "complete")."""
    def ok():
        s = d.show(feed)
        return s if (s.get("connected") and
                     s.get("connections", 0) >= connections and
                     s.get("replayState") == state) else None
    return wait_for(ok, timeout=timeout, interval=0.1,
                    what=f"{feed} connection {connections}, replay {state} "
                         f"(now {d.show(feed)})")


# ---- FPM (zebra -M dplane_fpm_nl) ---------------------------------------------

def fpm(d):
    return d.show("fpm")


def fpm_routes(d):
    return routes_of(d, "fpm")


def map_values(d, linklocal=False):
    """What fpmd wrote to the route maps for each FPM route: a route is
    rewritten exactly when this changes. fe80::/64 is left out unless
    asked for: zebra may move it to another interface across a restart,
    a real change."""
    return {p: (e.get("type"), e.get("isGroup"), e.get("fpmdIndex"))
            for p, e in fpm_routes(d).items()
            if linklocal or not p.startswith("fe80:")}


def nexthops_view(d):
    """fpmd's nexthops without its own slots (fpmdIndex)."""
    return {k: {x: y for x, y in v.items() if x != "fpmdIndex"}
            for k, v in d.show("nexthops").items()}


def map_writes(d):
    return fpm(d)["mapWrites"]


def wait_connected(d, connections=1, timeout=15):
    """zebra connected (the n-th connection) and its replay settled."""
    return wait_feed(d, "fpm", "settled", connections, timeout)


def start_fpm(lab, fpmd_extra=SETTLE, ifnames=("r1-eth0", "r1-eth1"),
              **frr_kw):
    """fpmd on r1 first (its FPM server listening), then FRR on r1; returns
    (fpmd, frr) once zebra's first replay has settled."""
    d = lab.fpmd(ifnames=ifnames, extra=fpmd_extra)
    f = lab.frr(**frr_kw)
    wait_connected(d)
    return d, f


# ---- the zebra plugin (zebra -M fpmd_zebra) -----------------------------------

def start_fpmd(lab, extra=(), ifnames=("r1-eth0", "r1-eth1")):
    """fpmd on r1 fed by the plugin alone (--no-fpm)."""
    return lab.fpmd(ifnames=ifnames, extra=("--no-fpm",) + tuple(extra))


def wait_plugin_route(d, prefix, state="forwarding", timeout=10):
    return wait_route(d, prefix, state, timeout, protocol="plugin")


def wait_no_plugin_route(d, prefix, timeout=5):
    return wait_no_route(d, prefix, timeout, protocol="plugin")


def wait_replayed(d, connections=1, timeout=15):
    """The plugin connected (n-th connection) and its replay completed."""
    return wait_feed(d, "plugin", "complete", connections, timeout)


def start_plugin(lab, extra=(), ifnames=("r1-eth0", "r1-eth1"), **frr_kw):
    """fpmd on r1, then zebra with the plugin and staticd; returns (fpmd,
    frr) once the plugin's first replay is complete."""
    d = start_fpmd(lab, extra, ifnames)
    f = start_frr(lab, **frr_kw)
    wait_replayed(d)
    return d, f


def feed_ids(d, protocol):
    """The nexthop and group ids fpmd holds from one feed."""
    return {nh["id"] for nh in d.show("nexthops").values()
            if nh.get("source") == protocol}


def zebra_nhg_ids(f):
    """zebra's nexthop group ids (show nexthop-group rib)."""
    return {int(x) for x in re.findall(r"^ID: (\d+)",
                                       f.vtysh("show nexthop-group rib"),
                                       re.M)}


def flap_leaves_no_stale_ids(lab, start, protocol, flaps=3):
    """fpmd and FRR started by start(lab) -> (fpmd, frr), a static route
    H2_NET via h2 on r1-eth1 forwarding; then r1-eth1 down and up `flaps`
    times. zebra frees the ids the kernel flushed at each down without
    telling the feed; afterwards fpmd must hold none of them (fpmd/rib/
    nexthop.c rib_nexthop_link_down), and XDP forwards the route. Asserts
    that zebra did drop some (the case happened)."""
    h2_loopback(lab, H2_DST + "/24")
    d, f = start(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET, protocol=protocol)
    seen = feed_ids(d, protocol)
    for _ in range(flaps):
        lab.r1.run("ip link set r1-eth1 down")
        wait_no_route(d, H2_NET, protocol=protocol)
        seen |= feed_ids(d, protocol)
        lab.r1.run("ip link set r1-eth1 up")
        lab.warm_kernel_neighbors()
        wait_route(d, H2_NET, protocol=protocol)
        seen |= feed_ids(d, protocol)
    dropped = seen - zebra_nhg_ids(f)
    assert dropped, (seen, zebra_nhg_ids(f))
    # Marked at the down, dropped 2 s later at a tick.
    deadline = time.time() + 10
    while (stale := feed_ids(d, protocol) - zebra_nhg_ids(f)) and \
            time.time() < deadline:
        time.sleep(0.2)
    assert not stale, ("fpmd still holds ids zebra dropped: " + "; ".join(
        str(nh) for nh in d.show("nexthops").values()
        if nh.get("source") == protocol and nh["id"] in stale) +
        "; used by " + str({p: e for p, e in routes_of(d, protocol).items()
                            if e.get("nexthopGroupId") in stale}))
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 10, 0.02))
    assert got == 10 and dl["r1-eth0"]["forwarded"] >= 10 and \
        dl.f4 == 0, dl
