// SPDX-License-Identifier: GPL-2.0-or-later
/* The name of each counter reason (bpf/fpmd_maps.h), as fpmctl, the state
 * tree and the tests show it: one table for fpmd and the fuzzers. */
#include "fib/maps.h"

const char *const fpmd_reason_names[FPMD_R_MAX] = {
	[FPMD_R_FORWARDED] = "forwarded",
	[FPMD_R_TX] = "tx",
	[FPMD_R_DROP_BLACKHOLE] = "drop-blackhole",
	[FPMD_R_PASS_NOT_IP] = "pass-not-ip",
	[FPMD_R_PASS_L2_OTHER] = "pass-l2-other",
	[FPMD_R_PASS_MALFORMED] = "pass-malformed",
	[FPMD_R_PASS_BAD_CSUM] = "pass-bad-checksum",
	[FPMD_R_PASS_TTL] = "pass-ttl",
	[FPMD_R_PASS_OPTIONS] = "pass-ip-options",
	[FPMD_R_PASS_LOCAL] = "pass-local",
	[FPMD_R_PASS_MCAST] = "pass-multicast",
	[FPMD_R_PASS_LINKLOCAL] = "pass-link-local",
	[FPMD_R_PASS_MARTIAN] = "pass-martian",
	[FPMD_R_PASS_NO_ROUTE] = "pass-no-route",
	[FPMD_R_PASS_UNREACHABLE] = "pass-unreachable",
	[FPMD_R_PASS_UNRESOLVED] = "pass-unresolved",
	[FPMD_R_PASS_EGRESS] = "pass-egress-kernel",
	[FPMD_R_PASS_MTU] = "pass-mtu",
	[FPMD_R_PASS_RPF] = "pass-rp-filter",
	[FPMD_R_PASS_POLICY] = "pass-policy",
	[FPMD_R_PASS_DISABLED] = "pass-disabled",
	[FPMD_R_PASS_REDIRECT] = "pass-redirect",
	[FPMD_R_TX_REDIRECT_ERR] = "tx-redirect-error",
	[FPMD_R_TX_XMIT_DROP] = "tx-xmit-drop",
	[FPMD_R_FORWARDED_PEER] = "forwarded-peer",
	[FPMD_R_FORWARDED_TC] = "forwarded-tc",
};
