// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Routes, nexthops, groups and neighbors, and how they become map entries.
 *
 * Routes point at nexthop objects, never at MACs: a neighbor or interface
 * change rewrites the one nexthop (or group) entry and every route using
 * it follows at once. Map indices are fpmd's own dense slots; external ids
 * (fpmctl's, zebra's) are sparse, belong to their source, and only live
 * here.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "conf/conf.h"
#include "kernel/iface.h"
#include "common/log.h"
#include "fib/maps.h"
#include "rib/rib.h"

struct htable rib_routes, rib_nh_by_id, rib_nh_by_key, rib_grp_by_key,
	rib_neigh, rib_other;
struct rib_stats rib_stats;

/* ---- dense index pools ----------------------------------------------------- */

/*
 * Lowest free index first (stable, readable in bpftool dumps, and the
 * indices in use stay packed at the bottom, so the maps' chunks above
 * the highest one can go: pool_top), a used bit per index. Adoption
 * takes indices out of order.
 */
struct idx_pool {
	uint64_t *used;
	uint32_t lo; /* no free index below this one */
	uint32_t max;
};

static struct idx_pool nh_pool, group_pool;

#define POOL_BIT(p, i) ((p)->used[(i) / 64] & (1ull << ((i) % 64)))

static int pool_init(struct idx_pool *p, uint32_t max)
{
	memset(p, 0, sizeof(*p));
	p->used = calloc(max / 64 + 1, sizeof(*p->used));
	p->max = max;
	return p->used ? 0 : -1;
}

static void pool_mark(struct idx_pool *p, uint32_t idx, bool used)
{
	if (used)
		p->used[idx / 64] |= 1ull << (idx % 64);
	else
		p->used[idx / 64] &= ~(1ull << (idx % 64));
}

static uint32_t pool_get(struct idx_pool *p)
{
	uint32_t w = p->lo / 64, nw = (p->max + 63) / 64, idx;

	while (w < nw && p->used[w] == ~0ull)
		w++;
	if (w >= nw)
		return NO_INDEX;
	idx = w * 64 + (uint32_t)__builtin_ctzll(~p->used[w]);
	if (idx >= p->max)
		return NO_INDEX;
	pool_mark(p, idx, true);
	p->lo = idx + 1;
	return idx;
}

static void pool_put(struct idx_pool *p, uint32_t idx)
{
	if (idx == NO_INDEX || idx >= p->max || !POOL_BIT(p, idx))
		return;
	pool_mark(p, idx, false);
	if (idx < p->lo)
		p->lo = idx;
}

static bool pool_take(struct idx_pool *p, uint32_t idx)
{
	if (idx >= p->max || POOL_BIT(p, idx))
		return false;
	pool_mark(p, idx, true);
	return true;
}

/* One past the highest index in use (0: none). */
static uint32_t pool_top(const struct idx_pool *p)
{
	for (uint32_t w = (p->max + 63) / 64; w-- > 0;)
		if (p->used[w])
			return w * 64 + 64 - (uint32_t)__builtin_clzll(p->used[w]);
	return 0;
}

void rib_index_tops(uint32_t *nh_top, uint32_t *group_top)
{
	*nh_top = pool_top(&nh_pool);
	*group_top = pool_top(&group_pool);
}

static void pool_free(struct idx_pool *p)
{
	free(p->used);
	memset(p, 0, sizeof(*p));
}

