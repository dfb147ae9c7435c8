# SPDX-License-Identifier: GPL-2.0-or-later
"""Into a container: kernel forwarding against fpmd's tc path.

Run by hand as root (not collected by pytest: no test_ name):

    /usr/bin/python3 tests/bench_peer.py            # 5 rounds: ~3 min
    /usr/bin/python3 tests/bench_peer.py --quick    # 3 short rounds: < 1 min
    FPMD_BUILDDIR=build-x /usr/bin/python3 tests/bench_peer.py --json x.json

Needs sockperf for the latency rows (Debian: apt-get install sockperf;
without it only the Mpps row is measured, and it says so).

Topology (namespaces of its own, named from the pid), two routers that
differ only in who forwards, so the runs can be interleaved:

    gen ──veth── rk  (kernel) Linux forwarding, no fpmd ──veth── container ck
        ──veth── rf  (fpmd-tc) fpmd --netns rf -i r-in -i r-c0 ──veth── cf

- gen: a lab-style host, its veths with tx checksumming off and GRO on
  (tests/lib's hosts). 10.K.0.2/24 on to-rK (K = 1 kernel, 2 fpmd).
- routers: r-in 10.K.0.1/24 (GRO on: a veth without XDP or GRO drops the
  generator's XDP_TX frames, and rk has no XDP), r-c0 10.K.2.1/24 towards
  the container; forwarding on, rp_filter off; permanent neighbors for
  gen and the container (no ARP during a run).
- containers, made the way container runtimes make them: a network
  namespace held by a process (`unshare --net sleep`), not registered
  under /run/netns, the veth moved in by pid; c0 10.K.2.2/24 with the
  runtime's defaults: no XDP, GRO off, tx checksumming on (so fpmd must
  not redirect into it from XDP, and must not attach XDP to r-c0).
- fpmd (on rf only): its routes fed over FPM as zebra sends connected
  routes (10.2.0.0/24 dev r-in, 10.2.2.0/24 dev r-c0); r-c0 is a PEER
  egress (its peer takes no XDP redirects) and a TC_ONLY ingress (its
  peer sends partial checksums): gen → container goes through XDP on r-in,
  handed off to fpmd's tc program, bpf_redirect_peer() into c0; container
  → gen through the tc program on r-c0, bpf_redirect() to r-in.

Measured, each test once per round on each router, in a shuffled order
per round (the machine is shared and noisy), medians over the rounds:

- Mpps: tests/trafficgen send, one UDP flow (60-byte frames, port 9) from
  gen to 10.K.2.2 for --seconds. In the container a socket is bound to
  port 9 and never read (its smallest receive buffer full at once): every
  datagram reaches the UDP layer and is dropped there, counted, with no
  ICMP port unreachable (whose route lookup per packet, before the rate
  limit, would cost the container more than the router's forwarding).
  Delivered = the container's Udp InDatagrams + RcvbufErrors + NoPorts
  (/proc/PID/net/snmp of the container's process): packets that reached
  its UDP layer, so what a backlog or a veth dropped does not count.
  Mpps = delivered / wall time of the generator; also per core:
  delivered / the CPU time of the generator's test-run loop, which runs
  the routers' and the container's receive inline (steadier on
  a shared machine, but work deferred to ksoftirqd on the other core is
  not in it; tests/bench_live.py).
- latency: `sockperf ping-pong --full-rtt` from gen to `sockperf server`
  in the container, UDP and TCP, for --latency-seconds: round-trip p50 and
  p99 in µs, as sockperf computes them. Client and servers are pinned to
  one CPU (--latency-cpus), so the whole round trip runs on one core, as
  the Mpps runs do: left to the scheduler on 2 shared CPUs, round trips
  jump between ~16 and ~50 µs from run to run whatever the router (~55
  µs with client and server on different CPUs: a cross-CPU wake-up).
- who forwarded: the router's kernel forwarding counter (Ip ForwDatagrams)
  and, on rf, fpmd's counters `forwarded-peer` (into the container) and
  `forwarded-tc` (out of it). A fpmd run whose packets the kernel
  forwarded (more than 1% of them), or where `forwarded-peer` is below 99%
  of what arrived, is INVALID: fpmd's fast path was not used, and the
  table says so.

Everything it creates (namespaces, container processes, fpmd, sockperf,
pins, temporary files) is removed on every exit path, Ctrl-C and SIGTERM
included; child processes are stopped through their own handles.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

from bench_live import FpmFeed, nsrun
from lib.fpmwire import RT_SCOPE_LINK, RTPROT_KERNEL, frame, route
from lib.runner import BenchBase, Child, guarded, log, read_text, run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.path.abspath(os.environ.get("FPMD_BUILDDIR",
                                          os.path.join(REPO, "build")))
FPMD = os.path.join(BUILDDIR, "fpmd", "fpmd")
FPMCTL = os.path.join(BUILDDIR, "fpmd", "fpmctl")
TRAFFICGEN = os.path.join(BUILDDIR, "tests", "trafficgen")

ROUTERS = ("kernel", "fpmd")
LABEL = {"kernel": "kernel", "fpmd": "fpmd-tc"}
SHORT = {"kernel": "k", "fpmd": "f"}
NET_OF = {"kernel": 1, "fpmd": 2}  # 10.N.x.x
FPM_PORT = 2620
SOCKPERF = shutil.which("sockperf") or "/usr/bin/sockperf"
PORT = {"udp": 11111, "tcp": 11112}
TESTS = ("mpps", "udp", "tcp")
# The generator's port (9) bound in the container and never read.
UDP_HOLDER = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
s.bind(("0.0.0.0", 9))
while True:
    time.sleep(3600)
"""


