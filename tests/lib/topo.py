# SPDX-License-Identifier: GPL-2.0-or-later
"""Lab topologies described as data, built by one call, the way FRR's
topotests describe theirs: routers and hosts, links between them, and per
router the FRR daemons with their configuration and whether it runs fpmd.

    ring = [Router(f"r{i}", frr={"ospfd": ospf()}) for i in (1, 2, 3, 4)]
    with Topology(ring + [Host("h1"), Host("h2")],
                  [Link("h1", "r1"), Link("r1", "r2"), Link("r2", "r3"),
                   Link("r3", "r4", cost=20), Link("r4", "r1", cost=20),
                   Link("r3", "h2")]) as t:
        t.wait_ospf_full()
        t.wait_route(t.subnet("r3", "h2"))
        print(t.ping("h1", "h2"))

What one call builds (and cleanup() removes on every exit path, also when
the build fails half-way):
- a network namespace per node, named <unique prefix><node>;
- a veth pair per link, interfaces <node>-eth<n> numbered in link order
  unless named; each link has an IPv4 /24 and an IPv6 /64, generated
  (10.<1+i/256>.<i%256>.0/24, 2001:db8:<i+1>::/64 for the i-th link) or
  given; the first node of a link gets .1 / ::1, the second .2 / ::2;
- per router loopbacks 10.255.<k/256>.<k%256+1>/32 (its router id) and
  2001:db8:ffff::<k+1>/128 (k: its place in the node list), forwarding
  on, flows hashed over ECMP members by ports (fib_multipath_hash_policy
  1); per host a default route by its first link;
- tx checksum offload off and GRO on at every veth end: what a real NIC
  does anyway, and what lets a veth receive frames that XDP redirected
  into it when the receiving side has no XDP program of its own (a router
  whose fpmd is stopped, a host) -- doc/testing.md says why;
- per router fpmd (--netns, its own pin dir, sockets and log) fed by our
  zebra plugin (feed="plugin", the default) or by FPM (feed="fpm"), and
  FRR: zebra, then the daemons of Router.frr in order, each in the
  router's own pathspace (tests/lib/frr.py);
- bird on any node that has a bird configuration.

Configurations are text, or a function (topology, node) -> text called
once the addressing is known: ospf(), ospf6(), bgp() and bird_origin()
below generate the usual ones.

Helpers: wait_feed, wait_ospf_full, wait_bgp_established, wait_route
(zebra and fpmd on every router), xdp_forwarded / kernel_forwarded per
router and snapshot / since for all, start_fpmd / stop_fpmd, link_down /
link_up, ping / ping_stream between nodes. doc/testing.md has a guide.
"""
import concurrent.futures
import ipaddress
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from lib.frr import DAEMONS, PLUGIN, Frr, FrrError, stop_parallel
from lib.lab import FPMD, Fpmd, Lab, ping, ping_stream, sh, wait_for

BIRD = "/usr/sbin/bird"

Conf = Union[str, Callable[["Topology", "Node"], str], None]


def host_in(net, k):
    """The k-th address of net, with net's prefix length."""
    return ipaddress.ip_interface(f"{net[k]}/{net.prefixlen}")


# ---- the description --------------------------------------------------------

@dataclass
class Router:
    """A router: FRR (zebra always, then the daemons in frr, name ->
    config) and fpmd unless fpmd=False.

    feed: "plugin" (our zebra module, fpmd --no-fpm) or "fpm" (zebra -M
    dplane_fpm_nl, `fpm address 127.0.0.1`). start_fpmd: False builds the
    router with fpmd stopped (Topology.start_fpmd later). asn: the BGP AS
    that bgp() uses for this router and its peers. setup: shell commands
    run in the namespace once addressed (before any daemon starts).
    zebra_args: more arguments of zebra's."""
    name: str
    frr: dict = field(default_factory=dict)
    fpmd: bool = True
    feed: str = "plugin"
    start_fpmd: bool = True
    fpmd_args: tuple = ()
    zebra_args: tuple = ()
    asn: Optional[int] = None
    bird: Conf = None
    setup: tuple = ()
    sysctls: dict = field(default_factory=dict)


