# SPDX-License-Identifier: GPL-2.0-or-later
"""Containers made the way container runtimes make them, for the tests of
fpmd's container paths (doc/containers.md).

A runtime's container is a network namespace held by a process, not
registered under /run/netns: here `unshare --net sleep infinity`. The veth
pair is created in the router's namespace and its container end is moved
in by pid (`ip link set X netns PID`), renamed eth0 and configured with
`nsenter --net=/proc/PID/ns/net`. The container's end keeps what runtimes
leave: no XDP, GRO off (the veth default; set off explicitly), tx
checksumming and TSO on (defaults; asserted). It gets an address on the
veth subnet, service addresses on lo and default routes via the router.

Commands inside run with nsenter (network namespace only: /proc/net
follows it, /sys/class/net does not, so MACs come from `ip -j link`).
Container has Netns's run / popen / mac / snmp / snmp6, so the helpers of
lib/traffic.py and lib/lab.py (ping, Udp, fwd4...) work on it too.

cleanup() kills the holder process; the namespace, and with it the veth
pair, goes with its last process. It waits for the host end to disappear
from the router, so that no test leaves an interface behind.
"""
import json
import os
import signal
import subprocess
import time

from lib.lab import KernelCounters, sh, shquote, wait_for


def _netns_id(pid):
    return os.readlink(f"/proc/{pid}/ns/net")


def _pids_in(ns):
    """The processes whose network namespace is ns (a _netns_id)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if _netns_id(d) == ns:
                    out.append(int(d))
            except OSError:
                pass           # gone meanwhile, or a kernel thread
    return out


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Container(KernelCounters):
    """One runtime-style container attached to router (a lib.lab.Netns)
    by the veth host_if (router side) -- eth0 (container side).

    net4 / net6: the veth subnets as (router address, container address,
    prefix length). service4 / service6: addresses on the container's lo
    (the routes to them are the test's to configure, via vtysh)."""

    IFNAME = "eth0"

    def __init__(self, router, host_if, net4, net6, service4=None,
                 service6=None, tmpname=None):
        self.router, self.host_if = router, host_if
        self.r4, self.c4, self.len4 = net4
        self.r6, self.c6, self.len6 = net6
        self.service4, self.service6 = service4, service6
        self.proc = None
        self.name = f"{router.name}-{host_if}"
        try:
            self._start(tmpname or host_if + "p")
        except Exception:
            self.cleanup()
            raise

    # ---- creation ---------------------------------------------------------

    def _start(self, tmpname):
        # unshare execs sleep: the pid is the holder inside the namespace.
        self.proc = subprocess.Popen(["unshare", "--net", "sleep", "infinity"],
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        mine = _netns_id(os.getpid())
        wait_for(lambda: self.proc.poll() is not None or
                 _netns_id(self.pid) != mine, timeout=5,
                 what=f"container {self.name}: its own network namespace")
        if self.proc.poll() is not None:
            raise RuntimeError(f"container {self.name}: unshare failed: "
                               f"{self.proc.stderr.read().decode()}")
        self.netns = f"/proc/{self.pid}/ns/net"
        r, h = self.router, self.host_if
        r.run(f"ip link add {h} type veth peer name {tmpname} && "
              f"ip link set {tmpname} netns {self.pid}")
        self.run(f"ip link set {tmpname} name {self.IFNAME} && "
                 "ip link set lo up && "
                 f"ethtool -K {self.IFNAME} gro off && "
                 f"ip addr add {self.c4}/{self.len4} dev {self.IFNAME} && "
                 f"ip -6 addr add {self.c6}/{self.len6} dev {self.IFNAME} "
                 "nodad && "
                 f"ip link set {self.IFNAME} up")
        for a, plen in ((self.service4, 32), (self.service6, 128)):
            if a:
                self.run(f"ip addr add {a}/{plen} dev lo")
        r.run(f"ip addr add {self.r4}/{self.len4} dev {h} && "
              f"ip -6 addr add {self.r6}/{self.len6} dev {h} nodad && "
              f"ip link set {h} up")
        self.run(f"ip route add default via {self.r4} && "
                 f"ip -6 route add default via {self.r6}")
        # What runtimes leave on the container's end, checked, not assumed.
        k = self.offloads()
        assert k["tx-checksumming"] == "on", k
        assert k["tcp-segmentation-offload"] == "on", k
        assert k["generic-receive-offload"] == "off", k
        assert "xdp" not in self.run(f"ip link show {self.IFNAME}").stdout

    # ---- commands inside --------------------------------------------------

    def _argv(self, cmd):
        return ["nsenter", f"--net={self.netns}", "sh", "-c", cmd]

    def run(self, cmd, check=True, timeout=60):
        return sh(f"nsenter --net={self.netns} sh -c {shquote(cmd)}",
                  check=check, timeout=timeout)

    def popen(self, cmd, **kw):
        return subprocess.Popen(self._argv(cmd), **kw)

    def offloads(self):
        """{feature: "on"/"off"} of the container's eth0 (ethtool -k)."""
        out = {}
        for line in self.run(f"ethtool -k {self.IFNAME}").stdout.splitlines():
            k, _, v = line.partition(":")
            if v.strip():
                out[k.strip()] = v.split()[0]
        return out

    def mac(self, ifname=None):
        link = json.loads(self.run(f"ip -j link show "
                                   f"{ifname or self.IFNAME}").stdout)
        return link[0]["address"]

    def set_up(self, up=True):
        """The container's end up or down (from inside, as a runtime or a
        user in the container would); up restores what the kernel removed
        with the link: the IPv6 address (keep_addr_on_down is 0) and the
        default routes."""
        self.run(f"ip link set {self.IFNAME} {'up' if up else 'down'}")
        if up:
            self.run(f"ip -6 addr replace {self.c6}/{self.len6} "
                     f"dev {self.IFNAME} nodad && "
                     f"ip route replace default via {self.r4} && "
                     f"ip -6 route replace default via {self.r6}")

    # ---- removal ----------------------------------------------------------

    def host_if_exists(self):
        return self.router.run(f"ip link show {self.host_if}",
                               check=False).returncode == 0

    def cleanup(self):
        """Kill the holder; the namespace and the veth go with it. Waits
        until the router's end is gone: nothing is left behind."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            # Whatever a failed test left running inside (a receiver, a
            # server) holds the namespace too: all were started here.
            ns = _netns_id(self.pid)
            for pid in _pids_in(ns):
                if pid != self.pid:
                    _kill(pid)
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc = None
        deadline = time.time() + 10
        while self.host_if_exists() and time.time() < deadline:
            time.sleep(0.05)
        if self.host_if_exists():
            # Something still holds the namespace (a command left running
            # inside): remove the pair from the router's side.
            self.router.run(f"ip link del {self.host_if}", check=False)
            raise AssertionError(f"container {self.name}: {self.host_if} "
                                 "outlived its namespace")


def containers_cleanup(containers):
    """cleanup() of each, all attempted; the first error raised after."""
    err = None
    for c in containers:
        try:
            c.cleanup()
        except Exception as e:  # noqa: BLE001  every one is cleaned up
            err = err or e
    if err:
        raise err
