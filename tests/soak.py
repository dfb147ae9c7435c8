# SPDX-License-Identifier: GPL-2.0-or-later
r"""The soak (issue 27 item 5): a small lab with real FRR under churn, and
traffic through fpmd's XDP the whole time; at the end every packet lost is
accounted for, and nothing fpmd holds may have grown. scripts/soak.sh runs
it; doc/soak.md says what each event does, which windows may lose packets
and why, and what is checked.

    h1 --- r1 ---------- r2 --- h2     r1 runs fpmd (zebra plugin feed),
           | \          /       |      r2 and r3 the kernel. OSPF and
           |  +-- r3 --+        |      OSPFv3 between r1, r2, r3: r1 - r2
           +--------------------+      cost 10, the backup path r1 - r3 -
                                       r2 cost 40.

bird on h2 announces STABLE + FLAP prefixes over eBGP to r1 on the
r1 -- h2 link; the FLAP ones are withdrawn and announced every few s. r1
has a static IPv6 route (STATIC6) via h2 on that link.

h1 sends sequence-numbered UDP (tests/lib/seqflow.py) to h2 by the OSPF
and OSPFv3 routes (via r2), to h2's IPv4 and IPv6 addresses on the
r1 -- h2 link (connected), to addresses in a few stable BGP prefixes and
in the static IPv6 route (h2 takes them as local); h2 receives it all.
Churn, one event at a time on a schedule: h2's IPv4 and IPv6 neighbors
deleted on r1, h2's MAC changed on that link, the backup path's link down
and up, the active path's link down and up (OSPF moves the traffic to r3
and back), fpmd reloaded (SIGHUP), restarted with SIGUSR2 and killed with
SIGKILL and started again. Two phases: first one fpmd lives through every
event but restarts, its resources read after the warm-up and at the end
of the phase, and sampled all along (the leak check); then the restart
phase (--restart-share of the time), each round beginning with a
restart. Every event is recorded with its start and end; every lost
packet is classified by when it was sent. Exit status 0 when every check
holds, 1 when one fails (it says which), 2 when the lab could not be set
up.

    /usr/bin/python3 tests/soak.py MINUTES [--rate PPS] [--stable N]
        [--flap N] [--flap-period S] [--gap S] [--restart-share F]
        [--events LIST] [--json FILE]
"""
import argparse
import array
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib import fpmdlog, procmem  # noqa: E402
from lib.frr import _frr_ids  # noqa: E402
from lib.lab import BUILDDIR, FPMD, PY, TESTLIB, Fpmd, wait_for  # noqa: E402
from lib.topo import (Host, Link, Router, Topology, bgp, ospf,  # noqa: E402
                      ospf6)

SEQFLOW = os.path.join(TESTLIB, "seqflow.py")
BIRDC = "/usr/sbin/birdc"
PORT = 7000
R1_AS, H2_AS = 65001, 65100
# h2 takes every address of these as its own (ip route add local): the
# BGP prefixes the traffic goes to. FLAP prefixes lie in another /8.
STABLE_NET, FLAP_NET = 20, 21
# r1's static IPv6 route to h2 (via h2 on the r1 -- h2 link; h2 takes
# every address of it as its own), and the traffic's addresses in it
STATIC6 = "2001:db8:100::/48"
STATIC6_DSTS = ["2001:db8:100::1", "2001:db8:100:ff::1"]
MAC_B = "02:5a:00:00:00:02"     # h2's other MAC on the r1 -- h2 link
# The long-lived fpmd's resources are sampled every SAMPLE_S s; the mean
# of the last third of the samples may exceed the first third's by TREND
# (a fraction) at most.
SAMPLE_S = 1.0
TREND = 0.05

# Margins around an event's [start, end] (send times): a packet sent just
# before the start may still be in flight when the event hits it, and the
# end is when we saw the state converge, polled.
PRE, POST = 0.5, 1.0

# What each event kind may lose, and why (doc/soak.md says the same).
# Loss inside the window of an event whose kind is not here, or outside
# every window, is unexplained and fails the soak.
MAY_LOSE = {
    "neigh-mac": "frames already on their way with h2's old MAC, until "
                 "h2's gratuitous ARP reaches r1 (any router loses these)",
    "link-active-down": "packets to h2 via r2 between the r1 -- r2 link "
                        "going down and OSPF's route via r3 reaching the "
                        "kernel and fpmd (inherent to a failure on the "
                        "active path)",
}

# r2 and r3 (no fpmd: their kernels forward) replace IPv6 routes in one
# netlink message, as they do IPv4 ones. FRR 8.4's zebra otherwise
# updates an IPv6 route in the kernel by a delete and then an add
# (zebra/rt_netlink.c, "v6 route replace semantics are not in the
# kernel"), and r3 re-sends every OSPFv3 route after each SPF run, also
# unchanged ones: a packet r3 forwards between the two messages is
# dropped (Ip6InNoRoutes). The two are microseconds apart unless the
# writer is preempted between them on a loaded machine: 7 OSPFv3
# packets in two 60-minute soaks, 34-46 ms into a link-active-up, via
# r3 (r1 forwards them right; IPv4 by the same path never lost one).
# r1, the router under test, runs zebra as users do (fpmd takes zebra's
# update as one change either way).
V6_REPLACE = ("--v6-rr-semantics",)

# A packet fpmd forwarded to r2 or r3 (no fpmd there) that its kernel
# then dropped for want of a route, counted there at that instant
# (NoRouteWatch: a rise of Ip6InNoRoutes or IpExt InNoRoutes read within
# 0.25 s of its send time). FRR's and the kernel's, not fpmd's: a packet
# fpmd sent the wrong way would still find a route there (r2 and r3
# route h2's subnets whatever r1 does). Seen: r3's OSPFv3 route to h2's
# subnet missing for a moment when its SPF ran on the LSAs of a link
# that came up (doc/soak.md). Only destinations reached through r2 or
# r3 (destination kind: its family).
NOROUTE = "downstream-no-route"
DOWNSTREAM = {"ospf": 4, "ospf6": 6}
MAY_LOSE[NOROUTE] = ("packets r1 forwarded right that r2's or r3's "
                     "kernel (no fpmd there) dropped for want of a route, "
                     "counted there at that instant")

# A packet r1's own kernel dropped for want of a route (the same
# counters on r1, read the same way): FRR had no route to its
# destination then, so fpmd passed it up (pass-no-route) as it must, and
# the kernel, the reference, dropped it. fpmd cannot hide a loss of its
# own here: a packet it should have forwarded has a route in r1's kernel,
# which forwards it when fpmd passes it up. Seen: r1's ospf6d (FRR 8.4.4)
# starved of the CPU (hello "TX high latency" of 8 s) withdrew its
# intra-area routes 3 s into a link-active-up and announced them again
# 0.89 s later (zebra "Redist del ... new re 0x0", `ip monitor`
# "Deleted" then the same route): 178 OSPFv3 packets (doc/soak.md).
R1NOROUTE = "r1-no-route"
MAY_LOSE[R1NOROUTE] = ("packets r1's kernel dropped for want of a route "
                       "(FRR had none: fpmd passed them up), counted "
                       "there at that instant")

LINK_EVENTS = ("link-backup-down", "link-backup-up", "link-active-down",
               "link-active-up")
