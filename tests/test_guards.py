# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests of fpmd's bypass guards (fpmd/kernel/guard.c).

XDP skips netfilter, rp_filter, policy routing, xfrm and tc egress, and a
redirect into a veth whose peer has neither XDP nor GRO vanishes. Each test
sets one of these up for real inside the lab's r1 namespace, checks that
fpmd notices it (start-up refusal, `show guards`, `show interfaces`) and,
above all, that traffic then behaves as the kernel decides: the kernel's
own counters (nft counters, tc action stats) see the packets, or the
kernel's verdict (drop, prohibit) wins over what XDP would have done.

The lab turns GRO on in h1/h2 so their veths receive redirected frames
(what a real receiver does anyway); test_veth_peer_without_gro builds the
lab without it on purpose.
"""
import json
import os
import select
import subprocess
import textwrap
import time

import pytest

from lib.lab import FPMD, PY, Lab, ping, wait_for, xdp_attached
from lib.lab import fpmd_diag as diag

GUARD_WAIT = 5.0  # the lab runs fpmd with --guard-interval 200


# ---- helpers ---------------------------------------------------------------


def delta(before, after, ifname, reason):
    return after[ifname][reason] - before[ifname][reason]


def iface(d, name):
    return d.show("interfaces")[name]


def flags(d, name):
    return iface(d, name)["flags"]


def guard(d, name):
    return d.show("guards")[name]


def wait_until(d, fn, what, timeout=GUARD_WAIT):
    try:
        return wait_for(fn, timeout=timeout, interval=0.05, what=what)
    except AssertionError as e:
        raise AssertionError(diag(d, e)) from None


def start_ready(lab, extra=()):
    d = lab.fpmd(extra=list(extra))
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    return d


def assert_xdp_forwards(lab, d, v6=False, count=5):
    """h1 -> h2 pings are answered, and r1-eth0 forwarded them by XDP."""
    dst = lab.H2_V6 if v6 else lab.H2_V4
    before = d.counters()
    got = ping(lab.h1, dst, count=count, v6=v6)
    after = d.counters()
    fwd = delta(before, after, "r1-eth0", "forwarded")
    assert got == count and fwd >= count, diag(
        d, f"ping {dst}: {got}/{count} replies, r1-eth0 forwarded +{fwd}",
        after)
    return before, after


def pings_via_kernel(lab, d, reason, ifname="r1-eth0", v6=False, count=5,
                     expect_replies=True):
    """h1 -> h2 pings; none forwarded by XDP on ifname, `reason` counts
    each of them there. Returns (replies, before, after)."""
    dst = lab.H2_V6 if v6 else lab.H2_V4
    before = d.counters()
    got = ping(lab.h1, dst, count=count, v6=v6)
    after = d.counters()
    fwd = delta(before, after, ifname, "forwarded")
    why = delta(before, after, ifname, reason)
    msg = diag(d, f"ping {dst}: {got}/{count} replies; {ifname} "
               f"forwarded +{fwd}, {reason} +{why}", after)
    assert fwd == 0 and why >= count, msg
    if expect_replies:
        assert got == count, msg
    else:
        assert got == 0, msg
    return got, before, after


SENDER = textwrap.dedent("""\
    import sys
    from scapy.all import Ether, IP, IPv6, UDP, Raw, sendp
    iface, dmac, src, dst, dport, count = sys.argv[1:7]
    l3 = IPv6(src=src, dst=dst) if ":" in dst else IP(src=src, dst=dst)
    frames = [Ether(dst=dmac) / l3 / UDP(sport=40000 + i, dport=int(dport))
              / Raw(b"fpmd-guard-%d" % i) for i in range(int(count))]
    sendp(frames, iface=iface, verbose=False)
""")

LISTENER = textwrap.dedent("""\
    import select, socket, sys, time
    addr, port, expect = sys.argv[1:4]
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((addr, int(port)))
    print("ready", flush=True)
    deadline = time.time() + 30  # until told how much longer to wait
    n = 0
    while n < int(expect):
        left = deadline - time.time()
        if left <= 0:
            break
        r, _, _ = select.select([s, sys.stdin], [], [], left)
        if sys.stdin in r:
            line = sys.stdin.readline()
            deadline = time.time() + (float(line) if line.strip() else 0)
        if s in r:
            data, peer = s.recvfrom(2048)
            n += 1
            print("got", peer[0], data.decode(errors="replace"), flush=True)
""")


def script(lab, name, text):
    path = os.path.join(lab.tmp, name)
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(text)
    return path


class UdpListener:
    """A UDP socket bound in a namespace. result(grace) waits until it got
    `expect` datagrams or `grace` more seconds passed, and lists their
    sources."""

    def __init__(self, lab, ns, addr, port, expect):
        path = script(lab, "listen.py", LISTENER)
        self.p = ns.popen(f"{PY} {path} {addr} {port} {expect}",
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.p.stdout], [], [], 10)
        line = self.p.stdout.readline() if ready else ""
        if line.strip() != "ready":
            self.p.kill()
            self.p.wait()
            raise RuntimeError(f"listener did not start: {line!r} "
                               f"{self.p.stderr.read()}")

    def result(self, grace):
        try:
            out, _ = self.p.communicate(f"{grace}\n", timeout=grace + 10)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.p.kill()
            out, _ = self.p.communicate()
        return [line.split()[1] for line in out.splitlines()
                if line.startswith("got ")]

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.communicate()


def send_udp(lab, src, dst, count=3, dport=5555):
    """Frames from h1-eth0 to r1-eth0's MAC with any source address."""
    path = script(lab, "send.py", SENDER)
    lab.h1.run(f"{PY} {path} h1-eth0 {lab.r1.mac('r1-eth0')} {src} {dst} "
               f"{dport} {count}", timeout=30)


def udp_through(lab, d, src, count=3, grace=1.0, port=5555, dst=None):
    """Send `count` datagrams src -> h2 and return (sources h2 got,
    counters before, after). Waits `grace` s after sending for stragglers
    (a delivered datagram takes well under that)."""
    dst = dst or lab.H2_V4
    before = d.counters()
    lst = UdpListener(lab, lab.h2, dst, port, count)
    try:
        send_udp(lab, src, dst, count=count, dport=port)
        got = lst.result(grace)
    finally:
        lst.kill()
    return got, before, d.counters()


