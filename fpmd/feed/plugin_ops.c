// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plugin's RouteOp and NexthopOp into the RIB, as the SRC_PLUGIN
 * source, stamped with the replay's generation. What fpmd cannot forward
 * exactly as the kernel does goes in as a kernel-path route with the
 * reason; what is malformed is refused, and the Ack says why.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "common/log.h"
#include "feed/plugin_internal.h"
#include "rib/rib.h"

static int path_of(const Fpmd__PluginPath *pp, struct rib_path *path,
		   const char **err)
{
	memset(path, 0, sizeof(*path));
	if (!pp)
		return 0;
	if (pp->gateway.len && pp->gateway.len != 4 && pp->gateway.len != 16) {
		*err = "gateway must be 4 or 16 bytes";
		return -EINVAL;
	}
	if (pp->weight > 256) {
		*err = "weight must be 1..256";
		return -EINVAL;
	}
	path->ifindex = pp->ifindex;
	path->weight = pp->weight ? pp->weight : 1;
	if (pp->gateway.len) {
		path->has_gw = true;
		path->family = pp->gateway.len == 4 ? AF_INET : AF_INET6;
		memcpy(path->gw, pp->gateway.data, pp->gateway.len);
	}
	return 0;
}

bool plugin_prefix_of(const Fpmd__Prefix *pp, struct prefix *p)
{
	if (!pp || (pp->addr.len != 4 && pp->addr.len != 16) ||
	    pp->len > pp->addr.len * 8u)
		return false;
	memset(p, 0, sizeof(*p));
	p->family = pp->addr.len == 4 ? AF_INET : AF_INET6;
	p->len = (uint8_t)pp->len;
	memcpy(p->addr, pp->addr.data, pp->addr.len);
	prefix_mask(p);
	return true;
}

/*
 * A route's group differs from the route's own paths. zebra 8.4.4 builds a
 * group's member list from the members valid when the group is installed
 * and never sends the group again when one comes back (a link down, then
 * up): the route returns to that group id with both paths while the group
 * zebra gave us (and, with kernel nexthop objects, the kernel's) has one.
 * The paths are zebra's selection, as the kernel gets them without
 * nexthop objects: forward over them. Said once per group id in a row.
 */
static bool group_stale(const Fpmd__RouteOp *r, const struct prefix *p)
{
	static uint32_t warned;
	struct rib_path paths[NH_MAX_MEMBERS];
	struct nexthop *g = rib_nexthop_find(SRC_PLUGIN, r->nhg_id);
	char pb[PREFIX_STRLEN];
	const char *err;
	int nm;

	/* A group fpmd keeps on the kernel path stays so. */
	if (!g || g->unsupported || g->blackhole || !r->n_paths ||
	    r->n_paths > NH_MAX_MEMBERS)
		return false;
	for (size_t i = 0; i < r->n_paths; i++)
		if (path_of(r->paths[i], &paths[i], &err))
			return false;
	if (rib_nexthop_same_paths(g, paths, (int)r->n_paths))
		return false;
	nm = g->is_group ? g->nmembers : 1;
	if (warned != r->nhg_id)
		log_warn("plugin: route %s: nexthop group %u has %d member%s, "
			 "the route %zu path%s; forwarding over the route's "
			 "paths (zebra did not resend the group)",
			 fmt_prefix(p, pb), r->nhg_id, nm, nm == 1 ? "" : "s",
			 r->n_paths, r->n_paths == 1 ? "" : "s");
	warned = r->nhg_id;
	return true;
}

/*
 * Forward by the route's nexthop object, or by its own paths (always
 * sent): those when zebra never installed the object (FRR 10's connected
 * routes name one, and no NexthopOp comes for it) or it is stale.
 */
static bool use_group(const Fpmd__RouteOp *r, const struct prefix *p)
{
	if (!r->nhg_id)
		return false;
	if (r->n_paths && !rib_nexthop_find(SRC_PLUGIN, r->nhg_id))
		return false;
	return !group_stale(r, p);
}

int plugin_route_type(int type, const char **err)
{
	static const enum rib_rtype types[] = {
		[FPMD__ROUTE_TYPE__RT_UNSPEC] = RT_UNICAST,
		[FPMD__ROUTE_TYPE__RT_UNICAST] = RT_UNICAST,
		[FPMD__ROUTE_TYPE__RT_BLACKHOLE] = RT_BLACKHOLE,
		[FPMD__ROUTE_TYPE__RT_UNREACHABLE] = RT_UNREACHABLE,
		[FPMD__ROUTE_TYPE__RT_PROHIBIT] = RT_PROHIBIT,
		[FPMD__ROUTE_TYPE__RT_LOCAL] = RT_LOCAL,
	};

	if (type < 0 || type > FPMD__ROUTE_TYPE__RT_LOCAL) {
		*err = "unknown route type";
		return -EINVAL;
	}
	return types[type];
}

