// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv4 DIR-24-8 (DPDK rte_lpm's layout). tbl24 is kept in fpmd's memory
 * part by part (only the parts that are not uniform; a uniform one is a
 * value in tbl24_dflt) and the words a change touched are written to the
 * live parts at the end of the change; tbl8 is written through shared
 * mappings. Each entry remembers, in user space only (d / d8), the
 * length of the prefix it came from: adding a prefix overwrites the
 * entries in its range whose prefix is not longer, deleting one gives
 * the entries it owned to its covering prefix. Readers never see a
 * half-written prefix: a new tbl8 group is filled completely before
 * tbl24 points at it, a new part before the outer map holds it, and
 * every entry is one aligned 32-bit store.
 *
 * Here: the prefix store (rules_v4), add / delete / lookup, commit.
 * tbl24's parts: fib4_tbl24.c; tbl8's groups: fib4_tbl8.c; opening and
 * adopting the maps: fib4_open.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib4_priv.h"

struct slab_cache fib4_rule_cache =
	SLAB_CACHE_INIT("IPv4 table rules", struct fib4_rule);

/* ---- the prefixes, by prefix ---- */

static uint32_t rule_hash(uint32_t addr, uint8_t len)
{
	uint64_t k = ((uint64_t)addr << 8 | len) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(k >> 32);
}

static struct fib4_rule *rule_find(const struct fib4 *f, uint32_t addr,
				   uint8_t len)
{
	uint32_t h = rule_hash(addr, len);

	for (struct hnode *n = ht_chain(&f->by_prefix, h); n; n = n->next) {
		struct fib4_rule *r = container_of(n, struct fib4_rule, node);

		if (n->hash == h && r->addr == addr && r->len == len)
			return r;
	}
	return NULL;
}

/* The longest prefix shorter than len covering addr, or NULL. */
static struct fib4_rule *rule_parent(const struct fib4 *f, uint32_t addr,
				     uint8_t len)
{
	for (int l = len - 1; l >= 0; l--) {
		struct fib4_rule *r;

		if (!f->len_count[l])
			continue;
		r = rule_find(f, addr & mask_of((uint8_t)l), (uint8_t)l);
		if (r)
			return r;
	}
	return NULL;
}

/* Write addr/len into the arrays; prefer: a group number for adoption. */
int fib4_paint_add(struct fib4 *f, uint32_t addr, uint8_t len, uint32_t val,
		   uint32_t prefer)
{
	uint32_t i = addr >> 8, e;
	struct fib4_part *P;
	int64_t g;
	int ret = fib4_prepare(f, addr, len);

	if (ret)
		return ret;
	if (len <= 24) {
		fib4_paint24(f, i, 1u << (24 - len), len, false, val, len);
		return 0;
	}
	P = f->part[i / PE];
	e = get24(f, i);
	if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8) {
		g = FPMD_RT_INDEX(e);
	} else {
		uint32_t *t8;
		uint8_t *d8;

		g = fib4_group_alloc(f, prefer);
		if (g < 0)
			return (int)g;
		t8 = grp(f, (uint32_t)g);
		d8 = f->d8 + (size_t)g * FPMD_TBL8_GROUP;
		/* The whole /24 as it is now, then the new prefix, then
		 * the pointer: a lookup sees the old /24 or the new one. */
		for (uint32_t j = 0; j < FPMD_TBL8_GROUP; j++) {
			store(&t8[j], e);
			d8[j] = P->d[i - (i / PE) * PE];
		}
		f->entry_writes += FPMD_TBL8_GROUP;
		fib4_paint8(f, (uint32_t)g, addr & 0xff, 1u << (32 - len), len,
			    false, val, len);
		/* The /24's own length stays in d: a collapse restores it. */
		fib4_set24(f, i, FPMD_RT_ENCODE(FPMD_RT_TBL8, g), P->d[i % PE]);
		return 0;
	}
	fib4_paint8(f, (uint32_t)g, addr & 0xff, 1u << (32 - len), len, false,
		    val, len);
	return 0;
}

static int paint_del(struct fib4 *f, uint32_t addr, uint8_t len,
		     uint32_t pval, uint8_t plen)
{
	uint32_t i = addr >> 8, e;
	int ret = fib4_prepare(f, addr, len);

	if (ret)
		return ret;
	if (len <= 24) {
		fib4_paint24(f, i, 1u << (24 - len), len, true, pval, plen);
		return 0;
	}
	e = get24(f, i);
	if (FPMD_RT_TYPE(e) != FPMD_RT_TBL8)
		return 0; /* cannot happen: a /25+ always has its group */
	fib4_paint8(f, FPMD_RT_INDEX(e), addr & 0xff, 1u << (32 - len), len,
		    true, pval, plen);
	fib4_maybe_collapse(f, i, FPMD_RT_INDEX(e));
	return 0;
}

