// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The live forwarding benchmark's XDP programs (driven by tests/trafficgen.c):
 *
 * gen_xdp runs under BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, so
 * its verdict is carried out for real: XDP_TX sends the frame out of the
 * ingress_ifindex interface, the generator's veth, to the router. Pages
 * come back from the router and the sink carrying their in-place rewrites
 * (MACs, TTL, checksum), so the whole header is written for every frame,
 * with the destination taken in turn from the dsts array.
 *
 * sink_xdp counts the benchmark's UDP frames per ingress interface and drops
 * everything: a veth only receives redirected frames when its peer has XDP
 * (or GRO), and counting in XDP keeps the sink's IP stack out of the result.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TG_HDR_MAX 64
#define TG_UDP_DPORT 9 /* discard */

struct tg_dst {
	__u8 addr[16]; /* network order; IPv4 in the first 4 bytes */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* filled by memcpy, 1M entries */
	__uint(max_entries, 1);		   /* resized by trafficgen */
	__type(key, __u32);
	__type(value, struct tg_dst);
} dsts SEC(".maps");

/* Packets per sink interface (ifindex keys inserted by trafficgen). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} sink_count SEC(".maps");

/* Set by trafficgen before load. */
const volatile __u32 dst_mask; /* dsts entries - 1 (a power of two) */
const volatile __u32 v6;
const volatile __u32 ip_sum;	/* IPv4 header sum without daddr, check 0 */
const volatile __u32 udp_sum;	/* pseudo header + UDP without daddr */

/* eth + IP + UDP, daddr zero. Not const: a const array that is never
 * written would be folded to zeros by the compiler. */
__u8 hdr[TG_HDR_MAX];
__u32 next_dst;

static __always_inline __u16 fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static __always_inline __u64 sum32(__u32 w)
{
	return (w & 0xffff) + (w >> 16);
}

SEC("xdp")
int gen_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 idx = next_dst++ & dst_mask;
	struct tg_dst *d = bpf_map_lookup_elem(&dsts, &idx);
	__u64 dsum;
	__u16 c;

	if (!d)
		return XDP_ABORTED;
	if (v6) {
		struct ipv6hdr *ip6 = data + ETH_HLEN;
		struct udphdr *udp = (void *)(ip6 + 1);
		const __u32 *a = (const __u32 *)d->addr;

		if ((void *)(udp + 1) > data_end)
			return XDP_ABORTED;
		__builtin_memcpy(data, hdr, 62);
		__builtin_memcpy(&ip6->daddr, d->addr, 16);
		dsum = sum32(a[0]) + sum32(a[1]) + sum32(a[2]) + sum32(a[3]);
		c = ~fold(udp_sum + dsum);
		udp->check = c ? c : 0xffff;
		return XDP_TX;
	} else {
		struct iphdr *ip = data + ETH_HLEN;
		struct udphdr *udp = (void *)(ip + 1);
		__u32 a = *(const __u32 *)d->addr;

		if ((void *)(udp + 1) > data_end)
			return XDP_ABORTED;
		__builtin_memcpy(data, hdr, 42);
		ip->daddr = a;
		dsum = sum32(a);
		ip->check = ~fold(ip_sum + dsum);
		c = ~fold(udp_sum + dsum);
		udp->check = c ? c : 0xffff;
		return XDP_TX;
	}
}

SEC("xdp")
int sink_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 key = ctx->ingress_ifindex;
	struct udphdr *udp;
	__u64 *n;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_UDP)
			return XDP_DROP;
		udp = (void *)(ip + 1);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end ||
		    ip6->nexthdr != IPPROTO_UDP)
			return XDP_DROP;
		udp = (void *)(ip6 + 1);
	} else {
		return XDP_DROP;
	}
	if ((void *)(udp + 1) > data_end ||
	    udp->dest != bpf_htons(TG_UDP_DPORT))
		return XDP_DROP;
	n = bpf_map_lookup_elem(&sink_count, &key);
	if (n)
		(*n)++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
