// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv4 compact table (DXR): fpmd's private DIR-24-8 of value indexes
 * (with the prefix length behind each entry), the prefix store, and the
 * prefixes' slots in rules_v4, and the default route (value index 0).
 * See fib4c.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib4c_priv.h"

/* ---- the private DIR-24-8 ---- */

static int group_new(struct fib4c *f, uint32_t i24)
{
	uint32_t g;

	if (f->ngfree) {
		g = f->gfree[--f->ngfree];
	} else {
		if (f->ngroups == f->gcap) {
			uint32_t cap = f->gcap ? f->gcap * 2 : 64;
			uint32_t *t8 = realloc(f->t8, (size_t)cap * 256 * 4);
			uint8_t *l8;
			uint32_t *gf;

			if (!t8)
				return -ENOMEM;
			f->t8 = t8;
			l8 = realloc(f->l8, (size_t)cap * 256);
			if (!l8)
				return -ENOMEM;
			f->l8 = l8;
			gf = realloc(f->gfree, (size_t)cap * 4);
			if (!gf)
				return -ENOMEM;
			f->gfree = gf;
			f->gcap = cap;
		}
		g = f->ngroups++;
	}
	for (int k = 0; k < 256; k++) {
		f->t8[g * 256 + k] = f->t24[i24];
		f->l8[g * 256 + k] = f->l24[i24];
	}
	f->t24[i24] = FIB4C_T8 | g;
	return (int)g;
}

static bool own(uint8_t l, int l1, int only)
{
	return only ? l == only : l <= l1;
}

/*
 * Give [a, a + 2^(32-len)) value index vi with length l1 where the owner
 * is not longer (add, only 0) or is exactly "only" (a delete: vi, l1
 * are the covering prefix's). Fails only for want of memory for a group.
 */
int fib4c_paint(struct fib4c *f, uint32_t a, int len, uint32_t vi, int l1,
		int only)
{
	if (len <= 24) {
		uint32_t i0 = a >> 8, n = 1u << (24 - len);

		for (uint32_t i = i0; i < i0 + n; i++) {
			if (f->t24[i] & FIB4C_T8) {
				uint32_t g = f->t24[i] & ~FIB4C_T8;

				for (int k = 0; k < 256; k++)
					if (own(f->l8[g * 256 + k], l1, only)) {
						f->t8[g * 256 + k] = vi;
						f->l8[g * 256 + k] =
						    (uint8_t)l1;
					}
				if (own(f->l24[i], l1, only))
					f->l24[i] = (uint8_t)l1;
			} else if (own(f->l24[i], l1, only)) {
				f->t24[i] = vi;
				f->l24[i] = (uint8_t)l1;
			}
		}
		return 0;
	}
	uint32_t i24 = a >> 8, g, k0 = a & 0xff, n = 1u << (32 - len);

	if (f->t24[i24] & FIB4C_T8) {
		g = f->t24[i24] & ~FIB4C_T8;
	} else {
		int r = group_new(f, i24);

		if (r < 0)
			return r;
		g = (uint32_t)r;
	}
	for (uint32_t k = k0; k < k0 + n; k++)
		if (own(f->l8[g * 256 + k], l1, only)) {
			f->t8[g * 256 + k] = vi;
			f->l8[g * 256 + k] = (uint8_t)l1;
		}
	if (only) {
		/* One value again when no /25+ is left in the /24. */
		for (int k = 0; k < 256; k++)
			if (f->l8[g * 256 + k] > 25)
				return 0;
		f->t24[i24] = f->t8[g * 256];
		f->gfree[f->ngfree++] = g;
	}
	return 0;
}

/* ---- the prefix store ---- */

uint64_t fib4c_pkey(uint32_t a, int len)
{
	return ((uint64_t)a << 8 | (uint64_t)len) + 1;
}

static uint32_t pslot(const struct fib4c *f, uint64_t k)
{
	return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 24) & f->pmask;
}

struct fib4c_pfx *fib4c_pfind(const struct fib4c *f, uint32_t a, int len)
{
	uint64_t k = fib4c_pkey(a, len);

	for (uint32_t i = pslot(f, k);; i = (i + 1) & f->pmask) {
		if (f->pfx[i].key == k)
			return &f->pfx[i];
		if (!f->pfx[i].key)
			return NULL;
	}
}

struct fib4c_pfx *fib4c_pinsert(struct fib4c *f, uint64_t k)
{
	uint32_t i = pslot(f, k);

	while (f->pfx[i].key)
		i = (i + 1) & f->pmask;
	f->pfx[i].key = k;
	return &f->pfx[i];
}

int fib4c_pgrow(struct fib4c *f)
{
	struct fib4c_pfx *old = f->pfx;
	uint32_t n = f->pmask + 1;

	if (f->pfx && (uint64_t)f->nrules * 2 < n)
		return 0;
	f->pfx = calloc((size_t)n * 2, sizeof(*f->pfx));
	if (!f->pfx) {
		f->pfx = old;
		return -ENOMEM;
	}
	f->pmask = n * 2 - 1;
	for (uint32_t i = 0; old && i < n; i++)
		if (old[i].key)
			*fib4c_pinsert(f, old[i].key) = old[i];
	free(old);
	return 0;
}

