# SPDX-License-Identifier: GPL-2.0-or-later
"""Map memory follows the table.

nexthops and nh_groups are arrays of chunks (bpf/fpmd_maps.h): a chunk is
created when fpmd first writes an index in it, and is in the fast path
before any route refers to that index. max-nexthops / max-groups stay the
limits. Measured here as the kernel counts it: the BPF maps fpmd holds
(tests/lib/procmem.py).
"""
import pytest

from lib import procmem
from test_e2e import add_h2_loopback, measure, nonzero
from test_plugin_feed import Client, acks, hello, nexthop, route

NH_CHUNK, NH_SIZE = 512, 44          # FPMD_NH_CHUNK_SHIFT 9, fpmd_nexthop
GROUP_CHUNK, GROUP_SIZE = 32, 592    # FPMD_GROUP_CHUNK_SHIFT 5
VIA_NH, VIA_GROUP = "10.99.0.1", "10.97.0.1"  # on h2's lo
GW_NET = "172.16.104"  # a /22 on r1-eth1: gateways for filler nexthops


def chunk_count(d, value_size, per_chunk):
    """Chunks of one of fpmd's chunked maps, among the maps it holds."""
    return sum(1 for m in procmem.maps(d.proc.pid).values()
               if m["value_size"] == value_size and
               m["max_entries"] == per_chunk)


def filler_gw(i):
    return f"{GW_NET[:-1]}{4 + i // 250}.{1 + i % 250}"


class Feed:
    """The plugin feed, one op per sequence number, every op acked."""

    def __init__(self, d):
        self.c = Client(d)
        self.c.send(hello())
        self.c.recv()
        self.seq = 0

    def send(self, make, *args, **kw):
        """make(seq, *args): the op; returns (status, error) of its ack."""
        self.seq += 1
        self.c.send(make(self.seq, *args, **kw))
        (_, status, err), = acks(self.c, 1)
        return status, err


def test_nexthops_and_groups_grow_past_a_chunk(lab):
    """Nexthops and groups past the first chunk forward in XDP with the
    right MACs (h2 answers only frames to its own MAC), new chunks come
    one at a time, and the configured maximums still say map-full."""
    d = lab.fpmd(extra=("--no-fpm", "--max-nexthops", "600",
                        "--max-groups", "40"))
    lab.routes_and_neighbors(d, v6=False)
    lab.r1.run(f"ip addr add {GW_NET}.3/22 dev r1-eth1")
    add_h2_loopback(lab, VIA_NH, VIA_GROUP)
    for pfx in ("10.99.0.0/24", "10.97.0.0/24"):
        lab.r1.run(f"ip route add {pfx} via {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    # The two connected routes' nexthops: one chunk; no group yet.
    assert chunk_count(d, NH_SIZE, NH_CHUNK) == 1
    assert chunk_count(d, GROUP_SIZE, GROUP_CHUNK) == 0
    idx = lab.r1.ifindex("r1-eth1")
    feed = Feed(d)
    for i in range(NH_CHUNK + 40):
        assert feed.send(nexthop, 10 + i, filler_gw(i), idx)[0] == 0
    assert feed.send(nexthop, 5000, lab.H2_V4, idx)[0] == 0
    for k in range(GROUP_CHUNK + 2):
        assert feed.send(nexthop, 6000 + k,
                         group=((5000, 1), (10 + k, 1)))[0] == 0
    assert feed.send(nexthop, 7000, group=((5000, 1),))[0] == 0
    assert feed.send(route, "10.99.0.0", 24, nhg=5000)[0] == 0
    assert feed.send(route, "10.97.0.0", 24, nhg=7000)[0] == 0

    nhs = d.show("nexthops")
    assert nhs["5000"]["fpmdIndex"] >= NH_CHUNK, nhs["5000"]
    assert nhs["7000"]["fpmdIndex"] >= GROUP_CHUNK, nhs["7000"]
    assert chunk_count(d, NH_SIZE, NH_CHUNK) == 2
    assert chunk_count(d, GROUP_SIZE, GROUP_CHUNK) == 2
    for dst in (VIA_NH, VIA_GROUP):
        got, dc, f4, _ = measure(lab, d, lambda: lab_ping(lab, dst))
        assert got == 3 and f4 == 0 and dc["r1-eth0"]["forwarded"] >= 3, \
            (dst, nonzero(dc), f4)

    # The maximums: what does not fit is map-full, named and counted.
    for i in range(NH_CHUNK + 40, 600):
        feed.send(nexthop, 10 + i, filler_gw(i), idx)
    for k in range(GROUP_CHUNK + 2, 45):
        feed.send(nexthop, 6000 + k, group=((5000, 1), (10 + k, 1)))
    summ = d.show("summary")
    assert summ["nexthopMapFull"] >= 1 and summ["groupMapFull"] >= 1, summ
    log = d.logtext()
    assert "nexthop table full (tables/max-nexthops = 600)" in log
    assert "nexthop group table full (tables/max-groups = 40)" in log
    assert chunk_count(d, NH_SIZE, NH_CHUNK) == 2
    assert chunk_count(d, GROUP_SIZE, GROUP_CHUNK) == 2
    # What fit still forwards.
    got, dc, f4, _ = measure(lab, d, lambda: lab_ping(lab, VIA_GROUP))
    assert got == 3 and f4 == 0, (nonzero(dc), f4)


def lab_ping(lab, dst):
    from lab import ping
    return ping(lab.h1, dst, 3, 0.05)
