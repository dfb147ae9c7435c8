// SPDX-License-Identifier: GPL-2.0-or-later
/* Start-up phases, timed (common/phase.h). */
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/phase.h"
#include "common/slab.h"
#include "common/util.h"

static uint64_t mono_us(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000;
}

/* Kept until the end: the first phases run before the log is open. */
static struct phase {
	const char *name;
	uint64_t us;
	long heap_kib; /* malloc'd memory it added (or freed) */
} phases[32];
static int n_phases;
static uint64_t phase_start, phase_last;
static long heap_last;
/*
 * Tests only: FPMD_DEBUG_STOP_AFTER=PHASE makes fpmd stop itself
 * (SIGSTOP) when that phase ends. The window it opens is real (a restart
 * adopting the maps), but once adoption is fast it lasts ~0.1 s, too
 * short for a test on a loaded machine to act in reliably from outside.
 */
static const char *phase_stop_after;

uint64_t mem_heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	if (!mi.uordblks && !mi.hblkhd)
		return 0; /* the allocator does not say: no half figure */
	return mi.uordblks + mi.hblkhd + slab_in_use();
}

uint64_t mem_resident(void)
{
	unsigned long long size, rss;
	uint64_t out = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) == 2)
		out = rss * (uint64_t)sysconf(_SC_PAGESIZE);
	fclose(f);
	return out;
}

static long heap_kib(void)
{
	return (long)(mem_heap_in_use() / 1024);
}

void phase_end(const char *name)
{
	uint64_t now = mono_us();
	long heap = heap_kib();

	if (!phase_start)
		return;
	if (n_phases < (int)(sizeof(phases) / sizeof(phases[0])))
		phases[n_phases++] = (struct phase){ name, now - phase_last,
						     heap - heap_last };
	phase_last = now;
	heap_last = heap;
	if (phase_stop_after && !strcmp(phase_stop_after, name)) {
		log_warn("startup: stopping after %s (FPMD_DEBUG_STOP_AFTER, "
			 "for tests): SIGCONT to go on",
			 name);
		raise(SIGSTOP);
	}
}

void phase_ready(bool adopted)
{
	uint64_t total = mono_us() - phase_start;

	for (int k = 0; k < n_phases; k++)
		log_debug("startup: %s %llu.%llu ms, heap %+ld KiB",
			  phases[k].name,
			  (unsigned long long)phases[k].us / 1000,
			  (unsigned long long)phases[k].us % 1000 / 100,
			  phases[k].heap_kib);
	/* What start-up freed (YANG parsing, dumps) goes back to the
	 * system, not into RSS for the life of the daemon. */
	malloc_trim(0);
	log_debug("startup: heap in use %ld KiB", heap_kib());
	log_info("startup: ready in %llu ms (%s)",
		 (unsigned long long)total / 1000,
		 adopted ? "maps adopted" : "maps created");
	phase_start = 0;
}

void phase_begin(void)
{
	phase_start = phase_last = mono_us();
	heap_last = heap_kib();
	phase_stop_after = getenv("FPMD_DEBUG_STOP_AFTER");
}
