# SPDX-License-Identifier: GPL-2.0-or-later
"""The plugin feed protocol on fpmd's side, driven by a raw client that
speaks the protobuf messages of proto/fpmd.proto (PluginMsg in, FpmdMsg
out), so it needs no zebra: exact replays, acks with fpmd's status, and
malformed, oversized and wrong-version input refused with state kept.
The zebra module itself is tested in tests/test_plugin.py."""
import json
import os
import signal
import socket
import struct
import time

import pytest

from lib.lab import sh, wait_for
from lib.proto import (Client, DecodeError, acks, frame, hello, nexthop, pb,
                       replay_begin, replay_end, route)


def plugin_routes(d):
    return {p for p, e in d.show("routes").items()
            if any(x["source"] == "plugin" for x in e)}


def test_plugin_replay_is_exact_and_acked(lab):
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    c = Client(d)
    c.send(hello())
    h = c.recv()
    assert h.hello.version == 1, h  # fpmd's Hello, version 1

    c.send(replay_begin(7),
           route(1, "10.77.0.0", 16, "172.16.102.1", idx),
           route(2, "10.78.0.0", 16, "172.16.102.1", idx),
           route(3, "10.79.0.0", 16, "172.16.102.1", 0),  # no interface
           replay_end(7, 3))
    got = acks(c, 3)
    assert got[0] == (1, 0, "") and got[1] == (2, 0, ""), got
    assert got[2][0] == 3 and got[2][1] != 0 and "interface" in got[2][2], got
    done = c.recv()
    assert done.HasField("replay_done"), done  # echoes the end marker
    assert plugin_routes(d) == {"10.77.0.0/16", "10.78.0.0/16"}
    # Each install's Ack is followed by the route's RouteStatus (at once,
    # or after the commit that publishes its table part): prefix, table,
    # offloaded, fpmd's state; a refused one is not offloaded.
    c.wait_statuses(3)
    sts = {}
    for m in c.statuses:
        sts[(socket.inet_ntoa(m.prefix.addr), m.prefix.len)] = (
            m.offloaded, m.state, m.table)
    assert sts[("10.79.0.0", 16)] == (0, "refused", 254), sts
    assert sts[("10.77.0.0", 16)][1:] in (("forwarding", 254),
                                          ("unresolved", 254)), sts
    st = d.show("plugin")
    assert st["replayState"] == "complete" and st["ignored"] == 1, st

    # The next replay omits 10.78: it is gone at ReplayEnd, exactly, with
    # no timer; 10.77 is refreshed without a map write.
    w0 = st["mapWrites"]
    c.send(replay_begin(8), route(4, "10.77.0.0", 16, "172.16.102.1", idx),
           replay_end(8, 1))
    acks(c, 1)
    c.recv()
    assert plugin_routes(d) == {"10.77.0.0/16"}
    st = d.show("plugin")
    assert st["replaySwept"] == 1 and st["mapWrites"] == w0 + 1, st
    # Between replays, single operations are applied and acked.
    c.send(route(5, "10.77.0.0", 16, dele=True))
    assert acks(c, 1) == [(5, 0, "")]
    assert plugin_routes(d) == set()
    c.close()


def test_plugin_large_sweep_runs_in_slices(lab):
    """A replay that leaves 39,990 stale routes: fpmd answers ReplayDone
    at once and removes them over several loop turns (4 ms each: a
    million-route sweep held the loop for seconds), then shows how many
    went. The 10 the replay refreshed stay and forward."""
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    c = Client(d)
    c.send(hello())
    c.recv()
    n = 40000

    def pfx(i):
        return f"10.{64 + i // 256}.{i % 256}.0"

    c.send(replay_begin(1))
    for k in range(0, n, 500):
        c.send(*[route(i + 1, pfx(i), 24, "172.16.102.1", idx)
                 for i in range(k, k + 500)])
        assert all(a[1] == 0 for a in acks(c, 500))
    c.send(replay_end(1, n))
    assert c.recv().HasField("replay_done")
    wait_for(lambda: d.show("plugin")["replayRefreshed"] == n, timeout=30,
             what="the first replay's count")

    c.send(replay_begin(2), *[route(n + i + 1, pfx(i), 24, "172.16.102.1",
                                    idx) for i in range(10)],
           replay_end(2, 10))
    assert all(a[1] == 0 for a in acks(c, 10))
    assert c.recv().HasField("replay_done")
    wait_for(lambda: d.show("plugin")["replaySwept"] == n - 10, timeout=60,
             what="the stale routes swept")
    st = d.show("plugin")
    assert st["replayRefreshed"] == 10 and st["replayState"] == "complete", \
        st
    log = d.logtext()
    assert "removing the stale routes in slices" in log, log[-2000:]
    assert f"{n - 10} stale routes removed (in slices" in log, log[-2000:]
    assert plugin_routes(d) == {f"{pfx(i)}/24" for i in range(10)}
    summ = d.show("summary")
    assert summ["mapErrors"] == 0, summ
    c.close()