int rib_init(uint32_t max_nexthops, uint32_t max_groups)
{
	if (ht_init(&rib_routes, 1024) || ht_init(&rib_nh_by_id, 256) ||
	    ht_init(&rib_nh_by_key, 256) || ht_init(&rib_grp_by_key, 64) ||
	    ht_init(&rib_neigh, 256) || ht_init(&rib_other, 64) ||
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

/* ---- protocols ----------------------------------------------------------- */

/* Interned protocol names: an entry holds a byte, and a 1M-route replay
 * of a handful of protocols costs a short scan per route, no memory. */
static char proto_names[RIB_PROTO_MAX][16] = {
	[RIB_PROTO_UNKNOWN] = "unknown",
	[RIB_PROTO_FPMCTL] = "fpmctl",
	[RIB_PROTO_LOCAL] = "local",
	[RIB_PROTO_OTHER] = "other",
};
static int n_proto_names = RIB_PROTO_LOCAL + 1, last_proto_id;

int rib_protocol_id(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= sizeof(proto_names[0]) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != len)
		return -EINVAL;
	if (!strcmp(proto_names[last_proto_id], name))
		return last_proto_id;
	for (int k = 0; k < n_proto_names; k++)
		if (!strcmp(proto_names[k], name))
			return last_proto_id = k;
	if (n_proto_names == RIB_PROTO_OTHER)
		return RIB_PROTO_OTHER;
	memcpy(proto_names[n_proto_names], name, len + 1);
	return last_proto_id = n_proto_names++;
}

const char *rib_protocol_name(uint8_t id)
{
	return proto_names[id];
}

const char *rib_entry_protocol(const struct route *r, int src)
{
	return proto_names[r->e[src].proto];
}

const char *rib_rtype_name(enum rib_rtype t)
{
	static const char *const n[] = { "unicast",  "blackhole", "unreachable",
					 "prohibit", "local",     "unicast" };

	return n[t];
}

/* ---- nexthops ------------------------------------------------------------ */

static uint32_t id_hash(uint8_t src, uint32_t id)
{
	uint32_t k[2] = { src, id };

	return hash_bytes(k, sizeof(k), 0);
}

static uint32_t key_hash(int family, const uint8_t *gw, uint32_t ifindex)
{
	uint8_t k[21] = { (uint8_t)family };

	memcpy(k + 1, &ifindex, 4);
	memcpy(k + 5, gw, 16);
	return hash_bytes(k, sizeof(k), 1);
}

static uint32_t members_hash(const struct nh_member *m, int n)
{
	uint32_t h = 3;

	for (int i = 0; i < n; i++) {
		h = hash_bytes(&m[i].nh, sizeof(m[i].nh), h);
		h = hash_bytes(&m[i].weight, sizeof(m[i].weight), h);
	}
	return h;
}

struct nexthop *rib_nexthop_find(enum rib_source src, uint32_t id)
{
	uint32_t h = id_hash((uint8_t)src, id);

	for (struct hnode *n = ht_chain(&rib_nh_by_id, h); n; n = n->next) {
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if (n->hash == h && nh->id == id && nh->src == src)
			return nh;
	}
	return NULL;
}

static struct neighbor *neigh_find(int family, const uint8_t *addr,
				   uint32_t ifindex);

/* The object whose map slot forwards for nh. */
static struct nexthop *slot_of(struct nexthop *nh)
{
	return nh && nh->alias ? nh->alias : nh;
}

static bool feed_src(enum rib_source src)
{
	return src == SRC_FPM || src == SRC_PLUGIN;
}

/* Egress usable (interface managed and up)? */
static bool nh_egress_up(const struct nexthop *nh)
{
	uint8_t mac[6];
	uint16_t mtu, slot;
	bool up;

	return iface_egress(nh->ifindex, mac, &mtu, &slot, &up) && up;
}

static bool member_live(struct nexthop *m)
{
	m = slot_of(m);
	return m->index != NO_INDEX && !m->unsupported && !m->blackhole &&
	       nh_egress_up(m);
}

static bool group_member_full(const struct nexthop *g)
{
	for (int i = 0; i < g->nmembers; i++) {
		const struct nexthop *m = slot_of(g->members[i].nh);

		if (m->index == NO_INDEX && !m->blackhole && !m->unsupported)
			return true;
	}
	return false;
}

static int group_write(struct nexthop *g)
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
	v.src = nh->src;
	v.flags = FPMD_NH_F_VALID;
	if (!nh->has_gw)
		v.flags |= FPMD_NH_F_CONNECTED;
	else if (nh->resolved)
		v.flags |= FPMD_NH_F_RESOLVED;
	if (nh->family == AF_INET6)
		v.flags |= FPMD_NH_F_V6;
	if (!iface_egress(nh->ifindex, v.smac, &v.mtu, &v.oslot, &up))
		/* Not an egress of ours (unmanaged, or our program is not
		 * attached to it): no MTU 0 that would count every frame as
		 * pass-mtu; tx_ports refuses it, so pass-egress-kernel. */
		v.mtu = 0xffff;
	else if (!up)
		v.flags |= FPMD_NH_F_IFDOWN;
	memcpy(v.dmac, nh->mac, 6);
	memcpy(v.gw, nh->gw, 16);
	return maps_nexthop_write(nh->index, &v);
}

static void nh_write_logged(struct nexthop *nh)
{
	int ret = nh_write(nh);

	/* What the fast path does with every route using it may change. */
	rib_status_changed_all();

	if (ret) {
		rib_stats.map_errors++;
		log_err("maps: %s %u (slot %u): write failed: %s",
			nh->is_group ? "group" : "nexthop", nh->id, nh->index,
			strerror(-ret));
	}
}

static void rewrite_groups_in(struct htable *t, bool by_id,
			      const struct nexthop *member)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(t, n, tmp, i)
	{
		struct nexthop *g = by_id ?
			container_of(n, struct nexthop, id_node) :
			container_of(n, struct nexthop, key_node);

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

static void groups_rewrite_containing(const struct nexthop *member)
{
	rewrite_groups_in(&rib_nh_by_id, true, member);
	rewrite_groups_in(&rib_grp_by_key, false, member);
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

static struct nexthop *nh_alloc(enum rib_source src, uint32_t id,
				bool is_group, bool need_index)
{
	struct nexthop *nh = calloc(1, sizeof(*nh));

	if (!nh)
		return NULL;
	nh->id = id;
	nh->src = (uint8_t)src;
	nh->is_group = is_group;
	nh->index = NO_INDEX;
	if (!need_index)
		return nh;
	nh->index = pool_get(is_group ? &group_pool : &nh_pool);
	if (nh->index == NO_INDEX) {
		if (is_group)
			rib_stats.group_map_full++;
		else
			rib_stats.nh_map_full++;
	}
	return nh;
}

/* The error a full nexthops or nh_groups map gives, naming the limit. */
const char *rib_full_error(bool is_group)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "%s table full (tables/%s = %u)",
		 is_group ? "nexthop group" : "nexthop",
		 is_group ? "max-groups" : "max-nexthops",
		 is_group ? cfg.max_groups : cfg.max_nexthops);
	return buf;
}

