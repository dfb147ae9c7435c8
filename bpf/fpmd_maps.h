/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one contract between the XDP program and user space: every map's key
 * and value layout, the route value encoding, counter reasons and flags.
 * Included by bpf/fpmd.bpf.c, by fpmd, fpmctl and the tests.
 */
#ifndef FPMD_MAPS_H
#define FPMD_MAPS_H

#ifdef __BPF__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

/*
 * Bumped whenever a layout below changes. fpmd stamps it into the pinned
 * "meta" map and refuses to adopt pinned maps carrying another version.
 */
#define FPMD_LAYOUT_VERSION 10

/* Default table sizes; fpmd can resize most of them before load. */
#define FPMD_MAX_IFACES 64          /* interface slots (counters, ifaces) */
#define FPMD_MAX_ROUTES_V4 1100000
#define FPMD_MAX_ROUTES_V6 300000
#define FPMD_MAX_NEXTHOPS 65536
#define FPMD_MAX_GROUPS 8192
#define FPMD_MAX_NEIGH 65536
#define FPMD_MAX_LOCAL_V4 4096      /* the router's own IPv4 addresses */

/*
 * Buckets per nexthop group. Weights are spread over the buckets in
 * proportion (at least one bucket per member), so a power of two keeps
 * the member pick a mask and gives 1/64 weight resolution.
 */
#define FPMD_GROUP_BUCKETS 64

/*
 * Route value: the source that owns the route in the top 4 bits, the
 * route type in the next 4, the nexthop or group index in the low 24 bits.
 * 24 bits is what a packed DIR-24-8 entry can carry, so the same encoding
 * serves the LPM trie now and array tables later. The fast path reads only
 * type and index; the source lets a restarted fpmd give every adopted
 * route back to its owner.
 */
#define FPMD_RT_INDEX_BITS 24
#define FPMD_RT_INDEX_MASK ((1u << FPMD_RT_INDEX_BITS) - 1)
#define FPMD_RT_ENCODE_SRC(src, type, idx)                                 \
	(((__u32)(src) << 28) | (((__u32)(type) & 0xf) << FPMD_RT_INDEX_BITS) | \
	 ((__u32)(idx) & FPMD_RT_INDEX_MASK))
#define FPMD_RT_ENCODE(type, idx) FPMD_RT_ENCODE_SRC(0, type, idx)
#define FPMD_RT_TYPE(v) (((__u32)(v) >> FPMD_RT_INDEX_BITS) & 0xf)
#define FPMD_RT_INDEX(v) ((__u32)(v) & FPMD_RT_INDEX_MASK)
#define FPMD_RT_SRC(v) ((__u32)(v) >> 28)

enum fpmd_route_type {
	FPMD_RT_NONE = 0,        /* never written; a lookup miss */
	FPMD_RT_NEXTHOP = 1,     /* index is a nexthops slot */
	FPMD_RT_GROUP = 2,       /* index is an nh_groups slot */
	FPMD_RT_LOCAL = 3,       /* the router's own address or broadcast */
	FPMD_RT_BLACKHOLE = 4,   /* drop in XDP */
	FPMD_RT_UNREACHABLE = 5, /* kernel answers with ICMP */
	FPMD_RT_PROHIBIT = 6,    /* kernel answers with ICMP */
	FPMD_RT_KERNEL = 7,      /* kept on the kernel path (unsupported) */
	/* Only in DIR-24-8 tbl24 entries, never a route: index is a tbl8
	 * group. Never in tbl8 (one level of indirection). */
	FPMD_RT_TBL8 = 15,
};

/*
 * Route lookup algorithms, chosen when fpmd loads the program (a const
 * volatile flag, so the verifier drops the other path). The maps of the
 * algorithm not chosen are created with max_entries 1.
 */
enum fpmd_fib4_algo {
	FPMD_FIB4_LPM = 0,   /* routes_v4 LPM trie: small tables, low memory */
	FPMD_FIB4_DIR24 = 1, /* tbl24 + tbl8 arrays (DPDK rte_lpm's DIR-24-8) */
	FPMD_FIB4_DXR = 2,   /* compact: DXR D16R ranges (doc/fib-compact.md) */
};

enum fpmd_fib6_algo {
	FPMD_FIB6_LPM = 0,  /* routes_v6 LPM trie */
	FPMD_FIB6_BSPL = 1, /* binary search on prefix lengths (Waldvogel) */
};

