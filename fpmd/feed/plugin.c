// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plugin feed server. Unlike FPM, the plugin says when a replay starts
 * and ends, so the sweep of what a replay did not send is exact and needs
 * no timer, and every operation gets an Ack with fpmd's status, which the
 * plugin writes into zebra's log.
 *
 * One plugin (one zebra) at a time; a message that does not decode, or a
 * Hello of another API version, closes the connection and changes nothing.
 *
 * This file: the socket, the connection and the dispatch of messages;
 * plugin_ops.c applies RouteOp and NexthopOp, plugin_status.c sends
 * route status back.
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
#include "common/sock.h"
#include "feed/plugin_internal.h"
#include "feed/replay.h"
#include "rib/rib.h"
#include "common/util.h"
#include "common/wire.h"

#define PLUGIN_MAX_MSG (1u << 20)

struct plugin_state plugin = { .conn_fd = -1 };
static int listen_fd = -1, timer_fd = -1;
static struct wire_buf in;
static uint64_t replay_id, hold_deadline_ns;
static struct feed_status st = { .replay_state = "none" };

int plugin_open(const struct sock_cfg *sc)
{
	const char *path = sc->path;
	/* zebra runs as frr: the group must be able to connect. */
	int fd = sock_serve("plugin", path, sc->owner, sc->group, sc->mode,
			    " and zebra (user frr) cannot connect",
			    "feed zebra's plugin");

	if (fd < 0)
		return fd;
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
	plugin_status_subscribe();
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

void plugin_set_watch(void (*fn)(int fd, bool in, bool out))
{
	watch = fn;
}

void plugin_send_msg(const Fpmd__FpmdMsg *m)
{
	if (plugin.conn_fd < 0)
		return;
	if (wire_queue(&out, &m->base)) {
		log_err("plugin: cannot queue a reply: out of memory");
		out_failed = true;
	}
}

size_t plugin_out_pending(void)
{
	return wire_out_pending(&out);
}

static void conn_close(const char *why)
{
	struct itimerspec its = { 0 };

	if (plugin.conn_fd < 0)
		return;
	wire_flush(plugin.conn_fd, &out); /* best effort: a refusal says why */
	close(plugin.conn_fd);
	plugin.conn_fd = -1;
	wire_buf_free(&in);
	wire_out_free(&out);
	plugin_status_queue_clear();
	out_failed = false;
	plugin.hello_done = false;
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
	if (plugin.conn_fd >= 0)
		close(plugin.conn_fd);
	if (timer_fd >= 0)
		close(timer_fd);
	plugin.conn_fd = timer_fd = -1;
	wire_buf_free(&in);
	wire_out_free(&out);
	plugin_status_queue_clear();
}

int plugin_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (plugin.conn_fd >= 0) {
		log_warn("plugin: a new connection replaces the old one");
		close(plugin.conn_fd);
		wire_buf_free(&in);
	}
	/* The old connection's replies are not this one's. */
	wire_out_free(&out);
	plugin_status_queue_clear();
	out_failed = false;
	plugin.conn_fd = fd;
	plugin.hello_done = false;
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
	if (!hold_deadline_ns || plugin.conn_fd >= 0 ||
	    now_ns(CLOCK_MONOTONIC) < hold_deadline_ns)
		return;
	hold_deadline_ns = 0;
	feed_hold_expired(&st, SRC_PLUGIN, plugin.gen, "plugin");
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
	plugin_send_msg(&m);
}

