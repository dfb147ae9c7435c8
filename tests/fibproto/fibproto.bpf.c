// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Lookup programs of the compact-FIB prototype (doc/fib-compact.md). Each run looks up FP_BATCH destinations of the
 * next block of dsts and adds up the results; with verify set it stores
 * each result in out instead. Run with BPF_PROG_TEST_RUN, never attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "fibproto.h"

#define BIG(name, vt)                                                   \
	struct {                                                        \
		__uint(type, BPF_MAP_TYPE_ARRAY);                       \
		__uint(map_flags, BPF_F_MMAPABLE);                      \
		__uint(max_entries, 1);                                 \
		__type(key, __u32);                                     \
		__type(value, vt);                                      \
	} name SEC(".maps")

struct wchunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_CH_WORDS);
	__type(key, __u32);
	__type(value, __u64);
};

struct nchunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_NCH_NODES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fp_node));
};

#define CH(name, inner)                                                 \
	struct {                                                        \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);               \
		__uint(max_entries, 1);                                 \
		__type(key, __u32);                                     \
		__array(values, struct inner);                          \
	} name SEC(".maps")

BIG(dsts, struct fp_dst_blk);
BIG(out, __u32);
BIG(vals, __u64);  /* value index -> route value */
BIG(t24, __u64);
BIG(t8, __u64);
CH(t24_ch, wchunk);
CH(t8_ch, wchunk);
BIG(pd, __u64);
BIG(pn, struct fp_node);
BIG(pl, __u64);
CH(pd_ch, wchunk);
CH(pn_ch, nchunk);
CH(pl_ch, wchunk);
BIG(xd, __u64);
BIG(xr, __u64);
CH(xd_ch, wchunk);
CH(xr_ch, wchunk);

/* Set by the harness. dep: each lookup's address depends on the result
 * of the one before (zero is 0, unknown to the compiler), so lookups
 * cannot overlap in the CPU: latency, as one packet per run sees it. */
__u32 nblk, verify, dep, zero;
/* Lookups per run: FP_BATCH, or 1 for one lookup per BPF_PROG_TEST_RUN
 * call (as bench_lookup sends one packet per call). */
__u32 batch = FP_BATCH;
__u32 pos;
__u64 sink;

static __always_inline __u64 rd(int ch, void *big, void *outer, __u32 i)
{
	__u64 *p;

	if (ch) {
		__u32 c = i >> FP_CH_SHIFT, k = i & (FP_CH_WORDS - 1);
		void *in = bpf_map_lookup_elem(outer, &c);

		if (!in)
			return 0;
		p = bpf_map_lookup_elem(in, &k);
	} else {
		p = bpf_map_lookup_elem(big, &i);
	}
	return p ? *p : 0;
}

static __always_inline struct fp_node *rd_node(int ch, __u32 i)
{
	if (ch) {
		__u32 c = i >> FP_NCH_SHIFT, k = i & (FP_NCH_NODES - 1);
		void *in = bpf_map_lookup_elem(&pn_ch, &c);

		return in ? bpf_map_lookup_elem(in, &k) : 0;
	}
	return bpf_map_lookup_elem(&pn, &i);
}

static __always_inline __u32 val_of(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&vals, &idx);

	return v ? (__u32)*v : 0;
}

/* No popcount instruction in BPF. */
static __always_inline __u64 popcnt64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (x * 0x0101010101010101ull) >> 56;
}

static __always_inline __u32 d248_lookup(int ch, __u32 a)
{
	__u32 e = rd(ch, &t24, &t24_ch, a >> 9) >> (32 * ((a >> 8) & 1));

	if (e & FP_T8)
		e = rd(ch, &t8, &t8_ch,
		       (e & ~FP_T8) * 128 + ((a & 0xff) >> 1)) >>
		    (32 * (a & 1));
	return e;
}

