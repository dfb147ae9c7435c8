# SPDX-License-Identifier: GPL-2.0-or-later
"""Real FRR daemons in test namespaces: one instance per namespace.

Each instance has its own pathspace (zebra/staticd -N PS): sockets and pid
files under /var/run/frr/PS/ (owned frr:frr), vtysh's /etc/frr/PS/vtysh.conf,
configs and logs in the lab's temp dir. PS is unique per run, so parallel
runs and other FRR instances on the machine never meet. Daemons are stopped
by the pid in their pid file (checked against the pathspace in their command
line), never by name, all instances in parallel.

FrrLab extends Lab (tests/lib/lab.py) with FRR instances and a second topology
(h1 - r1 - {r2, r3} - h2 for ECMP); its cleanup() stops FRR, then does
everything Lab.cleanup() does, then removes the pathspace directories.

An instance runs the host's FRR (Debian 12's) or, given a Release, FRR
from another Debian suite: its root file system (scripts/frr-root.sh,
cached in /var/cache/fpmd/frr-roots) with the daemons started by chroot
inside the namespace, in a mount namespace of their own with /proc, /sys,
/dev and the lab's temp dir mounted in the root (configs, logs and the
plugin socket have the same paths inside and out). FRR >= 10 starts
mgmtd first, and its staticd takes its configuration through mgmtd
(vtysh) only. The root's frr user has this machine's uid, as an frr
installed here would.

Also here: zebra with our plugin (start_frr), commands on zebra's own vty
(the plugin's are not in vtysh), the offload marks the plugin sets in
zebra's RIB, and the diagnostics the FRR fixtures print at teardown.
"""
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time

from lib.lab import BUILDDIR, REPO, Lab, sh, wait_for
from lib.runner import read_text

# Our zebra module (fpmd/zebra-plugin/), built with --with-frr-source.
PLUGIN = os.path.join(BUILDDIR, "fpmd", "zebra-plugin", "fpmd_zebra.so")

FRR_SBIN = "/usr/lib/frr"
FRR_RUN = "/var/run/frr"
FRR_ETC = "/etc/frr"
FRR_USER = "frr"

# Daemons in start order; stopping goes in parallel (mgmtd goes first
# where the release has it: Release.daemons).
DAEMONS = ("zebra", "staticd")

FRR_ROOT = os.path.join(REPO, "scripts", "frr-root.sh")


