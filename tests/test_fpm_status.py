# SPDX-License-Identifier: GPL-2.0-or-later
"""Route status notifications on the FPM connection (fpm/route-status).

What a user relies on: with the switch on, every route zebra sends is
answered with exactly one RTM_NEWROUTE that FRR >= 8.5 understands
(zebra/dplane_fpm_nl.c fpm_read -> netlink_route_notify_read_ctx: an FPM
frame of version 1, type 1; NLM_F_REQUEST; the route's family,
destination, prefix length, protocol and table; RTM_F_OFFLOAD when XDP
forwards the route or drops it, RTM_F_OFFLOAD_FAILED when the kernel path
takes it), deletes are not answered, and with the switch off nothing ever
comes back. Debian's zebra 8.4.4 reads and discards the notifications: its
FPM connection stays up and routes keep flowing both ways.

The wire tests speak FPM with a raw client (tests/lib/fpmwire.py decodes the
replies from the kernel's netlink headers); the last test runs the real
zebra. Run:
  /usr/bin/python3 -m pytest -v tests/test_fpm_status.py
"""
import json
import os
import re
import socket
import struct

import pytest

from lib.fpmwire import (NLM_F_REQUEST, RT_SCOPE_LINK, RTA_DST, RTA_ENCAP,
                         RTA_ENCAP_TYPE, RTA_METRICS, RTA_PRIORITY, RTA_TABLE,
                         RTAX_MTU, RTM_F_OFFLOAD, RTM_F_OFFLOAD_FAILED,
                         RTM_NEWROUTE, RTN_BLACKHOLE, RTN_UNREACHABLE,
                         RTPROT_BGP, RTPROT_KERNEL, RTPROT_OSPF, ZEBRA_METRIC,
                         client, client_result, exchange, frame, nexthop, nla,
                         route)
from lib.frr import fib_offloaded, wait_marks, zebra_marks, zebra_vty
from lib.lab import wait_for

AF = {4: socket.AF_INET, 6: socket.AF_INET6}
UNRESOLVED_GW = "172.16.102.9"        # on h2's subnet, nobody answers


def frames_cases(lab):
    """(what, one frame's messages, expected reply or None). A reply names
    the seq of the RTM_NEWROUTE it answers, the flag, and the state fpmd
    shows for the route (the flag's reason)."""
    eth0, eth1 = lab.r1.ifindex("r1-eth0"), lab.r1.ifindex("r1-eth1")
    h2, h2v6 = lab.H2_V4, lab.H2_V6
    mtu = nla(RTA_METRICS, nla(RTAX_MTU, struct.pack("=I", 1400)))
    encap = nla(RTA_ENCAP_TYPE, struct.pack("=H", 1)) + \
        nla(RTA_ENCAP, nla(1, struct.pack("=I", 100 << 12)))
    ok, failed = True, False
    return [
        ("connected route", [route("172.16.101.0/24", 1, oif=eth0,
                                   proto=RTPROT_KERNEL, scope=RT_SCOPE_LINK)],
         dict(seq=1, offloaded=ok, state="forwarding")),
        ("static route via a resolved neighbor",
         [route("10.99.0.0/24", 2, gw=h2, oif=eth1)],
         dict(seq=2, offloaded=ok, state="forwarding")),
        ("bgp IPv6 route", [route("2001:db8:99::/64", 3, gw=h2v6, oif=eth1,
                                  proto=RTPROT_BGP)],
         dict(seq=3, offloaded=ok, state="forwarding")),
        ("blackhole: dropped in XDP",
         [route("10.98.0.0/24", 4, rtype=RTN_BLACKHOLE)],
         dict(seq=4, offloaded=ok, state="blackhole")),
        ("mtu metric: the kernel path",
         [route("10.93.0.0/24", 5, gw=h2, oif=eth1, attrs=mtu)],
         dict(seq=5, offloaded=failed, state="mtu-metric")),
        ("encap: unsupported nexthop",
         [route("10.92.0.0/24", 6, gw=h2, oif=eth1, attrs=encap)],
         dict(seq=6, offloaded=failed, state="unsupported-nexthop")),
        ("gateway not resolved yet",
         [route("10.95.0.0/24", 7, gw=UNRESOLVED_GW, oif=eth1)],
         dict(seq=7, offloaded=failed, state="unresolved")),
        ("unreachable route", [route("10.91.0.0/24", 8,
                                     rtype=RTN_UNREACHABLE)],
         dict(seq=8, offloaded=failed, state="kernel-path")),
        ("another table (RTA_TABLE 1000)",
         [route("10.90.0.0/24", 9, gw=h2, oif=eth1, table=1000,
                proto=RTPROT_OSPF)],
         dict(seq=9, offloaded=failed, state="other-table")),
        ("main table named by RTA_TABLE too",
         [route("10.89.0.0/24", 10, gw=h2, oif=eth1, table_attr=True)],
         dict(seq=10, offloaded=ok, state="forwarding")),
        ("a nexthop alone", [nexthop(7, eth1, h2, 11)], None),
        ("a route by that nexthop id",
         [route("10.88.0.0/24", 12, nhid=7)],
         dict(seq=12, offloaded=ok, state="forwarding")),
        ("nexthop and route in one frame: the route's status after both",
         [nexthop(8, eth1, h2, 13), route("10.87.0.0/24", 14, nhid=8)],
         dict(seq=14, offloaded=ok, state="forwarding")),
        ("a delete", [route("10.95.0.0/24", 15, delete=True)], None),
        ("zebra's replace (DELROUTE + NEWROUTE): one reply",
         [route("10.99.0.0/24", 16, delete=True),
          route("10.99.0.0/24", 17, gw=h2, oif=eth1)],
         dict(seq=17, offloaded=ok, state="forwarding")),
    ]


