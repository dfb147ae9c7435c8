// SPDX-License-Identifier: GPL-2.0-or-later
/* The replay and hold bookkeeping the FPM and plugin feeds share. */
#include <time.h>

#include "conf/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "feed/replay.h"

uint32_t feed_replay_sweep(struct feed_status *st, enum rib_source src,
			   uint32_t gen, const char *state)
{
	uint32_t swept = rib_sweep(src, gen);

	st->replay_swept = swept;
	st->replay_refreshed = rib_count(src);
	st->replay_state = state;
	return swept;
}

uint64_t feed_hold_start(struct feed_status *st)
{
	st->connected = false;
	st->replay_state = "held";
	return now_ns(CLOCK_MONOTONIC) +
	       (uint64_t)cfg.fpm_hold_s * 1000000000ull;
}

void feed_hold_expired(struct feed_status *st, enum rib_source src,
		       const char *feed)
{
	uint32_t swept = rib_sweep(src, 0);

	st->replay_state = "none";
	log_warn("%s: zebra did not come back within %us: its %u routes "
		 "removed",
		 feed, cfg.fpm_hold_s, swept);
}

void feed_get_status(const struct feed_status *st, uint64_t hold_deadline_ns,
		     bool connected, struct feed_status *out)
{
	*out = *st;
	out->hold_remaining_ms = 0;
	if (hold_deadline_ns && !connected) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (hold_deadline_ns > now)
			out->hold_remaining_ms =
			    (hold_deadline_ns - now) / 1000000;
	}
}
