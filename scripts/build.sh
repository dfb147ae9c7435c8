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
"$top/configure" -q "$@"
make -s -j"$(nproc)"
