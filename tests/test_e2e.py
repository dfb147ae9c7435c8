# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests: h1 -- r1 -- h2 in namespaces, fpmd on r1, real XDP.

Each test checks what a user of the fast path relies on: that packets are
forwarded by XDP and not by the kernel (fpmd's counters move, the kernel's
forwarding counters stay flat), that whatever the fast path cannot finish
still reaches its destination through the kernel, and that the daemon's
control interfaces refuse bad input without changing anything.

Run: FPMD_BUILDDIR=build /usr/bin/python3 -m pytest -v tests/test_e2e.py
"""
import json
import os
import socket
import struct
import subprocess

import pytest

from lib.lab import (h2_loopback, pinned_map, ping, ping_result, ping_stream,
                     wait_for, xdp_attached)
from lib.traffic import (assert_kernel_flat, assert_lossless, fwd4, nonzero,
                         stats_key, stats_map_packets)
from lib.traffic import measure as traffic_measure
from lib.proto import DecodeError, frame, pb, recv_frame, recv_msg

H2_EXTRA = "10.99.0.1"      # on h2's lo, reached via a gateway route
BLACKHOLE_DST = "10.98.0.1"  # on h2's lo, behind a blackhole route in fpmd


# ---- helpers ----------------------------------------------------------------

def measure(lab, d, fn):
    """Run fn(); return (its result, counter deltas, fwd4, fwd6)."""
    res, dl = traffic_measure(lab, d, fn)
    return res, dl.c, dl.f4, dl.f6


def routes_json(d):
    return d.show("routes")


def nexthops_json(d):
    return d.show("nexthops")


def static_routes(routes):
    return {p: e for p, e in routes.items()
            if any(x["source"] != "kernel" for x in e)}


def caches_consistent(lab, pin):
    """Every local_v4 key has its bit in local_v4_filter, and every ifaces
    entry below ifindex 4096 has its copy in ifaces_direct (fpmd_maps.h)."""
    words = pinned_map(pin, "local_v4_filter")[0]["value"]["w"]
    for e in pinned_map(pin, "local_v4"):
        a = e["key"] & 0xffffffff
        bit = ((a * 0x9e3779b1) & 0xffffffff) >> 16
        if not (words[bit // 64] & (1 << (bit % 64))):
            return f"local_v4 key {a:#x}: filter bit {bit} clear"
    direct = {e["key"]: e["value"] for e in pinned_map(pin, "ifaces_direct")}
    for e in pinned_map(pin, "ifaces"):
        c = direct.get(e["key"])
        if e["key"] < 4096 and (c is None or not c["flags"] & 0x80 or
                                c["slot"] != e["value"]["slot"]):
            return f"ifindex {e['key']}: no ifaces_direct copy ({c})"
    return None


@pytest.fixture(autouse=True)
def daemon_logs(lab):
    """On failure, pytest shows this teardown output: every fpmd log."""
    yield
    for name in sorted(os.listdir(lab.tmp)):
        if name.startswith("fpmd.log"):
            with open(os.path.join(lab.tmp, name)) as f:
                print(f"---- {name} ----\n{f.read()}")
    for d in lab.daemons:
        if d.proc.poll() is None:
            try:
                print("---- counters ----\n", d.ctl("show", "counters").stdout)
                print("---- routes ----\n", d.ctl("show", "routes").stdout)
                print("---- nexthops ----\n",
                      d.ctl("show", "nexthops").stdout)
            except Exception as e:  # noqa: BLE001  diagnostics only
                print("diagnostics failed:", e)


# ---- 1. ping through the fast path -----------------------------------------

def test_ping_v4_v6_forwarded_by_xdp(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    n = 10
    for v6, dst in ((False, lab.H2_V4), (True, lab.H2_V6)):
        got, dc, f4, f6 = measure(
            lab, d, lambda: ping(lab.h1, dst, n, 0.05, v6=v6))
        fam = "IPv6" if v6 else "IPv4"
        assert got == n, f"{fam}: {got}/{n} replies"
        # Requests enter on r1-eth0 and leave by r1-eth1; replies back.
        assert dc["r1-eth0"]["forwarded"] >= n, (fam, nonzero(dc))
        assert dc["r1-eth1"]["tx"] >= n, (fam, nonzero(dc))
        assert dc["r1-eth1"]["forwarded"] >= n, (fam, nonzero(dc))
        assert dc["r1-eth0"]["tx"] >= n, (fam, nonzero(dc))
        assert (f4, f6) == (0, 0), \
            f"{fam}: kernel forwarded {f4} IPv4 / {f6} IPv6 packets"


# ---- 2. TCP throughput ------------------------------------------------------

def test_iperf3_tcp_forwarded_by_xdp(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    lab.warm_kernel_neighbors()
    port = 5201
    server = lab.h2.popen(f"exec iperf3 -s -1 -p {port}",
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: f":{port}" in lab.h2.run(
            f"ss -Hltn sport = :{port}").stdout, what="iperf3 server")
        csum0 = lab.h2.snmp("Tcp", "InCsumErrors")
        r, dc, f4, _ = measure(lab, d, lambda: lab.h1.run(
            f"iperf3 -c {lab.H2_V4} -p {port} -t 3 --json",
            check=False, timeout=30))
        assert r.returncode == 0, f"iperf3 failed: {r.stdout}\n{r.stderr}"
        res = json.loads(r.stdout)
        got = res["end"]["sum_received"]["bytes"]
        bps = res["end"]["sum_received"]["bits_per_second"]
        # A few Gbit/s here; 50 Mbit/s only catches a broken path (drops,
        # retransmission storms), not a slow machine.
        print(f"iperf3: {bps / 1e6:.0f} Mbit/s, {got} bytes")
        assert bps > 50e6, f"only {bps / 1e6:.1f} Mbit/s ({got} bytes)"
        assert dc["r1-eth0"]["forwarded"] >= 2000, nonzero(dc)
        assert dc["r1-eth1"]["tx"] >= 2000, nonzero(dc)
        assert dc["r1-eth1"]["forwarded"] >= 1000, nonzero(dc)  # ACKs
        # Every segment and ACK had a route and a neighbor in fpmd: not
        # one was left to the kernel, so no slack is needed.
        assert f4 == 0, f"kernel forwarded {f4} packets during iperf3"
        assert lab.h2.snmp("Tcp", "InCsumErrors") == csum0, \
            "h2 received TCP segments with bad checksums"
    finally:
        server.kill()
        server.wait()


# ---- 3. unresolved neighbors go to the kernel, then to XDP -----------------

def neighbors_json(d):
    return {(n["ip"], n["interfaceName"]): n for n in d.show("neighbors")}


def configured(d):
    """What the operator entered: routes, nexthops and neighbors that are
    not the kernel's (its local routes and neighbors come and go)."""
    routes = {p: e for p, e in routes_json(d).items()
              if any(x["source"] != "kernel" for x in e)}
    neighs = sorted(json.dumps(n) for n in d.show("neighbors")
                    if n["source"] != "kernel")
    return routes, nexthops_json(d), neighs