# fpmd log lines at error level that an event explains (regex, event
# kinds whose window, with LOG_SLACK s on either side, must hold the
# line). Empty: fpmd has logged none under this churn; add with a comment
# saying why.
FPMD_ERRORS_ALLOWED = []
# The same for FRR's daemons (zebra, ospfd, bgpd: each logs its errors
# to a file of its own, `log file PATH errors`), FRR 8.4.4 as measured.
FRR_ERRORS_ALLOWED = [
    # ospfd at start writes to stderr, which the daemonized (-d) ospfd
    # has closed; nothing is lost.
    (r"buffer_flush_available: write error on fd 2: Bad file descriptor",
     ("setup",)),
    # zebra when a link goes down: the connected route (or fe80::/64) of
    # the interface is re-queued while the interface is already down and
    # the dataplane refuses it; the kernel drops it with the interface.
    (r"Failed to enqueue dataplane install", LINK_EVENTS),
    # ospfd's hello sent on the interface as it goes down.
    (r"sendmsg in ospf_write failed to 224\.0\.0\.[56].*Network is "
     r"unreachable", LINK_EVENTS),
    # zebra on a router whose link goes down (r3, which runs no fpmd, at
    # link-backup-down; once in 146 in a 60-minute run): the kernel
    # deletes the nexthop objects on that interface, and a route install
    # zebra had queued with one of them is refused ("Nexthop id does not
    # exist", then netlink-dp EINVAL); the traffic checks cover whatever
    # it costs.
    (r"Extended Error: Nexthop id does not exist", LINK_EVENTS),
    (r"netlink-dp \(NS 0\) error: Invalid argument, type=RTM_NEWROUTE",
     LINK_EVENTS),
    # ospfd on r2 as its end of r1 -- r2 loses carrier (r1's end went
    # down): it leaves AllSPFRouters on the interface and the kernel
    # finds no such membership (EADDRNOTAVAIL); ospfd unsets its flag
    # either way and joins again when the interface comes back, which
    # the link-active-up's end (OSPF Full again) checks. Once in 335
    # link-active-downs (40-minute run, 2026-12-06).
    (r"can't setsockopt IP_DROP_MEMBERSHIP .*AllSPFRouters\): Cannot "
     r"assign requested address", LINK_EVENTS),
    # ospf6d the same way (its send fails as the interface goes down).
    (r"OSPF6: .*Could not send entire message", LINK_EVENTS),
    # ospf6d at start: it keeps the high-order half of its packets'
    # authentication sequence number in a file, and says so at error
    # level when it reads and updates it (no authentication here).
    (r"OSPF6: .*Higher order sequence number \d+ (read|update) for "
     r"default process", ("setup",)),
]
LOG_SLACK = 3.0


def log(msg):
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def kernel_counters(ns):
    """{"Proto:Field": value} of /proc/net/snmp and /proc/net/netstat
    in ns, and {"Field": value} of /proc/net/snmp6 (Ip6InNoRoutes, ...)."""
    text = ns.run("cat /proc/net/snmp /proc/net/netstat; echo; "
                  "cat /proc/net/snmp6").stdout
    v4, _, v6 = text.partition("\n\n")
    return parse_counters(v4, v6)


def parse_counters(v4, v6):
    """kernel_counters' dict from the text of snmp/netstat-style files
    (v4: header and value lines in pairs) and of snmp6 (v6)."""
    out = {}
    lines = v4.splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        names, values = names.split(), values.split()
        for k, v in zip(names[1:], values[1:]):
            out[names[0] + k] = int(v)
    for line in v6.splitlines():
        k, v = line.split()
        out[k] = int(v)
    return out


def arp_unresolved_discards():
    """Packets the kernel dropped from a full queue of packets waiting
    for ARP (unres_qlen_bytes), summed over CPUs: the neighbor table is
    the host's, shared by every namespace (none has the file)."""
    with open("/proc/net/stat/arp_cache") as f:
        rows = f.read().splitlines()
    k = rows[0].split().index("unresolved_discards")
    return sum(int(r.split()[k], 16) for r in rows[1:])