def nft_json(ns, what="ruleset"):
    return json.loads(ns.run(f"nft -j list {what}").stdout)["nftables"]


def nft_counter(ns, family, table, name):
    """Packets of a named nft counter object."""
    for o in nft_json(ns, f"counter {family} {table} {name}"):
        if "counter" in o:
            return o["counter"]["packets"]
    raise KeyError(name)


def nft_rule_handle(ns, family, table, chain):
    for o in nft_json(ns, f"chain {family} {table} {chain}"):
        if "rule" in o:
            return o["rule"]["handle"]
    raise KeyError(chain)


FWD_CHAIN = ("nft add table inet filter && "
             "nft 'add chain inet filter forward { type filter hook forward "
             "priority 0; policy accept; }'")
FWD_RULE = ("nft add rule inet filter forward ip saddr 172.16.101.1 "
            "counter accept")
# The same rule counting into a named counter, which outlives the rule.
COUNTED_FWD_RULE = (f"{FWD_CHAIN} && nft add counter inet filter h1fwd && "
                    "nft add rule inet filter forward ip saddr 172.16.101.1 "
                    "counter name h1fwd accept")


# ---- 1. netfilter at start -------------------------------------------------


def refused_start(lab, needle):
    """fpmd must exit non-zero naming `needle`, attach nothing, pin nothing."""
    d = lab.fpmd(wait=False)
    try:
        rc = d.proc.wait(10)
    except subprocess.TimeoutExpired:
        rc = None
    text = d.output() + d.logtext()
    assert rc not in (None, 0), diag(d, f"fpmd did not refuse (rc {rc})")
    assert needle in text, text
    assert "--allow-netfilter-bypass" in text, text
    for ifname in ("r1-eth0", "r1-eth1"):
        assert not xdp_attached(lab.r1, ifname), \
            f"{ifname} keeps an XDP program after the refusal\n{text}"
    assert not os.path.exists(lab.pin) or not os.listdir(lab.pin), \
        f"pins left in {lab.pin}: {os.listdir(lab.pin)}\n{text}"
    assert not os.path.exists(d.sock), text
    return text


# (id, nft commands on r1, the chain the refusal names, why it counts)
NETFILTER_REFUSALS = [
    ("forward-rule", f"{FWD_CHAIN} && {FWD_RULE}",
     "table inet filter chain forward", "1 rule"),
    ("drop-policy",
     "nft add table ip guardfw && nft 'add chain ip guardfw "
     "fwdrop { type filter hook forward priority 0; policy drop; }'",
     "table ip guardfw chain fwdrop", "policy drop"),
    ("nat",
     "nft add table ip nat && nft 'add chain ip nat post { type nat "
     "hook postrouting priority 100; }' && "
     "nft add rule ip nat post oifname r1-eth1 masquerade",
     "table ip nat chain post", "type nat"),
    # An inet-family ingress chain runs at r1-eth0's ingress hook, after
    # the point where XDP has already redirected the packet.
    ("inet-ingress",
     "nft add table inet edge && nft 'add chain inet edge in0 { "
     "type filter hook ingress device r1-eth0 priority 0; }' && "
     "nft add rule inet edge in0 ip saddr 10.0.0.0/8 drop",
     "table inet edge chain in0", "hook ingress"),
]


@pytest.mark.parametrize("setup,chain,why",
                         [c[1:] for c in NETFILTER_REFUSALS],
                         ids=[c[0] for c in NETFILTER_REFUSALS])
def test_netfilter_refuses_start(lab, setup, chain, why):
    lab.r1.run(setup)
    text = refused_start(lab, chain)
    assert why in text, text


def test_iptables_legacy_refuses_start(lab):
    # x_tables (iptables-legacy) is not nftables: read through its own
    # socket options, FORWARD rules, a FORWARD DROP policy and NAT count.
    ipt = "iptables-legacy"
    lab.r1.run(f"{ipt} -A FORWARD -s 172.16.101.1 -j ACCEPT")
    text = refused_start(lab, "iptables-legacy table filter chain FORWARD")
    assert "has rules" in text, text
    lab.r1.run(f"{ipt} -F FORWARD && {ipt} -P FORWARD DROP")
    text = refused_start(lab, "iptables-legacy table filter chain FORWARD")
    assert "policy DROP" in text, text
    lab.r1.run(f"{ipt} -P FORWARD ACCEPT && {ipt} -t nat -A POSTROUTING "
               "-o r1-eth1 -j MASQUERADE")
    refused_start(lab, "iptables-legacy table nat chain POSTROUTING")
    lab.r1.run(f"{ipt} -t nat -F POSTROUTING && "
               "ip6tables-legacy -A FORWARD -s 2001:db8:101::1 -j ACCEPT")
    refused_start(lab, "ip6tables-legacy table filter chain FORWARD")
    # INPUT rules do not act on forwarded traffic.
    lab.r1.run(f"ip6tables-legacy -F FORWARD && {ipt} -A INPUT -j ACCEPT")
    d = start_ready(lab)
    assert guard(d, "netfilter")["state"] == "clear", diag(d)


def test_netfilter_empty_accept_chain_does_not_block(lab):
    # A forward chain with no rules and policy accept, plus an input
    # chain with rules: neither acts on forwarded traffic.
    lab.r1.run(f"{FWD_CHAIN} && nft 'add chain inet filter input {{ type "
               "filter hook input priority 0; policy accept; }' && "
               "nft add rule inet filter input counter accept")
    d = start_ready(lab)
    g = guard(d, "netfilter")
    assert g["state"] == "clear", diag(d, g)
    assert "suspended" not in flags(d, "r1-eth0"), diag(d)
    assert_xdp_forwards(lab, d)


