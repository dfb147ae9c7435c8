# SPDX-License-Identifier: GPL-2.0-or-later
"""Jumbo frames benchmark: kernel forwarding against fpmd's XDP, with
1500- and 9000-byte datagrams, side by side in one run.

Run by hand as root (not collected by pytest: no test_ name):

    /usr/bin/python3 tests/bench_jumbo.py                # 5 s, 3 rounds
    /usr/bin/python3 tests/bench_jumbo.py --seconds 10 --rounds 5
    /usr/bin/python3 tests/bench_jumbo.py --bitrate 10M --rounds 1  # setup
    FPMD_BUILDDIR=build-x /usr/bin/python3 tests/bench_jumbo.py

The lab's h1 -- r1 -- h2 (tests/lib/lab.py), MTU 9000 on every veth, so
r1's interfaces take fpmd's program in native XDP mode (the program is
xdp.frags: a 9000-byte frame is a multi-buffer frame there). iperf3 UDP
from h1 to h2 (-b 0: as fast as h1's core sends), datagrams of 1472 and
8972 bytes (IPv4 datagrams of 1500 and 9000), each on its own.
tests/trafficgen.c cannot make these frames: BPF_PROG_TEST_RUN refuses
live frames larger than a page.

Each round measures every size through the kernel alone and through fpmd
(started on r1 for its half, stopped after), in turn, so both see the same
machine state; the table gives the median over rounds of what h2
received: Gbps (UDP payload bits, as iperf3 counts) and Mpps. A fpmd run
is valid only if fpmd's `forwarded` counter moved by at least what h2
received (its packets took XDP, not the kernel).

iperf3 pins h1's sender to CPU 0 and h2's receiver to CPU 1. The router's
work (veth NAPI, XDP or the kernel's forwarding) runs in softirq on the
sender's CPU, so a cheaper router leaves the sender more of its core.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

sys.path.insert(0, __import__("os").path.dirname(__file__))
from lib.lab import Lab, wait_for  # noqa: E402

MTU = 9000
SIZES = (1500, 9000)           # IPv4 datagram length
PORT = 5201


def iperf(lab, l3len, seconds, bitrate="0"):
    """(bits per second, packets per second) received by h2."""
    srv = lab.h2.popen(f"exec taskset -c 1 iperf3 -s -1 -p {PORT} -J",
                       stdout=subprocess.PIPE)
    try:
        time.sleep(0.3)
        cli = lab.h1.run(f"taskset -c 0 iperf3 -c {lab.H2_V4} -p {PORT} -u "
                         f"-b {bitrate} -l {l3len - 28} -t {seconds} -J",
                         timeout=seconds + 30)
    finally:
        out, _ = srv.communicate(timeout=seconds + 30)
    s = json.loads(out)["end"]["sum"]
    received = s["packets"] - s["lost_packets"]
    json.loads(cli.stdout)              # the client ran to the end
    return (received * (l3len - 28) * 8 / s["seconds"],
            received / s["seconds"], received)


def build(mtu):
    lab = Lab()
    for ns, ifname in ((lab.h1, "h1-eth0"), (lab.r1, "r1-eth0"),
                       (lab.r1, "r1-eth1"), (lab.h2, "h2-eth0")):
        ns.run(f"ip link set dev {ifname} mtu {mtu}")
    lab.warm_kernel_neighbors()
    return lab


def fpmd_run(lab, l3len, seconds, bitrate):
    d = lab.fpmd()
    try:
        lab.routes_and_neighbors(d, v6=False)
        wait_for(lambda: d.show("routes")["172.16.102.0/24"][0]["state"] ==
                 "forwarding", timeout=10, what="route forwarding")
        for ifname in ("r1-eth0", "r1-eth1"):
            mode = d.show("interfaces")[ifname]["xdpMode"]
            assert mode == "native", (ifname, mode)
        if l3len > 3500:            # multi-buffer: r1-eth1 must send it
            wait_for(lambda: "xmit-sg" in d.show("interfaces")["r1-eth1"]
                     ["flags"], timeout=5, what="r1-eth1 xmit-sg")
        before = d.counter("r1-eth0", "forwarded")
        bps, pps, received = iperf(lab, l3len, seconds, bitrate)
        fwd = d.counter("r1-eth0", "forwarded") - before
        assert fwd >= received, \
            f"INVALID: h2 received {received}, XDP forwarded {fwd}"
    finally:
        d.stop()
        lab.daemons.remove(d)
    return bps, pps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bitrate", default="0",
                    help="iperf3 -b (default 0, unlimited; e.g. 10M to "
                    "check the setup without loading the machine)")
    ap.add_argument("--mtu", type=int, default=MTU,
                    help="every veth's MTU (default 9000)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="IPv4 datagram lengths (default 1500,9000)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    lab = build(args.mtu)
    res = {(r, n): [] for r in ("kernel", "fpmd") for n in sizes}
    try:
        for k in range(args.rounds):
            for n in sizes:
                res["kernel", n].append(
                    iperf(lab, n, args.seconds, args.bitrate)[:2])
                res["fpmd", n].append(
                    fpmd_run(lab, n, args.seconds, args.bitrate))
                print(f"round {k + 1}: {n} bytes: kernel "
                      f"{res['kernel', n][-1][0] / 1e9:.2f} Gbps "
                      f"{res['kernel', n][-1][1] / 1e6:.3f} Mpps, fpmd "
                      f"{res['fpmd', n][-1][0] / 1e9:.2f} Gbps "
                      f"{res['fpmd', n][-1][1] / 1e6:.3f} Mpps",
                      file=sys.stderr, flush=True)
    finally:
        lab.cleanup()

    def med(r, n, i):
        return statistics.median(x[i] for x in res[r, n])

    print("| datagram | kernel Gbps | fpmd Gbps | kernel Mpps | fpmd Mpps "
          "| fpmd / kernel |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        print(f"| {n} | {med('kernel', n, 0) / 1e9:.2f} | "
              f"{med('fpmd', n, 0) / 1e9:.2f} | "
              f"{med('kernel', n, 1) / 1e6:.3f} | "
              f"{med('fpmd', n, 1) / 1e6:.3f} | "
              f"{med('fpmd', n, 1) / med('kernel', n, 1):.2f} |")


if __name__ == "__main__":
    main()
