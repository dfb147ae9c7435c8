// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration file: an input is a file's content (JSON or XML, by
 * its first character). config_load() parses it with libyang against
 * yang/fpmd.yang, validates it and extracts the struct the daemon runs
 * on; the running configuration is printed back as `fpmctl show config`
 * does. Applying it to a running daemon (fpmd_reload in reload.c) needs
 * the kernel's interfaces and is not fuzzed; what the daemon derives from
 * the configuration without the kernel is: with it as the running one,
 * the state document (`fpmctl show state`) is built too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "conf/conf.h"
#include "fuzz_common.h"
#include "api/state.h"

static int mfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	mfd = memfd_create("fpmd-fuzz.conf", MFD_CLOEXEC);
	if (mfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fpmd_config c = { 0 };
	char err[1024], notes[1024];

	if (ftruncate(mfd, 0) || pwrite(mfd, data, size, 0) != (ssize_t)size)
		abort();
	if (!config_load(path, NULL, &c, err, sizeof(err), notes,
			 sizeof(notes))) {
		struct fpmd_config running = cfg;

		free(config_print_running(&c));
		cfg = c;
		free(state_json());
		cfg = running;
		config_free(&c);
	}
	return 0;
}
