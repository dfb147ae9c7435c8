# SPDX-License-Identifier: GPL-2.0-or-later
"""FPM frames of rtnetlink messages, built and decoded with struct from the
kernel's headers (linux/netlink.h, linux/rtnetlink.h, linux/nexthop.h),
and a raw FPM client that runs inside a test namespace.

FPM framing (FRR's fpm/fpm.h): version u8 = 1, type u8 = 1 (netlink),
length u16 big-endian including the 4-byte header, then netlink messages
in host byte order.

Two ways to build a route: route() as zebra's encoder makes it (with
RTA_PRIORITY), and the shorter route_msg() the malformed-input and fault
tests have always sent. Two clients: client()/exchange() collect fpmd's
replies; FpmClient and fpm_keeper() only send (one hangs up or waits for
fpmd to close, the other stays connected until killed).
"""
import ipaddress
import json
import os
import socket
import struct
import subprocess
import tempfile

from lib.lab import PY, finish, shquote

RTM_NEWROUTE, RTM_DELROUTE, RTM_NEWNEXTHOP = 24, 25, 104
NLM_F_REQUEST, NLM_F_REPLACE, NLM_F_CREATE = 0x1, 0x100, 0x400
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_PRIORITY = 1, 4, 5, 6
RTA_METRICS, RTA_MULTIPATH, RTA_TABLE, RTA_ENCAP_TYPE, RTA_ENCAP = 8, 9, \
    15, 21, 22
RTA_NH_ID = 30
RTAX_MTU = 2
NHA_ID, NHA_GROUP, NHA_OIF, NHA_GATEWAY = 1, 2, 5, 6
RTN_UNICAST, RTN_BLACKHOLE, RTN_UNREACHABLE = 1, 6, 7
RT_SCOPE_UNIVERSE, RT_SCOPE_LINK = 0, 253
RTM_F_OFFLOAD, RTM_F_OFFLOAD_FAILED = 0x4000, 0x20000000
# rtm_protocol numbers zebra uses (zebra/rt_netlink.h, linux/rtnetlink.h)
RTPROT_KERNEL, RTPROT_BGP, RTPROT_OSPF, RTPROT_ZSTATIC = 2, 186, 188, 196
ZEBRA_METRIC = 20   # RTA_PRIORITY on every route zebra sends


def nla(t, data):
    b = struct.pack("=HH", 4 + len(data), t) + data
    return b + b"\0" * (-len(b) % 4)


def nlmsg(t, body, seq=0, flags=NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE):
    return struct.pack("=IHHII", 16 + len(body), t, flags, seq, 0) + body


def rtmsg(dst_len, rtype=RTN_UNICAST, proto=RTPROT_ZSTATIC, table=254):
    # family, dst_len, src_len, tos, table, protocol, scope, type, flags
    return struct.pack("=BBBBBBBBI", socket.AF_INET, dst_len, 0, 0, table,
                       proto, 0, rtype, 0)


def route_msg(prefix, gw, oif, table=254, attrs=b""):
    """An IPv4 RTM_NEWROUTE as zebra sends it without nexthop groups:
    RTA_DST, RTA_TABLE, RTA_GATEWAY (if gw), RTA_OIF (if oif is not None),
    then attrs; rtm_table is RT_TABLE_COMPAT (252) for tables >= 256."""
    net, plen = prefix.split("/")
    return nlmsg(RTM_NEWROUTE,
                 rtmsg(int(plen), table=table if table < 256 else 252) +
                 nla(RTA_DST, socket.inet_aton(net)) +
                 nla(RTA_TABLE, struct.pack("=I", table)) +
                 (nla(RTA_GATEWAY, socket.inet_aton(gw)) if gw else b"") +
                 (nla(RTA_OIF, struct.pack("=I", oif))
                  if oif is not None else b"") + attrs)


