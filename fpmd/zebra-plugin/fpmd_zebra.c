// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd_zebra: zebra dataplane provider feeding fpmd, the XDP fast path.
 *
 *   zebra -M fpmd_zebra[:SOCKET]     (SOCKET defaults to /run/fpmd/plugin.sock)
 *
 * It runs after the kernel provider, so the kernel FIB is complete whatever
 * happens here, and it never fails or holds back a context: every route
 * and nexthop operation is encoded (a few microseconds, on the dataplane
 * pthread), queued, and handed straight back to zebra. The socket belongs
 * to the plugin's own pthread, so a slow or absent fpmd costs zebra
 * nothing: while fpmd is absent nothing is queued, the plugin says so once
 * and retries every second. On every (re)connect it sends Hello and
 * ReplayBegin, walks zebra's nexthop groups and selected routes on zebra's
 * main pthread (where the RIB lives; in slices, so zebra stays responsive)
 * and closes the replay with ReplayEnd: fpmd then removes exactly what the
 * replay did not send. fpmd acks every operation; refusals go to zebra's
 * log with the prefix or nexthop they are about.
 *
 * Fed: IPv4/IPv6 unicast routes of the default VRF's main table (254),
 * including connected and kernel routes (zebra 8.4 passes its selected
 * system routes through the dataplane too; the kernel provider skips
 * them), blackhole / unreachable / prohibit routes, and every nexthop
 * object zebra installs. Not fed: other VRFs and tables,
 * IPv6 link-local prefixes (one per interface, never forwarded), and
 * source-specific IPv6 routes. Routes with MPLS labels, EVPN/VXLAN or
 * SRv6 encapsulation are sent flagged unsupported, so fpmd keeps them on
 * the kernel path and can show why.
 *
 * Built against the FRR source of the installed zebra (configure
 * --with-frr-source=DIR); see scripts/frr-source.sh.
 *
 * This file: the module, the dataplane provider and its live operations,
 * `show fpmd plugin`. encode.c encodes routes and nexthops and walks the
 * RIB for a replay, conn.c holds the connection to fpmd, offload.c sets
 * fpmd's route status in zebra's RIB.
 */
#include "fpmd_zebra.h"

struct fpmd_zebra fz = { .fd = -1 };

/* ---- live operations (zebra's dataplane pthread) --------------------- */

static void fz_ctx_route(struct zebra_dplane_ctx *ctx, bool del)
{
	bool unsup = false;

	if (!fz_route_wanted(dplane_ctx_get_dest(ctx), dplane_ctx_get_src(ctx),
			     dplane_ctx_get_vrf(ctx), dplane_ctx_get_table(ctx),
			     dplane_ctx_get_afi(ctx),
			     dplane_ctx_get_safi(ctx))) {
		CNT_INC(skipped_other);
		return;
	}
	if (fz_send_route(del, dplane_ctx_get_type(ctx),
			  dplane_ctx_get_dest(ctx), dplane_ctx_get_ng(ctx),
			  dplane_ctx_get_nhe_id(ctx),
			  fz_mtu(dplane_ctx_get_mtu(ctx),
				 dplane_ctx_get_nh_mtu(ctx)),
			  0, &unsup))
		CNT_INC(route_ops);
	if (unsup)
		CNT_INC(unsupported);
}

static void fz_ctx_nexthop(struct zebra_dplane_ctx *ctx, bool del)
{
	if (dplane_ctx_get_nhe_vrf_id(ctx) != VRF_DEFAULT) {
		CNT_INC(skipped_other);
		return;
	}
	if (fz_send_nexthop(del, dplane_ctx_get_nhe_id(ctx),
			    dplane_ctx_get_nhe_ng(ctx),
			    dplane_ctx_get_nhe_nh_grp(ctx),
			    dplane_ctx_get_nhe_nh_grp_count(ctx), 0))
		CNT_INC(nexthop_ops);
}

