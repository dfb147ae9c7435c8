// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plugin feed: an input is what zebra's plugin writes on one
 * connection (4-byte length, PluginMsg, ...). It goes through a real unix
 * socket into plugin_io(), which decodes each message and applies it to
 * the RIB, and acks it; then the connection closes as zebra's would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf/conf.h"
#include "fuzz_common.h"
#include "feed/plugin.h"

static const char *path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sock_cfg sc = { .owner = "root", .group = "root", .mode = 0600 };

	fuzz_init();
	path = sc.path = fuzz_sock_path("plugin");
	if (plugin_open(&sc) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int c = fuzz_connect(path);
	int fd = plugin_accept();

	if (fd < 0)
		abort();
	fuzz_big_buffers(fd);
	fuzz_write(c, data, size);
	/* Everything written is readable now: one call takes it all (or
	 * closes the connection on bad input). */
	plugin_io();
	fuzz_drain(c);
	close(c);
	plugin_io(); /* sees the close, as the event loop would */
	fuzz_reset(SRC_PLUGIN);
	return 0;
}
