#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# c-string.sh FILE NAME: FILE as a C string constant NAME (to embed the
# YANG module in fpmd).
set -e
echo "/* Generated from $(basename "$1") by scripts/c-string.sh. */"
echo "static const char $2[] ="
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$1"
echo ";"
