// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FPM: routes and nexthops from zebra's dplane_fpm_nl.
 *
 * zebra replays everything on every connect, with no end marker, and drops
 * what changed while it was disconnected. So each connection starts a new
 * generation; every route and nexthop it sends is stamped with it, and
 * once the stream has been quiet for the settle time, what the replay did
 * not refresh is swept. A refreshed entry whose value did not change is
 * never rewritten. While zebra is away the last state keeps forwarding
 * for the hold time.
 *
 * A frame is validated completely before any of it is applied: malformed
 * input closes the connection and changes nothing.
 *
 * With fpm/route-status, every route a frame adds is answered on the same
 * connection with the status FRR >= 8.5 reads (doc/developer/fpm.rst,
 * "Route Status Notification from ASIC"): an RTM_NEWROUTE with
 * RTM_F_OFFLOAD when XDP forwards it, RTM_F_OFFLOAD_FAILED when the kernel
 * does. FRR 8.4 reads and discards them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "conf/conf.h"
#include "feed/fpm.h"
#include "common/log.h"
#include "kernel/nl.h"
#include "rib/rib.h"
#include "common/util.h"
#include "common/wire.h"

#define FPM_VERSION 1
#define FPM_TYPE_NETLINK 1
#define FPM_HDR 4
#define FPM_RCVBUF (1u << 20)
/* Route status notifications zebra has not read yet: 48 (IPv4) to 60
 * bytes each, so some 150k routes of a replay; past it they are dropped
 * and counted. A zebra that reads keeps this near empty. */
#define FPM_OUT_MAX (8u << 20)

#ifndef RTA_NH_ID
#define RTA_NH_ID 30
#endif

/* Sanitized builds (gcc's __SANITIZE_ADDRESS__, clang's feature) mark the
 * unused tail of the frame buffer: a read past the frame is reported,
 * not served from an older frame's bytes. */
#if defined(__SANITIZE_ADDRESS__)
#define FPM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FPM_ASAN 1
#endif
#endif
#ifdef FPM_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

static int listen_fds[FPMD_MAX_FPM_LISTEN], n_listen, conn_fd = -1,
	   timer_fd = -1;
static uint8_t *rbuf;
static size_t rlen, rcap;
static uint32_t gen;
static uint64_t settle_deadline_ns, hold_deadline_ns, kcheck_ns;
static uint64_t frames_at_connect;
static struct feed_status st = { .replay_state = "none" };
static struct wire_out out; /* route status notifications to send */
static int status_id = -1;  /* our rib_status_subscribe() id */
static void status_changed(struct route *r, void *arg);
static bool out_drop_logged;
/* The frame being applied: its routes are answered once it is in. */
static const struct nlmsghdr *const *cur_msgs;
static size_t cur_n;
static void (*watch)(int fd, bool in, bool out);
static void held_clear(void);
static bool held_has(uint32_t id);

void fpm_set_watch(void (*fn)(int fd, bool in, bool out))
{
	watch = fn;
}

static void timer_arm(uint64_t deadline_ns)
{
	struct itimerspec its = { 0 };
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t d = deadline_ns > now ? deadline_ns - now : 1;

	its.it_value.tv_sec = (time_t)(d / 1000000000ull);
	its.it_value.tv_nsec = (long)(d % 1000000000ull);
	timerfd_settime(timer_fd, 0, &its, NULL);
}

int fpm_open(const char *addr, uint16_t port)
{
	bool v6;
	int fd;

	if (status_id < 0)
		status_id = rib_status_subscribe(status_changed, NULL);
	fd = tcp_listen(addr, port, 4, false);
	if (fd < 0)
		return fd;
	if (n_listen == FPMD_MAX_FPM_LISTEN) {
		close(fd);
		return -ENOSPC;
	}
	if (timer_fd < 0)
		timer_fd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_NONBLOCK | TFD_CLOEXEC);
	if (timer_fd < 0) {
		close(fd);
		return -errno;
	}
	listen_fds[n_listen++] = fd;
	st.enabled = true;
	v6 = strchr(addr, ':') != NULL; /* a literal: tcp_listen took it */
	snprintf(st.listen + strlen(st.listen),
		 sizeof(st.listen) - strlen(st.listen), "%s%s%s%s:%u",
		 st.listen[0] ? " " : "", v6 ? "[" : "", addr, v6 ? "]" : "",
		 port);
	log_info("fpm: listening on %s%s%s:%u", v6 ? "[" : "", addr,
		 v6 ? "]" : "", port);
	return fd;
}

static void conn_close(const char *why)
{
	if (conn_fd < 0)
		return;
	close(conn_fd);
	conn_fd = -1;
	rlen = 0;
	held_clear(); /* the next connection replays them */
	wire_out_free(&out);
	st.connected = false;
	hold_deadline_ns = now_ns(CLOCK_MONOTONIC) +
			   (uint64_t)cfg.fpm_hold_s * 1000000000ull;
	settle_deadline_ns = 0;
	st.replay_state = "held";
	/* zebra stopped without -r withdraws its routes from the kernel but
	 * sends nothing: look at the kernel soon, and while holding. */
	kcheck_ns = now_ns(CLOCK_MONOTONIC) + 1000000000ull;
	timer_arm(kcheck_ns < hold_deadline_ns ? kcheck_ns : hold_deadline_ns);
	log_warn("fpm: %s: %s; its %u routes keep forwarding for %us unless "
		 "it comes back (or the kernel drops them)",
		 st.peer, why, rib_count(SRC_FPM), cfg.fpm_hold_s);
}

struct kset {
	struct prefix *p;
	size_t n, cap;
	bool failed;
};

