// SPDX-License-Identifier: GPL-2.0-or-later
/* Adoption of the maps a previous fpmd left pinned, after a restart. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "fib/maps.h"
#include "rib/rib_int.h"

/* The routes read back from the maps, taken in before any is rewritten. */
struct adopt_list {
	struct adopt_route {
		struct prefix p;
		uint32_t val;
	} *r;
	size_t n, cap;
};

static int adopt_collect(const struct prefix *p, uint32_t val, void *arg)
{
	struct adopt_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		struct adopt_route *r = realloc(l->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		l->r = r;
		l->cap = cap;
	}
	l->r[l->n].p = *p;
	l->r[l->n++].val = val;
	return 0;
}

/*
 * Rebuild the tables from the maps a previous fpmd left pinned, so that
 * the new one starts from exactly what the fast path forwards with and
 * writes nothing that is already right. Every route goes back to the
 * source recorded in its value, every nexthop and group to its id's
 * owner, with generation 0: a feed's first replay refreshes what is still
 * right and its sweep removes the rest.
 */
int rib_adopt(uint32_t max_nexthops, uint32_t max_groups)
{
	struct nexthop **by_nh = calloc(max_nexthops, sizeof(*by_nh));
	struct nexthop **by_grp = calloc(max_groups, sizeof(*by_grp));
	struct fpmd_neigh_v4_key n4, *pn4 = NULL;
	struct fpmd_neigh_v6_key n6, *pn6 = NULL;
	uint32_t nadopted = 0, nnh = 0, ngrp = 0, nneigh = 0, nkernel = 0;
	struct fpmd_nh_group *gv = malloc(sizeof(*gv));
	struct hnode *n, *tmp;
	size_t it;

	if (!by_nh || !by_grp || !gv) {
		free(by_nh);
		free(by_grp);
		free(gv);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < max_nexthops; i++) {
		struct fpmd_nexthop v;
		struct nexthop *nh;
		struct rib_path path = { 0 };

		if (maps_nexthop_read(i, &v) || !(v.flags & FPMD_NH_F_VALID) || !pool_take(&nh_pool, i))
			continue;
		nh = calloc(1, sizeof(*nh));
		if (!nh)
			break;
		nh->index = i;
		nh->id = v.id;
		nh->src = (uint8_t)(v.id ? v.src : SRC_MAX);
		path.has_gw = !(v.flags & FPMD_NH_F_CONNECTED);
		path.family = v.flags & FPMD_NH_F_V6 ? AF_INET6 : AF_INET;
		memcpy(path.gw, v.gw, 16);
		path.ifindex = v.ifindex;
		nh_set_single(nh, &path);
		/* Keep the MAC the fast path uses until the kernel says. */
		if (v.flags & FPMD_NH_F_RESOLVED) {
			nh->resolved = true;
			memcpy(nh->mac, v.dmac, 6);
		}
		if (nh->id)
			ht_insert(&rib_nh_by_id, &nh->id_node,
				  id_hash(nh->src, nh->id));
		by_nh[i] = nh;
		nnh++;
	}
	for (uint32_t i = 0; i < max_groups; i++) {
		struct nh_member m[NH_MAX_MEMBERS];
		struct nexthop *g;
		int nm = 0;

		if (maps_group_read(i, gv) || !gv->nmembers || gv->nmembers > NH_MAX_MEMBERS ||
		    !pool_take(&group_pool, i))
			continue;
		for (uint32_t k = 0; k < gv->nmembers; k++) {
			uint32_t mi = gv->member[k];

			if (mi < max_nexthops && by_nh[mi]) {
				m[nm].nh = by_nh[mi];
				m[nm++].weight = gv->weight[k] ? gv->weight[k] : 1;
			}
		}
		g = calloc(1, sizeof(*g));
		if (!g)
			break;
		g->index = i;
		g->id = gv->id;
		g->src = (uint8_t)(gv->id ? gv->src : SRC_MAX);
		g->is_group = true;
		g->nbuckets = gv->nbuckets;
		group_set_members(g, m, nm);
		if (g->id) {
			ht_insert(&rib_nh_by_id, &g->id_node,
				  id_hash(g->src, g->id));
		} else {
			qsort(g->members, (size_t)nm, sizeof(m[0]), cmp_member);
			ht_insert(&rib_grp_by_key, &g->key_node,
				  members_hash(g->members, nm));
			g->keyed = true;
		}
		by_grp[i] = g;
		ngrp++;
	}
	while (!bpf_map_get_next_key(mapfd.neigh_v4, pn4, &n4)) {
		struct fpmd_neigh_val v;
		const char *err;

		pn4 = &n4;
		if (!bpf_map_lookup_elem(mapfd.neigh_v4, &n4, &v) &&
		    !rib_neigh_add(AF_INET, n4.addr, n4.ifindex, v.mac,
				   v.flags & FPMD_NEIGH_F_STATIC, &err))
			nneigh++;
	}
	while (!bpf_map_get_next_key(mapfd.neigh_v6, pn6, &n6)) {
		struct fpmd_neigh_val v;
		const char *err;

		pn6 = &n6;
		if (!bpf_map_lookup_elem(mapfd.neigh_v6, &n6, &v) &&
		    !rib_neigh_add(AF_INET6, n6.addr, n6.ifindex, v.mac,
				   v.flags & FPMD_NEIGH_F_STATIC, &err))
			nneigh++;
	}
	for (int fam = 0; fam < 2; fam++) {
		struct adopt_list l = { 0 };

		if (maps_routes_foreach(fam ? AF_INET6 : AF_INET, adopt_collect,
					&l)) {
			free(l.r);
			break;
		}
		for (size_t k = 0; k < l.n; k++) {
			struct route_entry *e;
			struct route *r;
			struct prefix p = l.r[k].p;
			uint32_t type, idx, src, val = l.r[k].val;

			type = FPMD_RT_TYPE(val);
			idx = FPMD_RT_INDEX(val);
			src = FPMD_RT_SRC(val);
			if (src >= SRC_MAX)
				src = SRC_STATIC;
			r = slab_alloc(&route_cache);
			if (!r)
				break;
			r->p = p;
			e = &r->e[src];
			e->present = true;
			/* The maps keep no protocol: a feed's replay gives it. */
			e->proto = src == SRC_STATIC	   ? RIB_PROTO_FPMCTL :
				   src == SRC_KERNEL_LOCAL ? RIB_PROTO_LOCAL :
							     RIB_PROTO_UNKNOWN;
			switch (type) {
			case FPMD_RT_NEXTHOP:
			case FPMD_RT_GROUP:
				e->type = RT_UNICAST;
				e->nh = type == FPMD_RT_NEXTHOP ?
						(idx < max_nexthops ? by_nh[idx] : NULL) :
						(idx < max_groups ? by_grp[idx] : NULL);
				if (e->nh)
					e->nh->refcnt++;
				break;
			case FPMD_RT_LOCAL: e->type = RT_LOCAL; break;
			case FPMD_RT_BLACKHOLE: e->type = RT_BLACKHOLE; break;
			case FPMD_RT_UNREACHABLE: e->type = RT_UNREACHABLE; break;
			case FPMD_RT_PROHIBIT: e->type = RT_PROHIBIT; break;
			default: e->type = RT_KERNEL; break;
			}
			if (e->type == RT_UNICAST && !e->nh) {
				/* Nothing to rebuild it from: keep it on the
				 * kernel path until its source gives it again. */
				e->type = RT_KERNEL;
				e->kreason = KR_UNSUPPORTED;
				nkernel++;
			}
			r->selected = (int8_t)src;
			r->programmed = true;
			nroutes[src]++;
			r->val = val;
			r->state = RS_FORWARDING;
			ht_insert(&rib_routes, &r->node, prefix_hash(&p));
			nadopted++;
			/* Same value as before: no write unless it changed. */
			route_program(r);
		}
		free(l.r);
	}
	/* Implicit nexthops and groups no adopted route uses are leftovers. */
	ht_for_each(&rib_grp_by_key, n, tmp, it)
	{
		struct nexthop *g = container_of(n, struct nexthop, key_node);

		if (!g->refcnt) {
			g->refcnt++;
			nh_put(g);
		}
	}
	ht_for_each(&rib_nh_by_key, n, tmp, it)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (!nh->id && !nh->refcnt)
			nh_free(nh);
	}
	free(by_nh);
	free(by_grp);
	free(gv);
	log_info("adopt: %u routes, %u nexthops, %u groups, %u neighbors "
		 "from the pinned maps",
		 nadopted, nnh, ngrp, nneigh);
	if (nkernel)
		log_warn("adopt: %u routes had no usable nexthop in the maps; "
			 "they stay on the kernel path until given again",
			 nkernel);
	return 0;
}