/*
 * IPv4 DIR-24-8. tbl24 has one 32-bit entry per /24 (2^24 entries); an
 * entry is a route value (FPMD_RT_ENCODE_SRC; type FPMD_RT_NONE: no
 * route) or FPMD_RT_ENCODE(FPMD_RT_TBL8, group): the /24 holds longer
 * prefixes and its 256 addresses are looked up in tbl8 group "group",
 * entries group * 256 + last octet, each a route value.
 *
 * BPF arrays round every value up to 8 bytes, so a __u32 array of 2^24
 * would take 128 MiB: both tables are arrays of __u64 words holding two
 * entries each, entry i in word i / 2, as the __u32 at index i % 2 of the
 * word viewed as __u32[2] (so the memory is simply __u32[n] to an mmap).
 *
 * tbl24 (2^23 words, 64 MiB when whole) is an ARRAY_OF_MAPS of up to
 * FPMD_TBL24_PARTS arrays of FPMD_TBL24_PART_WORDS words each: word w is
 * word w % PART_WORDS of part w / PART_WORDS. A part exists only where
 * its range is not uniform (a prefix boundary or a tbl8 group inside
 * it); where the outer map has no part, every entry of its range is
 * tbl24_dflt[part] (an mmapable array, one route value per part, read
 * only on that miss). A BPF array above 32 KiB is vmalloc'ed in 4 KiB
 * pages, and lookups spread over 64 MiB then pay a TLB miss (a nested
 * page walk under a hypervisor) on top of the cache miss; a part fits in
 * 32 KiB with the array's header, so it comes from kmalloc, in the
 * kernel's huge-page direct map. fpmd keeps its own copy of the parts and
 * writes the words a change touched: one or two gathered with other
 * changes' (FPMD_TBL24_SCATTER, below), more by
 * copying them into tbl24_stage (mmapable, FPMD_TBL24_STAGE_WORDS) and
 * running the program fpmd_tbl24_commit (BPF_PROG_TEST_RUN, the frame
 * being a struct fpmd_tbl24_commit), which stores them from inside the
 * kernel at a few ns per word where a map update costs ~0.5 us. Each
 * word is one 8-byte store: a reader sees the old or the new word. A new
 * part is filled completely before it enters the outer map; a part that
 * became uniform gets its default written before it leaves it.
 *
 * tbl8 is an ARRAY_OF_MAPS of chunks of FPMD_TBL8_CHUNK_GROUPS groups,
 * each a BPF_F_MMAPABLE array (rarely read: only /24s holding longer
 * prefixes), created as groups are needed; fpmd writes them through
 * shared mappings (aligned 32-bit stores), fills a tbl8 group completely
 * before pointing tbl24 at it, and reuses a freed group only after a
 * grace period.
 */
#define FPMD_TBL24_ENTRIES (1u << 24)
#define FPMD_TBL24_WORDS (FPMD_TBL24_ENTRIES / 2)
#define FPMD_TBL24_PART_WORDS 4000 /* 32000 bytes + the array header */
#define FPMD_TBL24_PARTS                                                    \
	((FPMD_TBL24_WORDS + FPMD_TBL24_PART_WORDS - 1) / FPMD_TBL24_PART_WORDS)
/* w / FPMD_TBL24_PART_WORDS for w < 2^23 without a divide (a 64-bit div
 * costs ~15 ns in the JIT); tests/fib_check checks every w. */
#define FPMD_TBL24_PART_OF(w) ((__u32)(((__u64)(w) * 8589935ull) >> 35))
#define FPMD_TBL24_STAGE_WORDS FPMD_TBL24_PART_WORDS /* one part */

/*
 * The "frame" given to fpmd_tbl24_commit: copy tbl24_stage[0, n) to
 * tbl24 words [first, first + n) (op FPMD_TBL24_WRITE), to the same
 * words of the parts in tbl24_fill (FPMD_TBL24_FILL: new parts, not yet
 * in tbl24), or those words of tbl24 to the stage (FPMD_TBL24_READ:
 * adoption). Returns XDP_PASS when done. A map update or batch from
 * user space costs ~0.5 us per word (2 ms to fill a part).
 */
