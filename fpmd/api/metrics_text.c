// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The Prometheus text exposition format 0.0.4: the sample writers, fpmd's
 * own families (version, start, adoption), and the text of one scrape,
 * family after family from the tables of metrics_*.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"

#include "api/metrics.h"
#include "api/metrics_text.h"
#include "common/loopstat.h"
#include "common/phase.h"
#include "fib/maps.h"
#include "fib/xdp.h"

static double start_time;

void out_put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if ((size_t)n < o->cap - o->len)
			break;
		{
			size_t cap = (o->cap + (size_t)n + 1) * 2;
			char *nb = realloc(o->buf, cap);

			if (!nb) {
				o->oom = true;
				return;
			}
			o->buf = nb;
			o->cap = cap;
		}
	}
	o->len += (size_t)n;
}

/* Label values: backslash, double quote and newline are escaped. */
static void put_label_value(struct out *o, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			out_put(o, "\\\\");
		else if (*v == '"')
			out_put(o, "\\\"");
		else if (*v == '\n')
			out_put(o, "\\n");
		else
			out_put(o, "%c", *v);
	}
}

void metric_sample_a(struct out *o, uint64_t v, const char *const *keys,
		     const char *const *vals, int n)
{
	out_put(o, "%s", o->family);
	for (int k = 0; k < n; k++) {
		out_put(o, "%s%s=\"", k ? "," : "{", keys[k]);
		put_label_value(o, vals[k]);
		out_put(o, "\"");
	}
	out_put(o, "%s %llu\n", n ? "}" : "", (unsigned long long)v);
}

/* One sample of the current family: label pairs, NULL-ended. */
static void sample_v(struct out *o, const char *value, va_list ap)
{
	const char *k, *sep = "{";

	out_put(o, "%s", o->family);
	while ((k = va_arg(ap, const char *))) {
		out_put(o, "%s%s=\"", sep, k);
		put_label_value(o, va_arg(ap, const char *));
		out_put(o, "\"");
		sep = ",";
	}
	out_put(o, "%s %s\n", *sep == ',' ? "}" : "", value);
}

void metric_sample(struct out *o, uint64_t v, ...)
{
	char val[24];
	va_list ap;

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	va_start(ap, v);
	sample_v(o, val, ap);
	va_end(ap);
}

void metric_sample_time(struct out *o, uint64_t ns, ...)
{
	char val[32];
	va_list ap;

	snprintf(val, sizeof(val), "%llu.%03llu",
		 (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull / 1000000ull));
	va_start(ap, ns);
	sample_v(o, val, ap);
	va_end(ap);
}

void metric_state_set(struct out *o, const char *const *known, const char *cur,
		      const char *k1, const char *v1, const char *k2)
{
	bool seen = false;

	for (; *known; known++) {
		bool is = !strcmp(*known, cur);

		seen |= is;
		metric_sample(o, is, k1, v1, k2, *known, NULL);
	}
	if (!seen)
		metric_sample(o, 1, k1, v1, k2, cur, NULL);
}

static void info(struct out *o)
{
	char layout[16];

	snprintf(layout, sizeof(layout), "%d", FPMD_LAYOUT_VERSION);
	metric_sample(o, 1, "version", PACKAGE_VERSION, "layout", layout, NULL);
}

static void start_time_f(struct out *o)
{
	char val[32];

	snprintf(val, sizeof(val), "%.3f", start_time);
	out_put(o, "%s %s\n", o->family, val);
}

static void adopted(struct out *o)
{
	metric_sample(o, xdp_adopted, NULL);
}

static void seconds(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%llu.%06llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull / 1000ull));
}

static void loop_iterations(struct out *o)
{
	uint64_t cum = 0;
	char le[32];

	for (int b = 0; b <= LOOPSTAT_NBOUNDS; b++) {
		cum += loopstat.bucket[b];
		if (b < LOOPSTAT_NBOUNDS)
			seconds(le, sizeof(le), loopstat_bounds_ns[b]);
		out_put(o, "%s_bucket{le=\"%s\"} %llu\n", o->family,
			b < LOOPSTAT_NBOUNDS ? le : "+Inf",
			(unsigned long long)cum);
	}
	seconds(le, sizeof(le), loopstat.total_ns);
	out_put(o, "%s_sum %s\n%s_count %llu\n", o->family, le, o->family,
		(unsigned long long)loopstat.iterations);
}

