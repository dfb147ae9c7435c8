# SPDX-License-Identifier: GPL-2.0-or-later
"""Bugs found by fuzzing and fault tests (issue 11, item 10), each pinned
by a test that fails without its fix:

- 'show routes' at 200k routes to a client that reads slowly, and fpmctl
  (text and --json): every route arrives (fpmd once closed a control client
  whose write hit EAGAIN);
- plugin acks to a plugin that reads slowly: every RouteOp gets exactly one
  Ack (fpmd once dropped them with "send failed");
- FPM routes of another table survive the settle sweep of a replay that
  refreshed them;
- (issue 27) a namespace whose kernel has no route at all: an FPM peer
  that leaves has its routes checked against the empty tables, fpmd
  starts there and adopts its empty DXR table (sanitized fpmd aborted:
  qsort(NULL, 0, ...), whose base the C library declares nonnull).

Real fpmd on the h1-r1-h2 lab (tests/lib/lab.py), raw FPM, control and plugin
clients (no zebra needed for these)."""
import ipaddress
import json
import socket
import struct
import subprocess
import threading
import time

from lib.feeds import fpm, fpm_routes, wait_no_route
from lib.fpmwire import RT_SCOPE_LINK, FpmClient, fpm_frame, fpm_keeper
from lib.fpmwire import route as fpm_route
from lib.fpmwire import route_msg
from lib import procmem
from lib.lab import FPMCTL, wait_for
from lib.proto import frame, hello, pb, replay_begin, replay_end, route
from lib.proto import Client

SETTLE = ("--fpm-settle", "300")


def routes_json(d):
    return d.show("routes")


def other_table(d):
    return {(p, e["table"]) for p, es in routes_json(d).items() for e in es
            if e["state"] == "other-table"}


# ---- the settle sweep keeps refreshed routes of other tables ---------------

def test_other_table_routes_survive_the_settle_sweep(lab):
    d = lab.fpmd(extra=SETTLE)
    oif = lab.r1.ifindex("r1-eth1")
    # The main-table route is in the kernel too, as zebra's would be: each
    # client hangs up before the checks, and a second later fpmd drops
    # held main-table routes the kernel does not have.
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    replay = fpm_frame(route_msg("10.99.0.0/24", lab.H2_V4, oif) +
                       route_msg("10.100.0.0/24", None, oif, table=100) +
                       route_msg("10.101.0.0/24", None, oif, table=1000))
    want = {("10.100.0.0/24", 100), ("10.101.0.0/24", 1000)}
    for conn in (1, 2):
        # The client stays connected 3 s: the replay settles (300 ms)
        # while it is there.
        assert FpmClient(lab).run(replay) == "still-open"
        wait_for(lambda: d.logtext().count("fpm: replay settled") == conn,
                 what=f"replay {conn} settled")
        assert other_table(d) == want, f"replay {conn}: {other_table(d)}"
        assert "10.99.0.0/24" in routes_json(d)
    # A replay without them removes them (the sweep still works).
    assert FpmClient(lab).run(fpm_frame(
        route_msg("10.99.0.0/24", lab.H2_V4, oif))) == "still-open"
    wait_for(lambda: d.logtext().count("fpm: replay settled") == 3,
             what="replay 3 settled")
    assert not other_table(d), other_table(d)


# ---- a namespace whose kernel has no route ---------------------------------

def kernel_routes(ns):
    """Every route of ns's kernel, all tables, both families."""
    return [ln for fam in ("-4", "-6") for ln in ns.run(
        f"ip {fam} route show table all").stdout.splitlines()]


def empty_kernel(ns):
    """Take lo down and its addresses away: lab namespaces bring lo up,
    and the local table keeps 127.0.0.0/8 while lo has 127.0.0.1 (down or
    not). Nothing else is there: the kernel has no route left."""
    ns.run("ip link set lo down && ip addr flush dev lo")
    assert kernel_routes(ns) == [], kernel_routes(ns)


def alive(d, what):
    assert d.proc.poll() is None, \
        f"fpmd died {what}:\n{d.output()}\n{d.logtext()[d.log_start:]}"


