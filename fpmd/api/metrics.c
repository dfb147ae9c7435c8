// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus metrics: a table of families, each written from the same
 * tables and functions 'fpmctl show counters / summary / state' use, so
 * the two never disagree.
 *
 * libmicrohttpd runs in its external epoll mode: no thread of its own;
 * its epoll fd and a timer for its timeouts sit in fpmd's event loop, so
 * a scrape reads fpmd's live state on fpmd's one thread, with no locks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <microhttpd.h>

#include "config.h"

#include "conf/conf.h"
#include "feed/fpm.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "common/log.h"
#include "fib/maps.h"
#include "fib/xdp.h"
#include "api/metrics.h"
#include "feed/plugin.h"
#include "rib/rib.h"

/* A scraper or two, and room for a curl by hand: more wait in the
 * kernel's backlog. */
#define METRICS_MAX_CONN 16
/* Seconds an idle or stalled connection may hold a slot. */
#define METRICS_CONN_TIMEOUT 10

static struct MHD_Daemon *daemon_;
static int timer_fd = -1;
static double start_time;

/* ---- the text ------------------------------------------------------------ */

struct tables;
struct family;

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
	const char *family;	/* the family being written */
	const struct family *f; /* and its table entry */
	const struct tables *t; /* the walks of the big tables */
};

static void put(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if ((size_t)n < o->cap - o->len)
			break;
		{
			size_t cap = (o->cap + (size_t)n + 1) * 2;
			char *nb = realloc(o->buf, cap);

			if (!nb) {
				o->oom = true;
				return;
			}
			o->buf = nb;
			o->cap = cap;
		}
	}
	o->len += (size_t)n;
}

/* Label values: backslash, double quote and newline are escaped. */
static void put_label_value(struct out *o, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			put(o, "\\\\");
		else if (*v == '"')
			put(o, "\\\"");
		else if (*v == '\n')
			put(o, "\\n");
		else
			put(o, "%c", *v);
	}
}

/* One sample of the current family, its labels as two arrays. */
static void sample_a(struct out *o, uint64_t v, const char *const *keys,
		     const char *const *vals, int n)
{
	put(o, "%s", o->family);
	for (int k = 0; k < n; k++) {
		put(o, "%s%s=\"", k ? "," : "{", keys[k]);
		put_label_value(o, vals[k]);
		put(o, "\"");
	}
	put(o, "%s %llu\n", n ? "}" : "", (unsigned long long)v);
}

/* One sample of the current family: label pairs, NULL-ended. */
static void sample_v(struct out *o, const char *value, va_list ap)
{
	const char *k, *sep = "{";

	put(o, "%s", o->family);
	while ((k = va_arg(ap, const char *))) {
		put(o, "%s%s=\"", sep, k);
		put_label_value(o, va_arg(ap, const char *));
		put(o, "\"");
		sep = ",";
	}
	put(o, "%s %s\n", *sep == ',' ? "}" : "", value);
}

static void sample(struct out *o, uint64_t v, ...)
{
	char val[24];
	va_list ap;

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	va_start(ap, v);
	sample_v(o, val, ap);
	va_end(ap);
}

/* Seconds since the epoch from CLOCK_REALTIME ns (0: never). */
static void sample_time(struct out *o, uint64_t ns, ...)
{
	char val[32];
	va_list ap;

	snprintf(val, sizeof(val), "%llu.%03llu",
		 (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull / 1000000ull));
	va_start(ap, ns);
	sample_v(o, val, ap);
	va_end(ap);
}

/* ---- families ------------------------------------------------------------ */

static void info(struct out *o)
{
	char layout[16];

	snprintf(layout, sizeof(layout), "%d", FPMD_LAYOUT_VERSION);
	sample(o, 1, "version", PACKAGE_VERSION, "layout", layout, NULL);
}

static void start_time_f(struct out *o)
{
	char val[32];

	snprintf(val, sizeof(val), "%.3f", start_time);
	put(o, "%s %s\n", o->family, val);
}

static void adopted(struct out *o)
{
	sample(o, xdp_adopted, NULL);
}

