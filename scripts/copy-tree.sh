#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Copies this tree, as it is now, into DEST (made if missing): tracked and
# new files, nothing git ignores (builds, autotools output). Outside a git
# checkout (a copy made by this script), everything but the build
# directories.
#
#   scripts/copy-tree.sh DEST
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: copy-tree.sh DEST}
mkdir -p "$dest"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -C "$dest" -xf -
else
	tar -C "$top" --exclude=./build --exclude='./build-*' \
		--exclude=./debian/build -cf - . | tar -C "$dest" -xf -
fi
