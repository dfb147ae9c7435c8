# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end tests of fpmd's own zebra plugin (fpmd/zebra-plugin): the
installed Debian zebra loads it (`zebra -M /abs/path/fpmd_zebra.so:SOCKET`),
staticd and vtysh configure routes, fpmd takes them over the plugin socket
and forwards with real XDP.

What a user relies on: zebra loads the module and, with fpmd absent, keeps
installing routes in the kernel while the plugin says once that fpmd is not
there; routes configured in FRR reach fpmd (protocol "plugin") and are
forwarded by XDP; when fpmd starts late or restarts, the plugin reconnects
and replays, and fpmd ends up with exactly zebra's routes (the replay's end
marker, no timer): what changed while it was away is there, what was removed
is gone.

The module is built only with `configure --with-frr-source=DIR`
(scripts/frr-source.sh DIR prepares DIR); without it every test here is
skipped. Run:
  FPMD_BUILDDIR=build-plugin /usr/bin/python3 -m pytest -v tests/test_plugin.py
"""
import os
import re
import shutil
import socket
import threading
import time

import pytest

from lib.feeds import (flap_leaves_no_stale_ids, routes_of, start_fpmd,
                        start_plugin, wait_replayed)
from lib.feeds import wait_no_plugin_route as wait_no_route
from lib.feeds import wait_plugin_route as wait_route
from lib.frr import FrrError, Release, plugin_sock, start_frr, zplugin
from lib.lab import (BH_DST, BH_NET, H2_DST, H2_DST6, H2_NET, H2_NET6,
                     h2_loopback, ping, ping_result, ping_stream, wait_for)
from lib.traffic import (Udp, assert_kernel_flat, assert_lossless, fwd4,
                         measure, udp_send)
from lib.proto import frame, pb

HOLD_MS = 300 * 1000                               # fpm/hold-time's default
GONE_NET = "10.97.0.0/24"                          # removed while fpmd is away
NEW_NET = "10.96.0.0/24"                           # added while fpmd is away

ABSENT = "fpmd plugin: fpmd is not reachable at"
LOST = "fpmd plugin: connection to fpmd at"
REFUSED = "fpmd plugin: fpmd refused"


# ---- fixtures ---------------------------------------------------------------

@pytest.fixture
def lab(plugin_lab):
    return plugin_lab


# ---- helpers ----------------------------------------------------------------

def plugin_routes(d):
    return routes_of(d, "plugin")


def route_states(d):
    """{prefix: state} of the plugin's routes."""
    return {p: e.get("state") for p, e in plugin_routes(d).items()}


def zebra_fib(f):
    """zebra's selected, installed prefixes of the main table, without
    IPv6 link-local ones (the plugin does not feed them: one per
    interface, never forwarded)."""
    out = set()
    for v6 in (False, True):
        for p, es in f.routes(v6).items():
            if p.startswith("fe80:"):
                continue
            if any(e.get("selected") and e.get("installed") for e in es):
                out.add(p)
    return out


def count(text, needle):
    return text.count(needle)


# ---- a. the module loads; fpmd absent: zebra carries on, said once ----------

def test_a_loads_and_works_without_fpmd(lab):
    f = start_frr(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole",
                f"ipv6 route {H2_NET6} {lab.H2_V6}")
    f.wait_route(H2_NET)
    f.wait_route(BH_NET)
    f.wait_route(H2_NET6, v6=True)
    kernel = lab.r1.run("ip route; ip -6 route").stdout
    assert f"{H2_NET} " in kernel and f"blackhole {BH_NET}" in kernel, kernel
    assert H2_NET6 in kernel, kernel

    # Retries every second, says it once.
    wait_for(lambda: zplugin(f)["connectFailures"] >= 4, timeout=10,
             what="the plugin retrying")
    log = f.logtext()
    assert "fpmd plugin: loaded" in log, log
    assert count(log, ABSENT) == 1, log
    st = zplugin(f)
    assert not st["connected"] and st["socket"] == plugin_sock(lab), st
    assert st["routeOps"] == 0 and st["skippedDisconnected"] > 0, st
    # zebra is fine: still running, still taking changes.
    f.configure(f"no ip route {H2_NET} {lab.H2_V4}")
    f.wait_route(H2_NET, present=False)
    assert f"{H2_NET} " not in lab.r1.run("ip route").stdout
    assert f.running("zebra")
    assert count(f.logtext(), ABSENT) == 1


