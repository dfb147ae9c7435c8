/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the guard units share, and nothing outside them uses: guard.c
 * (the guards, per-interface checks, sysctls, change events),
 * netfilter.c (nftables and iptables-legacy scans), veth_peer.c (can a
 * veth peer receive redirected frames). The API is guard.h.
 */
#ifndef FPMD_GUARD_PRIV_H
#define FPMD_GUARD_PRIV_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "fpmd_maps.h" /* FPMD_MAX_IFACES */
#include "kernel/nl.h"

/* GRO on a veth peer peer_name, looked up in the peer's namespace (its
 * nsid from here, -1: ours): 1 on, 0 off, -1 unknown; *txcsum the same
 * for tx checksumming. Any thread. */
int peer_gro(int peer_nsid, const char *peer_name, int *txcsum);

/* The policy rules beyond the defaults of one family. */
struct rules_ctx {
	int family;
	char detail[256];
	bool all;
	char iif[FPMD_MAX_IFACES][IF_NAMESIZE];
	int niif;
};

/*
 * What a full guard check reads from the kernel, gathered by
 * guard_probe_run (guard_probe.c, any thread) and applied by
 * guard_probe_apply (guard.c, the loop). The sysctls are not here: the
 * loop reads them when it applies (no RTNL), so that they are never
 * older than what netconf events applied meanwhile.
 */
struct guard_obs_if {
	/* Asked: the interface as the loop had it (ifindex 0: not asked). */
	uint32_t ifindex, gen;
	bool is_veth;
	int peer_ifindex, peer_nsid;
	/* Answers: nl_tc_ingress, nl_tc_egress, nl_xdp_features. */
	int tc_in, tc_eg, feat_ret;
	char tc_in_why[160], tc_eg_why[160];
	uint64_t feat;
	/* The veth peer (peer_ret 1: not asked) and its ethtool flags
	 * (peer_gro; asked when peer_ret is 0). */
	int peer_ret, gro, txcsum;
	struct nl_link peer;
};

struct guard_obs {
	uint32_t taken;	    /* the change events it answers (guard.c) */
	uint64_t after;	    /* guard.c's count of checks applied, when asked */
	int nfn;	    /* netfilter_scan */
	char nf[512];
	struct rules_ctx r4, r6;
	int xf_ret, x4, x6; /* nl_xfrm_policies */
	struct guard_obs_if ifs[FPMD_MAX_IFACES]; /* by slot */
};

#endif
