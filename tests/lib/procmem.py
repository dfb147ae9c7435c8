# SPDX-License-Identifier: GPL-2.0-or-later
"""What a process costs: the BPF map memory it holds, its RSS and its CPU
time.

Map memory is the kernel's own accounting: the sum of `memlock` over every
BPF map file descriptor the process holds, as /proc/PID/fdinfo reports it
(the number the memory targets are stated in). A map held through two
descriptors counts once (by map_id).
"""
import os


def _fdinfo(pid, fd):
    out = {}
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}") as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k.strip()] = v.strip()
    except OSError:
        return None
    return out


def maps(pid):
    """{map_id: {"type", "name"?, "memlock", "max_entries"}} for every BPF
    map fd of pid."""
    found = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target != "anon_inode:bpf-map":
            continue
        info = _fdinfo(pid, fd)
        if not info or "map_id" not in info:
            continue
        found[int(info["map_id"])] = {
            "type": int(info.get("map_type", 0)),
            "memlock": int(info.get("memlock", 0)),
            "max_entries": int(info.get("max_entries", 0)),
            "value_size": int(info.get("value_size", 0)),
        }
    return found


def map_memory(pid):
    """(bytes, number of maps): memlock summed over pid's map fds."""
    m = maps(pid)
    return sum(v["memlock"] for v in m.values()), len(m)


def rss_bytes(pid):
    """Resident set size of pid (VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    """User + system CPU seconds of pid (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mib(n):
    return n / (1 << 20)
