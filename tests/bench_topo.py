# SPDX-License-Identifier: GPL-2.0-or-later
"""Many routers, measured: an OSPF chain of N routers, each with fpmd.

Run by hand as root (not collected by pytest: no test_ name), on a release
build (sanitized builds have a huge RSS):

    FPMD_BUILDDIR=$PWD/build-rel scripts/build.sh \\
        --with-frr-source=/var/cache/fpmd/frr-src
    /usr/bin/python3 tests/bench_topo.py --builddir build-rel \\
        --routers 5,10,20 --cpu 1

(--cpu pins the generator, and with it the softirq work of every hop, to
one CPU: steadier numbers on a shared machine.)

Topology, for each N, built with tests/lib/topo.py, measured and removed
in turn:

    gen --- r1 --- r2 --- ... --- rN --- sink

- every router runs fpmd (`--no-fpm`: the plugin feed only, on both its
  interfaces), then the installed zebra with fpmd's zebra plugin
  (`zebra -M fpmd_zebra.so:SOCKET`) and ospfd with topo.ospf(): area 0,
  point-to-point links, hello 1 s, dead 3 s, LSA and SPF throttles at 0
  (FRR's defaults take seconds), the gen and sink links passive. Each
  router has 2N+1 IPv4 prefixes: N loopbacks /32, N-1 links, the gen and
  sink subnets; 2N-2 of them are OSPF routes, the rest its own.
- addresses and links as topo.py makes them; every veth end has GRO on
  and tx checksum offload off (topo.py: what a real NIC does; GRO is what
  lets r1 receive the generator's XDP_TX frames when fpmd is stopped).
- gen: tests/trafficgen send (BPF_PROG_TEST_RUN live frames, XDP_TX out of
  gen's veth to r1's MAC): one UDP flow from gen's address to the sink's,
  as fast as one core goes. sink: tests/trafficgen sink, XDP counting the
  flow's frames and dropping them; rN has the sink as a permanent
  neighbor.
- link neighbors are learned (one ping each way per link, then the
  kernel's own ARP: fpmd tells the kernel which entries XDP uses, fpmd(8)
  NEIGHBORS), or with --neighbors permanent permanent entries on both
  ends, as before fpmd did that (see resolve_neighbors).

Measured, per router and in total:

- map memory: tests/lib/procmem.map_memory(fpmd pid), the sum of fdinfo
  memlock over every map fd fpmd holds, and the number of maps;
- RSS of fpmd, zebra and ospfd (VmRSS), once the table is programmed,
  and how much of fpmd's RSS lies in mappings of BPF maps (mmapable
  arrays, /proc/PID/smaps): those pages are map memory counted twice;
- the machine: how far MemAvailable dropped and VmallocUsed grew from
  before the build to programmed (the whole lab: fpmd, maps, FRR,
  namespaces; other processes on the machine move these too);
- FRR start: seconds to start zebra and ospfd on every router (8 routers
  at a time, topo.py), with every fpmd already running;
- converge: seconds from the start of FRR start until the router's kernel
  FIB holds all its 2N-2 OSPF routes (an rtnetlink dump per router,
  polled);
- programmed: from the same moment until its fpmd shows all of them
  (`fpmctl --json show routes`: protocol ospf, selected, state
  forwarding). The poll takes one fpmctl per router per round, so these
  times have a resolution of about 0.05 s x N on this machine;
- restart: after the kernel runs, every fpmd is started again: seconds
  until each is programmed again (the plugin's replay);
- Mpps of the flow across the whole chain, with fpmd on every router,
  and with kernel forwarding on every router (every fpmd stopped: SIGTERM
  detaches its XDP program), runs interleaved fpmd, kernel, kernel, fpmd,
  ... in the same topology (--rounds pairs, default 3; the tables show
  medians). All hops run in the softirq of the generator's core, inline
  in its loop, or in ksoftirqd when the softirq budget runs out. Per
  core: packets the sink counted / (the generator's loop time, which the
  kernel's BPF_PROG_TEST_RUN timer stops while it is preempted, + the CPU
  time ksoftirqd took meanwhile), the CPU cost of the chain, steady on a
  loaded machine; by the clock: packets the sink counted / wall time of
  the run. Either is roughly 1 / (N x the cost of one hop). Loss is what
  the generator sent beyond what the chain took (dropped at r1). Each
  fpmd run checks that every fpmd's `forwarded` counter moved by at least
  99% of what the sink got, and each kernel run that every kernel's
  ForwDatagrams did; a run that fails the check is flagged.

Prints one markdown table per N, a totals table and the command line.
Everything it creates (namespaces, FRR, fpmd, sink, pins, FRR pathspaces,
temporary files) is removed on every exit path, Ctrl-C and SIGTERM
included.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import socket
import statistics
import struct
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO = os.path.dirname(HERE)


def _builddir(argv):
    """--builddir must be known before lib/lab.py reads FPMD_BUILDDIR."""
    for i, a in enumerate(argv):
        if a == "--builddir" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--builddir="):
            return a.split("=", 1)[1]
    return os.environ.get("FPMD_BUILDDIR", os.path.join(REPO, "build-rel"))


os.environ["FPMD_BUILDDIR"] = os.path.abspath(_builddir(sys.argv))

from bench_live import in_netns  # noqa: E402
from lib.lab import BUILDDIR, FPMCTL, FPMD  # noqa: E402
from lib import procmem  # noqa: E402
from lib.runner import Child, guarded, keep_going, log, run  # noqa: E402
from lib.topo import PLUGIN, Host, Link, Router, Topology, ospf  # noqa: E402

TRAFFICGEN = os.path.join(BUILDDIR, "tests", "trafficgen")

RTM_GETROUTE, RTM_NEWROUTE, NLMSG_DONE, NLMSG_ERROR = 26, 24, 3, 2
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
RTPROT_OSPF, RT_TABLE_MAIN = 188, 254


def mib(n):
    return n / (1 << 20)


def rss_of_maps(pid):
    """Bytes of pid's RSS in mappings of BPF maps (mmapable arrays): the
    same pages as the map memory, counted in VmRSS too."""
    n, in_map = 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                in_map = "bpf-map" in line
            elif in_map and head == "Rss:":
                n += int(line.split()[1]) * 1024
    return n


def ksoftirqd_pids(cpu=None):
    """ksoftirqd of cpu (the generator's, when pinned), else of all."""
    want = "ksoftirqd/" if cpu is None else f"ksoftirqd/{cpu}\n"
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().startswith(want):
                        out.append(int(d))
            except OSError:
                pass
    return out


def cpu_seconds(pids):
    """utime + stime of pids, in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    n = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                v = f.read().rsplit(")", 1)[1].split()
            n += int(v[11]) + int(v[12])
        except OSError:
            pass
    return n / tick


def meminfo():
    """{field: bytes} of /proc/meminfo."""
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            out[k] = int(v.split()[0]) * 1024
    return out


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


class Chain:
    """gen -- r1 -- ... -- rN -- sink (tests/lib/topo.py), OSPF, zebra
    with the plugin and fpmd on every router; its measurements."""

    def __init__(self, n, args):
        self.n = n
        self.args = args
        self.permanent = args.neighbors == "permanent"
        self.topo = None
        self.routers = []
        self.res = {}  # router name -> {measurement: value}
        self.counters = {}
        self.sink = None
        self.runs = []
        self.t_frr_start = None
        self.error = None  # why the measurement stopped short
        self.host = {}  # the whole machine: what the lab took

    # ---- topology and daemons ---------------------------------------------

    def build(self):
        names = [f"r{i}" for i in range(1, self.n + 1)]
        nodes = [Host("gen")] + [Router(r, frr={"ospfd": ospf()})
                                 for r in names] + [Host("sink")]
        path = ["gen"] + names + ["sink"]
        links = [Link(a, b) for a, b in zip(path, path[1:])]
        # Addresses and links only; fpmd and FRR are started (and timed)
        # below. Topology sets GRO on at every veth end, which lets r1
        # receive the generator's XDP_TX frames with fpmd stopped.
        self.topo = Topology(nodes, links, start=False)
        t = self.topo
        self.routers = t.routers
        self.res = {x.name: {} for x in self.routers}
        rn, sink = t[names[-1]], t["sink"]
        self.src = t["gen"].iface_to("r1").ip
        self.dst = sink.iface_to(rn.name).ip
        self.r1_mac = t["r1"].ns.mac(t["r1"].iface_to("gen").name)
        rn.run(f"ip neigh replace {self.dst} lladdr "
               f"{sink.ns.mac(sink.iface_to(rn.name).name)} nud permanent "
               f"dev {rn.iface_to('sink').name}")
        self.resolve_neighbors()
        for x in self.routers:
            self.counters[x.name] = RouteCounter(x.ns.name)
        self.ingress = {x.name: x.iface_to(p).name
                        for x, p in zip(self.routers, path)}

    def resolve_neighbors(self):
        """Every link neighbor resolved on both ends. Learned (the
        default): one ping each way, and the kernel's ARP from then on;
        with more than gc_thresh1 (128) entries on the machine -- a lab of
        30 routers has that many in all its namespaces -- the kernel
        deletes an entry unused for gc_stale_time (60 s), which before
        fpmd told the kernel of the entries XDP uses (fpmd(8) NEIGHBORS)
        took the fpmds' routes to unresolved (doc/lab-scale.md).
        --neighbors permanent: permanent entries instead, as then. Done at
        the build and again once OSPF is up (zebra rewrites the entries
        as learned ones, REACHABLE, proto zebra)."""
        for a, b in zip(self.routers, self.routers[1:]):
            for x, y in ((a, b), (b, a)):
                i = x.iface_to(y.name)
                if self.permanent:
                    x.run(f"ip neigh replace {i.peer_ip} lladdr "
                          f"{y.ns.mac(i.peer_if)} nud permanent "
                          f"dev {i.name}")
                else:
                    x.run(f"ping -c1 -W1 -I {i.name} {i.peer_ip} "
                          f">/dev/null", check=False)

    def start_fpmds(self):
        """On every router at once; returns once each has started."""
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            for f in [ex.submit(self.topo.start_fpmd, x.name)
                      for x in self.routers]:
                f.result()

    def stop_fpmds(self):
        """SIGTERM: each fpmd detaches XDP and unpins (the kernel forwards)."""
        self.topo.stop_fpmd_all()

    # ---- measurements -----------------------------------------------------

    def forwarding_ospf(self, x):
        """OSPF routes fpmd has in the maps and forwards. With learned
        neighbors, "unresolved" counts too: the one-way flow never uses a
        router's upstream neighbor and OSPF's hellos are multicast, so the
        kernel collects that entry after gc_stale_time as it does under
        its own forwarding (with more than gc_thresh1 entries on the
        machine), and the first packet that way resolves it again (the
        kernel path: XDP passes it). The flow's own path is checked by
        the traffic runs (XDP forwarded, no loss)."""
        ok = ("forwarding",) if self.permanent else ("forwarding",
                                                     "unresolved")
        n = 0
        for entries in x.fpmd.show("routes").values():
            for e in entries:
                if e.get("protocol") == "ospf" and e.get("selected") and \
                        e.get("state") in ok:
                    n += 1
        return n

    def wait_programmed(self, t0, key, timeout, kernel=True):
        """Per router: seconds from t0 until the kernel has every OSPF
        route (res["converge"]) and fpmd forwards them all (res[key])."""
        want = 2 * self.n - 2
        todo_k = {x.name for x in self.routers} if kernel else set()
        todo_f = {x.name for x in self.routers}
        deadline = t0 + timeout
        while todo_k or todo_f:
            for x in self.routers:
                if x.name in todo_k and \
                        self.counters[x.name].ospf_routes() >= want:
                    self.res[x.name]["converge"] = time.time() - t0
                    todo_k.discard(x.name)
            for x in self.routers:
                if x.name in todo_f and x.name not in todo_k and \
                        self.forwarding_ospf(x) >= want:
                    self.res[x.name][key] = time.time() - t0
                    todo_f.discard(x.name)
            if (todo_k or todo_f) and time.time() > deadline:
                late = [x for x in self.routers
                        if x.name in todo_k | todo_f]
                raise RuntimeError(
                    f"N={self.n}: after {timeout} s, routers lack routes "
                    f"({want} OSPF routes wanted):\n" +
                    "\n".join(self.why_not(x) for x in late))
            time.sleep(0.05)

    def why_not(self, x):
        """One line: what a router that is not programmed has."""
        states = collections.Counter()
        try:
            for entries in x.fpmd.show("routes").values():
                for e in entries:
                    if e.get("protocol") == "ospf":
                        states[(e.get("state"), bool(e.get("selected")))] += 1
            p = x.fpmd.show("plugin")
            plugin = {k: p.get(k) for k in ("connected", "connections",
                                            "replayState", "lastError")}
        except Exception as e:  # noqa: BLE001 - diagnostics only
            plugin = f"fpmctl failed: {e}"
        return (f"  {x.name}: kernel {self.counters[x.name].ospf_routes()} "
                f"OSPF routes; fpmd OSPF routes by (state, selected) "
                f"{dict(states)}; plugin {plugin}")

    def memory(self):
        m = meminfo()
        self.host = {
            "available_drop": self.mem0["MemAvailable"] - m["MemAvailable"],
            "vmalloc_growth": m["VmallocUsed"] - self.mem0["VmallocUsed"]}
        for x in self.routers:
            r, pid = self.res[x.name], x.fpmd.proc.pid
            r["map_bytes"], r["maps"] = procmem.map_memory(pid)
            r["fpmd_rss"] = procmem.rss_bytes(pid)
            r["fpmd_rss_maps"] = rss_of_maps(pid)
            r["zebra_rss"] = procmem.rss_bytes(x.frr.pid("zebra"))
            r["ospfd_rss"] = procmem.rss_bytes(x.frr.pid("ospfd"))

    def kernel_fwd(self, x):
        """Ip:ForwDatagrams, read in the router's namespace (no process)."""
        with in_netns(x.ns.name):
            with open("/proc/self/net/snmp") as f:
                lines = f.read().splitlines()
        for i in range(0, len(lines) - 1, 2):
            k, v = lines[i].split(), lines[i + 1].split()
            if k[0] == "Ip:":
                return int(v[k.index("ForwDatagrams")])
        raise KeyError("ForwDatagrams")

    def fpmd_fwd(self, x):
        """fpmd's forwarded counter on the router's upstream interface."""
        return x.fpmd.counters().get(self.ingress[x.name], {}).get(
            "forwarded", 0)

    def run_traffic(self, mode):
        r = self.routers
        k0 = [self.kernel_fwd(x) for x in r]
        f0 = [self.fpmd_fwd(x) for x in r] if mode == "fpmd" else None
        s0 = self.sink.ask()["sink-eth0"]
        soft = ksoftirqd_pids(self.args.cpu)
        c0 = cpu_seconds(soft)
        cmd = [TRAFFICGEN, "send", "--netns", self.topo["gen"].ns.name,
               "--dev", "gen-eth0", "--dmac", self.r1_mac, "--src",
               self.src, "--dst", self.dst, "--seconds",
               str(self.args.seconds)]
        p = run(cmd, check=False, timeout=self.args.seconds + 60,
                cpu=self.args.cpu)
        if p.returncode:
            raise RuntimeError(f"trafficgen: {p.stderr}")
        g = json.loads(p.stdout)
        time.sleep(0.2)  # frames still in the veth rings / ksoftirqd
        delivered = self.sink.ask()["sink-eth0"] - s0
        # Softirq work the generator's loop left to ksoftirqd (its budget
        # ran out) is CPU time of the chain too.
        deferred = cpu_seconds(soft) - c0
        kf = [self.kernel_fwd(x) - a for x, a in zip(r, k0)]
        res = {"mode": mode, "sent": g["sent"], "seconds": g["seconds"],
               "delivered": delivered,
               "mpps": delivered / g["seconds"] / 1e6,
               "mpps_core": delivered / (g["loop_seconds"] + deferred)
               / 1e6,
               "loop_seconds": g["loop_seconds"], "ksoftirqd": deferred,
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
                res["flag"] = ("kernel forwarded less than delivered on "
                               f"{short}")
        if not delivered:
            res["flag"] = "nothing delivered"
        self.runs.append(res)
        log(f"  N={self.n} {mode:6}: {res['mpps_core']:.3f} Mpps per "
            f"core, {res['mpps']:.3f} by the clock, loss "
            f"{res['loss'] * 100:.1f}%" +
            (f"  !! {res['flag']}" if res.get("flag") else ""))
        return res

    # ---- the whole measurement -------------------------------------------

    def run(self):
        self.mem0 = meminfo()
        t_build = time.time()
        self.build()
        log(f"N={self.n}: {len(self.topo.nodes)} namespaces linked "
            f"({time.time() - t_build:.1f} s)")
        self.sink = Child("sink", [TRAFFICGEN, "sink", "--netns",
                                   self.topo["sink"].ns.name, "sink-eth0"],
                          os.path.join(self.topo.tmp, "sink.log"),
                          lines=True)
        # fpmd first: each plugin then connects at once, no retry wait.
        self.start_fpmds()
        log(f"N={self.n}: fpmd up on every router; starting FRR")
        t0 = time.time()
        self.topo.start_frr()
        self.t_frr_start = time.time() - t0
        self.wait_programmed(t0, "programmed", self.args.timeout)
        self.resolve_neighbors()
        self.memory()
        log(f"N={self.n}: FRR started in {self.t_frr_start:.2f} s, "
            "converged in "
            f"{max(v['converge'] for v in self.res.values()):.2f} s, "
            "programmed in "
            f"{max(v['programmed'] for v in self.res.values()):.2f} s")
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
        self.start_fpmds()
        self.wait_programmed(t0, "restart", self.args.timeout, kernel=False)

    def fpmd_log_tail(self, n=1500):
        x = self.routers[0] if self.routers else None
        return x.fpmd.logtext()[-n:] if x and x.fpmd else ""

    def cleanup(self):
        if self.sink:
            keep_going(self.sink.stop)
        for c in self.counters.values():
            c.close()
        if self.topo:
            if self.args.keep_logs:
                keep_going(shutil.copytree, self.topo.tmp, os.path.join(
                    self.args.keep_logs, self.topo.prefix),
                    ignore=shutil.ignore_patterns("*.sock"))
            self.topo.cleanup()


# --------------------------------------------------------------------------
# Report

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f2(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def chain_summary(c):
    r = list(c.res.values())
    runs = {m: [x for x in c.runs if x["mode"] == m]
            for m in ("fpmd", "kernel")}
    fp = median(x["mpps_core"] for x in runs["fpmd"])
    kn = median(x["mpps_core"] for x in runs["kernel"])
    fpw = median(x["mpps"] for x in runs["fpmd"])
    knw = median(x["mpps"] for x in runs["kernel"])
    return {
        "n": c.n,
        "map_bytes": sum(x.get("map_bytes", 0) for x in r),
        "maps": sum(x.get("maps", 0) for x in r),
        "fpmd_rss": sum(x.get("fpmd_rss", 0) for x in r),
        "fpmd_rss_maps": sum(x.get("fpmd_rss_maps", 0) for x in r),
        "zebra_rss": sum(x.get("zebra_rss", 0) for x in r),
        "ospfd_rss": sum(x.get("ospfd_rss", 0) for x in r),
        "converge": max((x.get("converge", 0) for x in r), default=0),
        "programmed": max((x.get("programmed", 0) for x in r),
                          default=0),
        "restart": max((x["restart"] for x in r if "restart" in x),
                       default=None),
        "fpmd_mpps": fp, "kernel_mpps": kn,
        "fpmd_mpps_clock": fpw, "kernel_mpps_clock": knw,
        "fpmd_loss": median(x["loss"] for x in runs["fpmd"]),
        "kernel_loss": median(x["loss"] for x in runs["kernel"]),
        "runs": len(runs["fpmd"]), "flagged": sum(1 for x in c.runs
                                                  if x.get("flag")),
        "seconds": c.seconds, "frr_start": c.t_frr_start, "error": c.error,
        "host_drop": c.host.get("available_drop"),
        "vmalloc": c.host.get("vmalloc_growth"),
    }


def print_chain(c):
    s = chain_summary(c)
    print(f"\n### N = {c.n} routers (chain, OSPF, {2 * c.n - 2} OSPF routes "
          f"per router; {s['seconds']:.0f} s for this N; FRR started on "
          f"every router in {f2(s['frr_start'])} s)\n")
    if c.error:
        print(f"**Stopped short**: {c.error}\n")
    if s["host_drop"] is not None:
        print(f"The machine, programmed against before the build: "
              f"MemAvailable down {mib(s['host_drop']):.0f} MiB, "
              f"VmallocUsed up {mib(s['vmalloc']):.0f} MiB (other processes "
              "of the machine move these too).\n")
    print("| router | map MiB | maps | fpmd RSS MiB | of it map mmaps MiB | "
          "zebra RSS MiB | ospfd RSS MiB | converge s | programmed s | "
          "restart s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, v in c.res.items():
        print(f"| {name} | {f2(mib(v.get('map_bytes', 0)), '{:.1f}')} | "
              f"{v.get('maps', 0)} | "
              f"{f2(mib(v.get('fpmd_rss', 0)), '{:.1f}')} | "
              f"{f2(mib(v.get('fpmd_rss_maps', 0)), '{:.1f}')} | "
              f"{f2(mib(v.get('zebra_rss', 0)), '{:.1f}')} | "
              f"{f2(mib(v.get('ospfd_rss', 0)), '{:.1f}')} | "
              f"{f2(v.get('converge'))} | {f2(v.get('programmed'))} | "
              f"{f2(v.get('restart'))} |")
    print(f"| **total** | **{mib(s['map_bytes']):.1f}** | **{s['maps']}** | "
          f"**{mib(s['fpmd_rss']):.1f}** | "
          f"**{mib(s['fpmd_rss_maps']):.1f}** | "
          f"**{mib(s['zebra_rss']):.1f}** | "
          f"**{mib(s['ospfd_rss']):.1f}** | **{s['converge']:.2f}** | "
          f"**{s['programmed']:.2f}** | **{f2(s['restart'])}** |")
    if c.runs:
        print(f"\nOne UDP flow gen -> r1 -> ... -> r{c.n} -> sink, in run "
              "order. Mpps per core: delivered / CPU time of the chain: the "
              "generator's loop time (the kernel's BPF_PROG_TEST_RUN timer, "
              "which stops while the generator is preempted; the hops run "
              "inline in its softirq) plus the CPU time ksoftirqd took "
              "meanwhile (softirq work left over); by the clock: delivered "
              "/ wall time of the run.")
        print()
        print("| run | forwarding | Mpps per core | Mpps by the clock | "
              "loop s | ksoftirqd s | loss | check |")
        print("|---:|---|---:|---:|---:|---:|---:|---|")
        for i, r in enumerate(c.runs, 1):
            print(f"| {i} | {r['mode']} | {r['mpps_core']:.3f} | "
                  f"{r['mpps']:.3f} | {r['loop_seconds']:.2f} | "
                  f"{r['ksoftirqd']:.2f} | {r['loss'] * 100:.1f}% | "
                  f"{r.get('flag', 'ok')} |")
        if s["fpmd_mpps"] and s["kernel_mpps"]:
            print(f"\nmedians per core: fpmd {s['fpmd_mpps']:.3f} Mpps, "
                  f"kernel {s['kernel_mpps']:.3f} Mpps, fpmd/kernel "
                  f"{s['fpmd_mpps'] / s['kernel_mpps']:.2f}; by the clock: "
                  f"fpmd {s['fpmd_mpps_clock']:.3f}, kernel "
                  f"{s['kernel_mpps_clock']:.3f}, fpmd/kernel "
                  f"{s['fpmd_mpps_clock'] / s['kernel_mpps_clock']:.2f}")


def hop(mpps, n):
    return 1000 / (mpps * n) if mpps else None


def print_totals(chains):
    print("\n### Totals\n")
    print("Sums over the routers; times: the slowest router; Mpps: medians "
          "per core (\"by the clock\": the ratio of the medians by the "
          "clock); ns/hop: 1000 / (Mpps per core x routers), the cost of "
          "one router's hop, the generator's and the sink's share "
          "included.\n")
    print("| routers | map MiB | maps | fpmd RSS MiB | of it map mmaps MiB | "
          "zebra RSS MiB | ospfd RSS MiB | MemAvailable drop MiB | "
          "FRR start s | converge s | programmed s | "
          "restart s | fpmd Mpps | kernel Mpps | fpmd/kernel | "
          "by the clock | fpmd ns/hop | kernel ns/hop | time s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|---:|---:|---:|---:|---:|")
    for c in chains:
        s = chain_summary(c)
        ratio = (s["fpmd_mpps"] / s["kernel_mpps"]
                 if s["fpmd_mpps"] and s["kernel_mpps"] else None)
        clock = (s["fpmd_mpps_clock"] / s["kernel_mpps_clock"]
                 if s["fpmd_mpps_clock"] and s["kernel_mpps_clock"]
                 else None)
        flag = f" ({s['flagged']} flagged)" if s["flagged"] else ""
        print(f"| {s['n']} | {mib(s['map_bytes']):.1f} | {s['maps']} | "
              f"{mib(s['fpmd_rss']):.1f} | {mib(s['fpmd_rss_maps']):.1f} | "
              f"{mib(s['zebra_rss']):.1f} | "
              f"{mib(s['ospfd_rss']):.1f} | "
              f"{f2(s['host_drop'] and mib(s['host_drop']), '{:.0f}')} | "
              f"{f2(s['frr_start'])} | "
              f"{s['converge']:.2f} | "
              f"{s['programmed']:.2f} | {f2(s['restart'])} | "
              f"{f2(s['fpmd_mpps'], '{:.3f}')} | "
              f"{f2(s['kernel_mpps'], '{:.3f}')} | "
              f"{f2(ratio)}{flag} | {f2(clock)} | "
              f"{f2(hop(s['fpmd_mpps'], c.n), '{:.0f}')} | "
              f"{f2(hop(s['kernel_mpps'], c.n), '{:.0f}')} | "
              f"{s['seconds']:.0f}{' (failed)' if c.error else ''} |")


def loaded(d):
    """A measured chain as --json wrote it, for the report functions."""
    s = d["summary"]
    return types.SimpleNamespace(
        n=s["n"], res=d["routers"], runs=d["runs"], seconds=s["seconds"],
        t_frr_start=s.get("frr_start"), error=s.get("error"),
        host={"available_drop": s.get("host_drop"),
              "vmalloc_growth": s.get("vmalloc")})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--routers", default="5,10,20",
                    help="chain lengths, comma-separated (default 5,10,20)")
    ap.add_argument("--builddir", help="build directory (default "
                    "$FPMD_BUILDDIR, else build-rel): a release build")
    ap.add_argument("--seconds", type=float, default=2.0,
                    help="per traffic run (default 2)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="pairs of runs, fpmd and kernel (default 3: "
                    "fpmd, kernel, kernel, fpmd, fpmd, kernel)")
    ap.add_argument("--cpu", type=int, help="pin the generator to this CPU")
    ap.add_argument("--neighbors", choices=("learned", "permanent"),
                    default="learned",
                    help="link neighbors learned by ARP (default), or "
                    "permanent entries")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds to converge and program (default 120)")
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--keep-logs", metavar="DIR",
                    help="copy FRR's and fpmd's logs to DIR")
    ap.add_argument("--report", metavar="JSON",
                    help="no measurement: the tables again from a --json "
                    "file")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            chains = [loaded(d) for d in json.load(f)]
        for c in chains:
            print_chain(c)
        print_totals(chains)
        return 0
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

    t_all = time.time()
    done = []
    rc = 0
    for n in sizes:
        c = Chain(n, args)
        t0 = time.time()

        def failed(e, c=c):
            if isinstance(e, KeyboardInterrupt):
                c.error = "interrupted"
                return
            c.error = str(e).splitlines()[0]
            log("r1 fpmd log tail:\n" + c.fpmd_log_tail())
        rc = guarded(c.run, c.cleanup, f"N={n}", failed)
        c.seconds = time.time() - t0
        if any(c.res.values()):
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
                        "routers": c.res,
                        "runs": c.runs} for c in done], f, indent=1)
    print(f"\ntotal {time.time() - t_all:.0f} s; fpmd: {FPMD}; command: "
          f"{' '.join(sys.argv)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
