// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv4 compact table (DXR D16R) writer: see fib4c.h. Here: the value
 * table, the range space and its compaction, the /16 rebuilds and their
 * switch, commit, add / delete, lookups. The private DIR-24-8, prefix
 * store and rules_v4 slots: fib4c_tbl.c; opening, adoption: fib4c_open.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib4c_priv.h"

#define DF_STALE FIB4C_STALE
#define DF_DEFER FIB4C_DEFER
#define DF_LISTED FIB4C_LISTED

/* ---- deferred frees ---- */

static void later(struct fib4c *f, uint32_t base, uint32_t n)
{
	if (f->nlater == f->later_cap) {
		uint32_t cap = f->later_cap ? f->later_cap * 2 : 256;
		struct fib4c_later *l = malloc(cap * sizeof(*l));

		if (!l)
			return; /* leaked: never reused, still correct */
		for (uint32_t i = 0; i < f->nlater; i++)
			l[i] = f->later[(f->later_head + i) % f->later_cap];
		free(f->later);
		f->later = l;
		f->later_head = 0;
		f->later_cap = cap;
	}
	f->later[(f->later_head + f->nlater++) % f->later_cap] =
	    (struct fib4c_later){ base, n, fib4c_mono_ns() };
}

/* ---- the value table ---- */

static uint32_t vhash_of(uint32_t v)
{
	return (v * 0x9e3779b1u) >> 15; /* 17 bits: 2 x FPMD_DXR_VALS */
}

static uint32_t *vh_slot(const struct fib4c *f, uint32_t v)
{
	uint32_t i = vhash_of(v);

	for (;; i = (i + 1) & (2 * FPMD_DXR_VALS - 1)) {
		uint32_t x = f->vhash[i];

		if (!x || (x != UINT32_MAX && f->vals[x - 1] == v))
			return &f->vhash[i];
	}
}

static void vh_rebuild(struct fib4c *f)
{
	memset(f->vhash, 0, 2 * FPMD_DXR_VALS * 4);
	for (uint32_t i = 1; i < f->vtop; i++)
		if (f->vref[i])
			*vh_slot(f, f->vals[i]) = i + 1;
}

void fib4c_val_write(struct fib4c *f, uint32_t vi, uint32_t v)
{
	f->vals[vi] = v;
	if (!f->adopting || f->vmap[vi] != v) {
		__atomic_store_n(&f->vmap[vi], v, __ATOMIC_RELEASE);
		f->entry_writes++;
	}
}

/* The index of value v, a reference taken; -ENOSPC when all are used. */
static int64_t val_get(struct fib4c *f, uint32_t v)
{
	uint32_t *s = vh_slot(f, v), vi;

	if (*s) {
		f->vref[*s - 1]++;
		return *s - 1;
	}
	if (f->nvfree) {
		vi = f->vfree[--f->nvfree];
	} else {
		if (f->vtop >= FPMD_DXR_VALS)
			return -ENOSPC;
		vi = f->vtop++;
	}
	fib4c_val_write(f, vi, v);
	f->vref[vi] = 1;
	*s = vi + 1;
	return vi;
}

static void val_put(struct fib4c *f, uint32_t vi)
{
	if (--f->vref[vi])
		return;
	*vh_slot(f, f->vals[vi]) = UINT32_MAX; /* tombstone */
	/* Ranges may still name it until their /16 is rebuilt (commit) and
	 * a reader in flight has finished. */
	f->vdead[f->nvdead++] = vi;
}

/* ---- range space ---- */

#define cls fib4c_cls
#define cls_size fib4c_cls_size
#define blk_n fib4c_blk_n
#define blk_words fib4c_blk_words
#define blk_range fib4c_blk_range

static void fl_push(struct fib4c *f, uint32_t k, uint32_t base)
{
	struct fib4c_flist *l = &f->fl[k];

	f->clive[base / FPMD_DXR_CHUNK_RANGES] -= cls_size(k);

	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		uint32_t *v = realloc(l->v, cap * 4);

		if (!v)
			return; /* leaked */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = base;
}

