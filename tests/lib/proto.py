# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd's protobuf messages for tests: `pb` is proto/fpmd_pb2.py, which
protoc generates from proto/fpmd.proto into the build directory
(FPMD_BUILDDIR, default ./build; `make` writes it when configure found
protoc), so tests and daemon cannot disagree on the wire. Also the stream
framing both sockets use (a 4-byte big-endian length, then the message)
and builders for the plugin feed's PluginMsg.

    s.sendall(frame(pb.Request(hello=pb.Hello(version=1))))
    rsp = recv_msg(s, pb.Response)

Malformed input stays bytes: cut from a valid message's, or written out
with a comment saying why no decoder accepts it (and a check that the
generated one does not)."""
import importlib.util
import os
import socket
import struct

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILDDIR = os.environ.get("FPMD_BUILDDIR", os.path.join(_REPO, "build"))
PB2 = os.path.join(BUILDDIR, "proto", "fpmd_pb2.py")


def _load():
    try:
        import google.protobuf  # noqa: F401
    except ImportError as e:
        raise ImportError("tests need Python's protobuf runtime: apt-get "
                          "install python3-protobuf") from e
    if not os.path.exists(PB2):
        raise ImportError(f"{PB2} missing: run make in {BUILDDIR} "
                          "(configure needs protoc: apt-get install "
                          "protobuf-compiler)")
    spec = importlib.util.spec_from_file_location("fpmd_pb2", PB2)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


pb = _load()
from google.protobuf.message import DecodeError  # noqa: E402,F401


# ---- framing ----------------------------------------------------------------

def frame(msg):
    """One frame: a message (or its bytes, e.g. corrupted ones)."""
    data = msg if isinstance(msg, (bytes, bytearray)) else \
        msg.SerializeToString()
    return struct.pack(">I", len(data)) + data


def recv_exact(s, n):
    """n bytes from socket s, or None if the peer closed first."""
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_frame(s):
    """The next frame's payload, or None at end of stream."""
    hdr = recv_exact(s, 4)
    if hdr is None:
        return None
    return recv_exact(s, struct.unpack(">I", hdr)[0])


def recv_msg(s, cls):
    """The next frame parsed as cls (pb.Response, pb.FpmdMsg, ...), or
    None at end of stream."""
    data = recv_frame(s)
    return None if data is None else cls.FromString(data)


# ---- values -----------------------------------------------------------------

def ip(a):
    """An address's bytes, IPv4 or IPv6 by its spelling."""
    return socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET,
                            a)


def prefix(a, plen):
    return pb.Prefix(addr=ip(a), len=plen)


# ---- the plugin feed: PluginMsg ---------------------------------------------

def hello(version=1, peer="test plugin"):
    return pb.PluginMsg(hello=pb.Hello(version=version, peer=peer))


def replay_begin(rid):
    return pb.PluginMsg(replay_begin=pb.ReplayBegin(id=rid))


def replay_end(rid, routes):
    return pb.PluginMsg(replay_end=pb.ReplayEnd(id=rid, routes=routes))


def route(seq, pfx, plen, gw=None, ifindex=0, dele=False, rtype=1, nhg=0,
          paths=None, table=0, mtu=0):
    """A RouteOp: a delete, or an install by group id nhg and/or paths,
    one (gw, ifindex) or the list paths of (gw, ifindex)."""
    op = pb.RouteOp(seq=seq, prefix=prefix(pfx, plen), table=table)
    if dele:
        setattr(op, "del", True)
        return pb.PluginMsg(route=op)
    op.type, op.nhg_id, op.mtu = rtype, nhg, mtu
    if paths is None:
        paths = [(gw, ifindex)] if gw else []
    for g, i in paths:
        op.paths.add(gateway=ip(g), ifindex=i)
    return pb.PluginMsg(route=op)


def nexthop(seq, nhid, gw=None, ifindex=0, group=(), blackhole=False,
            dele=False):
    """A NexthopOp: a single (gw, ifindex), a group of (id, weight), a
    blackhole, or the delete of id nhid."""
    op = pb.NexthopOp(seq=seq, id=nhid, blackhole=blackhole)
    if dele:
        setattr(op, "del", True)
    if gw:
        op.path.gateway, op.path.ifindex = ip(gw), ifindex
    for m, w in group:
        op.group.add(nhid=m, weight=w)
    return pb.PluginMsg(nexthop=op)


# ---- a plugin-feed client ----------------------------------------------------

class Client:
    """Speaks for the zebra plugin on fpmd d's plugin socket."""

    def __init__(self, d):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(3)
        self.s.connect(d.plugin_sock)

        self.statuses = []  # RouteStatus messages, set aside by recv

    def send(self, *msgs):
        self.s.sendall(b"".join(frame(m) for m in msgs))

    def recv(self):
        """The next FpmdMsg that is not a RouteStatus (route_status: fpmd
        sends one after each install's Ack; tests/test_offload.py covers
        them)."""
        while True:
            m = recv_msg(self.s, pb.FpmdMsg)
            if m is None or not m.HasField("route_status"):
                return m
            self.statuses.append(m.route_status)

    def wait_statuses(self, n):
        """Until n RouteStatus messages are in: the status of a route
        written into a new IPv4 table part is sent after the loop turn's
        commit, so it may come after later replies (a ReplayDone)."""
        while len(self.statuses) < n:
            m = recv_msg(self.s, pb.FpmdMsg)
            assert m is not None and m.HasField("route_status"), m
            self.statuses.append(m.route_status)

    def closed(self):
        try:
            while True:
                if not self.s.recv(4096):
                    return True
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def close(self):
        self.s.close()


def acks(c, n):
    """n FpmdMsg acks: [(seq, status, error)]."""
    out = []
    for _ in range(n):
        m = c.recv()
        assert m.HasField("ack"), m
        out.append((m.ack.seq, m.ack.status, m.ack.error))
    return out
