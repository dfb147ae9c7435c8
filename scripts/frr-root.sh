#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# FRR from another Debian release, in a root file system of its own: for
# the tests (FRR daemons run from it with chroot inside the tests'
# namespaces), for building the zebra plugin against that release's FRR,
# and for building that release's fpmd-frr package.
#
#   scripts/frr-root.sh [--refresh] SUITE        prints the root's path
#   scripts/frr-root.sh --run SUITE COMMAND...   runs COMMAND in the root
#   scripts/frr-root.sh --plugin SUITE           builds fpmd_zebra.so there
#   scripts/frr-root.sh --scratch SUITE DIR COMMAND...
#                        runs COMMAND in a throwaway copy of the root
#
# A run that makes a root holds $cache/SUITE.lock: others wait for it.
#
# SUITE is a Debian suite name (trixie, forky, sid, ...). The root is
# /var/cache/fpmd/frr-roots/SUITE ($FPMD_FRR_ROOTS), made once with
# Debian's mmdebstrap (apt variant, Release files past their Valid-Until
# accepted: the archive may be a snapshot) and kept until --refresh:
#   - frr of that suite, and everything debian/control's Build-Depends
#     names (apt-get build-dep on this tree's debian/), so fpmd builds
#     there as it does here;
#   - the FRR source of exactly that frr, prepared by scripts/frr-source.sh
#     in the root's /var/cache/fpmd/frr-src.
# About 3 minutes and 1.5 GB the first time. Made in SUITE.new and renamed
# when complete: a root that exists is whole.
#
# --run mounts /proc, /dev and /sys (the caller's namespace's) in the
# root for COMMAND only, in a mount namespace of its own, and copies
# nothing in: COMMAND sees the root's files only.
#
# --scratch runs COMMAND in a copy-on-write view of the root (overlayfs,
# its changes in a temporary directory removed afterwards), with DIR of
# this machine mounted at the same path in it, in a network namespace of
# its own with nothing but lo: a package can be installed and its daemons
# started there (the tests of each suite's packages do) without changing
# the cached root or touching this machine's network.
#
# --plugin copies this tree (tracked and new files) into the root's
# /build/fpmd, runs its scripts/frr-source.sh there (nothing to do when
# the source is prepared), configures the tree with --with-frr-source and
# makes only the zebra module; prints the module's path on the host. The tests load
# it into that root's zebra (tests/lib/frr.py).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
prog=frr-root
say() { echo "$prog: $*" >&2; }
die() { echo "$prog: error: $*" >&2; exit 1; }

mode=root
refresh=no
while [ $# -gt 0 ]; do
	case $1 in
	--refresh) refresh=yes; shift ;;
	--run) mode=run; shift ;;
	--plugin) mode=plugin; shift ;;
	--scratch) mode=scratch; shift ;;
	--help | -h) sed -n '3,42s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) die "unknown option $1 (--refresh, --run, --scratch, --plugin)" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "usage: $0 [--refresh|--run|--scratch|--plugin] SUITE [COMMAND...]"
suite=$1
shift
case $suite in
*[!a-z0-9-]* | "") die "not a Debian suite name: $suite" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap, chroot, mounts)"
cache=${FPMD_FRR_ROOTS:-/var/cache/fpmd/frr-roots}
root=$cache/$suite
stamp=$root/.fpmd-frr-root

# COMMAND in the root, /proc /dev /sys mounted for it alone.
in_root() {
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" &&
		mount --rbind /dev "$r/dev" &&
		mount --rbind /sys "$r/sys" &&
		exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$@"
}

# The root's frr and frrvty get this machine's uid and gids, as an frr
# package installed here would have: fpmd's FPM peer check
# (fpm/allowed-users, default frr) then sees zebra's socket owned by frr.
# rewrite FILE FIELD OLD NEW [NAME]: in a passwd or group file, FIELD
# (3: uid or gid, 4: a user's group) becomes NEW where it is OLD (and the
# line is NAME's, if given). The apt variant has no usermod.
rewrite() {
	awk -F: -v OFS=: -v f="$2" -v old="$3" -v id="$4" -v n="${5:-}" '
		$f == old && (n == "" || $1 == n) { $f = id }
		{ print }' "$1" >"$1.fpmd" && mv "$1.fpmd" "$1"
}
same_ids() {
	r=$1
	for g in frr frrvty; do
		host=$(getent group "$g" | cut -d: -f3) || continue
		have=$(chroot "$r" getent group "$g" | cut -d: -f3)
		[ -n "$have" ] && [ "$have" != "$host" ] || continue
		other=$(chroot "$r" getent group "$host" | cut -d: -f1 || true)
		[ -z "$other" ] ||
			die "gid $host ($g here) is $other's in the $suite root"
		rewrite "$r/etc/group" 3 "$have" "$host" "$g"
		rewrite "$r/etc/passwd" 4 "$have" "$host"
		find "$r" -xdev -gid "$have" -exec chgrp -h "$host" {} +
	done
	host=$(id -u frr 2>/dev/null) || return 0
	have=$(chroot "$r" id -u frr)
	[ "$have" != "$host" ] || return 0
	other=$(chroot "$r" getent passwd "$host" | cut -d: -f1 || true)
	[ -z "$other" ] || die "uid $host (frr here) is $other's in the $suite root"
	rewrite "$r/etc/passwd" 3 "$have" "$host" frr
	find "$r" -xdev -uid "$have" -exec chown -h "$host" {} +
	say "the root's frr has this machine's ids (uid $host)"
}