static void kset_cb(const struct nl_route *r, void *arg)
{
	struct kset *k = arg;
	struct prefix p = r->p;

	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 1024;
		struct prefix *np = realloc(k->p, cap * sizeof(*np));

		if (!np) {
			k->failed = true;
			return;
		}
		k->p = np;
		k->cap = cap;
	}
	prefix_mask(&p);
	k->p[k->n++] = p;
}

static int cmp_pfx(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct prefix));
}

/*
 * While zebra is away, the kernel's main table is the truth it left
 * behind: held FPM routes the kernel no longer has are removed.
 */
static void kernel_check(void)
{
	struct kset k = { 0 };
	struct hnode *n, *tmp;
	uint32_t removed = 0;
	size_t i;

	if (nl_dump_routes(AF_INET, RT_TABLE_MAIN, kset_cb, &k) ||
	    nl_dump_routes(AF_INET6, RT_TABLE_MAIN, kset_cb, &k) || k.failed) {
		free(k.p);
		return;
	}
	qsort(k.p, k.n, sizeof(*k.p), cmp_pfx);
	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);
		const char *err;

		if (r->e[SRC_FPM].present &&
		    !bsearch(&r->p, k.p, k.n, sizeof(*k.p), cmp_pfx) &&
		    !rib_route_del(SRC_FPM, &r->p, &err))
			removed++;
	}
	free(k.p);
	if (removed)
		log_info("fpm: zebra is away and the kernel dropped %u of its "
			 "routes: removed them too",
			 removed);
}

void fpm_listen_close(void)
{
	for (int k = 0; k < n_listen; k++)
		close(listen_fds[k]);
	n_listen = 0;
	st.listen[0] = '\0';
	st.enabled = false;
}

void fpm_close(void)
{
	fpm_listen_close();
	if (conn_fd >= 0)
		close(conn_fd);
	if (timer_fd >= 0)
		close(timer_fd);
	conn_fd = timer_fd = -1;
	wire_out_free(&out);
	held_clear();
	free(rbuf);
	rbuf = NULL;
	rlen = rcap = 0;
}

/* "addr:port" ("[addr]:port" for IPv6) of a peer. */
static void sockaddr_str(const struct sockaddr_storage *ss, char *out,
			 size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, ntohs(s6->sin6_port));
		return;
	}
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, ntohs(s4->sin_port));
		return;
	}
	snprintf(out, len, "?");
}

/* Is uid one of fpm/allowed-users (names or numeric uids)? */
static bool user_allowed(uid_t uid, const char *name)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", (unsigned int)uid);
	for (int k = 0; k < cfg.n_fpm_users; k++) {
		const char *u = cfg.fpm_users[k];

		if (!strcmp(u, num) || (name && !strcmp(u, name)))
			return true;
	}
	return false;
}

/*
 * Only zebra may feed routes: the other end of a loopback connection is a
 * socket of this namespace, and sock_diag names its owner. Anyone else
 * (any local user while zebra is away) is refused before a byte is read.
 */
/* Any local user can connect in a loop: log the first refusals of each
 * 10 s and how many more there were, count them all. */
static void refuse(void)
{
	static uint64_t window_ns;
	static unsigned int logged, quiet;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	st.refused++;
	if (now - window_ns >= 10000000000ull) {
		if (quiet)
			log_warn("fpm: %u more connections refused in 10 s "
				 "(not logged one by one)",
				 quiet);
		window_ns = now;
		logged = quiet = 0;
	}
	if (logged++ < 10)
		log_warn("fpm: %s", st.last_error);
	else
		quiet++;
}

static bool peer_allowed(int fd, const char *peer)
{
	char pwbuf[1024], who[64];
	struct passwd pw, *p = NULL;
	uid_t uid;
	int ret;

	for (int k = 0; k < cfg.n_fpm_users; k++)
		if (!strcmp(cfg.fpm_users[k], "any"))
			return true; /* without asking: remote peers too */
	ret = nl_tcp_peer_uid(fd, &uid);
	if (ret) {
		snprintf(st.last_error, sizeof(st.last_error),
			 "connection from %s refused: cannot tell which user "
			 "owns it (%s); only local peers can be checked",
			 peer, strerror(-ret));
		refuse();
		return false;
	}
	getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &p);
	if (user_allowed(uid, p ? p->pw_name : NULL))
		return true;
	snprintf(who, sizeof(who), "%s%s%u%s", p ? p->pw_name : "",
		 p ? " (uid " : "uid ", (unsigned int)uid, p ? ")" : "");
	snprintf(st.last_error, sizeof(st.last_error),
		 "connection from %s refused: its socket belongs to user %s, "
		 "not one of fpm/allowed-users",
		 peer, who);
	refuse();
	return false;
}

