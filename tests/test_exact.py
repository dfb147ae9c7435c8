# SPDX-License-Identifier: GPL-2.0-or-later
"""Exactness against the kernel: h1 -- r1 -- h2, fpmd on r1, real XDP.

- Trimming: frames with Ethernet padding, bytes past the IPv4 total length
  or the IPv6 payload length, and IPv6 payload length 0 go through kernel
  forwarding first (fpmd not running), then through fpmd's XDP path; what
  arrives at h2 must be the same bytes.
- MTU: a stream of DF, non-DF and IPv6 frames while r1's egress MTU
  changes (also while fpmd is too busy to hear of it): every frame arrives
  whole, arrives fragmented, or is answered with ICMP, exactly as the
  kernel decides; none vanishes, and fpmd's counters say which path each
  took. net.ipv6.conf.X.mtu (no event, polled) and a route's mtu metric
  (sent over FPM) are followed too.

Frames are raw (tests/lib/rawframes.py): h1's kernel adds, pads or fragments
nothing.

Run: /usr/bin/python3 -m pytest -v tests/test_exact.py
"""
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time

from scapy.layers.inet import ICMP, IP, UDP, IPerror
from scapy.layers.inet6 import (ICMPv6PacketTooBig, IPerror6, IPv6,
                                IPv6ExtHdrFragment)
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from lib.lab import PY, TESTLIB, wait_for

RAWFRAMES = os.path.join(TESTLIB, "rawframes.py")
PORT = 9  # discard: h2 answers nothing but port unreachable


# ---- helpers ----------------------------------------------------------------