def test_plugin_hold_expiry_removes_everything_in_slices(lab):
    """zebra's plugin goes away with 40,000 routes and does not come back
    within fpm/hold-time (1 s here): every one of its routes and nexthops
    goes, over several loop turns, and the log says how many. The last
    replay's numbers stay as they were."""
    d = lab.fpmd(extra=("--no-fpm", "--fpm-hold", "1"))
    idx = lab.r1.ifindex("r1-eth1")
    c = Client(d)
    c.send(hello())
    c.recv()
    n = 40000
    c.send(replay_begin(1), nexthop(1, 7, "172.16.102.1", idx))
    assert acks(c, 1)[0][1] == 0
    for k in range(0, n, 500):
        c.send(*[route(i + 2, f"10.{64 + i // 256}.{i % 256}.0", 24, nhg=7)
                 for i in range(k, k + 500)])
        assert all(a[1] == 0 for a in acks(c, 500))
    c.send(replay_end(1, n))
    assert c.recv().HasField("replay_done")
    before = d.show("plugin")
    c.close()
    wait_for(lambda: f"its {n} routes removed" in d.logtext(), timeout=30,
             what="the hold to run out")
    wait_for(lambda: f"plugin: {n} routes removed (in slices, after the "
             "hold)" in d.logtext(), timeout=60, what="the sweep's end")
    assert not plugin_routes(d)
    assert not [k for k, v in d.show("nexthops").items()
                if isinstance(v, dict) and v.get("source") == "plugin"]
    st = d.show("plugin")
    assert (st["replaySwept"], st["replayRefreshed"]) == \
        (before["replaySwept"], before["replayRefreshed"]), (before, st)
    assert d.show("summary")["mapErrors"] == 0


# fpmd's read buffer for the plugin socket (wire_fill: 8 KiB while
# messages are small) and its reads per wakeup (plugin_io).
READ_BUF = 8192
READS_PER_WAKEUP = 64


def drain_acks(s, n, timeout=15):
    """Up to n acks [(seq, status)], read in big gulps so that fpmd's
    replies never wait in its socket (which would wake it for EPOLLOUT)."""
    buf, out = bytearray(), []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        try:
            chunk = s.recv(1 << 20)
        except socket.timeout:
            continue
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 4:
            size = struct.unpack(">I", buf[:4])[0]
            if len(buf) < 4 + size:
                break
            m = pb.FpmdMsg.FromString(bytes(buf[4:4 + size]))
            del buf[:4 + size]
            if m.HasField("ack"):
                out.append((m.ack.seq, m.ack.status))
    return out


