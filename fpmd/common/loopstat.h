/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long the event loop's iterations take: from epoll_wait returning
 * to the end of the batch's work, the wait excluded. An iteration is
 * all the loop does between two waits, so its length is how long a
 * control request, a route or a watchdog ping can be kept waiting. The
 * loop (fpmd/loop.c) records; show summary and the metrics (api/) read.
 * All in the loop's thread: no lock.
 */
#ifndef FPMD_LOOPSTAT_H
#define FPMD_LOOPSTAT_H

#include <stdint.h>

/* An iteration longer than this counts as slow (issue 27: none over
 * 20 ms, even while a million routes go). */
#define LOOPSTAT_SLOW_NS 20000000ull
/* The recent window: the last minute, one slot a second. */
#define LOOPSTAT_WINDOW_S 60
/* Histogram upper bounds, ns; the last bucket is everything above. */
#define LOOPSTAT_NBOUNDS 8
extern const uint64_t loopstat_bounds_ns[LOOPSTAT_NBOUNDS];

struct loopstat {
	uint64_t iterations;
	uint64_t total_ns;
	uint64_t slow; /* over LOOPSTAT_SLOW_NS */
	uint64_t bucket[LOOPSTAT_NBOUNDS + 1]; /* per bucket, not cumulative */
	/* The longest since start, what it spent most on, when (realtime). */
	uint64_t max_ns, max_at_ns;
	const char *max_what;
	/* The longest of each second of the last minute. */
	uint64_t win_sec[LOOPSTAT_WINDOW_S], win_ns[LOOPSTAT_WINDOW_S];
	const char *win_what[LOOPSTAT_WINDOW_S];
};

extern struct loopstat loopstat;

/* One iteration of ns, most of it spent on what (a static name). */
void loopstat_add(uint64_t ns, const char *what);
/* The longest iteration of the last LOOPSTAT_WINDOW_S seconds, and what
 * it spent most on ("" when none). */
uint64_t loopstat_recent_max(const char **what);

#endif
