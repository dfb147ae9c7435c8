// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tbl24, part by part: fpmd's copy of each part that is not uniform (a
 * uniform one is a value in tbl24_dflt), the words a change touched
 * written to the live parts at its end, and new parts published through
 * tbl24_fill. Layout: fib4.c and bpf/fpmd_maps.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/fib4_priv.h"

/* ---- tbl24 parts ---- */

static void touch(struct fib4 *f, uint32_t p)
{
	if (f->chg_lo > f->chg_hi) {
		f->chg_lo = f->chg_hi = p;
		return;
	}
	if (p < f->chg_lo)
		f->chg_lo = p;
	if (p > f->chg_hi)
		f->chg_hi = p;
}

/* What entry k of P adds to P->nb. */
static uint32_t nb_of(const struct fib4_part *P, uint32_t k, uint32_t n)
{
	uint32_t c = FPMD_RT_TYPE(P->t[k]) == FPMD_RT_TBL8;

	if (k > 0 && (P->t[k - 1] != P->t[k] || P->d[k - 1] != P->d[k]))
		c++;
	if (k + 1 < n && (P->t[k + 1] != P->t[k] || P->d[k + 1] != P->d[k]))
		c++;
	return c;
}

/* Entry i (in a part that has its copy) becomes v / len. */
void fib4_set24(struct fib4 *f, uint32_t i, uint32_t v, uint8_t len)
{
	uint32_t p = i / PE, k = i - p * PE, n = part_len(p);
	struct fib4_part *P = f->part[p];

	if (f->adopting) { /* nb is counted once at the end */
		P->t[k] = v;
		P->d[k] = len;
		return;
	}
	if (P->t[k] == v && P->d[k] == len)
		return;
	P->nb -= nb_of(P, k, n);
	P->d[k] = len;
	if (P->t[k] != v) {
		P->t[k] = v;
		f->entry_writes++;
		if (f->dirty_lo > f->dirty_hi) {
			f->dirty_lo = f->dirty_hi = i / 2;
		} else {
			if (i / 2 < f->dirty_lo)
				f->dirty_lo = i / 2;
			if (i / 2 > f->dirty_hi)
				f->dirty_hi = i / 2;
		}
	}
	P->nb += nb_of(P, k, n);
	touch(f, p);
}

/*
 * Part p gets its own copy, filled with its uniform value, and (unless
 * adopting) a BPF part: a new one stays pending, out of the fast path's
 * sight, until fib4_commit(); one still live (about to be dropped) is
 * kept, its contents being that same uniform value.
 */
static int materialize(struct fib4 *f, uint32_t p)
{
	struct fib4_part *P;
	int ret;

	if (f->part[p])
		return 0;
	P = malloc(sizeof(*P));
	if (!P)
		return -ENOMEM;
	for (uint32_t k = 0; k < PE; k++)
		P->t[k] = f->dval[p];
	memset(P->d, f->dlen[p], PE);
	P->nb = 0;
	if (!f->adopting) {
		ret = chunks_get(&f->parts, p, true);
		if (ret) {
			free(P);
			return ret;
		}
	}
	f->part[p] = P;
	return 0;
}

/* Part p is uniform again: its default first, then the part goes (at a
 * later commit when it is live: a reader sees one or the other). */
void fib4_dematerialize(struct fib4 *f, uint32_t p)
{
	struct fib4_part *P = f->part[p];

	f->dval[p] = P->t[0];
	f->dlen[p] = P->d[0];
	free(P);
	f->part[p] = NULL;
	if (f->adopting)
		return;
	__atomic_store_n(&f->dflt[p], (uint64_t)f->dval[p], __ATOMIC_RELEASE);
	chunks_drop(&f->parts, p);
}

/* fpmd_tbl24_commit on words [from, to] of part p through the stage. */
int fib4_run_commit(struct fib4 *f, uint32_t p, uint32_t from, uint32_t to,
		    uint32_t op)
{
	struct fpmd_tbl24_commit cm = {
		.first = p * FPMD_TBL24_PART_WORDS + from,
		.n = to - from + 1,
		.op = op,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &cm,
		    .data_size_in = sizeof(cm), .repeat = 1);

	f->syscalls++;
	if (bpf_prog_test_run_opts(f->commit_fd, &o))
		return -errno;
	return o.retval == XDP_PASS ? 0 : -EIO;
}

/*
 * The gathered one- and two-word writes (fib4.sc) into tbl24, in order:
 * one FPMD_TBL24_SCATTER run, where a map update per word costs a
 * syscall each (~45 % of a 1M load's time, bench_lookup --writes). Then
 * the groups freed meanwhile start their grace: their tbl24 pointers are
 * gone from the fast path only now.
 */
int fib4_scatter_flush(struct fib4 *f)
{
	struct fpmd_tbl24_commit cm = { .n = f->nsc,
					 .op = FPMD_TBL24_SCATTER };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &cm,
		    .data_size_in = sizeof(cm), .repeat = 1);

	if (f->nsc) {
		memcpy(f->stage, f->sc, (size_t)f->nsc * 16);
		f->syscalls++;
		if (bpf_prog_test_run_opts(f->commit_fd, &o))
			return -errno;
		if (o.retval != XDP_PASS)
			return -EIO;
		f->nsc = 0;
	}
	if (f->g_unflushed)
		fib4_groups_flushed(f);
	return 0;
}