def test_plugin_acks_a_burst_that_ends_a_wakeup(lab):
    """A burst of messages already queued on the socket, sized so that its
    last bytes come in with the last read of a wakeup's budget: fpmd must
    still handle and ack every message, though no more bytes come. It used
    to leave that last read in its buffer until the client sent something
    else, so a zebra waiting for the acks of its batch waited for ever."""
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    c = Client(d)
    c.s.setsockopt(socket.SOL_SOCKET, 32, 8 << 20)  # SO_SNDBUFFORCE
    c.send(hello())
    c.recv()
    c.send(nexthop(1, 10, "172.16.102.1", idx))
    assert acks(c, 1) == [(1, 0, "")]
    seq = 1 << 14  # 3-byte varints from here: every message the same size

    def burst(n):
        return [route(seq + i, "10.88.0.0", 16, nhg=10) for i in range(n)]

    m = len(frame(burst(1)[0]))
    per_read = READ_BUF // m * m  # bytes taken by every read after the 1st
    for wakeups in (1, 2):
        reads = wakeups * READS_PER_WAKEUP
        # End in the middle of the wakeup's last read.
        n = (READ_BUF + (reads - 2) * per_read + per_read // 2) // m
        msgs = burst(n)
        os.kill(d.proc.pid, signal.SIGSTOP)
        try:
            c.send(*msgs)
        finally:
            os.kill(d.proc.pid, signal.SIGCONT)
        got = drain_acks(c.s, n)
        assert len(got) == n, \
            f"{n} messages in {reads} reads: {len(got)} acked"
        assert [a[0] for a in got] == [seq + i for i in range(n)], \
            f"{n} messages in {reads} reads: acks out of order"
        assert all(a[1] == 0 for a in got), [a for a in got if a[1]][:3]
        seq += n
    assert "10.88.0.0/16" in plugin_routes(d)


# Not a message: a key of field 2^29-1 with wire type 7, which no
# protobuf decoder accepts (checked below against the generated one).
GARBAGE = b"\xff\xff\xff\xff\x0f"


def test_plugin_bad_input_refused_state_kept(lab):
    with pytest.raises(DecodeError):
        pb.PluginMsg.FromString(GARBAGE)
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    c = Client(d)
    c.send(hello(), replay_begin(1),
           route(1, "10.77.0.0", 16, "172.16.102.1", idx), replay_end(1, 1))
    c.recv()
    acks(c, 1)
    c.recv()
    before = plugin_routes(d)
    assert before == {"10.77.0.0/16"}

    cases = [
        ("wrong version", [frame(hello(99))], "API version"),
        ("before hello", [frame(route(1, "10.1.0.0", 16, "172.16.102.1",
                                      idx))], "before Hello"),
        ("malformed", [frame(hello()), frame(GARBAGE)], "malformed"),
        ("oversized", [struct.pack(">I", 64 << 20)], "larger than"),
    ]
    for what, data, word in cases:
        k = Client(d)
        errors = d.show("plugin")["errors"]
        k.s.sendall(b"".join(data))
        assert k.closed(), f"{what}: connection left open"
        k.close()
        wait_for(lambda: d.show("plugin")["errors"] > errors,
                 what=f"{what} counted")
        st = d.show("plugin")
        assert word in st["lastError"], (what, st)
        assert word in d.logtext(), (what, d.logtext()[-500:])
        # Held, not changed: the routes keep forwarding.
        assert plugin_routes(d) == before, what
        assert d.proc.poll() is None
    # A good client afterwards replays and resyncs.
    k = Client(d)
    k.send(hello(), replay_begin(2), replay_end(2, 0))
    k.recv()
    k.recv()
    assert plugin_routes(d) == set()
    k.close()


def test_plugin_wider_ecmp_than_fpmd_takes_kernel_path(lab):
    """A route or group with more paths than fpmd's 64 buckets is valid:
    it is taken, acked OK and kept on the kernel path. Refused, as it
    once was, the prefix stayed out of fpmd and a covering route forwarded
    it in XDP, over other paths than the kernel's."""
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    gw = "172.16.102.1"
    c = Client(d)
    c.send(hello())
    c.recv()
    # 65 paths (zebra sends up to 256: Debian's FRR is built with
    # --enable-multipath=256)
    c.send(route(1, "10.0.0.0", 8, gw, idx),
           route(2, "10.77.0.0", 16, paths=[(gw, idx)] * 65),
           *(nexthop(10 + i, i, gw, idx) for i in range(1, 66)),
           nexthop(80, 100, group=[(i, 1) for i in range(1, 66)]),
           route(81, "10.78.0.0", 16, gw, idx, nhg=100))
    got = acks(c, 69)
    assert all(status == 0 for _, status, _ in got), \
        [a for a in got if a[1]]
    for p in ("10.77.0.0/16", "10.78.0.0/16"):
        e = [x for x in d.show("routes")[p] if x["source"] == "plugin"]
        assert e and e[0]["state"] == "unsupported-nexthop", (p, e)
        look = d.ctl("lookup", p.split("/")[0].replace(".0.0", ".0.1"))
        assert "kernel: unsupported nexthop" in look.stdout, (p, look.stdout)
    log = d.logtext()
    assert "route 10.77.0.0/16: 65 paths" in log, log[-800:]
    assert "nexthop group 100: 65 members" in log, log[-800:]
    c.close()


def test_plugin_route_paths_override_a_stale_group(lab):
    """zebra 8.4.4 leaves a group short of a member that came back (a
    replay while its link was down) and puts the route back on the group
    id with both paths: fpmd forwards over the route's paths, both
    gateways, and says so; a route whose paths match its group keeps the
    group."""
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    gw1, gw2 = lab.H2_V4, "172.16.102.2"
    c = Client(d)
    c.send(hello())
    c.recv()
    c.send(nexthop(1, 1, gw1, idx), nexthop(2, 2, gw2, idx),
           nexthop(3, 10, group=((1, 1),)),
           nexthop(4, 11, group=((1, 1), (2, 1))),
           # as the zebra plugin sends every route: group id and paths
           route(5, "10.77.0.0", 16, paths=[(gw1, idx), (gw2, idx)], nhg=10),
           route(6, "10.78.0.0", 16, paths=[(gw2, idx), (gw1, idx)], nhg=11))
    got = acks(c, 6)
    assert all(a[1] == 0 for a in got), got
    rt = d.show("routes")
    stale = [x for x in rt["10.77.0.0/16"] if x["source"] == "plugin"][0]
    assert stale["isGroup"] and "nexthopGroupId" not in stale, stale
    look = json.loads(d.ctl("--json", "lookup", "10.77.0.1").stdout)
    assert {h.get("ip") for h in look["nexthops"]} == {gw1, gw2}, look
    ok = [x for x in rt["10.78.0.0/16"] if x["source"] == "plugin"][0]
    assert ok.get("nexthopGroupId") == 11, ok
    assert "route 10.77.0.0/16: nexthop group 10 has 1 member, the " \
        "route 2 paths" in d.logtext(), d.logtext()[-800:]
    c.close()


# nexthops and nh_groups are arrays of chunks (ARRAY_OF_MAPS, chunks
# without BTF): where a u32 field sits in the raw value (bpf/fpmd_maps.h).
FIELD_AT = {("nexthops", "ifindex"): 0, ("nh_groups", "nmembers"): 588}


def occupied(pin, name, field):
    """Slots of a pinned chunked map whose u32 field is set."""
    off = FIELD_AT[(name, field)]
    outer = json.loads(sh(f"bpftool -j map dump pinned {pin}/{name}").stdout)
    n = 0
    for e in outer:  # value: the chunk's map id
        mid = int.from_bytes(bytes(int(b, 16) for b in e["value"]),
                             "little")
        dump = json.loads(sh(f"bpftool -j map dump id {mid}").stdout)
        for v in dump:
            raw = bytes(int(b, 16) for b in v["value"][off:off + 4])
            n += raw != b"\0\0\0\0"
    return n


def test_summary_and_state_count_alike(lab):
    # A plugin group is reachable by zebra's id and by its content: one
    # group, one nh_groups slot, in 'show summary' as in 'show state'.
    d = lab.fpmd(extra=("--no-fpm", "--max-nexthops", "16",
                        "--max-groups", "16"))
    idx = lab.r1.ifindex("r1-eth1")
    gw1, gw2 = lab.H2_V4, "172.16.102.2"
    c = Client(d)
    c.send(hello(), replay_begin(1),
           nexthop(1, 1, gw1, idx), nexthop(2, 2, gw2, idx),
           nexthop(3, 3, blackhole=True),
           nexthop(4, 10, group=((1, 1), (2, 3))),
           route(5, "10.77.0.0", 16, nhg=10),
           route(6, "10.78.0.0", 16, nhg=10),
           route(7, "10.79.0.0", 16, nhg=3),
           replay_end(1, 3))
    c.recv()
    got = acks(c, 7)
    assert all(a[1] == 0 for a in got), got
    c.recv()
    # The same ECMP by hand: fpmctl's group owns its slot.
    d.ctl("nexthop", "add", "1", "via", gw1, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "2", "via", gw2, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "10", "group", "1/2")
    d.ctl("route", "add", "10.80.0.0/16", "nhid", "10")
    d.ctl("route", "add", "2001:db8:102::/64", "dev", "r1-eth1")

    # The kernel's own routes may change meanwhile (an IPv6 address
    # finishing DAD): a summary and a state read between two equal counts.
    for _ in range(20):
        summ = d.show("summary")
        st = json.loads(d.ctl("show", "state").stdout)["fpmd:fpmd"]["state"]
        again = d.show("summary")
        if all(summ[k] == again[k] for k in ("routesV4", "routesV6",
                                              "programmed", "neighbors")):
            break
        time.sleep(0.2)
    rt, nh = st["routes"], st["nexthops"]
    from_state = {
        "routesV4": rt["ipv4"], "routesV6": rt["ipv6"],
        "programmed": rt["programmed"],
        "notProgrammed": rt["not-programmed"],
        "otherTable": rt["other-table"], "nexthops": nh["count"],
        "groups": nh["groups"], "neighbors": nh["neighbors"],
    }
    assert {k: summ[k] for k in from_state} == \
        {k: int(v) for k, v in from_state.items()}, (summ, st)
    assert summ["routesBySource"]["plugin"] == 3 and \
        summ["routesBySource"]["static"] == 2, summ
    # Every nexthop and group has one state, as counted.
    assert sum(int(s["count"]) for s in nh["nexthop-state"]) == \
        summ["nexthops"] + summ["groups"], nh
    # The plugin's content group and fpmctl's group: two slots, two
    # groups. The nexthops are the slots and the blackhole id (no slot).
    assert summ["groups"] == 2 == occupied(d.pin, "nh_groups", "nmembers")
    assert summ["nexthops"] == 6 == \
        occupied(d.pin, "nexthops", "ifindex") + 1, summ
    c.close()
