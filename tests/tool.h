/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The small helpers the benchmark tools run by hand share
 * (tests/bench_lookup.c, tests/trafficgen.c, tests/fibproto/fibproto.c,
 * tests/memlat/memlat.c).
 */
#ifndef FPMD_TESTS_TOOL_H
#define FPMD_TESTS_TOOL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* "PROGRAM: message" on stderr, then exit 1. */
__attribute__((format(printf, 1, 2), noreturn)) static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* Seconds on the monotonic clock. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int tool_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (sorts them). */
static inline double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), tool_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
