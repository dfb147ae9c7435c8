// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Route status: does the fast path take a route's packets now? Each
 * nexthop's and route entry's state, and the "route status changed"
 * hook: subscribers hear of every change, at once when a route is
 * written, else from a deferred scan run in slices.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "fib/maps.h"
#include "rib/rib_int.h"

/* Nonzero while a slice of the route status scan runs: nothing changes
 * meanwhile, so each nexthop's state is worked out once per scan. */
static uint32_t st_scan_gen;

static const char *nexthop_state_now(const struct nexthop *cnh);

/* Routes written into IPv4 table parts not yet published, and whether
 * the last commit failed (with what). */
static struct {
	struct route **r;
	uint32_t n, cap;
	bool failed;
	int err;
	bool oom_logged;
} unpub;

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
	if (nh->write_failed)
		return "nexthop-error";
	if (nh->is_group && !nh->nbuckets && group_member_full(nh))
		return "member-map-full";
	if (nh->is_group) {
		bool unresolved = false;

		if (!nh->nbuckets)
			return "no-live-member";
		/* Forwarding when a member forwards (XDP sends the flows that
		 * hash to it). Members all unresolved: XDP passes every packet
		 * (the kernel resolves them), so the group says so. Otherwise
		 * their egresses pass everything. */
		for (int k = 0; k < nh->nmembers; k++) {
			const char *ms = nexthop_state(nh->members[k].nh);

			if (!strcmp(ms, "forwarding"))
				return "forwarding";
			unresolved = unresolved || !strcmp(ms, "unresolved");
		}
		return unresolved ? "unresolved" : "egress-kernel";
	}
	if (!egress_info(nh->ifindex, mac, &mtu, &slot, &up))
		return "egress-kernel";
	if (!up)
		return "egress-down";
	/* Attached but kept out of tx_ports (a guard, netfilter): the
	 * program passes what would leave by it. */
	if (!egress_tx_port(nh->ifindex))
		return "egress-kernel";
	if (nh->has_gw && !nh->resolved)
		return "unresolved";
	return "forwarding";
}

const char *route_entry_state(const struct route *r, int src)
{
	const struct route_entry *e = &r->e[src];

	if (src != r->selected)
		return "not-selected";
	if (!r->programmed)
		return r->state == RS_MAP_FULL ? "map-full" : "error";
	if (r->unpub && unpub.failed && !maps_route_published(&r->p))
		return "unpublished";
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
/* Routes per slice of the scan: a few ms (a route's state and status
 * cost up to ~1 us at 1M routes), the loop stays responsive; and never
 * longer than STATUS_SLICE_NS (the subscribers' callbacks, cache misses
 * of a large table), the clock read every STATUS_CLOCK_EVERY routes. */
#define STATUS_SLICE 8000
#define STATUS_SLICE_NS 4000000ull
#define STATUS_CLOCK_EVERY 512

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
	if (st_ingress < 0)
		st_ingress = ingress_families();
	return st_ingress & (family == AF_INET ? 1 : 2);
}

/* The status of r's entry from src whose state is st. */
static const char *status_of(const struct route *r, const char *st,
			     bool *offloaded)
{
	*offloaded = false;
	if (strcmp(st, "forwarding") && strcmp(st, "blackhole"))
		return st;
	if (!ingress_takes(r->p.family))
		return "ingress-kernel";
	*offloaded = true;
	return st;
}

