// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * 'show routes' over the control socket: every source's entry of every
 * prefix, and the routes of other tables, in a stable order, streamed
 * in chunks as the client reads.
 */
#include <errno.h>
#include <net/if.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctl_req.h"
#include "fib/reaper.h"
#include "rib/rib.h"
#include "common/util.h"

/* 'show routes' is streamed: a sorted snapshot of the keys, turned into
 * Responses of CTL_CHUNK routes as the client reads (never the whole table
 * built at once: 1M routes would be ~300 MiB of protobuf). */
#define CTL_CHUNK 1024

struct route_key {
	struct prefix p;
	uint32_t table; /* other-table routes only */
	uint8_t src;
	bool other;
};

static Fpmd__Route *show_other(struct arena *a, const struct other_route *r)
{
	Fpmd__Route *o = arena_alloc(a, sizeof(*o));
	Fpmd__Prefix *p = pb_prefix(a, &r->p);

	if (!o || !p)
		return NULL;
	fpmd__route__init(o);
	o->prefix = p;
	o->type = FPMD__ROUTE_TYPE__RT_UNICAST;
	o->source = pb_source(r->src);
	o->state = "other-table";
	o->table = r->table;
	o->protocol = (char *)rib_protocol_name(r->proto);
	return o;
}

static Fpmd__Route *show_route(struct arena *a, const struct route *r, int src)
{
	static const int types[] = {
		[RT_UNICAST] = FPMD__ROUTE_TYPE__RT_UNICAST,
		[RT_BLACKHOLE] = FPMD__ROUTE_TYPE__RT_BLACKHOLE,
		[RT_UNREACHABLE] = FPMD__ROUTE_TYPE__RT_UNREACHABLE,
		[RT_PROHIBIT] = FPMD__ROUTE_TYPE__RT_PROHIBIT,
		[RT_LOCAL] = FPMD__ROUTE_TYPE__RT_LOCAL,
		[RT_KERNEL] = FPMD__ROUTE_TYPE__RT_UNICAST,
	};
	const struct route_entry *e = &r->e[src];
	Fpmd__Route *o = arena_alloc(a, sizeof(*o));
	Fpmd__Prefix *p = pb_prefix(a, &r->p);
	char ifn[IF_NAMESIZE];

	if (!o || !p)
		return NULL;
	fpmd__route__init(o);
	o->prefix = p;
	o->type = types[e->type];
	o->source = pb_source(src);
	o->selected = src == r->selected;
	o->programmed = o->selected && r->programmed;
	o->state = arena_str(a, route_entry_state(r, src));
	o->table = 254;
	o->protocol = (char *)rib_entry_protocol(r, src);
	if (e->type == RT_KERNEL && e->kreason == KR_NHID_UNKNOWN)
		o->nhid = e->pending_nhid;
	if (e->type == RT_UNICAST && e->nh) {
		/* Content from the slot the id forwards by. */
		struct nexthop *sl = rib_nexthop_slot(e->nh);

		o->nhid = e->nh->id;
		o->index = sl->index == NO_INDEX ? 0 : sl->index;
		o->is_group = e->nh->is_group;
		if (!e->nh->is_group && !e->nh->blackhole && !e->nh->unsupported) {
			if (sl->has_gw)
				o->gateway = pb_bytes(a, sl->gw,
						   (size_t)addr_len(sl->family));
			o->ifname = arena_str(a, ctl_ifname(sl->ifindex, ifn));
		}
	}
	return o;
}

/* The order 'show routes' prints: family, address, length, source. */
static int cmp_key(const void *a, const void *b)
{
	const struct route_key *x = a, *y = b;
	int c;

	if (x->p.family != y->p.family)
		return x->p.family == AF_INET ? -1 : 1;
	c = memcmp(x->p.addr, y->p.addr, (size_t)addr_len(x->p.family));
	if (c)
		return c;
	if (x->p.len != y->p.len)
		return x->p.len < y->p.len ? -1 : 1;
	if (pb_source(x->src) != pb_source(y->src))
		return pb_source(x->src) - pb_source(y->src);
	if (x->other != y->other)
		return x->other ? 1 : -1;
	return x->table < y->table ? -1 : x->table > y->table;
}

