// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FPM routes and nexthops into the RIB, as the SRC_FPM source, stamped
 * with the connection's generation (fpm_replay.c sweeps by it). Messages
 * come here checked (fpm_frame.c). What fpmd cannot forward exactly as
 * the kernel does goes in as a kernel-path route with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "feed/fpm_internal.h"
#include "common/log.h"
#include "rib/rib.h"
#include "common/util.h"

static bool held_has(uint32_t id);

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
		{ RTPROT_KERNEL, "kernel" },
		{ RTPROT_STATIC, "static" },
		{ RTPROT_ZEBRA, "zebra" },
		{ 42, "babel" },
		{ 186, "bgp" },
		{ 187, "isis" },
		{ 188, "ospf" },
		{ 189, "rip" },
		{ 190, "ripng" },
		{ 191, "nhrp" },
		{ 192, "eigrp" },
		{ 193, "ldp" },
		{ 194, "sharp" },
		{ 195, "pbr" },
		{ 196, "static" },
		{ 197, "openfabric" },
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
				 rtproto == 188 && v6 ? "ospf6"
						      : names[k].name);
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

void fpm_route_apply(const struct nlmsghdr *nlh, bool replaced_next)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct rib_path paths[NH_MAX_MEMBERS];
	struct rib_route_req rq = { .src = SRC_FPM, .gen = fpm.gen };
	char pb[PREFIX_STRLEN];
	const char *err = NULL;
	uint32_t table;
	struct attrs a;
	int ret;

	fpm.st.route_msgs++;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) {
		fpm.st.ignored++;
		return;
	}
	fpm_route_key(nlh, &rq.p, &table, &a);
	rq.rtproto = rtm->rtm_protocol;
	rq.proto = proto_id(rtm->rtm_protocol, rtm->rtm_family);
	if (table != RT_TABLE_MAIN) {
		if (nlh->nlmsg_type == RTM_NEWROUTE)
			rib_other_add(SRC_FPM, &rq.p, table, fpm.gen, rq.proto);
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
	case RTN_BLACKHOLE:
		rq.type = RT_BLACKHOLE;
		break;
	case RTN_UNREACHABLE:
		rq.type = RT_UNREACHABLE;
		break;
	case RTN_PROHIBIT:
		rq.type = RT_PROHIBIT;
		break;
	case RTN_LOCAL:
		rq.type = RT_LOCAL;
		break;
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
			const uint8_t *p =
			    mnl_attr_get_payload(a.tb[RTA_MULTIPATH]);
			size_t left =
			    mnl_attr_get_payload_len(a.tb[RTA_MULTIPATH]);

			while (left >= sizeof(struct rtnexthop)) {
				const struct rtnexthop *nh = (const void *)p;
				const struct rtattr *ra = RTNH_DATA(nh);
				int alen = nh->rtnh_len - (int)sizeof(*nh);
				const void *gw = NULL;
				size_t gwlen = 0;

				if (rq.npaths == NH_MAX_MEMBERS) {
					/* Not some of the paths: the kernel
					 * uses them all. */
					log_warn(
					    "fpm: route %s: more than %d "
					    "paths, more than fpmd forwards "
					    "over; it takes the kernel path",
					    fmt_prefix(&rq.p, pb),
					    NH_MAX_MEMBERS);
					rq.type = RT_KERNEL;
					rq.kreason = KR_UNSUPPORTED;
					break;
				}
				for (; RTA_OK(ra, alen);
				     ra = RTA_NEXT(ra, alen)) {
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
				left -= fpm_rtnh_step(nh, left);
				p += RTNH_ALIGN(nh->rtnh_len);
			}
			rq.paths = paths;
		} else if (a.tb[RTA_OIF]) {
			path_from(&paths[0], rtm->rtm_family,
				  a.tb[RTA_GATEWAY]
				      ? mnl_attr_get_payload(a.tb[RTA_GATEWAY])
				      : NULL,
				  a.tb[RTA_GATEWAY] ? mnl_attr_get_payload_len(
							  a.tb[RTA_GATEWAY])
						    : 0,
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

void fpm_held_clear(void)
{
	free(held);
	held = NULL;
	n_held = cap_held = 0;
}

static bool held_add(uint32_t id, const uint32_t *ids, const uint32_t *w, int n)
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
					fpm.gen, &err);

		if (ret == -ENOENT) {
			i++;
			continue;
		}
		held[i] = held[--n_held];
		if (ret)
			log_warn("fpm: nexthop %u: %s", h.id, err);
	}
}

void fpm_nexthop_apply(const struct nlmsghdr *nlh)
{
	const struct nhmsg *nhm = mnl_nlmsg_get_payload(nlh);
	struct rib_path path = { 0 };
	const char *err = NULL;
	struct attrs a;
	char why[8];
	uint32_t id;
	int ret;

	fpm.st.nexthop_msgs++;
	fpm_attrs_parse(nlh, sizeof(*nhm), &a, NHA_MAX + 1, why, sizeof(why));
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
		ret = rib_nexthop_add(SRC_FPM, id, &path, false, true, fpm.gen,
				      &err);
	} else if (a.tb[NHA_GROUP]) {
		const struct nexthop_grp *g =
		    mnl_attr_get_payload(a.tb[NHA_GROUP]);
		int n = (int)(mnl_attr_get_payload_len(a.tb[NHA_GROUP]) /
			      sizeof(*g));
		uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS];

		for (int i = 0; i < n; i++) {
			ids[i] = g[i].id;
			w[i] = g[i].weight + 1u; /* the kernel's weight - 1 */
		}
		ret = rib_group_add(SRC_FPM, id, ids, w, n, fpm.gen, &err);
		if (ret == -ENOENT && held_add(id, ids, w, n)) {
			log_debug("fpm: nexthop group %u: held until its "
				  "members arrive",
				  id);
			return;
		}
	} else if (a.tb[NHA_BLACKHOLE]) {
		ret = rib_nexthop_add(SRC_FPM, id, &path, true, false, fpm.gen,
				      &err);
	} else if (a.tb[NHA_ENCAP] || a.tb[NHA_FDB] || !a.tb[NHA_OIF]) {
		ret = rib_nexthop_add(SRC_FPM, id, &path, false, true, fpm.gen,
				      &err);
	} else {
		path_from(&path, nhm->nh_family,
			  a.tb[NHA_GATEWAY]
			      ? mnl_attr_get_payload(a.tb[NHA_GATEWAY])
			      : NULL,
			  a.tb[NHA_GATEWAY]
			      ? mnl_attr_get_payload_len(a.tb[NHA_GATEWAY])
			      : 0,
			  mnl_attr_get_u32(a.tb[NHA_OIF]), 1);
		ret = rib_nexthop_add(SRC_FPM, id, &path, false, false, fpm.gen,
				      &err);
	}
	if (ret)
		log_warn("fpm: nexthop %u: %s", id, err);
	else if (n_held && !a.tb[NHA_GROUP])
		held_retry();
}
