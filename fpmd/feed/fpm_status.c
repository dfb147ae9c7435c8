// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FPM route status notifications. With fpm/route-status, every route a
 * frame adds is answered on the same connection with the status FRR >= 8.5
 * reads (doc/developer/fpm.rst, "Route Status Notification from ASIC"): an
 * RTM_NEWROUTE with RTM_F_OFFLOAD when XDP forwards it,
 * RTM_F_OFFLOAD_FAILED when the kernel does; and so is every later change
 * of a route's status. FRR 8.4 reads and discards them.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "conf/conf.h"
#include "feed/fpm_internal.h"
#include "common/log.h"
#include "rib/rib.h"
#include "common/util.h"
#include "common/wire.h"

/* Route status notifications zebra has not read yet: 48 (IPv4) to 60
 * bytes each, so some 150k routes of a replay; past it they are dropped
 * and counted. A zebra that reads keeps this near empty. */
#define FPM_OUT_MAX (8u << 20)

static struct wire_out out; /* route status notifications to send */
static bool out_drop_logged;
/* Replies to routes the fast path does not see yet (rib_published): sent
 * by fpm_status_flush(), after the loop turn's commit, with the status
 * then; the route's queued bit stands for it meanwhile. */
static struct {
	struct fpm_route_status *v;
	size_t n, cap;
} later;

/* zebra's RTA_PRIORITY on every route it sends (NL_DEFAULT_ROUTE_METRIC). */
#define ZEBRA_ROUTE_METRIC 20

/* Does XDP finish packets to p itself (forwards, or drops a blackhole)? */
static bool prefix_offloaded(const struct prefix *p)
{
	const struct route *r = rib_route_find(p);
	bool offloaded;

	if (!r || r->selected < 0)
		return false;
	/* The one definition the plugin feed uses too (fpmd.8, OFFLOAD
	 * STATUS): the state, and an attached interface takes the family. */
	rib_route_status(r, r->selected, &offloaded);
	return offloaded;
}

/* Queue one FPM frame for zebra; never blocks, never grows past
 * FPM_OUT_MAX: what zebra does not read is dropped and counted. */
static int out_put(const uint8_t *frame, size_t len)
{
	struct wire_buf *b = &out.b;

	if (out.off && out.off == b->len)
		b->len = out.off = 0;
	if (wire_out_pending(&out) + len > FPM_OUT_MAX) {
		fpm.st.status_dropped++;
		if (!out_drop_logged)
			log_warn(
			    "fpm: %s: zebra is not reading route status "
			    "notifications (%zu bytes wait): dropping them "
			    "until it does (counted in 'fpmctl show fpm')",
			    fpm.st.peer, wire_out_pending(&out));
		out_drop_logged = true;
		return -ENOBUFS;
	}
	if (b->len + len > b->cap && out.off) {
		memmove(b->data, b->data + out.off, b->len - out.off);
		b->len -= out.off;
		out.off = 0;
	}
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		uint8_t *d;

		while (cap < b->len + len)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			fpm.st.status_dropped++;
			return -ENOMEM;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, frame, len);
	b->len += len;
	fpm.st.status_sent++;
	return 0;
}

/* Send what zebra takes now; wake on EPOLLOUT for the rest. A write
 * error is left to the read side, which sees the connection go. */
void fpm_out_flush(void)
{
	int ret;

	if (fpm.conn_fd < 0)
		return;
	ret = wire_flush(fpm.conn_fd, &out);
	if (ret && ret != -EAGAIN)
		wire_out_free(&out);
	if (fpm.watch)
		fpm.watch(fpm.conn_fd, true, wire_out_pending(&out) > 0);
}