/* Words [from, to] of part p, from src (the words themselves, 2 entries
 * each): gathered for fib4_scatter_flush when one or two, else (after
 * what was gathered: a word written twice keeps the later value) by the
 * commit program for the range. */
int fib4_write_words(struct fib4 *f, uint32_t p, uint32_t from, uint32_t to,
		     const uint64_t *src)
{
	int ret;

	if (to - from < 2) {
		for (uint32_t k = from; k <= to; k++) {
			if (f->nsc == FPMD_TBL24_SCATTER_MAX &&
			    (ret = fib4_scatter_flush(f)))
				return ret;
			f->sc[2 * f->nsc] = p * FPMD_TBL24_PART_WORDS + k;
			f->sc[2 * f->nsc + 1] = src[k - from];
			f->nsc++;
		}
		return 0;
	}
	ret = fib4_scatter_flush(f);
	if (ret)
		return ret;
	memcpy(f->stage, src, (size_t)(to - from + 1) * 8);
	return fib4_run_commit(f, p, from, to, FPMD_TBL24_WRITE);
}

/*
 * The end of a change: the words it touched into the live parts, the
 * defaults of the uniform parts it touched (and the contents of those
 * still live, about to be dropped), then the parts it made uniform go.
 */
int fib4_flush24(struct fib4 *f)
{
	int ret = 0;

	if (f->adopting)
		goto uniform;
	for (uint32_t p = f->dirty_lo / FPMD_TBL24_PART_WORDS;
	     f->dirty_lo <= f->dirty_hi &&
	     p <= f->dirty_hi / FPMD_TBL24_PART_WORDS && !ret;
	     p++) {
		uint32_t base = p * FPMD_TBL24_PART_WORDS, lo, hi;

		if (!f->part[p] || f->parts.state[p] != CHUNK_LIVE)
			continue; /* pending: filled whole at the commit */
		lo = f->dirty_lo > base ? f->dirty_lo - base : 0;
		hi = f->dirty_hi - base < part_words(p) - 1 ?
			     f->dirty_hi - base :
			     part_words(p) - 1;
		ret = fib4_write_words(f, p, lo, hi,
				       (const uint64_t *)f->part[p]->t + lo);
	}
	for (uint32_t p = f->chg_lo; p <= f->chg_hi && !ret; p++) {
		uint64_t v;

		if (f->part[p])
			continue;
		v = f->dval[p];
		if (__atomic_load_n(&f->dflt[p], __ATOMIC_RELAXED) == v)
			continue;
		/* Handed to the reaper but still read until its delete:
		 * back (dropping) if not begun, else gone. */
		chunks_reclaim(&f->parts, p);
		if (f->parts.state[p] == CHUNK_DROPPING) {
			/* Still what the fast path reads: keep it right. */
			static uint64_t img[FPMD_TBL24_PART_WORDS];

			for (uint32_t k = 0; k < part_words(p); k++)
				img[k] = v | v << 32;
			ret = fib4_write_words(f, p, 0, part_words(p) - 1, img);
		}
		__atomic_store_n(&f->dflt[p], v, __ATOMIC_RELEASE);
	}
uniform:
	for (uint32_t p = f->chg_lo; p <= f->chg_hi; p++)
		if (f->part[p] && !f->part[p]->nb)
			fib4_dematerialize(f, p);
	f->dirty_lo = f->chg_lo = 1;
	f->dirty_hi = f->chg_hi = 0;
	return ret;
}

/* tbl8 pointers in [x, y) of P and differing neighbours within it. */
static uint32_t nb_count(const struct fib4_part *P, uint32_t x, uint32_t y)
{
	uint32_t c = 0;

	for (uint32_t k = x; k < y; k++)
		c += (FPMD_RT_TYPE(P->t[k]) == FPMD_RT_TBL8) +
		     (k > x && (P->t[k - 1] != P->t[k] || P->d[k - 1] != P->d[k]));
	return c;
}

/*
 * Entries [a, b) of part p (which has its copy): P->nb moves by what
 * the range and its two neighbours count after minus before, two
 * sequential scans rather than a neighbour check per entry.
 */
static void paint_range(struct fib4 *f, uint32_t p, uint32_t a, uint32_t b,
			uint8_t len, bool del, uint32_t val, uint8_t vlen)
{
	struct fib4_part *P = f->part[p];
	uint32_t x = a ? a - 1 : 0, y = b < part_len(p) ? b + 1 : b;
	uint32_t lo = UINT32_MAX, hi = 0, before = 0;

	if (!f->adopting)
		before = nb_count(P, x, y);
	for (uint32_t k = a; k < b; k++) {
		uint32_t e = P->t[k];

		if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8) {
			fib4_paint8(f, FPMD_RT_INDEX(e), 0, FPMD_TBL8_GROUP,
				    len, del, val, vlen);
			continue;
		}
		if (del ? P->d[k] != len : P->d[k] > len)
			continue;
		P->d[k] = vlen;
		if (e != val) {
			P->t[k] = val;
			f->entry_writes++;
			if (k < lo)
				lo = k;
			hi = k;
		}
	}
	if (f->adopting)
		return; /* nb is counted once at the end */
	P->nb = P->nb - before + nb_count(P, x, y);
	touch(f, p);
	if (lo > hi)
		return;
	lo = (p * PE + lo) / 2;
	hi = (p * PE + hi) / 2;
	if (f->dirty_lo > f->dirty_hi) {
		f->dirty_lo = lo;
		f->dirty_hi = hi;
		return;
	}
	if (lo < f->dirty_lo)
		f->dirty_lo = lo;
	if (hi > f->dirty_hi)
		f->dirty_hi = hi;
}

