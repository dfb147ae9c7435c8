# SPDX-License-Identifier: GPL-2.0-or-later
"""Route status never runs ahead of the maps (issue 27 item 2).

A route written into a new IPv4 table part (DIR-24-8: a tbl24 part; DXR: a
/16 rebuilt at the commit) reaches the fast path only when the loop's
commit publishes the part. When publishing fails (the outer map update
refused: ENOMEM), fpmd retries at every loop turn; meanwhile what users see
must say the route is not in the fast path: fpmctl's state "unpublished",
the metric fpmd_routes{state="unpublished"}, RTM_F_OFFLOAD_FAILED on the
FPM connection, "offloaded": false in zebra, XDP passing its packets. A
route written into a part that is already live forwards as before, and
while nothing fails no route's status ever flaps (one reply per frame).

The failure is injected: the kernel refuses an outer map update only under
memory pressure that cannot be produced here without taking the machine
with it, so fpmd has a test-only switch (fpmd(8), ENVIRONMENT): while the
file FPMD_TEST_FAULT_COMMIT names exists, publishing new IPv4 parts fails
with ENOMEM. Everything else is real: fpmd with XDP on the lab's veths,
zebra 8.4.4 and staticd with the plugin, a raw FPM client reading the
status replies, pings through r1. Run:
  /usr/bin/python3 -m pytest -v tests/test_publish.py
"""
import os
import select
import socket
import subprocess
import time

import pytest

from lib.feeds import start_frr, wait_plugin_route, wait_replayed
from lib.fpmwire import RTM_F_OFFLOAD, RTM_F_OFFLOAD_FAILED, decode, frame, \
    route
from lib.frr import wait_marks, zebra_marks
from lib.lab import H2_DST6, H2_NET6, PY, h2_loopback, shquote, wait_for
from lib.metrics import parse, scrape

LIVE = "10.99.0.0/24"        # written first: its part goes live
SAME_PART = "10.99.1.0/24"   # the same tbl24 part (and the same /16)
NEW_PART = "10.200.0.0/24"   # a part (and /16) of its own
NEW_DST = "10.200.0.1"

# Runs in r1: an FPM client that sends each hex line of stdin as it comes
# and prints each frame it receives as a hex line.
CLIENT = r"""
import socket, struct, sys, threading
s = socket.create_connection(("127.0.0.1", 2620), timeout=10)
s.settimeout(None)
def rd():
    buf = b""
    while True:
        r = s.recv(65536)
        if not r:
            print("closed", flush=True)
            return
        buf += r
        while len(buf) >= 4 and len(buf) >= struct.unpack_from(">H", buf, 2)[0]:
            n = struct.unpack_from(">H", buf, 2)[0]
            print(buf[:n].hex(), flush=True)
            buf = buf[n:]
threading.Thread(target=rd, daemon=True).start()
for line in sys.stdin:
    s.sendall(bytes.fromhex(line.strip()))
"""


class Client:
    """The raw FPM client above, one frame sent at a time."""

    def __init__(self, lab):
        self.p = lab.r1.popen(f"exec {PY} -u -c {shquote(CLIENT)}",
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        self.fd, self.buf = self.p.stdout.fileno(), b""
        lab.daemons.append(self)

    def send(self, payload):
        self.p.stdin.write(frame(payload).hex() + "\n")
        self.p.stdin.flush()

    def _line(self, timeout):
        """The next line the client printed, or None after timeout."""
        deadline = time.time() + timeout
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.fd], [], [],
                                    max(0, deadline - time.time()))
            if not r:
                return None
            chunk = os.read(self.fd, 65536)
            assert chunk, "the FPM client exited"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode().strip()

    def replies(self, n, timeout=10):
        """The next n replies as [(prefix, flag)] (fewer after timeout)."""
        out, deadline = [], time.time() + timeout
        while len(out) < n:
            line = self._line(max(0, deadline - time.time()))
            if line is None:
                break
            assert line != "closed", "fpmd closed the connection"
            m = decode(bytes.fromhex(line))[0]["msgs"][0]
            fam = socket.AF_INET if m["family"] == socket.AF_INET else \
                socket.AF_INET6
            out.append((f"{socket.inet_ntop(fam, m['attrs'][1])}"
                        f"/{m['dst_len']}", m["rtm_flags"]))
        return out

    def quiet(self, wait=1.0):
        """Nothing more arrives within wait seconds."""
        return self._line(wait) is None

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def state(d, prefix):
    es = d.show("routes").get(prefix, [])
    sel = [e for e in es if e.get("selected")] or es
    return sel[0]["state"] if sel else None