static bool is_tx_reason(uint32_t r)
{
	return r == FPMD_R_TX || r == FPMD_R_TX_REDIRECT_ERR ||
	       r == FPMD_R_TX_XMIT_DROP;
}

static struct fpmd_stat stat_of(const struct iface *i, uint32_t r)
{
	struct fpmd_stat st;

	if (maps_stat_read(i->slot, r, &st))
		memset(&st, 0, sizeof(st));
	return st;
}

/* The managed interfaces, as 'show counters' and 'show interfaces'. */
static const struct iface *next_iface(const struct iface *i)
{
	for (i = i ? i + 1 : iface_tab; i < iface_tab + FPMD_MAX_IFACES; i++)
		if (i->used)
			return i;
	return NULL;
}

#define for_each_iface(i)                                                      \
	for (const struct iface *i = next_iface(NULL); i; i = next_iface(i))

/* Ingress: every packet moves exactly one reason on its interface. */
static void packets(struct out *o, bool bytes)
{
	for_each_iface(i)
	{
		for (uint32_t r = 0; r < FPMD_R_MAX; r++) {
			struct fpmd_stat st;

			if (is_tx_reason(r))
				continue;
			st = stat_of(i, r);
			sample(o, bytes ? st.bytes : st.packets, "interface",
			       i->name, "reason", fpmd_reason_names[r], NULL);
		}
	}
}

static void rx_packets(struct out *o)
{
	packets(o, false);
}

static void rx_bytes(struct out *o)
{
	packets(o, true);
}

static void tx_of(struct out *o, uint32_t r, bool bytes)
{
	for_each_iface(i)
	{
		struct fpmd_stat st = stat_of(i, r);

		sample(o, bytes ? st.bytes : st.packets, "interface", i->name,
		       NULL);
	}
}

static void tx_packets(struct out *o)
{
	tx_of(o, FPMD_R_TX, false);
}

static void tx_bytes(struct out *o)
{
	tx_of(o, FPMD_R_TX, true);
}

static void tx_redirect_errors(struct out *o)
{
	tx_of(o, FPMD_R_TX_REDIRECT_ERR, false);
}

static void tx_xmit_drops(struct out *o)
{
	tx_of(o, FPMD_R_TX_XMIT_DROP, false);
}

static const char *attached_mode(const struct iface *i)
{
	if (!i->attached)
		return "none";
	return i->mode == XDP_MODE_NATIVE ? "native" : "generic";
}

static void xdp_attached(struct out *o)
{
	for_each_iface(i)
	{
		sample(o, i->attached, "interface", i->name, "mode",
		       attached_mode(i), NULL);
	}
}

/* A state set: every known state, 1 for the current one (which is added
 * if it is not known, so a new state never goes unseen). */
static void state_set(struct out *o, const char *const *known, const char *cur,
		      const char *k1, const char *v1, const char *k2)
{
	bool seen = false;

	for (; *known; known++) {
		bool is = !strcmp(*known, cur);

		seen |= is;
		sample(o, is, k1, v1, k2, *known, NULL);
	}
	if (!seen)
		sample(o, 1, k1, v1, k2, cur, NULL);
}

static void xdp_state(struct out *o)
{
	static const char *const states[] = { "attached", "detached",
					      "detached-foreign", "absent",
					      NULL };

	for_each_iface(i)
	{
		state_set(o, states, iface_xdp_state(i), "interface", i->name,
			  "state");
	}
}

static void iface_up(struct out *o)
{
	for_each_iface(i)
	{
		sample(o, i->ifindex && i->up, "interface", i->name, NULL);
	}
}

static void iface_tx_port(struct out *o)
{
	for_each_iface(i)
	{
		sample(o, iface_is_tx_port(i), "interface", i->name, NULL);
	}
}

static void iface_suspended(struct out *o)
{
	for_each_iface(i)
	{
		sample(o, i->suspended, "interface", i->name, NULL);
	}
}

/*
 * Routes by label set. A new label (the route's protocol) is one more
 * entry here and its value in tables_walk().
 */