def in_kernel_too(lab, cases):
    """The cases' main-table routes in r1's kernel too, as zebra's would
    be: the raw client hangs up before the checks, and a second later
    fpmd drops held main-table routes the kernel does not have. (A high
    metric: a connected route of the same prefix stays as it is.)"""
    pfxs = set()
    for _, msgs, _ in cases:
        for raw in msgs:
            t = struct.unpack_from("=xxxxH", raw)[0]
            if t == RTM_NEWROUTE and raw[16 + 4] == 254:
                pfxs.add(prefix_of(raw))
    lab.r1.run(" && ".join(f"ip route add blackhole {p} metric 4242"
                           for p in sorted(pfxs)))


def fpmd_state(d, prefix):
    """The state fpmd shows for prefix (its selected entry)."""
    es = d.show("routes").get(prefix, [])
    sel = [e for e in es if e.get("selected")] or es
    return sel[0]["state"] if sel else None


def start_fpmd(lab, route_status):
    """route_status: the YANG leaf through a configuration file (True /
    False), or None for the default."""
    fpm = {} if route_status is None else {"route-status": route_status}
    path = lab.write_config(lab.config_doc(fpm={**fpm, "settle-time": 300}))
    d = lab.fpmd(config=path)
    lab.warm_kernel_neighbors()
    # The neighbors the replies depend on, learned from the kernel.
    wait_for(lambda: len(d.show("neighbors")) >= 4, timeout=10,
             what="h1/h2 neighbors in fpmd")
    return d


