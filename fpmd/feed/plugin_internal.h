/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the plugin feed's units share; not for other folders. plugin.c:
 * the socket, the connection and the dispatch of messages; plugin_ops.c:
 * RouteOp and NexthopOp into the RIB; plugin_status.c: route status
 * back to zebra.
 */
#ifndef FPMD_PLUGIN_INTERNAL_H
#define FPMD_PLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpmd.pb-c.h"
#include "feed/plugin.h"
#include "common/util.h"

/* The feed: one plugin (one zebra) at a time. */
struct plugin_state {
	int conn_fd;
	bool hello_done;
	uint32_t gen; /* the current replay's: what it refreshes */
};
extern struct plugin_state plugin;

/* plugin.c */
/* Queue a reply (written by plugin_io()). */
void plugin_send_msg(const Fpmd__FpmdMsg *m);
/* Bytes of replies zebra has not taken yet. */
size_t plugin_out_pending(void);

/* plugin_ops.c: 0 or -errno with err set; the RIB's result. */
int plugin_route_op(const Fpmd__RouteOp *r, const char **err);
int plugin_nexthop_op(const Fpmd__NexthopOp *n, const char **err);
/* A RouteOp's prefix, host bits cleared as zebra means them; false if it
 * is not a 4- or 16-byte address with a length that fits. */
bool plugin_prefix_of(const Fpmd__Prefix *pp, struct prefix *p);

/* plugin_status.c */
/* Hook into the RIB's "route status changed" (once). */
void plugin_status_subscribe(void);
/* After the Ack of an install: zebra has a new route entry to mark. */
void plugin_route_op_status(const Fpmd__RouteOp *r);
/* Forget what waits (the connection is gone). */
void plugin_status_queue_clear(void);
/* Move queued statuses to the replies while zebra takes them. */
void plugin_status_queue_flush(void);
/* Do statuses wait? */
bool plugin_status_waiting(void);

#endif
