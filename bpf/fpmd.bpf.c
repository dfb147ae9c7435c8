// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd's XDP router: parse, check, look the destination up in the LPM
 * tries, pick a nexthop (ECMP by flow hash), rewrite and redirect. Anything
 * it cannot finish exactly as the kernel would goes up with XDP_PASS, and
 * every packet moves one counter saying why.
 *
 * fpmd_tc runs the same pipeline at tc ingress on an skb, for the container
 * paths XDP cannot finish (doc/fast-path.md, "The tc program").
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>

#include "fpmd_maps.h"
#ifndef FPMD_FIB_REF
#include "fpmd_fib.h"
#endif

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif
#define IPV6_NEXTHDR_HOP 0
#define IPV6_NEXTHDR_FRAGMENT 44
#define IP_MF 0x2000
#define FPMD_ETH_MIN_MTU 68 /* ETH_MIN_MTU */
#define IP_OFFSET 0x1fff

/*
 * FPMD_FIB_REF builds the benchmark reference (bpf/fpmd_ref.bpf.o): the
 * same program with the route lookup and nexthop resolution done by the
 * kernel's bpf_fib_lookup() instead of fpmd's maps. Only lookup_v4() and
 * lookup_v6() differ; parsing, checks, rewrite and counters are shared.
 */
#ifdef FPMD_FIB_REF
#define AF_INET 2
#define AF_INET6 10
/* fpmd's own lookup helpers (resolve(), rpf_ok(), ...) go unused. */
#pragma clang diagnostic ignored "-Wunused-function"
#endif

/* Set by fpmd before load (enum fpmd_fib4_algo / fpmd_fib6_algo). */
const volatile __u32 fib4_algo = FPMD_FIB4_LPM;
const volatile __u32 fib6_algo = FPMD_FIB6_LPM;

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FPMD_MAX_ROUTES_V4);
	__type(key, struct fpmd_lpm_v4);
	__type(value, struct fpmd_route_val);
} routes_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FPMD_MAX_ROUTES_V6);
	__type(key, struct fpmd_lpm_v6);
	__type(value, struct fpmd_route_val);
} routes_v6 SEC(".maps");

/* Chunks of nexthops and nh_groups (fpmd_maps.h). Sizes, not types:
 * clang leaves a struct reached only through the outer map's pointer a
 * forward declaration in BTF. */
struct nexthops_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << FPMD_NH_CHUNK_SHIFT);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fpmd_nexthop));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries,
	       FPMD_CHUNKS_FOR(FPMD_MAX_NEXTHOPS, FPMD_NH_CHUNK_SHIFT));
	__type(key, __u32);
	__array(values, struct nexthops_chunk);
} nexthops SEC(".maps");

struct nh_groups_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << FPMD_GROUP_CHUNK_SHIFT);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fpmd_nh_group));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries,
	       FPMD_CHUNKS_FOR(FPMD_MAX_GROUPS, FPMD_GROUP_CHUNK_SHIFT));
	__type(key, __u32);
	__array(values, struct nh_groups_chunk);
} nh_groups SEC(".maps");

static __always_inline struct fpmd_nexthop *nexthop_at(__u32 idx)
{
	__u32 c = idx >> FPMD_NH_CHUNK_SHIFT,
	      i = idx & ((1u << FPMD_NH_CHUNK_SHIFT) - 1);
	void *chunk = bpf_map_lookup_elem(&nexthops, &c);

	return chunk ? bpf_map_lookup_elem(chunk, &i) : NULL;
}

static __always_inline struct fpmd_nh_group *group_at(__u32 idx)
{
	__u32 c = idx >> FPMD_GROUP_CHUNK_SHIFT,
	      i = idx & ((1u << FPMD_GROUP_CHUNK_SHIFT) - 1);
	void *chunk = bpf_map_lookup_elem(&nh_groups, &c);

	return chunk ? bpf_map_lookup_elem(chunk, &i) : NULL;
}

/*
 * Neighbors and own addresses cost memory per entry (NO_PREALLOC): a
 * preallocated hash holds max_entries elements from the start (6 MiB for
 * 65536 IPv6 neighbors). Lookups are the same code; only updates
 * allocate. The bucket array still follows max_entries (16 bytes each).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FPMD_MAX_NEIGH);
	__type(key, struct fpmd_neigh_v4_key);
	__type(value, struct fpmd_neigh_val);
} neigh_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FPMD_MAX_NEIGH);
	__type(key, struct fpmd_neigh_v6_key);
	__type(value, struct fpmd_neigh_val);
} neigh_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FPMD_MAX_LOCAL_V4);
	__type(key, __u32);
	__type(value, struct fpmd_local_v4_val);
} local_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpmd_local_filter);
} local_v4_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, FPMD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} tx_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FPMD_MAX_IFACES);
	__type(key, __u32); /* ifindex */
	__type(value, struct fpmd_iface);
} ifaces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FPMD_IFINDEX_DIRECT);
	__type(key, __u32); /* ifindex */
	__type(value, struct fpmd_iface);
} ifaces_direct SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FPMD_MAX_STATS);
	__type(key, __u32);
	__type(value, struct fpmd_stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpmd_meta);
} meta SEC(".maps");

/* An interface's entry: the array copy when there is one, else ifaces. */
static __always_inline struct fpmd_iface *iface_get(__u32 ifindex)
{
	struct fpmd_iface *i;

	if (ifindex < FPMD_IFINDEX_DIRECT) {
		i = bpf_map_lookup_elem(&ifaces_direct, &ifindex);
		if (i && (i->flags & FPMD_IF_F_PRESENT))
			return i;
	}
	return bpf_map_lookup_elem(&ifaces, &ifindex);
}

static __always_inline void count_n(__u32 slot, __u32 reason, __u32 packets,
				    __u64 bytes)
{
	__u32 key = FPMD_STAT_INDEX(slot, reason);
	struct fpmd_stat *s = bpf_map_lookup_elem(&stats, &key);

	if (s) {
		s->packets += packets;
		s->bytes += bytes;
	}
}

static __always_inline void count(__u32 slot, __u32 reason, __u64 bytes)
{
	count_n(slot, reason, 1, bytes);
}

