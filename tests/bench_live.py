# SPDX-License-Identifier: GPL-2.0-or-later
"""Live forwarding benchmark: kernel, XDP bpf_fib_lookup reference, fpmd
(IPv4 DIR-24-8 and IPv4 DXR), redirect floor; and scaling over two cores.

Run by hand as root (not collected by pytest: no test_ name):

    /usr/bin/python3 tests/bench_live.py            # IPv4 10..1M, IPv6 10..100k
    /usr/bin/python3 tests/bench_live.py --quick    # IPv4 10, 100k; IPv6 10, 10k
    /usr/bin/python3 tests/bench_live.py --scale-rounds 0   # no scaling runs
    /usr/bin/python3 tests/bench_live.py --scale-routers fpmd,dxr,floor
    FPMD_BUILDDIR=build-x /usr/bin/python3 tests/bench_live.py

Topology (namespaces of its own, named from the pid), one router per
configuration so that all hold the same tables at once and the runs can
be interleaved:

    gen ──veth── rk  (a) kernel forwarding, no XDP ──veth── sink
        ──veth── rr  (b) bpf/fpmd_ref.bpf.o: fpmd's XDP program with
                         bpf_fib_lookup() over the kernel FIB ──veth──
        ──veth── rf  (c) fpmd --netns rf -i r-in -i r-out (its default
                         tables: IPv4 DIR-24-8) ──veth──
        ──veth── rd  (e) "dxr": fpmd started the same way with
                         --ipv4-lookup dxr (IPv4 in DXR, the compact
                         table; IPv6 the same as (c), so its IPv6 rows
                         are a second sample of fpmd's) ──veth──
        ──veth── rx  (d) the redirect floor, tests/xdp_floor.bpf.c
                         (trafficgen floor): both MACs rewritten, one
                         devmap redirect to r-out; no parsing beyond
                         Ethernet, no lookup, no routes ──veth──

Router k's networks are 10.k.0.0/24 and fd00:k:0::/64 on r-in (gen's
side), 10.k.1.0/24 and fd00:k:1::/64 on r-out (the sink's side); k is 1
for rk, 2 rr, 3 rf, 4 rx, 5 rd. Each fpmd checks at start that it runs
the table asked for (its "route lookup:" log line and fpmctl show state).

Every veth has 2 queues (veth picks the receive queue by the sending
CPU); gen's and sink's veths have tx checksumming off, as lab hosts
(with it on, fpmd would serve r-in by its tc path, not XDP).

- gen: tests/trafficgen send, BPF_PROG_TEST_RUN live frames (XDP_TX out of
  gen's veth to the router's MAC), routable UDP with correct checksums,
  the header rewritten for every frame, as fast as one core goes, for
  --seconds. Destinations: "hot", one address (in the first route, so the
  same at every size), or "spread", taken in turn from a list with one
  random host in a random route for every route of the table (at least
  1024, a power of two, at most 2^20), so the whole table is used, or
  "zipf", a list as long whose routes are drawn by popularity as real
  traffic's are: the k-th most popular route with probability ~ 1/k
  (ZIPF_S = 1; popularity ranks a seeded shuffle of the routes). At 1M
  routes the top 1000 routes take ~half the packets, a few cache lines
  stay hot, the rest miss as in spread.
- routes: the same deterministic BGP-like set (gen_routes: IPv4 ~60%
  /24, no longer than /24; IPv6 ~50% /48) in all four kernel FIBs
  (rtnetlink, 1024 per sendmsg) and, for (c) and (e), in fpmd too, fed
  over FPM (netlink RTM_NEWROUTE in FPM frames, as zebra's dplane_fpm_nl
  sends them, to the FPM port in rf and rd). Nexthops by
  tests/tablegen.h's rules, as bench_lookup's tables, so that a compressed
  FIB cannot collapse the table into a few ranges: every route via one of
  64 gateways or, one route in 16, via one of 8 ECMP groups of 2-4 of them
  (RTA_MULTIPATH, as zebra sends ECMP without nexthop objects; the
  members are tablegen's tg_group_member). The choice is a hash of the
  route's index (route_nhs), the same for every kernel and fpmd. The 64
  gateways of router k are 10.k.1.100+j and fd00:k:1::100+j (hex), on
  r-out, each a permanent neighbor with a MAC of its own
  (02:00:00:k:00:j) on every FIB router (fpmd learns them from its
  namespace's kernel); the sink counts frames whatever their destination
  MAC. Tables grow by steps (IPv4 10, 10k, 100k, 1M; IPv6 10, 10k, 100k:
  1M IPv6 routes take too long to load into four kernels and two fpmd
  here) and every step is measured. (Before the 64 gateways, every route
  went via one gateway, the sink: results in doc/benchmarks.md say which.)
- sink: tests/trafficgen sink, an XDP program on each sink veth counting
  the benchmark's UDP frames and dropping everything. A veth only receives
  frames that XDP redirects into it when its peer has an XDP program (or
  GRO), and counting in XDP keeps the sink's IP stack out of the result.
- the routers' ingress veths have GRO on: without XDP or GRO a veth drops
  the XDP_TX frames of the generator (rk has no XDP; a real NIC always
  delivers). rp_filter is off on all routers (the kernel would do a second
  lookup per packet), forwarding on.

Within one step every (router, family, destinations) run is repeated
--rounds times, in a shuffled order per round (the machine is shared and
noisy). Each run: delivered = packets the sink counted during the run,
Mpps per core = delivered / the CPU time of the generator's loop (and by
the clock: / its wall time), loss = 1 - delivered / sent. Each run also
checks who forwarded: the kernel's forwarding counter on every XDP router
(must stay flat), fpmd's `forwarded` counter on rf and rd; a run where
the fast path left more than 1% to the kernel is flagged. The generator, router and sink of a run
share one core (the generator's softirq runs the veth NAPI of the router
and of the sink inline), so Mpps is what one core does with all three;
ns/packet = 1000 / Mpps.

Scaling (after the last step, at the largest IPv4 table, spread and
hot, --scale-rounds rounds, interleaved): every router (--scale-routers
picks some) with one
generator pinned to CPU 0, and with one generator pinned to each of two
CPUs, loaded first and started at one instant (trafficgen --start-at).
Total delivered / wall time of the window (first start to last end), and
by CPU time (per CPU: what the sink counted on it / the loop time of that
CPU's generator, summed), ratios two/one; the sink's and each fpmd's
forwarded counters per CPU (its per-CPU stats map, read with bpftool)
show who forwarded where.

Prints a table (medians over the rounds), the ratios fpmd/kernel,
fpmd/reference, fpmd/floor and dxr/floor, the targets, the scaling table,
and writes a PNG of ns/packet against table size (--plot, default
bench_live.png) and the raw runs (--json: {"runs": [...], "scaling":
[...]}).

Everything it creates (namespaces, both fpmd, the sink and reference
processes, pins, temporary files) is removed on every exit path, Ctrl-C and
SIGTERM included; child processes are stopped through their own handles.
"""
import argparse
import contextlib
import ctypes
import itertools
import json
import os
import random
import re
import socket
import statistics
import struct
import subprocess
import sys
import time

from lib import routefile
from lib.routefile import GROUP_ONE_IN, GROUPS, NEXTHOPS, splitmix64
from lib.runner import (BenchBase, Child, guarded, keep_going, log,
                        read_text, run, stop_all)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.path.abspath(os.environ.get("FPMD_BUILDDIR",
                                          os.path.join(REPO, "build")))
