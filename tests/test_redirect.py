# SPDX-License-Identifier: GPL-2.0-or-later
"""ICMP redirects for hairpins, and what happens to frames after XDP_REDIRECT.

Hairpins: h1, the gateway g and r1 share one Ethernet segment (a bridge in
its own namespace). r1 routes 198.51.100.0/24 and 2001:db8:200::/64 via g,
so what h1 sends there leaves r1 by the interface it came in on: Linux
forwards it *and* tells h1 with an ICMP redirect (IPv4 while send_redirects
is on, IPv6 always). The kernel alone is the reference; with fpmd the same
must happen, and the frame reaching g must be the same bytes.

Transmit losses: frames fpmd counted in tx that the devmap or the veth
driver then refused must show up in tx-redirect-error / tx-xmit-drop,
exactly as many as did not arrive.

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_redirect.py
"""
import json
import os
import socket
import struct
import subprocess
import threading
import time

import pytest

from lib.lab import PY, Lab, wait_for

PORT = 9999
G_V4, G_LL = "172.16.101.5", "fe80::5"
DST_V4, DST_V6 = "198.51.100.7", "2001:db8:200::7"

# Prints every frame g-eth0 receives for UDP port PORT, as hex, one a line.
CAPTURE = f"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("g-eth0", 0))
print("ready", flush=True)
while True:
    b, a = s.recvfrom(65535)
    if a[2] == socket.PACKET_OUTGOING:
        continue
    t = b[12:14]
    if t == b"\\x08\\x00" and b[23] == 17:
        ihl = (b[14] & 15) * 4
        port = int.from_bytes(b[14 + ihl + 2:14 + ihl + 4], "big")
    elif t == b"\\x86\\xdd" and b[20] == 17:
        port = int.from_bytes(b[56:58], "big")
    else:
        continue
    if port == {PORT}:
        print(b.hex(), flush=True)
"""

# Sends the frame HEX COUNT times out of h1-eth0: the same bytes every run.
SEND = """
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("h1-eth0", 0))
for i in range(int(sys.argv[2])):
    s.send(bytes.fromhex(sys.argv[1]))
    time.sleep(0.02)
