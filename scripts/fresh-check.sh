#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs a command on a brand-new Debian 12, as a new user would: in a clean
# root file system with only apt and git installed.
#
#   scripts/fresh-check.sh [--refresh] [--keep] [COMMAND [ARG...]]
#
# COMMAND (default: sh .ci/run) runs as root from a clone of this
# repository's HEAD (committed work only, as CI sees it) in /root/fpmd of
# the new root, with a clean environment. The root is Debian's
# `mmdebstrap --variant=apt --include=git,ca-certificates bookworm`; its
# tarball is the only thing cached (/var/cache/fpmd/fresh; made anew
# when older than 7 days, or with --refresh). Each run unpacks it into
# /var/tmp/fpmd-fresh.XXXXXX and runs COMMAND in a mount and PID
# namespace of its own, with the host's /dev and /sys, a /proc of the new
# PID namespace, a tmpfs on /run and a bpffs of its own on /sys/fs/bpf:
# network namespaces, veths, BPF and XDP work as on a machine, and what
# the run leaves (mounts, netns files, pins, processes) goes when the
# namespaces go. The root is removed on every exit path (--keep keeps it,
# and says where). Prints the time and the result, and exits with
# COMMAND's status (or 1 when the root cannot be made).
#
# When to run it, and how long it takes: doc/testing.md, "A fresh machine".
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
prog=fresh-check
say() { echo "$prog: $*"; }
die() { echo "$prog: error: $*" >&2; exit 1; }

refresh=no
keep=no
while [ $# -gt 0 ]; do
	case $1 in
	--refresh) refresh=yes; shift ;;
	--keep) keep=yes; shift ;;
	--help | -h) sed -n '3,24s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option $1 (--refresh, --keep)" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- sh .ci/run
[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap, namespaces, chroot)"
[ "${FPMD_FRESH_ROOT:-}" != 1 ] || die "already inside a fresh root"
git -C "$top" rev-parse --verify -q HEAD >/dev/null ||
	die "$top is not a git checkout with a commit: nothing to clone"

if ! command -v mmdebstrap >/dev/null; then
	say "installing mmdebstrap (Debian's, to make the root)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends mmdebstrap >/dev/null 2>&1 ||
		die "could not install mmdebstrap"
fi

cache=${FPMD_FRESH_CACHE:-/var/cache/fpmd/fresh}
base=$cache/bookworm-apt-git.tar
mkdir -p "$cache"
if [ "$refresh" = yes ] || [ ! -s "$base" ] ||
	[ -n "$(find "$base" -mtime +7 2>/dev/null)" ]; then
	say "making the base root (mmdebstrap bookworm, apt and git only; ~40 s)"
	t=$(date +%s)
	mmdebstrap --quiet --format=tar --variant=apt --include=git,ca-certificates \
		bookworm "$base.tmp" >"$cache/mmdebstrap.log" 2>&1 || {
		tail -n 20 "$cache/mmdebstrap.log" >&2
		rm -f "$base.tmp"
		die "mmdebstrap failed (log: $cache/mmdebstrap.log)"
	}
	mv "$base.tmp" "$base"
	say "base root made in $(($(date +%s) - t)) s: $base"
fi

root=$(mktemp -d /var/tmp/fpmd-fresh.XXXXXX)
child=
cleanup() {
	status=$?
	set +e
	trap - EXIT INT TERM HUP
	# unshare --kill-child: the namespace's first process, and with it
	# every process of the PID namespace, dies with unshare.
	[ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
	if [ "$keep" = yes ]; then
		say "kept the root: $root (rm -rf it when done)"
	elif grep -q " $root[/ ]" /proc/self/mountinfo; then
		say "WARNING: $root still has mounts here; not removing it"
	else
		rm -rf "$root"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

start=$(date +%s)
tar -C "$root" -xf "$base"
git clone -q --no-hardlinks "$top" "$root/root/fpmd"
say "$(git -C "$root/root/fpmd" log -1 --format='clone of %h (%s)')"
# mmdebstrap removes these from the root it makes; apt and git need them.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"
say "running in a fresh Debian 12 root ($root): $*"

# Everything below runs in the new namespaces; $1 is the root.
inner='
set -eu
r=$1
shift
mount --bind "$r" "$r"        # ip netns needs / to be a mount point
mount -t proc proc "$r/proc"
mount --rbind /dev "$r/dev"
mount --rbind /sys "$r/sys"
umount "$r/sys/fs/bpf" 2>/dev/null || true   # the host'"'"'s, from /sys
mount -t bpf bpf "$r/sys/fs/bpf"
mount -t tmpfs -o mode=0755 tmpfs "$r/run"
mkdir -p "$r/run/lock"
exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	FPMD_FRESH_ROOT=1 ${CI:+CI=$CI} \
	sh -c "cd /root/fpmd && exec \"\$@\"" sh "$@"
'
set +e
unshare --mount --pid --fork --kill-child --propagation private \
	sh -c "$inner" sh "$root" "$@" &
child=$!
wait "$child"
rc=$?
child=
set -e
took=$(($(date +%s) - start))
if [ "$rc" -eq 0 ]; then
	say "PASS in $((took / 60)) min $((took % 60)) s: $*"
else
	say "FAIL (exit $rc) in $((took / 60)) min $((took % 60)) s: $*"
fi
exit "$rc"
