# SPDX-License-Identifier: GPL-2.0-or-later
"""Reading fpmd's log: when a line was written (FRR's daemons stamp
theirs the same way), and the lines for slow event-loop iterations
(fpmd/loop.c log_slow: over 20 ms at debug level, from 100 ms on at
info level too)."""
import re
import time

TS = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?)")
SLOW_LINE = re.compile(r"loop: slow iteration: (\d+) us, (\d+) us of it "
                       r"in (.+?)(?: \((\d+) us on the CPU"
                       r"(?:; (\d+) waits, (\d+) preemptions)?\))?$")


def log_time(line):
    """The line's time stamp (local time, as both write it) as a
    time.time() value, or None."""
    m = TS.match(line)
    if not m:
        return None
    base, _, frac = m.group(1).partition(".")
    return time.mktime(time.strptime(base, "%Y/%m/%d %H:%M:%S")) + \
        float("0." + (frac or "0"))


def slow_iteration(line):
    """{"rt", "us", "step", "step_us", "cpu_us", "waits", "preemptions"}
    of a slow iteration's line (None where the line does not say: older
    builds), or None for any other line."""
    m = SLOW_LINE.search(line)
    if not m:
        return None
    total, step_us, step, cpu, waits, pre = m.groups()
    num = (lambda v: None if v is None else int(v))
    return {"rt": log_time(line), "us": int(total), "step": step,
            "step_us": int(step_us), "cpu_us": num(cpu),
            "waits": num(waits), "preemptions": num(pre)}
