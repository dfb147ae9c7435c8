#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run one fuzzer for a given time:  scripts/fuzz.sh TARGET SECONDS [ARGS]
# TARGET: fpm, plugin, ctl, conf or rib (tests/fuzz/fuzz_TARGET.c). ARGS go to
# libFuzzer (e.g. -jobs=2). Builds the fuzzers first (make fuzz in
# $FPMD_BUILDDIR, default ./build). The working corpus grows in
# BUILD/tests/fuzz/work/TARGET (seeded from tests/fuzz/corpus and
# tests/fuzz/regress); crashes land in BUILD/tests/fuzz/crashes/TARGET/.
# A crash: fix it, then copy the input into tests/fuzz/regress/TARGET/.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${FPMD_BUILDDIR:-$top/build}
if [ $# -lt 2 ]; then
	echo "usage: $0 fpm|plugin|ctl|conf|rib SECONDS [libFuzzer args]" >&2
	exit 2
fi
target=$1 secs=$2
shift 2
case $target in
fpm | plugin | ctl | conf | rib) ;;
*)
	echo "$0: unknown target '$target' (fpm, plugin, ctl, conf, rib)" >&2
	exit 2
	;;
esac
make -s -C "$build" fuzz
work=$build/tests/fuzz/work/$target
crashes=$build/tests/fuzz/crashes/$target
mkdir -p "$work" "$crashes"
cp -n "$top/tests/fuzz/corpus/$target"/* "$work"/
if [ -d "$top/tests/fuzz/regress/$target" ]; then
	cp -n "$top/tests/fuzz/regress/$target"/* "$work"/ 2>/dev/null || true
fi
# -max_len: the largest frame or request fpmd reads is far bigger, but
# short inputs mutate faster; 64 KiB holds an FPM frame of the maximum
# size. -timeout: an input running for 30 s is a hang.
exec "$build/tests/fuzz/fuzz_$target" -max_total_time="$secs" \
	-max_len=65536 -timeout=30 -print_final_stats=1 \
	-artifact_prefix="$crashes/" "$@" "$work"