def test_every_route_frame_gets_exactly_one_status(lab):
    d = start_fpmd(lab, True)
    cases = frames_cases(lab)
    in_kernel_too(lab, cases)
    sent = [frame(b"".join(m)) for _, m, _ in cases]
    want = [(what, e) for what, _, e in cases if e]
    got, closed = exchange(lab.r1, sent, expect=len(want))
    assert not closed, "fpmd closed the connection"
    by_seq = {}
    for f in got:
        # One netlink message per FPM frame: FRR reads only the first.
        assert f["version"] == 1 and f["type"] == 1 and len(f["msgs"]) == 1 \
            and f["length"] == 4 + f["msgs"][0]["len"], f
        m = f["msgs"][0]
        assert m["seq"] not in by_seq, f"two replies to seq {m['seq']}"
        by_seq[m["seq"]] = m
    assert sorted(by_seq) == sorted(e["seq"] for _, e in want), \
        f"replies to seqs {sorted(by_seq)}, expected " \
        f"{sorted(e['seq'] for _, e in want)}"

    sent_msgs = {}
    for _, msgs, _ in cases:
        for raw in msgs:
            t, seq = struct.unpack_from("=xxxxHxxI", raw)
            if t == RTM_NEWROUTE:
                sent_msgs[seq] = raw
    for what, e in want:
        m, raw = by_seq[e["seq"]], sent_msgs[e["seq"]]
        fam, dlen, _, _, table, proto, scope, rtype = \
            struct.unpack_from("=BBBBBBBB", raw, 16)
        ours = exchange_attrs(raw)
        assert m["type"] == RTM_NEWROUTE and m["flags"] == NLM_F_REQUEST, \
            (what, m)
        assert (m["family"], m["dst_len"], m["protocol"], m["table"],
                m["rtype"], m["scope"]) == \
            (fam, dlen, proto, table, rtype, scope), (what, m)
        assert m["attrs"].get(RTA_DST) == ours[RTA_DST], (what, m)
        assert m["attrs"].get(RTA_TABLE) == ours.get(RTA_TABLE), (what, m)
        assert m["attrs"].get(RTA_PRIORITY) == \
            struct.pack("=I", ZEBRA_METRIC), (what, m)
        flag = RTM_F_OFFLOAD if e["offloaded"] else RTM_F_OFFLOAD_FAILED
        assert m["rtm_flags"] == flag, \
            f"{what}: rtm_flags {m['rtm_flags']:#x}, expected {flag:#x}"
    # The flags say what fpmd shows: forwarding in XDP, or why not.
    for what, e in want:
        raw = sent_msgs[e["seq"]]
        if e["state"] == "other-table":
            continue
        pfx = prefix_of(raw)
        if e["seq"] == 7:      # deleted by a later frame
            continue
        assert fpmd_state(d, pfx) == e["state"], \
            f"{what}: fpmd shows {fpmd_state(d, pfx)}"
    s = d.show("fpm")
    assert s["routeStatusSent"] == len(want) and \
        s["routeStatusDropped"] == 0, s


def exchange_attrs(raw):
    attrs, a = {}, 16 + 12
    ln = struct.unpack_from("=I", raw)[0]
    while a < ln:
        alen, at = struct.unpack_from("=HH", raw, a)
        attrs[at] = bytes(raw[a + 4:a + alen])
        a += (alen + 3) & ~3
    return attrs


def prefix_of(raw):
    fam, dlen = struct.unpack_from("=BB", raw, 16)
    dst = exchange_attrs(raw)[RTA_DST]
    return f"{socket.inet_ntop(fam, dst)}/{dlen}"


@pytest.mark.parametrize("setting", [None, False],
                         ids=["default", "route-status-false"])
def test_switch_off_sends_nothing(lab, setting):
    d = start_fpmd(lab, setting)
    cases = frames_cases(lab)
    in_kernel_too(lab, cases)
    sent = [frame(b"".join(m)) for _, m, _ in cases]
    got, closed = exchange(lab.r1, sent, expect=1, wait=2)
    assert got == [] and not closed, got
    # The routes were taken all the same.
    assert fpmd_state(d, "10.99.0.0/24") == "forwarding"
    assert d.show("fpm")["routeStatusSent"] == 0


# ---- a zebra that does not read ---------------------------------------------