def unpublished_metric(lab):
    fam = parse(scrape(lab.r1))[0].get("fpmd_routes", {})
    return sum(v for labels, v in fam.items()
               if dict(labels).get("state") == "unpublished")


def forwarded_and_passed(d):
    c = d.counters()["r1-eth0"]
    return c.get("forwarded", 0), sum(v for k, v in c.items()
                                      if k.startswith("pass-"))


def ping_through(lab, d, dst):
    """5 pings from h1 to dst, all answered; (packets XDP forwarded, packets
    it passed to the kernel) on r1-eth0 meanwhile."""
    f0, p0 = forwarded_and_passed(d)
    v6 = " -6" if ":" in dst else ""
    assert lab.h1.run(f"ping{v6} -c 5 -i 0.05 -W 1 {dst}",
                      check=False).returncode == 0
    f1, p1 = forwarded_and_passed(d)
    return f1 - f0, p1 - p0


def start(lab, fault=None, **sections):
    """fpmd on r1 with route status on FPM (and the fault switch), its
    h1/h2 neighbors learned."""
    doc = lab.config_doc(fpm={"route-status": True, "settle-time": 300},
                         **sections)
    d = lab.fpmd(config=lab.write_config(doc),
                 env={"FPMD_TEST_FAULT_COMMIT": fault} if fault else None)
    lab.warm_kernel_neighbors()
    wait_for(lambda: len(d.show("neighbors")) >= 4, timeout=10,
             what="h1/h2 neighbors in fpmd")
    return d


@pytest.mark.parametrize("table", ["dir-24-8", "dxr"])
def test_unpublished_routes_say_so_fpm(lab, table):
    """Over FPM: the route written while publishing fails is answered
    "offload failed" (never "offloaded" first), shown "unpublished" by
    fpmctl and the metrics, and XDP passes its packets to the kernel; once
    publishing works it is answered "offloaded" and forwarded by XDP."""
    fault = os.path.join(lab.tmp, "fault-commit")
    h2_loopback(lab, NEW_DST + "/24")
    # The kernel forwards NEW_PART meanwhile, as zebra's route would.
    lab.r1.run(f"ip route add {NEW_PART} via {lab.H2_V4}")
    d = start(lab, fault, tables={"ipv4-lookup": table},
              metrics={"enabled": True})
    eth1 = lab.r1.ifindex("r1-eth1")
    c = Client(lab)

    c.send(route(LIVE, 1, gw=lab.H2_V4, oif=eth1))
    assert c.replies(1) == [(LIVE, RTM_F_OFFLOAD)]
    assert state(d, LIVE) == "forwarding"

    open(fault, "w").close()
    c.send(route(SAME_PART, 2, gw=lab.H2_V4, oif=eth1))
    c.send(route(NEW_PART, 3, gw=lab.H2_V4, oif=eth1))
    # DIR-24-8 writes SAME_PART into its live part at once; DXR rebuilds
    # its /16 at the commit, which fails.
    same = RTM_F_OFFLOAD if table == "dir-24-8" else RTM_F_OFFLOAD_FAILED
    got = c.replies(2)
    assert got == [(SAME_PART, same), (NEW_PART, RTM_F_OFFLOAD_FAILED)], got
    assert c.quiet(), "a further status reply while publishing fails"
    assert state(d, NEW_PART) == "unpublished"
    assert state(d, SAME_PART) == ("forwarding" if table == "dir-24-8"
                                   else "unpublished")
    assert state(d, LIVE) == "forwarding"
    assert unpublished_metric(lab) == (1 if table == "dir-24-8" else 2)
    assert "cannot be published: Cannot allocate memory" in d.logtext()
    sm = d.show("summary")
    assert sm["routesUnpublished"] == (1 if table == "dir-24-8" else 2) \
        and sm["publishError"] == "Cannot allocate memory", sm
    # What the state says is what XDP does: it passes NEW_PART's packets
    # (the kernel forwards them), it does not forward them.
    fwd, passed = ping_through(lab, d, NEW_DST)
    assert fwd == 0 and passed >= 5, (fwd, passed)

    os.unlink(fault)
    want = [(NEW_PART, RTM_F_OFFLOAD)]
    if table == "dxr":
        want = sorted([(SAME_PART, RTM_F_OFFLOAD)] + want)
    got = sorted(c.replies(len(want)))
    assert got == want, got
    assert c.quiet(), "a further status reply after publishing"
    wait_for(lambda: state(d, NEW_PART) == "forwarding", timeout=5,
             what="NEW_PART forwarding")
    assert unpublished_metric(lab) == 0
    sm = d.show("summary")
    assert sm["routesUnpublished"] == 0 and sm["publishError"] == "", sm
    assert "pending IPv4 table parts published" in d.logtext()
    fwd, _ = ping_through(lab, d, NEW_DST)
    assert fwd >= 5, fwd
    s = d.show("fpm")
    assert s["routeStatusDropped"] == 0


