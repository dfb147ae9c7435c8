// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * 'fpmctl lookup ADDR': what the fast path does with a packet to ADDR,
 * and why (the same checks and the same longest programmed prefix XDP
 * uses, each verdict naming the counter it moves).
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>

#include "api/ctl_req.h"
#include "kernel/iface.h"
#include "rib/rib.h"
#include "common/util.h"

/* What the fast path's address checks say before any route lookup. */
static const char *addr_verdict(const struct prefix *p)
{
	const uint8_t *a = p->addr;

	if (p->family == AF_INET) {
		if (a[0] >= 224)
			return a[0] < 240 || (a[0] == 255 && a[1] == 255 &&
					      a[2] == 255 && a[3] == 255) ?
				       "multicast or broadcast destination: the "
				       "kernel (pass-multicast)" :
				       NULL;
		if (a[0] == 0 || a[0] == 127)
			return "martian destination: the kernel drops it "
			       "(pass-martian)";
		if (a[0] == 169 && a[1] == 254)
			return "link-local destination: the kernel "
			       "(pass-link-local)";
		return NULL;
	}
	if (a[0] == 0xff)
		return "multicast destination: the kernel (pass-multicast)";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "link-local destination: the kernel (pass-link-local)";
	{
		static const uint8_t zero[15];

		if (!memcmp(a, zero, 15) && (a[15] == 0 || a[15] == 1))
			return "martian destination: the kernel drops it "
			       "(pass-martian)";
	}
	return NULL;
}

/* A PEER egress is delivered by the tc program (doc/containers.md). */
static char *fwd_verdict(uint32_t ifindex)
{
	const struct iface *i = iface_by_ifindex(ifindex);

	return i && !iface_is_tx_port(i) && i->peer_egress ? "forwarded-peer" :
							      "forwarded";
}

/* Jumbo frames to an egress whose driver cannot transmit multi-buffer
 * XDP frames go to the kernel (doc/fast-path.md). */
static const char *sg_note(uint32_t ifindex)
{
	const struct iface *i = iface_by_ifindex(ifindex);

	return i && !i->xmit_sg ? "; frames larger than a page go to the "
				  "kernel (egress without xmit-sg: "
				  "pass-egress-kernel)" :
				  "";
}

static void lookup_unicast(struct arena *a, Fpmd__LookupResult *o,
			   const struct prefix *dst, struct nexthop *nh)
{
	struct nexthop *sl = rib_nexthop_slot(nh);
	char gw[ADDR_STRLEN], mac[MAC_STRLEN], ifbuf[IF_NAMESIZE];
	const char *ifn;
	const char *st = nexthop_state(nh);

	o->nhid = nh->id;
	o->is_group = nh->is_group;
	o->verdict = "kernel";
	if (nh->blackhole) {
		o->fast_path = true;
		o->verdict = "dropped";
		o->reason = "blackhole nexthop (drop-blackhole)";
		return;
	}
	if (nh->unsupported) {
		o->reason = "unsupported nexthop: the kernel routes it "
			    "(pass-unreachable)";
		return;
	}
	if (sl->index == NO_INDEX) {
		o->reason = "nexthop map full: the kernel routes it "
			    "(pass-unreachable)";
		return;
	}
	if (nh->is_group) {
		o->nexthops = arena_alloc(a, sizeof(*o->nexthops) *
					       (size_t)(nh->nmembers + 1));
		for (int i = 0; o->nexthops && i < nh->nmembers; i++)
			o->nexthops[o->n_nexthops++] =
				pb_nexthop(a, nh->members[i].nh);
		if (!strcmp(st, "member-map-full")) {
			o->reason = "a member got no nexthop slot (map full): "
				    "the whole group takes the kernel path "
				    "(pass-unresolved)";
			return;
		}
		if (!sl->nbuckets) {
			o->reason = "no member of the group is up: the kernel "
				    "(pass-unresolved)";
			return;
		}
		if (!strcmp(st, "egress-kernel")) {
			o->reason = "no member's egress is a tx port (see show "
				    "interfaces): the kernel "
				    "(pass-egress-kernel)";
			return;
		}
		o->fast_path = true;
		o->verdict = "forwarded";
		o->reason = arena_fmt(a, "ECMP over %d members (%u buckets), "
				   "picked by the flow's 5-tuple hash; a member "
				   "still unresolved, or whose egress is not a tx "
				   "port, sends its flows to the kernel",
				   nh->nmembers, sl->nbuckets);
		return;
	}
	o->nexthops = arena_alloc(a, sizeof(*o->nexthops));
	if (o->nexthops)
		o->nexthops[o->n_nexthops++] = pb_nexthop(a, nh);
	ifn = ctl_ifname(sl->ifindex, ifbuf);
	if (!strcmp(st, "egress-kernel")) {
		struct iface *i = iface_by_ifindex(sl->ifindex);

		o->reason = arena_fmt(a, "egress %s is not a tx port (%s): the "
				   "kernel (pass-egress-kernel)", ifn,
				   i ? iface_tx_reason(i) :
				       "not managed by fpmd");
		return;
	}
	if (!strcmp(st, "egress-down")) {
		o->reason = arena_fmt(a, "egress %s is down: the kernel "
				   "(pass-unresolved)", ifn);
		return;
	}
	if (sl->has_gw) {
		fmt_addr(sl->family, sl->gw, gw);
		if (!sl->resolved) {
			o->reason = arena_fmt(a, "neighbor %s on %s unresolved: "
					   "the kernel resolves it "
					   "(pass-unresolved)", gw, ifn);
			return;
		}
		o->fast_path = true;
		o->verdict = fwd_verdict(sl->ifindex);
		o->reason = arena_fmt(a, "via %s dev %s, to %s%s", gw, ifn,
				   fmt_mac(sl->mac, mac), sg_note(sl->ifindex));
		return;
	}
	/* Connected: the host's own neighbor entry gives the MAC. */
	{
		uint8_t m[6];
		char da[ADDR_STRLEN];

		fmt_addr(dst->family, dst->addr, da);
		if (!rib_neigh_lookup(dst->family, dst->addr, sl->ifindex, m)) {
			o->reason = arena_fmt(a, "connected on %s, neighbor %s "
					   "unresolved: the kernel resolves it "
					   "(pass-unresolved)", ifn, da);
			return;
		}
		o->fast_path = true;
		o->verdict = fwd_verdict(sl->ifindex);
		o->reason = arena_fmt(a, "connected on %s, to %s%s", ifn,
				   fmt_mac(m, mac), sg_note(sl->ifindex));
	}
}