def test_netfilter_allow_bypass(lab):
    lab.r1.run(COUNTED_FWD_RULE)
    d = start_ready(lab, extra=["--allow-netfilter-bypass"])
    g = guard(d, "netfilter")
    assert g["state"] == "bypassed", diag(d, g)
    assert "table inet filter chain forward" in g["detail"], diag(d, g)
    assert "guard netfilter: bypassed" in d.logtext(), diag(d)
    for ifname in ("r1-eth0", "r1-eth1"):
        i = iface(d, ifname)
        assert "suspended" not in i["flags"] and i["txPort"], diag(d, i)
    # What was asked for: forwarded traffic really skips the rule.
    n0 = nft_counter(lab.r1, "inet", "filter", "h1fwd")
    assert_xdp_forwards(lab, d)
    assert nft_counter(lab.r1, "inet", "filter", "h1fwd") == n0, diag(d)


# ---- 2. netfilter appearing at runtime ------------------------------------


def test_netfilter_at_runtime_suspends(lab):
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)

    lab.r1.run(COUNTED_FWD_RULE)
    wait_until(d, lambda: all("suspended" in flags(d, i)
                              for i in ("r1-eth0", "r1-eth1")),
               "interfaces suspended")
    g = guard(d, "netfilter")
    assert g["state"] == "refused", diag(d, g)
    assert "table inet filter chain forward" in g["detail"], diag(d, g)
    for ifname in ("r1-eth0", "r1-eth1"):
        i = iface(d, ifname)
        assert not i["txPort"] and "enabled" not in i["flags"], diag(d, i)

    # The kernel forwards now, and its rule sees every request.
    n0 = nft_counter(lab.r1, "inet", "filter", "h1fwd")
    pings_via_kernel(lab, d, "pass-disabled")
    n1 = nft_counter(lab.r1, "inet", "filter", "h1fwd")
    assert n1 - n0 == 5, diag(d, f"nft counter {n0} -> {n1}")

    # Only the rule goes: an empty accept chain does not count.
    handle = nft_rule_handle(lab.r1, "inet", "filter", "forward")
    lab.r1.run(f"nft delete rule inet filter forward handle {handle}")
    wait_until(d, lambda: not any("suspended" in flags(d, i)
                                  for i in ("r1-eth0", "r1-eth1")),
               "interfaces resumed")
    assert guard(d, "netfilter")["state"] == "clear", diag(d)
    assert_xdp_forwards(lab, d)
    assert nft_counter(lab.r1, "inet", "filter", "h1fwd") == n1, diag(d)


# ---- 3. rp_filter ----------------------------------------------------------


def test_rp_filter_strict(lab):
    d = start_ready(lab)
    lab.r1.sysctl("net.ipv4.conf.all.rp_filter", 1)
    lab.r1.sysctl("net.ipv4.conf.r1-eth0.rp_filter", 1)
    wait_until(d, lambda: "rp-filter-strict" in flags(d, "r1-eth0"),
               "rp-filter-strict on r1-eth0")
    g = guard(d, "rp-filter")
    assert g["state"] == "checked" and "r1-eth0: strict" in g["detail"], \
        diag(d, g)

    # 172.16.102.50 routes out of r1-eth1, not r1-eth0: the kernel drops
    # it, so the fast path must not deliver it either.
    got, b, a = udp_through(lab, d, "172.16.102.50")
    rpf = delta(b, a, "r1-eth0", "pass-rp-filter")
    fwd = delta(b, a, "r1-eth0", "forwarded")
    assert got == [] and rpf == 3 and fwd == 0, diag(
        d, f"spoofed: h2 got {got}, pass-rp-filter +{rpf}, forwarded +{fwd}")

    # The real source passes the strict check and is forwarded by XDP.
    got, b, a = udp_through(lab, d, lab.H1_V4)
    fwd = delta(b, a, "r1-eth0", "forwarded")
    assert got == [lab.H1_V4] * 3 and fwd == 3, diag(
        d, f"normal: h2 got {got}, forwarded +{fwd}")

    # rp_filter is IPv4 only: the kernel forwards the same spoof in IPv6,
    # and so does the fast path.
    src6 = "2001:db8:102::50"
    got, b, a = udp_through(lab, d, src6, dst=lab.H2_V6)
    fwd = delta(b, a, "r1-eth0", "forwarded")
    assert got == [src6] * 3 and fwd == 3, diag(
        d, f"ipv6: h2 got {got}, forwarded +{fwd}")


def test_own_address_as_source_is_martian(lab):
    # rp_filter off: the kernel still drops a packet claiming to come from
    # one of the router's own addresses (martian source), so XDP must not
    # forward it. fpmd lists its addresses from the kernel's local table.
    d = start_ready(lab)
    got, b, a = udp_through(lab, d, lab.R1_V4_1)
    mart = delta(b, a, "r1-eth0", "pass-martian")
    fwd = delta(b, a, "r1-eth0", "forwarded")
    assert got == [] and mart == 3 and fwd == 0, diag(
        d, f"own source: h2 got {got}, pass-martian +{mart}, forwarded +{fwd}")
    # An address added later is learned too.
    lab.r1.run("ip addr add 172.16.102.77/24 dev r1-eth1")
    wait_until(d, lambda: any(r["source"] == "kernel" for r in
                              d.show("routes").get("172.16.102.77/32", [])),
               "172.16.102.77 learned as a local address")
    got, b, a = udp_through(lab, d, "172.16.102.77")
    assert got == [] and delta(b, a, "r1-eth0", "pass-martian") == 3, \
        diag(d, f"new own source: h2 got {got}")
    # Removed again: no longer ours, so forwarded, by XDP (local_v4 and
    # its filter both forget it), while the first address stays martian.
    lab.r1.run("ip addr del 172.16.102.77/24 dev r1-eth1")
    wait_until(d, lambda: not any(r["source"] == "kernel" for r in
                                  d.show("routes").get("172.16.102.77/32",
                                                       [])),
               "172.16.102.77 forgotten as a local address")
    got, b, a = udp_through(lab, d, "172.16.102.77")
    fwd = delta(b, a, "r1-eth0", "forwarded")
    assert got == ["172.16.102.77"] * 3 and fwd == 3, \
        diag(d, f"former own source: h2 got {got}, forwarded +{fwd}")
    got, b, a = udp_through(lab, d, lab.R1_V4_1)
    assert got == [] and delta(b, a, "r1-eth0", "pass-martian") == 3, \
        diag(d, f"own source after a delete: h2 got {got}")