enum { RL_FAMILY, RL_SOURCE, RL_PROTOCOL, RL_STATE, RL_MAX };
static const char *const route_labels[RL_MAX] = { "family", "source",
						   "protocol", "state" };

struct route_row {
	const char *v[RL_MAX];
	uint64_t n;
};

/* One row per label set seen; a handful, whatever the table size. */
struct route_tally {
	struct route_row *row;
	int n, cap;
	bool oom;
};

/* Nexthops or groups per state, as rib_nexthop_walk visits them. */
struct nh_tally {
	const char *name[32];
	uint64_t n[32];
	int count;
	uint64_t in_map; /* with a map slot */
};

/*
 * What the families need from the route, nexthop and neighbor tables,
 * from one walk of each per scrape: at a full table a walk costs
 * milliseconds, and the event loop waits meanwhile.
 */
struct tables {
	struct route_tally routes;
	uint64_t programmed[2]; /* by family: ipv4, ipv6 */
	struct nh_tally nh[2];	/* nexthops, groups */
	uint64_t neigh[2][2];	/* [ipv6][static] */
};

static void route_tally_add(struct route_tally *t, const char *const *v)
{
	int k;

	for (k = 0; k < t->n; k++) {
		int l = 0;

		while (l < RL_MAX && !strcmp(t->row[k].v[l], v[l]))
			l++;
		if (l == RL_MAX)
			break;
	}
	if (k == t->n) {
		if (t->n == t->cap) {
			int cap = t->cap ? t->cap * 2 : 64;
			struct route_row *r =
			    realloc(t->row, (size_t)cap * sizeof(*r));

			if (!r) {
				t->oom = true;
				return;
			}
			t->row = r;
			t->cap = cap;
		}
		memcpy(t->row[k].v, v, sizeof(t->row[k].v));
		t->row[k].n = 0;
		t->n++;
	}
	t->row[k].n++;
}

static void nh_tally(const struct nexthop *nh, void *arg)
{
	struct nh_tally *t = &((struct tables *)arg)->nh[nh->is_group];
	const char *st;
	int k;

	if (rib_nexthop_slot((struct nexthop *)nh)->index != NO_INDEX &&
	    !nh->blackhole && !nh->unsupported)
		t->in_map++;
	st = nexthop_state(nh);
	for (k = 0; k < t->count && strcmp(t->name[k], st); k++)
		;
	if (k == t->count) {
		if (k == 32)
			return;
		t->name[t->count] = st;
		t->n[t->count++] = 0;
	}
	t->n[k]++;
}

static void tables_walk(struct tables *t)
{
	struct hnode *n, *tmp;
	size_t i;

	/* Each route once, by the source programmed and its state: their
	 * sum is 'show summary's routes. */
	ht_for_each(&rib_routes, n, tmp, i)
	{
		const struct route *r = container_of(n, struct route, node);
		const char *v[RL_MAX];

		v[RL_FAMILY] = r->p.family == AF_INET ? "ipv4" : "ipv6";
		v[RL_SOURCE] = rib_source_name(r->selected);
		v[RL_PROTOCOL] = r->selected < 0
				     ? "none"
				     : rib_entry_protocol(r, r->selected);
		v[RL_STATE] = r->selected < 0
				  ? "not-selected"
				  : route_entry_state(r, r->selected);
		route_tally_add(&t->routes, v);
		if (r->programmed)
			t->programmed[r->p.family == AF_INET6]++;
	}
	rib_nexthop_walk(nh_tally, t);
	ht_for_each(&rib_neigh, n, tmp, i)
	{
		const struct neighbor *ne =
		    container_of(n, struct neighbor, node);

		t->neigh[ne->family == AF_INET6][ne->is_static]++;
	}
}

static void routes(struct out *o)
{
	const struct route_tally *t = &o->t->routes;

	for (int k = 0; k < t->n; k++)
		sample_a(o, t->row[k].n, route_labels, t->row[k].v, RL_MAX);
}

static void route_entries(struct out *o)
{
	for (int s = 0; s < SRC_MAX; s++)
		sample(o, rib_count(s), "source", rib_source_name(s), NULL);
}

static void other_table(struct out *o)
{
	sample(o, rib_other.count, NULL);
}

