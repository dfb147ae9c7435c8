// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Routes: one entry per source, the preferred present one programmed.
 * A route's map value names its nexthop or group slot, never a MAC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf/conf.h"
#include "common/log.h"
#include "fib/maps.h"
#include "rib/rib_int.h"

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

static uint32_t pending_routes;
uint32_t nroutes[SRC_MAX];
/*
 * Per source, how many of its entries carry its newest generation
 * (fresh_gen): when a replay refreshed every one, its sweep has nothing
 * to remove and walks no route (a full table's walk holds the loop
 * ~60-90 ms).
 */
static uint32_t fresh_gen[SRC_MAX], nfresh[SRC_MAX];

static void fresh_count(int src, uint32_t gen, int d)
{
	if (!gen)
		return;
	if (gen > fresh_gen[src]) {
		fresh_gen[src] = gen;
		nfresh[src] = 0;
	}
	if (gen == fresh_gen[src])
		nfresh[src] += (uint32_t)d;
}

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

/*
 * Write the preferred entry of r to the map, or remove it. A write that
 * would not change the map is skipped: a replay must not touch a route
 * that is already right. Frees r when no source has it any more.
 */
static bool route_program_map(struct route *r);

void route_program(struct route *r)
{
	if (!route_program_map(r))
		return;
	route_count(r, false);
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
		status_forget(r);
		status_gone(r);
		route_count(r, true);
		ht_remove(&rib_routes, &r->node);
		slab_free(&route_cache, r);
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
		status_written(r);
		return true;
	}
	status_forget(r);
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
		r = slab_alloc(&route_cache);
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
	if (was_present)
		fresh_count(rq->src, r->e[rq->src].gen, -1);
	fresh_count(rq->src, ne.gen, 1);
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
	fresh_count(src, r->e[src].gen, -1);
	old_nh = r->e[src].nh;
	memset(&r->e[src], 0, sizeof(r->e[src]));
	route_program(r);
	nh_put(old_nh);
	return 0;
}

/* Routes and groups using nh forward by another slot now: reprogram
 * them. A scan, but only when a feed changes what an id means in place
 * (rare: zebra gives new content a new id). */
void routes_follow(struct nexthop *nh)
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
void route_retry_pending(enum rib_source src, uint32_t id)
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

/*
 * A sweep walks the route table a slice at a time: removing a feed's
 * million routes when its hold runs out takes seconds, a full table's
 * walk alone ~60-90 ms. Per source a cursor over the buckets; a resize
 * in between starts the walk again (what went stays gone). Entries of
 * generation `before` or later came since and stay; the other tables
 * and the nexthops are swept once the routes are (in-use nexthops stay).
 */
#define SWEEP_SLICE_NS 4000000ull
#define SWEEP_CLOCK_EVERY 256

static struct sweep {
	bool on;
	uint32_t before, swept;
	size_t bucket, nbuckets;
	rib_sweep_done_fn done;
	void *arg;
} sweeps[SRC_MAX];

/* The routes of s's source, within slice sl; true when the walk is
 * over. */
static bool sweep_routes(enum rib_source src, struct slice *sl)
{
	struct sweep *s = &sweeps[src];
	size_t n = 0;

	sl->next = sl->every; /* n counts this source's routes */
	if (s->nbuckets != rib_routes.nbuckets) {
		s->bucket = 0;
		s->nbuckets = rib_routes.nbuckets;
	}
	while (s->bucket < s->nbuckets) {
		struct hnode *hn = rib_routes.b[s->bucket++], *next;

		for (; hn; hn = next, n++) {
			struct route *r = container_of(hn, struct route, node);
			const char *err;

			next = hn->next;
			if (r->e[src].present && r->e[src].gen < s->before &&
			    !rib_route_del(src, &r->p, &err))
				s->swept++;
		}
		if (slice_over(sl, n))
			return false;
	}
	return true;
}

/* The walk is over: the other tables, the nexthops, and say so. */
static void sweep_finish(enum rib_source src)
{
	struct sweep *s = &sweeps[src];
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&rib_other, n, tmp, i)
	{
		struct other_route *o = container_of(n, struct other_route,
						     node);

		/* Like the main table: what the replay refreshed stays. */
		if (o->src == src && o->gen < s->before) {
			ht_remove(&rib_other, &o->node);
			slab_free(&other_cache, o);
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
			    nh->gen < s->before && !nh->refcnt)
				rib_nexthop_del(src, nh->id, &err);
		}
	}
	s->on = false;
	if (s->done)
		s->done(s->arg, s->swept);
}

bool rib_sweep(enum rib_source src, uint32_t before, rib_sweep_done_fn done,
	       void *arg)
{
	struct sweep *s = &sweeps[src];
	struct slice sl;

	/* One under way gives way to this one: it removes as much. */
	if (s->on && s->before > before)
		before = s->before;
	*s = (struct sweep){ .on = true, .before = before, .done = done,
			     .arg = arg, .nbuckets = rib_routes.nbuckets };
	/* Every entry of src refreshed by generation before: no route to
	 * sweep. */
	if (before == fresh_gen[src] && nfresh[src] == nroutes[src]) {
		sweep_finish(src);
		return true;
	}
	sl = slice_start(SWEEP_SLICE_NS, SWEEP_CLOCK_EVERY);
	if (!sweep_routes(src, &sl))
		return false;
	sweep_finish(src);
	return true;
}

bool rib_sweep_run(void)
{
	struct slice sl = slice_start(SWEEP_SLICE_NS, SWEEP_CLOCK_EVERY);
	bool busy = false;

	for (int src = 0; src < SRC_MAX; src++) {
		if (!sweeps[src].on)
			continue;
		if (busy || !sweep_routes(src, &sl)) {
			busy = true;
			continue;
		}
		sweep_finish(src);
	}
	return busy;
}

uint32_t rib_count(enum rib_source src)
{
	return nroutes[src];
}
