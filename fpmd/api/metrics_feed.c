// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metrics of the route feeds (FPM, the plugin), from the same status
 * 'fpmctl show fpm' and 'show plugin' print.
 */
#include <stddef.h>
#include <string.h>

#include "api/metrics_text.h"
#include "feed/feed.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "rib/rib.h"

/* Both feeds, in the order and shape of 'show fpm' / 'show plugin'. */
static const struct feed {
	const char *name;
	void (*get)(struct feed_status *st);
	enum rib_source src;
} feeds[] = {
	{ "fpm", fpm_get_status, SRC_FPM },
	{ "plugin", plugin_get_status, SRC_PLUGIN },
};

/* Each feed, with st filled with its status before the body runs. */
#define for_each_feed(fd, st)                                                  \
	for (const struct feed *fd = feeds;                                    \
	     fd < feeds + sizeof(feeds) / sizeof(feeds[0]) &&                  \
	     (fd->get(&st), true);                                             \
	     fd++)

static uint64_t feed_field(const struct out *o, const struct feed_status *st)
{
	uint64_t v;

	memcpy(&v, (const char *)st + o->f->feed_off, sizeof(v));
	return v;
}

/* A uint64_t of struct feed_status, named by the family (FEED_U64). */
static void feed_u64(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    metric_sample(o, feed_field(o, &st), "feed", fd->name, NULL);
}

/* A CLOCK_REALTIME ns of struct feed_status (FEED_TIME), in seconds. */
static void feed_time(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    metric_sample_time(o, feed_field(o, &st), "feed", fd->name, NULL);
}

static void feed_enabled(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    metric_sample(o, st.enabled, "feed", fd->name, NULL);
}

static void feed_connected(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    metric_sample(o, st.connected, "feed", fd->name, NULL);
}

static void feed_routes(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	    metric_sample(o, rib_count(fd->src), "feed", fd->name, NULL);
}

static void feed_replay_state(struct out *o)
{
	static const char *const states[] = { "none",	 "in-progress",
					      "settled", "complete",
					      "held",	 NULL };
	struct feed_status st;

	for_each_feed(fd, st) metric_state_set(o, states, st.replay_state,
					       "feed", fd->name, "state");
}

static void feed_hold(struct out *o)
{
	struct feed_status st;

	for_each_feed(fd, st)
	{
		bool held = !strcmp(st.replay_state, "held");

		metric_sample_time(o,
				   held ? st.hold_remaining_ms * 1000000ull : 0,
				   "feed", fd->name, NULL);
	}
}

#define FEED_U64(field)                                                        \
	.write = feed_u64, .feed_off = offsetof(struct feed_status, field)
#define FEED_TIME(field)                                                       \
	.write = feed_time, .feed_off = offsetof(struct feed_status, field)

static const struct metric_family families[] = {
	{ "fpmd_feed_enabled", "gauge",
	  "1 when the route feed (fpm, plugin) listens.",
	  .write = feed_enabled },
	{ "fpmd_feed_connected", "gauge",
	  "1 when zebra is connected to the route feed.",
	  .write = feed_connected },
	{ "fpmd_feed_connections_total", "counter",
	  "Connections the route feed accepted.", FEED_U64(connections) },
	{ "fpmd_feed_refused_connections_total", "counter",
	  "Connections refused: the peer's user is not allowed.",
	  FEED_U64(refused) },
	{ "fpmd_feed_frames_total", "counter",
	  "Frames received on the route feed.", FEED_U64(frames) },
	{ "fpmd_feed_messages_total", "counter",
	  "Messages received on the route feed.", FEED_U64(messages) },
	{ "fpmd_feed_route_messages_total", "counter",
	  "Route messages received on the route feed.", FEED_U64(route_msgs) },
	{ "fpmd_feed_nexthop_messages_total", "counter",
	  "Nexthop messages received on the route feed.",
	  FEED_U64(nexthop_msgs) },
	{ "fpmd_feed_ignored_messages_total", "counter",
	  "Messages ignored (FPM) or operations refused (plugin).",
	  FEED_U64(ignored) },
	{ "fpmd_feed_errors_total", "counter",
	  "Malformed input on the route feed (each closes the connection).",
	  FEED_U64(errors) },
	{ "fpmd_feed_routes", "gauge", "Routes the feed gives now.",
	  .write = feed_routes },
	{ "fpmd_feed_replay_state", "gauge",
	  "The state of the feed's last replay (1 for the current state).",
	  .write = feed_replay_state },
	{ "fpmd_feed_last_replay_start_timestamp_seconds", "gauge",
	  "When the last replay began (its first message), seconds since the "
	  "epoch; 0 before any.",
	  FEED_TIME(first_message_ns) },
	{ "fpmd_feed_last_message_timestamp_seconds", "gauge",
	  "When the feed's last message arrived, seconds since the epoch; 0 "
	  "before any.",
	  FEED_TIME(last_message_ns) },
	{ "fpmd_feed_last_replay_refreshed_routes", "gauge",
	  "Routes the last finished replay refreshed.",
	  FEED_U64(replay_refreshed) },
	{ "fpmd_feed_last_replay_swept_routes", "gauge",
	  "Stale routes the last finished replay removed.",
	  FEED_U64(replay_swept) },
	{ "fpmd_feed_hold_remaining_seconds", "gauge",
	  "A lost feed's routes keep forwarding this much longer (0 when not "
	  "held).",
	  .write = feed_hold },
};

const struct metric_group metrics_feed = METRIC_GROUP(families);