/*
 * One pipeline, two contexts: fpmd_xdp runs it on a struct xdp_md,
 * fpmd_tc on a struct __sk_buff. The functions below take the context as
 * void * plus "tc", a constant at every call; all are inlined, so the
 * other context's branch folds away: XDP pays nothing for the skb code.
 */
static __always_inline void *ctx_data(void *ctx, int tc)
{
	if (tc)
		return (void *)(long)((struct __sk_buff *)ctx)->data;
	return (void *)(long)((struct xdp_md *)ctx)->data;
}

/* On an skb the end of the linear part, not of the frame (ctx_len). */
static __always_inline void *ctx_data_end(void *ctx, int tc)
{
	if (tc)
		return (void *)(long)((struct __sk_buff *)ctx)->data_end;
	return (void *)(long)((struct xdp_md *)ctx)->data_end;
}

/*
 * The whole frame from the Ethernet header: skb->len at tc ingress, and in
 * XDP the linear part plus the fragments of a multi-buffer frame (a jumbo
 * frame larger than a page: the program is xdp.frags), where data_end
 * ends only the linear part.
 */
static __always_inline __u32 ctx_len(void *ctx, int tc)
{
	if (tc)
		return ((struct __sk_buff *)ctx)->len;
	return bpf_xdp_get_buff_len(ctx);
}

/* Does the frame hold len bytes from the Ethernet header? In XDP the
 * linear part answers for most frames, without a helper call. */
static __always_inline int ctx_holds(void *ctx, int tc, __u32 len)
{
	if (!tc && len <= (__u32)(ctx_data_end(ctx, 0) - ctx_data(ctx, 0)))
		return 1;
	return len <= ctx_len(ctx, tc);
}

/* The receiving interface: at tc ingress skb->dev is the device the frame
 * arrived on (skb_iif, ingress_ifindex, is the same there). */
static __always_inline __u32 ctx_ifindex(void *ctx, int tc)
{
	if (tc)
		return ((struct __sk_buff *)ctx)->ifindex;
	return ((struct xdp_md *)ctx)->ingress_ifindex;
}

/*
 * Packets in the frame: a GSO skb (GRO merged the frames XDP handed over,
 * or a container's TSO) counts as its segments, as they were or will be
 * on the wire; its bytes are its length (headers once).
 */
static __always_inline __u32 ctx_segs(void *ctx, int tc)
{
	__u32 segs;

	if (!tc)
		return 1;
	segs = ((struct __sk_buff *)ctx)->gso_segs;
	return segs ? segs : 1;
}

#define ACT_PASS(tc) ((tc) ? TC_ACT_OK : XDP_PASS)
#define ACT_DROP(tc) ((tc) ? TC_ACT_SHOT : XDP_DROP)

static __always_inline int verdict(void *ctx, int tc, __u32 slot, __u32 reason,
				   int action)
{
	count_n(slot, reason, ctx_segs(ctx, tc), ctx_len(ctx, tc));
	return action;
}

static __always_inline __u32 mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x9e3779b1;
	return h ^ (h >> 15);
}

/* Sum of the 20-byte IPv4 header as 16-bit words; 0xffff when valid. */
static __always_inline __u16 ipv4_csum_fold(const struct iphdr *iph)
{
	const __u16 *w = (const __u16 *)iph;
	__u32 sum = 0;

#pragma unroll
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* RFC 1624 incremental update for TTL - 1 (as the kernel's ip_decrease_ttl). */
static __always_inline void ipv4_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xffff));
	iph->ttl--;
}

static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return ((const __u16 *)a)[0] == ((const __u16 *)b)[0] &&
	       ((const __u16 *)a)[1] == ((const __u16 *)b)[1] &&
	       ((const __u16 *)a)[2] == ((const __u16 *)b)[2];
}

/* Reverse-path check: does the route back to the source qualify? */
static __always_inline int rpf_ok(__u32 rv, __u32 flags, __u32 ifindex)
{
	__u32 type = FPMD_RT_TYPE(rv), idx = FPMD_RT_INDEX(rv);

	if (type == FPMD_RT_NEXTHOP) {
		struct fpmd_nexthop *nh = nexthop_at(idx);

		if (!nh)
			return 0;
		return !(flags & FPMD_IF_F_RPF_STRICT) || nh->ifindex == ifindex;
	}
	if (type == FPMD_RT_GROUP) {
		struct fpmd_nh_group *g = group_at(idx);

		if (!g || !g->nbuckets)
			return 0;
		if (!(flags & FPMD_IF_F_RPF_STRICT))
			return 1;
		for (int i = 0; i < FPMD_GROUP_BUCKETS; i++) {
			struct fpmd_nexthop *nh;
			__u32 n;

			if (i >= g->nbuckets)
				break;
			n = g->bucket[i];
			nh = nexthop_at(n);
			if (nh && nh->ifindex == ifindex)
				return 1;
		}
		return 0;
	}
	/* Local, blackhole, unreachable: the kernel decides. */
	return 0;
}

/*
 * The kernel's neighbor states follow the packets the kernel sends: each
 * one through a STALE entry moves it to DELAY (neigh_event_send), and
 * garbage collection takes STALE entries unused for gc_stale_time. The
 * packets XDP sends never reach that code, so the fast path stamps the
 * entry it sent by with fpmd's epoch (struct fpmd_meta), and fpmd tells
 * the kernel of the used ones it knows STALE (RTM_NEWNEIGH with NTF_USE:
 * the same neigh_event_send). One write per entry, epoch and CPU.
 */
static __always_inline void mark_used(__u32 *used)
{
	__u32 zero = 0;
	struct fpmd_meta *m = bpf_map_lookup_elem(&meta, &zero);

	if (m && *(volatile __u32 *)used != m->epoch)
		*(volatile __u32 *)used = m->epoch;
}

/* The sequence count of a nexthop or group (FPMD_SEQ_WRITING in
 * fpmd_maps.h): read before and after the fields used. */
static __always_inline __u32 seq_begin(const __u32 *seq)
{
	__u32 s = *(const volatile __u32 *)seq;

	barrier();
	return s;
}

