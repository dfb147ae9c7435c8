// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * 'show routes' over the control socket: every source's entry of every
 * prefix, and the routes of other tables, in a stable order, streamed
 * in chunks as the client reads.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctl_req.h"
#include "rib/rib.h"
#include "common/util.h"

/* 'show routes' is streamed: a sorted snapshot of the keys, turned into
 * Responses of CTL_CHUNK routes as the client reads (never the whole table
 * built at once: 1M routes would be ~300 MiB of protobuf). */
#define CTL_CHUNK 2048

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

/* Snapshot the keys of what 'show routes' shows; the routes themselves
 * are read chunk by chunk (ctl_routes_next) and may change meanwhile. */
int ctl_routes_start(struct route_stream *st, const Fpmd__ShowRequest *s,
		     const char **err)
{
	size_t cap = rib_routes.count * SRC_MAX + rib_other.count + 1, k = 0, i;
	struct route_key *keys;
	struct hnode *n, *tmp;
	struct prefix want;
	bool filter = false;

	if (s->prefix && s->prefix->addr.len) {
		if (pb_get_prefix(s->prefix, &want, err))
			return -EINVAL;
		prefix_mask(&want);
		filter = true;
	}
	keys = malloc(cap * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);

		if (filter && memcmp(&r->p, &want, sizeof(want)))
			continue;
		for (int src = 0; src < SRC_MAX && k < cap; src++)
			if (r->e[src].present)
				keys[k++] =
				    (struct route_key){ .p = r->p,
							.src = (uint8_t)src };
	}
	ht_for_each(&rib_other, n, tmp, i)
	{
		struct other_route *o = container_of(n, struct other_route, node);

		if ((!filter || !memcmp(&o->p, &want, sizeof(want))) && k < cap)
			keys[k++] = (struct route_key){ .p = o->p,
							.table = o->table,
							.src = o->src,
							.other = true };
	}
	if (filter && !k) {
		free(keys);
		*err = "no such route";
		return -ENOENT;
	}
	qsort(keys, k, sizeof(*keys), cmp_key);
	free(st->keys);
	st->keys = keys;
	st->nkeys = k;
	st->next = 0;
	return 0;
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
}
