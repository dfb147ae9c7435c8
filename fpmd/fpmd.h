/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's configuration and top-level state. */
#ifndef FPMD_FPMD_H
#define FPMD_FPMD_H

#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "fpmd_maps.h"

/* The maps were adopted from a previous fpmd at start. */
extern bool fpmd_adopted;

/* Set by the event loop when a guard or interface change needs a rerun. */
void fpmd_request_recheck(void);
/*
 * SIGHUP / fpmctl reload: re-read the configuration file (a bad one is
 * refused with err filled and the running configuration kept), apply
 * what changed, re-read guards, local table and neighbors.
 */
int fpmd_reload(char *err, size_t elen);

/*
 * Start-up: the phase that just ended (name is static), timed since the
 * previous one; logged at debug level once fpmd is ready ("startup:
 * xdp_load 12.3 ms"), so that a slow restart says where its time went.
 */
void fpmd_phase(const char *name);

#endif
