/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What XDP would bypass, and what fpmd does about it: netfilter (refuse or
 * suspend), rp_filter (checked in the fast path), forwarding sysctls,
 * policy rules, xfrm and tc ingress (kernel path), tc egress and veth peers that
 * cannot receive redirects (egress kept on the kernel path).
 */
#ifndef FPMD_GUARD_H
#define FPMD_GUARD_H

#include <stdbool.h>

enum guard_id {
	GUARD_NETFILTER,
	GUARD_FORWARDING,
	GUARD_RP_FILTER,
	GUARD_POLICY_RULES,
	GUARD_XFRM,
	GUARD_TC_EGRESS,
	GUARD_TC_INGRESS,
	GUARD_VETH_PEER,
	GUARD_SEND_REDIRECTS,
	GUARD_MAX
};

struct guard {
	const char *name;
	char state[24];   /* "clear", "kernel-path", "refused", ... */
	char detail[512];
};

extern struct guard guards[GUARD_MAX];

/*
 * Re-evaluate everything and apply it to the managed interfaces. Returns
 * 1 when netfilter rules would be bypassed and bypass is not allowed.
 */
int guard_check(void);

/* Describe netfilter chains that act on forwarded traffic; 0 if none. */
int netfilter_scan(char *detail, size_t len);

#endif