# ---- b. routes from vtysh reach fpmd and XDP forwards them ------------------

def test_b_routes_reach_fpmd_and_xdp(lab, server):
    h2_loopback(lab, H2_DST + "/24", BH_DST + "/24", H2_DST6 + "/64")
    d, f = start_plugin(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole",
                f"ipv6 route {H2_NET6} {lab.H2_V6}")
    lab.warm_kernel_neighbors()
    rt = wait_route(d, H2_NET)
    assert rt["type"] == "unicast" and rt["table"] == 254, rt
    # zebra's kernel nexthop object: the route names it, fpmd has it.
    assert rt.get("nexthopGroupId"), rt
    nh = d.show("nexthops").get(str(rt["nexthopGroupId"]))
    assert nh and nh.get("ip") == lab.H2_V4 and \
        nh.get("interfaceName") == "r1-eth1", nh
    wait_route(d, BH_NET, state="blackhole")
    assert plugin_routes(d)[BH_NET]["type"] == "blackhole"
    wait_route(d, H2_NET6)
    # Connected routes come from the plugin too (system-route events).
    for p in ("172.16.101.0/24", "172.16.102.0/24", "2001:db8:101::/64"):
        assert plugin_routes(d)[p]["state"] == "forwarding", \
            (p, plugin_routes(d).get(p))
    assert not any(p.startswith("fe80:") for p in plugin_routes(d))
    assert set(plugin_routes(d)) == zebra_fib(f)

    n = 20
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == n, f"{got}/{n} replies ({dl})"
    assert dl["r1-eth0"]["forwarded"] >= n and dl["r1-eth1"]["tx"] >= n, dl
    assert dl.f4 == 0, f"kernel forwarded: {dl}"
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST6, n, 0.02,
                                           v6=True))
    assert got == n, f"{got}/{n} IPv6 replies ({dl})"
    assert dl["r1-eth0"]["forwarded"] >= n and dl.f6 == 0, dl
    got, dl = measure(lab, d, lambda: ping(lab.h1, BH_DST, n, 0.02))
    assert got == 0 and dl["r1-eth0"]["drop-blackhole"] == n, dl

    # Removed in FRR: gone from fpmd, the kernel has no route either.
    f.configure(f"no ip route {H2_NET} {lab.H2_V4}")
    wait_no_route(d, H2_NET)
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == 0 and dl["r1-eth0"]["pass-no-route"] >= n, dl

    # Live connected and kernel routes (system-route notifications): an
    # address added on r1, a route added to its kernel by hand.
    lab.r1.run("ip addr add 10.95.0.1/24 dev r1-eth1")
    lab.r1.run(f"ip route add {GONE_NET} via {lab.H2_V4}")
    f.wait_route(GONE_NET)
    assert f.routes()[GONE_NET][0]["protocol"] == "kernel"
    wait_route(d, "10.95.0.0/24")
    wait_route(d, GONE_NET)
    lab.r1.run(f"ip route del {GONE_NET} via {lab.H2_V4}")
    lab.r1.run("ip addr del 10.95.0.1/24 dev r1-eth1")
    wait_no_route(d, GONE_NET)
    wait_no_route(d, "10.95.0.0/24")
    assert set(plugin_routes(d)) == zebra_fib(f)

    st = zplugin(f)
    assert st["connected"] and st["acksFailed"] == 0, st
    assert st["unsupported"] == 0, st
    assert st["acksOk"] >= st["routeOps"] + st["nexthopOps"] > 0, st
    assert REFUSED not in f.logtext() and ABSENT not in f.logtext()
    ps = d.show("plugin")
    assert ps["replayState"] == "complete" and ps["errors"] == 0, ps


# ---- c. ECMP: zebra's nexthop group through NexthopOps ----------------------