/* Free [base, base + n) at once: the fast path never saw it. */
static void rng_free_now(struct fib4c *f, uint32_t base, uint32_t n)
{
	fl_push(f, cls(n), base);
	f->ranges -= n;
}

/* What the grace period has released since. */
static void reap(struct fib4c *f, uint64_t now)
{
	while (f->nlater) {
		struct fib4c_later *l = &f->later[f->later_head];

		if (now - l->at_ns < f->grace_ns)
			break;
		if (l->n) {
			fl_push(f, cls(l->n), l->base);
		} else if (!f->vref[l->base]) {
			f->vfree[f->nvfree++] = l->base;
			if (f->nvfree % 1024 == 0)
				vh_rebuild(f); /* clear tombstones */
		}
		f->later_head = (f->later_head + 1) % f->later_cap;
		f->nlater--;
	}
}

static int64_t rng_alloc(struct fib4c *f, uint32_t n)
{
	uint32_t k = cls(n), sz = cls_size(k);
	int ret;

	while (f->fl[k].n) {
		uint32_t b = f->fl[k].v[--f->fl[k].n];

		if (b / FPMD_DXR_CHUNK_RANGES + 1 == f->evac)
			continue; /* that chunk is being emptied */
		f->ranges += n;
		f->clive[b / FPMD_DXR_CHUNK_RANGES] += sz;
		return b;
	}
	while (f->cur < f->rc.max_chunks) {
		if (f->cur + 1 != f->evac &&
		    f->top[f->cur] + sz <= FPMD_DXR_CHUNK_RANGES) {
			ret = chunks_get(&f->rc, f->cur, true);
			if (ret)
				return ret;
			f->top[f->cur] += sz;
			f->clive[f->cur] += sz;
			f->ranges += n;
			return (int64_t)f->cur * FPMD_DXR_CHUNK_RANGES +
			       f->top[f->cur] - sz;
		}
		f->cur++;
	}
	return -ENOSPC;
}

static uint32_t *rng_mem(const struct fib4c *f, uint32_t base)
{
	return (uint32_t *)chunks_mem(&f->rc, base / FPMD_DXR_CHUNK_RANGES) +
	       base % FPMD_DXR_CHUNK_RANGES;
}

static bool is_block(uint64_t e)
{
	return !(e & FPMD_DXR_U);
}

/* Pack the n long ranges of tmp into short ones in place when they all
 * start on a /24 boundary with a value index below 256; the words now. */
static uint32_t pack_short(uint32_t *tmp, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (tmp[i] & 0x00ff0000 || (tmp[i] & 0xffff) >= 256)
			return 0;
	for (uint32_t w = 0; w < (n + 1) / 2; w++) {
		uint32_t lo = tmp[2 * w], hi = 2 * w + 1 < n ? tmp[2 * w + 1] : 0;

		tmp[w] = (lo >> 16 & 0xff00) | (lo & 0xff) |
			 ((hi >> 16 & 0xff00) | (hi & 0xff)) << 16;
	}
	return (n + 1) / 2;
}

/* ---- the /16s ---- */

static void mark(struct fib4c *f, uint32_t j, uint8_t flag)
{
	if (!(f->dflag[j] & DF_LISTED)) {
		f->dflag[j] |= DF_LISTED;
		f->dlist[f->ndlist++] = j;
	}
	f->dflag[j] |= flag;
}

static void mark_range(struct fib4c *f, uint32_t a, int len)
{
	uint32_t j0 = a >> 16, n = len >= 16 ? 1 : 1u << (16 - len);

	for (uint32_t j = j0; j < j0 + n; j++)
		mark(f, j, DF_STALE);
}