def test_rp_filter_loose(lab):
    d = start_ready(lab)
    lab.r1.sysctl("net.ipv4.conf.all.rp_filter", 2)
    wait_until(d, lambda: "rp-filter-loose" in flags(d, "r1-eth0"),
               "rp-filter-loose on r1-eth0")
    g = guard(d, "rp-filter")
    assert g["state"] == "checked" and "r1-eth0: loose" in g["detail"], \
        diag(d, g)

    # No route back to 10.200.0.1 anywhere: loose mode drops it.
    got, b, a = udp_through(lab, d, "10.200.0.1")
    rpf = delta(b, a, "r1-eth0", "pass-rp-filter")
    fwd = delta(b, a, "r1-eth0", "forwarded")
    assert got == [] and rpf == 3 and fwd == 0, diag(
        d, f"unroutable: h2 got {got}, pass-rp-filter +{rpf}, "
        f"forwarded +{fwd}")

    # A source routed out of another interface passes in loose mode.
    got, b, a = udp_through(lab, d, "172.16.102.50")
    fwd = delta(b, a, "r1-eth0", "forwarded")
    rpf = delta(b, a, "r1-eth0", "pass-rp-filter")
    assert got == ["172.16.102.50"] * 3 and fwd == 3 and rpf == 0, diag(
        d, f"routed elsewhere: h2 got {got}, forwarded +{fwd}, "
        f"pass-rp-filter +{rpf}")


# ---- 3b. sysctls followed by netconf events --------------------------------

NO_POLL = ["--guard-interval", "60000"]  # only an event can explain a change

# (case, sysctl, value, flag on r1-eth0, spoofed source, reason counted):
# with the sysctl set, the kernel drops the spoof; set back to 0, it
# forwards it.
SYSCTL_CASES = [
    ("all", "net.ipv4.conf.all.rp_filter", 1, "rp-filter-strict",
     "172.16.102.50", "pass-rp-filter"),
    ("all-loose", "net.ipv4.conf.all.rp_filter", 2, "rp-filter-loose",
     "10.200.0.1", "pass-rp-filter"),
    ("interface", "net.ipv4.conf.r1-eth0.rp_filter", 1, "rp-filter-strict",
     "172.16.102.50", "pass-rp-filter"),
]
ROUNDS = 3


def applied(d, name, since):
    """The guard's re-check after an event read at or after `since`."""
    g = guard(d, name)
    if g["lastEventNs"] >= since and g["lastAppliedNs"] >= g["lastEventNs"]:
        return g
    return None


def test_sysctls_follow_netconf_events(lab):
    d = start_ready(lab, NO_POLL)
    g = guard(d, "rp-filter")
    assert g["watch"] == "netconf events", diag(d, g)
    for case, key, value, flag, src, reason in SYSCTL_CASES:
        for rnd in range(ROUNDS):
            for on in (True, False):
                t0 = time.time_ns()
                lab.r1.sysctl(key, value if on else 0)
                wait_until(d, lambda: (flag in flags(d, "r1-eth0")) == on,
                           f"{case} round {rnd}: {flag} {on}")
                g = wait_until(d, lambda: applied(d, "rp-filter", t0),
                               f"{case}: rp-filter applied after an event")
                print(f"{case} {key}={value if on else 0}: event -> maps "
                      f"{(g['lastAppliedNs'] - g['lastEventNs']) / 1e3:.0f}"
                      f" us, sysctl write -> maps "
                      f"{(g['lastAppliedNs'] - t0) / 1e6:.1f} ms")
                # The first spoofed packet already meets the kernel's
                # verdict: dropped while on, forwarded (by XDP) when off.
                got, b, a = udp_through(lab, d, src, grace=0.5)
                fwd = delta(b, a, "r1-eth0", "forwarded")
                why = delta(b, a, "r1-eth0", reason)
                msg = diag(d, f"{case} round {rnd} {key}="
                           f"{value if on else 0}: h2 got {got}, "
                           f"forwarded +{fwd}, {reason} +{why}")
                if on:
                    assert got == [] and fwd == 0 and why == 3, msg
                else:
                    assert got == [src] * 3 and fwd == 3, msg


def kernel_rp_filter(lab, ifname):
    """The value the kernel applies: the larger of "all" and ifname's."""
    out = lab.r1.run("cat /proc/sys/net/ipv4/conf/all/rp_filter "
                     f"/proc/sys/net/ipv4/conf/{ifname}/rp_filter").stdout
    return max(int(v) for v in out.split())


def fpmd_rp_filter(d, ifname):
    f = flags(d, ifname)
    return 1 if "rp-filter-strict" in f else 2 if "rp-filter-loose" in f \
        else 0


def test_rp_filter_default_event_rereads_every_interface(lab):
    # "default" reaches only interfaces whose value nobody set (adding an
    # IPv4 address sets them all: r1-eth0 keeps 0, r1-eth2 has no IPv4
    # address and follows), and the kernel announces only "default".
    lab.r1.run("ip link add r1-eth2 type veth peer name r1-peer2 && "
               "ip link set r1-eth2 up && ip link set r1-peer2 up")
    d = start_ready(lab, NO_POLL + ["-i", "r1-eth2"])
    for value in (2, 1, 0, 2, 0):
        t0 = time.time_ns()
        lab.r1.sysctl("net.ipv4.conf.default.rp_filter", value)
        want = {i: kernel_rp_filter(lab, i)
                for i in ("r1-eth0", "r1-eth1", "r1-eth2")}
        assert want["r1-eth2"] == value and want["r1-eth0"] == 0, want
        wait_until(d, lambda: all(fpmd_rp_filter(d, i) == v
                                  for i, v in want.items()),
                   f"default.rp_filter={value}: fpmd shows {want}")
        g = wait_until(d, lambda: applied(d, "rp-filter", t0),
                       "rp-filter applied after the default event")
        print(f"default.rp_filter={value}: event -> maps "
              f"{(g['lastAppliedNs'] - g['lastEventNs']) / 1e3:.0f} us")
        # r1-eth0 still has none: the kernel forwards the spoof, XDP too.
        got, b, a = udp_through(lab, d, "10.200.0.1", grace=0.5)
        fwd = delta(b, a, "r1-eth0", "forwarded")
        assert got == ["10.200.0.1"] * 3 and fwd == 3, diag(
            d, f"default={value}: h2 got {got}, forwarded +{fwd}")


