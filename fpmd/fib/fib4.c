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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/fib4.h"

struct fib4_rule {
	struct hnode node;
	uint32_t addr; /* host order, host bits zero */
	uint32_t val;
	uint32_t slot; /* in rules_v4 */
	uint8_t len;
};

#define GRACE_NS_DEFAULT 1000000ull /* 1 ms */

#define PE FIB4_PART_ENTRIES

static void store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Entries in part p (the last one is short). */
static uint32_t part_len(uint32_t p)
{
	uint32_t left = FPMD_TBL24_ENTRIES - p * PE;

	return left < PE ? left : PE;
}

static uint32_t part_words(uint32_t p)
{
	return part_len(p) / 2;
}

/* ---- tbl24 parts ---- */

static uint32_t get24(const struct fib4 *f, uint32_t i)
{
	uint32_t p = i / PE;
	const struct fib4_part *P = f->part[p];

	return P ? P->t[i - p * PE] : f->dval[p];
}

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
static void set24(struct fib4 *f, uint32_t i, uint32_t v, uint8_t len)
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
static void dematerialize(struct fib4 *f, uint32_t p)
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
static int run_commit(struct fib4 *f, uint32_t p, uint32_t from, uint32_t to,
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

/* Words [from, to] of part p, from src (the words themselves, 2 entries
 * each): a map update for one or two, the commit program for more. */
static int write_words(struct fib4 *f, uint32_t p, uint32_t from,
		       uint32_t to, const uint64_t *src)
{
	if (to - from < 2) {
		for (uint32_t k = from; k <= to; k++) {
			f->syscalls++;
			if (bpf_map_update_elem(chunks_fd(&f->parts, p), &k,
						&src[k - from], 0))
				return -errno;
		}
		return 0;
	}
	memcpy(f->stage, src, (size_t)(to - from + 1) * 8);
	return run_commit(f, p, from, to, FPMD_TBL24_WRITE);
}

/*
 * The end of a change: the words it touched into the live parts, the
 * defaults of the uniform parts it touched (and the contents of those
 * still live, about to be dropped), then the parts it made uniform go.
 */
static int flush24(struct fib4 *f)
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
		ret = write_words(f, p, lo, hi,
				  (const uint64_t *)f->part[p]->t + lo);
	}
	for (uint32_t p = f->chg_lo; p <= f->chg_hi && !ret; p++) {
		uint64_t v;

		if (f->part[p])
			continue;
		v = f->dval[p];
		if (__atomic_load_n(&f->dflt[p], __ATOMIC_RELAXED) == v)
			continue;
		if (f->parts.state[p] == CHUNK_DROPPING) {
			/* Still what the fast path reads: keep it right. */
			static uint64_t img[FPMD_TBL24_PART_WORDS];

			for (uint32_t k = 0; k < part_words(p); k++)
				img[k] = v | v << 32;
			ret = write_words(f, p, 0, part_words(p) - 1, img);
		}
		__atomic_store_n(&f->dflt[p], v, __ATOMIC_RELEASE);
	}
uniform:
	for (uint32_t p = f->chg_lo; p <= f->chg_hi; p++)
		if (f->part[p] && !f->part[p]->nb)
			dematerialize(f, p);
	f->dirty_lo = f->chg_lo = 1;
	f->dirty_hi = f->chg_hi = 0;
	return ret;
}

static uint32_t mask_of(uint8_t len)
{
	return len ? ~0u << (32 - len) : 0;
}

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

/* The 256 entries of tbl8 group g. */
static uint32_t *grp(const struct fib4 *f, uint32_t g)
{
	if (f->adopting)
		return f->t8priv + (size_t)g * FPMD_TBL8_GROUP;
	return (uint32_t *)chunks_mem(&f->t8c, g / FPMD_TBL8_CHUNK_GROUPS) +
	       (g % FPMD_TBL8_CHUNK_GROUPS) * FPMD_TBL8_GROUP;
}

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
/* ---- tbl8 groups ---- */

