# SPDX-License-Identifier: GPL-2.0-or-later
"""How the benchmarks run their child processes (generators, sinks,
daemons, profilers): each started by name in its own session (a Ctrl-C
reaches only the benchmark, which then stops them itself, by their own
handles, never by name), output to a log file or a line protocol on
stdin/stdout, optionally pinned to a CPU, and stopped on every exit
path: guarded() runs a benchmark's work and then its cleanup however the
work ends (an exception, Ctrl-C, SIGTERM, SIGHUP), a second signal
cannot cut the cleanup short.

    def work(): ...
    rc = guarded(work, bench.cleanup)
"""
import json
import os
import signal
import subprocess
import sys
import time
import traceback


def read_text(path):
    """A log file's text so far, "" before the process has written it."""
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _pinned(cpu):
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def run(cmd, check=True, timeout=120, cpu=None, **kw):
    """A short command to completion, output captured as text; a failure
    raises, naming the command and its output."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       preexec_fn=_pinned(cpu), **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"command failed ({r.returncode}): "
                           f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


class Child:
    """A long-running child process of a benchmark.

    logpath: its stdout and stderr go there (appended), or with
    lines=True only stderr, and it speaks a line protocol on stdin and
    stdout instead (trafficgen's sink and ref: "ready" first, then one
    JSON line per "r" asked; it exits when stdin closes).
    owner: a list it joins as soon as it runs, so cleanup always sees it.
    cpu: pin it to this CPU.
    """

    def __init__(self, name, args, logpath, owner=None, lines=False,
                 cpu=None):
        self.name = name
        self.logpath = logpath
        self.lines = lines
        self.logf = open(logpath, "ab")
        try:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE if lines else subprocess.DEVNULL,
                stdout=subprocess.PIPE if lines else self.logf,
                stderr=self.logf if lines else subprocess.STDOUT,
                text=lines, start_new_session=True,
                preexec_fn=_pinned(cpu))
        except BaseException:
            self.logf.close()
            raise
        if owner is not None:
            owner.append(self)
        if lines:
            line = self.proc.stdout.readline()
            if line.strip() != "ready":
                self.stop()
                raise RuntimeError(f"{name} did not start: {line!r}; see "
                                   f"{logpath}")

    @property
    def pid(self):
        return self.proc.pid

    @property
    def returncode(self):
        return self.proc.returncode

    def alive(self):
        return self.proc.poll() is None

    def ask(self):
        """One exchange of the line protocol: its JSON answer, parsed."""
        self.proc.stdin.write("r\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def stop(self, timeout=10, sig=signal.SIGTERM):
        stop_all([self], timeout, sig)


def stop_all(children, timeout=10, sig=signal.SIGTERM):
    """Stops children together: sig to each (a line-protocol child: its
    stdin closed), one shared wait, SIGKILL for what is left."""
    t0 = time.time()
    for c in children:
        if not c.alive():
            continue
        try:
            if c.lines:
                c.proc.stdin.close()  # detaches and exits
            else:
                c.proc.send_signal(sig)
        except (OSError, ProcessLookupError):
            pass
    deadline = t0 + timeout
    for c in children:
        try:
            c.proc.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            log(f"{c.name} did not exit {timeout} s after "
                f"{'EOF' if c.lines else signal.Signals(sig).name}, "
                "killing it")
            c.proc.kill()
            c.proc.wait()
        if c.lines and c.proc.stdout:
            c.proc.stdout.close()
        c.logf.close()
    if time.time() - t0 > 3:
        log(f"stopping {', '.join(c.name for c in children)} took "
            f"{time.time() - t0:.1f} s")


def keep_going(fn, *args, **kw):
    """One step of a cleanup: an error is logged, and the cleanup goes on
    with the next step."""
    try:
        fn(*args, **kw)
    except Exception as e:  # noqa: BLE001 - keep cleaning up
        log(f"cleanup: {getattr(fn, '__name__', fn)}: {e}")


def interrupt_on_signals():
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt, so a benchmark's
    cleanup runs however it is stopped. Set explicitly: a shell that
    starts us in the background ignores SIGINT, and Python then never
    raises KeyboardInterrupt."""
    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)


def guarded(work, cleanup, what="", failed=None):
    """Runs work(), then cleanup() however work ends; returns 0, 1 (work
    raised: logged with its traceback, then failed(e) if given, e.g. to
    print the daemons' log tails) or 130 (interrupted: failed(e) too).
    Signals interrupt work (interrupt_on_signals) but not cleanup."""
    interrupt_on_signals()
    rc = 0
    try:
        work()
    except KeyboardInterrupt as e:
        log("interrupted, cleaning up")
        rc = 130
        if failed:
            failed(e)
    except Exception as e:
        log(f"{what + ' ' if what else ''}failed: {e!r}")
        traceback.print_exc()
        rc = 1
        if failed:
            failed(e)
    finally:
        # A second Ctrl-C must not cut the cleanup short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            cleanup()
        finally:
            interrupt_on_signals()
    return rc


class BenchBase:
    """What the live benchmarks (bench_live, bench_peer) share: a unique
    prefix naming their namespaces, temp and pin directories; the children
    they start; fpmd, its control socket and feed; and the cleanup that
    removes all of it. A subclass sets PREFIX and FPMCTL, and self.sock and
    self.fpmd_log when it starts fpmd."""
    PREFIX = "fpbench"
    FPMCTL = None

    def __init__(self, args):
        import tempfile
        self.args = args
        self.prefix = f"{self.PREFIX}{os.getpid() % 100000}"
        self.ns = {}
        self.tmp = tempfile.mkdtemp(prefix=self.prefix + "-")
        self.pin = f"/sys/fs/bpf/{self.prefix}"
        self.children = []
        self.fpmd = None
        self.feed = None
        self.info = {}
        self.results = []  # kept when a run is cut short

    def fpmd_text(self):
        return read_text(self.fpmd_log)

    def fpmctl(self, *args):
        r = run([self.FPMCTL, "-s", self.sock, "--json"] + list(args),
                timeout=60)
        return json.loads(r.stdout)

    def cleanup(self):
        import shutil
        if self.feed:
            keep_going(self.feed.close)
        if self.fpmd:
            keep_going(stop_all, [self.fpmd], 30)
        # Last started first: clients before the processes that hold a
        # container's namespace (its veths go with the last process).
        keep_going(stop_all, self.children[::-1])
        for name in self.ns.values():
            keep_going(run, ["ip", "netns", "del", name])
        self.ns = {}
        if os.path.isdir(self.pin):
            keep_going(shutil.rmtree, self.pin)
        if self.args.keep_logs:
            keep_going(shutil.copytree, self.tmp,
                       os.path.join(self.args.keep_logs, self.prefix),
                       ignore=shutil.ignore_patterns("*.bin", "*.sock"))
        keep_going(shutil.rmtree, self.tmp)