enum {
	FPMD_TBL24_WRITE = 0,
	FPMD_TBL24_FILL = 1,
	FPMD_TBL24_READ = 2,
	FPMD_TBL24_SCATTER = 3,
};
/* FPMD_TBL24_SCATTER: n (word, value) pairs in tbl24_stage (stage[2i] the
 * tbl24 word, stage[2i + 1] its value; first unused), stored in order
 * into whichever parts hold them (a word whose part is not in tbl24 is
 * skipped: the part left, or waits to be published whole). fpmd gathers
 * the one- and two-word writes of many changes this way: one run, not a
 * map update per word. */
#define FPMD_TBL24_SCATTER_MAX (FPMD_TBL24_STAGE_WORDS / 2)

struct fpmd_tbl24_commit {
	__u32 first;
	__u32 n;
	__u32 op;
	__u8 pad[4]; /* a test-run frame is at least an Ethernet header */
};
#define FPMD_TBL8_GROUP 256
#define FPMD_TBL8_GROUP_WORDS (FPMD_TBL8_GROUP / 2)
#define FPMD_TBL8_GROUPS 8192 /* default most: 8 MiB; /25../32 under 8192 /24s */
#define FPMD_TBL8_MAX_GROUPS FPMD_RT_INDEX_MASK
#define FPMD_TBL8_CHUNK_GROUPS 128 /* 128 KiB per tbl8 chunk */
#define FPMD_TBL8_CHUNK_WORDS (FPMD_TBL8_CHUNK_GROUPS * FPMD_TBL8_GROUP_WORDS)

/*
 * rules_v4: the IPv4 prefixes themselves when DIR-24-8 is in use (the
 * arrays cannot give them back: a /23 and its two /24s with one nexthop
 * look the same). Only user space reads it, to rebuild its prefix store
 * after a restart. Slot-indexed, 16 bytes per prefix: an ARRAY_OF_MAPS
 * of BPF_F_MMAPABLE chunks of FPMD_RULES_CHUNK slots, made as needed.
 */
#define FPMD_RULES_CHUNK 8192 /* 128 KiB per chunk */
#define FPMD_RULE_F_USED 0x1

struct fpmd_rule_v4 {
	__u8 addr[4]; /* network order, host bits zero */
	__u32 val;    /* route value */
	__u8 len;
	__u8 flags;   /* FPMD_RULE_F_*, written last */
	__u8 pad[6];
};

/*
 * IPv4 DXR (Zec's D16R; the choice: doc/fib-compact.md). dxr_dir has one
 * 64-bit entry per /16: FPMD_DXR_U | value index when the whole /16 has
 * one value, else [FPMD_DXR_S |] n << 32 | base: the /16's n >= 2
 * ranges, sorted by start, from word base of dxr_rng. A long range is a
 * 32-bit word start << 16 | value index (start: the low 16 address bits
 * where it begins; the first starts at 0): n words. With FPMD_DXR_S
 * (layout 8), set when every range starts on a /24 boundary and every
 * value index is below 256 (a /16 without prefixes longer than /24, on
 * tables of up to 255 distinct route values), a range is 16 bits,
 * start >> 8 << 8 | value index, two per word (range 2k in the low
 * half): (n + 1) / 2 words, half the space. A
 * lookup finds the last range whose start is <= the address's low 16
 * bits by a binary search (at most 16 steps). Value indexes point into
 * dxr_val (route values, __u32, two per word). Index 0 is what no
 * prefix but the default route covers: the default route's value, or 0
 * (the miss) without one; a default route is never in the ranges.
 *
 * dxr_rng is an ARRAY_OF_MAPS of BPF_F_MMAPABLE chunks, each one array
 * element of FPMD_DXR_CHUNK_RANGES ranges (the most one /16 can have;
 * layout 7: before, 32768 elements of two), made as needed; a /16's ranges never cross a chunk (base >> 16 is the chunk).
 * fpmd writes a changed /16's ranges into free space, then switches its
 * dxr_dir entry with one 8-byte store, and reuses the old ranges only
 * after a grace period: a reader sees the old /16 or the new one, both
 * whole. The prefixes are kept in rules_v4 as for DIR-24-8 (adoption).
 */
#define FPMD_DXR_DIR (1u << 16)
#define FPMD_DXR_U (1ull << 63)
#define FPMD_DXR_S (1ull << 62)	 /* short ranges */
#define FPMD_DXR_N_MASK 0x3fffffffu /* n, of the entry's upper half */
#define FPMD_DXR_CHUNK_RANGES 65536u /* 256 KiB per chunk */
#define FPMD_DXR_CHUNK_WORDS (FPMD_DXR_CHUNK_RANGES / 2)
#define FPMD_DXR_VALS 65536u /* distinct route values at most */
#define FPMD_DXR_VAL_WORDS (FPMD_DXR_VALS / 2)

