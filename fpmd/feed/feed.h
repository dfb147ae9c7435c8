/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What fpmctl shows of a route feed (FPM, the zebra plugin). */
#ifndef FPMD_FEED_H
#define FPMD_FEED_H

#include <stdbool.h>
#include <stdint.h>

struct feed_status {
	bool enabled, connected;
	char listen[108], peer[64];
	uint64_t connections, frames, messages, errors;
	uint64_t route_msgs, nexthop_msgs;
	uint64_t ignored;         /* FPM: ignored messages; plugin: refused ops */
	char last_error[256];
	const char *replay_state; /* none, in-progress, settled/complete, held */
	uint64_t replay_refreshed, replay_swept;
	int sweep_src;		  /* the sweep under way (feed/replay.c) */
	bool sweep_background;	  /* it went on after its first slice */
	uint64_t first_message_ns, last_message_ns, last_map_write_ns;
	uint64_t hold_remaining_ms;
	uint64_t refused; /* connections refused: peer's user not allowed */
	uint64_t status_sent, status_dropped; /* FPM route status replies */
};

#endif
