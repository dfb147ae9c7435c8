/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fuzzers' in-memory map writer (fake_maps.c). */
#ifndef FPMD_FUZZ_FAKE_MAPS_H
#define FPMD_FUZZ_FAKE_MAPS_H

#include <stdint.h>

/* Small tables, so that inputs reach the "map full" paths quickly. */
#define FAKE_MAX_NEXTHOPS 64
#define FAKE_MAX_GROUPS 16

struct fake_maps {
	uint64_t route_writes, route_deletes, nexthop_writes, group_writes,
	    neigh_writes;
};

extern struct fake_maps fake_maps;

void fake_maps_reset(void);

#endif
