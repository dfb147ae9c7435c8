/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FRR APIs the module uses that changed between the releases it is
 * built for (8.4 to 10.x). FZ_FRR_MAJOR and FZ_FRR_MINOR come from the
 * prepared source's config.h (Makefile.am); a module is built for one
 * release and refuses to load into another (fpmd_zebra.c).
 *
 * FRR 9.0 renamed lib/thread.h to lib/frrevent.h: struct thread is
 * struct event, struct thread_master struct event_loop, thread_add_*
 * event_add_*, THREAD_VAL EVENT_VAL and thread_cancel event_cancel.
 */
#ifndef FZ_COMPAT_H
#define FZ_COMPAT_H

#if !defined(FZ_FRR_MAJOR) || !defined(FZ_FRR_MINOR)
#error "FZ_FRR_MAJOR and FZ_FRR_MINOR must name the FRR release (Makefile.am)"
#endif

#define FZ_FRR_AT_LEAST(maj, min)                                              \
	(FZ_FRR_MAJOR > (maj) || (FZ_FRR_MAJOR == (maj) && FZ_FRR_MINOR >= (min)))

#if FZ_FRR_AT_LEAST(9, 0)
#include "lib/frrevent.h"
#define fz_event event
#define fz_loop event_loop
#define fz_add_event event_add_event
#define fz_add_timer_msec event_add_timer_msec
#define fz_add_read event_add_read
#define fz_add_write event_add_write
#define FZ_VAL(t) EVENT_VAL(t)
#define fz_cancel event_cancel
#else
#include "lib/thread.h"
#define fz_event thread
#define fz_loop thread_master
#define fz_add_event thread_add_event
#define fz_add_timer_msec thread_add_timer_msec
#define fz_add_read thread_add_read
#define fz_add_write thread_add_write
#define FZ_VAL(t) THREAD_VAL(t)
#define fz_cancel thread_cancel
#endif

/* Cancel a scheduled event, if any (THREAD_OFF / EVENT_OFF, the latter
 * gone in later releases). */
#define FZ_OFF(t)                                                              \
	do {                                                                   \
		if (t)                                                         \
			fz_cancel(&(t));                                       \
	} while (0)

/*
 * Offload status into zebra's RIB: from 8.5 on a provider hands zebra a
 * DPLANE_OP_ROUTE_NOTIFY context (offload.c); 8.4 has no such path and
 * the module sets the RIB entry's flags on zebra's main pthread itself.
 */
#define FZ_HAVE_ROUTE_NOTIFY FZ_FRR_AT_LEAST(8, 5)

#endif
