# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd as a service: systemd's notify protocol, -d, the pid file, the log
target under systemd, SIGUSR2 (restart keeping forwarding), and the small
conventions an operator meets (fpmctl show route, the veth-peer hint).

The machine has no running systemd: the test plays the service manager's
part. Its own datagram socket is NOTIFY_SOCKET, and what fpmd says there
is checked against what is true at that moment (pins, XDP, sockets).

Run: /usr/bin/python3 -m pytest -v tests/test_systemd.py
"""
import ctypes
import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from lib.feeds import wait_replayed
from lib.fpmwire import FpmClient, fpm_frame, route_msg
from lib.frr import FrrLab, start_frr
from lib.lab import (FPMCTL, FPMD, Lab, ping_result, ping_stream, wait_for,
                     xdp_attached)
from lib.notify import Notify
from lib.traffic import (assert_kernel_flat, assert_lossless, fwd4, stats_key,
                         stats_map_packets)

PINS = ("meta", "routes_v4", "nexthops", "stats")


@pytest.fixture
def notify(lab):
    n = Notify(lab.tmp)
    yield n
    n.close()


def attached_now(lab):
    return [i for i in ("r1-eth0", "r1-eth1") if xdp_attached(lab.r1, i)]


def lock_file(pin):
    esc = pin.strip("/").replace("-", "\\x2d").replace("/", "-")
    return f"/run/fpmd/{esc}.pid"


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# ---- READY=1, STATUS= ---------------------------------------------------------

def test_ready_after_maps_and_attachment(lab, notify):
    d = lab.fpmd(env=notify.env(), wait=False)
    msg = notify.ready()
    # At the moment READY arrives: maps pinned, XDP on both interfaces,
    # both sockets listening, and the start logged.
    pins = set(os.listdir(lab.pin)) if os.path.isdir(lab.pin) else set()
    attached = attached_now(lab)
    assert set(PINS) <= pins, f"READY before the maps were pinned: {pins}"
    assert attached == ["r1-eth0", "r1-eth1"], \
        f"READY before XDP was attached: {attached}"
    assert os.path.exists(d.sock) and os.path.exists(d.plugin_sock)
    assert "started:" in d.logtext(), d.logtext()
    # What it did on the way, in order, and where it waits.
    st = notify.statuses()
    assert st[0] == f"creating maps in {lab.pin}", st
    assert "attaching 2 interfaces" in st, st
    assert msg["STATUS"] == (
        "forwarding on 2 interfaces; waiting for zebra (FPM 127.0.0.1:2620, "
        f"plugin {d.plugin_sock})"), msg
    assert "MAINPID" not in msg, "MAINPID without -d"
    # Nothing was waiting for a feed: no zebra at all.
    assert d.show("fpm")["connected"] is False


def test_ready_after_adoption(lab, notify):
    d = lab.fpmd(extra=("--keep-forwarding",))
    lab.routes_and_neighbors(d, v6=False)
    assert d.stop() == 0
    assert set(PINS) <= set(os.listdir(lab.pin))
    os.rename(d.log, d.log + ".1")
    d2 = lab.fpmd(env=notify.env(), wait=False)
    msg = notify.ready()
    log = d2.logtext()
    assert "maps adopted" in log, f"READY before adoption:\n{log}"
    assert attached_now(lab) == ["r1-eth0", "r1-eth1"]
    assert "172.16.102.0/24" in d2.show("routes"), "adopted routes missing"
    st = notify.statuses()
    assert st[0] == f"adopting pinned maps in {lab.pin}", st
    assert msg["STATUS"].startswith("forwarding on 2 interfaces;"), msg


def test_status_follows_the_fpm_replay(lab, notify):
    d = lab.fpmd(env=notify.env(), extra=("--fpm-settle", "300"),
                 wait=False)
    notify.ready()
    oif = lab.r1.ifindex("r1-eth1")
    t0 = time.time()
    replay = fpm_frame(route_msg("10.99.0.0/24", lab.H2_V4, oif) +
                       route_msg("10.98.0.0/24", lab.H2_V4, oif))
    # The client stays connected 3 s: the replay settles (300 ms) meanwhile.
    assert FpmClient(lab).run(replay) == "still-open"
    settled = notify.until(
        lambda m: "replay settled" in m.get("STATUS", ""),
        what="the replay-settled STATUS")["STATUS"]
    m = re.fullmatch(r"forwarding on 2 interfaces; zebra connected over FPM; "
                     r"replay settled: (\d+) routes \(at (\d\d:\d\d:\d\d)\)",
                     settled)
    assert m, settled
    fpm = d.show("fpm")
    assert int(m.group(1)) == 2 == fpm["replayRefreshed"], (settled, fpm)
    at = time.strptime(m.group(2), "%H:%M:%S")
    secs = at.tm_hour * 3600 + at.tm_min * 60 + at.tm_sec
    lt = time.localtime(t0)
    start = lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec
    assert 0 <= (secs - start) % 86400 <= 60, (settled, time.ctime(t0))
    # The connection was seen before the settle, and its end after.
    st = notify.statuses()
    assert any(s.endswith("zebra connected over FPM; replay in progress")
               for s in st), st
    gone = notify.until(lambda m: "waiting for zebra" in m.get("STATUS", ""),
                        what="the STATUS after FPM closed")["STATUS"]
    assert gone.startswith("forwarding on 2 interfaces; zebra gone, its "
                           "routes kept for hold-time; waiting for zebra"), \
        gone
    # Sent on change only: no repeats of one line in a row (READY=1
    # carries the current line once more).
    st = [m["STATUS"] for m in notify.msgs
          if "STATUS" in m and "READY" not in m]
    assert all(a != b for a, b in zip(st, st[1:])), st


def test_status_follows_a_real_zebra_over_the_plugin(needs_plugin):
    lab = FrrLab()
    n = Notify(lab.tmp)
    try:
        d = lab.fpmd(env=n.env(), extra=("--no-fpm",), wait=False)
        assert n.ready()["STATUS"] == (
            "forwarding on 2 interfaces; waiting for zebra (plugin "
            f"{d.plugin_sock})")
        start_frr(lab)
        wait_replayed(d)
        line = n.until(lambda m: "replay settled" in m.get("STATUS", ""),
                       what="the replay-settled STATUS")["STATUS"]
        m = re.fullmatch(r"forwarding on 2 interfaces; zebra connected over "
                         r"the plugin; replay settled: (\d+) routes "
                         r"\(at \d\d:\d\d:\d\d\)", line)
        assert m, line
        # zebra may connect before it has read its interfaces (the
        # module loads first): the replay can be empty, the routes then
        # come live. The line counts what the replay refreshed.
        assert int(m.group(1)) == d.show("plugin")["replayRefreshed"], \
            (line, d.show("plugin"))
    finally:
        n.close()
        lab.cleanup()


def test_reload_and_stop_notifications(lab, notify):
    d = lab.fpmd(env=notify.env(), wait=False)
    notify.ready()
    for how in ("SIGHUP", "fpmctl reload"):
        if how == "SIGHUP":
            d.proc.send_signal(signal.SIGHUP)
        else:
            d.ctl("reload")
        first = notify.until(lambda m: "RELOADING" in m or "READY" in m,
                             what=f"RELOADING=1 ({how})")
        assert first.get("RELOADING") == "1", (how, first)
        assert int(first["MONOTONIC_USEC"]) > 0, first
        again = notify.ready()
        assert again["STATUS"].startswith("forwarding on 2 interfaces;"), \
            (how, again)
    d.proc.send_signal(signal.SIGTERM)
    msg = notify.until(lambda m: "STOPPING" in m, what="STOPPING=1")
    assert msg["STOPPING"] == "1"
    assert d.proc.wait(15) == 0


WATCHDOG_USEC = 400000
PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
WALL = 0x40000000  # waitpid's __WALL


def watchdog_pings(notify, n, timeout):
    """The next n WATCHDOG=1 datagrams: [(receive time, sender pid)]."""
    out = []
    for k in range(n):
        notify.until(lambda m: m.get("WATCHDOG") == "1", timeout=timeout,
                     what=f"WATCHDOG=1 number {k + 1}")
        pid, t = notify.meta[-1]
        out.append((t, pid))
    return out


class ThreadStopped:
    """One thread of a process stopped by ptrace (PTRACE_SEIZE and
    PTRACE_INTERRUPT), its other threads running on: an event loop stuck
    in a process that lives. Leaving the block detaches, and the kernel
    detaches too if the test process dies."""

    def __init__(self, tid):
        self.tid = tid
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.ptrace.restype = ctypes.c_long
        self.libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long,
                                     ctypes.c_void_p, ctypes.c_void_p]

    def ptrace(self, req):
        if self.libc.ptrace(req, self.tid, None, None) < 0:
            e = ctypes.get_errno()
            raise OSError(e, f"ptrace({req:#x}, {self.tid}): "
                          f"{os.strerror(e)}")

    def __enter__(self):
        self.ptrace(PTRACE_SEIZE)
        try:
            self.ptrace(PTRACE_INTERRUPT)
            _, status = os.waitpid(self.tid, WALL)
            assert os.WIFSTOPPED(status), f"wait status {status:#x}"
        except BaseException:
            self.libc.ptrace(PTRACE_DETACH, self.tid, None, None)
            raise
        return self

    def __exit__(self, *exc):
        self.ptrace(PTRACE_DETACH)


def test_watchdog_pings_from_the_event_loop(lab, notify):
    """WATCHDOG=1 at about half of WATCHDOG_USEC (sd_watchdog_enabled(3)),
    every gap shorter than WATCHDOG_USEC, from fpmd's main pid (systemd's
    NotifyAccess=main drops others); with the event loop's thread stopped
    no ping comes, and they resume when it runs again."""
    usec = WATCHDOG_USEC / 1e6
    d = lab.fpmd(env={**notify.env(), "WATCHDOG_USEC": str(WATCHDOG_USEC)},
                 wait=False)
    notify.ready()
    pings = watchdog_pings(notify, 9, timeout=10)
    gaps = [round(b[0] - a[0], 3) for a, b in zip(pings, pings[1:])]
    median = sorted(gaps)[len(gaps) // 2]
    assert 0.4 * usec <= median <= 0.6 * usec, \
        f"WATCHDOG=1 every {median} s (gaps {gaps}), not about half of " \
        f"WATCHDOG_USEC={WATCHDOG_USEC}"
    assert max(gaps) < usec, \
        f"a gap of {max(gaps)} s >= WATCHDOG_USEC (gaps {gaps})"
    assert {p for _, p in pings} == {d.proc.pid}, \
        f"WATCHDOG=1 from {pings}, not fpmd's main pid {d.proc.pid}"

    # fpmd's event loop runs in its main thread (tid = pid): stop that
    # thread alone for 2.5 watchdog intervals.
    with ThreadStopped(d.proc.pid):
        n0 = len(notify.msgs)
        try:       # drain what was sent before the stop
            notify.until(lambda m: False, timeout=0.05)
        except AssertionError:
            pass
        queued = len(notify.msgs)
        try:
            notify.until(lambda m: m.get("WATCHDOG") == "1",
                         timeout=2.5 * usec)
        except AssertionError:
            pass
        during = [m for m in notify.msgs[queued:] if "WATCHDOG" in m]
        assert not during, \
            f"WATCHDOG=1 with fpmd's event loop stopped: {during} (" \
            f"{len(notify.msgs) - n0} datagrams since the stop)"
    watchdog_pings(notify, 2, timeout=2 * usec)


def test_status_names_guard_and_veth_peer_hint():
    # Receivers without GRO (and without XDP): redirected frames would
    # vanish, so both egresses stay on the kernel path (without the
    # container path, which would serve them: tests/test_tcpath.py).
    lab = Lab(receiver_gro=False)
    n = Notify(lab.tmp)
    try:
        d = lab.fpmd(env=n.env(), wait=False,
                     extra=["--no-container-path"])
        msg = n.ready()
        assert msg["STATUS"].endswith("; kernel path: guard veth-peer"), msg
        hint = "to fix, run `ethtool -K h2-eth0 gro on` in its namespace " \
               "or attach an XDP program to it"
        wait_for(lambda: hint in d.logtext(), what="the hint in the log")
        i = d.show("interfaces")["r1-eth1"]
        assert not i["txPort"] and hint in i["txReason"], i
        g = d.show("guards")["veth-peer"]
        assert g["state"] == "kernel-path" and hint in g["detail"], g
        text = d.ctl("show", "guards").stdout
        assert hint in text, text
        # The fix it names works, and the status says so.
        lab.h2.run("ethtool -K h2-eth0 gro on >/dev/null")
        lab.h1.run("ethtool -K h1-eth0 gro on >/dev/null")
        n.until(lambda m: m.get("STATUS", "").endswith(
            "(FPM 127.0.0.1:2620, plugin " + d.plugin_sock + ")"),
            what="the STATUS without the guard")
    finally:
        n.close()
        lab.cleanup()


def test_no_notify_socket_breaks_nothing(lab):
    # A NOTIFY_SOCKET nobody listens on: every send fails, fpmd goes on.
    gone = os.path.join(lab.tmp, "nobody.sock")
    d = lab.fpmd(env={"NOTIFY_SOCKET": gone, "WATCHDOG_USEC": "100000"})
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload: re-checking" in d.logtext(), what="reload")
    assert d.ctl("show", "summary").returncode == 0
    assert attached_now(lab) == ["r1-eth0", "r1-eth1"]
    assert d.stop() == 0


# ---- SIGUSR2: stop for a restart, forwarding stays ------------------------------

def test_sigusr2_restart_without_loss(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    f0 = fwd4(lab.r1)
    stream = ping_stream(lab.h1, lab.H2_V4, 600)
    try:
        c0 = d.counter("r1-eth0", "forwarded")
        wait_for(lambda: d.counter("r1-eth0", "forwarded") >= c0 + 30,
                 what="the ping stream through XDP")
        key = stats_key(d, "r1-eth0", "forwarded")
        assert d.stop(signal.SIGUSR2) == 0, d.output()
        assert "SIGUSR2: stopping for a restart" in d.logtext()
        for ifname in ("r1-eth0", "r1-eth1"):
            assert xdp_attached(lab.r1, ifname), f"{ifname} lost its XDP"
        assert set(PINS) <= set(os.listdir(lab.pin))
        s0 = stats_map_packets(lab.pin, key)
        wait_for(lambda: stats_map_packets(lab.pin, key) >= s0 + 50,
                 timeout=5, what="XDP forwarding with no daemon")
        os.rename(d.log, d.log + ".1")
        d2 = lab.fpmd()
        assert "maps adopted" in d2.logtext(), d2.logtext()
    except BaseException:
        stream.kill()
        stream.wait()
        raise
    sent, got, out = ping_result(stream, timeout=30)
    assert_lossless("ping", sent, got, 500, out)
    assert_kernel_flat(lab.r1, f0)
    # SIGTERM keeps its meaning: detach and unpin.
    assert d2.stop() == 0
    assert not attached_now(lab) and not os.path.exists(lab.pin)


# ---- -d: daemonize as FRR's daemons -----------------------------------------------

def daemon_args(lab, name="fpmd", pin=None, log=True):
    args = [FPMD, "-d", "--netns", lab.r1.name, "-b", pin or lab.pin,
            "-s", os.path.join(lab.tmp, name + ".sock"), "--plugin-socket",
            os.path.join(lab.tmp, name + "-plugin.sock"), "--fpm-port", "2621",
            "-i", "r1-eth0", "-i", "r1-eth1", "-D"]
    if log:
        args += ["--log", "file:" + os.path.join(lab.tmp, name + ".log")]
    return args


def stop_leftover(lab, path):
    """Every exit path: stop a daemon of this lab still holding the lock
    (pid) file at path (the lab stops the test's own children)."""
    try:
        with open(path) as f:
            pid = int(f.readline())
        with open(f"/proc/{pid}/cmdline") as f:
            ours = lab.tmp in f.read()
        with open(f"/proc/{pid}/status") as f:
            ppid = int(re.search(r"PPid:\s+(\d+)", f.read()).group(1))
    except (OSError, ValueError, AttributeError):
        return
    if ppid == os.getpid():
        return
    if ours:
        stop_pid(pid)


def stop_pid(pid, timeout=15):
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + timeout
    while pid_alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid), f"daemon {pid} did not stop"


