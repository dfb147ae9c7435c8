#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The soak: a small lab with real FRR (OSPF and OSPFv3 between three
# routers, eBGP from bird with tens of thousands of routes, some of them
# flapping, a static IPv6 route) under neighbor and link churn and fpmd
# reloads and restarts (SIGHUP, SIGUSR2, SIGKILL), with sequence-numbered
# IPv4 and IPv6 UDP through r1's XDP the whole time. One fpmd lives
# through most of the run (every event but restarts); restarts have a
# phase of their own at the end. At the end every packet lost is
# accounted for, fpmd's counters are checked against the generator and
# the sink, the long-lived fpmd's RSS, map memory and fds against its own
# baseline and trend, the restart phase's fpmds against theirs, and the
# logs for unexplained errors; the slowest loop iterations are listed with
# what fpmd logged about them. Prints a summary table; exits 0 when every
# check holds, 1 when one fails, 2 when the lab could not be set up.
# doc/soak.md says what is done and checked.
# Run as root, with a build (FPMD_BUILDDIR, default ./build).
#
#   scripts/soak.sh MINUTES [--rate PPS] [--stable N] [--flap N]
#                   [--flap-period S] [--gap S] [--restart-share F]
#                   [--events LIST] [--json FILE]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ]; then
	echo "usage: $0 MINUTES [options] (see tests/soak.py --help)" >&2
	exit 2
fi
export FPMD_BUILDDIR="${FPMD_BUILDDIR:-$top/build}"
# Debian's python (scapy, protobuf), never one earlier on PATH.
exec /usr/bin/python3 "$top/tests/soak.py" "$@"
