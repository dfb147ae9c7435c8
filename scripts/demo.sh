#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The fpmd lab demo: h1 -- r1 -- h2 in network namespaces. r1 runs FRR
# (zebra with the stock dplane_fpm_nl module, and staticd, in their own
# pathspace) and fpmd, which takes zebra's routes over FPM and forwards
# with XDP. Installs what it needs, builds, configures routes with vtysh,
# sends traffic h1 -> h2, prints fpmd's routes, nexthops, neighbors and
# counters next to the kernel's forwarding counters, and cleans up after
# itself. Run as root.
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
# FRR: one instance in r1, its own pathspace (sockets and pid files under
# /var/run/frr/$PS, vtysh.conf under /etc/frr/$PS), configs in a temp dir.
PS=fpmd-demo
FRRRUN=/var/run/frr/$PS
FRRETC=/etc/frr/$PS
ZLOG=/tmp/fpmd-demo-zebra.log
SLOG=/tmp/fpmd-demo-staticd.log

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
ctl() { "$FPMCTL" -s "$SOCK" "$@"; }
fwd() { ip netns exec r1 awk '/^Ip: [0-9]/ {print $7}' /proc/net/snmp; }
fwd6() { ip netns exec r1 awk '$1 == "Ip6OutForwDatagrams" {print $2}' /proc/net/snmp6; }

