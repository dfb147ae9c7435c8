// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The interfaces as the RIB sees them: the egress a nexthop leaves by, and
 * the ingresses that take a family into the fast path. The kernel side
 * (kernel/iface.c) knows them and sits above the RIB, so it hands them
 * over as callbacks (rib_set_iface_ops) and tells the RIB when one
 * changed (rib_iface_changed, rib_iface_renumber).
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "rib/rib_int.h"

static const struct rib_iface_ops *iface_ops;

void rib_set_iface_ops(const struct rib_iface_ops *ops)
{
	iface_ops = ops;
}

bool egress_info(uint32_t ifindex, uint8_t mac[6], uint16_t *mtu,
		 uint16_t *slot, bool *up)
{
	if (iface_ops)
		return iface_ops->egress(ifindex, mac, mtu, slot, up);
	memset(mac, 0, 6);
	*mtu = 0;
	*slot = 0;
	*up = false;
	return false;
}

/* Egress usable (interface managed and up)? */
bool nh_egress_up(const struct nexthop *nh)
{
	uint8_t mac[6];
	uint16_t mtu, slot;
	bool up;

	return egress_info(nh->ifindex, mac, &mtu, &slot, &up) && up;
}

bool egress_tx_port(uint32_t ifindex)
{
	return iface_ops && iface_ops->tx_port(ifindex);
}

const char *egress_name(uint32_t ifindex)
{
	return iface_ops ? iface_ops->name(ifindex) : NULL;
}

int ingress_families(void)
{
	return iface_ops ? iface_ops->ingress_families() : 0;
}

void rib_iface_changed(uint32_t ifindex)
{
	struct hnode *n, *tmp;
	size_t i;

	/* Also as an ingress: attached, suspended, forwarding, guards. */
	rib_status_changed_all();
	ht_for_each(&rib_nh_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (nh->ifindex != ifindex)
			continue;
		nh_write_logged(nh);
		groups_rewrite_containing(nh);
	}
}

void rib_iface_renumber(const char *name, uint32_t old, uint32_t new_ifindex)
{
	struct nexthop **move = NULL;
	struct hnode *n, *tmp;
	size_t i, k = 0;

	neigh_renumber(old, new_ifindex);

	ht_for_each(&rib_nh_by_key, n, tmp, i)
	{
		if (container_of(n, struct nexthop, key_node)->ifindex == old)
			k++;
	}
	if (!k)
		return;
	move = malloc(k * sizeof(*move));
	if (!move) {
		log_err("iface %s: out of memory: %zu nexthops stay on the "
			"kernel path",
			name, k);
		return;
	}
	k = 0;
	ht_for_each(&rib_nh_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (nh->ifindex == old)
			move[k++] = nh;
	}
	/* Re-keyed outside the walk: an insert may grow the table. */
	for (i = 0; i < k; i++) {
		struct nexthop *nh = move[i];

		ht_remove(&rib_nh_by_key, &nh->key_node);
		nh->ifindex = new_ifindex;
		ht_insert(&rib_nh_by_key, &nh->key_node,
			  key_hash(nh->family, nh->gw, nh->ifindex));
		nh_resolve(nh);
	}
	free(move);
	log_info("iface %s: back as ifindex %u (was %u): %zu nexthops through "
		 "it follow",
		 name, new_ifindex, old, k);
}
