#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Everything a fresh Debian 12 machine needs to run all of fpmd's tests:
# packages, the FRR source for the zebra plugin, a build with ASan/UBSan
# (the plugin itself is built as zebra is, without them), then
# `make check`. Run as root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
frr_src=${FPMD_FRR_SOURCE:-/var/cache/fpmd/frr-src}
"$top/scripts/install-deps.sh"
plugin=""
if "$top/scripts/frr-source.sh" "$frr_src"; then
	plugin="--with-frr-source=$frr_src"
else
	# The plugin tests then skip, and say why; everything else runs.
	echo "test.sh: WARNING: could not prepare the FRR source in $frr_src;" \
	     "building without the zebra plugin" >&2
fi
# Sanitized build: the daemon, fpmctl and the C tests run under ASan/UBSan.
# shellcheck disable=SC2086
FPMD_BUILDDIR=${FPMD_BUILDDIR:-$top/build} "$top/scripts/build.sh" \
	--enable-sanitizers $plugin
# fpmd mounts bpffs itself when it is missing (test_config.py checks that in
# a mount namespace of its own); the tests' own bpftool calls need it too.
grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
cd "${FPMD_BUILDDIR:-$top/build}"
exec make -s check
