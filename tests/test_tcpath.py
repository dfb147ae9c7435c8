# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd's tc program for container veths (fpmd/kernel/tc_path.c,
doc/containers.md): where it is attached, how it follows the veth peers'
settings, restarts and the tc-ingress guard. Packets through it are
tested with runtime-style containers elsewhere; here the lab's h1/h2 play
the containers' side of the veths.

Lab(receiver_gro=False): h1-eth0 and h2-eth0 have neither XDP nor GRO, so
r1-eth0 and r1-eth1 are PEER egresses. `ethtool -K h2-eth0 tx on` (what a
container's veth has by default) makes r1-eth1 TC_ONLY: no XDP there.
"""
import json
import os
import re
import subprocess

import pytest

from lib.lab import FPMD, REPO, Lab, sh, wait_for, xdp_attached
from lib.lab import fpmd_diag as diag
from lib.metrics import parse, scrape, val

YANG = os.path.join(REPO, "yang", "fpmd.yang")
WAIT = 5.0  # the lab runs fpmd with --guard-interval 200
TCX_INGRESS = 46


def iface(d, name):
    return d.show("interfaces")[name]


def wait_until(d, fn, what):
    try:
        return wait_for(fn, timeout=WAIT, interval=0.05, what=what)
    except AssertionError as e:
        raise AssertionError(diag(d, e)) from None


# The kernel's own view: BPF_PROG_QUERY on tcx ingress, in r1's namespace.
QUERY = r"""
import ctypes, socket, sys
class A(ctypes.Structure):
    _fields_ = [("target", ctypes.c_uint32), ("type", ctypes.c_uint32),
                ("qflags", ctypes.c_uint32), ("aflags", ctypes.c_uint32),
                ("ids", ctypes.c_uint64), ("cnt", ctypes.c_uint32),
                ("pad", ctypes.c_uint8 * 64)]
ids = (ctypes.c_uint32 * 64)()
a = A(socket.if_nametoindex(sys.argv[1]), %d, 0, 0,
      ctypes.addressof(ids), 64)
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(321, 16, ctypes.byref(a), ctypes.sizeof(a)):
    sys.exit("BPF_PROG_QUERY: errno %%d" %% ctypes.get_errno())
print(" ".join(str(ids[k]) for k in range(a.cnt)))
""" % TCX_INGRESS


def route_state(d, prefix):
    return d.show("routes")[prefix][0]["state"]


def tcx_progs(lab, ifname):
    """Program ids attached at tcx ingress of r1's ifname."""
    path = os.path.join(lab.tmp, "tcx_query.py")
    with open(path, "w") as f:
        f.write(QUERY)
    out = lab.r1.run(f"/usr/bin/python3 {path} {ifname}").stdout.split()
    return [int(x) for x in out]


def pinned_link(lab, ifname):
    """bpftool's view of the pinned tcx link, or None."""
    path = f"{lab.pin}/tc_{ifname}"
    # fpmd may be re-pinning it (removed, then a new link): gone is None.
    r = sh(f"bpftool -j link show pinned {path}", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def tc_on(lab, ifname):
    """The pinned link's program is attached at tcx ingress of ifname."""
    link = pinned_link(lab, ifname)
    return link is not None and link["prog_id"] in tcx_progs(lab, ifname)


def container_lab():
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    lab = Lab(receiver_gro=False)
    lab.h2.run("ethtool -K h2-eth0 tx on >/dev/null")
    return lab


def test_attach_follows_modes():
    """PEER egresses bring tc onto every ingress; a peer with tx
    checksumming makes its host veth TC_ONLY (no XDP); both undo when the
    peers change, and the pins follow."""
    lab = container_lab()
    try:
        d = lab.fpmd(extra=["--metrics"])
        wait_until(d, lambda: iface(d, "r1-eth1")["path"] == "tc",
                   "r1-eth1 TC_ONLY")
        m, _ = parse(scrape(lab.r1))
        assert val(m, "fpmd_interface_tc_attached", interface="r1-eth1",
                   path="tc") == 1, m["fpmd_interface_tc_attached"]
        assert val(m, "fpmd_interface_tc_attached", interface="r1-eth0",
                   path="xdp") == 1, m["fpmd_interface_tc_attached"]
        assert val(m, "fpmd_interface_peer_egress", interface="r1-eth1") == 1
        assert val(m, "fpmd_guard_state", guard="veth-peer",
                   state="tc-path") == 1, m["fpmd_guard_state"]
        e0, e1 = iface(d, "r1-eth0"), iface(d, "r1-eth1")
        assert e0["path"] == "xdp" and e0["tcAttached"], diag(d, e0)
        assert e1["tcAttached"] and "tc-only" in e1["flags"], diag(d, e1)
        assert e0["peerEgress"] and e1["peerEgress"], diag(d)
        assert "peer-egress" in e0["flags"], diag(d, e0)
        assert xdp_attached(lab.r1, "r1-eth0"), diag(d)
        assert not xdp_attached(lab.r1, "r1-eth1"), diag(d)
        assert tc_on(lab, "r1-eth0") and tc_on(lab, "r1-eth1"), diag(d)
        g = d.show("guards")
        assert g["veth-peer"]["state"] == "tc-path", diag(d, g)
        assert "served by the tc path" in g["veth-peer"]["detail"], diag(d)
        # fpmd's own tc program is no foreign tc-ingress program.
        assert g["tc-ingress"]["state"] == "clear", diag(d, g)
        assert "kernel-path-ipv4" not in e0["flags"], diag(d, e0)
        assert "peer h2-eth0 has tx checksumming on" in d.logtext(), diag(d)
        # The state tree says the same, and validates against the model.
        r = d.ctl("--json", "show", "state")
        doc = os.path.join(lab.tmp, "state.json")
        with open(doc, "w") as f:
            f.write(r.stdout)
        y = sh(f"yanglint -f json -t data {YANG} {doc}", check=False)
        assert y.returncode == 0, f"state does not validate: {y.stderr}"
        st = {i["name"]: i for i in
              json.loads(r.stdout)["fpmd:fpmd"]["state"]["interface"]}
        assert st["r1-eth1"]["path"] == "tc", st["r1-eth1"]
        assert st["r1-eth1"]["attached"] is False, st["r1-eth1"]
        assert st["r1-eth0"]["tc-attached"] is True, st["r1-eth0"]
        assert st["r1-eth0"]["peer-egress"] is True, st["r1-eth0"]

        # The container turns tx checksumming off: XDP again on r1-eth1.
        lab.h2.run("ethtool -K h2-eth0 tx off >/dev/null")
        wait_until(d, lambda: iface(d, "r1-eth1")["path"] == "xdp",
                   "r1-eth1 back on XDP")
        assert xdp_attached(lab.r1, "r1-eth1"), diag(d)
        # Still PEER egresses: tc stays on the XDP ingresses.
        assert tc_on(lab, "r1-eth1"), diag(d)

        # Both peers can receive redirects: no PEER egress, no tc anywhere.
        lab.h1.run("ethtool -K h1-eth0 gro on >/dev/null")
        lab.h2.run("ethtool -K h2-eth0 gro on >/dev/null")
        wait_until(d, lambda: not any(
            iface(d, n)["tcAttached"] for n in ("r1-eth0", "r1-eth1")),
            "tc detached once no egress needs it")
        for n in ("r1-eth0", "r1-eth1"):
            assert pinned_link(lab, n) is None, diag(d)
            assert tcx_progs(lab, n) == [], diag(d)
            assert iface(d, n)["txPort"], diag(d)
        assert d.show("guards")["veth-peer"]["state"] == "clear", diag(d)
    finally:
        lab.cleanup()


def test_carrier_clears_peer_flag():
    """bpf_redirect_peer into a down peer 'succeeds' and the kernel drops:
    NO-CARRIER on the host veth clears the PEER flag at once."""
    lab = container_lab()
    try:
        d = lab.fpmd()
        wait_until(d, lambda: "peer-egress" in iface(d, "r1-eth1")["flags"],
                   "r1-eth1 a PEER egress")
        lab.routes_and_neighbors(d)
        # A route into the "container" is in the fast path (fpmctl show
        # routes), through the tc path.
        assert route_state(d, "172.16.102.0/24") == "forwarding", diag(d)
        lk = json.loads(d.ctl("--json", "lookup", lab.H2_V4).stdout)
        assert lk["fastPath"] and lk["verdict"] == "forwarded-peer", \
            diag(d, lk)
        lab.h2.run("ip link set h2-eth0 down")
        wait_until(d, lambda: not iface(d, "r1-eth1")["operUp"],
                   "r1-eth1 down (no carrier)")
        assert "peer-egress" not in iface(d, "r1-eth1")["flags"], diag(d)
        assert route_state(d, "172.16.102.0/24") == "egress-down", diag(d)
        lab.h2.run("ip link set h2-eth0 up")
        wait_until(d, lambda: "peer-egress" in iface(d, "r1-eth1")["flags"],
                   "PEER again with carrier")
        wait_until(d, lambda: route_state(d, "172.16.102.0/24") ==
                   "forwarding", "forwarding again")
    finally:
        lab.cleanup()


def test_restart_swaps_in_place():
    """A restart keeps the pinned tcx links (like XDP) and swaps the new
    program in with bpf_link_update: same link id, new program id."""
    lab = container_lab()
    try:
        d = lab.fpmd(extra=["--keep-forwarding"])
        wait_until(d, lambda: tc_on(lab, "r1-eth0") and
                   tc_on(lab, "r1-eth1"), "tc attached")
        before = {n: pinned_link(lab, n) for n in ("r1-eth0", "r1-eth1")}
        d.stop()
        for n in ("r1-eth0", "r1-eth1"):
            assert tcx_progs(lab, n) == [before[n]["prog_id"]], n
        d = lab.fpmd()
        wait_until(d, lambda: iface(d, "r1-eth1")["tcAttached"],
                   "tc adopted")
        for n in ("r1-eth0", "r1-eth1"):
            after = pinned_link(lab, n)
            assert after["id"] == before[n]["id"], diag(d, before, after)
            assert after["prog_id"] != before[n]["prog_id"], diag(d, after)
            assert tcx_progs(lab, n) == [after["prog_id"]], diag(d, n)
        assert d.show("guards")["tc-ingress"]["state"] == "clear", diag(d)
        # A clean stop without keep-forwarding takes them away.
        d.stop()
        for n in ("r1-eth0", "r1-eth1"):
            assert tcx_progs(lab, n) == [], n
    finally:
        lab.cleanup()


def test_removed_link_reattached():
    """Someone detaches fpmd's tc program: fpmd notices, logs, re-attaches."""
    lab = container_lab()
    try:
        d = lab.fpmd()
        wait_until(d, lambda: tc_on(lab, "r1-eth0"), "tc attached")
        old = pinned_link(lab, "r1-eth0")["id"]
        r = sh(f"bpftool link detach id {old}", check=False)
        if r.returncode:
            pytest.skip(f"bpftool cannot detach links here: {r.stderr}")
        wait_until(d, lambda: tc_on(lab, "r1-eth0") and
                   (pinned_link(lab, "r1-eth0") or {}).get("id", old) != old,
                   "re-attached")
        assert "tc program was removed" in d.logtext(), diag(d)
    finally:
        lab.cleanup()


def test_foreign_tc_ingress_still_guarded():
    """A tc filter of someone else's on an ingress still sends its traffic
    to the kernel, next to fpmd's own program."""
    lab = container_lab()
    try:
        d = lab.fpmd()
        wait_until(d, lambda: tc_on(lab, "r1-eth0"), "tc attached")
        lab.r1.run("tc qdisc add dev r1-eth0 clsact && tc filter add dev "
                   "r1-eth0 ingress protocol ip pref 5 u32 match u32 0 0")
        wait_until(d, lambda: "kernel-path-ipv4" in
                   iface(d, "r1-eth0")["flags"], "foreign filter guarded")
        g = d.show("guards")["tc-ingress"]
        assert g["state"] == "kernel-path" and "r1-eth0" in g["detail"], \
            diag(d, g)
        assert "r1-eth1" not in g["detail"], diag(d, g)
    finally:
        lab.cleanup()


def test_container_path_off():
    """--no-container-path: today's behaviour, XDP everywhere, no tc."""
    lab = container_lab()
    try:
        d = lab.fpmd(extra=["--no-container-path"])
        wait_until(d, lambda: d.show("guards")["veth-peer"]["state"] ==
                   "kernel-path", "veth-peer kernel path")
        lab.routes_and_neighbors(d)
        assert route_state(d, "172.16.102.0/24") == "egress-kernel", diag(d)
        for n in ("r1-eth0", "r1-eth1"):
            i = iface(d, n)
            assert i["path"] == "xdp" and not i["tcAttached"], diag(d, i)
            assert not i["peerEgress"] and not i["txPort"], diag(d, i)
            assert xdp_attached(lab.r1, n), diag(d)
            assert tcx_progs(lab, n) == [] and not pinned_link(lab, n)
    finally:
        lab.cleanup()


def test_reload_turns_container_path_off_and_on():
    """behaviour/container-path follows a reload both ways."""
    lab = container_lab()
    try:
        path = lab.write_config(lab.config_doc())
        d = lab.fpmd(config=path)
        wait_until(d, lambda: iface(d, "r1-eth1")["path"] == "tc",
                   "r1-eth1 TC_ONLY")
        lab.write_config(lab.config_doc(behaviour={
            "guard-interval": 200, "container-path": False}))
        d.ctl("reload")
        wait_until(d, lambda: iface(d, "r1-eth1")["path"] == "xdp" and
                   not iface(d, "r1-eth0")["tcAttached"], "tc path off")
        for n in ("r1-eth0", "r1-eth1"):
            assert xdp_attached(lab.r1, n), diag(d)
            assert tcx_progs(lab, n) == [] and not pinned_link(lab, n)
        lab.write_config(lab.config_doc())
        d.ctl("reload")
        wait_until(d, lambda: iface(d, "r1-eth1")["path"] == "tc",
                   "TC_ONLY again")
        assert tc_on(lab, "r1-eth0") and tc_on(lab, "r1-eth1"), diag(d)
        assert not xdp_attached(lab.r1, "r1-eth1"), diag(d)
    finally:
        lab.cleanup()


def delete_r1_eth1(lab, d):
    """The container h2 goes away with its veth, once fpmd serves it by
    tc: the kernel drops the tcx link with the device, fpmd the pin."""
    wait_until(d, lambda: tc_on(lab, "r1-eth1"), "tc on r1-eth1")
    lab.r1.run("ip link del r1-eth1")
    wait_until(d, lambda: pinned_link(lab, "r1-eth1") is None,
               "pin of the deleted interface removed")


def test_interface_deleted_pin_removed():
    """The container goes away with its veth: the kernel drops the tcx
    link with the device, fpmd removes the pin and forgets the modes."""
    lab = container_lab()
    try:
        d = lab.fpmd()
        delete_r1_eth1(lab, d)
        i = iface(d, "r1-eth1")
        assert not i["tcAttached"] and not i["peerEgress"], diag(d, i)
        # r1-eth0 still has a PEER egress itself (h1-eth0): tc stays there.
        assert tc_on(lab, "r1-eth0"), diag(d)
    finally:
        lab.cleanup()


def test_new_container_veth_never_sees_xdp():
    """A container's veth that appears while fpmd runs (its peer with tx
    checksumming on, as veths are created) is served by the tc path from
    the start: XDP, which would lose the container's partial checksums,
    is never attached to it, not even for the guard interval fpmd used to
    take to notice the peer."""
    lab = container_lab()
    try:
        d = lab.fpmd()
        delete_r1_eth1(lab, d)
        # Samples of r1-eth1 from before it exists until fpmd settled.
        watch = subprocess.Popen(
            ["ip", "netns", "exec", lab.r1.name, "sh", "-c",
             "i=0; while [ $i -lt 400 ]; do i=$((i+1)); "
             "ip link show dev r1-eth1 2>/dev/null; done"],
            stdout=subprocess.PIPE, text=True)
        try:
            lab.r1.run("ip link add r1-eth1 type veth peer name h2-eth0 "
                       f"netns {lab.h2.name} && ip link set r1-eth1 up")
            lab.h2.run("ip link set h2-eth0 up")
            wait_until(d, lambda: tc_on(lab, "r1-eth1") and
                       iface(d, "r1-eth1")["path"] == "tc",
                       "the new r1-eth1 on the tc path")
            out, _ = watch.communicate(timeout=120)
        finally:
            if watch.poll() is None:
                watch.kill()
                watch.wait()
        seen = [ln for ln in out.splitlines() if "r1-eth1" in ln]
        assert seen, "r1-eth1 never sampled"
        xdp = [ln for ln in seen if re.search(r"\bxdp(generic)?\b", ln)]
        assert not xdp, diag(d, f"XDP on the new container veth in "
                             f"{len(xdp)} of {len(seen)} samples")
        assert not xdp_attached(lab.r1, "r1-eth1"), diag(d)
        # The container turns tx checksumming off: XDP, as for any veth.
        lab.h2.run("ethtool -K h2-eth0 tx off >/dev/null")
        wait_until(d, lambda: iface(d, "r1-eth1")["path"] == "xdp",
                   "r1-eth1 on XDP")
        assert xdp_attached(lab.r1, "r1-eth1"), diag(d)
    finally:
        lab.cleanup()
