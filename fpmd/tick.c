// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's recurring work, apart from the loop that schedules it:
 * the guard timer's tick (guards, attachments, RIB trimming, the slow
 * local table re-read) and committing route writes to the fast path.
 * The loop (loop.c), start-up (main.c) and reload (reload.c) all call it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/timerfd.h>

#include "common/log.h"
#include "common/util.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/instance.h"
#include "kernel/probe.h"
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

/*
 * The guard tick's kernel queries (whose program each interface has, the
 * guards' tc, rule, link and device reads) wait for RTNL: the probe
 * thread asks (kernel/probe.h), and the loop applies the answers when
 * they come (tick_done). One at a time: a tick while one is under way
 * takes its answer; a re-check asked meanwhile waits for it, then asks
 * again (loop.c), since it may come from an event newer than the
 * snapshot.
 */
struct tick_watch {
	uint32_t slot, id;
	int ret;
	struct iface_watch_ask seen;
};

struct tick_job {
	struct probe_job job; /* first: the job is the tick_job */
	uint64_t asked_ns;
	struct guard_obs *guard;
	int nwatch;
	struct tick_watch watch[FPMD_MAX_IFACES];
};

static struct tick_job *in_flight;

bool tick_probing(void)
{
	return in_flight != NULL;
}

static void tick_run(struct probe_job *j)
{
	struct tick_job *t = (struct tick_job *)j;

	for (int k = 0; k < t->nwatch; k++)
		t->watch[k].ret = instance_attached_prog(t->watch[k].seen.ifindex,
							 &t->watch[k].id);
	guard_probe_run(t->guard);
}

static void tick_free(struct tick_job *t)
{
	free(t->guard);
	free(t);
}

static void tick_done(struct probe_job *j)
{
	struct tick_job *t = (struct tick_job *)j;
	uint64_t ms = (now_ns(CLOCK_MONOTONIC) - t->asked_ns) / 1000000;
	int ret;

	in_flight = NULL;
	if (j->cancelled) {
		guard_probe_drop(t->guard);
		tick_free(t);
		return;
	}
	/* The backstop for attachment changes that send no event (bpf_link,
	 * changes while down). */
	for (int k = 0; k < t->nwatch; k++)
		if (!t->watch[k].ret)
			iface_watch_seen(&iface_tab[t->watch[k].slot],
					 fpmd_prog_fd, &t->watch[k].seen,
					 t->watch[k].id);
	ret = guard_probe_apply(t->guard);
	if (ret == -ESTALE)
		fpmd_request_recheck(); /* asked again, as things are now */
	else if (ret && !cfg.allow_nf_bypass)
		log_debug("guard: netfilter still refuses the fast path");
	if (ms >= 20)
		log_debug("guard: the kernel took %llu ms to answer the guard "
			  "tick's queries (RTNL busy?), in the probe thread",
			  (unsigned long long)ms);
	tick_free(t);
}

/* Ask the probe thread; false when it cannot take the job. */
static bool probe_start(void)
{
	struct tick_job *t = calloc(1, sizeof(*t));

	if (!t || !(t->guard = guard_probe_new())) {
		free(t);
		return false;
	}
	t->job.run = tick_run;
	t->job.done = tick_done;
	t->asked_ns = now_ns(CLOCK_MONOTONIC);
	for (uint32_t s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_watch_ask(&iface_tab[s], &t->watch[t->nwatch].seen))
			t->watch[t->nwatch++].slot = s;
	if (probe_submit(&t->job)) {
		guard_probe_drop(t->guard);
		tick_free(t);
		return false;
	}
	in_flight = t;
	return true;
}

/* The same, here and now: start-up, reload, no probe thread. */
static void check_here(void)
{
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			iface_watch(&iface_tab[s], fpmd_prog_fd);
	if (guard_check() && !cfg.allow_nf_bypass)
		log_debug("guard: netfilter still refuses the fast path");
}

static void tick(bool here)
{
	static uint64_t local_last;
	uint64_t now = now_ns(CLOCK_MONOTONIC) / 1000000;

	/* One under way answers this tick; a re-check request stays for
	 * after it (loop.c). Here and now: it answers older than this. */
	if (here || !in_flight) {
		ev_take(EV_REQ_RECHECK);
		if (here || !probe_start())
			check_here();
	}
	rib_trim();
	rib_retry_writes();
	rib_nexthop_reap();
	/* Events drive the local table; a slow re-read catches a local
	 * route the kernel added well after announcing its address (IPv6
	 * DAD): IPv6 only, since IPv4's local table dump walks the whole
	 * FIB (~0.3 s at 1M routes). */
	if (now - local_last >= 30000) {
		local_last = now;
		local_routes_refresh_v6();
	}
}

void periodic(void)
{
	tick(false);
}

void periodic_here(void)
{
	tick(true);
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
