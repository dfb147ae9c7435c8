/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Operational state as YANG data (container state of yang/fpmd.yang). */
#ifndef FPMD_STATE_H
#define FPMD_STATE_H

/* RFC 7951 JSON, malloc'd; NULL on failure. */
char *state_json(void);

#endif