def test_unresolved_neighbor_kernel_then_xdp(lab):
    # No neighbor anywhere yet: the first packet finds none in fpmd and
    # goes to the kernel, which resolves ARP; fpmd learns the neighbor from
    # the kernel and the following packets are forwarded by XDP.
    d = lab.fpmd()
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("route", "add", "172.16.102.0/24", "dev", "r1-eth1")
    assert (lab.H2_V4, "r1-eth1") not in neighbors_json(d)

    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, 1))
    assert got == 1, "first ping not answered"
    assert dc["r1-eth0"]["pass-unresolved"] >= 1, nonzero(dc)
    assert f4 >= 1, "the kernel did not forward the first packet"

    ne = wait_for(lambda: neighbors_json(d).get((lab.H2_V4, "r1-eth1")),
                  what="h2 learned from the kernel")
    assert ne["mac"] == lab.h2.mac("h2-eth0") and ne["source"] == "kernel", ne
    wait_for(lambda: (lab.H1_V4, "r1-eth0") in neighbors_json(d),
             what="h1 learned from the kernel")

    n = 5
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, n, 0.05))
    assert got == n, f"XDP: {got}/{n} replies"
    assert dc["r1-eth0"]["forwarded"] >= n, nonzero(dc)
    assert dc["r1-eth1"]["forwarded"] >= n, nonzero(dc)
    assert f4 == 0, f"kernel still forwarded {f4} packets"

    # The kernel forgets h2: so does fpmd, and the kernel resolves again.
    lab.r1.run("ip neigh flush dev r1-eth1")
    wait_for(lambda: (lab.H2_V4, "r1-eth1") not in neighbors_json(d),
             what="h2 forgotten with the kernel's entry")
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, 1))
    assert got == 1 and dc["r1-eth0"]["pass-unresolved"] >= 1, nonzero(dc)


