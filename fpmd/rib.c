// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Routes, nexthops, groups and neighbors, and how they become map entries.
 *
 * Routes point at nexthop objects, never at MACs: a neighbor or interface
 * change rewrites the one nexthop (or group) entry and every route using
 * it follows at once. Map indices are fpmd's own dense slots; external ids
 * (fpmctl's, later zebra's) are sparse and only live here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "iface.h"
#include "log.h"
#include "maps.h"
#include "rib.h"

struct htable rib_routes, rib_nh_by_id, rib_nh_by_key, rib_neigh;
struct rib_stats rib_stats;

struct idx_pool {
	uint32_t *free;
	uint32_t nfree;
};

static struct idx_pool nh_pool, group_pool;

static int pool_init(struct idx_pool *p, uint32_t max)
{
	p->free = malloc(sizeof(*p->free) * (max ? max : 1));
	if (!p->free)
		return -1;
	/* Hand out low indices first: stable, readable in bpftool dumps. */
	for (uint32_t i = 0; i < max; i++)
		p->free[i] = max - 1 - i;
	p->nfree = max;
	return 0;
}

static uint32_t pool_get(struct idx_pool *p)
{
	return p->nfree ? p->free[--p->nfree] : NO_INDEX;
}

static void pool_put(struct idx_pool *p, uint32_t idx)
{
	if (idx != NO_INDEX)
		p->free[p->nfree++] = idx;
}

/* Take a specific index (adopting pinned maps after a restart). */
static bool pool_take(struct idx_pool *p, uint32_t idx)
{
	for (uint32_t i = 0; i < p->nfree; i++) {
		if (p->free[i] == idx) {
			p->free[i] = p->free[--p->nfree];
			return true;
		}
	}
	return false;
}

int rib_init(uint32_t max_nexthops, uint32_t max_groups)
{
	if (ht_init(&rib_routes, 1024) || ht_init(&rib_nh_by_id, 256) ||
	    ht_init(&rib_nh_by_key, 256) || ht_init(&rib_neigh, 256) ||
	    pool_init(&nh_pool, max_nexthops) ||
	    pool_init(&group_pool, max_groups))
		return -ENOMEM;
	return 0;
}

const char *rib_source_name(int src)
{
	static const char *const n[SRC_MAX] = { "kernel", "plugin", "fpm",
						"static" };

	return src >= 0 && src < SRC_MAX ? n[src] : "none";
}

const char *rib_rtype_name(enum rib_rtype t)
{
	static const char *const n[] = { "unicast", "blackhole", "unreachable",
					 "prohibit", "local" };

	return n[t];
}

const char *route_state_name(enum route_state s)
{
	static const char *const n[] = {
		"forwarding",	  "unresolved", "egress-kernel", "kernel-path",
		"blackhole",	  "nexthop-map-full", "map-full", "error",
	};

	return n[s];
}

/* ---- nexthops ------------------------------------------------------------ */

static uint32_t id_hash(uint32_t id)
{
	return hash_bytes(&id, sizeof(id), 0);
}

static uint32_t key_hash(int family, const uint8_t *gw, uint32_t ifindex)
{
	uint8_t k[21] = { (uint8_t)family };

	memcpy(k + 1, &ifindex, 4);
	memcpy(k + 5, gw, 16);
	return hash_bytes(k, sizeof(k), 1);
}

struct nexthop *rib_nexthop_find(uint32_t id)
{
	uint32_t h = id_hash(id);

	for (struct hnode *n = ht_chain(&rib_nh_by_id, h); n; n = n->next) {
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if (n->hash == h && nh->id == id)
			return nh;
	}
	return NULL;
}

static struct neighbor *neigh_find(int family, const uint8_t *addr,
				   uint32_t ifindex);

/* Egress usable (interface managed and up)? */
static bool nh_egress_up(const struct nexthop *nh)
{
	uint8_t mac[6];
	uint16_t mtu, slot;
	bool up;

	return iface_egress(nh->ifindex, mac, &mtu, &slot, &up) && up;
}