FPMD = os.path.join(BUILDDIR, "fpmd", "fpmd")
FPMCTL = os.path.join(BUILDDIR, "fpmd", "fpmctl")
TRAFFICGEN = os.path.join(BUILDDIR, "tests", "trafficgen")

ROUTERS = ("kernel", "ref", "fpmd", "dxr", "floor")
NS_OF = {"kernel": "rk", "ref": "rr", "fpmd": "rf", "dxr": "rd",
         "floor": "rx"}
NET_OF = {"kernel": 1, "ref": 2, "fpmd": 3, "floor": 4,
          "dxr": 5}  # 10.N.x.x, fd00:N:x::
FIB_ROUTERS = ("kernel", "ref", "fpmd", "dxr")  # hold the routes (floor: none)
# The fpmd daemons: router -> its IPv4 lookup table (--ipv4-lookup).
DAEMONS = {"fpmd": "dir-24-8", "dxr": "dxr"}
QUEUES = 2  # veth queues: veth picks the receive queue by the sending CPU
FPM_PORT = 2620

RTM_NEWROUTE = 24
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE, NLM_F_REPLACE = \
    1, 4, 0x200, 0x400, 0x100
NLMSG_ERROR = 2
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_MULTIPATH = 1, 4, 5, 9
RTPROT_STATIC, RT_TABLE_MAIN, RTN_UNICAST = 4, 254, 1
CLONE_NEWNET = 0x40000000


