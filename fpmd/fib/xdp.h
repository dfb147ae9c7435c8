/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the XDP program through its skeleton, pinning and adopting maps. */
#ifndef FPMD_XDP_H
#define FPMD_XDP_H

#include <stdbool.h>

struct fpmd_bpf;
extern struct fpmd_bpf *skel;

/* Open, size, pin (or adopt pinned maps) and load. Sets mapfd. */
int xdp_load(bool *adopted);
/* The last xdp_load adopted a previous fpmd's maps (state, metrics). */
extern bool xdp_adopted;
int xdp_prog_fd(void);
/* fpmd_tc, the container paths' tc program (kernel/tc_path.c). */
int xdp_tc_prog_fd(void);
/* Remove the pins and the directory (a clean stop). */
void xdp_unpin(void);
void xdp_close(void);

#endif
