/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket: protobuf requests from fpmctl and tests. */
#ifndef FPMD_CTL_H
#define FPMD_CTL_H

#include <stddef.h>
#include <stdint.h>

/* Returns the listening fd, or -errno. */
struct sock_cfg;
int ctl_open(const struct sock_cfg *sc);
void ctl_close(void);
/* Stop listening; connected clients stay. */
void ctl_listen_close(void);
/* Event loop callbacks: the listener, and a client fd. */
int ctl_accept(void);
/* Returns <0 when the client is gone (the fd is closed). */
int ctl_client_io(int fd);
void ctl_client_close(int fd);
/*
 * Go on with what a client waits for beyond one event: the snapshot of
 * a large 'show routes' (a slice per call, then a thread's sort). Once
 * per loop iteration; returns the epoll timeout it needs: 0 (more to do
 * now), 1 ms (a sort is running), -1 (nothing).
 */
int ctl_work(void);
/*
 * What REQ_RELOAD runs: the daemon's reload (re-read the configuration
 * file, apply what changed); 0, or non-zero with a reason in err.
 */
void ctl_set_reload(int (*fn)(char *err, size_t elen));

#endif
