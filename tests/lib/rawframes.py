# SPDX-License-Identifier: GPL-2.0-or-later
"""Raw Ethernet frames in and out of an interface, for the tests that
compare fpmd's output with the kernel's byte for byte. Runs inside a
namespace with /usr/bin/python3 (ip netns exec NS ... rawframes.py ...).

  rawframes.py send IFNAME [--interval S]
      sends the frames given on stdin (hex, one per line) as they are:
      no padding, no checksum, nothing added; prints {"sent": n}.
  rawframes.py capture IFNAME [--udp-port P --count N --lines]
      records every frame the interface receives (not the ones it sends)
      until SIGTERM, then prints them as a JSON list of hex strings (with
      --lines: each one on a line of its own as it arrives, nothing at the
      end). Prints "ready" on stderr once the socket is bound, and
      "dropped N" there at the end if its socket buffer overflowed (N
      frames the capture missed, not the network). With --udp-port,
      only IPv4/IPv6 UDP frames to port P, and a UDP socket bound to P
      takes them (so no ICMP port unreachable goes back); with --count,
      it stops by itself after N of them.
"""
import argparse
import json
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET, PACKET_STATISTICS = 263, 6
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def send(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.ifname, 0))
    frames = [bytes.fromhex(line) for line in sys.stdin.read().split()]
    nxt = time.monotonic()
    for f in frames:
        s.send(f)
        if a.interval:
            nxt += a.interval
            delay = nxt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    print(json.dumps({"sent": len(frames)}))


def udp_dport(f):
    """The UDP destination port of an Ethernet frame, or None."""
    if f[12:14] == b"\x08\x00" and len(f) >= 34 and f[23] == 17:
        off = 14 + (f[14] & 15) * 4
    elif f[12:14] == b"\x86\xdd" and len(f) >= 54 and f[20] == 17:
        off = 54
    else:
        return None
    return int.from_bytes(f[off + 2:off + 4], "big") \
        if len(f) >= off + 4 else None


def capture(a):
    if a.udp_port:
        sink = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        sink.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sink.bind(("::", a.udp_port))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    try:   # root: past net.core.rmem_max (212992 on a stock machine)
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((a.ifname, 0))
    s.settimeout(0.05)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    got = []
    print("ready", file=sys.stderr, flush=True)
    # After SIGTERM, drain what is already queued.
    while True:
        try:
            data, addr = s.recvfrom(65536)
        except (socket.timeout, InterruptedError):
            if stop:
                break
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        if a.udp_port and udp_dport(data) != a.udp_port:
            continue
        if a.lines:
            print(data.hex(), flush=True)
        got.append(data.hex())
        if a.count and len(got) >= a.count:
            break
    _, drops = struct.unpack("=II", s.getsockopt(SOL_PACKET,
                                                 PACKET_STATISTICS, 8))
    if drops:
        print(f"dropped {drops}", file=sys.stderr, flush=True)
    if not a.lines:
        print(json.dumps(got))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("ifname")
    ps.add_argument("--interval", type=float, default=0)
    pc = sub.add_parser("capture")
    pc.add_argument("ifname")
    pc.add_argument("--udp-port", type=int, default=0)
    pc.add_argument("--count", type=int, default=0)
    pc.add_argument("--lines", action="store_true")
    a = p.parse_args()
    send(a) if a.cmd == "send" else capture(a)


if __name__ == "__main__":
    main()
