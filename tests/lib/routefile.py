# SPDX-License-Identifier: GPL-2.0-or-later
"""Route files for the benchmarks (--routes FILE), read as tests/tablegen.h's
tg_load reads them: one "PREFIX KEY" per line, IPv4 and IPv6 mixed, '#'
comments; scripts/route-table.py makes one from public routing data. The
nexthop key is hashed onto the benchmarks' NEXTHOPS gateways and GROUPS ECMP
groups exactly as tg_key_nh does, so a key is the same nexthop in every
benchmark. IPv6 routes longer than /64, repeats and routes inside the
benchmark's own subnets are skipped, and counted."""
import ipaddress

NEXTHOPS = 64       # TG_NEXTHOPS
GROUPS = 8          # TG_GROUPS
GROUP_ONE_IN = 16   # TG_GROUP_ONE_IN
M64 = (1 << 64) - 1


def splitmix64(x):
    """tablegen.h's tg_splitmix: splitmix64's output for state x."""
    z = (x + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def key_nh(key):
    """tablegen.h's tg_key_nh: < NEXTHOPS a gateway's number, else
    NEXTHOPS + a group's."""
    h = 0xcbf29ce484222325
    for c in key.encode():
        h = ((h ^ c) * 0x100000001b3) & M64
    h = splitmix64(h)
    if (h >> 32) % GROUP_ONE_IN == 0:
        return NEXTHOPS + (h >> 40) % GROUPS
    return h % NEXTHOPS


class Table:
    """One family's routes from a file, in file order: routes[i] is
    (address int, prefix length) and nhs[i] its nexthop number."""

    def __init__(self, path, af, own=()):
        self.path, self.af = path, af
        self.routes, self.nhs = [], []
        self.skipped = {"other family": 0, "longer than /64": 0,
                        "repeated": 0, "own subnets": 0}
        own = [ipaddress.ip_network(x) for x in own]
        seen = set()
        version = 4 if af == 4 else 6
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                try:
                    pfx, key = line.split()[:2]
                    net = ipaddress.ip_network(pfx)
                except ValueError as e:
                    raise SystemExit(f"{path}:{lineno}: {e}")
                if net.version != version:
                    self.skipped["other family"] += 1
                    continue
                if version == 6 and net.prefixlen > 64:
                    self.skipped["longer than /64"] += 1
                    continue
                if any(net.overlaps(o) for o in own):
                    self.skipped["own subnets"] += 1
                    continue
                k = (int(net.network_address), net.prefixlen)
                if k in seen:
                    self.skipped["repeated"] += 1
                    continue
                seen.add(k)
                self.routes.append(k)
                self.nhs.append(key_nh(key))
        if not self.routes:
            raise SystemExit(f"{path}: no IPv{version} routes")

    def describe(self):
        """One line: what was measured."""
        skipped = ", ".join(f"{v} {k}" for k, v in self.skipped.items()
                            if v and k != "other family")
        return (f"{self.path}: {len(self.routes)} IPv{self.af} routes"
                + (f" (skipped {skipped})" if skipped else ""))
