// SPDX-License-Identifier: GPL-2.0-or-later
/* The replay and hold bookkeeping the FPM and plugin feeds share. */
#include <time.h>

#include "conf/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "feed/replay.h"

/* A replay's sweep is over: what it removed, what the feed holds now. */
static void replay_swept(void *arg, uint32_t swept)
{
	struct feed_status *st = arg;

	st->replay_swept = swept;
	st->replay_refreshed = rib_count(st->sweep_src);
	if (st->sweep_background)
		log_info("%s: %u stale routes removed (in slices, after the "
			 "replay)",
			 rib_source_name(st->sweep_src), swept);
}

/* A hold's sweep is over (the replay's numbers stay). */
static void hold_swept(void *arg, uint32_t swept)
{
	struct feed_status *st = arg;

	if (st->sweep_background)
		log_info("%s: %u routes removed (in slices, after the hold)",
			 rib_source_name(st->sweep_src), swept);
}

/* Start the sweep; true when it is over already. */
static bool sweep(struct feed_status *st, enum rib_source src,
		  uint32_t before, rib_sweep_done_fn done)
{
	bool now;

	st->sweep_src = src;
	st->sweep_background = false;
	now = rib_sweep(src, before, done, st);
	st->sweep_background = !now;
	return now;
}

bool feed_replay_sweep(struct feed_status *st, enum rib_source src,
		       uint32_t gen, const char *state)
{
	st->replay_state = state;
	st->replay_swept = 0;
	return sweep(st, src, gen, replay_swept);
}

uint64_t feed_hold_start(struct feed_status *st)
{
	st->connected = false;
	st->replay_state = "held";
	return now_ns(CLOCK_MONOTONIC) +
	       (uint64_t)cfg.fpm_hold_s * 1000000000ull;
}

void feed_hold_expired(struct feed_status *st, enum rib_source src,
		       uint32_t gen, const char *feed)
{
	uint32_t n = rib_count(src);

	st->replay_state = "none";
	log_warn("%s: zebra did not come back within %us: its %u routes "
		 "removed",
		 feed, cfg.fpm_hold_s, n);
	/* Everything up to the feed's current generation: its next
	 * connection's routes (gen + 1) are not swept. */
	sweep(st, src, gen + 1, hold_swept);
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
