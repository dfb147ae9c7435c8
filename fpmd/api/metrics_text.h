/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the Prometheus endpoint: the exposition text being written, the
 * sample writers every family uses (metrics_text.c), and the tables of
 * families each metrics_*.c contributes, in the order they are written.
 */
#ifndef FPMD_METRICS_TEXT_H
#define FPMD_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tables;
struct metric_family;

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
	const char *family;	       /* the family being written */
	const struct metric_family *f; /* and its table entry */
	const struct tables *t;	       /* the walks of the big tables */
};

/* One family: its HELP and TYPE lines, then what write() samples. */
struct metric_family {
	const char *name, *type, *help;
	void (*write)(struct out *o);
	size_t feed_off; /* feed_u64, feed_time: the field of feed_status */
};

struct metric_group {
	const struct metric_family *f;
	size_t n;
};

#define METRIC_GROUP(tab)                                                      \
	{                                                                      \
		tab, sizeof(tab) / sizeof(tab[0])                              \
	}

/* The families of metrics_iface.c, _rib.c, _feed.c and _guard.c. */
extern const struct metric_group metrics_iface, metrics_rib, metrics_feed,
    metrics_guard;

void out_put(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One sample of the current family, its labels as two arrays. */
void metric_sample_a(struct out *o, uint64_t v, const char *const *keys,
		     const char *const *vals, int n);
/* One sample of the current family: label pairs (key, value), NULL-ended. */
void metric_sample(struct out *o, uint64_t v, ...);
/* Seconds since the epoch from CLOCK_REALTIME ns (0: never). */
void metric_sample_time(struct out *o, uint64_t ns, ...);
/* A state set: every known state, 1 for the current one (which is added
 * if it is not known, so a new state never goes unseen). */
void metric_state_set(struct out *o, const char *const *known, const char *cur,
		      const char *k1, const char *v1, const char *k2);

/* metrics_rib.c: one walk of the route, nexthop and neighbor tables per
 * scrape; NULL when out of memory (oom: a tally could not grow). */
struct tables *metrics_tables_walk(bool *oom);
void metrics_tables_free(struct tables *t);

#endif
