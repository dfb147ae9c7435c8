// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Nexthop groups (ECMP): fpmctl's by id, implicit ones (RTA_MULTIPATH)
 * keyed by their member list, and a feed's ids pointing at the content
 * group of their members' slots. Each content group is one nh_groups
 * entry whose buckets hold the live members by weight.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/maps.h"
#include "rib/rib_int.h"

static bool member_live(struct nexthop *m)
{
	m = slot_of(m);
	return m->index != NO_INDEX && !m->unsupported && !m->blackhole &&
	       nh_egress_up(m);
}

bool group_member_full(const struct nexthop *g)
{
	for (int i = 0; i < g->nmembers; i++) {
		const struct nexthop *m = slot_of(g->members[i].nh);

		if (m->index == NO_INDEX && !m->blackhole && !m->unsupported)
			return true;
	}
	return false;
}

int group_write(struct nexthop *g)
{
	struct fpmd_nh_group v = { .id = g->id, .src = g->src };
	uint32_t total = 0, live = 0;

	if (g->index == NO_INDEX)
		return 0;
	/* A member the fast path cannot hold (nexthops map full) is alive
	 * for the kernel: dropping it from the buckets would send its flows
	 * elsewhere. The whole group takes the kernel path instead. */
	if (group_member_full(g)) {
		memset(&v, 0, sizeof(v));
		v.id = g->id;
		v.src = g->src;
		g->nbuckets = 0;
		return maps_group_write(g->index, &v);
	}
	/* Members whose egress is down leave the buckets, as the kernel
	 * skips dead nexthops; unresolved ones stay (the kernel resolves). */
	for (int i = 0; i < g->nmembers; i++) {
		v.member[i] = slot_of(g->members[i].nh)->index;
		v.weight[i] = (uint8_t)g->members[i].weight;
		if (!member_live(g->members[i].nh))
			continue;
		total += g->members[i].weight;
		live++;
	}
	v.nmembers = (uint32_t)g->nmembers;
	if (live) {
		for (int i = 0; i < g->nmembers; i++) {
			struct nexthop *m = slot_of(g->members[i].nh);
			uint32_t w = g->members[i].weight, nb;

			if (!member_live(m))
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

static void rewrite_if_member(struct nexthop *g, void *member)
{
	if (!g->is_group)
		return;
	for (int m = 0; m < g->nmembers; m++) {
		if (g->members[m].nh == member) {
			nh_write_logged(g);
			break;
		}
	}
}

void groups_rewrite_containing(const struct nexthop *member)
{
	nh_each(&rib_nh_by_id, true, rewrite_if_member, (void *)member);
	nh_each(&rib_grp_by_key, false, rewrite_if_member, (void *)member);
}

static int members_check(enum rib_source src, const uint32_t *ids,
			 const uint32_t *weights, int n, struct nh_member *m,
			 const char **err)
{
	if (n < 1 || n > NH_MAX_MEMBERS) {
		*err = "a group needs 1 to 64 members";
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		m[i].nh = rib_nexthop_find(src, ids[i]);
		m[i].weight = weights && weights[i] ? weights[i] : 1;
		if (!m[i].nh) {
			*err = "group member nexthop unknown";
			return -ENOENT;
		}
		if (m[i].nh->is_group) {
			*err = "group member is itself a group";
			return -EINVAL;
		}
		if (m[i].weight > 256) {
			*err = "weight must be 1..256";
			return -EINVAL;
		}
	}
	return 0;
}

void group_set_members(struct nexthop *g, const struct nh_member *m,
			      int n)
{
	for (int i = 0; i < n; i++)
		m[i].nh->refcnt++;
	for (int i = 0; i < g->nmembers; i++)
		g->members[i].nh->refcnt--;
	memcpy(g->members, m, sizeof(m[0]) * (size_t)n);
	g->nmembers = n;
}

int rib_group_add(enum rib_source src, uint32_t id, const uint32_t *ids,
		  const uint32_t *weights, int n, uint32_t gen,
		  const char **err)
{
	struct nh_member m[NH_MAX_MEMBERS];
	struct nexthop *g = rib_nexthop_find(src, id);
	bool is_new = !g;
	int ret;

	if (!id) {
		*err = "group id 0 is reserved";
		return -EINVAL;
	}
	if (g && !g->is_group) {
		*err = "id is a single nexthop; delete it first";
		return -EEXIST;
	}
	ret = members_check(src, ids, weights, n, m, err);
	if (ret)
		return ret;
	if (g)
		nh_installed(g);
	if (!g) {
		g = nh_alloc(src, id, true, !feed_src(src));
		if (!g) {
			*err = "out of memory";
			return -ENOMEM;
		}
		if (!feed_src(src) && g->index == NO_INDEX) {
			free(g);
			*err = rib_full_error(true);
			return -ENOSPC;
		}
		ht_insert(&rib_nh_by_id, &g->id_node, id_hash((uint8_t)src, id));
	} else if (g->nmembers == n &&
		   members_equal(g->members, m, n)) {
		g->gen = gen;
		return 0;
	}
	g->gen = gen;
	group_set_members(g, m, n);
	if (feed_src(src)) {
		ret = feed_group(g, m, n);
		if (ret) {
			*err = "out of memory";
			return ret;
		}
	} else {
		nh_write_logged(g);
	}
	if (is_new)
		route_retry_pending(src, id);
	return 0;
}

int cmp_member(const void *a, const void *b)
{
	const struct nh_member *x = a, *y = b;

	if (x->nh != y->nh)
		return x->nh < y->nh ? -1 : 1;
	return x->weight < y->weight ? -1 : x->weight > y->weight;
}

static struct nexthop *group_lookup(const struct nh_member *m, int n,
				    uint32_t h)
{
	for (struct hnode *hn = ht_chain(&rib_grp_by_key, h); hn;
	     hn = hn->next) {
		struct nexthop *g = container_of(hn, struct nexthop, key_node);

		if (hn->hash == h && g->nmembers == n &&
		    members_equal(g->members, m, n))
			return g;
	}
	return NULL;
}

/* The content group of these (sorted) member slots; created if new. */
static struct nexthop *group_of_slots(const struct nh_member *m, int n)
{
	uint32_t h = members_hash(m, n);
	struct nexthop *g = group_lookup(m, n, h);

	if (g)
		return g;
	g = nh_alloc(SRC_MAX, 0, true, true);
	if (!g)
		return NULL;
	group_set_members(g, m, n);
	ht_insert(&rib_grp_by_key, &g->key_node, h);
	g->keyed = true;
	nh_write_logged(g);
	if (g->index == NO_INDEX)
		nh_full_log(g);
	return g;
}

/* The implicit group of these paths (RTA_MULTIPATH), shared by every
 * route with the same member set. Takes one reference for the caller. */
struct nexthop *group_implicit(const struct rib_path *paths, int n)
{
	struct nh_member m[NH_MAX_MEMBERS];
	struct nexthop *g;

	if (n > NH_MAX_MEMBERS)
		n = NH_MAX_MEMBERS;
	for (int i = 0; i < n; i++) {
		m[i].nh = nh_implicit(&paths[i]);
		m[i].weight = paths[i].weight ? paths[i].weight : 1;
		if (!m[i].nh) {
			for (int k = 0; k < i; k++)
				nh_put(m[k].nh);
			return NULL;
		}
		m[i].nh->refcnt++; /* held while we look */
	}
	qsort(m, (size_t)n, sizeof(m[0]), cmp_member);
	g = group_of_slots(m, n);
	if (g)
		g->refcnt++;
	for (int i = 0; i < n; i++)
		nh_put(m[i].nh);
	return g;
}

/*
 * A feed's group id: point it at the content group of its members' slots.
 * When nothing else uses its current content group, that one is changed
 * in place (a member going away rewrites one entry, not the routes).
 */
int feed_group(struct nexthop *g, const struct nh_member *m, int n)
{
	struct nh_member sm[NH_MAX_MEMBERS];
	struct nexthop *target, *old = g->alias;
	uint32_t h;

	for (int i = 0; i < n; i++) {
		sm[i].nh = slot_of(m[i].nh);
		sm[i].weight = m[i].weight;
	}
	qsort(sm, (size_t)n, sizeof(sm[0]), cmp_member);
	h = members_hash(sm, n);
	target = group_lookup(sm, n, h);
	if (target && target == old)
		return 0;
	if (!target && old && old->refcnt == 1) {
		ht_remove(&rib_grp_by_key, &old->key_node);
		group_set_members(old, sm, n);
		ht_insert(&rib_grp_by_key, &old->key_node, h);
		nh_write_logged(old);
		return 0;
	}
	if (!target)
		target = group_of_slots(sm, n);
	if (!target)
		return -ENOMEM;
	target->refcnt++;
	g->alias = target;
	if (g->refcnt)
		routes_follow(g);
	nh_put(old);
	return 0;
}