@pytest.mark.parametrize("plugin_lab", ["ecmp"], indirect=True)
def test_c_ecmp_group(lab, server):
    ifs = ("r1-eth0", "r1-eth1", "r1-eth2")
    d, f = start_plugin(lab, ifnames=ifs)
    f.configure(f"ip route {H2_NET} {lab.R2_V4}",
                f"ip route {H2_NET} {lab.R3_V4}")
    lab.r1.run(f"ping -c1 -W1 {lab.R2_V4} && ping -c1 -W1 {lab.R3_V4}")
    lab.h1.run(f"ping -c1 -W1 {lab.R1_V4_0}")
    rt = wait_route(d, H2_NET)
    assert rt["isGroup"], rt
    nhs = d.show("nexthops")
    g = nhs[str(rt["nexthopGroupId"])]
    assert sorted(nhs[str(m["id"])]["ip"] for m in g["nexthops"]) == \
        sorted([lab.R2_V4, lab.R3_V4]), g

    flows, per = 32, 10
    rx = Udp(lab.h2)
    (sent, got), dl = measure(lab, d, lambda: (
        udp_send(lab.h1, H2_DST, flows=flows, count=per), rx.stop()))
    assert got["total"] == flows * per, got
    used = {next(iter(v)) for v in got["received"].values()}
    assert used == {"h2-eth0", "h2-eth1"}, f"one path only: {got}"
    assert dl["r1-eth0"]["forwarded"] >= flows * per and dl.f4 == 0, dl

    # r1-r2 down: zebra drops that nexthop and tells fpmd through the
    # plugin; every flow goes by r3, still forwarded by XDP.
    def via():
        r = plugin_routes(d).get(H2_NET)
        if not r or not r.get("isGroup"):
            return [n.get("ip") for n in (r or {}).get("nexthops", [])]
        nhs = d.show("nexthops")
        g = nhs.get(str(r["nexthopGroupId"]), {})
        return sorted(nhs[str(m["id"])].get("ip")
                      for m in g.get("nexthops", []))

    lab.r1.run("ip link set r1-eth1 down")
    wait_for(lambda: via() == [lab.R3_V4], timeout=5,
             what="route via r3 only")
    rx = Udp(lab.h2)
    (sent, got), dl = measure(lab, d, lambda: (
        udp_send(lab.h1, H2_DST, flows=flows, count=per), rx.stop()))
    assert got["total"] == flows * per, (got, dl)
    assert all(set(v) == {"h2-eth1"} for v in got["received"].values()), got
    assert dl["r1-eth0"]["forwarded"] >= flows * per and dl.f4 == 0, dl


# ---- d. fpmd starts after zebra: the plugin catches up ----------------------

def test_d_fpmd_late_plugin_catches_up(lab, server):
    h2_loopback(lab, H2_DST + "/24")
    f = start_frr(lab)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole")
    f.wait_route(H2_NET)
    wait_for(lambda: ABSENT in f.logtext(), what="the absence logged")
    time.sleep(1.5)
    d = start_fpmd(lab)
    t0 = time.time()
    wait_replayed(d, timeout=10)
    took = time.time() - t0
    assert took < 5, f"the plugin took {took:.1f} s to connect and replay"
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET)
    wait_route(d, BH_NET, state="blackhole")
    assert set(plugin_routes(d)) == zebra_fib(f)
    assert count(f.logtext(), ABSENT) == 1, f.logtext()
    assert "fpmd plugin: connected to fpmd" in f.logtext()
    assert re.search(r"fpmd plugin: fpmd completed replay 1 ", f.logtext()), \
        f.logtext()
    n = 10
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == n and dl["r1-eth0"]["forwarded"] >= n and dl.f4 == 0, dl


# ---- e. fpmd restarts: reconnect, replay, exact resync ----------------------

# ---- i. ids zebra frees without telling: gone from fpmd too -----------------

def test_i_ids_zebra_frees_unannounced_leave_fpmd(lab, server):
    """zebra's nexthop ids are its kernel nexthop objects' ids. When
    r1-eth1 goes down the kernel flushes those on it without a word, and
    zebra frees the ones no route uses without a dataplane delete: the
    plugin never hears of them. After three link flaps fpmd holds no id
    zebra no longer has (it kept them, ~1 KiB each, a few per flap: the
    soak's heap growth, issue 27), and the route still forwards by XDP."""
    flap_leaves_no_stale_ids(lab, start_plugin, "plugin")