class Capture:
    """Every frame an interface in a namespace receives, until stop();
    frames() is what arrived so far."""

    def __init__(self, ns, ifname):
        self.ifname = ifname
        self.p = ns.popen(f"exec {PY} {RAWFRAMES} capture {ifname} --lines",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
        line = self.p.stderr.readline()
        assert line.strip() == "ready", f"capture on {ifname}: {line!r}"
        self.got = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            self.got.append(bytes.fromhex(line.strip()))

    def frames(self):
        return list(self.got)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            err = self.p.stderr.read()
            self.p.wait(timeout=30)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
        self.reader.join(timeout=30)
        # Its own socket overflowing is not a frame lost on the way.
        assert "dropped" not in err, f"capture on {self.ifname}: {err}"
        return self.frames()


def send_frames(ns, ifname, frames, interval=0.0):
    """Background sender; returns the process (wait() on it)."""
    p = ns.popen(f"exec {PY} {RAWFRAMES} send {ifname} --interval {interval}",
                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdin.write("\n".join(f.hex() for f in frames) + "\n")
    p.stdin.close()
    return p


def send_and_capture(lab, frames, done):
    """Send frames from h1; what h2 and h1 received meanwhile, once
    done(at_h2, at_h1) is true (or 10 s passed: the caller's checks say
    what is missing)."""
    c2 = Capture(lab.h2, "h2-eth0")
    c1 = Capture(lab.h1, "h1-eth0")
    p = send_frames(lab.h1, "h1-eth0", frames)
    assert p.wait(timeout=60) == 0
    settle(lambda: done(c2.frames(), c1.frames()))
    return c2.stop(), c1.stop()


def settle(cond, timeout=10):
    """Until cond() (frames may still be crossing r1 when the sender is
    done: a fixed wait is too short on a loaded machine), or timeout:
    then the caller's checks name what never came."""
    try:
        wait_for(cond, timeout=timeout, interval=0.2)
    except AssertionError:
        pass


def from_h1(lab, frames):
    """The frames with h1's IPv4 or IPv6 source address."""
    out = []
    for b in frames:
        e = Ether(b)
        if (IP in e and e[IP].src == lab.H1_V4) or \
                (IPv6 in e and e[IPv6].src == lab.H1_V6):
            out.append(b)
    return out


def all_arrived(lab, n):
    """done() for send_and_capture: n frames from h1 arrived at h2."""
    return lambda at_h2, _: len(from_h1(lab, at_h2)) >= n


def accounted(lab, kinds):
    """done() for send_and_capture: every frame of an mtu_stream has an
    outcome (arrived whole or fragmented, or answered with ICMP)."""
    return lambda at_h2, at_h1: set(kinds) <= set(classify(lab, at_h2,
                                                           at_h1))


def setup_fast_path(lab, d):
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()


def macs(lab):
    return lab.h1.mac("h1-eth0"), lab.r1.mac("r1-eth0")


def counter_deltas(before, after, ifname):
    return {k: v - before.get(ifname, {}).get(k, 0)
            for k, v in after.get(ifname, {}).items()
            if v != before.get(ifname, {}).get(k, 0)}


# ---- 1. trimming: the same bytes as kernel forwarding ------------------------

def trim_frames(lab):
    """{tag: frame} for every form the kernel trims, IPv4 and IPv6. The tag
    (IPv4 id, IPv6 flow label) finds the frame again at h2."""
    h1mac, r1mac = macs(lab)
    eth = Ether(src=h1mac, dst=r1mac)
    v4 = dict(src=lab.H1_V4, dst=lab.H2_V4, ttl=64)
    v6 = dict(src=lab.H1_V6, dst=lab.H2_V6, hlim=64)
    udp = UDP(sport=40000, dport=PORT)
    f = {}
    # Ethernet padding after a short datagram (zeros, as NICs pad).
    b = bytes(eth / IP(id=0x101, **v4) / udp / Raw(b"abcd"))
    f[0x101] = b + bytes(60 - len(b))
    # Header-only IPv4 datagram in a padded frame.
    b = bytes(eth / IP(id=0x102, proto=253, **v4))
    f[0x102] = b + bytes(60 - len(b))
    # Bytes past tot_len that are not padding.
    f[0x103] = bytes(eth / IP(id=0x103, **v4) / udp / Raw(b"x" * 72)) + \
        b"\xee" * 50
    # IPv6 with no next header, padded.
    b = bytes(eth / IPv6(fl=0x601, nh=59, **v6))
    f[0x601] = b + bytes(60 - len(b))
    # Bytes past payload_len.
    f[0x602] = bytes(eth / IPv6(fl=0x602, **v6) / udp / Raw(b"y" * 16)) + \
        b"\xee" * 30
    # payload_len 0 without a hop-by-hop header: the kernel keeps the bare
    # 40-byte header (ip6_rcv_core) and forwards it.
    f[0x603] = bytes(eth / IPv6(fl=0x603, plen=0, nh=17, **v6) /
                     Raw(b"\x9c\x40\x00\x09\x00\x18\x00\x00" + b"z" * 16))
    return f


def arrived_by_tag(lab, frames):
    """{tag: frame} of the test's frames among those h2 received."""
    out = {}
    for b in frames:
        e = Ether(b)
        if IP in e and e[IP].src == lab.H1_V4:
            out.setdefault(e[IP].id, b)
        elif IPv6 in e and e[IPv6].src == lab.H1_V6 and e[IPv6].fl:
            out.setdefault(e[IPv6].fl, b)
    return out


def test_trimmed_frames_identical_to_kernel_forwarding(lab):
    lab.warm_kernel_neighbors()
    frames = trim_frames(lab)
    def all_tags(at_h2, _):
        return set(arrived_by_tag(lab, at_h2)) >= set(frames)
    # The kernel first: nothing attached to r1 yet.
    got, _ = send_and_capture(lab, list(frames.values()), all_tags)
    kernel = arrived_by_tag(lab, got)
    assert set(kernel) == set(frames), \
        f"kernel forwarding lost {sorted(set(frames) - set(kernel))}"

    d = lab.fpmd()
    setup_fast_path(lab, d)
    before, b0 = d.counters(), d.show("counters")
    got, _ = send_and_capture(lab, list(frames.values()), all_tags)
    after, b1 = d.counters(), d.show("counters")
    xdp = arrived_by_tag(lab, got)
    rx = counter_deltas(before, after, "r1-eth0")
    assert rx.get("forwarded", 0) == len(frames), \
        f"not all forwarded by XDP: r1-eth0 {rx}"
    sent_bytes = sum(map(len, frames.values()))
    tx = counter_deltas(before, after, "r1-eth1")
    for tag, f in sorted(frames.items()):
        assert tag in xdp, f"tag {tag:#x}: lost on the XDP path"
        assert xdp[tag] == kernel[tag], (
            f"tag {tag:#x}: XDP sent {len(xdp[tag])} bytes\n"
            f"  {xdp[tag].hex()}\nthe kernel {len(kernel[tag])} bytes\n"
            f"  {kernel[tag].hex()}")
        assert len(kernel[tag]) < len(f), f"tag {tag:#x}: nothing trimmed"
    # tx bytes are what left (trimmed), forwarded bytes what arrived.
    def dbytes(ifname, reason):
        return b1[ifname][reason]["bytes"] - b0[ifname][reason]["bytes"]
    assert tx.get("tx") == len(frames), tx
    assert dbytes("r1-eth1", "tx") == sum(map(len, kernel.values()))
    assert dbytes("r1-eth0", "forwarded") == sent_bytes


# ---- 2. the MTU as it is now ------------------------------------------------

SIZE = 1400  # over 1280, under 1500


def mtu_stream(lab, n, seq0=0):
    """n frames per kind, interleaved: IPv4 with DF, IPv4 without, IPv6;
    the sequence number is the IPv4 id / the IPv6 flow label and the first
    payload bytes (ICMP errors quote them)."""
    h1mac, r1mac = macs(lab)
    eth = Ether(src=h1mac, dst=r1mac)
    frames, kinds = [], {}
    for i in range(n):
        for k, kind in enumerate(("df", "nodf", "v6")):
            seq = seq0 + 3 * i + k
            pay = struct.pack("!I", seq)
            if kind == "v6":
                p = eth / IPv6(src=lab.H1_V6, dst=lab.H2_V6, fl=seq,
                               hlim=64) / UDP(sport=40001, dport=PORT) / \
                    Raw(pay + b"v" * (SIZE - 40 - 8 - 4))
            else:
                p = eth / IP(src=lab.H1_V4, dst=lab.H2_V4, id=seq & 0xffff,
                             flags="DF" if kind == "df" else 0, ttl=64) / \
                    UDP(sport=40001, dport=PORT) / \
                    Raw(pay + b"w" * (SIZE - 20 - 8 - 4))
            frames.append(bytes(p))
            kinds[seq] = kind
    return frames, kinds


def classify(lab, at_h2, at_h1):
    """{seq: outcome}: whole, fragmented, icmp. A seq seen twice keeps all
    its outcomes (a duplicate or a contradiction shows)."""
    out = {}

    def note(seq, what):
        out.setdefault(seq, set()).add(what)

    for b in at_h2:
        e = Ether(b)
        if IP in e and e[IP].src == lab.H1_V4 and e[IP].proto == 17:
            ip = e[IP]
            if ip.frag == 0:
                seq = struct.unpack("!I", bytes(ip.payload)[8:12])[0]
                note(seq, "fragmented" if ip.flags.MF else "whole")
        elif IPv6 in e and e[IPv6].src == lab.H1_V6 and e[IPv6].fl:
            if IPv6ExtHdrFragment in e:
                note(e[IPv6].fl, "fragmented")
            else:
                note(e[IPv6].fl, "whole")
    for b in at_h1:
        e = Ether(b)
        if ICMP in e and e[ICMP].type == 3 and e[ICMP].code == 4 and \
                IPerror in e:
            q = bytes(e[IPerror].payload)
            if len(q) >= 12:
                note(struct.unpack("!I", q[8:12])[0], "icmp")
        elif ICMPv6PacketTooBig in e and IPerror6 in e:
            note(e[IPerror6].fl, "icmp")
    return out


def check_accounted(frames, kinds, outcomes, mtu_seen, where=""):
    """Every frame has exactly one outcome, the one the kernel allows.
    where: what fpmd and the kernel counted, for the message."""
    allowed = {"df": {"whole", "icmp"}, "nodf": {"whole", "fragmented"},
               "v6": {"whole", "icmp"}}
    missing = [s for s in kinds if s not in outcomes]
    assert not missing, \
        f"{len(missing)} of {len(kinds)} frames vanished " \
        f"(first seqs {missing[:10]}, kinds " \
        f"{sorted({kinds[s] for s in missing})}) while the MTU was " \
        f"{mtu_seen}; {where}"
    for s, o in outcomes.items():
        if s not in kinds:
            continue
        assert len(o) == 1 and o <= allowed[kinds[s]], \
            f"seq {s} ({kinds[s]}): {sorted(o)}"


def counted_as(before, after, n_frames, outcomes):
    rx = counter_deltas(before, after, "r1-eth0")
    tx = counter_deltas(before, after, "r1-eth1")
    whole = sum(1 for o in outcomes.values() if o == {"whole"})
    fwd = rx.get("forwarded", 0)
    # Every frame took one counted path; what XDP forwarded arrived whole
    # (the kernel may have forwarded more whole, after a pass).
    # The test's frames are all there is from h1 (ARP, ND aside).
    assert fwd + rx.get("pass-mtu", 0) == n_frames, f"r1-eth0 {rx}"
    assert tx.get("tx", 0) == fwd, f"tx {tx} vs forwarded {fwd}"
    assert fwd <= whole, \
        f"fpmd counts {fwd} forwarded but only {whole} arrived whole"
    return rx


def mtu_lab(lab):
    d = lab.fpmd()
    setup_fast_path(lab, d)
    # Every ICMP error the kernel owes must be sent (FRR-LAB.md).
    lab.r1.sysctl("net.ipv4.icmp_ratelimit", 0)
    lab.r1.sysctl("net.ipv6.icmp.ratelimit", 0)
    # and the namespace-wide budget both families share (50 in a burst)
    lab.r1.sysctl("net.ipv4.icmp_msgs_burst", 10000)
    lab.r1.sysctl("net.ipv4.icmp_msgs_per_sec", 100000)
    return d


def kernel_mtu_counters(ns):
    """The kernel's counters of what it forwarded, fragmented, refused or
    dropped: which path a vanished frame took."""
    out = {f"Ip {f}": ns.snmp("Ip", f) for f in
           ("ForwDatagrams", "OutDiscards", "FragOKs", "FragFails")}
    out.update({f"Icmp {f}": ns.snmp("Icmp", f) for f in
                ("OutDestUnreachs", "OutErrors")})
    out.update({f: ns.snmp6(f) for f in
                ("Ip6OutForwDatagrams", "Ip6InTooBigErrors",
                 "Ip6OutDiscards", "Ip6InDiscards", "Icmp6OutPktTooBigs",
                 "Icmp6OutErrors")})
    return out


def set_mtu(lab, mtu):
    lab.r1.run(f"ip link set dev r1-eth1 mtu {mtu}")


def test_mtu_change_under_stream(lab):
    d = mtu_lab(lab)
    n = 150
    frames, kinds = mtu_stream(lab, n)
    before = d.counters()
    c2 = Capture(lab.h2, "h2-eth0")
    c1 = Capture(lab.h1, "h1-eth0")
    k0 = kernel_mtu_counters(lab.r1)
    p = send_frames(lab.h1, "h1-eth0", frames, interval=0.003)
    mtus = []
    while p.poll() is None:
        for m in (1280, 1500):
            set_mtu(lab, m)
            mtus.append(m)
            time.sleep(0.05)
    assert p.returncode == 0
    settle(lambda: accounted(lab, kinds)(c2.frames(), c1.frames()))
    outcomes = classify(lab, c2.stop(), c1.stop())
    after = d.counters()
    k1 = kernel_mtu_counters(lab.r1)
    where = (f"fpmd r1-eth0 {counter_deltas(before, after, 'r1-eth0')}, "
             f"r1-eth1 {counter_deltas(before, after, 'r1-eth1')}; kernel "
             f"{ {k: k1[k] - k0[k] for k in k1 if k1[k] != k0[k]} }")
    check_accounted(frames, kinds, outcomes, "switching 1280/1500", where)
    rx = counted_as(before, after, len(frames), outcomes)
    got = {k: sorted({next(iter(o)) for s, o in outcomes.items()
                      if kinds.get(s) == k}) for k in ("df", "nodf", "v6")}
    print(f"{len(mtus)} MTU changes; outcomes {got}; r1-eth0 {rx}")


def test_mtu_lowered_while_fpmd_busy(lab):
    """fpmd stopped (SIGSTOP: a long replay, a slow host): its copy of the
    MTU stays 1500 while the device has 1280. The fast path must still
    send every too-big frame to the kernel, which fragments or answers."""
    d = mtu_lab(lab)
    frames, kinds = mtu_stream(lab, 20)
    before = d.counters()
    d.proc.send_signal(signal.SIGSTOP)
    try:
        set_mtu(lab, 1280)
        at_h2, at_h1 = send_and_capture(lab, frames, accounted(lab, kinds))
    finally:
        d.proc.send_signal(signal.SIGCONT)
    after = d.counters()
    outcomes = classify(lab, at_h2, at_h1)
    check_accounted(frames, kinds, outcomes, "1280 (fpmd's copy: 1500)")
    for s, o in outcomes.items():
        want = {"df": {"icmp"}, "nodf": {"fragmented"}, "v6": {"icmp"}}
        assert o == want[kinds[s]], f"seq {s} ({kinds[s]}): {sorted(o)}"
    rx = counter_deltas(before, after, "r1-eth0")
    assert rx.get("pass-mtu") == len(frames) and not rx.get("forwarded"), rx


def test_egress_deleted_while_fpmd_busy(lab):
    """fpmd stopped while the egress veth is deleted: its maps still route
    to it. Short datagrams (<= 68 bytes, which no Ethernet MTU refuses, so
    XDP does not ask the device) must still go to the kernel, which has
    lost the route with the device and answers unreachable: the kernel
    took the egress out of tx_ports, so the redirect fails."""
    d = mtu_lab(lab)
    h1mac, r1mac = macs(lab)
    eth = Ether(src=h1mac, dst=r1mac)
    udp = UDP(sport=40002, dport=PORT)
    frames = []
    for i in range(8):
        frames.append(bytes(eth / IP(src=lab.H1_V4, dst=lab.H2_V4, id=i) /
                            udp / Raw(b"s%03d" % i)))
        frames.append(bytes(eth / IPv6(src=lab.H1_V6, dst=lab.H2_V6,
                                       fl=i + 1) / udp / Raw(b"s%03d" % i)))
    assert all(len(f) - 14 <= 68 for f in frames)
    # The path is fast before.
    before = d.counters()
    send_and_capture(lab, frames, all_arrived(lab, len(frames)))
    rx = counter_deltas(before, d.counters(), "r1-eth0")
    assert rx.get("forwarded") == len(frames), rx
    unreach0 = lab.r1.snmp("Icmp", "OutDestUnreachs")
    before = d.counters()
    d.proc.send_signal(signal.SIGSTOP)
    try:
        lab.r1.run("ip link del r1-eth1")
        c1 = Capture(lab.h1, "h1-eth0")
        p = send_frames(lab.h1, "h1-eth0", frames)
        assert p.wait(timeout=60) == 0
        # Until h1 has every unreachable r1's kernel counts as sent (the
        # same on two polls in a row: the last frames may still be on
        # their way through r1).
        seen = []

        def answered():
            v4 = sum(1 for b in c1.frames() if ICMP in Ether(b) and
                     Ether(b)[ICMP].type == 3)
            now = (v4, lab.r1.snmp("Icmp", "OutDestUnreachs") - unreach0)
            seen.append(now)
            return now[0] and now[0] == now[1] and seen[-2:] == [now, now]
        settle(answered)
        at_h1 = c1.stop()
    finally:
        d.proc.send_signal(signal.SIGCONT)
    # What XDP counted while fpmd was stopped (its maps say so at once).
    rx = counter_deltas(before, d.counters(), "r1-eth0")
    assert rx.get("pass-egress-kernel") == len(frames) and \
        not rx.get("forwarded"), \
        rx
    errors = [Ether(b) for b in at_h1]
    v4 = [e for e in errors if ICMP in e and e[ICMP].type == 3]
    v6 = [e for e in errors if e.haslayer("ICMPv6DestUnreach")]
    # The kernel answered (its own limits decide how many: not XDP's).
    assert v4 and v6, f"{len(v4)} ICMP and {len(v6)} ICMPv6 unreachables"
    assert lab.r1.snmp("Icmp", "OutDestUnreachs") - unreach0 == len(v4)


def applied(d, mtu, since):
    """Wait for fpmd to report the polled value (guard interval 200 ms
    here) in its log after offset `since` (the start logs 1500 too); if it
    never does, the packets below decide."""
    try:
        wait_for(lambda: f"net.ipv6.conf.r1-eth1.mtu) {mtu}" in
                 d.logtext()[since:],
                 timeout=10, what="fpmd to read the IPv6 MTU")
    except AssertionError:
        pass


def test_ipv6_conf_mtu_followed(lab):
    """net.ipv6.conf.X.mtu below the device MTU: the kernel answers
    Packet Too Big from it; fpmd polls it (no event) and passes."""
    d = mtu_lab(lab)
    log0 = len(d.logtext())
    lab.r1.sysctl("net.ipv6.conf.r1-eth1.mtu", 1280)
    applied(d, 1280, log0)
    frames, kinds = mtu_stream(lab, 10)
    before = d.counters()
    outcomes = classify(lab, *send_and_capture(lab, frames,
                                               accounted(lab, kinds)))
    after = d.counters()
    check_accounted(frames, kinds, outcomes, "device 1500, IPv6 1280")
    want = {"df": {"whole"}, "nodf": {"whole"}, "v6": {"icmp"}}
    for s, o in outcomes.items():
        assert o == want[kinds[s]], f"seq {s} ({kinds[s]}): {sorted(o)}"
    rx = counter_deltas(before, after, "r1-eth0")
    # One MTU per nexthop, the smaller: IPv4 over 1280 takes the kernel
    # path too (forwarded whole by it), never a wrong one.
    assert rx.get("pass-mtu") == len(frames), rx

    log0 = len(d.logtext())
    lab.r1.sysctl("net.ipv6.conf.r1-eth1.mtu", 1500)
    applied(d, 1500, log0)
    before = d.counters()
    outcomes = classify(lab, *send_and_capture(lab, frames,
                                               accounted(lab, kinds)))
    after = d.counters()
    assert all(o == {"whole"} for o in outcomes.values()), outcomes
    rx = counter_deltas(before, after, "r1-eth0")
    assert rx.get("forwarded") == len(frames), rx


# ---- 3. a route's mtu metric, over FPM ---------------------------------------

RTM_NEWROUTE, RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_METRICS = 24, 1, 4, 5, 8
RTAX_LOCK, RTAX_MTU = 1, 2


def nla(t, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, t) + payload + bytes((4 - n % 4) % 4)


def fpm_route(family, dst, plen, gw, oif, metrics=None):
    """One FPM frame holding an RTM_NEWROUTE (main table, unicast)."""
    af = socket.AF_INET if family == 4 else socket.AF_INET6
    rtm = struct.pack("=BBBBBBBBI", af, plen, 0, 0, 254, 3, 0, 1, 0)
    attrs = nla(RTA_DST, socket.inet_pton(af, dst)) + \
        nla(RTA_GATEWAY, socket.inet_pton(af, gw)) + \
        nla(RTA_OIF, struct.pack("=I", oif))
    if metrics:
        attrs += nla(RTA_METRICS, b"".join(
            nla(t, struct.pack("=I", v)) for t, v in metrics.items()))
    body = rtm + attrs
    nlh = struct.pack("=IHHII", 16 + len(body), RTM_NEWROUTE, 0x501, 1, 0)
    msg = nlh + body
    return struct.pack("!BBH", 1, 1, 4 + len(msg)) + msg


def test_route_mtu_metric_kept_on_kernel_path(lab):
    d = lab.fpmd()
    setup_fast_path(lab, d)
    oif = lab.r1.ifindex("r1-eth1")
    cases = [  # prefix, frame, kernel forwards by the metric
        ("10.77.1.0/24", fpm_route(4, "10.77.1.0", 24, lab.H2_V4, oif,
                                   {RTAX_MTU: 1300}), True),
        ("10.77.2.0/24", fpm_route(4, "10.77.2.0", 24, lab.H2_V4, oif),
         False),
        ("2001:db8:77:1::/64",
         fpm_route(6, "2001:db8:77:1::", 64, lab.H2_V6, oif,
                   {RTAX_MTU: 1300, RTAX_LOCK: 1 << RTAX_MTU}), True),
        # IPv6 ignores an unlocked route mtu when forwarding.
        ("2001:db8:77:2::/64",
         fpm_route(6, "2001:db8:77:2::", 64, lab.H2_V6, oif,
                   {RTAX_MTU: 1300}), False),
    ]
    frame = b"".join(f for _, f, _ in cases)
    client = ("import socket,sys,time\n"
              "s=socket.create_connection(('127.0.0.1',2620))\n"
              f"s.sendall(bytes.fromhex('{frame.hex()}'))\n"
              "time.sleep(8)\n")
    p = lab.r1.popen(f"exec {PY} -c \"{client}\"", stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)

    def states():
        return {p: e for p, e in d.show("routes").items()
                if p in {c[0] for c in cases}}
    got = wait_for(lambda: (lambda s: s if len(s) == len(cases) else None)(
        states()), timeout=10, what="the FPM routes")
    p.kill()
    p.wait(timeout=30)
    for prefix, _, by_metric in cases:
        r = got[prefix]
        txt = json.dumps(r)
        if by_metric:
            assert "mtu-metric" in txt, f"{prefix}: {txt}"
        else:
            assert "mtu-metric" not in txt, f"{prefix}: {txt}"


def test_plugin_route_mtu_kept_on_kernel_path(lab):
    """The zebra plugin passes zebra's route mtu (RouteOp.mtu): an IPv4
    route with one is the kernel's; IPv6 (zebra never locks it) is not."""
    from lib.proto import hello, route
    from lib.proto import Client, acks
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")

    def op(seq, pfx, plen, gw, mtu):
        return route(seq, pfx, plen, gw, idx, mtu=mtu)
    cases = [  # prefix, op, kernel forwards by it
        ("10.77.1.0/24", op(1, "10.77.1.0", 24, lab.H2_V4, 1300), True),
        ("10.77.2.0/24", op(2, "10.77.2.0", 24, lab.H2_V4, 0), False),
        ("2001:db8:77:1::/64",
         op(3, "2001:db8:77:1::", 64, lab.H2_V6, 1300), False),
    ]
    c = Client(d)
    c.send(hello())
    c.recv()
    c.send(*(m for _, m, _ in cases))
    assert [a[1] for a in acks(c, len(cases))] == [0] * len(cases)
    routes = d.show("routes")
    for prefix, _, by_metric in cases:
        txt = json.dumps(routes[prefix])
        assert ("mtu-metric" in txt) == by_metric, f"{prefix}: {txt}"
    c.close()