static void group_free(struct fib4 *f, uint32_t g)
{
	uint32_t tail = (f->g_head + f->g_count) % f->ngroups;

	f->g_state[g] = 3;
	f->g_queue[tail] = g;
	f->g_freed_ns[tail] = mono_ns();
	f->g_count++;
	f->groups_used--;
}

/* Freed groups past their grace period become free (state 0). */
static void groups_release(struct fib4 *f, bool wait)
{
	while (f->g_count) {
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

static bool group_available(const struct fib4 *f, uint32_t prefer)
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
static int64_t group_alloc(struct fib4 *f, uint32_t prefer)
{
	uint32_t g;
	int ret;

	if (prefer < f->ngroups && f->g_state[prefer] == 2) {
		f->g_state[prefer] = 1;
		return prefer; /* reserved groups already count as used */
	}
	groups_release(f, false);
	while (f->g_fresh < f->ngroups && f->g_state[f->g_fresh])
		f->g_fresh++;
	if (f->g_fresh >= f->ngroups) {
		if (!f->g_count)
			return -ENOSPC;
		groups_release(f, true);
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
static void paint8(struct fib4 *f, uint32_t g, uint32_t from, uint32_t n,
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
			paint8(f, FPMD_RT_INDEX(e), 0, FPMD_TBL8_GROUP, len,
			       del, val, vlen);
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
 * have their copies already (prepare()). */
static void paint24(struct fib4 *f, uint32_t i, uint32_t n, uint8_t len,
		    bool del, uint32_t val, uint8_t vlen)
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
static int prepare(struct fib4 *f, uint32_t addr, uint8_t len)
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

/* Back to one tbl24 entry once no prefix longer than /24 is left. */
static void maybe_collapse(struct fib4 *f, uint32_t i, uint32_t g)
{
	uint8_t *d8 = f->d8 + (size_t)g * FPMD_TBL8_GROUP;

	for (uint32_t j = 0; j < FPMD_TBL8_GROUP; j++)
		if (d8[j] > 24)
			return;
	set24(f, i, grp(f, g)[0], d8[0]);
	group_free(f, g);
}

/* Write addr/len into the arrays; prefer: a group number for adoption. */
static int paint_add(struct fib4 *f, uint32_t addr, uint8_t len, uint32_t val,
		     uint32_t prefer)
{
	uint32_t i = addr >> 8, e;
	struct fib4_part *P;
	int64_t g;
	int ret = prepare(f, addr, len);

	if (ret)
		return ret;
	if (len <= 24) {
		paint24(f, i, 1u << (24 - len), len, false, val, len);
		return 0;
	}
	P = f->part[i / PE];
	e = get24(f, i);
	if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8) {
		g = FPMD_RT_INDEX(e);
	} else {
		uint32_t *t8;
		uint8_t *d8;

		g = group_alloc(f, prefer);
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
		paint8(f, (uint32_t)g, addr & 0xff, 1u << (32 - len), len,
		       false, val, len);
		/* The /24's own length stays in d: a collapse restores it. */
		set24(f, i, FPMD_RT_ENCODE(FPMD_RT_TBL8, g), P->d[i % PE]);
		return 0;
	}
	paint8(f, (uint32_t)g, addr & 0xff, 1u << (32 - len), len, false, val,
	       len);
	return 0;
}

static int paint_del(struct fib4 *f, uint32_t addr, uint8_t len,
		     uint32_t pval, uint8_t plen)
{
	uint32_t i = addr >> 8, e;
	int ret = prepare(f, addr, len);

	if (ret)
		return ret;
	if (len <= 24) {
		paint24(f, i, 1u << (24 - len), len, true, pval, plen);
		return 0;
	}
	e = get24(f, i);
	if (FPMD_RT_TYPE(e) != FPMD_RT_TBL8)
		return 0; /* cannot happen: a /25+ always has its group */
	paint8(f, FPMD_RT_INDEX(e), addr & 0xff, 1u << (32 - len), len, true,
	       pval, plen);
	maybe_collapse(f, i, FPMD_RT_INDEX(e));
	return 0;
}

/* ---- the prefix store ---- */

static struct fpmd_rule_v4 *rec_of(const struct fib4 *f, uint32_t slot)
{
	return (struct fpmd_rule_v4 *)chunks_mem(&f->rulec,
						 slot / FPMD_RULES_CHUNK) +
	       slot % FPMD_RULES_CHUNK;
}

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

static struct fib4_rule *rule_new(struct fib4 *f, uint32_t addr, uint8_t len,
				  uint32_t val, uint32_t slot)
{
	struct fib4_rule *r = calloc(1, sizeof(*r));

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

static void slot_mark(struct fib4 *f, uint32_t s)
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
	uint32_t w = f->slot_lo / 64, nw = (f->nslots + 63) / 64, s;
	int ret;

	while (w < nw && f->slot_used[w] == ~0ull)
		w++;
	if (w >= nw)
		return -ENOSPC;
	s = w * 64 + (uint32_t)__builtin_ctzll(~f->slot_used[w]);
	if (s >= f->nslots)
		return -ENOSPC;
	f->slot_lo = s;
	ret = chunks_get(&f->rulec, s / FPMD_RULES_CHUNK, true);
	if (ret)
		return ret;
	slot_mark(f, s);
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
	ret = prepare(f, addr, len);
	if (ret)
		goto out;
	if (r) {
		r->val = val;
		record_write(f, r);
		ret = paint_add(f, addr, len, val, prefer);
		goto out;
	}
	if (len > 24 && FPMD_RT_TYPE(get24(f, addr >> 8)) != FPMD_RT_TBL8 &&
	    !group_available(f, prefer)) {
		ret = -ENOSPC;
		goto out;
	}
	slot = slot_get(f);
	if (slot < 0) {
		ret = (int)slot;
		goto out;
	}
	r = rule_new(f, addr, len, val, (uint32_t)slot);
	if (!r) {
		slot_put(f, (uint32_t)slot);
		ret = -ENOMEM;
		goto out;
	}
	record_write(f, r);
	ret = paint_add(f, addr, len, val, prefer);
	if (ret) { /* a tbl8 chunk could not be made */
		flush24(f);
		fib4_del(f, a, len);
		return ret;
	}
out:
	/* Also after a failure: parts prepare() made go again. */
	if (!ret)
		return flush24(f);
	flush24(f);
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
	ret = prepare(f, addr, len);
	if (ret) {
		flush24(f);
		return ret;
	}
	ht_remove(&f->by_prefix, &r->node);
	f->len_count[len]--;
	f->nrules--;
	p = rule_parent(f, addr, len);
	paint_del(f, addr, len, p ? p->val : 0, p ? p->len : 0);
	__atomic_store_n(&rec_of(f, r->slot)->flags, 0, __ATOMIC_RELEASE);
	slot_put(f, r->slot);
	free(r);
	return flush24(f);
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

/* tbl24_fill lets go of the parts it holds (one batch, one grace). */
static int fill_clear(struct fib4 *f)
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
static int publish_parts(struct fib4 *f)
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
		ret = run_commit(f, p, 0, part_words(p) - 1, FPMD_TBL24_FILL);
	}
	if (!ret)
		ret = chunks_commit(&f->parts, 0);
out:
	free(fds);
	return ret;
}

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

	groups_release(f, false);
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

	if (max_drops)
		mark_drops(f);
	ret = chunks_commit(&f->rulec, 0);
	if (!ret && f->parts.npending)
		ret = publish_parts(f);
	if (!ret && max_drops && f->parts.ndropping) {
		ret = fill_clear(f);
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
	return ret;
}

uint64_t fib4_map_bytes(const struct fib4 *f)
{
	return chunks_bytes(&f->parts) + chunks_bytes(&f->t8c) +
	       chunks_bytes(&f->rulec);
}

/* ---- open, adopt, close ---- */

static void *map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Sort n 64-bit keys: LSD radix, 16 bits a pass, passes whose digit is
 * the same in every key skipped. qsort took ~180 ms of a 1M adoption.
 * tmp has room for n keys; the result ends in a. 0 or -ENOMEM.
 */
static int sort_u64(uint64_t *a, size_t n)
{
	uint64_t *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *src = a, *dst;
	size_t *cnt = calloc(65536, sizeof(*cnt));

	if (!tmp || !cnt) {
		free(tmp);
		free(cnt);
		return -ENOMEM;
	}
	dst = tmp;
	for (unsigned int sh = 0; sh < 64; sh += 16) {
		size_t sum = 0;

		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(src[i] >> sh) & 0xffff]++;
		if (n && cnt[(src[0] >> sh) & 0xffff] == n)
			continue; /* one digit everywhere: already in order */
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> sh) & 0xffff]++] = src[i];
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(cnt);
	return 0;
}

