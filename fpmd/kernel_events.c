// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the kernel announces, applied: neighbors into the RIB; addresses,
 * sysctls (netconf), policy rules and tc into the guards and the local
 * table; links to links.c (and link downs to the RIB's feed ids).
 * Besides rtnetlink, notification sockets for xfrm policies and the
 * nftables ruleset.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/xfrm.h>

#include "common/log.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/nl.h"
#include "rib/rib.h"

/* ---- kernel neighbors ---------------------------------------------------- */

/*
 * The kernel resolves ARP/ND for packets the fast path passes up; its
 * neighbor table is the truth. Usable states complete nexthops at once;
 * the rest (INCOMPLETE, FAILED, gone) unresolve them. Only neighbors on
 * managed interfaces matter.
 */
static void neigh_event(const struct nl_neigh *n, void *arg)
{
	const uint16_t usable = NUD_REACHABLE | NUD_STALE | NUD_DELAY |
				NUD_PROBE | NUD_PERMANENT;
	const char *err;

	if (!n->has_addr || (n->family != AF_INET && n->family != AF_INET6) ||
	    (n->flags & NTF_PROXY) || !iface_by_ifindex(n->ifindex))
		return;
	if (!n->deleted && n->has_mac && (n->state & usable)) {
		struct neighbor *ne;

		rib_neigh_add(n->family, n->addr, n->ifindex, n->mac, false,
			      &err);
		/* What neigh_use.c needs to act as kernel forwarding would. */
		ne = rib_neigh_get(n->family, n->addr, n->ifindex);
		if (ne) {
			ne->kstate = n->state;
			if (n->state == NUD_STALE)
				neigh_use_stale(ne);
		}
	} else
		rib_neigh_del(n->family, n->addr, n->ifindex, false, &err);
}

/* Re-read the kernel's neighbors; forget learned ones it no longer has. */
void neigh_resync(void)
{
	rib_neigh_gen++;
	if (nl_dump_neighs(neigh_event, NULL)) {
		log_warn("kernel: cannot read neighbors");
		return;
	}
	rib_neigh_sweep();
}

static void addr_event(void *arg)
{
	/* The kernel adds the local route after it announces the address:
	 * look now and once more shortly after. */
	fpmd_request_local_refresh();
	/* disable_ipv6 has no netconf event; turning it on or off removes or
	 * adds the interface's IPv6 addresses, which is our event for it. */
	guard_event(GUARD_FORWARDING);
}

/* A sysctl changed: forwarding or rp_filter of one interface, or of
 * "all"/"default" (which change every interface): guard_sysctls re-reads
 * them all once the batch of events is read. */
static void netconf_event(const struct nl_netconf *nc, void *arg)
{
	const struct iface *i = iface_by_ifindex((uint32_t)nc->ifindex);
	const char *who = i ? i->name : "unmanaged interface";

	if (nc->ifindex == NETCONFA_IFINDEX_ALL)
		who = "all";
	else if (nc->ifindex == NETCONFA_IFINDEX_DEFAULT)
		who = "default";

	guard_event(nc->rp_filter >= 0 ? GUARD_RP_FILTER : GUARD_FORWARDING);
	log_debug("kernel: netconf %s %s%s%s",
		  nc->family == AF_INET6 ? "ipv6" : "ipv4", who,
		  nc->rp_filter >= 0 ? " rp_filter" : "",
		  nc->forwarding >= 0 ? " forwarding" : "");
}

static void state_event(enum nl_state what, void *arg)
{
	if (what == NL_STATE_RULES) {
		guard_event(GUARD_POLICY_RULES);
	} else {
		guard_event(GUARD_TC_EGRESS);
		guard_event(GUARD_TC_INGRESS);
	}
}

/*
 * Links, managed or not: a link down (or gone) first tells the RIB, whose
 * feed ids on it zebra may free without a word (rib_nexthop_link_down).
 * The kernel flushes its nexthop objects on a link that is down or has
 * lost its carrier; zebra then takes them as uninstalled.
 */
static void link_event(const struct nl_link *l, void *arg)
{
	if (!l->admin_up || !l->lower_up)
		rib_nexthop_link_down(l->ifindex);
	link_changed(l, arg);
}

static void link_deleted(uint32_t ifindex)
{
	rib_nexthop_link_down(ifindex);
	link_gone(ifindex);
}

const struct nl_event_ops kernel_events = {
	.link = link_event,
	.link_gone = link_deleted,
	.neigh = neigh_event,
	.addr = addr_event,
	.netconf = netconf_event,
	.state = state_event,
};

/* Notification sockets other than rtnetlink's: xfrm policies and the
 * nftables ruleset. A message on one re-runs the guards. */
static struct watch {
	const char *what;
	int proto;
	unsigned int group;
	enum guard_id guard;
	int fd;
} watches[] = {
	{ "xfrm policies", NETLINK_XFRM, XFRMNLGRP_POLICY, GUARD_XFRM, -1 },
	{ "nftables", NETLINK_NETFILTER, NFNLGRP_NFTABLES, GUARD_NETFILTER,
	  -1 },
};

void watches_open(void)
{
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++) {
		struct watch *w = &watches[k];

		w->fd = nl_watch_open(w->proto, w->group);
		if (w->fd < 0)
			log_warn("kernel: cannot follow %s changes (%s): "
				 "polled every guard-interval only",
				 w->what, strerror(-w->fd));
	}
}

void watch_read(int fd)
{
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++) {
		struct watch *w = &watches[k];
		int n;

		if (w->fd != fd)
			continue;
		n = nl_watch_drain(fd);
		if (n < 0)
			log_warn("kernel: %s events: %s", w->what,
				 strerror(-n));
		else if (n)
			guard_event(w->guard);
	}
}

int watches_ev_add(void)
{
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++)
		if (watches[k].fd >= 0 && ev_add(watches[k].fd, EV_WATCH))
			return -1;
	return 0;
}

void watches_close(void)
{
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++)
		if (watches[k].fd >= 0)
			close(watches[k].fd);
}