/*
 * A table larger than ROUTES_INLINE is not snapshotted in one go (1M
 * routes: ~0.1 s of walking and ~0.3 s of sorting, with nothing else
 * served): the loop takes BUILD_SLICE routes per iteration
 * (ctl_routes_build), then a reaper thread sorts the keys while the loop
 * goes on. A table that grows or shrinks meanwhile (its buckets move)
 * is walked again from the start of that table.
 */
#define ROUTES_INLINE 20000
#define BUILD_SLICE 10000
/* And at most this long a turn (a large table's buckets miss the
 * caches), the clock read every BUILD_CLOCK_EVERY routes. */
#define BUILD_SLICE_NS 4000000ull
#define BUILD_CLOCK_EVERY 512

struct route_build {
	struct route_key *keys;
	size_t n, cap;
	int table; /* 0: rib_routes, 1: rib_other, 2: done */
	size_t bucket, nbuckets, table_start;
	bool sorting;
	/* The stream and the sorting thread: the last to let go frees. */
	atomic_int refs;
	atomic_bool sorted;
};

static bool key_add(struct route_build *b, struct route_key k)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		struct route_key *v = realloc(b->keys, cap * sizeof(*v));

		if (!v)
			return false;
		b->keys = v;
		b->cap = cap;
	}
	b->keys[b->n++] = k;
	return true;
}

/* The keys of one bucket chain of rib_routes (table 0) or rib_other;
 * the number of routes in it, or -1 (out of memory). */
static long keys_of(struct route_build *b, struct hnode *n,
		    const struct prefix *want)
{
	long seen = 0;

	for (; n; n = n->next, seen++) {
		if (b->table == 0) {
			struct route *r = container_of(n, struct route, node);

			if (want && memcmp(&r->p, want, sizeof(*want)))
				continue;
			for (int src = 0; src < SRC_MAX; src++)
				if (r->e[src].present &&
				    !key_add(b, (struct route_key){
						    .p = r->p,
						    .src = (uint8_t)src }))
					return -1;
		} else {
			struct other_route *o =
			    container_of(n, struct other_route, node);

			if (want && memcmp(&o->p, want, sizeof(*want)))
				continue;
			if (!key_add(b, (struct route_key){ .p = o->p,
							    .table = o->table,
							    .src = o->src,
							    .other = true }))
				return -1;
		}
	}
	return seen;
}

/* Up to max routes' keys (SIZE_MAX: all); 1 when every table is done. */
static int collect(struct route_build *b, size_t max,
		   const struct prefix *want)
{
	/* Sliced (max is not SIZE_MAX): by the clock too. */
	bool sliced = max != SIZE_MAX;
	struct slice sl = slice_start(BUILD_SLICE_NS, BUILD_CLOCK_EVERY);
	size_t seen = 0;

	while (b->table < 2) {
		const struct htable *t = b->table ? &rib_other : &rib_routes;

		if (b->nbuckets != t->nbuckets) {
			/* New, or rehashed since the last slice. */
			b->n = b->table_start;
			b->bucket = 0;
			b->nbuckets = t->nbuckets;
		}
		while (b->bucket < b->nbuckets && seen < max) {
			long k = keys_of(b, t->b[b->bucket++], want);

			if (k < 0)
				return -ENOMEM;
			seen += (size_t)k;
			if (sliced && slice_over(&sl, seen))
				max = seen; /* this turn is over */
		}
		if (b->bucket < b->nbuckets)
			return 0;
		b->table++;
		b->table_start = b->n;
		b->nbuckets = 0;
	}
	return 1;
}

static void build_put(struct route_build *b)
{
	if (atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b->keys);
		free(b);
	}
}

static void sort_keys(void *arg)
{
	struct route_build *b = arg;

	if (b->n)
		qsort(b->keys, b->n, sizeof(*b->keys), cmp_key);
	atomic_store(&b->sorted, true);
	build_put(b);
}

/* Snapshot the keys of what 'show routes' shows; the routes themselves
 * are read chunk by chunk (ctl_routes_next) and may change meanwhile. */
