# SPDX-License-Identifier: GPL-2.0-or-later
"""Memory and restart benchmark: what one fpmd costs at 0, 100, 10k routes.

Run by hand as root (not collected by pytest: no test_ name), on a build
without sanitizers (their shadow memory makes RSS meaningless):

    FPMD_BUILDDIR=$PWD/build-rel scripts/build.sh --with-frr-source=...
    /usr/bin/python3 tests/bench_memory.py build-rel
    /usr/bin/python3 tests/bench_memory.py build-rel --routes 0,100 --restarts 5

For each table size, in namespaces of its own (tests/lib/lab.py: h1 -- r1 --
h2), one fpmd with default settings (-i r1-eth0 -i r1-eth1, --keep-
forwarding), IPv4 /24 routes fed over FPM (netlink in FPM frames, as
zebra's dplane_fpm_nl sends them) via h2. Then:

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
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TARGET_MIB = 16
TARGET_ADOPT_MS = 300


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builddir", help="a build without sanitizers "
                    "(FPMD_BUILDDIR of scripts/build.sh)")
    ap.add_argument("--routes", default="0,100,10000",
                    help="table sizes, comma-separated (0,100,10000)")
    ap.add_argument("--restarts", type=int, default=3,
                    help="restarts per size; the best is shown (3)")
    ap.add_argument("--json", help="also write the rows to this file")
    return ap.parse_args()


ARGS = parse()
os.environ["FPMD_BUILDDIR"] = os.path.abspath(ARGS.builddir)

from lib import lab as L  # noqa: E402  (reads FPMD_BUILDDIR)
from bench_live import FpmFeed  # noqa: E402
from lib import procmem  # noqa: E402
from lib.runner import guarded  # noqa: E402


def routes(n):
    """n distinct /24s from 10.0.0.0/8 and on (none overlaps the lab's)."""
    base = int(ipaddress.IPv4Address("11.0.0.0"))
    return [(base + (i << 8), 24) for i in range(n)]


def ready_ms(d):
    m = re.findall(r"startup: ready in (\d+) ms \((.+?)\)",
                   d.logtext()[d.log_start:])
    if not m:
        raise RuntimeError("no 'startup: ready' line:\n" + d.logtext())
    return int(m[-1][0]), m[-1][1]


def measure(lab, n, restarts):
    d = lab.fpmd(extra=("--keep-forwarding",))
    gw = ipaddress.IPv4Address(lab.H2_V4).packed
    oif = lab.r1.ifindex("r1-eth1")
    feed = None
    if n:
        feed = FpmFeed(lab.r1.name)
        feed.add_routes(4, routes(n), gw, oif)
        deadline = time.time() + 120
        while True:
            held = json.loads(d.ctl("--json", "show", "routes").stdout)
            mine = sum(1 for p in held if p.startswith("11."))
            if mine >= n:
                break
            if time.time() > deadline:
                raise RuntimeError(f"fpmd holds {mine} of {n} routes")
            time.sleep(0.2)
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
        d = lab.fpmd(extra=("--keep-forwarding",))
        ms, how = ready_ms(d)
        if how != "maps adopted":
            raise RuntimeError(f"restart did not adopt: {how}")
        best = ms if best is None else min(best, ms)
    rss_after = procmem.rss_bytes(d.proc.pid)
    return {"routes": n, "map_mib": procmem.mib(mem), "map_fds": nmaps,
            "rss_mib": procmem.mib(rss),
            "rss_adopted_mib": procmem.mib(rss_after),
            "restart_ms": best}


def main():
    sizes = [int(x) for x in ARGS.routes.split(",") if x.strip()]
    rows = []
    for n in sizes:
        print(f"# {n} routes ...", file=sys.stderr, flush=True)
        lab = L.Lab()
        rc = guarded(lambda: rows.append(measure(lab, n, ARGS.restarts)),
                     lab.cleanup, f"{n} routes")
        if rc:
            return rc
    cmd = " ".join(["/usr/bin/python3", "tests/bench_memory.py"] +
                   sys.argv[1:])
    print(f"# {cmd}")
    print(f"# fpmd: {L.FPMD}")
    print(f"{'routes':>8} {'map MiB':>8} {'map fds':>8} {'RSS MiB':>8} "
          f"{'RSS adopted':>12} {'restart ms':>11}")
    for r in rows:
        print(f"{r['routes']:>8} {r['map_mib']:>8.1f} {r['map_fds']:>8} "
              f"{r['rss_mib']:>8.1f} {r['rss_adopted_mib']:>12.1f} "
              f"{r['restart_ms']:>11}")
    small = [r for r in rows if r["routes"] == 100]
    if small:
        r = small[0]
        for what, val, lim, unit in (
                ("map memory at 100 routes", r["map_mib"], TARGET_MIB, "MiB"),
                ("RSS at 100 routes", r["rss_mib"], TARGET_MIB, "MiB"),
                ("restart (adoption) at 100 routes", r["restart_ms"],
                 TARGET_ADOPT_MS, "ms")):
            print(f"# {what}: {val:.1f} {unit} (target <= {lim} {unit}): "
                  f"{'OK' if val <= lim else 'MISSED'}")
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
