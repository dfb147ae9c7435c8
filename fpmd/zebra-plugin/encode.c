// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zebra's routes and nexthops as fpmd's PluginMsg: the encoding, used by
 * the live operations (zebra's dataplane pthread) and by the replay walk
 * (zebra's main pthread), which sends every nexthop group and selected
 * route after a (re)connect and closes the replay with ReplayEnd.
 */
#include "fpmd_zebra.h"

static void fz_walk_routes(struct fz_event *t);

/* ---- encoding -------------------------------------------------------- */

static bool fz_nh_unsupported(const struct nexthop *nh)
{
	return (nh->nh_label && nh->nh_label->num_labels) ||
	       nh->nh_encap_type || nh->nh_srv6 ||
	       CHECK_FLAG(nh->flags, NEXTHOP_FLAG_EVPN);
}

/* A nexthop's gateway and interface; false if it is not a plain one. */
static bool fz_path(const struct nexthop *nh, Fpmd__PluginPath *pp,
		    uint8_t gw[16])
{
	fpmd__plugin_path__init(pp);
	pp->ifindex = nh->ifindex;
	pp->weight = nh->weight ? nh->weight : 1;
	switch (nh->type) {
	case NEXTHOP_TYPE_IFINDEX:
		return true;
	case NEXTHOP_TYPE_IPV4:
	case NEXTHOP_TYPE_IPV4_IFINDEX:
		memcpy(gw, &nh->gate.ipv4, 4);
		pp->gateway.data = gw;
		pp->gateway.len = 4;
		return true;
	case NEXTHOP_TYPE_IPV6:
	case NEXTHOP_TYPE_IPV6_IFINDEX:
		memcpy(gw, &nh->gate.ipv6, 16);
		pp->gateway.data = gw;
		pp->gateway.len = 16;
		return true;
	case NEXTHOP_TYPE_BLACKHOLE:
		break;
	}
	return false;
}

static Fpmd__RouteType fz_bh_type(enum blackhole_type bh)
{
	switch (bh) {
	case BLACKHOLE_REJECT:
		return FPMD__ROUTE_TYPE__RT_UNREACHABLE;
	case BLACKHOLE_ADMINPROHIB:
		return FPMD__ROUTE_TYPE__RT_PROHIBIT;
	case BLACKHOLE_UNSPEC:
	case BLACKHOLE_NULL:
		break;
	}
	return FPMD__ROUTE_TYPE__RT_BLACKHOLE;
}

/* Routes fpmd can program: the default VRF's main table, unicast. */
bool fz_route_wanted(const struct prefix *p, const struct prefix *src_p,
			    vrf_id_t vrf, uint32_t table, afi_t afi,
			    safi_t safi)
{
	if (vrf != VRF_DEFAULT || table != FZ_TABLE_MAIN ||
	    safi != SAFI_UNICAST || (afi != AFI_IP && afi != AFI_IP6))
		return false;
	if (p->family != AF_INET && p->family != AF_INET6)
		return false;
	if (src_p && src_p->prefixlen)
		return false;
	if (p->family == AF_INET6 && p->prefixlen >= 10 &&
	    IN6_IS_ADDR_LINKLOCAL(&p->u.prefix6))
		return false;
	return true;
}

/*
 * One RouteOp. ng: the route's nexthops, as the kernel got them (active
 * ones, recursive ones through what they resolve to). nhg_id: the zebra
 * nexthop object installed for it, which the plugin sent as a NexthopOp
 * before. The paths are always sent too, so the route never depends on a
 * NexthopOp.
 */
bool fz_send_route(bool del, int type, const struct prefix *p,
			  const struct nexthop_group *ng, uint32_t nhg_id,
			  uint32_t mtu, uint32_t gen, bool *sent_unsupported)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__RouteOp op = FPMD__ROUTE_OP__INIT;
	Fpmd__Prefix pfx = FPMD__PREFIX__INIT;
	Fpmd__PluginPath pathv[MULTIPATH_NUM], *paths[MULTIPATH_NUM];
	uint8_t gw[MULTIPATH_NUM][16];
	struct fz_pending what = { .kind = FZ_K_ROUTE, .del = del };
	const struct nexthop *nh;
	size_t alen = p->family == AF_INET ? 4 : 16;
	size_t n = 0;

	memcpy(what.addr, &p->u.prefix, alen);
	what.family = p->family;
	what.plen = p->prefixlen;
	pfx.addr.data = what.addr;
	pfx.addr.len = alen;
	pfx.len = p->prefixlen;
	op.prefix = &pfx;
	op.table = FZ_TABLE_MAIN;
	op.del = del;
	op.type = FPMD__ROUTE_TYPE__RT_UNICAST;
	op.mtu = del ? 0 : mtu;
	op.protocol = (char *)zebra_route_string(type); /* "static", "ospf" */

	nh = (!del && ng) ? ng->nexthop : NULL;
	if (nh && CHECK_FLAG(nh->flags, NEXTHOP_FLAG_RECURSIVE) && nh->resolved)
		nh = nh->resolved;
	if (nh && nh->type == NEXTHOP_TYPE_BLACKHOLE) {
		/* As the kernel gets it: a route type, no nexthop. */
		op.type = fz_bh_type(nh->bh_type);
	} else if (!del) {
		for (ALL_NEXTHOPS_PTR(ng, nh)) {
			if (CHECK_FLAG(nh->flags, NEXTHOP_FLAG_RECURSIVE) ||
			    CHECK_FLAG(nh->flags, NEXTHOP_FLAG_DUPLICATE) ||
			    !NEXTHOP_IS_ACTIVE(nh->flags))
				continue;
			if (n == MULTIPATH_NUM)
				break;
			if (fz_nh_unsupported(nh))
				op.unsupported = true;
			if (!fz_path(nh, &pathv[n], gw[n])) {
				op.unsupported = true;
				continue;
			}
			paths[n] = &pathv[n];
			n++;
		}
		op.paths = paths;
		op.n_paths = n;
		op.nhg_id = nhg_id;
		if (!n)
			op.unsupported = true;
	}
	if (op.unsupported)
		*sent_unsupported = true;
	m.msg_case = FPMD__PLUGIN_MSG__MSG_ROUTE;
	m.route = &op;
	return fz_queue(&m, &op.seq, &what, gen);
}

bool fz_send_nexthop(bool del, uint32_t id,
			    const struct nexthop_group *ng,
			    const struct nh_grp *grp, uint8_t ngrp,
			    uint32_t gen)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__NexthopOp op = FPMD__NEXTHOP_OP__INIT;
	Fpmd__PluginPath path;
	Fpmd__GroupMember memv[MULTIPATH_NUM], *mems[MULTIPATH_NUM];
	struct fz_pending what = { .kind = FZ_K_NEXTHOP, .del = del, .id = id };
	const struct nexthop *nh;
	uint8_t gw[16];

	op.id = id;
	op.del = del;
	if (!del && ngrp) {
		for (uint8_t i = 0; i < ngrp; i++) {
			fpmd__group_member__init(&memv[i]);
			memv[i].nhid = grp[i].id;
			memv[i].weight = grp[i].weight ? grp[i].weight : 1;
			mems[i] = &memv[i];
		}
		op.group = mems;
		op.n_group = ngrp;
	} else if (!del) {
		nh = ng ? ng->nexthop : NULL;
		if (nh && CHECK_FLAG(nh->flags, NEXTHOP_FLAG_RECURSIVE) &&
		    nh->resolved)
			nh = nh->resolved;
		if (!nh) {
			op.unsupported = true;
		} else if (nh->type == NEXTHOP_TYPE_BLACKHOLE) {
			op.blackhole = true;
		} else {
			if (!fz_path(nh, &path, gw) || fz_nh_unsupported(nh))
				op.unsupported = true;
			op.path = &path;
		}
	}
	m.msg_case = FPMD__PLUGIN_MSG__MSG_NEXTHOP;
	m.nexthop = &op;
	return fz_queue(&m, &op.seq, &what, gen);
}

