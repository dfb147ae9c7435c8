/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the rtnetlink units share, and nothing outside them uses: nl.c
 * (the sockets, requests and dumps), nl_bypass.c (what XDP would bypass,
 * as the guards read it), nl_events.c (change notifications). The API
 * is nl.h.
 */
#ifndef FPMD_NL_PRIV_H
#define FPMD_NL_PRIV_H

#include <libmnl/libmnl.h>

/* The request socket (nl_open, one per thread that makes requests) and
 * the event socket (nl_events_open, the loop's). */
extern _Thread_local struct mnl_socket *nl_req_sock;
extern struct mnl_socket *nl_ev_sock;

/* Close the thread's generic netlink socket (nl_xdp_features). */
void nl_genl_close(void);

/* Send nlh on sock and run cb over every reply until DONE or ACK. */
int nl_talk(struct mnl_socket *s, struct nlmsghdr *nlh, mnl_cb_t cb,
	    void *arg);

#endif
