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
 * Chosen over NTF_EXT_MANAGED entries (kernel 5.16 and later), which the
 * kernel keeps resolved whether used or not: they probe idle neighbors
 * forever and are never collected, which kernel forwarding does not do.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <sys/timerfd.h>

#include "common/log.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/nl.h"
#include "rib/rib.h"

#define NEIGH_USE_MS 500

static int timer_fd = -1;
static uint32_t scan_epoch; /* the epoch being handled */

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
	if (timer_fd >= 0)
		close(timer_fd);
	timer_fd = -1;
}

/* NTF_USE for ne, counted; a failure other than ENOENT logged once. */
static void tell(const struct neighbor *ne)
{
	static bool failed_logged;
	int ret = nl_neigh_use(ne->family, ne->ifindex, ne->addr);

	if (!ret) {
		rib_stats.neigh_use_sent++;
		return;
	}
	rib_stats.neigh_use_failed++;
	/* -ENOENT: the kernel dropped it meanwhile; its event follows. */
	if (ret != -ENOENT && !failed_logged)
		log_warn("neighbors: cannot tell the kernel a neighbor on "
			 "ifindex %u is in use: %s (said once)", ne->ifindex,
			 strerror(-ret));
	failed_logged = ret != -ENOENT || failed_logged;
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
		tell(ne);
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
	/* The kernel just made an entry STALE that the fast path used in
	 * the last scan's epoch: traffic through it is likely flowing now,
	 * and kernel forwarding would move it to DELAY with the next packet.
	 * Not from inside a dump (the request socket is busy): the next
	 * scan does it then. */
	if (ne->is_static || !ne->use_epoch || ne->use_epoch != scan_epoch ||
	    nl_talk_busy())
		return;
	tell(ne);
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
	if (ret && !failed_logged)
		log_err("neighbors: cannot read which the fast path uses: %s; "
			"the kernel may let them age out (said once)",
			strerror(-ret));
	failed_logged = failed_logged || ret;
}