def test_unresolved_gateway_kernel_then_xdp(lab):
    d = lab.fpmd()
    h2_loopback(lab, H2_EXTRA + "/32")
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("route", "add", "10.99.0.0/24", "via", lab.H2_V4, "dev", "r1-eth1")

    nh = [v for v in nexthops_json(d).values() if v.get("ip") == lab.H2_V4]
    assert len(nh) == 1 and not nh[0]["resolved"] and \
        nh[0]["state"] == "unresolved", nh
    rt = routes_json(d)["10.99.0.0/24"][0]
    assert rt["state"] == "unresolved", rt

    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, H2_EXTRA, 1))
    assert got == 1, "first ping not answered"
    assert dc["r1-eth0"]["pass-unresolved"] >= 1, nonzero(dc)
    assert f4 >= 1, f"kernel forwarded only {f4} packets"

    # The kernel resolved the gateway: fpmd completes the nexthop.
    mac = lab.h2.mac("h2-eth0")
    nh = wait_for(lambda: [v for v in nexthops_json(d).values()
                           if v.get("ip") == lab.H2_V4 and v["resolved"]],
                  what="gateway nexthop resolved")
    assert len(nh) == 1 and nh[0]["mac"] == mac and \
        nh[0]["state"] == "forwarding" and \
        nh[0]["interfaceName"] == "r1-eth1", nh
    assert routes_json(d)["10.99.0.0/24"][0]["state"] == "forwarding"
    wait_for(lambda: (lab.H1_V4, "r1-eth0") in neighbors_json(d),
             what="h1 learned from the kernel")

    n = 3
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, H2_EXTRA, n, 0.05))
    assert got == n, f"XDP: {got}/{n} replies"
    assert dc["r1-eth0"]["forwarded"] >= n, nonzero(dc)
    assert dc["r1-eth1"]["tx"] >= n, nonzero(dc)
    assert f4 == 0, f"kernel still forwarded {f4} packets"


# ---- 4. route removal -------------------------------------------------------

def test_route_del_falls_back_to_kernel(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    lab.warm_kernel_neighbors()
    n = 5
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, n, 0.05))
    assert got == n and f4 == 0 and dc["r1-eth0"]["forwarded"] >= n, \
        (got, f4, nonzero(dc))

    d.ctl("route", "del", "172.16.102.0/24")
    assert "172.16.102.0/24" not in routes_json(d)
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, n, 0.05))
    assert got == n, f"kernel path: {got}/{n} replies"
    assert dc["r1-eth0"]["pass-no-route"] >= n, nonzero(dc)
    assert dc["r1-eth0"]["forwarded"] == 0, nonzero(dc)
    assert f4 >= n, f"kernel forwarded only {f4} packets"
    # The replies' route (to h1) is still in the fast path.
    assert dc["r1-eth1"]["forwarded"] >= n, nonzero(dc)

    d.ctl("route", "add", "172.16.102.0/24", "dev", "r1-eth1")
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, n, 0.05))
    assert got == n and f4 == 0 and dc["r1-eth0"]["forwarded"] >= n, \
        ("re-added", got, f4, nonzero(dc))


# ---- 5. blackhole -----------------------------------------------------------