/* A nexthop or group that got no map slot: say which, and what follows. */
static void nh_full_log(const struct nexthop *nh)
{
	char gw[ADDR_STRLEN], ifn[IF_NAMESIZE + 2] = "?";
	struct iface *i;

	if (nh->id) {
		log_err("maps: %s: %s %u kept out of the fast path (routes "
			"using it go to the kernel)",
			rib_full_error(nh->is_group),
			nh->is_group ? "group" : "nexthop", nh->id);
		return;
	}
	if (nh->is_group) {
		log_err("maps: %s: an ECMP group of %d nexthops kept out of "
			"the fast path (routes using it go to the kernel)",
			rib_full_error(true), nh->nmembers);
		return;
	}
	i = iface_by_ifindex(nh->ifindex);
	if (i)
		snprintf(ifn, sizeof(ifn), "%s", i->name);
	if (nh->has_gw)
		fmt_addr(nh->family, nh->gw, gw);
	log_err("maps: %s: nexthop %s%s dev %s kept out of the fast path "
		"(routes using it go to the kernel)",
		rib_full_error(false), nh->has_gw ? "via " : "",
		nh->has_gw ? gw : "(connected)", ifn);
}

static void nh_set_single(struct nexthop *nh, const struct rib_path *path)
{
	if (nh->keyed)
		ht_remove(&rib_nh_by_key, &nh->key_node);
	nh->family = path->has_gw ? path->family : AF_UNSPEC;
	nh->has_gw = path->has_gw;
	memset(nh->gw, 0, 16);
	if (path->has_gw)
		memcpy(nh->gw, path->gw, addr_len(path->family));
	nh->ifindex = path->ifindex;
	ht_insert(&rib_nh_by_key, &nh->key_node,
		  key_hash(nh->family, nh->gw, nh->ifindex));
	nh->keyed = true;
	nh_resolve(nh);
}

static void nh_put(struct nexthop *nh);