void fib4c_pdelete(struct fib4c *f, struct fib4c_pfx *p)
{
	uint32_t i = (uint32_t)(p - f->pfx), j = i;

	/* Backward-shift deletion: no tombstones. */
	for (;;) {
		uint32_t h;

		j = (j + 1) & f->pmask;
		if (!f->pfx[j].key)
			break;
		h = pslot(f, f->pfx[j].key);
		if ((j > i && (h <= i || h > j)) ||
		    (j < i && h <= i && h > j)) {
			f->pfx[i] = f->pfx[j];
			i = j;
		}
	}
	f->pfx[i].key = 0;
}

/* ---- rules_v4 slots (as fib4.c: lowest free first) ---- */

static struct fpmd_rule_v4 *rec_of(const struct fib4c *f, uint32_t s)
{
	return (struct fpmd_rule_v4 *)chunks_mem(&f->rulec,
						 s / FPMD_RULES_CHUNK) +
	       s % FPMD_RULES_CHUNK;
}

static void slot_mark(struct fib4c *f, uint32_t s)
{
	f->slot_used[s / 64] |= 1ull << (s % 64);
	f->chunk_rules[s / FPMD_RULES_CHUNK]++;
}

void fib4c_slot_put(struct fib4c *f, uint32_t s)
{
	struct fpmd_rule_v4 *rec = rec_of(f, s);

	__atomic_store_n(&rec->flags, 0, __ATOMIC_RELEASE);
	f->slot_used[s / 64] &= ~(1ull << (s % 64));
	f->chunk_rules[s / FPMD_RULES_CHUNK]--;
	if (s < f->slot_lo)
		f->slot_lo = s;
}

int64_t fib4c_slot_get(struct fib4c *f)
{
	int64_t s = chunks_slot_get(&f->rulec, f->slot_used, f->nslots,
				    &f->slot_lo);

	if (s >= 0)
		slot_mark(f, (uint32_t)s);
	return s;
}

int fib4c_rules_shrink(struct fib4c *f)
{
	uint32_t nr = (f->nslots + FPMD_RULES_CHUNK - 1) / FPMD_RULES_CHUNK;

	for (uint32_t c = 0; c < f->rulec.max_chunks; c++)
		if ((f->rulec.state[c] == CHUNK_LIVE ||
		     f->rulec.state[c] == CHUNK_PENDING) &&
		    (c >= nr || !f->chunk_rules[c]))
			chunks_drop(&f->rulec, c);
	return chunks_commit(&f->rulec, UINT32_MAX);
}

void fib4c_record_write(struct fib4c *f, uint32_t s, uint32_t a, int len,
			uint32_t val)
{
	struct fpmd_rule_v4 *rec = rec_of(f, s);
	uint32_t n = __builtin_bswap32(a);

	if (rec->flags & FPMD_RULE_F_USED) {
		__atomic_store_n(&rec->val, val, __ATOMIC_RELEASE);
		return;
	}
	memcpy(rec->addr, &n, 4);
	rec->val = val;
	rec->len = (uint8_t)len;
	__atomic_store_n(&rec->flags, FPMD_RULE_F_USED, __ATOMIC_RELEASE);
}

bool fib4c_published(const struct fib4c *f, const uint8_t a4[4], uint8_t len)
{
	uint32_t a, lo, hi;

	if (!f->ndlist || !len || len > 32) /* the default: live at once */
		return true;
	memcpy(&a, a4, 4);
	a = __builtin_bswap32(a) & fib4c_mask_of(len);
	lo = a >> 16;
	hi = len >= 16 ? lo : lo + (1u << (16 - len)) - 1;
	for (uint32_t j = lo; j <= hi; j++)
		if (f->dflag[j] & (FIB4C_STALE | FIB4C_DEFER))
			return false;
	return true;
}

/*
 * The default route paints nothing: the entries no prefix covers carry
 * value index 0, and index 0's value is the default route's (0, the
 * miss, without one). Adding, changing or removing it is one value write,
 * live at once, instead of painting all 16M entries of the private table
 * and rebuilding every /16 at the commit.
 */
int fib4c_default_set(struct fib4c *f, struct fib4c_pfx *p, uint32_t val)
{
	int64_t slot;
	int ret;

	if (!p) {
		ret = fib4c_rule_reserve(f, &slot);
		if (ret)
			return ret;
		p = fib4c_rule_insert(f, 0, 0, 0, slot);
	}
	fib4c_val_write(f, 0, val);
	if (!f->adopting)
		fib4c_record_write(f, p->slot, 0, 0, val);
	return 0;
}

/*
 * Room for one more rule: 0, with its record slot in *slot (-1 while
 * adopting: the replayed records are already in place), or -ENOSPC when
 * the rule table is full, -ENOMEM when the prefix index cannot grow.
 */
int fib4c_rule_reserve(struct fib4c *f, int64_t *slot)
{
	*slot = -1;
	if (fib4c_pgrow(f) || f->nrules >= f->nslots)
		return f->nrules >= f->nslots ? -ENOSPC : -ENOMEM;
	if (!f->adopting) {
		*slot = fib4c_slot_get(f);
		if (*slot < 0)
			return (int)*slot;
	}
	return 0;
}

/* The new rule a/len, value index vi, in the slot reserved for it. */
struct fib4c_pfx *fib4c_rule_insert(struct fib4c *f, uint32_t a, int len,
				    uint32_t vi, int64_t slot)
{
	struct fib4c_pfx *p = fib4c_pinsert(f, fib4c_pkey(a, len));

	p->vi = vi;
	p->slot = (uint32_t)slot;
	f->nrules++;
	f->len_count[len]++;
	return p;
}
