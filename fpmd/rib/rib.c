// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Routes, nexthops, groups and neighbors, and how they become map entries.
 *
 * Routes point at nexthop objects, never at MACs: a neighbor or interface
 * change rewrites the one nexthop (or group) entry and every route using
 * it follows at once. Map indices are fpmd's own dense slots; external ids
 * (fpmctl's, zebra's) are sparse, belong to their source, and only live
 * here.
 *
 * This unit holds the tables, their names and sizes; nexthop.c, group.c
 * (and pool.c, their map slots), route.c, other_tables.c, neigh.c, status.c
 * (what the fast path does with a route), egress.c (the interfaces as the
 * RIB sees them) and adopt.c (after a restart) hold the rest.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "fib/maps.h"
#include "fib/reaper.h"
#include "rib/rib_int.h"

struct htable rib_routes, rib_nh_by_id, rib_nh_by_key, rib_grp_by_key,
	rib_neigh, rib_other;
struct rib_stats rib_stats;
struct slab_cache route_cache = SLAB_CACHE_INIT("routes", struct route),
		  other_cache = SLAB_CACHE_INIT("other tables' routes",
						struct other_route);

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

/* Free every table (at exit; the maps are left as they are). */
void rib_free(void)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
		slab_free(&route_cache, container_of(n, struct route, node));
	ht_for_each(&rib_other, n, tmp, i)
		slab_free(&other_cache,
			  container_of(n, struct other_route, node));
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
	status_free();
	ht_free(&rib_routes);
	ht_free(&rib_other);
	ht_free(&rib_neigh);
	ht_free(&rib_nh_by_id);
	ht_free(&rib_nh_by_key);
	ht_free(&rib_grp_by_key);
	pool_free(&nh_pool);
	pool_free(&group_pool);
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

/* ---- sizes --------------------------------------------------------------- */

/*
 * After a mass delete (a feed lost, a flood undone) fpmd gives back what
 * its tables held at their largest: the per-route objects' slabs go as
 * they empty (common/slab.h), the hash tables' bucket arrays shrink here
 * once the tables have shrunk by RIB_TRIM_ROUTES entries since their
 * largest (malloc maps arrays that size on their own, main.c, so freeing
 * one unmaps it).
 *
 * Then malloc_trim(), in a reaper thread, for what the rest of fpmd left
 * free in the heap (a flood of 200k routes leaves ~1 MiB of it: decode
 * and status lists). It holds the main arena's lock, which the loop's
 * own malloc and free take, for as long as it walks every free chunk:
 * when the routes themselves were malloc'd, a million free chunks after
 * a million routes went, the loop waited 20-100 ms in its next malloc
 * (bpftrace: a futex on main_arena), and trimming in steps was worse.
 * With the routes in slabs the walk is short.
 */
#define RIB_TRIM_ROUTES 10000
static size_t rib_high;

/* A table grew: remember its largest size (rib_trim). */
void note_size(void)
{
	size_t n = rib_routes.count + rib_other.count;

	if (n > rib_high)
		rib_high = n;
}

#ifdef __GLIBC__
/* One trim at a time; how long the last one held the heap (us). */
static bool trim_busy;
static uint64_t trim_us;

static void trim_heap(void *arg)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);

	(void)arg;
	malloc_trim(0);
	__atomic_store_n(&trim_us, (now_ns(CLOCK_MONOTONIC) - t0) / 1000,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&trim_busy, false, __ATOMIC_RELEASE);
}

/* Start the trim asked for (trim_wanted) unless one is under way. */
static bool trim_wanted;

static void heap_trim_poll(void)
{
	static uint64_t logged;
	uint64_t us = __atomic_load_n(&trim_us, __ATOMIC_RELAXED);

	if (us != logged && us >= 5000)
		log_debug("rib: the last heap trim held malloc for %llu ms",
			  (unsigned long long)us / 1000);
	logged = us;
	if (!trim_wanted || __atomic_load_n(&trim_busy, __ATOMIC_ACQUIRE))
		return;
	trim_wanted = false;
	__atomic_store_n(&trim_busy, true, __ATOMIC_RELAXED);
	/* In a thread: the walk is the thread's, only the lock is shared. */
	if (reaper_call(trim_heap, NULL))
		trim_heap(NULL);
}
#else
static bool trim_wanted;

static void heap_trim_poll(void)
{
	trim_wanted = false;
}
#endif

void rib_trim(void)
{
	static size_t last = SIZE_MAX;
	size_t n = rib_routes.count + rib_other.count, was = last;

	last = n;
	/* Once the table stops shrinking: each rehash and heap trim in the
	 * middle of a mass delete would hold the loop for nothing. */
	if (rib_high >= n + RIB_TRIM_ROUTES && n >= was) {
		log_debug("rib: %zu routes, %zu at most before: returning "
			  "freed memory to the system",
			  n, rib_high);
		ht_shrink(&rib_routes, 1024);
		ht_shrink(&rib_other, 64);
		maps_fib_trim();
		trim_wanted = true;
		rib_high = n;
	}
	heap_trim_poll();
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

/*
 * The route counts of rib_summary, kept as routes change: 'show
 * summary', the state tree and the bench poll them while a million
 * routes come and go, and a walk of the table costs ~0.1 s of the loop
 * at that size. Each route remembers what it added (route->counted).
 */
#define ROUTE_COUNTED 1u
#define ROUTE_COUNTED_V6 2u
#define ROUTE_COUNTED_PROGRAMMED 4u
#define ROUTE_COUNTED_PROTO 8u
static struct rib_counts route_counts;

static void count_share(uint8_t bits, uint8_t proto, int d)
{
	struct rib_counts *c = &route_counts;

	if (bits & ROUTE_COUNTED_V6)
		c->routes_v6 += (uint32_t)d;
	else
		c->routes_v4 += (uint32_t)d;
	if (bits & ROUTE_COUNTED_PROGRAMMED) {
		c->programmed += (uint32_t)d;
		if (bits & ROUTE_COUNTED_V6)
			c->programmed_v6 += (uint32_t)d;
	} else
		c->not_programmed += (uint32_t)d;
	if (bits & ROUTE_COUNTED_PROTO)
		c->by_protocol[proto] += (uint32_t)d;
}

void route_count(struct route *r, bool gone)
{
	uint8_t bits = ROUTE_COUNTED, proto = 0;

	if (r->counted & ROUTE_COUNTED)
		count_share(r->counted, r->counted_proto, -1);
	r->counted = 0;
	if (gone)
		return;
	if (r->p.family != AF_INET)
		bits |= ROUTE_COUNTED_V6;
	if (r->programmed)
		bits |= ROUTE_COUNTED_PROGRAMMED;
	/* By the protocol of the selected entry, else the first present. */
	for (int s = 0; s < SRC_MAX; s++)
		if (s == r->selected || (r->selected < 0 && r->e[s].present)) {
			bits |= ROUTE_COUNTED_PROTO;
			proto = r->e[s].proto;
			break;
		}
	count_share(bits, proto, 1);
	r->counted = bits;
	r->counted_proto = proto;
}

void rib_summary(struct rib_counts *c)
{
	*c = route_counts;
	c->nexthops = c->groups = 0;
	rib_nexthop_walk(count_nexthop, c);
	c->neighbors = (uint32_t)rib_neigh.count;
	c->other_table = (uint32_t)rib_other.count;
}
