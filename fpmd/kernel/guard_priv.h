/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the guard units share, and nothing outside them uses: guard.c
 * (the guards, per-interface checks, sysctls, change events),
 * netfilter.c (nftables and iptables-legacy scans), veth_peer.c (can a
 * veth peer receive redirected frames). The API is guard.h.
 */
#ifndef FPMD_GUARD_PRIV_H
#define FPMD_GUARD_PRIV_H

#include <stddef.h>

#include "common/util.h"

struct iface;

/* GRO on i's veth peer peer_name, looked up in the peer's namespace: 1
 * on, 0 off, -1 unknown; *txcsum the same for tx checksumming. */
int peer_gro(const struct iface *i, const char *peer_name, int *txcsum);

#endif
