# SPDX-License-Identifier: GPL-2.0-or-later
"""Raw Ethernet frames in and out of an interface, for the tests that
compare fpmd's output with the kernel's byte for byte. Runs inside a
namespace with /usr/bin/python3 (ip netns exec NS ... rawframes.py ...).

  rawframes.py send IFNAME [--interval S]
      sends the frames given on stdin (hex, one per line) as they are:
      no padding, no checksum, nothing added; prints {"sent": n}.
  rawframes.py capture IFNAME
      records every frame the interface receives (not the ones it sends)
      until SIGTERM, then prints them as a JSON list of hex strings.
      Prints "ready" on stderr once the socket is bound.
"""
import argparse
import json
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


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


def capture(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
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
        if addr[2] != PACKET_OUTGOING:
            got.append(data.hex())
    print(json.dumps(got))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("ifname")
    ps.add_argument("--interval", type=float, default=0)
    pc = sub.add_parser("capture")
    pc.add_argument("ifname")
    a = p.parse_args()
    send(a) if a.cmd == "send" else capture(a)


if __name__ == "__main__":
    main()
