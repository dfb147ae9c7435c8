/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libyang across the releases fpmd builds with, for conf.c and
 * doc/yang2man.c. LY_VERSION_MAJOR is the soname's major, not the
 * release's: 2 for Debian 12's libyang2 (2.1), 3 for Debian 13's libyang
 * 3.12, 5 for Debian forky's libyang 6.4.
 */
#ifndef FPMD_LY_COMPAT_H
#define FPMD_LY_COMPAT_H

#include <libyang/libyang.h>
#include <libyang/version.h>

/*
 * A context for yang/fpmd.yang (no ietf-yang-library). From soname 5 on,
 * libyang compiles in none of its own modules (ietf-inet-types, ...): the
 * context reads them from ly_yang_module_dir(), which must be one of its
 * search directories, or ly_ctx_new() fails. The working directory is
 * never searched, so that no file there can stand in for one of them.
 */
static inline LY_ERR fpmd_ly_ctx_new(struct ly_ctx **ctx)
{
#if LY_VERSION_MAJOR >= 5
	const char *dir = ly_yang_module_dir();
#else
	const char *dir = NULL;
#endif

	return ly_ctx_new(dir, LY_CTX_NO_YANGLIBRARY |
			  LY_CTX_DISABLE_SEARCHDIR_CWD, ctx);
}

#endif