def test_blackhole_drops_in_xdp(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    h2_loopback(lab, BLACKHOLE_DST + "/32")
    # The kernel would forward it to h2, which would answer.
    lab.r1.run(f"ip route add 10.98.0.0/24 via {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    n = 5
    assert ping(lab.h1, BLACKHOLE_DST, n, 0.05) == n, \
        "without the blackhole the kernel path must answer"

    d.ctl("route", "add", "10.98.0.0/24", "blackhole")
    rt = routes_json(d)["10.98.0.0/24"][0]
    assert rt["type"] == "blackhole" and rt["installed"], rt
    got, dc, f4, _ = measure(lab, d,
                             lambda: ping(lab.h1, BLACKHOLE_DST, n, 0.05))
    assert got == 0, f"{got} replies through a blackhole"
    assert dc["r1-eth0"]["drop-blackhole"] >= n, nonzero(dc)
    assert f4 == 0, f"kernel forwarded {f4} packets"

    d.ctl("route", "del", "10.98.0.0/24")
    assert ping(lab.h1, BLACKHOLE_DST, n, 0.05) == n, \
        "after route del the kernel path must answer again"


# ---- 6. SIGTERM detaches ----------------------------------------------------

def test_sigterm_detaches_and_cleans_up(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    lab.warm_kernel_neighbors()
    n = 5
    got, _, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, n, 0.05))
    assert got == n and f4 == 0
    assert xdp_attached(lab.r1, "r1-eth0") and os.path.isdir(lab.pin)
    assert os.path.exists(d.sock)

    rc = d.stop()
    assert rc == 0, f"fpmd exited with {rc}"
    for ifname in ("r1-eth0", "r1-eth1"):
        assert not xdp_attached(lab.r1, ifname), f"{ifname} still has XDP"
    assert not os.path.exists(lab.pin), \
        f"pins left: {os.listdir(lab.pin)}"
    assert not os.path.exists(d.sock), "control socket left behind"

    f0 = fwd4(lab.r1)
    assert ping(lab.h1, lab.H2_V4, n, 0.05) == n, "kernel path broken"
    assert fwd4(lab.r1) - f0 >= 2 * n, "traffic did not take the kernel"


# ---- 7. restart without loss ------------------------------------------------

# The per-packet caches an fpmd before them did not pin (ifaces_direct,
# local_v4_filter): the adopting fpmd creates and fills them.
CACHES = ("ifaces_direct", "local_v4_filter")


@pytest.mark.parametrize("old_pins", ["same", "without-caches"])
def test_keep_forwarding_restart_without_loss(lab, old_pins):
    d = lab.fpmd(extra=("--keep-forwarding",))
    lab.routes_and_neighbors(d)
    h2_loopback(lab, H2_EXTRA + "/32")
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    d.ctl("nexthop", "add", "1", "via", lab.H2_V4, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "2", "dev", "r1-eth1")
    d.ctl("nexthop", "add", "10", "group", "1,1/2,3")
    d.ctl("route", "add", "10.99.0.0/24", "nhid", "10")
    d.ctl("route", "add", "10.98.0.0/24", "blackhole")
    lab.warm_kernel_neighbors()
    before = (routes_json(d),) + configured(d)[1:]
    assert ping(lab.h1, lab.H2_V4, 3, 0.05) == 3

    f0 = fwd4(lab.r1)
    stream = ping_stream(lab.h1, lab.H2_V4, 600)
    try:
        c0 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c0 + 30,
                 what="the ping stream through XDP")
        key = stats_key(d, "r1-eth0", "forwarded")
        assert d.stop() == 0, "fpmd --keep-forwarding did not exit cleanly"
        # No daemon: XDP stays, maps stay, forwarding goes on.
        for ifname in ("r1-eth0", "r1-eth1"):
            assert xdp_attached(lab.r1, ifname), f"{ifname} lost its XDP"
        pins = set(os.listdir(lab.pin))
        assert {"routes_v4", "nexthops", "stats", "meta"} <= pins, pins
        assert not os.path.exists(d.sock)
        if old_pins == "without-caches":
            # As an older fpmd left them; the program still holds them.
            for m in CACHES:
                os.unlink(os.path.join(lab.pin, m))
        s0 = stats_map_packets(lab.pin, key)
        wait_for(lambda: stats_map_packets(lab.pin, key) >= s0 + 50,
                 timeout=3, what="XDP forwarding with no daemon")
        assert fwd4(lab.r1) == f0, "kernel forwarded while fpmd was down"

        # A fresh start (without --keep-forwarding) adopts the maps.
        os.rename(d.log, d.log + ".1")  # wait_ready looks for "started:"
        d2 = lab.fpmd()
        log = d2.logtext()
        assert "adopted" in log, log
        after = (routes_json(d2),) + configured(d2)[1:]
        # The router's own addresses come back from the kernel, and may
        # have grown since (IPv6 link-locals finishing DAD); the rest must
        # be exactly what was entered.
        assert static_routes(after[0]) == static_routes(before[0]), \
            "routes differ after adoption"
        assert set(before[0]) <= set(after[0]), "local routes lost"
        assert after[1] == before[1], "nexthops differ after adoption"
        assert after[2] == before[2], "static neighbors differ after adoption"
        assert set(CACHES) <= set(os.listdir(lab.pin)), "caches not pinned"
        bad = caches_consistent(lab, lab.pin)
        assert bad is None, bad

    except BaseException:
        stream.kill()
        stream.wait()
        raise
    sent, got, out = ping_result(stream, timeout=20)
    assert_lossless("ping", sent, got, 500, out)
    assert_kernel_flat(lab.r1, f0)

    # Stopping the adopting daemon (no --keep-forwarding) cleans up.
    assert d2.stop() == 0
    assert not xdp_attached(lab.r1, "r1-eth0")
    assert not os.path.exists(lab.pin), "pins left after the final stop"


