# SPDX-License-Identifier: GPL-2.0-or-later
"""Memory and restart benchmark: what one fpmd costs at 0, 100, 10k routes.

Run by hand as root (not collected by pytest: no test_ name), on a build
without sanitizers (their shadow memory makes RSS meaningless):

    FPMD_BUILDDIR=$PWD/build-rel scripts/build.sh --with-frr-source=...
    make -C build-rel tests/bench_lookup
    /usr/bin/python3 tests/bench_memory.py build-rel
    /usr/bin/python3 tests/bench_memory.py build-rel --routes 0,100 --restarts 5

For each table size and each table type (--tables: fast = DIR-24-8 and
the IPv6 binary search, fpmd's default; dxr = the compact IPv4 table
and the IPv6 binary search; lpm = the LPM tries), in
namespaces of its own (tests/lib/lab.py: h1 -- r1 -- h2), one fpmd with
-i r1-eth0 -i r1-eth1 --keep-forwarding and the table type, fed over FPM
(netlink in FPM frames, as zebra's dplane_fpm_nl sends them) N IPv4 and
N/5 IPv6 routes: the first routes of tests/bench_lookup's tables
(`bench_lookup --dump`, tests/tablegen.h: BGP-like lengths, 1.4 % /25-/32
nested under shorter routes, each route via one of 64 gateways on
r1-eth1, permanent neighbors in r1, or one in 16 via an ECMP group of
2-4 of them, sent as RTA_MULTIPATH). fpmd must hold every route as
forwarding. Then:

- map memory: the sum of memlock over every BPF map fd fpmd holds, as
  /proc/PID/fdinfo reports it (tests/lib/procmem.py), and the number of
  map fds;
- RSS: VmRSS of fpmd (/proc/PID/status) once the routes are in;
- restart: a hitless restart (SIGUSR2, then a new fpmd adopting the
  pinned maps), timed by the new fpmd itself from exec to READY (its
  "startup: ready in N ms" line; -D gives the phases), best of
  --restarts runs (the machine is shared: the best run is the one least
  disturbed).

It prints one table, the command that measured it, and verdicts against
issue 13's targets at 100 routes (map memory <= 16 MiB, RSS <= 16 MiB,
adoption <= 0.3 s).
"""
import argparse
import ipaddress
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TARGET_MIB = 16
TARGET_ADOPT_MS = 300
NEXTHOPS = 64  # tests/tablegen.h TG_NEXTHOPS
RTA_MULTIPATH = 9
V6_SHARE = 5   # N IPv4 routes and N / V6_SHARE IPv6, as bench_lookup's 1M + 200k
TABLES = {
    "fast": ("--ipv4-lookup", "dir-24-8", "--ipv6-lookup", "binary-search"),
    "dxr": ("--ipv4-lookup", "dxr", "--ipv6-lookup", "binary-search"),
    "lpm": ("--ipv4-lookup", "lpm-trie", "--ipv6-lookup", "lpm-trie"),
}


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builddir", help="a build without sanitizers "
                    "(FPMD_BUILDDIR of scripts/build.sh)")
    ap.add_argument("--routes", default="0,100,10000",
                    help="table sizes, comma-separated (0,100,10000)")
    ap.add_argument("--tables", default="fast,dxr,lpm",
                    help="table types, comma-separated: fast (DIR-24-8, "
                    "binary search), dxr (DXR, binary search), lpm (LPM "
                    "tries) (fast,dxr,lpm)")
    ap.add_argument("--restarts", type=int, default=3,
                    help="restarts per size; the best is shown (3)")
    ap.add_argument("--json", help="also write the rows to this file")
    return ap.parse_args()


ARGS = parse()
os.environ["FPMD_BUILDDIR"] = os.path.abspath(ARGS.builddir)

from lib import lab as L  # noqa: E402  (reads FPMD_BUILDDIR)
from bench_live import (FpmFeed, nla, NLM_F_CREATE, NLM_F_REPLACE,  # noqa
                        NLM_F_REQUEST, RT_TABLE_MAIN, RTA_DST, RTA_GATEWAY,
                        RTA_OIF, RTM_NEWROUTE, RTN_UNICAST, RTPROT_STATIC)
from lib import procmem  # noqa: E402
from lib.runner import guarded  # noqa: E402


