// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket's shows (all but 'show routes', ctl_routes.c):
 * nexthops, neighbors, interfaces, counters, guards, the feeds, the
 * summary, and the state and configuration as YANG documents.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctl_req.h"
#include "api/state.h"
#include "conf/conf.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fib/maps.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/tc_path.h"
#include "rib/rib.h"
#include "common/loopstat.h"
#include "common/phase.h"
#include "common/util.h"

static int cmp_nh(const void *a, const void *b)
{
	const Fpmd__Nexthop *x = *(Fpmd__Nexthop *const *)a,
			    *y = *(Fpmd__Nexthop *const *)b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int show_nexthops(struct ctl_req *r)
{
	struct arena *a = r->a;
	Fpmd__Response *rsp = r->rsp;
	size_t cap = rib_nh_by_id.count + rib_nh_by_key.count +
		     rib_grp_by_key.count + 1, k = 0, i;
	struct hnode *n, *tmp;

	rsp->nexthops = arena_alloc(a, cap * sizeof(*rsp->nexthops));
	if (!rsp->nexthops)
		return -ENOMEM;
	/* Explicit groups, blackhole and unsupported nexthops (only in
	 * by_id), implicit groups, and every forwarding single (by_key). */
	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if ((nh->is_group || !nh->keyed) && k < cap)
			rsp->nexthops[k++] = pb_nexthop(a, nh);
	}
	ht_for_each(&rib_grp_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (k < cap)
			rsp->nexthops[k++] = pb_nexthop(a, nh);
	}
	ht_for_each(&rib_nh_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (k < cap)
			rsp->nexthops[k++] = pb_nexthop(a, nh);
	}
	qsort(rsp->nexthops, k, sizeof(*rsp->nexthops), cmp_nh);
	rsp->n_nexthops = k;
	return 0;
}

static int cmp_neigh(const void *a, const void *b)
{
	const Fpmd__Neighbor *x = *(Fpmd__Neighbor *const *)a,
			     *y = *(Fpmd__Neighbor *const *)b;

	if (x->addr.len != y->addr.len)
		return x->addr.len < y->addr.len ? -1 : 1;
	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return memcmp(x->addr.data, y->addr.data, x->addr.len);
}

static int show_neighbors(struct ctl_req *r)
{
	struct arena *a = r->a;
	Fpmd__Response *rsp = r->rsp;
	size_t k = 0, i;
	struct hnode *n, *tmp;
	char ifn[IF_NAMESIZE];

	rsp->neighbors =
		arena_alloc(a, (rib_neigh.count + 1) * sizeof(*rsp->neighbors));
	if (!rsp->neighbors)
		return -ENOMEM;
	ht_for_each(&rib_neigh, n, tmp, i)
	{
		struct neighbor *ne = container_of(n, struct neighbor, node);
		Fpmd__Neighbor *o = arena_alloc(a, sizeof(*o));

		if (!o)
			return -ENOMEM;
		fpmd__neighbor__init(o);
		o->addr = pb_bytes(a, ne->addr, (size_t)addr_len(ne->family));
		o->mac = pb_bytes(a, ne->mac, 6);
		o->ifindex = ne->ifindex;
		o->ifname = arena_str(a, ctl_ifname(ne->ifindex, ifn));
		o->source = ne->is_static ? FPMD__SOURCE__SRC_STATIC :
					    FPMD__SOURCE__SRC_KERNEL;
		rsp->neighbors[k++] = o;
	}
	qsort(rsp->neighbors, k, sizeof(*rsp->neighbors), cmp_neigh);
	rsp->n_neighbors = k;
	return 0;
}

/* The flags `fpmctl show interfaces` lists, in its order. */
static const struct {
	uint32_t bit; /* FPMD_IF_F_*; 0: the interface is suspended */
	const char *name;
} if_flags[] = {
	{ FPMD_IF_F_ENABLED, "enabled" },
	{ 0, "suspended" },
	{ FPMD_IF_F_FWD_V4, "forwarding-ipv4" },
	{ FPMD_IF_F_FWD_V6, "forwarding-ipv6" },
	{ FPMD_IF_F_RPF_STRICT, "rp-filter-strict" },
	{ FPMD_IF_F_RPF_LOOSE, "rp-filter-loose" },
	{ FPMD_IF_F_KERNEL_V4, "kernel-path-ipv4" },
	{ FPMD_IF_F_KERNEL_V6, "kernel-path-ipv6" },
	{ FPMD_IF_F_REDIRECTS_V4, "send-redirects-ipv4" },
	{ FPMD_IF_F_SRC_CHECK, "source-check" },
	{ FPMD_IF_F_PEER, "peer-egress" },
	{ FPMD_IF_F_TC, "tc" },
	{ FPMD_IF_F_TC_ONLY, "tc-only" },
	{ FPMD_IF_F_XMIT_SG, "xmit-sg" },
};

