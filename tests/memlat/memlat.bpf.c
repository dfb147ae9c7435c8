// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Dependent loads in a table of a given size, the way a FIB lookup reads
 * its table (tests/memlat/memlat.c). The table is a random cycle through
 * its cache lines: the first word of each line holds the word index of
 * the next line. A frame gives the start line and the number of hops;
 * each hop is one inlined array lookup and one load that depends on the
 * one before. Run with BPF_PROG_TEST_RUN, never attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "memlat.h"

/* One mmapable array (vmalloc, 4 KiB pages); sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} big SEC(".maps");

/* The same table in 16 KiB arrays (kmalloc: the kernel's direct map),
 * reached through an outer map, as tbl24's parts are. */
struct chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ML_CH_WORDS);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct chunk);
} chunks SEC(".maps");

volatile __u32 sink;

static __always_inline int frame(struct xdp_md *ctx, __u32 *start, __u32 *hops)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;

	if (data + ML_OFF_HOPS + 4 > end)
		return -1;
	*start = *(__u32 *)(data + ML_OFF_START);
	*hops = *(__u32 *)(data + ML_OFF_HOPS);
	return 0;
}

SEC("xdp")
int ml_floor(struct xdp_md *ctx)
{
	__u32 w, hops;

	if (frame(ctx, &w, &hops))
		return XDP_ABORTED;
	sink = w * ML_LINE_WORDS + hops;
	return XDP_PASS;
}

SEC("xdp")
int ml_big(struct xdp_md *ctx)
{
	__u32 w, hops;

	if (frame(ctx, &w, &hops))
		return XDP_ABORTED;
	w *= ML_LINE_WORDS;
	for (__u32 k = 0; k < ML_MAX_HOPS && k < hops; k++) {
		__u64 *p = bpf_map_lookup_elem(&big, &w);

		if (!p)
			break;
		w = *p;
	}
	sink = w;
	return XDP_PASS;
}

SEC("xdp")
int ml_chunks(struct xdp_md *ctx)
{
	__u32 w, hops;

	if (frame(ctx, &w, &hops))
		return XDP_ABORTED;
	w *= ML_LINE_WORDS;
	for (__u32 k = 0; k < ML_MAX_HOPS && k < hops; k++) {
		__u32 c = w / ML_CH_WORDS, o = w % ML_CH_WORDS;
		void *inner = bpf_map_lookup_elem(&chunks, &c);
		__u64 *p;

		if (!inner)
			break;
		p = bpf_map_lookup_elem(inner, &o);
		if (!p)
			break;
		w = *p;
	}
	sink = w;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
