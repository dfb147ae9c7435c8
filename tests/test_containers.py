# SPDX-License-Identifier: GPL-2.0-or-later
"""Routes into containers through fpmd's tc path (issue 15,
doc/containers.md), with containers made the way runtimes make them
(tests/lib/containers.py: a namespace held by a process, not under
/run/netns; the container's veth end without XDP, GRO off, tx
checksumming and TSO on).

    s (h1-eth0) -- r1-eth0 [r1: zebra + staticd + fpmd] r-c1 -- c1 (eth0)
                                                        r-c2 -- c2 (eth0)

s is a lab host (tx off, GRO on: XDP as ever on r1-eth0). c1 and c2 each
have a service address on lo (a /32 and a /128) that zebra routes via the
container's veth address (staticd, vtysh). What a user relies on: those
routes are in the fast path (`fpmctl show routes`), packets both ways
are forwarded by fpmd (`forwarded-peer` into a container, `forwarded-tc`
out of one), each counted once, r1's kernel forwards none of them, and
every packet arrives exactly as kernel forwarding delivers it (the
reference is taken with the same frames before fpmd runs); TCP keeps
working with the container's offloads on; the peer mode follows the
container's link and the route; an fpmd restart loses nothing.

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_containers.py
"""
import json
import os
import subprocess

import pytest

from lib.containers import Container, containers_cleanup
from lib.feeds import SETTLE, wait_connected, wait_route
from lib.lab import PY, TESTLIB, finish, ping, sh, wait_for
from lib.traffic import Udp, assert_lossless, fwd4, fwd6, udp_send

RAWFRAMES = os.path.join(TESTLIB, "rawframes.py")
TCPCHECK = os.path.join(TESTLIB, "tcpcheck.py")

UPLINK = "r1-eth0"
IFNAMES = (UPLINK, "r-c1", "r-c2")
# name: (host if, veth v4 (router, container, len), v6, service v4, v6)
CONTAINERS = {
    "c1": ("r-c1", ("192.168.11.1", "192.168.11.2", 24),
           ("fd00:11::1", "fd00:11::2", 64), "10.101.0.1", "fd00:101::1"),
    "c2": ("r-c2", ("192.168.12.1", "192.168.12.2", 24),
           ("fd00:12::1", "fd00:12::2", 64), "10.102.0.1", "fd00:102::1"),
}
FWD_PEER, FWD_TC = "forwarded-peer", "forwarded-tc"


# ---- topology ---------------------------------------------------------------

class Net:
    """The lab (an FrrLab: s is its h1, r its r1), the containers, FRR
    and fpmd once started."""

    def __init__(self, lab):
        self.lab, self.s, self.r = lab, lab.h1, lab.r1
        self.c = {}
        self.d = self.f = None

    def service(self, name, v6=False):
        return CONTAINERS[name][4 if v6 else 3]

    def s_addr(self, v6=False):
        return self.lab.H1_V6 if v6 else self.lab.H1_V4

    def routes(self):
        out = []
        for name, (_, n4, n6, a4, a6) in CONTAINERS.items():
            out += [f"ip route {a4}/32 {n4[1]}",
                    f"ipv6 route {a6}/128 {n6[1]}"]
        return out

    def warm(self):
        """ARP/ND resolved in r (fpmd learns neighbors from the kernel)."""
        lab = self.lab
        lab.h1.run(f"ping -c1 -W1 {lab.R1_V4_0} >/dev/null", check=False)
        lab.h1.run(f"ping -6 -c1 -W1 {lab.R1_V6_0} >/dev/null", check=False)
        for name, c in self.c.items():
            c.run(f"ping -c1 -W1 {c.r4} >/dev/null", check=False)
            c.run(f"ping -6 -c1 -W1 {c.r6} >/dev/null", check=False)
            self.r.run(f"ping -c1 -W1 {c.c4} >/dev/null", check=False)
            self.r.run(f"ping -6 -c1 -W1 {c.c6} >/dev/null", check=False)
        self.r.run(f"ping -c1 -W1 {lab.H1_V4} >/dev/null; "
                   f"ping -6 -c1 -W1 {lab.H1_V6} >/dev/null", check=False)

    def start_frr(self):
        self.f = self.lab.frr()
        self.f.configure(*self.routes())
        for name in CONTAINERS:
            self.f.wait_route(self.service(name) + "/32")
            self.f.wait_route(self.service(name, True) + "/128", v6=True)
        return self.f

    def start_fpmd(self, connections=1, extra=()):
        # With FRR already up, zebra reconnects within its 3 s timer.
        self.d = self.lab.fpmd(ifnames=IFNAMES, extra=SETTLE + tuple(extra))
        wait_connected(self.d, connections, timeout=20)
        self.wait_fast_path()
        return self.d

    def wait_fast_path(self, names=tuple(CONTAINERS)):
        for name in names:
            wait_route(self.d, self.service(name) + "/32")
            wait_route(self.d, self.service(name, True) + "/128")
            wait_for(lambda n=name: peer_mode(self.d, CONTAINERS[n][0]),
                     timeout=10, what=f"{CONTAINERS[name][0]} in peer mode "
                     f"(now {iface(self.d, CONTAINERS[name][0])})")
        wait_for(lambda: tc_attached(self.d, UPLINK), timeout=10,
                 what=f"tc on {UPLINK} (now {iface(self.d, UPLINK)})")

    def kernel_fwd(self):
        return fwd4(self.r) + fwd6(self.r)