def test_forwarding_follows_netconf_events(lab):
    d = start_ready(lab, NO_POLL)
    # (sysctl, flag on r1-eth0, v6): per interface for IPv4, "all" for
    # IPv6 (which re-announces every interface).
    for key, flag, v6 in (("net.ipv4.conf.r1-eth0.forwarding",
                           "forwarding-ipv4", False),
                          ("net.ipv6.conf.all.forwarding",
                           "forwarding-ipv6", True)):
        for rnd in range(ROUNDS):
            t0 = time.time_ns()
            lab.r1.sysctl(key, 0)
            wait_until(d, lambda: flag not in flags(d, "r1-eth0"),
                       f"{key}=0 round {rnd}")
            g = wait_until(d, lambda: applied(d, "forwarding", t0),
                           f"{key}: forwarding applied after an event")
            print(f"{key}=0: event -> maps "
                  f"{(g['lastAppliedNs'] - g['lastEventNs']) / 1e3:.0f} us")
            pings_via_kernel(lab, d, "pass-disabled", v6=v6, count=2,
                             expect_replies=False)
            lab.r1.sysctl(key, 1)
            wait_until(d, lambda: flag in flags(d, "r1-eth0"),
                       f"{key}=1 round {rnd}")
            assert_xdp_forwards(lab, d, v6=v6, count=2)


def test_disable_ipv6_follows_its_address_events(lab):
    """disable_ipv6 has no netconf event, but turning it on removes the
    interface's IPv6 addresses: with the poll out of the way, fpmd must
    stop forwarding IPv6 received there (ipv6_rcv drops it all) at once,
    and resume when it is turned off again."""
    d = start_ready(lab, NO_POLL)
    assert_xdp_forwards(lab, d, v6=True, count=2)
    for rnd in range(2):
        lab.r1.sysctl("net.ipv6.conf.r1-eth0.disable_ipv6", 1)
        wait_until(d, lambda: "forwarding-ipv6" not in flags(d, "r1-eth0"),
                   f"disable_ipv6=1 round {rnd}")
        pings_via_kernel(lab, d, "pass-disabled", v6=True, count=2,
                         expect_replies=False)
        lab.r1.sysctl("net.ipv6.conf.r1-eth0.disable_ipv6", 0)
        # The kernel forgets configured addresses with IPv6; put r1's back.
        lab.r1.run(f"ip -6 addr add {lab.R1_V6_0}/64 dev r1-eth0 nodad")
        wait_until(d, lambda: "forwarding-ipv6" in flags(d, "r1-eth0"),
                   f"disable_ipv6=0 round {rnd}")
        lab.warm_kernel_neighbors()
        assert_xdp_forwards(lab, d, v6=True, count=2)


def test_ip_forward_use_pmtu_takes_ipv4_to_the_kernel(lab):
    """With net.ipv4.ip_forward_use_pmtu the kernel forwards IPv4 by path
    MTUs it learnt, which fpmd cannot see: IPv4 goes to the kernel (polled:
    a global sysctl with no event), IPv6 stays in XDP."""
    d = start_ready(lab)
    assert_xdp_forwards(lab, d, count=2)
    lab.r1.sysctl("net.ipv4.ip_forward_use_pmtu", 1)
    wait_until(d, lambda: "kernel-path-ipv4" in flags(d, "r1-eth0"),
               "ip_forward_use_pmtu=1")
    assert "ip_forward_use_pmtu=1: IPv4 takes the kernel path" in \
        d.logtext()
    pings_via_kernel(lab, d, "pass-policy", count=2)
    assert_xdp_forwards(lab, d, v6=True, count=2)
    lab.r1.sysctl("net.ipv4.ip_forward_use_pmtu", 0)
    wait_until(d, lambda: "kernel-path-ipv4" not in flags(d, "r1-eth0"),
               "ip_forward_use_pmtu=0")
    assert_xdp_forwards(lab, d, count=2)


# What else a guard reads, changed with the poll out of the way: each is
# followed by its own notifications (rules and tc on rtnetlink, xfrm
# policies on NETLINK_XFRM, the ruleset on nfnetlink).
EVENT_CASES = [
    ("policy-rules", "ip rule add from 172.16.101.1 lookup 100",
     "ip rule del from 172.16.101.1 lookup 100",
     lambda d: "kernel-path-ipv4" in flags(d, "r1-eth0")),
    ("xfrm", "ip xfrm policy add src 172.16.101.0/24 dst 172.16.102.0/24 "
     "dir fwd action allow", "ip xfrm policy deleteall",
     lambda d: "kernel-path-ipv4" in flags(d, "r1-eth0")),
    ("tc-ingress", "tc qdisc add dev r1-eth0 clsact && tc filter add dev "
     "r1-eth0 ingress protocol ip pref 5 u32 match u32 0 0",
     "tc qdisc del dev r1-eth0 clsact",
     lambda d: "kernel-path-ipv4" in flags(d, "r1-eth0")),
    ("tc-egress", "tc qdisc add dev r1-eth1 clsact && tc filter add dev "
     "r1-eth1 egress protocol ip pref 10 u32 match u32 0 0",
     "tc qdisc del dev r1-eth1 clsact",
     lambda d: not iface(d, "r1-eth1")["txPort"]),
    ("netfilter", COUNTED_FWD_RULE, "nft delete table inet filter",
     lambda d: "suspended" in flags(d, "r1-eth0")),
]


@pytest.mark.parametrize("name,add,remove,active", EVENT_CASES,
                         ids=[c[0] for c in EVENT_CASES])