class Release:
    """The FRR a test runs: the host's (suite None), or a Debian suite's
    in its root file system (scripts/frr-root.sh makes it the first time,
    ~3 min). version is the Debian package's, upstream its FRR part."""

    _cache = {}
    _plugins = {}

    def __new__(cls, suite=None):
        if suite in cls._cache:
            return cls._cache[suite]
        self = super().__new__(cls)
        self.suite = suite
        if suite:
            r = subprocess.run(["sh", FRR_ROOT, suite], capture_output=True,
                               text=True, timeout=1800)
            if r.returncode != 0:
                raise FrrError(f"no FRR root for {suite}:\n{r.stderr}")
            self.root = r.stdout.strip().splitlines()[-1]
        else:
            self.root = ""
        r = subprocess.run(["dpkg-query", "--admindir",
                            self.root + "/var/lib/dpkg", "-W",
                            "-f=${Version}", "frr"],
                           capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout:
            raise FrrError(f"frr is not installed in {self.root or '/'}")
        self.version = r.stdout.strip()
        self.upstream = self.version.split(":")[-1].split("-")[0]
        self.major, self.minor = (int(x) for x in
                                  self.upstream.split(".")[:2])
        # /var/run is a link to /run: absolute, so the host's from here.
        self.run_dir = "/run/frr" if suite else FRR_RUN
        self.mgmtd = os.path.exists(self.host(FRR_SBIN + "/mgmtd"))
        self.daemons = (("mgmtd",) if self.mgmtd else ()) + DAEMONS
        cls._cache[suite] = self
        return self

    def __repr__(self):
        return f"FRR {self.upstream} ({self.suite or 'host'})"

    @property
    def chroot(self):
        return bool(self.root)

    def host(self, path):
        """A path of the release's file system, as the host sees it."""
        return self.root + path

    def plugin(self):
        """Our zebra module for this release: the build's for the host's
        FRR, built in the root (frr-root.sh --plugin, once per run)
        otherwise. The path as the release's zebra sees it."""
        if not self.chroot:
            return PLUGIN
        if self.suite not in self._plugins:
            built = "/build/fpmd/fpmd/zebra-plugin/fpmd_zebra.so"
            if os.environ.get("FPMD_FRR_PLUGINS_BUILT") == "1":
                # scripts/test.sh built it from this tree just before.
                if not os.path.exists(self.host(built)):
                    raise FrrError(f"the plugin for {self}: "
                                   f"{self.host(built)} missing")
                self._plugins[self.suite] = built
                return built
            r = subprocess.run(["sh", FRR_ROOT, "--plugin", self.suite],
                               capture_output=True, text=True, timeout=1800)
            if r.returncode != 0:
                raise FrrError(f"the plugin for {self}: {r.stderr}")
            path = r.stdout.strip().splitlines()[-1]
            self._plugins[self.suite] = path[len(self.root):]
        return self._plugins[self.suite]

    def argv(self, ns, tmp, cmd):
        """cmd run inside ns with this release's files: in the root, with
        /proc, /sys, /dev and tmp mounted there for it alone."""
        if not self.chroot:
            return ["ip", "netns", "exec", ns.name] + cmd
        os.makedirs(self.host(tmp), exist_ok=True)
        script = ('r=$1 t=$2; shift 2; mount -t proc proc "$r/proc" && '
                  'mount --rbind /sys "$r/sys" && '
                  'mount --rbind /dev "$r/dev" && '
                  'mount --bind "$t" "$r$t" && exec chroot "$r" "$@"')
        return ["ip", "netns", "exec", ns.name, "unshare", "--mount",
                "--propagation", "private", "sh", "-c", script, "sh",
                self.root, tmp] + cmd

    def vtysh_argv(self):
        return (["chroot", self.root] if self.chroot else []) + ["vtysh"]


def _frr_ids():
    pw = pwd.getpwnam(FRR_USER)
    return pw.pw_uid, pw.pw_gid


class FrrError(RuntimeError):
    pass


class Frr:
    """zebra (with the FPM client) and staticd inside one namespace.

    fpm: load dplane_fpm_nl and point it at 127.0.0.1 of the namespace.
    nhg: keep `fpm use-next-hop-groups` (FRR's default); False writes
         `no fpm use-next-hop-groups` (routes carry RTA_GATEWAY/MULTIPATH).
    kernel_nhg: False writes `no zebra nexthop kernel enable` too.
    """

    def __init__(self, lab, ns, fpm=True, nhg=True, kernel_nhg=True,
                 fpm_port=None, zebra_conf=(), release=None):
        self.lab, self.ns = lab, ns
        self.rel = release or getattr(lab, "release", None) or Release()
        self.ps = ns.name                      # unique per run already
        # In the release's file system (inner) and as the host sees it.
        self.rundir_in = os.path.join(self.rel.run_dir, self.ps)
        self.rundir = self.rel.host(self.rundir_in)
        self.etcdir = self.rel.host(os.path.join(FRR_ETC, self.ps))
        self.confdir = os.path.join(lab.tmp, "frr-" + self.ps)
        self.daemons = list(self.rel.daemons)
        self.fpm = fpm
        uid, gid = _frr_ids()
        # Removed by remove() on every exit path, also if a step below
        # fails; only what this instance created.
        self.created = []
        lab.frrs.append(self)
        frr_run = self.rel.host(self.rel.run_dir)
        if not os.path.isdir(frr_run):   # normally made by tmpfiles.d/frr
            os.makedirs(frr_run, 0o755)
            os.chown(frr_run, uid, gid)
        if self.rel.chroot:
            # The mount point of the lab's temp dir (Release.argv), and
            # what FRR 10 wants (FRR-LAB.md).
            mnt = self.rel.host(lab.tmp)
            try:        # a topology starts its routers' FRR in parallel
                os.makedirs(mnt)
                self.created.append(mnt)
            except FileExistsError:
                pass
            vartmp = self.rel.host("/var/tmp/frr")
            if not os.path.isdir(vartmp):
                os.makedirs(vartmp)
                os.chown(vartmp, uid, gid)
        for d in (self.rundir, self.etcdir, self.confdir):
            os.mkdir(d)
            self.created.append(d)
            os.chown(d, uid, gid)
        # The daemons read their configs after dropping to frr: the lab's
        # temp dir (0700 root) must let them through.
        os.chmod(lab.tmp, 0o711)
        for name in ("vtysh.conf", "frr.conf"):
            path = os.path.join(self.etcdir, name)
            open(path, "w").close()
            os.chown(path, uid, gid)
        zebra = [f"hostname {ns.name}"]
        if fpm:
            line = "fpm address 127.0.0.1"
            if fpm_port:
                line += f" port {fpm_port}"
            zebra.append(line)
            if not nhg:
                zebra.append("no fpm use-next-hop-groups")
        if not kernel_nhg:
            zebra.append("no zebra nexthop kernel enable")
        zebra += list(zebra_conf)
        self._write_conf("zebra", zebra)
        self._write_conf("staticd", [f"hostname {ns.name}"])

    # ---- files ------------------------------------------------------------

    def _write_conf(self, daemon, lines):
        path = self.conf(daemon)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        uid, gid = _frr_ids()
        os.chown(path, uid, gid)

    def conf(self, daemon):
        return os.path.join(self.confdir, daemon + ".conf")

    def pidfile(self, daemon, inner=False):
        return os.path.join(self.rundir_in if inner else self.rundir,
                            daemon + ".pid")

    def logfile(self, daemon):
        return os.path.join(self.lab.tmp, f"{self.ps}-{daemon}.log")

    def logtext(self, daemon="zebra"):
        return read_text(self.logfile(daemon))

    # ---- processes --------------------------------------------------------

    def pid(self, daemon):
        """The daemon's pid if it runs and is ours (pathspace in its argv)."""
        try:
            with open(self.pidfile(daemon)) as f:
                pid = int(f.read().strip())
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return None
        if self.ps.encode() not in argv or \
                not any(a.endswith(daemon.encode()) for a in argv[:1]):
            return None
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return None
        except FileNotFoundError:
            return None
        return pid

    def running(self, daemon):
        return self.pid(daemon) is not None

    def start(self, daemon, args=()):
        """Start one daemon daemonized (-d): FRR's parent returns once the
        child has read its config and opened its vty socket."""
        if self.running(daemon):
            raise FrrError(f"{self.ps}: {daemon} already running")
        # FRR 10 opens its log after dropping to frr, in the lab's temp
        # dir that only root writes: the file is there, frr's.
        log = self.logfile(daemon)
        if not os.path.exists(log):
            open(log, "w").close()
            os.chown(log, *_frr_ids())
        cmd = [os.path.join(FRR_SBIN, daemon), "-d", "-N", self.ps,
               "-i", self.pidfile(daemon, inner=True),
               "--log", "file:" + self.logfile(daemon),
               "-P", "0"]             # no vty TCP port, the unix socket only
        if not self.by_mgmtd(daemon):
            cmd += ["-f", self.conf(daemon)]
        if daemon == "zebra" and self.fpm:
            cmd += ["-M", "dplane_fpm_nl"]
        cmd += list(args)
        argv = self.rel.argv(self.ns, self.lab.tmp, cmd)
        # Its output to a file, not a pipe: FRR 10's daemonized children
        # keep the parent's stdout and stderr open.
        out = os.path.join(self.lab.tmp, f"{self.ps}-{daemon}.start")
        with open(out, "w") as o:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=o,
                               stderr=subprocess.STDOUT, timeout=30)
        if r.returncode != 0 or not self.running(daemon):
            raise FrrError(f"{self.ps}: {daemon} did not start "
                           f"({r.returncode}): {' '.join(argv)}\n"
                           f"{read_text(out)}\n{self.logtext(daemon)}")
        if daemon != "mgmtd" and self.by_mgmtd(daemon):
            with open(self.conf(daemon)) as f:
                lines = [x for x in f.read().splitlines()
                         if x.strip() and not x.startswith("hostname")]
            if lines:
                self.configure(*lines)
        return self

    def start_zebra(self, retain=False, graceful=None, extra=()):
        """retain: -r, the routes stay in the kernel when zebra exits.
        graceful: -K N, keep the retained routes N s after start (they must
        outlive staticd's resend, ~8.6 s after zebra returns)."""
        args = list(extra)
        if retain:
            args.append("-r")
        if graceful is not None:
            args += ["-K", str(graceful)]
        if self.rel.mgmtd and not self.running("mgmtd"):
            self.start("mgmtd")
        return self.start("zebra", args)

    def by_mgmtd(self, daemon):
        """mgmtd itself, and daemons whose configuration only mgmtd takes
        (staticd since FRR 10): started without a file, then configured
        through vtysh (start())."""
        return daemon == "mgmtd" or (daemon == "staticd" and
                                     self.rel.major >= 10)

    def start_all(self, retain=False, graceful=None):
        self.start_zebra(retain, graceful)
        self.start("staticd")
        return self

    def signal(self, daemon, sig=signal.SIGTERM):
        pid = self.pid(daemon)
        if pid is not None:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return pid

    def stop(self, *daemons, timeout=15):
        stop_parallel([(self, d) for d in (daemons or self.daemons)],
                      timeout)

    # ---- vtysh ------------------------------------------------------------

    def vtysh(self, *cmds, check=True, timeout=30):
        argv = self.rel.vtysh_argv() + ["-N", self.ps]
        for c in cmds:
            argv += ["-c", c]
        for attempt in range(50):
            r = subprocess.run(argv, capture_output=True, text=True,
                               timeout=timeout)
            out = r.stdout + r.stderr
            # FRR 10: mgmtd's datastore is locked for the length of
            # another configuration session (a vtysh of the test's
            # helpers, staticd's own startup): try again.
            if "could not lock" not in out:
                break
            time.sleep(0.1)
        # FRR 10's mgmtd notes a configuration that changes nothing (a
        # static route it still holds); FRR 8.4 says nothing.
        out = out.replace("% Configuration applied with notes:\n"
                          "No changes found to be committed!", "")
        if check and (r.returncode != 0 or "\n% " in "\n" + out):
            raise FrrError(f"{self.ps}: vtysh {cmds} failed "
                           f"({r.returncode}):\n{out}")
        return r.stdout

    def configure(self, *lines):
        return self.vtysh("configure terminal", *lines)

    def json(self, cmd):
        out = self.vtysh(cmd if cmd.endswith(" json") else cmd + " json")
        return json.loads(out) if out.strip() else {}

    def routes(self, v6=False):
        return self.json("show ipv6 route" if v6 else "show ip route")

    def wait_route(self, prefix, v6=False, present=True, timeout=10):
        """Until zebra has (or no longer has) prefix selected and
        installed."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            e = self.routes(v6).get(prefix, [])
            ok = any(x.get("selected") and x.get("installed") for x in e)
            if ok == present:
                return e
            time.sleep(0.1)
        raise FrrError(f"{self.ps}: route {prefix} "
                       f"{'not installed' if present else 'still there'} "
                       f"after {timeout} s: {self.routes(v6).get(prefix)}")

    # ---- removal ----------------------------------------------------------

    def remove(self):
        """Everything this instance created on the host: the pathspace's run
        and etc directories (the config dir goes with the lab's tmp)."""
        for d in self.created:
            if self.rel.chroot and d == self.rel.host(self.lab.tmp):
                # A mount point in the root: empty here, never followed.
                try:
                    os.rmdir(d)
                except OSError:
                    pass
                continue
            shutil.rmtree(d, ignore_errors=True)
        self.created = []


def stop_parallel(items, timeout=15):
    """SIGTERM every (Frr, daemon) first, then wait for all: FRR daemons take
    1.3-2 s to exit each. SIGKILL what is still there at the timeout."""
    pending = []
    for frr, d in items:
        pid = frr.signal(d, signal.SIGTERM)
        if pid is not None:
            pending.append((frr, d, pid))
    deadline = time.time() + timeout
    while pending and time.time() < deadline:
        pending = [(f, d, p) for f, d, p in pending if f.pid(d) == p]
        if pending:
            time.sleep(0.05)
    for f, d, p in pending:
        f.signal(d, signal.SIGKILL)
    deadline = time.time() + 5
    while any(f.pid(d) == p for f, d, p in pending) and \
            time.time() < deadline:
        time.sleep(0.05)
    # FRR leaves its pid files behind; a stale one must not be read again.
    for frr, d in items:
        if not frr.running(d):
            try:
                os.unlink(frr.pidfile(d))
            except FileNotFoundError:
                pass
    return [(f.ps, d) for f, d, p in pending]


class FrrLab(Lab):
    """Lab with FRR instances, and topo="ecmp":

        h1 -- r1 -+- r2 -- h2 (h2-eth0)
                  +- r3 -- h2 (h2-eth1)

    r1 runs fpmd and FRR; r2 and r3 are plain kernel routers. Addresses:
    h1 172.16.101.1/24, r1-eth0 .2; r1-eth1 10.0.12.1/24 - r2-eth0 .2;
    r1-eth2 10.0.13.1/24 - r3-eth0 .2; r2-eth1 172.16.102.2/24 - h2-eth0
    172.16.102.1; r3-eth1 172.16.103.2/24 - h2-eth1 172.16.103.1. The
    destination behind both is h2's loopback prefix (ECMP_DST).
    """

    R2_V4, R3_V4 = "10.0.12.2", "10.0.13.2"
    R1_R2_V4, R1_R3_V4 = "10.0.12.1", "10.0.13.1"
    ECMP_DST = "10.99.0.1"

    def __init__(self, topo="line", receiver_gro=True, release=None):
        self.topo = topo
        self.release = release
        self.frrs = []
        super().__init__(receiver_gro)

    def _build(self, receiver_gro):
        if self.topo == "line":
            return super()._build(receiver_gro)
        if self.topo != "ecmp":
            raise ValueError(self.topo)
        p = self.prefix
        h1, r1 = self.add_ns(p + "h1"), self.add_ns(p + "r1")
        r2, r3 = self.add_ns(p + "r2"), self.add_ns(p + "r3")
        h2 = self.add_ns(p + "h2")
        self.h1, self.r1, self.r2, self.r3, self.h2 = h1, r1, r2, r3, h2
        self.link(h1, "h1-eth0", r1, "r1-eth0")
        self.link(r1, "r1-eth1", r2, "r2-eth0")
        self.link(r1, "r1-eth2", r3, "r3-eth0")
        self.link(r2, "r2-eth1", h2, "h2-eth0")
        self.link(r3, "r3-eth1", h2, "h2-eth1")
        h1.run(f"ip addr add {self.H1_V4}/24 dev h1-eth0 && "
               f"ip route add default via {self.R1_V4_0}")
        r1.run(f"ip addr add {self.R1_V4_0}/24 dev r1-eth0 && "
               f"ip addr add {self.R1_R2_V4}/24 dev r1-eth1 && "
               f"ip addr add {self.R1_R3_V4}/24 dev r1-eth2")
        r2.run("ip addr add 10.0.12.2/24 dev r2-eth0 && "
               "ip addr add 172.16.102.2/24 dev r2-eth1 && "
               f"ip route add default via {self.R1_R2_V4} && "
               "ip route add 10.99.0.0/24 via 172.16.102.1")
        r3.run("ip addr add 10.0.13.2/24 dev r3-eth0 && "
               "ip addr add 172.16.103.2/24 dev r3-eth1 && "
               f"ip route add default via {self.R1_R3_V4} && "
               "ip route add 10.99.0.0/24 via 172.16.103.1")
        # h2 answers by r3, the path that stays up in the tests; it takes
        # packets in on both links (no reverse-path filter).
        h2.run("ip addr add 172.16.102.1/24 dev h2-eth0 && "
               "ip addr add 172.16.103.1/24 dev h2-eth1 && "
               f"ip addr add {self.ECMP_DST}/24 dev lo && "
               "ip route add default via 172.16.103.2")
        for ns in (h2,):
            for k in ("all", "default", "h2-eth0", "h2-eth1", "lo"):
                ns.sysctl(f"net.ipv4.conf.{k}.rp_filter", 0)
        for ns in (r1, r2, r3):
            ns.sysctl("net.ipv4.ip_forward", 1)
            ns.sysctl("net.ipv6.conf.all.forwarding", 1)
        # r1 hashes flows on ports too (the kernel path, and what zebra's
        # kernel routes do); fpmd's XDP hashes the 5-tuple itself.
        r1.sysctl("net.ipv4.fib_multipath_hash_policy", 1)
        # Receivers of r1's XDP redirects and of h1's traffic, as in Lab.
        for ns, ifname in ((h1, "h1-eth0"), (r2, "r2-eth0"),
                           (r3, "r3-eth0")):
            ns.run(f"ethtool -K {ifname} tx off >/dev/null")
            if receiver_gro:
                ns.run(f"ethtool -K {ifname} gro on >/dev/null")

    def frr(self, ns=None, start=True, retain=False, graceful=None, **kw):
        f = Frr(self, ns or self.r1, **kw)
        if start:
            f.start_all(retain, graceful)
        return f

    def cleanup(self):
        try:
            left = stop_parallel([(f, d) for f in self.frrs
                                  for d in f.daemons])
            if left:
                print(f"FRR daemons needed SIGKILL: {left}")
        finally:
            try:
                super().cleanup()
            finally:
                for f in self.frrs:
                    f.remove()


# ---- the zebra plugin, and what a failed test prints --------------------------

def plugin_sock(lab):
    """Where the lab's fpmd listens for the plugin (lib/lab.py)."""
    return os.path.join(lab.tmp, "plugin.sock")


def start_frr(lab, **kw):
    """zebra with the plugin (no FPM module) and staticd on r1."""
    f = lab.frr(start=False, fpm=False, **kw)
    f.start_zebra(extra=["-M", f"{f.rel.plugin()}:{plugin_sock(lab)}"])
    f.start("staticd")
    return f


def zebra_vty(f, *cmds):
    """Commands on zebra's own vty socket, as vtysh sends them, in one
    session (e.g. "enable" first); returns the last one's output. vtysh
    only knows the commands compiled into it, not those a module adds."""
    path = os.path.join(f.rundir, "zebra.vty")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(path)
        for cmd in cmds:
            s.sendall(cmd.encode() + b"\0")
            buf = b""
            while not (len(buf) >= 4 and buf[-4:-1] == b"\0\0\0"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
            status = buf[-1] if len(buf) >= 4 else None
            text = buf[:-4].decode(errors="replace")
            assert status == 0, f"zebra vty {cmd!r}: status {status}: {text}"
    finally:
        s.close()
    return text


def zplugin(f):
    """The plugin's own state (`show fpmd plugin json` on zebra's vty)."""
    return json.loads(zebra_vty(f, "show fpmd plugin json"))


def diagnostics(lab, shows=("fpm", "routes", "nexthops", "neighbors",
                            "counters"), plugin=False):
    """Printed at teardown; pytest shows it when the test failed: the
    logs, fpmctl's shows of every running fpmd, zebra's routes and, with
    plugin, the plugin's state on zebra's vty."""
    for name in sorted(os.listdir(lab.tmp)):
        if name.endswith(".log") or name.startswith("fpmd.log"):
            with open(os.path.join(lab.tmp, name), errors="replace") as f:
                print(f"---- {name} ----\n{f.read()[-20000:]}")
    for d in lab.daemons:
        if d.proc.poll() is None:
            for what in shows:
                try:
                    print(f"---- show {what} ----\n",
                          d.ctl("show", what).stdout)
                except Exception as e:  # noqa: BLE001  diagnostics only
                    print(f"show {what} failed:", e)
    for f in lab.frrs:
        if f.running("zebra"):
            try:
                print("---- zebra ----\n", f.vtysh("show ip route",
                                                  "show ipv6 route",
                                                  check=False))
                if plugin:
                    print("---- show fpmd plugin ----\n",
                          zebra_vty(f, "show fpmd plugin"))
            except Exception as e:  # noqa: BLE001
                print("zebra diagnostics failed:", e)


# ---- offload marks in zebra's RIB (set by the plugin) ------------------------

def zebra_marks(f, v6=False):
    """{prefix: True / False / None} of the selected entries: "offloaded"
    true, false (offload failed) or absent. Asserts that no other entry of
    the prefix carries a mark."""
    out = {}
    for p, es in f.routes(v6).items():
        for e in es:
            if e.get("selected"):
                out[p] = e.get("offloaded")
            else:
                assert "offloaded" not in e, (p, es)
    return out


def fib_offloaded(f, v6=False):
    s = f.json("show ipv6 route summary" if v6 else "show ip route summary")
    return sum(r.get("fibOffLoaded", 0) for r in s.get("routes", []))


def wait_marks(f, want, v6=False, timeout=10):
    """Until every prefix of want has that mark in zebra."""
    def ok():
        m = zebra_marks(f, v6)
        return m if all(m.get(p) is w for p, w in want.items()) else None
    return wait_for(ok, timeout=timeout, interval=0.05,
                    what=f"zebra marks {want} (now {zebra_marks(f, v6)})")


def ns_has_listener(ns, port):
    out = ns.run(f"ss -Hltn sport = :{port}", check=False).stdout
    return f":{port}" in out


def ns_wait_tentative(ns, timeout=5):
    """IPv6 link-locals finish DAD (FRR nexthops use them)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not ns.run("ip -6 addr show tentative", check=False).stdout.strip():
            return
        time.sleep(0.1)
    raise AssertionError(f"{ns.name}: IPv6 addresses still tentative")


__all__ = ["Frr", "FrrLab", "FrrError", "Release", "stop_parallel", "sh", "PLUGIN",
           "start_frr", "zebra_vty", "zplugin", "diagnostics", "zebra_marks",
           "fib_offloaded", "wait_marks",
           "ns_has_listener", "ns_wait_tentative"]
