/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Container paths (doc/containers.md): fpmd's tc program (fpmd_tc) at
 * tcx ingress, its pinned links, and the per-interface modes PEER egress
 * and TC_ONLY ingress the guards' veth peer probe decides.
 */
#ifndef FPMD_TC_PATH_H
#define FPMD_TC_PATH_H

#include <stdbool.h>
#include <stdint.h>

struct iface;

/* fpmd_tc's program id (0 before tc_path_init): the tc-ingress guard
 * does not count it as foreign. */
extern uint32_t tc_own_prog_id;

/*
 * After the object is loaded: remember fpmd_tc (and fpmd_xdp, attached
 * again where TC_ONLY ends), and swap fpmd_tc into every
 * tcx link a previous fpmd left pinned (bpf_link_update: no gap).
 */
void tc_path_init(int prog_fd, int xdp_prog_fd);
/*
 * Apply the modes check_egress decided (i->peer_egress, i->tc_only) to
 * every managed interface: XDP or not, tc attached where needed, map
 * entries and the RIB. Also checks that each link is still attached and
 * re-attaches (logged) if it was removed. Called after every guard check.
 */
void tc_path_apply(void);
/* The interface went away (its tcx link with it): forget the link. */
void tc_iface_gone(struct iface *i);
/* Detach i's tc program (unpin); keep = leave it pinned (restart). */
void tc_detach(struct iface *i, bool keep);
/* Reuse a tcx link pinned for i by a previous fpmd (at attach). */
void tc_adopt_pinned(struct iface *i);
/* Does the tc path deliver to PEER egresses now: every ingress that takes
 * traffic has the tc program attached. */
bool tc_path_serving(void);
/* "xdp", "tc" or "none": the program taking i's ingress traffic. */
const char *tc_iface_path(const struct iface *i);

#endif