def test_guard_follows_events(lab, name, add, remove, active):
    d = start_ready(lab, NO_POLL)
    assert not active(d), diag(d)
    assert guard(d, name)["watch"] != "poll", diag(d)
    for step, cmd, want in (("add", add, True), ("remove", remove, False)):
        t0 = time.time_ns()
        lab.r1.run(cmd)
        wait_until(d, lambda: active(d) == want, f"{name} {step}")
        g = wait_until(d, lambda: applied(d, name, t0),
                       f"{name}: applied after an event")
        print(f"{name} {step}: event -> maps "
              f"{(g['lastAppliedNs'] - g['lastEventNs']) / 1e6:.1f} ms")
    assert_xdp_forwards(lab, d, count=2)


# ---- 4. policy routing -----------------------------------------------------


def test_policy_rules(lab):
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)
    r1 = lab.r1
    r1.run("ip route add 172.16.102.0/24 dev r1-eth1 table 100 && "
           "ip route add 172.16.101.0/24 dev r1-eth0 table 100 && "
           "ip rule add from 172.16.101.1 lookup 100")
    wait_until(d, lambda: "kernel-path-ipv4" in flags(d, "r1-eth0"),
               "kernel-path-ipv4 on r1-eth0")
    g = guard(d, "policy-rules")
    assert g["state"] == "kernel-path" and "table 100" in g["detail"], \
        diag(d, g)
    assert "kernel-path-ipv6" not in flags(d, "r1-eth0"), diag(d)

    # IPv4 goes through the kernel, which still answers ...
    pings_via_kernel(lab, d, "pass-policy")
    # ... and whatever table 100 says wins, even a prohibit route that
    # the fast path's own table knows nothing about.
    r1.run("ip route replace prohibit 172.16.102.0/24 table 100")
    pings_via_kernel(lab, d, "pass-policy", count=3, expect_replies=False)
    r1.run("ip route replace 172.16.102.0/24 dev r1-eth1 table 100")
    # IPv6 has no such rule: still the fast path.
    assert_xdp_forwards(lab, d, v6=True)

    r1.run("ip rule del from 172.16.101.1 lookup 100")
    wait_until(d, lambda: "kernel-path-ipv4" not in flags(d, "r1-eth0"),
               "kernel-path-ipv4 gone")
    assert guard(d, "policy-rules")["state"] == "clear", diag(d)
    assert_xdp_forwards(lab, d)

    # A rule bound to one input interface affects only that interface.
    r1.run("ip rule add iif r1-eth1 lookup 100")
    wait_until(d, lambda: "kernel-path-ipv4" in flags(d, "r1-eth1"),
               "kernel-path-ipv4 on r1-eth1")
    assert "kernel-path-ipv4" not in flags(d, "r1-eth0"), diag(d)
    b, a = assert_xdp_forwards(lab, d)  # requests: XDP on r1-eth0
    pol = delta(b, a, "r1-eth1", "pass-policy")
    fwd = delta(b, a, "r1-eth1", "forwarded")
    assert pol >= 5 and fwd == 0, diag(
        d, f"replies on r1-eth1: pass-policy +{pol}, forwarded +{fwd}")
    r1.run("ip rule del iif r1-eth1 lookup 100")
    wait_until(d, lambda: "kernel-path-ipv4" not in flags(d, "r1-eth1"),
               "kernel-path-ipv4 gone from r1-eth1")

    # IPv6 rules are their own: they move IPv6 only.
    r1.run("ip -6 route add prohibit 2001:db8:102::/64 table 100 && "
           "ip -6 rule add from 2001:db8:101::1 lookup 100")
    wait_until(d, lambda: "kernel-path-ipv6" in flags(d, "r1-eth0"),
               "kernel-path-ipv6 on r1-eth0")
    assert "kernel-path-ipv4" not in flags(d, "r1-eth0"), diag(d)
    pings_via_kernel(lab, d, "pass-policy", v6=True, count=3,
                     expect_replies=False)
    assert_xdp_forwards(lab, d)


# ---- 5. xfrm ---------------------------------------------------------------


def test_xfrm_policy(lab):
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)
    r1 = lab.r1
    sel = "src 172.16.101.0/24 dst 172.16.102.0/24 dir fwd"
    r1.run(f"ip xfrm policy add {sel} action allow")
    wait_until(d, lambda: "kernel-path-ipv4" in flags(d, "r1-eth0"),
               "kernel-path-ipv4 on r1-eth0")
    g = guard(d, "xfrm")
    assert g["state"] == "kernel-path" and "1 IPv4" in g["detail"], \
        diag(d, g)
    assert "kernel-path-ipv6" not in flags(d, "r1-eth0"), diag(d)
    pings_via_kernel(lab, d, "pass-policy")
    # The kernel's IPsec decision wins: a blocking policy drops them.
    r1.run(f"ip xfrm policy update {sel} action block")
    pings_via_kernel(lab, d, "pass-policy", count=3, expect_replies=False)
    assert_xdp_forwards(lab, d, v6=True)

    r1.run(f"ip xfrm policy delete {sel}")
    wait_until(d, lambda: "kernel-path-ipv4" not in flags(d, "r1-eth0"),
               "kernel-path-ipv4 gone")
    assert guard(d, "xfrm")["state"] == "clear", diag(d)
    assert_xdp_forwards(lab, d)


# ---- 6. tc egress ----------------------------------------------------------


def tc_action_packets(ns, ifname):
    """Packets seen by the actions of ifname's egress filters."""
    n = 0
    out = ns.run(f"tc -s -j filter show dev {ifname} egress").stdout
    for f in json.loads(out or "[]"):
        for act in f.get("options", {}).get("actions", []):
            n += act.get("stats", {}).get("packets", 0)
    return n