/* ---- the prefix store ---- */

static void record_write(struct fib4 *f, const struct fib4_rule *r)
{
	struct fpmd_rule_v4 *rec = rec_of(f, r->slot);
	uint32_t a = __builtin_bswap32(r->addr);

	if (rec->flags & FPMD_RULE_F_USED) {
		store(&rec->val, r->val);
		return;
	}
	memcpy(rec->addr, &a, 4);
	rec->val = r->val;
	rec->len = r->len;
	__atomic_store_n(&rec->flags, FPMD_RULE_F_USED, __ATOMIC_RELEASE);
}

struct fib4_rule *fib4_rule_new(struct fib4 *f, uint32_t addr, uint8_t len,
				uint32_t val, uint32_t slot)
{
	struct fib4_rule *r = slab_alloc(&fib4_rule_cache);

	if (!r)
		return NULL;
	r->addr = addr;
	r->len = len;
	r->val = val;
	r->slot = slot;
	ht_insert(&f->by_prefix, &r->node, rule_hash(addr, len));
	f->len_count[len]++;
	f->nrules++;
	return r;
}

void fib4_slot_mark(struct fib4 *f, uint32_t s)
{
	f->slot_used[s / 64] |= 1ull << (s % 64);
	f->chunk_rules[s / FPMD_RULES_CHUNK]++;
}

static void slot_put(struct fib4 *f, uint32_t s)
{
	f->slot_used[s / 64] &= ~(1ull << (s % 64));
	f->chunk_rules[s / FPMD_RULES_CHUNK]--;
	if (s < f->slot_lo)
		f->slot_lo = s;
}

/*
 * The lowest free slot in rules_v4, its chunk made (pending) if needed:
 * the rules stay packed at the bottom, so the chunks above the highest
 * one in use hold nothing and can go (fib4_commit).
 */
static int64_t slot_get(struct fib4 *f)
{
	int64_t s = chunks_slot_get(&f->rulec, f->slot_used, f->nslots,
				    &f->slot_lo);

	if (s >= 0)
		fib4_slot_mark(f, (uint32_t)s);
	return s;
}

int fib4_add(struct fib4 *f, const uint8_t a[4], uint8_t len, uint32_t val)
{
	uint32_t addr, prefer = UINT32_MAX;
	struct fib4_rule *r;
	int64_t slot;
	int ret;

	if (len > 32 || FPMD_RT_TYPE(val) == FPMD_RT_TBL8 ||
	    FPMD_RT_TYPE(val) == FPMD_RT_NONE)
		return -EINVAL;
	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr) & mask_of(len);
	r = rule_find(f, addr, len);
	if (r && r->val == val)
		return 0;
	ret = fib4_prepare(f, addr, len);
	if (ret)
		goto out;
	if (r) {
		r->val = val;
		record_write(f, r);
		ret = fib4_paint_add(f, addr, len, val, prefer);
		goto out;
	}
	if (len > 24 && FPMD_RT_TYPE(get24(f, addr >> 8)) != FPMD_RT_TBL8 &&
	    !fib4_group_available(f, prefer)) {
		ret = -ENOSPC;
		goto out;
	}
	slot = slot_get(f);
	if (slot < 0) {
		ret = (int)slot;
		goto out;
	}
	r = fib4_rule_new(f, addr, len, val, (uint32_t)slot);
	if (!r) {
		slot_put(f, (uint32_t)slot);
		ret = -ENOMEM;
		goto out;
	}
	record_write(f, r);
	ret = fib4_paint_add(f, addr, len, val, prefer);
	if (ret) { /* a tbl8 chunk could not be made */
		fib4_flush24(f);
		fib4_del(f, a, len);
		return ret;
	}
out:
	/* Also after a failure: parts fib4_prepare() made go again. */
	if (!ret)
		return fib4_flush24(f);
	fib4_flush24(f);
	return ret;
}