int fpm_accept(int listen_fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char peer[sizeof(st.peer)];
	int fd, sz = FPM_RCVBUF;

	fd = accept4(listen_fd, (struct sockaddr *)&ss, &sl,
		     SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	sockaddr_str(&ss, peer, sizeof(peer));
	if (!peer_allowed(fd, peer)) {
		close(fd);
		return -EACCES;
	}
	if (conn_fd >= 0) {
		/* zebra reconnects only after losing us, which we see: a
		 * second connection is someone else's and must not take
		 * zebra's feed away. */
		log_warn("fpm: refusing a second FPM connection while %s is "
			 "connected",
			 st.peer);
		close(fd);
		return -EBUSY;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	snprintf(st.peer, sizeof(st.peer), "%s", peer);
	conn_fd = fd;
	st.connected = true;
	st.connections++;
	st.first_message_ns = 0;
	st.replay_refreshed = st.replay_swept = 0;
	st.replay_state = "in-progress";
	out_drop_logged = false;
	hold_deadline_ns = 0;
	frames_at_connect = st.frames;
	gen++;
	/* The replay ends when the stream has been quiet this long. */
	settle_deadline_ns = now_ns(CLOCK_MONOTONIC) +
			     (uint64_t)cfg.fpm_settle_ms * 1000000ull;
	timer_arm(settle_deadline_ns);
	log_info("fpm: zebra connected from %s (connection %llu): taking its "
		 "replay",
		 st.peer, (unsigned long long)st.connections);
	return fd;
}

int fpm_timer_fd(void)
{
	return timer_fd;
}

void fpm_timer(void)
{
	uint64_t exp, now = now_ns(CLOCK_MONOTONIC);
	uint32_t swept;

	if (read(timer_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		return;
	if (settle_deadline_ns) {
		if (now < settle_deadline_ns) {
			timer_arm(settle_deadline_ns);
			return;
		}
		if (st.frames == frames_at_connect) {
			/* Nothing replayed yet (zebra always sends its connected
			 * routes): an idle peer must not sweep the routes. */
			settle_deadline_ns = now + (uint64_t)cfg.fpm_settle_ms *
							   1000000ull;
			timer_arm(settle_deadline_ns);
			return;
		}
		settle_deadline_ns = 0;
		swept = rib_sweep(SRC_FPM, gen);
		st.replay_swept = swept;
		st.replay_refreshed = rib_count(SRC_FPM);
		st.replay_state = "settled";
		log_info("fpm: replay settled: %llu routes refreshed, %u stale "
			 "removed",
			 (unsigned long long)st.replay_refreshed, swept);
		return;
	}
	if (hold_deadline_ns && conn_fd < 0) {
		if (now >= kcheck_ns && now < hold_deadline_ns) {
			kernel_check();
			kcheck_ns = now + 5000000000ull;
		}
		if (now < hold_deadline_ns) {
			timer_arm(kcheck_ns < hold_deadline_ns ? kcheck_ns :
								 hold_deadline_ns);
			return;
		}
		hold_deadline_ns = 0;
		swept = rib_sweep(SRC_FPM, 0);
		st.replay_state = "none";
		log_warn("fpm: zebra did not come back within %us: its %u "
			 "routes removed",
			 cfg.fpm_hold_s, swept);
	}
}

/* ---- decoding ------------------------------------------------------------ */

struct attrs {
	const struct nlattr *tb[64];
};

/*
 * Walk the attributes after a fixed header of hdrlen bytes; an attribute
 * running past the message is an error (libmnl's iterator would just
 * stop there).
 */
static int attrs_parse(const struct nlmsghdr *nlh, size_t hdrlen,
		       struct attrs *a, int maxtype, char *why, size_t wlen)
{
	const struct nlattr *at;
	size_t off = NLMSG_HDRLEN + MNL_ALIGN(hdrlen);

	memset(a, 0, sizeof(*a));
	if (nlh->nlmsg_len < NLMSG_HDRLEN + hdrlen) {
		snprintf(why, wlen, "message type %u: %u bytes, shorter than "
			 "its header",
			 nlh->nlmsg_type, nlh->nlmsg_len);
		return -1;
	}
	while (off < nlh->nlmsg_len) {
		size_t left = nlh->nlmsg_len - off;
		uint16_t t;

		at = (const struct nlattr *)((const char *)nlh + off);
		if (left < sizeof(*at) || at->nla_len < sizeof(*at) ||
		    at->nla_len > left) {
			snprintf(why, wlen, "message type %u: truncated "
				 "attribute at offset %zu (%zu bytes left)",
				 nlh->nlmsg_type, off, left);
			return -1;
		}
		t = mnl_attr_get_type(at);
		if (t < maxtype && t < 64)
			a->tb[t] = at;
		off += MNL_ALIGN(at->nla_len);
	}
	return 0;
}

static bool attr_len_ok(const struct nlattr *a, size_t l1, size_t l2)
{
	size_t l;

	if (!a)
		return true;
	l = mnl_attr_get_payload_len(a);
	return l == l1 || (l2 && l == l2);
}

/* Bytes to the next RTA_MULTIPATH entry (the last may lack padding). */
static size_t rtnh_step(const struct rtnexthop *nh, size_t left)
{
	size_t step = RTNH_ALIGN((size_t)nh->rtnh_len);

	return step < left ? step : left;
}

/* Check that a route message can be applied; nothing is changed. */
static int route_check(const struct nlmsghdr *nlh, char *why, size_t wlen)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct attrs a;
	size_t alen;

	if (attrs_parse(nlh, sizeof(*rtm), &a, RTA_MAX + 1, why, wlen))
		return -1;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return 0; /* MPLS and others: ignored, not an error */
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	if (rtm->rtm_dst_len > alen * 8 ||
	    (a.tb[RTA_DST] && mnl_attr_get_payload_len(a.tb[RTA_DST]) != alen) ||
	    !attr_len_ok(a.tb[RTA_OIF], 4, 0) ||
	    !attr_len_ok(a.tb[RTA_TABLE], 4, 0) ||
	    !attr_len_ok(a.tb[RTA_NH_ID], 4, 0) ||
	    !attr_len_ok(a.tb[RTA_GATEWAY], 4, 16)) {
		snprintf(why, wlen, "route message: bad prefix length or "
			 "attribute size");
		return -1;
	}
	if (a.tb[RTA_MULTIPATH]) {
		const uint8_t *p = mnl_attr_get_payload(a.tb[RTA_MULTIPATH]);
		size_t left = mnl_attr_get_payload_len(a.tb[RTA_MULTIPATH]);

		while (left) {
			const struct rtnexthop *nh = (const void *)p;

			if (left < sizeof(*nh) || nh->rtnh_len < sizeof(*nh) ||
			    nh->rtnh_len > left) {
				snprintf(why, wlen, "route message: truncated "
					 "RTA_MULTIPATH entry");
				return -1;
			}
			left -= rtnh_step(nh, left);
			p += RTNH_ALIGN(nh->rtnh_len);
		}
	}
	return 0;
}

static int nexthop_check(const struct nlmsghdr *nlh, char *why, size_t wlen)
{
	struct attrs a;

	if (attrs_parse(nlh, sizeof(struct nhmsg), &a, NHA_MAX + 1, why, wlen))
		return -1;
	if (!a.tb[NHA_ID] || !attr_len_ok(a.tb[NHA_ID], 4, 0)) {
		snprintf(why, wlen, "nexthop message without a valid NHA_ID");
		return -1;
	}
	/* Any number of members is valid (Debian's zebra sends up to 256);
	 * more than fpmd's buckets hold is decided in nexthop_apply(). */
	if (!attr_len_ok(a.tb[NHA_OIF], 4, 0) ||
	    !attr_len_ok(a.tb[NHA_GATEWAY], 4, 16) ||
	    (a.tb[NHA_GROUP] &&
	     (mnl_attr_get_payload_len(a.tb[NHA_GROUP]) %
		      sizeof(struct nexthop_grp) ||
	      !mnl_attr_get_payload_len(a.tb[NHA_GROUP])))) {
		snprintf(why, wlen, "nexthop %u: bad attribute size",
			 mnl_attr_get_u32(a.tb[NHA_ID]));
		return -1;
	}
	return 0;
}

static int msg_check(const struct nlmsghdr *nlh, char *why, size_t wlen)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		return route_check(nlh, why, wlen);
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		return nexthop_check(nlh, why, wlen);
	case RTM_NEWNEIGH: /* EVPN MACs: not ours */
	case RTM_DELNEIGH:
	case NLMSG_NOOP:
		return 0;
	default:
		snprintf(why, wlen, "unknown netlink message type %u",
			 nlh->nlmsg_type);
		return -1;
	}
}

static void route_key(const struct nlmsghdr *nlh, struct prefix *p,
		      uint32_t *table, struct attrs *a)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	char why[8];

	attrs_parse(nlh, sizeof(*rtm), a, RTA_MAX + 1, why, sizeof(why));
	memset(p, 0, sizeof(*p));
	p->family = rtm->rtm_family;
	p->len = rtm->rtm_dst_len;
	/* route_check() vouches for the size of IPv4 and IPv6 destinations
	 * only; anything else (MPLS, a hostile sender) must not reach the
	 * copy, whatever its length. */
	if (a->tb[RTA_DST] && (p->family == AF_INET || p->family == AF_INET6) &&
	    mnl_attr_get_payload_len(a->tb[RTA_DST]) == addr_len(p->family))
		memcpy(p->addr, mnl_attr_get_payload(a->tb[RTA_DST]),
		       addr_len(p->family));
	prefix_mask(p);
	*table = a->tb[RTA_TABLE] ? mnl_attr_get_u32(a->tb[RTA_TABLE]) :
				    rtm->rtm_table;
}

