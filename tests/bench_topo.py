# SPDX-License-Identifier: GPL-2.0-or-later
"""Many routers, measured: an OSPF chain of N routers, each with fpmd.

Run by hand as root (not collected by pytest: no test_ name), on a release
build (sanitized builds have a huge RSS):

    FPMD_BUILDDIR=$PWD/build-rel scripts/build.sh \\
        --with-frr-source=/var/cache/fpmd/frr-src
    /usr/bin/python3 tests/bench_topo.py --builddir build-rel \\
        --routers 5,10,20

Topology, for each N, built, measured and removed in turn:

    gen --- r1 --- r2 --- ... --- rN --- sink

- every router runs the installed zebra with fpmd's zebra plugin
  (`zebra -M fpmd_zebra.so:SOCKET`), ospfd, and fpmd (`--no-fpm`, the
  plugin feed only, every interface of the router). OSPF: area 0 over
  everything, point-to-point links, hello 1 s, LSA and SPF throttles at 0
  (FRR's defaults take seconds), the loopback and the gen/sink links
  passive. Each router has 2N+1 prefixes: N loopbacks /32, N-1 links and
  the gen and sink subnets; 2N-2 of them are OSPF routes, the rest its
  own.
- gen: tests/trafficgen send (BPF_PROG_TEST_RUN live frames, XDP_TX out of
  gen's veth to r1's MAC): one UDP flow 10.0.0.2 -> 10.2.0.2 (the sink)
  as fast as one core goes. r1's gen-facing veth has GRO on (a veth only
  receives XDP_TX frames with XDP or GRO on its side; kernel runs have no
  XDP there). sink: tests/trafficgen sink, XDP counting the flow's frames
  and dropping them; rN has the sink as a permanent neighbor.
- link neighbors are resolved before fpmd starts (one ping per link), so
  that "programmed" means forwarding, not "unresolved". rp_filter is 0
  everywhere (as in bench_live.py), forwarding on.

Measured, per router and in total:

- map memory: tests/lib/procmem.map_memory(fpmd pid), the sum of fdinfo
  memlock over every map fd fpmd holds, and the number of maps;
- RSS of fpmd, zebra and ospfd (VmRSS), once the table is programmed;
- converge: seconds from starting every ospfd (in parallel) until the
  router's kernel FIB holds all its 2N-2 OSPF routes (an rtnetlink dump
  per router, polled);
- programmed: until its fpmd shows all of them (`fpmctl --json show
  routes`: protocol ospf, selected, state forwarding). The poll takes one
  fpmctl per router per round, so these times have a resolution of about
  0.05 s x N on this machine;
- restart: after the kernel runs, every fpmd is started again: seconds
  until each is programmed again (the plugin's replay);
- Mpps of the flow across the whole chain: packets the sink counted /
  wall time of the generator run, with fpmd on every router, and with
  kernel forwarding on every router (every fpmd stopped: SIGTERM detaches
  its XDP program), runs interleaved fpmd, kernel, kernel, fpmd, ... in
  the same topology (--rounds pairs). Each fpmd run checks that every
  fpmd's `forwarded` counter moved by at least 99% of what the sink got,
  and each kernel run that every kernel's ForwDatagrams did; a run that
  fails the check is flagged in the table. All hops run in the softirq of
  the generator's core (or in ksoftirqd when it falls behind), so the
  rate is that of one core carrying the packet through N routers:
  roughly 1 / (N x the cost of one hop).

Prints one markdown table per N, a totals table and the command line.
Everything it creates (namespaces, FRR, fpmd, sink, pins, FRR pathspaces,
temporary files) is removed on every exit path, Ctrl-C and SIGTERM
included.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO = os.path.dirname(HERE)


def _builddir(argv):
    """--builddir must be known before lab.py reads FPMD_BUILDDIR."""
    for i, a in enumerate(argv):
        if a == "--builddir" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--builddir="):
            return a.split("=", 1)[1]
    return os.environ.get("FPMD_BUILDDIR", os.path.join(REPO, "build-rel"))


os.environ["FPMD_BUILDDIR"] = os.path.abspath(_builddir(sys.argv))

from bench_live import Child, in_netns  # noqa: E402
from frr import Frr, stop_parallel  # noqa: E402
from lab import FPMCTL, FPMD, BUILDDIR, Netns, sh, unique_prefix  # noqa: E402
from lib import procmem  # noqa: E402

TRAFFICGEN = os.path.join(BUILDDIR, "tests", "trafficgen")
PLUGIN = os.path.join(BUILDDIR, "fpmd", "zebra-plugin", "fpmd_zebra.so")

RTM_GETROUTE, RTM_NEWROUTE, NLMSG_DONE, NLMSG_ERROR = 26, 24, 3, 2
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
RTPROT_OSPF, RT_TABLE_MAIN = 188, 254

GEN_SRC, SINK_DST = "10.0.0.2", "10.2.0.2"
ROUTER_DAEMONS = ("zebra", "ospfd")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def mib(n):
    return n / (1 << 20)


class RouteCounter:
    """IPv4 OSPF routes in a namespace's main table, by an rtnetlink dump
    (no process per poll)."""

    def __init__(self, ns):
        with in_netns(ns):
            self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        self.s.bind((0, 0))
        self.seq = 0

    def ospf_routes(self):
        self.seq += 1
        rtm = struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 0, 0, 0, 0,
                          0)
        self.s.send(struct.pack("=IHHII", 16 + len(rtm), RTM_GETROUTE,
                                NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0) +
                    rtm)
        n = 0
        while True:
            data = self.s.recv(1 << 16)
            p = 0
            while p + 16 <= len(data):
                ln, typ, _, seq, _ = struct.unpack_from("=IHHII", data, p)
                if typ == NLMSG_DONE and seq == self.seq:
                    return n
                if typ == NLMSG_ERROR:
                    raise OSError("rtnetlink dump failed")
                if typ == RTM_NEWROUTE and seq == self.seq:
                    _, _, _, _, table, proto, _, _, _ = struct.unpack_from(
                        "=BBBBBBBBI", data, p + 16)
                    if table == RT_TABLE_MAIN and proto == RTPROT_OSPF:
                        n += 1
                p += (ln + 3) & ~3

    def close(self):
        self.s.close()


class Router:
    def __init__(self, i, ns):
        self.i = i
        self.ns = ns
        self.name = f"r{i}"
        self.frr = None
        self.fpmd = None
        self.fpmd_log = None
        self.counter = None
        self.ifs = (f"r{i}-eth0", f"r{i}-eth1")
        self.res = {}


class Chain:
    """gen -- r1 -- ... -- rN -- sink with OSPF, zebra + plugin and fpmd
    on every router."""

    def __init__(self, n, args):
        self.n = n
        self.args = args
        self.prefix = unique_prefix()
        self.tmp = tempfile.mkdtemp(prefix=self.prefix + "-")
        os.chmod(self.tmp, 0o711)  # FRR reads its configs as frr
        self.frrs = []  # Frr() registers itself here
        self.ns = []
        self.routers = []
        self.children = []
        self.fpmds = []
        self.sink = None
        self.runs = []

    # ---- topology ---------------------------------------------------------

    def add_ns(self, short):
        ns = Netns(self.prefix + short)
        self.ns.append(ns)
        return ns

    def link(self, a, aname, b, bname):
        sh(f"ip link add {aname} netns {a.name} type veth peer name {bname} "
           f"netns {b.name}")
        a.run(f"ip link set {aname} up")
        b.run(f"ip link set {bname} up")

    def build(self):
        n = self.n
        self.gen = self.add_ns("gen")
        for i in range(1, n + 1):
            self.routers.append(Router(i, self.add_ns(f"r{i}")))
        self.sinkns = self.add_ns("sink")
        r = self.routers
        self.link(self.gen, "gen-eth0", r[0].ns, "r1-eth0")
        for a, b in zip(r, r[1:]):
            self.link(a.ns, a.ifs[1], b.ns, b.ifs[0])
        self.link(r[-1].ns, r[-1].ifs[1], self.sinkns, "sink-eth0")
        self.gen.run(f"ip addr add {GEN_SRC}/24 dev gen-eth0 && "
                     "ethtool -K gen-eth0 gro on >/dev/null")
        self.sinkns.run(f"ip addr add {SINK_DST}/24 dev sink-eth0")
        for x in r:
            i = x.i
            left = "10.0.0.1/24" if i == 1 else f"10.1.{i - 1}.2/24"
            right = "10.2.0.1/24" if i == n else f"10.1.{i}.1/24"
            # sysctls first: "all"/"default" reach devices made later too.
            x.ns.run("sysctl -qw net.ipv4.ip_forward=1 "
                     "net.ipv4.conf.all.rp_filter=0 "
                     "net.ipv4.conf.default.rp_filter=0 "
                     f"net.ipv4.conf.{x.ifs[0]}.rp_filter=0 "
                     f"net.ipv4.conf.{x.ifs[1]}.rp_filter=0")
            x.ns.run(f"ip addr add 10.255.0.{i}/32 dev lo && "
                     f"ip addr add {left} dev {x.ifs[0]} && "
                     f"ip addr add {right} dev {x.ifs[1]}")
        # The generator's XDP_TX frames need GRO (or XDP) on r1's side.
        r[0].ns.run("ethtool -K r1-eth0 gro on >/dev/null")
        smac = self.sinkns.mac("sink-eth0")
        r[-1].ns.run(f"ip neigh add {SINK_DST} lladdr {smac} nud permanent "
                     f"dev {r[-1].ifs[1]}")
        # Resolve every link neighbor (both ends learn the other).
        procs = [x.ns.popen(f"ping -c1 -W2 10.1.{x.i}.2 >/dev/null")
                 for x in r[:-1]]
        for p in procs:
            p.wait(30)
        for x in r:
            x.counter = RouteCounter(x.ns.name)

    def ospf_conf(self, x):
        lines = [f"hostname {x.ns.name}"]
        for ifname in x.ifs:
            lines += [f"interface {ifname}",
                      " ip ospf network point-to-point",
                      " ip ospf hello-interval 1",
                      " ip ospf dead-interval 4"]
        lines += ["router ospf",
                  f" ospf router-id 10.255.0.{x.i}",
                  " timers throttle spf 0 50 500",
                  " timers throttle lsa all 0",
                  " timers lsa min-arrival 0",
                  " passive-interface lo",
                  " network 10.0.0.0/8 area 0"]
        if x.i == 1:
            lines.append(f" passive-interface {x.ifs[0]}")
        if x.i == self.n:
            lines.append(f" passive-interface {x.ifs[1]}")
        return lines

    def plugin_sock(self, x):
        return os.path.join(self.tmp, f"{x.name}-plugin.sock")

    def ctl_sock(self, x):
        return os.path.join(self.tmp, f"{x.name}-fpmd.sock")

    def pin(self, x):
        return f"/sys/fs/bpf/{self.prefix}{x.name}"

    # ---- daemons ----------------------------------------------------------

    def start_fpmd(self, x):
        x.fpmd_log = os.path.join(self.tmp, f"{x.name}-fpmd.log")
        args = [FPMD, "--netns", x.ns.name, "-b", self.pin(x), "-s",
                self.ctl_sock(x), "--plugin-socket", self.plugin_sock(x),
                "--no-fpm", "--log", "file:" + x.fpmd_log]
        for ifname in x.ifs:
            args += ["-i", ifname]
        out = open(os.path.join(self.tmp, f"{x.name}-fpmd.out"), "ab")
        try:
            x.fpmd = subprocess.Popen(args, stdout=out,
                                      stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL,
                                      start_new_session=True)
        finally:
            out.close()
        x.fpmd_start = os.path.getsize(x.fpmd_log) if os.path.exists(
            x.fpmd_log) else 0

    def wait_fpmds_started(self, timeout=60):
        deadline = time.time() + timeout
        for x in self.routers:
            while "started:" not in self.fpmd_text(x)[x.fpmd_start:]:
                if x.fpmd.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"{x.name}: fpmd did not start:\n"
                                       + self.fpmd_text(x)[-3000:])
                time.sleep(0.05)

    def fpmd_text(self, x):
        try:
            with open(x.fpmd_log) as f:
                return f.read()
        except (FileNotFoundError, TypeError):
            return ""

    def stop_fpmds(self):
        for x in self.routers:
            if x.fpmd and x.fpmd.poll() is None:
                x.fpmd.send_signal(signal.SIGTERM)
        for x in self.routers:
            if x.fpmd and x.fpmd.poll() is None:
                try:
                    x.fpmd.wait(30)
                except subprocess.TimeoutExpired:
                    log(f"{x.name}: fpmd did not exit 30 s after SIGTERM, "
                        "killing it")
                    x.fpmd.kill()
                    x.fpmd.wait()

    def fpmctl(self, x, *args):
        r = subprocess.run([FPMCTL, "-s", self.ctl_sock(x), "--json"] +
                           list(args), capture_output=True, text=True,
                           timeout=30)
        if r.returncode:
            raise RuntimeError(f"{x.name}: fpmctl {' '.join(args)}: "
                               f"{r.stderr}")
        return json.loads(r.stdout)

    def start_frr(self):
        for x in self.routers:
            x.frr = Frr(self, x.ns, fpm=False)
            x.frr._write_conf("ospfd", self.ospf_conf(x))
        for x in self.routers:
            x.frr.start_zebra(extra=["-M", f"{PLUGIN}:{self.plugin_sock(x)}"])

    def start_ospfds(self):
        """All at once: ospfd -d returns once it has read its config."""
        procs = []
        for x in self.routers:
            f = x.frr
            argv = ["ip", "netns", "exec", x.ns.name,
                    "/usr/lib/frr/ospfd", "-d", "-N", f.ps, "-f",
                    f.conf("ospfd"), "-i", f.pidfile("ospfd"), "--log",
                    "file:" + f.logfile("ospfd"), "-P", "0"]
            procs.append((x, subprocess.Popen(argv, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT,
                                              text=True)))
        for x, p in procs:
            out, _ = p.communicate(timeout=60)
            if p.returncode or not x.frr.running("ospfd"):
                raise RuntimeError(f"{x.name}: ospfd did not start: {out}\n"
                                   + x.frr.logtext("ospfd")[-2000:])

    # ---- measurements -----------------------------------------------------

    def forwarding_ospf(self, x):
        """OSPF routes fpmd has in the maps and forwards."""
        n = 0
        for entries in self.fpmctl(x, "show", "routes").values():
            for e in entries:
                if e.get("protocol") == "ospf" and e.get("selected") and \
                        e.get("state") == "forwarding":
                    n += 1
        return n

    def wait_programmed(self, t0, key, timeout, kernel=True):
        """Per router: seconds from t0 until the kernel has every OSPF
        route (res["converge"]) and fpmd forwards them all (res[key])."""
        want = 2 * self.n - 2
        todo_k = {x.i for x in self.routers} if kernel else set()
        todo_f = {x.i for x in self.routers}
        deadline = t0 + timeout
        while todo_k or todo_f:
            for x in self.routers:
                if x.i in todo_k and x.counter.ospf_routes() >= want:
                    x.res["converge"] = time.time() - t0
                    todo_k.discard(x.i)
            for x in self.routers:
                if x.i in todo_f and x.i not in todo_k and \
                        self.forwarding_ospf(x) >= want:
                    x.res[key] = time.time() - t0
                    todo_f.discard(x.i)
            if time.time() > deadline:
                late = sorted(todo_k | todo_f)
                detail = {f"r{i}": (self.routers[i - 1].counter.ospf_routes(),
                                    self.forwarding_ospf(self.routers[i - 1]))
                          for i in late}
                raise RuntimeError(
                    f"N={self.n}: after {timeout} s, routers {late} still "
                    f"lack routes (kernel OSPF routes, fpmd forwarding) of "
                    f"{want}: {detail}")
            time.sleep(0.05)

    def memory(self):
        for x in self.routers:
            pid = x.fpmd.pid
            x.res["map_bytes"], x.res["maps"] = procmem.map_memory(pid)
            x.res["fpmd_rss"] = procmem.rss_bytes(pid)
            x.res["zebra_rss"] = procmem.rss_bytes(x.frr.pid("zebra"))
            x.res["ospfd_rss"] = procmem.rss_bytes(x.frr.pid("ospfd"))

    def kernel_fwd(self, x):
        with in_netns(x.ns.name):
            with open("/proc/self/net/snmp") as f:
                lines = f.read().splitlines()
        for i in range(0, len(lines) - 1, 2):
            k, v = lines[i].split(), lines[i + 1].split()
            if k[0] == "Ip:":
                return int(v[k.index("ForwDatagrams")])
        raise KeyError("ForwDatagrams")

    def fpmd_fwd(self, x):
        c = self.fpmctl(x, "show", "counters")
        return c.get(x.ifs[0], {}).get("forwarded", {}).get("packets", 0)

    def run_traffic(self, mode):
        r = self.routers
        k0 = [self.kernel_fwd(x) for x in r]
        f0 = [self.fpmd_fwd(x) for x in r] if mode == "fpmd" else None
        s0 = self.sink.ask()["sink-eth0"]
        cmd = [TRAFFICGEN, "send", "--netns", self.gen.name, "--dev",
               "gen-eth0", "--dmac", self.r1_mac, "--src", GEN_SRC, "--dst",
               SINK_DST, "--seconds", str(self.args.seconds)]
        if self.args.cpu is not None:
            cmd += ["--cpu", str(self.args.cpu)]
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=self.args.seconds + 60)
        if p.returncode:
            raise RuntimeError(f"trafficgen: {p.stderr}")
        g = json.loads(p.stdout)
        time.sleep(0.2)  # frames still in the veth rings / ksoftirqd
        delivered = self.sink.ask()["sink-eth0"] - s0
        kf = [self.kernel_fwd(x) - a for x, a in zip(r, k0)]
        res = {"mode": mode, "sent": g["sent"], "seconds": g["seconds"],
               "delivered": delivered,
               "mpps": delivered / g["seconds"] / 1e6,
               "loss": 1 - delivered / g["sent"] if g["sent"] else 0,
               "kernel_forwarded": kf}
        # Who carried it: every hop, by its own counter.
        if mode == "fpmd":
            ff = [self.fpmd_fwd(x) - a for x, a in zip(r, f0)]
            res["fpmd_forwarded"] = ff
            short = [x.name for x, c in zip(r, ff) if c < 0.99 * delivered]
            if short:
                res["flag"] = f"fpmd forwarded less than delivered on {short}"
        else:
            short = [x.name for x, c in zip(r, kf) if c < 0.99 * delivered]
            if short:
                res["flag"] = f"kernel forwarded less than delivered on {short}"
        if not delivered:
            res["flag"] = "nothing delivered"
        self.runs.append(res)
        log(f"  N={self.n} {mode:6}: {res['mpps']:.3f} Mpps, loss "
            f"{res['loss'] * 100:.1f}%" +
            (f"  !! {res['flag']}" if res.get("flag") else ""))
        return res

    # ---- the whole measurement -------------------------------------------

    def run(self):
        t_build = time.time()
        self.build()
        log(f"N={self.n}: {len(self.ns)} namespaces linked "
            f"({time.time() - t_build:.1f} s)")
        self.sink = Child("sink", [TRAFFICGEN, "sink", "--netns",
                                   self.sinkns.name, "sink-eth0"],
                          os.path.join(self.tmp, "sink.log"))
        self.children.append(self.sink)
        self.r1_mac = self.routers[0].ns.mac("r1-eth0")
        # fpmd first: the plugin then connects at once, no retry wait.
        for x in self.routers:
            self.start_fpmd(x)
        self.wait_fpmds_started()
        self.start_frr()
        log(f"N={self.n}: fpmd and zebra up on every router; starting ospfd")
        t0 = time.time()
        self.start_ospfds()
        self.t_ospfd_started = time.time() - t0
        self.wait_programmed(t0, "programmed", self.args.timeout)
        self.memory()
        log(f"N={self.n}: converged in "
            f"{max(x.res['converge'] for x in self.routers):.2f} s, "
            f"programmed in "
            f"{max(x.res['programmed'] for x in self.routers):.2f} s")
        # ABBA: fpmd, kernel, kernel, fpmd, ... -- one stop and one start
        # of every fpmd per two rounds.
        mode = "fpmd"
        for rnd in range(self.args.rounds):
            order = ("fpmd", "kernel") if rnd % 2 == 0 else ("kernel",
                                                             "fpmd")
            for want in order:
                if want != mode:
                    self.switch(want)
                    mode = want
                self.run_traffic(mode)

    def switch(self, mode):
        if mode == "kernel":
            self.stop_fpmds()
            return
        t0 = time.time()
        for x in self.routers:
            self.start_fpmd(x)
        self.wait_fpmds_started()
        self.wait_programmed(t0, "restart", self.args.timeout, kernel=False)

    def cleanup(self):
        def step(fn, *a):
            try:
                fn(*a)
            except Exception as e:  # noqa: BLE001 - keep cleaning up
                log(f"cleanup: {getattr(fn, '__name__', fn)}: {e}")

        step(self.stop_fpmds)
        left = []
        try:
            left = stop_parallel([(f, d) for f in self.frrs
                                  for d in ROUTER_DAEMONS])
        except Exception as e:  # noqa: BLE001
            log(f"cleanup: FRR: {e}")
        if left:
            log(f"cleanup: FRR daemons needed SIGKILL: {left}")
        for c in self.children:
            step(c.stop)
        for x in self.routers:
            if x.counter:
                step(x.counter.close)
        for ns in reversed(self.ns):
            step(ns.delete)
        for x in self.routers:
            if os.path.isdir(self.pin(x)):
                step(shutil.rmtree, self.pin(x))
        for f in self.frrs:
            step(f.remove)
        if self.args.keep_logs:
            step(shutil.copytree, self.tmp,
                 os.path.join(self.args.keep_logs, self.prefix),
                 ignore=shutil.ignore_patterns("*.sock"))
        step(shutil.rmtree, self.tmp)


# --------------------------------------------------------------------------
# Report

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f2(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def chain_summary(c):
    r = c.routers
    runs = {m: [x for x in c.runs if x["mode"] == m]
            for m in ("fpmd", "kernel")}
    fp = median(x["mpps"] for x in runs["fpmd"])
    kn = median(x["mpps"] for x in runs["kernel"])
    return {
        "n": c.n,
        "map_bytes": sum(x.res.get("map_bytes", 0) for x in r),
        "maps": sum(x.res.get("maps", 0) for x in r),
        "fpmd_rss": sum(x.res.get("fpmd_rss", 0) for x in r),
        "zebra_rss": sum(x.res.get("zebra_rss", 0) for x in r),
        "ospfd_rss": sum(x.res.get("ospfd_rss", 0) for x in r),
        "converge": max((x.res.get("converge", 0) for x in r), default=0),
        "programmed": max((x.res.get("programmed", 0) for x in r),
                          default=0),
        "restart": max((x.res["restart"] for x in r if "restart" in x.res),
                       default=None),
        "fpmd_mpps": fp, "kernel_mpps": kn,
        "fpmd_loss": median(x["loss"] for x in runs["fpmd"]),
        "kernel_loss": median(x["loss"] for x in runs["kernel"]),
        "runs": len(runs["fpmd"]), "flagged": sum(1 for x in c.runs
                                                  if x.get("flag")),
        "seconds": c.seconds,
    }


def print_chain(c):
    s = chain_summary(c)
    print(f"\n### N = {c.n} routers (chain, OSPF, {2 * c.n - 2} OSPF routes "
          f"per router; {s['seconds']:.0f} s for this N)\n")
    print("| router | map MiB | maps | fpmd RSS MiB | zebra RSS MiB | "
          "ospfd RSS MiB | converge s | programmed s | restart s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for x in c.routers:
        v = x.res
        print(f"| {x.name} | {f2(mib(v.get('map_bytes', 0)), '{:.1f}')} | "
              f"{v.get('maps', 0)} | "
              f"{f2(mib(v.get('fpmd_rss', 0)), '{:.1f}')} | "
              f"{f2(mib(v.get('zebra_rss', 0)), '{:.1f}')} | "
              f"{f2(mib(v.get('ospfd_rss', 0)), '{:.1f}')} | "
              f"{f2(v.get('converge'))} | {f2(v.get('programmed'))} | "
              f"{f2(v.get('restart'))} |")
    print(f"| **total** | **{mib(s['map_bytes']):.1f}** | **{s['maps']}** | "
          f"**{mib(s['fpmd_rss']):.1f}** | **{mib(s['zebra_rss']):.1f}** | "
          f"**{mib(s['ospfd_rss']):.1f}** | **{s['converge']:.2f}** | "
          f"**{s['programmed']:.2f}** | **{f2(s['restart'])}** |")
    if c.runs:
        print(f"\nOne UDP flow gen -> r1 -> ... -> r{c.n} -> sink, Mpps at "
              "the sink (delivered / wall time of the run), in run order:")
        print()
        print("| run | forwarding | Mpps | loss | check |")
        print("|---:|---|---:|---:|---|")
        for i, r in enumerate(c.runs, 1):
            print(f"| {i} | {r['mode']} | {r['mpps']:.3f} | "
                  f"{r['loss'] * 100:.1f}% | {r.get('flag', 'ok')} |")
        if s["fpmd_mpps"] and s["kernel_mpps"]:
            print(f"\nmedian: fpmd {s['fpmd_mpps']:.3f} Mpps, kernel "
                  f"{s['kernel_mpps']:.3f} Mpps, fpmd/kernel "
                  f"{s['fpmd_mpps'] / s['kernel_mpps']:.2f}")


def print_totals(chains):
    print("\n### Totals\n")
    print("| routers | map MiB | maps | fpmd RSS MiB | zebra RSS MiB | "
          "ospfd RSS MiB | converge s | programmed s | restart s | "
          "fpmd Mpps | kernel Mpps | fpmd/kernel | time s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in chains:
        s = chain_summary(c)
        ratio = (s["fpmd_mpps"] / s["kernel_mpps"]
                 if s["fpmd_mpps"] and s["kernel_mpps"] else None)
        flag = f" ({s['flagged']} flagged)" if s["flagged"] else ""
        print(f"| {s['n']} | {mib(s['map_bytes']):.1f} | {s['maps']} | "
              f"{mib(s['fpmd_rss']):.1f} | {mib(s['zebra_rss']):.1f} | "
              f"{mib(s['ospfd_rss']):.1f} | {s['converge']:.2f} | "
              f"{s['programmed']:.2f} | {f2(s['restart'])} | "
              f"{f2(s['fpmd_mpps'], '{:.3f}')} | "
              f"{f2(s['kernel_mpps'], '{:.3f}')} | "
              f"{f2(ratio)}{flag} | {s['seconds']:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--routers", default="5,10,20",
                    help="chain lengths, comma-separated (default 5,10,20)")
    ap.add_argument("--builddir", help="build directory (default "
                    "$FPMD_BUILDDIR, else build-rel): a release build")
    ap.add_argument("--seconds", type=float, default=2.0,
                    help="per traffic run (default 2)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="pairs of runs, fpmd and kernel (default 2: "
                    "fpmd, kernel, kernel, fpmd)")
    ap.add_argument("--cpu", type=int, help="pin the generator to this CPU")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds to converge and program (default 120)")
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--keep-logs", metavar="DIR",
                    help="copy FRR's and fpmd's logs to DIR")
    args = ap.parse_args()
    sizes = [int(x) for x in args.routers.split(",") if x]
    if any(n < 2 for n in sizes):
        sys.exit("--routers: at least 2 routers per chain")
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, BPF, FRR)")
    for exe in (FPMD, FPMCTL, TRAFFICGEN, PLUGIN):
        if not os.access(exe, os.R_OK):
            sys.exit(f"{exe} missing: build with FPMD_BUILDDIR=DIR "
                     "scripts/build.sh --with-frr-source=... (the zebra "
                     "plugin is needed), then make -C DIR tests/trafficgen")
    if "sanitize" in open(os.path.join(BUILDDIR, ".build-args")).read() \
            if os.path.exists(os.path.join(BUILDDIR, ".build-args")) \
            else False:
        log(f"warning: {BUILDDIR} is a sanitized build: RSS numbers are "
            "meaningless")

    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    t_all = time.time()
    done = []
    rc = 0
    for n in sizes:
        c = Chain(n, args)
        t0 = time.time()
        try:
            c.run()
        except KeyboardInterrupt:
            log("interrupted, cleaning up")
            rc = 130
        except Exception as e:
            log(f"N={n} failed: {e!r}")
            traceback.print_exc()
            for x in c.routers:
                log(f"{x.name} fpmd log tail:\n" + c.fpmd_text(x)[-1500:])
                break
            rc = 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            c.cleanup()
            signal.signal(signal.SIGINT, on_signal)
            signal.signal(signal.SIGTERM, on_signal)
        c.seconds = time.time() - t0
        if any(x.res for x in c.routers):
            done.append(c)
            print_chain(c)
            sys.stdout.flush()
        if rc:
            break
    if done:
        print_totals(done)
    if args.json and done:
        with open(args.json, "w") as f:
            json.dump([{"summary": chain_summary(c),
                        "routers": {x.name: x.res for x in c.routers},
                        "runs": c.runs} for c in done], f, indent=1)
    print(f"\ntotal {time.time() - t_all:.0f} s; fpmd: {FPMD}; command: "
          f"{' '.join(sys.argv)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