# ---- 8. fpmctl bad input ----------------------------------------------------

BAD_INPUT = [
    # (what, fpmctl args, words expected in stderr)
    ("bad prefix", ["route", "add", "10.0.0/33", "dev", "r1-eth0"],
     ["prefix"]),
    ("prefix length too long", ["route", "add", "10.0.0.0/33", "dev",
                                "r1-eth0"], ["prefix length"]),
    ("host bits set", ["route", "add", "10.0.0.1/8", "dev", "r1-eth0"],
     ["host bits"]),
    ("unknown interface", ["route", "add", "10.97.0.0/24", "via",
                           "172.16.102.1", "dev", "nosuch0"],
     ["interface"]),
    ("unknown nexthop id", ["route", "add", "10.97.0.0/24", "nhid", "4242"],
     ["nexthop", "unknown"]),
    ("delete nonexistent route", ["route", "del", "10.96.0.0/24"],
     ["no such route"]),
    ("delete nexthop in use", ["nexthop", "del", "1"], ["in use"]),
    ("delete unknown nexthop", ["nexthop", "del", "4242"],
     ["no such nexthop"]),
    ("group with unknown member", ["nexthop", "add", "20", "group",
                                   "1/77"], ["member", "unknown"]),
    ("nexthop on unknown interface", ["nexthop", "add", "21", "via",
                                      "172.16.102.1", "dev", "nosuch0"],
     ["interface"]),
    ("bad MAC", ["neighbor", "add", "172.16.102.9", "lladdr", "zz:00",
                 "dev", "r1-eth1"], ["mac"]),
    ("neighbor on unknown interface", ["neighbor", "add", "172.16.102.9",
                                       "lladdr", "02:00:00:00:00:09",
                                       "dev", "nosuch0"], ["interface"]),
]


