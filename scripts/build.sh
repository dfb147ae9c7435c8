#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Configure and build fpmd out of tree in ./build (or $FPMD_BUILDDIR).
# Extra arguments go to configure, e.g. --enable-sanitizers.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${FPMD_BUILDDIR:-$top/build}
cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
# make rebuilds nothing when only the flags change: a directory the demo
# built plainly would keep its objects after test.sh configures it with
# sanitizers (and a new --sysconfdir would keep the old configuration
# path compiled in). Start clean when the arguments differ from the
# last ones this script used here (or it did not configure this one).
args="$*"
if [ -f Makefile ] && [ "$(cat .build-args 2>/dev/null)" != "$args" ]; then
	echo "build.sh: $build was configured with other arguments: make clean"
	make -s clean >/dev/null 2>&1 || true
fi
rm -f .build-args
"$top/configure" -q "$@"
printf '%s\n' "$args" >.build-args
make -s -j"$(nproc)"
