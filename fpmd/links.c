// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Managed interfaces following their links: attached when they appear,
 * renumbered when re-created, detached when gone, and at start-up the
 * interfaces adopted maps knew.
 */
#include <net/if.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/nl.h"
#include "rib/rib.h"

int fpmd_prog_fd = -1;

/* After an XDP attach: neighbors and local addresses it may have missed. */
void link_attached(void)
{
	fpmd_request_neigh_resync();
	fpmd_request_local_refresh();
}

void link_changed(const struct nl_link *l, void *arg)
{
	struct iface *i = iface_by_name(l->name);
	struct iface *old = iface_by_ifindex(l->ifindex);
	char name[IF_NAMESIZE];
	bool changed;

	/* History (queued while fpmd started): that link is gone, and its
	 * RTM_DELLINK is further down the queue. */
	if (!if_indextoname(l->ifindex, name))
		return;
	/* A rename away from a managed name. */
	if (old && old != i)
		iface_gone(old);
	if (!i)
		return;
	if (i->ifindex && i->ifindex != l->ifindex)
		iface_gone(i);
	changed = iface_update(i, l);
	/* Every event re-checks whose program is there: IFLA_XDP comes
	 * only for netlink changes while up; a link going up re-queries. */
	if (i->attached)
		iface_watch(i, fpmd_prog_fd);
	if (!changed && iface_active(i))
		return;
	/* Re-created: nexthops that went out of it go out of it again
	 * (rewritten below, once it is attached). */
	if (i->gone_ifindex && i->gone_ifindex != i->ifindex)
		rib_iface_renumber(i->name, i->gone_ifindex, i->ifindex);
	i->gone_ifindex = 0;
	/* TC_ONLY: tc_path.c attaches (the recheck below). */
	if (!iface_active(i) && i->tc_only) {
		fpmd_request_recheck();
		return;
	}
	if (!i->attached && !i->tc_only) {
		/* A container's veth (tx checksumming on, the default):
		 * never XDP, whose redirects would lose its partial
		 * checksums; the recheck makes it TC_ONLY. Not known yet
		 * (inside a dump): the recheck decides. Until then the
		 * kernel forwards. */
		int tc = guard_wants_tc_only(i);

		if (tc) {
			log_info("iface %s: ifindex %u: %s: no XDP until the "
				 "guards decide",
				 i->name, i->ifindex,
				 tc > 0 ? "veth peer sends partial checksums" :
					  "veth peer not probed yet");
			i->xdp_deferred = true;
			fpmd_request_recheck();
			return;
		}
		if (iface_attach(i, fpmd_prog_fd))
			return;
		fpmd_request_recheck();
		fpmd_request_neigh_resync();
	}
	log_info("iface %s: ifindex %u, mtu %u, %s", i->name, i->ifindex, i->mtu,
		 i->up ? "up" : "down");
	fpmd_request_local_refresh();
	iface_sync(i);
	rib_iface_changed(i->ifindex);
}

void link_learn(const struct nl_link *l, void *arg)
{
	struct iface *i = iface_by_name(l->name);

	if (i)
		iface_update(i, l);
}

void link_gone(uint32_t ifindex)
{
	struct iface *i = iface_by_ifindex(ifindex);

	if (i)
		iface_gone(i);
}

/*
 * Adopted maps know each managed interface by the ifindex it had when the
 * previous fpmd left; an interface deleted or re-created since (by a
 * container restart, while no fpmd watched, or during adoption) must not
 * leave nexthops on that old ifindex: remember it, and start-up follows
 * it as link_changed would have.
 */
void ifaces_adopted_seed(void)
{
	uint32_t k, *pk = NULL;
	struct fpmd_iface v;

	while (!bpf_map_get_next_key(mapfd.ifaces, pk, &k)) {
		pk = &k;
		if (bpf_map_lookup_elem(mapfd.ifaces, &k, &v) ||
		    v.slot >= FPMD_MAX_IFACES || !iface_tab[v.slot].used)
			continue;
		iface_tab[v.slot].gone_ifindex = k;
	}
}

/* Attach what is configured and present; the rest waits for its link. */
void iface_bring_up(struct iface *i)
{
	uint32_t old = i->gone_ifindex;
	char name[IF_NAMESIZE];

	/* Still there (as another managed interface, or under another
	 * name: the configuration's order changed): not ours to move. */
	if (old && (iface_by_ifindex(old) || if_indextoname(old, name)))
		old = 0;
	if (old && old != i->ifindex) {
		/* Its adopted entries serve an interface that is gone. */
		maps_iface_delete(old);
		maps_txport_delete(old);
		if (i->ifindex) {
			log_warn("iface %s: re-created since the maps were "
				 "pinned (ifindex %u, was %u)",
				 i->name, i->ifindex, old);
			rib_iface_renumber(i->name, old, i->ifindex);
		} else {
			log_warn("iface %s (ifindex %u): removed since the maps "
				 "were pinned; its routes go to the kernel "
				 "path until it returns",
				 i->name, old);
			rib_iface_changed(old);
		}
	}
	if (i->ifindex)
		i->gone_ifindex = 0;
	if (!i->ifindex) {
		log_warn("iface %s: not present; attaching when it appears",
			 i->name);
		return;
	}
	/* TC_ONLY (the guards just decided): no XDP; tc_path.c attached. */
	if (i->tc_only)
		return;
	if (iface_attach(i, fpmd_prog_fd))
		return;
	iface_sync(i);
	rib_iface_changed(i->ifindex);
}