def table(af, n):
    """The first n routes of bench_lookup's table for af, as
    [(network, (gateway number, ...))] (several: an ECMP group), minus
    any inside the lab's own subnets (a connected route there is the
    lab's)."""
    if not n:
        return []
    tool = os.path.join(ARGS.builddir, "tests", "bench_lookup")
    if not os.access(tool, os.X_OK):
        raise SystemExit(f"{tool} missing: make -C {ARGS.builddir} "
                         "tests/bench_lookup")
    out = subprocess.run([tool, "--dump", f"ipv{af}:{n}"], check=True,
                         capture_output=True, text=True).stdout
    lab_nets = [ipaddress.ip_network(x) for x in
                (("172.16.101.0/24", "172.16.102.0/24") if af == 4 else
                 ("2001:db8:101::/64", "2001:db8:102::/64"))]
    rows = []
    for line in out.splitlines():
        net, nh = line.split()
        net = ipaddress.ip_network(net)
        if not any(net.subnet_of(x) for x in lab_nets):
            rows.append((net, tuple(int(x) for x in nh.split(","))))
    return rows


def gateways(lab):
    """NEXTHOPS gateways per family on r1-eth1, permanent neighbors in r1
    (fpmd resolves its nexthops from them); [(v4, v6)] by number."""
    gws, cmds = [], []
    for k in range(NEXTHOPS):
        v4 = f"172.16.102.{10 + k}"
        v6 = f"2001:db8:102::{10 + k:x}"
        mac = f"02:fb:04:00:00:{k:02x}"
        cmds += [f"neigh add {v4} lladdr {mac} nud permanent dev r1-eth1",
                 f"neigh add {v6} lladdr {mac} nud permanent dev r1-eth1"]
        gws.append((v4, v6))
    subprocess.run(["ip", "-n", lab.r1.name, "-batch", "-"], check=True,
                   input="\n".join(cmds) + "\n", text=True)
    return gws


def route_msg(af, net, members, gws, oif, seq):
    """RTM_NEWROUTE as zebra sends it without nexthop groups: RTA_GATEWAY
    and RTA_OIF, or RTA_MULTIPATH for ECMP."""
    fam = socket.AF_INET if af == 4 else socket.AF_INET6
    gw = [ipaddress.ip_address(gws[m][0 if af == 4 else 1]).packed
          for m in members]
    body = struct.pack("=BBBBBBBBI", fam, net.prefixlen, 0, 0, RT_TABLE_MAIN,
                       RTPROT_STATIC, 0, RTN_UNICAST, 0)
    body += nla(RTA_DST, net.network_address.packed)
    if len(gw) == 1:
        body += nla(RTA_GATEWAY, gw[0]) + nla(RTA_OIF,
                                               struct.pack("=I", oif))
    else:
        mp = b""
        for g in gw:
            a = nla(RTA_GATEWAY, g)
            mp += struct.pack("=HBBi", 8 + len(a), 0, 0, oif) + a
        body += nla(RTA_MULTIPATH, mp)
    flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWROUTE, flags, seq,
                       0) + body


def feed_table(feed, af, rows, gws, oif):
    """rows over FPM (FpmFeed.send_msgs frames them)."""
    feed.send_msgs(route_msg(af, net, members, gws, oif, i + 1)
                   for i, (net, members) in enumerate(rows))


def ready_ms(d, timeout=10):
    """The new fpmd's "startup: ready" line. It follows the start-up
    phases' lines after a malloc_trim, which takes a while once the
    adopted tables have grown the heap: wait for it."""
    deadline = time.time() + timeout
    while True:
        m = re.findall(r"startup: ready in (\d+) ms \((.+?)\)",
                       d.logtext()[d.log_start:])
        if m:
            return int(m[-1][0]), m[-1][1]
        if time.time() > deadline:
            raise RuntimeError("no 'startup: ready' line:\n" + d.logtext())
        time.sleep(0.1)