/*
 * IPv6 binary search on prefix lengths (Waldvogel et al., "Scalable
 * high speed IP routing lookups", SIGCOMM 1997). slots_v6 is a hash
 * table of (prefix length, masked address) -> a route or a marker;
 * lens_v6 the sorted list of prefix lengths in use. A lookup bisects
 * lens_v6: a hit at length L (route or marker) means "a longer match may
 * exist, go right" and its val is the best route covering it at length
 * <= L; a miss means "go left". Markers are placed on the search path of
 * each route, so at most ceil(log2(n + 1)) probes (8 for 129 lengths).
 *
 * slots_v6 is open addressing with linear probing in a BPF_F_MMAPABLE
 * array of 2^k slots (one cache line touched per probe, where a BPF hash
 * map costs a bucket and an element): a key sits within FPMD_V6_MAX_PROBE
 * slots of fpmd_v6_hash(), and a lookup stops at an empty slot. fpmd
 * writes a slot's key and val before its tag, deletes by turning the tag
 * into a tombstone (one 32-bit store) and turns tombstones back into empty
 * slots only where no probe sequence passes them.
 *
 * The table grows with the routes: slots_v6 is an ARRAY_OF_MAPS of
 * chunks, same-size mmapable arrays of FPMD_V6_CHUNK_SLOTS slots (same
 * size, so the verifier inlines the inner lookups), and slot k of a table
 * of mask + 1 slots starting at outer index base is slot
 * k % FPMD_V6_CHUNK_SLOTS of chunk base + k / FPMD_V6_CHUNK_SLOTS. The
 * outer map has two halves of max / FPMD_V6_CHUNK_SLOTS entries: fpmd
 * builds the doubled table in the half not in use, flips lens_v6 to it
 * (base and mask travel with the length list), and drops the old chunks
 * after a grace period. A table starts at one chunk, doubles at half
 * full and halves below an eighth.
 *
 * lens_v6 has two halves; fpmd writes the inactive one, then flips
 * "active" (one 32-bit store), so a lookup always sees one whole list
 * and the table it belongs to. Markers needed by the new list are
 * written before the flip, stale ones removed after it (an extra marker
 * with a correct val is harmless).
 */
#define FPMD_V6_LENS 129
#define FPMD_V6_PROBES 8
#define FPMD_V6_MAX_PROBE 64 /* linear probing runs: rare past 64 below half full */
#define FPMD_V6_ENTRIES_PER_ROUTE 2 /* routes + markers, for sizing */
#define FPMD_V6_CHUNK_SHIFT 12
#define FPMD_V6_CHUNK_SLOTS (1u << FPMD_V6_CHUNK_SHIFT) /* 96 KiB */
/* slots_v6's outer entries for tables of at most max_slots slots. */
#define FPMD_V6_OUTER(max_slots)                                           \
	(2 * (((max_slots) + FPMD_V6_CHUNK_SLOTS - 1) / FPMD_V6_CHUNK_SLOTS))

#define FPMD_V6S_EMPTY 0           /* never used: ends a probe sequence */
#define FPMD_V6S_TOMB 0x40000000u  /* deleted: probing goes on */
#define FPMD_V6S_VALID 0x80000000u
#define FPMD_V6S_ROUTE 0x100u      /* a route of its own (else a marker) */
#define FPMD_V6S_LEN(tag) ((tag) & 0xff)

struct fpmd_v6_slot {
	__u64 hi, lo; /* the masked address as two native-order words */
	__u32 val;    /* best route at this length: own value or covering */
	__u32 tag;    /* FPMD_V6S_VALID | flags | prefix length, or EMPTY,
		       * TOMB */
};