@pytest.fixture
def net(frrlab):
    n = Net(frrlab)
    try:
        for name, (host_if, n4, n6, a4, a6) in CONTAINERS.items():
            n.c[name] = Container(frrlab.r1, host_if, n4, n6, a4, a6)
        yield n
    finally:
        containers_cleanup(n.c.values())


@pytest.fixture
def up(net):
    """FRR, then fpmd, the container routes in the fast path."""
    net.start_frr()
    net.warm()
    net.start_fpmd()
    return net


# ---- fpmd's view ------------------------------------------------------------

def iface(d, ifname):
    return d.show("interfaces").get(ifname, {})


def flags(d, ifname):
    return iface(d, ifname).get("flags", [])


def peer_mode(d, ifname):
    """PEER egress in the map: fpmd delivers into this veth's container
    by the tc path (bpf_redirect_peer)."""
    return "peer-egress" in flags(d, ifname)


def tc_attached(d, ifname):
    """fpmd's tc program at tcx ingress here (checked by fpmd against
    the kernel) and flagged so in the map."""
    return iface(d, ifname).get("tcAttached") and "tc" in flags(d, ifname)


def tc_only(d, ifname):
    """No XDP here, the tc program forwards what arrives."""
    i = iface(d, ifname)
    return i.get("path") == "tc" and "tc-only" in i.get("flags", [])


def route_state(d, prefix):
    es = d.show("routes").get(prefix, [])
    return [e.get("state") for e in es if e.get("installed")]


def counts(d, *keys):
    c = d.counters()
    return {(i, r): c[i][r] for i, r in keys}


def wait_counted(d, before, want, timeout=10):
    """Until the counters moved by want {(ifname, reason): n} since
    before (a counts() dict); returns the deltas."""
    def moved():
        now = counts(d, *want)
        delta = {k: now[k] - before[k] for k in want}
        return delta if all(delta[k] >= n for k, n in want.items()) else None
    return wait_for(moved, timeout=timeout,
                    what=f"counters {want} (now {counts(d, *want)} from "
                         f"{before})")


# ---- frames -----------------------------------------------------------------

SIZES = (1, 17, 333, 1001, 1471 - 20)      # UDP payloads, odd on purpose
PORT = 7777


