// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Route status to zebra's plugin: a RouteStatus after the Ack of every
 * install, and one whenever a plugin route's status changes.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "common/log.h"
#include "feed/plugin_internal.h"
#include "rib/rib.h"

static int status_id = -1; /* our bit of the RIB's route status hook */

/*
 * zebra's plugin marks its routes offloaded / offload-failed by the
 * RouteStatus fpmd sends: one after the Ack of every RouteOp that installs
 * a prefix (zebra made a new route entry), and one whenever the RIB's
 * "route status changed" hook reports a plugin route. Those wait here as
 * prefixes, each queued once (the route's subscriber bit), and go out only
 * while the replies to zebra are below PLUGIN_STATUS_HIGH: a guard that
 * diverts 100k routes never stalls the loop nor grows the queue beyond one
 * entry per route; the status sent is the one current when it is sent.
 */
#define PLUGIN_STATUS_HIGH (256u << 10)
#define PLUGIN_STATUS_BATCH 4096
#define PLUGIN_STATUS_NS 4000000ull /* and at most this long a turn */

static struct {
	struct prefix *p;
	size_t head, len, cap;
} sq;

static void status_send(const struct prefix *p, bool offloaded,
			const char *state)
{
	Fpmd__FpmdMsg m = FPMD__FPMD_MSG__INIT;
	Fpmd__RouteStatus rs = FPMD__ROUTE_STATUS__INIT;
	Fpmd__Prefix pp = FPMD__PREFIX__INIT;

	pp.addr.data = (uint8_t *)p->addr;
	pp.addr.len = addr_len(p->family);
	pp.len = p->len;
	rs.prefix = &pp;
	rs.table = RT_TABLE_MAIN;
	rs.offloaded = offloaded;
	rs.state = (char *)state;
	m.msg_case = FPMD__FPMD_MSG__MSG_ROUTE_STATUS;
	m.route_status = &rs;
	plugin_send_msg(&m);
}

/* The current status of the plugin's route for p, sent now. */
static void status_send_route(const struct prefix *p)
{
	struct route *r = rib_route_find(p);
	const char *state = "refused";
	bool off = false;

	if (r) {
		rib_status_take(r, status_id);
		if (r->e[SRC_PLUGIN].present)
			state = rib_route_status(r, SRC_PLUGIN, &off);
	}
	status_send(p, off, state);
}

/* r's status to be sent by plugin_status_queue_flush(), once. */
static void queue(struct route *r)
{
	if (!rib_status_queue(r, status_id))
		return;
	if (sq.len == sq.cap) {
		size_t cap = sq.cap ? sq.cap * 2 : 1024;
		struct prefix *v = malloc(cap * sizeof(*v));

		if (!v) {
			rib_status_take(r, status_id);
			log_err("plugin: out of memory: the status of route "
				"changes is not sent to zebra");
			return;
		}
		for (size_t k = 0; k < sq.len; k++)
			v[k] = sq.p[(sq.head + k) % sq.cap];
		free(sq.p);
		sq.p = v;
		sq.head = 0;
		sq.cap = cap;
	}
	sq.p[(sq.head + sq.len++) % sq.cap] = r->p;
}

/* The RIB's hook: a route's status changed. */
static void status_changed(struct route *r, void *arg)
{
	(void)arg;
	if (plugin.conn_fd >= 0 && plugin.hello_done &&
	    r->e[SRC_PLUGIN].present)
		queue(r);
}

/* Forget what waits (the connection is gone: the next one's replay sends
 * every status again); clear the routes' bits so they queue again. */
void plugin_status_queue_clear(void)
{
	for (size_t k = 0; k < sq.len; k++) {
		struct route *r = rib_route_find(&sq.p[(sq.head + k) % sq.cap]);

		if (r)
			rib_status_take(r, status_id);
	}
	free(sq.p);
	memset(&sq, 0, sizeof(sq));
}

/* Move queued statuses to the replies while zebra takes them. */
void plugin_status_queue_flush(void)
{
	struct slice sl = slice_start(PLUGIN_STATUS_NS, 256);
	size_t n = 0;

	while (plugin_status_more()) {
		struct prefix p = sq.p[sq.head];
		struct route *r;

		sq.head = (sq.head + 1) % sq.cap;
		sq.len--;
		r = rib_route_find(&p);
		/* Gone, or sent since (after an Ack): nothing to say. */
		if (!r || !rib_status_take(r, status_id) ||
		    !r->e[SRC_PLUGIN].present)
			continue;
		status_send_route(&p);
		if (++n >= PLUGIN_STATUS_BATCH || slice_over(&sl, n))
			break;
	}
	if (!sq.len)
		sq.head = 0;
}

void plugin_status_subscribe(void)
{
	if (status_id < 0)
		status_id = rib_status_subscribe(status_changed, NULL);
}

bool plugin_status_waiting(void)
{
	return sq.len;
}

bool plugin_status_more(void)
{
	return sq.len && plugin.conn_fd >= 0 &&
	       plugin_out_pending() < PLUGIN_STATUS_HIGH;
}

/* After the Ack of an install: zebra has a new route entry to mark. */
void plugin_route_op_status(const Fpmd__RouteOp *r)
{
	struct prefix p;

	struct route *rt;

	if (r->del || (r->table && r->table != RT_TABLE_MAIN) ||
	    !plugin_prefix_of(r->prefix, &p))
		return;
	/* In a table part the loop turn's commit publishes: from the queue,
	 * flushed after that commit, with what is true then. */
	rt = rib_route_find(&p);
	if (rt && rib_route_unpublished(rt) && rt->e[SRC_PLUGIN].present) {
		queue(rt);
		return;
	}
	status_send_route(&p);
}
