# SPDX-License-Identifier: GPL-2.0-or-later
"""Sequence-numbered UDP for the soak (tests/soak.py): every packet lost is
known by its number and by when it was sent. Run inside a namespace with
/usr/bin/python3.

  seqflow.py send --to ADDR:PORT[,ADDR:PORT...] --flows N --rate PPS --log FILE
      One global sequence; packet k goes to destination k % len(to) from
      source port SPORT + (k // len(to)) % N (N flows per destination),
      at PPS packets per second in all, until SIGINT or SIGTERM. FILE gets
      the CLOCK_MONOTONIC send time of every packet (float64, native
      order, index = sequence number), and stdout {"sent": K, "errors":
      E, "late": L} (E: sendto failures, each is counted as sent and
      missing; L: times the sender fell > 50 ms behind its pace and
      skipped ahead instead of bursting).
  seqflow.py recv --port PORT --log FILE
      Receives on every address (a host with `ip route add local ...`
      takes whole prefixes). Prints "ready" on stderr once bound; after
      SIGTERM reads until the socket has been quiet QUIET s, writes FILE
      (one byte per sequence number: 1 received) and prints {"received":
      R, "duplicates": D} on stdout.

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

HDR = struct.Struct("!QId")
QUIET = 0.5              # s without a packet that ends a stopped receiver
DRAIN_MAX = 10           # s a stopped receiver reads at most
LATE = 0.05              # s behind pace before the sender skips ahead


def parse_to(text):
    out = []
    for item in text.split(","):
        addr, _, port = item.rpartition(":")
        out.append((addr.strip("[]"), int(port)))
    return out


def send(a):
    dsts = parse_to(a.to)
    fam = socket.AF_INET6 if ":" in dsts[0][0] else socket.AF_INET
    socks = []
    for i in range(a.flows):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind(("", a.sport + i))
        socks.append(s)
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
        s = socks[(seq // nd) % a.flows]
        t = time.monotonic()
        times.append(t)
        try:
            s.sendto(HDR.pack(seq, d, t) + pad, dsts[d])
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
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # As root past net.core.rmem_max: a receiver the machine starves for
    # a second must not lose what arrived meanwhile.
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)   # SO_RCVBUFFORCE
    s.bind(("", a.port))
    got = bytearray(1 << 20)
    received = dups = 0
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    s.settimeout(0.1)
    print("ready", file=sys.stderr, flush=True)
    quiet_since = stopped = None
    while True:
        if stop and stopped is None:
            quiet_since = stopped = time.monotonic()
        if stopped is not None and time.monotonic() - stopped > DRAIN_MAX:
            break
        try:
            data = s.recv(4096)
        except (socket.timeout, InterruptedError):
            if quiet_since is not None and \
                    time.monotonic() - quiet_since >= QUIET:
                break
            continue
        if quiet_since is not None:
            quiet_since = time.monotonic()
        if len(data) < HDR.size:
            continue
        seq = HDR.unpack_from(data)[0]
        if seq >= len(got):
            got.extend(bytes(max(seq + 1 - len(got), len(got))))
        if got[seq]:
            dups += 1
            continue
        got[seq] = 1
        received += 1
    with open(a.log, "wb") as f:
        f.write(got)
    print(json.dumps({"received": received, "duplicates": dups}))


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