static void nh_free(struct nexthop *nh)
{
	struct nexthop *alias = nh->alias;

	if (nh->is_group) {
		for (int i = 0; i < nh->nmembers; i++)
			nh->members[i].nh->refcnt--;
		if (nh->keyed)
			ht_remove(&rib_grp_by_key, &nh->key_node);
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
	nh_put(alias);
}

static void nh_put(struct nexthop *nh)
{
	struct nh_member m[NH_MAX_MEMBERS];
	int n = 0;

	if (!nh)
		return;
	nh->refcnt--;
	/* Implicit nexthops and groups live as long as something uses them. */
	if (nh->id || nh->refcnt)
		return;
	if (nh->is_group) {
		n = nh->nmembers;
		memcpy(m, nh->members, sizeof(m[0]) * (size_t)n);
		for (int i = 0; i < n; i++)
			m[i].nh->refcnt++; /* nh_free drops them */
	}
	nh_free(nh);
	for (int i = 0; i < n; i++)
		nh_put(m[i].nh);
}

static void route_retry_pending(enum rib_source src, uint32_t id);
static void routes_follow(struct nexthop *nh);
static struct nexthop *nh_implicit(const struct rib_path *path);
static int feed_group(struct nexthop *g, const struct nh_member *m, int n);

static bool same_path(const struct nexthop *nh, const struct rib_path *path)
{
	return nh->keyed && !nh->blackhole && !nh->unsupported &&
	       nh->ifindex == path->ifindex && nh->has_gw == path->has_gw &&
	       (!path->has_gw ||
		(nh->family == path->family &&
		 !memcmp(nh->gw, path->gw, addr_len(path->family))));
}

/*
 * Whether nh (a feed's single or group) forwards over exactly paths: the
 * same gateways, interfaces and weights, in any order. The plugin sends a
 * route's paths next to its group id, so a group zebra left stale shows.
 */
bool rib_nexthop_same_paths(struct nexthop *nh, const struct rib_path *paths,
			    int n)
{
	bool used[NH_MAX_MEMBERS] = { false };

	if (!nh->is_group)
		return n == 1 && same_path(slot_of(nh), &paths[0]);
	if (nh->nmembers != n)
		return false;
	for (int i = 0; i < n; i++) {
		int j;

		for (j = 0; j < n; j++)
			if (!used[j] && nh->members[j].weight == paths[i].weight &&
			    same_path(slot_of(nh->members[j].nh), &paths[i]))
				break;
		if (j == n)
			return false;
		used[j] = true;
	}
	return true;
}

/* A feed's single id: point it at the content slot for path. */
static int feed_single(struct nexthop *nh, const struct rib_path *path,
		       bool blackhole, bool unsupported, const char **err)
{
	struct nexthop *slot = NULL, *old = nh->alias;

	if (!blackhole && !unsupported) {
		slot = nh_implicit(path);
		if (!slot) {
			*err = "out of memory";
			return -ENOMEM;
		}
		if (slot == old && !nh->blackhole && !nh->unsupported)
			return 0; /* unchanged: a replay writes nothing */
		slot->refcnt++;
	} else if (!old && nh->blackhole == blackhole &&
		   nh->unsupported == unsupported) {
		return 0;
	}
	nh->alias = slot;
	nh->blackhole = blackhole;
	nh->unsupported = unsupported;
	/* What used this id now forwards by another slot (or none). */
	if (nh->refcnt)
		routes_follow(nh);
	nh_put(old);
	return 0;
}

int rib_nexthop_add(enum rib_source src, uint32_t id,
		    const struct rib_path *path, bool blackhole,
		    bool unsupported, uint32_t gen, const char **err)
{
	struct nexthop *nh = rib_nexthop_find(src, id);
	bool is_new = !nh;
	int ret;

	if (!id) {
		*err = "nexthop id 0 is reserved";
		return -EINVAL;
	}
	if (!blackhole && !unsupported && !path->ifindex) {
		*err = "nexthop needs an interface";
		return -EINVAL;
	}
	if (nh && nh->is_group) {
		*err = "id is a group; delete it first";
		return -EEXIST;
	}
	if (!nh) {
		nh = nh_alloc(src, id, false,
			      !feed_src(src) && !blackhole && !unsupported);
		if (!nh) {
			*err = "out of memory";
			return -ENOMEM;
		}
		/* By hand: refused, the caller hears why (a feed's ids own
		 * no slot). */
		if (!feed_src(src) && !blackhole && !unsupported &&
		    nh->index == NO_INDEX) {
			free(nh);
			*err = rib_full_error(false);
			return -ENOSPC;
		}
		ht_insert(&rib_nh_by_id, &nh->id_node, id_hash((uint8_t)src, id));
	}
	nh->gen = gen;
	if (feed_src(src)) {
		ret = feed_single(nh, path, blackhole, unsupported, err);
		if (!ret && is_new)
			route_retry_pending(src, id);
		return ret;
	}
	if (!is_new && !blackhole && !unsupported && same_path(nh, path))
		return 0; /* unchanged: nothing to write */
	if (nh->blackhole != blackhole || nh->unsupported != unsupported) {
		if (!blackhole && !unsupported && nh->index == NO_INDEX) {
			nh->index = pool_get(&nh_pool);
			if (nh->index == NO_INDEX) {
				rib_stats.nh_map_full++;
				*err = rib_full_error(false);
				return -ENOSPC;
			}
		}
		nh->blackhole = blackhole;
		nh->unsupported = unsupported;
		/* The kind changes route values: routes using it follow. */
		if (nh->refcnt)
			routes_follow(nh);
	}
	if (!blackhole && !unsupported) {
		/* Replace in place: routes and groups keep this slot. */
		nh_set_single(nh, path);
		nh_write_logged(nh);
		groups_rewrite_containing(nh);
	}
	if (is_new)
		route_retry_pending(src, id);
	return 0;
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

static void group_set_members(struct nexthop *g, const struct nh_member *m,
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
		   !memcmp(g->members, m, sizeof(m[0]) * (size_t)n)) {
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

int rib_nexthop_del(enum rib_source src, uint32_t id, const char **err)
{
	struct nexthop *nh = rib_nexthop_find(src, id);

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

/* Set while a route by hand looks up its nexthop: it is refused, not
 * kept out of the fast path, when the table is full. */
static bool quiet_full;

static struct nexthop *nh_implicit(const struct rib_path *path)
{
	uint8_t key[16] = { 0 };
	int family = path->has_gw ? path->family : AF_UNSPEC;
	struct nexthop *nh;
	uint32_t h;

	if (path->has_gw)
		memcpy(key, path->gw, addr_len(path->family));
	h = key_hash(family, key, path->ifindex);
	for (struct hnode *n = ht_chain(&rib_nh_by_key, h); n; n = n->next) {
		nh = container_of(n, struct nexthop, key_node);
		if (n->hash == h && !nh->id && nh->ifindex == path->ifindex &&
		    nh->has_gw == path->has_gw && nh->family == family &&
		    !memcmp(nh->gw, key, 16))
			return nh;
	}
	nh = nh_alloc(SRC_MAX, 0, false, true);
	if (!nh)
		return NULL;
	nh_set_single(nh, path);
	nh_write_logged(nh);
	if (nh->index == NO_INDEX && !quiet_full)
		nh_full_log(nh);
	return nh;
}

static int cmp_member(const void *a, const void *b)
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
		    !memcmp(g->members, m, sizeof(m[0]) * (size_t)n))
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
static struct nexthop *group_implicit(const struct rib_path *paths, int n)
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
static int feed_group(struct nexthop *g, const struct nh_member *m, int n)
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

struct nexthop *rib_nexthop_slot(struct nexthop *nh)
{
	return slot_of(nh);
}

/* Nonzero while a slice of the route status scan runs: nothing changes
 * meanwhile, so each nexthop's state is worked out once per scan. */
static uint32_t st_scan_gen;

static const char *nexthop_state_now(const struct nexthop *cnh);

const char *nexthop_state(const struct nexthop *cnh)
{
	struct nexthop *nh = (struct nexthop *)cnh;

	if (!st_scan_gen)
		return nexthop_state_now(cnh);
	if (nh->st_gen != st_scan_gen) {
		nh->st_cache = nexthop_state_now(cnh);
		nh->st_gen = st_scan_gen;
	}
	return nh->st_cache;
}

static const char *nexthop_state_now(const struct nexthop *cnh)
{
	struct nexthop *nh = slot_of((struct nexthop *)cnh);
	uint8_t mac[6];
	uint16_t mtu, slot;
	bool up;

	if (cnh->blackhole)
		return "blackhole";
	if (cnh->unsupported)
		return "unsupported";
	if (nh->index == NO_INDEX)
		return "map-full";
	if (nh->is_group && !nh->nbuckets && group_member_full(nh))
		return "member-map-full";
	if (nh->is_group) {
		if (!nh->nbuckets)
			return "no-live-member";
		/* Live members whose egress passes everything: none forwards. */
		for (int k = 0; k < nh->nmembers; k++) {
			struct nexthop *m = slot_of(nh->members[k].nh);

			if (iface_is_tx_port(iface_by_ifindex(m->ifindex)))
				return "forwarding";
		}
		return "egress-kernel";
	}
	if (!iface_egress(nh->ifindex, mac, &mtu, &slot, &up))
		return "egress-kernel";
	if (!up)
		return "egress-down";
	/* Attached but kept out of tx_ports (a guard, netfilter): the
	 * program passes what would leave by it. */
	if (!iface_is_tx_port(iface_by_ifindex(nh->ifindex)))
		return "egress-kernel";
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

static uint32_t route_value(const struct route_entry *e, int src)
{
	uint32_t t = FPMD_RT_KERNEL, idx = 0;
	struct nexthop *sl = slot_of(e->nh);

	switch (e->type) {
	case RT_UNICAST:
		if (e->nh->blackhole) {
			t = FPMD_RT_BLACKHOLE;
		} else if (!e->nh->unsupported && sl->index != NO_INDEX) {
			t = sl->is_group ? FPMD_RT_GROUP : FPMD_RT_NEXTHOP;
			idx = sl->index;
		}
		break;
	case RT_BLACKHOLE: t = FPMD_RT_BLACKHOLE; break;
	case RT_UNREACHABLE: t = FPMD_RT_UNREACHABLE; break;
	case RT_PROHIBIT: t = FPMD_RT_PROHIBIT; break;
	case RT_LOCAL: t = FPMD_RT_LOCAL; break;
	default: break;
	}
	return FPMD_RT_ENCODE_SRC(src, t, idx);
}

static int route_selected(const struct route *r)
{
	for (int s = 0; s < SRC_MAX; s++)
		if (r->e[s].present)
			return s;
	return -1;
}

/*
 * malloc keeps what the tables free for their next growth: after a mass
 * delete (a feed lost, a flood undone) fpmd would hold its tables'
 * high-water mark for good. rib_trim() gives it back, the route tables'
 * bucket arrays included, once they have shrunk by RIB_TRIM_ROUTES
 * entries since their largest.
 */
#define RIB_TRIM_ROUTES 10000
static size_t rib_high;

static void note_size(void)
{
	size_t n = rib_routes.count + rib_other.count;

	if (n > rib_high)
		rib_high = n;
}

void rib_trim(void)
{
	size_t n = rib_routes.count + rib_other.count;

	if (rib_high < n + RIB_TRIM_ROUTES)
		return;
	log_debug("rib: %zu routes, %zu at most before: returning freed "
		  "memory to the system",
		  n, rib_high);
	ht_shrink(&rib_routes, 1024);
	ht_shrink(&rib_other, 64);
	maps_fib_trim();
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	rib_high = n;
}

/*
 * Write the preferred entry of r to the map, or remove it. A write that
 * would not change the map is skipped: a replay must not touch a route
 * that is already right. Frees r when no source has it any more.
 */
static const char *route_full_error(int family);
static void status_check(struct route *r);
static bool route_program_map(struct route *r);

static void route_program(struct route *r)
{
	if (route_program_map(r))
		status_check(r);
}

/* False when r was freed. */
static bool route_program_map(struct route *r)
{
	char pb[PREFIX_STRLEN];
	int sel = route_selected(r);
	uint32_t val;
	int ret;

	if (sel < 0) {
		if (r->programmed) {
			rib_stats.route_writes++;
			log_debug("maps: route %s: deleted",
				  fmt_prefix(&r->p, pb));
			ret = maps_route_delete(&r->p);
			if (ret)
				log_err("maps: route %s: delete failed: %s",
					fmt_prefix(&r->p, pb), strerror(-ret));
		}
		ht_remove(&rib_routes, &r->node);
		free(r);
		return false;
	}
	r->selected = (int8_t)sel;
	val = route_value(&r->e[sel], sel);
	if (r->programmed && val == r->val)
		return true;
	rib_stats.route_writes++;
	log_debug("maps: route %s (%s): %08x -> %08x", fmt_prefix(&r->p, pb),
		  rib_source_name(sel), r->programmed ? r->val : 0, val);
	ret = maps_route_write(&r->p, val);
	if (!ret) {
		r->programmed = true;
		r->val = val;
		r->state = RS_FORWARDING;
		return true;
	}
	/* The old value may still be in the map: take it out rather than
	 * leave a stale nexthop forwarding. */
	if (r->programmed)
		maps_route_delete(&r->p);
	r->programmed = false;
	if (ret == -E2BIG || ret == -ENOSPC || ret == -ENOMEM) {
		r->state = RS_MAP_FULL;
		rib_stats.route_map_full++;
		log_err("maps: %s: route %s (%s) not programmed; its "
			"packets follow a covering route or the kernel",
			route_full_error(r->p.family), fmt_prefix(&r->p, pb),
			rib_source_name(sel));
	} else {
		r->state = RS_ERROR;
		rib_stats.map_errors++;
		log_err("maps: route %s: write failed: %s",
			fmt_prefix(&r->p, pb), strerror(-ret));
	}
	return true;
}

static uint32_t pending_routes;
static uint32_t nroutes[SRC_MAX];

static const char *route_full_error(int family)
{
	static char buf[96];

	snprintf(buf, sizeof(buf),
		 "route table full (tables/max-routes-v%d "
		 "= %u)",
		 family == AF_INET ? 4 : 6,
		 family == AF_INET ? cfg.max_routes_v4 : cfg.max_routes_v6);
	return buf;
}

uint32_t rib_pending_routes(void)
{
	return pending_routes;
}

int rib_route_add(const struct rib_route_req *rq, const char **err)
{
	struct nexthop *nh = NULL, *old_nh;
	struct route_entry ne = { .present = true, .type = (uint8_t)rq->type,
				  .gen = rq->gen, .proto = rq->proto,
				  .rtproto = rq->rtproto };
	struct route *r;
	struct prefix m = rq->p;
	bool was_present;

	prefix_mask(&m);
	if (!ne.proto && rq->src == SRC_STATIC)
		ne.proto = RIB_PROTO_FPMCTL;
	else if (!ne.proto && rq->src == SRC_KERNEL_LOCAL)
		ne.proto = RIB_PROTO_LOCAL;
	if (rq->type == RT_UNICAST && rq->nhid) {
		nh = rib_nexthop_find(rq->src, rq->nhid);
		if (!nh && rq->src == SRC_STATIC) {
			*err = "nexthop id unknown";
			return -ENOENT;
		}
		if (!nh) {
			/* A feed's id we were never told about: say so and
			 * let the kernel route it, do not guess. */
			ne.type = RT_KERNEL;
			ne.kreason = KR_NHID_UNKNOWN;
			ne.pending_nhid = rq->nhid;
		} else {
			nh->refcnt++;
		}
	} else if (rq->type == RT_UNICAST) {
		if (rq->npaths < 1 || !rq->paths[0].ifindex) {
			*err = "route needs a nexthop id or an interface";
			return -EINVAL;
		}
		quiet_full = rq->src == SRC_STATIC;
		nh = rq->npaths == 1 ? nh_implicit(&rq->paths[0]) :
				       group_implicit(rq->paths, rq->npaths);
		quiet_full = false;
		if (!nh) {
			*err = "out of memory";
			return -ENOMEM;
		}
		if (rq->npaths == 1)
			nh->refcnt++;
		if (rq->src == SRC_STATIC && slot_of(nh)->index == NO_INDEX) {
			*err = rib_full_error(nh->is_group);
			nh_put(nh);
			return -ENOSPC;
		}
	} else if (rq->type == RT_KERNEL) {
		ne.kreason = (uint8_t)rq->kreason;
	}
	ne.nh = nh;
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
		note_size();
	}
	was_present = r->e[rq->src].present;
	old_nh = was_present ? r->e[rq->src].nh : NULL;
	if (!r->e[rq->src].present)
		nroutes[rq->src]++;
	if (r->e[rq->src].present && r->e[rq->src].kreason == KR_NHID_UNKNOWN)
		pending_routes--;
	if (ne.kreason == KR_NHID_UNKNOWN)
		pending_routes++;
	r->e[rq->src] = ne;
	route_program(r);
	/* After the map points at the new nexthop: an implicit old one may
	 * be freed (and its slot cleared) only now. */
	nh_put(old_nh);
	if (r->state == RS_MAP_FULL && !r->programmed) {
		*err = route_full_error(m.family);
		/* By hand: refused, nothing left behind. */
		if (rq->src == SRC_STATIC && !was_present) {
			const char *e;

			rib_route_del(SRC_STATIC, &m, &e);
		}
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
	if (r->e[src].kreason == KR_NHID_UNKNOWN)
		pending_routes--;
	nroutes[src]--;
	old_nh = r->e[src].nh;
	memset(&r->e[src], 0, sizeof(r->e[src]));
	route_program(r);
	nh_put(old_nh);
	return 0;
}

/* Routes and groups using nh forward by another slot now: reprogram
 * them. A scan, but only when a feed changes what an id means in place
 * (rare: zebra gives new content a new id). */
static void routes_follow(struct nexthop *nh)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);

		for (int s = 0; s < SRC_MAX; s++) {
			if (r->e[s].present && r->e[s].nh == nh) {
				route_program(r);
				break;
			}
		}
	}
	if (nh->is_group)
		return;
	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *g = container_of(n, struct nexthop, id_node);

		if (!g->is_group)
			continue;
		for (int m = 0; m < g->nmembers; m++) {
			if (g->members[m].nh != nh)
				continue;
			if (feed_src(g->src))
				feed_group(g, g->members, g->nmembers);
			else
				nh_write_logged(g);
			break;
		}
	}
}

