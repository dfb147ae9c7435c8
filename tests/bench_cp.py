# SPDX-License-Identifier: GPL-2.0-or-later
"""Control-plane benchmark: IPv4 routes through real FRR zebra into fpmd.

Run by hand as root (not collected by pytest: no test_ name):

    /usr/bin/python3 tests/bench_cp.py            # 100k and 1M routes
    /usr/bin/python3 tests/bench_cp.py --quick    # 100k only
    /usr/bin/python3 tests/bench_cp.py 250000     # any counts
    /usr/bin/python3 tests/bench_cp.py --sink     # a plain FPM sink, no fpmd
    /usr/bin/python3 tests/bench_cp.py --perf     # perf profile of fpmd too
    /usr/bin/python3 tests/bench_cp.py --routes routes-real.txt  # a route file

For each route count it builds two namespaces of its own joined by a veth:
"bird" runs bird2 with N static routes (a deterministic BGP-like mix of
/8-/24) announced over eBGP, "router" runs FRR bgpd and zebra
(-M dplane_fpm_nl, fpm address 127.0.0.1) and fpmd on the veth (or, with
--sink, a small Python FPM server that only counts frames). Once bird has
loaded its routes and zebra's FPM connection is up and its replay has
settled, the BGP session is enabled in bird, and the benchmark follows
bgpd's received-prefix count (vtysh, once a second), the kernel FIB (an
rtnetlink listener in the router namespace counting main-table
RTM_NEWROUTE; /proc/net/fib_triestat checks the total at the end: it walks
the whole trie on every read, too dear to poll at 1M) and fpmd's
`fpmctl --json show fpm` counters, until all have N routes and nothing
moved for 3 s. Per count it prints a timeline, the CPU seconds each daemon
used, and one table row:

- BGP enabled -> kernel has all: bird -> bgpd -> zebra -> kernel, context;
- zebra FPM first->last: first to last FPM message of the BGP burst, as
  fpmd (or the sink) received them; fpmd's firstMessageNs is that of the
  connection (the connect-time replay), so the burst's first message is
  found by polling fpmd every 10 ms (the earliest time it can have come:
  the resulting rate is a lower bound);
- routes/s FPM->maps: routes fpmd holds from FPM / (its last map write -
  the burst's first FPM message);
- lag: fpmd's lastMapWriteNs - lastMessageNs (target <= 1 s at 1M);
- kernel has all -> last map write: the same lag seen from outside fpmd,
  against the kernel, which zebra programs before it sends FPM;
- fpmd VmHWM and the BPF map memory (bytes_memlock of every map pinned
  by fpmd and of those it holds unpinned: tbl24's parts) at the end, and
  the IPv4 routes counted in the maps themselves (rules_v4's used records
  for DIR-24-8, a key walk of routes_v4 for the LPM trie);
- fpmd's CPU use over 5 s after the load, when nothing changes.

Everything it creates (namespaces, daemons, FRR pathspace directories,
pins, temporary files) is removed on every exit path, Ctrl-C and SIGTERM
included. Daemons run in their own sessions and are stopped through their
own Popen handles, never by name (tests/lib/runner.py).
"""
import argparse
import ctypes
import errno
import json
import os
import random
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time

from lib import procmem, routefile  # noqa: E402
from lib.runner import (Child, guarded, keep_going, log,  # noqa: E402
                        read_text, run, stop_all)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.environ.get("FPMD_BUILDDIR", os.path.join(REPO, "build"))
FPMD = os.path.join(BUILDDIR, "fpmd", "fpmd")
FPMCTL = os.path.join(BUILDDIR, "fpmd", "fpmctl")
FRR = "/usr/lib/frr"
BIRD = "/usr/sbin/bird"
BIRDC = "/usr/sbin/birdc"
PY = "/usr/bin/python3"

BIRD_AS, FRR_AS = 65001, 65002
BIRD_IP, ROUTER_IP = "172.16.200.1", "172.16.200.2"
FPM_PORT = 2620

RTM_NEWROUTE, RTM_DELROUTE = 24, 25
RTM_NEWNEXTHOP, RTM_DELNEXTHOP = 104, 105


def now_ns():
    return time.time_ns()


def nsexec(ns, *cmd):
    return ["ip", "netns", "exec", ns] + list(cmd)


# --------------------------------------------------------------------------
# The FPM sink (runs as its own process inside the router namespace).