/* Returns <0 when the connection must close. */
static int handle(const uint8_t *buf, size_t len)
{
	Fpmd__FpmdMsg out = FPMD__FPMD_MSG__INIT;
	Fpmd__Hello hello = FPMD__HELLO__INIT;
	Fpmd__PluginMsg *m = fpmd__plugin_msg__unpack(NULL, len, buf);
	const char *err = NULL;
	int ret = 0;

	if (!m) {
		snprintf(st.last_error, sizeof(st.last_error),
			 "malformed protobuf message (%zu bytes)", len);
		return -EINVAL;
	}
	st.messages++;
	st.frames++;
	if (!plugin.hello_done && m->msg_case != FPMD__PLUGIN_MSG__MSG_HELLO) {
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
		plugin_send_msg(&out);
		if (m->hello->version != FPMD__API_VERSION__API_VERSION_CURRENT) {
			snprintf(st.last_error, sizeof(st.last_error),
				 "plugin '%s' speaks API version %u, fpmd %u",
				 m->hello->peer, m->hello->version,
				 FPMD__API_VERSION__API_VERSION_CURRENT);
			ret = -EPROTO;
			break;
		}
		plugin.hello_done = true;
		snprintf(st.peer, sizeof(st.peer), "%s", m->hello->peer);
		break;
	case FPMD__PLUGIN_MSG__MSG_REPLAY_BEGIN:
		plugin.gen++;
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
		if (feed_replay_sweep(&st, SRC_PLUGIN, plugin.gen,
				      "complete"))
			log_info("plugin: replay %llu complete: %llu routes "
				 "sent, %llu held, %llu stale removed",
				 (unsigned long long)replay_id,
				 (unsigned long long)m->replay_end->routes,
				 (unsigned long long)st.replay_refreshed,
				 (unsigned long long)st.replay_swept);
		else
			log_info("plugin: replay %llu complete: %llu routes "
				 "sent; removing the stale routes in slices",
				 (unsigned long long)replay_id,
				 (unsigned long long)m->replay_end->routes);
		out.msg_case = FPMD__FPMD_MSG__MSG_REPLAY_DONE;
		out.replay_done = m->replay_end;
		plugin_send_msg(&out);
		break;
	case FPMD__PLUGIN_MSG__MSG_ROUTE:
		st.route_msgs++;
		ret = plugin_route_op(m->route, &err);
		ack(m->route->seq, ret, err);
		ret = 0;
		plugin_route_op_status(m->route);
		break;
	case FPMD__PLUGIN_MSG__MSG_NEXTHOP:
		st.nexthop_msgs++;
		ret = plugin_nexthop_op(m->nexthop, &err);
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

/* The loop's time for the plugin per wakeup, as FPM's (feed/fpm.c):
 * issue 27, no iteration over 20 ms, even in a full-table replay or
 * a mass delete. What is left waits in the input buffer; rearm() asks
 * epoll to call again at once. */
#define PLUGIN_SLICE_NS 8000000ull

/* Handle the complete messages in the input buffer while few replies
 * wait, until deadline (CLOCK_MONOTONIC). 1: pushed back (replies pile
 * up), 2: out of time, 0: needs more input, <0: the connection was
 * closed. */
static int take_frames(uint64_t deadline)
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
		if (now_ns(CLOCK_MONOTONIC) >= deadline)
			return 2;
	}
	return 1;
}

/* Write queued replies; false when the connection had to be closed. */
static bool flush_out(void)
{
	int ret = out_failed ? -ENOMEM : wire_flush(plugin.conn_fd, &out);
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

/*
 * Read only while replies are taken; wake on EPOLLOUT while some wait.
 * Also wake on EPOLLOUT (at once: the socket is writable) while whole
 * messages already read wait in the input buffer: plugin_io's batch
 * budget can end just after a read, and level-triggered EPOLLIN fires
 * again only for new bytes, so a client that sent its last message and
 * waits for the acks would wait for ever.
 */
static void rearm(void)
{
	const uint8_t *msg;
	size_t len, pending = wire_out_pending(&out);
	bool unread = wire_frame(&in, PLUGIN_MAX_MSG, &msg, &len) != 0;
	bool room = pending < PLUGIN_OUT_HIGH;

	if (watch)
		watch(plugin.conn_fd, room, pending || unread);
}

int plugin_io(void)
{
	uint64_t writes = rib_stats.route_writes,
		 deadline = now_ns(CLOCK_MONOTONIC) + PLUGIN_SLICE_NS;
	bool got = false;
	int r;

	for (int batch = 0; batch < 64; batch++) {
		long n;

		if (!flush_out())
			return -EPIPE;
		r = take_frames(deadline);
		if (r < 0)
			return r;
		if (r == 2)
			break; /* the rest at the next wakeup (rearm) */
		if (r == 1) {
			if (!flush_out())
				return -EPIPE;
			if (wire_out_pending(&out) >= PLUGIN_OUT_HIGH)
				break; /* wait for EPOLLOUT */
			continue;
		}
		n = wire_fill(plugin.conn_fd, &in);
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
	plugin_status_queue_flush();
	if (!flush_out())
		return -EPIPE;
	rearm();
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
	if (plugin.conn_fd < 0 || !plugin_status_waiting())
		return;
	plugin_status_queue_flush();
	if (!flush_out())
		return;
	rearm();
}

void plugin_get_status(struct feed_status *out)
{
	feed_get_status(&st, hold_deadline_ns, plugin.conn_fd >= 0, out);
}