/*
 * FRR's name of a route's rtm_protocol: zebra2proto() in zebra's
 * rt_netlink.c gives the number, zebra_route_string() of proto2zebra()
 * the name. Connected and kernel routes both come as RTPROT_KERNEL (only
 * the plugin feed tells them apart); a number FRR has no name for stays
 * a number.
 */
static uint8_t proto_id(uint8_t rtproto, int family)
{
	static const struct {
		uint8_t num;
		const char *name;
	} names[] = {
		{ RTPROT_KERNEL, "kernel" }, { RTPROT_STATIC, "static" },
		{ RTPROT_ZEBRA, "zebra" },   { 42, "babel" },
		{ 186, "bgp" },              { 187, "isis" },
		{ 188, "ospf" },             { 189, "rip" },
		{ 190, "ripng" },            { 191, "nhrp" },
		{ 192, "eigrp" },            { 193, "ldp" },
		{ 194, "sharp" },            { 195, "pbr" },
		{ 196, "static" },           { 197, "openfabric" },
		{ 198, "srte" },
	};
	static uint16_t cache[2][256]; /* [ipv6][rtproto]: id + 1; 0: not yet */
	int v6 = family == AF_INET6;
	char num[8];

	if (cache[v6][rtproto])
		return (uint8_t)(cache[v6][rtproto] - 1);
	snprintf(num, sizeof(num), "%u", rtproto);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (names[k].num == rtproto)
			snprintf(num, sizeof(num), "%s",
				 rtproto == 188 && v6 ? "ospf6" : names[k].name);
	cache[v6][rtproto] = (uint16_t)(rib_protocol_id(num) + 1);
	return (uint8_t)(cache[v6][rtproto] - 1);
}

static void path_from(struct rib_path *path, int family, const void *gw,
		      size_t gwlen, uint32_t oif, uint32_t weight)
{
	memset(path, 0, sizeof(*path));
	path->ifindex = oif;
	path->weight = weight;
	if (gw && gwlen) {
		path->has_gw = true;
		path->family = gwlen == 4 ? AF_INET : AF_INET6;
		memcpy(path->gw, gw, gwlen);
	}
	(void)family;
}

/*
 * Does the kernel forward this route by its own mtu metric? IPv4 does
 * whenever RTAX_MTU is set (ip_dst_mtu_maybe_forward), IPv6 only when it
 * is locked (ip6_dst_mtu_maybe_forward; otherwise net.ipv6.conf.X.mtu).
 * fpmd's nexthops carry the interface's MTU only, so such a route stays
 * on the kernel path. Malformed metrics count as set: the safe side.
 */
