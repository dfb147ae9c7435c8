// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tbl8's groups: 256 entries each, for the /24s that hold a prefix
 * longer than /24, allocated lowest first and reused only after a grace
 * period. Layout: fib4.c and bpf/fpmd_maps.h.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "fib/fib4_priv.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- tbl8 groups ---- */

/* tbl8's chunk for group g exists and is visible: a pointer to g may be
 * written right after. A new chunk waits one grace period here, at most
 * ngroups / FPMD_TBL8_CHUNK_GROUPS times in all. */
static int t8_chunk(struct fib4 *f, uint32_t g)
{
	uint32_t c = g / FPMD_TBL8_CHUNK_GROUPS;
	int ret;

	if (f->adopting || f->t8c.state[c] == CHUNK_LIVE)
		return 0;
	ret = chunks_get(&f->t8c, c, true);
	return ret ? ret : chunks_commit(&f->t8c, 0);
}

void fib4_group_free(struct fib4 *f, uint32_t g)
{
	uint32_t tail = (f->g_head + f->g_count) % f->ngroups;

	f->g_state[g] = 3;
	f->g_queue[tail] = g;
	f->g_freed_ns[tail] = mono_ns();
	f->g_count++;
	f->groups_used--;
	f->g_unflushed++;
}

/* The pointers to the groups freed since the last scatter flush are out
 * of tbl24 now: their grace starts. */
void fib4_groups_flushed(struct fib4 *f)
{
	uint64_t now = mono_ns();

	for (uint32_t i = f->g_count - f->g_unflushed; i < f->g_count; i++)
		f->g_freed_ns[(f->g_head + i) % f->ngroups] = now;
	f->g_unflushed = 0;
}

/* Freed groups past their grace period become free (state 0). */
void fib4_groups_release(struct fib4 *f, bool wait)
{
	/* Only those whose pointers are out of tbl24 (fib4_groups_flushed):
	 * waiting for a group, store the gathered words first. */
	if (wait && f->g_count && f->g_count == f->g_unflushed)
		fib4_scatter_flush(f);
	while (f->g_count > f->g_unflushed) {
		uint64_t age = mono_ns() - f->g_freed_ns[f->g_head];
		uint32_t g = f->g_queue[f->g_head];

		if (age < f->grace_ns) {
			if (!wait)
				return;
			usleep((useconds_t)((f->grace_ns - age) / 1000 + 1));
			continue;
		}
		f->g_state[g] = 0;
		f->t8_busy[g / FPMD_TBL8_CHUNK_GROUPS]--;
		if (g < f->g_fresh)
			f->g_fresh = g;
		f->g_head = (f->g_head + 1) % f->ngroups;
		f->g_count--;
		wait = false; /* one is enough */
	}
}

bool fib4_group_available(const struct fib4 *f, uint32_t prefer)
{
	return f->groups_used < f->ngroups ||
	       (prefer < f->ngroups && f->g_state[prefer] == 2);
}

/*
 * A group to fill: the reserved one asked for (adoption keeps a /24's
 * group number), else the lowest free one (past its grace period), so
 * that the groups in use stay at the bottom of tbl8 and the chunks above
 * them can go; none free: wait out the grace of the oldest freed one.
 */
int64_t fib4_group_alloc(struct fib4 *f, uint32_t prefer)
{
	uint32_t g;
	int ret;

	if (prefer < f->ngroups && f->g_state[prefer] == 2) {
		f->g_state[prefer] = 1;
		return prefer; /* reserved groups already count as used */
	}
	fib4_groups_release(f, false);
	while (f->g_fresh < f->ngroups && f->g_state[f->g_fresh])
		f->g_fresh++;
	if (f->g_fresh >= f->ngroups) {
		if (!f->g_count)
			return -ENOSPC;
		fib4_groups_release(f, true);
		while (f->g_fresh < f->ngroups && f->g_state[f->g_fresh])
			f->g_fresh++;
	}
	g = f->g_fresh;
	ret = t8_chunk(f, g);
	if (ret)
		return ret;
	f->g_state[g] = 1;
	f->t8_busy[g / FPMD_TBL8_CHUNK_GROUPS]++;
	f->groups_used++;
	return g;
}

/* ---- painting the arrays ---- */

/* Entries [from, from + n) of group g: those owned by a prefix of length
 * <= len (add) or == len (delete) become val / vlen. */
void fib4_paint8(struct fib4 *f, uint32_t g, uint32_t from, uint32_t n,
		 uint8_t len, bool del, uint32_t val, uint8_t vlen)
{
	uint32_t *t8 = grp(f, g);
	uint8_t *d8 = f->d8 + (size_t)g * FPMD_TBL8_GROUP;

	for (uint32_t j = from; j < from + n; j++) {
		if (del ? d8[j] != len : d8[j] > len)
			continue;
		d8[j] = vlen;
		if (t8[j] != val) {
			store(&t8[j], val);
			f->entry_writes++;
		}
	}
}

/* Back to one tbl24 entry once no prefix longer than /24 is left. */
void fib4_maybe_collapse(struct fib4 *f, uint32_t i, uint32_t g)
{
	uint8_t *d8 = f->d8 + (size_t)g * FPMD_TBL8_GROUP;

	for (uint32_t j = 0; j < FPMD_TBL8_GROUP; j++)
		if (d8[j] > 24)
			return;
	fib4_set24(f, i, grp(f, g)[0], d8[0]);
	fib4_group_free(f, g);
}
