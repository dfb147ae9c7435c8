// SPDX-License-Identifier: GPL-2.0-or-later
/* Metrics of the guards (netfilter, rp-filter, ...): state and events. */
#include "api/metrics_text.h"
#include "kernel/guard.h"

static void guard_state(struct out *o)
{
	static const char *const states[] = { "clear",	     "checked",
					      "kernel-path", "bypassed",
					      "refused",     "unchecked",
					      "tc-path",     NULL };

	for (int g = 0; g < GUARD_MAX; g++)
		metric_state_set(o, states,
				 guards[g].state[0] ? guards[g].state
						    : "unchecked",
				 "guard", guards[g].name, "state");
}

static void guard_events(struct out *o)
{
	for (int g = 0; g < GUARD_MAX; g++)
		metric_sample(o, guards[g].events, "guard", guards[g].name,
			      NULL);
}

static const struct metric_family families[] = {
	{ "fpmd_guard_state", "gauge",
	  "What each guard (netfilter, rp-filter, ...) found (1 for the "
	  "current state): clear, checked, kernel-path, bypassed, refused, "
	  "tc-path (veth-peer: egresses served by the tc program).",
	  .write = guard_state },
	{ "fpmd_guard_events_total", "counter",
	  "Change notifications each guard received.", .write = guard_events },
};

const struct metric_group metrics_guard = METRIC_GROUP(families);