class Flapper(threading.Thread):
    """Withdraws and announces bird's FLAP set (protocol flap) every
    period s. hold(): announced, and no toggling until release()."""

    def __init__(self, ctl, period):
        super().__init__(daemon=True)
        self.ctl, self.period = ctl, period
        self.stop_ev = threading.Event()
        self.hold_ev = threading.Event()
        self.enabled = True
        self.flaps = 0
        self.toggles = []     # (realtime, announced) of each toggle
        self.lock = threading.Lock()
        self.error = None

    def birdc(self, *args):
        r = subprocess.run([BIRDC, "-s", self.ctl, *args],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError(f"birdc {' '.join(args)}: {r.stdout}"
                               f"{r.stderr}")

    def set(self, on):
        with self.lock:
            if self.enabled != on:
                self.birdc("enable" if on else "disable", "flap")
                self.enabled = on
                self.flaps += 1
                self.toggles.append((time.time(), on))

    def run(self):
        try:
            while not self.stop_ev.wait(self.period):
                if not self.hold_ev.is_set():
                    self.set(not self.enabled)
        except Exception as e:   # reported by the main thread
            self.error = e

    def hold(self):
        self.hold_ev.set()
        self.set(True)

    def release(self):
        self.hold_ev.clear()


def resource_sample(pid):
    """What the trend check follows: RSS, map memory and fds of pid."""
    mem, _ = procmem.map_memory(pid)
    return {"rss": procmem.rss_bytes(pid), "map_memory": mem,
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def heap_sample(d):
    """fpmd's own count of its C heap in use (show summary: heapInUse):
    whether RSS growth is memory kept or fragmentation."""
    return {"heap_in_use": d.show("summary").get("heapInUse", 0)}


class NoRouteWatch(threading.Thread):
    """The packets the routers' kernels (r1's behind fpmd, r2's and r3's
    without it) drop for want of a route (Ip6InNoRoutes, IpExt
    InNoRoutes), read every PERIOD s through a process parked in each
    namespace (/proc/PID/net is its namespace's: no process started per
    reading); each rise kept as
    (monotonic time of the reading, router, family, count)."""

    PERIOD = 0.05

    def __init__(self, nodes):
        super().__init__(daemon=True)
        self.stop_ev = threading.Event()
        self.rises = []
        self.parked = {n.name: n.ns.popen("exec sleep 1000000")
                       for n in nodes}
        time.sleep(0.2)   # each in its namespace (ip netns exec, exec)
        self.last = {name: self.read(p.pid)
                     for name, p in self.parked.items()}

    @staticmethod
    def read(pid):
        with open(f"/proc/{pid}/net/netstat") as f4, \
                open(f"/proc/{pid}/net/snmp6") as f6:
            c = parse_counters(f4.read(), f6.read())
        return {4: c["IpExt:InNoRoutes"], 6: c["Ip6InNoRoutes"]}

    def run(self):
        while not self.stop_ev.wait(self.PERIOD):
            t = time.monotonic()
            for name, p in self.parked.items():
                try:
                    now = self.read(p.pid)
                except (OSError, KeyError, ValueError):
                    continue
                for fam in (4, 6):
                    if now[fam] > self.last[name][fam]:
                        self.rises.append((t, name, fam,
                                           now[fam] - self.last[name][fam]))
                self.last[name] = now

    def stop(self):
        self.stop_ev.set()
        if self.is_alive():
            self.join(10)
        for p in self.parked.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    def take(self, fam, ts, routers, slack=0.25):
        """One drop of family fam on one of routers that a reading at
        most slack s after send time ts (and at most one period before:
        the reading's own time) saw: True and counted off, or False."""
        for j, (t, name, f, n) in enumerate(self.rises):
            if f == fam and n > 0 and name in routers and \
                    ts - self.PERIOD <= t <= ts + slack:
                self.rises[j] = (t, name, f, n - 1)
                return True
        return False


class Sampler(threading.Thread):
    """resource_sample(pid) and heap_sample(fpmd) every period s until
    stop_ev: the long-lived fpmd's trend, at every phase of the flap
    cycle (the means of a third of the run average the cycle out)."""

    def __init__(self, fpmd, period):
        super().__init__(daemon=True)
        self.fpmd, self.pid, self.period = fpmd, fpmd.proc.pid, period
        self.stop_ev = threading.Event()
        self.samples = []     # (monotonic, sample)

    def run(self):
        while not self.stop_ev.wait(self.period):
            try:
                x = resource_sample(self.pid)
            except OSError:
                return
            try:
                x.update(heap_sample(self.fpmd))
            except Exception:   # a slow answer: this sample without it
                pass
            self.samples.append((time.monotonic(), x))

    def slope(self, key):
        """Least-squares slope of key over the samples, per minute (0
        with fewer than 2)."""
        pts = [(t, x[key]) for t, x in self.samples if key in x]
        n = len(pts)
        if n < 2:
            return 0.0
        ts = [t for t, _ in pts]
        ys = [y for _, y in pts]
        mt, my = sum(ts) / n, sum(ys) / n
        var = sum((t - mt) ** 2 for t in ts)
        return 60 * sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / var \
            if var else 0.0

    def trend(self):
        """{key: (first third's mean, last third's mean)}, {} with fewer
        than 6 samples."""
        n = len(self.samples) // 3
        if n < 2:
            return {}
        first, last = self.samples[:n], self.samples[-n:]
        return {k: (sum(x[k] for _, x in first) / n,
                    sum(x[k] for _, x in last) / n)
                for k in ("rss", "map_memory", "fds")}


class Soak:
    def __init__(self, a, binary):
        self.a = a
        self.binary = binary
        self.ends = {}        # pid: (rss, fds) of each fpmd before its stop
        self.events = []      # {kind, start, end, start_rt, detail}
        self.fpmds = []       # every fpmd process, in order
        self.loop_max = (0, "", 0)   # (us, step, process number)
        self.loop_slow = {}   # pid: its iterations over 20 ms
        self.sampler = None
        self.trend = {}
        self.slow = []
        self.phases = []      # (name, start, end): the long-lived, restarts
        self.failures = []
        self.t = None
        self.sender = self.sink = None
        self.flapper = None
        self.monitors = []
        self.noroute = None
        self.mac_b = False
        self.guard_interval = 200
        self.rt_offset = time.time() - time.monotonic()

    def wall(self, t):
        """Monotonic time t as the wall clock the logs print."""
        t += self.rt_offset
        return time.strftime("%H:%M:%S", time.localtime(t)) + \
            f".{int(t * 1000) % 1000:03d}"

    # ---- the lab ------------------------------------------------------------

    def bird_conf(self, t, n):
        """bird on h2: two static protocols, stable and flap, announced
        over eBGP to r1 with h2's own address as the next hop."""
        for name, first, count in (("stable", STABLE_NET, self.a.stable),
                                   ("flap", FLAP_NET, self.a.flap)):
            with open(os.path.join(n.tmp, f"{name}.routes"), "w") as f:
                for k in range(count):
                    f.write(f"route {first + (k >> 16)}.{(k >> 8) & 255}."
                            f"{k & 255}.0/24 blackhole;\n")
        i = n.iface_to("r1")
        out = [f"router id {i.ip};", "protocol device {}"]
        for name in ("stable", "flap"):
            out += [f"protocol static {name} {{", " ipv4;",
                    f'include "{os.path.join(n.tmp, name + ".routes")}";',
                    "}"]
        out += ["protocol bgp r1 {", f" local {i.ip} as {H2_AS};",
                f" neighbor {i.peer_ip} as {R1_AS};",
                " connect retry time 1;",
                " ipv4 { import none; export all; next hop self; };", "}"]
        return "\n".join(out)

    def build(self):
        def errlog(daemon, gen=None):
            """The daemon's config, with a second log file that takes
            error level and above only (the -log file: target takes
            everything): every line in it is an error to explain."""
            def conf(t, n):
                path = os.path.join(n.tmp, f"{daemon}-errors.log")
                open(path, "a").close()
                os.chown(path, *_frr_ids())
                text = f"log file {path} errors"
                if self.a.debug:
                    text += "\nlog timestamp precision 6"
                    if daemon == "zebra":
                        text += "\ndebug zebra rib\ndebug zebra dplane"
                return text + "\n" + gen(t, n) if gen else text
            return conf
        def static6(t, n):
            return f"ipv6 route {STATIC6} {t['h2'].iface_to('r1').ip6}"

        def igp():
            return {"zebra": errlog("zebra"),
                    "ospfd": errlog("ospfd", ospf()),
                    "ospf6d": errlog("ospf6d", ospf6())}
        routers = [
            Router("r1", frr={**igp(),
                              "bgpd": errlog("bgpd", bgp(redistribute=())),
                              "staticd": errlog("staticd", static6)},
                   asn=R1_AS, start_fpmd=False),
            Router("r2", frr=igp(), fpmd=False, zebra_args=V6_REPLACE),
            Router("r3", frr=igp(), fpmd=False, zebra_args=V6_REPLACE),
        ]
        h2_setup = (f"ip route add local {STABLE_NET}.0.0.0/8 dev lo",
                    f"ip -6 route add local {STATIC6} dev lo",
                    "for f in /proc/sys/net/ipv4/conf/*/rp_filter; do "
                    "echo 0 > $f; done",
                    # a new MAC is announced (gratuitous ARP, unsolicited
                    # neighbor advertisement), as a real host's failover
                    # does
                    "sysctl -qw net.ipv4.conf.all.arp_notify=1",
                    "sysctl -qw net.ipv6.conf.all.ndisc_notify=1")
        hosts = [Host("h1"), Host("h2", asn=H2_AS, bird=self.bird_conf,
                                  setup=h2_setup)]
        links = [Link("h1", "r1"),                  # h1-eth0 r1-eth0
                 Link("r1", "r2", cost=10),         # r1-eth1 r2-eth0
                 Link("r1", "r3", cost=20),         # r1-eth2 r3-eth0
                 Link("r3", "r2", cost=20),         # r3-eth1 r2-eth1
                 Link("r2", "h2"),                  # r2-eth2 h2-eth0
                 Link("r1", "h2")]                  # r1-eth3 h2-eth1
        self.t = Topology(routers + hosts, links, start=False)
        t = self.t
        self.r1, self.h1, self.h2 = t["r1"], t["h1"], t["h2"]
        self.conf_path = os.path.join(self.r1.tmp, "fpmd.json")
        self.write_conf()
        self.start_fpmd()
        if self.a.debug:
            # every route and nexthop change the routers' kernels see,
            # with timestamps (kept with the logs on a failure)
            self.monitors = [
                n.ns.popen("exec ip -ts monitor route nexthop >"
                           f"{os.path.join(n.tmp, 'monitor.log')} 2>&1")
                for n in (self.r1, t["r2"], t["r3"])]
        t.start()
        self.bgp_nh = self.h2.iface_to("r1")        # h2-eth1
        self.via_r2 = self.h2.iface_to("r2")        # h2-eth0
        self.h2_net = t.subnet("r2", "h2")
        self.h2_net6 = t.subnet("r2", "h2", v6=True)
        self.mac_a = self.h2.ns.mac(self.bgp_nh.name)     # its own
        # destinations: h2 by OSPF (via r2), h2 on the connected r1 -- h2
        # link, and four stable BGP prefixes (via h2 on that link); for
        # IPv6 h2 by OSPFv3 (via r2), h2 on the connected link, and two
        # addresses in r1's static route (via h2 on that link)
        k = [0, self.a.stable // 3, 2 * self.a.stable // 3,
             self.a.stable - 1]
        self.bgp_dsts = [f"{STABLE_NET + (x >> 16)}.{(x >> 8) & 255}."
                         f"{x & 255}.1" for x in k]
        self.dsts = [self.via_r2.ip, self.bgp_nh.ip] + self.bgp_dsts + \
            [self.via_r2.ip6, self.bgp_nh.ip6] + STATIC6_DSTS
        self.dst_kind = ["ospf", "connected"] + ["bgp"] * len(k) + \
            ["ospf6", "connected6"] + ["static6"] * len(STATIC6_DSTS)
        self.bgp_pfx = [d.rsplit(".", 1)[0] + ".0/24" for d in self.bgp_dsts]
        # what carries traffic through a next hop, in fpmd on r1
        self.routes = [self.h2_net, self.h2_net6] + self.bgp_pfx + [STATIC6]

    def write_conf(self):
        r1 = self.r1
        doc = {"fpmd:fpmd": {
            "bpffs-dir": r1.pin,
            "interfaces": {"interface": [{"name": i} for i in r1.ifaces]},
            "control": {"socket": {"path": os.path.join(r1.tmp,
                                                        "fpmd.sock")}},
            "plugin": {"socket": {"path": os.path.join(r1.tmp,
                                                       "plugin.sock")}},
            "fpm": {"enabled": False},
            "behaviour": {"guard-interval": self.guard_interval},
            "logging": {"target": "file",
                        "file": os.path.join(r1.tmp, "fpmd.log"),
                        "level": "debug" if self.a.debug else "info"}}}
        with open(self.conf_path + ".tmp", "w") as f:
            json.dump(doc, f, indent=2)
        os.rename(self.conf_path + ".tmp", self.conf_path)

    def start_fpmd(self):
        self.fpmd_rt = getattr(self, "fpmd_rt", []) + [time.time()]
        d = Fpmd(self.r1, self.r1.ns, [], config=self.conf_path,
                 binary=self.binary)
        self.t.daemons.append(d)
        self.r1.fpmd = d
        self.fpmds.append(d)
        d.wait_ready(timeout=60)
        return d

    @property
    def fpmd(self):
        return self.r1.fpmd

    def route_state(self, prefix):
        """(state, egress interfaces) of prefix in fpmd on r1; (None,
        set()) while fpmd has no such route (between zebra's withdrawal
        and its new route, say)."""
        r = self.fpmd.ctl("--json", "show", "routes", prefix, check=False)
        if r.returncode and "no such route" in r.stderr:
            return None, set()
        if r.returncode:
            raise RuntimeError(f"fpmctl show routes {prefix} failed "
                               f"({r.returncode}): {r.stderr}")
        e = json.loads(r.stdout).get(prefix, [])
        for x in e:
            if x.get("installed"):
                ifs = {h.get("interfaceName") for h in x.get("nexthops", [])}
                return x.get("state"), ifs
        return None, set()

    def wait_plugin(self, timeout=60):
        def done():
            s = self.fpmd.show("plugin")
            return s.get("connected") and s.get("replayState") == "complete"
        wait_for(done, timeout=timeout, interval=0.1,
                 what="r1: plugin connected, replay complete")

    def wait_full(self, timeout=120):
        """Until fpmd on r1 holds every BGP route (stable and flap)."""
        want = self.a.stable + self.a.flap

        def full():
            n = self.bgp_count()
            return n >= want or None
        wait_for(full, timeout=timeout, interval=0.5,
                 what=f"r1: fpmd holds {want} BGP routes")

    def bgp_count(self):
        s = self.fpmd.show("summary")
        return s.get("routesByProtocol", {}).get("bgp", 0)

    def converge(self):
        t = self.t
        t.wait_ospf_full(timeout=60)
        t.wait_bgp_established(["r1"], timeout=60)
        self.wait_plugin()
        self.wait_full()
        for p in self.routes:
            wait_for(lambda p=p: self.route_state(p)[0] in (
                "forwarding", "unresolved"), timeout=60, interval=0.2,
                what=f"r1: fpmd has {p}")

    # ---- traffic ------------------------------------------------------------

    def start_traffic(self):
        tmp = self.t.tmp
        self.sink_log = os.path.join(tmp, "sink.bin")
        self.send_log = os.path.join(tmp, "send.bin")
        self.sink = self.h2.ns.popen(
            f"exec {PY} {SEQFLOW} recv --port {PORT} --log {self.sink_log}",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.sink.stderr.readline()
        if "ready" not in line:
            raise RuntimeError(f"sink: {line}{self.sink.stderr.read()}")
        self.noroute = NoRouteWatch([self.r1, self.t["r2"], self.t["r3"]])
        self.noroute.start()
        self.base = self.counters()
        to = ",".join(f"[{d}]:{PORT}" if ":" in d else f"{d}:{PORT}"
                      for d in self.dsts)
        self.sender = self.h1.ns.popen(
            f"exec {PY} {SEQFLOW} send --to {to} --flows 4 "
            f"--rate {self.a.rate} --log {self.send_log}",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.sender.stderr.readline()
        if "sending" not in line:
            raise RuntimeError(f"sender: {line}{self.sender.stderr.read()}")
        self.traffic_start = time.monotonic()

    def stop_traffic(self):
        self.sender.send_signal(signal.SIGINT)
        out, err = self.sender.communicate(timeout=60)
        if self.sender.returncode != 0:
            raise RuntimeError(f"sender failed: {err}")
        self.sent = json.loads(out)
        time.sleep(1.0)          # the last packets reach h2
        self.noroute.stop()
        self.sink.send_signal(signal.SIGTERM)
        out, err = self.sink.communicate(timeout=60)
        if self.sink.returncode != 0:
            raise RuntimeError(f"sink failed: {err}")
        self.recvd = json.loads(out)
        self.end = self.counters()

    def counters(self):
        """Everything the accounting reads, at one moment: fpmd's per
        interface counters on r1 (pinned: they survive restarts), r1's
        kernel forwarding and no-route counters, drops at the veths and
        at h2's socket."""
        c = {"fpmd": self.fpmd.show("counters"), "links": {}}
        # every counter of /proc/net/snmp, snmp6 and netstat on the
        # routers and h2: the report lists those that moved (a drop
        # anywhere shows there)
        for n in (self.r1, self.t["r2"], self.t["r3"], self.h2):
            c[f"snmp:{n.name}"] = kernel_counters(n.ns)
        r1, h2 = c["snmp:r1"], c["snmp:h2"]
        c["r1_fwd"] = r1["Ip:ForwDatagrams"] + r1["Ip6OutForwDatagrams"]
        c["r1_noroute"] = r1["IpExt:InNoRoutes"] + r1["Ip6InNoRoutes"]
        # the sink's socket takes both families
        c["h2_rcvbuf"] = h2["Udp:RcvbufErrors"] + h2["Udp6RcvbufErrors"]
        c["h2_noport"] = h2["Udp:NoPorts"] + h2["Udp6NoPorts"]
        c["arp_discards"] = arp_unresolved_discards()
        for n in (self.h1, self.r1, self.h2):
            out = n.run("ip -s -j link show").stdout
            for e in json.loads(out):
                s = e.get("stats64", {})
                c["links"][f"{n.name}:{e['ifname']}"] = (
                    s.get("rx", {}).get("dropped", 0),
                    s.get("tx", {}).get("dropped", 0))
        return c

    # ---- events -------------------------------------------------------------

    def event(self, kind, fn, detail=""):
        s = time.monotonic()
        rt = time.time()
        fn()
        e = time.monotonic()
        self.events.append({"kind": kind, "start": s, "end": e,
                            "start_rt": rt, "end_rt": time.time(),
                            "detail": detail})
        log(f"{kind}: {e - s:.2f} s {detail}")

    def wait_fwd(self, prefix, iface=None, timeout=60):
        def ok():
            st, ifs = self.route_state(prefix)
            return st == "forwarding" and (iface is None or ifs == {iface})
        wait_for(ok, timeout=timeout, interval=0.05,
                 what=f"r1: {prefix} forwarding"
                 f"{' via ' + iface if iface else ''}")

    def wait_gone(self, cond, timeout=0.5):
        """Until cond() (the change reached fpmd), at most timeout s: a
        change fpmd follows within a poll is never seen here."""
        try:
            wait_for(cond, timeout=timeout, interval=0.02)
        except AssertionError:
            pass

    def ev_neigh_del(self):
        """h2's IPv4 and IPv6 neighbors on r1's r1 -- h2 link: the BGP
        routes' next hop, the static IPv6 route's, and the connected
        destinations themselves."""
        nh, nh6 = self.bgp_nh.ip, self.bgp_nh.ip6
        ifn = self.r1.iface_to("h2").name

        def run():
            self.r1.run(f"ip neigh del {nh} dev {ifn} && "
                        f"ip -6 neigh del {nh6} dev {ifn}")
            for p in (self.bgp_pfx[0], STATIC6):
                self.wait_gone(lambda p=p: self.route_state(p)[0]
                               != "forwarding")
            for p in self.bgp_pfx + [STATIC6]:
                self.wait_fwd(p)
        self.event("neigh-del", run, f"{nh} and {nh6} on r1 {ifn}")

    def neigh_macs(self):
        """{address: MAC} of h2's neighbors on the r1 -- h2 link, in
        fpmd on r1."""
        want = {ipaddress.ip_address(self.bgp_nh.ip),
                ipaddress.ip_address(self.bgp_nh.ip6)}
        out = {}
        for e in self.fpmd.show("neighbors"):
            try:
                ip = ipaddress.ip_address(e.get("ip", ""))
            except ValueError:
                continue
            if ip in want:
                out[str(ip)] = e.get("mac", "").lower()
        return out

    def ev_neigh_mac(self):
        self.mac_b = not self.mac_b
        mac = MAC_B if self.mac_b else self.mac_a
        ifn = self.bgp_nh.name

        def run():
            self.h2.run(f"ip link set {ifn} address {mac}")
            wait_for(lambda: set(self.neigh_macs().values()) == {mac} and
                     len(self.neigh_macs()) == 2, timeout=30,
                     interval=0.02,
                     what=f"r1: fpmd has {mac} for h2 (IPv4 and IPv6)")
            for p in self.bgp_pfx + [STATIC6]:
                self.wait_fwd(p)
        self.event("neigh-mac", run, f"h2 {ifn} -> {mac}")

    def ospf_nbrs(self):
        """Router ids of r1's Full neighbors in OSPF and in OSPFv3 (an id
        in both sets)."""
        nb = self.r1.frr.json("show ip ospf neighbor").get("neighbors", {})
        out = set()
        for k, v in nb.items():
            for e in (v if isinstance(v, list) else [v]):
                if e.get("nbrState", "").startswith("Full"):
                    out.add(k)
        nb6 = self.r1.frr.json("show ipv6 ospf6 neighbor").get(
            "neighbors", [])
        return out & {e.get("neighborId") for e in nb6
                      if e.get("state", "").startswith("Full")}

    def ospf_nbrs_any(self):
        """Router ids of r1's neighbors in OSPF or OSPFv3, any state."""
        nb = self.r1.frr.json("show ip ospf neighbor").get("neighbors", {})
        nb6 = self.r1.frr.json("show ipv6 ospf6 neighbor").get(
            "neighbors", [])
        return set(nb) | {e.get("neighborId") for e in nb6}

    def ev_link_backup(self):
        r3 = self.t["r3"].router_id
        ifn = self.r1.iface_to("r3").name

        def down():
            self.r1.run(f"ip link set {ifn} down")
            wait_for(lambda: r3 not in self.ospf_nbrs_any(), timeout=30,
                     interval=0.1, what="r1: OSPF and OSPFv3 neighbor r3 "
                     "gone")

        def up():
            self.r1.run(f"ip link set {ifn} up")
            wait_for(lambda: r3 in self.ospf_nbrs(), timeout=60,
                     interval=0.1, what="r1: OSPF and OSPFv3 neighbor r3 "
                     "full")
        self.event("link-backup-down", down, f"r1 {ifn}")
        time.sleep(1)
        self.event("link-backup-up", up, f"r1 {ifn}")

    def ev_link_active(self):
        via_r2 = self.r1.iface_to("r2").name
        via_r3 = self.r1.iface_to("r3").name

        def down():
            self.r1.run(f"ip link set {via_r2} down")
            self.wait_fwd(self.h2_net, via_r3)
            self.wait_fwd(self.h2_net6, via_r3)

        def up():
            self.r1.run(f"ip link set {via_r2} up")
            self.wait_fwd(self.h2_net, via_r2)
            self.wait_fwd(self.h2_net6, via_r2)
        self.event("link-active-down", down, f"r1 {via_r2}")
        time.sleep(1)
        self.event("link-active-up", up, f"r1 {via_r2}")

    def ev_reload(self):
        self.guard_interval = 450 - self.guard_interval      # 200 <-> 250
        self.write_conf()
        d = self.fpmd
        start = os.path.getsize(d.log)

        def run():
            d.proc.send_signal(signal.SIGHUP)
            wait_for(lambda: "reload: re-checking" in
                     d.logtext()[start:], timeout=30, interval=0.05,
                     what="r1: fpmd reloaded")
        self.event("reload", run,
                   f"guard-interval {self.guard_interval} ms")

    def note_loop(self):
        """The longest loop iteration of the running fpmd and its count of
        slow ones, kept before it goes, and its RSS and fds then."""
        try:
            s = self.fpmd.show("summary")
            pid = self.fpmd.proc.pid
            self.ends[pid] = (procmem.rss_bytes(pid),
                              len(os.listdir(f"/proc/{pid}/fd")))
        except Exception:
            return
        self.loop_slow[pid] = s.get("loopIterationsSlow", 0)
        us = s.get("loopIterationMaxUs", 0)
        if us > self.loop_max[0]:
            self.loop_max = (us, s.get("loopIterationMaxStep", ""),
                             len(self.fpmds))

    def ev_restart(self, sig):
        kind = "restart-usr2" if sig == signal.SIGUSR2 else "restart-kill"
        self.note_loop()

        def run():
            old = self.fpmd
            old.proc.send_signal(sig)
            old.proc.wait(30)
            self.start_fpmd()
            self.wait_plugin()
            for p in self.routes:
                self.wait_fwd(p)
        self.event(kind, run, f"pid {self.fpmd.proc.pid}")

    EVENTS = ("neigh-del", "reload", "link-backup", "neigh-mac",
              "link-active")

    def rounds(self, restarts):
        """The events of a round (--events, in order, repeats allowed;
        default every one but restarts). restarts: each round begins
        with a restart, SIGKILL and SIGUSR2 in turn, so that each fpmd
        lives through every other event."""
        evs = {"neigh-del": self.ev_neigh_del, "reload": self.ev_reload,
               "link-backup": self.ev_link_backup,
               "neigh-mac": self.ev_neigh_mac,
               "link-active": self.ev_link_active}
        k = 0
        while True:
            sig = signal.SIGUSR2 if k % 2 else signal.SIGKILL
            first = [lambda sig=sig: self.ev_restart(sig)] if restarts \
                else []
            yield first + [evs[x] for x in self.a.events.split(",")]
            k += 1

    def run_rounds(self, restarts, t_end, count=None):
        """Whole rounds, ending as near t_end as they can (or count of
        them)."""
        last = n = 0
        for evs in self.rounds(restarts):
            if (n == count) if count is not None else \
                    time.monotonic() + last / 2 > t_end:
                break
            n += 1
            r0 = time.monotonic()
            for ev in evs:
                if self.flapper.error:
                    raise self.flapper.error
                ev()
                time.sleep(self.a.gap)
            last = time.monotonic() - r0

    # ---- resources ------------------------------------------------------------

    def resources(self, label, restart=False):
        """fpmd's RSS, map memory and fds at the flap cycle's full phase:
        every route announced and in fpmd, then a quiet moment. restart:
        first a SIGUSR2 restart in that phase, so that the fpmd read has
        the same history as the restart phase's baseline (how much of its
        heap a process keeps depends on what it went through: the RSS of
        the fpmd processes of one run spread over +-10 % when read at any
        moment)."""
        self.flapper.hold()
        self.wait_full()
        if restart:
            self.ev_restart(signal.SIGUSR2)
            self.wait_full()
        time.sleep(self.a.settle)
        pid = self.fpmd.proc.pid
        s = self.fpmd.show("summary")
        mem, nmaps = procmem.map_memory(pid)
        r = {"label": label, "pid": pid, "rss": procmem.rss_bytes(pid),
             "map_memory": mem, "maps": nmaps,
             "fds": len(os.listdir(f"/proc/{pid}/fd")),
             "chunk_bytes": s.get("mapChunkBytes", 0),
             "heap_in_use": s.get("heapInUse", 0),
             "nexthops": s.get("nexthops", 0), "groups": s.get("groups", 0),
             "neighbors": s.get("neighbors", 0),
             "routes_v4": s.get("routesV4"), "routes_v6": s.get("routesV6"),
             "bgp": self.bgp_count()}
        self.flapper.release()
        log(f"resources {label}: {r}")
        return r

    # ---- the run --------------------------------------------------------------

    def run(self):
        a = self.a
        t0 = time.monotonic()
        log(f"building the lab ({a.stable} stable + {a.flap} flapping "
            "BGP routes)")
        rt = time.time()
        self.build()
        self.converge()
        # FRR's and fpmd's start-up, for the log allow-list
        self.events.append({"kind": "setup", "start": t0,
                            "end": time.monotonic(), "start_rt": rt,
                            "end_rt": time.time(), "detail": ""})
        log(f"converged in {time.monotonic() - t0:.1f} s")
        self.setup_s = time.monotonic() - t0
        self.flapper = Flapper(os.path.join(self.h2.tmp, "bird.ctl"),
                               a.flap_period)
        self.start_traffic()
        self.flapper.start()
        t_end = self.traffic_start + a.minutes * 60 - a.tail
        # warm-up: traffic and flaps (the first full table, the first
        # flap cycles)
        time.sleep(max(1.0, min(a.warmup, t_end - time.monotonic())))
        # The long-lived phase: one fpmd (the first) through every event
        # but restarts, its resources read at the start and at the end,
        # and sampled all along.
        t1 = time.monotonic()
        t_long = t1 + (1 - a.restart_share) * (t_end - t1)
        self.long_base = self.long_end = None
        if a.restart_share < 1:
            # The warm-up ends with a round of events: the first of
            # each grows fpmd's heap to where it stays (the first
            # neighbor deletion's route status for 20000 routes, say).
            self.run_rounds(False, None, count=1)
            self.long_base = self.resources("long-lived: baseline")
            self.sampler = Sampler(self.fpmd, SAMPLE_S)
            self.sampler.start()
            self.run_rounds(False, t_long)
            self.sampler.stop_ev.set()
            self.sampler.join(10)
            self.long_end = self.resources("long-lived: end")
        self.phases.append(("long-lived", t1, time.monotonic()))
        # The restart phase: rounds that each begin with a restart. Its
        # baseline is an fpmd started by a SIGUSR2 restart with every
        # route announced (the first fpmd created the maps, every later
        # one adopts them, and holds less); the final reading, one
        # started the same way after the last round.
        t2 = time.monotonic()
        self.restart_base = self.churned = self.final = None
        if a.restart_share > 0:
            self.restart_base = self.resources("restarts: baseline",
                                               restart=True)
            self.run_rounds(True, t_end)
            self.flapper.hold()
            self.note_loop()
            # the fpmd that lived through the last round, then a fresh one
            self.churned = self.resources("restarts: churned")
            self.final = self.resources("restarts: final", restart=True)
        self.phases.append(("restarts", t2, time.monotonic()))
        self.flapper.stop_ev.set()
        self.flapper.join(30)
        self.stop_traffic()
        self.summary = self.fpmd.show("summary")
        self.note_loop()

    # ---- the accounting -------------------------------------------------------

    def windows(self):
        return [(e["start"] - PRE, e["end"] + POST, e["kind"])
                for e in self.events]

    def downstream(self, k, ts):
        """Packet k (sent at ts) went to a destination behind r2 or r3
        and one of their kernels dropped a packet of its family for want
        of a route just then (NOROUTE)."""
        fam = DOWNSTREAM.get(self.dst_kind[k % len(self.dsts)])
        return bool(fam and self.noroute and
                    self.noroute.take(fam, ts, ("r2", "r3")))

    def r1_no_route(self, k, ts):
        """Packet k (sent at ts) is of a family whose packets r1's own
        kernel dropped for want of a route just then (R1NOROUTE)."""
        fam = 6 if ":" in self.dsts[k % len(self.dsts)] else 4
        return bool(self.noroute and self.noroute.take(fam, ts, ("r1",)))

    def analyse(self):
        times = array.array("d")
        with open(self.send_log, "rb") as f:
            times.frombytes(f.read())
        with open(self.sink_log, "rb") as f:
            got = f.read()
        sent = self.sent["sent"]
        assert len(times) == sent, (len(times), sent)
        got = got[:sent] + bytes(max(0, sent - len(got)))
        lost = [k for k in range(sent) if not got[k]]
        wins = self.windows()
        per_kind = {}
        unexplained = []
        for k in lost:
            ts = times[k]
            kinds = [f"{w[2]} {ts - w[0] - PRE:+.3f} s" for w in wins
                     if w[0] <= ts <= w[1]]
            lk = next((x.split()[0] for x in kinds
                       if x.split()[0] in MAY_LOSE), None)
            if lk:
                per_kind[lk] = per_kind.get(lk, 0) + 1
            elif self.downstream(k, ts):
                per_kind[NOROUTE] = per_kind.get(NOROUTE, 0) + 1
            elif self.r1_no_route(k, ts):
                per_kind[R1NOROUTE] = per_kind.get(R1NOROUTE, 0) + 1
            else:
                unexplained.append((k, ts, kinds))
        self.lost, self.per_kind, self.unexplained = lost, per_kind, \
            unexplained
        self.times = times
        nd = len(self.dsts)
        self.lost_by_dst = {}
        for k in lost:
            x = self.dst_kind[k % nd]
            self.lost_by_dst[x] = self.lost_by_dst.get(x, 0) + 1
        self.sent_v6 = sum(len(range(k, sent, nd)) for k in range(nd)
                           if ":" in self.dsts[k])

        # fpmd's counters on r1 against the generator and the sink
        def ctr(c, ifn, reason):
            return c["fpmd"].get(ifn, {}).get(reason, {}).get("packets", 0)
        in_if = self.r1.iface_to("h1").name
        reasons = set(self.end["fpmd"].get(in_if, {}))
        # what h1 sends r1 besides the flows: ARP, and IPv6 ND / MLD
        # (multicast, link-local; pass-local: to r1's own addresses, as a
        # neighbor solicitation for h1's IPv6 default route's next hop
        # may be, where no flow goes)
        other = {"pass-not-ip", "pass-multicast", "pass-link-local",
                 "pass-l2-other", "pass-local", "tx", "tx-redirect-error",
                 "tx-xmit-drop"}
        d = {r: ctr(self.end, in_if, r) - ctr(self.base, in_if, r)
             for r in reasons}
        self.ctr_delta = {r: v for r, v in d.items() if v}
        fwd = d.get("forwarded", 0)
        passed = sum(v for r, v in d.items() if r not in other and
                     r != "forwarded")
        self.xdp_fwd, self.xdp_pass = fwd, passed
        self.kfwd = self.end["r1_fwd"] - self.base["r1_fwd"]
        self.knoroute = self.end["r1_noroute"] - self.base["r1_noroute"]
        self.tx_err = {}
        for ifn in self.r1.ifaces:
            for r in ("tx-redirect-error", "tx-xmit-drop"):
                v = ctr(self.end, ifn, r) - ctr(self.base, ifn, r)
                if v:
                    self.tx_err[f"{ifn} {r}"] = v
        self.link_drops = {}
        for k, (rx, tx) in self.end["links"].items():
            rx0, tx0 = self.base["links"].get(k, (0, 0))
            if rx - rx0 or tx - tx0:
                self.link_drops[k] = (rx - rx0, tx - tx0)
        self.kmoved = {}
        for n in ("r1", "r2", "r3", "h2"):
            b, e = self.base[f"snmp:{n}"], self.end[f"snmp:{n}"]
            for k, v in e.items():
                # what may say a packet was dropped (not the traffic's
                # own In/Out counts)
                if v != b.get(k, 0) and re.search(
                        r"Err|Discard|Drop|NoRoute|NoPort|Fail|Trunc|"
                        r"Csum|Unknown|Overflow|Prune|Rcvbuf|Sndbuf", k):
                    self.kmoved[f"{n} {k}"] = v - b.get(k, 0)
        self.arp_discards = self.end["arp_discards"] - \
            self.base["arp_discards"]
        self.rcvbuf = self.end["h2_rcvbuf"] - self.base["h2_rcvbuf"]
        self.noport = self.end["h2_noport"] - self.base["h2_noport"]

    def check(self):
        f = self.failures
        sent, recv = self.sent["sent"], self.recvd["received"]
        if recv + len(self.lost) != sent:
            f.append(f"sent {sent} != received {recv} + lost "
                     f"{len(self.lost)}")
        if self.unexplained:
            f.append(f"{len(self.unexplained)} packets lost outside the "
                     "documented windows (first: " + ", ".join(
                         f"#{k} at +{ts - self.traffic_start:.3f} s "
                         f"({self.wall(ts)}) "
                         f"{self.dst_kind[k % len(self.dsts)]} in "
                         f"{kinds or 'no window'}"
                         for k, ts, kinds in self.unexplained[:5]) + ")")
        h1_drop = self.h1_drop = sum(v[1] for k, v in
                                     self.link_drops.items()
                                     if k.startswith("h1:"))
        # every flow packet h1 sent reached r1's XDP program, which either
        # forwarded it or passed it to the kernel
        if self.xdp_fwd + self.xdp_pass + h1_drop != sent:
            f.append(f"fpmd on r1 saw {self.xdp_fwd} forwarded + "
                     f"{self.xdp_pass} passed + h1 tx drops {h1_drop} != "
                     f"{sent} sent")
        if self.kfwd > self.xdp_pass:
            f.append(f"r1's kernel forwarded {self.kfwd} > the "
                     f"{self.xdp_pass} fpmd passed to it")
        if recv > self.xdp_fwd + self.kfwd:
            f.append(f"h2 received {recv} > forwarded by XDP "
                     f"{self.xdp_fwd} + kernel {self.kfwd}")
        if self.noport:
            f.append(f"h2 answered {self.noport} packets with port "
                     "unreachable (the sink was not listening)")
        self.check_resources()
        self.log_errors = self.check_logs()
        if self.flapper.error:
            f.append(f"flapping bird failed: {self.flapper.error}")

    def check_resources(self):
        """The long-lived fpmd at the end of its phase against itself
        after the warm-up, and its trend; in the restart phase, the fpmd
        of the last round (what it holds in the kernel: maps, fds) and a
        fresh one started the baseline's way (all three) against the
        phase's baseline."""
        f = self.failures
        pairs = []
        if self.long_base:
            if self.long_end["pid"] != self.long_base["pid"]:
                f.append(f"the long-lived fpmd {self.long_base['pid']} was "
                         f"replaced by {self.long_end['pid']}")
            pairs.append((self.long_base, self.long_end,
                          ("rss", "map_memory", "fds")))
            self.trend = self.sampler.trend()
            for key, (first, last) in self.trend.items():
                if last > first * (1 + TREND):
                    f.append(f"{key} of the long-lived fpmd grew: mean "
                             f"{last:.0f} in the last third of its phase, "
                             f"{first:.0f} in the first (beyond "
                             f"+{100 * TREND:.0f} %)")
        if self.restart_base:
            pairs += [(self.restart_base, self.churned,
                       ("map_memory", "fds")),
                      (self.restart_base, self.final,
                       ("rss", "map_memory", "fds"))]
        for b, r, keys in pairs:
            for key in keys:
                if not 0.9 * b[key] <= r[key] <= 1.1 * b[key]:
                    f.append(f"{key}: {r[key]} ({r['label']}), "
                             f"{b[key]} ({b['label']}) (beyond +-10 %)")

    def slow_iterations(self):
        """fpmd's log lines for its slow iterations (lib/fpmdlog.py; at
        info level: each process's longest so far, and every one from
        100 ms on), each with the fpmd process
        (by its place in the shared log), the soak event under way and
        the last flap toggle before it."""
        try:
            with open(os.path.join(self.r1.tmp, "fpmd.log"), "rb") as fh:
                text = fh.read()
        except OSError:
            return []
        starts = [d.log_start for d in self.fpmds]
        out = []
        pos = 0
        for raw in text.split(b"\n"):
            at, pos = pos, pos + len(raw) + 1
            x = fpmdlog.slow_iteration(raw.decode(errors="replace"))
            if not x:
                continue
            x["fpmd"] = sum(1 for st in starts if st <= at)
            rt = x["rt"]
            x["event"] = next((e["kind"] for e in self.events
                               if e["start_rt"] - 0.2 <= rt <=
                               e["end_rt"] + 0.2), "")
            fl = [(t, on) for t, on in self.flapper.toggles if t <= rt]
            x["flap"] = (rt - fl[-1][0], fl[-1][1]) if fl else None
            out.append(x)
        out.sort(key=lambda x: -x["us"])
        return out

    def in_window(self, rt, kinds):
        for e in self.events:
            if e["kind"] in kinds and e["start_rt"] - LOG_SLACK <= rt <= \
                    e["end_rt"] + LOG_SLACK:
                return True
        return False

    def check_logs(self):
        """Error lines of fpmd (all its processes' log) and FRR's daemons,
        each on the allow-list keyed to an event, or a failure."""
        out = []
        when = fpmdlog.log_time

        def scan(path, is_err, allowed, who):
            try:
                with open(path, errors="replace") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                return
            for line in lines:
                if not is_err(line):
                    continue
                rt = when(line)
                ok = any(re.search(rx, line) and rt is not None and
                         self.in_window(rt, kinds)
                         for rx, kinds in allowed)
                out.append((who, ok, line))
        scan(os.path.join(self.r1.tmp, "fpmd.log"),
             lambda x: " fpmd error: " in x, FPMD_ERRORS_ALLOWED, "fpmd")
        for n in self.t.routers:
            for daemon in n.spec.frr:
                scan(os.path.join(n.tmp, f"{daemon}-errors.log"),
                     lambda x: bool(x.strip()), FRR_ERRORS_ALLOWED,
                     f"{n.name} {daemon}")
        bad = [x for x in out if not x[1]]
        if bad:
            self.failures.append(f"{len(bad)} error log lines not on the "
                                 "allow-list: " + "; ".join(
                                     f"{w}: {ln}" for w, _, ln in bad[:5]))
        return out

    def report_resources(self):
        keys = ("rss", "map_memory", "fds", "maps", "chunk_bytes",
                "heap_in_use", "nexthops", "groups", "neighbors",
                "routes_v4", "routes_v6", "bgp")

        def table(title, base, others):
            print(f"{title:>12} {'baseline':>12}" + "".join(
                f" {r['label'].split(': ')[-1]:>12} {'change':>8}"
                for r in others))
            for key in keys:
                b = base[key]
                row = f"{key:>12} {b:>12}"
                for r in others:
                    e = r[key]
                    ch = f"{100 * (e - b) / b:+.1f} %" if b else "-"
                    row += f" {e:>12} {ch:>8}"
                print(row)
        if self.long_base:
            table("long-lived", self.long_base, [self.long_end])
            print(f"(fpmd pid {self.long_base['pid']}, from the end of the "
                  "warm-up to the end of its phase; rss, map_memory, fds "
                  "checked)")
            tr, n = self.trend, len(self.sampler.samples)
            if tr:
                print(f"trend: {n} samples, every {SAMPLE_S:g} s; mean of "
                      "the first third -> the last third: " + ", ".join(
                          f"{k} {f:.0f} -> {la:.0f} "
                          f"({100 * (la - f) / f:+.1f} %)"
                          for k, (f, la) in tr.items()) +
                      f" (at most +{100 * TREND:.0f} %); rss slope "
                      f"{self.sampler.slope('rss') / 1024:+.1f} KiB/min, "
                      "heap in use "
                      f"{self.sampler.slope('heap_in_use') / 1024:+.1f} "
                      "KiB/min (slopes printed, not checked)")
            else:
                print(f"trend: {n} samples, too few to compare")
            print()
        if self.restart_base:
            table("restarts", self.restart_base, [self.churned, self.final])
            print("(baseline and final: fresh fpmds after a SIGUSR2 "
                  "restart, all three checked; churned: the fpmd that "
                  "lived through the last round, RSS not checked)")
            print()

    def report_slow(self, top=5):
        slow = self.slow = self.slow_iterations()
        print(f"slowest loop iterations (fpmd's log: {len(slow)} lines, "
              "each process's longest so far and any of 100 ms or more)")
        if not slow:
            print()
            return
        print(f"{'ms':>8} {'step':>14} {'step ms':>8} {'cpu ms':>7} "
              f"{'waits':>6} {'preempt':>7} {'fpmd':>5} {'at s':>8}  "
              "during")
        for x in slow[:top]:
            num = (lambda v, d=1000: "-" if v is None else f"{v / d:.1f}")
            fl = x["flap"]
            during = x["event"] or "no event"
            if fl:
                during += (f"; {fl[0]:.1f} s after the flap set was "
                           f"{'announced' if fl[1] else 'withdrawn'}")
            at = x["rt"] - self.traffic_start - self.rt_offset \
                if x["rt"] else 0
            print(f"{x['us'] / 1000:8.1f} {x['step']:>14} "
                  f"{x['step_us'] / 1000:8.1f} {num(x['cpu_us']):>7} "
                  f"{num(x['waits'], 1):>6} {num(x['preemptions'], 1):>7} "
                  f"#{x['fpmd']:<4} {at:8.1f}  {during}")
        print()

    def report(self):
        sent, recv = self.sent["sent"], self.recvd["received"]
        ends = list(self.ends.values())
        dur = self.times[-1] - self.times[0] if len(self.times) > 1 else 0
        print()
        print("==== soak summary " + "=" * 50)
        a = self.a
        rows = [
            ("run", f"{a.minutes:g} min, setup {self.setup_s:.1f} s; "
             f"{a.stable} stable + {a.flap} flapping BGP routes, flap "
             f"every {a.flap_period:g} s, {a.gap:g} s between events"),
            ("phases", "; ".join(
                f"{n} {e - b:.0f} s" for n, b, e in self.phases) +
             f" (restart share {a.restart_share:g})"),
            ("traffic", f"{dur:.0f} s, {sent} packets sent "
             f"({sent / max(dur, 1):.0f}/s, {len(self.dsts)} destinations "
             f"x 4 flows; {self.sent_v6} IPv6), {self.sent['late']} pace "
             f"resets, {self.sent['errors']} send errors"),
            ("received", f"{recv} (+{self.recvd['duplicates']} duplicates)"),
            ("lost", f"{len(self.lost)}: " + (", ".join(
                f"{k} {v}" for k, v in sorted(self.per_kind.items())) or
                "none in windows") + f"; unexplained {len(self.unexplained)}"),
            ("lost by destination", ", ".join(
                f"{k} {v}" for k, v in sorted(self.lost_by_dst.items())) or
             "none"),
            ("fpmd r1 (from h1)",
             f"forwarded {self.xdp_fwd} + passed {self.xdp_pass} = "
             f"{self.xdp_fwd + self.xdp_pass}; " + ", ".join(
                 f"{k} {v}" for k, v in sorted(self.ctr_delta.items()))),
            ("r1 kernel", f"forwarded {self.kfwd} of the {self.xdp_pass} "
             f"passed, InNoRoutes {self.knoroute}"),
            ("where lost", f"before r1 (h1 tx drops) {self.h1_drop}, in "
             f"r1's kernel (passed, not forwarded) "
             f"{self.xdp_pass - self.kfwd}, after r1 (forwarded, not "
             f"received) {self.xdp_fwd + self.kfwd - recv}"),
            ("tx errors r1", ", ".join(f"{k} {v}" for k, v in
                                       self.tx_err.items()) or "none"),
            ("veth drops", ", ".join(f"{k} rx {a} tx {b}" for k, (a, b) in
                                     self.link_drops.items()) or "none"),
            ("h2 socket", f"RcvbufErrors {self.rcvbuf}, NoPorts "
             f"{self.noport}"),
            ("kernel drop counters", ", ".join(
                f"{k} {v}" for k, v in sorted(self.kmoved.items())) or
             "none moved (r1, r2, r3, h2: /proc/net/snmp, snmp6, "
             "netstat)"),
            ("ARP queue discards", f"{self.arp_discards} (host-wide: "
             "/proc/net/stat/arp_cache unresolved_discards)"),
            ("BGP flaps", f"{self.flapper.flaps} ({self.a.flap} routes "
             f"each, every {self.a.flap_period} s)"),
            ("fpmd processes", f"{len(self.fpmds)} ({self.binary}); RSS "
             "before each stop " + (
                 f"{min(e[0] for e in ends) >> 10}-"
                 f"{max(e[0] for e in ends) >> 10} KiB, fds "
                 f"{min(e[1] for e in ends)}-"
                 f"{max(e[1] for e in ends)}" if ends else "-")),
            ("longest loop iteration", f"{self.loop_max[0]} us "
             f"({self.loop_max[1]}, fpmd #{self.loop_max[2]}); "
             f"{sum(self.loop_slow.values())} iterations over 20 ms in "
             "all"),
        ]
        for k, v in rows:
            print(f"{k:>24}  {v}")
        print()
        print(f"{'event':>18} {'count':>6} {'total s':>8} {'max s':>7} "
              f"{'lost':>6}  may lose")
        kinds = {}
        for e in self.events:
            kinds.setdefault(e["kind"], []).append(e["end"] - e["start"])
        for k, ds in kinds.items():
            print(f"{k:>18} {len(ds):6d} {sum(ds):8.2f} {max(ds):7.2f} "
                  f"{self.per_kind.get(k, 0):6d}  "
                  f"{'yes' if k in MAY_LOSE else 'no'}")
        print()
        self.report_resources()
        self.report_slow()
        errs = self.log_errors
        print(f"error log lines: {len(errs)} ({sum(1 for x in errs if x[1])}"
              " allowed)")
        # every line not allowed (up to 50), and a few allowed ones
        shown = [x for x in errs if not x[1]][:50] + \
            [x for x in errs if x[1]][:10]
        for w, ok, ln in shown:
            print(f"  {'allowed' if ok else 'NOT ALLOWED'} {w}: {ln}")
        print()
        if self.failures:
            print("SOAK FAILED:")
            for x in self.failures:
                print(f"  - {x}")
        else:
            print("SOAK PASSED")
        if self.a.json:
            with open(self.a.json, "w") as f:
                json.dump({"sent": sent, "received": recv,
                           "lost": len(self.lost), "per_kind": self.per_kind,
                           "unexplained": len(self.unexplained),
                           "events": self.events,
                           "long_lived": [self.long_base, self.long_end],
                           "trend": self.trend,
                           "samples": (self.sampler.samples
                                       if self.sampler else []),
                           "restarts": [self.restart_base, self.churned,
                                        self.final],
                           "slow_iterations": self.slow,
                           "lost_by_destination": self.lost_by_dst,
                           "failures": self.failures,
                           "loop_max_us": self.loop_max[0]}, f, indent=1)


def keep_logs(src, dst):
    """The lab's log files (not its sockets, pins or configs' state)
    into dst, for a failed check to be looked into."""
    n = 0
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".log") and ".log." not in name:
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            os.makedirs(os.path.join(dst, os.path.dirname(rel)),
                        exist_ok=True)
            shutil.copyfile(os.path.join(root, name), os.path.join(dst, rel))
            n += 1
    log(f"{n} log files kept in {dst}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("minutes", type=float,
                   help="traffic time, warm-up and final check included")
    p.add_argument("--rate", type=float, default=2000,
                   help="packets per second in all (default 2000)")
    p.add_argument("--stable", type=int, default=20000,
                   help="BGP prefixes bird announces for good")
    p.add_argument("--flap", type=int, default=10000,
                   help="BGP prefixes withdrawn and announced again")
    p.add_argument("--flap-period", type=float, default=5,
                   help="s between a withdrawal and the announcement")
    p.add_argument("--gap", type=float, default=3,
                   help="s between two churn events")
    p.add_argument("--warmup", type=float, default=20,
                   help="s of traffic and flaps before the baseline")
    p.add_argument("--settle", type=float, default=3,
                   help="s of quiet before a resource reading")
    p.add_argument("--tail", type=float, default=12,
                   help="s kept for the last readings at the end "
                   "(default %(default)s)")
    p.add_argument("--events", default=",".join(Soak.EVENTS),
                   help="a round's events, in order (default: all, "
                   "%(default)s); repeats allowed; a round of the "
                   "restart phase begins with a restart")
    p.add_argument("--restart-share", type=float, default=0.3,
                   help="the share of the event time, at the end, given "
                   "to the restart phase (default %(default)s; 0: one "
                   "fpmd all along, 1: restarts every round)")
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--keep-logs", metavar="DIR",
                   help="when a check fails, copy every daemon's log "
                   "(fpmd, FRR, bird) here before the lab is removed")
    p.add_argument("--debug", action="store_true",
                   help="the routers' zebras (debug zebra rib, dplane) "
                   "and fpmd at debug level, FRR timestamps in "
                   "microseconds, the routers' kernel routes and nexthops "
                   "monitored (monitor.log of each): with --keep-logs, to "
                   "look into a failure (heavy with BGP flaps: --flap 0)")
    p.add_argument("--fpmd", help="the fpmd binary (default the build's; "
                   "tests/fpmd-nosan of a sanitized build)")
    a = p.parse_args()
    bad = set(a.events.split(",")) - set(Soak.EVENTS)
    if bad:
        hint = ("; a round of the restart phase begins with a restart: "
                "--restart-share 1 for one every round"
                if "restart" in bad else "")
        p.error(f"--events: unknown {', '.join(sorted(bad))} (of "
                f"{', '.join(Soak.EVENTS)}{hint})")
    if not 0 <= a.restart_share <= 1:
        p.error("--restart-share: between 0 and 1")
    if os.geteuid() != 0:
        print("soak: needs root (namespaces, XDP)", file=sys.stderr)
        return 2
    if not os.access(FPMD, os.X_OK):
        print(f"soak: {FPMD} not built", file=sys.stderr)
        return 2
    binary = a.fpmd or FPMD
    with open(binary, "rb") as f:
        sanitized = b"__asan_init" in f.read()
    if sanitized and not a.fpmd:
        # ASan's quarantine holds freed memory back: a sanitized fpmd's
        # RSS says nothing about leaks (as in tests/test_faults.py).
        binary = os.path.join(BUILDDIR, "tests", "fpmd-nosan")
        if not os.access(binary, os.X_OK):
            print(f"soak: the build is sanitized and {binary} is not "
                  f"built: make check builds it, or make -C {BUILDDIR} "
                  "tests/fpmd-nosan", file=sys.stderr)
            return 2
    log(f"fpmd: {binary}")
    s = Soak(a, binary)
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        try:
            s.run()
        except Exception as e:
            log(f"soak could not run: {e!r}")
            if s.t:
                print(s.t.logs(tail=4000))
            return 2
        s.analyse()
        s.check()
        s.report()
        if s.failures and a.keep_logs:
            keep_logs(s.t.tmp, a.keep_logs)
        return 1 if s.failures else 0
    finally:
        signal.signal(signal.SIGTERM, old)
        for proc in (s.sender, s.sink):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
        if s.flapper:
            s.flapper.stop_ev.set()
        if s.noroute:
            s.noroute.stop()
        for m in s.monitors:
            if m.poll() is None:
                m.kill()
                m.wait()
        if s.t:
            s.t.cleanup()


if __name__ == "__main__":
    sys.exit(main())
