/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fast route lookups, shared by the XDP router (fpmd.bpf.c) and the
 * differential test (fib_check.bpf.c) so both run the very same code:
 * IPv4 DIR-24-8 over tbl24/tbl8 and IPv6 binary search on prefix
 * lengths over slots_v6/lens_v6, behind a direct stage per /19 of
 * 2000::/3 (in lens_v6). Layouts and invariants: fpmd_maps.h.
 * Both return a route value; type FPMD_RT_NONE is a miss.
 */
#ifndef FPMD_FIB_H
#define FPMD_FIB_H

#include <linux/bpf.h>
#include <linux/in6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "fpmd_maps.h"

#define FPMD_V6_SLOTS_DEFAULT (1u << 20)

/* One part of tbl24; fpmd creates them and fills the outer map. */
struct tbl24_part {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FPMD_TBL24_PART_WORDS);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FPMD_TBL24_PARTS);
	__type(key, __u32);
	__array(values, struct tbl24_part);
} tbl24 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_TBL24_STAGE_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} tbl24_stage SEC(".maps");

/* New parts while fpmd fills them (fpmd_tbl24_commit), by part index;
 * never read by the fast path. A hash: it has a batch delete. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FPMD_TBL24_PARTS);
	__type(key, __u32);
	__array(values, struct tbl24_part);
} tbl24_fill SEC(".maps");

/* Per tbl24 part: the value of its whole range while it has no part. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_TBL24_PARTS);
	__type(key, __u32);
	__type(value, __u64);
} tbl24_dflt SEC(".maps");

struct tbl8_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_TBL8_CHUNK_WORDS);
	__type(key, __u32);
	__type(value, __u64);
};

/* Set by the loader: groups / FPMD_TBL8_CHUNK_GROUPS, rounded up. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FPMD_TBL8_GROUPS / FPMD_TBL8_CHUNK_GROUPS);
	__type(key, __u32);
	__array(values, struct tbl8_chunk);
} tbl8 SEC(".maps");

struct rules_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_RULES_CHUNK);
	/* By size: clang leaves a struct behind an inner map's pointer a
	 * forward declaration in BTF. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fpmd_rule_v4));
};

/* Read by user space only (adoption); set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct rules_chunk);
} rules_v4 SEC(".maps");

/* IPv4 DXR (fpmd_maps.h). Set by the loader: dxr_dir and dxr_val get
 * their full size and dxr_rng its chunks only with that algorithm. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_DXR_DIR);
	__type(key, __u32);
	__type(value, __u64);
} dxr_dir SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_DXR_VAL_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} dxr_val SEC(".maps");

/* A chunk of ranges is one element of FPMD_DXR_CHUNK_RANGES ranges: one
 * lookup gives the whole chunk, and each step of the search is a plain
 * bounded read, not a map lookup of its own (key spilled to the stack,
 * bounds check, multiply). By size: a type would give the 256 KiB
 * element a BTF type no one needs. */
struct dxr_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FPMD_DXR_CHUNK_RANGES * sizeof(__u32));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct dxr_chunk);
} dxr_rng SEC(".maps");

/* Range i of a chunk (the mask keeps the verifier's bound; i is always
 * inside). */
static __always_inline __u32 dxr_range(const __u32 *r, __u32 i)
{
	return r[i & (FPMD_DXR_CHUNK_RANGES - 1)];
}

/* Range i of a block from word base, as a long range: short ranges (two
 * per word) are widened, start << 16 | value index. s is a constant. */
static __always_inline __u32 dxr_at(const __u32 *r, __u32 base, __u32 i,
				    const int s)
{
	__u32 w;

	if (!s)
		return dxr_range(r, base + i);
	w = dxr_range(r, base + (i >> 1)) >> ((i & 1) << 4);
	return (w & 0xff00) << 16 | (w & 0xff);
}