# An FRR daemon's pid, if it runs and is ours (our pathspace in its argv):
# never stop FRR by name, other instances may run on this machine.
frr_pid() {
	[ -f "$FRRRUN/$1.pid" ] || return 1
	p=$(cat "$FRRRUN/$1.pid")
	tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "-N $PS " || return 1
	echo "$p"
}
frr_stop() {
	pids=
	for d in staticd zebra; do
		p=$(frr_pid $d) || continue
		kill "$p" 2>/dev/null && pids="$pids $p"
	done
	for p in $pids; do        # in parallel: each takes a second or two
		i=0
		while [ -d "/proc/$p" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		[ -d "/proc/$p" ] && kill -9 "$p" 2>/dev/null
	done
	return 0
}
frr_start() {  # daemon, extra args: -d returns once the daemon is up
	ip netns exec r1 "/usr/lib/frr/$1" -d -N "$PS" -f "$conf/$1.conf" \
		-i "$FRRRUN/$1.pid" --log "file:$2" -P 0 ${3:-} 2>>"$2"
}

cleanup() {
	frr_stop
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	for n in h1 r1 h2; do ip netns del $n 2>/dev/null || true; done
	rm -rf "$PIN" "$FRRRUN" "$FRRETC" ${conf:+"$conf"}
}
for n in h1 r1 h2; do
	if ip netns list | grep -qw "^$n"; then
		echo "demo: namespace $n already exists; remove it first" >&2
		exit 1
	fi
done
for d in "$FRRRUN" "$FRRETC"; do
	if [ -e "$d" ]; then
		echo "demo: $d already exists (another demo running?); remove it first" >&2
		exit 1
	fi
done
trap cleanup EXIT
trap 'exit 130' INT TERM

say "building the lab: h1 (172.16.101.1) -- r1 -- h2 (172.16.102.1, and 10.99.0.1 on lo)"
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
# A network behind h2, reached through a static route on r1.
ip -n h2 addr add 10.99.0.1/24 dev lo
ip -n h2 -6 addr add 2001:db8:99::1/64 dev lo
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

# fpmd's configuration (yang/fpmd.yang, fpmd.conf(5)): everything not
# written here has the module's default; the interfaces have none.
CONF=/tmp/fpmd-demo.json
cat > "$CONF" <<EOF
{
  "fpmd:fpmd": {
    "bpffs-dir": "$PIN",
    "interfaces": {
      "interface": [
        { "name": "r1-eth0" },
        { "name": "r1-eth1" }
      ]
    },
    "fpm": { "settle-time": 500 },
    "control": { "socket": { "path": "$SOCK" } },
    "logging": { "target": "file", "file": "$LOG" }
  }
}
EOF
say "fpmd's configuration ($CONF), checked with fpmd -C"
cat "$CONF"
"$FPMD" -C -f "$CONF" >/dev/null
say "starting fpmd on r1: XDP on r1-eth0 and r1-eth1, FPM server on 127.0.0.1:2620 in r1 (log: $LOG)"
"$FPMD" --netns r1 -f "$CONF" &
pid=$!
i=0
until [ -S "$SOCK" ]; do
	sleep 0.1; i=$((i + 1))
	[ $i -lt 50 ] || { cat "$LOG"; exit 1; }
done

say "starting FRR on r1: zebra -M dplane_fpm_nl, staticd (pathspace $PS)"
conf=$(mktemp -d /tmp/fpmd-demo-frr.XXXXXX)
chmod 711 "$conf"         # the daemons read their configs as user frr
mkdir -p "$FRRRUN" "$FRRETC"
chown frr:frr "$FRRRUN" "$FRRETC"
: >"$FRRETC/vtysh.conf"
cat >"$conf/zebra.conf" <<EOF
hostname r1
! zebra's FPM client (dplane_fpm_nl) streams every route it installs to
! fpmd; nexthop groups are on by default (fpm use-next-hop-groups).
fpm address 127.0.0.1
EOF
echo "hostname r1" >"$conf/staticd.conf"
chown frr:frr "$conf"/*.conf
cat "$conf/zebra.conf"
frr_start zebra "$ZLOG" "-M dplane_fpm_nl"
frr_start staticd "$SLOG"

say "routes entered with vtysh"
set -x
vtysh -N "$PS" -c 'configure terminal' \
	-c 'ip route 10.99.0.0/24 172.16.102.1' \
	-c 'ipv6 route 2001:db8:99::/64 2001:db8:102::1'
{ set +x; } 2>/dev/null
vtysh -N "$PS" -c 'show ip route' -c 'show ipv6 route' | grep -E '^[A-Z]>'

say "waiting for zebra's FPM connection (dplane_fpm_nl connects ~3 s after start)"
i=0
until ctl --json show fpm | tr -d ' \n' | grep -q '"replayState":"settled"' &&
	ctl --json show routes 10.99.0.0/24 2>/dev/null | grep -q fpm &&
	ctl --json show routes 2001:db8:99::/64 2>/dev/null | grep -q fpm; do
	sleep 0.2; i=$((i + 1))
	[ $i -lt 100 ] || { ctl show fpm; cat "$LOG"; exit 1; }
done
ctl show fpm

say "first pings: r1's kernel does not know h2 yet, so XDP passes them up; the kernel resolves ARP/ND and fpmd learns the neighbor from it"
before=$(fwd); before6=$(fwd6)
ip netns exec h1 ping -c 3 -i 0.2 10.99.0.1 | tail -2
ip netns exec h1 ping -6 -c 3 -i 0.2 2001:db8:99::1 | tail -2
echo "kernel forwarded on r1: IPv4 +$(( $(fwd) - before )), IPv6 +$(( $(fwd6) - before6 ))"
ctl clear counters

say "traffic h1 -> h2's 10.99.0.1 / 2001:db8:99::1: ping, ping -6, iperf3 TCP for 3 s"
before=$(fwd); before6=$(fwd6)
ip netns exec h1 ping -c 20 -i 0.05 10.99.0.1 | tail -2
ip netns exec h1 ping -6 -c 20 -i 0.05 2001:db8:99::1 | tail -2
ip netns exec h2 iperf3 -s -1 -D -p 5201
sleep 0.5
ip netns exec h1 iperf3 -c 10.99.0.1 -p 5201 -t 3 | grep -E 'sender|receiver'
echo "kernel ForwDatagrams on r1: IPv4 +$(( $(fwd) - before )), IPv6 +$(( $(fwd6) - before6 )) (XDP forwarded everything)"

say "fpmctl show routes (protocol fpm: from zebra)"
ctl show routes
say "fpmctl show nexthops"
ctl show nexthops
say "fpmctl show neighbors (learned from r1's kernel)"
ctl show neighbors
say "fpmctl show interfaces"
ctl show interfaces
say "fpmctl show counters"
ctl show counters
say "fpmctl show guards"
ctl show guards
say "fpmctl show state (YANG data of yang/fpmd.yang), its first lines"
ctl show state | head -25

say "removing the IPv4 route in FRR removes it from the fast path"
set -x
vtysh -N "$PS" -c 'configure terminal' -c 'no ip route 10.99.0.0/24 172.16.102.1'
{ set +x; } 2>/dev/null
i=0
while ctl --json show routes 10.99.0.0/24 2>/dev/null | grep -q fpm; do
	sleep 0.1; i=$((i + 1))
	[ $i -lt 50 ] || break
done
echo "fpmctl show routes 10.99.0.0/24: $(ctl show routes 10.99.0.0/24 2>&1)"
ip netns exec h1 ping -c 2 -i 0.2 -W 1 10.99.0.1 | tail -2 || true
echo "(r1's kernel has no route to 10.99.0.0/24 either now: unreachable)"
say "done; cleaning up (logs: $LOG $ZLOG $SLOG)"
