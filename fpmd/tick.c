// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's recurring work, apart from the loop that schedules it:
 * the guard timer's tick (guards, attachments, RIB trimming, the slow
 * local table re-read) and committing route writes to the fast path.
 * The loop (loop.c), start-up (main.c) and reload (reload.c) all call it.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/timerfd.h>

#include "common/log.h"
#include "common/util.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "rib/rib.h"

static int timer_fd = -1;

int tick_open(void)
{
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (timer_fd < 0)
		return -errno;
	guard_timer_arm();
	return timer_fd;
}

void periodic(void)
{
	static uint64_t local_last;
	uint64_t now = now_ns(CLOCK_MONOTONIC) / 1000000;

	/* The backstop for attachment changes that send no event (bpf_link,
	 * changes while down). */
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			iface_watch(&iface_tab[s], fpmd_prog_fd);
	if (guard_check() && !cfg.allow_nf_bypass)
		log_debug("guard: netfilter still refuses the fast path");
	ev_take(EV_REQ_RECHECK);
	rib_trim();
	rib_retry_writes();
	/* Events drive the local table; a slow re-read catches a local
	 * route the kernel added well after announcing its address (IPv6
	 * DAD): IPv6 only, since IPv4's local table dump walks the whole
	 * FIB (~0.3 s at 1M routes). */
	if (now - local_last >= 30000) {
		local_last = now;
		local_routes_refresh_v6();
	}
}

void guard_timer_arm(void)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = cfg.guard_interval_ms / 1000;
	its.it_interval.tv_nsec = (long)(cfg.guard_interval_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	timerfd_settime(timer_fd, 0, &its, NULL);
}

void commit_maps(uint32_t max_drops)
{
	static bool failed;
	uint32_t nh_top, group_top, waiting;
	int ret;

	if (max_drops) {
		rib_index_tops(&nh_top, &group_top);
		ret = maps_shrink(max_drops, nh_top, group_top);
	} else {
		ret = maps_commit(0);
	}

	/* The routes that wait show it (state "unpublished", offload
	 * failed in zebra) from the first failure until a commit succeeds. */
	waiting = rib_published(ret);
	if (ret && !failed)
		log_err("fib: new IPv4 table parts cannot be published: %s; "
			"%u route%s written into them %s not in the fast path "
			"(state unpublished), retrying",
			strerror(-ret), waiting, waiting == 1 ? "" : "s",
			waiting == 1 ? "is" : "are");
	else if (!ret && failed)
		log_info("fib: pending IPv4 table parts published; the routes "
			 "written into them forward");
	failed = ret != 0;
}
