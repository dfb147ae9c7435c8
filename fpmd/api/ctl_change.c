// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a control client changes: routes, nexthops and neighbors added
 * and deleted by hand (source static), and the counters cleared. ctl.c
 * logs each change and commits the maps before it answers.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "api/ctl_req.h"
#include "common/log.h"
#include "common/util.h"
#include "feed/plugin.h"
#include "fib/maps.h"
#include "kernel/iface.h"
#include "rib/rib.h"

static int do_route(const Fpmd__Route *r, bool add, const char **err)
{
	struct rib_route_req rq = { .src = SRC_STATIC };
	struct rib_path path = { 0 };
	uint32_t ifindex;
	int ret, type;

	ret = pb_get_prefix(r->prefix, &rq.p, err);
	if (ret)
		return ret;
	if (!add)
		return rib_route_del(SRC_STATIC, &rq.p, err);
	type = plugin_route_type(r->type, err);
	if (type < 0)
		return type;
	ret = pb_get_ifindex(r->ifname, &ifindex, err);
	if (ret)
		return ret;
	if (r->gateway.len) {
		if (r->gateway.len != 4 && r->gateway.len != 16) {
			*err = "gateway must be 4 or 16 bytes";
			return -EINVAL;
		}
		if (!ifindex) {
			*err = "a gateway needs an interface (dev)";
			return -EINVAL;
		}
		path.family = r->gateway.len == 4 ? AF_INET : AF_INET6;
		path.has_gw = true;
		memcpy(path.gw, r->gateway.data, r->gateway.len);
	}
	path.ifindex = ifindex;
	rq.type = type;
	rq.nhid = r->nhid;
	rq.paths = &path;
	rq.npaths = 1;
	return rib_route_add(&rq, err);
}

static int do_nexthop(const Fpmd__Nexthop *n, bool add, const char **err)
{
	uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS], ifindex;
	struct rib_path path = { 0 };
	int ret;

	if (!add)
		return rib_nexthop_del(SRC_STATIC, n->id, err);
	if (n->n_members) {
		if (n->n_members > NH_MAX_MEMBERS) {
			*err = "too many group members (max 64)";
			return -EINVAL;
		}
		for (size_t i = 0; i < n->n_members; i++) {
			ids[i] = n->members[i]->nhid;
			w[i] = n->members[i]->weight;
		}
		return rib_group_add(SRC_STATIC, n->id, ids, w,
				     (int)n->n_members, 0, err);
	}
	ret = pb_get_ifindex(n->ifname, &ifindex, err);
	if (ret)
		return ret;
	if (n->gateway.len && n->gateway.len != 4 && n->gateway.len != 16) {
		*err = "gateway must be 4 or 16 bytes";
		return -EINVAL;
	}
	path.ifindex = ifindex;
	if (n->gateway.len) {
		path.has_gw = true;
		path.family = n->gateway.len == 16 ? AF_INET6 : AF_INET;
		memcpy(path.gw, n->gateway.data, n->gateway.len);
	}
	return rib_nexthop_add(SRC_STATIC, n->id, &path, false, false, 0, err);
}

static int do_neigh(const Fpmd__Neighbor *n, bool add, const char **err)
{
	uint32_t ifindex;
	int ret, family;

	if (n->addr.len != 4 && n->addr.len != 16) {
		*err = "neighbor address must be 4 or 16 bytes";
		return -EINVAL;
	}
	family = n->addr.len == 4 ? AF_INET : AF_INET6;
	ret = pb_get_ifindex(n->ifname, &ifindex, err);
	if (ret)
		return ret;
	if (!ifindex) {
		*err = "neighbor needs an interface (dev)";
		return -EINVAL;
	}
	if (!add)
		return rib_neigh_del(family, n->addr.data, ifindex, true, err);
	if (n->mac.len != 6) {
		*err = "lladdr must be 6 bytes";
		return -EINVAL;
	}
	return rib_neigh_add(family, n->addr.data, ifindex, n->mac.data, true,
			     err);
}

/* add and del of one object share a oneof union member: the request's
 * case says which it is. */
int ctl_route(struct ctl_req *r)
{
	return do_route(r->q->route_add,
			r->q->req_case == FPMD__REQUEST__REQ_ROUTE_ADD,
			&r->err);
}

int ctl_nexthop(struct ctl_req *r)
{
	return do_nexthop(r->q->nexthop_add,
			  r->q->req_case == FPMD__REQUEST__REQ_NEXTHOP_ADD,
			  &r->err);
}

int ctl_neigh(struct ctl_req *r)
{
	return do_neigh(r->q->neigh_add,
			r->q->req_case == FPMD__REQUEST__REQ_NEIGH_ADD,
			&r->err);
}

int ctl_clear_counters(struct ctl_req *r)
{
	(void)r;
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			maps_stats_clear_slot(iface_tab[s].slot);
	log_info("ctl: counters cleared");
	return 0;
}

/* The object a change names, for the log: "route 10.0.0.0/8",
 * "nexthop 42". */
static const char *change_object(const Fpmd__Request *q, char *buf, size_t len)
{
	const Fpmd__Prefix *p = NULL;
	const ProtobufCBinaryData *a = NULL;
	char ab[ADDR_STRLEN];

	switch (q->req_case) {
	case FPMD__REQUEST__REQ_ROUTE_ADD:
	case FPMD__REQUEST__REQ_ROUTE_DEL:
		p = q->route_add ? q->route_add->prefix : NULL;
		a = p ? &p->addr : NULL;
		break;
	case FPMD__REQUEST__REQ_NEXTHOP_ADD:
	case FPMD__REQUEST__REQ_NEXTHOP_DEL:
		snprintf(buf, len, "nexthop %u",
			 q->nexthop_add ? q->nexthop_add->id : 0);
		return buf;
	case FPMD__REQUEST__REQ_NEIGH_ADD:
	case FPMD__REQUEST__REQ_NEIGH_DEL:
		a = q->neigh_add ? &q->neigh_add->addr : NULL;
		break;
	default:
		break;
	}
	if (!a || (a->len != 4 && a->len != 16))
		return p ? "route (bad prefix)" : "neighbor (bad address)";
	fmt_addr(a->len == 4 ? AF_INET : AF_INET6, a->data, ab);
	if (p)
		snprintf(buf, len, "route %s/%u", ab, p->len);
	else
		snprintf(buf, len, "neighbor %s", ab);
	return buf;
}

/* "ctl: route add refused: route 10.0.0.0/8: route table full (...)" */
static void log_change(const char *what, const char *obj, int ret,
		       const char *err)
{
	if (ret)
		log_warn("ctl: %s refused: %s: %s", what, obj,
			 err ? err : strerror(-ret));
	else
		log_debug("ctl: %s %s", what, obj);
}

void ctl_log_change(const struct ctl_req *r, const char *what, int ret)
{
	char ob[ADDR_STRLEN + 16];

	log_change(what, change_object(r->q, ob, sizeof(ob)), ret, r->err);
}