def test_status_change_after_the_frame_is_sent_again(lab):
    """A route's status changing after its frame was answered (a tc egress
    filter makes the egress take the kernel path, and removing it gives it
    back) is sent to zebra again, once per change, from the RIB's status
    hook (not only as the reply to the route's frame)."""
    d = start_fpmd(lab, True)
    eth1 = lab.r1.ifindex("r1-eth1")
    pfx = "10.99.0.0/24"
    c = client(lab.r1, [frame(route(pfx, 1, gw=lab.H2_V4, oif=eth1))],
               expect=3, wait=40)
    try:
        wait_for(lambda: fpmd_state(d, pfx) == "forwarding", timeout=15,
                 what=f"{pfx} forwarding")
        lab.r1.run("tc qdisc add dev r1-eth1 clsact && tc filter add dev "
                   "r1-eth1 egress protocol ip pref 10 u32 match u32 0 0")
        wait_for(lambda: fpmd_state(d, pfx) == "egress-kernel", timeout=15,
                 what=f"{pfx} on the kernel path")
        wait_for(lambda: d.show("fpm")["routeStatusSent"] >= 2, timeout=10,
                 what="a second notification")
    finally:
        lab.r1.run("tc qdisc del dev r1-eth1 clsact", check=False)
    wait_for(lambda: fpmd_state(d, pfx) == "forwarding", timeout=15,
             what=f"{pfx} forwarding again")
    got, closed = client_result(c, timeout=70)
    assert not closed
    flags = [(prefix_of_reply(f), f["msgs"][0]["rtm_flags"]) for f in got]
    assert flags == [(pfx, RTM_F_OFFLOAD), (pfx, RTM_F_OFFLOAD_FAILED),
                     (pfx, RTM_F_OFFLOAD)], flags
    assert d.show("fpm")["routeStatusSent"] == 3


def prefix_of_reply(f):
    m = f["msgs"][0]
    fam = socket.AF_INET if m["family"] == socket.AF_INET else \
        socket.AF_INET6
    return f"{socket.inet_ntop(fam, m['attrs'][RTA_DST])}/{m['dst_len']}"


# More notifications than fpmd queues (8 MiB at 48 bytes each, plus the
# socket buffers, kept small here).
FLOOD = 200000


def test_unread_notifications_never_block(lab):
    """A peer that does not read: fpmd keeps taking routes and answering
    fpmctl, queues up to its cap, drops and counts the rest, logs it once,
    and delivers everything it queued once the peer reads."""
    lab.r1.sysctl("net.ipv4.tcp_wmem", "'4096 16384 65536'")
    d = start_fpmd(lab, True)
    frames = [frame(route(f"{11 + i // 65536}.{i // 256 % 256}."
                          f"{i % 256}.0/24", i + 1, rtype=RTN_BLACKHOLE))
              for i in range(FLOOD)]
    go = os.path.join(lab.tmp, "go")
    c = client(lab.r1, frames, expect=0, wait=60, go=go)
    s = {"routeStatusSent": 0}
    try:
        s = wait_for(lambda: (lambda s: s if s["routes"] == FLOOD and
                              s["routeStatusDropped"] else None)
                     (d.show("fpm")), timeout=120, interval=0.5,
                     what=f"{FLOOD} routes taken, notifications dropped")
    finally:
        with open(go, "w") as f:
            f.write(str(s["routeStatusSent"]))
    got, closed = client_result(c, timeout=120)
    assert not closed
    assert s["routeStatusSent"] + s["routeStatusDropped"] == FLOOD, s
    # Everything queued arrived, whole frames, in order.
    assert len(got) == s["routeStatusSent"], (len(got), s)
    seqs = [f["msgs"][0]["seq"] for f in got]
    assert seqs == sorted(seqs) and all(
        f["msgs"][0]["rtm_flags"] == RTM_F_OFFLOAD for f in got)
    assert d.logtext().count("zebra is not reading route status") == 1


# ---- Debian's zebra 8.4.4 reads and discards them ----------------------------

H2_NET, H2_NET2 = "10.99.0.0/24", "10.97.0.0/24"


def zebra_fpm_counters(f):
    """dplane_fpm_nl's 'show fpm counters json', on zebra's own vty (a
    module's command vtysh does not know)."""
    return json.loads(zebra_vty(f, "enable", "show fpm counters json"))


