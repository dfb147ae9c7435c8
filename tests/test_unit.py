# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd.service, its stop helper and `make install`, from the build tree.

- The unit the build generates passes `systemd-analyze verify` (pointed
  at the build's fpmd, the helper and the build's man pages) and says
  what fpmd(8) documents: Type=notify, before frr.service, the helper
  as ExecStop, the limits, the runtime directory kept across restarts.
- scripts/fpmd-stop (ExecStop=fpmd-stop %n $MAINPID) sends SIGUSR2 when
  systemd's job for the unit is a restart and SIGTERM otherwise, then
  waits for the pid. This machine runs no systemd, so `systemctl` is a
  MOCK: a script first on PATH printing the job list
  `systemctl list-jobs --no-legend` would print. Everything else is real:
  a stand-in daemon recording the signal, and the real fpmd, whose
  forwarding must survive a restart and stop with a stop.
- `make install DESTDIR=...` of this build (prefix /usr/local): the safe
  configuration in $sysconfdir, never overwriting the operator's; man
  pages and unit naming /usr/local paths.
"""
import os
import re
import shutil
import subprocess
import tempfile
import threading

import pytest

from lib.lab import BUILDDIR, FPMD, REPO, ping, xdp_attached

STOP = os.path.join(REPO, "scripts", "fpmd-stop")
UNIT = os.path.join(BUILDDIR, "fpmd", "fpmd.service")


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="fpmd-unit-")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def unit_keys(path):
    """{key: [values]} of a unit file (keys repeat in systemd units)."""
    keys = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and line[0] not in "#;[" and "=" in line:
                k, v = line.split("=", 1)
                keys.setdefault(k, []).append(v)
    return keys


def man_tree(tmp, pages):
    """A MANPATH holding the given pages, for the unit's Documentation=."""
    for p in pages:
        sec = p.rsplit(".", 1)[1]
        os.makedirs(os.path.join(tmp, "man", "man" + sec), exist_ok=True)
        shutil.copy(p, os.path.join(tmp, "man", "man" + sec))
    return os.path.join(tmp, "man")


def verify(unit, env=None):
    """systemd-analyze verify: (returncode, stderr). A unit file's
    problems (unknown keys, bad values, missing binaries or man pages)
    are printed on stderr, some of them with status 0."""
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze missing (apt-get install systemd)")
    r = subprocess.run(["systemd-analyze", "verify", unit],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, **(env or {})})
    return r.returncode, r.stderr.strip()


# ---- the unit ---------------------------------------------------------------

# (key, what the value must match, why)
UNIT_CASES = [
    ("Type", r"notify$", "READY=1 after config applied, pins adopted"),
    ("ExecStart", r"/\S*sbin/fpmd$", "foreground, no options: fpmd.json"),
    ("ExecReload", r"/bin/kill -HUP \$MAINPID$", "reload is SIGHUP"),
    ("ExecStop", r"/\S*/fpmd/fpmd-stop %n \$MAINPID$",
     "restart keeps forwarding, stop detaches"),
    ("Before", r"(^|\s)frr\.service(\s|$)", "zebra finds fpmd at once"),
    ("LimitNOFILE", r"([89]\d{3}|\d{5,}|infinity)$",
     "about 2,100 map fds"),
    ("LimitMEMLOCK", r"infinity$", "BPF maps on older kernels"),
    ("RuntimeDirectory", r"fpmd$", "/run/fpmd: sockets, pid file"),
    ("RuntimeDirectoryPreserve", r"yes$", "pid/lock file across restarts"),
    ("Restart", r"on-failure$", "a crash restarts; the maps are adopted"),
    ("WantedBy", r"multi-user\.target$", "enabled by the package"),
]


@pytest.mark.parametrize("key,want,why", UNIT_CASES,
                         ids=[c[0] for c in UNIT_CASES])
def test_unit_says(key, want, why):
    keys = unit_keys(UNIT)
    vals = keys.get(key, [])
    assert any(re.search(want, v) for v in vals), \
        f"{UNIT}: {key}={vals} does not match {want!r} ({why})"


def test_unit_verifies(tmp):
    """The unit as built, its paths pointed at the build tree."""
    keys = unit_keys(UNIT)
    start, stop = keys["ExecStart"][0], keys["ExecStop"][0]
    text = open(UNIT).read()
    text = text.replace("ExecStart=" + start, "ExecStart=" + FPMD)
    text = text.replace("ExecStop=" + stop.split()[0],
                        "ExecStop=" + STOP)
    os.makedirs(os.path.join(tmp, "unit"))
    path = os.path.join(tmp, "unit", "fpmd.service")
    with open(path, "w") as f:
        f.write(text)
    pages = [os.path.join(BUILDDIR, "doc", p)
             for p in ("fpmd.8", "fpmctl.8", "fpmd.conf.5")]
    rc, err = verify(path, {"MANPATH": man_tree(tmp, pages)})
    assert rc == 0 and err == "", f"systemd-analyze verify {path}: {err}"
    # And it does look: a binary that is not there is an error.
    with open(path, "w") as f:
        f.write(text.replace("ExecStart=" + FPMD,
                             "ExecStart=/nonexistent/fpmd"))
    rc, err = verify(path, {"MANPATH": man_tree(tmp, pages)})
    assert rc != 0 and "/nonexistent/fpmd" in err, (rc, err)


