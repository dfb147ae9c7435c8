/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the control socket: what a request handler is given, the arena
 * its response is built in, and the handlers of each ctl_*.c that ctl.c
 * dispatches from its one table.
 */
#ifndef FPMD_CTL_REQ_H
#define FPMD_CTL_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpmd.pb-c.h"
#include "rib/rib.h"

/* Everything allocated for one response, freed after sending. */
struct arena {
	void **p;
	size_t n, cap;
};

void *arena_alloc(struct arena *a, size_t sz);
char *arena_str(struct arena *a, const char *s);
void arena_free(struct arena *a);
char *arena_fmt(struct arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
ProtobufCBinaryData pb_bytes(struct arena *a, const void *d, size_t len);

/* A 'show routes' being streamed: a sorted snapshot of the keys, turned
 * into chunks as the client reads (ctl_routes.c). keys NULL: none; build
 * set: the snapshot of a large table is still being taken (a slice per
 * loop iteration, then sorted in a thread). */
struct route_key;
struct route_build;
struct route_stream {
	struct route_key *keys;
	size_t nkeys, next;
	struct route_build *build;
};

static inline bool ctl_stream_active(const struct route_stream *s)
{
	return s->keys || s->build;
}

/* One request being answered. */
struct ctl_req {
	struct ctl_client *client;
	struct route_stream *stream; /* the client's */
	const Fpmd__Request *q;
	Fpmd__Response *rsp;
	struct arena *a;
	const char *err; /* the error a failing handler gives */
	int close;	 /* non-zero: close the connection after the reply */
};

/* A handler: 0, or -errno with r->err saying why (default: strerror). */
typedef int ctl_handler(struct ctl_req *r);

/*
 * ctl_pb.c: protobuf values from and to the RIB's. pb_get_*: a request's
 * prefix (4 or 16 bytes, no host bits set) or interface name (empty: 0),
 * -errno and *err on bad input. The others build a response's values.
 */
int pb_get_prefix(const Fpmd__Prefix *in, struct prefix *p, const char **err);
int pb_get_ifindex(const char *name, uint32_t *ifindex, const char **err);
Fpmd__Prefix *pb_prefix(struct arena *a, const struct prefix *in);
/* The interface's name, "?" when gone, "" for 0; buf: IF_NAMESIZE. */
const char *ctl_ifname(uint32_t ifindex, char *buf);
int pb_source(int src);
/* A nexthop or group as 'show nexthops' shows it. */
Fpmd__Nexthop *pb_nexthop(struct arena *a, struct nexthop *id);

/* ctl_change.c: what a client changes. Route, nexthop, neighbor: add or
 * del, as the request's case says. */
ctl_handler ctl_route, ctl_nexthop, ctl_neigh, ctl_clear_counters;
/* "ctl: route add refused: route 10.0.0.0/8: ..." (warning), or the
 * change at debug level. */
void ctl_log_change(const struct ctl_req *r, const char *what, int ret);

/* ctl_show.c, ctl_routes.c, ctl_lookup.c: what a client reads. */
ctl_handler ctl_show, ctl_lookup;
int ctl_routes_start(struct route_stream *s, const Fpmd__ShowRequest *q,
		     const char **err);
/* The next chunk of the stream; rsp->more says whether one follows. */
int ctl_routes_next(struct route_stream *s, struct arena *a,
		    Fpmd__Response *rsp);
void ctl_routes_end(struct route_stream *s);
/*
 * Take the next slice of a snapshot being built (s->build set): 1 when
 * the keys are ready (streaming can start), 0 when more slices are
 * waiting, -EINPROGRESS while a thread sorts them, -ENOMEM.
 */
int ctl_routes_build(struct route_stream *s);

#endif