/* The home slot of (hi, lo, len), before masking; BPF and fpmd agree. */
static inline __attribute__((always_inline)) __u64
fpmd_v6_hash(__u64 hi, __u64 lo, __u32 len)
{
	__u64 h = (hi ^ ((__u64)len << 56)) * 0x9e3779b97f4a7c15ull;

	h = (h ^ (h >> 32) ^ lo) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/*
 * The direct stage in front of the search: one 16-byte entry per /19 of
 * 2000::/3 (the 16 bits after 001), words w0 and w1.
 *   w0 bits  0-31  the best route of length <= 19 covering the /19 (0:
 *                  none)
 *   w0 bits 32-39  mode: 0: bisect lens_v6 as above (more than
 *                  FPMD_V6_DIRECT_LENS lengths here, or fpmd has not set
 *                  the entry up); 1 + n: a list of n lengths;
 *                  FPMD_V6_DIRECT_ONE | generation: one route
 *   list:     w0 bits 40-63  the n lengths (> 19) of the routes inside
 *                  the /19, longest first, one byte each; w1 unused
 *   one route (the only one longer than /19 inside, at most /64):
 *             w0 bits 40-47  its length, w0 bits 48-60 and w1 bits 32-63
 *                  its bits 19-63 (FPMD_V6_DIRECT_BITS45), w1 bits 0-31
 *                  its value
 * One route: an address under it gets its value, any other the /19's,
 * without a slots_v6 probe. w0 is read, then w1, then w0 again: fpmd
 * rewrites w1 only while w0 says something else (bisect), and bumps the
 * generation at each w0 of this mode, so a lookup that sees w0 twice the
 * same read a w1 that goes with it; else it bisects.
 * List: a lookup probes slots_v6 at just those lengths, longest first.
 * Any entry at (L, address masked to L), route or marker, holds the best
 * route covering it at length <= L, and a longer route covering the
 * address would have been hit at its own length, probed before: so the
 * first hit is the answer, and a /19 without a hit gets bits 0-31. A
 * lookup with the old entry in flight is right too: fpmd writes a
 * route's slot before listing its length, and a probe at a length whose
 * routes went finds a marker (right val) or nothing.
 * The slots are those the bisection uses (every route keeps its markers),
 * so bisecting is right whatever the entry says.
 */
#define FPMD_V6_DIRECT_BITS 16
#define FPMD_V6_DIRECT_PLEN 19 /* 3 + FPMD_V6_DIRECT_BITS */
#define FPMD_V6_DIRECT (1u << FPMD_V6_DIRECT_BITS)
#define FPMD_V6_DIRECT_LENS 3
#define FPMD_V6_DIRECT_ONE 0x80
#define FPMD_V6_DIRECT_GEN 0x7full /* of the mode byte */
#define FPMD_V6_DIRECT_BITS45 ((1ull << 45) - 1) /* bits 19-63, of 0-63 */
#define FPMD_V6_DIRECT_ENCODE(val, n, lens)                                 \
	((__u64)(val) | (__u64)((n) + 1) << 32 | (__u64)(lens) << 40)

struct fpmd_v6_lens {
	__u32 active; /* 0 or 1: the half lookups use */
	__u32 n[2];
	__u32 base[2]; /* the table: its first chunk in slots_v6 */
	__u32 mask[2]; /* and its size - 1 (a power of two) */
	__u8 len[2][FPMD_V6_LENS]; /* ascending */
	__u64 direct[FPMD_V6_DIRECT][2]; /* by /19 of 2000::/3, see above */
};

struct fpmd_lpm_v4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct fpmd_lpm_v6 {
	__u32 prefixlen;
	__u8 addr[16];
};

struct fpmd_route_val {
	__u32 val; /* FPMD_RT_ENCODE() */
};

/* Nexthop flags. */
#define FPMD_NH_F_VALID 0x1     /* slot in use */
#define FPMD_NH_F_RESOLVED 0x2  /* dmac is the gateway's MAC */
#define FPMD_NH_F_CONNECTED 0x4 /* no gateway: dmac from neigh_v4/v6 */
#define FPMD_NH_F_IFDOWN 0x8    /* egress down: pass to the kernel */
#define FPMD_NH_F_V6 0x10       /* gateway is IPv6 */

/*
 * A nexthop: where to send and how to rewrite. gw and id are not read by
 * the fast path; they are there so a restarted fpmd can rebuild its tables
 * from the pinned maps.
 */
struct fpmd_nexthop {
	__u32 ifindex;
	__u16 mtu;   /* egress L3 MTU */
	__u16 flags; /* FPMD_NH_F_* */
	__u8 dmac[6];
	__u8 smac[6];
	__u16 oslot; /* egress interface slot, for tx counters */
	__u16 src;   /* source owning id (fpmd's enum rib_source) */
	__u8 gw[16]; /* IPv4 in the first 4 bytes */
	__u32 id;    /* the source's nexthop id (0: implicit) */
	__u32 used;  /* meta.epoch when the fast path last sent by it */
	__u32 seq;   /* odd while fpmd rewrites the entry (FPMD_SEQ_*) */
};

/*
 * fpmd rewrites nexthops and groups in place while the fast path reads
 * them, and a map update is a plain copy in no given order: a reader
 * could take half the old entry and half the new (the flags of one and
 * the MAC of the other, the buckets of two groups). So each carries a
 * sequence count, as the kernel guards a neighbor's MAC (neigh->ha_lock,
 * neigh_ha_snapshot): fpmd writes the old contents with the count made
 * odd, then the new contents, then the new ones with the count even
 * again, each a syscall ordered after the one before (nhtab.c). The fast
 * path reads the count before and after what it uses and passes the
 * packet to the kernel when it was odd or moved. Loads are not reordered
 * with loads on x86 (TSO), so a compiler barrier orders the reader there.
 */
#define FPMD_SEQ_WRITING(seq) ((seq) & 1u)

/*
 * nexthops and nh_groups grow in chunks, as the table does: each is an
 * ARRAY_OF_MAPS of same-size arrays (same size, so the verifier inlines
 * the inner lookups), index i in chunk i >> SHIFT at i & (per chunk - 1).
 * fpmd creates a chunk when it first writes an index in it and puts it
 * in the outer map before any route or group can refer to that index;
 * indices are handed out low first, so chunks fill in order. The outer
 * map has room for max-nexthops / max-groups (the limits stay theirs).
 * Chunks stay below 32 KiB, so the kernel kmallocs them.
 */
#define FPMD_NH_CHUNK_SHIFT 9    /* 512 nexthops x 56 bytes: 28 KiB */
#define FPMD_GROUP_CHUNK_SHIFT 5 /* 32 groups x 600 bytes: 18.75 KiB */
#define FPMD_CHUNKS_FOR(max, shift) (((max) + (1u << (shift)) - 1) >> (shift))

struct fpmd_nh_group {
	__u32 nbuckets; /* 0 means empty group: pass to the kernel */
	__u32 id;       /* the source's group id (0: implicit), for adoption */
	__u32 src;      /* source owning id */
	__u32 bucket[FPMD_GROUP_BUCKETS]; /* nexthop indices */
	/* Members and weights as given, for adoption (buckets leave out
	 * members that are down). */
	__u32 member[FPMD_GROUP_BUCKETS];
	__u8 weight[FPMD_GROUP_BUCKETS];
	__u32 nmembers;
	__u32 seq; /* odd while fpmd rewrites the entry (FPMD_SEQ_*) */
};

struct fpmd_neigh_v4_key {
	__u32 ifindex;
	__u8 addr[4];
};

struct fpmd_neigh_v6_key {
	__u32 ifindex;
	__u8 addr[16];
};

#define FPMD_NEIGH_F_STATIC 0x1 /* entered by hand (user space only) */

struct fpmd_neigh_val {
	__u8 mac[6];
	__u16 flags; /* FPMD_NEIGH_F_* */
	__u32 used;  /* meta.epoch when the fast path last sent to it */
};

/*
 * local_v4: the router's own IPv4 addresses (key: address, network order).
 * The kernel drops a forwarded packet whose source is one of them (martian
 * source, unless accept_local), so the fast path passes it up.
 */
struct fpmd_local_v4_val {
	__u8 present;
};

/*
 * local_v4_filter: one bit per (hash of an) address in local_v4, so that
 * the per-packet check is an array read and local_v4 itself is looked up
 * only when the bit is set (a hash lookup costs ~20 ns per packet here).
 * fpmd sets the bit before adding the address and rebuilds the filter
 * from local_v4 after deleting one, so every key of local_v4 always has
 * its bit set; a set bit with no key (a collision) only costs the lookup.
 */
#define FPMD_LOCAL_FILTER_BITS 65536
struct fpmd_local_filter {
	__u64 w[FPMD_LOCAL_FILTER_BITS / 64];
};

/* The filter bit of an address (the local_v4 key, network order). */
static inline __u32 fpmd_local_v4_bit(__u32 addr)
{
	return (addr * 0x9e3779b1u) >> 16;
}

static inline void fpmd_local_filter_add(struct fpmd_local_filter *f,
					 __u32 addr)
{
	__u32 bit = fpmd_local_v4_bit(addr);

	f->w[bit / 64] |= 1ull << (bit % 64);
}

/* 0: addr is certainly not in local_v4; 1: look it up there. */
static inline int fpmd_local_filter_may_have(const struct fpmd_local_filter *f,
					     __u32 addr)
{
	__u32 bit = fpmd_local_v4_bit(addr);

	return !!(f->w[bit / 64] & (1ull << (bit % 64)));
}

/* Interface flags. */
#define FPMD_IF_F_ENABLED 0x1     /* forward packets received here */
#define FPMD_IF_F_FWD_V4 0x2      /* net.ipv4.conf.IF.forwarding */
#define FPMD_IF_F_FWD_V6 0x4      /* net.ipv6.conf.IF.forwarding */
#define FPMD_IF_F_RPF_STRICT 0x8  /* rp_filter 1 */
#define FPMD_IF_F_RPF_LOOSE 0x10  /* rp_filter 2 */
#define FPMD_IF_F_KERNEL_V4 0x20  /* rules/xfrm/tc ingress: IPv4 to kernel */
#define FPMD_IF_F_KERNEL_V6 0x40  /* rules/xfrm/tc ingress: IPv6 to kernel */
#define FPMD_IF_F_PRESENT 0x80    /* an ifaces_direct entry in use */
#define FPMD_IF_F_REDIRECTS_V4 0x100 /* send_redirects (all or IF) on */
/* The kernel looks up every IPv4 source (custom local routes exist) and
 * drops one whose route is local: XDP passes those. */
#define FPMD_IF_F_SRC_CHECK 0x200
/* Container paths (doc/containers.md): fpmd's tc program (fpmd_tc). */
#define FPMD_IF_F_PEER 0x400     /* egress: a veth whose peer takes no XDP
				  * redirects; the tc program delivers with
				  * bpf_redirect_peer(). Only while up with
				  * carrier; never in tx_ports at once */
#define FPMD_IF_F_TC 0x800       /* ingress: fpmd's tc program is attached
				  * at tcx ingress here: XDP hands it the
				  * packets bound to a PEER egress */
#define FPMD_IF_F_TC_ONLY 0x1000 /* ingress: no XDP here; the tc program
				  * forwards what arrives (a veth whose peer
				  * sends partial checksums) */
/* egress: the driver transmits multi-buffer XDP frames (xdp-features
 * ndo-xmit-sg); without it a frame larger than a page goes to the kernel */
#define FPMD_IF_F_XMIT_SG 0x2000

/* XDP_PASS with these 4 bytes of metadata (bpf_xdp_adjust_meta) before the
 * frame: "not counted yet, for the tc program to forward to a PEER egress". */
#define FPMD_META_HANDOFF 0xfd7c0001u

/* Container paths (doc/containers.md): fpmd's tc program (fpmd_tc). */
#define FPMD_IF_F_PEER 0x400     /* egress: a veth whose peer takes no XDP
				  * redirects; the tc program delivers with
				  * bpf_redirect_peer(). Only while up with
				  * carrier; never in tx_ports at once */
#define FPMD_IF_F_TC 0x800       /* ingress: fpmd's tc program is attached
				  * at tcx ingress here: XDP hands it the
				  * packets bound to a PEER egress */
#define FPMD_IF_F_TC_ONLY 0x1000 /* ingress: no XDP here; the tc program
				  * forwards what arrives (a veth whose peer
				  * sends partial checksums) */

/* XDP_PASS with these 4 bytes of metadata (bpf_xdp_adjust_meta) before the
 * frame: "not counted yet, for the tc program to forward to a PEER egress". */
#define FPMD_META_HANDOFF 0xfd7c0001u

/*
 * ifaces_direct: a copy of the ifaces entries of ifindexes below
 * FPMD_IFINDEX_DIRECT in an array indexed by ifindex, so the per-packet
 * ingress (and egress) lookup is an array read, not a hash lookup (~15 ns
 * here). A cache only: the program falls back to ifaces when the entry
 * lacks FPMD_IF_F_PRESENT (larger ifindexes, tools that fill only ifaces).
 * fpmd writes ifaces first and clears the copy first, and rebuilds the
 * copy from ifaces at load.
 */
#define FPMD_IFINDEX_DIRECT 4096

struct fpmd_iface {
	__u32 slot;  /* counters index */
	__u32 flags; /* FPMD_IF_F_* */
	__u8 mac[6];
	__u16 mtu;
};

/*
 * Counter reasons. Every packet the program sees moves exactly one rx-side
 * reason on its ingress slot; a forwarded packet also moves TX on its
 * egress slot, and later TX_REDIRECT_ERR or TX_XMIT_DROP there if it did
 * not leave (TX minus both is what left). Names are in fpmd_reason_names
 * (fpmd/fib/maps.c), meanings in fpmctl(8) and the README.
 */
enum fpmd_reason {
	FPMD_R_FORWARDED = 0,    /* rewritten and redirected */
	FPMD_R_TX,               /* egress side of FORWARDED */
	FPMD_R_DROP_BLACKHOLE,   /* blackhole route */
	FPMD_R_PASS_NOT_IP,      /* not IPv4/IPv6 (ARP, LLDP, ...) */
	FPMD_R_PASS_L2_OTHER,    /* not addressed to the interface's MAC */
	FPMD_R_PASS_MALFORMED,   /* truncated or invalid IP header */
	FPMD_R_PASS_BAD_CSUM,    /* IPv4 header checksum wrong */
	FPMD_R_PASS_TTL,         /* TTL / hop limit <= 1 */
	FPMD_R_PASS_OPTIONS,     /* IPv4 options, IPv6 hop-by-hop */
	FPMD_R_PASS_LOCAL,       /* to the router itself (local route) */
	FPMD_R_PASS_MCAST,       /* multicast or broadcast destination */
	FPMD_R_PASS_LINKLOCAL,   /* link-local source or destination */
	FPMD_R_PASS_MARTIAN,     /* martian source or destination */
	FPMD_R_PASS_NO_ROUTE,    /* no route in the fast path */
	FPMD_R_PASS_UNREACHABLE, /* unreachable / prohibit / kernel route */
	FPMD_R_PASS_UNRESOLVED,  /* neighbor unresolved or egress down */
	FPMD_R_PASS_EGRESS,      /* egress not in the fast path (tx_ports) */
	FPMD_R_PASS_MTU,         /* larger than the egress MTU */
	FPMD_R_PASS_RPF,         /* failed the rp_filter check */
	FPMD_R_PASS_POLICY,      /* rules / xfrm / tc ingress on this iface */
	FPMD_R_PASS_DISABLED,    /* interface not enabled or not forwarding */
	FPMD_R_PASS_REDIRECT,    /* egress = ingress: the kernel may send an
				  * ICMP redirect */
	/*
	 * Egress side, after the fact: frames counted in TX that did not
	 * leave. Counted by the tracepoint programs, packets only (the
	 * tracepoints carry no length).
	 */
	FPMD_R_TX_REDIRECT_ERR,  /* xdp_do_redirect refused (devmap enqueue:
				  * down, too big, no ndo_xdp_xmit) */
	FPMD_R_TX_XMIT_DROP,     /* dropped by the driver's ndo_xdp_xmit */
	FPMD_R_FORWARDED_PEER,   /* forwarded by the tc program into a veth
				  * peer's namespace (bpf_redirect_peer) */
	FPMD_R_FORWARDED_TC,     /* forwarded by the tc program from a
				  * TC_ONLY ingress (bpf_redirect) */
	FPMD_R_MAX
};

struct fpmd_stat {
	__u64 packets;
	__u64 bytes;
};

#define FPMD_STAT_INDEX(slot, reason) ((slot) * FPMD_R_MAX + (reason))
#define FPMD_MAX_STATS (FPMD_MAX_IFACES * FPMD_R_MAX)

/* Written by fpmd into the "meta" map (key 0) when it creates the maps. */
/*
 * epoch: advanced by fpmd at every neighbor use scan. The fast path stamps
 * the nexthop or neighbor entry it sent by with it (the "used" fields), so
 * that fpmd can tell the kernel which neighbors are in use: the kernel's
 * reachability machine (STALE -> DELAY -> PROBE, garbage collection) only
 * sees the packets it sends itself.
 */
struct fpmd_meta {
	__u32 layout_version;
	__u32 flags;
	__u64 created_ns; /* CLOCK_REALTIME ns when the maps were created */
	__u32 epoch;
	__u32 pad;
};

/* A "used" stamp at or after epoch since, on the wrapping counter (0:
 * never used). */
static inline int fpmd_epoch_since(__u32 used, __u32 since)
{
	return used && (__s32)(used - since) >= 0;
}

#endif /* FPMD_MAPS_H */
