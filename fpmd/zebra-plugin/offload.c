// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd's route status in zebra's RIB: RouteStatus messages from fpmd,
 * queued by the plugin's pthread, set the offloaded / offload-failed
 * flags on zebra's main pthread.
 */
#include "fpmd_zebra.h"

static void fz_status_apply(struct fz_event *t);

/* ---- offload status in zebra's RIB ----------------------------------- */

/*
 * FRR 8.5 and later: zebra's own path. The mark of the prefix's selected
 * FIB entry goes to zebra as a DPLANE_OP_ROUTE_NOTIFY context, as
 * dplane_fpm_nl hands it an FPM route notification, and zebra's
 * rib_process_dplane_notify() sets ZEBRA_FLAG_OFFLOADED or
 * ZEBRA_FLAG_OFFLOAD_FAILED (and clears the route's `q` under
 * --asic-offload=notify_on_offload). The context names the entry (type,
 * instance, table, vrf, prefix) and its nexthops, copied with their
 * flags: zebra matches a connected route by its nexthops (there may be
 * one per interface), and takes the context's nexthops as the set
 * installed in the FIB, which must stay what it is. Built on the main
 * pthread, where the RIB is.
 *
 * Local routes (FRR 10's `L`, the router's own addresses) get no mark:
 * zebra installs them nowhere (the kernel's local table answers), and XDP
 * hands their packets to the kernel by design, which is no failure.
 *
 * zebra has no notification that removes a mark: the entries fpmd no
 * longer answers for (not selected any more, or fpmd gone) are cleared
 * here on the main pthread, as below.
 *
 * FRR 8.4 has no such path (it has the op, but reads no offload flags
 * from it; a provider can only fail a route, and then zebra keeps it out
 * of the kernel too). There the flags are set here, on zebra's main
 * pthread, as zebra's own netlink code sets
 * them from a kernel notification: ZEBRA_FLAG_OFFLOADED or
 * ZEBRA_FLAG_OFFLOAD_FAILED on the prefix's selected FIB entry
 * (dest->selected_fib), both cleared on its other entries. zebra sets
 * selected_fib in rib_install_kernel() before it queues the context that
 * reaches fpmd, and the dataplane result (rib_process_result) leaves
 * re->flags alone, so whichever comes first, the status lands on the entry
 * fpmd answered for (or a newer one, whose own status follows).
 */

/* Any pthread: queue one status for the main pthread. */
void fz_status_push(const struct fz_status *s)
{
	bool sched;

	pthread_mutex_lock(&fz.st_lock);
	if (fz.st_q.len >= FZ_STATUS_MAX) {
		pthread_mutex_unlock(&fz.st_lock);
		CNT_INC(status_dropped);
		return;
	}
	if (fz.st_q.len == fz.st_q.cap) {
		size_t cap = fz.st_q.cap ? fz.st_q.cap * 2 : 1024;
		struct fz_status *v = realloc(fz.st_q.v, cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&fz.st_lock);
			CNT_INC(status_dropped);
			return;
		}
		fz.st_q.v = v;
		fz.st_q.cap = cap;
	}
	fz.st_q.v[fz.st_q.len++] = *s;
	sched = fz.st_q.len == 1;
	pthread_mutex_unlock(&fz.st_lock);
	/* thread_add_event is safe from any pthread; one pending is enough. */
	if (sched && !atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		fz_add_event(zrouter.master, fz_status_apply, NULL, 0,
				 &fz.t_status);
}

#if !FZ_HAVE_ROUTE_NOTIFY
static void fz_re_mark(struct route_entry *re, bool offloaded)
{
	if (offloaded) {
		SET_FLAG(re->flags, ZEBRA_FLAG_OFFLOADED);
		UNSET_FLAG(re->flags, ZEBRA_FLAG_OFFLOAD_FAILED);
	} else {
		SET_FLAG(re->flags, ZEBRA_FLAG_OFFLOAD_FAILED);
		UNSET_FLAG(re->flags, ZEBRA_FLAG_OFFLOADED);
	}
}
#endif

static void fz_re_unmark(struct route_entry *re)
{
	UNSET_FLAG(re->flags, ZEBRA_FLAG_OFFLOADED | ZEBRA_FLAG_OFFLOAD_FAILED);
}