static void nexthops_of(struct out *o, bool groups)
{
	const struct nh_tally *t = &o->t->nh[groups];

	for (int k = 0; k < t->count; k++)
		sample(o, t->n[k], "state", t->name[k], NULL);
}

static void nexthops(struct out *o)
{
	nexthops_of(o, false);
}

static void groups(struct out *o)
{
	nexthops_of(o, true);
}

static void neighbors(struct out *o)
{
	for (int f = 0; f < 2; f++)
		for (int s = 0; s < 2; s++)
			sample(o, o->t->neigh[f][s], "family",
			       f ? "ipv6" : "ipv4", "source",
			       s ? "static" : "kernel", NULL);
}

/* The maps whose fill fpmd limits (tables/max-*), by their pinned name. */
struct map_fill {
	const char *map;
	uint64_t entries, capacity;
};

static int map_fills(const struct tables *t, struct map_fill *m)
{
	m[0] = (struct map_fill){ "routes_v4", t->programmed[0],
				  cfg.max_routes_v4 };
	m[1] = (struct map_fill){ "routes_v6", t->programmed[1],
				  cfg.max_routes_v6 };
	m[2] =
	    (struct map_fill){ "nexthops", t->nh[0].in_map, cfg.max_nexthops };
	m[3] =
	    (struct map_fill){ "nh_groups", t->nh[1].in_map, cfg.max_groups };
	m[4] = (struct map_fill){ "neigh_v4", t->neigh[0][0] + t->neigh[0][1],
				  cfg.max_neigh };
	m[5] = (struct map_fill){ "neigh_v6", t->neigh[1][0] + t->neigh[1][1],
				  cfg.max_neigh };
	return 6;
}

static void map_entries(struct out *o)
{
	struct map_fill m[8];
	int n = map_fills(o->t, m);

	for (int k = 0; k < n; k++)
		sample(o, m[k].entries, "map", m[k].map, NULL);
}

static void map_capacity(struct out *o)
{
	struct map_fill m[8];
	int n = map_fills(o->t, m);

	for (int k = 0; k < n; k++)
		sample(o, m[k].capacity, "map", m[k].map, NULL);
}

static void map_full(struct out *o)
{
	sample(o, rib_stats.route_map_full, "map", "routes", NULL);
	sample(o, rib_stats.nh_map_full, "map", "nexthops", NULL);
	sample(o, rib_stats.group_map_full, "map", "nh_groups", NULL);
}

static void map_errors(struct out *o)
{
	sample(o, rib_stats.map_errors, NULL);
}

static void route_writes(struct out *o)
{
	sample(o, rib_stats.route_writes, NULL);
}

/* Both feeds, in the order and shape of 'show fpm' / 'show plugin'. */
static const struct feed {
	const char *name;
	void (*get)(struct feed_status *st);
	enum rib_source src;
} feeds[] = {
	{ "fpm", fpm_get_status, SRC_FPM },
	{ "plugin", plugin_get_status, SRC_PLUGIN },
};

/* Each feed, with st filled with its status before the body runs. */
#define for_each_feed(fd, st)                                                  \
	for (const struct feed *fd = feeds;                                    \
	     fd < feeds + sizeof(feeds) / sizeof(feeds[0]) &&                  \
	     (fd->get(&st), true);                                             \
	     fd++)

static uint64_t feed_field(const struct out *o, const struct feed_status *st);

/* A uint64_t of struct feed_status, named by the family (FEED_U64). */
static void feed_u64(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    sample(o, feed_field(o, &st), "feed", fd->name, NULL);
}

/* A CLOCK_REALTIME ns of struct feed_status (FEED_TIME), in seconds. */
static void feed_time(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    sample_time(o, feed_field(o, &st), "feed", fd->name, NULL);
}

static void feed_enabled(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st) sample(o, st.enabled, "feed", fd->name, NULL);
}

static void feed_connected(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st) sample(o, st.connected, "feed", fd->name, NULL);
}

static void feed_routes(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    sample(o, rib_count(fd->src), "feed", fd->name, NULL);
}