static int do_lookup(struct arena *a, Fpmd__Response *rsp,
		     const Fpmd__LookupRequest *lr, const char **err)
{
	Fpmd__LookupResult *o = arena_alloc(a, sizeof(*o));
	struct prefix dst = { 0 };
	struct route *r = NULL;
	const char *pre;
	int bits;

	if (!o)
		return -ENOMEM;
	if (!lr || (lr->addr.len != 4 && lr->addr.len != 16)) {
		*err = "lookup needs an IPv4 or IPv6 address";
		return -EINVAL;
	}
	fpmd__lookup_result__init(o);
	rsp->lookup = o;
	dst.family = lr->addr.len == 4 ? AF_INET : AF_INET6;
	memcpy(dst.addr, lr->addr.data, lr->addr.len);
	bits = (int)lr->addr.len * 8;
	dst.len = (uint8_t)bits;
	o->verdict = "kernel";
	pre = addr_verdict(&dst);
	if (pre) {
		o->reason = (char *)pre;
		return 0;
	}
	/* What XDP's LPM lookup finds: the longest programmed prefix. */
	for (int len = bits; len >= 0 && !r; len--) {
		struct prefix m = dst;

		m.len = (uint8_t)len;
		prefix_mask(&m);
		r = rib_route_find(&m);
		if (r && !r->programmed)
			r = NULL;
	}
	if (!r || r->selected < 0) {
		o->reason = "no route in the fast path: the kernel routes it "
			    "(pass-no-route)";
		return 0;
	}
	{
		const struct route_entry *e = &r->e[r->selected];
		Fpmd__Prefix *p = pb_prefix(a, &r->p);

		if (!p)
			return -ENOMEM;
		o->prefix = p;
		o->source = pb_source(r->selected);
		o->protocol = (char *)rib_entry_protocol(r, r->selected);
		o->state = arena_str(a, route_entry_state(r, r->selected));
		switch (e->type) {
		case RT_LOCAL:
			o->type = FPMD__ROUTE_TYPE__RT_LOCAL;
			o->reason = "addressed to the router itself: the kernel "
				    "(pass-local)";
			break;
		case RT_BLACKHOLE:
			o->type = FPMD__ROUTE_TYPE__RT_BLACKHOLE;
			o->fast_path = true;
			o->verdict = "dropped";
			o->reason = "blackhole route (drop-blackhole)";
			break;
		case RT_UNREACHABLE:
		case RT_PROHIBIT:
			o->type = e->type == RT_UNREACHABLE ?
					  FPMD__ROUTE_TYPE__RT_UNREACHABLE :
					  FPMD__ROUTE_TYPE__RT_PROHIBIT;
			o->reason = "unreachable or prohibit route: the kernel "
				    "answers with ICMP (pass-unreachable)";
			break;
		case RT_KERNEL:
			o->type = FPMD__ROUTE_TYPE__RT_UNICAST;
			o->nhid = e->pending_nhid;
			o->reason = e->kreason == KR_NHID_UNKNOWN ?
					    "its nexthop id was never sent by the "
					    "feed: the kernel routes it "
					    "(pass-unreachable)" :
				    e->kreason == KR_MTU_METRIC ?
					    "the route has an mtu metric, which "
					    "the kernel checks packets against: "
					    "the kernel routes it "
					    "(pass-unreachable)" :
					    "unsupported nexthop: the kernel "
					    "routes it (pass-unreachable)";
			break;
		default:
			o->type = FPMD__ROUTE_TYPE__RT_UNICAST;
			lookup_unicast(a, o, &dst, e->nh);
			break;
		}
	}
	return 0;
}

int ctl_lookup(struct ctl_req *r)
{
	return do_lookup(r->a, r->rsp, r->q->lookup, &r->err);
}