/*
 * The value index of the range holding key among the n >= 2 ranges from
 * word base (never across a chunk), s: short ranges (a constant, so each
 * format gets its own unrolled search): the last range whose start <= key, by
 * descending powers of two, from the largest below n: one step for 2
 * ranges, five for ~27 (a full table's mean), eight for 256. Branch-free
 * steps (0/1 from sign bits); the only jumps skip the steps of powers
 * >= n, so the verifier walks 17 paths, not 2^16.
 */
static __always_inline __u32 dxr_find(__u32 base, __u32 n, __u32 key,
					const int s)
{
	__u32 c = base >> 16, lo = 0, zero = 0;
	void *chunk = bpf_map_lookup_elem(&dxr_rng, &c);
	const __u32 *r;

	if (!chunk)
		return 0;
	r = bpf_map_lookup_elem(chunk, &zero);
	if (!r)
		return 0;
	base &= 0xffff;
#pragma unroll
	for (int b = 15; b >= 0; b--) {
		__u32 st = 1u << b, i, ok, le;

		if (st >= n)
			continue; /* i >= n: the step could not move */
		i = lo + st;
		ok = (i - n) >> 31;	   /* i < n (both < 2^31) */
		i *= ok;		   /* else read range 0, unused */
		le = ((key - (dxr_at(r, base, i, s) >> 16)) >> 31) ^ 1;
		lo += st * (ok & le);	   /* start <= key: go right */
	}
	return dxr_at(r, base, lo, s) & 0xffff;
}

/* addr in network order. */
static __always_inline __u32 dxr_lookup(__u32 addr)
{
	__u32 a = bpf_ntohl(addr), j = a >> 16, vi;
	__u64 *d = bpf_map_lookup_elem(&dxr_dir, &j), e;

	if (!d)
		return 0;
	e = *d; /* one load: the entry and its ranges belong together */
	if (e & FPMD_DXR_U)
		vi = e & 0xffff;
	else if (e & FPMD_DXR_S)
		vi = dxr_find((__u32)e, (e >> 32) & FPMD_DXR_N_MASK, a & 0xffff,
			      1);
	else
		vi = dxr_find((__u32)e, (e >> 32) & FPMD_DXR_N_MASK, a & 0xffff,
			      0);
	j = vi >> 1;
	d = bpf_map_lookup_elem(&dxr_val, &j);
	return d ? (__u32)(*d >> (32 * (vi & 1))) : 0;
}

/* A chunk of slots_v6; fpmd creates them and fills the outer map. Sizes,
 * not types: clang leaves a struct reached only through the outer map's
 * pointer a forward declaration in BTF. */
struct slots_v6_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FPMD_V6_CHUNK_SLOTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fpmd_v6_slot));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FPMD_V6_OUTER(FPMD_V6_SLOTS_DEFAULT));
	__type(key, __u32);
	__array(values, struct slots_v6_chunk);
} slots_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpmd_v6_lens);
} lens_v6 SEC(".maps");

/* addr in network order. */
static __always_inline __u32 dir24_lookup(__u32 addr)
{
	__u32 a = bpf_ntohl(addr), k = a >> 9, part, e;
	void *inner;
	__u32 *w;

	part = FPMD_TBL24_PART_OF(k);
	k -= part * FPMD_TBL24_PART_WORDS;
	inner = bpf_map_lookup_elem(&tbl24, &part);
	if (!inner) {
		/* No part: its whole range has one value. */
		__u64 *d = bpf_map_lookup_elem(&tbl24_dflt, &part);

		return d ? (__u32)*d : 0;
	}
	w = bpf_map_lookup_elem(inner, &k);
	if (!w)
		return 0;
	e = w[(a >> 8) & 1];
	if (FPMD_RT_TYPE(e) != FPMD_RT_TBL8)
		return e;
	part = FPMD_RT_INDEX(e) / FPMD_TBL8_CHUNK_GROUPS;
	inner = bpf_map_lookup_elem(&tbl8, &part);
	if (!inner)
		return 0;
	k = (FPMD_RT_INDEX(e) % FPMD_TBL8_CHUNK_GROUPS) * FPMD_TBL8_GROUP_WORDS +
	    ((a & 0xff) >> 1);
	w = bpf_map_lookup_elem(inner, &k);
	if (!w)
		return 0;
	return w[a & 1];
}

