// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel queries of a full guard check (guard_priv.h's struct
 * guard_obs): netfilter, policy rules, xfrm policies, and per interface
 * tc filters, xdp-features and the veth peer. Most wait for RTNL, so the
 * loop has the probe thread run them (kernel/probe.h) and applies the
 * answers in guard.c. Reads only the snapshot in the struct, never the
 * loop's state.
 */
#include <net/if.h> /* before linux/ headers: it guards linux/if.h */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "kernel/guard.h"
#include "kernel/guard_priv.h"
#include "kernel/nl.h"

static void rule_cb(const struct nl_rule *r, void *arg)
{
	struct rules_ctx *c = arg;
	bool dflt;

	dflt = !r->has_selector && !r->iifname[0] &&
	       ((r->priority == 0 && r->table == RT_TABLE_LOCAL) ||
		(r->priority == 32766 && r->table == RT_TABLE_MAIN) ||
		(r->priority == 32767 && r->table == RT_TABLE_DEFAULT &&
		 c->family == AF_INET));
	if (dflt)
		return;
	appendf(c->detail, sizeof(c->detail), "%s%s rule pref %u table %u%s%s",
		c->detail[0] ? "; " : "", c->family == AF_INET ? "ipv4" : "ipv6",
		r->priority, r->table, r->iifname[0] ? " iif " : "",
		r->iifname);
	if (!r->iifname[0])
		c->all = true;
	else if (c->niif < FPMD_MAX_IFACES)
		snprintf(c->iif[c->niif++], IF_NAMESIZE, "%s", r->iifname);
}

/* What check_egress (guard.c) decides from: the egress's tc, its veth
 * peer as seen from here and that peer's GRO and tx checksumming. */
static void probe_egress(struct guard_obs_if *o)
{
	o->tc_eg = nl_tc_egress(o->ifindex, o->tc_eg_why,
				sizeof(o->tc_eg_why));
	o->peer_ret = 1;
	o->gro = o->txcsum = -1;
	if (!o->is_veth || !o->peer_ifindex)
		return;
	o->peer_ret = nl_get_link_in_netns(o->peer_nsid,
					   (uint32_t)o->peer_ifindex, &o->peer);
	if (!o->peer_ret)
		o->gro = peer_gro(o->peer_nsid, o->peer.name, &o->txcsum);
}

void guard_probe_run(struct guard_obs *o)
{
	o->nfn = netfilter_scan(o->nf, sizeof(o->nf));
	memset(&o->r4, 0, sizeof(o->r4));
	memset(&o->r6, 0, sizeof(o->r6));
	o->r4.family = AF_INET;
	o->r6.family = AF_INET6;
	nl_dump_rules(AF_INET, rule_cb, &o->r4);
	nl_dump_rules(AF_INET6, rule_cb, &o->r6);
	o->x4 = o->x6 = 0;
	o->xf_ret = nl_xfrm_policies(&o->x4, &o->x6);
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct guard_obs_if *i = &o->ifs[s];

		if (!i->ifindex)
			continue;
		i->tc_in_why[0] = i->tc_eg_why[0] = '\0';
		i->tc_in = nl_tc_ingress(i->ifindex, i->tc_in_why,
					 sizeof(i->tc_in_why));
		i->feat_ret = nl_xdp_features(i->ifindex, &i->feat);
		probe_egress(i);
	}
}
