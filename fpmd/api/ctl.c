// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Control socket: a unix stream socket (root:frr 0660) speaking the
 * protobuf API in proto/fpmd.proto. Each connection starts with a Hello
 * carrying the API version; a peer of another version is refused with
 * ERR_VERSION and disconnected. This file holds the socket, its
 * clients and their queues, and the one table every request is
 * dispatched from; the handlers live in ctl_change.c (what a client
 * changes), ctl_show.c, ctl_routes.c and ctl_lookup.c (what it reads).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "config.h"

#include "conf/conf.h"
#include "api/ctl.h"
#include "api/ctl_req.h"
#include "fpmd.pb-c.h"
#include "common/log.h"
#include "common/sock.h"
#include "fib/maps.h"
#include "rib/rib.h"
#include "common/util.h"
#include "common/wire.h"

#define CTL_MAX_CLIENTS 32

/* Build the next chunk only when less than this is waiting for the client. */
#define CTL_OUT_LOW (256u << 10)
/* A streamed show builds chunks for at most this long per event or
 * loop turn (a chunk of 1024 routes takes a few ms): a client that reads
 * as fast as fpmd writes is served a slice at a time, the loop goes on
 * between them (ctl_work continues the stream). */
#define CTL_TURN_NS (5 * 1000000ull)

struct ctl_client {
	int fd;
	bool hello;
	struct wire_buf in;
	/* Responses not yet taken by the client: the socket is non-blocking,
	 * so what does not fit waits here for EPOLLOUT. */
	struct wire_out out;
	struct route_stream stream; /* a 'show routes' being streamed */
	bool yielded; /* gave way after CTL_TURN_NS: ctl_work goes on */
};

static struct ctl_client clients[CTL_MAX_CLIENTS];
static int listen_fd = -1;
static bool clients_ready;
static char sock_path[108];

int ctl_open(const struct sock_cfg *sc)
{
	const char *path = sc->path;
	int fd = sock_serve("ctl", path, sc->owner, sc->group, sc->mode, "",
			    "take fpmctl's requests");

	if (fd < 0)
		return fd;
	snprintf(sock_path, sizeof(sock_path), "%s", path);
	listen_fd = fd;
	if (!clients_ready)
		for (int i = 0; i < CTL_MAX_CLIENTS; i++)
			clients[i].fd = -1;
	clients_ready = true;
	return fd;
}

void ctl_listen_close(void)
{
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(sock_path);
	}
	listen_fd = -1;
}

void ctl_close(void)
{
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (clients_ready && clients[i].fd >= 0)
			ctl_client_close(clients[i].fd);
	ctl_listen_close();
}

int ctl_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (int i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (clients[i].fd < 0) {
			/* A client that stops reading stalls only itself: its
			 * responses wait in its queue (ctl_client_io). */
			memset(&clients[i], 0, sizeof(clients[i]));
			clients[i].fd = fd;
			return fd;
		}
	}
	log_warn("ctl: too many clients (%d), refusing one", CTL_MAX_CLIENTS);
	close(fd);
	return -EMFILE;
}

static struct ctl_client *client_of(int fd)
{
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (clients[i].fd == fd)
			return &clients[i];
	return NULL;
}

void ctl_client_close(int fd)
{
	struct ctl_client *c = client_of(fd);

	if (!c)
		return;
	wire_buf_free(&c->in);
	wire_out_free(&c->out);
	ctl_routes_end(&c->stream);
	close(fd);
	c->fd = -1;
}

/* ---- output queue -------------------------------------------------------- */

static size_t out_pending(const struct ctl_client *c)
{
	return wire_out_pending(&c->out);
}

static int queue_msg(struct ctl_client *c, const ProtobufCMessage *msg)
{
	return wire_queue(&c->out, msg);
}

static int flush(struct ctl_client *c)
{
	return wire_flush(c->fd, &c->out);
}

/* Queue chunks of a streamed show while little waits, and write;
 * -EAGAIN while the client cannot take more or its snapshot is still
 * being taken (ctl_work goes on with it). */
static int pump(struct ctl_client *c)
{
	uint64_t until = now_ns(CLOCK_MONOTONIC) + CTL_TURN_NS;
	int ret;

	c->yielded = false;
	for (;;) {
		if (c->stream.build) {
			ret = flush(c);
			return ret ? ret : -EAGAIN;
		}
		while (c->stream.keys && out_pending(c) < CTL_OUT_LOW) {
			Fpmd__Response rsp = FPMD__RESPONSE__INIT;
			struct arena a = { 0 };

			ret = ctl_routes_next(&c->stream, &a, &rsp);
			if (!ret)
				ret = queue_msg(c, &rsp.base);
			arena_free(&a);
			if (ret)
				return ret;
			if (!rsp.more)
				ctl_routes_end(&c->stream);
			if (c->stream.keys &&
			    now_ns(CLOCK_MONOTONIC) >= until) {
				/* All written: the next chunks next turn
				 * (ctl_work); a full socket wakes us by
				 * EPOLLOUT instead. */
				ret = flush(c);
				c->yielded = !ret;
				return ret ? ret : -EAGAIN;
			}
		}
		ret = flush(c);
		if (ret || !c->stream.keys)
			return ret;
	}
}

