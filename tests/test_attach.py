# SPDX-License-Identifier: GPL-2.0-or-later
"""Whose XDP program runs, and one fpmd per bpffs-dir and interface.

fpmd recognises its program by id (every fpmd's program, and the
stranger's in tests/xdp_foreign.bpf.c, is called fpmd_xdp), reports at
once when it is replaced or removed, never attaches over a foreign
program, and says so in show interfaces, show routes and lookup. A
second fpmd on the same bpffs-dir or interface is refused and changes
nothing; a SIGKILLed one's maps and program are adopted.
"""
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from lib.lab import (BUILDDIR, FPMD, PY, ping, ping_result, ping_stream,
                     wait_for)
from lib.runner import read_text

FOREIGN = os.path.join(BUILDDIR, "tests", "xdp_foreign.bpf.o")
WAIT = 5.0  # the lab runs fpmd with --guard-interval 200


def diag(d, *extra):
    parts = [str(e) for e in extra]
    try:
        parts.append("interfaces: " + json.dumps(d.show("interfaces")))
    except Exception as e:  # the daemon may be gone
        parts.append(f"(fpmctl failed: {e})")
    parts.append("fpmd log:\n" + d.logtext()[d.log_start:])
    return "\n".join(parts)


def wait_until(d, fn, what, timeout=WAIT):
    try:
        return wait_for(fn, timeout=timeout, interval=0.05, what=what)
    except AssertionError as e:
        raise AssertionError(diag(d, e)) from None


def iface(d, name):
    return d.show("interfaces")[name]


def lookup(d, addr):
    return json.loads(d.ctl("--json", "lookup", addr).stdout)


def route_state(d, prefix):
    return d.show("routes")[prefix][0]["state"]


def prog_id(ns, ifname):
    """The id of the XDP program on ifname, as the kernel reports it."""
    info = json.loads(ns.run(f"ip -j -d link show dev {ifname}").stdout)[0]
    xdp = info.get("xdp")
    return xdp["prog"]["id"] if xdp and "prog" in xdp else 0


