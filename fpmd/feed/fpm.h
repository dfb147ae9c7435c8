/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FPM server: zebra's stock dplane_fpm_nl connects here and streams
 * netlink route and nexthop messages (FPM framing: version 1, type 1,
 * 16-bit big-endian length including the 4-byte header).
 */
#ifndef FPMD_FPM_H
#define FPMD_FPM_H

#include <stdbool.h>
#include <stdint.h>

#include "feed/feed.h"
#include "common/util.h"

struct route;


/* Listen on one more address; returns the listening fd or -errno. */
int fpm_open(const char *addr, uint16_t port);
/* Stop listening (a connected zebra stays). */
void fpm_listen_close(void);
void fpm_close(void);
/* A zebra connects on listen_fd: returns its fd or -errno. */
int fpm_accept(int listen_fd);
/* Data on the connection; returns <0 once it is closed. */
int fpm_io(void);
/* The settle/hold timer's fd, and what to do when it fires. */
int fpm_timer_fd(void);
void fpm_timer(void);
void fpm_get_status(struct feed_status *st);
/* How fpm_io asks the event loop to watch the connection: out while
 * route status notifications wait for the socket. */
void fpm_set_watch(void (*fn)(int fd, bool in, bool out));

/* One route status notification (fpm/route-status), as zebra's frame
 * named the route: its rtmsg fields, RTA_TABLE and RTA_PRIORITY if it
 * had them. */
struct fpm_route_status {
	struct prefix p;
	uint32_t seq;
	uint8_t rtproto, rtm_type, rtm_table, rtm_scope;
	bool has_table, has_priority;
	uint32_t table, priority;
	bool offloaded; /* RTM_F_OFFLOAD, else RTM_F_OFFLOAD_FAILED */
};

/* Queue it for zebra (never blocks): 0, -ENOTCONN (no zebra, or the
 * switch is off), -ENOBUFS (zebra does not read: dropped, counted). */
int fpm_route_status_send(const struct fpm_route_status *rs);
/* r's offload status changed (a neighbor resolved, an egress left the
 * fast path, ...): tell zebra, if FPM gave r and fpm/route-status is on.
 * Sends at once. A route of the frame being applied is left to that
 * frame's own reply. */
void fpm_route_changed(const struct route *r);
/* Write the notifications fpm_route_changed() queued (event loop). */
void fpm_status_flush(void);
/* fpmd stops and XDP goes: every FPM route "offload failed" to zebra,
 * written (for up to 2 s) before the connection closes. */
void fpm_status_parting(void);
/* Frames read but not yet applied (the last fpm_io ran out of time):
 * the loop calls fpm_io() again without waiting for the socket. */
bool fpm_backlog(void);

/* Decode and apply one FPM stream chunk (exposed for tests/fuzzing):
 * returns bytes consumed, or -1 with why filled on malformed input.
 * Past the loop's slice (fpm_io) it stops between frames or routes: the
 * frame at the head of what is left may be applied in part. */
long fpm_feed(const uint8_t *buf, size_t len, char *why, size_t wlen);

#endif