@dataclass
class Host:
    """An end host: addresses on its links, a default route by its first
    link (v4 and v6), setup commands, and optionally bird."""
    name: str
    asn: Optional[int] = None
    bird: Conf = None
    setup: tuple = ()
    sysctls: dict = field(default_factory=dict)


@dataclass
class Link:
    """A veth pair a -- b. aif/bif: interface names (default
    <node>-eth<n>); subnet/subnet6: the link's prefixes (default
    generated); cost: OSPF cost on both ends (ospf() uses it)."""
    a: str
    b: str
    aif: Optional[str] = None
    bif: Optional[str] = None
    subnet: Optional[str] = None
    subnet6: Optional[str] = None
    cost: Optional[int] = None


# ---- what was built ---------------------------------------------------------

@dataclass
class Iface:
    name: str
    node: "Node"
    peer: "Node"
    peer_if: str
    addr: ipaddress.IPv4Interface
    addr6: ipaddress.IPv6Interface
    link: Link

    @property
    def ip(self):
        return str(self.addr.ip)

    @property
    def ip6(self):
        return str(self.addr6.ip)

    @property
    def peer_ip(self):
        return self.peer.ifaces[self.peer_if].ip

    @property
    def peer_ip6(self):
        return self.peer.ifaces[self.peer_if].ip6


class Node:
    """A router or a host as built: ns (lab.Netns), ifaces {name: Iface}
    in link order, and for a router frr (tests/lib/frr.py Frr), fpmd
    (lab.Fpmd, None while stopped) and its own tmp dir and pin dir."""

    def __init__(self, topo, spec, index):
        self.topo, self.spec, self.name = topo, spec, spec.name
        self.is_router = isinstance(spec, Router)
        self.index = index
        self.ns = topo.add_ns(topo.prefix + spec.name)
        self.ifaces = {}
        self.frr = None
        self.fpmd = None
        self.bird = None
        # Fpmd (tests/lib/lab.py) takes its socket, log and pin paths from
        # these two, as from a Lab.
        self.tmp = os.path.join(topo.tmp, spec.name)
        os.mkdir(self.tmp)
        os.chmod(self.tmp, 0o755)
        self.pin = f"/sys/fs/bpf/{topo.prefix}{spec.name}"
        self.loopback = self.loopback6 = None
        if self.is_router:
            self.loopback = ipaddress.ip_interface(
                f"10.255.{index >> 8}.{(index & 255) + 1}/32")
            self.loopback6 = ipaddress.ip_interface(
                f"2001:db8:ffff::{index + 1:x}/128")

    @property
    def router_id(self):
        return str(self.loopback.ip) if self.loopback else \
            next(iter(self.ifaces.values())).ip

    @property
    def ip(self):
        """The node's address: its loopback (router) or first link's."""
        return self.router_id

    @property
    def ip6(self):
        """Its IPv6 loopback (router) or first link's address."""
        if self.loopback6:
            return str(self.loopback6.ip)
        return next(iter(self.ifaces.values())).ip6

    def iface_to(self, peer):
        """This node's interface on its (first) link to peer."""
        for i in self.ifaces.values():
            if i.peer.name == peer:
                return i
        raise KeyError(f"{self.name}: no link to {peer}")

    def run(self, cmd, **kw):
        return self.ns.run(cmd, **kw)

    def xdp_forwarded(self):
        """Packets fpmd's XDP program forwarded, summed over interfaces
        (0 while fpmd is stopped: its counters go with it)."""
        if not self.fpmd:
            return 0
        return sum(c.get("forwarded", 0)
                   for c in self.fpmd.counters().values())

    def kernel_forwarded(self):
        """Ip:ForwDatagrams + Ip6OutForwDatagrams: what the kernel routed."""
        return (self.ns.snmp("Ip", "ForwDatagrams") +
                self.ns.snmp6("Ip6OutForwDatagrams"))

    def summary(self):
        return self.fpmd.show("summary")

    def __repr__(self):
        return f"<{self.name} {self.ns.name}>"