def test_fpmctl_bad_input_refused_and_changes_nothing(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    d.ctl("nexthop", "add", "1", "via", lab.H2_V4, "dev", "r1-eth1")
    d.ctl("route", "add", "10.99.0.0/24", "nhid", "1")
    before = configured(d)
    for what, args, words in BAD_INPUT:
        r = d.ctl(*args, check=False)
        assert r.returncode != 0, f"{what}: accepted ({r.stdout})"
        err = r.stderr.lower()
        for w in words:
            assert w in err, f"{what}: stderr {r.stderr!r} lacks {w!r}"
        assert configured(d) == before, f"{what}: state changed"
    assert d.proc.poll() is None
    # The daemon's log names the request that was refused.
    log = d.logtext()
    assert "route del refused" in log, "refused delete logged as an add"
    assert "nexthop del refused" in log


# ---- 9. control protocol robustness -----------------------------------------

HELLO_V1 = pb.Request(hello=pb.Hello(version=1))
HELLO_V99 = pb.Request(hello=pb.Hello(version=99))
SHOW_ROUTES = pb.Request(show=pb.ShowRequest(what=pb.SHOW_ROUTES))
# Garbage in a frame: the Hello's key, then a length past the end and an
# unterminated varint.
GARBAGE = HELLO_V1.SerializeToString()[:1] + b"\x7f\x08\xff\xff\xff"


def response(s):
    """The next Response on s, or None at end of stream."""
    return recv_msg(s, pb.Response)


def closed(s):
    """True if the peer closed the connection (EOF or reset)."""
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def connect(d):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(d.sock)
    return s


def test_control_protocol_robustness(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)

    def still_serving(what):
        assert d.proc.poll() is None, f"{what}: fpmd died"
        assert "172.16.102.0/24" in routes_json(d), f"{what}: routes lost"

    # A well-formed session works (and the decoder is right).
    with connect(d) as s:
        s.sendall(frame(HELLO_V1))
        rsp = response(s)
        assert rsp.status == pb.OK and rsp.HasField("hello"), rsp
        s.sendall(frame(SHOW_ROUTES))
        rsp = response(s)
        assert rsp.status == pb.OK and len(rsp.routes) >= 2, rsp

    # A request before the Hello is refused and the connection closed.
    with connect(d) as s:
        s.sendall(frame(SHOW_ROUTES))
        rsp = response(s)
        assert rsp.status == pb.ERR_VERSION and not rsp.routes, rsp
        assert "hello" in rsp.error.lower(), rsp
        assert closed(s), "connection kept open without a Hello"
    still_serving("request before hello")

    # Another API version is refused, with our version, and closed.
    with connect(d) as s:
        s.sendall(frame(HELLO_V99))
        rsp = response(s)
        assert rsp.status == pb.ERR_VERSION, rsp
        assert "version" in rsp.error.lower(), rsp
        assert rsp.HasField("hello") and rsp.hello.version == 1, rsp
        assert closed(s), "connection kept open after a version mismatch"
    still_serving("hello version 99")
    assert "API version 99" in d.logtext()

    # Garbage in a frame: logged as malformed, connection closed.
    with connect(d) as s:
        s.sendall(frame(HELLO_V1))
        assert response(s).status == pb.OK
        with pytest.raises(DecodeError):
            pb.Request.FromString(GARBAGE)
        s.sendall(frame(GARBAGE))
        rsp = response(s)
        assert rsp is None or rsp.status == pb.ERR_INVALID, rsp
        assert closed(s), "connection kept open after garbage"
    still_serving("garbage")
    wait_for(lambda: "malformed" in d.logtext(), what="'malformed' in log")

    # An announced length over 1 MiB: closed before reading the body.
    with connect(d) as s:
        s.sendall(frame(HELLO_V1))
        assert response(s).status == pb.OK
        s.sendall(struct.pack(">I", (1 << 20) + 1) + b"\x00" * 64)
        assert closed(s), "connection kept open after a 1 MiB+ header"
    still_serving("oversized frame")

    # A peer that hangs up in the middle of a frame changes nothing.
    with connect(d) as s:
        s.sendall(frame(HELLO_V1))
        recv_frame(s)
        s.sendall(struct.pack(">I", 100) + SHOW_ROUTES.SerializeToString()[:1])
    still_serving("half a frame")
    r = d.ctl("show", "routes")
    assert "172.16.101.0/24" in r.stdout and "172.16.102.0/24" in r.stdout


# ---- 10. nexthop groups -----------------------------------------------------

def test_nexthop_group_forwards(lab):
    d = lab.fpmd()
    gw2 = "172.16.102.2"  # a second address of h2: a second nexthop
    lab.h2.run(f"ip addr add {gw2}/24 dev h2-eth0")
    dsts = [f"10.99.0.{k}" for k in range(1, 9)]
    h2_loopback(lab, *(a + "/32" for a in dsts))
    lab.r1.run(f"ip route add 10.99.0.0/24 nexthop via {lab.H2_V4} "
               f"nexthop via {gw2} weight 3")
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("neighbor", "add", lab.H1_V4, "lladdr", lab.h1.mac("h1-eth0"),
          "dev", "r1-eth0")
    d.ctl("nexthop", "add", "1", "via", lab.H2_V4, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "2", "via", gw2, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "10", "group", "1,1/2,3")
    d.ctl("route", "add", "10.99.0.0/24", "nhid", "10")
    # Neither gateway resolved yet: XDP would pass every packet, so the
    # group and its route are not "forwarding".
    assert not any(nexthops_json(d)[k]["resolved"] for k in ("1", "2"))
    assert nexthops_json(d)["10"]["state"] == "unresolved"
    assert routes_json(d)["10.99.0.0/24"][0]["state"] == "unresolved"
    lab.warm_kernel_neighbors()
    lab.r1.run(f"ping -c1 -W1 {gw2} >/dev/null", check=False)

    g = nexthops_json(d)["10"]
    assert g["group"] and g["buckets"] == 4, g
    assert g["nexthops"] == [{"id": 1, "weight": 1}, {"id": 2, "weight": 3}]
    rt = routes_json(d)["10.99.0.0/24"][0]
    assert rt["isGroup"] and rt["nexthopGroupId"] == 10, rt

    def ping_all():
        return sum(ping(lab.h1, a, 2, 0.02) for a in dsts)

    # The kernel resolved both gateways (the pings above): fpmd learned
    # them and both members are complete.
    mac = lab.h2.mac("h2-eth0")
    wait_for(lambda: all(nexthops_json(d)[k]["resolved"] for k in ("1", "2")),
             what="both group members resolved from the kernel")
    nhs = nexthops_json(d)
    for k in ("1", "2"):
        assert nhs[k]["resolved"] and nhs[k]["mac"] == mac and \
            nhs[k]["refCount"] == 1, nhs[k]
    assert nhs["10"]["state"] == "forwarding" and nhs["10"]["refCount"] == 1
    assert routes_json(d)["10.99.0.0/24"][0]["state"] == "forwarding"

    got, dc, f4, _ = measure(lab, d, ping_all)
    assert got == 2 * len(dsts), f"XDP: {got} replies"
    assert dc["r1-eth0"]["forwarded"] >= 2 * len(dsts), nonzero(dc)
    assert f4 == 0, f"kernel still forwarded {f4} packets"

    # Replacing the group's members re-buckets it in place.
    d.ctl("nexthop", "add", "10", "group", "1")
    g = nexthops_json(d)["10"]
    assert g["buckets"] == 1 and g["nexthops"] == [{"id": 1, "weight": 1}], g
    assert nexthops_json(d)["2"]["refCount"] == 0
    got, dc, f4, _ = measure(lab, d, ping_all)
    assert got == 2 * len(dsts) and f4 == 0, (got, f4, nonzero(dc))


# ---- 11. full maps ------------------------------------------------------------

def test_full_maps_are_reported_not_silent(lab):
    # Tiny tables: what does not fit is refused with the limit named,
    # logged, counted and leaves nothing behind; what fits keeps working.
    # (Routes from zebra are kept on the kernel path instead:
    # tests/test_faults_iface.py.)
    d = lab.fpmd(extra=("--max-routes-v4", "16", "--max-nexthops", "3"))
    lab.routes_and_neighbors(d, v6=False)
    used = d.show("summary")["routesV4"]
    assert used < 16, used
    added, refused = [], None
    for k in range(40):
        pfx = f"10.200.{k}.0/24"
        r = d.ctl("route", "add", pfx, "blackhole", check=False)
        if r.returncode:
            refused = (pfx, r.stderr)
            break
        added.append(pfx)
    assert refused, "the 16-entry table never filled"
    assert "route table full (tables/max-routes-v4 = 16)" in refused[1], \
        refused
    assert refused[0] not in routes_json(d)
    summ = d.show("summary")
    assert summ["routeMapFull"] >= 1 and summ["notProgrammed"] == 0, summ
    assert f"route {refused[0]}" in d.logtext() and "full" in d.logtext()
    # Routes that fit still forward by XDP.
    lab.warm_kernel_neighbors()
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, lab.H2_V4, 3, 0.05))
    assert got == 3 and f4 == 0 and dc["r1-eth0"]["forwarded"] >= 3, \
        nonzero(dc)

    # Nexthops: 2 implicit ones (the connected routes) + 1 fit.
    for pfx in added:
        d.ctl("route", "del", pfx)
    d.ctl("nexthop", "add", "1", "via", lab.H2_V4, "dev", "r1-eth1")
    r = d.ctl("nexthop", "add", "2", "via", "172.16.102.9", "dev", "r1-eth1",
              check=False)
    assert r.returncode == 1 and \
        "nexthop table full (tables/max-nexthops = 3)" in r.stderr, r
    assert "2" not in nexthops_json(d)
    assert "nexthop add refused: nexthop 2: nexthop table full" in \
        d.logtext()
    assert d.show("summary")["nexthopMapFull"] >= 1
    # What fits still forwards through nexthop 1.
    h2_loopback(lab, H2_EXTRA + "/32")
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    d.ctl("route", "add", "10.99.0.0/24", "nhid", "1")
    got, dc, f4, _ = measure(lab, d, lambda: ping(lab.h1, H2_EXTRA, 3, 0.05))
    assert got == 3 and dc["r1-eth0"]["forwarded"] >= 3 and f4 == 0, \
        nonzero(dc)