static bool route_mtu_metric(int family, const struct nlattr *metrics)
{
	const struct nlattr *m;
	uint32_t mtu = 0, lock = 0;
	const char *p;
	size_t left;

	if (!metrics)
		return false;
	p = mnl_attr_get_payload(metrics);
	left = mnl_attr_get_payload_len(metrics);
	while (left >= sizeof(*m)) {
		size_t step;

		m = (const void *)p;
		if (m->nla_len < sizeof(*m) || m->nla_len > left)
			return true;
		step = MNL_ALIGN((size_t)m->nla_len);
		if (step > left)
			step = left;
		p += step;
		left -= step;
		if (mnl_attr_get_type(m) != RTAX_MTU &&
		    mnl_attr_get_type(m) != RTAX_LOCK)
			continue;
		if (mnl_attr_get_payload_len(m) != 4)
			return true;
		if (mnl_attr_get_type(m) == RTAX_MTU)
			mtu = mnl_attr_get_u32(m);
		else
			lock = mnl_attr_get_u32(m);
	}
	if (left)
		return true; /* a truncated metric */
	if (!mtu)
		return false;
	return family == AF_INET || (lock & (1u << RTAX_MTU));
}

static void route_apply(const struct nlmsghdr *nlh, bool replaced_next)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct rib_path paths[NH_MAX_MEMBERS];
	struct rib_route_req rq = { .src = SRC_FPM, .gen = gen };
	char pb[PREFIX_STRLEN];
	const char *err = NULL;
	uint32_t table;
	struct attrs a;
	int ret;

	st.route_msgs++;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) {
		st.ignored++;
		return;
	}
	route_key(nlh, &rq.p, &table, &a);
	rq.rtproto = rtm->rtm_protocol;
	rq.proto = proto_id(rtm->rtm_protocol, rtm->rtm_family);
	if (table != RT_TABLE_MAIN) {
		if (nlh->nlmsg_type == RTM_NEWROUTE)
			rib_other_add(SRC_FPM, &rq.p, table, gen, rq.proto);
		else
			rib_other_del(SRC_FPM, &rq.p, table);
		return;
	}
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		/* DELROUTE + NEWROUTE in one frame is zebra's replace: skip
		 * the delete so the route never leaves the fast path. */
		if (!replaced_next)
			rib_route_del(SRC_FPM, &rq.p, &err);
		return;
	}
	switch (rtm->rtm_type) {
	case RTN_UNICAST:
		rq.type = RT_UNICAST;
		break;
	case RTN_BLACKHOLE: rq.type = RT_BLACKHOLE; break;
	case RTN_UNREACHABLE: rq.type = RT_UNREACHABLE; break;
	case RTN_PROHIBIT: rq.type = RT_PROHIBIT; break;
	case RTN_LOCAL: rq.type = RT_LOCAL; break;
	default:
		/* multicast, nat, ...: keep the kernel in charge */
		rq.type = RT_KERNEL;
		rq.kreason = KR_UNSUPPORTED;
		break;
	}
	if (rq.type == RT_UNICAST) {
		if (a.tb[RTA_ENCAP] || a.tb[RTA_VIA]) {
			rq.type = RT_KERNEL;
			rq.kreason = KR_UNSUPPORTED;
		} else if (a.tb[RTA_NH_ID]) {
			rq.nhid = mnl_attr_get_u32(a.tb[RTA_NH_ID]);
		} else if (a.tb[RTA_MULTIPATH]) {
			const uint8_t *p = mnl_attr_get_payload(a.tb[RTA_MULTIPATH]);
			size_t left = mnl_attr_get_payload_len(a.tb[RTA_MULTIPATH]);

			while (left >= sizeof(struct rtnexthop)) {
				const struct rtnexthop *nh = (const void *)p;
				const struct rtattr *ra = RTNH_DATA(nh);
				int alen = nh->rtnh_len - (int)sizeof(*nh);
				const void *gw = NULL;
				size_t gwlen = 0;

				if (rq.npaths == NH_MAX_MEMBERS) {
					/* Not some of the paths: the kernel
					 * uses them all. */
					log_warn("fpm: route %s: more than %d "
						 "paths, more than fpmd forwards "
						 "over; it takes the kernel path",
						 fmt_prefix(&rq.p, pb),
						 NH_MAX_MEMBERS);
					rq.type = RT_KERNEL;
					rq.kreason = KR_UNSUPPORTED;
					break;
				}
				for (; RTA_OK(ra, alen); ra = RTA_NEXT(ra, alen)) {
					if (ra->rta_type == RTA_GATEWAY &&
					    (RTA_PAYLOAD(ra) == 4 ||
					     RTA_PAYLOAD(ra) == 16)) {
						gw = RTA_DATA(ra);
						gwlen = RTA_PAYLOAD(ra);
					} else if (ra->rta_type == RTA_VIA ||
						   ra->rta_type == RTA_ENCAP) {
						rq.type = RT_KERNEL;
						rq.kreason = KR_UNSUPPORTED;
					}
				}
				path_from(&paths[rq.npaths++], rtm->rtm_family,
					  gw, gwlen, (uint32_t)nh->rtnh_ifindex,
					  nh->rtnh_hops + 1u);
				left -= rtnh_step(nh, left);
				p += RTNH_ALIGN(nh->rtnh_len);
			}
			rq.paths = paths;
		} else if (a.tb[RTA_OIF]) {
			path_from(&paths[0], rtm->rtm_family,
				  a.tb[RTA_GATEWAY] ?
					  mnl_attr_get_payload(a.tb[RTA_GATEWAY]) :
					  NULL,
				  a.tb[RTA_GATEWAY] ?
					  mnl_attr_get_payload_len(a.tb[RTA_GATEWAY]) :
					  0,
				  mnl_attr_get_u32(a.tb[RTA_OIF]), 1);
			rq.paths = paths;
			rq.npaths = 1;
		} else {
			rq.type = RT_KERNEL;
			rq.kreason = KR_UNSUPPORTED;
		}
		for (int i = 0; rq.type == RT_UNICAST && i < rq.npaths; i++)
			if (!paths[i].ifindex) {
				rq.type = RT_KERNEL;
				rq.kreason = KR_UNSUPPORTED;
			}
		if (rq.type == RT_UNICAST &&
		    route_mtu_metric(rtm->rtm_family, a.tb[RTA_METRICS])) {
			rq.type = RT_KERNEL;
			rq.kreason = KR_MTU_METRIC;
		}
		if (rq.type == RT_KERNEL)
			rq.npaths = 0;
	}
	ret = rib_route_add(&rq, &err);
	if (ret)
		log_warn("fpm: route %s: %s", fmt_prefix(&rq.p, pb), err);
	else if (rq.nhid && !rib_nexthop_find(SRC_FPM, rq.nhid) &&
		 !held_has(rq.nhid))
		log_warn("fpm: route %s: nexthop id %u was never sent (zebra "
			 "without kernel nexthop objects?); the kernel routes "
			 "it",
			 fmt_prefix(&rq.p, pb), rq.nhid);
}

