# SPDX-License-Identifier: GPL-2.0-or-later
"""What a test run must not leave on the machine: network namespaces, BPF
pins, FRR pathspace directories and the processes tests start: the
daemons by name (fpmd, FRR's, bird, prometheus) wherever they run, and
any process in a network namespace other than the host's (a ping,
iperf3 or a container's holder in a test namespace). `snapshot()` before
the run, `new_since(snap)` after it: the difference is a leftover
(conftest fails the run on one when FPMD_CHECK_LEFTOVERS=1, as
scripts/test.sh sets; another test session started meanwhile would
count too, a shell's commands on the host would not).
"""
import os

BPFFS = "/sys/fs/bpf"
# Daemons tests start (comm, 15 characters at most), in any namespace.
COMMS = {"fpmd", "fpmd-nosan", "zebra", "staticd", "mgmtd", "bgpd",
         "ospfd", "ospf6d", "watchfrr", "bird", "prometheus", "trafficgen"}
FRR_DIRS = ("/var/run/frr", "/etc/frr")
# The FRR roots of other Debian suites (scripts/frr-root.sh): their
# pathspaces, and the mount points of the labs' temp dirs in them.
FRR_ROOTS = os.environ.get("FPMD_FRR_ROOTS", "/var/cache/fpmd/frr-roots")
ROOT_DIRS = ("/run/frr", "/etc/frr", "/tmp")


def _entries(path):
    try:
        return {os.path.join(path, e) for e in os.listdir(path)}
    except OSError:
        return set()


def _procs():
    host_net = os.readlink("/proc/self/ns/net")
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            net = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            continue
        if comm in COMMS or net != host_net:
            out.add(f"{comm}[{pid}]")
    return out


def snapshot():
    frr = set()
    dirs = list(FRR_DIRS)
    for root in _entries(FRR_ROOTS):
        if os.path.isdir(root) and not root.endswith(".new"):
            dirs += [root + d for d in ROOT_DIRS]
    for d in dirs:
        frr |= {p for p in _entries(d) if os.path.isdir(p)}
    return {
        "network namespace": _entries("/run/netns"),
        "BPF pin": _entries(BPFFS),
        "FRR pathspace directory": frr,
        "process": _procs(),
    }


def new_since(snap):
    """[(kind, name)] present now and not in snap."""
    now = snapshot()
    return [(kind, name) for kind in now
            for name in sorted(now[kind] - snap[kind])]