def test_fpm_peer_gone_kernel_tables_empty(lab):
    """An FPM peer sends a route and leaves; while its routes are held,
    fpmd compares them with the kernel's main and local tables, which
    are empty here: the route goes (the kernel dropped it), fpmd stays."""
    ns = lab.add_ns(lab.prefix + "e")
    d = lab.fpmd(ifnames=(), ns=ns, extra=("--no-plugin",))
    # The route is in the kernel as zebra would have put it, via lo; it
    # leaves the kernel with lo's addresses below.
    ns.run("ip route add 10.55.0.0/24 dev lo")
    assert FpmClient(lab, ns).run(fpm_frame(
        fpm_route("10.55.0.0/24", oif=1, scope=RT_SCOPE_LINK)),
        close_early=True) == "sent-and-closed"
    wait_for(lambda: fpm(d)["replayState"] == "held", timeout=10,
             what="the peer's routes held")
    assert "10.55.0.0/24" in fpm_routes(d), fpm_routes(d)
    log0 = len(d.logtext())
    empty_kernel(ns)
    # The kernel is looked at every 5 s while the routes are held.
    try:
        wait_no_route(d, "10.55.0.0/24", timeout=12)
    except Exception:
        alive(d, "checking held routes against empty kernel tables")
        raise
    alive(d, "after its held routes were checked")
    assert "the kernel dropped 1 of its routes: removed them too" in \
        d.logtext()[log0:], d.logtext()[log0:]
    assert fpm(d)["replayState"] == "held"


def test_empty_kernel_start_and_dxr_adoption(lab):
    """fpmd starts in a namespace whose kernel has no route (its local
    table mirrored as nothing) and, after a stop that keeps the maps, a
    new fpmd adopts the DXR table with no prefix in it."""
    ns = lab.add_ns(lab.prefix + "e")
    empty_kernel(ns)
    args = ("--ipv4-lookup", "dxr", "--keep-forwarding", "--no-fpm",
            "--no-plugin")
    d = lab.fpmd(ifnames=(), ns=ns, extra=args)
    assert d.show("summary")["routesV4"] == 0
    assert d.stop() == 0, d.output() + d.logtext()
    d = lab.fpmd(ifnames=(), ns=ns, extra=args)
    alive(d, "adopting an empty DXR table")
    assert "bpffs: adopted the maps pinned in" in \
        d.logtext()[d.log_start:], d.logtext()[d.log_start:]
    assert d.show("summary")["routesV4"] == 0


# ---- show routes streams ---------------------------------------------------

N_ROUTES = 200_000


def fill_fpm(lab, d, n):
    """n /32 routes out of r1-eth1 from one FPM client that stays
    connected; returns its process (the caller kills it)."""
    oif = lab.r1.ifindex("r1-eth1")
    msgs, frames = [], []
    for i in range(n):
        a = 0x14000000 + i                   # 20.0.0.0 + i
        m = route_msg(f"{a >> 24}.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}"
                      "/32", None, oif)
        if len(msgs) == 500:                 # fpmd's limit is 512 a frame
            frames.append(fpm_frame(b"".join(msgs)))
            msgs = []
        msgs.append(m)
    frames.append(fpm_frame(b"".join(msgs)))
    proc = fpm_keeper(lab, b"".join(frames), "fpm-fill.bin")
    try:
        wait_for(lambda: d.show("summary")["routesV4"] >= n, timeout=60,
                 interval=0.5, what=f"{n} routes in fpmd")
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


def ctl_request(what):
    """A control Request: Show{what}."""
    return pb.Request(show=pb.ShowRequest(what=what))


class SlowCtl:
    """A raw control client that reads in small bites with pauses."""

    def __init__(self, d):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A small receive buffer makes fpmd's writes hit EAGAIN at once.
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.s.settimeout(10)
        self.s.connect(d.sock)
        self.slow = True

    def exact(self, n):
        b = bytearray()
        while len(b) < n:
            c = self.s.recv(min(n - len(b), 4096 if self.slow else 1 << 20))
            if not c:
                raise ConnectionError(f"closed by fpmd after {len(b)}/{n}")
            b += c
        return bytes(b)

    def recv(self):
        return pb.Response.FromString(
            self.exact(struct.unpack(">I", self.exact(4))[0]))


def test_show_routes_streams_to_a_slow_reader(lab):
    d = lab.fpmd()
    keeper = fill_fpm(lab, d, N_ROUTES)
    try:
        show_routes_checks(d)
    finally:
        keeper.kill()
        keeper.wait()


