# SPDX-License-Identifier: GPL-2.0-or-later
"""A hitless restart follows what changed while the new fpmd adopted.

fpmd subscribes to link and neighbor events before it loads or adopts
the maps. The new fpmd stops itself (FPMD_DEBUG_STOP_AFTER, a debug hook:
once adoption is fast the window lasts ~0.1 s, too short to hit from
outside on a loaded machine) right after it opened the pinned maps, before
it reads them back; the test changes the kernel's state and lets it go
on. Then packets must leave as the kernel is now, by XDP.
Also the start-up phase log that says where a restart's time goes.
"""
import os
import re
import signal
import time

import pytest

from lib.lab import finish, ping, ping_stream, sh, wait_for
from lib.traffic import fwd4

DST = "10.99.0.1"      # on h2's loopback, routed via h2
NEW_MAC = "02:00:00:00:99:99"


def neighbor_mac_changes(lab):
    # h2 gets a new MAC; the kernel of r1 learns it (as ARP would).
    lab.h2.run(f"ip link set h2-eth0 address {NEW_MAC}")
    lab.r1.run(f"ip neigh replace {lab.H2_V4} lladdr {NEW_MAC} "
               f"dev r1-eth1 nud reachable")


def egress_goes_down(lab):
    lab.r1.run("ip link set r1-eth1 down")


def egress_recreated(lab):
    # A container restart: the veth goes away and comes back with a new
    # ifindex, addresses and routes.
    lab.r1.run("ip link del r1-eth1")
    sh(f"ip link add r1-eth1 netns {lab.r1.name} type veth peer name "
       f"h2-eth0 netns {lab.h2.name}")
    lab.r1.run(f"ip link set r1-eth1 up && "
               f"ip addr add {lab.R1_V4_1}/24 dev r1-eth1 && "
               f"ip route replace 10.99.0.0/24 via {lab.H2_V4}")
    lab.h2.run(f"ip link set h2-eth0 up && "
               f"ip addr add {lab.H2_V4}/24 dev h2-eth0 && "
               f"ip route add default via {lab.R1_V4_1} && "
               f"ethtool -K h2-eth0 tx off gro on >/dev/null")
    lab.h2.run(f"ping -c1 -W1 {lab.R1_V4_1} >/dev/null", check=False)


def neighbor_flood_and_mac_change(lab):
    # More events than the socket holds (4 MiB, ~5k neighbor messages):
    # fpmd must notice the overrun and re-read everything. First events
    # that carry h2's old MAC: what is still queued after an overrun is
    # older than the re-read, and must not be applied after it.
    mac = lab.h2.mac("h2-eth0")
    for nud in ("stale", "reachable"):
        lab.r1.run(f"ip neigh replace {lab.H2_V4} lladdr {mac} dev r1-eth1 "
                   f"nud {nud}")
    cmds = "".join(f"neigh replace 2001:db8:102::{i:x} lladdr "
                   f"02:00:00:01:{i >> 8 & 0xff:02x}:{i & 0xff:02x} "
                   f"dev r1-eth1 nud permanent\n"
                   for i in range(0x1000, 0x1000 + 12000))
    path = os.path.join(lab.tmp, "neigh.batch")
    with open(path, "w") as f:
        f.write(cmds)
    lab.r1.run(f"ip -batch {path}", timeout=120)
    neighbor_mac_changes(lab)


# (case, change while the new fpmd adopts, XDP forwards afterwards)
CASES = [
    ("neighbor-mac", neighbor_mac_changes, True),
    ("egress-down", egress_goes_down, False),
    ("egress-recreated", egress_recreated, True),
    ("events-overrun", neighbor_flood_and_mac_change, True),
]


def setup_router(lab):
    d = lab.fpmd(extra=("--keep-forwarding",))
    d.ctl("route", "add", "172.16.101.0/24", "dev", "r1-eth0")
    d.ctl("route", "add", "172.16.102.0/24", "dev", "r1-eth1")
    lab.h2.run(f"ip addr add {DST}/32 dev lo")
    lab.r1.run(f"ip route add 10.99.0.0/24 via {lab.H2_V4}")
    # The neighbors are the kernel's (ARP), as in production.
    d.ctl("route", "add", "10.99.0.0/24", "via", lab.H2_V4, "dev",
          "r1-eth1")
    lab.warm_kernel_neighbors()
    assert ping(lab.h1, DST, 3, 0.05) == 3
    return d