struct tbl24_copy {
	void *inner; /* the part */
	__u32 k0, n, op;
};

static int tbl24_copy_one(__u32 j, void *arg)
{
	struct tbl24_copy *c = arg;
	__u32 k = c->k0 + j;
	__u64 *src, *dst;

	src = bpf_map_lookup_elem(&tbl24_stage, &j);
	if (!src)
		return 1;
	dst = bpf_map_lookup_elem(c->inner, &k);
	if (!dst)
		return 1;
	if (c->op == FPMD_TBL24_READ)
		*src = *dst;
	else
		*dst = *src; /* one 8-byte store */
	c->n--;
	return 0;
}

static int tbl24_scatter_one(__u32 j, void *arg)
{
	struct tbl24_copy *c = arg;
	__u32 i = 2 * j, part, k;
	__u64 *w, *v, *dst;
	void *inner;

	w = bpf_map_lookup_elem(&tbl24_stage, &i);
	i++;
	v = bpf_map_lookup_elem(&tbl24_stage, &i);
	if (!w || !v || *w >= FPMD_TBL24_WORDS)
		return 1;
	part = FPMD_TBL24_PART_OF(*w);
	k = (__u32)*w - part * FPMD_TBL24_PART_WORDS;
	c->n--;
	inner = bpf_map_lookup_elem(&tbl24, &part);
	if (!inner)
		return 0;
	dst = bpf_map_lookup_elem(inner, &k);
	if (dst)
		*dst = *v; /* one 8-byte store */
	return 0;
}

/* fpmd's bulk writer for tbl24 (see fpmd_maps.h); never attached. The
 * words are within one part, looked up once; or (FPMD_TBL24_SCATTER)
 * pairs of a word and its value anywhere in tbl24. */
SEC("xdp")
int fpmd_tbl24_commit(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fpmd_tbl24_commit *cm = data;
	struct tbl24_copy c;
	__u32 n, part;

	if ((void *)(cm + 1) > data_end)
		return XDP_ABORTED;
	n = cm->n;
	if (cm->op == FPMD_TBL24_SCATTER) {
		if (n > FPMD_TBL24_SCATTER_MAX)
			return XDP_ABORTED;
		c.n = n;
		bpf_loop(n, tbl24_scatter_one, &c, 0);
		return c.n ? XDP_ABORTED : XDP_PASS;
	}
	if (cm->first >= FPMD_TBL24_WORDS || n > FPMD_TBL24_STAGE_WORDS)
		return XDP_ABORTED;
	part = FPMD_TBL24_PART_OF(cm->first);
	c.k0 = cm->first - part * FPMD_TBL24_PART_WORDS;
	if (c.k0 + n > FPMD_TBL24_PART_WORDS)
		return XDP_ABORTED;
	c.n = n;
	c.op = cm->op;
	if (c.op == FPMD_TBL24_FILL)
		c.inner = bpf_map_lookup_elem(&tbl24_fill, &part);
	else
		c.inner = bpf_map_lookup_elem(&tbl24, &part);
	if (!c.inner)
		return XDP_ABORTED;
	bpf_loop(n, tbl24_copy_one, &c, 0);
	return c.n ? XDP_ABORTED : XDP_PASS;
}

/* The first len bits of 32-bit word i (network order) of an address. */
static __always_inline __u32 v6_word_mask(__u32 len, int i)
{
	int bits = (int)len - 32 * i;

	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffff;
	return bpf_htonl(0xffffffffu << (32 - bits));
}

/*
 * Probe the table (base, mask) of slots_v6 for (hi, lo, len): 1 << 32 |
 * val when found, 0 if not. A global function, so the verifier checks it
 * once rather than at each of the eight bisection steps.
 */
