/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What both route feeds (FPM, the plugin) do alike around a replay: the
 * sweep once a replay is complete, and the hold of a feed's routes while
 * zebra is away.
 */
#ifndef FPMD_FEED_REPLAY_H
#define FPMD_FEED_REPLAY_H

#include <stdint.h>

#include "feed/feed.h"
#include "rib/rib.h"

/* The replay of generation gen is complete: remove the routes of src it
 * did not refresh, and show it (replay_state = state). True when that
 * is done already (st->replay_swept says how many went); else it goes
 * on in slices (rib_sweep_run), st updated and a line logged at the
 * end. */
bool feed_replay_sweep(struct feed_status *st, enum rib_source src,
		       uint32_t gen, const char *state);
/* zebra is gone: its routes keep forwarding for fpm/hold-time. Returns
 * the CLOCK_MONOTONIC deadline. */
uint64_t feed_hold_start(struct feed_status *st);
/* The hold ran out and zebra did not come back: its routes go. */
void feed_hold_expired(struct feed_status *st, enum rib_source src,
		       uint32_t gen, const char *feed);
/* st as fpmctl shows it: with the time left of a hold (deadline, while
 * disconnected). */
void feed_get_status(const struct feed_status *st, uint64_t hold_deadline_ns,
		     bool connected, struct feed_status *out);

#endif
