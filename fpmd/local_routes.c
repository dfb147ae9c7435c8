// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The router's own addresses: the kernel's local table mirrored as "pass"
 * routes (source kernel-local), and its IPv4 addresses in local_v4.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/iface.h"
#include "kernel/nl.h"
#include "rib/rib.h"

struct local_set {
	struct prefix *p;
	size_t n, cap;
};

static void set_push(struct local_set *s, const struct prefix *p)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct prefix *np = realloc(s->p, cap * sizeof(*np));

		if (!np)
			return;
		s->p = np;
		s->cap = cap;
	}
	s->p[s->n] = *p;
	prefix_mask(&s->p[s->n]);
	s->n++;
}

/* The local table: every route (own addresses, broadcasts, anycast) and,
 * apart, the IPv4 addresses themselves (martian sources for the kernel). */
struct local_dump {
	struct local_set routes, addrs;
};

static void local_route_cb(const struct nl_route *r, void *arg)
{
	struct local_dump *d = arg;

	if (r->type != RTN_LOCAL && r->type != RTN_BROADCAST &&
	    r->type != RTN_ANYCAST)
		return;
	set_push(&d->routes, &r->p);
	/* Addresses bring local routes of protocol kernel; anything else was
	 * added by hand (AnyIP, ...). */
	if (r->type == RTN_LOCAL && r->p.family == AF_INET &&
	    r->protocol != RTPROT_KERNEL)
		iface_set_source_check();
	if (r->type == RTN_LOCAL && r->p.family == AF_INET && r->p.len == 32)
		set_push(&d->addrs, &r->p);
}

static int cmp_prefix(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct prefix));
}

static bool set_has(const struct local_set *s, const struct prefix *p)
{
	return s->n && bsearch(p, s->p, s->n, sizeof(*s->p), cmp_prefix);
}

/* An empty set has no array: qsort's base is nonnull even for none. */
static void set_sort(struct local_set *s)
{
	if (s->n)
		qsort(s->p, s->n, sizeof(*s->p), cmp_prefix);
}

static struct local_dump local_prev;

/* After adoption: what the maps hold is the last dump. */
void local_routes_seed(void)
{
	struct fpmd_local_v4_val v;
	struct hnode *n, *tmp;
	uint32_t k, *pk = NULL;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);

		if (r->e[SRC_KERNEL_LOCAL].present)
			set_push(&local_prev.routes, &r->p);
	}
	while (!bpf_map_get_next_key(mapfd.local_v4, pk, &k)) {
		struct prefix p = { .family = AF_INET, .len = 32 };

		pk = &k;
		if (bpf_map_lookup_elem(mapfd.local_v4, &k, &v))
			continue;
		memcpy(p.addr, &k, 4);
		set_push(&local_prev.addrs, &p);
	}
	set_sort(&local_prev.routes);
	set_sort(&local_prev.addrs);
}

/*
 * Mirror the kernel's local table (own addresses, subnet broadcasts) as
 * "pass" routes: a packet for the router must never be forwarded, even
 * when a covering route would match. Diffed against the last dump, so the
 * route table is not walked and unchanged entries are not rewritten.
 */
static void refresh(bool v4)
{
	struct local_dump d = { 0 };
	const char *err;
	size_t i;

	/* IPv6 only: the IPv4 part stays as the last full read said. */
	for (i = 0; !v4 && i < local_prev.routes.n; i++)
		if (local_prev.routes.p[i].family == AF_INET)
			set_push(&d.routes, &local_prev.routes.p[i]);
	for (i = 0; !v4 && i < local_prev.addrs.n; i++)
		set_push(&d.addrs, &local_prev.addrs.p[i]);
	if ((v4 && nl_dump_routes(AF_INET, RT_TABLE_LOCAL, local_route_cb,
				  &d)) ||
	    nl_dump_routes(AF_INET6, RT_TABLE_LOCAL, local_route_cb, &d)) {
		log_warn("kernel: cannot read the local table: keeping the "
			 "previous local routes");
		free(d.routes.p);
		free(d.addrs.p);
		return;
	}
	set_sort(&d.routes);
	set_sort(&d.addrs);
	for (i = 0; i < local_prev.routes.n; i++)
		if (!set_has(&d.routes, &local_prev.routes.p[i]))
			rib_route_del(SRC_KERNEL_LOCAL, &local_prev.routes.p[i],
				      &err);
	for (i = 0; i < d.routes.n; i++) {
		struct rib_route_req rq = { .src = SRC_KERNEL_LOCAL,
					    .p = d.routes.p[i],
					    .type = RT_LOCAL };

		if (!set_has(&local_prev.routes, &d.routes.p[i]) &&
		    rib_route_add(&rq, &err))
			log_warn("kernel: local route not programmed: %s", err);
	}
	for (i = 0; i < local_prev.addrs.n; i++)
		if (!set_has(&d.addrs, &local_prev.addrs.p[i]))
			maps_local_v4_delete(local_prev.addrs.p[i].addr);
	for (i = 0; i < d.addrs.n; i++)
		if (!set_has(&local_prev.addrs, &d.addrs.p[i]) &&
		    maps_local_v4_add(d.addrs.p[i].addr))
			log_warn("maps: local_v4 full: own address not listed; "
				 "packets from it may be forwarded");
	free(local_prev.routes.p);
	free(local_prev.addrs.p);
	local_prev = d;
}

void local_routes_refresh(void)
{
	refresh(true);
}

/*
 * The slow periodic re-read, for local routes that come well after their
 * address's event: IPv6 only (DAD). IPv4 adds the local routes with the
 * address, and until policy rules exist its local table shares the main
 * table's trie: a dump of it walks every route of main (~0.3 s of the
 * loop at 1M routes).
 */
void local_routes_refresh_v6(void)
{
	refresh(false);
}

void local_routes_free(void)
{
	free(local_prev.routes.p);
	free(local_prev.addrs.p);
}
