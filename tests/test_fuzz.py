# SPDX-License-Identifier: GPL-2.0-or-later
"""The fuzzers (tests/fuzz, libFuzzer with ASan and UBSan): every
regression input and every seed of the checked-in corpora runs clean, and
each target fuzzes for a short bounded time (FPMD_FUZZ_SECONDS, default
8 s) without a crash, a leak or a hang. Long runs: scripts/fuzz.sh."""
import os
import shutil
import subprocess

import pytest

from lib.lab import BUILDDIR, REPO

TARGETS = ("fpm", "plugin", "ctl", "conf", "rib")
FUZZ = os.path.join(REPO, "tests", "fuzz")
SECONDS = int(os.environ.get("FPMD_FUZZ_SECONDS", "8"))


def binary(target):
    b = os.path.join(BUILDDIR, "tests", "fuzz", f"fuzz_{target}")
    if not os.access(b, os.X_OK):
        pytest.fail(f"{b} not built: run make fuzz (configure needs a clang "
                    "that links -fsanitize=fuzzer: apt-get install "
                    "libclang-rt-14-dev)")
    return b


def inputs(kind, target):
    d = os.path.join(FUZZ, kind, target)
    return sorted(os.path.join(d, f) for f in os.listdir(d)) \
        if os.path.isdir(d) else []


def tail(text, n=60):
    return "\n".join(text.splitlines()[-n:])


@pytest.mark.parametrize("target", TARGETS)
def test_regressions_and_seeds_run_clean(target):
    files = inputs("regress", target) + inputs("corpus", target)
    assert inputs("corpus", target), f"no seed corpus for {target}"
    r = subprocess.run([binary(target), "-timeout=30"] + files,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, \
        f"fuzz_{target} fails on a checked-in input:\n{tail(r.stderr)}"
    assert r.stderr.count("Executed ") == len(files), tail(r.stderr)


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_briefly(target, tmp_path):
    work, crashes = tmp_path / "work", tmp_path / "crashes"
    work.mkdir()
    crashes.mkdir()
    for f in inputs("corpus", target) + inputs("regress", target):
        shutil.copy(f, work / f"{os.path.basename(os.path.dirname(f))}-"
                    f"{os.path.basename(f)}")
    r = subprocess.run([binary(target), f"-max_total_time={SECONDS}",
                        "-max_len=65536", "-timeout=30",
                        "-print_final_stats=1",
                        f"-artifact_prefix={crashes}/", str(work)],
                       capture_output=True, text=True,
                       timeout=SECONDS + 120)
    found = sorted(os.listdir(crashes))
    assert r.returncode == 0 and not found, (
        f"fuzz_{target} found a crash (input: {found}; reproduce with "
        f"{binary(target)} FILE, then fix it and keep the input in "
        f"tests/fuzz/regress/{target}/):\n{tail(r.stderr)}")
    runs = [ln for ln in r.stderr.splitlines()
            if ln.startswith("stat::number_of_executed_units")]
    print(f"fuzz_{target}: {runs[0] if runs else '?'} in {SECONDS}s")