def route(prefix, seq=0, gw=None, oif=None, proto=RTPROT_ZSTATIC,
          table=254, rtype=RTN_UNICAST, scope=RT_SCOPE_UNIVERSE, nhid=None,
          attrs=b"", delete=False, table_attr=False):
    """An RTM_NEWROUTE (or DELROUTE) as zebra's netlink encoder makes it:
    rtm_table for tables below 256, else RT_TABLE_UNSPEC and RTA_TABLE
    (table_attr adds RTA_TABLE anyway); RTA_PRIORITY 20."""
    net = ipaddress.ip_network(prefix)
    fam = socket.AF_INET if net.version == 4 else socket.AF_INET6
    big = table >= 256
    body = struct.pack("=BBBBBBBBI", fam, net.prefixlen, 0, 0,
                       0 if big else table, proto, scope, rtype, 0)
    body += nla(RTA_DST, net.network_address.packed)
    if big or table_attr:
        body += nla(RTA_TABLE, struct.pack("=I", table))
    body += nla(RTA_PRIORITY, struct.pack("=I", ZEBRA_METRIC))
    if nhid:
        body += nla(RTA_NH_ID, struct.pack("=I", nhid))
    if gw:
        body += nla(RTA_GATEWAY, ipaddress.ip_address(gw).packed)
    if oif:
        body += nla(RTA_OIF, struct.pack("=I", oif))
    body += attrs
    return nlmsg(RTM_DELROUTE if delete else RTM_NEWROUTE, body, seq)


def nexthop(nhid, oif, gw, seq=0):
    body = struct.pack("=BBBBI", socket.AF_INET, 0, RTPROT_ZSTATIC, 0, 0) + \
        nla(NHA_ID, struct.pack("=I", nhid)) + \
        nla(NHA_OIF, struct.pack("=I", oif)) + \
        nla(NHA_GATEWAY, socket.inet_aton(gw))
    return nlmsg(RTM_NEWNEXTHOP, body, seq)


def fpm_frame(payload, version=1, ftype=1, length=None):
    """One FPM frame; version, type and length can be made wrong."""
    n = 4 + len(payload) if length is None else length
    return struct.pack(">BBH", version, ftype, n) + payload


def frame(payload):
    return fpm_frame(payload)


def decode(data):
    """FPM frames -> [{"version", "type", "length", "msgs": [...]}]; each
    message a dict of its nlmsghdr and rtmsg fields and "attrs" {type:
    bytes}. Raises ValueError on anything malformed."""
    frames, off = [], 0
    while off < len(data):
        if len(data) - off < 4:
            raise ValueError(f"{len(data) - off} bytes after the last frame")
        ver, typ, flen = struct.unpack_from(">BBH", data, off)
        if flen < 4 or off + flen > len(data):
            raise ValueError(f"frame at {off}: length {flen}")
        body, msgs, o = data[off + 4:off + flen], [], 0
        while o < len(body):
            ln, t, fl, seq, pid = struct.unpack_from("=IHHII", body, o)
            if ln < 16 + 12 or o + ln > len(body):
                raise ValueError(f"netlink message at {o}: length {ln}")
            (fam, dlen, slen, tos, table, proto, scope, rtype,
             rflags) = struct.unpack_from("=BBBBBBBBI", body, o + 16)
            attrs, a = {}, o + 16 + 12
            while a < o + ln:
                alen, at = struct.unpack_from("=HH", body, a)
                if alen < 4 or a + alen > o + ln:
                    raise ValueError(f"attribute at {a}: length {alen}")
                attrs[at] = bytes(body[a + 4:a + alen])
                a += (alen + 3) & ~3
            msgs.append(dict(len=ln, type=t, flags=fl, seq=seq, pid=pid,
                             family=fam, dst_len=dlen, src_len=slen,
                             tos=tos, table=table, protocol=proto,
                             scope=scope, rtype=rtype, rtm_flags=rflags,
                             attrs=attrs))
            o += (ln + 3) & ~3
        frames.append(dict(version=ver, type=typ, length=flen, msgs=msgs))
        off += flen
    return frames


