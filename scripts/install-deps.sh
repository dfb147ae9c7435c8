#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installs every Debian 12 package needed to build, package, test and demo
# fpmd. Run as root.
#
#   scripts/install-deps.sh          install them
#   scripts/install-deps.sh --list   print the test and demo tools, install nothing
#
# Two parts, each written down once:
# - building and packaging: debian/control's Build-Depends, read by apt
#   itself (`apt-get build-dep` on this tree). That list includes the FRR
#   source's build dependencies, which scripts/frr-source.sh installs too
#   when run alone; tests/test_deps.py fails when the two disagree.
# - running the tests, the demo and the fresh-root check: TOOLS below.
#
# Services that packages install enabled (frr, bird, prometheus) stay
# disabled when this script installed them: the tests and the demo run
# their own instances inside namespaces, nothing must start on the host
# now (policy-rc.d) or at the next boot.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)

TOOLS="
iproute2 iputils-ping iperf3 ethtool nftables iptables procps kmod
python3 python3-pytest python3-scapy python3-protobuf protobuf-compiler
python3-matplotlib
libyang2-tools libclang-rt-14-dev
bird2 prometheus curl systemd man-db git mmdebstrap
"
# Services of TOOLS or Build-Depends that Debian enables on installation.
SERVICES="frr bird prometheus"

if [ "${1:-}" = --list ]; then
	echo $TOOLS
	exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [--list]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "install-deps: run as root (apt-get)" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive
# Do not let package installation start services on the host.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q ' installed$'
}
# A service's package: bird's is bird2.
pkg_of() { case $1 in bird) echo bird2 ;; *) echo "$1" ;; esac; }
before=""
for s in $SERVICES; do
	installed "$(pkg_of "$s")" && before="$before $s"
done

apt-get update -q
# The tree as a source package: its debian/control's Build-Depends.
apt-get build-dep -y -q --no-install-recommends "$top/"
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $TOOLS

disable_service() {
	if [ -d /run/systemd/system ]; then
		systemctl disable --now "$1.service" >/dev/null 2>&1 || true
	elif command -v systemctl >/dev/null; then
		systemctl disable "$1.service" >/dev/null 2>&1 || true
	else
		rm -f "/etc/systemd/system/multi-user.target.wants/$1.service"
	fi
	update-rc.d "$1" disable >/dev/null 2>&1 || true
}
for s in $SERVICES; do
	case " $before " in *" $s "*) continue ;; esac
	installed "$(pkg_of "$s")" || continue
	disable_service "$s"
	echo "install-deps: $s was installed for the tests and demo; its service" \
		"is disabled (systemctl enable --now $s.service to run it)"
done
