# SPDX-License-Identifier: GPL-2.0-or-later
"""Sequence-numbered UDP for the soak (tests/soak.py): every packet lost is
known by its number and by when it was sent. Run inside a namespace with
/usr/bin/python3.

  seqflow.py send --to ADDR:PORT[,ADDR:PORT...] --flows N --rate PPS --log FILE
      (IPv6 destinations as [ADDR]:PORT, both families in one list)
      One global sequence; packet k goes to destination k % len(to) from
      source port SPORT + (k // len(to)) % N (N flows per destination),
      at PPS packets per second in all, until SIGINT or SIGTERM. FILE gets
      the CLOCK_MONOTONIC send time of every packet (float64, native
      order, index = sequence number), and stdout {"sent": K, "errors":
      E, "late": L} (E: sendto failures, each is counted as sent and
      missing; L: times the sender fell > 50 ms behind its pace and
      skipped ahead instead of bursting).
  seqflow.py recv --port PORT --log FILE
      Receives on every address, IPv4 and IPv6, on one socket (a host
      with `ip route add local ...` takes whole prefixes). Prints "ready"
      on stderr once bound; after SIGTERM reads until the socket has been
      quiet QUIET s (lib/udprecv.py), writes FILE (one byte per sequence
      number: 1 received) and prints {"received": R, "duplicates": D} on
      stdout.

Payload: sequence (u64), destination index (u32), send time (f64), then
padding to --size bytes of UDP payload.
"""
import argparse
import array
import json
import signal
import socket
import struct
import sys
import time

from udprecv import receive

HDR = struct.Struct("!QId")
QUIET = 0.5              # s without a packet that ends a stopped receiver
DRAIN_MAX = 10           # s a stopped receiver reads at most
LATE = 0.05              # s behind pace before the sender skips ahead


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def parse_to(text):
    out = []
    for item in text.split(","):
        addr, _, port = item.rpartition(":")
        out.append((addr.strip("[]"), int(port)))
    return out


def send(a):
    dsts = parse_to(a.to)
    # the flows' sockets of each family the destinations have; IPv6 ones
    # are IPv6 only, so both families bind the same source ports
    socks = {}
    for fam in {family(addr) for addr, _ in dsts}:
        socks[fam] = []
        for i in range(a.flows):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind(("", a.sport + i))
            socks[fam].append(s)
    dsts = [(socks[family(addr)], (addr, port)) for addr, port in dsts]
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    times = array.array("d")
    pad = b"\0" * max(0, a.size - HDR.size)
    interval = 1.0 / a.rate
    nd = len(dsts)
    seq = errors = late = 0
    nxt = time.monotonic()
    print("sending", file=sys.stderr, flush=True)
    while not stop:
        d = seq % nd
        fsocks, to = dsts[d]
        s = fsocks[(seq // nd) % a.flows]
        t = time.monotonic()
        times.append(t)
        try:
            s.sendto(HDR.pack(seq, d, t) + pad, to)
        except OSError:
            errors += 1          # counted as sent: it shows as missing
        seq += 1
        nxt += interval
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        elif delay < -LATE:
            nxt = time.monotonic()
            late += 1
    with open(a.log, "wb") as f:
        times.tofile(f)
    print(json.dumps({"sent": seq, "errors": errors, "late": late}))


def recv(a):
    # one socket for both families (IPv4 arrives as v4-mapped IPv6)
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    # As root past net.core.rmem_max: a receiver the machine starves for
    # a second must not lose what arrived meanwhile.
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)   # SO_RCVBUFFORCE
    s.bind(("", a.port))
    got = bytearray(1 << 20)
    n = {"received": 0, "duplicates": 0}

    def handle(data):
        if len(data) < HDR.size:
            return
        seq = HDR.unpack_from(data)[0]
        if seq >= len(got):
            got.extend(bytes(max(seq + 1 - len(got), len(got))))
        if got[seq]:
            n["duplicates"] += 1
            return
        got[seq] = 1
        n["received"] += 1
    receive(s, lambda s: s.recv(4096), handle, QUIET, DRAIN_MAX)
    with open(a.log, "wb") as f:
        f.write(got)
    print(json.dumps(n))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("--to", required=True)
    ps.add_argument("--flows", type=int, default=1)
    ps.add_argument("--sport", type=int, default=30000)
    ps.add_argument("--rate", type=float, default=1000)
    ps.add_argument("--size", type=int, default=64)
    ps.add_argument("--log", required=True)
    pr = sub.add_parser("recv")
    pr.add_argument("--port", type=int, required=True)
    pr.add_argument("--log", required=True)
    a = p.parse_args()
    send(a) if a.cmd == "send" else recv(a)


if __name__ == "__main__":
    main()
