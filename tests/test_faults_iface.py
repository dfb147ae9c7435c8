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

from lab import ping, ping_result, ping_stream, wait_for

H2_NET, H2_DST = "10.99.0.0/24", "10.99.0.1"


def fwd4(ns):
    return ns.snmp("Ip", "ForwDatagrams")


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
