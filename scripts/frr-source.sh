#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetches and prepares the FRR source that matches the INSTALLED frr
# package, for building fpmd's zebra plugin (configure --with-frr-source=DIR).
#
#   scripts/frr-source.sh DIR
#
# DIR becomes the FRR source tree itself (configure.ac, lib/, zebra/ ...):
# the Debian source package of exactly the installed version, bootstrapped
# and configured with the flags of its debian/rules (so config.h matches
# the installed zebra), then only the generated headers a module includes
# are made. About 40 s. Idempotent: a DIR already prepared for the same
# version is left alone. A DIR prepared by this script for another version
# is replaced, and the script says so.
#
# Needs root for apt (deb-src entry, build dependencies) unless both are
# already there.
set -eu

prog=frr-source
say() { echo "$prog: $*"; }
die() { echo "$prog: error: $*" >&2; exit 1; }

# A deb-src entry, only if apt has none.
# Debian 12 writes deb822 (/etc/apt/sources.list.d/debian.sources); older
# installs, upgrades and debootstrap/mmdebstrap roots a classic one-line
# /etc/apt/sources.list. The deb-src entry copies whichever has the
# archive's deb lines.
APT_ETC=${FPMD_APT_ETC:-/etc/apt}
has_debsrc() {
	grep -qsE '^[[:space:]]*deb-src[[:space:]]' "$APT_ETC/sources.list" \
		"$APT_ETC"/sources.list.d/*.list && return 0
	grep -qsiE '^[[:space:]]*Types:.*deb-src' "$APT_ETC"/sources.list.d/*.sources
}
add_debsrc() {
	deb822=$APT_ETC/sources.list.d/debian.sources
	if [ -f "$deb822" ] && grep -qiE '^[[:space:]]*Types:.*deb' "$deb822"; then
		say "adding a deb-src entry ($APT_ETC/sources.list.d/debian-src.sources, a copy of $deb822)"
		sed -E 's/^Types:.*/Types: deb-src/' "$deb822" \
			>"$APT_ETC/sources.list.d/debian-src.sources"
		return 0
	fi
	lines=$(sed -nE 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' \
		"$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*.list 2>/dev/null |
		sort -u)
	[ -n "$lines" ] ||
		die "no deb-src entry, and no deb line in $deb822 or $APT_ETC/sources.list to copy one from"
	say "adding a deb-src entry ($APT_ETC/sources.list.d/debian-src.list, from the deb lines of $APT_ETC/sources.list*)"
	printf '%s\n' "$lines" >"$APT_ETC/sources.list.d/debian-src.list"
}
if [ "${1:-}" = --add-debsrc ] && [ $# -eq 1 ]; then
	# For tests/test_deps.py (FPMD_APT_ETC=DIR): only the deb-src entry.
	has_debsrc || add_debsrc
	exit 0
fi
[ $# -eq 1 ] || die "usage: $0 DIR"
DIR=$1
case $DIR in /*) ;; *) DIR=$(pwd)/$DIR ;; esac
STAMP=$DIR/.fpmd-frr-source
# Headers FRR generates that zebra's and lib's headers include.
GENERATED="lib/route_types.h lib/version.h"
# FRR 9 on: lib/vty.h includes the mgmtd protocol's protobuf-c header.
generated() {
	if [ -f "$DIR/lib/mgmt.proto" ]; then
		echo "$GENERATED lib/mgmt.pb-c.h"
	else
		echo "$GENERATED"
	fi
}

ver=$(dpkg-query -W -f='${Version}' frr 2>/dev/null) ||
	die "the frr package is not installed (apt-get install frr first): the plugin is built for the installed zebra"
[ -n "$ver" ] || die "the frr package is not installed"

prepared() {
	[ -f "$STAMP" ] || return 1
	grep -q '^incomplete' "$STAMP" && return 1
	for h in $(generated); do
		[ -f "$DIR/$h" ] || return 1
	done
	return 0
}

if prepared; then
	have=$(cat "$STAMP")
	if [ "$have" = "$ver" ]; then
		say "$DIR already holds FRR $ver, prepared (nothing to do)"
		exit 0
	fi
	say "VERSION MISMATCH: $DIR holds FRR source $have, the installed frr is $ver; replacing it"
	rm -rf "$DIR"
elif [ -f "$STAMP" ]; then
	say "$DIR was not prepared completely; starting again"
	rm -rf "$DIR"
elif [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
	die "$DIR exists, is not empty and was not made by this script; give an empty or new directory"
fi

export DEBIAN_FRONTEND=noninteractive

# --- a deb-src entry, only if apt has none ---------------------------------
if ! has_debsrc; then
	add_debsrc
	apt-get update -q >/dev/null
elif ! apt-cache showsrc frr >/dev/null 2>&1 ||
	[ -z "$(apt-cache showsrc frr 2>/dev/null)" ]; then
	apt-get update -q >/dev/null
fi

# --- build dependencies that shape configure and config.h ------------------
# The -dev packages debian/rules' configure flags need (snmp, rpki, pam,
# ...), plus the autotools; no doc toolchain, no full build-dep.
DEPS="autoconf automake libtool pkg-config gawk dpkg-dev make gcc
bison flex texinfo python3-dev libyang2-dev libjson-c-dev libcap-dev
libc-ares-dev libpcre2-dev libsnmp-dev librtr-dev libssh-dev libpam0g-dev
libreadline-dev libelf-dev libprotobuf-c-dev"
# libyang 2 is libyang2-dev in Debian 12 (whose libyang-dev is 1.x) and
# libyang-dev from Debian 13 on, as in debian/control's alternative.
if [ -z "$(apt-cache policy libyang2-dev 2>/dev/null | sed -n 's/^ *Candidate: \([^(]\)/\1/p')" ]; then
	DEPS=$(printf '%s\n' "$DEPS" | sed 's/libyang2-dev/libyang-dev/')
fi
missing=""
for p in $DEPS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing build dependencies:$missing"
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		die "could not install:$missing"
fi

# --- the source of exactly the installed version ---------------------------
work=$DIR.work.$$
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
say "fetching the source of frr $ver (installed)"
# nearest_revision: the archive lists the installed version's source but
# its pool lacks the files (a partial mirror or snapshot): take the
# nearest earlier Debian revision of the same upstream release whose .dsc
# the pool has, fetched with apt's own helper and unpacked by
# dpkg-source, which checks the files against the .dsc.
nearest_revision() {
	up=${ver%-*}
	rev=${ver##*-}
	case $rev in '' | *[!0-9]*) return 1 ;; esac
	uri=$(apt-get source -q --print-uris --only-source "frr=$ver" 2>/dev/null |
		sed -n "s/^'\([^']*\.dsc\)'.*/\1/p" | head -n 1)
	[ -n "$uri" ] || return 1
	pool=${uri%/*}
	r=$((rev - 1))
	while [ "$r" -ge 1 ]; do
		dsc=frr_${up#*:}-$r.dsc
		if /usr/lib/apt/apt-helper download-file "$pool/$dsc" \
			"$work/$dsc" >/dev/null 2>&1; then
			for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]* [0-9]* //p' "$work/$dsc"); do
				/usr/lib/apt/apt-helper download-file "$pool/$f" \
					"$work/$f" >/dev/null 2>&1 || return 1
			done
			(cd "$work" && dpkg-source -x "$dsc" >>apt.log 2>&1) || return 1
			echo "$up-$r"
			return 0
		fi
		r=$((r - 1))
	done
	return 1
}
near=""
if ! (cd "$work" && apt-get source -q --only-source "frr=$ver" >apt.log 2>&1); then
	avail=$(apt-cache showsrc frr 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' ')
	if near=$(nearest_revision); then
		say "WARNING: the archive lists frr $ver's source but has not its files; using $near, the nearest earlier revision of the same FRR release it has (Debian's changes between them are not in the module's view of zebra)"
	else
		cat "$work/apt.log" >&2
		die "VERSION MISMATCH: the installed frr is $ver, the archive offers source ${avail:-none}.
  The archive serves only its newest revision: upgrade frr to it
  (apt-get install frr) and run this script again."
	fi
fi
tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'frr-*' | head -n 1)
[ -n "$tree" ] || die "apt-get source gave no frr-* directory in $work"
srcver=$(cd "$tree" && dpkg-parsechangelog -S Version)
[ "$srcver" = "${near:-$ver}" ] ||
	die "VERSION MISMATCH: the source's debian/changelog says $srcver, the installed frr is $ver"
mkdir -p "$(dirname "$DIR")"
rmdir "$DIR" 2>/dev/null || true
mv "$tree" "$DIR"
echo "incomplete $ver" >"$STAMP"

# --- configure as debian/rules does ----------------------------------------
# make -n prints debian/rules' configure recipe with its variables (build
# profiles, multiarch) expanded; the flags are what follows
# "dh_auto_configure --". In front go the defaults dh_auto_configure adds,
# in its order, as the installed zebra's --version shows them.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
build=$(dpkg-architecture -qDEB_BUILD_GNU_TYPE)
rules=$(cd "$DIR" && make -s -n -f debian/rules override_dh_auto_configure \
	DEB_HOST_MULTIARCH="$multiarch" 2>/dev/null) ||
	die "cannot read the configure flags from $DIR/debian/rules"
flags=$(printf '%s\n' "$rules" | tr '\n' ' ' | sed -e 's/\\ / /g' \
	-e 's/.*dh_auto_configure[[:space:]]*--//' -e 's/#.*$//')
[ -n "$(printf '%s' "$flags" | tr -d ' \t')" ] ||
	die "no dh_auto_configure flags found in $DIR/debian/rules"
# The manuals need sphinx and shape nothing in config.h: left out.
flags=$(printf '%s' "$flags" | sed -E 's/--enable-doc(-html)?([[:space:]]|$)/\2/g')
flags="$flags --disable-doc"
# ${prefix} stays literal for configure (single quotes survive the eval).
dh_defaults="--build=$build --prefix=/usr --includedir='\${prefix}/include'
--mandir='\${prefix}/share/man' --infodir='\${prefix}/share/info'
--sysconfdir=/etc --localstatedir=/var --disable-option-checking
--disable-silent-rules --libdir='\${prefix}/lib/$multiarch'
--libexecdir='\${prefix}/lib/$multiarch' --disable-maintainer-mode"
# Newer debhelper passes --runstatedir and no --libexecdir: as the
# installed zebra was configured.
zargs=$(/usr/lib/frr/zebra --version 2>/dev/null | sed -n '/configured with:/{n;p}')
case $zargs in *--libexecdir=*) ;; *)
	dh_defaults=$(printf '%s' "$dh_defaults" | sed "s|--libexecdir='[^']*'||") ;;
esac
case $zargs in *--runstatedir=/run*)
	dh_defaults="$dh_defaults --runstatedir=/run" ;;
esac

say "bootstrapping"
(cd "$DIR" && ./bootstrap.sh >"$DIR/.fpmd-bootstrap.log" 2>&1) ||
	die "bootstrap.sh failed, see $DIR/.fpmd-bootstrap.log"
say "configuring with debian/rules' flags"
printf '%s\n' "./configure $dh_defaults $flags PYTHON=/usr/bin/python3" |
	tr '\n' ' ' >"$DIR/.fpmd-configure-cmd"
configure() {
	(cd "$DIR" && eval "$(cat .fpmd-configure-cmd)" >.fpmd-configure.log 2>&1)
}
if ! configure; then
	# DEPS is what Debian 12's FRR 8.4 needs; another release's flags may
	# want more (FRR 10: sqlite3, ...): its full Build-Depends, once.
	say "configure failed ($(tail -n 1 "$DIR/.fpmd-configure.log")); installing frr's own Build-Depends (apt-get build-dep frr=$ver) and trying again"
	apt-get build-dep -y -q "frr=$ver" >"$DIR/.fpmd-build-dep.log" 2>&1 ||
		apt-get build-dep -y -q frr >>"$DIR/.fpmd-build-dep.log" 2>&1 ||
		die "apt-get build-dep frr failed, see $DIR/.fpmd-build-dep.log"
	configure || die "FRR's configure failed, see $DIR/.fpmd-configure.log"
fi

GENERATED=$(generated)
say "generating headers: $GENERATED"
# shellcheck disable=SC2086
(cd "$DIR" && make $GENERATED >"$DIR/.fpmd-make.log" 2>&1) ||
	die "make $GENERATED failed, see $DIR/.fpmd-make.log"
# The installed zebra prints the configure arguments it was built with;
# ours should be the same set (PYTHON and build_alias aside).
norm() { tr -s ' \t' '\n' | sed -e "s/^'//" -e "s/'$//" |
	grep -Ev '^(PYTHON=|build_alias=|LIBTOOLFLAGS=|-rpath|--enable-doc|--disable-doc|/usr/lib/.*/frr"?$|$)' | sort; }
theirs=$(/usr/lib/frr/zebra --version 2>/dev/null | sed -n '/configured with:/{n;p}' | norm)
ours=$(sed -n 's/^#define FRR_CONFIG_ARGS "\(.*\)"$/\1/p' "$DIR/lib/version.h" | norm)
if [ -n "$theirs" ] && [ "$theirs" != "$ours" ]; then
	say "WARNING: configure arguments differ from the installed zebra's:"
	printf '%s\n' "$theirs" >"$work/theirs"
	printf '%s\n' "$ours" >"$work/ours"
	diff "$work/theirs" "$work/ours" | sed 's/^/  /' || true
fi
printf '%s\n' "$ver" >"$STAMP"
# Which Debian revision's source it is, when not the installed one's.
if [ -n "$near" ]; then
	printf '%s\n' "$near" >"$DIR/.fpmd-frr-source-revision"
fi
say "FRR $ver prepared in $DIR (configure --with-frr-source=$DIR)"
