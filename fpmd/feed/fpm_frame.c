// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FPM frames: the framing (version 1, type 1 = netlink, a 16-bit
 * big-endian length including the 4-byte header), and the checks of the
 * netlink messages in a frame. A frame is validated completely before any
 * of it is applied (fpm_apply.c): malformed input closes the connection
 * and changes nothing.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "conf/conf.h"
#include "feed/fpm_internal.h"
#include "common/util.h"

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

/*
 * Walk the attributes after a fixed header of hdrlen bytes; an attribute
 * running past the message is an error (libmnl's iterator would just
 * stop there).
 */
int fpm_attrs_parse(const struct nlmsghdr *nlh, size_t hdrlen, struct attrs *a,
		    int maxtype, char *why, size_t wlen)
{
	const struct nlattr *at;
	size_t off = NLMSG_HDRLEN + MNL_ALIGN(hdrlen);

	memset(a, 0, sizeof(*a));
	if (nlh->nlmsg_len < NLMSG_HDRLEN + hdrlen) {
		snprintf(why, wlen,
			 "message type %u: %u bytes, shorter than "
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
			snprintf(why, wlen,
				 "message type %u: truncated "
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

size_t fpm_rtnh_step(const struct rtnexthop *nh, size_t left)
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

	if (fpm_attrs_parse(nlh, sizeof(*rtm), &a, RTA_MAX + 1, why, wlen))
		return -1;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return 0; /* MPLS and others: ignored, not an error */
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	if (rtm->rtm_dst_len > alen * 8 ||
	    (a.tb[RTA_DST] &&
	     mnl_attr_get_payload_len(a.tb[RTA_DST]) != alen) ||
	    !attr_len_ok(a.tb[RTA_OIF], 4, 0) ||
	    !attr_len_ok(a.tb[RTA_TABLE], 4, 0) ||
	    !attr_len_ok(a.tb[RTA_NH_ID], 4, 0) ||
	    !attr_len_ok(a.tb[RTA_GATEWAY], 4, 16)) {
		snprintf(why, wlen,
			 "route message: bad prefix length or "
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
				snprintf(why, wlen,
					 "route message: truncated "
					 "RTA_MULTIPATH entry");
				return -1;
			}
			left -= fpm_rtnh_step(nh, left);
			p += RTNH_ALIGN(nh->rtnh_len);
		}
	}
	return 0;
}

static int nexthop_check(const struct nlmsghdr *nlh, char *why, size_t wlen)
{
	struct attrs a;

	if (fpm_attrs_parse(nlh, sizeof(struct nhmsg), &a, NHA_MAX + 1, why,
			    wlen))
		return -1;
	if (!a.tb[NHA_ID] || !attr_len_ok(a.tb[NHA_ID], 4, 0)) {
		snprintf(why, wlen, "nexthop message without a valid NHA_ID");
		return -1;
	}
	/* Any number of members is valid (Debian's zebra sends up to 256);
	 * more than fpmd's buckets hold is decided in fpm_nexthop_apply(). */
	if (!attr_len_ok(a.tb[NHA_OIF], 4, 0) ||
	    !attr_len_ok(a.tb[NHA_GATEWAY], 4, 16) ||
	    (a.tb[NHA_GROUP] && (mnl_attr_get_payload_len(a.tb[NHA_GROUP]) %
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

void fpm_route_key(const struct nlmsghdr *nlh, struct prefix *p,
		   uint32_t *table, struct attrs *a)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	char why[8];

	fpm_attrs_parse(nlh, sizeof(*rtm), a, RTA_MAX + 1, why, sizeof(why));
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
	*table = a->tb[RTA_TABLE] ? mnl_attr_get_u32(a->tb[RTA_TABLE])
				  : rtm->rtm_table;
}

bool fpm_route_family_ok(const struct nlmsghdr *nlh)
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
	if (!fpm_route_family_ok(a) || !fpm_route_family_ok(b))
		return false;
	fpm_route_key(a, &pa, &ta, &x);
	fpm_route_key(b, &pb, &tb, &x);
	return ta == tb && !memcmp(&pa, &pb, sizeof(pa));
}

/* Validate one frame's netlink messages, then apply them. */
static int frame_apply(const uint8_t *p, size_t len, char *why, size_t wlen)
{
	const struct nlmsghdr *msgs[512];
	size_t n = 0, off = 0, start, end, i;

	while (off < len) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		size_t left = len - off;

		if (left < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
		    nlh->nlmsg_len > left) {
			snprintf(why, wlen,
				 "truncated netlink message at "
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
		off += NLMSG_ALIGN(nlh->nlmsg_len) < left
			   ? NLMSG_ALIGN(nlh->nlmsg_len)
			   : left;
	}
	/* A frame stopped at the slice's end (FPM_SLICE) goes on from its
	 * first message not yet applied. */
	start = fpm.frame_done < n ? fpm.frame_done : 0;
	fpm.frame_done = 0;
	fpm.cur_msgs = msgs + start;
	fpm.cur_n = n - start;
	for (i = start; i < n; i++) {
		const struct nlmsghdr *nlh = msgs[i];

		fpm.st.messages++;
		switch (nlh->nlmsg_type) {
		case RTM_NEWROUTE:
			fpm_route_apply(nlh, false);
			break;
		case RTM_DELROUTE:
			fpm_route_apply(nlh, i + 1 < n &&
						 same_route(nlh, msgs[i + 1]));
			break;
		case RTM_NEWNEXTHOP:
		case RTM_DELNEXTHOP:
			fpm_nexthop_apply(nlh);
			break;
		default:
			fpm.st.ignored++;
			break;
		}
		/* Out of time: stop between routes (never inside a
		 * DELROUTE + NEWROUTE pair), the rest at the next call. */
		if (i + 1 < n && (i - start) % 16 == 15 && fpm_slice_over() &&
		    !(nlh->nlmsg_type == RTM_DELROUTE &&
		      same_route(nlh, msgs[i + 1]))) {
			fpm.frame_done = i + 1;
			break;
		}
	}
	end = fpm.frame_done ? fpm.frame_done : n;
	fpm.cur_msgs = NULL;
	fpm.cur_n = 0;
	/* Once the whole frame is in (a nexthop may come before its route):
	 * one notification per route added. Deletes get none. */
	for (i = start; cfg.fpm_route_status && fpm.conn_fd >= 0 && i < end;
	     i++)
		if (msgs[i]->nlmsg_type == RTM_NEWROUTE)
			fpm_status_reply(msgs[i]);
	return 0;
}

bool fpm_slice_over(void)
{
	return fpm.deadline_ns && now_ns(CLOCK_MONOTONIC) >= fpm.deadline_ns;
}

long fpm_feed(const uint8_t *buf, size_t len, char *why, size_t wlen)
{
	static uint8_t frame[65536] __attribute__((aligned(8)));
	size_t off = 0;

	while (len - off >= FPM_HDR) {
		const uint8_t *h = buf + off;
		size_t flen = (size_t)h[2] << 8 | h[3];

		if (h[0] != FPM_VERSION) {
			snprintf(why, wlen,
				 "bad frame version %u (expected %u)", h[0],
				 FPM_VERSION);
			return -1;
		}
		if (h[1] != FPM_TYPE_NETLINK) {
			snprintf(why, wlen,
				 "unsupported frame type %u (only "
				 "netlink, 1, is)",
				 h[1]);
			return -1;
		}
		if (flen < FPM_HDR + NLMSG_HDRLEN) {
			snprintf(why, wlen,
				 "bad frame length %zu (at least "
				 "%u)",
				 flen, FPM_HDR + NLMSG_HDRLEN);
			return -1;
		}
		if (len - off < flen)
			break; /* the rest of the frame is still on its way */
		if (off && fpm_slice_over())
			break; /* the next frames at the next call */
		/* Netlink headers want 4-byte alignment; frames need not
		 * keep it, so decode from an aligned copy. */
		ASAN_UNPOISON_MEMORY_REGION(frame, sizeof(frame));
		memcpy(frame, h + FPM_HDR, flen - FPM_HDR);
		ASAN_POISON_MEMORY_REGION(frame + flen - FPM_HDR,
					  sizeof(frame) - (flen - FPM_HDR));
		if (frame_apply(frame, flen - FPM_HDR, why, wlen))
			return -1;
		if (fpm.frame_done)
			break; /* applied in part: the rest of it later */
		fpm.st.frames++;
		off += flen;
	}
	return (long)off;
}