def sink_main(port, statsfile):
    """Accepts zebra's FPM connection, counts frames and netlink messages.

    Bursts: a frame arriving after more than 1 s of silence starts a new
    burst, so the connect-time replay and the BGP load are told apart.
    """
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(4)
    st = {"pid": os.getpid(), "connections": 0, "connected": False,
          "frames": 0, "bytes": 0, "route4New": 0, "route4Del": 0,
          "route6New": 0, "route6Del": 0, "nhNew": 0, "nhDel": 0,
          "otherMsgs": 0, "errors": 0, "firstNs": None, "lastNs": None,
          "bursts": []}
    last_write = [0]

    def write(force=False):
        t = time.monotonic()
        if not force and t - last_write[0] < 0.1:
            return
        last_write[0] = t
        tmp = statsfile + ".tmp"
        with open(tmp, "w") as f:
            json.dump(st, f)
        os.rename(tmp, statsfile)

    write(True)
    while True:
        conn, _ = srv.accept()
        conn.settimeout(0.1)
        st["connections"] += 1
        st["connected"] = True
        write(True)
        buf = bytearray()
        while True:
            try:
                data = conn.recv(1 << 20)
            except socket.timeout:
                write()
                continue
            except OSError:
                data = b""
            if not data:
                break
            t = now_ns()
            buf += data
            st["bytes"] += len(data)
            off, n = 0, len(buf)
            frames = 0
            nroutes = (st["route4New"] + st["route4Del"] + st["route6New"] +
                       st["route6Del"])
            while n - off >= 4:
                ver, typ, ln = struct.unpack_from("!BBH", buf, off)
                if ver != 1 or ln < 4:
                    st["errors"] += 1
                    off = n
                    break
                if n - off < ln:
                    break
                frames += 1
                p, end = off + 4, off + ln
                while end - p >= 16:
                    nlen, ntype = struct.unpack_from("=IH", buf, p)
                    if nlen < 16:
                        st["errors"] += 1
                        break
                    fam = buf[p + 16] if p + 16 < end else 0
                    if ntype == RTM_NEWROUTE:
                        st["route4New" if fam == 2 else "route6New"] += 1
                    elif ntype == RTM_DELROUTE:
                        st["route4Del" if fam == 2 else "route6Del"] += 1
                    elif ntype == RTM_NEWNEXTHOP:
                        st["nhNew"] += 1
                    elif ntype == RTM_DELNEXTHOP:
                        st["nhDel"] += 1
                    else:
                        st["otherMsgs"] += 1
                    p += (nlen + 3) & ~3
                off = end
            del buf[:off]
            nroutes = (st["route4New"] + st["route4Del"] + st["route6New"] +
                       st["route6Del"]) - nroutes
            if nroutes:
                # Bursts of route messages (nexthops alone do not start one).
                if (not st["bursts"] or
                        t - st["bursts"][-1]["lastNs"] > 1_000_000_000):
                    st["bursts"].append({"firstNs": t, "lastNs": t,
                                         "routeMessages": 0})
                b = st["bursts"][-1]
                b["lastNs"] = t
                b["routeMessages"] += nroutes
            if frames:
                if st["firstNs"] is None:
                    st["firstNs"] = t
                st["lastNs"] = t
                st["frames"] += frames
            write()
        conn.close()
        st["connected"] = False
        write(True)


# --------------------------------------------------------------------------
# The kernel FIB watcher (its own process in the router namespace).

def rtmon_main(n, statsfile):
    """Counts IPv4 main-table RTM_NEWROUTE notifications (RTNLGRP_IPV4_ROUTE).

    Records the first one and when the count reached n. Cheaper than
    reading /proc/net/fib_triestat, which walks the whole trie per read.
    """
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, 33, 256 << 20)  # SO_RCVBUFFORCE
    s.bind((0, 0x40))  # RTMGRP_IPV4_ROUTE
    s.settimeout(0.1)
    st = {"new": 0, "del": 0, "firstNs": None, "lastNs": None,
          "fullNs": None, "overruns": 0}
    last_write = 0

    def write():
        tmp = statsfile + ".tmp"
        with open(tmp, "w") as f:
            json.dump(st, f)
        os.rename(tmp, statsfile)
    write()
    while True:
        try:
            data = s.recv(1 << 16)
        except socket.timeout:
            data = None
        except OSError:  # ENOBUFS: notifications were lost
            st["overruns"] += 1
            data = None
        t = now_ns()
        p = 0
        while data and len(data) - p >= 28:
            nlen, ntype = struct.unpack_from("=IH", data, p)
            if nlen < 16:
                break
            if data[p + 20] == 254:  # rtm_table: main
                if ntype == RTM_NEWROUTE:
                    st["new"] += 1
                    if st["firstNs"] is None:
                        st["firstNs"] = t
                    st["lastNs"] = t
                    if st["new"] >= n and st["fullNs"] is None:
                        st["fullNs"] = t
                        write()
                elif ntype == RTM_DELROUTE:
                    st["del"] += 1
            p += (nlen + 3) & ~3
        if time.monotonic() - last_write > 0.1:
            last_write = time.monotonic()
            write()


# --------------------------------------------------------------------------
# BPF map helpers (bpf(2) through ctypes: count the entries of a pinned map).

_libc = ctypes.CDLL(None, use_errno=True)
_NR_bpf = 321  # x86_64
BPF_MAP_GET_NEXT_KEY, BPF_OBJ_GET, BPF_OBJ_GET_INFO_BY_FD = 4, 7, 15


def _bpf(cmd, attr):
    r = _libc.syscall(_NR_bpf, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


class _ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32)]


class _MapInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("id", ctypes.c_uint32),
                ("key_size", ctypes.c_uint32),
                ("value_size", ctypes.c_uint32),
                ("max_entries", ctypes.c_uint32),
                ("map_flags", ctypes.c_uint32),
                ("name", ctypes.c_char * 16), ("pad", ctypes.c_char * 64)]


class _InfoAttr(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32),
                ("info", ctypes.c_uint64)]


def open_pinned(path):
    """(fd, struct bpf_map_info) of a pinned map; the caller closes fd."""
    p = ctypes.create_string_buffer(path.encode())
    fd = _bpf(BPF_OBJ_GET, _ObjGet(ctypes.addressof(p), 0, 0))
    info = _MapInfo()
    try:
        _bpf(BPF_OBJ_GET_INFO_BY_FD,
             _InfoAttr(fd, ctypes.sizeof(info), ctypes.addressof(info)))
    except OSError:
        os.close(fd)
        raise
    return fd, info