int plugin_route_op(const Fpmd__RouteOp *r, const char **err)
{
	struct rib_path paths[NH_MAX_MEMBERS];
	struct rib_route_req rq = { .src = SRC_PLUGIN, .gen = plugin.gen };
	const Fpmd__Prefix *p = r->prefix;
	char pb[PREFIX_STRLEN];
	int ret, type;

	if (!plugin_prefix_of(p, &rq.p)) {
		*err = "bad prefix";
		return -EINVAL;
	}
	if (!r->del && r->protocol && r->protocol[0]) {
		/* zebra_route_string(): "static", "ospf", "connected", ... */
		int id = rib_protocol_id(r->protocol);

		if (id < 0) {
			*err =
			    "bad protocol name (1 to 15 of a-z, 0-9, _ and -)";
			return -EINVAL;
		}
		rq.proto = (uint8_t)id;
	}
	if (r->table && r->table != RT_TABLE_MAIN) {
		if (r->del)
			rib_other_del(SRC_PLUGIN, &rq.p, r->table);
		else
			rib_other_add(SRC_PLUGIN, &rq.p, r->table, plugin.gen,
				      rq.proto);
		return 0;
	}
	if (r->del) {
		ret = rib_route_del(SRC_PLUGIN, &rq.p, err);
		return ret == -ENOENT ? 0 : ret; /* already gone is fine */
	}
	type = plugin_route_type(r->type, err);
	if (type < 0)
		return type;
	rq.type = type;
	if (r->unsupported) {
		rq.type = RT_KERNEL;
		rq.kreason = KR_UNSUPPORTED;
	} else if (rq.type == RT_UNICAST && r->mtu && rq.p.family == AF_INET) {
		/* ip_forward goes by it (IPv6 only by a locked one, which
		 * zebra never sets): see route_mtu_metric() in fpm_apply.c. */
		rq.type = RT_KERNEL;
		rq.kreason = KR_MTU_METRIC;
	} else if (rq.type == RT_UNICAST && use_group(r, &rq.p)) {
		rq.nhid = r->nhg_id;
	} else if (rq.type == RT_UNICAST && r->n_paths > NH_MAX_MEMBERS) {
		/* Refusing it would leave a covering route (or the route's
		 * old paths) forwarding what the kernel sends over all of
		 * these: the kernel path it is. */
		log_warn("plugin: route %s: %zu paths, more than the %d fpmd "
			 "forwards over; it takes the kernel path",
			 fmt_prefix(&rq.p, pb), r->n_paths, NH_MAX_MEMBERS);
		rq.type = RT_KERNEL;
		rq.kreason = KR_UNSUPPORTED;
	} else if (rq.type == RT_UNICAST) {
		if (!r->n_paths) {
			*err =
			    "unicast route needs 1 to 64 paths or a group id";
			return -EINVAL;
		}
		for (size_t i = 0; i < r->n_paths; i++) {
			ret = path_of(r->paths[i], &paths[i], err);
			if (ret)
				return ret;
		}
		rq.paths = paths;
		rq.npaths = (int)r->n_paths;
	}
	return rib_route_add(&rq, err);
}

int plugin_nexthop_op(const Fpmd__NexthopOp *n, const char **err)
{
	struct rib_path path;
	int ret;

	if (n->del) {
		ret = rib_nexthop_del(SRC_PLUGIN, n->id, err);
		return ret == -ENOENT ? 0 : ret;
	}
	if (n->n_group > NH_MAX_MEMBERS) {
		/* As FPM: valid in zebra, the kernel path for its routes. */
		log_warn("plugin: nexthop group %u: %zu members, more than the "
			 "%d fpmd forwards over; routes using it take the "
			 "kernel path",
			 n->id, n->n_group, NH_MAX_MEMBERS);
		memset(&path, 0, sizeof(path));
		return rib_nexthop_add(SRC_PLUGIN, n->id, &path, false, true,
				       plugin.gen, err);
	}
	if (n->n_group) {
		uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS];

		for (size_t i = 0; i < n->n_group; i++) {
			ids[i] = n->group[i]->nhid;
			w[i] = n->group[i]->weight;
		}
		return rib_group_add(SRC_PLUGIN, n->id, ids, w, (int)n->n_group,
				     plugin.gen, err);
	}
	ret = path_of(n->path, &path, err);
	if (ret)
		return ret;
	return rib_nexthop_add(SRC_PLUGIN, n->id, &path, n->blackhole,
			       n->unsupported, plugin.gen, err);
}