#if FZ_HAVE_ROUTE_NOTIFY
/* Main pthread: the mark of re, rn's selected FIB entry, to zebra. */
static bool fz_notify(struct route_node *rn, struct route_entry *re,
		      bool offloaded)
{
	struct zebra_dplane_ctx *ctx = dplane_ctx_alloc();
	const struct route_table *table = srcdest_rnode_table(rn);
	const struct rib_table_info *info = table ? table->info : NULL;
	const struct prefix *p, *src_p;
	uint32_t flags;

	if (!ctx)
		return false;
	srcdest_rnode_prefixes(rn, &p, &src_p);
	if (!info ||
	    dplane_ctx_route_init_basic(ctx, DPLANE_OP_ROUTE_NOTIFY, re, p,
					(const struct prefix_ipv6 *)src_p,
					info->afi, info->safi) != 0) {
		dplane_ctx_fini(&ctx);
		return false;
	}
	flags = re->flags & ~(ZEBRA_FLAG_OFFLOADED | ZEBRA_FLAG_OFFLOAD_FAILED |
			      ZEBRA_FLAG_TRAPPED);
	flags |= offloaded ? ZEBRA_FLAG_OFFLOADED : ZEBRA_FLAG_OFFLOAD_FAILED;
	dplane_ctx_set_flags(ctx, flags);
	if (re->nhe)
		dplane_ctx_set_nexthops(ctx, re->nhe->nhg.nexthop);
	dplane_provider_enqueue_to_zebra(ctx);
	return true;
}
#endif

/* Main pthread: one status onto the RIB. */
static void fz_status_one(const struct fz_status *s)
{
	struct prefix p = { .family = s->family, .prefixlen = s->plen };
	struct route_table *table;
	struct route_entry *re, *sel;
	struct route_node *rn;
	rib_dest_t *dest;

	memcpy(&p.u.prefix, s->addr, s->family == AF_INET ? 4 : 16);
	table = zebra_vrf_table(s->family == AF_INET ? AFI_IP : AFI_IP6,
				SAFI_UNICAST, VRF_DEFAULT);
	rn = table ? srcdest_rnode_lookup(table, &p, NULL) : NULL;
	if (!rn) {
		CNT_INC(status_no_route);
		return;
	}
	dest = rib_dest_from_rnode(rn);
	sel = dest ? dest->selected_fib : NULL;
	if (sel && CHECK_FLAG(sel->status, ROUTE_ENTRY_REMOVED))
		sel = NULL;
	if (!sel)
		CNT_INC(status_no_route);
	RNODE_FOREACH_RE (rn, re) {
		if (re != sel) {
			/* An entry fpmd no longer answers for. */
			fz_re_unmark(re);
			continue;
		}
#ifdef ZEBRA_ROUTE_LOCAL
		if (re->type == ZEBRA_ROUTE_LOCAL) {
			fz_re_unmark(re);
			continue;
		}
#endif
#if FZ_HAVE_ROUTE_NOTIFY
		if (!fz_notify(rn, re, s->offloaded)) {
			CNT_INC(status_dropped);
			continue;
		}
#else
		fz_re_mark(re, s->offloaded);
#endif
		if (s->offloaded)
			CNT_INC(marked_offloaded);
		else
			CNT_INC(marked_failed);
	}
	route_unlock_node(rn);
}

/* Main pthread: fpmd is gone, nobody says what XDP does: no marks. */
static void fz_status_clear_all(void)
{
	for (afi_t afi = AFI_IP; afi <= AFI_IP6; afi++) {
		struct route_table *table =
		    zebra_vrf_table(afi, SAFI_UNICAST, VRF_DEFAULT);
		struct route_entry *re;
		struct route_node *rn;

		if (!table)
			continue;
		for (rn = route_top(table); rn; rn = srcdest_route_next(rn))
			RNODE_FOREACH_RE (rn, re)
				fz_re_unmark(re);
	}
	CNT_INC(clears);
}

static void fz_status_apply(struct fz_event *t)
{
	int n = 0;

	/* Shutting down: the RIB is being taken apart. */
	if (atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		return;
	for (;;) {
		if (fz.st_next == fz.st_main.len) {
			struct fz_status_q tmp;

			fz.st_main.len = fz.st_next = 0;
			pthread_mutex_lock(&fz.st_lock);
			tmp = fz.st_q;
			fz.st_q = fz.st_main;
			fz.st_main = tmp;
			pthread_mutex_unlock(&fz.st_lock);
			if (!fz.st_main.len)
				return;
		}
		while (fz.st_next < fz.st_main.len) {
			const struct fz_status *s = &fz.st_main.v[fz.st_next++];

			if (!s->family)
				fz_status_clear_all();
			else
				fz_status_one(s);
			if (++n >= FZ_STATUS_SLICE) {
				/* Let zebra breathe; the rest next turn. */
				fz_add_event(zrouter.master,
						 fz_status_apply, NULL, 0,
						 &fz.t_status);
				return;
			}
		}
	}
}

/* The plugin's pthread: a RouteStatus from fpmd. */
void fz_route_status(const Fpmd__RouteStatus *rs)
{
	const Fpmd__Prefix *pp = rs->prefix;
	struct fz_status s = { .offloaded = rs->offloaded };

	CNT_INC(status_received);
	if (!pp || (pp->addr.len != 4 && pp->addr.len != 16) ||
	    pp->len > pp->addr.len * 8u ||
	    (rs->table && rs->table != FZ_TABLE_MAIN))
		return;
	s.family = pp->addr.len == 4 ? AF_INET : AF_INET6;
	s.plen = (uint8_t)pp->len;
	memcpy(s.addr, pp->addr.data, pp->addr.len);
	fz_status_push(&s);
}
