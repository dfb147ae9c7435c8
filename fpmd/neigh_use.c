// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Neighbors the fast path sends to, kept by the kernel as its own
 * forwarding would keep them.
 *
 * The kernel's neighbor states follow the packets the kernel sends: a
 * packet through a STALE entry moves it to DELAY (neigh_event_send), then
 * to PROBE and a unicast probe unless something confirmed it, and garbage
 * collection (above gc_thresh1 entries) removes STALE entries unused for
 * gc_stale_time. Packets XDP redirects never reach that code: a used
 * entry would stay STALE, never be re-confirmed, never notice its host
 * gone or its MAC changed, and be collected while in use, taking its
 * routes to the kernel path and back.
 *
 * So the fast path stamps each nexthop or neighbor entry it sends by with
 * the current epoch (struct fpmd_meta), and every NEIGH_USE_MS fpmd starts
 * a new epoch and reads which entries carry the one that ended: for each
 * neighbor used and, as last announced, STALE, it sends the kernel
 * RTM_NEWNEIGH with NTF_USE, which runs the same neigh_event_send a
 * forwarded packet would. Entries in other states need nothing: the
 * kernel's own forwarding does nothing to them either (it sends through a
 * REACHABLE entry's cached header, and DELAY and PROBE run on timers).
 * The kernel then probes, confirms, fails or collects exactly as under its
 * own forwarding, at most NEIGH_USE_MS later, and fpmd follows its events.
 *
 * Each RTM_NEWNEIGH waits for RTNL, which zebra or an `ip` command may
 * hold for tens of milliseconds: the probe thread sends them (a batch per
 * scan, kernel/probe.h) and the loop counts the answers.
 *
 * Chosen over NTF_EXT_MANAGED entries (kernel 5.16 and later), which the
 * kernel keeps resolved whether used or not: they probe idle neighbors
 * forever and are never collected, which kernel forwarding does not do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <sys/timerfd.h>

#include "common/log.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/nl.h"
#include "kernel/probe.h"
#include "rib/rib.h"

#define NEIGH_USE_MS 500

static int timer_fd = -1;
static uint32_t scan_epoch; /* the epoch being handled */

/* The NTF_USE sends of one scan (or one STALE event). */
struct use_req {
	uint32_t ifindex;
	int family, ret;
	uint8_t addr[16];
};

struct use_job {
	struct probe_job job; /* first: the job is the use_job */
	uint32_t n, cap;
	struct use_req *req;
};

static struct use_job *batch; /* the scan's, being filled */

static void use_run(struct probe_job *j)
{
	struct use_job *u = (struct use_job *)j;

	for (uint32_t k = 0; k < u->n; k++)
		u->req[k].ret = nl_neigh_use(u->req[k].family,
					     u->req[k].ifindex, u->req[k].addr);
}

/* Each answer counted; a failure other than ENOENT logged once. */
static void use_done(struct probe_job *j)
{
	static bool failed_logged;
	struct use_job *u = (struct use_job *)j;

	for (uint32_t k = 0; k < u->n && !j->cancelled; k++) {
		int ret = u->req[k].ret;

		if (!ret) {
			rib_stats.neigh_use_sent++;
			continue;
		}
		rib_stats.neigh_use_failed++;
		/* -ENOENT: the kernel dropped it meanwhile; its event
		 * follows. */
		if (ret != -ENOENT && !failed_logged)
			log_warn("neighbors: cannot tell the kernel a neighbor "
				 "on ifindex %u is in use: %s (said once)",
				 u->req[k].ifindex, strerror(-ret));
		failed_logged = ret != -ENOENT || failed_logged;
	}
	free(u->req);
	free(u);
}