int ctl_routes_start(struct route_stream *st, const Fpmd__ShowRequest *s,
		     const char **err)
{
	struct route_build *b;
	struct prefix want;

	ctl_routes_end(st);
	if (s->prefix && s->prefix->addr.len) {
		const struct route *r;
		struct route_build one = { 0 };
		int ret = 0;

		if (pb_get_prefix(s->prefix, &want, err))
			return -EINVAL;
		prefix_mask(&want);
		/* One prefix: its route by hash, the other tables' walked
		 * (held for show only; a few at most). */
		r = rib_route_find(&want);
		for (int src = 0; r && src < SRC_MAX && !ret; src++)
			if (r->e[src].present &&
			    !key_add(&one, (struct route_key){
					   .p = r->p, .src = (uint8_t)src }))
				ret = -ENOMEM;
		one.table = 1;
		one.table_start = one.n;
		if (!ret && collect(&one, SIZE_MAX, &want) < 0)
			ret = -ENOMEM;
		if (ret || !one.n) {
			free(one.keys);
			if (!ret)
				*err = "no such route";
			return ret ? ret : -ENOENT;
		}
		qsort(one.keys, one.n, sizeof(*one.keys), cmp_key);
		st->keys = one.keys;
		st->nkeys = one.n;
		st->next = 0;
		return 0;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	atomic_init(&b->refs, 1);
	atomic_init(&b->sorted, false);
	st->build = b;
	/* Room for a key a route from the start: no copy of a large array
	 * while it grows (the pages come as they are filled). */
	b->cap = rib_routes.count + rib_other.count + 1024;
	b->keys = malloc(b->cap * sizeof(*b->keys));
	if (!b->keys)
		b->cap = 0;
	if (rib_routes.count + rib_other.count > ROUTES_INLINE)
		return 0; /* ctl_routes_build, from the loop */
	return ctl_routes_build(st) < 0 ? (ctl_routes_end(st), -ENOMEM) : 0;
}

int ctl_routes_build(struct route_stream *st)
{
	struct route_build *b = st->build;
	bool small = rib_routes.count + rib_other.count <= ROUTES_INLINE;
	int ret;

	if (!b)
		return 1;
	if (!b->sorting) {
		ret = collect(b, small ? SIZE_MAX : BUILD_SLICE, NULL);
		if (ret <= 0)
			return ret;
		b->sorting = true;
		atomic_fetch_add(&b->refs, 1);
		if (small || reaper_call(sort_keys, b))
			sort_keys(b);
	}
	if (!atomic_load(&b->sorted))
		return -EINPROGRESS;
	/* Nothing to show is one empty chunk, as a stream. */
	if (!b->keys && !(b->keys = malloc(sizeof(*b->keys))))
		return -ENOMEM;
	st->keys = b->keys;
	st->nkeys = b->n;
	st->next = 0;
	b->keys = NULL;
	st->build = NULL;
	build_put(b);
	return 1;
}

/* The next chunk of a streamed 'show routes'; routes removed since the
 * snapshot are skipped. more says whether another chunk follows. */
int ctl_routes_next(struct route_stream *st, struct arena *a,
		    Fpmd__Response *rsp)
{
	size_t k = 0;

	rsp->routes = arena_alloc(a, CTL_CHUNK * sizeof(*rsp->routes));
	if (!rsp->routes)
		return -ENOMEM;
	for (; st->next < st->nkeys && k < CTL_CHUNK; st->next++) {
		const struct route_key *key = &st->keys[st->next];
		const struct other_route *ot = NULL;
		const struct route *r = NULL;
		Fpmd__Route *o;

		if (key->other)
			ot = rib_other_find(key->src, &key->p, key->table);
		else
			r = rib_route_find(&key->p);
		if (r && !r->e[key->src].present)
			r = NULL;
		if (!r && !ot)
			continue;
		o = ot ? show_other(a, ot) : show_route(a, r, key->src);
		if (!o)
			return -ENOMEM;
		rsp->routes[k++] = o;
	}
	rsp->n_routes = k;
	rsp->more = st->next < st->nkeys;
	return 0;
}

void ctl_routes_end(struct route_stream *s)
{
	free(s->keys);
	s->keys = NULL;
	s->nkeys = s->next = 0;
	/* A sort under way frees its keys when it ends. */
	if (s->build)
		build_put(s->build);
	s->build = NULL;
}
