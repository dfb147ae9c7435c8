/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the FPM feed's units share; not for other folders. fpm.c: the
 * server and the connection; fpm_frame.c: FPM framing and the checks of
 * the netlink messages; fpm_apply.c: routes and nexthops into the RIB;
 * fpm_replay.c: settle, sweep and hold; fpm_status.c: route status
 * notifications back to zebra.
 */
#ifndef FPMD_FPM_INTERNAL_H
#define FPMD_FPM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "feed/fpm.h"

#define FPM_VERSION 1
#define FPM_TYPE_NETLINK 1
#define FPM_HDR 4

#ifndef RTA_NH_ID
#define RTA_NH_ID 30
#endif

/* The feed: one zebra at a time. */
struct fpm_state {
	int conn_fd, timer_fd;
	int status_id; /* our rib_status_subscribe() id */
	uint32_t gen; /* this connection's: its replay refreshes with it */
	struct feed_status st;
	/* The frame being applied: its routes are answered once it is in. */
	const struct nlmsghdr *const *cur_msgs;
	size_t cur_n;
	/* The loop's time for this wakeup (fpm_io; 0: no limit) and, when
	 * it ran out inside a frame, the messages of the frame at the head
	 * of the buffer already applied. */
	uint64_t deadline_ns;
	size_t frame_done;
	void (*watch)(int fd, bool in, bool out);
};
extern struct fpm_state fpm;

/* fpm_frame.c: past fpm.deadline_ns (fpm_feed stops there). */
bool fpm_slice_over(void);
/* fpm_frame.c: the attributes of a message fpm_feed() checked. */
struct attrs {
	const struct nlattr *tb[64];
};
int fpm_attrs_parse(const struct nlmsghdr *nlh, size_t hdrlen, struct attrs *a,
		    int maxtype, char *why, size_t wlen);
/* Bytes to the next RTA_MULTIPATH entry (the last may lack padding). */
size_t fpm_rtnh_step(const struct rtnexthop *nh, size_t left);
bool fpm_route_family_ok(const struct nlmsghdr *nlh);
/* A route message's prefix and table. */
void fpm_route_key(const struct nlmsghdr *nlh, struct prefix *p,
		   uint32_t *table, struct attrs *a);

/* fpm_apply.c */
void fpm_route_apply(const struct nlmsghdr *nlh, bool replaced_next);
void fpm_nexthop_apply(const struct nlmsghdr *nlh);
/* Forget the groups held for a member (the connection closed). */
void fpm_held_clear(void);

/* fpm_replay.c */
/* zebra connected: a new generation, its replay settles when quiet. */
void fpm_replay_begin(void);
/* Input arrived: the replay is not quiet yet. */
void fpm_replay_input(void);
/* zebra left: hold its routes. */
void fpm_replay_hold(void);
/* While zebra is away: when the hold ends (0: not holding). */
uint64_t fpm_hold_deadline(void);

/* fpm_status.c */
/* The RIB's "route status changed" hook. */
void fpm_status_changed(struct route *r, void *arg);
/* The reply to one RTM_NEWROUTE of the frame just applied. */
void fpm_status_reply(const struct nlmsghdr *nlh);
/* Write what waits; watch the socket for the rest. */
void fpm_out_flush(void);
/* Drop what waits (the connection is gone). */
void fpm_out_reset(void);

#endif
