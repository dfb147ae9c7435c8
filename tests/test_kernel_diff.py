# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd against the kernel, frame by frame.

The same battery of crafted frames goes from h1 into r1 twice: once with
only the kernel forwarding (no fpmd), once with fpmd's XDP program on r1's
interfaces. Everything that comes out at h1 and at h2 (forwarded packets,
fragments, ICMP errors and redirects r1 or h2 send back) is captured with
AF_PACKET and must be the same bytes both times. Where fpmd forwards a
frame itself, its rewrite (MACs, TTL, checksum, trimmed padding) must equal
the kernel's; where it cannot, it must pass the frame so the kernel does it.

Only what the kernel makes up itself differs by design between two runs:
the IPv4 ID of a packet r1 or h2 originates (a per-namespace hashed
counter). Those IDs are blanked after each frame's header checksum is
checked to be valid.
"""
import json
import os
import signal
import struct
import subprocess
import time

import pytest

from lib.lab import PY, TESTLIB, fpmd_diag, wait_for

scapy = pytest.importorskip("scapy.all")
from scapy.all import (ICMP, IP, TCP, UDP, Ether, ICMPv6EchoRequest,  # noqa
                       IPOption_RR, IPv6, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, Raw)

WIRE = os.path.join(TESTLIB, "pktwire.py")

MAC = {"h1-eth0": "02:00:00:00:01:01", "r1-eth0": "02:00:00:00:01:02",
       "r1-eth1": "02:00:00:00:02:03", "h2-eth0": "02:00:00:00:02:01"}
LL = {"h1-eth0": "fe80::101", "r1-eth0": "fe80::102",
      "r1-eth1": "fe80::203", "h2-eth0": "fe80::201"}
# A gateway on h1's own subnet (nothing answers there: frames to it are
# seen on h1-eth0), for the hairpin routes that make Linux send redirects.
GW4, GW6, GW_MAC = "172.16.101.9", "2001:db8:101::9", "02:00:00:00:01:09"
GW6_LL = "fe80::9"     # IPv6 redirects name link-local targets only
HAIRPIN4, HAIRPIN6, HAIRPIN6_LL = ("10.77.0.1", "2001:db8:77::1",
                                   "2001:db8:78::1")
EGRESS_MTU = 1400      # r1-eth1, so that fragmentation and PMTU show


def marker(i):
    return b"FPMDIFF%03d" % i


def payload(i, size=32):
    """size bytes starting and ending with the case's marker, so every
    fragment and every ICMP quote can be told apart."""
    m = marker(i)
    size = max(size, 2 * len(m))
    return m + b"." * (size - 2 * len(m)) + m


def cases(lab):
    """(name, frame bytes, gap after it). Frames are built from h1 towards
    r1-eth0. Linux rate-limits redirects per source host (IPv4: 20 ms
    doubling with each one sent; IPv6: one a second), so a frame that may
    earn one is followed by a longer gap: the limit must never be what
    makes the two runs agree or differ."""
    e = Ether(src=MAC["h1-eth0"], dst=MAC["r1-eth0"])
    h1, h2, r1 = lab.H1_V4, lab.H2_V4, lab.R1_V4_1
    h16, h26 = lab.H1_V6, lab.H2_V6
    c = []

    def add(name, build, gap=0.03):
        i = len(c)
        c.append((name, bytes(build(i)), gap))

    def v4(i, **kw):
        return e / IP(src=h1, dst=h2, **kw)

    def v6(i, **kw):
        return e / IPv6(src=h16, dst=h26, **kw)

    u = lambda i, size=32: UDP(sport=40000 + i, dport=9) / payload(i, size)  # noqa: E731
    add("v4 udp", lambda i: v4(i) / u(i))
    add("v4 udp to a closed port (h2 answers)",
        lambda i: v4(i) / UDP(sport=40000 + i, dport=33434) / payload(i))
    add("v4 udp zero checksum", lambda i: v4(i) / UDP(sport=40000 + i,
                                                       dport=9, chksum=0) /
        payload(i))
    add("v4 tiny udp, ethernet padding",
        lambda i: bytes(v4(i) / UDP(sport=40000 + i, dport=9) / marker(i)) +
        b"\0" * 13)
    add("v4 trailing bytes after tot_len",
        lambda i: bytes(v4(i) / u(i)) + b"TRAILINGJUNK" * 3)
    add("v4 dscp and ecn", lambda i: v4(i, tos=0xb9) / u(i))
    add("v4 df, id 0", lambda i: v4(i, flags="DF", id=0) / u(i))
    add("v4 ttl 2", lambda i: v4(i, ttl=2) / u(i))
    add("v4 ttl 1 (time exceeded)", lambda i: v4(i, ttl=1) / u(i))
    add("v4 ttl 0", lambda i: v4(i, ttl=0) / u(i))
    add("v4 options (record route)",
        lambda i: v4(i, options=[IPOption_RR(routers=["0.0.0.0"] * 2)]) /
        u(i))
    add("v4 bad header checksum", lambda i: v4(i, chksum=0x1234) / u(i))
    add("v4 first fragment", lambda i: v4(i, flags="MF", id=777) / u(i))
    add("v4 middle fragment",
        lambda i: v4(i, flags="MF", frag=100, id=778, proto=17) /
        payload(i, 48))
    add("v4 tcp syn (h2 resets)",
        lambda i: v4(i) / TCP(sport=41000 + i, dport=80, flags="S",
                              seq=1000) / payload(i))
    add("v4 icmp echo (h2 answers)",
        lambda i: v4(i) / ICMP(id=4000 + i, seq=1) / payload(i))
    add("v4 too big, df (frag needed)",
        lambda i: v4(i, flags="DF") / u(i, EGRESS_MTU))
    add("v4 too big, no df (fragmented)",
        lambda i: v4(i, id=4242) / u(i, EGRESS_MTU))
    add("v4 exactly the egress mtu",
        lambda i: v4(i, flags="DF") / u(i, EGRESS_MTU - 28))
    add("v4 to the router's other address",
        lambda i: e / IP(src=h1, dst=r1) / ICMP(id=4100 + i) / payload(i))
    add("v4 to h2's subnet broadcast",
        lambda i: e / IP(src=h1, dst="172.16.102.255") / u(i))
    add("v4 l2 broadcast to h2",
        lambda i: Ether(src=MAC["h1-eth0"], dst="ff:ff:ff:ff:ff:ff") /
        IP(src=h1, dst=h2) / u(i))
    add("v4 martian source 127.0.0.1",
        lambda i: e / IP(src="127.0.0.1", dst=h2) / u(i))
    add("v4 hairpin via a gateway on h1's subnet (redirect)",
        lambda i: e / IP(src=h1, dst=HAIRPIN4) / u(i), gap=1.1)
    add("v4 hairpin to a host on h1's own subnet (redirect)",
        lambda i: e / IP(src=h1, dst=GW4) / u(i), gap=1.1)
    add("v4 reserved flag bit", lambda i: v4(i, flags="evil") / u(i))
    add("v4 bad udp checksum",
        lambda i: v4(i) / UDP(sport=40000 + i, dport=9, chksum=0xbad) /
        payload(i))
    add("v4 df and a fragment offset",
        lambda i: v4(i, flags="DF", frag=10, id=779, proto=17) /
        payload(i, 40))
    add("v4 ttl 255", lambda i: v4(i, ttl=255) / u(i))
    add("v4 source 0.0.0.0", lambda i: e / IP(src="0.0.0.0", dst=h2) / u(i))
    add("v4 source is h2's subnet broadcast",
        lambda i: e / IP(src="172.16.102.255", dst=h2) / u(i))
    add("v4 802.1q tagged",
        lambda i: Ether(src=MAC["h1-eth0"], dst=MAC["r1-eth0"],
                        type=0x8100) / Raw(b"\x00\x05\x08\x00") /
        IP(src=h1, dst=h2) / u(i))
    add("v4 total length shorter than the header",
        lambda i: bytes(v4(i, len=16) / u(i)))

    add("v6 udp", lambda i: v6(i) / u(i))
    add("v6 udp to a closed port (h2 answers)",
        lambda i: v6(i) / UDP(sport=40000 + i, dport=33434) / payload(i))
    add("v6 tiny udp, ethernet padding",
        lambda i: bytes(v6(i) / UDP(sport=40000 + i, dport=9) / marker(i)) +
        b"\0" * 3)
    add("v6 trailing bytes after payload length",
        lambda i: bytes(v6(i) / u(i)) + b"TRAILINGJUNK" * 3)
    add("v6 payload length 0 without jumbo option",
        lambda i: bytes(v6(i, plen=0) / u(i)))
    add("v6 traffic class and flow label",
        lambda i: v6(i, tc=0xb9, fl=0x12345) / u(i))
    add("v6 hop limit 2", lambda i: v6(i, hlim=2) / u(i))
    add("v6 hop limit 1 (time exceeded)", lambda i: v6(i, hlim=1) / u(i))
    add("v6 hop-by-hop header", lambda i: v6(i) / IPv6ExtHdrHopByHop() / u(i))
    add("v6 destination options",
        lambda i: v6(i) / IPv6ExtHdrDestOpt() / u(i))
    add("v6 routing header type 0, segments left 1",
        lambda i: v6(i) / IPv6ExtHdrRouting(type=0, addresses=[h16],
                                             segleft=1) / u(i))
    add("v6 fragment header",
        lambda i: v6(i) / IPv6ExtHdrFragment(m=1, id=99) / u(i))
    add("v6 tcp syn (h2 resets)",
        lambda i: v6(i) / TCP(sport=41000 + i, dport=80, flags="S",
                              seq=1000) / payload(i))
    add("v6 echo (h2 answers)",
        lambda i: v6(i) / ICMPv6EchoRequest(id=4000 + i) / payload(i))
    add("v6 too big (packet too big)",
        lambda i: v6(i) / u(i, EGRESS_MTU))
    add("v6 exactly the egress mtu",
        lambda i: v6(i) / u(i, EGRESS_MTU - 48))
    add("v6 hairpin via a gateway on h1's subnet (redirect)",
        lambda i: e / IPv6(src=h16, dst=HAIRPIN6) / u(i), gap=1.1)
    add("v6 hairpin via a link-local gateway on h1's link (redirect)",
        lambda i: e / IPv6(src=h16, dst=HAIRPIN6_LL) / u(i), gap=1.1)
    add("v6 hairpin to a host on h1's own subnet (redirect)",
        lambda i: e / IPv6(src=h16, dst=GW6) / u(i), gap=1.1)
    add("v6 hop limit 255", lambda i: v6(i, hlim=255) / u(i))
    add("v6 no next header",
        lambda i: v6(i, nh=59) / payload(i))
    add("v6 unspecified source",
        lambda i: e / IPv6(src="::", dst=h26) / u(i))
    add("v6 to the router's other address",
        lambda i: e / IPv6(src=h16, dst=lab.R1_V6_1) /
        ICMPv6EchoRequest(id=4200 + i) / payload(i))
    add("v6 to all-nodes multicast",
        lambda i: Ether(src=MAC["h1-eth0"], dst="33:33:00:00:00:01") /
        IPv6(src=h16, dst="ff02::1") / u(i))
    add("v6 to a v4-mapped address",
        lambda i: e / IPv6(src=h16, dst="::ffff:172.16.102.1") / u(i))
    add("v6 bad udp checksum",
        lambda i: v6(i) / UDP(sport=40000 + i, dport=9, chksum=0xbad) /
        payload(i))
    add("v6 link-local source",
        lambda i: e / IPv6(src=LL["h1-eth0"], dst=h26) / u(i))
    return c


def pin_addresses(lab):
    """Fixed MACs and link-local addresses, permanent neighbors: two runs
    of the same frames must meet the same L2 world."""
    for ns, ifname in ((lab.h1, "h1-eth0"), (lab.r1, "r1-eth0"),
                       (lab.r1, "r1-eth1"), (lab.h2, "h2-eth0")):
        ns.run(f"ip link set dev {ifname} address {MAC[ifname]} && "
               f"ip -6 addr flush dev {ifname} scope link && "
               f"ip -6 addr add {LL[ifname]}/64 dev {ifname} nodad")
    r1 = lab.r1
    for addr, ifname, mac in ((lab.H1_V4, "r1-eth0", MAC["h1-eth0"]),
                              (lab.H1_V6, "r1-eth0", MAC["h1-eth0"]),
                              (LL["h1-eth0"], "r1-eth0", MAC["h1-eth0"]),
                              (GW4, "r1-eth0", GW_MAC),
                              (GW6, "r1-eth0", GW_MAC),
                              (GW6_LL, "r1-eth0", GW_MAC),
                              (lab.H2_V4, "r1-eth1", MAC["h2-eth0"]),
                              (lab.H2_V6, "r1-eth1", MAC["h2-eth0"]),
                              (LL["h2-eth0"], "r1-eth1", MAC["h2-eth0"])):
        r1.run(f"ip neigh replace {addr} lladdr {mac} dev {ifname} "
               "nud permanent")
    for ns, ifname, r4, r6 in ((lab.h1, "h1-eth0", lab.R1_V4_0, lab.R1_V6_0),
                               (lab.h2, "h2-eth0", lab.R1_V4_1,
                                lab.R1_V6_1)):
        mac = MAC["r1-eth0" if ns is lab.h1 else "r1-eth1"]
        for a in (r4, r6):
            ns.run(f"ip neigh replace {a} lladdr {mac} dev {ifname} "
                   "nud permanent")
        ns.run(f"ip neigh replace {LL['r1-eth0' if ns is lab.h1 else 'r1-eth1']}"
               f" lladdr {mac} dev {ifname} nud permanent")
        # Every error and answer, not a rate-limited few.
        ns.sysctl("net.ipv4.icmp_ratelimit", 0)
        ns.sysctl("net.ipv6.icmp.ratelimit", 0)
    r1.sysctl("net.ipv4.icmp_ratelimit", 0)
    r1.sysctl("net.ipv4.icmp_msgs_per_sec", 100000)
    r1.sysctl("net.ipv6.icmp.ratelimit", 0)
    r1.run(f"ip link set dev r1-eth1 mtu {EGRESS_MTU}")
    r1.run(f"ip route add {HAIRPIN4[:-1]}0/24 via {GW4} dev r1-eth0 && "
           f"ip -6 route add {HAIRPIN6[:-1]}/64 via {GW6} dev r1-eth0 && "
           f"ip -6 route add {HAIRPIN6_LL[:-1]}/64 via {GW6_LL} "
           "dev r1-eth0")


def fpmd_routes(lab, d):
    """The kernel's routes, by hand (no FRR here)."""
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("route", "add", "172.16.102.0/24", "dev", "r1-eth1")
    d.ctl("route", "add", "2001:db8:101::/64", "dev", "r1-eth0")
    d.ctl("route", "add", "2001:db8:102::/64", "dev", "r1-eth1")
    d.ctl("route", "add", "10.77.0.0/24", "via", GW4, "dev", "r1-eth0")
    d.ctl("route", "add", "2001:db8:77::/64", "via", GW6, "dev", "r1-eth0")
    d.ctl("route", "add", "2001:db8:78::/64", "via", GW6_LL, "dev",
          "r1-eth0")