const char *rib_route_status(const struct route *r, int src, bool *offloaded)
{
	*offloaded = false;
	if (src < 0 || src >= SRC_MAX || !r->e[src].present)
		return "absent";
	return status_of(r, route_entry_state(r, src), offloaded);
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

/* ---- the state tally: routes by family, source, protocol and state ------ */

struct tally_row {
	uint8_t v6, proto;
	int8_t src;
	const char *state; /* a string constant */
	uint32_t n;
};

static struct {
	struct tally_row *row;
	uint16_t n, cap;
	bool oom_logged;
} tally;

static bool tally_is(const struct tally_row *t, bool v6, int src,
		     uint8_t proto, const char *state)
{
	return t->v6 == v6 && t->src == src && t->proto == proto &&
	       (t->state == state || !strcmp(t->state, state));
}

/* r's share moves to the row of (its family, src, proto, state). */
static void tally_set(struct route *r, int src, uint8_t proto,
		      const char *state)
{
	bool v6 = r->p.family == AF_INET6;
	uint16_t k;

	if (r->tally_row &&
	    tally_is(&tally.row[r->tally_row - 1], v6, src, proto, state))
		return;
	if (r->tally_row)
		tally.row[r->tally_row - 1].n--;
	r->tally_row = 0;
	for (k = 0; k < tally.n; k++)
		if (tally_is(&tally.row[k], v6, src, proto, state))
			break;
	if (k == tally.n) {
		if (tally.n == tally.cap) {
			uint16_t cap = tally.cap ? 2 * tally.cap : 64;
			struct tally_row *v;

			v = tally.cap < UINT16_MAX / 2
				? realloc(tally.row, cap * sizeof(*v))
				: NULL;
			if (!v) {
				if (!tally.oom_logged)
					log_err("rib: out of memory: the "
						"routes-by-state tally misses "
						"routes");
				tally.oom_logged = true;
				return;
			}
			tally.row = v;
			tally.cap = cap;
		}
		tally.row[k] = (struct tally_row){ .v6 = v6, .proto = proto,
						   .src = (int8_t)src,
						   .state = state };
		tally.n++;
	}
	tally.row[k].n++;
	r->tally_row = (uint16_t)(k + 1);
}

void status_gone(struct route *r)
{
	if (r->tally_row)
		tally.row[r->tally_row - 1].n--;
	r->tally_row = 0;
}

void rib_route_tally(void (*fn)(int family, const char *source,
				const char *protocol, const char *state,
				uint32_t n, void *arg),
		     void *arg)
{
	for (uint16_t k = 0; k < tally.n; k++) {
		const struct tally_row *t = &tally.row[k];

		if (!t->n)
			continue;
		fn(t->v6 ? AF_INET6 : AF_INET, rib_source_name(t->src),
		   t->src < 0 ? "none" : rib_protocol_name(t->proto),
		   t->state, t->n, arg);
	}
}

/* The route's state into the tally; tell the subscribers if its status
 * is not what they heard last. */
void status_check(struct route *r)
{
	int sel = r->selected;
	const char *est = sel >= 0 ? route_entry_state(r, sel)
				   : "not-selected";
	bool off;
	const char *st;

	tally_set(r, sel, sel >= 0 ? r->e[sel].proto : 0, est);
	if (!st_nsubs)
		return;
	/* The selected entry is present. */
	st = sel >= 0 ? status_of(r, est, &off) : "absent";
	if (st == r->st_state && sel == r->st_sel)
		return;
	r->st_state = st;
	r->st_sel = (int8_t)sel;
	for (int k = 0; k < st_nsubs; k++)
		st_subs[k].fn(r, st_subs[k].arg);
}

bool rib_status_run(void)
{
	struct slice sl;
	size_t n = 0;

	/* Without subscribers too: the state tally follows the scan. */
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
	sl = slice_start(STATUS_SLICE_NS, STATUS_CLOCK_EVERY);
	while (st_scan.bucket < st_scan.nbuckets && n < STATUS_SLICE) {
		struct hnode *hn = rib_routes.b[st_scan.bucket++];

		for (; hn; hn = hn->next, n++)
			status_check(container_of(hn, struct route, node));
		if (slice_over(&sl, n))
			break;
	}
	st_scan_gen = 0;
	if (st_scan.bucket >= st_scan.nbuckets)
		st_scan.running = false;
	return st_scan.running || st_scan.dirty;
}

/* ---- routes the fast path does not see yet -------------------------------- */

void status_written(struct route *r)
{
	if (r->unpub || maps_route_published(&r->p))
		return;
	if (unpub.n == unpub.cap) {
		uint32_t cap = unpub.cap ? unpub.cap * 2 : 1024;
		struct route **v = realloc(unpub.r, cap * sizeof(*v));

		if (!v) {
			/* Its state may then claim the fast path before the
			 * commit; the commit itself is not affected. */
			if (!unpub.oom_logged)
				log_err("rib: out of memory: routes waiting for "
					"a commit are not all tracked");
			unpub.oom_logged = true;
			return;
		}
		unpub.r = v;
		unpub.cap = cap;
	}
	unpub.r[unpub.n++] = r;
	r->unpub = unpub.n;
}

void status_forget(struct route *r)
{
	uint32_t k = r->unpub;
	struct route *last;

	if (!k)
		return;
	last = unpub.r[--unpub.n];
	unpub.r[k - 1] = last;
	last->unpub = k;
	r->unpub = 0;
}

uint32_t rib_published(int err)
{
	bool was = unpub.failed;

	if (err) {
		unpub.err = err;
		if (!was) {
			/* From now on their state says so: tell. */
			unpub.failed = true;
			for (uint32_t k = 0; k < unpub.n; k++)
				status_check(unpub.r[k]);
		}
		return unpub.n;
	}
	unpub.failed = false;
	unpub.err = 0;
	for (uint32_t k = 0; k < unpub.n; k++) {
		struct route *r = unpub.r[k];

		r->unpub = 0;
		if (was)
			status_check(r);
	}
	unpub.n = 0;
	return 0;
}

int rib_publish_error(void)
{
	return unpub.failed ? unpub.err : 0;
}

uint32_t rib_routes_unpublished(void)
{
	return unpub.failed ? unpub.n : 0;
}

void status_free(void)
{
	free(unpub.r);
	memset(&unpub, 0, sizeof(unpub));
	free(tally.row);
	memset(&tally, 0, sizeof(tally));
}
