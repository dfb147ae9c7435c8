#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Everything a fresh Debian 12 machine needs to run all of fpmd's tests:
# packages, a build with ASan/UBSan, then `make check`. Run as root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
# Sanitized build: the daemon, fpmctl and the C tests run under ASan/UBSan.
FPMD_BUILDDIR=${FPMD_BUILDDIR:-$top/build} "$top/scripts/build.sh" --enable-sanitizers
cd "${FPMD_BUILDDIR:-$top/build}"
exec make -s check
