# SPDX-License-Identifier: GPL-2.0-or-later
"""The soak (tests/soak.py, scripts/soak.sh; doc/soak.md) for 3 minutes:
real FRR with OSPF and 30k BGP routes from bird (10k of them flapping),
neighbor and link churn, fpmd reloaded, restarted with SIGUSR2 and
killed, sequence-numbered UDP through r1's XDP all along. Fails when
one of the soak's checks fails (a packet lost outside a documented
window, fpmd's counters against the generator and the sink, RSS, map
memory or fds beyond 10 % of the baseline, an unexplained error in a
log) or the lab cannot be set up; the soak's summary is in the output.
About 3 minutes here (175-199 s), setup included.
"""
import os
import subprocess
import sys

from conftest import sigterm_interrupts
from lib.lab import BUILDDIR, FPMD, PY
from lib.topo import BIRD

SOAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak.py")


def test_soak_3min(needs_plugin, tmp_path):
    for tool in (FPMD, BIRD, "/usr/sbin/birdc", "/usr/lib/frr/ospfd",
                 "/usr/lib/frr/bgpd"):
        assert os.access(tool, os.X_OK), f"{tool} missing"
    out = tmp_path / "soak.txt"
    with open(out, "w") as f, sigterm_interrupts():
        p = subprocess.Popen([PY, SOAK, "3", "--json",
                              str(tmp_path / "soak.json")],
                             stdout=f, stderr=subprocess.STDOUT,
                             env={**os.environ, "FPMD_BUILDDIR": BUILDDIR})
        try:
            # 3 min of traffic, ~30 s of setup and checks; the timeout is
            # a backstop
            rc = p.wait(timeout=420)
        finally:
            if p.poll() is None:
                # the soak cleans up (namespaces, daemons, pins) on SIGTERM
                p.terminate()
                try:
                    p.wait(60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    text = out.read_text()
    sys.stdout.write(text)
    summary = text[text.find("==== soak summary"):]
    assert rc == 0, f"soak exited {rc}:\n{summary or text[-6000:]}"
    assert "SOAK PASSED" in text
