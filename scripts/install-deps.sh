#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs every Debian 12 package needed to build, test and demo fpmd.
set -eu

PKGS="
autoconf automake libtool pkg-config make gcc clang llvm
bpftool libbpf-dev libelf-dev zlib1g-dev libmnl-dev
libprotobuf-c-dev protobuf-c-compiler libyang2-dev libyang2-tools linux-libc-dev
protobuf-compiler
libsystemd-dev libmicrohttpd-dev
libclang-rt-14-dev
iproute2 iputils-ping iperf3 ethtool nftables iptables procps
python3 python3-pytest python3-scapy python3-matplotlib python3-protobuf
frr bird2 prometheus curl
debhelper dpkg-dev libsystemd-dev libmicrohttpd-dev systemd man-db
prometheus-frr-exporter
"

export DEBIAN_FRONTEND=noninteractive
# Do not let package installation start services (frr) on the host.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
# bird2 is only a route feed for tests/bench_cp.py, and prometheus a
# scraper for tests/test_metrics.py; each test runs its own inside a
# namespace: one installed here must not run on the host, not now
# (policy-rc.d) and not at the next boot either.
was_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true
}
bird_was_installed=$(was_installed bird2)
prometheus_was_installed=$(was_installed prometheus)
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $PKGS
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
case $bird_was_installed in
*" installed") ;;
*) disable_service bird ;;
esac
case $prometheus_was_installed in
*" installed") ;;
*) disable_service prometheus ;;
esac