def local_routes(d):
    return {p for p, e in d.show("routes").items()
            if any(x["source"] == "kernel" for x in e)}


def test_e_fpmd_restart_exact_resync(lab, server):
    """fpmd --keep-forwarding stops; meanwhile FRR removes one route and
    adds another; a new fpmd adopts the pinned maps, the plugin reconnects
    and replays, and at the replay's end fpmd has exactly zebra's routes:
    the new one forwarded, the removed one gone from the maps too."""
    h2_loopback(lab, H2_DST + "/24", "10.97.0.1/24", "10.96.0.1/24")
    d, f = start_plugin(lab, extra=("--keep-forwarding",))
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {GONE_NET} {lab.H2_V4}",
                f"ip route {BH_NET} blackhole")
    lab.warm_kernel_neighbors()
    for p in (H2_NET, GONE_NET):
        wait_route(d, p)
    wait_route(d, BH_NET, state="blackhole")
    assert ping(lab.h1, "10.97.0.1", 3, 0.05) == 3

    local0 = local_routes(d)
    assert d.stop() == 0, "fpmd --keep-forwarding did not exit cleanly"
    os.rename(d.log, d.log + ".1")
    wait_for(lambda: LOST in f.logtext(), what="the plugin seeing fpmd go")
    f.configure(f"no ip route {GONE_NET} {lab.H2_V4}",
                f"ip route {NEW_NET} {lab.H2_V4}")
    f.wait_route(GONE_NET, present=False)
    f.wait_route(NEW_NET)
    skipped = zplugin(f)["skippedDisconnected"]
    assert skipped > 0, zplugin(f)

    d2 = start_fpmd(lab)
    assert "adopted" in d2.logtext(), d2.logtext()
    wait_replayed(d2, timeout=10)
    # Exact at the replay's end: no settle timer to wait for.
    assert set(plugin_routes(d2)) == zebra_fib(f), \
        (set(plugin_routes(d2)) ^ zebra_fib(f))
    assert GONE_NET not in plugin_routes(d2)
    assert plugin_routes(d2)[NEW_NET]["state"] in ("forwarding",
                                                   "unresolved")
    assert plugin_routes(d2)[BH_NET]["type"] == "blackhole"
    # Nothing that was right was rewritten: the only route map writes of
    # the new fpmd are GONE's removal, NEW's addition, and the router's
    # own addresses that came or went meanwhile (IPv6 link-locals).
    local_moved = len(local0 ^ local_routes(d2))
    writes = d2.show("plugin")["mapWrites"]
    assert writes <= 2 + local_moved, \
        f"{writes} route map writes for {2 + local_moved} changed routes"
    lab.warm_kernel_neighbors()
    wait_route(d2, NEW_NET)
    wait_route(d2, H2_NET)

    n = 10
    got, dl = measure(lab, d2, lambda: ping(lab.h1, "10.96.0.1", n, 0.02))
    assert got == n and dl["r1-eth0"]["forwarded"] >= n and dl.f4 == 0, dl
    got, dl = measure(lab, d2, lambda: ping(lab.h1, H2_DST, n, 0.02))
    assert got == n and dl["r1-eth0"]["forwarded"] >= n and dl.f4 == 0, dl
    # The removed route is out of the maps: XDP passes it to the kernel,
    # which has no route either.
    got, dl = measure(lab, d2, lambda: ping(lab.h1, "10.97.0.1", n, 0.02))
    assert got == 0 and dl["r1-eth0"]["forwarded"] == 0 and \
        dl["r1-eth0"]["pass-no-route"] >= n, dl

    st = zplugin(f)
    assert st["connected"] and st["connections"] == 2, st
    assert st["replaysSent"] == 2 and st["replaysDone"] == 2, st
    assert st["acksFailed"] == 0, st
    log = f.logtext()
    # Once each (fpmd may be back before the first retry: no absence).
    assert count(log, LOST) == 1 and count(log, ABSENT) <= 1, log
    assert count(log, "fpmd plugin: connected to fpmd") == 2, log
    assert REFUSED not in log