static int group_write(struct nexthop *g)
{
	struct fpmd_nh_group v = { .id = g->id };
	uint32_t total = 0, live = 0;

	if (g->index == NO_INDEX)
		return 0;
	/* Members whose egress is down leave the buckets, as the kernel
	 * skips dead nexthops; unresolved ones stay (the kernel resolves). */
	for (int i = 0; i < g->nmembers; i++) {
		if (g->members[i].nh->index == NO_INDEX ||
		    !nh_egress_up(g->members[i].nh))
			continue;
		total += g->members[i].weight;
		live++;
	}
	if (live) {
		for (int i = 0; i < g->nmembers; i++) {
			struct nexthop *m = g->members[i].nh;
			uint32_t w = g->members[i].weight, nb;

			if (m->index == NO_INDEX || !nh_egress_up(m))
				continue;
			/* Exact ratios when the weights fit in the buckets,
			 * else proportional with one bucket at least. */
			nb = total <= FPMD_GROUP_BUCKETS ?
				     w :
				     (uint32_t)((uint64_t)w *
						(FPMD_GROUP_BUCKETS - live) /
						total) + 1;
			while (nb-- && v.nbuckets < FPMD_GROUP_BUCKETS)
				v.bucket[v.nbuckets++] = m->index;
		}
	}
	g->nbuckets = v.nbuckets;
	return maps_group_write(g->index, &v);
}

static int nh_write(struct nexthop *nh)
{
	struct fpmd_nexthop v = { 0 };
	bool up = false;

	if (nh->index == NO_INDEX)
		return 0;
	if (nh->is_group)
		return group_write(nh);
	v.ifindex = nh->ifindex;
	v.id = nh->id;
	v.flags = FPMD_NH_F_VALID;
	if (!nh->has_gw)
		v.flags |= FPMD_NH_F_CONNECTED;
	else if (nh->resolved)
		v.flags |= FPMD_NH_F_RESOLVED;
	if (nh->family == AF_INET6)
		v.flags |= FPMD_NH_F_V6;
	if (iface_egress(nh->ifindex, v.smac, &v.mtu, &v.oslot, &up) && !up)
		v.flags |= FPMD_NH_F_IFDOWN;
	memcpy(v.dmac, nh->mac, 6);
	memcpy(v.gw, nh->gw, 16);
	return maps_nexthop_write(nh->index, &v);
}

static void nh_write_logged(struct nexthop *nh)
{
	int ret = nh_write(nh);

	if (ret) {
		rib_stats.map_errors++;
		log_err("maps: nexthop %u (slot %u): write failed: %s", nh->id,
			nh->index, strerror(-ret));
	}
}

static void groups_rewrite_containing(const struct nexthop *member)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *g = container_of(n, struct nexthop, id_node);

		if (!g->is_group)
			continue;
		for (int m = 0; m < g->nmembers; m++) {
			if (g->members[m].nh == member) {
				nh_write_logged(g);
				break;
			}
		}
	}
}

static void nh_resolve(struct nexthop *nh)
{
	struct neighbor *ne;

	if (!nh->has_gw)
		return;
	ne = neigh_find(nh->family, nh->gw, nh->ifindex);
	nh->resolved = ne != NULL;
	if (ne)
		memcpy(nh->mac, ne->mac, 6);
	else
		memset(nh->mac, 0, 6);
}

static struct nexthop *nh_alloc(uint32_t id, bool is_group)
{
	struct nexthop *nh = calloc(1, sizeof(*nh));

	if (!nh)
		return NULL;
	nh->id = id;
	nh->is_group = is_group;
	nh->index = pool_get(is_group ? &group_pool : &nh_pool);
	if (nh->index == NO_INDEX) {
		if (is_group)
			rib_stats.group_map_full++;
		else
			rib_stats.nh_map_full++;
		log_err("maps: %s table full: %s %u kept out of the fast path "
			"(routes using it go to the kernel)",
			is_group ? "nh_groups" : "nexthops",
			is_group ? "group" : "nexthop", id);
	}
	return nh;
}

static void nh_set_single(struct nexthop *nh, int family, const uint8_t *gw,
			  uint32_t ifindex)
{
	if (nh->keyed)
		ht_remove(&rib_nh_by_key, &nh->key_node);
	nh->family = (uint8_t)family;
	nh->has_gw = gw != NULL;
	memset(nh->gw, 0, 16);
	if (gw)
		memcpy(nh->gw, gw, addr_len(family));
	nh->ifindex = ifindex;
	ht_insert(&rib_nh_by_key, &nh->key_node,
		  key_hash(nh->family, nh->gw, ifindex));
	nh->keyed = true;
	nh_resolve(nh);
}