/*
 * Groups that came ahead of a member. zebra 8.4.4 replays its nexthops in
 * hash order (dplane_fpm_nl walks nhgs_id), so on a (re)connect a group
 * can come before its members; refusing it left every route using it on
 * the kernel path ("never sent") until the group changed. Held here and
 * applied once the last member is in; a newer message for the id, its
 * delete, or the connection closing drops it.
 */
struct held_group {
	uint32_t id, n;
	uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS];
};

static struct held_group *held;
static size_t n_held, cap_held;

static void held_drop(uint32_t id)
{
	for (size_t i = 0; i < n_held; i++)
		if (held[i].id == id) {
			held[i] = held[--n_held];
			return;
		}
}

static bool held_has(uint32_t id)
{
	for (size_t i = 0; i < n_held; i++)
		if (held[i].id == id)
			return true;
	return false;
}

static void held_clear(void)
{
	free(held);
	held = NULL;
	n_held = cap_held = 0;
}

static bool held_add(uint32_t id, const uint32_t *ids, const uint32_t *w,
		     int n)
{
	struct held_group *h;

	held_drop(id);
	if (n_held == cap_held) {
		size_t cap = cap_held ? 2 * cap_held : 16;

		h = realloc(held, cap * sizeof(*h));
		if (!h)
			return false;
		held = h;
		cap_held = cap;
	}
	h = &held[n_held++];
	h->id = id;
	h->n = (uint32_t)n;
	memcpy(h->ids, ids, sizeof(ids[0]) * (size_t)n);
	memcpy(h->w, w, sizeof(w[0]) * (size_t)n);
	return true;
}

/* A nexthop arrived: apply the held groups it completes. */
static void held_retry(void)
{
	const char *err = NULL;

	for (size_t i = 0; i < n_held;) {
		struct held_group h = held[i];
		int ret = rib_group_add(SRC_FPM, h.id, h.ids, h.w, (int)h.n,
					gen, &err);

		if (ret == -ENOENT) {
			i++;
			continue;
		}
		held[i] = held[--n_held];
		if (ret)
			log_warn("fpm: nexthop %u: %s", h.id, err);
	}
}

static void nexthop_apply(const struct nlmsghdr *nlh)
{
	const struct nhmsg *nhm = mnl_nlmsg_get_payload(nlh);
	struct rib_path path = { 0 };
	const char *err = NULL;
	struct attrs a;
	char why[8];
	uint32_t id;
	int ret;

	st.nexthop_msgs++;
	attrs_parse(nlh, sizeof(*nhm), &a, NHA_MAX + 1, why, sizeof(why));
	id = mnl_attr_get_u32(a.tb[NHA_ID]);
	held_drop(id);
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		ret = rib_nexthop_del(SRC_FPM, id, &err);
		if (ret && ret != -ENOENT)
			log_warn("fpm: nexthop %u delete: %s (kept)", id, err);
		return;
	}
	if (a.tb[NHA_GROUP] &&
	    mnl_attr_get_payload_len(a.tb[NHA_GROUP]) >
		    NH_MAX_MEMBERS * sizeof(struct nexthop_grp)) {
		/* Forwarding over some of the members would not be what the
		 * kernel does: the routes using it stay on the kernel path. */
		log_warn("fpm: nexthop group %u: %zu members, more than the %d "
			 "fpmd forwards over; routes using it take the kernel "
			 "path",
			 id,
			 mnl_attr_get_payload_len(a.tb[NHA_GROUP]) /
				 sizeof(struct nexthop_grp),
			 NH_MAX_MEMBERS);
		ret = rib_nexthop_add(SRC_FPM, id, &path, false, true, gen, &err);
	} else if (a.tb[NHA_GROUP]) {
		const struct nexthop_grp *g = mnl_attr_get_payload(a.tb[NHA_GROUP]);
		int n = (int)(mnl_attr_get_payload_len(a.tb[NHA_GROUP]) /
			      sizeof(*g));
		uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS];

		for (int i = 0; i < n; i++) {
			ids[i] = g[i].id;
			w[i] = g[i].weight + 1u; /* the kernel's weight - 1 */
		}
		ret = rib_group_add(SRC_FPM, id, ids, w, n, gen, &err);
		if (ret == -ENOENT && held_add(id, ids, w, n)) {
			log_debug("fpm: nexthop group %u: held until its "
				  "members arrive", id);
			return;
		}
	} else if (a.tb[NHA_BLACKHOLE]) {
		ret = rib_nexthop_add(SRC_FPM, id, &path, true, false, gen, &err);
	} else if (a.tb[NHA_ENCAP] || a.tb[NHA_FDB] || !a.tb[NHA_OIF]) {
		ret = rib_nexthop_add(SRC_FPM, id, &path, false, true, gen, &err);
	} else {
		path_from(&path, nhm->nh_family,
			  a.tb[NHA_GATEWAY] ? mnl_attr_get_payload(a.tb[NHA_GATEWAY]) :
					      NULL,
			  a.tb[NHA_GATEWAY] ?
				  mnl_attr_get_payload_len(a.tb[NHA_GATEWAY]) :
				  0,
			  mnl_attr_get_u32(a.tb[NHA_OIF]), 1);
		ret = rib_nexthop_add(SRC_FPM, id, &path, false, false, gen, &err);
	}
	if (ret)
		log_warn("fpm: nexthop %u: %s", id, err);
	else if (n_held && !a.tb[NHA_GROUP])
		held_retry();
}

