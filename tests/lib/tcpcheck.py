# SPDX-License-Identifier: GPL-2.0-or-later
"""A TCP transfer whose content is checked, run inside a namespace or a
container with /usr/bin/python3.

  tcpcheck.py server ADDR PORT N
      accepts one connection, reads until EOF, prints {"received": n,
      "intact": bool} (intact: exactly N bytes of the pattern). Prints
      "ready" on stderr once listening.
  tcpcheck.py client ADDR PORT N
      connects and sends N bytes of the pattern in large writes (so TSO
      and GSO build big segments), then closes; prints {"sent": N}.

The pattern (byte i is (i * 7 + i // 65536) % 251) has no period a
misplaced segment could hide behind.
"""
import argparse
import json
import socket
import sys

CHUNK = 1 << 16


def pattern(off, n):
    return bytes(((i * 7 + i // 65536) % 251) for i in range(off, off + n))


def server(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(1)
    ls.settimeout(60)
    print("ready", file=sys.stderr, flush=True)
    c, _ = ls.accept()
    c.settimeout(60)
    got, intact = 0, True
    while True:
        buf = c.recv(CHUNK)
        if not buf:
            break
        if intact and buf != pattern(got, len(buf)):
            intact = False
        got += len(buf)
    c.close()
    print(json.dumps({"received": got, "intact": intact and got == a.n}))


def client(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.create_connection((a.addr, a.port), timeout=60) \
        if fam == socket.AF_INET else socket.socket(fam, socket.SOCK_STREAM)
    if fam == socket.AF_INET6:
        s.settimeout(60)
        s.connect((a.addr, a.port))
    off = 0
    while off < a.n:
        n = min(4 * CHUNK, a.n - off)
        s.sendall(pattern(off, n))
        off += n
    s.shutdown(socket.SHUT_WR)
    s.recv(1)                 # the server's close: everything was read
    s.close()
    print(json.dumps({"sent": off}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=("server", "client"))
    p.add_argument("addr")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    a = p.parse_args()
    server(a) if a.role == "server" else client(a)


if __name__ == "__main__":
    main()
