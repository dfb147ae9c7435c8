# SPDX-License-Identifier: GPL-2.0-or-later
"""Test topology helpers: namespaces, veths, fpmd processes, fpmctl.

Every name is unique per run (prefix from the pid and a counter), so
parallel runs never collide, and Lab.cleanup() removes namespaces, the
daemon, pins and temporary files on every exit path.
"""
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from lib.runner import read_text

# This folder: the helper scripts that tests run inside namespaces.
TESTLIB = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(TESTLIB))
BUILDDIR = os.environ.get("FPMD_BUILDDIR", os.path.join(REPO, "build"))
FPMD = os.path.join(BUILDDIR, "fpmd", "fpmd")
FPMCTL = os.path.join(BUILDDIR, "fpmd", "fpmctl")
# Debian's python, with scapy: what tests run inside namespaces.
PY = "/usr/bin/python3"

_counter = itertools.count()


def sh(cmd, check=True, timeout=60, **kw):
    """Run a shell command on the host; returns CompletedProcess."""
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"command failed ({r.returncode}): {cmd}\n"
                           f"stdout: {r.stdout}\nstderr: {r.stderr}")
    return r


def unique_prefix():
    return f"fp{os.getpid() % 100000}x{next(_counter)}"


class KernelCounters:
    """The kernel's counters of a namespace, read with self.run inside it
    (/proc/net follows the reader's namespace): Netns and containers."""

    def snmp(self, proto, field):
        """A counter from /proc/net/snmp (Ip ForwDatagrams, ...)."""
        text = self.run("cat /proc/net/snmp").stdout.splitlines()
        for i in range(0, len(text) - 1, 2):
            names, values = text[i].split(), text[i + 1].split()
            if names[0] == proto + ":":
                return int(values[names.index(field)])
        raise KeyError(f"{proto} {field}")

    def snmp6(self, field):
        for line in self.run("cat /proc/net/snmp6").stdout.splitlines():
            k, v = line.split()
            if k == field:
                return int(v)
        raise KeyError(field)


class Netns(KernelCounters):
    def __init__(self, name):
        self.name = name
        sh(f"ip netns add {name}")
        self.run("ip link set lo up")

    def run(self, cmd, check=True, timeout=60):
        return sh(f"ip netns exec {self.name} sh -c {shquote(cmd)}",
                  check=check, timeout=timeout)

    def popen(self, cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.name, "sh", "-c",
                                 cmd], **kw)

    def sysctl(self, key, value):
        self.run(f"sysctl -qw {key}={value}")

    def mac(self, ifname):
        out = self.run(f"cat /sys/class/net/{ifname}/address").stdout
        return out.strip()

    def ifindex(self, ifname):
        return int(self.run(f"cat /sys/class/net/{ifname}/ifindex").stdout)

    def delete(self):
        sh(f"ip netns del {self.name}", check=False)


def shquote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Fpmd:
    """One fpmd process running inside a namespace (via --netns)."""

    def __init__(self, lab, ns, ifnames, extra=(), config=None,
                 binary=FPMD, env=None):
        """config: a configuration file (see Lab.config_doc) instead of
        the command line; then only --netns and -f are given. binary:
        another build of fpmd (tests/fpmd-nosan). env: variables added to
        the environment (NOTIFY_SOCKET, ...)."""
        self.lab = lab
        self.ns = ns
        self.sock = os.path.join(lab.tmp, "fpmd.sock")
        self.plugin_sock = os.path.join(lab.tmp, "plugin.sock")
        self.log = os.path.join(lab.tmp, "fpmd.log")
        self.pin = lab.pin
        if config:
            args = [binary, "--netns", ns.name, "-f", config]
        else:
            args = [binary, "--netns", ns.name, "-b", self.pin, "-s",
                    self.sock, "--plugin-socket", self.plugin_sock,
                    "--log", "file:" + self.log, "-D", "--guard-interval",
                    "200"]
            for i in ifnames:
                args += ["-i", i]
        args += list(extra)
        self.args = args
        # The log is appended to: only what this process writes counts.
        self.log_start = os.path.getsize(self.log) if os.path.exists(
            self.log) else 0
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, **(env or {})})

    def wait_ready(self, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"fpmd exited with {self.proc.returncode}:\n"
                    f"{self.output()}\n{self.logtext()}")
            if "started:" in self.logtext()[self.log_start:]:
                return self
            time.sleep(0.05)
        raise RuntimeError("fpmd did not start:\n" + self.logtext())

    def logtext(self):
        return read_text(self.log)

    def output(self):
        if self.proc.poll() is None:
            return ""
        return self.proc.stdout.read() if self.proc.stdout else ""

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def ctl(self, *args, check=True):
        r = subprocess.run([FPMCTL, "-s", self.sock] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"fpmctl {' '.join(map(str, args))} failed "
                               f"({r.returncode}): {r.stderr}")
        return r

    def show(self, what, *args):
        r = self.ctl("--json", "show", what, *args)
        return json.loads(r.stdout)

    def counters(self):
        """{ifname: {reason: packets}}"""
        return {i: {k: v["packets"] for k, v in c.items()}
                for i, c in self.show("counters").items()}

    def counter(self, ifname, reason):
        return self.counters()[ifname][reason]