static void loop_max(struct out *o)
{
	const char *what;
	uint64_t recent = loopstat_recent_max(&what);
	char v[32];

	seconds(v, sizeof(v), loopstat.max_ns);
	out_put(o, "%s{window=\"start\",step=\"%s\"} %s\n", o->family,
		loopstat.max_what ? loopstat.max_what : "", v);
	seconds(v, sizeof(v), recent);
	out_put(o, "%s{window=\"60s\",step=\"%s\"} %s\n", o->family, what,
		v);
}

static void loop_slow(struct out *o)
{
	metric_sample(o, loopstat.slow, NULL);
}

static void heap(struct out *o)
{
	metric_sample(o, mem_heap_in_use(), NULL);
}

static void resident(struct out *o)
{
	metric_sample(o, mem_resident(), NULL);
}

static const struct metric_family families[] = {
	{ "fpmd_info", "gauge", "fpmd's version and BPF map layout (always 1).",
	  .write = info },
	{ "fpmd_start_time_seconds", "gauge",
	  "When fpmd started, in seconds since the epoch.",
	  .write = start_time_f },
	{ "fpmd_maps_adopted", "gauge",
	  "1 when fpmd adopted the pinned maps of a previous fpmd at start "
	  "(forwarding went on across the restart).",
	  .write = adopted },
	{ "fpmd_loop_iteration_seconds", "histogram",
	  "Event loop iterations by length: from epoll_wait returning to the "
	  "end of the batch's work (the wait excluded). While one runs, "
	  "nothing else is served.",
	  .write = loop_iterations },
	{ "fpmd_loop_iteration_max_seconds", "gauge",
	  "The longest event loop iteration since start (window=\"start\") "
	  "and in the last 60 s (window=\"60s\"), with the step it spent "
	  "most on (an event: fpm, plugin, control, netlink, timer, ...; or "
	  "housekeeping, commit, drops, route-status).",
	  .write = loop_max },
	{ "fpmd_loop_iterations_slow_total", "counter",
	  "Event loop iterations longer than 20 ms.", .write = loop_slow },
	{ "fpmd_heap_in_use_bytes", "gauge",
	  "fpmd's C heap: bytes allocated and not freed, malloc's and the "
	  "per-route object caches' (0 where malloc does not say).",
	  .write = heap },
	{ "fpmd_resident_bytes", "gauge",
	  "fpmd's resident memory (RSS): heap, program, libraries, stacks; "
	  "not the BPF maps (kernel memory).",
	  .write = resident },
};

static const struct metric_group metrics_process = METRIC_GROUP(families);

/* The order of the exposition. */
static const struct metric_group *const groups[] = {
	&metrics_process, /* fpmd itself */
	&metrics_iface,	  /* interfaces, their counters */
	&metrics_rib,	  /* routes, nexthops, neighbors, maps */
	&metrics_feed,	  /* the route feeds */
	&metrics_guard,	  /* the guards */
};

void metrics_init(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *metrics_text(size_t *len)
{
	/* Two interfaces and a few routes take about 16 KiB. */
	struct out o = { .cap = 64 << 10 };
	struct tables *t;

	o.buf = malloc(o.cap);
	if (!o.buf)
		return NULL;
	t = metrics_tables_walk(&o.oom);
	if (!t) {
		free(o.buf);
		return NULL;
	}
	o.t = t;
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		for (size_t k = 0; k < groups[g]->n; k++) {
			const struct metric_family *f = &groups[g]->f[k];

			o.family = f->name;
			o.f = f;
			out_put(&o, "# HELP %s %s\n# TYPE %s %s\n", f->name,
				f->help, f->name, f->type);
			f->write(&o);
		}
	}
	metrics_tables_free(t);
	if (o.oom || !o.buf) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