def measure(lab, n, kind, restarts):
    extra = ("--keep-forwarding",) + TABLES[kind]
    gws = gateways(lab)
    d = lab.fpmd(extra=extra)
    oif = lab.r1.ifindex("r1-eth1")
    feed = None
    v4, v6 = table(4, n), table(6, n // V6_SHARE)
    if v4 or v6:
        want = {str(net) for net, _ in v4 + v6}
        feed = FpmFeed(lab.r1.name)
        feed_table(feed, 4, v4, gws, oif)
        feed_table(feed, 6, v6, gws, oif)
        deadline = time.time() + 120 + n / 5000
        while True:
            held = json.loads(d.ctl("--json", "show", "routes").stdout)
            mine = [p for p in held if p in want]
            if len(mine) >= len(want):
                break
            if time.time() > deadline:
                raise RuntimeError(f"fpmd holds {len(mine)} of "
                                   f"{len(want)} routes")
            time.sleep(0.2)
        bad = [p for p in mine if not forwarding(held[p])]
        if bad:
            raise RuntimeError(f"{len(bad)} of {len(want)} routes not "
                               f"forwarding, e.g. {bad[0]}: {held[bad[0]]}")
    time.sleep(0.5)  # let the replay settle (no more writes)
    pid = d.proc.pid
    mem, nmaps = procmem.map_memory(pid)
    rss = procmem.rss_bytes(pid)
    best = None
    for _ in range(restarts):
        d.stop(signal.SIGUSR2)
        if feed:
            feed.close()
            feed = None
        os.rename(d.log, d.log + ".old")
        d = lab.fpmd(extra=extra)
        ms, how = ready_ms(d)
        if how != "maps adopted":
            raise RuntimeError(f"restart did not adopt: {how}")
        best = ms if best is None else min(best, ms)
    rss_after = procmem.rss_bytes(d.proc.pid)
    return {"table": kind, "routes": n, "v4": len(v4), "v6": len(v6),
            "map_mib": procmem.mib(mem), "map_fds": nmaps,
            "rss_mib": procmem.mib(rss),
            "rss_adopted_mib": procmem.mib(rss_after),
            "restart_ms": best}


def forwarding(entry):
    """Every source's entry of a show routes --json prefix forwards."""
    srcs = entry if isinstance(entry, list) else [entry]
    return all(s.get("state") == "forwarding" for s in srcs)


def main():
    sizes = [int(x) for x in ARGS.routes.split(",") if x.strip()]
    kinds = [k for k in ARGS.tables.split(",") if k.strip()]
    for k in kinds:
        if k not in TABLES:
            raise SystemExit(f"--tables: {k}: not one of {', '.join(TABLES)}")
    rows = []
    for kind in kinds:
        for n in sizes:
            print(f"# {kind}: {n} routes ...", file=sys.stderr, flush=True)
            lab = L.Lab()
            rc = guarded(lambda: rows.append(
                measure(lab, n, kind, ARGS.restarts)),
                lab.cleanup, f"{kind}, {n} routes")
            if rc:
                return rc
    cmd = " ".join(["/usr/bin/python3", "tests/bench_memory.py"] +
                   sys.argv[1:])
    print(f"# {cmd}")
    print(f"# fpmd: {L.FPMD}")
    print(f"# tables: tests/bench_lookup --dump (BGP-like, /25-/32 nested, "
          f"{NEXTHOPS} gateways per family, 1 in 16 routes ECMP)")
    print(f"{'table':>6} {'routes':>8} {'IPv4':>8} {'IPv6':>7} "
          f"{'map MiB':>8} {'map fds':>8} {'RSS MiB':>8} "
          f"{'RSS adopted':>12} {'restart ms':>11}")
    for r in rows:
        print(f"{r['table']:>6} {r['routes']:>8} {r['v4']:>8} {r['v6']:>7} "
              f"{r['map_mib']:>8.1f} {r['map_fds']:>8} "
              f"{r['rss_mib']:>8.1f} {r['rss_adopted_mib']:>12.1f} "
              f"{r['restart_ms']:>11}")
    for r in rows:
        if r["routes"] != 100:
            continue
        for what, val, lim, unit in (
                ("map memory", r["map_mib"], TARGET_MIB, "MiB"),
                ("RSS", r["rss_mib"], TARGET_MIB, "MiB"),
                ("restart (adoption)", r["restart_ms"], TARGET_ADOPT_MS,
                 "ms")):
            print(f"# {r['table']}, {what} at 100 routes: {val:.1f} {unit} "
                  f"(target <= {lim} {unit}): "
                  f"{'OK' if val <= lim else 'MISSED'}")
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