/* Was the entry being rewritten while it was read? */
static __always_inline int seq_torn(const __u32 *seq, __u32 s)
{
	barrier();
	return FPMD_SEQ_WRITING(s) || *(const volatile __u32 *)seq != s;
}

/* Where a routed packet leaves and how it is rewritten: copied out of the
 * nexthop (and neighbor), so that what is sent is one version of them. */
struct egress {
	__u32 ifindex;
	__u32 mtu;
	__u32 oslot; /* egress interface slot, for tx counters */
	__u8 smac[ETH_ALEN];
	__u8 dmac[ETH_ALEN];
#ifdef FPMD_FIB_REF
	struct bpf_fib_lookup fib;
#endif
};

/*
 * Resolve the route value to a nexthop, pick the ECMP member by flow hash,
 * and fill in e, with the destination MAC from the neighbor for connected
 * routes. Returns a reason (FPMD_R_FORWARDED when e is filled in). An
 * entry met in the middle of a rewrite (a few microseconds, rare) sends
 * the packet to the kernel, counted unresolved: never half of each.
 */
static __always_inline int resolve(__u32 rv, __u32 hash, const void *dst,
				   int v6, struct egress *e)
{
	__u32 type = FPMD_RT_TYPE(rv), idx = FPMD_RT_INDEX(rv), seq, flags;
	struct fpmd_nexthop *nh;

	switch (type) {
	case FPMD_RT_NEXTHOP:
		break;
	case FPMD_RT_GROUP: {
		struct fpmd_nh_group *g = group_at(idx);
		__u32 n, b;

		if (!g)
			return FPMD_R_PASS_UNRESOLVED;
		seq = seq_begin(&g->seq);
		n = g->nbuckets;
		if (!n)
			return FPMD_R_PASS_UNRESOLVED;
		b = hash % n;
		if (b >= FPMD_GROUP_BUCKETS)
			return FPMD_R_PASS_UNRESOLVED;
		idx = g->bucket[b];
		if (seq_torn(&g->seq, seq))
			return FPMD_R_PASS_UNRESOLVED;
		break;
	}
	case FPMD_RT_LOCAL:
		return FPMD_R_PASS_LOCAL;
	case FPMD_RT_BLACKHOLE:
		return FPMD_R_DROP_BLACKHOLE;
	case FPMD_RT_UNREACHABLE:
	case FPMD_RT_PROHIBIT:
	case FPMD_RT_KERNEL:
		return FPMD_R_PASS_UNREACHABLE;
	default:
		return FPMD_R_PASS_NO_ROUTE;
	}

	nh = nexthop_at(idx);
	if (!nh)
		return FPMD_R_PASS_UNRESOLVED;
	seq = seq_begin(&nh->seq);
	flags = nh->flags;
	if (!(flags & FPMD_NH_F_VALID) || (flags & FPMD_NH_F_IFDOWN))
		return FPMD_R_PASS_UNRESOLVED;
	e->ifindex = nh->ifindex;
	e->mtu = nh->mtu;
	e->oslot = nh->oslot;
	__builtin_memcpy(e->smac, nh->smac, ETH_ALEN);

	if (flags & FPMD_NH_F_CONNECTED) {
		struct fpmd_neigh_val *n;

		/* Neighbors are hash entries: an update replaces the
		 * element, freed after a grace period. */
		if (v6) {
			struct fpmd_neigh_v6_key k = { .ifindex = e->ifindex };

			__builtin_memcpy(k.addr, dst, 16);
			n = bpf_map_lookup_elem(&neigh_v6, &k);
		} else {
			struct fpmd_neigh_v4_key k = { .ifindex = e->ifindex };

			__builtin_memcpy(k.addr, dst, 4);
			n = bpf_map_lookup_elem(&neigh_v4, &k);
		}
		if (!n || seq_torn(&nh->seq, seq))
			return FPMD_R_PASS_UNRESOLVED;
		mark_used(&n->used);
		__builtin_memcpy(e->dmac, n->mac, ETH_ALEN);
		return FPMD_R_FORWARDED;
	}
	if (!(flags & FPMD_NH_F_RESOLVED))
		return FPMD_R_PASS_UNRESOLVED;
	__builtin_memcpy(e->dmac, nh->dmac, ETH_ALEN);
	if (seq_torn(&nh->seq, seq))
		return FPMD_R_PASS_UNRESOLVED;
	mark_used(&nh->used);
	return FPMD_R_FORWARDED;
}

/*
 * Does the datagram fit the egress? The copy in the nexthop (the
 * interface's MTU, or net.ipv6.conf.X.mtu where smaller; routes with an
 * mtu metric never get here) and the device's MTU as it is now: after
 * "ip link set mtu" the copy is stale until fpmd hears of it, and a frame
 * redirected past the device's MTU is dropped at transmit. bpf_check_mtu()
 * compares l3len + hard_header_len with mtu + hard_header_len, which is the
 * kernel's l3len > mtu (ip_exceeds_mtu, ip6_pkt_too_big).
 */