static void add_flag(struct arena *a, Fpmd__Interface *o, const char *f)
{
	o->flags[o->n_flags++] = arena_str(a, f);
}

static uint64_t tx_count(uint32_t slot, uint32_t reason)
{
	struct fpmd_stat st;

	return maps_stat_read(slot, reason, &st) ? 0 : st.packets;
}

static int show_interfaces(struct ctl_req *r)
{
	struct arena *a = r->a;
	Fpmd__Response *rsp = r->rsp;
	size_t k = 0;

	rsp->interfaces =
		arena_alloc(a, FPMD_MAX_IFACES * sizeof(*rsp->interfaces));
	if (!rsp->interfaces)
		return -ENOMEM;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];
		Fpmd__Interface *o;
		uint32_t f;

		if (!i->used)
			continue;
		o = arena_alloc(a, sizeof(*o));
		if (!o)
			return -ENOMEM;
		fpmd__interface__init(o);
		f = iface_map_flags(i);
		o->name = arena_str(a, i->name);
		o->ifindex = i->ifindex;
		o->slot = i->slot;
		o->mac = pb_bytes(a, i->mac, 6);
		o->mtu = i->mtu;
		o->xdp_mode = arena_str(a, !i->attached ? "none" :
					   i->mode == XDP_MODE_NATIVE ? "native" :
									"generic");
		o->oper_up = i->up;
		o->tx_port = iface_is_tx_port(i);
		o->tx_reason = arena_str(a, iface_tx_reason(i));
		o->xdp_state = arena_str(a, iface_xdp_state(i));
		o->xdp_reason = arena_str(a, iface_xdp_reason(i));
		o->tx = tx_count(i->slot, FPMD_R_TX);
		o->tx_redirect_errors =
			tx_count(i->slot, FPMD_R_TX_REDIRECT_ERR);
		o->tx_xmit_drops = tx_count(i->slot, FPMD_R_TX_XMIT_DROP);
		o->path = arena_str(a, tc_iface_path(i));
		o->tc_attached = i->tc_attached;
		o->tc_reason = arena_str(a, i->tc_reason);
		o->peer_egress = i->peer_egress;
		o->flags = arena_alloc(a, sizeof(if_flags) / sizeof(if_flags[0]) *
					    sizeof(*o->flags));
		if (!o->flags)
			return -ENOMEM;
		for (size_t b = 0; b < sizeof(if_flags) / sizeof(if_flags[0]);
		     b++) {
			/* "suspended" is fpmd's state, not a map flag. */
			bool on = if_flags[b].bit ? f & if_flags[b].bit :
						    i->suspended;

			if (on)
				add_flag(a, o, if_flags[b].name);
		}
		rsp->interfaces[k++] = o;
	}
	rsp->n_interfaces = k;
	return 0;
}

static int show_counters(struct ctl_req *r)
{
	struct arena *a = r->a;
	Fpmd__Response *rsp = r->rsp;
	size_t k = 0;

	rsp->counters = arena_alloc(a, FPMD_MAX_STATS * sizeof(*rsp->counters));
	if (!rsp->counters)
		return -ENOMEM;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];

		if (!i->used)
			continue;
		for (uint32_t r = 0; r < FPMD_R_MAX; r++) {
			Fpmd__Counter *o = arena_alloc(a, sizeof(*o));
			struct fpmd_stat st;

			if (!o)
				return -ENOMEM;
			if (maps_stat_read(i->slot, r, &st))
				memset(&st, 0, sizeof(st));
			fpmd__counter__init(o);
			o->ifname = arena_str(a, i->name);
			o->slot = i->slot;
			o->reason = (char *)fpmd_reason_names[r];
			o->packets = st.packets;
			o->bytes = st.bytes;
			rsp->counters[k++] = o;
		}
	}
	rsp->n_counters = k;
	return 0;
}