static __always_inline __u32 pop_lookup(int ch, __u32 a)
{
	__u32 d = rd(ch, &pd, &pd_ch, a >> (32 - FP_POP_S + 1)) >>
		  (32 * ((a >> (32 - FP_POP_S)) & 1));
	__u32 idx = d, li;
	struct fp_node *n;
	__u64 m;
	int v;

	if (d & FP_LEAF)
		return val_of(d & 0xffff);
	for (int lvl = 0; lvl < 3; lvl++) {
		n = rd_node(ch, idx);
		if (!n)
			return 0;
		v = lvl == 0 ? (a >> 8) & 63 : lvl == 1 ? (a >> 2) & 63 : a & 3;
		m = ~0ull >> (63 - v);
		if ((n->vec >> v) & 1) {
			idx = n->base1 + popcnt64(n->vec & m) - 1;
			continue;
		}
		li = n->base0 + popcnt64(n->lvec & m) - 1;
		return val_of((rd(ch, &pl, &pl_ch, li >> 2) >>
			       (16 * (li & 3))) & 0xffff);
	}
	return 0;
}

static __always_inline __u32 dxr_range(int ch, __u32 j)
{
	return rd(ch, &xr, &xr_ch, j >> 1) >> (32 * (j & 1));
}

static __always_inline __u32 dxr_lookup(int ch, __u32 a)
{
	__u64 d = rd(ch, &xd, &xd_ch, a >> (32 - FP_DXR_BITS));
	__u32 key = a & ((1u << (32 - FP_DXR_BITS)) - 1), lo = 0, hi, base;

	if (d & FP_DXR_U)
		return val_of(d & 0xffff);
	base = (__u32)d;
	hi = (d >> 32) & 0x7fffffff;
	for (int i = 0; i < 17; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = (lo + hi) >> 1;
		if ((dxr_range(ch, base + mid) >> 16) <= key)
			lo = mid;
		else
			hi = mid;
	}
	return val_of(dxr_range(ch, base + lo) & 0xffff);
}

struct run {
	struct fp_dst_blk *b;
	__u32 o, prev;
	__u64 sum;
};

#define PROG(name, expr)                                                \
	static int name##_one(__u32 i, void *arg)                       \
	{                                                               \
		struct run *r = arg;                                    \
		__u32 a, res, k;                                        \
                                                                        \
		if (i >= FP_BATCH)                                      \
			return 1;                                       \
		a = r->b->d[i];                                         \
		if (dep)                                                \
			a ^= r->prev & zero;                            \
		res = expr;                                             \
		r->prev = res;                                          \
		if (verify) {                                           \
			__u64 *o;                                       \
			k = r->o + i;                                   \
			o = bpf_map_lookup_elem(&out, &k);              \
			if (o)                                          \
				*(__u32 *)o = res;                      \
		}                                                       \
		r->sum += res;                                          \
		return 0;                                               \
	}                                                               \
	SEC("xdp") int name(struct xdp_md *ctx)                         \
	{                                                               \
		struct run r = { 0 };                                   \
		__u32 p = pos;                                          \
                                                                        \
		if (p >= nblk)                                          \
			p = 0;                                          \
		pos = p + 1;                                            \
		r.b = bpf_map_lookup_elem(&dsts, &p);                   \
		if (!r.b)                                               \
			return XDP_ABORTED;                             \
		r.o = p * FP_BATCH;                                     \
		bpf_loop(batch, name##_one, &r, 0);                     \
		sink += r.sum;                                          \
		return XDP_DROP;                                        \
	}

PROG(fp_null, a)
PROG(fp_d248, d248_lookup(0, a))
PROG(fp_d248_ch, d248_lookup(1, a))
PROG(fp_pop, pop_lookup(0, a))
PROG(fp_pop_ch, pop_lookup(1, a))
PROG(fp_dxr, dxr_lookup(0, a))
PROG(fp_dxr_ch, dxr_lookup(1, a))

char LICENSE[] SEC("license") = "GPL";