def fpmd_reasons():
    """FPMD_R_MAX, from bpf/fpmd_maps.h (a stats key is slot * it +
    reason; FORWARDED is 0)."""
    with open(os.path.join(REPO, "bpf", "fpmd_maps.h")) as f:
        text = f.read()
    body = text[text.index("enum fpmd_reason {"):]
    body = body[:body.index("FPMD_R_MAX")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return len(re.findall(r"\bFPMD_R_\w+", body))


def nsrun(ns, *cmd, check=True):
    return run(["ip", "netns", "exec", ns] + list(cmd), check=check)


_libc = ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def in_netns(name):
    """Sockets created inside stay in that namespace after we leave it."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET):
            e = ctypes.get_errno()
            raise OSError(e, f"setns {name}: {os.strerror(e)}")
        yield
    finally:
        if _libc.setns(home, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), "setns back home")
        os.close(fd)
        os.close(home)


# --------------------------------------------------------------------------
# Routes: deterministic, BGP-like, unique, away from the lab's subnets.

V4_BAD = [(0x00000000, 8), (0x0A000000, 8), (0x64400000, 10),
          (0x7F000000, 8), (0xA9FE0000, 16), (0xAC100000, 12),
          (0xC0A80000, 16), (0xE0000000, 3)]
# (prefix length, weight): ~60% /24 for IPv4, ~50% /48 for IPv6.
V4_MIX = [(24, 6000), (23, 900), (22, 1100), (21, 500), (20, 450),
          (19, 250), (18, 130), (17, 70), (16, 100), (15, 60), (14, 50),
          (13, 40), (12, 30), (11, 20), (10, 10), (9, 10)]
V6_MIX = [(48, 5000), (32, 1200), (33, 100), (34, 100), (35, 100),
          (36, 300), (40, 600), (44, 800), (46, 200), (47, 200), (56, 600),
          (64, 800)]


def gen_routes(af, n, seed=4242):
    """[(addr int, plen)], shuffled; the first k are the table of size k."""
    rng = random.Random(seed + af)
    lens = [l for l, _ in (V4_MIX if af == 4 else V6_MIX)]
    weights = [w for _, w in (V4_MIX if af == 4 else V6_MIX)]
    seen = set()
    routes = []
    bits = 32 if af == 4 else 128
    while len(routes) < n:
        for plen in rng.choices(lens, weights, k=65536):
            if af == 4:
                addr = rng.getrandbits(32)
                if any((addr >> (32 - bl)) == (ba >> (32 - bl))
                       for ba, bl in V4_BAD):
                    continue
            else:
                addr = (0x2 << 125) | rng.getrandbits(125)  # 2000::/3
            addr &= ((1 << bits) - 1) ^ ((1 << (bits - plen)) - 1)
            key = (addr, plen)
            if key in seen:
                continue
            seen.add(key)
            routes.append(key)
            if len(routes) == n:
                break
    return routes


def addr_bytes(af, a):
    return a.to_bytes(4 if af == 4 else 16, "big")


def host_in(af, route, rng):
    addr, plen = route
    bits = 32 if af == 4 else 128
    return addr | (rng.getrandbits(bits - plen) if plen < bits else 0)


ZIPF_S = 1.0  # the "zipf" pattern's exponent


def write_dsts(path, af, routes, n, seed, zipf=False):
    """A power of two of random hosts, about one per route: each in a
    random route ("spread"), or ("zipf") in a route drawn by popularity,
    P(k-th most popular) ~ 1 / k^ZIPF_S, the ranks a seeded shuffle of the
    routes (popularity has nothing to do with where a prefix is)."""
    rng = random.Random(seed)
    count = 1024
    while count < n and count < (1 << 20):
        count <<= 1
    if zipf:
        rank = list(range(n))
        rng.shuffle(rank)
        cum = list(itertools.accumulate(1 / (k + 1) ** ZIPF_S
                                        for k in range(n)))
        picks = [rank[k] for k in rng.choices(range(n), cum_weights=cum,
                                               k=count)]
    else:
        picks = [rng.randrange(n) for _ in range(count)]
    with open(path, "wb") as f:
        buf = bytearray()
        for i in picks:
            a = host_in(af, routes[i], rng)
            buf += addr_bytes(af, a).ljust(16, b"\0")
        f.write(buf)
    return count


def hot_dst(af, routes):
    a = host_in(af, routes[0], random.Random(1))
    return socket.inet_ntop(socket.AF_INET if af == 4 else socket.AF_INET6,
                            addr_bytes(af, a))


# --------------------------------------------------------------------------
# Nexthops, by tests/tablegen.h's rules (bench_lookup's tables): every route
# via one of NEXTHOPS gateways or, one route in GROUP_ONE_IN, via one of
# GROUPS ECMP groups of 2-4 of them. Drawn from the route's index alone, so
# every kernel FIB and fpmd's FPM feed get the same assignment, and a
# smaller table is the first part of a larger one.



def route_nhs(af, n):
    """[nh] for routes 0..n-1: < NEXTHOPS a gateway's number, else group
    nh - NEXTHOPS."""
    out = []
    base = 0x66706d64 << 8 | af  # tablegen's TG_SEED, per family
    for i in range(n):
        h = splitmix64((base << 32) + i)
        if (h >> 32) % GROUP_ONE_IN == 0:
            out.append(NEXTHOPS + (h >> 40) % GROUPS)
        else:
            out.append(h % NEXTHOPS)
    return out


def group_members(g):
    """tablegen.h's tg_group_size / tg_group_member: 2, 3 or 4 distinct
    gateways."""
    return [(g * 7 + i * 13) % NEXTHOPS for i in range(2 + g % 3)]


def gateway(af, k, j):
    """Gateway j of the router on net k, on its r-out subnet (the sink's
    side): 10.k.1.100+j, fd00:k:1::100+j (hex)."""
    return f"10.{k}.1.{100 + j}" if af == 4 else f"fd00:{k}:1::{0x100 + j:x}"


def gateway_mac(k, j):
    return f"02:00:00:{k:02x}:00:{j:02x}"


# --------------------------------------------------------------------------
# Netlink: the same RTM_NEWROUTE messages go to the kernel and, in FPM
# frames, to fpmd.

def nla(t, data):
    return struct.pack("=HH", 4 + len(data), t) + data + \
        b"\0" * ((4 - len(data) % 4) % 4)


def nh_tails(gws, oif):
    """The nexthop attributes of route value nh, by nh: RTA_GATEWAY and
    RTA_OIF for a gateway, RTA_MULTIPATH for a group (zebra sends ECMP
    so without nexthop objects; the kernel takes it as well)."""
    o = struct.pack("=I", oif)
    tails = [nla(RTA_GATEWAY, g) + nla(RTA_OIF, o) for g in gws]
    for g in range(GROUPS):
        mp = b""
        for m in group_members(g):
            a = nla(RTA_GATEWAY, gws[m])
            mp += struct.pack("=HBBi", 8 + len(a), 0, 0, oif) + a
        tails.append(nla(RTA_MULTIPATH, mp))
    return tails


def route_msgs(af, routes, nhs, tails, flags, seq0=1):
    """RTM_NEWROUTE for each route, nhs[i] picking its tails entry."""
    fam = socket.AF_INET if af == 4 else socket.AF_INET6
    alen = 4 if af == 4 else 16
    rtm = {}
    out = []
    for i, (addr, plen) in enumerate(routes):
        r = rtm.get(plen)
        if r is None:
            r = rtm[plen] = struct.pack("=BBBBBBBBI", fam, plen, 0, 0,
                                        RT_TABLE_MAIN, RTPROT_STATIC, 0,
                                        RTN_UNICAST, 0)
        body = r + struct.pack("=HH", 4 + alen, RTA_DST) + \
            addr.to_bytes(alen, "big") + tails[nhs[i]]
        out.append(struct.pack("=IHHII", 16 + len(body), RTM_NEWROUTE, flags,
                               seq0 + i, 0) + body)
    return out


class Rtnl:
    """A route socket inside a namespace; batches with one ack each."""

    def __init__(self, ns):
        with in_netns(ns):
            self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        self.s.setsockopt(socket.SOL_SOCKET, 32, 64 << 20)  # SO_SNDBUFFORCE
        self.s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
        self.s.bind((0, 0))
        self.seq = 0

    def add_routes(self, af, routes, nhs, tails, batch=1024):
        flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL
        for i in range(0, len(routes), batch):
            part = routes[i:i + batch]
            msgs = route_msgs(af, part, nhs[i:i + batch], tails, flags,
                              self.seq + 1)
            last = self.seq + len(msgs)
            # Errors come back unasked; the last message's ack ends it.
            m = bytearray(msgs[-1])
            struct.pack_into("=H", m, 6, flags | NLM_F_ACK)
            msgs[-1] = bytes(m)
            self.s.send(b"".join(msgs))
            first = self.seq + 1
            self.seq = last
            done = False
            while not done:
                data = self.s.recv(1 << 20)
                p = 0
                while p + 16 <= len(data):
                    ln, typ, _, seq, _ = struct.unpack_from("=IHHII", data, p)
                    if typ == NLMSG_ERROR:
                        err = struct.unpack_from("=i", data, p + 16)[0]
                        if err:
                            a, l = part[seq - first]
                            raise RuntimeError(
                                f"kernel FIB: add {a:x}/{l}: "
                                f"{os.strerror(-err)}")
                        if seq == last:
                            done = True
                    p += (ln + 3) & ~3

    def close(self):
        self.s.close()


class FpmFeed:
    """A raw FPM client (what zebra's dplane_fpm_nl sends: version 1, type
    1, big-endian length including the 4-byte header, then netlink)."""

    def __init__(self, ns, port=FPM_PORT, timeout=10):
        deadline = time.time() + timeout
        while True:
            with in_netns(ns):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.connect(("127.0.0.1", port))
                break
            except OSError:
                s.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        self.s = s

    MAX_MSGS = 512  # per frame; fpmd closes a connection that sends more

    def add_routes(self, af, routes, nhs, tails):
        flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE
        self.send_msgs(route_msgs(af, routes, nhs, tails, flags))

    def send_msgs(self, msgs):
        """Netlink messages in FPM frames of at most 64 KiB and
        MAX_MSGS messages."""
        frames = []
        cur, size = [], 4
        for m in msgs:
            if size + len(m) > 65535 or len(cur) == self.MAX_MSGS:
                frames.append(struct.pack(">BBH", 1, 1, size) + b"".join(cur))
                cur, size = [], 4
            cur.append(m)
            size += len(m)
        if cur:
            frames.append(struct.pack(">BBH", 1, 1, size) + b"".join(cur))
        self.s.sendall(b"".join(frames))

    def close(self):
        self.s.close()


# --------------------------------------------------------------------------

class Bench(BenchBase):
    PREFIX = "fplive"
    FPMCTL = FPMCTL

    def __init__(self, args):
        super().__init__(args)
        self.rtnl = {}
        self.daemons = {}  # router -> its fpmd: sock, log, pin, child, feed
        self.scale = []  # the scaling runs

    # -- topology ------------------------------------------------------------
    def nsname(self, short):
        return f"{self.prefix}{short}"

    def setup(self):
        for short in ("gen", "sink") + tuple(NS_OF.values()):
            name = self.nsname(short)
            run(["ip", "netns", "add", name])
            self.ns[short] = name
            nsrun(name, "ip", "link", "set", "lo", "up")
        gen, sink = self.ns["gen"], self.ns["sink"]
        for r in ROUTERS:
            rns, k = self.ns[NS_OF[r]], NET_OF[r]
            gif, sif = f"to-{NS_OF[r]}", f"from-{NS_OF[r]}"
            # Multi-queue: a generator on each CPU gets its own queue
            # (and NAPI) on the router and the sink.
            mq = ["numtxqueues", str(QUEUES), "numrxqueues", str(QUEUES)]
            run(["ip", "link", "add", gif, "netns", gen] + mq +
                ["type", "veth", "peer", "name", "r-in", "netns", rns] + mq)
            run(["ip", "link", "add", "r-out", "netns", rns] + mq +
                ["type", "veth", "peer", "name", sif, "netns", sink] + mq)
            # sysctls first: "all" is copied to devices that exist later.
            for key, v in (("net.ipv4.ip_forward", 1),
                           ("net.ipv6.conf.all.forwarding", 1),
                           ("net.ipv4.conf.all.rp_filter", 0),
                           ("net.ipv4.conf.default.rp_filter", 0),
                           ("net.ipv4.conf.r-in.rp_filter", 0),
                           ("net.ipv4.conf.r-out.rp_filter", 0)):
                nsrun(rns, "sysctl", "-qw", f"{key}={v}")
            script = (
                f"ip link set r-in up && ip link set r-out up && "
                f"ip addr add 10.{k}.0.1/24 dev r-in && "
                f"ip addr add 10.{k}.1.1/24 dev r-out && "
                f"ip -6 addr add fd00:{k}:0::1/64 dev r-in nodad && "
                f"ip -6 addr add fd00:{k}:1::1/64 dev r-out nodad && "
                f"ethtool -K r-in gro on >/dev/null")
            nsrun(rns, "sh", "-c", script)
            # gen and sink are lab hosts: tx checksumming off (DESIGN.md;
            # a real NIC computes the checksum). On, fpmd would serve r-in
            # and r-out by its tc path (doc/containers.md), not XDP.
            nsrun(gen, "sh", "-c", f"ip link set {gif} up && "
                  f"ethtool -K {gif} gro on tx off >/dev/null")
            nsrun(sink, "sh", "-c", f"ip link set {sif} up && "
                  f"ethtool -K {sif} tx off >/dev/null")
            smac = nsrun(sink, "cat", f"/sys/class/net/{sif}/address"
                         ).stdout.strip()
            gws = {4: [], 6: []}
            if r in FIB_ROUTERS:
                # NEXTHOPS gateways on r-out, permanent neighbors with MACs
                # of their own (the sink counts whatever the MAC; fpmd
                # learns them from this kernel).
                cmds = []
                for j in range(NEXTHOPS):
                    for af in (4, 6):
                        a = gateway(af, k, j)
                        gws[af].append(socket.inet_pton(
                            socket.AF_INET if af == 4 else socket.AF_INET6,
                            a))
                        cmds.append(f"neigh add {a} lladdr "
                                    f"{gateway_mac(k, j)} nud permanent "
                                    f"dev r-out")
                run(["ip", "-n", rns, "-batch", "-"],
                    input="\n".join(cmds) + "\n")
            self.info[r] = {
                "ns": rns, "gen_if": gif, "sink_if": sif,
                "mac_in": nsrun(rns, "cat", "/sys/class/net/r-in/address"
                                ).stdout.strip(),
                "sink_mac": smac,
                "oif": int(nsrun(rns, "cat", "/sys/class/net/r-out/ifindex"
                                 ).stdout),
                "src": {4: f"10.{k}.0.2", 6: f"fd00:{k}:0::2"},
            }
            if r in FIB_ROUTERS:
                self.rtnl[r] = Rtnl(rns)
                oif = self.info[r]["oif"]
                self.info[r]["tails"] = {af: nh_tails(gws[af], oif)
                                         for af in (4, 6)}

    def start_helpers(self):
        self.sink = Child("sink", [TRAFFICGEN, "sink", "--netns",
                                   self.ns["sink"]] +
                          [self.info[r]["sink_if"] for r in ROUTERS],
                          f"{self.tmp}/sink.log", self.children, lines=True)
        self.ref = Child("ref", [TRAFFICGEN, "ref", "--netns",
                                 self.ns["rr"], "r-in", "r-out"],
                         f"{self.tmp}/ref.log", self.children, lines=True)
        fl = self.info["floor"]
        self.floor = Child("floor", [TRAFFICGEN, "floor", "--netns",
                                     self.ns["rx"], "--dmac", fl["sink_mac"],
                                     "r-in", "r-out"],
                           f"{self.tmp}/floor.log", self.children, lines=True)
        # fpmd after the sink: its veth-peer guard sees r-out's peer receive.
        for r, table in DAEMONS.items():
            self.start_fpmd(r, table)

    def start_fpmd(self, r, table):
        """fpmd on router r with IPv4 lookup table; "fpmd" is the one
        BenchBase knows (self.fpmd, self.sock, self.feed, self.pin), the
        others are cleaned up by Bench.cleanup."""
        d = {"sock": f"{self.tmp}/{r}.sock", "log": f"{self.tmp}/{r}.log",
             "pin": self.pin if r == "fpmd" else f"{self.pin}-{r}"}
        self.daemons[r] = d
        if r == "fpmd":
            self.sock, self.fpmd_log = d["sock"], d["log"]
        args = [FPMD, "--netns", self.info[r]["ns"], "-b", d["pin"], "-s",
                d["sock"], "--plugin-socket", f"{self.tmp}/{r}-plugin.sock",
                "--log", "file:" + d["log"], "-i", "r-in", "-i", "r-out",
                "--fpm-port", str(FPM_PORT), "--ipv4-lookup", table]
        d["child"] = Child(r, args, f"{self.tmp}/{r}.out")
        if r == "fpmd":
            self.fpmd = d["child"]
        deadline = time.time() + 20
        while "started:" not in read_text(d["log"]):
            if not d["child"].alive() or time.time() > deadline:
                raise RuntimeError(f"{r} did not start:\n" +
                                   read_text(d["log"])[-3000:])
            time.sleep(0.05)
        # The table asked for is the one in use: its log and its state.
        want = {"dir-24-8": "IPv4 DIR-24-8", "dxr": "IPv4 DXR (compact)"}
        m = re.search(r"route lookup: (IPv4 [^,]+),", read_text(d["log"]))
        state = json.dumps(self.ctl(r, "show", "state"))
        if not m or m.group(1) != want[table] or \
                f'"{table}"' not in state:
            raise RuntimeError(f"{r}: not the {table} table: log says "
                               f"{m and m.group(1)!r}")
        d["table"] = m.group(1)
        log(f"{r}: fpmd with {m.group(1)} in {self.info[r]['ns']}")
        d["feed"] = FpmFeed(self.info[r]["ns"])
        if r == "fpmd":
            self.feed = d["feed"]

    def ctl(self, r, *args):
        """fpmctl --json against router r's fpmd."""
        res = run([FPMCTL, "-s", self.daemons[r]["sock"], "--json"] +
                  list(args), timeout=60)
        return json.loads(res.stdout)

    # -- tables ----------------------------------------------------------------
    def grow(self, af, routes, nhs, have, n):
        """Routes [have, n) into the kernels and the fpmd daemons, each
        via the gateway or group nhs[i]."""
        part, pnh = routes[have:n], nhs[have:n]
        t0 = time.time()
        for r in FIB_ROUTERS:
            self.rtnl[r].add_routes(af, part, pnh, self.info[r]["tails"][af])
        t1 = time.time()
        for r in DAEMONS:
            self.daemons[r]["feed"].add_routes(af, part, pnh,
                                               self.info[r]["tails"][af])
        log(f"IPv{af} +{len(part)} routes: {len(FIB_ROUTERS)} kernel FIBs "
            f"in {t1 - t0:.1f} s, sent to {len(DAEMONS)} fpmd over FPM")

    def wait_fpmd(self, want, timeout):
        """Until every fpmd holds want FPM routes, all in the maps."""
        t0 = time.time()
        for r in DAEMONS:
            while True:
                s = self.ctl(r, "show", "summary")
                fpm = s.get("routesBySource", {}).get("fpm", 0)
                if fpm >= want and s.get("notProgrammed", 0) == 0:
                    log(f"{r}: {fpm} FPM routes, {s.get('programmed')} in "
                        f"the maps ({time.time() - t0:.1f} s after the last "
                        "send)")
                    break
                if time.time() - t0 > timeout:
                    raise RuntimeError(f"{r} has {fpm} of {want} routes "
                                       f"after {timeout} s: {s}")
                time.sleep(0.5)

    # -- one run ---------------------------------------------------------------
    def kernel_fwd(self, r, af):
        """The router's kernel forwarding counter for af."""
        ns = self.info[r]["ns"]
        if af == 4:
            lines = nsrun(ns, "cat", "/proc/net/snmp").stdout.splitlines()
            for i in range(0, len(lines) - 1, 2):
                k, v = lines[i].split(), lines[i + 1].split()
                if k[0] == "Ip:":
                    return int(v[k.index("ForwDatagrams")])
        else:
            for line in nsrun(ns, "cat", "/proc/net/snmp6").stdout.splitlines():
                k, v = line.split()
                if k == "Ip6OutForwDatagrams":
                    return int(v)
        raise KeyError("forwarding counter")

    def fpmd_forwarded(self, r):
        c = self.ctl(r, "show", "counters")
        return c.get("r-in", {}).get("forwarded", {}).get("packets", 0)

    def run_one(self, r, af, pattern, dst_arg):
        i = self.info[r]
        s0 = self.sink.ask()[i["sink_if"]]
        k0 = self.kernel_fwd(r, af)
        f0 = self.fpmd_forwarded(r) if r in DAEMONS else None
        cmd = [TRAFFICGEN, "send", "--netns", self.ns["gen"], "--dev",
               i["gen_if"], "--dmac", i["mac_in"], "--src", i["src"][af],
               "--seconds", str(self.args.seconds)] + dst_arg
        g = json.loads(run(cmd, timeout=self.args.seconds + 60,
                           cpu=self.args.cpu).stdout)
        time.sleep(0.05)  # frames still in a veth ring
        s1 = self.sink.ask()[i["sink_if"]]
        k1 = self.kernel_fwd(r, af)
        delivered = s1 - s0
        res = {"router": r, "af": af, "pattern": pattern,
               "sent": g["sent"], "seconds": g["seconds"],
               "loop_seconds": g["loop_seconds"], "delivered": delivered,
               "kernel_forwarded": k1 - k0}
        if r in DAEMONS:
            res["xdp_forwarded"] = self.fpmd_forwarded(r) - f0
        res["mpps"] = delivered / g["loop_seconds"] / 1e6
        res["mpps_wall"] = delivered / g["seconds"] / 1e6
        res["loss"] = 1 - delivered / g["sent"] if g["sent"] else 0
        # Who forwarded: the fast path must have done it all.
        if r != "kernel" and res["kernel_forwarded"] > 0.01 * max(1,
                                                                 delivered):
            res["flag"] = "kernel forwarded part of it"
        if r in DAEMONS and res["xdp_forwarded"] < 0.99 * delivered:
            res["flag"] = "fpmd forwarded less than delivered"
        # Router work deferred to ksoftirqd runs outside the generator's
        # loop time; the generator then outruns the router, and loses.
        if res["loss"] > 0.01:
            res["flag"] = f"{res['loss'] * 100:.0f}% lost"
        return res

    # -- scaling over cores -------------------------------------------------------
    def fpmd_fwd_percpu(self, r):
        """Router r's fpmd's forwarded packets per CPU, summed over its
        interfaces, read from its pinned per-CPU stats map."""
        out = []
        stats = f"{self.daemons[r]['pin']}/stats"
        for slot in range(4):  # r-in and r-out hold the first slots
            key = (slot * fpmd_reasons()).to_bytes(4, "little")
            res = run(["bpftool", "-j", "map", "lookup", "pinned", stats,
                       "key", "hex"] + [f"{b:02x}" for b in key],
                      check=False)
            if res.returncode:
                continue
            j = json.loads(res.stdout)
            vals = j.get("formatted", j).get("values", [])
            for v in vals:
                val = v["value"]
                n = val["packets"] if isinstance(val, dict) else \
                    int.from_bytes(bytes(int(b, 16) for b in val[:8]),
                                   "little")
                while len(out) <= v["cpu"]:
                    out.append(0)
                out[v["cpu"]] += n
        return out

    def run_scale(self, r, af, pattern, dst_arg, cpus):
        """One generator pinned to each of cpus, started together (loaded
        first, then --start-at one instant); delivered / wall time of the
        window from the first start to the last end."""
        i = self.info[r]
        a0 = self.sink.ask()
        k0 = self.kernel_fwd(r, af)
        f0 = self.fpmd_fwd_percpu(r) if r in DAEMONS else None
        # Time to load 2^20 destinations on a busy machine.
        start_at = time.clock_gettime(time.CLOCK_MONOTONIC) + 1.5
        cmd = [TRAFFICGEN, "send", "--netns", self.ns["gen"], "--dev",
               i["gen_if"], "--dmac", i["mac_in"], "--src", i["src"][af],
               "--seconds", str(self.args.seconds), "--start-at",
               f"{start_at:.6f}"] + dst_arg
        procs = []
        try:
            for c in cpus:
                procs.append(subprocess.Popen(
                    cmd + ["--cpu", str(c)], stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True,
                    start_new_session=True))
            outs = []
            for p in procs:
                o, e = p.communicate(timeout=self.args.seconds + 60)
                if p.returncode:
                    raise RuntimeError(f"trafficgen send: {e.strip()}")
                outs.append(json.loads(o))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        time.sleep(0.05)  # frames still in a veth ring
        a1 = self.sink.ask()
        k1 = self.kernel_fwd(r, af)
        sif = i["sink_if"]
        t0 = min(g["start"] for g in outs)
        t1 = max(g["end"] for g in outs)
        sent = sum(g["sent"] for g in outs)
        delivered = a1[sif] - a0[sif]
        res = {"router": r, "af": af, "pattern": pattern,
               "generators": len(cpus), "sent": sent, "wall": t1 - t0,
               "late": max(g["start"] for g in outs) - start_at,
               "load_late": max(g["ready"] for g in outs) - start_at,
               "delivered": delivered, "kernel_forwarded": k1 - k0,
               "sink_percpu": [y - x for x, y in zip(a0["percpu"][sif],
                                                     a1["percpu"][sif])]}
        res["mpps"] = delivered / res["wall"] / 1e6
        # Each CPU's frames stay on it (veth queue by sending CPU, NAPI
        # inline), so the sink's count on CPU c / the loop time of the
        # generator on c is that core's rate; summed: the rate by CPU time,
        # blind to other processes taking the cores.
        res["loop_seconds"] = [g["loop_seconds"] for g in outs]
        res["mpps_cpu"] = sum(res["sink_percpu"][c] / g["loop_seconds"]
                              for c, g in zip(cpus, outs)
                              if g["loop_seconds"] > 0) / 1e6
        res["loss"] = 1 - delivered / sent if sent else 0
        if r in DAEMONS:
            f1 = self.fpmd_fwd_percpu(r)
            res["fpmd_percpu"] = [y - x for x, y in zip(f0, f1)]
            if sum(res["fpmd_percpu"]) < 0.99 * delivered:
                res["flag"] = "fpmd forwarded less than delivered"
        if r != "kernel" and res["kernel_forwarded"] > 0.01 * max(1,
                                                                 delivered):
            res["flag"] = "kernel forwarded part of it"
        # Alone, a late start only shifts the window; together, one
        # generator would run part of it alone.
        if len(cpus) > 1 and res["late"] > 0.1:
            res["flag"] = (f"a generator started {res['late']:.2f} s late ("
                           + ("still loading" if res["load_late"] > 0 else
                              "loaded in time, woke up late") + ")")
        return res

    def scaling(self, af, n, dsts, hot):
        """Every router with one generator (first CPU) and with one per
        CPU, interleaved, at the largest IPv4 table, spread and hot."""
        cpus = sorted(os.sched_getaffinity(0))[:QUEUES]
        if len(cpus) < 2:
            log("scaling: fewer than 2 CPUs, skipped")
            return
        runs = [(r, pat, arg, k) for r in self.scale_routers()
                for pat, arg in (("spread", ["--dsts", dsts]),
                                 ("hot", ["--dst", hot]))
                for k in (1, len(cpus))]
        rng = random.Random(99)
        for rnd in range(self.args.scale_rounds):
            order = runs[:]
            rng.shuffle(order)
            for r, pat, arg, k in order:
                res = self.run_scale(r, af, pat, arg, cpus[:k])
                res.update(routes=n, round=rnd)
                self.scale.append(res)
                log(f"  scaling {rnd + 1}/{self.args.scale_rounds} {r:6} "
                    f"IPv{af} {n:>7} {pat:6} {k} generator(s): "
                    f"{res['mpps']:.3f} Mpps by the clock, loss "
                    f"{res['loss'] * 100:.1f}%, sink per CPU "
                    f"{res['sink_percpu']}"
                    + (f", fpmd forwarded per CPU {res['fpmd_percpu']}"
                       if "fpmd_percpu" in res else "")
                    + (f"  !! {res['flag']}" if res.get("flag") else ""))

    # -- the whole benchmark -----------------------------------------------------
    def steps(self):
        if self.args.routes and not (self.args.v4_sizes or
                                     self.args.v6_sizes):
            n4, n6 = (len(self.files[af].routes) for af in (4, 6))
            steps = [(n, min(n, n6)) for n in (10, 10000, 100000) if n < n4]
            return steps + [(n4, n6)]
        if self.args.v4_sizes or self.args.v6_sizes:
            v4, v6 = self.args.v4_sizes or [10], self.args.v6_sizes or [10]
            return [(v4[i] if i < len(v4) else None,
                     v6[i] if i < len(v6) else None)
                    for i in range(max(len(v4), len(v6)))]
        if self.args.quick:
            return [(10, 10), (100000, 10000)]
        return [(10, 10), (10000, 10000), (100000, 100000), (1000000, None)]

    def run(self):
        t0 = time.time()
        self.patterns = self.args.patterns.split(",")
        if self.args.routes:
            # Away from the routers' own 10.k/16 and fd00:k::/32.
            self.files = {af: routefile.Table(self.args.routes, af,
                                              own=("10.0.0.0/8", "fd00::/8"))
                          for af in (4, 6)}
        steps = self.steps()
        max4 = max(s[0] for s in steps)
        max6 = max(s[1] for s in steps if s[1])
        if self.args.routes:
            for af, n in ((4, max4), (6, max6)):
                if n > len(self.files[af].routes):
                    raise SystemExit(f"{self.args.routes} has only "
                                     f"{len(self.files[af].routes)} IPv{af} "
                                     f"routes, not {n}")
            routes = {af: self.files[af].routes for af in (4, 6)}
            nhs = {af: self.files[af].nhs for af in (4, 6)}
            for af in (4, 6):
                log("route file " + self.files[af].describe())
        else:
            routes = {4: gen_routes(4, max4), 6: gen_routes(6, max6)}
            nhs = {4: route_nhs(4, max4), 6: route_nhs(6, max6)}
        log(f"route sets: {max4} IPv4, {max6} IPv6, via {NEXTHOPS} gateways "
            f"or (1 in {GROUP_ONE_IN}) {GROUPS} ECMP groups "
            f"({time.time() - t0:.1f} s)")
        self.setup()
        self.start_helpers()
        hot = {af: hot_dst(af, routes[af]) for af in (4, 6)}
        have = {4: 0, 6: 0}
        results = self.results
        for step, sizes in enumerate(steps):
            fams = []
            for af, n in zip((4, 6), sizes):
                if n is None:
                    continue
                if n > have[af]:
                    self.grow(af, routes[af], nhs[af], have[af], n)
                    have[af] = n
                fams.append(af)
            self.wait_fpmd(have[4] + have[6], 120 + (have[4] + have[6]) / 2000)
            runs = []
            for af in fams:
                n = have[af]
                path = f"{self.tmp}/dsts-v{af}-{n}.bin"
                cnt = write_dsts(path, af, routes[af], n, seed=n + af)
                zpath = f"{self.tmp}/dsts-zipf-v{af}-{n}.bin"
                if "zipf" in self.patterns:
                    write_dsts(zpath, af, routes[af], n, seed=n + af,
                               zipf=True)
                for r in ROUTERS:
                    for pat, arg in (("hot", ["--dst", hot[af]]),
                                     ("spread", ["--dsts", path]),
                                     ("zipf", ["--dsts", zpath])):
                        if pat in self.patterns:
                            runs.append((r, af, pat, arg, n))
                nh = nhs[af][0]
                log(f"IPv{af} {n} routes: {cnt} spread destinations, hot "
                    f"{hot[af]} (via " + (f"gateway {nh}" if nh < NEXTHOPS
                                          else f"ECMP group "
                                          f"{nh - NEXTHOPS}") + ")")
            rng = random.Random(step)
            for rnd in range(self.args.rounds):
                order = runs[:]
                rng.shuffle(order)
                for r, af, pattern, dst_arg, n in order:
                    res = self.run_one(r, af, pattern, dst_arg)
                    res.update(routes=n, round=rnd)
                    results.append(res)
                    log(f"  round {rnd + 1}/{self.args.rounds} {r:6} IPv{af} "
                        f"{n:>7} {pattern:6}: {res['mpps']:.3f} Mpps per core "
                        f"({res['mpps_wall']:.3f} by the clock), loss "
                        f"{res['loss'] * 100:.1f}%"
                        + (f"  !! {res['flag']}" if res.get("flag") else ""))
        if self.args.scale_rounds:
            n = have[4]
            path = f"{self.tmp}/dsts-v4-{n}.bin"
            self.scaling(4, n, path, hot[4])
        return results

    def scale_routers(self):
        return [r for r in ROUTERS if r in self.args.scale_routers.split(",")]

    def cleanup(self):
        import shutil
        for r in self.rtnl.values():
            keep_going(r.close)
        # The daemons BenchBase does not know, stopped with fpmd (one
        # shared wait), before the namespaces go.
        others = [d for r, d in self.daemons.items() if r != "fpmd"]
        for d in others:
            if d.get("feed"):
                keep_going(d["feed"].close)
        if self.feed:
            keep_going(self.feed.close)
            self.feed = None
        stop = [d["child"] for d in self.daemons.values() if d.get("child")]
        if stop:
            keep_going(stop_all, stop, 30)
        self.fpmd = None
        super().cleanup()
        for d in others:
            if os.path.isdir(d["pin"]):
                keep_going(shutil.rmtree, d["pin"])


# --------------------------------------------------------------------------
# Report

def fmt_count(n):
    if n >= 1000000 and n % 1000000 == 0:
        return f"{n // 1000000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def summarize(results, wall=False):
    """{(af, routes, pattern, router): (median Mpps, median loss, flagged
    runs, runs)}; Mpps per core (delivered / the generator's loop time)
    or, with wall, by the clock."""
    groups = {}
    for r in results:
        groups.setdefault((r["af"], r["routes"], r["pattern"], r["router"]),
                          []).append(r)
    out = {}
    for k, rs in groups.items():
        t = "seconds" if wall else "loop_seconds"
        out[k] = (statistics.median(x["delivered"] / x[t] / 1e6 for x in rs),
                  statistics.median(x["loss"] for x in rs),
                  sum(1 for x in rs if x.get("flag")), len(rs))
    return out


def report(results, args):
    s = summarize(results)
    keys = sorted({k[:3] for k in s}, key=lambda k: (k[0], k[1], k[2]))
    routers = [r for r in ROUTERS if any(k[3] == r for k in s)]
    print()
    rounds = max(r["round"] for r in results) + 1
    secs = statistics.median(r["seconds"] for r in results)
    print(f"Live forwarding, Mpps per core: packets delivered at the sink / "
          f"CPU time of the generator's loop, which runs router and sink "
          f"inline (median of {rounds} runs of {secs:.1f} s, interleaved); "
          "loss in parentheses.")
    print("kernel: Linux forwarding; ref: XDP + bpf_fib_lookup "
          "(bpf/fpmd_ref.bpf.o); fpmd: the daemon, routes over FPM, IPv4 "
          "DIR-24-8; dxr: the same with --ipv4-lookup dxr; floor: XDP that "
          "only rewrites the MACs and redirects (tests/xdp_floor.bpf.c), the "
          "redirect floor of this path. Routes via 64 gateways, 1 in 16 via "
          "an ECMP group of 2-4 (tests/tablegen.h's rules).")
    print("Tables: " + (f"{args.routes} (the file's first routes of each "
                        "family; nexthop keys hashed onto the gateways and "
                        "groups)" if getattr(args, "routes", None) else
                        "synthetic (gen_routes, BGP-like mix)"))
    print()
    ratios = [("fpmd", "kernel"), ("fpmd", "ref"), ("fpmd", "floor"),
              ("dxr", "floor")]
    ratios = [(a, b) for a, b in ratios if a in routers and b in routers]
    print("| family | routes | destinations | " +
          " | ".join(f"{r} Mpps" for r in routers) + " | " +
          " | ".join(f"{a}/{b}" for a, b in ratios) + " |")
    print("|---|---:|---|" + "---:|" * (len(routers) + len(ratios)))

    def mpps(af, n, pat, r):
        return s.get((af, n, pat, r), (None,))[0]

    def ratio(af, n, pat, a, b):
        x, y = mpps(af, n, pat, a), mpps(af, n, pat, b)
        return x / y if x and y else None

    for af, n, pat in keys:
        cells = []
        for r in routers:
            v = s.get((af, n, pat, r))
            if not v:
                cells.append("-")
                continue
            m, loss, flagged, cnt = v
            cells.append(f"{m:.2f} ({loss * 100:.0f}%)" +
                         (f" [{flagged}/{cnt} flagged]" if flagged else ""))
        rs = [ratio(af, n, pat, a, b) for a, b in ratios]
        print(f"| ipv{af} | {fmt_count(n)} | {pat} | {' | '.join(cells)} | " +
              " | ".join(f"{x:.2f}" if x else "-" for x in rs) + " |")
    print()
    for af in (4, 6):
        ns = [k[1] for k in keys if k[0] == af]
        if not ns:
            continue
        n = max(ns)
        for pat in ("spread", "zipf", "hot"):
            fk, fr = ratio(af, n, pat, "fpmd", "kernel"), \
                ratio(af, n, pat, "fpmd", "ref")
            fl, dl = ratio(af, n, pat, "fpmd", "floor"), \
                ratio(af, n, pat, "dxr", "floor")
            if not (fk and fr):
                continue
            line = (f"IPv{af} {fmt_count(n)} routes, {pat}: fpmd/kernel "
                    f"{fk:.2f}, fpmd/ref {fr:.2f}")
            if fl:
                line += f", fpmd/floor {fl:.2f}"
            if dl:
                line += f", dxr/floor {dl:.2f}"
            if af == 4 and pat == "spread":
                line += (f"  (targets >= 3, >= 1.5 and floor >= 0.8: "
                         f"{'met' if fk >= 3 else 'NOT met'}, "
                         f"{'met' if fr >= 1.5 else 'NOT met'}, " +
                         ("-" if not fl else
                          "met" if fl >= 0.8 else "NOT met") +
                         ("" if not dl else
                          "; dxr: met" if dl >= 0.8 else "; dxr: NOT met")
                         + ")")
            print(line)
    w = summarize(results, wall=True)
    print("\nThe same by the clock (delivered / wall time of the run: also "
          "counts the time other\nprocesses on this shared machine took "
          "the generator's core), Mpps:\n")
    print("| family | routes | destinations | " + " | ".join(routers) + " |")
    print("|---|---:|---|" + "---:|" * len(routers))
    for af, n, pat in keys:
        print(f"| ipv{af} | {fmt_count(n)} | {pat} | " + " | ".join(
            f"{w[(af, n, pat, r)][0]:.2f}" if (af, n, pat, r) in w else "-"
            for r in routers) + " |")
    flagged = [r for r in results if r.get("flag")]
    if flagged:
        print(f"\n{len(flagged)} runs flagged (the fast path left traffic to "
              "the kernel, or more than 1% lost):")
        for r in flagged[:10]:
            print(f"  {r['router']} IPv{r['af']} {r['routes']} {r['pattern']}"
                  f": {r['flag']} (delivered {r['delivered']}, kernel "
                  f"forwarded {r['kernel_forwarded']})")


def report_scaling(scale):
    """Total delivered / wall time with one generator and with one per
    CPU: medians, the ratios, who forwarded on which CPU."""
    if not scale:
        return
    groups = {}
    for r in scale:
        groups.setdefault((r["af"], r["routes"], r["pattern"], r["router"],
                           r["generators"]), []).append(r)
    med = {k: statistics.median(x["mpps"] for x in v)
           for k, v in groups.items()}
    medc = {k: statistics.median(x["mpps_cpu"] for x in v)
            for k, v in groups.items()}
    gens = sorted({k[4] for k in groups})
    one, many = gens[0], gens[-1]
    rounds = max(r["round"] for r in scale) + 1
    print(f"\nScaling over cores: total packets delivered at the sink / "
          f"wall time of the window, one generator (CPU 0) against "
          f"{many} (one pinned to each CPU, each with its own veth queue), "
          f"Mpps, median of {rounds} runs, interleaved. By CPU time: the "
          f"sum over the CPUs of what the sink counted there / the loop "
          f"time of that CPU's generator (Mpps per core, summed).\n")
    print(f"| family | routes | destinations | router | {one} gen. "
          f"| {many} gen. | {many}/{one} | by CPU time {one} gen. "
          f"| {many} gen. | {many}/{one} | share of CPU 0 ({many} gen.) |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    keys = sorted({k[:4] for k in groups},
                  key=lambda k: (k[0], k[1], k[2], ROUTERS.index(k[3])))
    for af, n, pat, r in keys:
        a, b = med.get((af, n, pat, r, one)), med.get((af, n, pat, r, many))
        runs = groups.get((af, n, pat, r, many), [])
        pc = [sum(x["sink_percpu"][c] for x in runs)
              for c in range(len(runs[0]["sink_percpu"]))] if runs else []
        share = f"{pc[0] / sum(pc) * 100:.0f}%" if pc and sum(pc) else "-"
        flagged = sum(1 for x in groups.get((af, n, pat, r, one), []) + runs
                      if x.get("flag"))
        ca, cb = medc.get((af, n, pat, r, one)), medc.get((af, n, pat, r,
                                                          many))
        print(f"| ipv{af} | {fmt_count(n)} | {pat} | {r} | "
              f"{a:.2f} | {b:.2f} | {b / a:.2f} | {ca:.2f} | {cb:.2f} | "
              f"{cb / ca:.2f} | {share}"
              + (f" [{flagged} flagged]" if flagged else "") + " |"
              if a and b and ca and cb else
              f"| ipv{af} | {fmt_count(n)} | {pat} | {r} "
              "| - | - | - | - | - | - | - |")
    print()
    for af, n, pat, r in keys:
        if r not in DAEMONS:
            continue
        a, b = med.get((af, n, pat, r, one)), med.get((af, n, pat, r, many))
        runs = groups.get((af, n, pat, r, many), [])
        pc = [sum(x.get("fpmd_percpu", [0] * (c + 1))[c] for x in runs)
              for c in range(max((len(x.get("fpmd_percpu", []))
                                  for x in runs), default=0))]
        ca, cb = medc.get((af, n, pat, r, one)), medc.get((af, n, pat, r,
                                                          many))
        if a and b:
            print(f"IPv{af} {fmt_count(n)} routes, {pat}: {r} {many} "
                  f"generators / {one} = {b / a:.2f} by the clock (target "
                  f">= 1.8: {'met' if b / a >= 1.8 else 'NOT met'}), "
                  f"{cb / ca:.2f} by CPU time; {r}'s forwarded counter per "
                  f"CPU over those runs: "
                  + ", ".join(f"CPU {c} {v}" for c, v in enumerate(pc)))
    flagged = [r for r in scale if r.get("flag")]
    for r in flagged[:10]:
        print(f"  flagged: {r['router']} IPv{r['af']} {r['routes']} "
              f"{r['pattern']} {r['generators']} gen.: {r['flag']}")


def read_micro(path, fpmd_col="fast"):
    """Rows of tests/bench_lookup's table: (af, routes, pattern, fpmd ns,
    ref ns), for the plot. The columns are found by their header names
    ("fast ns": fpmd's default tables, "ref ns")."""
    mult = {"": 1, "k": 1000, "M": 1000000}
    rows, cols = [], None
    with open(path) as f:
        for line in f:
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if c[:3] == ["family", "routes", "destinations"]:
                cols = (c.index(f"{fpmd_col} ns") if f"{fpmd_col} ns" in c
                        else None, c.index("ref ns") if "ref ns" in c
                        else None)
                if None in cols:
                    cols = None
                continue
            if cols and len(c) > max(cols) and \
                    c[0] in ("ipv4", "ipv6") and c[2] in ("spread", "hot"):
                n = c[1]
                try:
                    rows.append((int(c[0][3]), int(n.rstrip("kM")) *
                                 mult[n[-1] if n[-1] in "kM" else ""],
                                 c[2], float(c[cols[0]]),
                                 float(c[cols[1]])))
                except ValueError:
                    continue
    return rows


def plot(results, path, micro=None):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (apt-get install python3-matplotlib): no plot")
        return False
    s = summarize(results)
    colors = {"kernel": "tab:red", "ref": "tab:blue", "fpmd": "tab:green",
              "dxr": "tab:purple", "floor": "tab:gray"}
    styles = {"spread": "-", "hot": "--", "zipf": ":"}
    markers = {4: "o", 6: "s"}
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5), sharey=True)
    for ax, af in zip(axes, (4, 6)):
        for r in ROUTERS:
            for pat in ("spread", "zipf", "hot"):
                pts = sorted((k[1], 1000 / v[0]) for k, v in s.items()
                             if k[0] == af and k[2] == pat and k[3] == r
                             and v[0] > 0)
                if not pts:
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        color=colors[r], linestyle=styles[pat],
                        marker=markers[af], label=f"{r} {pat}")
        for name, col in (("fpmd", 3), ("ref", 4)):
            for pat in ("spread", "hot"):
                pts = sorted((m[1], m[col]) for m in micro or ()
                             if m[0] == af and m[2] == pat)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            color=colors[name], linestyle=styles[pat],
                            marker="x", alpha=0.45, linewidth=1,
                            label=f"{name} {pat}, lookup only "
                            "(bench_lookup)")
        ax.set_xscale("log")
        ax.set_xlabel("routes in the table")
        ax.set_title(f"IPv{af}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("ns per packet (1000 / Mpps per core)")
    axes[0].set_ylim(bottom=0)
    fig.suptitle("Live forwarding over veth, gen -> router -> sink, UDP "
                 "60-byte frames (IPv6 80): kernel, XDP + bpf_fib_lookup "
                 "(ref), fpmd (IPv4 DIR-24-8), dxr (fpmd, IPv4 DXR),\n"
                 "redirect floor (MACs + devmap redirect only); routes via 64 "
                 "gateways, 1 in 16 via ECMP groups", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def patterns_arg(text):
    bad = set(text.split(",")) - {"hot", "spread", "zipf"}
    if bad:
        raise argparse.ArgumentTypeError(f"unknown patterns: {bad}")
    return text


def sizes_arg(text):
    """'10,100000' -> [10, 100000], growing, each >= 1."""
    try:
        v = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes: {text}")
    if any(n < 1 for n in v) or v != sorted(set(v)):
        raise argparse.ArgumentTypeError(f"sizes must grow: {text}")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="IPv4 10 and 100k, IPv6 10 and 10k, 3 rounds of 1 s")
    ap.add_argument("--seconds", type=float, help="per run (default 2)")
    ap.add_argument("--rounds", type=int, help="runs per configuration "
                    "(default 5)")
    ap.add_argument("--v4-sizes", type=sizes_arg, metavar="N,N...",
                    help="IPv4 table sizes, growing (instead of the "
                    "default steps; IPv6 then 10 unless --v6-sizes)")
    ap.add_argument("--v6-sizes", type=sizes_arg, metavar="N,N...",
                    help="IPv6 table sizes, growing (IPv4 then 10 unless "
                    "--v4-sizes)")
    ap.add_argument("--routes", metavar="FILE",
                    help="tables from FILE (\"PREFIX KEY\" lines, "
                    "scripts/route-table.py) instead of the generator: "
                    "its first 10, 10k, 100k routes and all of them")
    ap.add_argument("--patterns", default="hot,spread,zipf",
                    type=patterns_arg,
                    help="destination patterns (default %(default)s)")
    ap.add_argument("--cpu", type=int, help="pin the generator to this CPU")
    ap.add_argument("--scale-rounds", type=int,
                    help="scaling runs per configuration, at the largest "
                    "IPv4 table (default 3; 0: no scaling runs)")
    ap.add_argument("--scale-routers", default=",".join(ROUTERS),
                    help="routers of the scaling runs, comma-separated "
                    "(default: all)")
    ap.add_argument("--plot", default="bench_live.png", help="PNG to write")
    ap.add_argument("--json", help="write the raw runs here")
    ap.add_argument("--micro", metavar="FILE",
                    help="also plot tests/bench_lookup's table (its output "
                    "saved in FILE): ns per lookup under BPF_PROG_TEST_RUN")
    ap.add_argument("--replot", metavar="JSON",
                    help="no measurement: table and plot from a --json file")
    ap.add_argument("--keep-logs", metavar="DIR",
                    help="copy fpmd's and the helpers' logs to DIR")
    args = ap.parse_args()
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 2.0
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    if args.scale_rounds is None:
        args.scale_rounds = 2 if args.quick else 3
    bad = set(args.scale_routers.split(",")) - set(ROUTERS)
    if bad:
        ap.error(f"--scale-routers: not a router: {', '.join(sorted(bad))}")
    if args.replot:
        with open(args.replot) as f:
            results = json.load(f)
        scale = []
        if isinstance(results, dict):
            results, scale = results["runs"], results.get("scaling", [])
        report(results, args)
        report_scaling(scale)
        if plot(results, args.plot, args.micro and read_micro(args.micro)):
            print(f"\nplot: {os.path.abspath(args.plot)}")
        return 0
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, BPF)")
    for exe in (FPMD, FPMCTL, TRAFFICGEN):
        if not os.access(exe, os.X_OK):
            sys.exit(f"{exe} missing: build first (make, then make "
                     "tests/trafficgen), or set FPMD_BUILDDIR")

    t0 = time.time()
    b = Bench(args)

    def failed(e):
        if not isinstance(e, KeyboardInterrupt):
            for r, d in b.daemons.items():
                log(f"{r} log tail:\n" + read_text(d["log"])[-2000:])
    rc = guarded(b.run, b.cleanup, failed=failed)
    results = b.results
    if results:
        report(results, args)
        report_scaling(b.scale)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"runs": results, "scaling": b.scale}, f,
                          indent=1)
        if plot(results, args.plot, args.micro and read_micro(args.micro)):
            print(f"\nplot: {os.path.abspath(args.plot)}")
    print(f"\ntotal {time.time() - t0:.0f} s; fpmd: {FPMD}; command: "
          f"{' '.join(sys.argv)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