static void feed_replay_state(struct out *o)
{
	static const char *const states[] = { "none",	 "in-progress",
					      "settled", "complete",
					      "held",	 NULL };
	struct feed_status st;

	for_each_feed(fd, st)
	    state_set(o, states, st.replay_state, "feed", fd->name, "state");
}

static void feed_hold(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	{
		bool held = !strcmp(st.replay_state, "held");

		sample_time(o, held ? st.hold_remaining_ms * 1000000ull : 0,
			    "feed", fd->name, NULL);
	}
}

static void guard_state(struct out *o)
{
	static const char *const states[] = { "clear",	     "checked",
					      "kernel-path", "bypassed",
					      "refused",     "unchecked",
					      NULL };

	for (int g = 0; g < GUARD_MAX; g++)
		state_set(o, states,
			  guards[g].state[0] ? guards[g].state : "unchecked",
			  "guard", guards[g].name, "state");
}

static void guard_events(struct out *o)
{
	for (int g = 0; g < GUARD_MAX; g++)
		sample(o, guards[g].events, "guard", guards[g].name, NULL);
}

#define FEED_U64(field)                                                        \
	.write = feed_u64, .feed_off = offsetof(struct feed_status, field)
#define FEED_TIME(field)                                                       \
	.write = feed_time, .feed_off = offsetof(struct feed_status, field)

