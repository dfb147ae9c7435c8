/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the RIB's units share among themselves (rib.h is what the rest of
 * fpmd calls). Grouped by the unit that defines it.
 */
#ifndef FPMD_RIB_INT_H
#define FPMD_RIB_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/hash.h"
#include "common/slab.h"
#include "rib/rib.h"

/* The routes of both tables, one object each (rib.c; common/slab.h). */
extern struct slab_cache route_cache, other_cache;

/* ---- pool.c: dense map slots -------------------------------------------- */

struct idx_pool {
	uint64_t *used;
	uint32_t lo; /* no free index below this one */
	uint32_t max;
};

extern struct idx_pool nh_pool, group_pool;

int pool_init(struct idx_pool *p, uint32_t max);
uint32_t pool_get(struct idx_pool *p);
void pool_put(struct idx_pool *p, uint32_t idx);
/* Take idx itself (adoption); false if it is out of range or taken. */
bool pool_take(struct idx_pool *p, uint32_t idx);
void pool_free(struct idx_pool *p);

/* ---- hash keys of the tables --------------------------------------------- */

/* rib_nh_by_id: (source, id). */
static inline uint32_t id_hash(uint8_t src, uint32_t id)
{
	uint32_t k[2] = { src, id };

	return hash_bytes(k, sizeof(k), 0);
}

/* rib_nh_by_key singles and rib_neigh: (family, address, ifindex). */
static inline uint32_t key_hash(int family, const uint8_t *gw, uint32_t ifindex)
{
	uint8_t k[21] = { (uint8_t)family };

	memcpy(k + 1, &ifindex, 4);
	memcpy(k + 5, gw, 16);
	return hash_bytes(k, sizeof(k), 1);
}

/* rib_grp_by_key: the (sorted) member list. */
static inline uint32_t members_hash(const struct nh_member *m, int n)
{
	uint32_t h = 3;

	for (int i = 0; i < n; i++) {
		h = hash_bytes(&m[i].nh, sizeof(m[i].nh), h);
		h = hash_bytes(&m[i].weight, sizeof(m[i].weight), h);
	}
	return h;
}

/* Same members, field by field: struct nh_member has padding after the
 * weight, which memcmp would compare (a stack array's is garbage). */
static inline bool members_equal(const struct nh_member *a,
				 const struct nh_member *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].nh != b[i].nh || a[i].weight != b[i].weight)
			return false;
	return true;
}

/* rib_routes (and rib_other, xor the table). */
static inline uint32_t prefix_hash(const struct prefix *p)
{
	return hash_bytes(p, sizeof(*p), 2);
}

/* ---- nexthop.c ----------------------------------------------------------- */

/* The object whose map slot forwards for nh. */
static inline struct nexthop *slot_of(struct nexthop *nh)
{
	return nh && nh->alias ? nh->alias : nh;
}

static inline bool feed_src(enum rib_source src)
{
	return src == SRC_FPM || src == SRC_PLUGIN;
}

/* Set while a route by hand looks up its nexthop: it is refused, not
 * kept out of the fast path, when the table is full. */
extern bool quiet_full;

struct nexthop *nh_alloc(enum rib_source src, uint32_t id, bool is_group,
			 bool need_index);
/* A feed installed id nh again: no longer one to drop when unused. */
void nh_installed(struct nexthop *nh);
void nh_free(struct nexthop *nh);
/* Drop a reference: implicit ones go with their last user. */
void nh_put(struct nexthop *nh);
void nh_set_single(struct nexthop *nh, const struct rib_path *path);
/* Take the gateway's MAC from the neighbor table. */
void nh_resolve(struct nexthop *nh);
/* Write nh's map entry (a group's too); the logged one counts and says
 * why a write failed, and has every route's status looked at again. */
int nh_write(struct nexthop *nh);
void nh_write_logged(struct nexthop *nh);
/* nh is freed: out of the failed writes' count. */
void nh_write_forget(struct nexthop *nh);
/* fn(nh, arg) for each nexthop of t (rib_nh_by_id when by_id, else one of
 * the by-key tables). fn must not free any. */
void nh_each(struct htable *t, bool by_id,
	     void (*fn)(struct nexthop *nh, void *arg), void *arg);
/* A nexthop or group that got no map slot: say which, and what follows. */
void nh_full_log(const struct nexthop *nh);
/* The implicit nexthop of path, shared by every user; created if new. */
struct nexthop *nh_implicit(const struct rib_path *path);

/* ---- group.c ------------------------------------------------------------- */

int group_write(struct nexthop *g);
bool group_member_full(const struct nexthop *g);
void groups_rewrite_containing(const struct nexthop *member);
void group_set_members(struct nexthop *g, const struct nh_member *m, int n);
int cmp_member(const void *a, const void *b);
struct nexthop *group_implicit(const struct rib_path *paths, int n);
int feed_group(struct nexthop *g, const struct nh_member *m, int n);

/* ---- route.c ------------------------------------------------------------- */

/* Routes present per source (rib_count). */
extern uint32_t nroutes[SRC_MAX];

/* Write r's preferred entry to the map, or remove it (and free r when no
 * source has it any more); tell the status subscribers. */
void route_program(struct route *r);
void routes_follow(struct nexthop *nh);
void route_retry_pending(enum rib_source src, uint32_t id);

/* ---- rib.c --------------------------------------------------------------- */

void note_size(void);
/* r's share of rib_summary's counts, now (gone: r is leaving the table):
 * route_program() calls it after every change. */
void route_count(struct route *r, bool gone);

/* ---- neigh.c ------------------------------------------------------------- */

struct neighbor *neigh_find(int family, const uint8_t *addr, uint32_t ifindex);
void neigh_renumber(uint32_t old, uint32_t new_ifindex);

/* ---- status.c ------------------------------------------------------------ */

/* Tell the subscribers if r's status is not what they heard last. */
void status_check(struct route *r);
/* r was just written to the maps: list it if the fast path does not see
 * the write yet (rib_published). */
void status_written(struct route *r);
/* r leaves the maps or the RIB: out of that list. */
void status_forget(struct route *r);
/* r leaves the RIB: out of the state tally. */
void status_gone(struct route *r);
void status_free(void);

/* ---- egress.c: the interfaces, through rib_set_iface_ops ----------------- */

bool egress_info(uint32_t ifindex, uint8_t mac[6], uint16_t *mtu,
		 uint16_t *slot, bool *up);
/* Egress usable (interface managed and up)? */
bool nh_egress_up(const struct nexthop *nh);
bool egress_tx_port(uint32_t ifindex);
const char *egress_name(uint32_t ifindex);
int ingress_families(void);

#endif
