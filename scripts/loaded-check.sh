#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The whole `make check` RUNS times in a row (default 3) while one core
# is kept busy by another process, to find tests that depend on timing.
#
#   scripts/loaded-check.sh [RUNS]
#
# Uses the build in $FPMD_BUILDDIR (default ./build, as scripts/test.sh
# makes it). The load is one CPU-bound shell loop at normal priority for
# the whole time (`while :; do :; done`), which the scheduler moves
# between cores as it would any busy process: on this 2-core machine the
# tests get one core's worth of CPU, on average. Each run's output goes to
# $FPMD_BUILDDIR/loaded-check.N.log; a line per run gives its time and
# pytest's summary. Exits non-zero when any run failed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${FPMD_BUILDDIR:-$top/build}
runs=${1:-3}
[ -f "$build/Makefile" ] || { echo "loaded-check: no build in $build (scripts/test.sh makes it)" >&2; exit 1; }

sh -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "loaded-check: $runs runs of make check in $build; busy loop pid $busy"
failed=0
i=1
while [ "$i" -le "$runs" ]; do
	log=$build/loaded-check.$i.log
	start=$(date +%s)
	if (cd "$build" && FPMD_CHECK_LEFTOVERS=1 make -s check) >"$log" 2>&1; then
		res=passed
	else
		res=FAILED
		failed=$((failed + 1))
	fi
	took=$(($(date +%s) - start))
	summary=$(grep -E '^=+ .* in [0-9.]+s' "$log" | tail -n 1 | tr -d '=')
	echo "loaded-check: run $i $res in $((took / 60)) min $((took % 60)) s:${summary:- no pytest summary (see $log)}"
	i=$((i + 1))
done
echo "loaded-check: $((runs - failed)) of $runs runs passed"
[ "$failed" -eq 0 ]
