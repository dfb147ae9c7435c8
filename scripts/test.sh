#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Everything a fresh Debian 12 machine needs to run all of fpmd's tests:
# packages, the FRR source for the zebra plugin, a build with ASan/UBSan
# (the plugin itself is built as zebra is, without them), then
# `make check`. Run as root.
#
# The zebra plugin is part of the run: when its FRR source cannot be
# prepared the run fails. FPMD_NO_PLUGIN=1 (never set by CI) builds
# without it, and its tests are then skipped and listed as such.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
frr_src=${FPMD_FRR_SOURCE:-/var/cache/fpmd/frr-src}
"$top/scripts/install-deps.sh"
plugin=""
if [ "${FPMD_NO_PLUGIN:-}" = 1 ]; then
	echo "test.sh: FPMD_NO_PLUGIN=1: building without the zebra plugin;" \
	     "its tests will be skipped" >&2
elif "$top/scripts/frr-source.sh" "$frr_src"; then
	plugin="--with-frr-source=$frr_src"
else
	echo "test.sh: error: could not prepare the FRR source in $frr_src" \
	     "for the zebra plugin (above); FPMD_NO_PLUGIN=1 runs the tests" \
	     "without it" >&2
	exit 1
fi
# FRR from other Debian releases for the FRR tests (tests/conftest.py
# FPMD_FRR_SUITES, default trixie and forky): each root is made once and
# cached (scripts/frr-root.sh, ~4 min the first time), and the zebra
# plugin is built for each here, so that a failure says which.
suites=${FPMD_FRR_SUITES-trixie forky}
for s in $suites; do
	start=$(date +%s)
	"$top/scripts/frr-root.sh" "$s" >/dev/null
	if [ "${FPMD_NO_PLUGIN:-}" != 1 ]; then
		"$top/scripts/frr-root.sh" --plugin "$s" >/dev/null
	fi
	echo "test.sh: FRR of $s ($(sed -n 's/^frr //p' "${FPMD_FRR_ROOTS:-/var/cache/fpmd/frr-roots}/$s/.fpmd-frr-root")) ready in $(($(date +%s) - start)) s"
done
export FPMD_FRR_SUITES="$suites" FPMD_FRR_PLUGINS_BUILT=1
# Sanitized build: the daemon, fpmctl and the C tests run under ASan/UBSan.
# shellcheck disable=SC2086
FPMD_BUILDDIR=${FPMD_BUILDDIR:-$top/build} "$top/scripts/build.sh" \
	--enable-sanitizers $plugin
# fpmd mounts bpffs itself when it is missing (test_config.py checks that in
# a mount namespace of its own); the tests' own bpftool calls need it too.
grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
cd "${FPMD_BUILDDIR:-$top/build}"
FPMD_CHECK_LEFTOVERS=1 exec make -s check