def map_count(path):
    """Number of keys in a pinned BPF map (BPF_MAP_GET_NEXT_KEY walk)."""
    class NextKey(ctypes.Structure):
        _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                    ("key", ctypes.c_uint64), ("next_key", ctypes.c_uint64)]

    fd, info = open_pinned(path)
    try:
        a = ctypes.create_string_buffer(info.key_size)
        b = ctypes.create_string_buffer(info.key_size)
        attr = NextKey(fd, 0, 0, ctypes.addressof(a))
        size = ctypes.sizeof(attr)
        ref = ctypes.byref(attr)
        syscall = _libc.syscall
        n = 0
        while syscall(_NR_bpf, BPF_MAP_GET_NEXT_KEY, ref, size) == 0:
            n += 1
            attr.key = attr.next_key
            attr.next_key = ctypes.addressof(b if attr.key == ctypes.addressof(a)
                                             else a)
        if ctypes.get_errno() != 2:  # ENOENT ends the walk
            raise OSError(ctypes.get_errno(), "BPF_MAP_GET_NEXT_KEY")
        return n
    finally:
        os.close(fd)


def held_maps(pid):
    """{map id: memlock bytes} of every BPF map process pid holds an fd of."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-map":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # closed meanwhile
        out[int(info["map_id"])] = int(info["memlock"])
    return out


def fpmd_maps(pindir, pid):
    """[(name, bytes_memlock, max_entries, type)]: the maps pinned under
    pindir, plus those fpmd holds without pinning them (tbl24's parts,
    reachable only through the tbl24 map-in-map), summed as one row."""
    out, pinned = [], set()
    for root, _, files in os.walk(pindir):
        for f in sorted(files):
            path = os.path.join(root, f)
            r = run(["bpftool", "-j", "map", "show", "pinned", path], check=False)
            if r.returncode != 0:
                continue  # a pinned program or link
            m = json.loads(r.stdout)
            pinned.add(m.get("id"))
            out.append((os.path.relpath(path, pindir), m.get("bytes_memlock", 0),
                        m.get("max_entries", 0), m.get("type", "?")))
    rest = {i: b for i, b in held_maps(pid).items() if i not in pinned}
    if rest:
        out.append((f"tbl24 parts and other unpinned ({len(rest)} maps)",
                    sum(rest.values()), len(rest), "array"))
    return out


FPMD_RULE_F_USED = 0x1
RULE_V4_SIZE, RULE_V4_FLAGS = 16, 9  # struct fpmd_rule_v4, its flags


class _Lookup(ctypes.Structure):
    _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("value", ctypes.c_uint64),
                ("flags", ctypes.c_uint64)]


class _GetById(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("next_id", ctypes.c_uint32),
                ("open_flags", ctypes.c_uint32)]


BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_FD_BY_ID = 1, 14


def rules_used(path):
    """Routes in the DIR-24-8 table: rules_v4 records marked used. rules_v4
    is an ARRAY_OF_MAPS of BPF_F_MMAPABLE chunks: each chunk present (the
    outer map gives its id) is mapped and its flags read."""
    import mmap

    outer, oinfo = open_pinned(path)
    n = 0
    try:
        for k in range(oinfo.max_entries):
            key, mid = ctypes.c_uint32(k), ctypes.c_uint32(0)
            try:
                _bpf(BPF_MAP_LOOKUP_ELEM,
                     _Lookup(outer, 0, ctypes.addressof(key),
                             ctypes.addressof(mid), 0))
            except OSError as e:
                if e.errno == errno.ENOENT:
                    continue  # no chunk there
                raise
            fd = _bpf(BPF_MAP_GET_FD_BY_ID, _GetById(mid.value, 0, 0))
            try:
                info = _MapInfo()
                _bpf(BPF_OBJ_GET_INFO_BY_FD,
                     _InfoAttr(fd, ctypes.sizeof(info),
                               ctypes.addressof(info)))
                size = info.max_entries * RULE_V4_SIZE
                size = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE * \
                    mmap.PAGESIZE
                with mmap.mmap(fd, size, mmap.MAP_SHARED,
                               mmap.PROT_READ) as m:
                    flags = m[RULE_V4_FLAGS:info.max_entries * RULE_V4_SIZE:
                              RULE_V4_SIZE]
                n += sum(1 for b in flags if b & FPMD_RULE_F_USED)
            finally:
                os.close(fd)
        return n
    finally:
        os.close(outer)


# --------------------------------------------------------------------------
# Routes: deterministic, BGP-like mix, unique, away from the lab's subnets.

def gen_routes(n, seed=4242):
    rng = random.Random(seed)
    seen = set()
    routes = []
    bad = [(0x00000000, 8), (0x0A000000, 8), (0x64400000, 10),
           (0x7F000000, 8), (0xA9FE0000, 16), (0xAC100000, 12),
           (0xC0A80000, 16), (0xE0000000, 3)]
    while len(routes) < n:
        r = rng.random()
        plen = 24 if r < 0.60 else (rng.randint(16, 23) if r < 0.965
                                    else rng.randint(8, 15))
        addr = rng.getrandbits(32) & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
        if any((addr >> (32 - bl)) == (ba >> (32 - bl)) for ba, bl in bad):
            continue
        key = (addr << 6) | plen
        if key in seen:
            continue
        seen.add(key)
        routes.append((addr, plen))
    return routes


_FILE = {}


def file_routes(path):
    """--routes FILE: its IPv4 routes, in file order, away from the
    benchmark's own 172.16.200.0/24 and 127/8."""
    if path not in _FILE:
        t = routefile.Table(path, 4, own=("172.16.200.0/24", "127.0.0.0/8"))
        log("route file " + t.describe())
        _FILE[path] = t.routes
    return _FILE[path]


def write_bird_routes(path, routes):
    with open(path, "w") as f:
        for addr, plen in routes:
            f.write(f"route {socket.inet_ntoa(struct.pack('!I', addr))}/"
                    f"{plen} blackhole;\n")


# --------------------------------------------------------------------------