def test_daemon_returns_once_ready_with_pid_file(lab, notify):
    env = {**os.environ, **notify.env()}
    r = subprocess.run(daemon_args(lab), capture_output=True, text=True,
                       timeout=60, env=env, stdin=subprocess.DEVNULL)
    try:
        assert r.returncode == 0, r.stderr
        # The parent returned: the daemon is ready already, no waiting.
        assert attached_now(lab) == ["r1-eth0", "r1-eth1"]
        with open(lock_file(lab.pin)) as f:
            pid_s, pin = f.read().split("\n")[:2]
        pid = int(pid_s)
        assert pin == lab.pin
        assert pid_alive(pid)
        status = open(f"/proc/{pid}/status").read()
        ppid = int(re.search(r"PPid:\s+(\d+)", status).group(1))
        assert ppid != os.getpid(), "the daemon is still the test's child"
        # Its own session, cwd /, stdio on /dev/null.
        assert os.getsid(pid) == pid
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        for fd in (0, 1, 2):
            assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null"
        msg = notify.ready(timeout=5)
        assert msg["MAINPID"] == str(pid), msg
        ctl = subprocess.run([FPMCTL, "-s", os.path.join(lab.tmp, "fpmd.sock"),
                              "show", "summary"], capture_output=True,
                             text=True, timeout=30)
        assert ctl.returncode == 0, ctl.stderr
        stop_pid(pid)
        assert not os.path.exists(lock_file(lab.pin)), "pid file left behind"
    finally:
        stop_leftover(lab, lock_file(lab.pin))