/* ---- requests ------------------------------------------------------------ */

static int (*reload_fn)(char *err, size_t elen);

void ctl_set_reload(int (*fn)(char *err, size_t elen))
{
	reload_fn = fn;
}

static int do_hello(struct ctl_req *r)
{
	const Fpmd__Hello *in = r->q->hello;
	Fpmd__Hello *hello = arena_alloc(r->a, sizeof(*hello));

	if (!hello)
		return -ENOMEM;
	fpmd__hello__init(hello);
	hello->version = FPMD__API_VERSION__API_VERSION_CURRENT;
	hello->peer = "fpmd " PACKAGE_VERSION;
	r->rsp->hello = hello;
	if (in->version != FPMD__API_VERSION__API_VERSION_CURRENT) {
		log_warn("ctl: peer '%s' speaks API version %u, we speak "
			 "%u: refused",
			 in->peer, in->version,
			 FPMD__API_VERSION__API_VERSION_CURRENT);
		r->rsp->status = FPMD__STATUS__ERR_VERSION;
		r->rsp->error = "API version mismatch";
		r->close = -EPROTO;
		return 0;
	}
	r->client->hello = true;
	return 0;
}

static int do_reload(struct ctl_req *r)
{
	char *why = arena_alloc(r->a, 1024);

	if (!reload_fn) {
		r->err = "reload is not available";
		return -EINVAL;
	}
	if (why && reload_fn(why, 1024)) {
		r->err = why;
		return -EINVAL;
	}
	return 0;
}

enum {
	CTL_BEFORE_HELLO = 1 << 0, /* the only request a new client may send */
	CTL_LOGGED = 1 << 1,	   /* logged: "ctl: route add 10.0.0.0/8" */
	/* The reply says it is done: in the fast path too. */
	CTL_COMMIT = 1 << 2,
	/* What a client changes. */
	CTL_CHANGE = CTL_LOGGED | CTL_COMMIT,
};

/* Every request: its handler, and what the socket does around it. */
static const struct ctl_request {
	Fpmd__Request__ReqCase req;
	const char *what; /* CTL_LOGGED: the change, in the log */
	ctl_handler *fn;
	unsigned int flags;
} requests[] = {
	{ FPMD__REQUEST__REQ_HELLO, "hello", do_hello, CTL_BEFORE_HELLO },
	{ FPMD__REQUEST__REQ_ROUTE_ADD, "route add", ctl_route, CTL_CHANGE },
	{ FPMD__REQUEST__REQ_ROUTE_DEL, "route del", ctl_route, CTL_CHANGE },
	{ FPMD__REQUEST__REQ_NEXTHOP_ADD, "nexthop add", ctl_nexthop,
	  CTL_CHANGE },
	{ FPMD__REQUEST__REQ_NEXTHOP_DEL, "nexthop del", ctl_nexthop,
	  CTL_CHANGE },
	{ FPMD__REQUEST__REQ_NEIGH_ADD, "neighbor add", ctl_neigh, CTL_CHANGE },
	{ FPMD__REQUEST__REQ_NEIGH_DEL, "neighbor del", ctl_neigh, CTL_CHANGE },
	{ FPMD__REQUEST__REQ_SHOW, "show", ctl_show, 0 },
	{ FPMD__REQUEST__REQ_RELOAD, "reload", do_reload, 0 },
	{ FPMD__REQUEST__REQ_LOOKUP, "lookup", ctl_lookup, 0 },
	{ FPMD__REQUEST__REQ_CLEAR_COUNTERS, "clear counters",
	  ctl_clear_counters, 0 },
};

static const struct ctl_request *request_of(Fpmd__Request__ReqCase req)
{
	for (size_t k = 0; k < sizeof(requests) / sizeof(requests[0]); k++)
		if (requests[k].req == req)
			return &requests[k];
	return NULL;
}

static int dispatch(const struct ctl_request *e, struct ctl_req *r)
{
	int ret;

	if (!e) {
		r->err = "unknown request";
		return -EINVAL;
	}
	ret = e->fn(r);
	if (e->flags & CTL_LOGGED)
		ctl_log_change(r, e->what, ret);
	if (!ret && (e->flags & CTL_COMMIT) && rib_published(maps_commit(0))) {
		ret = -EAGAIN;
		r->err = "applied, but the new IPv4 table parts are not "
			 "published yet (state unpublished; fpmd retries)";
	}
	return ret;
}