static bool route_family_ok(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	return rtm->rtm_family == AF_INET || rtm->rtm_family == AF_INET6;
}

static bool same_route(const struct nlmsghdr *a, const struct nlmsghdr *b)
{
	struct prefix pa, pb;
	uint32_t ta, tb;
	struct attrs x;

	if (b->nlmsg_type != RTM_NEWROUTE)
		return false;
	if (!route_family_ok(a) || !route_family_ok(b))
		return false;
	route_key(a, &pa, &ta, &x);
	route_key(b, &pb, &tb, &x);
	return ta == tb && !memcmp(&pa, &pb, sizeof(pa));
}

/* ---- route status notifications ------------------------------------------ */

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
		st.status_dropped++;
		if (!out_drop_logged)
			log_warn("fpm: %s: zebra is not reading route status "
				 "notifications (%zu bytes wait): dropping them "
				 "until it does (counted in 'fpmctl show fpm')",
				 st.peer, wire_out_pending(&out));
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
			st.status_dropped++;
			return -ENOMEM;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, frame, len);
	b->len += len;
	st.status_sent++;
	return 0;
}

/* Send what zebra takes now; wake on EPOLLOUT for the rest. A write
 * error is left to the read side, which sees the connection go. */
static void out_flush(void)
{
	int ret;

	if (conn_fd < 0)
		return;
	ret = wire_flush(conn_fd, &out);
	if (ret && ret != -EAGAIN)
		wire_out_free(&out);
	if (watch)
		watch(conn_fd, true, wire_out_pending(&out) > 0);
}

int fpm_route_status_send(const struct fpm_route_status *rs)
{
	uint8_t buf[FPM_HDR + 128] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	size_t len;

	if (!cfg.fpm_route_status || conn_fd < 0)
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

void fpm_route_changed(const struct route *r)
{
	static const uint8_t rtn[] = {
		[RT_UNICAST] = RTN_UNICAST,	    [RT_BLACKHOLE] = RTN_BLACKHOLE,
		[RT_UNREACHABLE] = RTN_UNREACHABLE, [RT_PROHIBIT] = RTN_PROHIBIT,
		[RT_LOCAL] = RTN_LOCAL,		    [RT_KERNEL] = RTN_UNICAST,
	};
	const struct route_entry *e = &r->e[SRC_FPM];
	struct fpm_route_status rs;

	if (!e->present || !cfg.fpm_route_status || conn_fd < 0)
		return;
	/* A route the frame being applied adds gets its reply at the end of
	 * the frame: one, with the frame's fields. */
	for (size_t i = 0; i < cur_n; i++) {
		struct prefix p;
		uint32_t table;
		struct attrs a;

		if (cur_msgs[i]->nlmsg_type != RTM_NEWROUTE ||
		    !route_family_ok(cur_msgs[i]))
			continue;
		route_key(cur_msgs[i], &p, &table, &a);
		if (table == RT_TABLE_MAIN && !memcmp(&p, &r->p, sizeof(p)))
			return;
	}
	/* As zebra's frame for it was (netlink_route_multipath_msg_encode):
	 * only main-table routes are in fpmd's table. */
	rs = (struct fpm_route_status){
		.p = r->p,
		.rtproto = e->rtproto,
		.rtm_type = rtn[e->type],
		.rtm_table = RT_TABLE_MAIN,
		.rtm_scope = RT_SCOPE_UNIVERSE,
		.has_priority = true,
		.priority = ZEBRA_ROUTE_METRIC,
		.offloaded = prefix_offloaded(&r->p),
	};
	fpm_route_status_send(&rs);
}

/* The RIB's "route status changed" hook: queued here, written by
 * fpm_status_flush() once per event-loop turn (a guard may change
 * thousands of routes at once: one write, not one per route). */
static void status_changed(struct route *r, void *arg)
{
	(void)arg;
	fpm_route_changed(r);
}

void fpm_status_flush(void)
{
	if (conn_fd >= 0)
		out_flush();
}

/* The status of the route one RTM_NEWROUTE of a frame added, as the
 * frame named it. */
static void route_status_reply(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct fpm_route_status rs = { 0 };
	uint32_t table;
	struct attrs a;

	if (!route_family_ok(nlh))
		return;
	route_key(nlh, &rs.p, &table, &a);
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
	rs.offloaded = table == RT_TABLE_MAIN && prefix_offloaded(&rs.p);
	fpm_route_status_send(&rs);
}

/* Validate one frame's netlink messages, then apply them. */
static int frame_apply(const uint8_t *p, size_t len, char *why, size_t wlen)
{
	const struct nlmsghdr *msgs[512];
	size_t n = 0, off = 0;

	while (off < len) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		size_t left = len - off;

		if (left < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
		    nlh->nlmsg_len > left) {
			snprintf(why, wlen, "truncated netlink message at "
				 "offset %zu of the frame (%zu bytes left)",
				 off, left);
			return -1;
		}
		if (msg_check(nlh, why, wlen))
			return -1;
		if (n == sizeof(msgs) / sizeof(msgs[0])) {
			snprintf(why, wlen, "more than %zu messages in a frame",
				 n);
			return -1;
		}
		msgs[n++] = nlh;
		off += NLMSG_ALIGN(nlh->nlmsg_len) < left ?
			       NLMSG_ALIGN(nlh->nlmsg_len) :
			       left;
	}
	cur_msgs = msgs;
	cur_n = n;
	for (size_t i = 0; i < n; i++) {
		const struct nlmsghdr *nlh = msgs[i];

		st.messages++;
		switch (nlh->nlmsg_type) {
		case RTM_NEWROUTE:
			route_apply(nlh, false);
			break;
		case RTM_DELROUTE:
			route_apply(nlh, i + 1 < n &&
						 same_route(nlh, msgs[i + 1]));
			break;
		case RTM_NEWNEXTHOP:
		case RTM_DELNEXTHOP:
			nexthop_apply(nlh);
			break;
		default:
			st.ignored++;
			break;
		}
	}
	cur_msgs = NULL;
	cur_n = 0;
	/* Once the whole frame is in (a nexthop may come before its route):
	 * one notification per route added. Deletes get none. */
	for (size_t i = 0; cfg.fpm_route_status && conn_fd >= 0 && i < n; i++)
		if (msgs[i]->nlmsg_type == RTM_NEWROUTE)
			route_status_reply(msgs[i]);
	return 0;
}