def test_daemon_start_failure_reported_by_parent(lab):
    d = lab.fpmd()
    # Same bpffs-dir: the daemon refuses after forking; the parent says why.
    try:
        r = subprocess.run(daemon_args(lab, "second"), capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
    finally:
        stop_leftover(lab, lock_file(lab.pin))
    assert r.returncode != 0, r.stderr
    assert "in use by a running fpmd" in r.stderr, r.stderr
    assert f"pid {d.proc.pid}" in r.stderr, r.stderr
    assert "exited with status 1 before it was ready" in r.stderr, r.stderr
    assert d.proc.poll() is None


def test_default_instance_pid_file(lab):
    """The default bpffs-dir's lock file is the conventional pid file."""
    if os.path.exists("/sys/fs/bpf/fpmd") or \
            os.path.exists("/run/fpmd/fpmd.pid"):
        pytest.skip("a default fpmd instance exists on this machine")
    args = [a for a in daemon_args(lab) if a not in ("-b", lab.pin)]
    args = [a for a in args if a not in ("-i", "r1-eth0", "r1-eth1")]
    r = subprocess.run(args + ["--no-fpm", "--no-plugin"],
                       capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    try:
        assert r.returncode == 0, r.stderr
        assert not os.path.exists(lock_file("/sys/fs/bpf/fpmd"))
        with open("/run/fpmd/fpmd.pid") as f:
            pid_s, pin = f.read().split("\n")[:2]
        assert pin == "/sys/fs/bpf/fpmd"
        assert pid_alive(int(pid_s))
        assert "fpmd" in open(f"/proc/{pid_s}/comm").read()
        stop_pid(int(pid_s))
        assert not os.path.exists("/run/fpmd/fpmd.pid")
        assert not os.path.exists("/sys/fs/bpf/fpmd")
    finally:
        for path in ("/run/fpmd/fpmd.pid", lock_file("/sys/fs/bpf/fpmd")):
            stop_leftover(lab, path)


# ---- the log target under systemd and with -d ----------------------------------

# fpmd in a private mount namespace whose /dev/log is the test's socket
# (the machine has no syslog; the host's /dev is left alone).
PRIVATE_DEV = r"""
set -e
d=$1; shift
for n in null zero full random urandom; do
    : > "$d/$n"; mount --bind "/dev/$n" "$d/$n"
done
ln -sf /proc/self/fd "$d/fd"
mount --rbind "$d" /dev
exec "$@"
"""


class Syslog:
    """The test's /dev/log, read as it fills: syslog(3) blocks on a full
    socket, as it would with a stalled journald."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(path)
        self.s.settimeout(0.2)
        self.lines = []
        self.done = False
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        while not self.done:
            try:
                self.lines.append(self.s.recv(65536).decode())
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self.done = True
        self.t.join()
        self.s.close()


@pytest.mark.parametrize("how", ["journal", "daemon", "plain"])
def test_log_target_follows_how_fpmd_runs(lab, how):
    dev = os.path.join(lab.tmp, "dev")
    os.mkdir(dev)
    sl = Syslog(os.path.join(dev, "log"))
    errf = open(os.path.join(lab.tmp, "stderr"), "w+")
    st = os.fstat(errf.fileno())
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    if how == "journal":
        # As systemd sets it: the device and inode of stderr.
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    args = daemon_args(lab, log=False)
    if how != "daemon":
        args.remove("-d")
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh",
                          "-c", PRIVATE_DEV, "sh", dev] + args,
                         stdout=errf, stderr=errf, env=env,
                         stdin=subprocess.DEVNULL)

    def stderr_text():
        with open(errf.name) as f:
            return f.read()

    daemon_pid = None
    try:
        if how == "daemon":
            assert p.wait(60) == 0, stderr_text()
            with open(lock_file(lab.pin)) as f:
                daemon_pid = int(f.readline())
        wait_for(lambda: attached_now(lab) == ["r1-eth0", "r1-eth1"],
                 timeout=20, what="fpmd attached")
        if how == "plain":
            wait_for(lambda: "started:" in stderr_text(), timeout=20,
                     what="the log on stderr")
            assert not sl.lines, sl.lines
        else:
            wait_for(lambda: any("started:" in g for g in sl.lines),
                     timeout=20, what="the log in syslog")
            # <29>: daemon facility, notice (FRR's level for info).
            line = next(g for g in sl.lines if "started:" in g)
            assert re.match(r"<29>.* fpmd\[\d+\]: fpmd .* started:", line), \
                line
            assert any("log: to syslog" in g for g in sl.lines), sl.lines
            text = stderr_text()
            assert "started:" not in text, text
            if how == "daemon":
                assert "logging to syslog" in text, text
    finally:
        if daemon_pid and pid_alive(daemon_pid):
            stop_pid(daemon_pid)
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(15)
        stop_leftover(lab, lock_file(lab.pin))
        sl.close()
        errf.close()


# ---- fpmctl: singular forms -------------------------------------------------------

def test_fpmctl_singular_aliases(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d, v6=False)
    for alias, plural in (("route", "routes"), ("nexthop", "nexthops"),
                          ("neighbor", "neighbors"),
                          ("interface", "interfaces"),
                          ("guard", "guards"), ("group", "groups")):
        # fpmd's state may move between two calls (a link-local address
        # leaving DAD adds a route and counts a guard event): the alias
        # is compared with the plural taken before and after it, once
        # those two agree (the same state all along).
        seen = []

        def sandwich():
            b0 = d.ctl("--json", "show", plural).stdout
            a = d.ctl("--json", "show", alias).stdout
            b1 = d.ctl("--json", "show", plural).stdout
            seen[:] = [a, b0, b1]
            return b0 == b1
        wait_for(sandwich, timeout=10,
                 what=f"show {plural} the same twice (fpmd still changing)")
        a, b, _ = seen
        assert a == b and a.strip(), (alias, a, b)
    one = d.show("route", "172.16.102.0/24")
    assert list(one) == ["172.16.102.0/24"], one
    r = d.ctl("show", "routez", check=False)
    assert r.returncode != 0 and "unknown show 'routez'" in r.stderr