/* The mtu zebra puts in the kernel route (netlink_route_multipath_msg_encode). */
uint32_t fz_mtu(uint32_t mtu, uint32_t nh_mtu)
{
	return !mtu || (nh_mtu && nh_mtu < mtu) ? nh_mtu : mtu;
}

/* ---- the replay walk (zebra's main pthread) -------------------------- */

static void fz_walk_run(void);

static bool fz_walk_current(void)
{
	bool ok;

	pthread_mutex_lock(&fz.lock);
	ok = fz.up && !fz.overrun && fz.gen == fz.walk.gen;
	pthread_mutex_unlock(&fz.lock);
	return ok && !atomic_load_explicit(&fz.shutdown, memory_order_relaxed);
}

void fz_walk_stop(void)
{
	if (fz.walk.rn)
		route_unlock_node(fz.walk.rn);
	fz.walk.rn = NULL;
	FZ_OFF(fz.walk.t);
}

struct fz_nhe_walk {
	struct zebra_dplane_ctx *ctx;
	bool groups;
	bool ok;
};

static int fz_walk_nhe(struct hash_bucket *b, void *arg)
{
	struct nhg_hash_entry *nhe = b->data;
	struct fz_nhe_walk *a = arg;
	bool group;

	/* What zebra installed (or queued), as NH_INSTALL announced it. */
	if (!CHECK_FLAG(nhe->flags, NEXTHOP_GROUP_VALID) ||
	    !CHECK_FLAG(nhe->flags,
			NEXTHOP_GROUP_INSTALLED | NEXTHOP_GROUP_QUEUED) ||
	    CHECK_FLAG(nhe->flags, NEXTHOP_GROUP_RECURSIVE) ||
	    nhe->vrf_id != VRF_DEFAULT)
		return HASHWALK_CONTINUE;
	group = !zebra_nhg_depends_is_empty(nhe);
	if (group != a->groups)
		return HASHWALK_CONTINUE;
	dplane_ctx_reset(a->ctx);
	dplane_ctx_nexthop_init(a->ctx, DPLANE_OP_NH_INSTALL, nhe);
	if (!fz_send_nexthop(false, dplane_ctx_get_nhe_id(a->ctx),
			     dplane_ctx_get_nhe_ng(a->ctx),
			     dplane_ctx_get_nhe_nh_grp(a->ctx),
			     dplane_ctx_get_nhe_nh_grp_count(a->ctx),
			     fz.walk.gen)) {
		a->ok = false;
		return HASHWALK_ABORT;
	}
	fz.walk.nexthops++;
	return HASHWALK_CONTINUE;
}

