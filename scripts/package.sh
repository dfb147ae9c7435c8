#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the Debian packages fpmd and fpmd-frr:
#
#   scripts/package.sh [--install] [OUTDIR]      (default ./build-deb)
#   scripts/package.sh --suite SUITE [OUTDIR]    for another Debian release
#
# from a copy of the tree (dpkg-buildpackage writes into the parent of
# the source and runs autoreconf in it, which must not touch ./build, the
# test build). The zebra module needs the FRR source of the installed frr:
# scripts/frr-source.sh prepares it in $FPMD_FRR_SOURCE
# (/var/cache/fpmd/frr-src), which needs root and apt the first time.
# --install then installs both (again, if the same version is installed:
# CI runs this on the same machine more than once) without starting
# fpmd, as
#   apt-get install ./build-deb/fpmd_*.deb ./build-deb/fpmd-frr_*.deb
# would, keeping a changed /etc/fpmd/fpmd.json.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
install=no
suite=""
while [ $# -gt 0 ]; do
	case $1 in
	--install) install=yes; shift ;;
	--suite) suite=${2:?--suite needs a Debian suite name}; shift 2 ;;
	*) break ;;
	esac
done
out=${1:-$top/build-deb}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

say() { echo "package: $*"; }
die() { echo "package: error: $*" >&2; exit 1; }

# --suite SUITE: both packages built for another Debian release, in its
# root file system (scripts/frr-root.sh makes it the first time), so that
# fpmd-frr holds a module for that release's FRR and depends on exactly
# its frr. They land in OUTDIR/SUITE; --install does not apply.
if [ -n "$suite" ]; then
	[ "$install" = no ] || die "--install installs on this machine: not with --suite"
	root=$(sh "$top/scripts/frr-root.sh" "$suite") || exit 1
	src=$root/build/package-src
	rm -rf "$src" "$root/build/package-out"
	sh "$top/scripts/copy-tree.sh" "$src"
	say "building in the $suite root ($root)"
	sh "$top/scripts/frr-root.sh" --run "$suite" \
		sh /build/package-src/scripts/package.sh /build/package-out ||
		die "building for $suite failed (above)"
	mkdir -p "$out/$suite"
	rm -f "$out/$suite"/*.deb
	cp "$root/build/package-out"/*.deb "$out/$suite/"
	rm -rf "$src"
	say "$suite packages in $out/$suite:"
	for d in "$out/$suite"/fpmd*.deb; do
		say "  $(basename "$d"): $(dpkg-deb -f "$d" Depends)"
	done
	exit 0
fi

# The package's version is configure.ac's.
ver=$(sed -n 's/^AC_INIT(\[fpmd\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
deb=$(cd "$top" && dpkg-parsechangelog -S Version)
[ "$ver" = "$deb" ] ||
	die "configure.ac says $ver, debian/changelog says $deb: add a changelog entry (dch -v $ver)"

command -v dpkg-checkbuilddeps >/dev/null ||
	die "dpkg-dev is not installed: run scripts/install-deps.sh (as root) first"
missing=$(cd "$top" && dpkg-checkbuilddeps 2>&1) ||
	die "$(printf '%s' "$missing" | sed 's/^dpkg-checkbuilddeps: error: //')
  scripts/install-deps.sh (as root) installs debian/control's Build-Depends"

work=$(mktemp -d /tmp/fpmd-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/fpmd-$ver
sh "$top/scripts/copy-tree.sh" "$src"

say "building fpmd $ver in $src"
start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) || {
	tail -n 60 "$work/build.log" >&2
	die "dpkg-buildpackage failed (last lines above)"
}
mkdir -p "$out"
rm -f "$out"/fpmd_*.deb "$out"/fpmd-frr_*.deb "$out"/fpmd*-dbgsym_*.deb \
	"$out"/fpmd_*.buildinfo "$out"/fpmd_*.changes
cp "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
cp "$work/build.log" "$out/build.log"
say "built in $(($(date +%s) - start)) s:"
ls -1 "$out"/*.deb | sed 's/^/  /'
if command -v lintian >/dev/null; then
	# Advisory: its verdict is in the log, not the exit status.
	lintian --no-tag-display-limit "$out"/*.changes >"$out/lintian.log" 2>&1 || true
	say "lintian: $(grep -c '^[EW]:' "$out/lintian.log" || true) errors/warnings ($out/lintian.log)"
fi

[ "$install" = yes ] || exit 0
export DEBIAN_FRONTEND=noninteractive
# Installing must not start fpmd on this machine (the unit is enabled,
# and started where systemd runs).
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -rf "$work"; rm -f /usr/sbin/policy-rc.d' EXIT
fi
say "installing $(cd "$out" && echo fpmd_*.deb fpmd-frr_*.deb)"
apt-get install -y -q --reinstall --allow-downgrades \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	"$out"/fpmd_*.deb "$out"/fpmd-frr_*.deb >"$out/install.log" 2>&1 || {
	cat "$out/install.log" >&2
	die "installing the packages failed"
}
say "installed: $(dpkg-query -W -f='${Package} ${Version}  ' fpmd fpmd-frr)"