def udp_delivered(pid):
    """Datagrams that reached the UDP layer of pid's namespace."""
    with open(f"/proc/{pid}/net/snmp") as f:
        lines = f.read().splitlines()
    for i in range(0, len(lines) - 1, 2):
        k, v = lines[i].split(), lines[i + 1].split()
        if k[0] == "Udp:":
            return sum(int(v[k.index(n)]) for n in
                       ("InDatagrams", "RcvbufErrors", "NoPorts"))
    raise KeyError("Udp counters")


def listening(pid, proto, port):
    """Whether a socket in pid's namespace listens on port (UDP: bound)."""
    want = f":{port:04X}"
    with open(f"/proc/{pid}/net/{proto}") as f:
        for line in f.readlines()[1:]:
            c = line.split()
            # tcp: state 0A is LISTEN; udp: 07 (unconnected, bound)
            if c[1].endswith(want) and c[3] in ("0A", "07"):
                return True
    return False


def parse_sockperf(text):
    """sockperf ping-pong's summary: {"p50", "p99" (µs), "sent",
    "received"}; raises naming what is missing."""
    out = {}
    m = re.search(r"SentMessages=(\d+); ReceivedMessages=(\d+)", text)
    if m:
        out["sent"], out["received"] = int(m.group(1)), int(m.group(2))
    for name, pct in (("p50", "50.000"), ("p99", "99.000")):
        m = re.search(r"percentile " + re.escape(pct) + r" =\s+([\d.]+)",
                      text)
        if m:
            out[name] = float(m.group(1))
    missing = [k for k in ("p50", "p99", "sent", "received") if k not in out]
    if missing:
        raise RuntimeError(f"sockperf: no {', '.join(missing)} in its "
                           f"output:\n{text[-2000:]}")
    return out


