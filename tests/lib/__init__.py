# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers every test and benchmark shares: namespaces and fpmd (lab),
FRR daemons (frr), topologies (topo), fpmd's feeds (feeds), FPM frames
(fpmwire), traffic and counters (traffic), and the rest listed in
doc/testing.md."""
