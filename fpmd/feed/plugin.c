// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plugin feed server. Unlike FPM, the plugin says when a replay starts
 * and ends, so the sweep of what a replay did not send is exact and needs
 * no timer, and every operation gets an Ack with fpmd's status, which the
 * plugin writes into zebra's log.
 *
 * One plugin (one zebra) at a time; a message that does not decode, or a
 * Hello of another API version, closes the connection and changes nothing.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <linux/rtnetlink.h>

#include "config.h"

#include "conf/conf.h"
#include "fpmd.pb-c.h"
#include "common/log.h"
#include "feed/plugin.h"
#include "feed/replay.h"
#include "rib/rib.h"
#include "common/util.h"
#include "common/wire.h"

#define PLUGIN_MAX_MSG (1u << 20)

static int listen_fd = -1, conn_fd = -1, timer_fd = -1;
static struct wire_buf in;
static bool hello_done;
static uint32_t gen;
static uint64_t replay_id, hold_deadline_ns;
static struct feed_status st = { .replay_state = "none" };
static int status_id = -1; /* our bit of the RIB's route status hook */
static void status_changed(struct route *r, void *arg);

int plugin_open(const struct sock_cfg *sc)
{
	const char *path = sc->path, *group = sc->group;
	bool no_group;
	int fd = unix_listen(path, sc->owner, group, sc->mode, &no_group);

	if (fd < 0)
		return fd;
	/* zebra runs as frr: the group must be able to connect. */
	if (no_group)
		log_warn("plugin: group %s missing; %s is root-only and zebra "
			 "(user frr) cannot connect",
			 group, path);
	if (unix_dir_unsafe(path))
		log_warn("plugin: the directory of %s is writable by other "
			 "users: any of them can replace the socket and feed "
			 "zebra's plugin; use a directory only root can write",
			 path);
	if (timer_fd < 0)
		timer_fd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_NONBLOCK | TFD_CLOEXEC);
	if (timer_fd < 0) {
		close(fd);
		unlink(path);
		return -errno;
	}
	listen_fd = fd;
	st.enabled = true;
	if (status_id < 0)
		status_id = rib_status_subscribe(status_changed, NULL);
	snprintf(st.listen, sizeof(st.listen), "%s", path);
	log_info("plugin: listening on %s", path);
	return fd;
}

/* Replies wait here while the plugin is slow to read; above this much we
 * stop reading it (push back: zebra's writes wait), never drop one. */
#define PLUGIN_OUT_HIGH (1u << 20)

static struct wire_out out;
static bool out_failed;
static void (*watch)(int fd, bool in, bool out);

static void send_msg(const Fpmd__FpmdMsg *m);

/* ---- route status to zebra ----------------------------------------------
 *
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
	send_msg(&m);
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

/* The RIB's hook: a route's status changed. */
static void status_changed(struct route *r, void *arg)
{
	(void)arg;
	if (conn_fd < 0 || !hello_done || !r->e[SRC_PLUGIN].present ||
	    !rib_status_queue(r, status_id))
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

/* Forget what waits (the connection is gone: the next one's replay sends
 * every status again); clear the routes' bits so they queue again. */
static void status_queue_clear(void)
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
static void status_queue_flush(void)
{
	int n = 0;

	while (sq.len && conn_fd >= 0 &&
	       wire_out_pending(&out) < PLUGIN_STATUS_HIGH) {
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
		if (++n >= PLUGIN_STATUS_BATCH)
			break;
	}
	if (!sq.len)
		sq.head = 0;
}

void plugin_set_watch(void (*fn)(int fd, bool in, bool out))
{
	watch = fn;
}

static void send_msg(const Fpmd__FpmdMsg *m)
{
	if (conn_fd < 0)
		return;
	if (wire_queue(&out, &m->base)) {
		log_err("plugin: cannot queue a reply: out of memory");
		out_failed = true;
	}
}

static void conn_close(const char *why)
{
	struct itimerspec its = { 0 };

	if (conn_fd < 0)
		return;
	wire_flush(conn_fd, &out); /* best effort: a refusal says why */
	close(conn_fd);
	conn_fd = -1;
	wire_buf_free(&in);
	wire_out_free(&out);
	status_queue_clear();
	out_failed = false;
	hello_done = false;
	hold_deadline_ns = feed_hold_start(&st);
	its.it_value.tv_sec = cfg.fpm_hold_s ? cfg.fpm_hold_s : 1;
	timerfd_settime(timer_fd, 0, &its, NULL);
	log_warn("plugin: %s; its %u routes keep forwarding for %us unless "
		 "zebra comes back",
		 why, rib_count(SRC_PLUGIN), cfg.fpm_hold_s);
}

void plugin_listen_close(void)
{
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(st.listen);
	}
	listen_fd = -1;
	st.enabled = false;
}