def tentative(ns):
    """ns's interfaces that have a carrier and an IPv6 address still in
    DAD (a link down keeps its address tentative: not waited for)."""
    up = set()
    for line in ns.run("ip -o link show up", check=False).stdout.splitlines():
        name, flags = line.split(": ")[1].split("@")[0], line.split("<")[1]
        if "LOWER_UP" in flags.split(">")[0].split(","):
            up.add(name)
    out = ns.run("ip -6 -o addr show tentative", check=False).stdout
    return sorted({ln.split()[1] for ln in out.splitlines()} & up)


class Topology(Lab):
    """The built topology; a context manager. nodes: {name: Node}, also
    reachable as t["r1"]. start=False: only namespaces, links and
    addresses; start() then starts fpmd, FRR and bird."""

    def __init__(self, nodes, links, start=True, receiver_gro=True,
                 release=None):
        """release: the FRR the routers run (tests/lib/frr.py Release;
        default the host's)."""
        self.release = release
        names = [n.name for n in nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"topology: duplicate node names in {names}")
        for ln in links:
            for end in (ln.a, ln.b):
                if end not in names:
                    raise ValueError(f"topology: link {ln.a}-{ln.b}: no "
                                     f"node {end}")
        for n in nodes:
            if isinstance(n, Router) and n.feed not in ("plugin", "fpm"):
                raise ValueError(f"topology: router {n.name}: feed "
                                 f"{n.feed!r} is neither plugin nor fpm")
        self.specs, self.links = list(nodes), list(links)
        self.nodes = {}
        self.frrs = []
        self.birds = []
        super().__init__(receiver_gro)    # _build(), cleanup() on failure
        if start:
            try:
                self.start()
            except BaseException:
                self.cleanup()
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    def __getitem__(self, name):
        return self.nodes[name]

    @property
    def routers(self):
        return [n for n in self.nodes.values() if n.is_router]

    @property
    def hosts(self):
        return [n for n in self.nodes.values() if not n.is_router]

    # ---- build --------------------------------------------------------------

    def _build(self, receiver_gro):
        k = 0
        for spec in self.specs:
            self.nodes[spec.name] = Node(self, spec, k)
            k += 1
        count = {n: 0 for n in self.nodes}
        for i, ln in enumerate(self.links):
            a, b = self.nodes[ln.a], self.nodes[ln.b]
            aif = ln.aif or f"{a.name}-eth{count[a.name]}"
            count[a.name] += 1
            bif = ln.bif or f"{b.name}-eth{count[b.name]}"
            count[b.name] += 1
            for ifname in (aif, bif):
                if len(ifname) > 15:     # IFNAMSIZ - 1
                    raise ValueError(f"topology: link {ln.a}-{ln.b}: "
                                     f"interface name {ifname} is longer "
                                     "than 15 characters")
            net = ipaddress.ip_network(
                ln.subnet or f"10.{1 + (i >> 8)}.{i & 255}.0/24")
            net6 = ipaddress.ip_network(
                ln.subnet6 or f"2001:db8:{i + 1:x}::/64")
            a.ifaces[aif] = Iface(aif, a, b, bif, host_in(net, 1),
                                  host_in(net6, 1), ln)
            b.ifaces[bif] = Iface(bif, b, a, aif, host_in(net, 2),
                                  host_in(net6, 2), ln)
            self.link(a.ns, aif, b.ns, bif)
        for n in self.nodes.values():
            self._address(n, receiver_gro)

    def _address(self, n, receiver_gro):
        cmds = []
        for i in n.ifaces.values():
            cmds += [f"ip addr add {i.addr} dev {i.name}",
                     f"ip -6 addr add {i.addr6} dev {i.name} nodad",
                     f"ethtool -K {i.name} tx off >/dev/null"]
            if receiver_gro:
                cmds.append(f"ethtool -K {i.name} gro on >/dev/null")
        sysctls = {}
        if n.is_router:
            cmds += [f"ip addr add {n.loopback} dev lo",
                     f"ip -6 addr add {n.loopback6} dev lo"]
            sysctls = {"net.ipv4.ip_forward": 1,
                       "net.ipv6.conf.all.forwarding": 1,
                       # flows, not host pairs, spread over ECMP members
                       "net.ipv4.fib_multipath_hash_policy": 1,
                       "net.ipv6.fib_multipath_hash_policy": 1}
        elif n.ifaces:
            first = next(iter(n.ifaces.values()))
            cmds += [f"ip route add default via {first.peer_ip}",
                     f"ip -6 route add default via {first.peer_ip6}"]
        sysctls.update(n.spec.sysctls)
        cmds += [f"sysctl -qw {k}={v}" for k, v in sysctls.items()]
        cmds += list(n.spec.setup)
        if cmds:
            n.run(" && ".join(cmds))

    def start(self):
        """fpmd on every router (in parallel), then FRR on every router,
        then bird; returns once every daemon runs (not converged: see the
        wait_* helpers)."""
        routers = self.routers
        self._parallel(lambda n: self.start_fpmd(n.name),
                       [n for n in routers if n.spec.fpmd and
                        n.spec.start_fpmd])
        self._parallel(self._start_frr, routers)
        for n in self.nodes.values():
            if n.spec.bird:
                self._start_bird(n)
        return self

    def start_frr(self, routers=None):
        """FRR alone on routers (default: all), in parallel: for a
        caller that starts fpmd first and times FRR from here
        (tests/bench_topo.py)."""
        return self._parallel(self._start_frr, self._routers(routers))

    @staticmethod
    def _parallel(fn, items):
        """fn over items in threads (each mostly waits for a process); the
        first error is raised once all have finished."""
        if not items:
            return []
        with concurrent.futures.ThreadPoolExecutor(min(8, len(items))) as ex:
            futs = [ex.submit(fn, x) for x in items]
            return [f.result() for f in futs]

    def _conf(self, conf, n):
        text = conf(self, n) if callable(conf) else (conf or "")
        return text.splitlines()

    def _start_frr(self, n):
        spec = n.spec
        confs = {d: self._conf(c, n) for d, c in spec.frr.items()}
        plugin = spec.fpmd and spec.feed == "plugin"
        f = FrrDaemons(self, n.ns, confs,
                       fpm=spec.fpmd and spec.feed == "fpm")
        n.frr = f
        extra = list(spec.zebra_args)
        if plugin:
            so = f.rel.plugin()
            if not os.path.exists(f.rel.host(so)):
                raise FileNotFoundError(
                    f"topology: router {n.name}: zebra plugin {so} not "
                    "built (configure --with-frr-source=DIR)")
            extra += ["-M", f"{so}:{os.path.join(n.tmp, 'plugin.sock')}"]
        # The link-locals' DAD over first: zebra tells every client of an
        # address that becomes valid, also a client it has accepted but
        # not yet sent the interface list it asked for, and that client
        # logs "INTERFACE_ADDRESS_ADD: Cannot find IF n" at error level
        # (bgpd did at setup once in a CI soak: FRR 8.4.4 lib/zclient.c,
        # zebra/redistribute.c). The address itself then comes with the
        # list; a router booting has its links up long before FRR.
        wait_for(lambda: not tentative(n.ns), timeout=10,
                 what=f"{n.name}: IPv6 DAD over on its links that are up")
        f.start_zebra(extra=extra)
        for d in f.daemons:
            if d not in ("mgmtd", "zebra"):
                f.start(d)
        return f

    def _start_bird(self, n):
        conf = os.path.join(n.tmp, "bird.conf")
        with open(conf, "w") as fh:
            fh.write("\n".join(self._conf(n.spec.bird, n)) + "\n")
        # bird -p parses and exits: a bad config is refused here, by
        # name, not noticed later as routes that never come.
        r = sh(f"{BIRD} -p -c {conf}", check=False)
        if r.returncode != 0:
            raise RuntimeError(f"topology: {n.name}: bird exited "
                               f"({r.returncode}): {r.stdout}{r.stderr}")
        log = os.path.join(self.tmp, f"{n.name}-bird.log")
        ctl = os.path.join(n.tmp, "bird.ctl")
        n.bird = n.ns.popen(f"exec {BIRD} -f -c {conf} -s {ctl} "
                            f"-P {os.path.join(n.tmp, 'bird.pid')} "
                            f">{log} 2>&1")
        self.birds.append(n.bird)

        def up():
            if n.bird.poll() is not None:
                with open(log) as fh:
                    raise RuntimeError(f"topology: {n.name}: bird exited "
                                       f"({n.bird.returncode}): {fh.read()}")
            return "up and running" in sh(f"birdc -s {ctl} show status",
                                          check=False).stdout
        wait_for(up, timeout=30, what=f"{n.name}: bird running")

    # ---- fpmd ---------------------------------------------------------------

    def start_fpmd(self, name, wait=True, extra=()):
        """fpmd on router name, on all its interfaces (once zebra runs, the
        plugin reconnects within a second and replays everything)."""
        n = self.nodes[name]
        if n.fpmd and n.fpmd.proc.poll() is None:
            raise RuntimeError(f"topology: {name}: fpmd already running")
        args = list(n.spec.fpmd_args) + list(extra)
        if n.spec.feed == "plugin":
            args.append("--no-fpm")
        d = Fpmd(n, n.ns, list(n.ifaces), args)
        self.daemons.append(d)
        n.fpmd = d
        return d.wait_ready(timeout=30) if wait else d

    def stop_fpmd(self, name, sig=signal.SIGTERM):
        """SIGTERM: fpmd detaches XDP and unpins (the kernel forwards)."""
        n = self.nodes[name]
        rc = n.fpmd.stop(sig) if n.fpmd else None
        n.fpmd = None
        return rc

    def start_fpmd_all(self, routers=None):
        """fpmd on every router that has one (or on routers), in parallel,
        then until each has zebra's replay (wait_feed)."""
        rs = [n for n in self._routers(routers) if n.spec.fpmd]
        self._parallel(lambda n: self.start_fpmd(n.name), rs)
        self.wait_feed([n.name for n in rs])

    def stop_fpmd_all(self, routers=None):
        """Stop every running fpmd (or those of routers), in parallel."""
        rs = [n for n in self._routers(routers) if n.fpmd]
        self._parallel(lambda n: self.stop_fpmd(n.name), rs)

    def wait_feed(self, routers=None, timeout=30):
        """Until every running fpmd has zebra connected and its replay done
        (plugin: "complete", FPM: "settled")."""
        for n in self._routers(routers):
            if not n.fpmd:
                continue
            feed = n.spec.feed

            def done(n=n, feed=feed):
                s = n.fpmd.show(feed)
                return s.get("connected") and s.get("replayState") in (
                    "complete", "settled")
            wait_for(done, timeout=timeout, interval=0.1,
                     what=f"{n.name}: {feed} connected, replay done")

    # ---- FRR state ----------------------------------------------------------

    def _routers(self, names):
        if names is None:
            return self.routers
        return [self.nodes[x] for x in names]

    def wait_ospf_full(self, routers=None, timeout=30):
        """Until every router with ospfd (and ospf6d) has a Full adjacency
        with each router it has a link to that runs it too."""
        for daemon in ("ospfd", "ospf6d"):
            cmd = "show ip ospf neighbor" if daemon == "ospfd" else \
                "show ipv6 ospf6 neighbor"
            for n in self._routers(routers):
                if daemon not in n.spec.frr:
                    continue
                want = sum(1 for i in n.ifaces.values() if i.peer.is_router
                           and daemon in i.peer.spec.frr)

                def full(n=n, cmd=cmd, want=want):
                    nb = n.frr.json(cmd).get("neighbors", {})
                    # ospfd: {id: [nbr]}, ospf6d: [nbr]
                    es = nb if isinstance(nb, list) else [
                        e for v in nb.values()
                        for e in (v if isinstance(v, list) else [v])]
                    states = [e.get("nbrState", e.get("state", ""))
                              for e in es]
                    ok = sum(1 for s in states if s.startswith("Full"))
                    return ok >= want or None
                wait_for(full, timeout=timeout, interval=0.2,
                         what=f"{n.name}: {want} full {daemon} adjacencies")

    def wait_bgp_established(self, routers=None, timeout=60):
        """Until every BGP peer of every router with bgpd is Established."""
        for n in self._routers(routers):
            if "bgpd" not in n.spec.frr:
                continue

            def up(n=n):
                s = n.frr.json("show bgp summary")
                peers = {}
                for af in s.values():
                    if isinstance(af, dict):
                        peers.update(af.get("peers", {}))
                return bool(peers) and all(
                    p.get("state") == "Established"
                    for p in peers.values()) or None
            wait_for(up, timeout=timeout, interval=0.2,
                     what=f"{n.name}: BGP peers established")

    def wait_route(self, prefix, routers=None, timeout=30, via=None,
                   state="forwarding"):
        """Until zebra on every router has prefix selected and installed,
        and every running fpmd has it installed in state (None: any; a
        nexthop whose neighbor the kernel has not resolved yet is
        "unresolved" until the first packet). via: {router: ifname} the
        route must leave by."""
        v6 = ":" in prefix
        deadline = time.time() + timeout
        for n in self._routers(routers):
            def ok(n=n):
                e = n.frr.routes(v6).get(prefix, [])
                sel = [x for x in e if x.get("selected") and
                       x.get("installed")]
                if not sel:
                    return None
                if via and n.name in via:
                    # FRR 10 keeps "fib" on a nexthop whose link went
                    # down (the kernel dropped it): active ones only.
                    ifs = {h.get("interfaceName") for x in sel
                           for h in x.get("nexthops", [])
                           if h.get("fib") and h.get("active")}
                    if ifs != {via[n.name]}:
                        return None
                if n.fpmd:
                    f = n.fpmd.show("routes", prefix).get(prefix, [])
                    if not any(x.get("installed") and
                               state in (None, x.get("state")) for x in f):
                        return None
                return True
            how = f" via {via[n.name]}" if via and n.name in via else ""
            wait_for(ok, timeout=max(0.5, deadline - time.time()),
                     interval=0.1,
                     what=f"{n.name}: route {prefix} in zebra and fpmd{how}")

    def route_count(self, name):
        """(zebra's selected IPv4 routes, fpmd's IPv4 routes)."""
        n = self.nodes[name]
        z = n.frr.json("show ip route summary")
        zc = sum(r.get("fib", 0) for r in z.get("routes", []))
        return zc, n.fpmd.show("summary")["routesV4"] if n.fpmd else None

    # ---- counters -----------------------------------------------------------

    def snapshot(self):
        """{router: (XDP forwarded, kernel forwarded)} now, read on all
        routers at once (one after the other, under traffic, the first and
        the last read would be a few hundred packets apart)."""
        rs = self.routers
        vals = self._parallel(
            lambda n: (n.xdp_forwarded(), n.kernel_forwarded()), rs)
        return {n.name: v for n, v in zip(rs, vals)}

    def since(self, snap):
        """{router: (XDP forwarded, kernel forwarded)} since snap."""
        now = self.snapshot()
        return {r: (now[r][0] - snap[r][0], now[r][1] - snap[r][1])
                for r in now}

    # ---- links and traffic --------------------------------------------------

    def _iface(self, a, b):
        return self.nodes[a].iface_to(b)

    def link_down(self, a, b):
        """Break the link a -- b: a's end down takes b's carrier down too
        (veth), so both sides see it at once."""
        self.nodes[a].run(f"ip link set {self._iface(a, b).name} down")

    def link_up(self, a, b):
        self.nodes[a].run(f"ip link set {self._iface(a, b).name} up")

    def subnet(self, a, b, v6=False):
        i = self._iface(a, b)
        return str((i.addr6 if v6 else i.addr).network)

    def ping(self, src, dst, count=5, interval=0.2, v6=False):
        """Replies from dst (a node name or an address) to pings from src."""
        addr = dst if dst not in self.nodes else (
            self.nodes[dst].ip6 if v6 else self.nodes[dst].ip)
        return ping(self.nodes[src].ns, addr, count, interval, v6)

    def ping_stream(self, src, dst, count, v6=False):
        addr = dst if dst not in self.nodes else (
            self.nodes[dst].ip6 if v6 else self.nodes[dst].ip)
        return ping_stream(self.nodes[src].ns, addr, count, v6)

    # ---- diagnostics and cleanup --------------------------------------------

    def logs(self, tail=8000):
        """Every log this topology wrote (FRR, fpmd, bird), tails."""
        out = []
        for root, _, files in os.walk(self.tmp):
            for name in sorted(files):
                if name.endswith(".log"):
                    p = os.path.join(root, name)
                    with open(p, errors="replace") as fh:
                        rel = os.path.relpath(p, self.tmp)
                        out.append(f"---- {rel} ----\n{fh.read()[-tail:]}")
        return "\n".join(out)

    def cleanup(self):
        """Stop bird, FRR, then fpmd (each in parallel), then what Lab.cleanup
        removes (namespaces, temp dir), every router's pins and the FRR
        pathspace dirs. Safe to call twice."""
        try:
            for p in self.birds:
                if p.poll() is None:
                    p.terminate()
            # FRR before fpmd: zebra with dplane_fpm_nl can hang on exit
            # once its FPM peer is gone.
            left = stop_parallel([(f, d) for f in self.frrs
                                  for d in f.daemons])
            if left:
                print(f"FRR daemons needed SIGKILL: {left}")
            for d in self.daemons:
                if d.proc.poll() is None:
                    d.proc.send_signal(signal.SIGTERM)
            for p in self.birds:
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        finally:
            try:
                super().cleanup()    # waits for each fpmd, deletes the ns
            finally:
                for f in self.frrs:
                    f.remove()
                for n in self.nodes.values():
                    if os.path.isdir(n.pin):
                        shutil.rmtree(n.pin, ignore_errors=True)
                self.daemons, self.birds, self.frrs = [], [], []