class Bench(BenchBase):
    PREFIX = "fppeer"
    FPMCTL = FPMCTL

    # -- topology ----------------------------------------------------------
    def container(self, r):
        """A namespace held by a process, as a container runtime makes it
        (not in /run/netns); its pid."""
        c = Child(f"container-{SHORT[r]}", ["unshare", "--net", "sleep",
                                             "infinity"],
                  f"{self.tmp}/container-{SHORT[r]}.log", self.children)
        home = os.readlink("/proc/self/ns/net")
        deadline = time.time() + 10
        while True:
            try:
                if os.readlink(f"/proc/{c.pid}/ns/net") != home:
                    return c.pid
            except OSError:
                pass
            if not c.alive() or time.time() > deadline:
                raise RuntimeError(f"container-{SHORT[r]}: unshare did not "
                                   "make a namespace: " +
                                   read_text(c.logpath)[-500:])
            time.sleep(0.02)

    def cexec(self, pid, *cmd, check=True):
        return run(["nsenter", "-t", str(pid), "-n"] + list(cmd),
                   check=check)

    def cmac(self, pid, ifname):
        # nsenter keeps our /sys: ask rtnetlink.
        return json.loads(self.cexec(pid, "ip", "-j", "link", "show",
                                     ifname).stdout)[0]["address"]

    def setup(self):
        for short in ("gen", "rk", "rf"):
            name = f"{self.prefix}{short}"
            run(["ip", "netns", "add", name])
            self.ns[short] = name
            nsrun(name, "ip", "link", "set", "lo", "up")
        gen = self.ns["gen"]
        for r in ROUTERS:
            k, rns = NET_OF[r], self.ns["r" + SHORT[r]]
            gif = f"to-r{SHORT[r]}"
            cpid = self.container(r)
            run(["ip", "link", "add", gif, "netns", gen, "type", "veth",
                 "peer", "name", "r-in", "netns", rns])
            # The runtime's way: the pair made next to the router, the
            # container's end moved into the namespace by pid.
            nsrun(rns, "ip", "link", "add", "r-c0", "type", "veth", "peer",
                  "name", "c0", "netns", str(cpid))
            for key, v in (("net.ipv4.ip_forward", 1),
                           ("net.ipv4.conf.all.rp_filter", 0),
                           ("net.ipv4.conf.default.rp_filter", 0),
                           ("net.ipv4.conf.r-in.rp_filter", 0),
                           ("net.ipv4.conf.r-c0.rp_filter", 0)):
                nsrun(rns, "sysctl", "-qw", f"{key}={v}")
            nsrun(rns, "sh", "-c",
                  f"ip link set r-in up && ip link set r-c0 up && "
                  f"ip addr add 10.{k}.0.1/24 dev r-in && "
                  f"ip addr add 10.{k}.2.1/24 dev r-c0 && "
                  f"ethtool -K r-in gro on >/dev/null")
            # gen: a lab host (tests/lib): tx checksumming off, GRO on.
            nsrun(gen, "sh", "-c",
                  f"ip link set {gif} up && "
                  f"ethtool -K {gif} tx off gro on >/dev/null && "
                  f"ip addr add 10.{k}.0.2/24 dev {gif} && "
                  f"ip route add 10.{k}.2.0/24 via 10.{k}.0.1")
            # The container: runtime defaults (GRO off, tx checksumming on,
            # no XDP), said explicitly.
            self.cexec(cpid, "sh", "-c",
                       f"ip link set lo up && ip link set c0 up && "
                       f"ethtool -K c0 gro off tx on >/dev/null && "
                       f"ip addr add 10.{k}.2.2/24 dev c0 && "
                       f"ip route add default via 10.{k}.2.1")
            mac = {"r-in": nsrun(rns, "cat", "/sys/class/net/r-in/address"
                                 ).stdout.strip(),
                   "r-c0": nsrun(rns, "cat", "/sys/class/net/r-c0/address"
                                 ).stdout.strip(),
                   "gen": nsrun(gen, "cat", f"/sys/class/net/{gif}/address"
                                ).stdout.strip(),
                   "c0": self.cmac(cpid, "c0")}
            nsrun(rns, "sh", "-c",
                  f"ip neigh add 10.{k}.0.2 lladdr {mac['gen']} "
                  f"nud permanent dev r-in && "
                  f"ip neigh add 10.{k}.2.2 lladdr {mac['c0']} "
                  f"nud permanent dev r-c0")
            nsrun(gen, "ip", "neigh", "add", f"10.{k}.0.1", "lladdr",
                  mac["r-in"], "nud", "permanent", "dev", gif)
            self.cexec(cpid, "ip", "neigh", "add", f"10.{k}.2.1", "lladdr",
                       mac["r-c0"], "nud", "permanent", "dev", "c0")
            self.info[r] = {
                "ns": rns, "gen_if": gif, "cpid": cpid, "mac": mac,
                "ifindex": {i: int(nsrun(rns, "cat",
                                         f"/sys/class/net/{i}/ifindex"
                                         ).stdout) for i in ("r-in", "r-c0")},
                "src": f"10.{k}.0.2", "dst": f"10.{k}.2.2",
            }
        feats = self.cexec(self.info["fpmd"]["cpid"], "ethtool", "-k",
                           "c0").stdout
        log("container c0: " + ", ".join(
            ln.strip() for ln in feats.splitlines()
            if ln.startswith(("tx-checksumming:", "generic-receive-offload:",
                              "tcp-segmentation-offload:"))))

    def start_helpers(self):
        for r in ROUTERS:
            cpid = self.info[r]["cpid"]
            Child(f"udp9-{SHORT[r]}",
                  ["nsenter", "-t", str(cpid), "-n", sys.executable, "-c",
                   UDP_HOLDER], f"{self.tmp}/udp9-{SHORT[r]}.log",
                  self.children)
            deadline = time.time() + 10
            while not listening(cpid, "udp", 9):
                if time.time() > deadline:
                    raise RuntimeError(f"container-{SHORT[r]}: no socket on "
                                       "UDP port 9")
                time.sleep(0.05)
        if self.args.latency:
            for r in ROUTERS:
                i = self.info[r]
                for proto, port in PORT.items():
                    Child(f"sockperf-sr-{proto}-{SHORT[r]}",
                          ["nsenter", "-t", str(i["cpid"]), "-n", SOCKPERF,
                           "sr", "-i", i["dst"], "-p", str(port)] +
                          (["--tcp"] if proto == "tcp" else []),
                          f"{self.tmp}/sockperf-sr-{proto}-{SHORT[r]}.log",
                          self.children, cpu=self.args.latency_cpus[1])
                    deadline = time.time() + 10
                    while not listening(i["cpid"], proto, port):
                        if time.time() > deadline:
                            raise RuntimeError(
                                f"sockperf server ({proto}) in container-"
                                f"{SHORT[r]} does not listen on {port}")
                        time.sleep(0.05)
        # fpmd last: its guards see the containers as they are.
        self.sock = f"{self.tmp}/fpmd.sock"
        self.fpmd_log = f"{self.tmp}/fpmd.log"
        args = [FPMD, "--netns", self.ns["rf"], "-b", self.pin, "-s",
                self.sock, "--plugin-socket", f"{self.tmp}/plugin.sock",
                "--log", "file:" + self.fpmd_log, "-i", "r-in", "-i", "r-c0",
                "--fpm-port", str(FPM_PORT)] + self.args.fpmd_arg
        self.fpmd = Child("fpmd", args, f"{self.tmp}/fpmd.out")
        deadline = time.time() + 20
        while "started:" not in self.fpmd_text():
            if not self.fpmd.alive() or time.time() > deadline:
                raise RuntimeError("fpmd did not start:\n" +
                                   self.fpmd_text()[-3000:])
            time.sleep(0.05)
        # What zebra sends for connected routes.
        ifx = self.info["fpmd"]["ifindex"]
        self.feed = FpmFeed(self.ns["rf"], FPM_PORT)
        self.feed.s.sendall(b"".join(
            frame(route(p, seq=n + 1, oif=ifx[dev], proto=RTPROT_KERNEL,
                        scope=RT_SCOPE_LINK))
            for n, (p, dev) in enumerate((("10.2.0.0/24", "r-in"),
                                          ("10.2.2.0/24", "r-c0")))))
        deadline = time.time() + 30
        while True:
            s = self.fpmctl("show", "summary")
            if s.get("routesBySource", {}).get("fpm", 0) >= 2 and \
                    s.get("notProgrammed", 0) == 0:
                break
            if time.time() > deadline:
                raise RuntimeError(f"fpmd did not program its 2 FPM routes: "
                                   f"{s}")
            time.sleep(0.2)
        # The peer probes run with the guard interval: let them settle.
        time.sleep(self.args.settle)
        out = run([FPMCTL, "-s", self.sock, "show", "routes"], check=False)
        log("fpmd routes:\n" + out.stdout.rstrip())
        out = run([FPMCTL, "-s", self.sock, "show", "interfaces"],
                  check=False)
        log("fpmd interfaces:\n" + out.stdout.rstrip())

    # -- counters ----------------------------------------------------------
    def kernel_fwd(self, r):
        lines = nsrun(self.info[r]["ns"], "cat", "/proc/net/snmp"
                      ).stdout.splitlines()
        for i in range(0, len(lines) - 1, 2):
            k, v = lines[i].split(), lines[i + 1].split()
            if k[0] == "Ip:":
                return int(v[k.index("ForwDatagrams")])
        raise KeyError("Ip ForwDatagrams")

    def fpmd_counts(self):
        """fpmd's packets per reason, over all its interfaces."""
        out = {}
        for reasons in self.fpmctl("show", "counters").values():
            if not isinstance(reasons, dict):
                continue
            for reason, c in reasons.items():
                if isinstance(c, dict) and "packets" in c:
                    out[reason] = out.get(reason, 0) + c["packets"]
        return out

    def snapshot(self, r):
        return (self.kernel_fwd(r),
                self.fpmd_counts() if r == "fpmd" else {})

    def who(self, r, before, res, expect_peer, expect_tc=0):
        """Who forwarded, and the verdict on a fpmd run."""
        k0, f0 = before
        k1, f1 = self.snapshot(r)
        res["kernel_forwarded"] = k1 - k0
        if r != "fpmd":
            return
        diff = {k: v - f0.get(k, 0) for k, v in f1.items()
                if v - f0.get(k, 0)}
        res["fpmd"] = diff
        peer = diff.get("forwarded-peer", 0)
        tc = diff.get("forwarded-tc", 0)
        why = [res["invalid"]] if res.get("invalid") else []
        if res["kernel_forwarded"] > 0.01 * max(1, expect_peer + expect_tc):
            why.append(f"the kernel forwarded {res['kernel_forwarded']}")
        if peer < 0.99 * expect_peer:
            why.append(f"forwarded-peer {peer} of {expect_peer}")
        if tc < 0.99 * expect_tc:
            why.append(f"forwarded-tc {tc} of {expect_tc}")
        if why:
            top = sorted(diff.items(), key=lambda kv: -kv[1])[:4]
            res["invalid"] = "; ".join(why) + " (fpmd counted: " + \
                ", ".join(f"{k} {v}" for k, v in top) + ")"

    # -- one run -----------------------------------------------------------
    def run_mpps(self, r):
        i = self.info[r]
        before = self.snapshot(r)
        d0 = udp_delivered(i["cpid"])
        cmd = [TRAFFICGEN, "send", "--netns", self.ns["gen"], "--dev",
               i["gen_if"], "--dmac", i["mac"]["r-in"], "--src", i["src"],
               "--dst", i["dst"], "--seconds", str(self.args.seconds)]
        g = json.loads(run(cmd, timeout=self.args.seconds + 60,
                           cpu=self.args.cpu).stdout)
        time.sleep(0.05)  # frames still in a veth ring or a backlog
        delivered = udp_delivered(i["cpid"]) - d0
        res = {"router": r, "test": "mpps", "sent": g["sent"],
               "seconds": g["seconds"], "delivered": delivered,
               "mpps": delivered / g["seconds"] / 1e6,
               "mpps_core": delivered / g["loop_seconds"] / 1e6,
               "loss": 1 - delivered / g["sent"] if g["sent"] else 0}
        self.who(r, before, res, delivered)
        return res

    def run_latency(self, r, proto):
        i = self.info[r]
        before = self.snapshot(r)
        cmd = ["ip", "netns", "exec", self.ns["gen"], SOCKPERF, "pp", "-i",
               i["dst"], "-p", str(PORT[proto]), "-t",
               str(int(self.args.latency_seconds)), "--full-rtt"] + \
            (["--tcp"] if proto == "tcp" else [])
        res = {"router": r, "test": proto}
        try:
            out = run(cmd, timeout=self.args.latency_seconds + 10,
                      cpu=self.args.latency_cpus[0])
        except subprocess.TimeoutExpired:
            # A path that loses the packets (e.g. TCP checksums lost across
            # an XDP redirect) leaves sockperf waiting for its first answer.
            res["invalid"] = (f"sockperf {proto} got no answers in "
                              f"{self.args.latency_seconds + 10} s")
            self.who(r, before, res, 0)
            return res
        try:
            res.update(parse_sockperf(out.stdout + out.stderr))
        except RuntimeError:
            last = (out.stdout + out.stderr).strip().splitlines()[-1:]
            res["invalid"] = f"sockperf {proto}: " + "".join(last)
            self.who(r, before, res, 0)
            return res
        # Every message crosses the router twice; sockperf's warm-up
        # messages are not in its count, hence "at least".
        self.who(r, before, res, res["received"], res["received"])
        return res

    def run(self):
        self.setup()
        self.start_helpers()
        tests = ["mpps"] + (["udp", "tcp"] if self.args.latency else [])
        runs = [(r, t) for t in tests for r in self.args.routers]
        rng = random.Random(15)
        for rnd in range(self.args.rounds):
            order = runs[:]
            rng.shuffle(order)
            for r, t in order:
                res = self.run_mpps(r) if t == "mpps" else \
                    self.run_latency(r, t)
                res["round"] = rnd
                self.results.append(res)
                if t == "mpps":
                    what = (f"{res['mpps']:.3f} Mpps, loss "
                            f"{res['loss'] * 100:.1f}%")
                elif "p50" in res:
                    what = f"RTT p50 {res['p50']:.1f} µs p99 {res['p99']:.1f}"
                else:
                    what = "no answer"
                log(f"  round {rnd + 1}/{self.args.rounds} {LABEL[r]:7} "
                    f"{t:4}: {what}, kernel forwarded "
                    f"{res['kernel_forwarded']}" +
                    (f", fpmd {res['fpmd'].get('forwarded-peer', 0)} peer "
                     f"{res['fpmd'].get('forwarded-tc', 0)} tc"
                     if r == "fpmd" else "") +
                    (f"  !! INVALID: {res['invalid']}"
                     if res.get("invalid") else ""))
        return self.results



