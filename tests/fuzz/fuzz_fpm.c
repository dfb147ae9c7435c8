// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The FPM feed: an input is what zebra (or anyone who connects to the
 * FPM port) writes on one connection. fpm_feed() decodes its frames and
 * applies them to the RIB exactly as fpm_io() does for a live peer.
 */
#include <stddef.h>
#include <stdint.h>

#include "feed/fpm.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];

	fpm_feed(data, size, why, sizeof(why));
	fuzz_reset(SRC_FPM);
	return 0;
}
