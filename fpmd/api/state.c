// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * 'fpmctl show state': what fpmd is doing, as data of yang/fpmd.yang, so
 * a NETCONF/RESTCONF agent or a script can consume it with any YANG tool.
 * Built with libyang and validated against the module before it is sent.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libyang/libyang.h>

#include "config.h"

#include "conf/conf.h"
#include "feed/fpm.h"
#include "kernel/iface.h"
#include "kernel/tc_path.h"
#include "common/log.h"
#include "common/loopstat.h"
#include "common/phase.h"
#include "fib/maps.h"
#include "fib/xdp.h"
#include "feed/plugin.h"
#include "rib/rib.h"
#include "api/state.h"

#define ST "/fpmd:fpmd/state"

struct doc {
	struct lyd_node *top;
	int err;
};

static void put(struct doc *d, const char *val, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(struct doc *d, const char *val, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	if (d->err)
		return;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (lyd_new_path(d->top, config_ctx(), path, val, LYD_NEW_PATH_UPDATE,
			 d->top ? NULL : &d->top)) {
		const struct ly_err_item *e = ly_err_first(config_ctx());

		log_warn("state: %s = '%s': %s", path, val ? val : "",
			 e && e->msg ? e->msg : "rejected");
		ly_err_clean(config_ctx(), NULL);
		d->err = -EINVAL;
	}
}

static void put_u64(struct doc *d, uint64_t v, const char *fmt, const char *a,
		    const char *b)
{
	char val[24], path[512];

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	snprintf(path, sizeof(path), fmt, a, b);
	put(d, val, "%s", path);
}

static const char *tf(bool b)
{
	return b ? "true" : "false";
}

/* Small tallies of state names (a handful of distinct values). */
struct tally {
	const char *name[32];
	uint32_t count[32];
	int n;
};

static void tally_add_n(struct tally *t, const char *name, uint32_t n)
{
	for (int k = 0; k < t->n; k++)
		if (!strcmp(t->name[k], name)) {
			t->count[k] += n;
			return;
		}
	if (t->n < 32) {
		t->name[t->n] = name;
		t->count[t->n++] = n;
	}
}

static void tally_add(struct tally *t, const char *name)
{
	tally_add_n(t, name, 1);
}

/* The RIB's routes-by-state tally, by state alone. */
static void route_state_row(int family, const char *source,
			    const char *protocol, const char *state,
			    uint32_t n, void *arg)
{
	(void)family;
	(void)source;
	(void)protocol;
	tally_add_n(arg, state, n);
}

/* The event loop's iteration times (common/loopstat.h). */
static void loop_state(struct doc *d)
{
	const char *what;
	uint64_t recent = loopstat_recent_max(&what);

	put_u64(d, loopstat.iterations, ST "/loop/iterations%s%s", "", "");
	put_u64(d, loopstat.max_ns / 1000, ST "/loop/iteration-max-us%s%s", "",
		"");
	put(d, loopstat.max_what ? loopstat.max_what : "",
	    ST "/loop/iteration-max-step");
	put_u64(d, recent / 1000, ST "/loop/iteration-recent-max-us%s%s", "",
		"");
	put(d, what, ST "/loop/iteration-recent-max-step");
	put_u64(d, loopstat.slow, ST "/loop/iterations-slow%s%s", "", "");
}

static void memory_state(struct doc *d)
{
	put_u64(d, mem_heap_in_use(), ST "/memory/heap-in-use%s%s", "", "");
	put_u64(d, mem_resident(), ST "/memory/resident%s%s", "", "");
}

static void routes(struct doc *d, const struct rib_counts *c)
{
	struct tally states = { 0 };

	rib_route_tally(route_state_row, &states);
	put_u64(d, c->routes_v4, ST "/routes/ipv4%s%s", "", "");
	put_u64(d, c->routes_v6, ST "/routes/ipv6%s%s", "", "");
	put_u64(d, c->programmed, ST "/routes/programmed%s%s", "", "");
	put_u64(d, c->not_programmed, ST "/routes/not-programmed%s%s", "", "");
	put_u64(d, c->other_table, ST "/routes/other-table%s%s", "", "");
	put(d, cfg.fib4_algo == FPMD_FIB4_DIR24 ? "dir-24-8" :
	       cfg.fib4_algo == FPMD_FIB4_DXR	? "dxr" :
						  "lpm-trie",
	    ST "/routes/ipv4-lookup");
	put(d, cfg.fib6_algo == FPMD_FIB6_BSPL ? "binary-search" : "lpm-trie",
	    ST "/routes/ipv6-lookup");
	for (int s = 0; s < SRC_MAX; s++)
		put_u64(d, rib_count(s), ST "/routes/source[name='%s']/count%s",
			rib_source_name(s), "");
	for (int k = 0; k < states.n; k++)
		put_u64(d, states.count[k],
			ST "/routes/route-state[name='%s']/count%s",
			states.name[k], "");
	for (int k = 0; k < RIB_PROTO_MAX; k++)
		if (c->by_protocol[k])
			put_u64(d, c->by_protocol[k],
				ST "/routes/protocol[name='%s']/count%s",
				rib_protocol_name((uint8_t)k), "");
}

static void tally_nexthop(const struct nexthop *nh, void *arg)
{
	tally_add(arg, nexthop_state(nh));
}

static void nexthops(struct doc *d, const struct rib_counts *c)
{
	struct tally states = { 0 };

	/* The same nexthops and groups as counted. */
	rib_nexthop_walk(tally_nexthop, &states);
	put_u64(d, c->nexthops, ST "/nexthops/count%s%s", "", "");
	put_u64(d, c->groups, ST "/nexthops/groups%s%s", "", "");
	for (int k = 0; k < states.n; k++)
		put_u64(d, states.count[k],
			ST "/nexthops/nexthop-state[name='%s']/count%s",
			states.name[k], "");
	put_u64(d, c->neighbors, ST "/nexthops/neighbors%s%s", "", "");
}

static void feed(struct doc *d, const char *name, const struct feed_status *s)
{
	char base[64];

	snprintf(base, sizeof(base), ST "/feeds/%s", name);
	put(d, tf(s->enabled), "%s/enabled", base);
	put(d, s->listen, "%s/listen", base);
	put(d, tf(s->connected), "%s/connected", base);
	if (s->connected)
		put(d, s->peer, "%s/peer", base);
	put_u64(d, s->connections, "%s/connections%s", base, "");
	put_u64(d, s->frames, "%s/frames%s", base, "");
	put_u64(d, s->messages, "%s/messages%s", base, "");
	put_u64(d, s->errors, "%s/errors%s", base, "");
	put_u64(d, s->refused, "%s/refused%s", base, "");
	put_u64(d, s->ignored, "%s/ignored%s", base, "");
	if (s->last_error[0])
		put(d, s->last_error, "%s/last-error", base);
	put(d, s->replay_state, "%s/last-replay/state", base);
	put_u64(d, s->replay_refreshed, "%s/last-replay/refreshed%s", base, "");
	put_u64(d, s->replay_swept, "%s/last-replay/swept%s", base, "");
	if (!strcmp(name, "fpm")) {
		put_u64(d, s->status_sent, "%s/route-status-sent%s", base, "");
		put_u64(d, s->status_dropped, "%s/route-status-dropped%s", base,
			"");
	}
	if (!strcmp(s->replay_state, "held"))
		put_u64(d, s->hold_remaining_ms,
			"%s/last-replay/hold-remaining%s", base, "");
}

static void interface(struct doc *d, const struct iface_cfg *ic)
{
	const struct iface *i = iface_by_name(ic->name);
	char base[96];

	snprintf(base, sizeof(base), ST "/interface[name='%s']", ic->name);
	put(d, tf(ic->enabled && i), "%s/enabled", base);
	if (!i) {
		unsigned int idx = if_nametoindex(ic->name);

		put_u64(d, idx, "%s/ifindex%s", base, "");
		put(d, idx ? "down" : "absent", "%s/oper-status", base);
		put(d, "false", "%s/attached", base);
		put(d, idx ? "detached" : "absent", "%s/xdp-state", base);
		return;
	}
	put_u64(d, i->ifindex, "%s/ifindex%s", base, "");
	put_u64(d, i->slot, "%s/slot%s", base, "");
	put(d, !i->ifindex ? "absent" : i->up ? "up" : "down",
	    "%s/oper-status", base);
	put(d, tf(i->attached), "%s/attached", base);
	if (i->attached)
		put(d, i->mode == XDP_MODE_NATIVE ? "native" : "generic",
		    "%s/xdp-mode", base);
	put(d, iface_xdp_state(i), "%s/xdp-state", base);
	if (!i->attached)
		put(d, iface_xdp_reason(i), "%s/xdp-reason", base);
	put(d, tf(iface_is_tx_port(i)), "%s/tx-port", base);
	if (!iface_is_tx_port(i))
		put(d, iface_tx_reason(i), "%s/tx-reason", base);
	put(d, tf(i->suspended), "%s/suspended", base);
	put(d, tc_iface_path(i), "%s/path", base);
	put(d, tf(i->tc_attached), "%s/tc-attached", base);
	if (i->tc_reason[0])
		put(d, i->tc_reason, "%s/tc-reason", base);
	put(d, tf(i->peer_egress), "%s/peer-egress", base);
	put(d, tf(i->xmit_sg), "%s/xmit-sg", base);
	for (uint32_t r = 0; r < FPMD_R_MAX; r++) {
		struct fpmd_stat st;
		char cbase[160];

		if (maps_stat_read(i->slot, r, &st))
			memset(&st, 0, sizeof(st));
		snprintf(cbase, sizeof(cbase), "%s/counter[reason='%s']", base,
			 fpmd_reason_names[r]);
		put_u64(d, st.packets, "%s/packets%s", cbase, "");
		put_u64(d, st.bytes, "%s/bytes%s", cbase, "");
	}
}

char *state_json(void)
{
	struct doc d = { 0 };
	struct feed_status fs;
	struct rib_counts c;
	char *out = NULL;

	if (!config_ctx())
		return NULL;
	put(&d, PACKAGE_VERSION, ST "/version");
	put_u64(&d, FPMD_LAYOUT_VERSION, ST "/map-layout%s%s", "", "");
	put(&d, cfg.source, ST "/config-source");
	put(&d, tf(xdp_adopted), ST "/maps-adopted");
	loop_state(&d);
	memory_state(&d);
	rib_summary(&c);
	routes(&d, &c);
	nexthops(&d, &c);
	fpm_get_status(&fs);
	feed(&d, "fpm", &fs);
	plugin_get_status(&fs);
	feed(&d, "plugin", &fs);
	for (int k = 0; k < cfg.n_ifaces; k++)
		interface(&d, &cfg.ifaces[k]);
	/* Our own check: never hand out what the module would reject. */
	if (!d.err && lyd_validate_all(&d.top, NULL, LYD_VALIDATE_PRESENT, NULL)) {
		const struct ly_err_item *e = ly_err_first(config_ctx());

		log_warn("state: does not validate: %s",
			 e && e->msg ? e->msg : "?");
		ly_err_clean(config_ctx(), NULL);
		d.err = -EINVAL;
	}
	if (!d.err)
		lyd_print_mem(&out, d.top, LYD_JSON, LYD_PRINT_WD_EXPLICIT);
	lyd_free_all(d.top);
	return out;
}