/* The words of the parts the maps hold (NULL where no part). */
/* Read from inside the kernel: a batch lookup costs ~2.6 ms a part. */
static int read_live(struct fib4 *f, uint64_t **live)
{
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		int ret;

		if (f->parts.state[p] != CHUNK_LIVE)
			continue;
		live[p] = malloc(FPMD_TBL24_PART_WORDS * 8);
		if (!live[p])
			return -ENOMEM;
		ret = run_commit(f, p, 0, part_words(p) - 1, FPMD_TBL24_READ);
		if (ret)
			return ret;
		memcpy(live[p], f->stage, (size_t)part_words(p) * 8);
	}
	return 0;
}

static uint32_t live24(const struct fib4 *f, uint64_t *const *live,
		       uint32_t i)
{
	uint32_t p = i / PE;

	if (live[p])
		return ((const uint32_t *)live[p])[i - p * PE];
	return (uint32_t)f->dflt[p];
}

/* Runs of words of part p that differ from the live ones, written. */
static int adopt_part(struct fib4 *f, uint32_t p, const uint64_t *live)
{
	const uint64_t *want = (const uint64_t *)f->part[p]->t;
	uint32_t n = part_words(p);
	int ret = 0;

	for (uint32_t w = 0; w < n && !ret; w++) {
		uint32_t end = w;

		if (want[w] == live[w])
			continue;
		while (end + 1 < n && want[end + 1] != live[end + 1])
			end++;
		f->entry_writes += end - w + 1;
		ret = write_words(f, p, w, end, want + w);
		w = end;
	}
	return ret;
}