/* The /16's ranges from the private table into out; their number. */
static uint32_t ranges_of(const struct fib4c *f, uint32_t j, uint32_t *out)
{
	uint32_t n = 0, prev = UINT32_MAX;

	for (uint32_t e = 0; e < 256; e++) {
		uint32_t t = f->t24[j << 8 | e];

		if (!(t & FIB4C_T8)) {
			if (t != prev)
				out[n++] = e << 24 | t, prev = t;
			continue;
		}
		for (uint32_t k = 0; k < 256; k++) {
			uint32_t v = f->t8[(t & ~FIB4C_T8) * 256 + k];

			if (v != prev)
				out[n++] = (e << 8 | k) << 16 | v, prev = v;
		}
	}
	return n;
}

static bool chunk_live(const struct fib4c *f, uint64_t e)
{
	return !is_block(e) ||
	       f->rc.state[(uint32_t)e / FPMD_DXR_CHUNK_RANGES] == CHUNK_LIVE;
}

/* Switch /16 j to its built entry; the ranges it replaced wait. */
static void publish(struct fib4c *f, uint32_t j)
{
	uint64_t vis = f->dmap[j], e = f->dir[j];

	if (vis != e) {
		__atomic_store_n(&f->dmap[j], e, __ATOMIC_RELEASE);
		f->entry_writes++;
		if (is_block(vis) && blk_n(vis)) {
			later(f, (uint32_t)vis, blk_words(vis));
			f->ranges -= blk_words(vis);
		}
	}
	f->dflag[j] &= (uint8_t)~DF_DEFER;
}

static int rebuild(struct fib4c *f, uint32_t j, uint32_t *tmp)
{
	uint32_t n = ranges_of(f, j, tmp), w = n > 1 ? pack_short(tmp, n) : 0;
	uint64_t old = f->dir[j], e, s = w ? FPMD_DXR_S : 0;
	int64_t base;

	if (!w)
		w = n; /* long ranges: a word each */
	if (n == 1)
		e = FPMD_DXR_U | (tmp[0] & 0xffff);
	else if (is_block(old) && blk_n(old) == n &&
		 (old & FPMD_DXR_S) == s &&
		 (uint32_t)old / FPMD_DXR_CHUNK_RANGES + 1 != f->evac &&
		 !memcmp(rng_mem(f, (uint32_t)old), tmp, w * 4))
		e = old;
	else {
		base = rng_alloc(f, w);
		if (base < 0)
			return (int)base;
		memcpy(rng_mem(f, (uint32_t)base), tmp, w * 4);
		f->entry_writes += w;
		e = s | (uint64_t)n << 32 | (uint32_t)base;
	}
	f->rebuilds++;
	if (e != old && old != f->dmap[j] && is_block(old))
		rng_free_now(f, (uint32_t)old, blk_words(old)); /* never seen */
	f->dir[j] = e;
	f->dflag[j] &= (uint8_t)~DF_STALE;
	if (e == f->dmap[j]) {
		f->dflag[j] &= (uint8_t)~DF_DEFER;
		return 0;
	}
	if (chunk_live(f, e))
		publish(f, j);
	else
		f->dflag[j] |= DF_DEFER;
	return 0;
}

/*
 * Range space comes back by emptying chunks: when more than two chunks'
 * worth is free (blocks left behind by /16s that grew or shrank), the
 * chunk with the fewest live ranges is emptied: its /16s are rebuilt
 * elsewhere, and once its last block is past its grace the chunk is
 * dropped (one RCU grace period). One chunk at a time.
 */