def test_e2_zebra_restart_replay(lab, server):
    """zebra -r exits (the kernel keeps its routes, fpmd keeps forwarding
    them), a route goes while it is away, zebra comes back with -K: the new
    zebra's plugin replays and fpmd ends up with exactly zebra's routes,
    while a ping stream through XDP loses nothing."""
    h2_loopback(lab, H2_DST + "/24", "10.97.0.1/24")
    d = start_fpmd(lab)
    f = lab.frr(start=False, fpm=False)
    mod = ["-M", f"{f.rel.plugin()}:{plugin_sock(lab)}"]
    f.start_zebra(retain=True, extra=mod)
    f.start("staticd")
    wait_replayed(d)
    f.configure(f"ip route {H2_NET} {lab.H2_V4}",
                f"ip route {GONE_NET} {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    wait_route(d, H2_NET)
    wait_route(d, GONE_NET)

    stream = ping_stream(lab.h1, H2_DST, 700)
    try:
        c0 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c0 + 20,
                 what="the ping stream through XDP")
        f0, k0 = fwd4(lab.r1), d.counters()
        before = route_states(d)
        f.stop("zebra")
        wait_for(lambda: not d.show("plugin")["connected"],
                 what="the plugin connection closed")
        t_gone = time.monotonic()
        f.configure(f"no ip route {GONE_NET} {lab.H2_V4}")
        lab.r1.run(f"ip route del {GONE_NET}")
        # zebra away: fpmd holds every route of it for the hold time, and
        # XDP forwards the stream by them meanwhile. GONE_NET too: the
        # plugin feed does not follow the kernel, zebra's replay sweeps it
        # (checked below).
        c1 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c1 + 50,
                 timeout=10, what="XDP forwarding while zebra is away")
        st = d.show("plugin")
        away = (time.monotonic() - t_gone) * 1000
        assert st["replayState"] == "held" and \
            HOLD_MS - away - 2000 <= int(st["holdRemainingMs"]) <= HOLD_MS, \
            f"held {away:.0f} ms, hold time {HOLD_MS} ms: {st}"
        now = route_states(d)
        assert now == before, \
            f"routes changed while zebra was away: {now} != {before}"
        f.start_zebra(retain=True, graceful=15, extra=mod)
        wait_replayed(d, connections=2)
        assert GONE_NET not in plugin_routes(d), "stale route left"
        # The replay waited for zebra's own start (FRR >= 9 reads
        # interfaces and addresses after its loop runs): it swept the one
        # route that went, not connected routes zebra had yet to process.
        assert int(d.show("plugin")["replaySwept"]) == 1, d.show("plugin")
        assert set(plugin_routes(d)) == zebra_fib(f), \
            set(plugin_routes(d)) ^ zebra_fib(f)
        wait_route(d, H2_NET)
        sent, got, out = ping_result(stream)
    finally:
        if stream.poll() is None:
            stream.kill()
            stream.wait()
    assert_lossless("ping", sent, got, 600)
    assert_kernel_flat(lab.r1, f0, d=d, c0=k0)
    got, dl = measure(lab, d, lambda: ping(lab.h1, "10.97.0.1", 5, 0.02))
    assert got == 0 and dl["r1-eth0"]["forwarded"] == 0, dl


# ---- f. an fpmd of another API version is refused, said once ---------------

def test_f_wrong_version_refused(lab):
    """A stand-in fpmd answering Hello with API version 99: the plugin
    refuses it with one clear error and keeps retrying; zebra is fine."""
    sock = plugin_sock(lab)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock)
    os.chmod(sock, 0o666)
    srv.listen(4)
    srv.settimeout(10)
    f = start_frr(lab)
    hello = frame(pb.FpmdMsg(hello=pb.Hello(version=99, peer="x")))
    try:
        for _ in range(3):
            c, _ = srv.accept()
            c.settimeout(5)
            first = c.recv(4096)
            assert len(first) > 4, first          # its Hello (and more)
            c.sendall(hello)
            try:
                while c.recv(4096):
                    pass
            except socket.timeout:
                pytest.fail("the plugin did not close on a wrong version")
            c.close()
    finally:
        srv.close()
    log = f.logtext()
    assert count(log, "speaks API version 99, this plugin 1: refused") == 1, \
        log
    f.configure(f"ip route {BH_NET} blackhole")
    f.wait_route(BH_NET)
    assert f.running("zebra")