/* Part p is uniform: its default, and a live part dropped after. */
static int adopt_uniform(struct fib4 *f, uint32_t p, const uint64_t *live)
{
	uint64_t v = f->dval[p], img[FPMD_TBL24_PART_WORDS];
	int ret = 0;

	if (f->dflt[p] != v) {
		f->entry_writes++;
		__atomic_store_n(&f->dflt[p], v, __ATOMIC_RELEASE);
	}
	if (!live)
		return 0;
	for (uint32_t k = 0; k < part_words(p); k++)
		img[k] = v | v << 32;
	if (memcmp(img, live, part_words(p) * 8)) {
		f->entry_writes += part_words(p);
		ret = write_words(f, p, 0, part_words(p) - 1, img);
	}
	chunks_drop(&f->parts, p);
	return ret;
}

/*
 * Replay rules_v4 into private tables (shortest prefixes first, each /24
 * keeping the tbl8 group number it has in the live tables), then write
 * the live ones only where they differ: groups first, tbl24 last. Parts
 * and chunks absent from the maps are never read.
 */
static int adopt(struct fib4 *f)
{
	uint64_t **live = calloc(FPMD_TBL24_PARTS, sizeof(*live));
	uint64_t *recs = NULL; /* length, address, slot: see REC_KEY */
	uint32_t n = 0, nrec = 0;
	int ret = 0;

	f->t8priv = calloc((size_t)f->ngroups * FPMD_TBL8_GROUP, 4);
	if (!live || !f->t8priv) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_live(f, live);
	if (ret)
		goto out;
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		const uint32_t *e = (const uint32_t *)live[p];

		for (uint32_t k = 0; e && k < part_len(p); k++) {
			uint32_t g = FPMD_RT_INDEX(e[k]);

			if (FPMD_RT_TYPE(e[k]) != FPMD_RT_TBL8 ||
			    g >= f->ngroups || f->g_state[g] ||
			    f->t8c.state[g / FPMD_TBL8_CHUNK_GROUPS] !=
				    CHUNK_LIVE)
				continue;
			f->g_state[g] = 2;
			f->t8_busy[g / FPMD_TBL8_CHUNK_GROUPS]++;
			f->groups_used++;
		}
	}
	for (uint32_t c = 0; c < f->rulec.max_chunks; c++)
		if (chunks_present(&f->rulec, c))
			nrec += FPMD_RULES_CHUNK;
	recs = calloc(nrec ? nrec : 1, sizeof(*recs));
	if (!recs) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < f->nslots; s++) {
		struct fpmd_rule_v4 *rec;
		uint32_t addr;

		if (!chunks_present(&f->rulec, s / FPMD_RULES_CHUNK)) {
			s = (s / FPMD_RULES_CHUNK + 1) * FPMD_RULES_CHUNK - 1;
			continue;
		}
		rec = rec_of(f, s);
		if (!(rec->flags & FPMD_RULE_F_USED))
			continue;
		if (rec->len > 32 || FPMD_RT_TYPE(rec->val) == FPMD_RT_NONE ||
		    FPMD_RT_TYPE(rec->val) == FPMD_RT_TBL8) {
			rec->flags = 0; /* torn or foreign: drop it */
			continue;
		}
		memcpy(&addr, rec->addr, 4);
		addr = __builtin_bswap32(addr) & mask_of(rec->len);
		/* Shortest first; a duplicate lands next to its first. */
		recs[n++] = (uint64_t)rec->len << 58 | (uint64_t)addr << 26 | s;
	}
	ret = sort_u64(recs, n);
	if (ret)
		goto out;
	/* Room for every prefix at once, not ten doublings. */
	while (f->by_prefix.nbuckets < n)
		ht_grow(&f->by_prefix);
	f->adopting = true;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t slot = (uint32_t)(recs[k] & ((1u << 26) - 1)), e;
		uint32_t addr = (uint32_t)(recs[k] >> 26);
		struct fpmd_rule_v4 *rec = rec_of(f, slot);

		if (k && recs[k] >> 26 == recs[k - 1] >> 26) {
			rec->flags = 0; /* a duplicate: keep the first */
			continue;
		}
		if (!rule_new(f, addr, rec->len, rec->val, slot)) {
			ret = -ENOMEM;
			goto out;
		}
		slot_mark(f, slot);
		e = rec->len > 24 ? live24(f, live, addr >> 8) : 0;
		ret = paint_add(f, addr, rec->len, rec->val,
				FPMD_RT_TYPE(e) == FPMD_RT_TBL8 ?
					FPMD_RT_INDEX(e) : UINT32_MAX);
		if (ret)
			goto out;
	}
	/* Which copies are uniform, counted once rather than per entry. */
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		struct fib4_part *P = f->part[p];

		if (!P)
			continue;
		P->nb = 0;
		for (uint32_t k = 0; k < part_len(p); k++)
			P->nb += (FPMD_RT_TYPE(P->t[k]) == FPMD_RT_TBL8) +
				 (k && (P->t[k - 1] != P->t[k] ||
					P->d[k - 1] != P->d[k]));
		if (!P->nb)
			dematerialize(f, p);
	}
	f->dirty_lo = f->chg_lo = 1;
	f->dirty_hi = f->chg_hi = 0;
	f->adopting = false;
	f->entry_writes = 0;
	/* tbl8 first: every group tbl24 will point at, complete. */
	for (uint32_t g = 0; g < f->ngroups && !ret; g++) {
		const uint32_t *want = f->t8priv + (size_t)g * FPMD_TBL8_GROUP;
		uint32_t *t8;

		if (f->g_state[g] != 1)
			continue;
		ret = chunks_get(&f->t8c, g / FPMD_TBL8_CHUNK_GROUPS, true);
		if (ret)
			break;
		t8 = grp(f, g);
		for (uint32_t j = 0; j < FPMD_TBL8_GROUP; j++)
			if (t8[j] != want[j]) {
				store(&t8[j], want[j]);
				f->entry_writes++;
			}
	}
	if (!ret)
		ret = chunks_commit(&f->t8c, 0);
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS && !ret; p++) {
		if (!f->part[p])
			ret = adopt_uniform(f, p, live[p]);
		else if (live[p])
			ret = adopt_part(f, p, live[p]);
		else
			ret = chunks_get(&f->parts, p, true);
	}
	if (!ret)
		ret = fib4_commit(f, 0);
	/* Groups the old tables used that no prefix needs any more. */
	for (uint32_t g = 0; g < f->ngroups; g++)
		if (f->g_state[g] == 2)
			group_free(f, g);