void plugin_close(void)
{
	plugin_listen_close();
	if (conn_fd >= 0)
		close(conn_fd);
	if (timer_fd >= 0)
		close(timer_fd);
	conn_fd = timer_fd = -1;
	wire_buf_free(&in);
	wire_out_free(&out);
	status_queue_clear();
}

int plugin_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (conn_fd >= 0) {
		log_warn("plugin: a new connection replaces the old one");
		close(conn_fd);
		wire_buf_free(&in);
	}
	/* The old connection's replies are not this one's. */
	wire_out_free(&out);
	status_queue_clear();
	out_failed = false;
	conn_fd = fd;
	hello_done = false;
	st.connected = true;
	st.connections++;
	hold_deadline_ns = 0;
	snprintf(st.peer, sizeof(st.peer), "zebra (connection %llu)",
		 (unsigned long long)st.connections);
	log_info("plugin: zebra's plugin connected");
	return fd;
}

int plugin_timer_fd(void)
{
	return timer_fd;
}

void plugin_timer(void)
{
	uint64_t exp;

	if (read(timer_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		return;
	if (!hold_deadline_ns || conn_fd >= 0 ||
	    now_ns(CLOCK_MONOTONIC) < hold_deadline_ns)
		return;
	hold_deadline_ns = 0;
	feed_hold_expired(&st, SRC_PLUGIN, "plugin");
}

/* ---- operations ---------------------------------------------------------- */

static int path_of(const Fpmd__PluginPath *pp, struct rib_path *path,
		   const char **err)
{
	memset(path, 0, sizeof(*path));
	if (!pp)
		return 0;
	if (pp->gateway.len && pp->gateway.len != 4 && pp->gateway.len != 16) {
		*err = "gateway must be 4 or 16 bytes";
		return -EINVAL;
	}
	if (pp->weight > 256) {
		*err = "weight must be 1..256";
		return -EINVAL;
	}
	path->ifindex = pp->ifindex;
	path->weight = pp->weight ? pp->weight : 1;
	if (pp->gateway.len) {
		path->has_gw = true;
		path->family = pp->gateway.len == 4 ? AF_INET : AF_INET6;
		memcpy(path->gw, pp->gateway.data, pp->gateway.len);
	}
	return 0;
}

/* A RouteOp's prefix, host bits cleared as zebra means them; false if it
 * is not a 4- or 16-byte address with a length that fits. */
static bool prefix_of(const Fpmd__Prefix *pp, struct prefix *p)
{
	if (!pp || (pp->addr.len != 4 && pp->addr.len != 16) ||
	    pp->len > pp->addr.len * 8u)
		return false;
	memset(p, 0, sizeof(*p));
	p->family = pp->addr.len == 4 ? AF_INET : AF_INET6;
	p->len = (uint8_t)pp->len;
	memcpy(p->addr, pp->addr.data, pp->addr.len);
	prefix_mask(p);
	return true;
}

/*
 * A route's group differs from the route's own paths. zebra 8.4.4 builds a
 * group's member list from the members valid when the group is installed
 * and never sends the group again when one comes back (a link down, then
 * up): the route returns to that group id with both paths while the group
 * zebra gave us (and, with kernel nexthop objects, the kernel's) has one.
 * The paths are zebra's selection, as the kernel gets them without
 * nexthop objects: forward over them. Said once per group id in a row.
 */
static bool group_stale(const Fpmd__RouteOp *r, const struct prefix *p)
{
	static uint32_t warned;
	struct rib_path paths[NH_MAX_MEMBERS];
	struct nexthop *g = rib_nexthop_find(SRC_PLUGIN, r->nhg_id);
	char pb[PREFIX_STRLEN];
	const char *err;
	int nm;

	/* A group fpmd keeps on the kernel path stays so. */
	if (!g || g->unsupported || g->blackhole || !r->n_paths ||
	    r->n_paths > NH_MAX_MEMBERS)
		return false;
	for (size_t i = 0; i < r->n_paths; i++)
		if (path_of(r->paths[i], &paths[i], &err))
			return false;
	if (rib_nexthop_same_paths(g, paths, (int)r->n_paths))
		return false;
	nm = g->is_group ? g->nmembers : 1;
	if (warned != r->nhg_id)
		log_warn("plugin: route %s: nexthop group %u has %d member%s, "
			 "the route %zu path%s; forwarding over the route's "
			 "paths (zebra did not resend the group)",
			 fmt_prefix(p, pb), r->nhg_id, nm, nm == 1 ? "" : "s",
			 r->n_paths, r->n_paths == 1 ? "" : "s");
	warned = r->nhg_id;
	return true;
}

static int route_op(const Fpmd__RouteOp *r, const char **err)
{
	static const enum rib_rtype types[] = {
		[FPMD__ROUTE_TYPE__RT_UNSPEC] = RT_UNICAST,
		[FPMD__ROUTE_TYPE__RT_UNICAST] = RT_UNICAST,
		[FPMD__ROUTE_TYPE__RT_BLACKHOLE] = RT_BLACKHOLE,
		[FPMD__ROUTE_TYPE__RT_UNREACHABLE] = RT_UNREACHABLE,
		[FPMD__ROUTE_TYPE__RT_PROHIBIT] = RT_PROHIBIT,
		[FPMD__ROUTE_TYPE__RT_LOCAL] = RT_LOCAL,
	};
	struct rib_path paths[NH_MAX_MEMBERS];
	struct rib_route_req rq = { .src = SRC_PLUGIN, .gen = gen };
	const Fpmd__Prefix *p = r->prefix;
	char pb[PREFIX_STRLEN];
	int ret;

	if (!prefix_of(p, &rq.p)) {
		*err = "bad prefix";
		return -EINVAL;
	}
	if (!r->del && r->protocol && r->protocol[0]) {
		/* zebra_route_string(): "static", "ospf", "connected", ... */
		int id = rib_protocol_id(r->protocol);

		if (id < 0) {
			*err = "bad protocol name (1 to 15 of a-z, 0-9, _ and -)";
			return -EINVAL;
		}
		rq.proto = (uint8_t)id;
	}
	if (r->table && r->table != RT_TABLE_MAIN) {
		if (r->del)
			rib_other_del(SRC_PLUGIN, &rq.p, r->table);
		else
			rib_other_add(SRC_PLUGIN, &rq.p, r->table, gen, rq.proto);
		return 0;
	}
	if (r->del) {
		ret = rib_route_del(SRC_PLUGIN, &rq.p, err);
		return ret == -ENOENT ? 0 : ret; /* already gone is fine */
	}
	if (r->type < 0 || r->type > FPMD__ROUTE_TYPE__RT_LOCAL) {
		*err = "unknown route type";
		return -EINVAL;
	}
	rq.type = types[r->type];
	if (r->unsupported) {
		rq.type = RT_KERNEL;
		rq.kreason = KR_UNSUPPORTED;
	} else if (rq.type == RT_UNICAST && r->mtu &&
		   rq.p.family == AF_INET) {
		/* ip_forward goes by it (IPv6 only by a locked one, which
		 * zebra never sets): see route_mtu_metric() in fpm.c. */
		rq.type = RT_KERNEL;
		rq.kreason = KR_MTU_METRIC;
	} else if (rq.type == RT_UNICAST && r->nhg_id &&
		   !group_stale(r, &rq.p)) {
		rq.nhid = r->nhg_id;
	} else if (rq.type == RT_UNICAST && r->n_paths > NH_MAX_MEMBERS) {
		/* Refusing it would leave a covering route (or the route's
		 * old paths) forwarding what the kernel sends over all of
		 * these: the kernel path it is. */
		log_warn("plugin: route %s: %zu paths, more than the %d fpmd "
			 "forwards over; it takes the kernel path",
			 fmt_prefix(&rq.p, pb), r->n_paths, NH_MAX_MEMBERS);
		rq.type = RT_KERNEL;
		rq.kreason = KR_UNSUPPORTED;
	} else if (rq.type == RT_UNICAST) {
		if (!r->n_paths) {
			*err = "unicast route needs 1 to 64 paths or a group id";
			return -EINVAL;
		}
		for (size_t i = 0; i < r->n_paths; i++) {
			ret = path_of(r->paths[i], &paths[i], err);
			if (ret)
				return ret;
		}
		rq.paths = paths;
		rq.npaths = (int)r->n_paths;
	}
	return rib_route_add(&rq, err);
}

static int nexthop_op(const Fpmd__NexthopOp *n, const char **err)
{
	struct rib_path path;
	int ret;

	if (n->del) {
		ret = rib_nexthop_del(SRC_PLUGIN, n->id, err);
		return ret == -ENOENT ? 0 : ret;
	}
	if (n->n_group > NH_MAX_MEMBERS) {
		/* As FPM: valid in zebra, the kernel path for its routes. */
		log_warn("plugin: nexthop group %u: %zu members, more than the "
			 "%d fpmd forwards over; routes using it take the "
			 "kernel path",
			 n->id, n->n_group, NH_MAX_MEMBERS);
		memset(&path, 0, sizeof(path));
		return rib_nexthop_add(SRC_PLUGIN, n->id, &path, false, true,
				       gen, err);
	}
	if (n->n_group) {
		uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS];

		for (size_t i = 0; i < n->n_group; i++) {
			ids[i] = n->group[i]->nhid;
			w[i] = n->group[i]->weight;
		}
		return rib_group_add(SRC_PLUGIN, n->id, ids, w, (int)n->n_group,
				     gen, err);
	}
	ret = path_of(n->path, &path, err);
	if (ret)
		return ret;
	return rib_nexthop_add(SRC_PLUGIN, n->id, &path, n->blackhole,
			       n->unsupported, gen, err);
}

/* After the Ack of an install: zebra has a new route entry to mark. */
static void route_op_status(const Fpmd__RouteOp *r)
{
	struct prefix p;

	if (r->del || (r->table && r->table != RT_TABLE_MAIN) ||
	    !prefix_of(r->prefix, &p))
		return;
	status_send_route(&p);
}

static void ack(uint64_t seq, int ret, const char *err)
{
	Fpmd__FpmdMsg m = FPMD__FPMD_MSG__INIT;
	Fpmd__Ack a = FPMD__ACK__INIT;

	a.seq = seq;
	a.status = wire_status_of(ret);
	a.error = (char *)(ret ? (err ? err : strerror(-ret)) : "");
	if (ret)
		st.ignored++;
	m.msg_case = FPMD__FPMD_MSG__MSG_ACK;
	m.ack = &a;
	send_msg(&m);
}

/* Returns <0 when the connection must close. */
static int handle(const uint8_t *buf, size_t len)
{
	Fpmd__FpmdMsg out = FPMD__FPMD_MSG__INIT;
	Fpmd__Hello hello = FPMD__HELLO__INIT;
	Fpmd__PluginMsg *m = fpmd__plugin_msg__unpack(NULL, len, buf);
	const char *err = NULL;
	uint32_t swept;
	int ret = 0;

	if (!m) {
		snprintf(st.last_error, sizeof(st.last_error),
			 "malformed protobuf message (%zu bytes)", len);
		return -EINVAL;
	}
	st.messages++;
	st.frames++;
	if (!hello_done && m->msg_case != FPMD__PLUGIN_MSG__MSG_HELLO) {
		snprintf(st.last_error, sizeof(st.last_error),
			 "message %d before Hello", m->msg_case);
		fpmd__plugin_msg__free_unpacked(m, NULL);
		return -EPROTO;
	}
	switch (m->msg_case) {
	case FPMD__PLUGIN_MSG__MSG_HELLO:
		hello.version = FPMD__API_VERSION__API_VERSION_CURRENT;
		hello.peer = "fpmd " PACKAGE_VERSION;
		out.msg_case = FPMD__FPMD_MSG__MSG_HELLO;
		out.hello = &hello;
		send_msg(&out);
		if (m->hello->version != FPMD__API_VERSION__API_VERSION_CURRENT) {
			snprintf(st.last_error, sizeof(st.last_error),
				 "plugin '%s' speaks API version %u, fpmd %u",
				 m->hello->peer, m->hello->version,
				 FPMD__API_VERSION__API_VERSION_CURRENT);
			ret = -EPROTO;
			break;
		}
		hello_done = true;
		snprintf(st.peer, sizeof(st.peer), "%s", m->hello->peer);
		break;
	case FPMD__PLUGIN_MSG__MSG_REPLAY_BEGIN:
		gen++;
		replay_id = m->replay_begin->id;
		st.replay_state = "in-progress";
		log_info("plugin: replay %llu begins",
			 (unsigned long long)replay_id);
		break;
	case FPMD__PLUGIN_MSG__MSG_REPLAY_END:
		if (m->replay_end->id != replay_id) {
			log_warn("plugin: end of replay %llu, but replay %llu "
				 "began; no sweep",
				 (unsigned long long)m->replay_end->id,
				 (unsigned long long)replay_id);
			break;
		}
		swept = feed_replay_sweep(&st, SRC_PLUGIN, gen, "complete");
		log_info("plugin: replay %llu complete: %llu routes sent, %llu "
			 "held, %u stale removed",
			 (unsigned long long)replay_id,
			 (unsigned long long)m->replay_end->routes,
			 (unsigned long long)st.replay_refreshed, swept);
		out.msg_case = FPMD__FPMD_MSG__MSG_REPLAY_DONE;
		out.replay_done = m->replay_end;
		send_msg(&out);
		break;
	case FPMD__PLUGIN_MSG__MSG_ROUTE:
		st.route_msgs++;
		ret = route_op(m->route, &err);
		ack(m->route->seq, ret, err);
		ret = 0;
		route_op_status(m->route);
		break;
	case FPMD__PLUGIN_MSG__MSG_NEXTHOP:
		st.nexthop_msgs++;
		ret = nexthop_op(m->nexthop, &err);
		ack(m->nexthop->seq, ret, err);
		ret = 0;
		break;
	default:
		snprintf(st.last_error, sizeof(st.last_error),
			 "unknown plugin message %d", m->msg_case);
		ret = -EPROTO;
		break;
	}
	fpmd__plugin_msg__free_unpacked(m, NULL);
	return ret;
}

/* Handle the complete messages in the input buffer while few replies
 * wait. 1: pushed back (replies pile up), 0: needs more input, <0: the
 * connection was closed. */
static int take_frames(void)
{
	const uint8_t *msg;
	size_t len;
	int r;

	while (wire_out_pending(&out) < PLUGIN_OUT_HIGH) {
		r = wire_frame(&in, PLUGIN_MAX_MSG, &msg, &len);
		if (r == 0)
			return 0;
		if (r < 0) {
			st.errors++;
			snprintf(st.last_error, sizeof(st.last_error),
				 "message larger than %u bytes",
				 PLUGIN_MAX_MSG);
			log_err("plugin: %s; closing the connection",
				st.last_error);
			conn_close("closed on bad input");
			return r;
		}
		r = handle(msg, len);
		wire_consume(&in, WIRE_HDR + len);
		if (r) {
			st.errors++;
			log_err("plugin: %s; closing the connection",
				st.last_error);
			conn_close("closed on bad input");
			return r;
		}
	}
	return 1;
}

/* Write queued replies; false when the connection had to be closed. */
static bool flush_out(void)
{
	int ret = out_failed ? -ENOMEM : wire_flush(conn_fd, &out);
	char why[96];

	if (!ret || ret == -EAGAIN)
		return true;
	snprintf(why, sizeof(why),
		 "cannot send replies (%s), closing so "
		 "that zebra replays",
		 strerror(-ret));
	st.errors++;
	snprintf(st.last_error, sizeof(st.last_error), "%s", why);
	conn_close(why);
	return false;
}

int plugin_io(void)
{
	uint64_t writes = rib_stats.route_writes;
	bool got = false;
	int r;

	for (int batch = 0; batch < 64; batch++) {
		long n;

		if (!flush_out())
			return -EPIPE;
		r = take_frames();
		if (r < 0)
			return r;
		if (r == 1) {
			if (!flush_out())
				return -EPIPE;
			if (wire_out_pending(&out) >= PLUGIN_OUT_HIGH)
				break; /* wait for EPOLLOUT */
			continue;
		}
		n = wire_fill(conn_fd, &in);
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			conn_close(in.len ? "connection closed in the middle "
					    "of a message" :
					    "zebra's plugin disconnected");
			return -ECONNRESET;
		}
		got = true;
	}
	status_queue_flush();
	if (!flush_out())
		return -EPIPE;
	/* Read only while replies are taken; wake on EPOLLOUT while some
	 * wait. */
	if (watch)
		watch(conn_fd, wire_out_pending(&out) < PLUGIN_OUT_HIGH,
		      wire_out_pending(&out) > 0);
	if (got) {
		uint64_t now = now_ns(CLOCK_REALTIME);

		if (!st.first_message_ns)
			st.first_message_ns = now;
		st.last_message_ns = now;
		if (rib_stats.route_writes != writes)
			st.last_map_write_ns = now;
	}
	return 0;
}

void plugin_status_flush(void)
{
	if (conn_fd < 0 || !sq.len)
		return;
	status_queue_flush();
	if (!flush_out())
		return;
	if (watch)
		watch(conn_fd, wire_out_pending(&out) < PLUGIN_OUT_HIGH,
		      wire_out_pending(&out) > 0);
}

void plugin_get_status(struct feed_status *out)
{
	feed_get_status(&st, hold_deadline_ns, conn_fd >= 0, out);
}
