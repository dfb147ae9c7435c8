# SPDX-License-Identifier: GPL-2.0-or-later
"""FPM frames of rtnetlink messages, built and decoded with struct from the
kernel's headers (linux/netlink.h, linux/rtnetlink.h, linux/nexthop.h),
and a raw FPM client that runs inside a test namespace.

FPM framing (FRR's fpm/fpm.h): version u8 = 1, type u8 = 1 (netlink),
length u16 big-endian including the 4-byte header, then netlink messages
in host byte order.
"""
import ipaddress
import json
import socket
import struct
import subprocess
import tempfile

from lib.lab import PY, finish

RTM_NEWROUTE, RTM_DELROUTE, RTM_NEWNEXTHOP = 24, 25, 104
NLM_F_REQUEST, NLM_F_REPLACE, NLM_F_CREATE = 0x1, 0x100, 0x400
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_PRIORITY = 1, 4, 5, 6
RTA_METRICS, RTA_TABLE, RTA_ENCAP_TYPE, RTA_ENCAP, RTA_NH_ID = 8, 15, 21, \
    22, 30
RTAX_MTU = 2
NHA_ID, NHA_OIF, NHA_GATEWAY = 1, 5, 6
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


def frame(payload):
    return struct.pack(">BBH", 1, 1, 4 + len(payload)) + payload


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
