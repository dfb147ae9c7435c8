# SPDX-License-Identifier: GPL-2.0-or-later
"""The C test programs with a case table (tests/xdp_test.c,
tests/fib_check.c): `PROGRAM --list` names the cases, `PROGRAM [ARGS] CASE`
runs one; pytest makes a test of each case.
"""
import os
import re
import subprocess

import pytest

from lib.lab import BUILDDIR


def program(name):
    return os.path.join(BUILDDIR, "tests", name)


def not_built(path):
    return f"({os.path.basename(path)} not built)"


def case_names(path):
    """The program's cases; one placeholder case if it is not built, which
    run() fails with the make target to run."""
    if not os.access(path, os.X_OK):
        return [not_built(path)]
    out = subprocess.run([path, "--list"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return out.split()


def run(path, args, case, timeout):
    """Runs one case; returns (stdout, report for a failure). Fails the
    test when the program is not built or exits non-zero."""
    name = os.path.basename(path)
    if case == not_built(path):
        pytest.fail(f"{path} not built (make tests/{name})")
    r = subprocess.run([path, *args, case], capture_output=True, text=True,
                       timeout=timeout)
    report = (f"{' '.join([name, *args, case])} exited {r.returncode}:\n"
              f"{r.stdout}{r.stderr}")
    if r.returncode != 0:
        pytest.fail(report, pytrace=False)
    return r.stdout, report


_batches = {}


def _run_all(path, args, timeout):
    """Every case in one process: ({case: (passed, its lines)}, exit
    status (a string when killed), stderr)."""
    try:
        r = subprocess.run([path, *args], capture_output=True, text=True,
                           timeout=timeout)
        out, err, rc = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) \
                else (b or "")
        out, err, rc = text(e.stdout), text(e.stderr), \
            f"nothing (killed after {timeout} s)"
    results, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"(not ok|ok) \d+ - ([^\s:]+)", line)
        if m:
            cur = m.group(2)
            results[cur] = (m.group(1) == "ok", [line])
        elif cur:
            results[cur][1].append(line)
    return results, rc, err


def batch(path, args, timeout):
    """The one run of every case of (path, args): (results, exit status,
    stderr) as _run_all returns them, run the first time asked for."""
    key = (path, tuple(args))
    if key not in _batches:
        _batches[key] = _run_all(path, args, timeout)
    return _batches[key]


def batch_check(path, args, timeout):
    """What the cases' results cannot show: the process ended as they say
    (exit status 1 when one failed, 0 otherwise: not killed, no sanitizer
    report at exit, such as a leak), with nothing on stderr from a
    sanitizer."""
    name = os.path.basename(path)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} not built (make tests/{name})")
    results, rc, err = batch(path, args, timeout)
    failed = sorted(c for c, (ok, _) in results.items() if not ok)
    want = 1 if failed else 0
    assert rc == want and "Sanitizer" not in err, \
        f"{name} {' '.join(args)} ({len(results)} cases, failed: " \
        f"{failed or 'none'}) exit status {rc}, not {want}; stderr:\n" \
        f"{err[-6000:]}"


def run_batched(path, args, case, timeout):
    """As run(), but all the cases of (path, args) run in one process, the
    first time one of them is asked for: the program still builds its
    fixture afresh for each case, and a process per case (a network
    namespace and its veths each) cost more than most cases do. Returns
    this case's (output, report); fails the test when the case failed or
    never ran (the process died before it)."""
    name = os.path.basename(path)
    if case == not_built(path):
        pytest.fail(f"{path} not built (make tests/{name})")
    results, rc, err = batch(path, args, timeout)
    rest = f"exit status {rc}; stderr:\n{err[-4000:]}"
    again = " ".join([path, *args, case])
    if case not in results:
        pytest.fail(f"{name} {' '.join(args)}: case {case} never ran; "
                    f"{rest}\nalone: {again}", pytrace=False)
    passed, lines = results[case]
    report = "\n".join(lines) + f"\n(alone: {again})"
    if not passed:
        pytest.fail(report, pytrace=False)
    return "\n".join(lines), report