/* A nexthop id routes were waiting for has arrived. */
static void route_retry_pending(enum rib_source src, uint32_t id)
{
	struct nexthop *nh = rib_nexthop_find(src, id);
	struct hnode *n, *tmp;
	size_t i;

	if (!pending_routes || !nh)
		return;
	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);
		struct route_entry *e = &r->e[src];

		if (!e->present || e->kreason != KR_NHID_UNKNOWN ||
		    e->pending_nhid != id)
			continue;
		e->type = RT_UNICAST;
		e->kreason = KR_NONE;
		e->pending_nhid = 0;
		e->nh = nh;
		nh->refcnt++;
		pending_routes--;
		route_program(r);
	}
}

uint32_t rib_sweep(enum rib_source src, uint32_t gen)
{
	struct hnode *n, *tmp;
	uint32_t swept = 0;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);
		const char *err;

		if (r->e[src].present && (!gen || r->e[src].gen != gen) &&
		    !rib_route_del(src, &r->p, &err))
			swept++;
	}
	ht_for_each(&rib_other, n, tmp, i)
	{
		struct other_route *o = container_of(n, struct other_route,
						     node);

		/* Like the main table: what the replay refreshed stays. */
		if (o->src == src && (!gen || o->gen != gen)) {
			ht_remove(&rib_other, &o->node);
			free(o);
		}
	}
	/* Groups before their members; in-use ones stay (a route of
	 * another generation still points at them). */
	for (int pass = 0; pass < 2; pass++) {
		ht_for_each(&rib_nh_by_id, n, tmp, i)
		{
			struct nexthop *nh =
				container_of(n, struct nexthop, id_node);
			const char *err;

			if (nh->src == src && nh->is_group == !pass &&
			    (!gen || nh->gen != gen) && !nh->refcnt)
				rib_nexthop_del(src, nh->id, &err);
		}
	}
	return swept;
}