static const struct family {
	const char *name, *type, *help;
	void (*write)(struct out *o);
	size_t feed_off; /* feed_u64, feed_time: the field of feed_status */
} families[] = {
	{ "fpmd_info", "gauge", "fpmd's version and BPF map layout (always 1).",
	  .write = info },
	{ "fpmd_start_time_seconds", "gauge",
	  "When fpmd started, in seconds since the epoch.",
	  .write = start_time_f },
	{ "fpmd_maps_adopted", "gauge",
	  "1 when fpmd adopted the pinned maps of a previous fpmd at start "
	  "(forwarding went on across the restart).",
	  .write = adopted },
	{ "fpmd_packets_total", "counter",
	  "Packets received on a managed interface, by what XDP did with "
	  "them: forwarded, drop-* or pass-* (to the kernel); see fpmctl(8) "
	  "COUNTERS.",
	  .write = rx_packets },
	{ "fpmd_bytes_total", "counter",
	  "Bytes received on a managed interface, by what XDP did with them "
	  "(as fpmd_packets_total).",
	  .write = rx_bytes },
	{ "fpmd_tx_packets_total", "counter",
	  "Packets XDP forwarded out of this interface (redirected).",
	  .write = tx_packets },
	{ "fpmd_tx_bytes_total", "counter",
	  "Bytes XDP forwarded out of this interface (after the trim).",
	  .write = tx_bytes },
	{ "fpmd_tx_redirect_errors_total", "counter",
	  "Redirects out of this interface that the devmap refused "
	  "(xdp:xdp_redirect_err).",
	  .write = tx_redirect_errors },
	{ "fpmd_tx_xmit_drops_total", "counter",
	  "Redirected frames the driver of this interface dropped "
	  "(xdp:xdp_devmap_xmit).",
	  .write = tx_xmit_drops },
	{ "fpmd_interface_xdp_attached", "gauge",
	  "1 when fpmd's XDP program is attached to the interface, in mode "
	  "native or generic (none when not attached).",
	  .write = xdp_attached },
	{ "fpmd_interface_xdp_state", "gauge",
	  "The interface's XDP state (1 for the current state): attached, "
	  "detached, detached-foreign (another program is there), absent.",
	  .write = xdp_state },
	{ "fpmd_interface_up", "gauge",
	  "1 when the interface is present, administratively up and has "
	  "carrier.",
	  .write = iface_up },
	{ "fpmd_interface_tx_port", "gauge",
	  "1 when XDP may redirect out of the interface; 0 when its egress "
	  "traffic takes the kernel path (see fpmctl show interfaces).",
	  .write = iface_tx_port },
	{ "fpmd_interface_suspended", "gauge",
	  "1 when netfilter rules appeared and all traffic of the interface "
	  "goes to the kernel.",
	  .write = iface_suspended },
	{ "fpmd_routes", "gauge",
	  "Routes in fpmd's table (main table), each counted once by its "
	  "family, the source programmed and its state (forwarding, or why "
	  "not).",
	  .write = routes },
	{ "fpmd_route_entries", "gauge",
	  "Route entries each source gives (a prefix given by two sources "
	  "counts in both).",
	  .write = route_entries },
	{ "fpmd_routes_other_table", "gauge",
	  "Routes of other tables: shown, never programmed.",
	  .write = other_table },
	{ "fpmd_nexthops", "gauge", "Nexthops by state.", .write = nexthops },
	{ "fpmd_nexthop_groups", "gauge", "Nexthop groups by state.",
	  .write = groups },
	{ "fpmd_neighbors", "gauge",
	  "Neighbors fpmd forwards to, by family and source (the kernel's "
	  "table, or static by hand).",
	  .write = neighbors },
	{ "fpmd_map_entries", "gauge",
	  "Entries in use in a BPF map fpmd sizes (tables/max-*).",
	  .write = map_entries },
	{ "fpmd_map_capacity", "gauge",
	  "Capacity of a BPF map fpmd sizes (tables/max-*).",
	  .write = map_capacity },
	{ "fpmd_map_full_total", "counter",
	  "Entries refused because their map was full (map routes: both "
	  "families).",
	  .write = map_full },
	{ "fpmd_map_write_errors_total", "counter",
	  "BPF map writes that failed for another reason than a full map.",
	  .write = map_errors },
	{ "fpmd_route_map_writes_total", "counter",
	  "Route map updates and deletes.", .write = route_writes },
	{ "fpmd_feed_enabled", "gauge",
	  "1 when the route feed (fpm, plugin) listens.",
	  .write = feed_enabled },
	{ "fpmd_feed_connected", "gauge",
	  "1 when zebra is connected to the route feed.",
	  .write = feed_connected },
	{ "fpmd_feed_connections_total", "counter",
	  "Connections the route feed accepted.", FEED_U64(connections) },
	{ "fpmd_feed_refused_connections_total", "counter",
	  "Connections refused: the peer's user is not allowed.",
	  FEED_U64(refused) },
	{ "fpmd_feed_frames_total", "counter",
	  "Frames received on the route feed.", FEED_U64(frames) },
	{ "fpmd_feed_messages_total", "counter",
	  "Messages received on the route feed.", FEED_U64(messages) },
	{ "fpmd_feed_route_messages_total", "counter",
	  "Route messages received on the route feed.", FEED_U64(route_msgs) },
	{ "fpmd_feed_nexthop_messages_total", "counter",
	  "Nexthop messages received on the route feed.",
	  FEED_U64(nexthop_msgs) },
	{ "fpmd_feed_ignored_messages_total", "counter",
	  "Messages ignored (FPM) or operations refused (plugin).",
	  FEED_U64(ignored) },
	{ "fpmd_feed_errors_total", "counter",
	  "Malformed input on the route feed (each closes the connection).",
	  FEED_U64(errors) },
	{ "fpmd_feed_routes", "gauge", "Routes the feed gives now.",
	  .write = feed_routes },
	{ "fpmd_feed_replay_state", "gauge",
	  "The state of the feed's last replay (1 for the current state).",
	  .write = feed_replay_state },
	{ "fpmd_feed_last_replay_start_timestamp_seconds", "gauge",
	  "When the last replay began (its first message), seconds since the "
	  "epoch; 0 before any.",
	  FEED_TIME(first_message_ns) },
	{ "fpmd_feed_last_message_timestamp_seconds", "gauge",
	  "When the feed's last message arrived, seconds since the epoch; 0 "
	  "before any.",
	  FEED_TIME(last_message_ns) },
	{ "fpmd_feed_last_replay_refreshed_routes", "gauge",
	  "Routes the last finished replay refreshed.",
	  FEED_U64(replay_refreshed) },
	{ "fpmd_feed_last_replay_swept_routes", "gauge",
	  "Stale routes the last finished replay removed.",
	  FEED_U64(replay_swept) },
	{ "fpmd_feed_hold_remaining_seconds", "gauge",
	  "A lost feed's routes keep forwarding this much longer (0 when not "
	  "held).",
	  .write = feed_hold },
	{ "fpmd_guard_state", "gauge",
	  "What each guard (netfilter, rp-filter, ...) found (1 for the "
	  "current state): clear, checked, kernel-path, bypassed, refused.",
	  .write = guard_state },
	{ "fpmd_guard_events_total", "counter",
	  "Change notifications each guard received.", .write = guard_events },
};