static void nh_free(struct nexthop *nh)
{
	if (nh->is_group) {
		for (int i = 0; i < nh->nmembers; i++)
			nh->members[i].nh->refcnt--;
		if (nh->index != NO_INDEX)
			maps_group_clear(nh->index);
		pool_put(&group_pool, nh->index);
	} else {
		if (nh->keyed)
			ht_remove(&rib_nh_by_key, &nh->key_node);
		if (nh->index != NO_INDEX)
			maps_nexthop_clear(nh->index);
		pool_put(&nh_pool, nh->index);
	}
	free(nh);
}

static void nh_put(struct nexthop *nh)
{
	if (!nh)
		return;
	nh->refcnt--;
	/* Implicit nexthops live as long as a route uses them. */
	if (!nh->id && !nh->refcnt)
		nh_free(nh);
}

int rib_nexthop_add(uint32_t id, int family, const uint8_t *gw,
		    uint32_t ifindex, const char **err)
{
	struct nexthop *nh = rib_nexthop_find(id);

	if (!id) {
		*err = "nexthop id 0 is reserved";
		return -EINVAL;
	}
	if (!ifindex) {
		*err = "nexthop needs an interface";
		return -EINVAL;
	}
	if (nh && nh->is_group) {
		*err = "id is a group; delete it first";
		return -EEXIST;
	}
	if (!nh) {
		nh = nh_alloc(id, false);
		if (!nh) {
			*err = "out of memory";
			return -ENOMEM;
		}
		ht_insert(&rib_nh_by_id, &nh->id_node, id_hash(id));
	}
	/* Replace in place: routes and groups keep pointing at this slot. */
	nh_set_single(nh, family, gw, ifindex);
	nh_write_logged(nh);
	groups_rewrite_containing(nh);
	return 0;
}

int rib_group_add(uint32_t id, const uint32_t *ids, const uint32_t *weights,
		  int n, const char **err)
{
	struct nh_member m[NH_MAX_MEMBERS];
	struct nexthop *g = rib_nexthop_find(id);

	if (!id) {
		*err = "group id 0 is reserved";
		return -EINVAL;
	}
	if (n < 1 || n > NH_MAX_MEMBERS) {
		*err = "a group needs 1 to 64 members";
		return -EINVAL;
	}
	if (g && !g->is_group) {
		*err = "id is a single nexthop; delete it first";
		return -EEXIST;
	}
	for (int i = 0; i < n; i++) {
		m[i].nh = rib_nexthop_find(ids[i]);
		m[i].weight = weights && weights[i] ? weights[i] : 1;
		if (!m[i].nh) {
			*err = "group member nexthop unknown";
			return -ENOENT;
		}
		if (m[i].nh->is_group) {
			*err = "group member is itself a group";
			return -EINVAL;
		}
		if (m[i].weight > 255) {
			*err = "weight must be 1..255";
			return -EINVAL;
		}
	}
	if (!g) {
		g = nh_alloc(id, true);
		if (!g) {
			*err = "out of memory";
			return -ENOMEM;
		}
		ht_insert(&rib_nh_by_id, &g->id_node, id_hash(id));
	}
	for (int i = 0; i < n; i++)
		m[i].nh->refcnt++;
	for (int i = 0; i < g->nmembers; i++)
		g->members[i].nh->refcnt--;
	memcpy(g->members, m, sizeof(m[0]) * (size_t)n);
	g->nmembers = n;
	nh_write_logged(g);
	return 0;
}

int rib_nexthop_del(uint32_t id, const char **err)
{
	struct nexthop *nh = rib_nexthop_find(id);

	if (!nh) {
		*err = "no such nexthop";
		return -ENOENT;
	}
	if (nh->refcnt) {
		*err = "nexthop in use by routes or groups";
		return -EBUSY;
	}
	ht_remove(&rib_nh_by_id, &nh->id_node);
	nh_free(nh);
	return 0;
}

static struct nexthop *nh_implicit(int family, const uint8_t *gw,
				   uint32_t ifindex)
{
	uint8_t key[16] = { 0 };
	struct nexthop *nh;
	uint32_t h;

	if (gw)
		memcpy(key, gw, addr_len(family));
	h = key_hash(gw ? family : AF_UNSPEC, key, ifindex);
	for (struct hnode *n = ht_chain(&rib_nh_by_key, h); n; n = n->next) {
		nh = container_of(n, struct nexthop, key_node);
		if (n->hash == h && !nh->id && nh->ifindex == ifindex &&
		    nh->has_gw == (gw != NULL) &&
		    (!gw || !memcmp(nh->gw, key, 16)))
			return nh;
	}
	nh = nh_alloc(0, false);
	if (!nh)
		return NULL;
	nh_set_single(nh, gw ? family : AF_UNSPEC, gw, ifindex);
	nh_write_logged(nh);
	return nh;
}