uint32_t rib_count(enum rib_source src)
{
	return nroutes[src];
}

void rib_nexthop_walk(void (*fn)(const struct nexthop *nh, void *arg),
		      void *arg)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_nh_by_key, n, tmp, i)
		fn(container_of(n, struct nexthop, key_node), arg);
	ht_for_each(&rib_grp_by_key, n, tmp, i)
		fn(container_of(n, struct nexthop, key_node), arg);
	/* Ids that own their slot or need none; keyed ones were seen. */
	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if (!nh->keyed && !nh->alias)
			fn(nh, arg);
	}
}

static void count_nexthop(const struct nexthop *nh, void *arg)
{
	struct rib_counts *c = arg;

	if (nh->is_group)
		c->groups++;
	else
		c->nexthops++;
}

void rib_summary(struct rib_counts *c)
{
	struct hnode *n, *tmp;
	size_t i;

	memset(c, 0, sizeof(*c));
	ht_for_each(&rib_routes, n, tmp, i)
	{
		const struct route *r = container_of(n, struct route, node);

		if (r->p.family == AF_INET)
			c->routes_v4++;
		else
			c->routes_v6++;
		if (r->programmed)
			c->programmed++;
		else
			c->not_programmed++;
		for (int s = 0; s < SRC_MAX; s++)
			if (s == r->selected ||
			    (r->selected < 0 && r->e[s].present)) {
				c->by_protocol[r->e[s].proto]++;
				break;
			}
	}
	rib_nexthop_walk(count_nexthop, c);
	c->neighbors = (uint32_t)rib_neigh.count;
	c->other_table = (uint32_t)rib_other.count;
}