# --------------------------------------------------------------------------
# Report

ROWS = (("mpps", "mpps", "Mpps, 1 UDP flow (delivered / s)", "{:.2f}"),
        ("mpps", "mpps_core", "Mpps per core (/ generator loop time)",
         "{:.2f}"),
        ("udp", "p50", "UDP round trip p50, µs", "{:.1f}"),
        ("udp", "p99", "UDP round trip p99, µs", "{:.1f}"),
        ("tcp", "p50", "TCP round trip p50, µs", "{:.1f}"),
        ("tcp", "p99", "TCP round trip p99, µs", "{:.1f}"))


def report(results):
    rounds = max(r["round"] for r in results) + 1
    med = {}
    for test, key, _, _ in ROWS:
        for r in ROUTERS:
            vs = [x[key] for x in results if x["router"] == r and
                  x["test"] == test and key in x and not x.get("invalid")]
            if vs:
                med[(test, key, r)] = statistics.median(vs)
    # Ratios within a round: the two runs were close in time, so the
    # machine's load drifts less between them than across rounds.
    pair = {}
    for x in results:
        if not x.get("invalid"):
            pair.setdefault((x["round"], x["test"]), {})[x["router"]] = x
    ratio = {}
    for test, key, _, _ in ROWS:
        rs = [p["fpmd"][key] / p["kernel"][key] for (_, t), p in pair.items()
              if t == test and len(p) == 2 and key in p["fpmd"] and
              p["kernel"].get(key)]
        if rs:
            ratio[(test, key)] = statistics.median(rs)
    invalid = [x for x in results if x.get("invalid")]
    print()
    print(f"Into a runtime-style container (no XDP, GRO off, tx csum on), "
          f"medians of {rounds} interleaved rounds; kernel: Linux "
          "forwarding; fpmd-tc: fpmd, XDP on the uplink handing off to its "
          "tc program, bpf_redirect_peer() into the container (and "
          "bpf_redirect() out of it). fpmd-tc/kernel: ratio of the "
          "medians; per round: median of the ratios within each round.")
    print()
    print("| | kernel | fpmd-tc | fpmd-tc/kernel | same, per round |")
    print("|---|---:|---:|---:|---:|")
    for test, key, name, fmt in ROWS:
        k, f = med.get((test, key, "kernel")), med.get((test, key, "fpmd"))
        if k is None and f is None:
            continue
        cells = [fmt.format(v) if v is not None else "-" for v in (k, f)]
        for n, r in enumerate(ROUTERS):
            bad = sum(1 for x in invalid if x["router"] == r and
                      x["test"] == test)
            if bad:
                cells[n] += f" [{bad} INVALID]"
        cells.append(f"{f / k:.2f}" if k and f is not None else "-")
        rr = ratio.get((test, key))
        cells.append(f"{rr:.2f}" if rr is not None else "-")
        print(f"| {name} | {' | '.join(cells)} |")
    loss = {r: statistics.median(x["loss"] for x in results
                                 if x["router"] == r and x["test"] == "mpps")
            for r in ROUTERS if any(x["router"] == r and x["test"] == "mpps"
                                    for x in results)}
    if loss:
        print("\nloss (1 - delivered / sent), median: " + ", ".join(
            f"{LABEL[r]} {v * 100:.1f}%" for r, v in loss.items()))
    print()
    fr = [x for x in results if x["router"] == "fpmd"]
    kr = [x for x in results if x["router"] == "kernel"]
    if fr:
        peer = sum(x.get("fpmd", {}).get("forwarded-peer", 0) for x in fr)
        tc = sum(x.get("fpmd", {}).get("forwarded-tc", 0) for x in fr)
        kf = sum(x["kernel_forwarded"] for x in fr)
        got = sum(x["delivered"] for x in fr if x["test"] == "mpps")
        print(f"Who forwarded, fpmd-tc runs: forwarded-peer {peer}, "
              f"forwarded-tc {tc}, kernel ForwDatagrams +{kf}; "
              f"delivered in the Mpps runs {got}.")
    if kr:
        kd = sum(x["delivered"] for x in kr if x["test"] == "mpps")
        kf = sum(x["kernel_forwarded"] for x in kr if x["test"] == "mpps")
        print(f"Kernel runs: ForwDatagrams +{kf} for {kd} delivered in the "
              "Mpps runs.")
    if invalid:
        print(f"\nINVALID: {len(invalid)} runs (a fpmd-tc run that did not "
              "take fpmd's fast path measured something else; the medians "
              "above leave them out):")
        for x in invalid[:12]:
            print(f"  round {x['round'] + 1} {LABEL[x['router']]} "
                  f"{x['test']}: {x['invalid']}")
    elif fr:
        print("Valid: every fpmd-tc run was forwarded by fpmd (forwarded-peer"
              " >= 99% of what arrived, kernel ForwDatagrams flat).")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Topology and method: see the top of this file and "
        "doc/benchmarks.md. Latency needs sockperf (apt-get install "
        "sockperf).")
    ap.add_argument("--quick", action="store_true",
                    help="3 rounds of 1 s each (< 1 min): a smoke test")
    ap.add_argument("--rounds", type=int, help="rounds (default 5)")
    ap.add_argument("--seconds", type=float,
                    help="generator time per Mpps run (default 3)")
    ap.add_argument("--latency-seconds", type=int,
                    help="sockperf time per latency run (default 5)")
    ap.add_argument("--no-latency", dest="latency", action="store_false",
                    help="Mpps only (no sockperf)")
    ap.add_argument("--cpu", type=int, help="pin the generator to this CPU")
    last = max(os.sched_getaffinity(0))
    ap.add_argument("--latency-cpus", default=f"{last},{last}",
                    metavar="C,S",
                    help="pin sockperf's client to CPU C and its servers "
                    f"to CPU S (default {last},{last}: the whole round "
                    "trip on one core; \"none\": the scheduler places "
                    "them)")
    ap.add_argument("--routers", default=",".join(ROUTERS),
                    help="measure only these (comma-separated: kernel, "
                    "fpmd), e.g. one at a time under perf")
    ap.add_argument("--settle", type=float, default=3.0,
                    help="seconds for fpmd's peer probes after its routes "
                    "are in (default 3)")
    ap.add_argument("--fpmd-arg", action="append", default=[],
                    metavar="ARG", help="one more argument for fpmd "
                    "(repeatable)")
    ap.add_argument("--json", help="write the raw runs here")
    ap.add_argument("--replot", metavar="JSON",
                    help="no measurement: the table again from a --json "
                    "file")
    ap.add_argument("--keep-logs", metavar="DIR",
                    help="copy fpmd's and sockperf's logs to DIR")
    args = ap.parse_args()
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 3.0
    if args.latency_seconds is None:
        args.latency_seconds = 1 if args.quick else 5
    args.routers = [r for r in args.routers.split(",") if r]
    bad = [r for r in args.routers if r not in ROUTERS]
    if bad or not args.routers:
        ap.error(f"--routers: {','.join(bad) or 'none'}: not one of "
                 f"{', '.join(ROUTERS)}")
    if args.latency_cpus == "none":
        args.latency_cpus = (None, None)
    else:
        try:
            c, sv = (int(x) for x in args.latency_cpus.split(","))
        except ValueError:
            ap.error(f"--latency-cpus {args.latency_cpus}: want C,S (two "
                     "CPU numbers) or none")
        args.latency_cpus = (c, sv)
    if args.replot:
        with open(args.replot) as f:
            report(json.load(f))
        return 0
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, BPF)")
    for exe in (FPMD, FPMCTL, TRAFFICGEN):
        if not os.access(exe, os.X_OK):
            sys.exit(f"{exe} missing: build first (make, then make "
                     "tests/trafficgen), or set FPMD_BUILDDIR")
    if args.latency and not os.access(SOCKPERF, os.X_OK):
        log("sockperf missing (apt-get install sockperf): Mpps only")
        args.latency = False

    t0 = time.time()
    b = Bench(args)

    def failed(e):
        if not isinstance(e, KeyboardInterrupt) and b.fpmd:
            log("fpmd log tail:\n" + b.fpmd_text()[-2000:])
    rc = guarded(b.run, b.cleanup, failed=failed)
    if b.results:
        report(b.results)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(b.results, f, indent=1)
    print(f"\ntotal {time.time() - t0:.0f} s; fpmd: {FPMD}; command: "
          f"{' '.join(sys.argv)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