long fpm_feed(const uint8_t *buf, size_t len, char *why, size_t wlen)
{
	static uint8_t frame[65536] __attribute__((aligned(8)));
	size_t off = 0;

	while (len - off >= FPM_HDR) {
		const uint8_t *h = buf + off;
		size_t flen = (size_t)h[2] << 8 | h[3];

		if (h[0] != FPM_VERSION) {
			snprintf(why, wlen, "bad frame version %u (expected %u)",
				 h[0], FPM_VERSION);
			return -1;
		}
		if (h[1] != FPM_TYPE_NETLINK) {
			snprintf(why, wlen, "unsupported frame type %u (only "
				 "netlink, 1, is)",
				 h[1]);
			return -1;
		}
		if (flen < FPM_HDR + NLMSG_HDRLEN) {
			snprintf(why, wlen, "bad frame length %zu (at least "
				 "%u)",
				 flen, FPM_HDR + NLMSG_HDRLEN);
			return -1;
		}
		if (len - off < flen)
			break; /* the rest of the frame is still on its way */
		/* Netlink headers want 4-byte alignment; frames need not
		 * keep it, so decode from an aligned copy. */
		ASAN_UNPOISON_MEMORY_REGION(frame, sizeof(frame));
		memcpy(frame, h + FPM_HDR, flen - FPM_HDR);
		ASAN_POISON_MEMORY_REGION(frame + flen - FPM_HDR,
					  sizeof(frame) - (flen - FPM_HDR));
		if (frame_apply(frame, flen - FPM_HDR, why, wlen))
			return -1;
		st.frames++;
		off += flen;
	}
	return (long)off;
}

int fpm_io(void)
{
	uint64_t writes = rib_stats.route_writes;
	char why[256] = "";
	bool got = false;

	/* A bounded batch per wakeup: a full-table replay must not starve
	 * the control socket and kernel events (epoll calls us again). */
	for (int batch = 0; batch < 64; batch++) {
		ssize_t r;
		long used;

		if (rcap - rlen < 65536) {
			size_t cap = rcap ? rcap * 2 : 262144;
			uint8_t *nb = realloc(rbuf, cap);

			if (!nb) {
				conn_close("out of memory");
				return -ENOMEM;
			}
			rbuf = nb;
			rcap = cap;
		}
		r = read(conn_fd, rbuf + rlen, rcap - rlen);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0) {
			char msg[128];

			if (rlen)
				snprintf(msg, sizeof(msg), "connection closed in "
					 "the middle of a frame (%zu bytes of it "
					 "received)",
					 rlen);
			else
				snprintf(msg, sizeof(msg), "connection closed%s%s",
					 r < 0 ? ": " : "",
					 r < 0 ? strerror(errno) : "");
			if (rlen) {
				st.errors++;
				snprintf(st.last_error, sizeof(st.last_error),
					 "%s", msg);
			}
			conn_close(msg);
			return -ECONNRESET;
		}
		rlen += (size_t)r;
		got = true;
		st.last_message_ns = now_ns(CLOCK_REALTIME);
		if (!st.first_message_ns)
			st.first_message_ns = st.last_message_ns;
		used = fpm_feed(rbuf, rlen, why, sizeof(why));
		if (used < 0) {
			char msg[300];

			st.errors++;
			snprintf(st.last_error, sizeof(st.last_error), "%s", why);
			snprintf(msg, sizeof(msg), "%s; closing the connection",
				 why);
			log_err("fpm: %s: %s", st.peer, msg);
			conn_close("closed on bad input");
			return -EPROTO;
		}
		memmove(rbuf, rbuf + used, rlen - (size_t)used);
		rlen -= (size_t)used;
	}
	out_flush();
	if (got) {
		if (rib_stats.route_writes != writes)
			st.last_map_write_ns = now_ns(CLOCK_REALTIME);
		if (settle_deadline_ns)
			settle_deadline_ns = now_ns(CLOCK_MONOTONIC) +
					     (uint64_t)cfg.fpm_settle_ms * 1000000ull;
	}
	return 0;
}

void fpm_get_status(struct feed_status *out)
{
	*out = st;
	out->hold_remaining_ms = 0;
	if (hold_deadline_ns && conn_fd < 0) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (hold_deadline_ns > now)
			out->hold_remaining_ms = (hold_deadline_ns - now) / 1000000;
	}
}