# ---- 12. lookup -------------------------------------------------------------

def lookup(d, addr):
    return json.loads(d.ctl("--json", "lookup", addr).stdout)


def test_lookup_says_which_path_or_why_kernel(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d)
    d.ctl("route", "add", "10.99.0.0/24", "via", "172.16.102.9", "dev",
          "r1-eth1")
    d.ctl("route", "add", "10.98.0.0/24", "blackhole")
    d.ctl("route", "add", "10.97.0.0/24", "unreachable")
    h2mac = lab.h2.mac("h2-eth0")

    # Exactly what a user reads, for a forwarded host on a connected net.
    assert lookup(d, lab.H2_V4) == {
        "address": lab.H2_V4, "prefix": "172.16.102.0/24",
        "protocol": "fpmctl", "source": "static", "type": "unicast",
        "state": "forwarding",
        "fastPath": True, "verdict": "forwarded",
        "reason": f"connected on r1-eth1, to {h2mac}",
        "nexthops": [{"id": 0, "interfaceName": "r1-eth1", "resolved": True,
                      "state": "forwarding"}]}
    v6 = lookup(d, lab.H2_V6)
    assert v6["fastPath"] and v6["prefix"] == "2001:db8:102::/64", v6

    gw = lookup(d, "10.99.0.1")
    assert gw["prefix"] == "10.99.0.0/24" and not gw["fastPath"] and \
        gw["verdict"] == "kernel" and "172.16.102.9" in gw["reason"] and \
        "pass-unresolved" in gw["reason"], gw
    assert gw["nexthops"][0]["ip"] == "172.16.102.9" and \
        not gw["nexthops"][0]["resolved"], gw
    # Once the neighbor is known, the same lookup says how it leaves.
    d.ctl("neighbor", "add", "172.16.102.9", "lladdr", "02:00:00:00:00:09",
          "dev", "r1-eth1")
    gw = lookup(d, "10.99.0.1")
    assert gw["fastPath"] and gw["reason"] == \
        "via 172.16.102.9 dev r1-eth1, to 02:00:00:00:00:09", gw

    bh = lookup(d, "10.98.0.7")
    assert bh["verdict"] == "dropped" and "drop-blackhole" in bh["reason"], bh
    un = lookup(d, "10.97.0.7")
    assert un["verdict"] == "kernel" and "pass-unreachable" in un["reason"]
    own = lookup(d, lab.R1_V4_1)
    assert own["prefix"] == f"{lab.R1_V4_1}/32" and \
        own["source"] == "kernel" and own["protocol"] == "local" and \
        "pass-local" in own["reason"], own
    mc = lookup(d, "224.0.0.5")
    assert "pass-multicast" in mc["reason"] and "prefix" not in mc, mc
    none = lookup(d, "198.51.100.1")
    assert "pass-no-route" in none["reason"] and "prefix" not in none, none
    # Longest match wins over a covering route.
    d.ctl("route", "add", "10.99.0.128/25", "blackhole")
    assert lookup(d, "10.99.0.200")["prefix"] == "10.99.0.128/25"
    assert lookup(d, "10.99.0.100")["prefix"] == "10.99.0.0/24"
    r = d.ctl("lookup", "not-an-address", check=False)
    assert r.returncode != 0 and "bad address" in r.stderr