# Runs in the namespace: sends the frames given on stdin (JSON: hex
# strings), reads what comes back until `expect` frames are in, then 0.5 s
# more (anything extra shows), or until `wait` seconds passed; prints it as
# hex and whether the server kept the connection open. With "go", a small
# receive buffer and nothing read until the file "go" exists (a zebra that
# does not read); it holds the number of frames to expect.
CLIENT = r"""
import json, os, socket, struct, sys, time
a = json.loads(sys.stdin.read())
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
if a.get("go"):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.settimeout(60)
s.connect(("127.0.0.1", a["port"]))
s.sendall(b"".join(bytes.fromhex(f) for f in a["frames"]))
while a.get("go") and not os.path.exists(a["go"]):
    time.sleep(0.05)
if a.get("go"):
    a["expect"] = int(open(a["go"]).read())
got, deadline, extra, closed = b"", time.time() + a["wait"], None, False
n = o = 0

while time.time() < (extra or deadline):
    while len(got) - o >= 4:   # whole frames so far
        ln = struct.unpack_from(">H", got, o + 2)[0]
        if ln < 4 or len(got) - o < ln:
            break
        n, o = n + 1, o + ln
    if extra is None and n >= a["expect"]:
        extra = time.time() + 0.5
    s.settimeout(max(0.01, (extra or deadline) - time.time()))
    try:
        r = s.recv(65536)
    except socket.timeout:
        continue
    if not r:
        closed = True
        break
    got += r
print(json.dumps({"data": got.hex(), "closed": closed}))
"""


def client(ns, frames, expect, wait=10, port=2620, go=None):
    """Start the raw client: sends frames to fpmd's FPM server in ns (and,
    with go, reads nothing until the file go exists; it holds the number
    of frames to expect)."""
    with tempfile.TemporaryFile("w+") as args:
        json.dump({"frames": [f.hex() for f in frames], "expect": expect,
                   "wait": wait, "port": port, "go": go}, args)
        args.seek(0)
        return subprocess.Popen(["ip", "netns", "exec", ns.name, PY, "-c",
                                 CLIENT], stdin=args, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


def client_result(p, timeout=60):
    """(decoded frames received, closed by fpmd?) of a client()."""
    out, err = finish(p, timeout)
    assert p.returncode == 0, err
    out = json.loads(out)
    return decode(bytes.fromhex(out["data"])), out["closed"]


def exchange(ns, frames, expect, wait=10, port=2620):
    """Send frames to fpmd's FPM server in ns; returns (decoded frames
    received, closed by fpmd?)."""
    return client_result(client(ns, frames, expect, wait, port),
                         timeout=wait + 30)


# Runs in r1: reads a mode byte and the bytes to send from stdin. "W": send,
# then wait up to 3 s for the server to close; "H": send and hang up.
FPM_CLIENT = r"""
import socket, sys
data = sys.stdin.buffer.read()
mode, data = data[:1], data[1:]
s = socket.create_connection(("127.0.0.1", 2620), timeout=3)
s.sendall(data)
if mode == b"H":
    s.close(); print("sent-and-closed"); sys.exit(0)
try:
    r = s.recv(1)
    print("closed-by-peer" if r == b"" else "data")
except ConnectionResetError:
    print("closed-by-peer")
except socket.timeout:
    print("still-open")
"""


class FpmClient:
    """A raw FPM client inside r1's namespace (or ns): a plain TCP socket,
    so `ip netns exec` is fine for it (no bpffs needed)."""

    def __init__(self, lab, ns=None):
        self.proc = (ns or lab.r1).popen(
            f"exec {PY} -c {shquote(FPM_CLIENT)}", stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def run(self, data, close_early=False):
        """Send data; returns "closed-by-peer" or "sent-and-closed"."""
        mode = b"H" if close_early else b"W"
        out, err = self.proc.communicate(mode + data, timeout=15)
        assert self.proc.returncode == 0, err
        return out.decode().strip()


# Runs in r1: sends the file's bytes as one FPM client, then stays
# connected (a peer that goes away has its routes checked against the
# kernel's, which has none of these) until killed.
FPM_KEEPER = r"""
import socket, sys, time
s = socket.create_connection(("127.0.0.1", 2620), timeout=10)
s.settimeout(None)              # fpmd may read slowly under load
s.sendall(open(sys.argv[1], "rb").read())
print("sent", flush=True)
time.sleep(300)
"""


def fpm_keeper(lab, data, name="fpm-feed.bin"):
    """An FPM client in r1 that sends data (written to lab.tmp/name) and
    stays connected until killed; returns its process."""
    path = os.path.join(lab.tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return lab.r1.popen(f"exec {PY} -c {shquote(FPM_KEEPER)} {path}",
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
