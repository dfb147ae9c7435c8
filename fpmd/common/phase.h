/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start-up phases: each timed since the previous one, with the heap it
 * added, logged at debug level once fpmd is ready ("startup: xdp_load
 * 12.3 ms"), so that a slow restart says where its time went.
 */
#ifndef FPMD_PHASE_H
#define FPMD_PHASE_H

#include <stdbool.h>
#include <stdint.h>

/* The clock starts (first thing in main). */
void phase_begin(void);
/* The phase that just ended (name is static); no-op once ready. */
void phase_end(const char *name);
/* Log every phase and the total ("startup: ready in N ms"). */
void phase_ready(bool adopted);

/*
 * fpmd's memory: the heap in use, bytes malloc'd and not yet freed
 * (glibc's mallinfo2; 0 where the allocator does not say, as under
 * ASan) and the per-route objects in use (common/slab.h), and the
 * resident set, the process's RSS (/proc/self/statm; 0 if unreadable).
 * A long-running fpmd whose RSS grows while its heap in use does not is
 * fragmenting; heap in use growing is memory kept.
 */
uint64_t mem_heap_in_use(void);
uint64_t mem_resident(void);

#endif