static int handle(struct ctl_client *c, const uint8_t *buf, size_t len)
{
	Fpmd__Response rsp = FPMD__RESPONSE__INIT;
	const struct ctl_request *e;
	struct arena a = { 0 };
	struct ctl_req r = {
		.client = c, .stream = &c->stream, .rsp = &rsp, .a = &a
	};
	Fpmd__Request *req;
	int ret;

	req = fpmd__request__unpack(NULL, len, buf);
	if (!req) {
		log_warn("ctl: malformed request (%zu bytes), closing the "
			 "connection",
			 len);
		rsp.status = FPMD__STATUS__ERR_INVALID;
		rsp.error = "malformed protobuf request";
		queue_msg(c, &rsp.base);
		return -EINVAL;
	}
	e = request_of(req->req_case);
	if (!c->hello && !(e && (e->flags & CTL_BEFORE_HELLO))) {
		rsp.status = FPMD__STATUS__ERR_VERSION;
		rsp.error = "expected a Hello first";
		queue_msg(c, &rsp.base);
		fpmd__request__free_unpacked(req, NULL);
		return -EPROTO;
	}
	r.q = req;
	ret = dispatch(e, &r);
	if (ret) {
		rsp.status = wire_status_of(ret);
		rsp.error = (char *)(r.err ? r.err : strerror(-ret));
	}
	/* A streamed show answers with its chunks (pump), errors at once. */
	if ((ret || !ctl_stream_active(&c->stream)) &&
	    queue_msg(c, &rsp.base))
		r.close = -ENOMEM;
	arena_free(&a);
	fpmd__request__free_unpacked(req, NULL);
	return r.close;
}

int ctl_work(void)
{
	int wait = -1;

	for (int i = 0; clients_ready && i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *c = &clients[i];
		int ret;

		if (c->fd >= 0 && c->yielded) {
			/* A stream that gave way: its next chunks. */
			ctl_client_io(c->fd);
			if (c->fd >= 0 && c->yielded)
				wait = 0;
			continue;
		}
		if (c->fd < 0 || !c->stream.build)
			continue;
		ret = ctl_routes_build(&c->stream);
		if (ret == 1) {
			/* Ready: stream it, then take what the client sent
			 * meanwhile. */
			ctl_client_io(c->fd);
		} else if (!ret) {
			wait = 0;
		} else if (ret == -EINPROGRESS) {
			if (wait < 0)
				wait = 1;
		} else {
			Fpmd__Response rsp = FPMD__RESPONSE__INIT;

			log_warn("ctl: client %d: show routes: %s", c->fd,
				 strerror(-ret));
			ctl_routes_end(&c->stream);
			rsp.status = wire_status_of(ret);
			rsp.error = strerror(-ret);
			queue_msg(c, &rsp.base);
			ctl_client_io(c->fd);
		}
	}
	return wait;
}

/* Called on every event of a client (edge-triggered, in and out): write
 * what is queued, then take the next request only once everything before
 * it has been sent, so a client that reads slowly is answered slowly
 * (never disconnected), and one that sends without reading fills only
 * its own input buffer. */
int ctl_client_io(int fd)
{
	struct ctl_client *c = client_of(fd);
	const uint8_t *msg;
	size_t len;
	int ret;

	if (!c)
		return -EBADF;
	for (;;) {
		long n;

		ret = pump(c);
		if (ret == -EAGAIN)
			return 0;
		if (ret) {
			if (ret == -EPIPE || ret == -ECONNRESET)
				log_debug("ctl: client %d went away", fd);
			else
				log_warn("ctl: client %d: %s, closing the "
					 "connection",
					 fd, strerror(-ret));
			ctl_client_close(fd);
			return ret;
		}
		ret = wire_frame(&c->in, WIRE_MAX_REQUEST, &msg, &len);
		if (ret < 0) {
			log_warn("ctl: request larger than %u bytes, closing "
				 "the connection",
				 WIRE_MAX_REQUEST);
			ctl_client_close(fd);
			return ret;
		}
		if (ret == 1) {
			ret = handle(c, msg, len);
			wire_consume(&c->in, WIRE_HDR + len);
			if (ret) {
				/* Best effort: the error response first. */
				flush(c);
				ctl_client_close(fd);
				return ret;
			}
			continue;
		}
		n = wire_fill(fd, &c->in);
		if (n == -EAGAIN)
			return 0;
		if (n <= 0) {
			ctl_client_close(fd);
			return -ECONNRESET;
		}
	}
}