def udp_frames(src_mac, dst_mac, src, dst, v6):
    """Raw frames with full checksums; the first one is short and padded
    to 60 bytes with non-zero bytes, another carries trailing bytes after
    the datagram (the kernel trims both)."""
    from scapy.all import IP, UDP, Ether, IPv6, Raw
    out = []
    for k, size in enumerate(SIZES):
        l3 = IPv6(src=src, dst=dst, hlim=64, tc=0x28, fl=0x12345 + k) \
            if v6 else IP(src=src, dst=dst, ttl=64, id=0x4000 + k, tos=0x28)
        f = bytes(Ether(src=src_mac, dst=dst_mac) / l3 /
                  UDP(sport=40000 + k, dport=PORT) /
                  Raw(bytes((k * 31 + i) % 256 for i in range(size))))
        if k == 0:
            f += b"\xa5" * max(0, 60 - len(f))
        if k == 2:
            f += b"\x5a" * 10
        out.append(f)
    return out


def exchange(src, src_if, dst, dst_if, frames, wait):
    """Sends frames raw from src:src_if, returns what dst:dst_if
    receives to PORT, once wait() is true (the forwarder's counters)."""
    cap = dst.popen(f"exec {PY} {RAWFRAMES} capture {dst_if} "
                    f"--udp-port {PORT} --count {len(frames)}",
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = cap.stderr.readline()
        assert "ready" in line, line
        hexes = " ".join(f.hex() for f in frames)
        src.run(f"printf '%s\\n' {hexes} | {PY} {RAWFRAMES} send {src_if}")
        wait()
        try:
            out, err = cap.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # Fewer frames than sent: it prints what came (the caller
            # shows the difference).
            cap.terminate()
            out, err = cap.communicate(timeout=10)
    finally:
        if cap.poll() is None:
            cap.kill()
            cap.wait()
    assert cap.returncode == 0, err
    return [bytes.fromhex(h) for h in json.loads(out)]


def check_forwarded(frames, got, src_mac, dst_mac, v6):
    """got is frames forwarded once: MACs rewritten, TTL / hop limit 63,
    padding and trailing bytes trimmed (sanity checks of the reference)."""
    from scapy.all import Ether
    assert len(got) == len(frames), (len(got), len(frames))
    for f, g in zip(frames, got):
        e = Ether(g)
        assert (e.src, e.dst) == (src_mac, dst_mac), e.summary()
        ttl = e.payload.hlim if v6 else e.payload.ttl
        assert ttl == 63, e.summary()
        l3len = (40 + e.payload.plen) if v6 else e.payload.len
        assert len(g) == 14 + l3len, (len(g), l3len)


def sender_macs(net, name):
    """(s's MAC, r1-eth0's, container's eth0, r-c's)."""
    c = net.c[name]
    return (net.s.mac("h1-eth0"), net.r.mac(UPLINK), c.mac(),
            net.r.mac(c.host_if))


# ---- tests ------------------------------------------------------------------

@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_ping_both_ways(up, v6):
    """ping s -> c1 and c1 -> s: every request and reply forwarded by the
    tc path, counted once under its reason, r1's kernel forwards none."""
    net, d, c1 = up, up.d, up.c["c1"]
    n = 10
    keys = ((UPLINK, FWD_PEER), ("r-c1", FWD_TC))
    for who, src, dst in (("s", net.s, net.service("c1", v6)),
                          ("c1", c1, net.s_addr(v6))):
        k0, b0 = net.kernel_fwd(), counts(d, *keys)
        got = ping(src, dst, count=n, interval=0.05, v6=v6)
        assert got == n, f"ping {who} -> {dst}: {got}/{n} replies"
        delta = wait_counted(d, b0, {k: n for k in keys})
        assert delta == {k: n for k in keys}, \
            f"ping {who} -> {dst}: counted {delta}, want {n} each"
        assert net.kernel_fwd() == k0, \
            f"ping {who} -> {dst}: r1's kernel forwarded some"


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_udp_bytes_as_kernel(net, v6):
    """UDP s -> c1 and c1 -> s, raw frames (odd sizes, padding, trailing
    bytes): the receiver gets byte for byte what kernel forwarding
    delivers. The reference is taken first, FRR up and fpmd not yet
    started; then the same frames go through fpmd's tc path."""
    net.start_frr()
    net.warm()
    c1 = net.c["c1"]
    s_mac, r_mac, c_mac, rc_mac = sender_macs(net, "c1")
    inward = udp_frames(s_mac, r_mac, net.s_addr(v6), net.service("c1", v6),
                        v6)
    outward = udp_frames(c_mac, rc_mac, c1.c6 if v6 else c1.c4,
                         net.s_addr(v6), v6)
    fwd = fwd6 if v6 else fwd4

    def kernel_forwarded(n):
        f0 = fwd(net.r)
        return lambda: wait_for(lambda: fwd(net.r) >= f0 + n, timeout=10,
                                what=f"r1's kernel forwarding {n}")
    ref_in = exchange(net.s, "h1-eth0", c1, c1.IFNAME, inward,
                      kernel_forwarded(len(inward)))
    ref_out = exchange(c1, c1.IFNAME, net.s, "h1-eth0", outward,
                       kernel_forwarded(len(outward)))
    check_forwarded(inward, ref_in, rc_mac, c_mac, v6)
    check_forwarded(outward, ref_out, r_mac, s_mac, v6)

    d = net.start_fpmd()
    k0 = net.kernel_fwd()
    for what, src, src_if, dst, dst_if, frames, ref, key in (
            ("s -> c1", net.s, "h1-eth0", c1, c1.IFNAME, inward, ref_in,
             (UPLINK, FWD_PEER)),
            ("c1 -> s", c1, c1.IFNAME, net.s, "h1-eth0", outward, ref_out,
             ("r-c1", FWD_TC))):
        b0 = counts(d, key)
        got = exchange(src, src_if, dst, dst_if, frames,
                       lambda: wait_counted(d, b0, {key: len(frames)}))
        assert counts(d, key)[key] - b0[key] == len(frames), what
        for i, (g, r) in enumerate(zip(got, ref)):
            assert g == r, (f"{what} frame {i} (payload {SIZES[i]}): fpmd "
                            f"delivered\n{g.hex()}\nkernel\n{r.hex()}")
        assert len(got) == len(ref), what
    assert net.kernel_fwd() == k0, "r1's kernel forwarded some"


def tcp_transfer(srv, srv_addr, cli, n, port=5001):
    """n bytes from cli to a server in srv; the server's verdict."""
    server = srv.popen(f"exec {PY} {TCPCHECK} server {srv_addr} {port} {n}",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    try:
        assert "ready" in server.stderr.readline()
        cli.run(f"{PY} {TCPCHECK} client {srv_addr} {port} {n}", timeout=90)
        out, err = finish(server, timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert out.strip(), err
    return json.loads(out)


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_tcp_both_ways(up, v6):
    """1 MB of TCP s -> c1, then c1 -> s, content checked, the
    container's TSO and tx checksumming on: intact, no checksum errors
    on either end, r1's kernel forwards nothing, fpmd's counters moved
    both ways. r1's uplink computes checksums in software (tx off, as a
    NIC does in hardware) and s verifies every one (rx off): a partial
    checksum lost on the way would show."""
    net, d, c1 = up, up.d, up.c["c1"]
    k = c1.offloads()
    assert k["tcp-segmentation-offload"] == "on", k
    assert k["tx-checksumming"] == "on", k
    net.r.run(f"ethtool -K {UPLINK} tx off >/dev/null")
    net.s.run("ethtool -K h1-eth0 rx off >/dev/null")
    n = 1 << 20
    keys = ((UPLINK, FWD_PEER), ("r-c1", FWD_TC))
    for what, srv, srv_addr, cli in (
            ("s -> c1", c1, net.service("c1", v6), net.s),
            ("c1 -> s", net.s, net.s_addr(v6), c1)):
        e0 = {x: x.snmp("Tcp", "InCsumErrors") for x in (net.s, c1)}
        k0, b0 = net.kernel_fwd(), counts(d, *keys)
        res = tcp_transfer(srv, srv_addr, cli, n)
        assert res == {"received": n, "intact": True}, (what, res)
        for x, name in ((net.s, "s"), (c1, "c1")):
            assert x.snmp("Tcp", "InCsumErrors") == e0[x], \
                f"{what}: TCP checksum errors in {name}"
        assert net.kernel_fwd() == k0, f"{what}: r1's kernel forwarded some"
        delta = {k: v - b0[k] for k, v in counts(d, *keys).items()}
        assert all(v > 0 for v in delta.values()), (what, delta)


def test_container_to_container(up):
    """c1 -> c2 (and the replies): forwarded by the tc path from a
    container's veth straight into the other container, each packet
    counted once (forwarded-peer on the ingress, tx on the egress)."""
    net, d, c1 = up, up.d, up.c["c1"]
    n = 10
    reasons = (FWD_PEER, FWD_TC, "forwarded", "tx")
    keys = [(i, r) for i in IFNAMES for r in reasons]
    k0, b0 = net.kernel_fwd(), counts(d, *keys)
    got = ping(c1, net.service("c2"), count=n, interval=0.05)
    assert got == n, f"{got}/{n} replies"
    wait_counted(d, b0, {("r-c1", FWD_PEER): n, ("r-c2", FWD_PEER): n})
    delta = {k: v - b0[k] for k, v in counts(d, *keys).items() if v != b0[k]}
    assert delta == {("r-c1", FWD_PEER): n, ("r-c2", FWD_PEER): n,
                     ("r-c2", "tx"): n, ("r-c1", "tx"): n}, delta
    assert net.kernel_fwd() == k0, "r1's kernel forwarded some"


def test_route_removed_and_back(up):
    """The container's route removed in FRR: nothing is forwarded-peer
    any more, XDP counts pass-no-route (the kernel has no route either);
    the route back: forwarded-peer again."""
    net, d, f = up, up.d, up.f
    dst, n = net.service("c1"), 5
    key, nr = (UPLINK, FWD_PEER), (UPLINK, "pass-no-route")
    f.configure(f"no ip route {dst}/32 {net.c['c1'].c4}")
    f.wait_route(dst + "/32", present=False)
    wait_for(lambda: not route_state(d, dst + "/32"), timeout=10,
             what=f"{dst}/32 gone from fpmd")
    b0 = counts(d, key, nr)
    assert ping(net.s, dst, count=n, interval=0.05) == 0
    delta = wait_counted(d, b0, {nr: n})
    assert counts(d, key)[key] == b0[key], f"forwarded-peer moved: {delta}"
    f.configure(f"ip route {dst}/32 {net.c['c1'].c4}")
    net.wait_fast_path(("c1",))
    b0 = counts(d, key)
    assert ping(net.s, dst, count=n, interval=0.05) == n
    assert wait_counted(d, b0, {key: n}) == {key: n}


def test_container_down_and_up(up):
    """The container's end down (inside the container): fpmd takes r-c1
    out of peer mode at once, its routes are no longer shown forwarding
    and nothing is counted forwarded-peer into it; up again: back."""
    net, d, c1 = up, up.d, up.c["c1"]
    dst, n = net.service("c1"), 5
    key = (UPLINK, FWD_PEER)
    c1.set_up(False)
    wait_for(lambda: not peer_mode(d, "r-c1"), timeout=5,
             what=f"r-c1 out of peer mode (now {iface(d, 'r-c1')})")
    wait_for(lambda: "forwarding" not in route_state(d, dst + "/32"),
             timeout=5, what=f"{dst}/32 not forwarding "
             f"(now {route_state(d, dst + '/32')})")
    b0 = counts(d, key)
    assert ping(net.s, dst, count=n, interval=0.05) == 0
    assert counts(d, key) == b0, "forwarded-peer into a down container"
    c1.set_up(True)
    net.warm()
    net.wait_fast_path(("c1",))
    b0 = counts(d, key)
    assert ping(net.s, dst, count=n, interval=0.05) == n
    assert wait_counted(d, b0, {key: n}) == {key: n}


def test_show_routes_and_interfaces(up):
    """fpmctl shows the container routes in the fast path and each
    interface's path: r-c1 and r-c2 served by the tc path (peer egress,
    tc-only ingress), the uplink XDP with tc attached."""
    d = up.d
    for name in CONTAINERS:
        for p in (up.service(name) + "/32", up.service(name, True) + "/128"):
            assert route_state(d, p) == ["forwarding"], (p, route_state(d, p))
    text = d.ctl("show", "routes").stdout
    assert "10.101.0.1/32" in text, text
    for ifname in ("r-c1", "r-c2"):
        i = iface(d, ifname)
        assert peer_mode(d, ifname) and tc_only(d, ifname), i
        assert tc_attached(d, ifname) and i.get("xdpMode") == "none", i
    u = iface(d, UPLINK)
    assert tc_attached(d, UPLINK) and u.get("path") == "xdp", u
    assert u.get("xdpMode") in ("native", "generic"), u
    assert not peer_mode(d, UPLINK) and not tc_only(d, UPLINK), u
    # The text view says the same.
    text = d.ctl("show", "interfaces").stdout
    assert text.count("path tc, tc program attached") == 2, text
    assert text.count("path xdp, tc program attached") == 1, text


def tc_links(pin):
    """{pin name: (link id, prog id)} of fpmd's pinned tc links."""
    out = {}
    for name in sorted(os.listdir(pin)):
        if name.startswith("tc_"):
            j = json.loads(sh(f"bpftool -j link show pinned "
                              f"{pin}/{name}").stdout)
            out[name] = (j["id"], j["prog_id"])
    return out


def test_fpmd_restart_lossless(net):
    """fpmd (--keep-forwarding) restarted while streams run both ways
    between s and c1: no packet lost, r1's kernel forwards none, and
    fpmd's pinned tc links are kept and get the new program (swapped,
    not removed)."""
    net.start_frr()
    net.warm()
    keep = ("--keep-forwarding",)
    lab, d, c1 = net.lab, net.start_fpmd(extra=keep), net.c["c1"]
    links = tc_links(lab.pin)
    assert links, f"no tc link pinned in {lab.pin}: {os.listdir(lab.pin)}"
    rx_c, rx_s = Udp(c1, port=9000), Udp(net.s, port=9001)
    f0 = net.kernel_fwd()
    into = udp_send(net.s, net.service("c1"), port=9000, count=600,
                    interval=0.005, background=True)
    out = udp_send(c1, net.s_addr(), port=9001, count=600, interval=0.005,
                   background=True)
    try:
        b0 = counts(d, (UPLINK, FWD_PEER), ("r-c1", FWD_TC))
        wait_counted(d, b0, {(UPLINK, FWD_PEER): 50, ("r-c1", FWD_TC): 50})
        c0 = d.counters()
        assert d.stop() == 0
        d = net.start_fpmd(extra=keep)
        res = [finish(p, timeout=60) for p in (into, out)]
        passed = {(i, r): n - c0[i][r] for i, rs in d.counters().items()
                  for r, n in rs.items()
                  if r.startswith("pass-") and n != c0[i][r]}
    finally:
        for p in (into, out):
            if p.poll() is None:
                p.kill()
                p.wait()
    got_c, got_s = rx_c.stop(), rx_s.stop()
    for what, (o, e), got in (("s -> c1", res[0], got_c),
                              ("c1 -> s", res[1], got_s)):
        sent = sum(json.loads(o)["sent"].values())
        assert_lossless(what, sent, got["total"], 600, e)
    assert net.kernel_fwd() == f0, \
        f"r1's kernel forwarded during the restart; fpmd passed {passed}"
    after = tc_links(lab.pin)
    assert {k: v[0] for k, v in after.items()} == \
        {k: v[0] for k, v in links.items()}, (links, after)
    assert all(after[k][1] != links[k][1] for k in links), (links, after)