def test_zebra_84_unaffected(frrlab):
    lab = frrlab
    lab.h2.run("ip addr add 10.99.0.1/24 dev lo && "
               "ip addr add 10.97.0.1/24 dev lo")
    d = lab.fpmd(extra=("--fpm-settle", "300", "--fpm-route-status"))
    f = lab.frr()
    lab.warm_kernel_neighbors()
    f.configure(f"ip route {H2_NET} {lab.H2_V4}")

    def fpm_route(p):
        return [e for e in d.show("routes").get(p, [])
                if e["source"] == "fpm" and e["state"] == "forwarding"]
    wait_for(lambda: fpm_route(H2_NET), timeout=15, what=f"{H2_NET} from zebra")
    sent = wait_for(lambda: d.show("fpm")["routeStatusSent"], timeout=5,
                    what="notifications sent")
    # zebra read them (bytes-read counts what it read and discarded).
    wait_for(lambda: zebra_fpm_counters(f)["bytes-read"] > 0, timeout=5,
             what="zebra reading the notifications")
    read0 = zebra_fpm_counters(f)["bytes-read"]

    # Routes keep flowing both ways after that, on the same connection.
    f.configure(f"ip route {H2_NET2} {lab.H2_V4}")
    wait_for(lambda: fpm_route(H2_NET2), timeout=10, what=f"{H2_NET2} added")
    f.configure(f"no ip route {H2_NET} {lab.H2_V4}")
    wait_for(lambda: not d.show("routes").get(H2_NET), timeout=10,
             what=f"{H2_NET} removed")
    wait_for(lambda: d.show("fpm")["routeStatusSent"] > sent, timeout=5,
             what="a notification for the new route")
    wait_for(lambda: zebra_fpm_counters(f)["bytes-read"] > read0,
             timeout=5, what="zebra reading the new notification")
    s, z = d.show("fpm"), zebra_fpm_counters(f)
    assert s["connected"] and s["connections"] == 1 and \
        s["errors"] == 0 and s["routeStatusDropped"] == 0, s
    assert z["connection-closes"] == 0 and z["connection-errors"] == 0, z
    log = f.logtext("zebra")
    bad = [ln for ln in log.splitlines()
           if "fpm" in ln.lower() and ("warn" in ln.lower() or
                                       "err" in ln.lower() or
                                       "fail" in ln.lower())]
    assert not bad, bad
    assert {p for p, es in f.routes().items()
            if any(e.get("installed") for e in es)} >= {H2_NET2}


# ---- route status in a real zebra, per FRR release ----------------------------

H2_NET3 = "10.96.0.0/24"
CONN1, CONN2 = "172.16.101.0/24", "172.16.102.0/24"


def fpm_marks_work(rel):
    """Does this zebra take fpmd's notifications into its RIB? FRR 8.4
    reads and discards them; 10.3.x reads the table field as a VRF id and
    looks up table 0, so it finds no route (fixed in 10.4)."""
    return (rel.major, rel.minor) >= (10, 4)


def trues(f):
    """Routes zebra shows offloaded: what its summary must count."""
    return sum(1 for v in zebra_marks(f).values() if v)


def queued(f, prefix):
    return [e for e in f.routes().get(prefix, []) if e.get("queued")]