const char *route_entry_state(const struct route *r, int src)
{
	const struct route_entry *e = &r->e[src];

	if (src != r->selected)
		return "not-selected";
	if (!r->programmed)
		return r->state == RS_MAP_FULL ? "map-full" : "error";
	switch (e->type) {
	case RT_BLACKHOLE: return "blackhole";
	case RT_KERNEL:
		return e->kreason == KR_NHID_UNKNOWN ? "nexthop-id-unknown" :
		       e->kreason == KR_MTU_METRIC   ? "mtu-metric" :
						       "unsupported-nexthop";
	case RT_UNICAST:
		if (e->nh->blackhole)
			return "blackhole";
		if (e->nh->unsupported)
			return "unsupported-nexthop";
		if (slot_of(e->nh)->index == NO_INDEX)
			return "nexthop-map-full";
		return nexthop_state(e->nh);
	default: return "kernel-path";
	}
}

/* ---- route status: does the fast path take a route's packets? ---------- */

#define STATUS_MAX_SUBS 8
/* Routes per slice of the scan: a few ms, the loop stays responsive. */
#define STATUS_SLICE 20000

static struct {
	rib_status_fn fn;
	void *arg;
} st_subs[STATUS_MAX_SUBS];
static int st_nsubs;

static struct {
	bool dirty, running;
	uint32_t gen;
	size_t bucket, nbuckets;
} st_scan;

/* Families some attached interface takes into the fast path (bit 0 IPv4,
 * bit 1 IPv6); -1: to be worked out again. */
static int st_ingress = -1;

static bool ingress_takes(int family)
{
	if (st_ingress < 0) {
		st_ingress = 0;
		for (int s = 0; s < FPMD_MAX_IFACES; s++) {
			const struct iface *i = &iface_tab[s];
			uint32_t f;

			if (!i->used || !i->ifindex || !i->attached)
				continue;
			f = iface_map_flags(i);
			if (!(f & FPMD_IF_F_ENABLED))
				continue;
			if ((f & FPMD_IF_F_FWD_V4) &&
			    !(f & FPMD_IF_F_KERNEL_V4))
				st_ingress |= 1;
			if ((f & FPMD_IF_F_FWD_V6) &&
			    !(f & FPMD_IF_F_KERNEL_V6))
				st_ingress |= 2;
		}
	}
	return st_ingress & (family == AF_INET ? 1 : 2);
}

const char *rib_route_status(const struct route *r, int src, bool *offloaded)
{
	const char *st;

	*offloaded = false;
	if (src < 0 || src >= SRC_MAX || !r->e[src].present)
		return "absent";
	st = route_entry_state(r, src);
	if (strcmp(st, "forwarding") && strcmp(st, "blackhole"))
		return st;
	if (!ingress_takes(r->p.family))
		return "ingress-kernel";
	*offloaded = true;
	return st;
}

int rib_status_subscribe(rib_status_fn fn, void *arg)
{
	if (st_nsubs == STATUS_MAX_SUBS)
		return -1;
	st_subs[st_nsubs].fn = fn;
	st_subs[st_nsubs].arg = arg;
	/* Routes already here were never reported: scan them once. */
	rib_status_changed_all();
	return st_nsubs++;
}