def test_no_flap_while_nothing_fails(lab):
    """Routes into new parts while publishing works: each frame gets one
    reply, "offloaded", sent after the commit (never "failed" first)."""
    d = start(lab)
    eth1 = lab.r1.ifindex("r1-eth1")
    c = Client(lab)
    # 40 routes, each /24 in a tbl24 part of its own (a part covers 8000
    # /24s): every write needs a new part.
    pfx = [f"{10 + k // 4}.{(k % 4) * 64}.0.0/24" for k in range(40)]
    for k, p in enumerate(pfx):
        c.send(route(p, k + 1, gw=lab.H2_V4, oif=eth1))
    got = c.replies(len(pfx))
    assert sorted(got) == sorted((p, RTM_F_OFFLOAD) for p in pfx), got
    assert c.quiet(), "more than one reply to a frame"
    assert all(state(d, p) == "forwarding" for p in pfx)


@pytest.fixture
def plugin_lab1(plugin_lab):
    return plugin_lab


def test_unpublished_routes_marked_in_zebra(plugin_lab1):
    """Through zebra's plugin (zebra 8.4.4, staticd): a static route added
    in vtysh while publishing fails is "offloaded": false in zebra's RIB
    and "unpublished" in fpmd; a route into a live part added at the same
    time is offloaded; when publishing works again the first is marked
    offloaded too. zebra's marks never ran ahead: the route was never
    offloaded before its part was published."""
    lab = plugin_lab1
    fault = os.path.join(lab.tmp, "fault-commit")
    h2_loopback(lab, NEW_DST + "/24")
    d = lab.fpmd(extra=("--no-fpm",), env={"FPMD_TEST_FAULT_COMMIT": fault})
    f = start_frr(lab)
    wait_replayed(d)
    f.configure(f"ip route {LIVE} {lab.H2_V4}")
    lab.warm_kernel_neighbors()
    wait_plugin_route(d, LIVE)
    wait_marks(f, {LIVE: True})

    open(fault, "w").close()
    f.configure(f"ip route {NEW_PART} {lab.H2_V4}",
                f"ip route {SAME_PART} {lab.H2_V4}")
    wait_plugin_route(d, NEW_PART, state="unpublished")
    wait_plugin_route(d, SAME_PART)
    wait_marks(f, {NEW_PART: False, SAME_PART: True, LIVE: True})
    # It stays so while publishing fails (fpmd retries every loop turn).
    time.sleep(1)
    assert zebra_marks(f)[NEW_PART] is False
    assert state(d, NEW_PART) == "unpublished"

    os.unlink(fault)
    wait_plugin_route(d, NEW_PART)
    wait_marks(f, {NEW_PART: True, SAME_PART: True, LIVE: True})


def test_nexthop_write_failure_says_so(lab):
    """A nexthop whose map slot cannot be written (its chunk cannot be
    published) is not "forwarding": the IPv6 route by it is
    "nexthop-error", answered "offload failed", its packets passed to the
    kernel; fpmd retries at its tick and, once the write succeeds, the
    route forwards and is answered "offloaded"."""
    fault = os.path.join(lab.tmp, "fault-commit")
    open(fault, "w").close()
    h2_loopback(lab, H2_DST6 + "/64")
    lab.r1.run(f"ip -6 route add {H2_NET6} via {lab.H2_V6}")
    d = start(lab, fault)
    c = Client(lab)
    c.send(route(H2_NET6, 1, gw=lab.H2_V6, oif=lab.r1.ifindex("r1-eth1")))
    assert c.replies(1) == [(H2_NET6, RTM_F_OFFLOAD_FAILED)]
    assert state(d, H2_NET6) == "nexthop-error"
    assert "write failed: Cannot allocate memory" in d.logtext()
    time.sleep(1)     # retried at each tick, failing: still so
    assert state(d, H2_NET6) == "nexthop-error" and c.quiet(0.1)
    fwd, passed = ping_through(lab, d, H2_DST6)
    assert fwd == 0 and passed >= 5, (fwd, passed)

    os.unlink(fault)
    assert c.replies(1) == [(H2_NET6, RTM_F_OFFLOAD)]
    assert state(d, H2_NET6) == "forwarding"
    fwd, _ = ping_through(lab, d, H2_DST6)
    assert fwd >= 5, fwd