"""


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def udp_frame(dmac, smac, src, dst, size=64, ttl=64):
    """An Ethernet frame holding a UDP datagram src:40000 -> dst:PORT."""
    payload = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    v6 = ":" in dst
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s, d = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
    ulen = 8 + len(payload)
    if v6:
        pseudo = s + d + struct.pack("!IxxxB", ulen, 17)
    else:
        pseudo = s + d + struct.pack("!xBH", 17, ulen)
    udp = struct.pack("!HHHH", 40000, PORT, ulen, 0) + payload
    udp = udp[:6] + struct.pack("!H", csum(pseudo + udp) or 0xffff) + udp[8:]
    if v6:
        l3 = struct.pack("!IHBB", 6 << 28, ulen, 17, ttl) + s + d + udp
        et = b"\x86\xdd"
    else:
        h = struct.pack("!BBHHHBBH", 0x45, 0, 20 + ulen, 0x1234, 0, ttl, 17,
                        0) + s + d
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
        l3, et = h + udp, b"\x08\x00"
    return mac_bytes(dmac) + mac_bytes(smac) + et + l3


def mac_bytes(m):
    return bytes.fromhex(m.replace(":", ""))


def send(lab, dst, count, size=64):
    src = lab.H1_V6 if ":" in dst else lab.H1_V4
    f = udp_frame(lab.r1.mac("r1-eth0"), lab.h1.mac("h1-eth0"), src, dst,
                  size)
    lab.h1.run(f"{PY} -c {q(SEND)} {f.hex()} {count}")


def q(s):
    return "'" + s.replace("'", "'\\''") + "'"


class HairpinLab(Lab):
    """h1, g and r1-eth0 on one bridge (namespace sw); r1-eth1 -- h2."""

    def _build(self, receiver_gro):
        p = self.prefix
        self.sw = self.add_ns(p + "sw")
        self.h1 = self.add_ns(p + "h1")
        self.g = self.add_ns(p + "g")
        self.r1 = self.add_ns(p + "r1")
        self.h2 = self.add_ns(p + "h2")
        for ns in (self.h1, self.g, self.r1):
            # Addresses usable at once: no DAD on link-locals either (an
            # IPv6 redirect needs r1's link-local).
            ns.sysctl("net.ipv6.conf.default.accept_dad", 0)
            ns.sysctl("net.ipv6.conf.all.accept_dad", 0)
        self.sw.run("ip link add br0 type bridge && ip link set br0 up")
        for ns, ifname, port in ((self.h1, "h1-eth0", "s-h1"),
                                 (self.g, "g-eth0", "s-g"),
                                 (self.r1, "r1-eth0", "s-r1")):
            self.link(ns, ifname, self.sw, port)
            self.sw.run(f"ip link set {port} master br0")
        self.link(self.r1, "r1-eth1", self.h2, "h2-eth0")
        # Frames XDP redirects into r1-eth0 arrive on s-r1: a veth receives
        # them only with GRO (or XDP) on; a real switch port would.
        self.sw.run("ethtool -K s-r1 gro on >/dev/null")
        # A switch port sends no partial checksums of its own; with tx
        # checksumming on, fpmd would serve r1-eth0 with its tc program
        # only (TC_ONLY, doc/containers.md), and this tests XDP.
        self.sw.run("ethtool -K s-r1 tx off >/dev/null")
        h1, g, r1 = self.h1, self.g, self.r1
        # h1 keeps sending via r1 (a host would follow the redirect), with
        # a checksum a NIC would compute and no auto flow label, so every
        # run sends the same bytes.
        h1.run(f"ip addr add {self.H1_V4}/24 dev h1-eth0 && "
               f"ip -6 addr add {self.H1_V6}/64 dev h1-eth0 && "
               f"ip route add default via {self.R1_V4_0} && "
               f"ip -6 route add default via {self.R1_V6_0} && "
               "ethtool -K h1-eth0 tx off >/dev/null")
        for k in ("net.ipv4.conf.all.accept_redirects",
                  "net.ipv4.conf.h1-eth0.accept_redirects",
                  "net.ipv6.conf.all.accept_redirects",
                  "net.ipv6.conf.h1-eth0.accept_redirects",
                  "net.ipv6.auto_flowlabels"):
            h1.sysctl(k, 0)
        g.run(f"ip addr add {G_V4}/24 dev g-eth0 && "
              f"ip -6 addr flush dev g-eth0 scope link && "
              f"ip -6 addr add {G_LL}/64 dev g-eth0")
        r1.run(f"ip addr add {self.R1_V4_0}/24 dev r1-eth0 && "
               f"ip -6 addr add {self.R1_V6_0}/64 dev r1-eth0 && "
               f"ip addr add {self.R1_V4_1}/24 dev r1-eth1 && "
               f"ip -6 addr add {self.R1_V6_1}/64 dev r1-eth1 && "
               f"ip route add 198.51.100.0/24 via {G_V4} && "
               f"ip -6 route add 2001:db8:200::/64 via {G_LL} dev r1-eth0")
        r1.sysctl("net.ipv4.ip_forward", 1)
        r1.sysctl("net.ipv6.conf.all.forwarding", 1)
        # The kernel resolves g too (its path is the reference).
        r1.run(f"ping -c1 -W2 {G_V4} >/dev/null && "
               f"ping -6 -c1 -W2 {G_LL}%r1-eth0 >/dev/null")
        h1.run(f"ping -c1 -W2 {self.R1_V4_0} >/dev/null && "
               f"ping -6 -c1 -W2 {self.R1_V6_0} >/dev/null")


@pytest.fixture
def hlab():
    lab = HairpinLab()
    try:
        yield lab
    finally:
        for name in sorted(os.listdir(lab.tmp)):
            if name.startswith("fpmd.log"):
                with open(os.path.join(lab.tmp, name)) as f:
                    print(f"---- {name} ----\n{f.read()}")
        lab.cleanup()


def settle(fn, done, timeout=5.0):
    """fn() once done(fn()) holds, or its last value after timeout: the
    caller asserts exact values, this only waits out a loaded machine."""
    deadline = time.time() + timeout
    v = fn()
    while not done(v) and time.time() < deadline:
        time.sleep(0.05)
        v = fn()
    return v


class Capture:
    """Frames for UDP port PORT arriving at g, while in a with block and
    until `expect` of them came (or a timeout)."""

    def __init__(self, lab, expect):
        self.lab, self.expect, self.lines = lab, expect, []

    def __enter__(self):
        self.p = self.lab.g.popen(f"exec {PY} -u -c {q(CAPTURE)}",
                                  stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().strip() == "ready"
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()
        return self

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line.strip())

    def __exit__(self, *exc):
        settle(lambda: len(self.lines), lambda v: v >= self.expect)
        time.sleep(0.1)  # and no more than that
        self.p.terminate()
        self.p.wait(timeout=10)
        self.t.join(timeout=10)
        self.frames = [bytes.fromhex(x) for x in self.lines]
        return False


def redirects(ns, v6):
    return ns.snmp6("Icmp6InRedirects") if v6 else ns.snmp("Icmp",
                                                            "InRedirects")


def hairpin(lab, dst, n, redirect=True):
    """Send n datagrams h1 -> dst; (frames at g, redirects h1 received).
    redirect: whether one is expected (waited for, not assumed)."""
    v6 = ":" in dst
    r0 = redirects(lab.h1, v6)
    with Capture(lab, n) as c:
        send(lab, dst, n)
    if redirect:
        red = settle(lambda: redirects(lab.h1, v6) - r0, lambda v: v >= 1)
    else:
        time.sleep(0.3)  # one would have come with the frames
        red = redirects(lab.h1, v6) - r0
    return c.frames, red


def fpmd_hairpin(lab):
    d = lab.fpmd(ifnames=("r1-eth0",))
    d.ctl("route", "add", "198.51.100.0/24", "via", G_V4, "dev", "r1-eth0")
    d.ctl("route", "add", "2001:db8:200::/64", "via", G_LL, "dev",
          "r1-eth0")
    mac = lab.g.mac("g-eth0")
    d.ctl("neighbor", "add", G_V4, "lladdr", mac, "dev", "r1-eth0")
    d.ctl("neighbor", "add", G_LL, "lladdr", mac, "dev", "r1-eth0")
    wait_for(lambda: d.show("interfaces")["r1-eth0"]["txPort"],
             what="r1-eth0 a tx port")
    return d


def flags(d):
    return d.show("interfaces")["r1-eth0"]["flags"]


@pytest.mark.parametrize("dst", [DST_V4, DST_V6])
def test_hairpin_redirects_like_the_kernel(hlab, dst):
    lab, n, v6 = hlab, 5, ":" in dst
    fam = "IPv6" if v6 else "IPv4"

    # The reference: the kernel alone forwards and redirects.
    ref, red = hairpin(lab, dst, n)
    assert len(ref) == n, f"{fam} kernel: {len(ref)}/{n} at g"
    assert len(set(ref)) == 1, f"{fam}: the sender's frames differ"
    assert red >= 1, f"{fam} kernel: no ICMP redirect reached h1"

    d = fpmd_hairpin(lab)
    assert "send-redirects-ipv4" in flags(d)
    c0 = d.counters()["r1-eth0"]
    got, red = hairpin(lab, dst, n)
    c1 = d.counters()["r1-eth0"]
    assert got == ref, f"{fam} with fpmd: frames at g differ from the kernel's"
    assert red >= 1, f"{fam} with fpmd: no ICMP redirect reached h1"
    assert c1["pass-redirect"] - c0["pass-redirect"] == n, (c0, c1)
    assert c1["forwarded"] == c0["forwarded"], (c0, c1)

    # send_redirects off on "all" and the interface: the kernel would not
    # redirect IPv4, so XDP forwards it; IPv6 still redirects.
    lab.r1.sysctl("net.ipv4.conf.all.send_redirects", 0)
    lab.r1.sysctl("net.ipv4.conf.r1-eth0.send_redirects", 0)
    wait_for(lambda: "send-redirects-ipv4" not in flags(d),
             what="send-redirects-ipv4 cleared")
    assert d.show("guards")["send-redirects"]["state"] == "clear"
    time.sleep(1.1)  # the kernel's IPv6 redirect limit: 1/s per peer
    c0 = c1
    got, red = hairpin(lab, dst, n, redirect=v6)
    c1 = d.counters()["r1-eth0"]
    assert got == ref, f"{fam} XDP: frames at g differ from the kernel's"
    if v6:
        assert red >= 1, "IPv6: no ICMP redirect with the fast path"
        assert c1["pass-redirect"] - c0["pass-redirect"] == n, (c0, c1)
    else:
        assert red == 0, "IPv4: a redirect although send_redirects is off"
        assert c1["forwarded"] - c0["forwarded"] == n, (c0, c1)
        assert c1["tx"] - c0["tx"] == n, (c0, c1)
        assert c1["pass-redirect"] == c0["pass-redirect"], (c0, c1)
        # Only "all" off is not enough: the kernel ORs in the interface.
        lab.r1.sysctl("net.ipv4.conf.r1-eth0.send_redirects", 1)
        wait_for(lambda: "send-redirects-ipv4" in flags(d),
                 what="send-redirects-ipv4 set again")
        c0 = c1
        got, red = hairpin(lab, dst, n)
        c1 = d.counters()["r1-eth0"]
        assert got == ref and red >= 1
        assert c1["pass-redirect"] - c0["pass-redirect"] == n, (c0, c1)


def xdp_xmit_errors(ns, ifname):
    """The veth driver's own count: frames its ndo_xdp_xmit refused."""
    out = ns.run(f"ethtool -S {ifname}").stdout
    return sum(int(line.split(":")[1]) for line in out.splitlines()
               if "xdp_xmit_errors" in line)


