// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Neighbors: the kernel's (rtnetlink) and those entered by hand, written
 * to neigh_v4/neigh_v6 for hosts on connected subnets. A gateway
 * nexthop resolves through them: a neighbor changing rewrites only the
 * nexthops via that address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "fib/maps.h"
#include "rib/rib_int.h"

struct neighbor *neigh_find(int family, const uint8_t *addr,
				   uint32_t ifindex)
{
	uint8_t a[16] = { 0 };
	uint32_t h;

	memcpy(a, addr, addr_len(family));
	h = key_hash(family, a, ifindex);
	for (struct hnode *n = ht_chain(&rib_neigh, h); n; n = n->next) {
		struct neighbor *ne = container_of(n, struct neighbor, node);

		if (n->hash == h && ne->family == family &&
		    ne->ifindex == ifindex && !memcmp(ne->addr, a, 16))
			return ne;
	}
	return NULL;
}

/* Re-resolve every gateway nexthop (family, addr, ifindex). */
static void neigh_propagate(int family, const uint8_t *a16, uint32_t ifindex)
{
	uint32_t h = key_hash(family, a16, ifindex);

	for (struct hnode *n = ht_chain(&rib_nh_by_key, h); n; n = n->next) {
		struct nexthop *nh = container_of(n, struct nexthop, key_node);
		bool was = nh->resolved;
		uint8_t mac[6];

		if (n->hash != h || !nh->has_gw || nh->family != family ||
		    nh->ifindex != ifindex || memcmp(nh->gw, a16, 16))
			continue;
		memcpy(mac, nh->mac, 6);
		nh_resolve(nh);
		if (was == nh->resolved && !memcmp(mac, nh->mac, 6))
			continue;
		nh_write_logged(nh);
		if (log_debug_enabled()) {
			char ab[ADDR_STRLEN], mb[MAC_STRLEN], id[16];

			/* A route's own (implicit) nexthop has no id. */
			if (nh->id)
				snprintf(id, sizeof(id), "%u", nh->id);
			else
				snprintf(id, sizeof(id), "(implicit)");
			log_debug("maps: nexthop %s (slot %u) via %s: %s%s", id,
				  nh->index, fmt_addr(family, a16, ab),
				  nh->resolved ? "resolved, " : "unresolved",
				  nh->resolved ? fmt_mac(nh->mac, mb) : "");
		}
	}
}

int rib_neigh_add(int family, const uint8_t *addr, uint32_t ifindex,
		  const uint8_t mac[6], bool is_static, const char **err)
{
	struct neighbor *ne = neigh_find(family, addr, ifindex);
	int ret;

	if (!ifindex) {
		*err = "neighbor needs an interface";
		return -EINVAL;
	}
	if (!ne) {
		ne = calloc(1, sizeof(*ne));
		if (!ne) {
			*err = "out of memory";
			return -ENOMEM;
		}
		ne->family = (uint8_t)family;
		ne->ifindex = ifindex;
		memcpy(ne->addr, addr, addr_len(family));
		ht_insert(&rib_neigh, &ne->node,
			  key_hash(family, ne->addr, ifindex));
	} else if (ne->is_static && !is_static) {
		return 0; /* the operator's entry wins over the kernel's */
	} else if (!memcmp(ne->mac, mac, 6) && ne->is_static == is_static) {
		ne->gen = rib_neigh_gen;
		return 0; /* unchanged: no map write */
	}
	ne->gen = rib_neigh_gen;
	ne->is_static = is_static;
	memcpy(ne->mac, mac, 6);
	ret = maps_neigh_write(family, ifindex, ne->addr, mac,
			       is_static ? FPMD_NEIGH_F_STATIC : 0);
	if (ret) {
		rib_stats.map_errors++;
		*err = ret == -E2BIG ? "neighbor table full" :
				       "neighbor map write failed";
		log_err("maps: neighbor on ifindex %u: %s", ifindex, *err);
	}
	neigh_propagate(family, ne->addr, ifindex);
	return ret;
}

int rib_neigh_del(int family, const uint8_t *addr, uint32_t ifindex,
		  bool is_static, const char **err)
{
	struct neighbor *ne = neigh_find(family, addr, ifindex);
	uint8_t a[16];

	if (!ne) {
		*err = "no such neighbor";
		return -ENOENT;
	}
	if (ne->is_static && !is_static)
		return 0; /* the kernel forgetting it does not remove ours */
	memcpy(a, ne->addr, 16);
	ht_remove(&rib_neigh, &ne->node);
	free(ne);
	maps_neigh_delete(family, ifindex, a);
	neigh_propagate(family, a, ifindex);
	return 0;
}

uint32_t rib_neigh_gen;

bool rib_neigh_lookup(int family, const uint8_t *addr, uint32_t ifindex,
		      uint8_t mac[6])
{
	struct neighbor *ne = neigh_find(family, addr, ifindex);

	if (ne)
		memcpy(mac, ne->mac, 6);
	return ne != NULL;
}

struct neighbor *rib_neigh_get(int family, const uint8_t *addr,
			       uint32_t ifindex)
{
	return neigh_find(family, addr, ifindex);
}

void rib_neigh_sweep(void)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_neigh, n, tmp, i)
	{
		struct neighbor *ne = container_of(n, struct neighbor, node);
		const char *err;

		if (!ne->is_static && ne->gen != rib_neigh_gen)
			rib_neigh_del(ne->family, ne->addr, ne->ifindex, false,
				      &err);
	}
}

/* Neighbors of a re-created interface: those entered by hand follow it,
 * the kernel's are gone with it (it flushed them; fpmd no longer listened
 * for the old ifindex). */
void neigh_renumber(uint32_t old, uint32_t new_ifindex)
{
	struct hnode *n, *tmp;
	size_t i;
	bool again = true;

	/* One at a time: an insert may grow the table under the walk. */
	while (again) {
		again = false;
		ht_for_each(&rib_neigh, n, tmp, i)
		{
			struct neighbor *ne =
				container_of(n, struct neighbor, node);
			struct neighbor c = *ne;
			const char *err;

			if (ne->ifindex != old)
				continue;
			ht_remove(&rib_neigh, &ne->node);
			free(ne);
			maps_neigh_delete(c.family, old, c.addr);
			if (c.is_static) {
				rib_neigh_add(c.family, c.addr, new_ifindex,
					      c.mac, true, &err);
				again = true;
				break;
			}
		}
	}
}