static uint64_t feed_field(const struct out *o, const struct feed_status *st)
{
	uint64_t v;

	memcpy(&v, (const char *)st + o->f->feed_off, sizeof(v));
	return v;
}

char *metrics_text(size_t *len)
{
	struct tables *t = calloc(1, sizeof(*t));
	/* Two interfaces and a few routes take about 16 KiB. */
	struct out o = { .t = t, .cap = 64 << 10 };

	o.buf = malloc(o.cap);
	if (!t || !o.buf) {
		free(t);
		free(o.buf);
		return NULL;
	}
	tables_walk(t);
	o.oom = t->routes.oom;
	for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
		const struct family *f = &families[k];

		o.family = f->name;
		o.f = f;
		put(&o, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
		    f->name, f->type);
		f->write(&o);
	}
	free(t->routes.row);
	free(t);
	if (o.oom || !o.buf) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}

/* ---- HTTP ---------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *text;

	(void)cls;
	(void)version;
	(void)upload_data;
	/* Refusals go at once (MHD then closes, discarding any body). */
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND,
			     "not found: fpmd serves GET /metrics\n", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "method not allowed: fpmd serves GET /metrics\n",
			     MHD_HTTP_METHOD_GET);
	/* The answer waits for the whole request: queued from the first
	 * call, MHD would close the connection, and a scraper could not
	 * keep it alive. A body sent with GET is read and ignored. */
	if (!*req_cls) {
		*req_cls = (void *)handle;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	text = metrics_text(&len);
	if (!text) {
		log_warn("metrics: out of memory building a scrape");
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "out of memory\n", NULL);
	}
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_warn("metrics: %s", msg);
}

/* Our own socket: a bind failure then says exactly what went wrong. */
static int listen_on(const char *addr, uint16_t port)
{
	return tcp_listen(addr, port, METRICS_MAX_CONN, true);
}

void metrics_init(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int metrics_open(const char *addr, uint16_t port)
{
	int fd = listen_on(addr, port);

	if (fd < 0)
		return fd;
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (timer_fd < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	/* No MHD_USE_INTERNAL_POLLING_THREAD: MHD_run from our loop only. */
	daemon_ = MHD_start_daemon(
	    MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, NULL,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET,
	    fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CONN,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_CONN_TIMEOUT,
	    MHD_OPTION_END);
	if (!daemon_) {
		close(fd);
		close(timer_fd);
		timer_fd = -1;
		return -EIO;
	}
	return 0;
}

void metrics_close(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_); /* closes the listening socket */
	daemon_ = NULL;
	if (timer_fd >= 0)
		close(timer_fd);
	timer_fd = -1;
}

bool metrics_running(void)
{
	return daemon_;
}

void metrics_fds(int *epoll_fd, int *tfd)
{
	const union MHD_DaemonInfo *di =
	    daemon_ ? MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD)
		    : NULL;

	*epoll_fd = di ? di->epoll_fd : -1;
	*tfd = daemon_ ? timer_fd : -1;
}

void metrics_io(void)
{
	struct itimerspec its = { 0 };
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t exp;

	if (!daemon_)
		return;
	if (read(timer_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_debug("metrics: timer: %s", strerror(errno));
	MHD_run(daemon_);
	/* MHD's next deadline (an idle connection's timeout, or at once
	 * when it has buffered work); none: the timer stays off. */
	if (MHD_get_timeout(daemon_, &ms) == MHD_YES) {
		its.it_value.tv_sec = (time_t)(ms / 1000);
		its.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
		if (!ms)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(timer_fd, 0, &its, NULL);
}
