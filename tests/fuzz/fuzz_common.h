/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the fuzz targets share: a daemon without a kernel. The real RIB,
 * feeds and control code run against fake_maps.c; iface_tab holds three
 * managed interfaces (ifindex 1..3, up, attached) so that nexthops
 * resolve and routes reach the map writer.
 */
#ifndef FPMD_FUZZ_COMMON_H
#define FPMD_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "rib/rib.h"

#define FUZZ_IFACES 3

/* Once per process. */
void fuzz_init(void);
/*
 * After each input: withdraw everything the target's source (the only
 * one it feeds; SRC_MAX: every source) gave, so the delete paths run too, check
 * that nothing is left, then free and re-create the RIB, so no state leaks from
 * one input to the next and every crash reproduces from its input alone; the
 * interfaces are set up again.
 */
void fuzz_reset(enum rib_source src);

/*
 * A unix socket path for a listener of this process (name: "ctl",
 * "plugin"), in a directory removed at exit.
 */
const char *fuzz_sock_path(const char *name);
/* Connect to path: a non-blocking client fd, or abort. */
int fuzz_connect(const char *path);
/* Room on fd for a whole input, and for every response to it. */
void fuzz_big_buffers(int fd);
/* Write what fits of data without blocking (the peer reads it later). */
void fuzz_write(int fd, const uint8_t *data, size_t size);
/* Read and discard whatever the daemon side sent. */
void fuzz_drain(int fd);

#endif