# ---- the stop helper ---------------------------------------------------------

def fake_systemctl(tmp, jobs):
    """MOCK systemctl (no systemd here): prints `jobs` for list-jobs and
    logs its arguments. Returns the environment putting it first on PATH."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    with open(os.path.join(tmp, "jobs"), "w") as f:
        f.write(jobs)
    path = os.path.join(bindir, "systemctl")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"echo \"$*\" >> {tmp}/systemctl.args\n"
                "[ \"$1\" = list-jobs ] || exit 1\n"
                f"cat {tmp}/jobs\n")
    os.chmod(path, 0o755)
    return {**os.environ, "PATH": bindir + ":" + os.environ["PATH"]}


def run_stop(env, unit, pid, proc=None, timeout=30):
    """Run the helper while reaping proc (a child of ours would stay a
    zombie, alive to kill -0, until we wait for it; systemd reaps its
    own at once)."""
    h = subprocess.Popen([STOP, unit, str(pid)], env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t = None
    if proc is not None:
        t = threading.Thread(target=proc.wait, args=(timeout,), daemon=True)
        t.start()
    out, err = h.communicate(timeout=timeout)
    if t:
        t.join(timeout)
    return h.returncode, out + err


# A stand-in daemon that says which signal ended it.
STANDIN = """
trap 'echo USR2 > {out}; exit 0' USR2
trap 'echo TERM > {out}; exit 0' TERM
echo ready
while :; do sleep 0.05; done
"""

# (description, `systemctl list-jobs --no-legend` output, signal expected)
CHOICE_CASES = [
    ("restart job", "   41 fpmd.service restart running\n", "USR2"),
    ("stop job", "   41 fpmd.service stop running\n", "TERM"),
    ("no job listed", "", "TERM"),
    ("another unit restarts",
     "   40 frr.service restart waiting\n   41 fpmd.service stop running\n",
     "TERM"),
    ("a unit with a longer name restarts",
     "   40 xfpmd.service restart running\n", "TERM"),
    ("restart among other jobs",
     "   39 frr.service start waiting\n   41 fpmd.service restart running\n",
     "USR2"),
]


@pytest.mark.parametrize("desc,jobs,sig", CHOICE_CASES,
                         ids=[c[0] for c in CHOICE_CASES])
def test_stop_helper_chooses_signal(tmp, desc, jobs, sig):
    env = fake_systemctl(tmp, jobs)
    out = os.path.join(tmp, "signal")
    d = subprocess.Popen(["sh", "-c", STANDIN.format(out=out)], text=True,
                         stdout=subprocess.PIPE)
    try:
        assert d.stdout.readline().strip() == "ready"
        rc, text = run_stop(env, "fpmd.service", d.pid, d)
        assert rc == 0, text
        assert d.poll() is not None, f"{desc}: helper returned, pid alive"
        with open(out) as f:
            assert f.read().strip() == sig, f"{desc}: {text}"
        with open(os.path.join(tmp, "systemctl.args")) as f:
            assert f.read().split()[:1] == ["list-jobs"]
    finally:
        if d.poll() is None:
            d.kill()
            d.wait()


# (description, pid argument, expected status, expected words in output)
ARG_CASES = [
    ("no main process (after a crash)", "", 0, "no main process"),
    ("pid already gone", "gone", 0, "already gone"),
    ("not a pid", "12x", 2, "invalid pid"),
]


@pytest.mark.parametrize("desc,pid,status,words", ARG_CASES,
                         ids=[c[0] for c in ARG_CASES])
def test_stop_helper_arguments(tmp, desc, pid, status, words):
    env = fake_systemctl(tmp, "   41 fpmd.service stop running\n")
    if pid == "gone":
        p = subprocess.Popen(["true"])
        p.wait()
        pid = p.pid
    rc, text = run_stop(env, "fpmd.service", pid)
    assert rc == status and words in text, (desc, rc, text)


def test_stop_helper_bounded_wait(tmp):
    """A daemon that ignores the signal: the helper gives up, says so,
    fails (systemd then sends SIGTERM/SIGKILL itself)."""
    env = fake_systemctl(tmp, "   41 fpmd.service stop running\n")
    env["FPMD_STOP_TIMEOUT"] = "1"
    d = subprocess.Popen(["sh", "-c", "trap '' TERM USR2; echo ready; "
                          "while :; do sleep 0.05; done"], text=True,
                         stdout=subprocess.PIPE)
    try:
        assert d.stdout.readline().strip() == "ready"
        rc, text = run_stop(env, "fpmd.service", d.pid)
        assert rc == 1 and "still running after 1s" in text, (rc, text)
    finally:
        d.kill()
        d.wait()


def forwarding_fpmd(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    lab.warm_kernel_neighbors()
    assert ping(lab.h1, lab.H2_V4, 3, 0.05) == 3
    assert d.counter("r1-eth0", "forwarded") >= 3
    return d


def test_stop_helper_restart_keeps_forwarding(lab, tmp):
    """systemctl restart: fpmd exits with XDP attached and maps pinned,
    packets keep being forwarded by XDP (not the kernel), and the next
    fpmd adopts the routes."""
    d = forwarding_fpmd(lab)
    env = fake_systemctl(tmp, "   41 fpmd.service restart running\n")
    rc, text = run_stop(env, "fpmd.service", d.proc.pid, d.proc)
    assert rc == 0 and "restart" in text, text
    assert d.proc.poll() is not None
    for i in ("r1-eth0", "r1-eth1"):
        assert xdp_attached(lab.r1, i), f"{i}: XDP detached by a restart"
    assert os.listdir(lab.pin), "pins removed by a restart"
    before = lab.r1.snmp("Ip", "ForwDatagrams")
    assert ping(lab.h1, lab.H2_V4, 5, 0.05) == 5
    assert lab.r1.snmp("Ip", "ForwDatagrams") == before, \
        "the kernel forwarded while fpmd was away: XDP was not"
    d2 = lab.fpmd()
    routes = d2.show("routes")
    assert "172.16.102.0/24" in routes, routes


def test_stop_helper_stop_detaches(lab, tmp):
    """systemctl stop (keep-forwarding not set): fpmd detaches and
    unpins; the kernel forwards."""
    d = forwarding_fpmd(lab)
    env = fake_systemctl(tmp, "   41 fpmd.service stop running\n")
    rc, text = run_stop(env, "fpmd.service", d.proc.pid, d.proc)
    assert rc == 0, text
    assert d.proc.returncode == 0, d.output()
    for i in ("r1-eth0", "r1-eth1"):
        assert not xdp_attached(lab.r1, i), f"{i}: XDP left attached by stop"
    assert not os.path.exists(lab.pin) or not os.listdir(lab.pin)
    before = lab.r1.snmp("Ip", "ForwDatagrams")
    assert ping(lab.h1, lab.H2_V4, 3, 0.05) == 3
    assert lab.r1.snmp("Ip", "ForwDatagrams") >= before + 3


# ---- make install (a source install) ------------------------------------------

def make_install(destdir):
    r = subprocess.run(["make", "-s", "-C", BUILDDIR, "install",
                        "DESTDIR=" + destdir], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_make_install_paths(tmp):
    dest = os.path.join(tmp, "root")
    make_install(dest)
    conf = os.path.join(dest, "usr/local/etc/fpmd/fpmd.json")
    with open(conf) as f, open(os.path.join(REPO, "etc/fpmd.json")) as g:
        assert f.read() == g.read()
    # Safe as it comes: valid, and no interface.
    r = subprocess.run([FPMD, "-C", "-f", conf], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0 and '"interface"' not in r.stdout, \
        r.stdout + r.stderr
    for p in ("usr/local/sbin/fpmd", "usr/local/bin/fpmctl",
              "usr/local/libexec/fpmd/fpmd-stop"):
        assert os.access(os.path.join(dest, p), os.X_OK), p
    for p in ("usr/local/share/yang/fpmd.yang",
              "usr/local/share/doc/fpmd/examples/fpmd.json"):
        assert os.path.isfile(os.path.join(dest, p)), p
    units = [os.path.join(r, f) for r, _, fs in os.walk(dest) for f in fs
             if f == "fpmd.service"]
    assert len(units) == 1, units
    keys = unit_keys(units[0])
    assert keys["ExecStart"] == ["/usr/local/sbin/fpmd"], keys
    assert keys["ExecStop"][0].startswith(
        "/usr/local/libexec/fpmd/fpmd-stop "), keys
    # The man pages name this build's paths, nothing left unsubstituted.
    man = os.path.join(dest, "usr/local/share/man")
    for page in ("man8/fpmd.8", "man8/fpmctl.8", "man5/fpmd.conf.5"):
        with open(os.path.join(man, page)) as f:
            text = f.read()
        assert not re.search(r"@[a-z_]+@", text), page
        if page != "man8/fpmctl.8":
            assert "/usr/local/etc/fpmd/fpmd.json" in text, page
    # The example is valid too.
    r = subprocess.run([FPMD, "-C", "-f", os.path.join(
        dest, "usr/local/share/doc/fpmd/examples/fpmd.json")],
        capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_make_install_keeps_operator_config(tmp):
    dest = os.path.join(tmp, "root")
    make_install(dest)
    conf = os.path.join(dest, "usr/local/etc/fpmd/fpmd.json")
    mine = '{"fpmd:fpmd": {"interfaces": {"interface": [{"name": "x"}]}}}\n'
    with open(conf, "w") as f:
        f.write(mine)
    out = make_install(dest)
    assert "keeping" in out, out
    with open(conf) as f:
        assert f.read() == mine
