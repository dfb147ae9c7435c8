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
#include <stddef.h>
#include <stdint.h>

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
	const char *watch; /* the change events it follows, or "poll" */
	char state[24];   /* "clear", "kernel-path", "refused", ... */
	char detail[512];
	uint64_t events;	  /* change notifications received */
	uint64_t last_event_ns;	  /* CLOCK_REALTIME the last one was read */
	uint64_t last_applied_ns; /* CLOCK_REALTIME its re-check was applied */
};

extern struct guard guards[GUARD_MAX];

/*
 * Re-evaluate everything and apply it to the managed interfaces. Returns
 * 1 when netfilter rules would be bypassed and bypass is not allowed.
 * Waits for RTNL (tc, rules, links) in the calling thread.
 */
int guard_check(void);

/*
 * guard_check() in three steps, so that its kernel queries run off the
 * loop (kernel/probe.h): guard_probe_new() in the loop takes the change
 * events the check answers and a snapshot of the interfaces (NULL: no
 * memory); guard_probe_run() in any thread asks the kernel;
 * guard_probe_apply() in the loop applies what it saw, as guard_check()
 * does (its return value), or drops it (-ESTALE) if the loop learnt
 * something newer meanwhile: a check applied since, an interface's link
 * event, removal or re-creation. A dropped or abandoned check
 * (guard_probe_drop) leaves its events pending for the next one. The
 * caller frees it.
 */
struct guard_obs;
struct guard_obs *guard_probe_new(void);
void guard_probe_fill(struct guard_obs *o);
void guard_probe_run(struct guard_obs *o);
int guard_probe_apply(struct guard_obs *o);
void guard_probe_drop(struct guard_obs *o);

/*
 * Re-read only the forwarding and rp_filter sysctls of every managed
 * interface (a netconf event, or "all"/"default" changing them all) and
 * write what changed to the maps. Returns the number of interfaces changed.
 */
int guard_sysctls(void);

/*
 * A managed veth that appeared while fpmd runs: would the veth-peer guard
 * make it TC_ONLY (its peer sends partial checksums)? Asked before its
 * first XDP attach; guard_check() decides for good. 1 yes, 0 no, -1
 * cannot tell now (called from inside a netlink dump's callback, where
 * no other netlink request can be made).
 */
struct iface;
int guard_wants_tc_only(const struct iface *i);

/* A change notification for guard g arrived: count it; guard_pending()
 * says which re-check it needs (guard_sysctls or guard_check). */
enum guard_pending_kind { GUARD_PENDING_SYSCTL, GUARD_PENDING_FULL };
void guard_event(enum guard_id g);
bool guard_pending(enum guard_pending_kind k);

/* Describe netfilter chains that act on forwarded traffic; 0 if none. */
int netfilter_scan(char *detail, size_t len);

#endif
