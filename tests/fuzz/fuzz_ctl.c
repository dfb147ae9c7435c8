// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket: an input is what a client (fpmctl, a test, any
 * local user allowed on the socket) writes on one connection (4-byte
 * length, Request, ...). It goes through a real unix socket into
 * ctl_client_io(): route, nexthop and neighbor changes apply to the RIB,
 * shows and lookups read it back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf/conf.h"
#include "api/ctl.h"
#include "fuzz_common.h"

static const char *path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sock_cfg sc = { .owner = "root", .group = "root", .mode = 0600 };

	fuzz_init();
	path = sc.path = fuzz_sock_path("ctl");
	if (ctl_open(&sc) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int c = fuzz_connect(path), fd = ctl_accept();

	if (fd < 0)
		abort();
	fuzz_big_buffers(fd);
	fuzz_write(c, data, size);
	if (ctl_client_io(fd) == 0) {
		fuzz_drain(c);
		close(c);
		ctl_client_io(fd); /* sees the close and forgets the client */
	} else {
		close(c);
	}
	fuzz_reset(SRC_STATIC);
	return 0;
}