static void fz_ctx(struct zebra_dplane_ctx *ctx)
{
	enum dplane_op_e op = dplane_ctx_get_op(ctx);
	bool route = false, nexthop = false, del = false;

	/* Not a switch: FRR 10 builds with -Wswitch-enum, and the enum grows
	 * with every release. */
	if (op == DPLANE_OP_ROUTE_INSTALL || op == DPLANE_OP_ROUTE_UPDATE)
		route = true;
	else if (op == DPLANE_OP_ROUTE_DELETE)
		route = del = true;
	/* A kernel or connected route gone from the kernel (8.4 also sends a
	 * ROUTE_DELETE: fpmd takes a second delete as done). Another entry
	 * zebra then selects for the prefix comes as its own install. */
	else if (op == DPLANE_OP_SYS_ROUTE_DELETE)
		route = del = true;
	else if (op == DPLANE_OP_NH_INSTALL || op == DPLANE_OP_NH_UPDATE)
		nexthop = true;
	else if (op == DPLANE_OP_NH_DELETE)
		nexthop = del = true;
	else
		return;
	/* Not connected: the replay of the next connection covers it. */
	if (!atomic_load_explicit(&fz.is_up, memory_order_acquire)) {
		CNT_INC(skipped_down);
		return;
	}
	if (route)
		fz_ctx_route(ctx, del);
	else if (nexthop)
		fz_ctx_nexthop(ctx, del);
}

static int fz_process(struct zebra_dplane_provider *prov)
{
	struct zebra_dplane_ctx *ctx;
	int limit = dplane_provider_get_work_limit(prov);
	int i;

	for (i = 0; i < limit; i++) {
		ctx = dplane_provider_dequeue_in_ctx(prov);
		if (!ctx)
			break;
		fz_ctx(ctx);
		/* The kernel did the real work (failed contexts never reach
		 * a later provider); fpmd being absent or refusing never
		 * fails a route. */
		dplane_ctx_set_status(ctx, ZEBRA_DPLANE_REQUEST_SUCCESS);
		/* zebra's system-route notifications, which we asked for, go
		 * back to zebra as nothing: 8.4 to 10.3 do nothing with them
		 * there, but FRR 10.7 takes a returning SYS_ROUTE_ADD for a
		 * route the kernel added and adds it again, which notifies
		 * again, without end. */
		if (dplane_ctx_get_op(ctx) == DPLANE_OP_SYS_ROUTE_ADD ||
		    dplane_ctx_get_op(ctx) == DPLANE_OP_SYS_ROUTE_DELETE)
			dplane_ctx_set_op(ctx, DPLANE_OP_NONE);
		dplane_provider_enqueue_out_ctx(prov, ctx);
	}
	if (i >= limit)
		dplane_provider_work_ready();
	return 0;
}

/* ---- show fpmd plugin (zebra's own vty; vtysh does not know it) ------ */