/*
 * Whether zebra has its own picture of the system yet. From FRR 9 on zebra
 * reads interfaces, addresses and kernel routes through its dataplane once
 * the event loop runs, and sets startup_time only when that is done
 * (zebra_main_router_started); 8.4 reads them before the loop. The routes
 * those reads make (connected, local, and with -K the kept kernel routes)
 * then wait in the meta queue. A walk before they are processed would
 * leave them out, and fpmd, which removes at ReplayEnd whatever the replay
 * did not send, would take them off the fast path until they came live a
 * few milliseconds later: traffic to a connected network would meet the
 * kernel path meanwhile. Waiting costs nothing, fpmd forwards by the routes
 * it holds until ReplayEnd, but it is bounded, since under a large table
 * the meta queue may not empty for a long time.
 */
static bool fz_zebra_settled(unsigned int *queued)
{
	*queued = zrouter.mq ? zrouter.mq->size : 0;
	return zrouter.startup_time != 0 && *queued == 0;
}

static void fz_walk_wait(struct fz_event *t)
{
	unsigned int queued;
	int64_t waited;

	(void)t;
	if (!fz_walk_current())
		return;
	waited = monotime_since(&fz.walk.wait_from, NULL) / 1000;
	if (!fz_zebra_settled(&queued)) {
		if (waited < FZ_SETTLE_MAX_MS) {
			fz_add_timer_msec(zrouter.master, fz_walk_wait, NULL,
					  FZ_SETTLE_POLL_MS, &fz.walk.t);
			return;
		}
		zlog_warn(FZ_LOG "replay %" PRIu64 " starts while zebra is still "
				 "%s (%u route updates queued after %" PRId64
				 " ms): what it adds later reaches fpmd live",
			  fz.walk.id,
			  zrouter.startup_time ? "busy" : "starting", queued,
			  waited);
	} else if (waited >= 100) {
		zlog_info(FZ_LOG "replay %" PRIu64 " waited %" PRId64
				 " ms for zebra's startup",
			  fz.walk.id, waited);
	}
	fz_walk_run();
}

void fz_walk_start(struct fz_event *t)
{
	fz_walk_stop();
	fz.walk.gen = FZ_VAL(t);
	if (!fz_walk_current())
		return;
	pthread_mutex_lock(&fz.lock);
	fz.walk.id = fz.replay_id;
	pthread_mutex_unlock(&fz.lock);
	monotime(&fz.walk.wait_from);
	fz_walk_wait(NULL);
}

