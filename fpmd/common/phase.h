/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start-up phases: each timed since the previous one, with the heap it
 * added, logged at debug level once fpmd is ready ("startup: xdp_load
 * 12.3 ms"), so that a slow restart says where its time went.
 */
#ifndef FPMD_PHASE_H
#define FPMD_PHASE_H

#include <stdbool.h>

/* The clock starts (first thing in main). */
void phase_begin(void);
/* The phase that just ended (name is static); no-op once ready. */
void phase_end(const char *name);
/* Log every phase and the total ("startup: ready in N ms"). */
void phase_ready(bool adopted);

#endif