static __always_inline int mtu_check(void *ctx, int tc, const struct egress *e,
				     __u32 l3len)
{
	__u32 mtu_len = l3len; /* never 0, which would mean the whole frame */
	long ret;

	/*
	 * A GSO skb (a container's TSO, GRO) carries up to 64 KiB in one
	 * datagram; the kernel measures its segments instead
	 * (skb_gso_validate_network_len in ip_exceeds_mtu and
	 * ip6_pkt_too_big), and so does bpf_check_mtu() with
	 * BPF_MTU_CHK_SEGS and *mtu_len 0 (bpf_skb_check_mtu). It measures
	 * against the device's MTU, which it returns in mtu_len: where the
	 * nexthop's copy is smaller (net.ipv6.conf.X.mtu) the kernel decides.
	 * It fails (-EINVAL) on an skb without a transport header, whose
	 * segments it cannot measure: the kernel's too.
	 */
	if (tc && ((struct __sk_buff *)ctx)->gso_size) {
		mtu_len = 0;
		ret = bpf_check_mtu(ctx, e->ifindex, &mtu_len, 0,
				    BPF_MTU_CHK_SEGS);
		if (ret == -19 /* ENODEV */)
			return FPMD_R_PASS_EGRESS;
		if (ret || (l3len > e->mtu && mtu_len > e->mtu))
			return FPMD_R_PASS_MTU;
		return FPMD_R_FORWARDED;
	}
	if (l3len > e->mtu)
		return FPMD_R_PASS_MTU;
	/*
	 * No Ethernet device takes an MTU below 68 (ETH_MIN_MTU, its
	 * min_mtu), nor does IPv4 stay on one (inetdev_event): a datagram
	 * that short fits the device whatever its MTU is now, and asking
	 * costs ~20 ns. An egress that vanished has left tx_ports already
	 * (the devmap drops it at unregister): bpf_redirect_map() fails and
	 * the packet goes up (pass-egress). Not for tc, which has no devmap.
	 */
	if (!tc && l3len <= FPMD_ETH_MIN_MTU)
		return FPMD_R_FORWARDED;
	/* With *mtu_len set, bpf_xdp_check_mtu measures l3len, never the
	 * linear part it would take for 0 (short of a multi-buffer frame). */
	ret = bpf_check_mtu(ctx, e->ifindex, &mtu_len, 0, 0);
	if (ret < 0) /* no such device (any more) */
		return FPMD_R_PASS_EGRESS;
	return ret ? FPMD_R_PASS_MTU : FPMD_R_FORWARDED;
}

/*
 * TTL / hop limit - 1 and the MACs, on a frame already cut to length
 * (pointers found again from ctx). An skb may arrive with CHECKSUM_COMPLETE
 * (skb->csum, the sum of everything past the Ethernet header): IPv4 keeps
 * it valid by itself, since TTL and header checksum move by opposite
 * amounts and the sum stays the same; the IPv6 hop limit has no checksum
 * of its own, so skb->csum takes the difference (bpf_csum_update() does
 * nothing for other skbs). The Ethernet header is outside skb->csum.
 */
static __always_inline int rewrite(void *ctx, int tc, const struct egress *e,
				   int v6)
{
	struct ethhdr *eth = ctx_data(ctx, tc);
	void *data_end = ctx_data_end(ctx, tc);

	if (v6) {
		struct ipv6hdr *ip6h = (void *)(eth + 1);
		__u32 *w = (void *)ip6h + 4, old; /* payload_len .. hop_limit */

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		old = *w;
		ip6h->hop_limit--;
		if (tc) {
			__u32 new = *w;

			bpf_csum_update(ctx,
					bpf_csum_diff(&old, 4, &new, 4, 0));
		}
	} else {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			return -1;
		ipv4_decrease_ttl(iph);
	}
	__builtin_memcpy(eth->h_dest, e->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, e->smac, ETH_ALEN);
	return 0;
}

/*
 * The egress takes no XDP redirect (not in tx_ports). When it is a
 * container's veth (FPMD_IF_F_PEER) and fpmd's tc program runs on this
 * ingress, the frame goes up untouched with the handoff marker in front:
 * tc runs the pipeline again and delivers it with bpf_redirect_peer(),
 * counting it once. Untouched, so that without a tc program the kernel
 * still gets the original. Only on this branch: no cost when redirecting.
 */
static __always_inline int handoff(struct xdp_md *ctx, struct fpmd_iface *in,
				   const struct egress *e)
{
	struct fpmd_iface *out;
	__u32 *m;

	if (!(in->flags & FPMD_IF_F_TC))
		goto kernel;
	out = iface_get(e->ifindex);
	if (!out || !(out->flags & FPMD_IF_F_PEER))
		goto kernel;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		goto kernel;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		goto kernel; /* never: adjust_meta made the room */
	*m = FPMD_META_HANDOFF;
	return XDP_PASS;
kernel:
	return verdict(ctx, 0, in->slot, FPMD_R_PASS_EGRESS, XDP_PASS);
}

/*
 * A multi-buffer frame (larger than a page) that stays one after the trim
 * can only leave by a driver that transmits fragments
 * (NETDEV_XDP_ACT_NDO_XMIT_SG, FPMD_IF_F_XMIT_SG): the devmap refuses it
 * at any other (__xdp_enqueue) and the frame would be lost. The kernel
 * sends it instead. Frames within the linear part never look.
 */
static __always_inline int xmit_sg_ok(struct xdp_md *ctx,
				      const struct egress *e, __u64 out_bytes)
{
	struct fpmd_iface *out;

	if (out_bytes <= (__u64)(ctx->data_end - ctx->data))
		return 1;
	out = iface_get(e->ifindex);
	return out && (out->flags & FPMD_IF_F_XMIT_SG);
}

static __always_inline int forward_xdp(struct xdp_md *ctx,
				       struct fpmd_iface *in,
				       const struct egress *e, __u32 l3len,
				       int v6)
{
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	__u64 out_bytes = ETH_HLEN + (__u64)l3len;
	long act;

	/*
	 * One devmap lookup: the helper only records the target (the frame
	 * moves after we return), and says XDP_ABORTED (flags 0) when the
	 * egress is not in tx_ports, before anything is rewritten.
	 */
	act = bpf_redirect_map(&tx_ports, e->ifindex, 0);
	if (act != XDP_REDIRECT)
		return handoff(ctx, in, e);
	if (!xmit_sg_ok(ctx, e, out_bytes))
		return verdict(ctx, 0, in->slot, FPMD_R_PASS_EGRESS, XDP_PASS);

	if (out_bytes < bytes &&
	    bpf_xdp_adjust_tail(ctx, (int)out_bytes - (int)bytes))
		return verdict(ctx, 0, in->slot, FPMD_R_PASS_MALFORMED,
			       XDP_PASS);
	if (rewrite(ctx, 0, e, v6))
		return verdict(ctx, 0, in->slot, FPMD_R_PASS_MALFORMED,
			       XDP_PASS);

	/* rx counts what arrived, tx what leaves (trimmed to out_bytes:
	 * the length checks made bytes >= out_bytes). */
	count(in->slot, FPMD_R_FORWARDED, bytes);
	count(e->oslot, FPMD_R_TX, out_bytes);
	return XDP_REDIRECT;
}