def test_zebra_route_status(frrlab):
    """With fpm/route-status, `show ip route json` follows what XDP does
    with each route zebra sent over FPM: "offloaded" true when XDP
    forwards it, false while its gateway is unresolved, while its egress
    is kept on the kernel path (tc egress), and once fpmd stopped; and with
    `--asic-offload=notify_on_offload` no route fpmd answered stays `q`.
    Connected routes are zebra's own to mark (below). Where zebra ignores
    the notifications (8.4, 10.3.x) nothing is marked and the feed is
    unharmed."""
    lab = frrlab
    lab.h2.run(f"ip addr add {H2_NET.replace('0/24', '1/24')} dev lo")
    d = lab.fpmd(extra=("--fpm-settle", "300", "--fpm-route-status"))
    f = lab.frr(start=False)
    rel = f.rel
    works = fpm_marks_work(rel)
    f.start_zebra(extra=["--asic-offload=notify_on_offload"] if works
                  else [])
    f.start("staticd")
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {H2_NET3} {UNRESOLVED_GW}")

    def fpm_state(p):
        return [e["state"] for e in d.show("routes").get(p, [])
                if e["source"] == "fpm"]
    wait_for(lambda: fpm_state(H2_NET3) == ["unresolved"], timeout=15,
             what=f"{H2_NET3} unresolved in fpmd")
    lab.warm_kernel_neighbors()
    wait_for(lambda: fpm_state(H2_NET) == ["forwarding"], timeout=15,
             what=f"{H2_NET} forwarding in fpmd")
    wait_for(lambda: d.show("fpm")["routeStatusSent"] >= 2, timeout=5,
             what="notifications sent")
    # fpmd names zebra's release (its process's frr package), and warns
    # where the notifications go nowhere.
    log = d.logtext()
    assert re.search(rf"fpm: zebra \(pid \d+\) is FRR {re.escape(rel.version)}"
                     r"\n", log), log[-3000:]
    warned = "which reads and discards route status" in log or \
        "which drops every route status notification" in log
    assert warned == (not works), log[-3000:]
    if not works:
        # Read and dropped (8.4: discarded; 10.3: no such route found):
        # no mark, and the feed goes on as before.
        f.configure(f"ip route {H2_NET2} {lab.H2_V4}")
        wait_for(lambda: fpm_state(H2_NET2) == ["forwarding"], timeout=10,
                 what=f"{H2_NET2} forwarding")
        marks = zebra_marks(f)
        assert all(v is None for v in marks.values()), marks
        assert fib_offloaded(f) == 0
        s = d.show("fpm")
        assert s["connections"] == 1 and s["errors"] == 0, s
        return

    # The links' subnets (and FRR 10's local routes): zebra marks them
    # offloaded itself under --asic-offload, since it installs them
    # nowhere, and takes no notification for them (it matches a
    # connected route by its nexthops, which a notification does not
    # carry). Without --asic-offload they have no mark.
    wait_marks(f, {H2_NET: True, H2_NET3: False, CONN1: True, CONN2: True})
    assert not queued(f, H2_NET) and not queued(f, H2_NET3), \
        (f.routes()[H2_NET], f.routes()[H2_NET3])
    assert fib_offloaded(f) == trues(f), zebra_marks(f)

    # The unresolved gateway answers: offloaded.
    lab.h2.run(f"ip addr add {UNRESOLVED_GW}/24 dev h2-eth0")
    lab.r1.run(f"ping -c1 -W1 {UNRESOLVED_GW}", check=False)
    wait_marks(f, {H2_NET3: True})
    assert fib_offloaded(f) == trues(f), zebra_marks(f)

    # tc egress on r1-eth1: XDP would bypass it, so the routes that leave
    # by it take the kernel path; removed, they are back.
    lab.r1.run("tc qdisc add dev r1-eth1 clsact && tc filter add dev "
               "r1-eth1 egress protocol ip pref 10 u32 match u32 0 0")
    wait_marks(f, {H2_NET: False, H2_NET3: False})
    assert zebra_marks(f)[CONN2] is True     # zebra's own, see above
    lab.r1.run("tc qdisc del dev r1-eth1 clsact")
    wait_marks(f, {H2_NET: True, H2_NET3: True})

    # fpmd stops (XDP goes with it): zebra hears it before the close.
    d.stop()
    wait_marks(f, {H2_NET: False, H2_NET3: False})
    assert fib_offloaded(f) == trues(f), zebra_marks(f)
    assert re.search(r"told zebra \d+ routes leave the fast path",
                     d.logtext()), d.logtext()[-2000:]
