// SPDX-License-Identifier: GPL-2.0-or-later
/* The event loop's iteration times: see loopstat.h. */
#include <time.h>

#include "common/loopstat.h"
#include "common/util.h"

struct loopstat loopstat;

/* 1, 5, 10, 20, 50, 100, 500 ms and 1 s: the 20 ms goal in the middle. */
const uint64_t loopstat_bounds_ns[LOOPSTAT_NBOUNDS] = {
	1000000ull,  5000000ull,   10000000ull,  20000000ull,
	50000000ull, 100000000ull, 500000000ull, 1000000000ull,
};

void loopstat_add(uint64_t ns, const char *what)
{
	struct loopstat *s = &loopstat;
	uint64_t sec = now_ns(CLOCK_MONOTONIC) / 1000000000ull;
	unsigned int k = (unsigned int)(sec % LOOPSTAT_WINDOW_S), b = 0;

	s->iterations++;
	s->total_ns += ns;
	s->slow += ns > LOOPSTAT_SLOW_NS;
	while (b < LOOPSTAT_NBOUNDS && ns > loopstat_bounds_ns[b])
		b++;
	s->bucket[b]++;
	if (ns > s->max_ns) {
		s->max_ns = ns;
		s->max_what = what;
		s->max_at_ns = now_ns(CLOCK_REALTIME);
	}
	if (s->win_sec[k] != sec) {
		s->win_sec[k] = sec;
		s->win_ns[k] = 0;
	}
	if (ns > s->win_ns[k]) {
		s->win_ns[k] = ns;
		s->win_what[k] = what;
	}
}

uint64_t loopstat_recent_max(const char **what)
{
	const struct loopstat *s = &loopstat;
	uint64_t sec = now_ns(CLOCK_MONOTONIC) / 1000000000ull, best = 0;

	*what = "";
	for (unsigned int k = 0; k < LOOPSTAT_WINDOW_S; k++)
		if (s->win_sec[k] + LOOPSTAT_WINDOW_S > sec &&
		    s->win_ns[k] > best) {
			best = s->win_ns[k];
			*what = s->win_what[k];
		}
	return best;
}