/*
 * From tc ingress: into a container's namespace with bpf_redirect_peer()
 * (the peer's ingress, skipping the backlog) when the egress is a PEER,
 * else out of an egress XDP could redirect to (in tx_ports), with
 * bpf_redirect(). Anything else is the kernel's, as from XDP.
 */
static __always_inline int forward_tc(struct __sk_buff *skb,
				      struct fpmd_iface *in,
				      const struct egress *e, __u32 l3len,
				      int v6)
{
	__u32 bytes = skb->len, out_bytes = ETH_HLEN + l3len;
	__u32 segs = ctx_segs(skb, 1);
	__u32 oif = e->ifindex;
	struct fpmd_iface *out = iface_get(oif);
	int peer = out && (out->flags & FPMD_IF_F_PEER);
	long act;

	if (!peer && !bpf_map_lookup_elem(&tx_ports, &oif))
		return verdict(skb, 1, in->slot, FPMD_R_PASS_EGRESS, TC_ACT_OK);
	/* Keeps skb->csum right (pskb_trim_rcsum); GSO skbs have no padding,
	 * and must not be cut: that would reset their GSO state. */
	if (out_bytes < bytes && bpf_skb_change_tail(skb, out_bytes, 0))
		return verdict(skb, 1, in->slot, FPMD_R_PASS_MALFORMED,
			       TC_ACT_OK);
	if (rewrite(skb, 1, e, v6))
		return verdict(skb, 1, in->slot, FPMD_R_PASS_MALFORMED,
			       TC_ACT_OK);

	act = peer ? bpf_redirect_peer(oif, 0) : bpf_redirect(oif, 0);
	count_n(in->slot, peer ? FPMD_R_FORWARDED_PEER : FPMD_R_FORWARDED_TC,
		segs, bytes);
	count_n(e->oslot, FPMD_R_TX, segs, skb->len);
	return act;
}

/*
 * Egress checks, trim, rewrite and redirect, shared by both families and
 * both contexts. The kernel trims whatever follows the datagram (Ethernet
 * padding, bytes past tot_len / payload_len: ip_rcv_core, ip6_rcv_core)
 * before it forwards, so the frame is cut to ETH_HLEN + l3len first. That
 * invalidates every packet pointer: the headers are found again from ctx.
 */
static __always_inline int forward(void *ctx, int tc, struct fpmd_iface *in,
				   const struct egress *e, __u32 l3len, int v6)
{
	int reason;

	/*
	 * A hairpin: the kernel forwards it and may also send the sender an
	 * ICMP redirect, rate-limited where XDP cannot see. IPv4 may redirect
	 * while send_redirects is on ("all" or the interface: route.c
	 * __mkroute_input), IPv6 always (ip6_forward, no sysctl).
	 */
	if (e->ifindex == ctx_ifindex(ctx, tc) &&
	    (v6 || (in->flags & FPMD_IF_F_REDIRECTS_V4)))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_REDIRECT,
			       ACT_PASS(tc));
	reason = mtu_check(ctx, tc, e, l3len);
	if (reason != FPMD_R_FORWARDED)
		return verdict(ctx, tc, in->slot, reason, ACT_PASS(tc));
	if (tc)
		return forward_tc(ctx, in, e, l3len, v6);
	return forward_xdp(ctx, in, e, l3len, v6);
}

#ifdef FPMD_FIB_REF
/* Map a bpf_fib_lookup() result to a reason and, on success, an egress. */
static __always_inline int fib_egress(int rc, struct egress *e)
{
	struct fpmd_iface *out;

	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		break;
	case BPF_FIB_LKUP_RET_BLACKHOLE:
		return FPMD_R_DROP_BLACKHOLE;
	case BPF_FIB_LKUP_RET_UNREACHABLE:
	case BPF_FIB_LKUP_RET_PROHIBIT:
		return FPMD_R_PASS_UNREACHABLE;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return FPMD_R_PASS_UNRESOLVED;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return FPMD_R_PASS_MTU;
	default: /* NOT_FWDED (no route, or local), FWD_DISABLED, ... */
		return FPMD_R_PASS_NO_ROUTE;
	}
	/* fpmd keeps the egress slot in the nexthop; the FIB has no slot. */
	out = iface_get(e->fib.ifindex);
	if (!out)
		return FPMD_R_PASS_EGRESS;
	e->ifindex = e->fib.ifindex;
	e->mtu = e->fib.mtu_result;
	e->oslot = out->slot;
	__builtin_memcpy(e->smac, e->fib.smac, ETH_ALEN);
	__builtin_memcpy(e->dmac, e->fib.dmac, ETH_ALEN);
	return FPMD_R_FORWARDED;
}
#endif

/* Is a (network order) one of our own addresses? See local_v4_filter. */
static __always_inline int ipv4_is_local(__u32 a)
{
	struct fpmd_local_filter *f;
	__u32 zero = 0;

	f = bpf_map_lookup_elem(&local_v4_filter, &zero);
	if (f && !fpmd_local_filter_may_have(f, a))
		return 0;
	return bpf_map_lookup_elem(&local_v4, &a) != 0;
}

static __always_inline int ipv4_martian(__u32 a)
{
	__u32 h = bpf_ntohl(a);

	return (h >> 24) == 0 || (h >> 24) == 127;
}

/*
 * Route the packet: LPM lookup, rp_filter, ECMP pick, nexthop. Returns a
 * reason; FPMD_R_FORWARDED when e is filled in.
 */
#ifndef FPMD_FIB_REF
/* The route value for an address (network order); 0 when none. */
static __always_inline __u32 route_v4(__u32 addr)
{
	struct fpmd_lpm_v4 key = { .prefixlen = 32 };
	struct fpmd_route_val *rt;

	if (fib4_algo == FPMD_FIB4_DIR24)
		return dir24_lookup(addr);
	if (fib4_algo == FPMD_FIB4_DXR)
		return dxr_lookup(addr);
	__builtin_memcpy(key.addr, &addr, 4);
	rt = bpf_map_lookup_elem(&routes_v4, &key);
	return rt ? rt->val : 0;
}

static __always_inline int lookup_v4(void *ctx, __u32 ifindex,
				     struct fpmd_iface *in, struct iphdr *iph,
				     __u32 tot_len, void *data_end,
				     struct egress *e)
{
	__u32 saddr = iph->saddr, daddr = iph->daddr, hash;
	__u32 rv;