static int show_guards(struct ctl_req *r)
{
	struct arena *a = r->a;
	Fpmd__Response *rsp = r->rsp;

	rsp->guards = arena_alloc(a, GUARD_MAX * sizeof(*rsp->guards));
	if (!rsp->guards)
		return -ENOMEM;
	for (int g = 0; g < GUARD_MAX; g++) {
		Fpmd__Guard *o = arena_alloc(a, sizeof(*o));

		if (!o)
			return -ENOMEM;
		fpmd__guard__init(o);
		o->name = (char *)guards[g].name;
		o->state = arena_str(a, guards[g].state[0] ? guards[g].state :
							     "unchecked");
		o->detail = arena_str(a, guards[g].detail);
		o->watch = (char *)guards[g].watch;
		o->events = guards[g].events;
		o->last_event_ns = guards[g].last_event_ns;
		o->last_applied_ns = guards[g].last_applied_ns;
		rsp->guards[rsp->n_guards++] = o;
	}
	return 0;
}

/* Both feeds (FPM, the plugin) answer in one shape. */
static Fpmd__FpmStatus *show_feed(struct arena *a, const struct feed_status *st,
				  enum rib_source src)
{
	Fpmd__FpmStatus *o = arena_alloc(a, sizeof(*o));

	if (!o)
		return NULL;
	fpmd__fpm_status__init(o);
	o->enabled = st->enabled;
	o->listen = arena_str(a, st->listen);
	o->connected = st->connected;
	o->peer = arena_str(a, st->peer);
	o->connections = st->connections;
	o->messages = st->messages;
	o->frames = st->frames;
	o->errors = st->errors;
	o->last_error = arena_str(a, st->last_error);
	o->replay_state = arena_str(a, st->replay_state);
	o->replay_refreshed = st->replay_refreshed;
	o->replay_swept = st->replay_swept;
	o->routes = rib_count(src);
	o->route_msgs = st->route_msgs;
	o->nexthop_msgs = st->nexthop_msgs;
	o->other_table = rib_stats.other_table;
	o->ignored = st->ignored;
	o->map_writes = rib_stats.route_writes;
	o->first_message_ns = st->first_message_ns;
	o->last_message_ns = st->last_message_ns;
	o->last_map_write_ns = st->last_map_write_ns;
	o->hold_remaining_ms = st->hold_remaining_ms;
	o->unknown_nhid = rib_pending_routes();
	o->refused = st->refused;
	o->status_sent = st->status_sent;
	o->status_dropped = st->status_dropped;
	return o;
}

static int show_fpm(struct ctl_req *r)
{
	struct feed_status st;

	fpm_get_status(&st);
	r->rsp->fpm = show_feed(r->a, &st, SRC_FPM);
	return r->rsp->fpm ? 0 : -ENOMEM;
}

static int show_plugin(struct ctl_req *r)
{
	struct feed_status st;

	plugin_get_status(&st);
	r->rsp->plugin = show_feed(r->a, &st, SRC_PLUGIN);
	return r->rsp->plugin ? 0 : -ENOMEM;
}

/* The event loop's iteration times and the chunked maps' chunks. */
static void summary_loop(Fpmd__Summary *o)
{
	struct maps_chunk_counts ch;
	const char *what;

	o->loop_iterations = loopstat.iterations;
	o->loop_iteration_max_us = loopstat.max_ns / 1000;
	o->loop_iteration_max_step =
		(char *)(loopstat.max_what ? loopstat.max_what : "");
	o->loop_iteration_recent_max_us = loopstat_recent_max(&what) / 1000;
	o->loop_iteration_recent_max_step = (char *)what;
	o->loop_iterations_slow = loopstat.slow;
	maps_chunk_counts(&ch);
	o->map_chunks = ch.live;
	o->map_chunks_dropping = ch.dropping;
	o->map_chunks_dropped = ch.dropped;
	o->map_chunk_bytes = ch.bytes;
	o->heap_in_use = mem_heap_in_use();
	o->resident = mem_resident();
}