out:
	f->adopting = false;
	if (live)
		for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
			free(live[p]);
	free(live);
	free(f->t8priv);
	f->t8priv = NULL;
	free(recs);
	return ret;
}

void fib4_size(struct bpf_object *obj, uint32_t ngroups, uint32_t nslots)
{
	struct bpf_map *t8 = bpf_object__find_map_by_name(obj, "tbl8");
	struct bpf_map *rl = bpf_object__find_map_by_name(obj, "rules_v4");
	struct bpf_map *t24 = bpf_object__find_map_by_name(obj, "tbl24");
	struct bpf_map *fill = bpf_object__find_map_by_name(obj, "tbl24_fill");

	if (!ngroups || !nslots) {
		bpf_map__set_max_entries(t24, 1);
		bpf_map__set_max_entries(fill, 1);
		bpf_map__set_max_entries(t8, 1);
		bpf_map__set_max_entries(rl, 1);
		return;
	}
	bpf_map__set_max_entries(t8, (ngroups + FPMD_TBL8_CHUNK_GROUPS - 1) /
					     FPMD_TBL8_CHUNK_GROUPS);
	bpf_map__set_max_entries(rl, (nslots + FPMD_RULES_CHUNK - 1) /
					     FPMD_RULES_CHUNK);
}

void fib4_maps_of(struct bpf_object *obj, struct fib4_maps *m)
{
	struct bpf_program *prog =
		bpf_object__find_program_by_name(obj, "fpmd_tbl24_commit");

	m->tbl24 = bpf_object__find_map_fd_by_name(obj, "tbl24");
	m->tbl24_dflt = bpf_object__find_map_fd_by_name(obj, "tbl24_dflt");
	m->tbl24_fill = bpf_object__find_map_fd_by_name(obj, "tbl24_fill");
	m->tbl8 = bpf_object__find_map_fd_by_name(obj, "tbl8");
	m->rules_v4 = bpf_object__find_map_fd_by_name(obj, "rules_v4");
	m->tbl24_stage = bpf_object__find_map_fd_by_name(obj, "tbl24_stage");
	m->commit_prog = prog ? bpf_program__fd(prog) : -1;
}