def test_tc_egress(lab):
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)
    r1 = lab.r1
    # This kernel has no cls_matchall and no act_gact: a u32 filter that
    # matches everything, with no action, changes nothing on the wire.
    r1.run("tc qdisc add dev r1-eth1 clsact && tc filter add dev r1-eth1 "
           "egress protocol ip pref 10 u32 match u32 0 0")
    wait_until(d, lambda: not iface(d, "r1-eth1")["txPort"],
               "r1-eth1 no longer a tx port")
    i = iface(d, "r1-eth1")
    assert "tc egress filter u32" in i["txReason"], diag(d, i)
    g = guard(d, "tc-egress")
    assert g["state"] == "kernel-path" and "r1-eth1" in g["detail"], \
        diag(d, g)
    assert iface(d, "r1-eth0")["txPort"], diag(d)
    pings_via_kernel(lab, d, "pass-egress-kernel")

    # The filter really runs: one that drops h2's traffic (a mirred
    # redirect to a device that is down, which the kernel drops) stops
    # the pings, and its action counts them.
    r1.run("ip link add fpsink0 type veth peer name fpsink1 && "
           "tc filter add dev r1-eth1 egress protocol ip pref 5 u32 "
           "match ip dst 172.16.102.1/32 "
           "action mirred egress redirect dev fpsink0")
    seen0 = tc_action_packets(r1, "r1-eth1")
    pings_via_kernel(lab, d, "pass-egress-kernel", count=3,
                     expect_replies=False)
    seen1 = tc_action_packets(r1, "r1-eth1")
    assert seen1 - seen0 >= 3, diag(d, f"tc action packets {seen0} -> "
                                    f"{seen1}")

    r1.run("tc qdisc del dev r1-eth1 clsact")
    wait_until(d, lambda: iface(d, "r1-eth1")["txPort"],
               "r1-eth1 a tx port again")
    assert guard(d, "tc-egress")["state"] == "clear", diag(d)
    b, a = assert_xdp_forwards(lab, d)
    assert delta(b, a, "r1-eth1", "tx") >= 5, diag(d, a)

    # A shaping root qdisc is bypassed just the same.
    r1.run("tc qdisc add dev r1-eth1 root tbf rate 100mbit burst 32kb "
           "latency 50ms")
    wait_until(d, lambda: not iface(d, "r1-eth1")["txPort"],
               "r1-eth1 not a tx port under tbf")
    i = iface(d, "r1-eth1")
    assert "root qdisc tbf" in i["txReason"], diag(d, i)
    pings_via_kernel(lab, d, "pass-egress-kernel")
    r1.run("tc qdisc del dev r1-eth1 root")
    wait_until(d, lambda: iface(d, "r1-eth1")["txPort"],
               "r1-eth1 a tx port after tbf")
    assert_xdp_forwards(lab, d)


def test_tc_egress_child_qdisc(lab):
    # A NIC's default root is mq, which only queues; a shaper put under
    # it acts on that queue just as a root one would.
    d = start_ready(lab)
    lab.r1.run("ethtool -L r1-eth1 tx 2 && "
               "tc qdisc add dev r1-eth1 root handle 1: mq && "
               "tc qdisc add dev r1-eth1 parent 1:1 tbf rate 100mbit "
               "burst 32kb latency 50ms && "
               "tc qdisc add dev r1-eth1 parent 1:2 tbf rate 100mbit "
               "burst 32kb latency 50ms")
    wait_until(d, lambda: not iface(d, "r1-eth1")["txPort"],
               "r1-eth1 not a tx port with tbf under mq")
    i = iface(d, "r1-eth1")
    assert "qdisc tbf" in i["txReason"], diag(d, i)
    pings_via_kernel(lab, d, "pass-egress-kernel")
    lab.r1.run("tc qdisc del dev r1-eth1 root")
    wait_until(d, lambda: iface(d, "r1-eth1")["txPort"],
               "r1-eth1 a tx port again")
    assert_xdp_forwards(lab, d)


# A tcx program (kernel 6.6+, bpf_mprog) is tc egress too, but no tc
# filter: neither `tc filter show` nor this bpftool lists it. Attached with
# BPF_PROG_ATTACH it stays on the device until detached; the program is
# "r0 = RET; exit".
TCX = textwrap.dedent("""\
    import ctypes, os, platform, struct, sys
    libc = ctypes.CDLL(None, use_errno=True)
    SYS_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
    PROG_LOAD, PROG_ATTACH, PROG_DETACH = 5, 8, 9
    PROG_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD = 13, 15
    TCX_EGRESS, SCHED_CLS = 47, 3

    def bpf(cmd, attr):
        buf = ctypes.create_string_buffer(attr, 128)
        ret = libc.syscall(SYS_BPF, cmd, buf, 128)
        if ret < 0:
            e = ctypes.get_errno()
            print(f"bpf({cmd}): {os.strerror(e)}", file=sys.stderr)
            sys.exit(77 if cmd == PROG_ATTACH and e == 22 else 1)  # no tcx
        return ret

    op, ifname, arg = sys.argv[1:4]
    ifindex = int(open(f"/sys/class/net/{ifname}/ifindex").read())
    if op == "attach":
        insns = ctypes.create_string_buffer(
            struct.pack("<BBhi", 0xb7, 0, 0, int(arg))  # r0 = RET
            + struct.pack("<BBhi", 0x95, 0, 0, 0), 16)  # exit
        lic = ctypes.create_string_buffer(b"GPL")
        fd = bpf(PROG_LOAD, struct.pack(
            "<IIQQIIQII16sII", SCHED_CLS, 2, ctypes.addressof(insns),
            ctypes.addressof(lic), 0, 0, 0, 0, 0, b"fpmd_test_tcx", 0,
            TCX_EGRESS))
        bpf(PROG_ATTACH, struct.pack("<IIII", ifindex, fd, TCX_EGRESS, 0))
        info = ctypes.create_string_buffer(256)
        bpf(OBJ_GET_INFO_BY_FD, struct.pack("<IIQ", fd, 256,
                                            ctypes.addressof(info)))
        print(struct.unpack_from("<I", info.raw, 4)[0])  # prog id
    else:
        fd = bpf(PROG_GET_FD_BY_ID, struct.pack("<I", int(arg)))
        bpf(PROG_DETACH, struct.pack("<IIII", ifindex, fd, TCX_EGRESS, 0))
""")

TCX_DROP = 2  # TCX_DROP == TC_ACT_SHOT