void rib_status_changed_all(void)
{
	st_ingress = -1;
	st_scan.dirty = true;
}

/* Tell the subscribers if r's status is not what they heard last. */
static void status_check(struct route *r)
{
	int sel = r->selected;
	bool off;
	const char *st;

	if (!st_nsubs)
		return;
	st = sel >= 0 ? rib_route_status(r, sel, &off) : "absent";
	if (st == r->st_state && sel == r->st_sel)
		return;
	r->st_state = st;
	r->st_sel = (int8_t)sel;
	for (int k = 0; k < st_nsubs; k++)
		st_subs[k].fn(r, st_subs[k].arg);
}

bool rib_status_run(void)
{
	size_t n = 0;

	if (!st_nsubs)
		return false;
	if (!st_scan.running) {
		if (!st_scan.dirty)
			return false;
		st_scan.dirty = false;
		st_scan.running = true;
		st_scan.bucket = 0;
		st_scan.nbuckets = rib_routes.nbuckets;
		if (!++st_scan.gen)
			st_scan.gen++;
	}
	/* The table grew or shrank between slices: buckets moved. */
	if (st_scan.nbuckets != rib_routes.nbuckets) {
		st_scan.bucket = 0;
		st_scan.nbuckets = rib_routes.nbuckets;
		if (!++st_scan.gen)
			st_scan.gen++;
	}
	st_scan_gen = st_scan.gen;
	while (st_scan.bucket < st_scan.nbuckets && n < STATUS_SLICE) {
		struct hnode *hn = rib_routes.b[st_scan.bucket++];

		for (; hn; hn = hn->next, n++)
			status_check(container_of(hn, struct route, node));
	}
	st_scan_gen = 0;
	if (st_scan.bucket >= st_scan.nbuckets)
		st_scan.running = false;
	return st_scan.running || st_scan.dirty;
}

/* ---- other tables ---------------------------------------------------------- */

static struct other_route *other_find(enum rib_source src,
				      const struct prefix *p, uint32_t table,
				      uint32_t h)
{
	for (struct hnode *n = ht_chain(&rib_other, h); n; n = n->next) {
		struct other_route *o = container_of(n, struct other_route,
						     node);

		if (n->hash == h && o->table == table && o->src == src &&
		    !memcmp(&o->p, p, sizeof(*p)))
			return o;
	}
	return NULL;
}

const struct other_route *rib_other_find(enum rib_source src,
					 const struct prefix *p, uint32_t table)
{
	return other_find(src, p, table, prefix_hash(p) ^ table);
}

void rib_other_add(enum rib_source src, const struct prefix *p, uint32_t table,
		   uint32_t gen, uint8_t proto)
{
	uint32_t h = prefix_hash(p) ^ table;
	struct other_route *o;
	char pb[PREFIX_STRLEN];

	rib_stats.other_table++;
	o = other_find(src, p, table, h);
	if (o) {
		o->gen = gen;
		o->proto = proto;
		return;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return;
	o->gen = gen;
	o->proto = proto;
	o->p = *p;
	o->table = table;
	o->src = (uint8_t)src;
	ht_insert(&rib_other, &o->node, h);
	note_size();
	if (rib_other.count <= 10 || !(rib_other.count % 10000))
		log_info("%s: route %s in table %u: not programmed (only the "
			 "main table is; %zu such routes)",
			 rib_source_name(src), fmt_prefix(p, pb), table,
			 rib_other.count);
}

void rib_other_del(enum rib_source src, const struct prefix *p,
		   uint32_t table)
{
	struct other_route *o = other_find(src, p, table,
					   prefix_hash(p) ^ table);

	if (o) {
		ht_remove(&rib_other, &o->node);
		free(o);
	}
}

/* ---- neighbors ----------------------------------------------------------- */

static struct neighbor *neigh_find(int family, const uint8_t *addr,
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
		if (was != nh->resolved || memcmp(mac, nh->mac, 6))
			nh_write_logged(nh);
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

/* Neighbors of a re-created interface: those entered by hand follow it,
 * the kernel's are gone with it (it flushed them; fpmd no longer listened
 * for the old ifindex). */
static void neigh_renumber(uint32_t old, uint32_t new_ifindex)
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

/* ---- adoption of pinned maps after a restart ----------------------------- */

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
			r = calloc(1, sizeof(*r));
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

/* Free every table (at exit; the maps are left as they are). */
void rib_free(void)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
		free(container_of(n, struct route, node));
	ht_for_each(&rib_other, n, tmp, i)
		free(container_of(n, struct other_route, node));
	ht_for_each(&rib_neigh, n, tmp, i)
		free(container_of(n, struct neighbor, node));
	/* Explicit groups and a feed's ids are only in by_id, implicit
	 * groups only in grp_by_key; every other single is in by_key. */
	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if (nh->is_group || !nh->keyed)
			free(nh);
	}
	ht_for_each(&rib_grp_by_key, n, tmp, i)
		free(container_of(n, struct nexthop, key_node));
	ht_for_each(&rib_nh_by_key, n, tmp, i)
		free(container_of(n, struct nexthop, key_node));
	ht_free(&rib_routes);
	ht_free(&rib_other);
	ht_free(&rib_neigh);
	ht_free(&rib_nh_by_id);
	ht_free(&rib_nh_by_key);
	ht_free(&rib_grp_by_key);
	pool_free(&nh_pool);
	pool_free(&group_pool);
}