# A step of make_root, done once: its mark in SUITE.new says it is done,
# so a run that failed later (the network, the archive) resumes there.
step() {
	name=$1
	shift
	[ -f "$new/.fpmd-step-$name" ] && return 0
	"$@" >>"$cache/$suite.log" 2>&1 || {
		tail -n 30 "$cache/$suite.log" >&2
		die "$name failed in the $suite root (log: $cache/$suite.log; the next run resumes there, --refresh starts anew)"
	}
	touch "$new/.fpmd-step-$name"
}

make_root() {
	command -v mmdebstrap >/dev/null ||
		die "mmdebstrap is not installed: run scripts/install-deps.sh"
	new=$root.new
	mkdir -p "$cache"
	start=$(date +%s)
	if [ "$refresh" = yes ] || [ ! -f "$new/.fpmd-step-base" ]; then
		rm -rf "$new"
		say "making a $suite root with its frr in $new (mmdebstrap, 1-3 min)"
		mirror=http://deb.debian.org/debian
		mmdebstrap --variant=apt --quiet \
			--aptopt='Acquire::Check-Valid-Until "false"' \
			--include=frr,ca-certificates,git \
			"$suite" "$new" \
			"deb $mirror $suite main" "deb-src $mirror $suite main" \
			>"$cache/$suite.log" 2>&1 || {
			tail -n 30 "$cache/$suite.log" >&2
			rm -rf "$new"
			die "mmdebstrap $suite failed (log: $cache/$suite.log)"
		}
		same_ids "$new"
		touch "$new/.fpmd-step-base"
	else
		say "resuming the $suite root in $new"
	fi
	# Build-Depends of this tree, read by apt from debian/control, and the
	# FRR source of the root's frr.
	rm -rf "$new/tmp/fpmd-deps"
	mkdir -p "$new/tmp/fpmd-deps"
	cp -a "$top/debian" "$top/scripts" "$new/tmp/fpmd-deps/"
	say "installing debian/control's Build-Depends in the root (1-3 min)"
	step build-dep in_root "$new" sh -c \
		'apt-get update -q && apt-get build-dep -y -q /tmp/fpmd-deps'
	say "preparing the source of the root's frr (~1 min)"
	step frr-source in_root "$new" sh /tmp/fpmd-deps/scripts/frr-source.sh \
		/var/cache/fpmd/frr-src
	rm -rf "$new/tmp/fpmd-deps"
	in_root "$new" apt-get clean
	frr=$(chroot "$new" dpkg-query -W -f='${Version}' frr)
	printf 'suite %s\nfrr %s\nmade %s\n' "$suite" "$frr" "$(date -u +%FT%TZ)" \
		>"$new/.fpmd-frr-root"
	rm -rf "$root"
	mv "$new" "$root"
	say "$suite root with frr $frr ready in $(($(date +%s) - start)) s: $root"
}

# One maker per suite: a second run waits for the first, then finds the
# root made.
mkdir -p "$cache"
exec 9>"$cache/$suite.lock"
flock 9
if [ "$refresh" = yes ] || [ ! -f "$stamp" ]; then
	make_root
fi

case $mode in
root)
	echo "$root"
	;;
run)
	[ $# -ge 1 ] || die "--run SUITE COMMAND..."
	in_root "$root" "$@"
	;;
scratch)
	[ $# -ge 2 ] || die "--scratch SUITE DIR COMMAND..."
	dir=$(cd "$1" && pwd) || die "no directory $1"
	shift
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/fpmd-scratch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/upper" "$tmp/work" "$tmp/root"
	rc=0
	unshare --mount --net --propagation private sh -c '
		t=$1 r=$2 d=$3; shift 3
		mount -t overlay overlay \
			-o "lowerdir=$r,upperdir=$t/upper,workdir=$t/work" "$t/root" &&
		mkdir -p "$t/root$d" && mount --bind "$d" "$t/root$d" &&
		ip link set lo up &&
		mount -t proc proc "$t/root/proc" &&
		mount --rbind /dev "$t/root/dev" &&
		mount --rbind /sys "$t/root/sys" &&
		exec chroot "$t/root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$tmp" "$root" "$dir" "$@" || rc=$?
	exit $rc
	;;
plugin)
	b=$root/build/fpmd
	rm -rf "$b"
	sh "$top/scripts/copy-tree.sh" "$b"
	# The FRR source as this tree's frr-source.sh prepares it (nothing
	# to do when it already has).
	in_root "$root" sh /build/fpmd/scripts/frr-source.sh \
		/var/cache/fpmd/frr-src >"$root/build/frr-source.log" 2>&1 || {
		tail -n 30 "$root/build/frr-source.log" >&2
		die "preparing the FRR source in the $suite root failed (log: $root/build/frr-source.log)"
	}
	say "building the zebra module for the $suite root's frr in $b"
	in_root "$root" sh -c 'cd /build/fpmd && autoreconf -fi >/dev/null 2>&1 &&
		./configure -q --with-frr-source=/var/cache/fpmd/frr-src &&
		make -s -j"$(nproc)" fpmd/zebra-plugin/fpmd_zebra.so' \
		>"$root/build/plugin.log" 2>&1 || {
		tail -n 40 "$root/build/plugin.log" >&2
		die "building the plugin for $suite failed (log: $root/build/plugin.log)"
	}
	echo "$b/fpmd/zebra-plugin/fpmd_zebra.so"
	;;
esac
