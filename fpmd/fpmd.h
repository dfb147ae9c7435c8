/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's configuration and top-level state. */
#ifndef FPMD_FPMD_H
#define FPMD_FPMD_H

#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "fpmd_maps.h"

/* Set by the event loop when a guard or interface change needs a rerun. */
void fpmd_request_recheck(void);
/*
 * SIGHUP / fpmctl reload: re-read the configuration file (a bad one is
 * refused with err filled and the running configuration kept), apply
 * what changed, re-read guards, local table and neighbors.
 */
int fpmd_reload(char *err, size_t elen);


#endif