int fpm_route_status_send(const struct fpm_route_status *rs)
{
	uint8_t buf[FPM_HDR + 128] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	size_t len;

	if (!cfg.fpm_route_status || fpm.conn_fd < 0)
		return -ENOTCONN;
	nlh = mnl_nlmsg_put_header(buf + FPM_HDR);
	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST; /* FRR skips anything else */
	nlh->nlmsg_seq = rs->seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = rs->p.family;
	rtm->rtm_dst_len = rs->p.len;
	rtm->rtm_table = rs->rtm_table;
	rtm->rtm_protocol = rs->rtproto;
	rtm->rtm_scope = rs->rtm_scope;
	rtm->rtm_type = rs->rtm_type;
	rtm->rtm_flags = rs->offloaded ? RTM_F_OFFLOAD : RTM_F_OFFLOAD_FAILED;
	/* What FRR matches the RIB entry by: table, destination, the type
	 * (from the protocol), the metric for kernel routes. No nexthops:
	 * netlink_route_notify_read_ctx() reads none. */
	mnl_attr_put(nlh, RTA_DST, addr_len(rs->p.family), rs->p.addr);
	if (rs->has_table)
		mnl_attr_put_u32(nlh, RTA_TABLE, rs->table);
	if (rs->has_priority)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, rs->priority);
	len = FPM_HDR + nlh->nlmsg_len;
	buf[0] = FPM_VERSION;
	buf[1] = FPM_TYPE_NETLINK;
	buf[2] = (uint8_t)(len >> 8);
	buf[3] = (uint8_t)len;
	return out_put(buf, len);
}

/* The status notification of r's FPM entry, as zebra's frame for it was
 * (netlink_route_multipath_msg_encode): only main-table routes are in
 * fpmd's table. */
static void route_status_of(const struct route *r, bool offloaded,
			    struct fpm_route_status *rs)
{
	static const uint8_t rtn[] = {
		[RT_UNICAST] = RTN_UNICAST,
		[RT_BLACKHOLE] = RTN_BLACKHOLE,
		[RT_UNREACHABLE] = RTN_UNREACHABLE,
		[RT_PROHIBIT] = RTN_PROHIBIT,
		[RT_LOCAL] = RTN_LOCAL,
		[RT_KERNEL] = RTN_UNICAST,
	};
	const struct route_entry *e = &r->e[SRC_FPM];

	*rs = (struct fpm_route_status){
		.p = r->p,
		.rtproto = e->rtproto,
		.rtm_type = rtn[e->type],
		.rtm_table = RT_TABLE_MAIN,
		.rtm_scope = RT_SCOPE_UNIVERSE,
		.has_priority = true,
		.priority = ZEBRA_ROUTE_METRIC,
		.offloaded = offloaded,
	};
}

void fpm_route_changed(const struct route *r)
{
	struct fpm_route_status rs;

	if (!r->e[SRC_FPM].present || !cfg.fpm_route_status ||
	    fpm.conn_fd < 0)
		return;
	/* Its frame's reply waits for the commit: that one tells. */
	if (rib_status_queued(r, fpm.status_id))
		return;
	/* A route the frame being applied adds gets its reply at the end of
	 * the frame: one, with the frame's fields. */
	for (size_t i = 0; i < fpm.cur_n; i++) {
		struct prefix p;
		uint32_t table;
		struct attrs a;

		if (fpm.cur_msgs[i]->nlmsg_type != RTM_NEWROUTE ||
		    !fpm_route_family_ok(fpm.cur_msgs[i]))
			continue;
		fpm_route_key(fpm.cur_msgs[i], &p, &table, &a);
		if (table == RT_TABLE_MAIN && !memcmp(&p, &r->p, sizeof(p)))
			return;
	}
	route_status_of(r, prefix_offloaded(&r->p), &rs);
	fpm_route_status_send(&rs);
}

/*
 * fpmd stops and takes XDP off the interfaces: every route zebra has from
 * the FPM feed leaves the fast path. zebra has no way to drop a mark, so
 * each gets RTM_F_OFFLOAD_FAILED (what is now true), written before the
 * connection closes; up to FPM_PARTING_MS, and what zebra does not take
 * by then is counted as dropped. A restart that keeps forwarding
 * (--keep-forwarding, SIGUSR2) sends nothing: the marks stay right.
 */
#define FPM_PARTING_MS 2000

