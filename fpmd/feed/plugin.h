/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin feed: fpmd's own zebra dataplane provider (fpmd/zebra-plugin)
 * connects to a unix socket and sends routes and nexthops as protobuf
 * (PluginMsg in proto/fpmd.proto), each acknowledged, full replays
 * bracketed by ReplayBegin / ReplayEnd so the sweep is exact.
 */
#ifndef FPMD_PLUGIN_H
#define FPMD_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "feed/feed.h"


struct sock_cfg;
int plugin_open(const struct sock_cfg *sc);
void plugin_close(void);
/* Stop listening; a connected plugin stays. */
void plugin_listen_close(void);
int plugin_accept(void);
int plugin_io(void);
/* How plugin_io asks the event loop to watch the connection: in when it
 * takes input, out when replies wait for the socket. */
void plugin_set_watch(void (*fn)(int fd, bool in, bool out));
int plugin_timer_fd(void);
void plugin_timer(void);
void plugin_get_status(struct feed_status *st);
/* Send zebra the route status changes that wait, while it takes them
 * (the event loop calls it after every batch of events). */
void plugin_status_flush(void);
/* Statuses wait that the next turn could send (loop: do not sleep). */
bool plugin_status_more(void);

/* The RIB's route type (enum rib_rtype) of a protobuf RouteType, the
 * plugin's and fpmctl's; -EINVAL ("unknown route type") otherwise. */
int plugin_route_type(int type, const char **err);

#endif