def test_tc_egress_tcx(lab):
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)
    path = script(lab, "tcx.py", TCX)
    r = lab.r1.run(f"{PY} {path} attach r1-eth1 {TCX_DROP}", check=False)
    if r.returncode == 77:
        pytest.skip("this kernel has no tcx (BPF_TCX_EGRESS)")
    assert r.returncode == 0, r.stderr
    prog = r.stdout.strip()
    wait_until(d, lambda: not iface(d, "r1-eth1")["txPort"],
               "r1-eth1 not a tx port with a tcx egress program")
    i = iface(d, "r1-eth1")
    assert "tcx egress" in i["txReason"], diag(d, i)
    g = guard(d, "tc-egress")
    assert g["state"] == "kernel-path" and "r1-eth1" in g["detail"], \
        diag(d, g)
    # The program drops everything leaving r1-eth1; the kernel path
    # honours it where an XDP redirect would not.
    pings_via_kernel(lab, d, "pass-egress-kernel", count=3,
                     expect_replies=False)
    lab.r1.run(f"{PY} {path} detach r1-eth1 {prog}")
    wait_until(d, lambda: iface(d, "r1-eth1")["txPort"],
               "r1-eth1 a tx port once the tcx program is gone")
    assert_xdp_forwards(lab, d)


def test_tc_ingress_sends_interface_to_kernel(lab):
    # XDP runs before tc ingress: a filter there would be bypassed, so the
    # interface's traffic must go to the kernel and meet the filter.
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)
    lab.r1.run("ip link add fpsink0 type veth peer name fpsink1 && "
               "tc qdisc add dev r1-eth0 clsact && "
               "tc filter add dev r1-eth0 ingress protocol ip pref 5 u32 "
               "match ip dst 172.16.102.1/32 "
               "action mirred egress redirect dev fpsink0")
    wait_until(d, lambda: "kernel-path-ipv4" in iface(d, "r1-eth0")["flags"],
               "r1-eth0 on the kernel path for its tc ingress filter")
    g = guard(d, "tc-ingress")
    assert g["state"] == "kernel-path" and "r1-eth0" in g["detail"], \
        diag(d, g)
    assert "kernel-path-ipv4" not in iface(d, "r1-eth1")["flags"], diag(d)
    before = d.counters()
    got = ping(lab.h1, lab.H2_V4, count=3)
    after = d.counters()
    assert got == 0, diag(d, f"{got}/3 pings got past a dropping tc "
                          "ingress filter")
    assert delta(before, after, "r1-eth0", "pass-policy") >= 3, diag(d, after)
    assert delta(before, after, "r1-eth0", "forwarded") == 0, diag(d, after)

    lab.r1.run("tc qdisc del dev r1-eth0 clsact")
    wait_until(d, lambda: "kernel-path-ipv4" not in
               iface(d, "r1-eth0")["flags"], "r1-eth0 back on XDP")
    assert guard(d, "tc-ingress")["state"] == "clear", diag(d)
    assert_xdp_forwards(lab, d)


# ---- 7. veth peer without XDP or GRO --------------------------------------


def test_veth_peer_without_gro():
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    lab = Lab(receiver_gro=False)
    try:
        for ns, ifname in ((lab.h1, "h1-eth0"), (lab.h2, "h2-eth0")):
            out = ns.run(f"ethtool -k {ifname}").stdout
            assert "generic-receive-offload: off" in out, out
        # Without the container path (doc/containers.md), which would
        # serve these egresses with its tc program (tests/test_tcpath.py).
        d = start_ready(lab, ["--no-container-path"])
        i = iface(d, "r1-eth1")
        assert not i["txPort"], diag(d, i)
        assert "neither XDP nor GRO" in i["txReason"], diag(d, i)
        g = guard(d, "veth-peer")
        assert g["state"] == "kernel-path" and "h2-eth0" in g["detail"], \
            diag(d, g)
        # Nothing vanishes: the kernel delivers what XDP could not.
        pings_via_kernel(lab, d, "pass-egress-kernel")

        lab.h2.run("ethtool -K h2-eth0 gro on >/dev/null")
        wait_until(d, lambda: iface(d, "r1-eth1")["txPort"],
                   "r1-eth1 a tx port once h2-eth0 has GRO")
        assert not iface(d, "r1-eth0")["txPort"], diag(d)  # h1: still off
        b, a = assert_xdp_forwards(lab, d)
        assert delta(b, a, "r1-eth1", "pass-egress-kernel") >= 5, diag(d, a)
    finally:
        lab.cleanup()


# ---- 8. forwarding sysctl --------------------------------------------------


def test_forwarding_sysctl(lab):
    d = start_ready(lab)
    assert_xdp_forwards(lab, d)
    lab.r1.sysctl("net.ipv4.conf.r1-eth0.forwarding", 0)
    wait_until(d, lambda: "forwarding-ipv4" not in flags(d, "r1-eth0"),
               "forwarding-ipv4 off on r1-eth0")
    g = guard(d, "forwarding")
    assert g["state"] == "kernel-path" and "r1-eth0: ipv4 off" in \
        g["detail"], diag(d, g)
    assert "forwarding-ipv4" in flags(d, "r1-eth1"), diag(d)
    # The kernel does not forward what arrives on r1-eth0 now.
    pings_via_kernel(lab, d, "pass-disabled", count=3, expect_replies=False)
    assert_xdp_forwards(lab, d, v6=True)

    lab.r1.sysctl("net.ipv4.conf.r1-eth0.forwarding", 1)
    wait_until(d, lambda: "forwarding-ipv4" in flags(d, "r1-eth0"),
               "forwarding-ipv4 back on r1-eth0")
    assert guard(d, "forwarding")["state"] == "clear", diag(d)
    assert_xdp_forwards(lab, d)

    # IPv6 forwarding is one switch for the whole namespace.
    lab.r1.sysctl("net.ipv6.conf.all.forwarding", 0)
    wait_until(d, lambda: "forwarding-ipv6" not in flags(d, "r1-eth0"),
               "forwarding-ipv6 off")
    pings_via_kernel(lab, d, "pass-disabled", v6=True, count=3,
                     expect_replies=False)
    assert_xdp_forwards(lab, d)
    lab.r1.sysctl("net.ipv6.conf.all.forwarding", 1)
    wait_until(d, lambda: "forwarding-ipv6" in flags(d, "r1-eth0"),
               "forwarding-ipv6 back on")
    assert_xdp_forwards(lab, d, v6=True)