/* tbl24 entries [i, i + n) (len <= 24); the parts only partly covered
 * have their copies already (fib4_prepare()). */
void fib4_paint24(struct fib4 *f, uint32_t i, uint32_t n, uint8_t len, bool del,
		  uint32_t val, uint8_t vlen)
{
	for (uint32_t p = i / PE; p <= (i + n - 1) / PE; p++) {
		uint32_t lo = p * PE > i ? p * PE : i;
		uint32_t hi = p * PE + part_len(p) < i + n ? p * PE + part_len(p) :
							     i + n;
		struct fib4_part *P = f->part[p];

		if (!P) { /* uniform and wholly covered */
			if (del ? f->dlen[p] != len : f->dlen[p] > len)
				continue;
			f->dlen[p] = vlen;
			if (f->dval[p] != val)
				f->entry_writes += part_len(p);
			f->dval[p] = val;
			touch(f, p);
			continue;
		}
		paint_range(f, p, lo - p * PE, hi - p * PE, len, del, val,
			    vlen);
	}
}

/* The parts addr/len covers only partly get their copies first: the
 * one step of a change that can fail for want of memory. */
int fib4_prepare(struct fib4 *f, uint32_t addr, uint8_t len)
{
	uint32_t i = addr >> 8, n = len <= 24 ? 1u << (24 - len) : 1;
	uint32_t p0 = i / PE, p1 = (i + n - 1) / PE;
	int ret = 0;

	if (len > 24 || i != p0 * PE)
		ret = materialize(f, p0);
	if (!ret && (len > 24 || i + n != p1 * PE + part_len(p1)))
		ret = materialize(f, p1);
	return ret;
}

/* tbl24_fill lets go of the parts it holds (one batch, one grace). */
int fib4_fill_clear(struct fib4 *f)
{
	uint32_t n = 0;

	if (!f->nfill)
		return 0;
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
		if (f->in_fill[p])
			f->fill_keys[n++] = p;
	if (bpf_map_delete_batch(f->fill_fd, f->fill_keys, &n, NULL) &&
	    errno != ENOENT)
		return -errno;
	memset(f->in_fill, 0, FPMD_TBL24_PARTS);
	f->nfill = 0;
	return 0;
}

/*
 * New parts: into tbl24_fill (one batch), filled from inside the kernel
 * (a user-space batch update costs ~2 ms a part), then into tbl24 (one
 * batch). tbl24_fill keeps its references (a later publish of the same
 * part replaces them) until parts are dropped: only then would they keep
 * a dropped part's memory.
 */
int fib4_publish_parts(struct fib4 *f)
{
	uint32_t n = 0, cnt;
	int *fds, ret = 0;

	fds = calloc(f->parts.npending, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
		if (f->parts.state[p] == CHUNK_PENDING) {
			f->fill_keys[n] = p;
			fds[n++] = chunks_fd(&f->parts, p);
		}
	cnt = n;
	f->syscalls++;
	if (bpf_map_update_batch(f->fill_fd, f->fill_keys, fds, &cnt, NULL))
		ret = -errno;
	else
		cnt = n;
	for (uint32_t j = 0; j < cnt && j < n; j++)
		if (!f->in_fill[f->fill_keys[j]]) {
			f->in_fill[f->fill_keys[j]] = 1;
			f->nfill++;
		}
	if (ret)
		goto out;
	for (uint32_t j = 0; j < n && !ret; j++) {
		uint32_t p = f->fill_keys[j];

		memcpy(f->stage, f->part[p]->t, (size_t)part_words(p) * 8);
		ret = fib4_run_commit(f, p, 0, part_words(p) - 1,
				      FPMD_TBL24_FILL);
	}
	if (!ret)
		ret = chunks_commit(&f->parts, 0);
out:
	free(fds);
	return ret;
}

bool fib4_published(const struct fib4 *f, const uint8_t a[4], uint8_t len)
{
	uint32_t addr, lo, hi;

	if (f->nsc) /* gathered words not stored yet: any route's */
		return false;
	if (!f->parts.npending || len > 32)
		return true;
	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr) & mask_of(len);
	lo = addr >> 8;
	hi = len >= 24 ? lo : lo + (1u << (24 - len)) - 1;
	for (uint32_t p = lo / PE; p <= hi / PE; p++)
		if (f->parts.state[p] == CHUNK_PENDING)
			return false;
	return true;
}