static int compact(struct fib4c *f)
{
	uint64_t free_r = 0;
	uint32_t best = UINT32_MAX, e;

	if (f->evac) {
		e = f->evac - 1;
		if (f->clive[e])
			return 0;
		/* Empty: forget its free blocks, then drop it. */
		for (uint32_t k = 0; k < FIB4C_NCLASS; k++) {
			struct fib4c_flist *l = &f->fl[k];
			uint32_t w = 0;

			for (uint32_t i = 0; i < l->n; i++)
				if (l->v[i] / FPMD_DXR_CHUNK_RANGES != e)
					l->v[w++] = l->v[i];
			l->n = w;
		}
		f->top[e] = 0;
		f->clive[e] = 0;
		chunks_drop(&f->rc, e);
		if (e < f->cur)
			f->cur = e;
		f->evac = 0;
		f->evacuated++;
		return chunks_commit(&f->rc, 1);
	}
	for (uint32_t c = 0; c < f->rc.max_chunks; c++) {
		if (!chunks_present(&f->rc, c) || c == f->cur)
			continue;
		free_r += FPMD_DXR_CHUNK_RANGES - f->clive[c];
		if (best == UINT32_MAX || f->clive[c] < f->clive[best])
			best = c;
	}
	if (best == UINT32_MAX || free_r <= 2 * FPMD_DXR_CHUNK_RANGES)
		return 0;
	f->evac = best + 1;
	for (uint32_t j = 0; j < FPMD_DXR_DIR; j++) {
		uint64_t d = f->dir[j];

		if (is_block(d) && blk_n(d) &&
		    (uint32_t)d / FPMD_DXR_CHUNK_RANGES == best) {
			if (!(f->dflag[j] & DF_LISTED)) {
				f->dflag[j] |= DF_LISTED;
				f->dlist[f->ndlist++] = j;
			}
			f->dflag[j] |= DF_STALE;
		}
	}
	return 0;
}

int fib4c_commit(struct fib4c *f)
{
	static uint32_t tmp[FPMD_DXR_CHUNK_RANGES];
	uint32_t keep = 0;
	int ret = 0, r;

	reap(f, fib4c_mono_ns());
	for (uint32_t i = 0; i < f->ndlist; i++) {
		uint32_t j = f->dlist[i];

		if ((f->dflag[j] & DF_STALE) && (r = rebuild(f, j, tmp)))
			ret = ret ? ret : r;
	}
	r = chunks_commit(&f->rc, 0);
	ret = ret ? ret : r;
	r = chunks_commit(&f->rulec, 0);
	ret = ret ? ret : r;
	for (uint32_t i = 0; i < f->ndlist; i++) {
		uint32_t j = f->dlist[i];

		if ((f->dflag[j] & DF_DEFER) && chunk_live(f, f->dir[j]))
			publish(f, j);
		if (f->dflag[j] & (DF_STALE | DF_DEFER))
			f->dlist[keep++] = j;
		else
			f->dflag[j] = 0;
	}
	f->ndlist = keep;
	if (!keep) {
		for (uint32_t i = 0; i < f->nvdead; i++)
			later(f, f->vdead[i], 0);
		f->nvdead = 0;
		if (!ret && !f->adopting)
			ret = compact(f);
	}
	return ret;
}

/* ---- add / delete ---- */

int fib4c_add(struct fib4c *f, const uint8_t a4[4], uint8_t len, uint32_t val)
{
	struct fib4c_pfx *p;
	uint32_t a;
	int64_t vi, slot;
	int ret;

	if (len > 32 || FPMD_RT_TYPE(val) == FPMD_RT_NONE)
		return -EINVAL;
	memcpy(&a, a4, 4);
	a = __builtin_bswap32(a) & fib4c_mask_of(len);
	p = fib4c_pfind(f, a, len);
	if (p && f->vals[p->vi] == val)
		return 0;
	if (!len)
		return fib4c_default_set(f, p, val);
	if (!f->adopting)
		reap(f, fib4c_mono_ns());
	vi = val_get(f, val);
	if (vi < 0)
		return (int)vi;
	if (p) {
		uint32_t ovi = p->vi;

		p->vi = (uint32_t)vi;
		if (!f->adopting)
			fib4c_record_write(f, p->slot, a, len, val);
		/* Entries this prefix owns carry its new value index. */
		ret = fib4c_paint(f, a, len, (uint32_t)vi, len + 1, len + 1);
		val_put(f, ovi);
		mark_range(f, a, len);
		return ret;
	}
	ret = fib4c_rule_reserve(f, &slot);
	if (ret) {
		val_put(f, (uint32_t)vi);
		return ret;
	}
	ret = fib4c_paint(f, a, len, (uint32_t)vi, len + 1, 0);
	if (ret) {
		if (slot >= 0)
			fib4c_slot_put(f, (uint32_t)slot);
		val_put(f, (uint32_t)vi);
		return ret;
	}
	fib4c_rule_insert(f, a, len, (uint32_t)vi, slot);
	if (slot >= 0)
		fib4c_record_write(f, (uint32_t)slot, a, len, val);
	mark_range(f, a, len);
	return 0;
}

