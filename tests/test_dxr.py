# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd with the compact IPv4 table (`--ipv4-lookup dxr`, fpmd/fib/fib4c.c):
the daemon builds it, XDP forwards through it, status says so, route
changes take effect, and a restarted fpmd adopts it without a packet
taking the kernel path.

The table itself is checked against the LPM trie by tests/fib_check.c
(test_fib.py, the dxr-* cases); here it is the wiring a user relies on.
"""
import json
import os

from lib.lab import (h2_loopback, ping, ping_result, ping_stream, sh,
                     wait_for, xdp_attached)
from lib.traffic import (assert_kernel_flat, assert_lossless, fwd4,
                         measure, nonzero)

DXR = ("--ipv4-lookup", "dxr")
H2_EXTRA = "10.99.0.1"  # on h2's lo, via a gateway route


def static_routes(d):
    return {p: e for p, e in d.show("routes").items()
            if any(x["source"] != "kernel" for x in e)}


def lookup_name(d):
    """The IPv4 lookup structure in use, by fpmd's state (its
    routes/ipv4-lookup leaf, not the configuration's echo)."""
    return d.show("state")["fpmd:fpmd"]["state"]["routes"]["ipv4-lookup"]


FIB4_DXR = 2  # enum fpmd_fib4_algo, bpf/fpmd_maps.h


def xdp_fib4_algo(lab, ifname):
    """fib4_algo in the .rodata of the XDP program attached to ifname:
    the table the program really looks IPv4 destinations up in."""
    link = json.loads(sh(f"ip -n {lab.r1.name} -j link show {ifname}")
                      .stdout)[0]
    prog = json.loads(sh(f"bpftool -j prog show id "
                         f"{link['xdp']['prog']['id']}").stdout)
    for m in prog["map_ids"]:
        if json.loads(sh(f"bpftool -j map show id {m}").stdout)[
                "name"].endswith(".rodata"):
            dump = json.loads(sh(f"bpftool -j map dump id {m}").stdout)
            for v in dump[0]["formatted"]["value"][".rodata"]:
                if "fib4_algo" in v:
                    return v["fib4_algo"]
    raise AssertionError(f"{ifname}: no fib4_algo in {prog}")


def test_dxr_forwards_and_follows_route_changes(lab):
    d = lab.fpmd(extra=DXR)
    log = d.logtext()
    assert "IPv4 DXR (compact)" in log, log
    assert lookup_name(d) == "dxr", d.show("state")
    for ifname in ("r1-eth0", "r1-eth1"):
        algo = xdp_fib4_algo(lab, ifname)
        assert algo == FIB4_DXR, \
            f"{ifname}: XDP program built for IPv4 table {algo}, not DXR"
    assert os.path.exists(os.path.join(lab.pin, "dxr_dir")), \
        os.listdir(lab.pin)
    lab.routes_and_neighbors(d)
    h2_loopback(lab, H2_EXTRA + "/32")
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    d.ctl("route", "add", "10.99.0.0/24", "via", lab.H2_V4, "dev",
          "r1-eth1")
    lab.warm_kernel_neighbors()
    for dst in (lab.H2_V4, H2_EXTRA):
        got, dl = measure(lab, d, lambda: ping(lab.h1, dst, 5, 0.05))
        assert got == 5, f"{dst}: {got}/5 replies"
        assert dl.c["r1-eth0"]["forwarded"] >= 5, (dst, nonzero(dl.c))
        assert dl.f4 == 0, f"{dst}: kernel forwarded {dl.f4}"
    # A longer prefix inside the /24 (a /32: another /16 range in DXR)
    # that is a blackhole: dropped in XDP; deleting it restores the /24.
    d.ctl("route", "add", H2_EXTRA + "/32", "blackhole")
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_EXTRA, 3, 0.05))
    assert got == 0 and dl.c["r1-eth0"]["drop-blackhole"] >= 3, \
        nonzero(dl.c)
    d.ctl("route", "del", H2_EXTRA + "/32")
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_EXTRA, 3, 0.05))
    assert got == 3 and dl.c["r1-eth0"]["forwarded"] >= 3, nonzero(dl.c)
    # The route gone: the kernel's path, said by the counters.
    d.ctl("route", "del", "10.99.0.0/24")
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_EXTRA, 3, 0.05))
    assert dl.c["r1-eth0"]["pass-no-route"] >= 3, nonzero(dl.c)


def test_dxr_restart_adopts_without_loss(lab):
    d = lab.fpmd(extra=DXR + ("--keep-forwarding",))
    lab.routes_and_neighbors(d)
    h2_loopback(lab, H2_EXTRA + "/32")
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    d.ctl("route", "add", "10.99.0.0/24", "via", lab.H2_V4, "dev",
          "r1-eth1")
    d.ctl("route", "add", "10.98.0.0/24", "blackhole")
    lab.warm_kernel_neighbors()
    before = static_routes(d)
    assert ping(lab.h1, H2_EXTRA, 3, 0.05) == 3

    f0 = fwd4(lab.r1)
    stream = ping_stream(lab.h1, H2_EXTRA, 400)
    try:
        c0 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c0 + 30,
                 what="the ping stream through XDP")
        assert d.stop() == 0
        assert xdp_attached(lab.r1, "r1-eth0")
        os.rename(d.log, d.log + ".1")  # wait_ready looks for "started:"
        d2 = lab.fpmd(extra=DXR)
        log = d2.logtext()
        assert "adopted" in log and "DXR" in log, log
        assert static_routes(d2) == before, "routes differ after adoption"
        c1 = d2.counter("r1-eth0", "forwarded")
        wait_for(lambda: d2.counter("r1-eth0", "forwarded") >= c1 + 30,
                 what="XDP forwarding after adoption")
    except BaseException:
        stream.kill()
        stream.wait()
        raise
    sent, got, out = ping_result(stream, timeout=20)
    assert_lossless("ping", sent, got, 350, out)
    assert_kernel_flat(lab.r1, f0)
    assert d2.stop() == 0
