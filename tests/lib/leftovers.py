# SPDX-License-Identifier: GPL-2.0-or-later
"""What a test run must not leave on the machine: network namespaces, BPF
pins, FRR pathspace directories and the processes tests start (fpmd,
FRR's daemons, bird, prometheus, traffic tools). `snapshot()` before the
run, `new_since(snap)` after it: the difference is a leftover (conftest
fails the run on one when FPMD_CHECK_LEFTOVERS=1, as scripts/test.sh
sets; runs started meanwhile by someone else would count too).
"""
import os

BPFFS = "/sys/fs/bpf"
# Process names (comm, 15 characters at most) tests start.
COMMS = {"fpmd", "fpmd-nosan", "fpmctl", "zebra", "staticd", "mgmtd",
         "bgpd", "ospfd", "ospf6d", "watchfrr", "bird", "prometheus",
         "iperf3", "ping", "trafficgen", "tcpdump", "unshare", "sleep"}
FRR_DIRS = ("/var/run/frr", "/etc/frr")


def _entries(path):
    try:
        return {os.path.join(path, e) for e in os.listdir(path)}
    except OSError:
        return set()


def _procs():
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm in COMMS:
            out.add(f"{comm}[{pid}]")
    return out


def snapshot():
    frr = set()
    for d in FRR_DIRS:
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
