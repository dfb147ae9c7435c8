// SPDX-License-Identifier: GPL-2.0-or-later
/* The daemon's unix-socket listeners (common/sock.h). */
#include <stdbool.h>

#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"

int sock_serve(const char *who, const char *path, const char *owner,
	       const char *group, unsigned int mode, const char *no_group_means,
	       const char *exposed)
{
	bool no_group;
	int fd = unix_listen(path, owner, group, mode, &no_group);

	if (fd < 0)
		return fd;
	if (no_group)
		log_warn("%s: group %s missing; %s is root-only%s", who, group,
			 path, no_group_means);
	if (unix_dir_unsafe(path))
		log_warn("%s: the directory of %s is writable by other users: "
			 "any of them can replace the socket and %s; use a "
			 "directory only root can write",
			 who, path, exposed);
	return fd;
}