def proc_status(pid):
    d = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    d[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return d


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def cpu_seconds(pid):
    """procmem.cpu_seconds, None when the process is gone."""
    try:
        return procmem.cpu_seconds(pid)
    except (OSError, IndexError, ValueError):
        return None


def fib_prefixes(pid):
    """IPv4 prefixes in the main table of the namespace of process pid."""
    try:
        with open(f"/proc/{pid}/net/fib_triestat") as f:
            section = None
            for line in f:
                s = line.strip()
                if s.endswith(":") and not s.startswith("Basic"):
                    section = s[:-1]
                elif section == "Main" and s.startswith("Prefixes:"):
                    return int(s.split()[1])
    except OSError:
        pass
    return None


class FirstRouteWatcher(threading.Thread):
    """Polls the FPM counters every 10 ms until route messages move.

    lo: start of the last poll that saw none (the first came after it);
    hi: end of the first poll that saw some.
    """

    def __init__(self, counters, base):
        super().__init__(daemon=True)
        self.counters, self.base = counters, base
        self.lo = self.hi = None
        self._quit = threading.Event()
        self.start()

    def run(self):
        while not self._quit.is_set():
            t = now_ns()
            c = self.counters()
            if c and c.get("routeMessages", 0) > self.base:
                self.hi = now_ns()
                return
            self.lo = t
            self._quit.wait(0.01)

    def stop(self):
        self._quit.set()
        self.join()


class BgpWatcher(threading.Thread):
    """Asks bgpd for the received-prefix count every second.

    full: when a vtysh call that started then saw all n (bgpd answers vtysh
    only between its own work, so a call can take long under load).
    """

    def __init__(self, pfx, n):
        super().__init__(daemon=True)
        self.pfx, self.n = pfx, n
        self.full = None
        self._quit = threading.Event()
        self.start()

    def run(self):
        while not self._quit.is_set():
            t = now_ns()
            got, _ = self.pfx()
            if got is not None and got >= self.n:
                self.full = t
                return
            self._quit.wait(1.0)

    def stop(self):
        self._quit.set()
        self.join()


class Bench:
    def __init__(self, n, args, idx):
        self.n = n
        self.args = args
        self.prefix = f"fpbench{os.getpid() % 100000}x{idx}"
        self.tmp = None
        self.ns = []
        self.frr_dirs = []
        self.children = []
        self.fpmd = None
        self.sink = None
        self.pin = f"/sys/fs/bpf/{self.prefix}"
        self.ps = self.prefix  # FRR pathspace

    # -- setup --------------------------------------------------------------
    def setup(self):
        p = self.prefix
        self.tmp = tempfile.mkdtemp(prefix=p + "-")
        os.chmod(self.tmp, 0o755)  # FRR reads its config as user frr
        self.nsb, self.nsr = p + "b", p + "r"
        for ns in (self.nsb, self.nsr):
            run(["ip", "netns", "add", ns])
            self.ns.append(ns)
            run(nsexec(ns, "ip", "link", "set", "lo", "up"))
        run(["ip", "link", "add", "bird0", "netns", self.nsb, "type", "veth",
             "peer", "name", "r-eth0", "netns", self.nsr])
        run(nsexec(self.nsb, "ip", "addr", "add", BIRD_IP + "/24", "dev",
                   "bird0"))
        run(nsexec(self.nsb, "ip", "link", "set", "bird0", "up"))
        run(nsexec(self.nsr, "ip", "addr", "add", ROUTER_IP + "/24", "dev",
                   "r-eth0"))
        run(nsexec(self.nsr, "ip", "link", "set", "r-eth0", "up"))
        run(nsexec(self.nsr, "sysctl", "-qw", "net.ipv4.ip_forward=1"))

        # FRR pathspace: sockets and pid files under /var/run/frr/PS,
        # vtysh wants /etc/frr/PS/vtysh.conf.
        for d in (f"/var/run/frr/{self.ps}", f"/etc/frr/{self.ps}"):
            if os.path.exists(d):
                raise RuntimeError(f"{d} exists already")
            os.makedirs(d)
            self.frr_dirs.append(d)
            shutil.chown(d, "frr", "frr")
        with open(f"/etc/frr/{self.ps}/vtysh.conf", "w") as f:
            f.write("service integrated-vtysh-config\n")
        self.logdir = os.path.join(self.tmp, "log")
        os.makedirs(self.logdir)
        shutil.chown(self.logdir, "frr", "frr")

    def write_configs(self):
        t = self.tmp
        with open(f"{t}/zebra.conf", "w") as f:
            f.write("hostname router\n"
                    f"fpm address 127.0.0.1 port {FPM_PORT}\n")
        with open(f"{t}/bgpd.conf", "w") as f:
            f.write(f"hostname router\n"
                    f"router bgp {FRR_AS}\n"
                    f" bgp router-id {ROUTER_IP}\n"
                    " no bgp ebgp-requires-policy\n"
                    f" neighbor {BIRD_IP} remote-as {BIRD_AS}\n"
                    f" neighbor {BIRD_IP} timers connect 1\n"
                    " address-family ipv4 unicast\n"
                    f"  neighbor {BIRD_IP} activate\n"
                    " exit-address-family\n")
        if self.args.routes:
            self.routes = file_routes(self.args.routes)[:self.n]
            if len(self.routes) < self.n:
                raise RuntimeError(f"{self.args.routes} has only "
                                   f"{len(self.routes)} IPv4 routes")
        else:
            log(f"generating {self.n} routes")
            self.routes = gen_routes(self.n)
        write_bird_routes(f"{t}/routes.conf", self.routes)
        with open(f"{t}/bird.conf", "w") as f:
            f.write(f'log "{t}/log/bird.log" all;\n'
                    f"router id {BIRD_IP};\n"
                    "protocol device { }\n"
                    "protocol static bench {\n"
                    "  ipv4;\n"
                    f'include "{t}/routes.conf";\n'
                    "}\n"
                    "protocol bgp frr {\n"
                    "  disabled yes;\n"
                    f"  local {BIRD_IP} as {BIRD_AS};\n"
                    f"  neighbor {ROUTER_IP} as {FRR_AS};\n"
                    "  ipv4 { import none; export all; next hop self; };\n"
                    "}\n")
        for fn in os.listdir(t):
            if fn.endswith(".conf"):
                os.chmod(os.path.join(t, fn), 0o644)

    def start_fpm_server(self):
        t = self.tmp
        if self.args.sink:
            self.sinkstats = f"{t}/log/sink.json"
            self.sink = Child("fpm-sink", nsexec(
                self.nsr, PY, os.path.abspath(__file__), "--_sink",
                str(FPM_PORT), self.sinkstats), f"{t}/log/sink.log",
                self.children)
            self.wait(lambda: os.path.exists(self.sinkstats), 10, "FPM sink")
        else:
            self.sock = f"{t}/fpmd.sock"
            self.fpmd_log = f"{t}/log/fpmd.log"
            args = [FPMD, "--netns", self.nsr, "-b", self.pin, "-s", self.sock,
                    "--log", "file:" + self.fpmd_log, "-i", "r-eth0",
                    "--fpm-address", "127.0.0.1", "--fpm-port", str(FPM_PORT)]
            args += self.args.fpmd_arg
            self.fpmd = Child("fpmd", args, f"{t}/log/fpmd.out",
                              self.children)

            def ready():
                if not self.fpmd.alive():
                    raise RuntimeError("fpmd exited: " + self.tail(
                        self.fpmd_log) + self.tail(self.fpmd.logpath))
                return "started:" in read_text(self.fpmd_log)
            self.wait(ready, 15, "fpmd")

    def start_frr(self):
        t = self.tmp
        common = ["-N", self.ps, "-P", "0", "-u", "frr", "-g", "frr"]
        self.zebra = Child("zebra", nsexec(
            self.nsr, f"{FRR}/zebra", *common, "-f", f"{t}/zebra.conf",
            "-i", f"/var/run/frr/{self.ps}/zebra.pid", "-M", "dplane_fpm_nl",
            "-r", "-s", "90000000", "--log", f"file:{t}/log/zebra.log"),
            f"{t}/log/zebra.out", self.children)
        zsock = f"/var/run/frr/{self.ps}/zserv.api"
        self.wait(lambda: os.path.exists(zsock), 15, "zebra's socket",
                  self.zebra)
        self.bgpd = Child("bgpd", nsexec(
            self.nsr, f"{FRR}/bgpd", *common, "-f", f"{t}/bgpd.conf",
            "-i", f"/var/run/frr/{self.ps}/bgpd.pid",
            "--log", f"file:{t}/log/bgpd.log"), f"{t}/log/bgpd.out",
            self.children)
        self.wait(lambda: os.path.exists(f"/var/run/frr/{self.ps}/bgpd.vty"),
                  15, "bgpd's vty", self.bgpd)

    def start_bird(self):
        t = self.tmp
        self.birdsock = f"{t}/bird.ctl"
        t0 = time.time()
        self.bird = Child("bird", nsexec(
            self.nsb, BIRD, "-f", "-c", f"{t}/bird.conf", "-s", self.birdsock,
            "-P", f"{t}/bird.pid"), f"{t}/log/bird.out", self.children)

        def loaded():
            if not os.path.exists(self.birdsock):
                return False
            r = run([BIRDC, "-s", self.birdsock, "show", "protocols", "all",
                     "bench"], check=False, timeout=60)
            for line in r.stdout.splitlines():
                s = line.split()
                if s[:1] == ["Routes:"]:
                    return int(s[1]) >= self.n
            return False
        self.wait(loaded, 300, "bird to load its routes", self.bird, 0.5)
        self.bird_load_s = time.time() - t0

    # -- measurement -------------------------------------------------------
    def fpm_counters(self):
        if self.args.sink:
            try:
                with open(self.sinkstats) as f:
                    st = json.load(f)
            except (OSError, ValueError):
                return None
            return {"connected": st["connected"], "messages": st["frames"],
                    "routeMessages": st["route4New"] + st["route4Del"] +
                    st["route6New"] + st["route6Del"],
                    "lastMessageNs": st["lastNs"],
                    "firstMessageNs": st["firstNs"], "raw": st}
        r = run([FPMCTL, "-s", self.sock, "--json", "show", "fpm"],
                check=False, timeout=30)
        if r.returncode != 0:
            return None
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None

    def bgp_pfx(self):
        r = run(["vtysh", "-N", self.ps, "-c",
                 "show bgp ipv4 unicast summary json"], check=False,
                timeout=60)
        try:
            peer = json.loads(r.stdout)["peers"][BIRD_IP]
        except (ValueError, KeyError):
            return None, None
        return peer.get("pfxRcd", 0), peer.get("state") == "Established"

    def wait(self, fn, timeout, what, child=None, interval=0.1):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if child is not None and not child.alive():
                raise RuntimeError(f"{child.name} exited "
                                   f"({child.proc.returncode}):\n" +
                                   self.tail(child.logpath))
            v = fn()
            if v:
                return v
            time.sleep(interval)
        raise RuntimeError(f"timed out waiting for {what}")

    def tail(self, path, n=30):
        try:
            with open(path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def routes_installed(self, c):
        """Routes fpmd holds from FPM (None for the sink)."""
        return c.get("routes")

    def measure(self):
        n = self.n
        # zebra's FPM connection up and the connect-time replay over.
        def fpm_quiet():
            c = self.fpm_counters()
            if not c or not c.get("messages"):
                return False
            key = (c.get("messages"), c.get("routeMessages"))
            ok = getattr(self, "_q", None) == key
            self._q = key
            # fpmd: the connect-time replay must have settled, so that the
            # BGP burst is not part of it (no sweep after the last message).
            return ok and c.get("replayState", "settled") in ("settled",
                                                             "none")
        self.wait(fpm_quiet, 60, "zebra's FPM connection", self.zebra, 1.0)
        base = self.fpm_counters()
        base_routes = base.get("routeMessages", 0)
        base_installed = self.routes_installed(base) or 0
        base_last = base.get("lastMessageNs") or 0
        kbase = fib_prefixes(self.zebra.pid) or 0
        log(f"baseline: FPM {base.get('messages')} messages "
            f"({base_routes} route), fpmd routes {base_installed}, "
            f"kernel prefixes {kbase}")

        rtstats = f"{self.tmp}/log/rtmon.json"
        self.rtmon = Child("rtmon", nsexec(
            self.nsr, PY, os.path.abspath(__file__), "--_rtmon", str(n),
            rtstats), f"{self.tmp}/log/rtmon.log", self.children)
        self.wait(lambda: os.path.exists(rtstats), 10, "rtmon", self.rtmon)

        def kstats():
            try:
                with open(rtstats) as f:
                    return json.load(f)
            except (OSError, ValueError):
                return None
        if self.args.perf and self.fpmd:
            self.perf = Child("perf", [
                "perf", "record", "-q", "-F", "499", "-g", "-p",
                str(self.fpmd.pid), "-o", f"{self.tmp}/log/perf.data"],
                f"{self.tmp}/log/perf.out")
        cpu0 = {c.name: cpu_seconds(c.pid) for c in self.children}
        load0 = loadavg()
        t_enable = now_ns()
        run([BIRDC, "-s", self.birdsock, "enable", "frr"])
        log(f"BGP enabled in bird; waiting for {n} routes")

        bgp_full = None
        fwatch = FirstRouteWatcher(self.fpm_counters, base_routes)
        self.first_watch = fwatch
        bgpw = BgpWatcher(self.bgp_pfx, n)
        self.bgp_watch = bgpw
        last_change = time.monotonic()
        last_key = None
        timeout = 120 + n / 5000
        deadline = time.monotonic() + timeout
        last_report = 0
        c = base
        while True:
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:.0f} s: {c}")
            for ch in self.children:
                if not ch.alive():
                    raise RuntimeError(f"{ch.name} exited "
                                       f"({ch.proc.returncode}):\n" +
                                       self.tail(ch.logpath))
            t = now_ns()
            c = self.fpm_counters() or c
            routes = c.get("routeMessages", 0) - base_routes
            ks = kstats() or {}
            k_first, k_full = ks.get("firstNs"), ks.get("fullNs")
            kp = ks.get("new")
            bgp_full = bgpw.full
            inst = self.routes_installed(c)
            key = (c.get("messages"), c.get("routeMessages"), inst,
                   c.get("mapWrites"))
            if key != last_key:
                last_key = key
                last_change = time.monotonic()
            if time.monotonic() - last_report > 5:
                last_report = time.monotonic()
                log(f"  +{(t - t_enable) / 1e9:5.1f}s bgp "
                    f"{'all' if bgp_full else '...'}, kernel "
                    f"{kp if kp is not None else '?'}, FPM route msgs "
                    f"{routes}, fpmd installed "
                    f"{(inst - base_installed) if inst is not None else '-'}")
            done = (k_full is not None and routes >= n and
                    (inst is None or inst - base_installed >= n or
                     self.args.sink) and
                    time.monotonic() - last_change > 3.0)
            if done:
                break
            time.sleep(0.2)

        end = self.fpm_counters()
        if getattr(self, "perf", None):
            self.perf.stop(60, signal.SIGINT)  # perf writes its data
            r = run(["perf", "report", "--stdio", "--no-children",
                     "--percent-limit", "1", "-g", "none", "-i",
                     f"{self.tmp}/log/perf.data"], check=False, timeout=300)
            with open(f"{self.tmp}/log/perf.txt", "w") as f:
                f.write(r.stdout)
            print(f"perf profile of fpmd ({self.n} routes):")
            print("\n".join(ln for ln in r.stdout.splitlines()
                            if ln.strip() and not ln.startswith("#"))[:4000])
        cpu = {}
        for ch in self.children:
            c1 = cpu_seconds(ch.pid)
            if c1 is not None and cpu0.get(ch.name) is not None:
                cpu[ch.name] = c1 - cpu0[ch.name]
        ks = kstats() or {}
        kend = fib_prefixes(self.zebra.pid)
        if ks.get("overruns") or (kend or 0) < kbase + n:
            log(f"kernel check: {ks.get('overruns')} rtnetlink overruns, "
                f"fib_triestat has {kend} prefixes (base {kbase}, want +{n})")
        bgpw.stop()
        bgp_full = bgpw.full
        res = {"n": n, "t_enable": t_enable,
               "bgp_full": bgp_full, "kernel_first": k_first,
               "kernel_full": k_full, "bird_load_s": self.bird_load_s,
               "kernel_prefixes": (kend or 0) - kbase,
               "kernel_overruns": ks.get("overruns", 0),
               "fpm": end, "base": base, "cpu": cpu,
               "load": (load0, loadavg()),
               "wall": (now_ns() - t_enable) / 1e9}
        first = end.get("firstMessageNs")
        if first is not None and first > base_last and first >= t_enable:
            res["fpm_first"] = first  # counter restarted with the burst
            res["fpm_first_err"] = 0
        elif self.args.sink:
            # The sink stamps each read: the first route message after the
            # session was enabled.
            res["fpm_first"] = min((b["firstNs"] for b in end["raw"]["bursts"]
                                    if b["firstNs"] >= t_enable),
                                   default=None)
            res["fpm_first_err"] = 0
        else:
            # fpmd's firstMessageNs is the connection's first message (the
            # connect-time replay): take the burst's start from fast polls,
            # the earliest time it can have been (a conservative rate).
            fwatch.stop()
            res["fpm_first"] = fwatch.lo
            res["fpm_first_err"] = (fwatch.hi or 0) - (fwatch.lo or 0)
        res["fpm_last"] = end.get("lastMessageNs")
        res["route_msgs"] = end.get("routeMessages", 0) - base_routes
        if not self.args.sink:
            res["installed"] = (self.routes_installed(end) or 0) - \
                base_installed
            res["map_write_last"] = end.get("lastMapWriteNs")
            res["fpmd_status"] = proc_status(self.fpmd.pid)
            # Steady state with the full table: nothing changes, so fpmd
            # should be idle.
            c0, t0 = cpu_seconds(self.fpmd.pid), time.monotonic()
            time.sleep(5)
            res["fpmd_idle_cpu"] = (cpu_seconds(self.fpmd.pid) - c0) / (
                time.monotonic() - t0)
            res["maps"] = fpmd_maps(self.pin, self.fpmd.pid)
            # The IPv4 table fpmd uses: the trie's entries, or the DIR-24-8
            # rules (the trie is then created with one entry).
            trie = next((m for m in res["maps"] if m[0] == "routes_v4"), None)
            try:
                t0 = time.time()
                if trie and trie[2] > 1:
                    table, n = "routes_v4", map_count(
                        os.path.join(self.pin, "routes_v4"))
                else:
                    table, n = "rules_v4", rules_used(
                        os.path.join(self.pin, "rules_v4"))
                res["routes_v4_entries"] = f"{n} ({table})"
                log(f"{table} holds {n} routes "
                    f"(walk {time.time() - t0:.1f} s)")
            except OSError as e:
                log(f"could not count the IPv4 routes in the maps: {e}")
        res["zebra_status"] = proc_status(self.zebra.pid)
        res["bgpd_status"] = proc_status(self.bgpd.pid)
        return res

    # -- teardown ----------------------------------------------------------
    def cleanup(self):
        """Removes everything; each step runs even if an earlier one fails."""
        # fpmd (or the sink) first, so zebra's exit is not mirrored; then the
        # routing daemons together (zebra runs with -r: it leaves the kernel
        # routes, which go away with the namespace).
        for w in ("first_watch", "bgp_watch"):
            if getattr(self, w, None):
                keep_going(getattr(self, w).stop)
        if getattr(self, "perf", None) and self.perf.alive():
            keep_going(stop_all, [self.perf])
        if self.fpmd:
            keep_going(stop_all, [self.fpmd])
        if self.sink:
            keep_going(stop_all, [self.sink])
        keep_going(stop_all, [c for c in self.children
                              if c is not self.fpmd and c is not self.sink])
        for ns in reversed(self.ns):
            keep_going(run, ["ip", "netns", "del", ns])
        self.ns = []
        if os.path.isdir(self.pin):
            keep_going(shutil.rmtree, self.pin)
        for d in self.frr_dirs:
            keep_going(shutil.rmtree, d)
        self.frr_dirs = []
        if self.tmp:
            if self.args.keep_logs:
                keep_going(shutil.copytree, os.path.join(self.tmp, "log"),
                           os.path.join(self.args.keep_logs, self.prefix))
            keep_going(shutil.rmtree, self.tmp)
            self.tmp = None

    def run(self):
        log(f"--- {self.n} routes ({self.prefix})")
        self.setup()
        self.write_configs()
        self.start_fpm_server()
        self.start_frr()
        self.start_bird()
        log(f"bird loaded {self.n} routes in {self.bird_load_s:.1f} s")
        return self.measure()


def fmt_count(n):
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def mib(b):
    return f"{b / (1 << 20):.0f} MiB" if b is not None else "-"


def secs(a, b):
    if a is None or b is None:
        return "-"
    return f"{(b - a) / 1e9:.2f} s"


def msecs(a, b):
    if a is None or b is None:
        return "-"
    return f"{(b - a) / 1e6:.0f} ms"


def report(results, sink):
    print()
    print("Timeline per run (s after the BGP session was enabled in bird):")
    for r in results:
        t0 = r["t_enable"]

        def at(x):
            return f"{(x - t0) / 1e9:.2f}" if x else "-"
        print(f"  {fmt_count(r['n'])}: "
              f"bgpd has all {at(r['bgp_full'])} (1 s polls), kernel first "
              f"{at(r['kernel_first'])} all {at(r['kernel_full'])}, FPM first "
              f"{at(r['fpm_first'])} last {at(r['fpm_last'])}"
              + ("" if sink else f", fpmd last map write "
                 f"{at(r.get('map_write_last'))}") +
              f"; zebra RSS {mib(r['zebra_status'].get('VmRSS'))}, bgpd RSS "
              f"{mib(r['bgpd_status'].get('VmRSS'))}; bird loaded the "
              f"static routes in {r['bird_load_s']:.1f} s; kernel main "
              f"table +{r['kernel_prefixes']} prefixes at the end"
              + (f" ({r['kernel_overruns']} rtnetlink overruns: kernel "
                 "times are approximate)" if r['kernel_overruns'] else ""))
    print()
    print("CPU seconds used from BGP enable to the end of the run "
          "(the machine has 2 cores):")
    for r in results:
        print(f"  {fmt_count(r['n'])} ({r['wall']:.0f} s, load average "
              f"{r['load'][0]} at the start, {r['load'][1]} at the end): " +
              ", ".join(
            f"{k} {v:.1f}" for k, v in sorted(r["cpu"].items(),
                                              key=lambda kv: -kv[1])))
    print()
    if sink:
        print("| routes | BGP enabled → kernel has all | zebra FPM first→last "
              "| FPM route msgs | FPM route msgs/s | kernel all → FPM last |")
        print("|---:|---:|---:|---:|---:|---:|")
        for r in results:
            dur = (r["fpm_last"] - r["fpm_first"]) / 1e9
            print(f"| {fmt_count(r['n'])} | "
                  f"{secs(r['t_enable'], r['kernel_full'])}"
                  f" | {dur:.2f} s | {r['route_msgs']} | "
                  f"{r['route_msgs'] / dur:,.0f} | "
                  f"{msecs(r['kernel_full'], r['fpm_last'])} |")
        return
    print("| routes | BGP enabled → kernel has all | zebra FPM first→last "
          "| routes/s FPM→maps | lag: last FPM msg → last map write "
          "| kernel has all → last map write "
          "| fpmd VmHWM | map memory | IPv4 routes in the maps "
          "| fpmd CPU when idle after |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        dur = (r["map_write_last"] - r["fpm_first"]) / 1e9 \
            if r.get("map_write_last") and r.get("fpm_first") else None
        rate = f"{r['installed'] / dur:,.0f}" if dur else "-"
        memlock = sum(m[1] for m in r["maps"])
        print(f"| {fmt_count(r['n'])} | "
              f"{secs(r['t_enable'], r['kernel_full'])} | "
              f"{secs(r['fpm_first'], r['fpm_last'])} | {rate} | "
              f"{msecs(r['fpm_last'], r.get('map_write_last'))} | "
              f"{msecs(r['kernel_full'], r.get('map_write_last'))} | "
              f"{mib(r['fpmd_status'].get('VmHWM'))} | {mib(memlock)} | "
              f"{r.get('routes_v4_entries', '-')} | "
              f"{r['fpmd_idle_cpu'] * 100:.0f}% |")
    print()
    for r in results:
        err = r.get("fpm_first_err") or 0
        if err:
            print(f"  {fmt_count(r['n'])}: the burst's first FPM message is "
                  f"known to within {err / 1e6:.0f} ms (polled)")
        print(f"  {fmt_count(r['n'])} maps (bytes_memlock): " + ", ".join(
            f"{name} {b / (1 << 20):.1f} MiB" for name, b, _, _ in r["maps"]
            if b >= (1 << 20)) + f"; others {sum(b for _, b, _, _ in r['maps'] if b < (1 << 20)) / 1024:.0f} KiB")


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--_sink":
        sink_main(int(sys.argv[2]), sys.argv[3])
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "--_rtmon":
        rtmon_main(int(sys.argv[2]), sys.argv[3])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("counts", nargs="*", type=int,
                    help="route counts (default 100000 1000000)")
    ap.add_argument("--quick", action="store_true", help="100k routes only")
    ap.add_argument("--routes", metavar="FILE",
                    help="IPv4 routes from FILE (\"PREFIX KEY\" lines, "
                    "scripts/route-table.py; its first N) instead of the "
                    "generator; counts default to 100k and the whole file")
    ap.add_argument("--sink", action="store_true",
                    help="plain FPM sink instead of fpmd (zebra's timeline)")
    ap.add_argument("--fpmd-arg", action="append", default=[],
                    help="extra fpmd argument (repeat)")
    ap.add_argument("--perf", action="store_true",
                    help="profile fpmd with perf record during the load")
    ap.add_argument("--keep-logs", metavar="DIR",
                    help="copy the daemons' logs to DIR before cleanup")
    args = ap.parse_args()
    counts = args.counts or ([100000] if args.quick else [100000, 1000000])
    if args.routes and not args.counts:
        counts = [100000] if args.quick else \
            [100000, len(file_routes(args.routes))]
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, BPF, FRR)")
    for exe in (BIRD, BIRDC, f"{FRR}/zebra", f"{FRR}/bgpd"):
        if not os.access(exe, os.X_OK):
            sys.exit(f"{exe} missing (scripts/install-deps.sh)")
    if not args.sink:
        h = run([FPMD, "--help"], check=False)
        if "--fpm-address" not in h.stdout + h.stderr:
            sys.exit(f"{FPMD} has no FPM server (--fpm-address); "
                     "build it, or use --sink")
    if args.keep_logs:
        os.makedirs(args.keep_logs, exist_ok=True)

    t_start = time.time()
    results = []
    rc = 0
    for idx, n in enumerate(counts):
        b = Bench(n, args, idx)

        def failed(e, b=b):
            if not isinstance(e, KeyboardInterrupt):
                for c in b.children:
                    log(f"--- {c.name} log tail:\n{b.tail(c.logpath, 15)}")
        rc = guarded(lambda b=b: results.append(b.run()), b.cleanup,
                     f"{n} routes", failed)
        if rc:
            break
    if results:
        print("\nTables: " + (f"{args.routes} (its first N IPv4 routes)"
                              if args.routes else
                              "synthetic (gen_routes, BGP-like /8-/24)"))
        report(results, args.sink)
    print(f"\ntotal {time.time() - t_start:.0f} s; command: "
          f"{' '.join(sys.argv)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