static void fz_walk_run(void)
{
	struct fz_nhe_walk a = { .ok = true };

	fz.walk.afi = AFI_IP;
	fz.walk.in_table = false;
	fz.walk.routes = fz.walk.nexthops = 0;

	/* Single nexthops first, then groups of them: a group never names
	 * an id fpmd has not had in this replay. */
	a.ctx = dplane_ctx_alloc();
	hash_walk(zrouter.nhgs_id, fz_walk_nhe, &a);
	if (a.ok) {
		a.groups = true;
		hash_walk(zrouter.nhgs_id, fz_walk_nhe, &a);
	}
	dplane_ctx_fini(&a.ctx);
	if (!a.ok)
		return;
	fz_add_event(zrouter.master, fz_walk_routes, NULL, 0, &fz.walk.t);
}

/* One route node: its selected FIB entry, if fpmd can use it. */
static bool fz_walk_node(struct route_node *rn)
{
	rib_dest_t *dest = rib_dest_from_rnode(rn);
	const struct prefix *p, *src_p;
	struct nhg_hash_entry *nhe;
	struct route_entry *re;
	uint32_t nhg_id = 0;
	bool unsup = false;

	if (!dest || !dest->selected_fib)
		return true;
	re = dest->selected_fib;
	if (CHECK_FLAG(re->status, ROUTE_ENTRY_FAILED))
		return true;
	srcdest_rnode_prefixes(rn, &p, &src_p);
	if (!fz_route_wanted(p, src_p, re->vrf_id, re->table, fz.walk.afi,
			     SAFI_UNICAST))
		return true;
	nhe = re->nhe ? zebra_nhg_resolve(re->nhe) : NULL;
	if (nhe && CHECK_FLAG(nhe->flags, NEXTHOP_GROUP_VALID) &&
	    CHECK_FLAG(nhe->flags,
		       NEXTHOP_GROUP_INSTALLED | NEXTHOP_GROUP_QUEUED))
		nhg_id = nhe->id;
	if (!fz_send_route(false, re->type, p,
			   re->nhe ? &re->nhe->nhg : NULL, nhg_id,
			   fz_mtu(re->mtu, re->nexthop_mtu), fz.walk.gen,
			   &unsup))
		return false;
	if (unsup)
		CNT_INC(unsupported);
	fz.walk.routes++;
	return true;
}

static void fz_walk_routes(struct fz_event *t)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__ReplayEnd end = FPMD__REPLAY_END__INIT;
	int n = 0;

	if (!fz_walk_current()) {
		fz_walk_stop();
		return;
	}
	if (fz_backlog() > FZ_WALK_HIGH) {
		/* fpmd is behind: let it catch up, keep zebra's memory flat. */
		fz_add_timer_msec(zrouter.master, fz_walk_routes, NULL, 10,
				      &fz.walk.t);
		return;
	}
	for (; fz.walk.afi <= AFI_IP6;
	     fz.walk.afi++, fz.walk.in_table = false) {
		if (!fz.walk.in_table) {
			struct route_table *table = zebra_vrf_table(
			    fz.walk.afi, SAFI_UNICAST, VRF_DEFAULT);

			fz.walk.rn = table ? route_top(table) : NULL;
			fz.walk.in_table = true;
		}
		while (fz.walk.rn) {
			if (!fz_walk_node(fz.walk.rn)) {
				fz_walk_stop();
				return;
			}
			/* Locks the next node and unlocks this one: the
			 * held node survives between slices. */
			fz.walk.rn = srcdest_route_next(fz.walk.rn);
			if (++n >= FZ_WALK_SLICE && fz.walk.rn) {
				fz_add_event(zrouter.master, fz_walk_routes,
						 NULL, 0, &fz.walk.t);
				return;
			}
		}
	}
	end.id = fz.walk.id;
	end.routes = fz.walk.routes;
	end.nexthops = fz.walk.nexthops;
	m.msg_case = FPMD__PLUGIN_MSG__MSG_REPLAY_END;
	m.replay_end = &end;
	if (fz_queue(&m, NULL, NULL, fz.walk.gen)) {
		CNT_INC(replays_sent);
		zlog_info(FZ_LOG "replay %" PRIu64 " sent: %" PRIu64
				 " routes, %" PRIu64 " nexthops",
			  fz.walk.id, fz.walk.routes, fz.walk.nexthops);
	}
}