DEFUN(show_fpmd_plugin, show_fpmd_plugin_cmd, "show fpmd plugin [json]",
      SHOW_STR "fpmd, the XDP fast path\n"
	       "zebra's dataplane provider feeding fpmd\n" JSON_STR)
{
	bool uj = argc > 3;
	struct json_object *jo = json_object_new_object();
	char err[sizeof(fz.last_error)], peer[sizeof(fz.peer)];
	uint64_t replay_id, backlog;
	bool up;

	pthread_mutex_lock(&fz.lock);
	up = fz.up;
	replay_id = fz.replay_id;
	backlog = fz.q.len;
	snprintf(err, sizeof(err), "%s", fz.last_error);
	snprintf(peer, sizeof(peer), "%s", fz.peer);
	pthread_mutex_unlock(&fz.lock);
	backlog += atomic_load_explicit(&fz.w_left, memory_order_relaxed);

	json_object_string_add(jo, "socket", fz.path);
	json_object_boolean_add(jo, "connected", up);
	json_object_string_add(jo, "peer", peer);
	json_object_int_add(jo, "replayId", replay_id);
	json_object_int_add(jo, "connections", CNT_GET(connections));
	json_object_int_add(jo, "connectFailures", CNT_GET(connect_failures));
	json_object_int_add(jo, "disconnects", CNT_GET(disconnects));
	json_object_int_add(jo, "routeOps", CNT_GET(route_ops));
	json_object_int_add(jo, "nexthopOps", CNT_GET(nexthop_ops));
	json_object_int_add(jo, "bytesSent", CNT_GET(bytes_sent));
	json_object_int_add(jo, "backlogBytes", backlog);
	json_object_int_add(jo, "acksOk", CNT_GET(acks_ok));
	json_object_int_add(jo, "acksFailed", CNT_GET(acks_failed));
	json_object_int_add(jo, "skippedDisconnected", CNT_GET(skipped_down));
	json_object_int_add(jo, "skippedOther", CNT_GET(skipped_other));
	json_object_int_add(jo, "unsupported", CNT_GET(unsupported));
	json_object_int_add(jo, "replaysSent", CNT_GET(replays_sent));
	json_object_int_add(jo, "replaysDone", CNT_GET(replays_done));
	json_object_int_add(jo, "overruns", CNT_GET(overruns));
	json_object_int_add(jo, "statusReceived", CNT_GET(status_received));
	json_object_int_add(jo, "statusDropped", CNT_GET(status_dropped));
	json_object_int_add(jo, "statusNoRoute", CNT_GET(status_no_route));
	json_object_int_add(jo, "markedOffloaded", CNT_GET(marked_offloaded));
	json_object_int_add(jo, "markedOffloadFailed", CNT_GET(marked_failed));
	json_object_int_add(jo, "marksCleared", CNT_GET(clears));
	json_object_string_add(jo, "lastError", err);
	if (uj)
		return vty_json(vty, jo);
	vty_out(vty, "fpmd plugin: %s %s%s%s\n",
		up ? "connected to" : "not connected to", fz.path,
		*peer ? ", peer " : "", peer);
	vty_out(vty,
		"  connections %" PRIu64 ", failed attempts %" PRIu64
		", disconnects %" PRIu64 ", replays sent %" PRIu64
		", completed %" PRIu64 "\n",
		CNT_GET(connections), CNT_GET(connect_failures),
		CNT_GET(disconnects), CNT_GET(replays_sent),
		CNT_GET(replays_done));
	vty_out(vty,
		"  live ops: routes %" PRIu64 ", nexthops %" PRIu64
		", skipped while disconnected %" PRIu64
		", not for fpmd %" PRIu64 ", unsupported %" PRIu64 "\n",
		CNT_GET(route_ops), CNT_GET(nexthop_ops), CNT_GET(skipped_down),
		CNT_GET(skipped_other), CNT_GET(unsupported));
	vty_out(vty,
		"  acks ok %" PRIu64 ", refused %" PRIu64
		"; bytes sent %" PRIu64 ", queued %" PRIu64 "\n",
		CNT_GET(acks_ok), CNT_GET(acks_failed), CNT_GET(bytes_sent),
		backlog);
	vty_out(vty,
		"  route status from fpmd %" PRIu64 ": marked offloaded %" PRIu64
		", offload-failed %" PRIu64 ", no such route %" PRIu64
		", dropped %" PRIu64 ", all marks cleared %" PRIu64 " times\n",
		CNT_GET(status_received), CNT_GET(marked_offloaded),
		CNT_GET(marked_failed), CNT_GET(status_no_route),
		CNT_GET(status_dropped), CNT_GET(clears));
	if (*err)
		vty_out(vty, "  last error: %s\n", err);
	json_object_free(jo);
	return CMD_SUCCESS;
}

/* ---- provider and module --------------------------------------------- */

static int fz_start(struct zebra_dplane_provider *prov)
{
	fz.fthread = frr_pthread_new(NULL, FZ_NAME, "fpmd_zebra");
	if (!fz.fthread || frr_pthread_run(fz.fthread, NULL) != 0) {
		zlog_err(FZ_LOG "cannot start its pthread: no fast path feed");
		return -1;
	}
	fz_add_event(fz.fthread->master, fz_connect, NULL, 0,
			 &fz.t_connect);
	return 0;
}