__noinline __u64 fpmd_v6_find(__u64 hi, __u64 lo, __u32 len, __u32 base,
			      __u32 mask)
{
	__u32 home = (__u32)fpmd_v6_hash(hi, lo, len);

	for (int p = 0; p < FPMD_V6_MAX_PROBE; p++) {
		__u32 k = (home + p) & mask, c, i, tag;
		struct fpmd_v6_slot *s;
		void *chunk;

		c = base + (k >> FPMD_V6_CHUNK_SHIFT);
		i = k & (FPMD_V6_CHUNK_SLOTS - 1);
		chunk = bpf_map_lookup_elem(&slots_v6, &c);
		if (!chunk)
			return 0;
		s = bpf_map_lookup_elem(chunk, &i);
		if (!s)
			return 0;
		tag = s->tag;
		if (tag == FPMD_V6S_EMPTY)
			return 0;
		/* The tag before the key: fpmd writes them the other way. */
		asm volatile("" ::: "memory");
		if ((tag & FPMD_V6S_VALID) && FPMD_V6S_LEN(tag) == len &&
		    s->hi == hi && s->lo == lo)
			return 1ull << 32 | s->val;
	}
	return 0;
}

/* Network order bits in native words: the first len bits of the first
 * (w 0) or second (w 1) 64-bit word, in big endian. */
static __always_inline __u64 v6_mask(__u32 len, int w)
{
	if (w)
		return len >= 128 ? ~0ull :
		       len > 64	  ? bpf_cpu_to_be64(~0ull << (128 - len)) : 0;
	return len >= 64 ? ~0ull : len ? bpf_cpu_to_be64(~0ull << (64 - len)) : 0;
}

static __always_inline __u32 bspl_lookup(const struct in6_addr *dst)
{
	struct fpmd_v6_lens *l;
	__u32 zero = 0, best = 0, lo = 0, hi, s, base, mask;
	__u64 a0, a1, top;

	l = bpf_map_lookup_elem(&lens_v6, &zero);
	if (!l)
		return 0;
	s = l->active & 1;
	base = l->base[s];
	mask = l->mask[s];
	__builtin_memcpy(&a0, dst, 8);
	__builtin_memcpy(&a1, (const __u8 *)dst + 8, 8);

	/* 2000::/3: the direct stage (fpmd_maps.h) first. */
	top = bpf_be64_to_cpu(a0);
	if (top >> 61 == 1) {
		volatile __u64 *w = l->direct[(top >> (64 - FPMD_V6_DIRECT_PLEN)) &
					      (FPMD_V6_DIRECT - 1)];
		__u64 d = w[0], w1, p;
		__u32 n = (__u32)(d >> 32) & 0xff, olen;

		if (n & FPMD_V6_DIRECT_ONE) {
			olen = (__u32)(d >> 40) & 0xff;
			w1 = w[1];
			/* w1 goes with d only if w0 did not change. */
			if (w[0] == d && olen > FPMD_V6_DIRECT_PLEN && olen <= 64) {
				p = (d >> 48) << 32 | w1 >> 32;
				if (!((top ^ p) & (~0ull << (64 - olen)) &
				      FPMD_V6_DIRECT_BITS45))
					return (__u32)w1;
				return (__u32)d;
			}
		} else if (n) {
#pragma unroll
			for (int i = 0; i < FPMD_V6_DIRECT_LENS; i++) {
				__u32 len = (__u32)(d >> (40 + 8 * i)) & 0xff;
				__u64 e;

				if (i + 1 >= n)
					break;
				e = fpmd_v6_find(a0 & v6_mask(len, 0),
						 a1 & v6_mask(len, 1), len,
						 base, mask);
				if (e)
					return (__u32)e;
			}
			return (__u32)d;
		}
	}

	hi = l->n[s];
	for (int i = 0; i < FPMD_V6_PROBES; i++) {
		__u32 mid, len;
		__u64 e;

		if (lo >= hi)
			break;
		mid = (lo + hi) >> 1;
		if (mid >= FPMD_V6_LENS)
			break;
		len = l->len[s][mid];
		e = fpmd_v6_find(a0 & v6_mask(len, 0), a1 & v6_mask(len, 1),
				 len, base, mask);
		if (e) {
			if ((__u32)e)
				best = (__u32)e;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return best;
}

#endif