def show_routes_checks(d):
    total = sum(len(es) for es in routes_json(d).values())
    assert total >= N_ROUTES

    c = SlowCtl(d)
    c.s.sendall(frame(pb.Request(hello=pb.Hello(version=1,
                                                 peer="slow test"))))
    assert c.recv().status == pb.OK               # Hello: status OK
    c.s.sendall(frame(ctl_request(pb.SHOW_ROUTES)))
    time.sleep(0.5)
    cpu0 = procmem.cpu_seconds(d.proc.pid)
    time.sleep(1.0)                               # fpmd's writes block now
    # ... and fpmd waits for the reader (EPOLLOUT), it does not spin.
    idle = procmem.cpu_seconds(d.proc.pid) - cpu0
    assert idle < 0.3, f"fpmd used {idle:.2f} s of CPU waiting for a reader"
    got, chunks, more = 0, 0, True
    t0 = time.time()
    while more:
        m = c.recv()
        assert m.status == pb.OK, m.error
        # The FPM routes (20.0.0.0 + i): the kernel's local routes may
        # change meanwhile (IPv6 link-local addresses come late).
        got += sum(r.prefix.addr[0] == 20 for r in m.routes)
        more = m.more
        chunks += 1
        # Slowly for the first two seconds, then as fast as we can.
        if time.time() - t0 > 2:
            c.slow = False
        else:
            time.sleep(0.05)
    assert got == N_ROUTES and chunks > 1, (got, chunks)
    # The connection is still usable afterwards.
    c.s.sendall(frame(ctl_request(pb.SHOW_SUMMARY)))
    assert c.recv().HasField("summary")
    c.s.close()
    assert d.proc.poll() is None

    # fpmctl, text and JSON, prints every route.
    r = subprocess.run([FPMCTL, "-s", d.sock, "show", "routes"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Prefix") and abs(len(lines) - 1 - total) < 5
    assert sum(x.startswith("20.") for x in lines) == N_ROUTES, r.stderr
    assert lines[1].startswith("20.0.0.0/32 "), lines[1]
    # In order, each once: a table this large is snapshotted in slices
    # and sorted in a thread (ctl_routes.c), the same order as a small one.
    ours = [ipaddress.ip_network(x.split()[0]) for x in lines
            if x.startswith("20.")]
    assert ours == sorted(set(ours)), "show routes out of order or doubled"
    r = subprocess.run([FPMCTL, "-s", d.sock, "--json", "show", "routes"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert sum(p.startswith("20.") for p in js) == N_ROUTES
    assert js["20.0.0.5/32"][0]["source"] == "fpm"
    # A prefix filter still answers one route, and unknown is an error.
    r = d.ctl("show", "routes", "20.0.0.7/32")
    assert "20.0.0.7/32" in r.stdout and len(r.stdout.splitlines()) == 2
    r = d.ctl("show", "routes", "30.0.0.0/8", check=False)
    assert r.returncode != 0 and "no such route" in r.stderr


# ---- plugin acks are never lost --------------------------------------------

N_OPS = 100_000


def test_every_plugin_op_acked_to_a_slow_reader(lab):
    """A plugin that writes 100k RouteOps and reads nothing for 2 s (its
    acks pile up past fpmd's queue limit, so fpmd stops reading it), then
    reads slowly: exactly one Ack per RouteOp, with the right status."""
    d = lab.fpmd(extra=("--no-fpm",))
    idx = lab.r1.ifindex("r1-eth1")
    c = Client(d)
    c.s.settimeout(20)
    c.send(hello())
    assert c.recv().HasField("hello")
    ops = [frame(replay_begin(1))]
    refused = set()
    for seq in range(1, N_OPS + 1):
        a = 0x15000000 + seq                  # 21.0.0.0 + seq
        pfx = socket.inet_ntoa(struct.pack(">I", a))
        # Every tenth has no interface: refused, its Ack says why.
        ok = seq % 10
        if not ok:
            refused.add(seq)
        ops.append(frame(route(seq, pfx, 32, "172.16.102.1",
                               idx if ok else 0)))
    ops.append(frame(replay_end(1, N_OPS)))
    data = b"".join(ops)
    sent = []
    t = threading.Thread(target=lambda: sent.append(c.s.sendall(data)))
    t.start()
    time.sleep(2)
    rd = c.s.makefile("rb")
    got, done, i = {}, None, 0
    while done is None:
        try:
            n = struct.unpack(">I", rd.read(4))[0]
            m = pb.FpmdMsg.FromString(rd.read(n))
        except (OSError, struct.error) as e:
            raise AssertionError(
                f"{len(got)} of {N_OPS} acks, then {e!r}; fpmd log: "
                f"{d.logtext()[-600:]}") from e
        if m.HasField("ack"):
            a = m.ack
            seq = a.seq
            got[seq] = got.get(seq, 0) + 1
            if seq in refused:
                assert a.status != pb.OK and "interface" in a.error, (seq, a)
            else:
                assert a.status == pb.OK, (seq, a)
        elif m.HasField("replay_done"):
            done = m
        i += 1
        if i < 20000 and not i % 1000:
            time.sleep(0.05)                  # slowly, at first
    t.join(timeout=30)
    assert sent == [None], "the sender did not finish"
    assert set(got) == set(range(1, N_OPS + 1)), \
        f"{N_OPS - len(got)} acks missing"
    assert all(v == 1 for v in got.values()), "an op acked twice"
    st = d.show("plugin")
    assert st["connected"] and st["errors"] == 0, st
    assert st["routeMessages"] == N_OPS and st["ignored"] == len(refused), st
    assert st["routes"] == N_OPS - len(refused), st
    assert "send failed" not in d.logtext()
    c.close()