const char *nexthop_state(const struct nexthop *nh)
{
	uint8_t mac[6];
	uint16_t mtu, slot;
	bool up;

	if (nh->index == NO_INDEX)
		return "map-full";
	if (nh->is_group) {
		if (!nh->nbuckets)
			return "no-live-member";
		return "forwarding";
	}
	if (!iface_egress(nh->ifindex, mac, &mtu, &slot, &up))
		return "egress-kernel";
	if (!up)
		return "egress-down";
	if (nh->has_gw && !nh->resolved)
		return "unresolved";
	return "forwarding";
}

/* ---- routes -------------------------------------------------------------- */

static uint32_t prefix_hash(const struct prefix *p)
{
	return hash_bytes(p, sizeof(*p), 2);
}

struct route *rib_route_find(const struct prefix *p)
{
	uint32_t h = prefix_hash(p);

	for (struct hnode *n = ht_chain(&rib_routes, h); n; n = n->next) {
		struct route *r = container_of(n, struct route, node);

		if (n->hash == h && !memcmp(&r->p, p, sizeof(*p)))
			return r;
	}
	return NULL;
}

static uint32_t route_value(const struct route_entry *e)
{
	switch (e->type) {
	case RT_UNICAST:
		if (e->nh->index == NO_INDEX)
			return FPMD_RT_ENCODE(FPMD_RT_KERNEL, 0);
		return FPMD_RT_ENCODE(e->nh->is_group ? FPMD_RT_GROUP :
							FPMD_RT_NEXTHOP,
				      e->nh->index);
	case RT_BLACKHOLE:
		return FPMD_RT_ENCODE(FPMD_RT_BLACKHOLE, 0);
	case RT_UNREACHABLE:
		return FPMD_RT_ENCODE(FPMD_RT_UNREACHABLE, 0);
	case RT_PROHIBIT:
		return FPMD_RT_ENCODE(FPMD_RT_PROHIBIT, 0);
	case RT_LOCAL:
		return FPMD_RT_ENCODE(FPMD_RT_LOCAL, 0);
	}
	return FPMD_RT_ENCODE(FPMD_RT_KERNEL, 0);
}

static int route_selected(const struct route *r)
{
	for (int s = 0; s < SRC_MAX; s++)
		if (r->e[s].present)
			return s;
	return -1;
}

/*
 * Write the preferred entry of r to the map, or remove it. A write that
 * would not change the map is skipped: a replay must not touch a route
 * that is already right.
 */
static void route_program(struct route *r)
{
	char pb[PREFIX_STRLEN];
	int sel = route_selected(r);
	uint32_t val;
	int ret;

	if (sel < 0) {
		if (r->programmed) {
			ret = maps_route_delete(&r->p);
			if (ret)
				log_err("maps: route %s: delete failed: %s",
					fmt_prefix(&r->p, pb), strerror(-ret));
		}
		ht_remove(&rib_routes, &r->node);
		free(r);
		return;
	}
	r->selected = sel;
	val = route_value(&r->e[sel]);
	if (r->programmed && val == r->val)
		return;
	ret = maps_route_write(&r->p, val);
	if (!ret) {
		r->programmed = true;
		r->val = val;
		r->state = RS_FORWARDING;
		return;
	}
	/* The old value may still be in the map: take it out rather than
	 * leave a stale nexthop forwarding. */
	if (r->programmed)
		maps_route_delete(&r->p);
	r->programmed = false;
	if (ret == -E2BIG || ret == -ENOSPC || ret == -ENOMEM) {
		r->state = RS_MAP_FULL;
		rib_stats.route_map_full++;
		log_err("maps: %s full: route %s (%s) not programmed; its "
			"packets follow a covering route or the kernel",
			r->p.family == AF_INET ? "routes_v4" : "routes_v6",
			fmt_prefix(&r->p, pb), rib_source_name(sel));
	} else {
		r->state = RS_ERROR;
		rib_stats.map_errors++;
		log_err("maps: route %s: write failed: %s",
			fmt_prefix(&r->p, pb), strerror(-ret));
	}
}