int fib4_open(struct fib4 *f, const struct fib4_maps *m, uint32_t ngroups,
	      uint32_t nslots, bool adopt_maps)
{
	size_t dlen = FPMD_TBL24_PARTS * 8;
	int ret = -ENOMEM;

	memset(f, 0, sizeof(*f));
	/* Slots up to 2^26: adoption sorts them in one 64-bit key. */
	if (!ngroups || ngroups > FPMD_TBL8_MAX_GROUPS || !nslots ||
	    nslots > 1u << 26)
		return -EINVAL;
	f->ngroups = ngroups;
	f->nslots = nslots;
	f->grace_ns = GRACE_NS_DEFAULT;
	f->dirty_lo = f->chg_lo = 1;
	f->commit_fd = m->commit_prog;
	f->fill_fd = m->tbl24_fill;
	f->fill_keys = calloc(FPMD_TBL24_PARTS, sizeof(*f->fill_keys));
	f->in_fill = calloc(FPMD_TBL24_PARTS, 1);
	f->dflt = map_mmap(m->tbl24_dflt, dlen);
	f->stage = map_mmap(m->tbl24_stage, FPMD_TBL24_STAGE_WORDS * 8);
	if (!f->dflt || !f->stage || !f->fill_keys || !f->in_fill) {
		ret = -errno;
		goto fail;
	}
	f->part = calloc(FPMD_TBL24_PARTS, sizeof(*f->part));
	f->dval = calloc(FPMD_TBL24_PARTS, sizeof(*f->dval));
	f->dlen = calloc(FPMD_TBL24_PARTS, 1);
	f->d8 = calloc((size_t)ngroups * FPMD_TBL8_GROUP, 1);
	f->g_state = calloc(ngroups, 1);
	f->g_queue = calloc(ngroups, sizeof(*f->g_queue));
	f->g_freed_ns = calloc(ngroups, sizeof(*f->g_freed_ns));
	f->slot_used = calloc(nslots / 64 + 1, sizeof(*f->slot_used));
	f->chunk_rules = calloc(nslots / FPMD_RULES_CHUNK + 1,
				sizeof(*f->chunk_rules));
	f->t8_busy = calloc(ngroups / FPMD_TBL8_CHUNK_GROUPS + 1,
			    sizeof(*f->t8_busy));
	if (!f->part || !f->dval || !f->dlen || !f->d8 || !f->g_state ||
	    !f->g_queue || !f->g_freed_ns || !f->slot_used ||
	    !f->chunk_rules || !f->t8_busy ||
	    ht_init(&f->by_prefix, 1024))
		goto fail;
	ret = chunks_open(&f->parts, m->tbl24, 8, FPMD_TBL24_PART_WORDS, false,
			  adopt_maps);
	if (!ret)
		ret = chunks_open(&f->t8c, m->tbl8, 8, FPMD_TBL8_CHUNK_WORDS,
				  true, adopt_maps);
	if (!ret)
		ret = chunks_open(&f->rulec, m->rules_v4,
				  sizeof(struct fpmd_rule_v4), FPMD_RULES_CHUNK,
				  true, adopt_maps);
	if (ret)
		goto fail;
	if (f->t8c.max_chunks * FPMD_TBL8_CHUNK_GROUPS < ngroups ||
	    f->rulec.max_chunks * FPMD_RULES_CHUNK < nslots) {
		ret = -EINVAL; /* maps sized for less: see fib4_size() */
		goto fail;
	}
	if (adopt_maps) {
		uint32_t k, *pk = NULL;

		/* What tbl24_fill still holds from the previous run. */
		while (f->nfill < FPMD_TBL24_PARTS &&
		       !bpf_map_get_next_key(f->fill_fd, pk, &k)) {
			if (k < FPMD_TBL24_PARTS && !f->in_fill[k]) {
				f->in_fill[k] = 1;
				f->nfill++;
			}
			f->fill_keys[0] = k;
			pk = &f->fill_keys[0];
		}
		for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
			f->dval[p] = (uint32_t)f->dflt[p];
		ret = adopt(f);
		if (ret)
			goto fail;
	} else {
		/* Fresh maps: no parts, every default "no route". */
		memset(f->dflt, 0, dlen);
	}
	return 0;
fail:
	fib4_close(f);
	return ret;
}

void fib4_close(struct fib4 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	if (f->by_prefix.b) {
		ht_for_each(&f->by_prefix, n, tmp, i)
			free(container_of(n, struct fib4_rule, node));
		ht_free(&f->by_prefix);
	}
	if (f->part) {
		for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
			free(f->part[p]);
		free(f->part);
	}
	if (f->parts.state)
		chunks_close(&f->parts);
	if (f->t8c.state)
		chunks_close(&f->t8c);
	if (f->rulec.state)
		chunks_close(&f->rulec);
	if (f->dflt)
		munmap(f->dflt, FPMD_TBL24_PARTS * 8);
	if (f->stage)
		munmap(f->stage, FPMD_TBL24_STAGE_WORDS * 8);
	free(f->dval);
	free(f->dlen);
	free(f->d8);
	free(f->t8priv);
	free(f->g_state);
	free(f->g_queue);
	free(f->g_freed_ns);
	free(f->slot_used);
	free(f->chunk_rules);
	free(f->t8_busy);
	free(f->fill_keys);
	free(f->in_fill);
	memset(f, 0, sizeof(*f));
}
