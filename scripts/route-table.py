#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Make a route file for the benchmarks from public routing data.

The benchmarks (tests/bench_lookup, bench_live.py, bench_memory.py,
bench_cp.py) take --routes FILE: one "PREFIX NEXTHOP-KEY" per line, IPv4
and IPv6 mixed. This script makes such a file from the npm package
@ip-location-db/asn (IP ranges with their origin AS, built from RouteViews
BGP data and the RIRs' delegations; CC BY 4.0 / public data, see the
package's licence files), fetched with `npm pack` from the npm registry
unless --from names an unpacked package or its .tgz:

  - each range is cut into the fewest CIDR prefixes that cover it exactly
    (ipaddress.summarize_address_range);
  - the key is the origin AS ("AS13335"): a router with many peers sends a
    prefix to the neighbor its best path goes through, and prefixes of one
    origin mostly share it. The benchmarks hash the key onto their gateways
    and ECMP groups (same key, same nexthop);
  - the lines are shuffled (seeded), as BGP sends routes in no order, so the
    first n routes of a family are a table of size n.

What differs from a real full table: the data is a flat map (ranges do not
overlap), so covering aggregates with more-specifics under them are missing,
and adjacent prefixes of one AS come merged and cut again. Expect fewer
routes than the global table (2026: ~565k IPv4 against ~1M, ~168k IPv6
against ~230k) and longer runs of one nexthop.

The data is not committed: run this to make it (~20 s).
"""
import argparse
import csv
import glob
import ipaddress
import os
import random
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "@ip-location-db/asn"


def fetch(tmp):
    """npm pack the package into tmp; the path of its .tgz."""
    try:
        subprocess.run(["npm", "pack", "--silent", PACKAGE], cwd=tmp,
                       check=True, stdout=subprocess.DEVNULL)
    except FileNotFoundError:
        sys.exit("route-table: npm not found (apt-get install npm), or "
                 "give --from an unpacked package")
    except subprocess.CalledProcessError as e:
        sys.exit(f"route-table: npm pack {PACKAGE} failed ({e.returncode})")
    tgz = glob.glob(os.path.join(tmp, "*.tgz"))
    if len(tgz) != 1:
        sys.exit(f"route-table: npm pack left {tgz}")
    return tgz[0]


def unpack(src, tmp):
    """The directory holding asn-ipv4.csv and asn-ipv6.csv."""
    if os.path.isdir(src):
        base = src
    else:
        # The two CSVs only, by name: nothing else of the archive is
        # written anywhere.
        base = tmp
        with tarfile.open(src) as t:
            for name in ("asn-ipv4.csv", "asn-ipv6.csv"):
                try:
                    m = t.extractfile("package/" + name)
                except KeyError:
                    sys.exit(f"route-table: no package/{name} in {src}")
                with open(os.path.join(tmp, name), "wb") as out:
                    out.write(m.read())
    for d in (base, os.path.join(base, "package")):
        if os.path.exists(os.path.join(d, "asn-ipv4.csv")):
            return d
    sys.exit(f"route-table: no asn-ipv4.csv in {src}")


def prefixes(path):
    """(prefix, key) for every range of one CSV (first, last, asn, name)."""
    out = []
    with open(path, newline="") as f:
        for lineno, row in enumerate(csv.reader(f), 1):
            try:
                first = ipaddress.ip_address(row[0])
                last = ipaddress.ip_address(row[1])
                key = "AS" + str(int(row[2]))
            except (IndexError, ValueError) as e:
                sys.exit(f"route-table: {path}:{lineno}: {e}")
            for net in ipaddress.summarize_address_range(first, last):
                out.append((str(net), key))
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="The file's format and how the benchmarks map keys: "
        "tests/tablegen.h (tg_load) and tests/lib/routefile.py.")
    ap.add_argument("--out", default="routes-real.txt",
                    help="the route file to write (default %(default)s)")
    ap.add_argument("--from", dest="src", metavar="DIR|TGZ",
                    help="an unpacked or packed copy of the package "
                    "instead of npm pack")
    ap.add_argument("--seed", type=int, default=4242,
                    help="shuffle seed (default %(default)s)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        base = unpack(args.src or fetch(tmp), tmp)
        v4 = prefixes(os.path.join(base, "asn-ipv4.csv"))
        v6 = prefixes(os.path.join(base, "asn-ipv6.csv"))
    routes = v4 + v6
    random.Random(args.seed).shuffle(routes)
    with open(args.out, "w") as f:
        f.write(f"# {PACKAGE} via scripts/route-table.py --seed "
                f"{args.seed}: PREFIX ORIGIN-AS\n")
        for net, key in routes:
            f.write(f"{net} {key}\n")
    keys = {k for _, k in routes}
    print(f"{args.out}: {len(v4)} IPv4 and {len(v6)} IPv6 routes, "
          f"{len(keys)} origin ASes")


if __name__ == "__main__":
    main()