int fib4c_del(struct fib4c *f, const uint8_t a4[4], uint8_t len)
{
	struct fib4c_pfx *p;
	uint32_t a, cvi = 0, vi;
	int cl = 0;

	if (len > 32)
		return -EINVAL;
	memcpy(&a, a4, 4);
	a = __builtin_bswap32(a) & fib4c_mask_of(len);
	p = fib4c_pfind(f, a, len);
	if (!p)
		return -ENOENT;
	vi = p->vi;
	fib4c_slot_put(f, p->slot);
	fib4c_pdelete(f, p);
	f->nrules--;
	f->len_count[len]--;
	if (!len) { /* fib4c_default_set: nothing painted, index 0 the miss */
		fib4c_val_write(f, 0, 0);
		return 0;
	}
	/* The default route owns nothing: under it, index 0 and length 0. */
	for (int l = len - 1; l >= 1; l--) {
		struct fib4c_pfx *c;

		if (!f->len_count[l])
			continue;
		c = fib4c_pfind(f, a & fib4c_mask_of(l), l);
		if (c) {
			cvi = c->vi;
			cl = l + 1;
			break;
		}
	}
	fib4c_paint(f, a, len, cvi, cl, len + 1);
	val_put(f, vi);
	mark_range(f, a, len);
	return 0;
}

/* ---- lookups, foreach, memory ---- */

uint32_t fib4c_lookup(const struct fib4c *f, const uint8_t a4[4])
{
	uint32_t a, vi;
	uint64_t e;

	memcpy(&a, a4, 4);
	a = __builtin_bswap32(a);
	e = f->dmap[a >> 16];
	if (e & FPMD_DXR_U) {
		vi = e & 0xffff;
	} else {
		const uint32_t *r = rng_mem(f, (uint32_t)e);
		uint32_t lo = 0, hi = blk_n(e), key = a & 0xffff;

		while (hi - lo > 1) {
			uint32_t mid = (lo + hi) / 2;

			if (blk_range(r, e, mid) >> 16 <= key)
				lo = mid;
			else
				hi = mid;
		}
		vi = blk_range(r, e, lo) & 0xffff;
	}
	return f->vmap[vi];
}

int fib4c_foreach(const struct fib4c *f,
		  int (*cb)(const uint8_t addr[4], uint8_t len, uint32_t val,
			    void *arg),
		  void *arg)
{
	for (uint32_t i = 0; i <= f->pmask; i++) {
		const struct fib4c_pfx *p = &f->pfx[i];
		uint32_t a;
		int ret;

		if (!p->key)
			continue;
		a = __builtin_bswap32((uint32_t)((p->key - 1) >> 8));
		ret = cb((const uint8_t *)&a, (uint8_t)((p->key - 1) & 0xff),
			 f->vals[p->vi], arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* /16s with short and with long ranges, as the fast path sees them. */
void fib4c_block_counts(const struct fib4c *f, uint32_t *nshort,
			uint32_t *nlong)
{
	*nshort = *nlong = 0;
	for (uint32_t j = 0; j < FPMD_DXR_DIR; j++) {
		uint64_t e = f->dmap[j];

		if (is_block(e))
			++*(e & FPMD_DXR_S ? nshort : nlong);
	}
}

uint64_t fib4c_map_bytes(const struct fib4c *f)
{
	return (uint64_t)FPMD_DXR_DIR * 8 + (uint64_t)FPMD_DXR_VAL_WORDS * 8 +
	       chunks_bytes(&f->rc);
}

uint64_t fib4c_rules_bytes(const struct fib4c *f)
{
	return chunks_bytes(&f->rulec);
}