class FrrDaemons(Frr):
    """tests/lib/frr.py's Frr with any daemons: zebra, then confs' daemons
    (ospfd, bgpd, staticd, ...) in order, each with its config lines."""

    def __init__(self, lab, ns, confs, fpm=False):
        super().__init__(lab, ns, fpm=fpm, zebra_conf=confs.get("zebra", ()))
        self.daemons = [d for d in self.rel.daemons if d != "staticd"] + \
            [d for d in confs if d != "zebra"]
        for d in self.daemons:
            if d in confs and d != "zebra":
                self._write_conf(d, [f"hostname {ns.name}"] + list(confs[d]))

    def stop(self, *daemons, timeout=15):
        stop_parallel([(self, d) for d in (daemons or self.daemons)], timeout)


# ---- configuration generators -----------------------------------------------

def ospf(area="0.0.0.0", hello=1, dead=3, extra=()):
    """ospfd for a router: every link and the loopback in area, fast
    timers (SPF and LSA throttle 0: a 4-router ring converges in ~1 s),
    point-to-point on links to routers (no DR election), links to hosts
    passive, Link.cost on both ends."""
    def gen(t, n):
        out = ["router ospf", f" ospf router-id {n.router_id}",
               " timers throttle spf 0 50 500",
               " timers throttle lsa all 0",
               " timers lsa min-arrival 0",
               f" network {n.loopback} area {area}"]
        for i in n.ifaces.values():
            out.append(f" network {i.addr.network} area {area}")
            if not i.peer.is_router:
                out.append(f" passive-interface {i.name}")
        out += [f" {x}" for x in extra]
        for i in n.ifaces.values():
            if not i.peer.is_router:
                continue
            out += [f"interface {i.name}",
                    " ip ospf network point-to-point",
                    f" ip ospf hello-interval {hello}",
                    f" ip ospf dead-interval {dead}"]
            if i.link.cost is not None:
                out.append(f" ip ospf cost {i.link.cost}")
        return "\n".join(out)
    return gen