int rib_route_add(enum rib_source src, const struct prefix *p,
		  enum rib_rtype type, uint32_t nhid, int gw_family,
		  const uint8_t *gw, uint32_t ifindex, const char **err)
{
	struct nexthop *nh = NULL, *old_nh;
	struct route *r;
	struct prefix m = *p;

	prefix_mask(&m);
	if (type == RT_UNICAST) {
		if (nhid) {
			nh = rib_nexthop_find(nhid);
			if (!nh) {
				*err = "nexthop id unknown";
				return -ENOENT;
			}
		} else {
			if (!ifindex) {
				*err = "route needs a nexthop id or an interface";
				return -EINVAL;
			}
			nh = nh_implicit(gw_family, gw, ifindex);
			if (!nh) {
				*err = "out of memory";
				return -ENOMEM;
			}
		}
		nh->refcnt++;
	}
	r = rib_route_find(&m);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			nh_put(nh);
			*err = "out of memory";
			return -ENOMEM;
		}
		r->p = m;
		r->selected = -1;
		ht_insert(&rib_routes, &r->node, prefix_hash(&m));
	}
	old_nh = r->e[src].present ? r->e[src].nh : NULL;
	r->e[src].present = true;
	r->e[src].type = type;
	r->e[src].nh = nh;
	route_program(r);
	/* After the map points at the new nexthop: an implicit old one may
	 * be freed (and its slot cleared) only now. */
	nh_put(old_nh);
	if (r->state == RS_MAP_FULL && !r->programmed) {
		*err = "route table full";
		return -ENOSPC;
	}
	return 0;
}

int rib_route_del(enum rib_source src, const struct prefix *p,
		  const char **err)
{
	struct prefix m = *p;
	struct nexthop *old_nh;
	struct route *r;

	prefix_mask(&m);
	r = rib_route_find(&m);
	if (!r || !r->e[src].present) {
		*err = "no such route from this source";
		return -ENOENT;
	}
	old_nh = r->e[src].nh;
	memset(&r->e[src], 0, sizeof(r->e[src]));
	route_program(r);
	nh_put(old_nh);
	return 0;
}

void rib_flush_source(enum rib_source src)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);
		const char *err;

		if (r->e[src].present)
			rib_route_del(src, &r->p, &err);
	}
}

/* ---- neighbors ----------------------------------------------------------- */

static uint32_t neigh_hash(int family, const uint8_t *addr, uint32_t ifindex)
{
	return key_hash(family, addr, ifindex);
}

static struct neighbor *neigh_find(int family, const uint8_t *addr,
				   uint32_t ifindex)
{
	uint8_t a[16] = { 0 };
	uint32_t h;

	memcpy(a, addr, addr_len(family));
	h = neigh_hash(family, a, ifindex);
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
		if (was != nh->resolved || memcmp(mac, nh->mac, 6))
			nh_write_logged(nh);
	}
}

int rib_neigh_add(int family, const uint8_t *addr, uint32_t ifindex,
		  const uint8_t mac[6], const char **err)
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
			  neigh_hash(family, ne->addr, ifindex));
	} else if (!memcmp(ne->mac, mac, 6)) {
		return 0; /* unchanged: no map write */
	}
	memcpy(ne->mac, mac, 6);
	ret = maps_neigh_write(family, ifindex, ne->addr, mac);
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
		  const char **err)
{
	struct neighbor *ne = neigh_find(family, addr, ifindex);
	uint8_t a[16];

	if (!ne) {
		*err = "no such neighbor";
		return -ENOENT;
	}
	memcpy(a, ne->addr, 16);
	ht_remove(&rib_neigh, &ne->node);
	free(ne);
	maps_neigh_delete(family, ifindex, a);
	neigh_propagate(family, a, ifindex);
	return 0;
}

void rib_iface_changed(uint32_t ifindex)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_nh_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (nh->ifindex != ifindex)
			continue;
		nh_write_logged(nh);
		groups_rewrite_containing(nh);
	}
}

/* ---- adoption of pinned maps after a restart ----------------------------- */

/*
 * Rebuild the tables from the maps a previous fpmd left pinned, so that
 * the new one starts from exactly what the fast path forwards with and
 * writes nothing that is already right. Routes come back owned by the
 * hand source ("static"), local ones by the kernel source; a feed that
 * replays takes them over entry by entry.
 */
