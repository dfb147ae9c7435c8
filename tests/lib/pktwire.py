# SPDX-License-Identifier: GPL-2.0-or-later
"""Raw Ethernet frames in and out of one interface, run inside a namespace.

  pktwire.py capture IFNAME
      prints "ready" on stderr once bound, collects every frame the
      interface receives (not the ones it sends) until SIGTERM or stdin
      closes, then prints them as a JSON list of hex strings.
  pktwire.py send IFNAME
      reads a JSON list of [hex frame, gap in seconds] from stdin and
      sends each frame exactly as given (padding, trailing bytes and all).

AF_PACKET sees the frame as the interface got it: what XDP redirected or
what the kernel transmitted, byte for byte.
"""
import json
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def capture(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    frames = []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print("ready", file=sys.stderr, flush=True)
    while not stop:
        try:
            r, _, _ = select.select([s, sys.stdin], [], [], 0.1)
        except InterruptedError:
            continue
        if sys.stdin in r and not sys.stdin.buffer.read1(4096):
            break
        if s in r:
            data, addr = s.recvfrom(65535)
            if addr[2] != PACKET_OUTGOING:
                frames.append(data.hex())
    # Drain what is already queued.
    s.setblocking(False)
    while True:
        try:
            data, addr = s.recvfrom(65535)
        except BlockingIOError:
            break
        if addr[2] != PACKET_OUTGOING:
            frames.append(data.hex())
    print(json.dumps(frames))


def send(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    for frame, gap in json.load(sys.stdin):
        s.send(bytes.fromhex(frame))
        time.sleep(gap)


if __name__ == "__main__":
    {"capture": capture, "send": send}[sys.argv[1]](sys.argv[2])