# The phase after which the maps are open and not yet read back.
STOP_AFTER = "fib_open (DIR-24-8, IPv6)"


def proc_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def start_frozen_in_adoption(lab, d):
    """A new fpmd, stopped in adoption (it stops itself)."""
    os.rename(d.log, d.log + ".1")
    d2 = lab.fpmd(wait=False, env={"FPMD_DEBUG_STOP_AFTER": STOP_AFTER})
    wait_for(lambda: d2.proc.poll() is not None or
             proc_state(d2.proc.pid) == "T",
             timeout=60, what="the new fpmd stopping in adoption")
    assert d2.proc.poll() is None, d2.logtext()
    log = d2.logtext()
    assert "stopping after" in log and "started:" not in log, log
    return d2


@pytest.mark.parametrize("case,change,xdp_after",
                         CASES, ids=[c[0] for c in CASES])
def test_restart_follows_changes_during_adoption(lab, case, change,
                                                 xdp_after):
    d = setup_router(lab)
    stream = ping_stream(lab.h1, DST, 400)
    try:
        time.sleep(0.5)
        assert d.stop() == 0
        d2 = start_frozen_in_adoption(lab, d)
        try:
            change(lab)
        finally:
            d2.proc.send_signal(signal.SIGCONT)
        d2.wait_ready(timeout=60)
    finally:
        # The stream is only the traffic a restart runs under: the change
        # itself loses packets until fpmd follows it.
        stream.send_signal(signal.SIGINT)
        finish(stream, timeout=10)
    log = d2.logtext()

    n = 10
    c0, k0 = d2.counters(), fwd4(lab.r1)
    got = ping(lab.h1, DST, n, 0.05)
    c1, k1 = d2.counters(), fwd4(lab.r1)
    fwd = c1["r1-eth0"]["forwarded"] - c0["r1-eth0"]["forwarded"]
    tx = c1["r1-eth1"]["tx"] - c0["r1-eth1"]["tx"]
    nh = [v for v in d2.show("nexthops").values()
          if v.get("ip") == lab.H2_V4]
    assert len(nh) == 1, nh
    if xdp_after:
        # h2 takes only frames for its MAC: replies mean the new MAC, or
        # the new ifindex, is in the maps.
        assert got == n, f"{case}: {got}/{n} replies after the restart"
        assert fwd >= n and k1 == k0, \
            f"{case}: XDP forwarded {fwd}, the kernel {k1 - k0}: {log}"
        assert nh[0]["state"] == "forwarding", nh
        assert nh[0]["ifindex"] == lab.r1.ifindex("r1-eth1"), nh
    else:
        # Nothing goes out of the down link; the kernel path answers.
        assert tx == 0 and fwd == 0, \
            f"{case}: {fwd} forwarded, {tx} sent to a down link"
        assert nh[0]["state"] != "forwarding", nh
    if case == "events-overrun":
        assert "events overrun during start-up" in log, log[-3000:]


def test_startup_phases_logged(lab):
    """-D shows where start-up time goes, phase by phase, and the total
    (fresh, then adopting)."""
    d = lab.fpmd(extra=("--keep-forwarding",))
    for adopted, want in ((False, "maps created"), (True, "maps adopted")):
        # The phases are logged right after READY, which can come after
        # the control socket that wait_ready() saw answer.
        wait_for(lambda: "startup: ready in" in d.logtext()[d.log_start:],
                 timeout=10, what="startup: ready in")
        log = d.logtext()[d.log_start:]
        phases = dict(re.findall(r"startup: (.+?) (\d+\.\d) ms, heap [-+]\d+ KiB\n", log))
        for p in ("config (YANG)", "nl_events_open, watches",
                  "bpf_load (maps, BTF, verifier)", "attach",
                  "neighbor dump", "listeners"):
            assert p in phases, f"phase {p} not logged: {log}"
        # The event socket is opened before the maps are loaded.
        names = list(phases)
        assert names.index("nl_events_open, watches") < \
            names.index("bpf_load (maps, BTF, verifier)"), names
        if adopted:
            assert "rib_adopt" in phases, names
        m = re.search(r"startup: ready in (\d+) ms \((.+?)\)", log)
        assert m and m.group(2) == want, log
        assert int(m.group(1)) >= sum(map(float, phases.values())) - 1
        if not adopted:
            assert d.stop() == 0
            # Adoption takes seconds while DIR-24-8 reopens every part.
            d = lab.fpmd(wait=False).wait_ready(timeout=60)