static int fz_finish(struct zebra_dplane_provider *prov, bool early)
{
	if (early) {
		/* Shutdown's route deletions still flow to fpmd. */
		atomic_store_explicit(&fz.shutdown, true, memory_order_relaxed);
		return 0;
	}
	if (fz.fthread) {
		frr_pthread_stop(fz.fthread, NULL);
		fz.fthread = NULL;
	}
	if (fz.fd >= 0)
		close(fz.fd);
	fz.fd = -1;
	fz_buf_free(&fz.q);
	fz_buf_free(&fz.w);
	fz_ring_clear(&fz.pending);
	wire_buf_free(&fz.in);
	pthread_mutex_lock(&fz.st_lock);
	free(fz.st_q.v);
	memset(&fz.st_q, 0, sizeof(fz.st_q));
	pthread_mutex_unlock(&fz.st_lock);
	/* zebra's main loop no longer runs our events. */
	free(fz.st_main.v);
	memset(&fz.st_main, 0, sizeof(fz.st_main));
	fz.st_next = 0;
	return 0;
}

/* zebra's main pthread, first thing at shutdown: before the RIB goes. */
static int fz_early_fini(void)
{
	atomic_store_explicit(&fz.shutdown, true, memory_order_relaxed);
	FZ_OFF(fz.t_walk_start);
	FZ_OFF(fz.t_status);
	fz_walk_stop();
	return 0;
}

static int fz_late_init(struct fz_loop *tm)
{
	const char *arg = THIS_MODULE->load_args;
	int ret;

	if (arg && *arg) {
		if (strlen(arg) >= sizeof(fz.path)) {
			zlog_err(FZ_LOG "socket path too long: %s; not loaded",
				 arg);
			return 0;
		}
		strlcpy(fz.path, arg, sizeof(fz.path));
	} else {
		strlcpy(fz.path, FZ_DEFAULT_SOCKET, sizeof(fz.path));
	}
	pthread_mutex_init(&fz.lock, NULL);
	pthread_mutex_init(&fz.st_lock, NULL);
	ret = dplane_provider_register(FZ_NAME, DPLANE_PRIO_POSTPROCESS,
				       DPLANE_PROV_FLAG_THREADED, fz_start,
				       fz_process, fz_finish, NULL, &fz.prov);
	if (ret) {
		zlog_err(FZ_LOG "dplane_provider_register failed (%d): no "
				"fast path feed",
			 ret);
		return 0;
	}
	/* Kernel and connected routes leaving the kernel: FRR 10 queues no
	 * ROUTE_DELETE for them (8.4 does), only this notification, and only
	 * on request (fz_process). */
	dplane_enable_sys_route_notifs();
	hook_register(frr_early_fini, fz_early_fini);
	install_element(VIEW_NODE, &show_fpmd_plugin_cmd);
	zlog_info(FZ_LOG "loaded (built for FRR " FRR_VERSION "), feeding "
			 "fpmd at %s",
		  fz.path);
	return 0;
}

/* The FRR release zebra runs: libfrr's own entry in the module list. */
static const char *fz_running_release(void)
{
	for (struct frrmod_runtime *m = frrmod_list; m; m = m->next)
		if (m->info && m->info->name && m->info->version &&
		    !strcmp(m->info->name, "libfrr"))
			return m->info->version;
	return NULL;
}

/* Same major.minor: the structures and enums the module uses match. */
static bool fz_same_release(const char *a, const char *b)
{
	unsigned int amaj, amin, bmaj, bmin;

	return sscanf(a, "%u.%u", &amaj, &amin) == 2 &&
	       sscanf(b, "%u.%u", &bmaj, &bmin) == 2 && amaj == bmaj &&
	       amin == bmin;
}

static int fz_module_init(void)
{
	const char *running = fz_running_release();

	/* Built against another release, the module would misread zebra's
	 * structures: refuse, and zebra says the module failed to load. */
	if (!running || !fz_same_release(running, FRR_VERSION)) {
		zlog_err(FZ_LOG "built for FRR " FRR_VERSION ", but this zebra is "
				"FRR %s: not loading (build the module against "
				"this FRR's source, or install the fpmd-frr "
				"package made for it)",
			 running ? running : "of unknown version");
		fprintf(stderr,
			FZ_LOG "built for FRR " FRR_VERSION ", but this zebra "
			       "is FRR %s: not loading\n",
			running ? running : "of unknown version");
		return -1;
	}
	hook_register(frr_late_init, fz_late_init);
	return 0;
}

FRR_MODULE_SETUP(.name = FZ_NAME, .version = FZ_VERSION,
		 .description = "fpmd XDP fast path feed (dataplane provider)",
		 .init = fz_module_init);