static int show_summary(struct ctl_req *r)
{
	struct arena *a = r->a;
	Fpmd__Response *rsp = r->rsp;
	Fpmd__Summary *o = arena_alloc(a, sizeof(*o));
	struct rib_counts c;

	if (!o)
		return -ENOMEM;
	fpmd__summary__init(o);
	rib_summary(&c);
	o->routes_v4 = c.routes_v4;
	o->routes_v6 = c.routes_v6;
	o->programmed = c.programmed;
	o->not_programmed = c.not_programmed;
	o->nexthops = c.nexthops;
	o->groups = c.groups;
	o->neighbors = c.neighbors;
	o->other_table = c.other_table;
	o->route_map_full = rib_stats.route_map_full;
	o->nexthop_map_full = rib_stats.nh_map_full;
	o->group_map_full = rib_stats.group_map_full;
	o->map_errors = rib_stats.map_errors;
	o->neigh_use_sent = rib_stats.neigh_use_sent;
	o->neigh_use_failed = rib_stats.neigh_use_failed;
	o->routes_unpublished = rib_routes_unpublished();
	if (rib_publish_error())
		o->publish_error =
			arena_str(a, strerror(-rib_publish_error()));
	o->by_source = arena_alloc(a, SRC_MAX * sizeof(*o->by_source));
	if (!o->by_source)
		return -ENOMEM;
	for (int s = 0; s < SRC_MAX; s++)
		o->by_source[o->n_by_source++] = rib_count(s);
	for (int k = 0; k < RIB_PROTO_MAX; k++) {
		Fpmd__ProtocolCount *pc;

		if (!c.by_protocol[k])
			continue;
		if (!o->by_protocol) {
			o->by_protocol = arena_alloc(
				a, RIB_PROTO_MAX * sizeof(*o->by_protocol));
			if (!o->by_protocol)
				return -ENOMEM;
		}
		pc = arena_alloc(a, sizeof(*pc));
		if (!pc)
			return -ENOMEM;
		fpmd__protocol_count__init(pc);
		pc->name = (char *)rib_protocol_name((uint8_t)k);
		pc->count = c.by_protocol[k];
		o->by_protocol[o->n_by_protocol++] = pc;
	}
	o->max_routes_v4 = cfg.max_routes_v4;
	o->max_routes_v6 = cfg.max_routes_v6;
	o->max_nexthops = cfg.max_nexthops;
	o->max_groups = cfg.max_groups;
	summary_loop(o);
	rsp->summary = o;
	return 0;
}

/* SHOW_STATE, SHOW_CONFIG: a YANG document, as JSON. */
static int show_document(struct ctl_req *r)
{
	char *doc = r->q->show->what == FPMD__SHOW__SHOW_STATE
			? state_json()
			: config_print_running(&cfg);

	if (!doc) {
		r->err = "cannot build the YANG document";
		return -ENOMEM;
	}
	r->rsp->document = arena_str(r->a, doc);
	free(doc);
	return r->rsp->document ? 0 : -ENOMEM;
}

static int show_routes(struct ctl_req *r)
{
	return ctl_routes_start(r->stream, r->q->show, &r->err);
}

static const struct {
	Fpmd__Show what;
	ctl_handler *fn;
} shows[] = {
	{ FPMD__SHOW__SHOW_ROUTES, show_routes },
	{ FPMD__SHOW__SHOW_NEXTHOPS, show_nexthops },
	{ FPMD__SHOW__SHOW_NEIGHBORS, show_neighbors },
	{ FPMD__SHOW__SHOW_INTERFACES, show_interfaces },
	{ FPMD__SHOW__SHOW_COUNTERS, show_counters },
	{ FPMD__SHOW__SHOW_GUARDS, show_guards },
	{ FPMD__SHOW__SHOW_FPM, show_fpm },
	{ FPMD__SHOW__SHOW_SUMMARY, show_summary },
	{ FPMD__SHOW__SHOW_PLUGIN, show_plugin },
	{ FPMD__SHOW__SHOW_STATE, show_document },
	{ FPMD__SHOW__SHOW_CONFIG, show_document },
};

int ctl_show(struct ctl_req *r)
{
	for (size_t k = 0; k < sizeof(shows) / sizeof(shows[0]); k++)
		if (shows[k].what == r->q->show->what)
			return shows[k].fn(r);
	r->err = "unknown show request";
	return -EINVAL;
}