# ---- g. fpmd's refusals land in zebra's log, with the prefix ----------------

def ack_msg(seq, status, error):
    return pb.FpmdMsg(ack=pb.Ack(seq=seq, status=status, error=error))


def test_g_refusals_logged_with_prefix(lab):
    """A stand-in fpmd that refuses one route (ERR_FULL, status 4) and
    acks the rest: zebra's log names the prefix and fpmd's error; the
    route stays in zebra and the kernel."""
    sock = plugin_sock(lab)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock)
    os.chmod(sock, 0o666)
    srv.listen(4)
    srv.settimeout(15)
    seen, problems = [], []
    stop = threading.Event()

    def serve():
        try:
            c, _ = srv.accept()
            c.settimeout(0.5)
            c.sendall(frame(pb.FpmdMsg(hello=pb.Hello(version=1,
                                                      peer="stand-in"))))
            buf, deadline = b"", time.time() + 30
            while time.time() < deadline and not stop.is_set():
                try:
                    chunk = c.recv(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 4 and \
                        len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
                    n = int.from_bytes(buf[:4], "big")
                    msg, buf = buf[4:4 + n], buf[4 + n:]
                    m = pb.PluginMsg.FromString(msg)
                    kind = m.WhichOneof("msg")
                    if kind not in ("route", "nexthop"):
                        continue
                    op = getattr(m, kind)
                    refuse = False
                    if kind == "route":
                        a = op.prefix.addr
                        p = f"{socket.inet_ntoa(a)}/{op.prefix.len}" \
                            if len(a) == 4 else None
                        seen.append(p)
                        refuse = p == BH_NET
                    out = ack_msg(op.seq, 4, "route map full") if refuse \
                        else ack_msg(op.seq, 0, "")
                    c.sendall(frame(out))
            c.close()
        except Exception as e:  # noqa: BLE001  reported below
            problems.append(repr(e))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    f = start_frr(lab)
    f.configure(f"ip route {BH_NET} blackhole",
                f"ip route {H2_NET} {lab.H2_V4}")
    f.wait_route(BH_NET)
    f.wait_route(H2_NET)
    want = f"fpmd plugin: fpmd refused route {BH_NET} (install): " \
           "ERR_FULL: route map full"
    wait_for(lambda: want in f.logtext(), timeout=10,
             what=f"{want!r} in zebra's log")
    st = zplugin(f)
    assert st["acksFailed"] == 1 and st["acksOk"] >= 1, st
    assert "route map full" in st["lastError"], st
    stop.set()
    t.join(15)
    srv.close()
    assert not problems, problems
    assert BH_NET in seen and H2_NET in seen, seen
    assert count(f.logtext(), "fpmd refused") == 1, f.logtext()
    assert f"blackhole {BH_NET}" in lab.r1.run("ip route").stdout


# ---- h. a module built for another FRR release is refused at load -----------

@pytest.mark.frr_releases("trixie", "forky")
def test_h_other_release_refused(lab):
    """The module built for the other of FRR 10.3 and 10.7 (same major,
    the same symbols, other structures) loaded into this zebra: it
    refuses with one clear line, zebra does not start, and the module
    built for it loads."""
    f = lab.frr(start=False, fpm=False)
    other = Release("forky" if f.rel.suite == "trixie" else "trixie")
    so = os.path.join(lab.tmp, "fpmd_zebra_other.so")
    shutil.copy(other.host(other.plugin()), so)
    with pytest.raises(FrrError) as e:
        f.start_zebra(extra=["-M", f"{so}:{plugin_sock(lab)}"])
    want = (f"fpmd plugin: built for FRR {other.upstream}, but this zebra "
            f"is FRR {f.rel.upstream}: not loading")
    assert want in str(e.value), str(e.value)[-3000:]
    assert not f.running("zebra")
    f.start_zebra(extra=["-M", f"{f.rel.plugin()}:{plugin_sock(lab)}"])
    assert "fpmd plugin: loaded (built for FRR " + f.rel.upstream in \
        f.logtext()