def fpmd_forwarding(lab):
    """fpmd on r1, routes by hand (neighbors from the kernel), h2's
    subnets forwarding."""
    d = lab.fpmd()
    fpmd_routes(lab, d)
    wait_for(lambda: all(r[0]["state"] == "forwarding" for p, r in
                         d.show("routes").items()
                         if p in ("172.16.102.0/24", "2001:db8:102::/64")),
             timeout=10, what="routes forwarding")
    return d


def run_battery(lab, frames):
    """Send frames from h1; {side: [frame bytes]} seen on h1-eth0, h2-eth0."""
    caps = {}
    for side, ns, ifname in (("h1", lab.h1, "h1-eth0"),
                             ("h2", lab.h2, "h2-eth0")):
        p = ns.popen(f"exec {PY} {WIRE} capture {ifname}",
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
        assert p.stderr.readline().strip() == b"ready"
        caps[side] = p
    try:
        send = lab.h1.popen(f"exec {PY} {WIRE} send h1-eth0",
                            stdin=subprocess.PIPE)
        send.communicate(json.dumps([[f.hex(), gap] for f, gap in frames])
                         .encode(), timeout=60)
        assert send.returncode == 0
        time.sleep(0.5)          # the last answers and fragments
    finally:
        out = {}
        for side, p in caps.items():
            p.send_signal(signal.SIGTERM)
            o, _ = p.communicate(timeout=10)
            out[side] = [bytes.fromhex(x) for x in json.loads(o or b"[]")]
    return out


def ipv4_csum_ok(hdr):
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def normal(frame, originated):
    """The frame with what the kernel makes up per run blanked: the IPv4 ID
    (and so the header checksum, checked first) of a packet r1 or h2
    originated. Returns (frame, problem or None)."""
    f = bytearray(frame)
    if len(f) >= 34 and f[12:14] == b"\x08\x00":
        ihl = (f[14] & 0xf) * 4
        if not ipv4_csum_ok(bytes(f[14:14 + ihl])):
            return bytes(f), "bad IPv4 header checksum"
        if originated(f):
            f[18:20] = b"\0\0"
            f[24:26] = b"\0\0"
    return bytes(f), None


def by_case(frames, n, originated):
    out = {i: [] for i in range(n)}
    problems = []
    for f in frames:
        for i in range(n):
            if marker(i) in f:
                nf, prob = normal(f, originated)
                out[i].append(nf)
                if prob:
                    problems.append((i, prob, f.hex()))
                break
    return {i: sorted(v) for i, v in out.items()}, problems


def describe(f):
    try:
        return Ether(f).summary() + f" ({len(f)} bytes)"
    except Exception:
        return f.hex()


@pytest.mark.parametrize("send_redirects", [1, 0],
                         ids=["send_redirects", "no_send_redirects"])
def test_every_frame_leaves_as_the_kernel_sends_it(lab, send_redirects):
    """With send_redirects off (all and r1-eth0), IPv4 hairpins are
    forwarded without a redirect, so fpmd may forward them in XDP."""
    pin_addresses(lab)
    for conf in ("all", "r1-eth0"):
        lab.r1.sysctl(f"net.ipv4.conf.{conf}.send_redirects", send_redirects)
    battery = cases(lab)
    frames = [(f, gap) for _, f, gap in battery]
    src_h1 = bytes(int(x) for x in lab.H1_V4.split("."))

    def originated(f):
        return bytes(f[26:30]) != src_h1      # not one of h1's packets

    # The kernel alone.
    kern = run_battery(lab, frames)

    d = fpmd_forwarding(lab)
    before = d.counters()
    fast = run_battery(lab, frames)
    after = d.counters()
    fwd = after["r1-eth0"]["forwarded"] - before["r1-eth0"]["forwarded"]
    # Some frames must really have taken the fast path, or this compares
    # the kernel with itself.
    assert fwd >= 10, f"only {fwd} frames forwarded by XDP"
    # Hairpins go to the kernel exactly when it may redirect: IPv6 always,
    # IPv4 while send_redirects is on; otherwise XDP forwards them.
    hairpins = [name for name, _, _ in battery if "hairpin" in name]
    v4_hairpins = [n for n in hairpins if n.startswith("v4")]
    redirected = (after["r1-eth0"]["pass-redirect"] -
                  before["r1-eth0"]["pass-redirect"])
    assert redirected == len(hairpins) - (
        0 if send_redirects else len(v4_hairpins)), (redirected, hairpins)

    diffs = []
    problems = []
    for side in ("h1", "h2"):
        k, pk = by_case(kern[side], len(battery), originated)
        f, pf = by_case(fast[side], len(battery), originated)
        problems += [(battery[i][0], side, "kernel", p) for i, p, _ in pk]
        problems += [(battery[i][0], side, "fpmd", p) for i, p, _ in pf]
        for i, (name, _, _) in enumerate(battery):
            if k[i] != f[i]:
                diffs.append(
                    f"{name} at {side}:\n  kernel: "
                    f"{[describe(x) for x in k[i]]}\n  fpmd:   "
                    f"{[describe(x) for x in f[i]]}\n"
                    f"  kernel hex: {[x.hex() for x in k[i]]}\n"
                    f"  fpmd hex:   {[x.hex() for x in f[i]]}")
    assert not problems, problems
    assert not diffs, "differs from kernel forwarding:\n" + "\n".join(diffs)


# Sysctls that change what the kernel does with a routed packet. fpmd
# starts after each is set, so this checks the rule, not how fast fpmd
# notices a change (test_guards.py does that).
CONDITIONS = {
    "ipv6 disabled on the ingress": [
        "net.ipv6.conf.r1-eth0.disable_ipv6=1"],
    "ipv6 disabled on the egress": [
        "net.ipv6.conf.r1-eth1.disable_ipv6=1"],
    "ipv4 forwarding off on the ingress": [
        "net.ipv4.conf.r1-eth0.forwarding=0"],
    "ipv6 forwarding off, forced on the ingress": [
        "net.ipv6.conf.all.forwarding=0",
        "net.ipv6.conf.r1-eth0.force_forwarding=1"],
    "ipv6 forwarding off on the ingress only": [
        "net.ipv6.conf.r1-eth0.forwarding=0"],
    "ipv6 mtu below the device mtu on the egress": [
        "net.ipv6.conf.r1-eth1.mtu=1280"],
    "rp_filter strict": [
        "net.ipv4.conf.all.rp_filter=1"],
}


def short_battery(lab):
    keep = ("v4 udp", "v6 udp", "v4 too big", "v6 too big",
            "v6 exactly the egress mtu", "v4 ttl 2", "v6 hop limit 2")
    return [(f, g) for name, f, g in cases(lab) if name.startswith(keep)]


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_sysctls_as_the_kernel(lab, condition):
    pin_addresses(lab)
    for s in CONDITIONS[condition]:
        key, value = s.split("=")
        lab.r1.sysctl(key, value)
    frames = short_battery(lab)
    kern = run_battery(lab, frames)
    d = lab.fpmd()
    fpmd_routes(lab, d)
    time.sleep(1)
    fast = run_battery(lab, frames)
    n = len(cases(lab))
    src_h1 = bytes(int(x) for x in lab.H1_V4.split("."))
    originated = lambda f: bytes(f[26:30]) != src_h1  # noqa: E731
    names = [name for name, _, _ in cases(lab)]
    diffs = []
    for side in ("h1", "h2"):
        k, _ = by_case(kern[side], n, originated)
        f, _ = by_case(fast[side], n, originated)
        for i in range(n):
            if k[i] != f[i]:
                diffs.append(f"{names[i]} at {side}: kernel "
                             f"{[describe(x) for x in k[i]]}, fpmd "
                             f"{[describe(x) for x in f[i]]}")
    assert not diffs, f"{condition}: differs from the kernel:\n" + \
        "\n".join(diffs)


def test_sources_checked_once_a_local_route_is_added(lab):
    """Once user space adds a route of type local (AnyIP and the like),
    the kernel looks up every IPv4 source, rp_filter or not, and drops one
    whose route is local (fib_validate_source); a source with no route, or
    a blackhole or unreachable one (the lookup itself fails), still
    passes. The flag is sticky in the kernel: it is set here before both
    runs."""
    pin_addresses(lab)
    r1 = lab.r1
    r1.run("ip route add local 10.55.0.0/24 dev lo && "
           "ip route add blackhole 10.66.0.0/24 && "
           "ip route add unreachable 10.67.0.0/24")
    e = Ether(src=MAC["h1-eth0"], dst=MAC["r1-eth0"])
    sources = ["10.55.0.7", "10.66.0.7", "10.67.0.7", "10.44.0.7",
               lab.H1_V4]
    frames = [(bytes(e / IP(src=s, dst=lab.H2_V4) /
                     UDP(sport=40000 + k, dport=9) / payload(900 + k)), 0.03)
              for k, s in enumerate(sources)]
    kern = run_battery(lab, frames)
    d = lab.fpmd()
    fpmd_routes(lab, d)
    d.ctl("route", "add", "10.66.0.0/24", "blackhole")
    d.ctl("route", "add", "10.67.0.0/24", "unreachable")
    wait_for(lambda: "source-check" in d.show("interfaces")["r1-eth0"]
             ["flags"], timeout=10, what="source-check flag")
    before = d.counters()
    fast = run_battery(lab, frames)
    after = d.counters()
    got = {}
    for run, caps in (("kernel", kern), ("fpmd", fast)):
        for k, s in enumerate(sources):
            got[run, s] = sorted(f for f in caps["h2"] if marker(900 + k) in f)
    for s in sources:
        assert got["kernel", s] == got["fpmd", s], \
            (s, got["kernel", s], got["fpmd", s])
    # The kernel dropped the local source only; fpmd forwarded the others
    # itself.
    assert [bool(got["kernel", s]) for s in sources] == \
        [False, True, True, True, True]
    fwd = after["r1-eth0"]["forwarded"] - before["r1-eth0"]["forwarded"]
    assert fwd == 4, fwd


JUMBO_MTU = 9000


def jumbo_payload(i, size):
    """size bytes of the case's marker over and over: every fragment the
    kernel cuts from it, and every ICMP quote, carries one."""
    m = marker(i)
    return (m * (size // len(m) + 1))[:size]


def jumbo_cases(lab):
    """(name, frame bytes, gap, forwarded by XDP when the egress MTU is
    9000, ... when it is 1500). Frames past one page reach XDP as
    multi-buffer frames (the linear part and page fragments)."""
    e = Ether(src=MAC["h1-eth0"], dst=MAC["r1-eth0"])
    h1, h2, h16, h26 = lab.H1_V4, lab.H2_V4, lab.H1_V6, lab.H2_V6
    c = []

    def add(name, build, at_jumbo, at_1500):
        c.append((name, bytes(build(len(c))), 0.03, at_jumbo, at_1500))

    def u4(i, l3len, **kw):
        return e / IP(src=h1, dst=h2, **kw) / UDP(sport=40000 + i, dport=9) / \
            jumbo_payload(i, l3len - 28)

    def u6(i, l3len, **kw):
        return e / IPv6(src=h16, dst=h26, **kw) / \
            UDP(sport=40000 + i, dport=9) / jumbo_payload(i, l3len - 48)

    add("v4 udp 9000", lambda i: u4(i, 9000), True, False)
    add("v6 udp 9000", lambda i: u6(i, 9000), True, False)
    add("v4 udp 4000 (one page fragment)", lambda i: u4(i, 4000), True, False)
    add("v4 udp 1500", lambda i: u4(i, 1500), True, True)
    add("v4 udp 9000, df (frag needed at 1500)",
        lambda i: u4(i, 9000, flags="DF"), True, False)
    add("v4 udp 8900, trailing bytes",
        lambda i: bytes(u4(i, 8900)) + b"TRAILINGJUNK" * 3, True, False)
    add("v6 udp 8900, trailing bytes",
        lambda i: bytes(u6(i, 8900)) + b"TRAILINGJUNK" * 3, True, False)
    add("v4 first fragment of 9000",
        lambda i: u4(i, 9000, flags="MF", id=7001), True, False)
    add("v4 middle fragment of 9000",
        lambda i: e / IP(src=h1, dst=h2, flags="MF", frag=1000, id=7002,
                         proto=17) / jumbo_payload(i, 8980), True, False)
    add("v4 ttl 1, 9000 (time exceeded)", lambda i: u4(i, 9000, ttl=1),
        False, False)
    add("v6 hop limit 1, 9000 (time exceeded)",
        lambda i: u6(i, 9000, hlim=1), False, False)
    return c


@pytest.mark.parametrize("egress_mtu", [JUMBO_MTU, 1500])
def test_jumbo_frames_as_the_kernel(lab, egress_mtu):
    """MTU 9000 on every veth: fpmd's program (xdp.frags) attaches in
    native mode, forwards 9000-byte frames with the kernel's bytes and
    counts their whole length; through a 1500-byte egress it passes them
    (pass-mtu) and the kernel fragments or answers frag-needed / Packet
    Too Big, exactly as without fpmd."""
    pin_addresses(lab)
    for ns, ifname in ((lab.h1, "h1-eth0"), (lab.r1, "r1-eth0"),
                       (lab.r1, "r1-eth1"), (lab.h2, "h2-eth0")):
        ns.run(f"ip link set dev {ifname} mtu {JUMBO_MTU}")
    lab.r1.run(f"ip link set dev r1-eth1 mtu {egress_mtu}")
    battery = jumbo_cases(lab)
    frames = [(f, gap) for _, f, gap, _, _ in battery]
    src_h1 = bytes(int(x) for x in lab.H1_V4.split("."))
    originated = lambda f: bytes(f[26:30]) != src_h1  # noqa: E731

    kern = run_battery(lab, frames)
    d = fpmd_forwarding(lab)
    for ifname in ("r1-eth0", "r1-eth1"):
        link = lab.r1.run(f"ip link show dev {ifname}").stdout
        assert "xdpgeneric" not in link and " xdp" in link, link
        assert d.show("interfaces")[ifname]["xdpMode"] == "native", \
            fpmd_diag(d)
    # r1-eth1 transmits multi-buffer frames (h2-eth0 has GRO).
    wait_for(lambda: "xmit-sg" in d.show("interfaces")["r1-eth1"]["flags"],
             timeout=5, what="r1-eth1 xmit-sg")
    before = d.show("counters")
    fast = run_battery(lab, frames)
    after = d.show("counters")

    def moved(ifname, reason, what="packets"):
        return after[ifname][reason][what] - before[ifname][reason][what]

    fwd = [(name, f) for name, f, _, at_jumbo, at_1500 in battery
           if (at_jumbo if egress_mtu == JUMBO_MTU else at_1500)]
    # The ingress counts whole frames (trailing bytes too), the egress
    # what left (trimmed).
    assert moved("r1-eth0", "forwarded") == len(fwd), \
        (moved("r1-eth0", "forwarded"), [n for n, _ in fwd])
    assert moved("r1-eth0", "forwarded", "bytes") == \
        sum(len(f) for _, f in fwd)
    assert moved("r1-eth1", "tx", "bytes") == \
        sum(len(f) - (36 if "trailing" in n else 0) for n, f in fwd)
    if egress_mtu != JUMBO_MTU:
        assert moved("r1-eth0", "pass-mtu") == len(battery) - 2 - len(fwd)

    diffs = []
    seen = set()
    for side in ("h1", "h2"):
        k, pk = by_case(kern[side], len(battery), originated)
        f, pf = by_case(fast[side], len(battery), originated)
        assert not pk and not pf, (pk, pf)
        seen |= {i for i in k if k[i]}
        for i, (name, _, _, _, _) in enumerate(battery):
            if k[i] != f[i]:
                diffs.append(
                    f"{name} at {side}:\n  kernel: "
                    f"{[describe(x) for x in k[i]]}\n  fpmd:   "
                    f"{[describe(x) for x in f[i]]}")
    # Each frame came out somewhere (forwarded, fragments or an error):
    # the lab carries jumbo frames.
    assert seen == set(range(len(battery))), \
        [battery[i][0] for i in range(len(battery)) if i not in seen]
    assert not diffs, "differs from kernel forwarding:\n" + "\n".join(diffs)