int rib_adopt(uint32_t max_nexthops, uint32_t max_groups)
{
	struct nexthop **by_nh = calloc(max_nexthops, sizeof(*by_nh));
	struct nexthop **by_grp = calloc(max_groups, sizeof(*by_grp));
	struct fpmd_lpm_v6 k6, *pk6 = NULL;
	struct fpmd_lpm_v4 k4, *pk4 = NULL;
	struct fpmd_neigh_v4_key n4, *pn4 = NULL;
	struct fpmd_neigh_v6_key n6, *pn6 = NULL;
	uint32_t nroutes = 0, nnh = 0, ngrp = 0, nneigh = 0, ndropped = 0;
	struct hnode *n, *tmp;
	size_t it;

	if (!by_nh || !by_grp) {
		free(by_nh);
		free(by_grp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < max_nexthops; i++) {
		struct fpmd_nexthop v;
		struct nexthop *nh;

		if (bpf_map_lookup_elem(mapfd.nexthops, &i, &v) ||
		    !(v.flags & FPMD_NH_F_VALID) || !pool_take(&nh_pool, i))
			continue;
		nh = calloc(1, sizeof(*nh));
		if (!nh)
			break;
		nh->index = i;
		nh->id = v.id;
		nh->family = v.flags & FPMD_NH_F_V6 ? AF_INET6 : AF_INET;
		nh->has_gw = !(v.flags & FPMD_NH_F_CONNECTED);
		if (!nh->has_gw && !nh->id)
			nh->family = AF_UNSPEC; /* as nh_implicit keys it */
		memcpy(nh->gw, v.gw, 16);
		nh->ifindex = v.ifindex;
		nh->resolved = v.flags & FPMD_NH_F_RESOLVED;
		memcpy(nh->mac, v.dmac, 6);
		ht_insert(&rib_nh_by_key, &nh->key_node,
			  key_hash(nh->family, nh->gw, nh->ifindex));
		nh->keyed = true;
		if (nh->id)
			ht_insert(&rib_nh_by_id, &nh->id_node, id_hash(nh->id));
		by_nh[i] = nh;
		nnh++;
	}
	for (uint32_t i = 0; i < max_groups; i++) {
		struct fpmd_nh_group v;
		struct nexthop *g;

		if (bpf_map_lookup_elem(mapfd.nh_groups, &i, &v) || !v.id ||
		    !pool_take(&group_pool, i))
			continue;
		g = calloc(1, sizeof(*g));
		if (!g)
			break;
		g->index = i;
		g->id = v.id;
		g->is_group = true;
		g->nbuckets = v.nbuckets;
		/* Weights come back as bucket counts: the same ratios. */
		for (uint32_t b = 0; b < v.nbuckets && b < FPMD_GROUP_BUCKETS;
		     b++) {
			struct nexthop *m = v.bucket[b] < max_nexthops ?
						    by_nh[v.bucket[b]] :
						    NULL;
			int k;

			if (!m)
				continue;
			for (k = 0; k < g->nmembers; k++)
				if (g->members[k].nh == m)
					break;
			if (k == g->nmembers) {
				g->members[g->nmembers].nh = m;
				g->members[g->nmembers++].weight = 0;
				m->refcnt++;
			}
			g->members[k].weight++;
		}
		if (!v.nbuckets)
			log_warn("adopt: group %u had no live member; its "
				 "members must be given again", v.id);
		ht_insert(&rib_nh_by_id, &g->id_node, id_hash(g->id));
		by_grp[i] = g;
		ngrp++;
	}
	while (!bpf_map_get_next_key(mapfd.neigh_v4, pn4, &n4)) {
		struct fpmd_neigh_val v;
		const char *err;

		pn4 = &n4;
		if (!bpf_map_lookup_elem(mapfd.neigh_v4, &n4, &v) &&
		    !rib_neigh_add(AF_INET, n4.addr, n4.ifindex, v.mac, &err))
			nneigh++;
	}
	while (!bpf_map_get_next_key(mapfd.neigh_v6, pn6, &n6)) {
		struct fpmd_neigh_val v;
		const char *err;

		pn6 = &n6;
		if (!bpf_map_lookup_elem(mapfd.neigh_v6, &n6, &v) &&
		    !rib_neigh_add(AF_INET6, n6.addr, n6.ifindex, v.mac, &err))
			nneigh++;
	}
	for (int fam = 0; fam < 2; fam++) {
		for (;;) {
			struct fpmd_route_val v;
			struct route *r;
			struct prefix p = { 0 };
			uint32_t type, idx;
			int src = SRC_STATIC;
			enum rib_rtype rt = RT_UNICAST;
			struct nexthop *nh = NULL;
			int ret;

			if (!fam) {
				ret = bpf_map_get_next_key(mapfd.routes_v4, pk4,
							   &k4);
				if (ret)
					break;
				pk4 = &k4;
				p.family = AF_INET;
				p.len = (uint8_t)k4.prefixlen;
				memcpy(p.addr, k4.addr, 4);
				ret = bpf_map_lookup_elem(mapfd.routes_v4, &k4, &v);
			} else {
				ret = bpf_map_get_next_key(mapfd.routes_v6, pk6,
							   &k6);
				if (ret)
					break;
				pk6 = &k6;
				p.family = AF_INET6;
				p.len = (uint8_t)k6.prefixlen;
				memcpy(p.addr, k6.addr, 16);
				ret = bpf_map_lookup_elem(mapfd.routes_v6, &k6, &v);
			}
			if (ret)
				continue;
			type = FPMD_RT_TYPE(v.val);
			idx = FPMD_RT_INDEX(v.val);
			switch (type) {
			case FPMD_RT_NEXTHOP:
				nh = idx < max_nexthops ? by_nh[idx] : NULL;
				break;
			case FPMD_RT_GROUP:
				nh = idx < max_groups ? by_grp[idx] : NULL;
				break;
			case FPMD_RT_LOCAL:
				rt = RT_LOCAL;
				src = SRC_KERNEL_LOCAL;
				break;
			case FPMD_RT_BLACKHOLE: rt = RT_BLACKHOLE; break;
			case FPMD_RT_UNREACHABLE: rt = RT_UNREACHABLE; break;
			case FPMD_RT_PROHIBIT: rt = RT_PROHIBIT; break;
			default:
				nh = NULL; /* "kernel" entries are re-derived */
				break;
			}
			if (rt == RT_UNICAST && !nh) {
				/* Nothing to rebuild it from: its source must
				 * give it again; the kernel routes it till then. */
				maps_route_write(&p, FPMD_RT_ENCODE(FPMD_RT_KERNEL, 0));
				ndropped++;
				continue;
			}
			r = calloc(1, sizeof(*r));
			if (!r)
				break;
			r->p = p;
			r->e[src].present = true;
			r->e[src].type = rt;
			r->e[src].nh = nh;
			if (nh)
				nh->refcnt++;
			r->selected = src;
			r->programmed = true;
			r->val = v.val;
			r->state = RS_FORWARDING;
			ht_insert(&rib_routes, &r->node, prefix_hash(&p));
			nroutes++;
		}
	}
	/* Implicit nexthops no adopted route uses are leftovers. */
	ht_for_each(&rib_nh_by_key, n, tmp, it)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (!nh->id && !nh->refcnt)
			nh_free(nh);
	}
	free(by_nh);
	free(by_grp);
	log_info("adopt: %u routes, %u nexthops, %u groups, %u neighbors "
		 "from the pinned maps",
		 nroutes, nnh, ngrp, nneigh);
	if (ndropped)
		log_warn("adopt: %u routes had no usable nexthop in the maps; "
			 "they stay on the kernel path until given again",
			 ndropped);
	return 0;
}

/* Free every table (at exit; the maps are left as they are). */
void rib_free(void)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
		free(container_of(n, struct route, node));
	ht_for_each(&rib_neigh, n, tmp, i)
		free(container_of(n, struct neighbor, node));
	/* Groups live only in by_id; singles are all in by_key. */
	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if (nh->is_group)
			free(nh);
	}
	ht_for_each(&rib_nh_by_key, n, tmp, i)
		free(container_of(n, struct nexthop, key_node));
	ht_free(&rib_routes);
	ht_free(&rib_neigh);
	ht_free(&rib_nh_by_id);
	ht_free(&rib_nh_by_key);
	free(nh_pool.free);
	free(group_pool.free);
	memset(&nh_pool, 0, sizeof(nh_pool));
	memset(&group_pool, 0, sizeof(group_pool));
}