int fib4_del(struct fib4 *f, const uint8_t a[4], uint8_t len)
{
	struct fib4_rule *r, *p;
	uint32_t addr;
	int ret;

	if (len > 32)
		return -EINVAL;
	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr) & mask_of(len);
	r = rule_find(f, addr, len);
	if (!r)
		return -ENOENT;
	ret = fib4_prepare(f, addr, len);
	if (ret) {
		fib4_flush24(f);
		return ret;
	}
	ht_remove(&f->by_prefix, &r->node);
	f->len_count[len]--;
	f->nrules--;
	p = rule_parent(f, addr, len);
	paint_del(f, addr, len, p ? p->val : 0, p ? p->len : 0);
	__atomic_store_n(&rec_of(f, r->slot)->flags, 0, __ATOMIC_RELEASE);
	slot_put(f, r->slot);
	slab_free(&fib4_rule_cache, r);
	return fib4_flush24(f);
}

uint32_t fib4_lookup(const struct fib4 *f, const uint8_t a[4])
{
	uint32_t addr, e;

	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr);
	e = get24(f, addr >> 8);
	if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8)
		e = grp(f, FPMD_RT_INDEX(e))[addr & 0xff];
	return e;
}

int fib4_foreach(const struct fib4 *f,
		 int (*cb)(const uint8_t addr[4], uint8_t len, uint32_t val,
			   void *arg),
		 void *arg)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&f->by_prefix, n, tmp, i)
	{
		struct fib4_rule *r = container_of(n, struct fib4_rule, node);
		uint32_t a = __builtin_bswap32(r->addr);
		int ret = cb((const uint8_t *)&a, r->len, r->val, arg);

		if (ret)
			return ret;
	}
	return 0;
}

/* ---- commit ---- */

/*
 * tbl8 chunks whose groups are all free, past the grace after tbl24
 * stopped pointing at them, and rules_v4 chunks without a rule, leave
 * at this commit (a group or slot wanted there again keeps its chunk:
 * chunks_get).
 */
static void mark_drops(struct fib4 *f)
{
	uint32_t n8 = (f->ngroups + FPMD_TBL8_CHUNK_GROUPS - 1) /
		      FPMD_TBL8_CHUNK_GROUPS;
	uint32_t nr = (f->nslots + FPMD_RULES_CHUNK - 1) / FPMD_RULES_CHUNK;

	fib4_groups_release(f, false);
	for (uint32_t c = 0; c < f->t8c.max_chunks; c++)
		if (f->t8c.state[c] == CHUNK_LIVE &&
		    (c >= n8 || !f->t8_busy[c]))
			chunks_drop(&f->t8c, c);
	for (uint32_t c = 0; c < f->rulec.max_chunks; c++)
		if ((f->rulec.state[c] == CHUNK_LIVE ||
		     f->rulec.state[c] == CHUNK_PENDING) &&
		    (c >= nr || !f->chunk_rules[c]))
			chunks_drop(&f->rulec, c);
}

static uint64_t drops_of(const struct fib4 *f)
{
	return f->parts.dropped + f->t8c.dropped + f->rulec.dropped;
}

int fib4_commit(struct fib4 *f, uint32_t max_drops)
{
	uint64_t d0 = drops_of(f);
	int ret;

	/* The gathered words first: a part published below is whole, and
	 * none of them may land on it after; and the groups they stopped
	 * pointing at start their grace before mark_drops looks. */
	ret = fib4_scatter_flush(f);
	if (max_drops)
		mark_drops(f);
	ret = ret ? ret : chunks_commit(&f->rulec, 0);
	if (!ret && f->parts.npending)
		ret = fib4_publish_parts(f);
	if (!ret && max_drops && f->parts.ndropping) {
		ret = fib4_fill_clear(f);
		if (!ret)
			ret = chunks_commit(&f->parts, max_drops);
	}
	/* One budget of grace periods for all three. */
	if (!ret && drops_of(f) - d0 < max_drops && f->t8c.ndropping)
		ret = chunks_commit(&f->t8c,
				    max_drops - (uint32_t)(drops_of(f) - d0));
	if (!ret && drops_of(f) - d0 < max_drops && f->rulec.ndropping)
		ret = chunks_commit(&f->rulec,
				    max_drops - (uint32_t)(drops_of(f) - d0));
	/* What the reaper finished: slots free, counters right. */
	if (max_drops) {
		int r = chunks_collect(&f->parts, false);

		r = r ? r : chunks_collect(&f->t8c, false);
		r = r ? r : chunks_collect(&f->rulec, false);
		ret = ret ? ret : r;
	}
	return ret;
}

uint64_t fib4_map_bytes(const struct fib4 *f)
{
	return chunks_bytes(&f->parts) + chunks_bytes(&f->t8c) +
	       chunks_bytes(&f->rulec);
}
