# SPDX-License-Identifier: GPL-2.0-or-later
"""RTNL benchmark: fpmd's loop while another process holds RTNL.

Run by hand as root (not collected by pytest: no test_ name), on builds
without sanitizers, one row per build (e.g. before and after a change):

    /usr/bin/python3 tests/bench_rtnl.py build-rel [other-build ...]
    /usr/bin/python3 tests/bench_rtnl.py build-rel --seconds 30 --routes 20000

For each build, in namespaces of its own (tests/lib/lab.py: h1 -- r1 --
h2), one fpmd on r1 with the lab's guard interval (200 ms) and -D. A
competitor in a namespace of its own holds RTNL over and over, as zebra
installing routes or `ip` commands do (RTNL is one lock for every
namespace): it adds a veth pair, --routes routes on it with `ip -batch`
(one RTNL hold each) and deletes the pair (which flushes them all in
one hold), in a loop. Meanwhile fpmd's guard tick asks the
kernel whose XDP program each interface has, its tc filters, the policy
rules, the veth peers and the xdp-features, every 200 ms: each of those
netlink requests waits for RTNL.

It prints, per build, the competitor's cycles and, from fpmd's log
("loop: slow iteration" lines, over 20 ms) during the load: how many
iterations took over 20 ms, the longest, how many of those slept in the
kernel ("waits": blocked on RTNL, say) or were preempted, and by which
step; then `loopIterationsSlow` of `fpmctl show summary` over the same
time. fpmd's own CPU time stays small either way: a slow iteration that
slept is the loop waiting for someone else's lock.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builddirs", nargs="+", help="builds without "
                    "sanitizers (FPMD_BUILDDIR of scripts/build.sh)")
    ap.add_argument("--seconds", type=float, default=30,
                    help="how long the competitor runs (30)")
    ap.add_argument("--routes", type=int, default=20000,
                    help="routes per competitor cycle (20000)")
    return ap.parse_args()


ARGS = parse()
# lib.lab reads FPMD_BUILDDIR at import: each build runs in a child.
CHILD = os.environ.get("BENCH_RTNL_CHILD")


def competitor_batch(path, n):
    with open(path, "w") as f:
        for k in range(n):
            f.write(f"route add 10.{(k >> 8) & 255}.{k & 255}.0/24 "
                    f"dev rtnl0\n")


COMPETITOR = """
n=0
end=$(( $(date +%s) + {secs} ))
while [ $(date +%s) -lt $end ]; do
    ip link add rtnl0 type veth peer name rtnl1 &&
    ip link set rtnl0 up && ip link set rtnl1 up &&
    ip -batch {batch} && ip link del rtnl0
    n=$((n + 1))
done
echo $n
"""


def run_one():
    from lib import lab as L
    from lib.runner import guarded

    lab = L.Lab()
    out = {}
    rc = guarded(lambda: out.update(measure(L, lab)), lab.cleanup,
                 "RTNL benchmark")
    if rc:
        sys.exit(rc)
    return out


SLOW_US = 20000  # issue 27: no loop iteration over 20 ms


def slow_steps(log):
    """{step: (count, longest us, count that slept, count preempted)} of
    the slow-iteration lines in log (lib/fpmdlog.py)."""
    from lib.fpmdlog import slow_iteration

    out = {}
    for line in log.splitlines():
        it = slow_iteration(line)
        if not it or it["us"] <= SLOW_US:
            continue
        n, mx, slept, pre = out.get(it["step"], (0, 0, 0, 0))
        out[it["step"]] = (n + 1, max(mx, it["us"]),
                           slept + bool(it["waits"]),
                           pre + bool(it["preemptions"]))
    return out


def measure(L, lab):
    d = lab.fpmd()
    load = lab.add_ns(lab.prefix + "rl")
    batch = os.path.join(lab.tmp, "routes.batch")
    competitor_batch(batch, ARGS.routes)
    time.sleep(2)  # start-up's iterations out of the way
    pre = d.show("summary")
    log_at = len(d.logtext())
    t0 = time.time()
    p = subprocess.run(
        ["ip", "netns", "exec", load.name, "sh", "-c",
         COMPETITOR.format(secs=int(ARGS.seconds), batch=batch)],
        capture_output=True, text=True, timeout=ARGS.seconds + 120)
    took = time.time() - t0
    end = d.show("summary")
    steps = slow_steps(d.logtext()[log_at:])
    guard_waits = d.logtext()[log_at:].count("the kernel took")
    return {"fpmd": L.FPMD, "cycles": int(p.stdout.split()[-1] or 0),
            "seconds": round(took, 1),
            "slow": end["loopIterationsSlow"] - pre["loopIterationsSlow"],
            "steps": steps, "probe_slow": guard_waits}


def main():
    rows = []
    for b in ARGS.builddirs:
        env = {**os.environ, "FPMD_BUILDDIR": os.path.abspath(b),
               "BENCH_RTNL_CHILD": "1"}
        r = subprocess.run([sys.executable] + sys.argv, env=env,
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{b}: {r.stdout}{r.stderr}")
        rows.append((b, json.loads(r.stdout.splitlines()[-1])))
    print("# " + " ".join(["/usr/bin/python3", "tests/bench_rtnl.py"] +
                          sys.argv[1:]))
    print(f"# competitor: veth pair + {ARGS.routes} routes (ip -batch) + "
          f"pair deleted, in a loop for {ARGS.seconds:g} s; fpmd guard "
          f"interval 200 ms")
    print(f"{'build':<28} {'cycles':>6} {'>20ms':>6} {'longest':>9} "
          f"{'slept':>6} {'preempt':>7}  by step")
    for b, r in rows:
        st = r["steps"]
        n = sum(v[0] for v in st.values())
        longest = max((v[1] for v in st.values()), default=0)
        slept = sum(v[2] for v in st.values())
        pre = sum(v[3] for v in st.values())
        by = ", ".join(f"{k} {v[0]} (max {v[1] / 1000:.0f} ms)"
                       for k, v in sorted(st.items(), key=lambda x: -x[1][0]))
        print(f"{b:<28} {r['cycles']:>6} {r['slow']:>6} "
              f"{(f'{longest / 1000:.1f} ms' if n else '< 20 ms'):>9} "
              f"{slept:>6} {pre:>7}  {by or '-'}")
        if r["probe_slow"]:
            print(f"#   {b}: {r['probe_slow']} guard ticks waited over 20 ms "
                  f"for the kernel in the probe thread (not the loop)")


if CHILD:
    print(json.dumps(run_one()))
else:
    main()