/* NTF_USE for ne, in the scan's batch. */
static void tell(struct use_job **b, const struct neighbor *ne)
{
	struct use_job *u = *b;
	struct use_req *r;

	if (!u && !(u = *b = calloc(1, sizeof(*u)))) {
		rib_stats.neigh_use_failed++;
		return;
	}
	if (u->n == u->cap) {
		uint32_t cap = u->cap ? u->cap * 2 : 16;
		void *m = realloc(u->req, cap * sizeof(*u->req));

		if (!m) {
			rib_stats.neigh_use_failed++;
			return;
		}
		u->req = m;
		u->cap = cap;
	}
	r = &u->req[u->n++];
	r->family = ne->family;
	r->ifindex = ne->ifindex;
	memcpy(r->addr, ne->addr, ne->family == AF_INET ? 4 : 16);
}

/* To the probe thread; without one, sent here (not from inside a dump:
 * the loop's request socket is busy, and the next scan sends them). */
static void send_batch(struct use_job **b)
{
	struct use_job *u = *b;

	*b = NULL;
	if (!u)
		return;
	u->job.run = use_run;
	u->job.done = use_done;
	if (!probe_submit(&u->job))
		return;
	if (nl_talk_busy())
		u->job.cancelled = true;
	else
		use_run(&u->job);
	use_done(&u->job);
}

int neigh_use_open(void)
{
	struct itimerspec its = { 0 };

	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (timer_fd < 0)
		return -errno;
	its.it_interval.tv_nsec = NEIGH_USE_MS * 1000000L;
	its.it_value = its.it_interval;
	timerfd_settime(timer_fd, 0, &its, NULL);
	return timer_fd;
}

void neigh_use_close(void)
{
	if (batch) {
		batch->job.cancelled = true;
		use_done(&batch->job);
		batch = NULL;
	}
	if (timer_fd >= 0)
		close(timer_fd);
	timer_fd = -1;
}

static void used(int family, uint32_t ifindex, const uint8_t *addr)
{
	struct neighbor *ne = rib_neigh_get(family, addr, ifindex);

	/* Once per neighbor and epoch (a gateway and a connected route may
	 * both have sent to it); nothing for a state the kernel's own
	 * forwarding would not change. */
	if (!ne || ne->is_static || ne->use_epoch == scan_epoch)
		return;
	ne->use_epoch = scan_epoch;
	if (ne->kstate == NUD_STALE)
		tell(&batch, ne);
}

static void nexthop_used(const struct fpmd_nexthop *nh, void *arg)
{
	(void)arg;
	/* Connected nexthops send by neighbor entries (below). */
	if ((nh->flags & FPMD_NH_F_RESOLVED) &&
	    !(nh->flags & FPMD_NH_F_CONNECTED))
		used(nh->flags & FPMD_NH_F_V6 ? AF_INET6 : AF_INET, nh->ifindex,
		     nh->gw);
}

static void neigh_used(int family, uint32_t ifindex, const uint8_t *addr,
		       void *arg)
{
	(void)arg;
	used(family, ifindex, addr);
}

void neigh_use_stale(struct neighbor *ne)
{
	struct use_job *one = NULL;

	/* The kernel just made an entry STALE that the fast path used in
	 * the last scan's epoch: traffic through it is likely flowing now,
	 * and kernel forwarding would move it to DELAY with the next packet. */
	if (ne->is_static || !ne->use_epoch || ne->use_epoch != scan_epoch)
		return;
	tell(&one, ne);
	send_batch(&one);
}

void neigh_use_tick(void)
{
	static bool failed_logged;
	uint64_t exp;
	int ret;

	if (read(timer_fd, &exp, sizeof(exp)) != sizeof(exp))
		return;
	/* Entries stamped with the epoch that ends, or already with the
	 * next (sent by since): used within the last NEIGH_USE_MS. */
	ret = maps_epoch_next(&scan_epoch);
	if (!ret)
		ret = maps_nexthops_used(scan_epoch, nexthop_used, NULL);
	if (!ret)
		ret = maps_neighs_used(scan_epoch, neigh_used, NULL);
	send_batch(&batch);
	if (ret && !failed_logged)
		log_err("neighbors: cannot read which the fast path uses: %s; "
			"the kernel may let them age out (said once)",
			strerror(-ret));
	failed_logged = failed_logged || ret;
}