def fpmd_diag(d, *extra):
    """Context for assertion messages: the daemon's log and what we saw."""
    parts = [str(e) for e in extra]
    if d is not None:
        try:
            parts.append("interfaces: " + json.dumps(d.show("interfaces")))
            parts.append("guards: " + json.dumps(d.show("guards")))
        except Exception as e:  # the daemon may be gone
            parts.append(f"(fpmctl failed: {e})")
        parts.append("fpmd log:\n" + d.logtext())
    return "\n".join(parts)


class Lab:
    """h1 -- r1 -- h2, addresses from the project's lab plan."""

    H1_V4, R1_V4_0, R1_V4_1, H2_V4 = ("172.16.101.1", "172.16.101.2",
                                      "172.16.102.3", "172.16.102.1")
    H1_V6, R1_V6_0, R1_V6_1, H2_V6 = ("2001:db8:101::1", "2001:db8:101::2",
                                      "2001:db8:102::3", "2001:db8:102::1")

    def __init__(self, receiver_gro=True):
        self.prefix = unique_prefix()
        self.tmp = tempfile.mkdtemp(prefix=self.prefix + "-")
        self.pin = f"/sys/fs/bpf/{self.prefix}"
        self.ns = []
        self.daemons = []
        try:
            self._build(receiver_gro)
        except Exception:
            self.cleanup()
            raise

    def _build(self, receiver_gro):
        p = self.prefix
        self.h1 = self.add_ns(p + "h1")
        self.r1 = self.add_ns(p + "r1")
        self.h2 = self.add_ns(p + "h2")
        self.link(self.h1, "h1-eth0", self.r1, "r1-eth0")
        self.link(self.r1, "r1-eth1", self.h2, "h2-eth0")
        h1, r1, h2 = self.h1, self.r1, self.h2
        h1.run(f"ip addr add {self.H1_V4}/24 dev h1-eth0 && "
               f"ip -6 addr add {self.H1_V6}/64 dev h1-eth0 nodad && "
               f"ip route add default via {self.R1_V4_0} && "
               f"ip -6 route add default via {self.R1_V6_0}")
        h2.run(f"ip addr add {self.H2_V4}/24 dev h2-eth0 && "
               f"ip -6 addr add {self.H2_V6}/64 dev h2-eth0 nodad && "
               f"ip route add default via {self.R1_V4_1} && "
               f"ip -6 route add default via {self.R1_V6_1}")
        r1.run(f"ip addr add {self.R1_V4_0}/24 dev r1-eth0 && "
               f"ip -6 addr add {self.R1_V6_0}/64 dev r1-eth0 nodad && "
               f"ip addr add {self.R1_V4_1}/24 dev r1-eth1 && "
               f"ip -6 addr add {self.R1_V6_1}/64 dev r1-eth1 nodad")
        r1.sysctl("net.ipv4.ip_forward", 1)
        r1.sysctl("net.ipv6.conf.all.forwarding", 1)
        # What a real receiver does anyway: a NIC computes the checksum
        # (tx off), and GRO lets a veth receive frames redirected by XDP.
        for ns, ifname in ((h1, "h1-eth0"), (h2, "h2-eth0")):
            ns.run(f"ethtool -K {ifname} tx off >/dev/null")
            if receiver_gro:
                ns.run(f"ethtool -K {ifname} gro on >/dev/null")

    def add_ns(self, name):
        ns = Netns(name)
        self.ns.append(ns)
        return ns

    def link(self, a, aname, b, bname, index=None):
        """A veth pair a:aname -- b:bname; index: aname's ifindex."""
        idx = f" index {index}" if index else ""
        sh(f"ip link add {aname} netns {a.name}{idx} type veth peer name "
           f"{bname} netns {b.name}")
        a.run(f"ip link set {aname} up")
        b.run(f"ip link set {bname} up")

    def fpmd(self, ifnames=("r1-eth0", "r1-eth1"), extra=(), ns=None,
             wait=True, config=None, binary=FPMD, env=None):
        d = Fpmd(self, ns or self.r1, ifnames, extra, config, binary, env)
        self.daemons.append(d)
        return d.wait_ready() if wait else d

    def config_doc(self, ifnames=("r1-eth0", "r1-eth1"), **sections):
        """A configuration document (RFC 7951 dict) with this lab's pin
        directory, sockets and log, the interfaces, and extra sections
        merged in: config_doc(fpm={"enabled": False})."""
        top = {
            "bpffs-dir": self.pin,
            "interfaces": {"interface": [
                i if isinstance(i, dict) else {"name": i} for i in ifnames]},
            "control": {"socket": {"path": os.path.join(self.tmp,
                                                        "fpmd.sock")}},
            "plugin": {"socket": {"path": os.path.join(self.tmp,
                                                       "plugin.sock")}},
            "behaviour": {"guard-interval": 200},
            "logging": {"target": "file",
                        "file": os.path.join(self.tmp, "fpmd.log"),
                        "level": "debug"},
        }
        for k, v in sections.items():
            k = k.replace("_", "-")
            if isinstance(v, dict) and isinstance(top.get(k), dict):
                top[k] = {**top[k], **v}
            else:
                top[k] = v
        return {"fpmd:fpmd": top}

    def write_config(self, doc, name="fpmd.json"):
        path = os.path.join(self.tmp, name)
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=2)
        os.rename(path + ".tmp", path)
        return path

    def routes_and_neighbors(self, d, v6=True):
        """Connected routes and resolved neighbors for h1 and h2, by hand."""
        fams = [("172.16.101.0/24", "172.16.102.0/24", self.H1_V4,
                 self.H2_V4)]
        if v6:
            fams.append(("2001:db8:101::/64", "2001:db8:102::/64",
                         self.H1_V6, self.H2_V6))
        for net1, net2, a1, a2 in fams:
            d.ctl("route", "add", net1, "dev", "r1-eth0")
            d.ctl("route", "add", net2, "dev", "r1-eth1")
            d.ctl("neighbor", "add", a1, "lladdr", self.h1.mac("h1-eth0"),
                  "dev", "r1-eth0")
            d.ctl("neighbor", "add", a2, "lladdr", self.h2.mac("h2-eth0"),
                  "dev", "r1-eth1")

    def warm_kernel_neighbors(self):
        """Resolve ARP/ND in the kernel too, so pings do not wait."""
        self.h1.run(f"ping -c1 -W1 {self.R1_V4_0} >/dev/null", check=False)
        self.h2.run(f"ping -c1 -W1 {self.R1_V4_1} >/dev/null", check=False)
        self.h1.run(f"ping -6 -c1 -W1 {self.R1_V6_0} >/dev/null", check=False)
        self.h2.run(f"ping -6 -c1 -W1 {self.R1_V6_1} >/dev/null", check=False)

    def cleanup(self):
        for d in self.daemons:
            try:
                d.stop()
            except Exception:
                pass
        for ns in reversed(self.ns):
            ns.delete()
        if os.path.isdir(self.pin):
            shutil.rmtree(self.pin, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


# Prefixes on h2's lo that the FRR tests route via h2 (h2_loopback()).
H2_NET, H2_DST = "10.99.0.0/24", "10.99.0.1"
BH_NET, BH_DST = "10.98.0.0/24", "10.98.0.1"        # blackholed
H2_NET6, H2_DST6 = "2001:db8:99::/64", "2001:db8:99::1"


def h2_loopback(lab, *cidrs):
    """Addresses on h2's lo, reached through routes via h2."""
    for c in cidrs:
        lab.h2.run(f"ip addr add {c} dev lo")


def xdp_attached(ns, ifname):
    out = sh(f"ip -n {ns.name} link show {ifname}").stdout
    return re.search(r"\bxdp(generic)?\b", out) is not None


def pinned_map(pin, name):
    """bpftool's JSON dump of a pinned map (BTF-formatted entries)."""
    r = sh(f"bpftool -j map dump pinned {pin}/{name}")
    return [e["formatted"] for e in json.loads(r.stdout)]


def wait_for(fn, timeout=5.0, interval=0.05, what="condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def ping(ns, dst, count=5, interval=0.2, v6=False, timeout=None):
    """Returns the number of replies."""
    flag = "-6 " if v6 else ""
    r = ns.run(f"ping {flag}-c {count} -i {interval} -W 1 {dst}",
               check=False, timeout=timeout or count * interval + 10)
    m = re.search(r"(\d+) received", r.stdout)
    return int(m.group(1)) if m else 0


def ping_stream(ns, dst, count, v6=False):
    """A steady 10 ms ping in the background (~16 ms per packet here)."""
    return ns.popen(f"exec ping {'-6 ' if v6 else ''}-i 0.01 -c {count} "
                    f"-W 1 {dst}", stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True)


def finish(proc, timeout=60):
    """(stdout, stderr) of proc once it has exited; killed (and the
    timeout raised) if it is still running after timeout."""
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def ping_result(proc, timeout=60):
    """(sent, received, output) of a ping_stream, once it has finished;
    a stream still running after timeout is killed."""
    out, _ = finish(proc, timeout)
    m = re.search(r"(\d+) packets transmitted, (\d+) received", out)
    assert m, out
    return int(m.group(1)), int(m.group(2)), out
