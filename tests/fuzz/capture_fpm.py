#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Captures what a real zebra (Debian FRR 8.4.4, dplane_fpm_nl) writes on
its FPM connection, as seeds for fuzz_fpm: tests/fuzz/corpus/fpm/zebra-*.
In the ecmp lab (tests/lib/frr.py), zebra connects to a recorder on
127.0.0.1:2620 in r1's namespace; staticd gets IPv4 and IPv6 routes,
ECMP, a blackhole, a change and a delete; then FRR stops (its flood of
deletes is recorded too). Once with nexthop groups (FRR's default), once
without (RTA_GATEWAY / RTA_MULTIPATH). Needs root.

    tests/fuzz/capture_fpm.py [OUTDIR]   (default: tests/fuzz/corpus/fpm)
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from lib.frr import FrrLab, ns_has_listener  # noqa: E402
from lib.lab import wait_for  # noqa: E402

RECORDER = r"""
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 2620)); s.listen(1)
c, _ = s.accept()
with open(sys.argv[1], "wb") as f:
    while True:
        b = c.recv(65536)
        if not b:
            break
        f.write(b); f.flush()
"""

MAX_SEED = 65536  # what the fuzzers take (-max_len)


def frames(data):
    """Split a stream into its FPM frames."""
    out, off = [], 0
    while off + 4 <= len(data):
        n = int.from_bytes(data[off + 2:off + 4], "big")
        if n < 4:
            break
        out.append(data[off:off + n])
        off += n
    return out


def capture(nhg, path):
    lab = FrrLab("ecmp")
    try:
        rec = lab.r1.popen(f"exec /usr/bin/python3 -c '{RECORDER}' {path}")
        wait_for(lambda: ns_has_listener(lab.r1, 2620), timeout=10)
        f = lab.frr(nhg=nhg)
        # zebra's FPM client connects a few seconds after start.
        wait_for(lambda: ":2620" in lab.r1.run(
            "ss -Htn state established sport = :2620").stdout, timeout=30)
        f.configure(
            "ip route 198.51.100.0/24 10.0.12.2",
            "ip route 10.99.0.0/24 10.0.12.2",
            "ip route 10.99.0.0/24 10.0.13.2",
            "ip route 192.0.2.0/24 blackhole",
            "ip route 203.0.113.0/24 10.0.13.2 r1-eth2",
            "ipv6 route 2001:db8:99::/48 r1-eth1",
            "ipv6 route 2001:db8:98::/48 fe80::1 r1-eth2")
        f.wait_route("10.99.0.0/24")
        f.configure("no ip route 10.99.0.0/24 10.0.13.2",
                    "no ip route 198.51.100.0/24 10.0.12.2",
                    "ip route 198.51.100.0/24 10.0.13.2")
        time.sleep(2)
        f.stop()
        time.sleep(1)
        rec.kill()
        rec.wait()
    finally:
        lab.cleanup()
    with open(path, "rb") as fh:
        return fh.read()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus",
                                                              "fpm")
    os.makedirs(out, exist_ok=True)
    for nhg in (True, False):
        name = "zebra-nhg" if nhg else "zebra-no-nhg"
        raw = os.path.join(out, name + ".raw")
        try:
            data = capture(nhg, raw)
        finally:
            if os.path.exists(raw):
                os.unlink(raw)
        fr = frames(data)
        # The whole session as one seed (cut at a frame boundary), and
        # each frame alone: small seeds mutate faster.
        seed, k = b"", 0
        for x in fr:
            if len(seed) + len(x) > MAX_SEED:
                break
            seed += x
        with open(os.path.join(out, name + "-session"), "wb") as fh:
            fh.write(seed)
        seen = set()
        for x in fr:
            if x in seen:
                continue
            seen.add(x)
            with open(os.path.join(out, f"{name}-frame{k:02d}"), "wb") as fh:
                fh.write(x)
            k += 1
        print(f"{name}: {len(data)} bytes, {len(fr)} frames, "
              f"{k} distinct")


if __name__ == "__main__":
    main()
