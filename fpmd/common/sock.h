/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's unix-socket listeners (control socket, plugin feed). */
#ifndef FPMD_SOCK_H
#define FPMD_SOCK_H

/*
 * unix_listen() on path, owner:group with mode, and say what is at risk
 * (who: "ctl", "plugin"): a missing group leaves the socket root-only
 * (no_group_means: what that breaks, "" if nothing more); a directory
 * others can write lets them replace the socket and exposed: what they
 * could then do. The fd, or -errno.
 */
int sock_serve(const char *who, const char *path, const char *owner,
	       const char *group, unsigned int mode, const char *no_group_means,
	       const char *exposed);

#endif