	rv = route_v4(daddr);
	if (FPMD_RT_TYPE(rv) == FPMD_RT_NONE)
		return FPMD_R_PASS_NO_ROUTE;

	if (in->flags & (FPMD_IF_F_RPF_STRICT | FPMD_IF_F_RPF_LOOSE)) {
		__u32 srv = route_v4(saddr);

		if (!rpf_ok(srv, in->flags, ifindex))
			return FPMD_R_PASS_RPF;
	} else if (in->flags & FPMD_IF_F_SRC_CHECK) {
		/*
		 * fib_validate_source() without rp_filter, once user space has
		 * added a local route: a source whose route is local (or
		 * broadcast, ...: kept on the kernel path here) is a martian.
		 * No route, blackhole, unreachable and prohibit fail the lookup
		 * itself and are accepted ("last_resort").
		 */
		__u32 st = FPMD_RT_TYPE(route_v4(saddr));

		if (st == FPMD_RT_LOCAL || st == FPMD_RT_KERNEL)
			return FPMD_R_PASS_MARTIAN;
	}

	/* The flow hash picks a group's member: nothing else uses it. */
	hash = 0;
	if (FPMD_RT_TYPE(rv) == FPMD_RT_GROUP) {
		hash = mix(mix(mix(0, saddr), daddr), iph->protocol);
		if (!(iph->frag_off & bpf_htons(IP_MF | IP_OFFSET)) &&
		    (iph->protocol == IPPROTO_TCP ||
		     iph->protocol == IPPROTO_UDP ||
		     iph->protocol == IPPROTO_SCTP)) {
			__u32 *ports = (void *)(iph + 1);

			if ((void *)(ports + 1) <= data_end)
				hash = mix(hash, *ports);
		}
	}

	return resolve(rv, hash, &daddr, 0, e);
}
#else
/* The kernel FIB instead; like xdp_fwd, no rp_filter check. */
static __always_inline int lookup_v4(void *ctx, __u32 ifindex,
				     struct fpmd_iface *in, struct iphdr *iph,
				     __u32 tot_len, void *data_end,
				     struct egress *e)
{
	struct bpf_fib_lookup *fib = &e->fib;

	__builtin_memset(fib, 0, sizeof(*fib));
	fib->family = AF_INET;
	fib->tos = iph->tos;
	fib->l4_protocol = iph->protocol;
	fib->tot_len = tot_len;
	fib->ipv4_src = iph->saddr;
	fib->ipv4_dst = iph->daddr;
	fib->ifindex = ifindex;
	if (!(iph->frag_off & bpf_htons(IP_MF | IP_OFFSET)) &&
	    (iph->protocol == IPPROTO_TCP || iph->protocol == IPPROTO_UDP ||
	     iph->protocol == IPPROTO_SCTP)) {
		__be16 *ports = (void *)(iph + 1);

		if ((void *)(ports + 2) <= data_end) {
			fib->sport = ports[0];
			fib->dport = ports[1];
		}
	}
	return fib_egress(bpf_fib_lookup(ctx, fib, sizeof(*fib), 0), e);
}
#endif

static __always_inline int handle_ipv4(void *ctx, int tc, struct ethhdr *eth,
				       struct fpmd_iface *in)
{
	void *data_end = ctx_data_end(ctx, tc);
	struct iphdr *iph = (void *)(eth + 1);
	struct egress e;
	__u32 saddr, daddr, tot_len, sh, dh;
	int reason;

	if ((void *)(iph + 1) > data_end)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	if (iph->version != 4 || iph->ihl < 5)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	tot_len = bpf_ntohs(iph->tot_len);
	if (tot_len < (__u32)iph->ihl * 4 ||
	    !ctx_holds(ctx, tc, ETH_HLEN + tot_len))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	if (iph->ihl != 5)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_OPTIONS,
			       ACT_PASS(tc));
	if (ipv4_csum_fold(iph) != 0xffff)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_BAD_CSUM,
			       ACT_PASS(tc));
	if (!(in->flags & FPMD_IF_F_FWD_V4))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_DISABLED,
			       ACT_PASS(tc));
	if (in->flags & FPMD_IF_F_KERNEL_V4)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_POLICY,
			       ACT_PASS(tc));

	saddr = iph->saddr;
	daddr = iph->daddr;
	sh = bpf_ntohl(saddr);
	dh = bpf_ntohl(daddr);
	if ((dh >> 28) == 0xe || dh == 0xffffffff)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MCAST,
			       ACT_PASS(tc));
	if (ipv4_martian(saddr) || ipv4_martian(daddr) || (sh >> 28) == 0xe ||
	    sh == 0xffffffff)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MARTIAN,
			       ACT_PASS(tc));
	if ((sh >> 16) == 0xa9fe || (dh >> 16) == 0xa9fe)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_LINKLOCAL,
			       ACT_PASS(tc));
	/* Our own address as source: a martian to the kernel. */
	if (ipv4_is_local(saddr))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MARTIAN,
			       ACT_PASS(tc));
	if (iph->ttl <= 1)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_TTL,
			       ACT_PASS(tc));

	reason = lookup_v4(ctx, ctx_ifindex(ctx, tc), in, iph, tot_len,
			   data_end, &e);
	if (reason == FPMD_R_DROP_BLACKHOLE)
		return verdict(ctx, tc, in->slot, reason, ACT_DROP(tc));
	if (reason != FPMD_R_FORWARDED)
		return verdict(ctx, tc, in->slot, reason, ACT_PASS(tc));
	return forward(ctx, tc, in, &e, tot_len, 0);
}

static __always_inline int ipv6_is_martian(const struct in6_addr *a)
{
	__u32 w0 = a->in6_u.u6_addr32[0], w1 = a->in6_u.u6_addr32[1],
	      w2 = a->in6_u.u6_addr32[2], w3 = a->in6_u.u6_addr32[3];

	/* :: and ::1 */
	if (!w0 && !w1 && !w2 && (!w3 || w3 == bpf_htonl(1)))
		return 1;
	/* ::ffff:0:0/96, IPv4-mapped (RFC 4291 2.5.5.2) */
	return !w0 && !w1 && w2 == bpf_htonl(0xffff);
}

