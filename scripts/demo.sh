#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The fpmd lab demo: h1 -- r1 -- h2 in network namespaces, fpmd on r1
# forwarding with XDP. Installs what it needs, builds, sends traffic h1 ->
# h2, prints fpmd's routes, nexthops, neighbors and counters next to the
# kernel's forwarding counter, and cleans up after itself. Run as root.
#
#   scripts/demo.sh            install, build, run the demo
#   scripts/demo.sh --no-setup run the demo with an existing build
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${FPMD_BUILDDIR:-$top/build}
if [ "${1:-}" != "--no-setup" ]; then
	"$top/scripts/install-deps.sh" >/dev/null
	FPMD_BUILDDIR=$build "$top/scripts/build.sh"
fi
FPMD=$build/fpmd/fpmd
FPMCTL=$build/fpmd/fpmctl
PIN=/sys/fs/bpf/fpmd-demo
SOCK=/run/fpmd/demo.sock
LOG=/tmp/fpmd-demo.log

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
ctl() { "$FPMCTL" -s "$SOCK" "$@"; }
fwd() { ip netns exec r1 awk '/^Ip: [0-9]/ {print $7}' /proc/net/snmp; }

cleanup() {
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	for n in h1 r1 h2; do ip netns del $n 2>/dev/null || true; done
	rm -rf "$PIN"
}
trap cleanup EXIT INT TERM
for n in h1 r1 h2; do
	if ip netns list | grep -qw "^$n"; then
		echo "demo: namespace $n already exists; remove it first" >&2
		exit 1
	fi
done

say "building the lab: h1 (172.16.101.1) -- r1 -- h2 (172.16.102.1)"
for n in h1 r1 h2; do ip netns add $n; ip -n $n link set lo up; done
ip link add h1-eth0 netns h1 type veth peer name r1-eth0 netns r1
ip link add r1-eth1 netns r1 type veth peer name h2-eth0 netns h2
ip -n h1 addr add 172.16.101.1/24 dev h1-eth0
ip -n h1 -6 addr add 2001:db8:101::1/64 dev h1-eth0 nodad
ip -n r1 addr add 172.16.101.2/24 dev r1-eth0
ip -n r1 -6 addr add 2001:db8:101::2/64 dev r1-eth0 nodad
ip -n r1 addr add 172.16.102.3/24 dev r1-eth1
ip -n r1 -6 addr add 2001:db8:102::3/64 dev r1-eth1 nodad
ip -n h2 addr add 172.16.102.1/24 dev h2-eth0
ip -n h2 -6 addr add 2001:db8:102::1/64 dev h2-eth0 nodad
for l in "h1 h1-eth0" "r1 r1-eth0" "r1 r1-eth1" "h2 h2-eth0"; do
	set -- $l; ip -n $1 link set $2 up
done
ip -n h1 route add default via 172.16.101.2
ip -n h1 -6 route add default via 2001:db8:101::2
ip -n h2 route add default via 172.16.102.3
ip -n h2 -6 route add default via 2001:db8:102::3
ip netns exec r1 sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
# The hosts stand in for real machines: a NIC computes checksums (tx off),
# and GRO lets a veth receive the frames XDP redirects into it.
for l in "h1 h1-eth0" "h2 h2-eth0"; do
	set -- $l; ip netns exec $1 ethtool -K $2 tx off gro on >/dev/null
done

say "starting fpmd on r1 (log: $LOG)"
"$FPMD" --netns r1 -b "$PIN" -s "$SOCK" -i r1-eth0 -i r1-eth1 \
	--log "file:$LOG" &
pid=$!
i=0
until [ -S "$SOCK" ]; do
	sleep 0.1; i=$((i + 1))
	[ $i -lt 50 ] || { cat "$LOG"; exit 1; }
done

say "routes entered with fpmctl"
set -x
ctl route add 172.16.101.0/24 dev r1-eth0
ctl route add 172.16.102.0/24 dev r1-eth1
ctl route add 2001:db8:101::/64 dev r1-eth0
ctl route add 2001:db8:102::/64 dev r1-eth1
{ set +x; } 2>/dev/null

say "first ping: h2's neighbor is unknown to fpmd, so the kernel forwards"
before=$(fwd)
ip netns exec h1 ping -c 3 -i 0.2 172.16.102.1 | tail -2
echo "kernel ForwDatagrams on r1: +$(( $(fwd) - before ))"

say "neighbors entered with fpmctl (the next issue learns them from the kernel)"
set -x
ctl neighbor add 172.16.101.1 lladdr "$(ip netns exec h1 cat /sys/class/net/h1-eth0/address)" dev r1-eth0
ctl neighbor add 172.16.102.1 lladdr "$(ip netns exec h2 cat /sys/class/net/h2-eth0/address)" dev r1-eth1
ctl neighbor add 2001:db8:101::1 lladdr "$(ip netns exec h1 cat /sys/class/net/h1-eth0/address)" dev r1-eth0
ctl neighbor add 2001:db8:102::1 lladdr "$(ip netns exec h2 cat /sys/class/net/h2-eth0/address)" dev r1-eth1
{ set +x; } 2>/dev/null
ctl clear counters

say "traffic h1 -> h2: ping, ping -6, iperf3 TCP for 3 s"
before=$(fwd)
ip netns exec h1 ping -c 20 -i 0.05 172.16.102.1 | tail -2
ip netns exec h1 ping -6 -c 20 -i 0.05 2001:db8:102::1 | tail -2
ip netns exec h2 iperf3 -s -1 -D -p 5201
sleep 0.5
ip netns exec h1 iperf3 -c 172.16.102.1 -p 5201 -t 3 | grep -E 'sender|receiver'
echo "kernel ForwDatagrams on r1: +$(( $(fwd) - before )) (XDP forwarded everything)"

say "fpmctl show routes"
ctl show routes
say "fpmctl show nexthops"
ctl show nexthops
say "fpmctl show neighbors"
ctl show neighbors
say "fpmctl show interfaces"
ctl show interfaces
say "fpmctl show counters"
ctl show counters
say "fpmctl show guards"
ctl show guards
say "done; cleaning up"