TX = ("tx", "tx-redirect-error", "tx-xmit-drop")


def tx_lab(lab):
    """fpmd on lab's r1 with routes to h1 and h2. The guard would soon take
    an egress whose peer cannot receive out of tx_ports; checking only at
    start leaves the window open for as long as the test needs it."""
    d = lab.fpmd(extra=("--guard-interval", "3600000"))
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    return d


def send_h2(lab, n, size):
    f = udp_frame(lab.r1.mac("r1-eth0"), lab.h1.mac("h1-eth0"), lab.H1_V4,
                  lab.H2_V4, size)
    lab.h1.run(f"{PY} -c {q(SEND)} {f.hex()} {n}")


def test_tx_losses_after_redirect_are_counted(lab):
    """tx moves at XDP_REDIRECT; what the devmap or the driver refuses
    afterwards moves tx-redirect-error / tx-xmit-drop, so that tx minus
    both is what h2 received."""
    d = tx_lab(lab)
    n = 8

    def run(size, arrive):
        c0, r0 = d.counters()["r1-eth1"], lab.h2.snmp("Ip", "InReceives")
        x0 = xdp_xmit_errors(lab.r1, "r1-eth1")
        send_h2(lab, n, size)

        def delta():
            c1 = d.counters()["r1-eth1"]
            return {k: c1[k] - c0[k] for k in TX}

        # Every frame is counted in tx, and then either arrives or is
        # counted lost: wait for that much, then compare exactly.
        dl = settle(delta, lambda v: v["tx"] >= n and
                    v["tx-redirect-error"] + v["tx-xmit-drop"] >= n - arrive)
        got = settle(lambda: lab.h2.snmp("Ip", "InReceives") - r0,
                     lambda v: v >= arrive)
        return dl, got, xdp_xmit_errors(lab.r1, "r1-eth1") - x0

    delta, got, _ = run(64, n)
    assert got == n and delta == {"tx": n, "tx-redirect-error": 0,
                                  "tx-xmit-drop": 0}, (delta, got)

    # h2-eth0's MTU below the frame: veth's ndo_xdp_xmit refuses it (the
    # kernel path would drop it too, in __dev_forward_skb).
    lab.h2.run("ip link set h2-eth0 mtu 1000")
    delta, got, drv = run(1200, 0)
    assert got == 0, f"{got} frames above the peer's MTU arrived"
    assert drv == n, f"veth counted {drv} xdp_xmit_errors, expected {n}"
    assert delta == {"tx": n, "tx-redirect-error": 0, "tx-xmit-drop": n}, \
        delta
    lab.h2.run("ip link set h2-eth0 mtu 1500")

    # The peer loses GRO (and has no XDP): the devmap enqueue refuses
    # every frame for r1-eth1 (no ndo_xdp_xmit target any more).
    lab.h2.run("ethtool -K h2-eth0 gro off >/dev/null")
    delta, got, _ = run(64, 0)
    assert got == 0, f"{got} frames arrived although the peer cannot " \
        "receive redirects"
    assert delta == {"tx": n, "tx-redirect-error": n, "tx-xmit-drop": 0}, \
        delta
    text = d.ctl("show", "counters").stdout
    assert "tx-redirect-error" in text and "tx-xmit-drop" in text, text
    i = d.show("interfaces")["r1-eth1"]
    assert (i["tx"], i["txRedirectErrors"], i["txXmitDrops"]) == \
        (3 * n, n, n), i
    text = d.ctl("show", "interfaces").stdout
    assert f"tx {3 * n}, redirect errors {n}, xmit drops {n}: {n} left" \
        in text, text
    st = json.loads(d.ctl("show", "state").stdout)["fpmd:fpmd"]["state"]
    r1 = next(x for x in st["interface"] if x["name"] == "r1-eth1")
    got = {c["reason"]: int(c["packets"]) for c in r1["counter"]}
    assert got["tx-redirect-error"] == n and got["tx-xmit-drop"] == n, got