#ifndef FPMD_FIB_REF
static __always_inline __u32 route_v6(const struct in6_addr *addr)
{
	struct fpmd_lpm_v6 key = { .prefixlen = 128 };
	struct fpmd_route_val *rt;

	if (fib6_algo == FPMD_FIB6_BSPL)
		return bspl_lookup(addr);
	__builtin_memcpy(key.addr, addr, 16);
	rt = bpf_map_lookup_elem(&routes_v6, &key);
	return rt ? rt->val : 0;
}

static __always_inline int lookup_v6(void *ctx, __u32 ifindex,
				     struct fpmd_iface *in,
				     struct ipv6hdr *ip6h, __u32 l3len,
				     void *data_end, struct egress *e)
{
	__u8 nexthdr = ip6h->nexthdr;
	__u32 hash, rv;

	rv = route_v6(&ip6h->daddr);
	if (FPMD_RT_TYPE(rv) == FPMD_RT_NONE)
		return FPMD_R_PASS_NO_ROUTE;

	/* Linux has no rp_filter for IPv6 (only netfilter's rpfilter). */

	/* The flow hash picks a group's member: nothing else uses it, and
	 * over 32 bytes of addresses it costs (issue 16). */
	hash = 0;
	if (FPMD_RT_TYPE(rv) == FPMD_RT_GROUP) {
#pragma unroll
		for (int i = 0; i < 4; i++) {
			hash = mix(hash, ip6h->saddr.in6_u.u6_addr32[i]);
			hash = mix(hash, ip6h->daddr.in6_u.u6_addr32[i]);
		}
		hash = mix(hash, nexthdr);
		if (nexthdr == IPPROTO_TCP || nexthdr == IPPROTO_UDP ||
		    nexthdr == IPPROTO_SCTP) {
			__u32 *ports = (void *)(ip6h + 1);

			if ((void *)(ports + 1) <= data_end)
				hash = mix(hash, *ports);
		}
	}

	return resolve(rv, hash, &ip6h->daddr, 1, e);
}
#else
static __always_inline int lookup_v6(void *ctx, __u32 ifindex,
				     struct fpmd_iface *in,
				     struct ipv6hdr *ip6h, __u32 l3len,
				     void *data_end, struct egress *e)
{
	struct bpf_fib_lookup *fib = &e->fib;
	__u8 nexthdr = ip6h->nexthdr;

	__builtin_memset(fib, 0, sizeof(*fib));
	fib->family = AF_INET6;
	fib->flowinfo = *(__be32 *)ip6h & bpf_htonl(0x0fffffff);
	fib->l4_protocol = nexthdr;
	fib->tot_len = l3len;
	__builtin_memcpy(fib->ipv6_src, &ip6h->saddr, 16);
	__builtin_memcpy(fib->ipv6_dst, &ip6h->daddr, 16);
	fib->ifindex = ifindex;
	if (nexthdr == IPPROTO_TCP || nexthdr == IPPROTO_UDP ||
	    nexthdr == IPPROTO_SCTP) {
		__be16 *ports = (void *)(ip6h + 1);

		if ((void *)(ports + 2) <= data_end) {
			fib->sport = ports[0];
			fib->dport = ports[1];
		}
	}
	return fib_egress(bpf_fib_lookup(ctx, fib, sizeof(*fib), 0), e);
}
#endif

static __always_inline int handle_ipv6(void *ctx, int tc, struct ethhdr *eth,
				       struct fpmd_iface *in)
{
	void *data_end = ctx_data_end(ctx, tc);
	struct ipv6hdr *ip6h = (void *)(eth + 1);
	struct egress e;
	__u32 l3len;
	__u8 nexthdr;
	int reason;

	if ((void *)(ip6h + 1) > data_end)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	if (ip6h->version != 6)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	/*
	 * payload_len 0 is a jumbogram only with a hop-by-hop header (passed
	 * below); otherwise the kernel takes it at its word and forwards the
	 * bare 40-byte header (ip6_rcv_core), and so do we.
	 */
	l3len = sizeof(*ip6h) + bpf_ntohs(ip6h->payload_len);
	if (!ctx_holds(ctx, tc, ETH_HLEN + l3len))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	nexthdr = ip6h->nexthdr;
	if (nexthdr == IPV6_NEXTHDR_HOP)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_OPTIONS,
			       ACT_PASS(tc));
	if (!(in->flags & FPMD_IF_F_FWD_V6))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_DISABLED,
			       ACT_PASS(tc));
	if (in->flags & FPMD_IF_F_KERNEL_V6)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_POLICY,
			       ACT_PASS(tc));

	if (ip6h->daddr.in6_u.u6_addr8[0] == 0xff)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MCAST,
			       ACT_PASS(tc));
	if (ip6h->saddr.in6_u.u6_addr8[0] == 0xff ||
	    ipv6_is_martian(&ip6h->saddr) || ipv6_is_martian(&ip6h->daddr))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MARTIAN,
			       ACT_PASS(tc));
	if ((ip6h->saddr.in6_u.u6_addr16[0] & bpf_htons(0xffc0)) ==
		bpf_htons(0xfe80) ||
	    (ip6h->daddr.in6_u.u6_addr16[0] & bpf_htons(0xffc0)) ==
		bpf_htons(0xfe80))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_LINKLOCAL,
			       ACT_PASS(tc));
	if (ip6h->hop_limit <= 1)
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_TTL,
			       ACT_PASS(tc));

	reason =
	    lookup_v6(ctx, ctx_ifindex(ctx, tc), in, ip6h, l3len, data_end, &e);
	if (reason == FPMD_R_DROP_BLACKHOLE)
		return verdict(ctx, tc, in->slot, reason, ACT_DROP(tc));
	if (reason != FPMD_R_FORWARDED)
		return verdict(ctx, tc, in->slot, reason, ACT_PASS(tc));
	return forward(ctx, tc, in, &e, l3len, 1);
}