def start_ready(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    return d


def forwarded(d, ifname="r1-eth0"):
    return d.counter(ifname, "forwarded")


def lock_file(pin):
    esc = pin.strip("/").replace("-", "\\x2d").replace("/", "-")
    return f"/run/fpmd/{esc}.pid"


def other_fpmd(lab, name, pin, ifnames, **kw):
    """Another fpmd in r1 with its own sockets and log."""
    log = os.path.join(lab.tmp, name + ".log")
    args = [FPMD, "--netns", lab.r1.name, "-b", pin, "-s",
            os.path.join(lab.tmp, name + ".sock"), "--plugin-socket",
            os.path.join(lab.tmp, name + "-plugin.sock"), "--fpm-port",
            "2621", "--log", "file:" + log, "-D", "--guard-interval", "200"]
    for i in ifnames:
        args += ["-i", i]
    p = subprocess.Popen(args, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, **kw)
    return p, log


def finish(p, timeout=15):
    """Exit status of a process expected to exit by itself; one that is
    still running is stopped (and the test fails on its status)."""
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        return "still running"


# ---- item 6: a program replaced or removed under fpmd ---------------------


def test_foreign_program_reported_never_replaced(lab):
    d = start_ready(lab)
    assert ping(lab.h1, lab.H2_V4, count=3) == 3
    ours = prog_id(lab.r1, "r1-eth0")
    assert ours and iface(d, "r1-eth0")["xdpState"] == "attached", diag(d)
    stream = ping_stream(lab.h1, lab.H2_V4, 500)
    time.sleep(0.5)
    kfwd0 = lab.r1.snmp("Ip", "ForwDatagrams")

    # A stranger's program, with fpmd's program name, replaces fpmd's on
    # the interface facing h1.
    lab.r1.run(f"ip -force link set dev r1-eth0 xdpdrv obj {FOREIGN} "
               "sec xdp")
    theirs = prog_id(lab.r1, "r1-eth0")
    assert theirs and theirs != ours
    i = wait_until(d, lambda: (lambda i: i if i["xdpState"] ==
                               "detached-foreign" else None)(
                                   iface(d, "r1-eth0")),
                   "r1-eth0 reported detached-foreign")
    assert f"id {theirs}" in i["xdpReason"] and \
        "fpmd_xdp" in i["xdpReason"] and not i["txPort"], diag(d, i)
    log = d.logtext()[d.log_start:]
    assert f"replaced by XDP program id {theirs}" in log, diag(d)
    # Routes leaving by it are not "forwarding", and lookup says why.
    assert route_state(d, "172.16.101.0/24") == "egress-kernel", diag(d)
    lk = lookup(d, lab.H1_V4)
    assert not lk["fastPath"] and f"id {theirs}" in lk["reason"] and \
        "pass-egress-kernel" in lk["reason"], diag(d, lk)
    assert iface(d, "r1-eth1")["xdpState"] == "attached", diag(d)

    # Traffic is accounted for: the kernel forwards it, fpmd's counters
    # on r1-eth0 stop, and replies from h2 are passed on r1-eth1 because
    # their egress is not a tx port.
    c1 = d.counters()
    time.sleep(1.0)
    c2 = d.counters()
    assert c2["r1-eth0"]["forwarded"] == c1["r1-eth0"]["forwarded"], \
        diag(d, c1, c2)
    assert c2["r1-eth1"]["pass-egress-kernel"] > \
        c1["r1-eth1"]["pass-egress-kernel"], diag(d, c1, c2)
    assert lab.r1.snmp("Ip", "ForwDatagrams") > kfwd0

    # Never attached over it, however many checks have run since.
    time.sleep(1.0)
    assert prog_id(lab.r1, "r1-eth0") == theirs, diag(d)

    # Removed: fpmd re-attaches (nothing else is there) and says so.
    lab.r1.run("ip link set dev r1-eth0 xdp off")
    wait_until(d, lambda: iface(d, "r1-eth0")["xdpState"] == "attached",
               "r1-eth0 attached again")
    assert prog_id(lab.r1, "r1-eth0") == ours
    assert "re-attached" in d.logtext()[d.log_start:], diag(d)
    assert route_state(d, "172.16.101.0/24") == "forwarding", diag(d)
    sent, got, out = ping_result(stream)
    assert got == sent, diag(d, out)
    before = forwarded(d)
    assert ping(lab.h1, lab.H2_V4, count=5) == 5
    assert forwarded(d) - before >= 5, diag(d)


def test_xdp_off_is_reported_and_reattached(lab):
    d = start_ready(lab)
    ours = prog_id(lab.r1, "r1-eth1")
    lab.r1.run("ip link set dev r1-eth1 xdp off")
    wait_until(d, lambda: "program was removed" in
               d.logtext()[d.log_start:], "removal reported")
    wait_until(d, lambda: prog_id(lab.r1, "r1-eth1") == ours,
               "fpmd's program back on r1-eth1")
    assert iface(d, "r1-eth1")["xdpState"] == "attached", diag(d)
    # While down, the kernel sends no event: the periodic check finds it.
    lab.r1.run("ip link set dev r1-eth1 down && "
               "ip link set dev r1-eth1 xdp off")
    wait_until(d, lambda: prog_id(lab.r1, "r1-eth1") == ours,
               "re-attached while down")
    lab.r1.run("ip link set dev r1-eth1 up")
    lab.warm_kernel_neighbors()
    before = forwarded(d)
    assert ping(lab.h1, lab.H2_V4, count=5) == 5
    assert forwarded(d) - before >= 5, diag(d)


# ---- item 6: guards keep an egress out of the tx ports ---------------------


def test_guarded_egress_routes_not_forwarding(lab):
    d = start_ready(lab)
    # A group whose members all leave by r1-eth1, both resolved.
    d.ctl("neighbor", "add", "172.16.102.9", "lladdr", "02:00:00:00:00:09",
          "dev", "r1-eth1")
    d.ctl("nexthop", "add", "1", "via", lab.H2_V4, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "2", "via", "172.16.102.9", "dev", "r1-eth1")
    d.ctl("nexthop", "add", "10", "group", "1/2")
    d.ctl("route", "add", "10.99.0.0/24", "nhid", "10")
    assert route_state(d, "172.16.102.0/24") == "forwarding", diag(d)
    assert route_state(d, "10.99.0.0/24") == "forwarding", diag(d)
    assert lookup(d, "10.99.0.1")["fastPath"], diag(d)
    lab.r1.run("tc qdisc add dev r1-eth1 root tbf rate 100mbit burst 32kb "
               "latency 50ms")
    wait_until(d, lambda: not iface(d, "r1-eth1")["txPort"],
               "r1-eth1 out of the tx ports")
    assert route_state(d, "172.16.102.0/24") == "egress-kernel", diag(d)
    lk = lookup(d, lab.H2_V4)
    assert not lk["fastPath"] and "tbf" in lk["reason"], diag(d, lk)
    nh = d.show("nexthops")
    assert all(n["state"] == "egress-kernel" for n in nh.values()
               if n.get("interfaceName") == "r1-eth1"), diag(d, nh)
    assert route_state(d, "10.99.0.0/24") == "egress-kernel", diag(d)
    lk = lookup(d, "10.99.0.1")
    assert not lk["fastPath"] and "pass-egress-kernel" in lk["reason"], \
        diag(d, lk)
    lab.r1.run("tc qdisc del dev r1-eth1 root")
    wait_until(d, lambda: route_state(d, "172.16.102.0/24") == "forwarding",
               "forwarding again")
    assert lookup(d, lab.H2_V4)["fastPath"]


def test_suspended_interfaces_routes_not_forwarding(lab):
    d = start_ready(lab)
    lab.r1.run("nft add table inet filter && nft add chain inet filter "
               "forward '{ type filter hook forward priority 0; }' && "
               "nft add rule inet filter forward ip saddr 172.16.101.1 "
               "accept")
    try:
        wait_until(d, lambda: "suspended" in iface(d, "r1-eth1")["flags"],
                   "r1-eth1 suspended")
        for prefix, addr in (("172.16.102.0/24", lab.H2_V4),
                             ("172.16.101.0/24", lab.H1_V4)):
            assert route_state(d, prefix) == "egress-kernel", diag(d)
            lk = lookup(d, addr)
            assert not lk["fastPath"] and "netfilter" in lk["reason"], \
                diag(d, lk)
    finally:
        lab.r1.run("nft delete table inet filter", check=False)
    wait_until(d, lambda: route_state(d, "172.16.102.0/24") == "forwarding",
               "forwarding once netfilter is gone")


# ---- item 6: a veth peer in a namespace outside /run/netns -----------------


def test_veth_peer_in_unnamed_namespace(lab):
    # What container runtimes make: a namespace that only a process holds.
    holder = subprocess.Popen(["unshare", "--net", "sleep", "600"])
    try:
        wait_for(lambda: os.readlink(f"/proc/{holder.pid}/ns/net") !=
                 os.readlink("/proc/self/ns/net"), what="unshare")
        lab.r1.run(f"ip link add r1-eth2 type veth peer name c0 netns "
                   f"{holder.pid} && ip link set r1-eth2 up")
        inns = f"nsenter -t {holder.pid} -n"
        subprocess.run(f"{inns} ip link set c0 up && "
                       f"{inns} ethtool -K c0 gro off", shell=True,
                       check=True)
        d = lab.fpmd(ifnames=("r1-eth0", "r1-eth1", "r1-eth2"))
        i = iface(d, "r1-eth2")
        assert not i["txPort"] and "neither XDP nor GRO" in i["txReason"] \
            and "c0" in i["txReason"], diag(d, i)
        # Served by the tc path (doc/containers.md): a PEER egress.
        assert i["peerEgress"], diag(d, i)
        d.ctl("route", "add", "10.77.0.0/24", "dev", "r1-eth2")
        assert route_state(d, "10.77.0.0/24") == "forwarding", diag(d)
        # Decided from the peer itself: GRO on makes it a tx port.
        subprocess.run(f"{inns} ethtool -K c0 gro on", shell=True,
                       check=True)
        wait_until(d, lambda: iface(d, "r1-eth2")["txPort"],
                   "r1-eth2 a tx port once c0 has GRO")
        d.ctl("neighbor", "add", "10.77.0.1", "lladdr", "02:00:00:00:77:01",
              "dev", "r1-eth2")
        assert lookup(d, "10.77.0.1")["fastPath"], diag(d)
    finally:
        holder.kill()
        holder.wait()


def test_veth_peer_uninspectable_not_a_tx_port(lab):
    # A namespace no process lives in, bind-mounted outside /run/netns:
    # fpmd cannot look at the peer, so it must not assume it receives.
    path = os.path.join(lab.tmp, "netns-file")
    open(path, "w").close()
    subprocess.run(["unshare", f"--net={path}", "true"], check=True)
    try:
        lab.r1.run(f"ip link add r1-eth3 type veth peer name c1 netns "
                   f"{path} && ip link set r1-eth3 up")
        subprocess.run(["nsenter", f"--net={path}", "ip", "link", "set",
                        "c1", "up"], check=True)
        d = lab.fpmd(ifnames=("r1-eth0", "r1-eth1", "r1-eth3"))
        i = iface(d, "r1-eth3")
        assert not i["txPort"] and "cannot inspect veth peer c1" in \
            i["txReason"], diag(d, i)
        assert d.show("guards")["veth-peer"]["state"] == "kernel-path"
        d.ctl("route", "add", "10.78.0.0/24", "dev", "r1-eth3")
        assert route_state(d, "10.78.0.0/24") == "egress-kernel", diag(d)
    finally:
        lab.r1.run("ip link del r1-eth3", check=False)
        subprocess.run(["umount", path], check=False)


# ---- item 7: one fpmd per bpffs-dir and per interface ----------------------


def test_second_fpmd_same_pin_dir_refused(lab):
    d = start_ready(lab)
    ids = {i: prog_id(lab.r1, i) for i in ("r1-eth0", "r1-eth1")}
    pins = sorted(os.listdir(lab.pin))
    assert str(d.proc.pid) == read_text(lock_file(lab.pin)).split()[0]
    stream = ping_stream(lab.h1, lab.H2_V4, 300)
    time.sleep(0.3)
    fwd0 = forwarded(d)

    p, log = other_fpmd(lab, "second", lab.pin, ("r1-eth0", "r1-eth1"))
    rc = finish(p)
    text = read_text(log)
    assert rc == 1, f"second fpmd: {rc}\n{text}"
    assert f"in use by a running fpmd (pid {d.proc.pid}" in text, text
    assert "adopted" not in text and "attached" not in text, text

    # The first one is untouched: same programs, same pins, still serving.
    assert {i: prog_id(lab.r1, i) for i in ids} == ids
    assert sorted(os.listdir(lab.pin)) == pins
    assert str(d.proc.pid) == read_text(lock_file(lab.pin)).split()[0]
    sent, got, out = ping_result(stream)
    assert got == sent, diag(d, out)
    assert forwarded(d) - fwd0 >= sent // 2, diag(d)
    assert all(i["xdpState"] == "attached"
               for i in d.show("interfaces").values()), diag(d)


def test_second_fpmd_on_served_interface_refused(lab):
    d = start_ready(lab)
    ids = {i: prog_id(lab.r1, i) for i in ("r1-eth0", "r1-eth1")}
    other_pin = lab.pin + "-b"
    try:
        p, log = other_fpmd(lab, "second", other_pin, ("r1-eth1",))
        rc = finish(p)
        text = read_text(log)
        assert rc == 1, f"second fpmd: {rc}\n{text}"
        assert "iface r1-eth1: served by" in text and \
            f"another fpmd, pid {d.proc.pid}" in text and \
            lab.pin in text, text
        # Nothing touched: no pins of its own, no attach, no lock left.
        assert not os.path.exists(other_pin)
        assert not os.path.exists(lock_file(other_pin))
        assert {i: prog_id(lab.r1, i) for i in ids} == ids
        before = forwarded(d)
        assert ping(lab.h1, lab.H2_V4, count=5) == 5
        assert forwarded(d) - before >= 5, diag(d)
    finally:
        shutil.rmtree(other_pin, ignore_errors=True)


# An fpmd before 0.1 (up to e0eaa19) named the default instance's lock file
# after the escaped bpffs-dir, as every other: it opened it O_CREAT, took
# flock(LOCK_EX | LOCK_NB), wrote "pid\nbpffs-dir\n" and held it for its
# life. This stand-in does exactly that, then waits for its stdin to close.
OLD_FPMD_LOCK = r"""
import fcntl, os, sys
path, pin = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.ftruncate(fd, 0)
os.write(fd, f"{os.getpid()}\n{pin}\n".encode())
print("locked", flush=True)
sys.stdin.read()
"""
DEFAULT_PIN = "/sys/fs/bpf/fpmd"
OLD_LOCK = "/run/fpmd/sys-fs-bpf-fpmd.pid"   # lock_file(DEFAULT_PIN)


def test_running_fpmd_before_0_1_refused(lab):
    """Upgrading while an fpmd before 0.1 runs on the default bpffs-dir:
    it holds /run/fpmd/sys-fs-bpf-fpmd.pid, not /run/fpmd/fpmd.pid, and
    the new fpmd must refuse as it does for a current one, naming its pid
    and that file, and change nothing. The old fpmd is a stand-in (a
    Python process taking the same flock on the same file with the same
    contents, OLD_FPMD_LOCK): building the old fpmd from history would
    need that commit's build dependencies. Once the old one is gone, its
    file left unlocked (SIGKILL), the new fpmd starts there."""
    if any(os.path.exists(p) for p in (DEFAULT_PIN, OLD_LOCK,
                                       "/run/fpmd/fpmd.pid")):
        pytest.skip("a default fpmd instance exists on this machine")
    os.makedirs("/run/fpmd", exist_ok=True)
    conf = lab.write_config(lab.config_doc(("r1-eth0",),
                                           bpffs_dir=DEFAULT_PIN))
    old = subprocess.Popen([PY, "-c", OLD_FPMD_LOCK, OLD_LOCK, DEFAULT_PIN],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True)
    try:
        assert old.stdout.readline().strip() == "locked"
        d = lab.fpmd(config=conf, wait=False)
        rc = finish(d.proc)
        text = d.logtext()[d.log_start:]
        assert rc == 1, f"new fpmd: {rc}\n{text}"
        assert (f"bpffs-dir {DEFAULT_PIN} is in use by a running fpmd "
                f"(pid {old.pid}, lock file {OLD_LOCK}): refusing to "
                "start; nothing was changed") in text, text
        # Nothing touched: no pins, no program, no lock file of its own,
        # the old one's file as it was.
        assert not os.path.exists(DEFAULT_PIN)
        assert prog_id(lab.r1, "r1-eth0") == 0
        assert not os.path.exists("/run/fpmd/fpmd.pid")
        assert read_text(OLD_LOCK) == f"{old.pid}\n{DEFAULT_PIN}\n"

        old.kill()                      # the file stays, unlocked
        old.wait(10)
        d = lab.fpmd(config=conf)
        assert prog_id(lab.r1, "r1-eth0") != 0, d.logtext()
        assert read_text("/run/fpmd/fpmd.pid").split()[0] == \
            str(d.proc.pid)
        d.stop()
        assert d.proc.returncode == 0, d.logtext()
        assert not os.path.exists(DEFAULT_PIN)
    finally:
        if old.poll() is None:
            old.kill()
            old.wait(10)
        for d in lab.daemons:
            d.stop()
        if os.path.exists(OLD_LOCK):
            os.unlink(OLD_LOCK)
        shutil.rmtree(DEFAULT_PIN, ignore_errors=True)


def test_sigkilled_fpmd_is_adopted_and_replaced(lab):
    d = start_ready(lab)
    old = prog_id(lab.r1, "r1-eth0")
    d.stop(signal.SIGKILL)
    # Its lock file stays, unlocked; its program keeps forwarding.
    assert os.path.exists(lock_file(lab.pin))
    d2 = lab.fpmd()
    assert "maps adopted" in d2.logtext()[d2.log_start:], diag(d2)
    new = prog_id(lab.r1, "r1-eth0")
    assert new and new != old, diag(d2)
    assert str(d2.proc.pid) == read_text(lock_file(lab.pin)).split()[0]
    d2.stop()
    assert not os.path.exists(lock_file(lab.pin))


def test_inherited_descriptors_closed(lab):
    # A parent holding its own lock file must not lend it to the daemon.
    path = os.path.join(lab.tmp, "parent.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    p, log = other_fpmd(lab, "child", lab.pin, ("r1-eth0",), pass_fds=(fd,))
    try:
        wait_for(lambda: "started:" in read_text(log) or p.poll() is not None,
                 timeout=10, what="fpmd started")
        assert p.poll() is None, read_text(log)
        held = [os.readlink(f"/proc/{p.pid}/fd/{n}")
                for n in os.listdir(f"/proc/{p.pid}/fd")]
        assert path not in held, held
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        os.close(fd)