void fpm_status_parting(void)
{
	struct hnode *n, *tmp;
	uint64_t deadline;
	unsigned int sent = 0;
	size_t i;

	if (!cfg.fpm_route_status || fpm.conn_fd < 0)
		return;
	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);
		struct fpm_route_status rs;

		if (!r->e[SRC_FPM].present)
			continue;
		route_status_of(r, false, &rs);
		if (!fpm_route_status_send(&rs))
			sent++;
	}
	deadline = now_ns(CLOCK_MONOTONIC) + FPM_PARTING_MS * 1000000ull;
	while (wire_out_pending(&out) && now_ns(CLOCK_MONOTONIC) < deadline) {
		struct pollfd pfd = { .fd = fpm.conn_fd, .events = POLLOUT };
		int ret;

		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			break;
		ret = wire_flush(fpm.conn_fd, &out);
		if (ret && ret != -EAGAIN)
			break;
	}
	log_info("fpm: fpmd stops: told zebra %u route%s leave the fast path "
		 "(offload failed)%s",
		 sent, sent == 1 ? "" : "s",
		 wire_out_pending(&out) ? "; zebra did not read them all" : "");
}

/* The RIB's "route status changed" hook: queued here, written by
 * fpm_status_flush() once per event-loop turn (a guard may change
 * thousands of routes at once: one write, not one per route). */
void fpm_status_changed(struct route *r, void *arg)
{
	(void)arg;
	fpm_route_changed(r);
}

void fpm_status_flush(void)
{
	for (size_t k = 0; k < later.n; k++) {
		struct fpm_route_status *rs = &later.v[k];
		struct route *r = rib_route_find(&rs->p);

		if (r)
			rib_status_take(r, fpm.status_id);
		rs->offloaded = prefix_offloaded(&rs->p);
		fpm_route_status_send(rs);
	}
	later.n = 0;
	if (fpm.conn_fd >= 0)
		fpm_out_flush();
}

/* Keep rs until fpm_status_flush(); false if it cannot wait. */
static bool reply_later(const struct fpm_route_status *rs, struct route *r)
{
	if (later.n == later.cap) {
		size_t cap = later.cap ? later.cap * 2 : 256;
		struct fpm_route_status *v = realloc(later.v, cap * sizeof(*v));

		if (!v)
			return false;
		later.v = v;
		later.cap = cap;
	}
	later.v[later.n++] = *rs;
	rib_status_queue(r, fpm.status_id);
	return true;
}

/* The status of the route one RTM_NEWROUTE of a frame added, as the
 * frame named it. */
void fpm_status_reply(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct fpm_route_status rs = { 0 };
	uint32_t table;
	struct attrs a;

	if (!fpm_route_family_ok(nlh))
		return;
	fpm_route_key(nlh, &rs.p, &table, &a);
	rs.seq = nlh->nlmsg_seq;
	rs.rtproto = rtm->rtm_protocol;
	rs.rtm_type = rtm->rtm_type;
	rs.rtm_table = rtm->rtm_table;
	rs.rtm_scope = rtm->rtm_scope;
	rs.has_table = a.tb[RTA_TABLE];
	rs.table = table;
	if (a.tb[RTA_PRIORITY] &&
	    mnl_attr_get_payload_len(a.tb[RTA_PRIORITY]) == 4) {
		rs.has_priority = true;
		rs.priority = mnl_attr_get_u32(a.tb[RTA_PRIORITY]);
	}
	/* Other tables are never in the fast path. */
	if (table == RT_TABLE_MAIN) {
		struct route *r = rib_route_find(&rs.p);

		/* In a table part the loop turn's commit publishes: answer
		 * after it, with what is true then. */
		if (r && rib_route_unpublished(r) && reply_later(&rs, r))
			return;
		rs.offloaded = prefix_offloaded(&rs.p);
	}
	fpm_route_status_send(&rs);
}

void fpm_out_reset(void)
{
	for (size_t k = 0; k < later.n; k++) {
		struct route *r = rib_route_find(&later.v[k].p);

		if (r)
			rib_status_take(r, fpm.status_id);
	}
	free(later.v);
	memset(&later, 0, sizeof(later));
	wire_out_free(&out);
	out_drop_logged = false;
}
