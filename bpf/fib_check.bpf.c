// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Differential test of the fast lookups (tests/fib_check.c): in one
 * BPF_PROG_TEST_RUN, draw "count" addresses around the prefixes listed in
 * "bases" and compare what DIR-24-8 or DXR (IPv4) or the binary search on
 * prefix lengths (IPv6) returns with what the kernel's LPM trie holding
 * the same routes returns. The lookups are the XDP router's own code
 * (fpmd_fib.h). Counts mismatches and keeps the first few.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "fib_check.h"
#include "fpmd_fib.h"

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct fpmd_lpm_v4);
	__type(value, struct fpmd_route_val);
} routes_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct fpmd_lpm_v6);
	__type(value, struct fpmd_route_val);
} routes_v6 SEC(".maps");

/* Prefixes to draw addresses around: {prefixlen, address}. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FIB_CHECK_BASES);
	__type(key, __u32);
	__type(value, struct fpmd_lpm_v6);
} bases SEC(".maps");

/* Inputs. */
__u32 family;  /* 4 or 6 */
__u32 v4algo;  /* enum fpmd_fib4_algo: DIR24 or DXR */
__u32 nbases;
__u32 count;
__u64 seed;
/* An add under way (checked from fpmd's resize hook, inside it): its
 * value may already answer for addresses in its prefix. */
__u32 pend_on;
__u32 pend_val;
struct fpmd_lpm_v6 pend; /* IPv4: the first 4 bytes of addr */
/* Outputs. */
__u64 checked;
__u64 mismatches;
struct fib_check_miss miss[FIB_CHECK_MISSES];

static __always_inline __u64 rnd(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Host-order mask of the first "bits" bits of a 32-bit word. */
static __always_inline __u32 hmask(int bits)
{
	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffff;
	return 0xffffffffu << (32 - bits);
}

/*
 * An address near base: inside it at random, its first or last address,
 * one past either end, in its sibling (last prefix bit flipped), or
 * anywhere at all.
 */
static __always_inline void draw(__u64 *s, const struct fpmd_lpm_v6 *b,
				 __u32 w[4], int words)
{
	__u64 r = rnd(s), h = rnd(s);
	__u32 kind = r & 15, len = b->prefixlen;

	for (int j = 0; j < 4; j++) {
		__u32 bw, m;

		__builtin_memcpy(&bw, b->addr + 4 * j, 4);
		bw = bpf_ntohl(bw);
		m = hmask((int)len - 32 * j);
		if (j >= words) {
			w[j] = 0;
			continue;
		}
		switch (kind) {
		case 0: /* first address */
			w[j] = bw & m;
			break;
		case 1: /* last address */
		case 2: /* one past the end (below, for the last word) */
			w[j] = (bw & m) | ~m;
			break;
		case 3: /* one before the start */
			w[j] = bw & m;
			break;
		case 4: /* anywhere */
			w[j] = (__u32)(h >> (j & 1 ? 32 : 0)) ^ (__u32)(r >> 16);
			break;
		default:
			w[j] = (bw & m) |
			       ((__u32)(h >> (j & 1 ? 32 : 0)) & ~m);
			h = rnd(s);
			break;
		}
	}
	if (words == 1) {
		if (kind == 2)
			w[0] += 1;
		else if (kind == 3)
			w[0] -= 1;
	}
	if (kind >= 13 && len) { /* the sibling prefix */
		__u32 bit = len - 1;

		/* Constant indices only: no variable stack offsets. */
		for (int j = 0; j < 4; j++)
			if (j < words && (bit >> 5) == (__u32)j)
				w[j] ^= 1u << (31 - (bit & 31));
	}
}

/* n (network order, 1 or 4 words) is inside the add under way. */
static __always_inline int in_pend(const __u32 *n, int words)
{
	__u32 len = pend.prefixlen;

	for (int j = 0; j < words; j++) {
		__u32 p, m;

		__builtin_memcpy(&p, pend.addr + 4 * j, 4);
		if (len >= 32)
			m = ~0u;
		else
			m = len ? ~0u << (32 - len) : 0;
		if ((bpf_ntohl(n[j]) ^ bpf_ntohl(p)) & m)
			return 0;
		len = len >= 32 ? len - 32 : 0;
	}
	return 1;
}

static int check_one(__u32 i, void *ctx)
{
	__u64 *s = ctx;
	struct fpmd_lpm_v6 *b, k6 = { .prefixlen = 128 };
	struct fpmd_lpm_v4 k4 = { .prefixlen = 32 };
	struct fpmd_route_val *rv;
	__u32 w[4], n[4], idx, want, got;

	if (!nbases)
		return 1;
	idx = (__u32)(rnd(s) % nbases);
	b = bpf_map_lookup_elem(&bases, &idx);
	if (!b)
		return 1;
	if (family == 4) {
		draw(s, b, w, 1);
		n[0] = bpf_htonl(w[0]);
		__builtin_memcpy(k4.addr, &n[0], 4);
		rv = bpf_map_lookup_elem(&routes_v4, &k4);
		want = rv ? rv->val : 0;
		got = v4algo == FPMD_FIB4_DXR ? dxr_lookup(n[0]) :
						dir24_lookup(n[0]);
		n[1] = n[2] = n[3] = 0;
	} else {
		draw(s, b, w, 4);
		for (int j = 0; j < 4; j++)
			n[j] = bpf_htonl(w[j]);
		__builtin_memcpy(k6.addr, n, 16);
		rv = bpf_map_lookup_elem(&routes_v6, &k6);
		want = rv ? rv->val : 0;
		got = bspl_lookup((const struct in6_addr *)k6.addr);
	}
	checked++;
	if (want != got && pend_on && got == pend_val &&
	    in_pend(n, family == 4 ? 1 : 4))
		return 0;
	if (want != got) {
		__u64 m = mismatches++;

		if (m < FIB_CHECK_MISSES) {
			__builtin_memcpy(miss[m].addr, n, 16);
			miss[m].want = want;
			miss[m].got = got;
		}
	}
	return 0;
}

SEC("xdp")
int fib_check(struct xdp_md *ctx)
{
	__u64 s = seed;

	bpf_loop(count, check_one, &s, 0);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