/* Ethernet: addressed to us, IPv4 or IPv6. */
static __always_inline int pipeline(void *ctx, int tc, struct fpmd_iface *in)
{
	struct ethhdr *eth = ctx_data(ctx, tc);

	if ((void *)(eth + 1) > ctx_data_end(ctx, tc))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_MALFORMED,
			       ACT_PASS(tc));
	if (!(in->flags & FPMD_IF_F_ENABLED))
		return verdict(ctx, tc, in->slot, FPMD_R_PASS_DISABLED,
			       ACT_PASS(tc));

	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		if (!mac_equal(eth->h_dest, in->mac))
			return verdict(ctx, tc, in->slot, FPMD_R_PASS_L2_OTHER,
				       ACT_PASS(tc));
		return handle_ipv4(ctx, tc, eth, in);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if (!mac_equal(eth->h_dest, in->mac))
			return verdict(ctx, tc, in->slot, FPMD_R_PASS_L2_OTHER,
				       ACT_PASS(tc));
		return handle_ipv6(ctx, tc, eth, in);
	}
	return verdict(ctx, tc, in->slot, FPMD_R_PASS_NOT_IP, ACT_PASS(tc));
}

/*
 * xdp.frags (BPF_F_XDP_HAS_FRAGS): the program takes multi-buffer frames,
 * so drivers attach it natively on interfaces whose frames exceed a page
 * (MTU 9000; veth refuses other programs there). Headers are read in the
 * linear part, lengths are the whole frame's (ctx_len).
 */
SEC("xdp.frags")
int fpmd_xdp(struct xdp_md *ctx)
{
	struct fpmd_iface *in = iface_get(ctx->ingress_ifindex);

	if (!in)
		return XDP_PASS; /* not ours (yet): no slot to count on */
	return pipeline(ctx, 0, in);
}

#ifndef FPMD_FIB_REF
/* Ethernet, IPv6 and the ports (ECMP hash): linear and writable. */
#define FPMD_TC_PULL (ETH_HLEN + sizeof(struct ipv6hdr) + 8)

/*
 * fpmd's tc ingress program (tcx), where fpmd attaches it: on a TC_ONLY
 * interface it forwards whatever arrives; behind XDP it takes only XDP's
 * handoffs. Each packet is counted once: by XDP, or here when XDP handed
 * it over (marker) or there is no XDP (TC_ONLY).
 */
SEC("tc")
int fpmd_tc(struct __sk_buff *skb)
{
	void *meta = (void *)(long)skb->data_meta;
	void *data = (void *)(long)skb->data;
	struct fpmd_iface *in = iface_get(skb->ifindex);
	__u32 len;

	if (!in)
		return TC_ACT_OK;
	if (!(meta + 4 <= data && *(__u32 *)meta == FPMD_META_HANDOFF) &&
	    !(in->flags & FPMD_IF_F_TC_ONLY))
		return TC_ACT_OK; /* XDP counted it */
	/* Fails only without memory: then the header checks see a short
	 * linear part and pass the packet (pass-malformed). */
	len = skb->len < FPMD_TC_PULL ? skb->len : FPMD_TC_PULL;
	bpf_skb_pull_data(skb, len);
	/* The kernel took the VLAN tag off before tc (skb_vlan_untag): the
	 * frame belongs to a VLAN device, as XDP sees from the tag. */
	if (skb->vlan_present)
		return verdict(skb, 1, in->slot, FPMD_R_PASS_NOT_IP, TC_ACT_OK);
	return pipeline(skb, 1, in);
}
#endif


#ifndef FPMD_FIB_REF
/*
 * What happens after XDP_REDIRECT: the devmap enqueue may refuse the frame
 * (xdp_redirect_err) and the driver's ndo_xdp_xmit may drop it
 * (xdp_devmap_xmit "drops"), both after TX was counted. fpmd attaches these
 * two programs and fills in what to match after load.
 */
__u32 tx_ports_id;  /* map id of tx_ports: our redirects only */
__u32 netns_inum;   /* fpmd's network namespace */

static __always_inline void count_tx_err(__u32 ifindex, __u32 reason,
					 __u32 n)
{
	struct fpmd_iface *out = iface_get(ifindex);
	__u32 key;
	struct fpmd_stat *s;

	if (!out)
		return;
	key = FPMD_STAT_INDEX(out->slot, reason);
	s = bpf_map_lookup_elem(&stats, &key);
	if (s)
		s->packets += n;
}

/*
 * (dev, xdp, tgt, err, map_type, map_id, index): a raw tracepoint, which
 * needs no tracefs (a tracepoint's id is read from it, and a machine
 * without systemd may not have it mounted: nothing was counted then).
 * index is the devmap key: our tx_ports are keyed by ifindex.
 */
SEC("raw_tp/xdp_redirect_err")
int fpmd_redirect_err(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 map_id = (__u32)ctx->args[5], index = (__u32)ctx->args[6];

	if (!tx_ports_id || map_id != tx_ports_id)
		return 0;
	count_tx_err(index, FPMD_R_TX_REDIRECT_ERR, 1);
	return 0;
}

/* Just the fields read below, relocated against the running kernel. */
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

struct fpmd_possible_net {
	struct net *net;
};

struct net_device {
	int ifindex;
	struct fpmd_possible_net nd_net;
} __attribute__((preserve_access_index));

/* (from_dev, to_dev, sent, drops, err); one event per bulk flush. */
SEC("raw_tp/xdp_devmap_xmit")
int fpmd_devmap_xmit(struct bpf_raw_tracepoint_args *ctx)
{
	struct net_device *to = (void *)ctx->args[1];
	int drops = (int)ctx->args[3];

	if (drops <= 0 || !netns_inum)
		return 0;
	/* ifindexes are per namespace; other routers run beside us. */
	if (BPF_CORE_READ(to, nd_net.net, ns.inum) != netns_inum)
		return 0;
	count_tx_err(BPF_CORE_READ(to, ifindex), FPMD_R_TX_XMIT_DROP, drops);
	return 0;
}
#endif

#ifdef FPMD_FIB_REF
/* The benchmark's floor: what a test run costs with a program doing nothing. */
SEC("xdp")
int fpmd_xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
#endif

char LICENSE[] SEC("license") = "GPL";
