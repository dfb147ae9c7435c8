# SPDX-License-Identifier: GPL-2.0-or-later
"""UDP flows for the FRR tests, run inside a namespace with /usr/bin/python3.

  udpflow.py send DST PORT --flows N --sport BASE --count K --interval S
      N flows (source ports BASE..BASE+N-1), round robin, one packet every
      S seconds in all, K packets per flow (or --duration SEC, or until
      SIGINT); prints {"sent": {sport: n}} as JSON when done.
  udpflow.py recv PORT [--v6]
      counts packets per source port and per ingress interface until
      SIGTERM and then until the socket has stayed empty for QUIET s
      (nothing queued or in flight is lost), then prints {"received":
      {sport: {ifname: n}}, "total": n} as JSON. Prints "ready" on
      stderr once bound.

Each packet carries its flow and sequence number; receivers count each
(flow, seq) once, so a duplicate is never mistaken for a retransmission.
"""
import argparse
import json
import signal
import socket
import struct
import time

from udprecv import receive

IP_PKTINFO = 8           # linux/in.h; not exported by Python's socket
QUIET = 0.3              # s without a packet that ends a stopped receiver
DRAIN_MAX = 5            # s a stopped receiver reads at most


def send(a):
    fam = socket.AF_INET6 if ":" in a.dst else socket.AF_INET
    socks = []
    for i in range(a.flows):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind(("", a.sport + i))
        socks.append(s)
    sent = {a.sport + i: 0 for i in range(a.flows)}
    payload = b"x" * max(0, a.size - 12)
    deadline = time.monotonic() + a.duration if a.duration else None
    seq = 0
    nxt = time.monotonic()
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        if deadline is not None:
            if time.monotonic() >= deadline:
                break
        elif seq >= a.count * a.flows:
            break
        i = seq % a.flows
        socks[i].sendto(struct.pack("!IQ", i, seq) + payload,
                        (a.dst, a.port))
        sent[a.sport + i] += 1
        seq += 1
        if a.interval:
            nxt += a.interval
            delay = nxt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    print(json.dumps({"sent": sent}))


def recv(a):
    fam = socket.AF_INET6 if a.v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    if a.v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
    else:
        s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    s.bind(("", a.port))
    got, seen, names = {}, set(), {}

    def handle(item):
        data, anc, _, src = item
        ifindex = 0
        for level, typ, val in anc:
            if typ in (IP_PKTINFO, socket.IPV6_PKTINFO):
                ifindex = struct.unpack_from("=i" if not a.v6 else "=16si",
                                             val)[-1]
        if ifindex not in names:
            try:
                names[ifindex] = socket.if_indextoname(ifindex)
            except OSError:
                names[ifindex] = str(ifindex)
        if len(data) < 12:
            return
        flow, seq = struct.unpack_from("!IQ", data)
        if (flow, seq) in seen:
            return
        seen.add((flow, seq))
        per = got.setdefault(src[1], {})
        per[names[ifindex]] = per.get(names[ifindex], 0) + 1
    receive(s, lambda s: s.recvmsg(2048, 256), handle, QUIET, DRAIN_MAX)
    print(json.dumps({"received": got, "total": len(seen)}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("dst")
    ps.add_argument("port", type=int)
    ps.add_argument("--flows", type=int, default=1)
    ps.add_argument("--sport", type=int, default=20000)
    ps.add_argument("--count", type=int, default=10)
    ps.add_argument("--duration", type=float, default=0)
    ps.add_argument("--interval", type=float, default=0.001)
    ps.add_argument("--size", type=int, default=64)
    pr = sub.add_parser("recv")
    pr.add_argument("port", type=int)
    pr.add_argument("--v6", action="store_true")
    a = p.parse_args()
    send(a) if a.cmd == "send" else recv(a)


if __name__ == "__main__":
    main()
