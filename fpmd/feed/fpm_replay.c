// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FPM replay, settle and hold. zebra replays everything on every connect
 * with no end marker: the replay is over once the stream has been quiet
 * for fpm/settle-time, and what it did not refresh is swept. When zebra
 * leaves, its routes keep forwarding for fpm/hold-time, unless the kernel
 * (which zebra programs too) drops them first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "conf/conf.h"
#include "feed/fpm_internal.h"
#include "feed/replay.h"
#include "common/log.h"
#include "kernel/nl.h"
#include "rib/rib.h"
#include "common/util.h"

static uint64_t settle_deadline_ns, hold_deadline_ns, kcheck_ns;
static uint64_t frames_at_connect;
static bool idle_said; /* this connection's "sent nothing" is logged */

static void timer_arm(uint64_t deadline_ns)
{
	struct itimerspec its = { 0 };
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t d = deadline_ns > now ? deadline_ns - now : 1;

	its.it_value.tv_sec = (time_t)(d / 1000000000ull);
	its.it_value.tv_nsec = (long)(d % 1000000000ull);
	timerfd_settime(fpm.timer_fd, 0, &its, NULL);
}

void fpm_replay_begin(void)
{
	fpm.st.replay_refreshed = fpm.st.replay_swept = 0;
	fpm.st.replay_state = "in-progress";
	hold_deadline_ns = 0;
	frames_at_connect = fpm.st.frames;
	idle_said = false;
	fpm.gen++;
	/* The replay ends when the stream has been quiet this long. */
	settle_deadline_ns =
	    now_ns(CLOCK_MONOTONIC) + (uint64_t)cfg.fpm_settle_ms * 1000000ull;
	timer_arm(settle_deadline_ns);
}

void fpm_replay_input(void)
{
	if (settle_deadline_ns)
		settle_deadline_ns = now_ns(CLOCK_MONOTONIC) +
				     (uint64_t)cfg.fpm_settle_ms * 1000000ull;
}

void fpm_replay_hold(void)
{
	hold_deadline_ns = feed_hold_start(&fpm.st);
	settle_deadline_ns = 0;
	/* zebra stopped without -r withdraws its routes from the kernel but
	 * sends nothing: look at the kernel soon, and while holding. */
	kcheck_ns = now_ns(CLOCK_MONOTONIC) + 1000000000ull;
	timer_arm(kcheck_ns < hold_deadline_ns ? kcheck_ns : hold_deadline_ns);
}

uint64_t fpm_hold_deadline(void)
{
	return hold_deadline_ns;
}

struct kset {
	struct prefix *p;
	size_t n, cap;
	bool failed;
};

static void kset_cb(const struct nl_route *r, void *arg)
{
	struct kset *k = arg;
	struct prefix p = r->p;

	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 1024;
		struct prefix *np = realloc(k->p, cap * sizeof(*np));

		if (!np) {
			k->failed = true;
			return;
		}
		k->p = np;
		k->cap = cap;
	}
	prefix_mask(&p);
	k->p[k->n++] = p;
}

static int cmp_pfx(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct prefix));
}

/*
 * While zebra is away, the kernel's main table is the truth it left
 * behind: held FPM routes the kernel no longer has are removed. FRR 10's
 * local routes (`L`, the router's own addresses) mirror the kernel's
 * local table, not its main one: they stay while the kernel has them.
 */
static void kernel_check(void)
{
	struct kset k = { 0 };
	struct hnode *n, *tmp;
	uint32_t removed = 0;
	size_t i;

	if (nl_dump_routes(AF_INET, RT_TABLE_MAIN, kset_cb, &k) ||
	    nl_dump_routes(AF_INET6, RT_TABLE_MAIN, kset_cb, &k) ||
	    nl_dump_routes(AF_INET, RT_TABLE_LOCAL, kset_cb, &k) ||
	    nl_dump_routes(AF_INET6, RT_TABLE_LOCAL, kset_cb, &k) || k.failed) {
		free(k.p);
		return;
	}
	/* An empty dump leaves k.p NULL, which qsort and bsearch must not
	 * see even with no element (their base is declared nonnull). */
	if (k.n)
		qsort(k.p, k.n, sizeof(*k.p), cmp_pfx);
	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);
		const char *err;

		if (r->e[SRC_FPM].present &&
		    !(k.n && bsearch(&r->p, k.p, k.n, sizeof(*k.p), cmp_pfx)) &&
		    !rib_route_del(SRC_FPM, &r->p, &err))
			removed++;
	}
	free(k.p);
	if (removed)
		log_info("fpm: zebra is away and the kernel dropped %u of its "
			 "routes: removed them too",
			 removed);
}

int fpm_timer_fd(void)
{
	return fpm.timer_fd;
}

void fpm_timer(void)
{
	uint64_t exp, now = now_ns(CLOCK_MONOTONIC);

	if (read(fpm.timer_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		return;
	if (settle_deadline_ns) {
		if (now < settle_deadline_ns) {
			timer_arm(settle_deadline_ns);
			return;
		}
		if (fpm.st.frames == frames_at_connect) {
			/* Nothing replayed yet (zebra always sends its
			 * connected routes): an idle peer must not sweep the
			 * routes. */
			if (!idle_said)
				log_info("fpm: %s has sent nothing for the "
					 "settle time (%u ms): no replay to "
					 "end, nothing swept",
					 fpm.st.peer, cfg.fpm_settle_ms);
			idle_said = true;
			settle_deadline_ns =
			    now + (uint64_t)cfg.fpm_settle_ms * 1000000ull;
			timer_arm(settle_deadline_ns);
			return;
		}
		settle_deadline_ns = 0;
		if (feed_replay_sweep(&fpm.st, SRC_FPM, fpm.gen, "settled"))
			log_info("fpm: replay settled: %llu routes refreshed, "
				 "%llu stale removed",
				 (unsigned long long)fpm.st.replay_refreshed,
				 (unsigned long long)fpm.st.replay_swept);
		else
			log_info("fpm: replay settled: removing the stale "
				 "routes in slices");
		return;
	}
	if (hold_deadline_ns && fpm.conn_fd < 0) {
		if (now >= kcheck_ns && now < hold_deadline_ns) {
			kernel_check();
			kcheck_ns = now + 5000000000ull;
		}
		if (now < hold_deadline_ns) {
			timer_arm(kcheck_ns < hold_deadline_ns
				      ? kcheck_ns
				      : hold_deadline_ns);
			return;
		}
		hold_deadline_ns = 0;
		feed_hold_expired(&fpm.st, SRC_FPM, fpm.gen, "fpm");
	}
}