def test_tx_losses_of_another_namespace_not_counted(lab):
    """ifindexes repeat across namespaces and the tracepoints are global:
    losses of another router (same ifindexes, its own fpmd) must not show
    on ours."""
    other = Lab()
    try:
        d, d2 = tx_lab(lab), tx_lab(other)
        assert lab.r1.ifindex("r1-eth1") == other.r1.ifindex("r1-eth1")
        c0 = d.counters()["r1-eth1"]
        def theirs():
            return {k: d2.counters()["r1-eth1"][k] for k in TX}

        other.h2.run("ip link set h2-eth0 mtu 1000")
        send_h2(other, 8, 1200)
        settle(theirs, lambda v: v["tx-xmit-drop"] >= 8)
        other.h2.run("ip link set h2-eth0 mtu 1500 && "
                     "ethtool -K h2-eth0 gro off >/dev/null")
        send_h2(other, 8, 64)
        t = settle(theirs, lambda v: v["tx-redirect-error"] >= 8)
        assert t == {"tx": 16, "tx-redirect-error": 8,
                     "tx-xmit-drop": 8}, t
        c1 = d.counters()["r1-eth1"]
        assert {k: c1[k] - c0[k] for k in TX} == dict.fromkeys(TX, 0), c1
    finally:
        other.cleanup()