def ospf6(area="0.0.0.0", hello=1, dead=3, extra=()):
    """ospf6d for a router, as ospf() for IPv6: every link and the
    loopback in area, fast timers, point-to-point links to routers, links
    to hosts passive. Nexthops are the neighbors' link-local addresses."""
    def gen(t, n):
        out = ["router ospf6", f" ospf6 router-id {n.router_id}",
               " timers throttle spf 0 50 500",
               " timers lsa min-arrival 0"]
        out += [f" {x}" for x in extra]
        # ospf6d, unlike ospfd, wants each block closed.
        out += ["exit", "interface lo", f" ipv6 ospf6 area {area}",
                " ipv6 ospf6 passive", "exit"]
        for i in n.ifaces.values():
            out += [f"interface {i.name}", f" ipv6 ospf6 area {area}"]
            if not i.peer.is_router:
                out += [" ipv6 ospf6 passive", "exit"]
                continue
            out += [" ipv6 ospf6 network point-to-point",
                    f" ipv6 ospf6 hello-interval {hello}",
                    f" ipv6 ospf6 dead-interval {dead}"]
            if i.link.cost is not None:
                out.append(f" ipv6 ospf6 cost {i.link.cost}")
            out.append("exit")
        return "\n".join(out)
    return gen


def bgp(networks=(), redistribute=("connected",), extra=()):
    """bgpd for a router with Router.asn: an eBGP (or iBGP) session with
    every neighbor across a link that has an asn (a router with bgpd, or
    a host with bird), no policy required, connect retry 1 s."""
    def gen(t, n):
        asn = n.spec.asn
        if asn is None:
            raise ValueError(f"topology: {n.name}: bgp() needs Router.asn")
        out = [f"router bgp {asn}", f" bgp router-id {n.router_id}",
               " no bgp ebgp-requires-policy",
               " no bgp network import-check"]
        peers = [i for i in n.ifaces.values() if i.peer.spec.asn]
        for i in peers:
            out += [f" neighbor {i.peer_ip} remote-as {i.peer.spec.asn}",
                    f" neighbor {i.peer_ip} timers connect 1",
                    f" neighbor {i.peer_ip} advertisement-interval 0"]
        out += [f" {x}" for x in extra]
        out.append(" address-family ipv4 unicast")
        out += [f"  redistribute {r}" for r in redistribute]
        out += [f"  network {p}" for p in networks]
        out.append(" exit-address-family")
        return "\n".join(out)
    return gen


def bird_origin(prefixes):
    """bird on a host with Host.asn: announces prefixes (an iterable of
    strings) over eBGP to every router across its links, next hop itself.
    The host answers for them if its setup says so (`ip route add local
    PREFIX dev lo`)."""
    def gen(t, n):
        out = [f"router id {n.router_id};", "protocol device {}",
               "protocol static origin {", " ipv4;"]
        out += [f" route {p} blackhole;" for p in prefixes]
        out.append("}")
        for k, i in enumerate(n.ifaces.values()):
            if not i.peer.spec.asn:
                continue
            out += [f"protocol bgp up{k} {{",
                    f" local {i.ip} as {n.spec.asn};",
                    f" neighbor {i.peer_ip} as {i.peer.spec.asn};",
                    " connect retry time 1;",
                    " ipv4 { import none; export all; next hop self; };",
                    "}"]
        return "\n".join(out)
    return gen


__all__ = ["Router", "Host", "Link", "Topology", "Node", "Iface",
           "FrrDaemons", "ospf", "ospf6", "bgp", "bird_origin", "PLUGIN",
           "FrrError", "DAEMONS", "sh", "FPMD"]
