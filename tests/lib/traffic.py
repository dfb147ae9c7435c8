# SPDX-License-Identifier: GPL-2.0-or-later
"""Traffic through r1 and the counters that say who forwarded it.

Udp / udp_send drive lib/udpflow.py in the hosts' namespaces; fwd4 / fwd6
are the kernel's forwarding counters, measure() takes fpmd's and the
kernel's counters around a piece of traffic, and stats_map_packets()
reads one counter straight from the pinned stats map (while fpmd is
dead, say).
"""
import json
import os
import signal
import struct
import subprocess

from lib.lab import PY, TESTLIB, sh, wait_for

UDPFLOW = os.path.join(TESTLIB, "udpflow.py")


class Udp:
    """A udpflow.py receiver in ns; stop() returns its counts."""

    def __init__(self, ns, port=9000, v6=False):
        self.proc = ns.popen(f"exec {PY} {UDPFLOW} recv {port}"
                             f"{' --v6' if v6 else ''}",
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        line = self.proc.stderr.readline()
        assert "ready" in line, f"udp receiver: {line}"

    def stop(self):
        """Its counts, once it has read everything queued and in flight
        (it ends when its socket has stayed empty for udpflow.QUIET)."""
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=10)
        assert self.proc.returncode == 0, err
        return json.loads(out)


def udp_send(ns, dst, port=9000, flows=1, count=10, interval=0.001,
             duration=0, background=False):
    cmd = (f"exec {PY} {UDPFLOW} send {dst} {port} --flows {flows} "
           f"--count {count} --interval {interval} --duration {duration}")
    if background:
        return ns.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True)
    r = ns.run(cmd, timeout=120)
    return {int(k): v for k, v in json.loads(r.stdout)["sent"].items()}


def netstat(ns, proto, field):
    """A counter from /proc/net/netstat (IpExt InNoRoutes, ...)."""
    text = ns.run("cat /proc/net/netstat").stdout.splitlines()
    for names, values in zip(text[::2], text[1::2]):
        names, values = names.split(), values.split()
        if names[0] == proto + ":":
            return int(values[names.index(field)])
    raise KeyError(f"{proto} {field}")


def fwd4(ns):
    return ns.snmp("Ip", "ForwDatagrams")


def fwd6(ns):
    return ns.snmp6("Ip6OutForwDatagrams")


def wait_through_xdp(d, ifname="r1-eth0", n=50):
    """Streams just started are being forwarded by XDP on ifname."""
    c0 = d.counter(ifname, "forwarded")
    wait_for(lambda: d.counter(ifname, "forwarded") >= c0 + n,
             what="the streams through XDP")


def assert_lossless(what, sent, got, least, out=""):
    """A stream of at least `least` packets, every one delivered."""
    assert sent >= least and got == sent, \
        f"{what} lost {sent - got}/{sent}: {out}"


def assert_kernel_flat(router, f0, when="during the restart", d=None,
                       c0=None):
    """router's kernel forwarded nothing since its fwd4() was f0: the fast
    path carried every packet. With fpmd d and its counters() c0 from
    then, a failure also says what XDP passed to the kernel, and why."""
    n = fwd4(router) - f0
    passed = ""
    if n and d is not None and c0 is not None:
        c1 = d.counters()
        passed = {f"{i} {r}": v - c0.get(i, {}).get(r, 0)
                  for i, rs in c1.items() for r, v in rs.items()
                  if r.startswith("pass") and v != c0.get(i, {}).get(r, 0)}
        passed = f"; fpmd passed {passed}"
    assert n == 0, f"kernel forwarded {n} packets {when}{passed}"


class Snap:
    """fpmd counters and r1's kernel counters at one moment."""

    def __init__(self, lab, d):
        self.c = d.counters()
        self.f4, self.f6 = fwd4(lab.r1), fwd6(lab.r1)
        self.k = {"InReceives": lab.r1.snmp("Ip", "InReceives"),
                  "InNoRoutes": netstat(lab.r1, "IpExt", "InNoRoutes"),
                  "Ip6InNoRoutes": lab.r1.snmp6("Ip6InNoRoutes")}

    def since(self, old):
        dc = {i: {r: n - old.c.get(i, {}).get(r, 0) for r, n in rs.items()}
              for i, rs in self.c.items()}
        dk = {k: v - old.k[k] for k, v in self.k.items()}
        return Delta(dc, self.f4 - old.f4, self.f6 - old.f6, dk)


def nonzero(dc):
    """{ifname: {reason: n}} without the counters that did not move."""
    return {i: {r: n for r, n in rs.items() if n} for i, rs in dc.items()}


class Delta:
    """What moved: c {ifname: {reason: n}} (also delta[ifname]), the
    kernel's f4 / f6 forwarded, and k (InReceives, InNoRoutes,
    Ip6InNoRoutes)."""

    def __init__(self, c, f4, f6, k):
        self.c, self.f4, self.f6, self.k = c, f4, f6, k

    def __getitem__(self, ifname):
        return self.c[ifname]

    def nonzero(self):
        return nonzero(self.c)

    def __repr__(self):
        return (f"counters {self.nonzero()}, kernel fwd4 +{self.f4} "
                f"fwd6 +{self.f6} {self.k}")


def measure(lab, d, fn):
    """Run fn(); return (its result, Delta)."""
    before = Snap(lab, d)
    res = fn()
    return res, Snap(lab, d).since(before)


def stats_key(d, ifname, reason):
    """The stats map key of a counter: FPMD_STAT_INDEX(slot, reason)."""
    reasons = list(d.counters()[ifname])  # in enum fpmd_reason order
    slot = d.show("interfaces")[ifname]["slot"]
    return slot * len(reasons) + reasons.index(reason)


def stats_map_packets(pin, key):
    """Sum over CPUs of one counter read straight from the pinned map."""
    kb = " ".join(str(b) for b in struct.pack("<I", key))
    r = sh(f"bpftool -j map lookup pinned {pin}/stats key {kb}")
    v = json.loads(r.stdout)
    # With BTF, bpftool puts the decoded struct under "formatted".
    return sum(c["value"]["packets"] for c in v["formatted"]["values"])
