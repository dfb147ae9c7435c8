// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv6 binary search on prefix lengths (Waldvogel). Every node is one
 * slots_v6 entry: a route, a marker (on the search path of longer routes)
 * or both. A marker's value is the best route covering it at its length,
 * so a search that goes right past it and finds nothing longer still has
 * the answer. fpmd keeps the nodes, per length too, so that a route's
 * change can re-evaluate the markers under it.
 *
 * A new or vanished prefix length changes the search order (lens_v6):
 * then every marker is recomputed, the new ones written first, the list
 * flipped, the stale ones removed after a grace period.
 *
 * Nodes are also kept in address order (a crit-bit tree on address and
 * length), so the markers under a prefix are found without a scan.
 *
 * The table itself is a run of chunks in slots_v6; it doubles at half
 * full and halves below an eighth: the new table is built in the other
 * half of the outer map, lens_v6 flips to it, and the old chunks go after
 * a grace period.
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

#include "fib/fib6.h"

struct fib6_node {
	struct hnode node;
	uint8_t addr[16];                /* host bits zero */
	uint8_t len;
	bool route;                      /* a route of its own */
	bool in_map;
	uint32_t val;                    /* the route's value */
	uint32_t written, wflags;        /* what slots_v6 holds */
	uint32_t refs;                   /* routes whose path passes here */
	uint32_t mark;                   /* refs under the new lens list */
	uint32_t slot;                   /* in slots_v6, when in_map */
	uint32_t nslot;                  /* in the table being grown */
};

/* ---- nodes in address order: a crit-bit tree (after D. J. Bernstein,
 * A. Langley) on the 17-byte key address, length ---- */

struct cb_inode {
	void *child[2];
	uint16_t byte;
	uint8_t otherbits;
};

static bool cb_internal(const void *p)
{
	return (uintptr_t)p & 1;
}

static struct cb_inode *cb_inode(void *p)
{
	return (struct cb_inode *)((uintptr_t)p - 1);
}

static uint8_t cb_key(const struct fib6_node *x, unsigned int i)
{
	return i < 16 ? x->addr[i] : x->len;
}

static int cb_dir(const struct cb_inode *q, uint8_t c)
{
	return (1 + (q->otherbits | c)) >> 8;
}

static int cb_insert(void **root, struct fib6_node *x)
{
	struct cb_inode *n;
	void **wherep, *p = *root;
	unsigned int newbyte;
	uint32_t newotherbits = 0;
	int newdir;

	if (!p) {
		*root = x;
		return 0;
	}
	while (cb_internal(p)) {
		struct cb_inode *q = cb_inode(p);

		p = q->child[cb_dir(q, cb_key(x, q->byte))];
	}
	for (newbyte = 0; newbyte < 17; newbyte++) {
		newotherbits = cb_key(p, newbyte) ^ cb_key(x, newbyte);
		if (newotherbits)
			break;
	}
	if (newbyte == 17)
		return 0; /* there already */
	newotherbits |= newotherbits >> 1;
	newotherbits |= newotherbits >> 2;
	newotherbits |= newotherbits >> 4;
	newotherbits = (newotherbits & ~(newotherbits >> 1)) ^ 255;
	newdir = cb_dir(&(struct cb_inode){ .otherbits = (uint8_t)newotherbits },
			cb_key(p, newbyte));
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->byte = (uint16_t)newbyte;
	n->otherbits = (uint8_t)newotherbits;
	n->child[1 - newdir] = x;
	wherep = root;
	for (;;) {
		struct cb_inode *q;

		p = *wherep;
		if (!cb_internal(p))
			break;
		q = cb_inode(p);
		if (q->byte > newbyte ||
		    (q->byte == newbyte && q->otherbits > newotherbits))
			break;
		wherep = q->child + cb_dir(q, cb_key(x, q->byte));
	}
	n->child[newdir] = *wherep;
	*wherep = (void *)((uintptr_t)n + 1);
	return 0;
}

static void cb_remove(void **root, struct fib6_node *x)
{
	void **wherep = root, **whereq = NULL, *p = *root;
	struct cb_inode *q = NULL;
	int dir = 0;

	if (!p)
		return;
	while (cb_internal(p)) {
		whereq = wherep;
		q = cb_inode(p);
		dir = cb_dir(q, cb_key(x, q->byte));
		wherep = q->child + dir;
		p = *wherep;
	}
	if (p != x)
		return;
	if (!whereq) {
		*root = NULL;
		return;
	}
	*whereq = q->child[1 - dir];
	free(q);
}

static void cb_free(void *p)
{
	if (p && cb_internal(p)) {
		struct cb_inode *q = cb_inode(p);

		cb_free(q->child[0]);
		cb_free(q->child[1]);
		free(q);
	}
}

/* Bit b (0 = most significant of byte 0) of an address. */
static int addr_bit(const uint8_t *a, unsigned int b)
{
	return a[b / 8] >> (7 - b % 8) & 1;
}

struct node_list {
	struct fib6_node **v;
	size_t n, cap;
};

static void cb_collect(void *p, struct node_list *l)
{
	while (cb_internal(p)) {
		struct cb_inode *q = cb_inode(p);

		cb_collect(q->child[0], l);
		p = q->child[1];
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct fib6_node **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return; /* a marker left stale beats a crash; ENOMEM */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = p;
}

/* Every node whose address lies under p/len (any length). */
static void cb_under(void *root, const uint8_t *p, unsigned int len,
		     struct node_list *l)
{
	void *top = root, *x = root;
	struct fib6_node *leaf;
	uint8_t m[16];

	if (!root)
		return;
	while (cb_internal(x)) {
		struct cb_inode *q = cb_inode(x);
		unsigned int bit = q->byte * 8u +
				   (unsigned int)__builtin_clz(~q->otherbits & 0xffu) - 24;

		if (bit >= len)
			break;
		x = q->child[addr_bit(p, bit)];
		top = x;
	}
	/* Every key under top shares its first len bits: check one. */
	for (leaf = top; cb_internal(leaf);)
		leaf = cb_inode((void *)leaf)->child[0];
	memcpy(m, leaf->addr, 16);
	for (unsigned int b = 0; b < len; b++)
		if (addr_bit(m, b) != addr_bit(p, b))
			return;
	cb_collect(top, l);
}

#define GRACE_NS_DEFAULT 1000000ull

static void mask_addr(const uint8_t *a, uint8_t len, uint8_t *out)
{
	for (int i = 0; i < 16; i++) {
		int bits = len - 8 * i;

		out[i] = bits >= 8 ? a[i] : bits <= 0 ? 0 :
				     a[i] & (uint8_t)(0xff << (8 - bits));
	}
}

static uint32_t node_hash(const uint8_t *a, uint8_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len, w[2];

	memcpy(w, a, 16);
	h = (h ^ w[0]) * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29) ^ w[1]) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h >> 32);
}

static struct fib6_node *node_find(const struct fib6 *f, const uint8_t *a,
				   uint8_t len)
{
	uint32_t h = node_hash(a, len);

	for (struct hnode *n = ht_chain(&f->nodes, h); n; n = n->next) {
		struct fib6_node *x = container_of(n, struct fib6_node, node);

		if (n->hash == h && x->len == len && !memcmp(x->addr, a, 16))
			return x;
	}
	return NULL;
}

static struct fib6_node *node_get(struct fib6 *f, const uint8_t *a,
				  uint8_t len)
{
	struct fib6_node *x = node_find(f, a, len);

	if (x)
		return x;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	memcpy(x->addr, a, 16);
	x->len = len;
	if (cb_insert(&f->tree, x)) {
		free(x);
		return NULL;
	}
	ht_insert(&f->nodes, &x->node, node_hash(a, len));
	return x;
}

static void node_free(struct fib6 *f, struct fib6_node *x)
{
	cb_remove(&f->tree, x);
	ht_remove(&f->nodes, &x->node);
	free(x);
}

/* The best route covering a at length <= len (0: none). */
static uint32_t best_route(const struct fib6 *f, const uint8_t *a,
			   uint8_t len)
{
	uint8_t m[16];

	for (int l = len; l >= 0; l--) {
		struct fib6_node *x;

		if (!f->len_routes[l])
			continue;
		mask_addr(a, (uint8_t)l, m);
		x = node_find(f, m, (uint8_t)l);
		if (x && x->route)
			return x->val;
	}
	return 0;
}

/* Slot k of a table made of chunks c. */
static struct fpmd_v6_slot *chunk_slot(const struct fib6_chunk *c, uint32_t k)
{
	return &c[k >> FPMD_V6_CHUNK_SHIFT].slots[k & (FPMD_V6_CHUNK_SLOTS - 1)];
}

static struct fpmd_v6_slot *slot_at(const struct fib6 *f, uint32_t k)
{
	return chunk_slot(f->chunks, k);
}

static const size_t chunk_bytes =
	(size_t)FPMD_V6_CHUNK_SLOTS * sizeof(struct fpmd_v6_slot);

static void chunks_free(struct fib6_chunk *c, uint32_t n)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].slots)
			munmap(c[i].slots, chunk_bytes);
		if (c[i].fd >= 0)
			close(c[i].fd);
	}
	free(c);
}

static struct fib6_chunk *chunks_alloc(uint32_t n)
{
	struct fib6_chunk *c = calloc(n, sizeof(*c));

	for (uint32_t i = 0; c && i < n; i++)
		c[i].fd = -1;
	return c;
}

static int chunk_mmap(struct fib6_chunk *c)
{
	void *p = mmap(NULL, chunk_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       c->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	c->slots = p;
	return 0;
}

static int chunk_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fpmd_slots6",
				sizeof(__u32), sizeof(struct fpmd_v6_slot),
				FPMD_V6_CHUNK_SLOTS, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * Release outer entries [first, first + n). ARRAY_OF_MAPS has no batch
 * delete and each delete waits an RCU grace period (~15 ms here: seconds
 * for a large table), so they are pointed at one shared empty chunk, the
 * filler, in one batch update (one grace period); the chunks they held
 * are freed.
 */
static void outer_clear(struct fib6 *f, uint32_t first, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	uint32_t *keys = malloc((n + 1) * sizeof(*keys)), cnt = n, id;
	int *fds = malloc((n + 1) * sizeof(*fds));

	if (!keys || !fds)
		goto out;
	if (f->filler_fd < 0)
		f->filler_fd = chunk_create();
	for (uint32_t i = 0; i < n; i++) {
		keys[i] = first + i;
		fds[i] = f->filler_fd;
	}
	if (f->filler_fd >= 0 &&
	    !bpf_map_update_batch(f->outer_fd, keys, fds, &cnt, &bo))
		goto out;
	for (uint32_t i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(f->outer_fd, &keys[i], &id))
			bpf_map_delete_elem(f->outer_fd, &keys[i]);
out:
	free(keys);
	free(fds);
}

/* n new, empty chunks at outer entries [base, base + n). */
static struct fib6_chunk *chunks_create(struct fib6 *f, uint32_t base,
					uint32_t n, int *err)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	struct fib6_chunk *c = chunks_alloc(n);
	uint32_t *keys = malloc(n * sizeof(*keys)), cnt = n;
	int *fds = malloc(n * sizeof(*fds)), ret = -ENOMEM;

	if (!c || !keys || !fds)
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		c[i].fd = chunk_create();
		if (c[i].fd < 0) {
			ret = c[i].fd;
			goto fail;
		}
		ret = chunk_mmap(&c[i]);
		if (ret)
			goto fail;
		keys[i] = base + i;
		fds[i] = c[i].fd;
	}
	if (bpf_map_update_batch(f->outer_fd, keys, fds, &cnt, &bo)) {
		ret = -errno;
		outer_clear(f, base, n);
		goto fail;
	}
	free(keys);
	free(fds);
	return c;
fail:
	chunks_free(c, n);
	free(keys);
	free(fds);
	*err = ret;
	return NULL;
}

static void store32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void slot_key(const struct fib6_node *x, uint64_t *hi, uint64_t *lo)
{
	memcpy(hi, x->addr, 8);
	memcpy(lo, x->addr + 8, 8);
}

static uint32_t slot_tag(const struct fib6_node *x, uint32_t flags)
{
	return FPMD_V6S_VALID | flags | x->len;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void grace(const struct fib6 *f)
{
	uint64_t t = mono_ns() + f->grace_ns;

	while (mono_ns() < t)
		usleep(100);
}

/* The first free slot of (hi, lo, len)'s probe window in a table of
 * mask + 1 slots, or -1. */
static int64_t free_slot(struct fib6_chunk *c, uint32_t mask, uint64_t hi,
			 uint64_t lo, uint32_t len)
{
	uint32_t home = (uint32_t)fpmd_v6_hash(hi, lo, len);

	for (uint32_t p = 0; p < FPMD_V6_MAX_PROBE; p++) {
		uint32_t k = (home + p) & mask;

		if (!(chunk_slot(c, k)->tag & FPMD_V6S_VALID))
			return k;
	}
	return -1;
}

/*
 * Move to a table of n slots: build it in the other half of slots_v6
 * (lookups do not see it yet), flip lens_v6 to it with the same length
 * list, and drop the old chunks once no lookup can still be reading them.
 */
static int resize(struct fib6 *f, uint32_t n)
{
	uint32_t nch = n / FPMD_V6_CHUNK_SLOTS, a,
		 base = f->base ? 0 : f->max_slots / FPMD_V6_CHUNK_SLOTS;
	struct fib6_chunk *c;
	struct hnode *h, *tmp;
	size_t it;
	int ret = 0;

	if (n > f->max_slots || n < FPMD_V6_CHUNK_SLOTS ||
	    f->in_map > n / 10 * 6)
		return -ENOSPC;
	c = chunks_create(f, base, nch, &ret);
	if (!c)
		return ret;
	ht_for_each(&f->nodes, h, tmp, it)
	{
		struct fib6_node *x = container_of(h, struct fib6_node, node);
		struct fpmd_v6_slot *o;
		int64_t k;

		if (!x->in_map)
			continue;
		o = slot_at(f, x->slot);
		k = free_slot(c, n - 1, o->hi, o->lo, x->len);
		if (k < 0) {
			ret = -ENOSPC; /* a full window at a quarter full */
			break;
		}
		x->nslot = (uint32_t)k;
		*chunk_slot(c, (uint32_t)k) = *o;
	}
	if (ret) {
		outer_clear(f, base, nch);
		chunks_free(c, nch);
		return ret;
	}
	if (f->resize_hook)
		f->resize_hook(f, n, false);
	a = f->lens->active & 1;
	memcpy(f->lens->len[!a], f->lens->len[a], FPMD_V6_LENS);
	f->lens->n[!a] = f->lens->n[a];
	f->lens->base[!a] = base;
	f->lens->mask[!a] = n - 1;
	__atomic_store_n(&f->lens->active, !a, __ATOMIC_RELEASE);
	if (f->resize_hook)
		f->resize_hook(f, n, true);
	grace(f);
	outer_clear(f, f->base, f->nslots / FPMD_V6_CHUNK_SLOTS);
	chunks_free(f->chunks, f->nslots / FPMD_V6_CHUNK_SLOTS);
	f->chunks = c;
	f->base = base;
	ht_for_each(&f->nodes, h, tmp, it)
	{
		struct fib6_node *x = container_of(h, struct fib6_node, node);

		if (x->in_map)
			x->slot = x->nslot;
	}
	if (n > f->nslots)
		f->grows++;
	else
		f->shrinks++;
	f->nslots = n;
	return 0;
}

static int grow(struct fib6 *f)
{
	return resize(f, f->nslots * 2);
}

/* Below an eighth full, halve (to a quarter full: no flapping with the
 * growth at half). */
static void shrink(struct fib6 *f)
{
	while (f->nslots > FPMD_V6_CHUNK_SLOTS && f->in_map < f->nslots / 8)
		if (resize(f, f->nslots / 2))
			break;
}

/* Write x's entry: in place when it has a slot, else into the first free
 * slot of its probe window (key and val first, the tag last). A new entry
 * past half full grows the table first. */
static int map_write(struct fib6 *f, struct fib6_node *x, uint32_t v,
		     uint32_t flags)
{
	struct fpmd_v6_slot *s;
	uint64_t hi, lo;
	int64_t k;

	if (x->in_map) {
		s = slot_at(f, x->slot);
		if (s->val != v)
			store32(&s->val, v);
		if (x->wflags != flags)
			store32(&s->tag, slot_tag(x, flags));
		goto done;
	}
	if (f->in_map >= f->max_in_map)
		return -ENOSPC;
	/* A failed grow leaves the table as it was, usable to 60%. */
	if (f->in_map + 1 > f->nslots / 2 && f->nslots < f->max_slots)
		grow(f);
	if (f->in_map >= f->nslots / 10 * 6)
		return -ENOSPC;
	slot_key(x, &hi, &lo);
	k = free_slot(f->chunks, f->nslots - 1, hi, lo, x->len);
	if (k < 0 && f->nslots < f->max_slots && !grow(f))
		k = free_slot(f->chunks, f->nslots - 1, hi, lo, x->len);
	if (k < 0)
		return -ENOSPC; /* a full probe window: very rare below 60% */
	s = slot_at(f, (uint32_t)k);
	__atomic_store_n(&s->hi, hi, __ATOMIC_RELAXED);
	__atomic_store_n(&s->lo, lo, __ATOMIC_RELAXED);
	store32(&s->val, v);
	store32(&s->tag, slot_tag(x, flags));
	x->slot = (uint32_t)k;
	x->in_map = true;
	f->in_map++;
done:
	f->map_writes++;
	x->written = v;
	x->wflags = flags;
	return 0;
}

/* A tombstone; then tombstones followed by an empty slot become empty
 * (no probe sequence can pass them), walking back. */
static void map_remove(struct fib6 *f, struct fib6_node *x)
{
	uint32_t mask = f->nslots - 1, k;

	if (!x->in_map)
		return;
	k = x->slot;
	store32(&slot_at(f, k)->tag, FPMD_V6S_TOMB);
	while (slot_at(f, (k + 1) & mask)->tag == FPMD_V6S_EMPTY &&
	       slot_at(f, k)->tag == FPMD_V6S_TOMB) {
		store32(&slot_at(f, k)->tag, FPMD_V6S_EMPTY);
		k = (k - 1) & mask;
	}
	f->map_writes++;
	f->in_map--;
	x->in_map = false;
}

/* Bring x's slots_v6 entry up to date; drop x when nothing needs it. */
static int node_sync(struct fib6 *f, struct fib6_node *x, bool keep)
{
	uint32_t v, flags;

	if (!x->route && !x->refs && !keep) {
		map_remove(f, x);
		node_free(f, x);
		return 0;
	}
	v = x->route ? x->val : best_route(f, x->addr, x->len);
	flags = x->route ? FPMD_V6S_ROUTE : 0;
	if (x->in_map && x->written == v && x->wflags == flags)
		return 0;
	return map_write(f, x, v, flags);
}

/* The marker lengths on the search path to len in lens[0..n). */
static int search_path(const uint8_t *lens, uint32_t n, uint8_t len,
		       uint8_t *out)
{
	uint32_t lo = 0, hi = n;
	int k = 0;

	while (lo < hi) {
		uint32_t mid = (lo + hi) >> 1;

		if (lens[mid] < len) {
			out[k++] = lens[mid];
			lo = mid + 1;
		} else if (lens[mid] > len) {
			hi = mid;
		} else {
			break;
		}
	}
	return k;
}

static int markers_adjust(struct fib6 *f, const uint8_t *a, uint8_t len,
			  int delta)
{
	uint8_t path[FPMD_V6_PROBES + 1], m[16];
	int n = search_path(f->lens_in_use, f->nlens, len, path), ret = 0;

	for (int i = 0; i < n; i++) {
		struct fib6_node *x;

		mask_addr(a, path[i], m);
		x = delta > 0 ? node_get(f, m, path[i]) : node_find(f, m, path[i]);
		if (!x)
			return delta > 0 ? -ENOMEM : 0;
		x->refs += delta;
		if (node_sync(f, x, false) && !ret)
			ret = -ENOSPC;
	}
	return ret;
}

/* Markers longer than p/len under it: their best route may have changed. */
static void update_below(struct fib6 *f, const uint8_t *p, uint8_t len)
{
	struct node_list l = { 0 };

	cb_under(f->tree, p, len, &l);
	for (size_t i = 0; i < l.n; i++) {
		struct fib6_node *x = l.v[i];

		if (x->len > len && !x->route && x->refs)
			node_sync(f, x, false);
	}
	free(l.v);
}

/*
 * The set of prefix lengths changed: recompute every marker for the new
 * search order, write what changed, flip lens_v6, then drop the markers
 * only the old order needed.
 */
static int rebuild(struct fib6 *f)
{
	uint8_t lens[FPMD_V6_LENS], path[FPMD_V6_PROBES + 1], m[16];
	struct fib6_node **routes, *x;
	struct hnode *n, *tmp;
	uint32_t nl = 0, nr = 0, a;
	bool same, stale = false;
	size_t it;
	int ret = 0;

	f->rebuilds++;
	for (int l = 0; l < FPMD_V6_LENS; l++)
		if (f->len_routes[l])
			lens[nl++] = (uint8_t)l;
	routes = malloc((f->nroutes + 1) * sizeof(*routes));
	if (!routes)
		return -ENOMEM;
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		x->mark = 0;
		if (x->route)
			routes[nr++] = x;
	}
	for (uint32_t i = 0; i < nr; i++) {
		int k = search_path(lens, nl, routes[i]->len, path);

		for (int j = 0; j < k; j++) {
			mask_addr(routes[i]->addr, path[j], m);
			x = node_get(f, m, path[j]);
			if (!x) {
				ret = -ENOMEM;
				break;
			}
			x->mark++;
		}
	}
	free(routes);
	/* Before the flip, both orders' markers must answer right. */
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->refs && !x->mark) {
			/* Neither order passes here (a deleted route). */
			map_remove(f, x);
			node_free(f, x);
			continue;
		}
		if (!ret)
			ret = node_sync(f, x, true);
	}
	if (ret)
		goto sweep_new; /* the old order stays in force */
	same = nl == f->nlens && !memcmp(lens, f->lens_in_use, nl);
	if (!same) {
		a = f->lens->active & 1;
		memcpy(f->lens->len[!a], lens, nl);
		f->lens->n[!a] = nl;
		f->lens->base[!a] = f->base;
		f->lens->mask[!a] = f->nslots - 1;
		__atomic_store_n(&f->lens->active, !a, __ATOMIC_RELEASE);
		memcpy(f->lens_in_use, lens, nl);
		f->nlens = nl;
	}
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->mark && x->in_map)
			stale = true;
		x->refs = x->mark;
	}
	if (stale && !same)
		grace(f);
sweep_new:
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->refs) {
			map_remove(f, x);
			node_free(f, x);
		}
	}
	return ret;
}

int fib6_add(struct fib6 *f, const uint8_t a[16], uint8_t len, uint32_t val)
{
	struct fib6_node *x;
	uint8_t p[16];
	int ret;

	if (len > 128 || FPMD_RT_TYPE(val) == FPMD_RT_NONE)
		return -EINVAL;
	mask_addr(a, len, p);
	x = node_find(f, p, len);
	if (x && x->route) {
		if (x->val == val)
			return 0;
		x->val = val;
		ret = node_sync(f, x, false);
		update_below(f, p, len);
		return ret;
	}
	if (f->in_map + FPMD_V6_PROBES + 1 > f->max_in_map)
		return -ENOSPC;
	x = node_get(f, p, len);
	if (!x)
		return -ENOMEM;
	x->route = true;
	x->val = val;
	f->nroutes++;
	if (!f->len_routes[len]++) {
		ret = rebuild(f);
		if (ret) {
			x->route = false;
			f->nroutes--;
			f->len_routes[len]--;
			node_sync(f, x, false);
		}
		return ret;
	}
	ret = markers_adjust(f, p, len, 1);
	if (!ret)
		ret = node_sync(f, x, false);
	if (ret) {
		x->route = false;
		f->nroutes--;
		f->len_routes[len]--;
		node_sync(f, x, false);
		markers_adjust(f, p, len, -1);
		return ret;
	}
	update_below(f, p, len);
	return 0;
}

int fib6_del(struct fib6 *f, const uint8_t a[16], uint8_t len)
{
	struct fib6_node *x;
	uint8_t p[16];

	if (len > 128)
		return -EINVAL;
	mask_addr(a, len, p);
	x = node_find(f, p, len);
	if (!x || !x->route)
		return -ENOENT;
	x->route = false;
	f->nroutes--;
	if (!--f->len_routes[len]) {
		int ret = rebuild(f);

		shrink(f);
		return ret;
	}
	node_sync(f, x, false); /* a marker now, or gone */
	update_below(f, p, len);
	markers_adjust(f, p, len, -1);
	shrink(f);
	return 0;
}

uint32_t fib6_lookup(const struct fib6 *f, const uint8_t a[16])
{
	uint32_t lo = 0, hi = f->nlens, best = 0;
	uint8_t m[16];

	while (lo < hi) {
		uint32_t mid = (lo + hi) >> 1;
		struct fib6_node *x;

		mask_addr(a, f->lens_in_use[mid], m);
		x = node_find(f, m, f->lens_in_use[mid]);
		if (x && x->in_map) {
			if (x->written)
				best = x->written;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return best;
}

int fib6_foreach(const struct fib6 *f,
		 int (*cb)(const uint8_t addr[16], uint8_t len, uint32_t val,
			   void *arg),
		 void *arg)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&f->nodes, n, tmp, i)
	{
		struct fib6_node *x = container_of(n, struct fib6_node, node);
		int ret;

		if (!x->route)
			continue;
		ret = cb(x->addr, x->len, x->val, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* The chunks of the table lens_v6 points at, as a previous fpmd left
 * them; 0 with f->chunks NULL when there is no valid one. */
static int adopt_chunks(struct fib6 *f)
{
	uint32_t a = f->lens->active & 1, n = f->lens->mask[a] + 1,
		 base = f->lens->base[a], half = f->max_slots / FPMD_V6_CHUNK_SLOTS,
		 nch = n / FPMD_V6_CHUNK_SLOTS;
	struct fib6_chunk *c;

	if ((n & (n - 1)) || n < FPMD_V6_CHUNK_SLOTS || n > f->max_slots ||
	    (base != 0 && base != half))
		return 0;
	c = chunks_alloc(nch);
	if (!c)
		return -ENOMEM;
	for (uint32_t i = 0; i < nch; i++) {
		struct bpf_map_info info = { 0 };
		uint32_t k = base + i, id, ilen = sizeof(info);

		if (bpf_map_lookup_elem(f->outer_fd, &k, &id))
			goto invalid;
		c[i].fd = bpf_map_get_fd_by_id(id);
		if (c[i].fd < 0 ||
		    bpf_obj_get_info_by_fd(c[i].fd, &info, &ilen) ||
		    info.max_entries != FPMD_V6_CHUNK_SLOTS ||
		    info.value_size != sizeof(struct fpmd_v6_slot) ||
		    chunk_mmap(&c[i]))
			goto invalid;
	}
	f->chunks = c;
	f->nslots = n;
	f->base = base;
	/* A grow cut short: its half-built table is nobody's. Unused
	 * entries all hold the one filler: more than one map there is such
	 * a table. */
	for (uint32_t i = 0, k = base ? 0 : half, id0 = 0, id; i < half;
	     i++, k++) {
		if (bpf_map_lookup_elem(f->outer_fd, &k, &id))
			continue;
		if (!id0)
			id0 = id;
		if (id != id0) {
			outer_clear(f, base ? 0 : half, half);
			break;
		}
	}
	return 0;
invalid:
	chunks_free(c, nch);
	return 0;
}

/* A new, empty table of one chunk; lookups miss until routes come. */
static int fresh_table(struct fib6 *f)
{
	int ret = 0;

	uint32_t k, id;

	/* Maps reused without adoption (tests): free what they hold. */
	for (k = 0; k < 2 * (f->max_slots / FPMD_V6_CHUNK_SLOTS); k++)
		if (!bpf_map_lookup_elem(f->outer_fd, &k, &id))
			break;
	if (k < 2 * (f->max_slots / FPMD_V6_CHUNK_SLOTS))
		outer_clear(f, 0, 2 * (f->max_slots / FPMD_V6_CHUNK_SLOTS));
	f->chunks = chunks_create(f, 0, 1, &ret);
	if (!f->chunks)
		return ret;
	f->nslots = FPMD_V6_CHUNK_SLOTS;
	f->base = 0;
	memset(f->lens, 0, sizeof(*f->lens));
	f->lens->mask[0] = f->lens->mask[1] = f->nslots - 1;
	return 0;
}

/* Take slots_v6 and lens_v6 as a previous fpmd left them. */
static int adopt(struct fib6 *f)
{
	uint32_t a;
	int ret = adopt_chunks(f);

	if (ret)
		return ret;
	if (!f->chunks)
		return fresh_table(f); /* nothing to adopt: start empty */
	a = f->lens->active & 1;
	f->nlens = f->lens->n[a] <= FPMD_V6_LENS ? f->lens->n[a] : 0;
	memcpy(f->lens_in_use, f->lens->len[a], f->nlens);
	for (uint32_t k = 0; k < f->nslots; k++) {
		struct fpmd_v6_slot *s = slot_at(f, k);
		uint8_t addr[16], m[16];
		uint32_t len = FPMD_V6S_LEN(s->tag);
		struct fib6_node *x;

		if (!(s->tag & FPMD_V6S_VALID))
			continue;
		memcpy(addr, &s->hi, 8);
		memcpy(addr + 8, &s->lo, 8);
		mask_addr(addr, (uint8_t)len, m);
		if (len > 128 || memcmp(m, addr, 16) || node_find(f, m, (uint8_t)len)) {
			store32(&s->tag, FPMD_V6S_TOMB); /* torn or foreign */
			continue;
		}
		x = node_get(f, m, (uint8_t)len);
		if (!x)
			return -ENOMEM;
		x->in_map = true;
		x->slot = k;
		f->in_map++;
		x->written = s->val;
		x->wflags = s->tag & FPMD_V6S_ROUTE;
		x->refs = 1; /* kept until the lens_v6 in force is settled */
		if ((s->tag & FPMD_V6S_ROUTE) &&
		    FPMD_RT_TYPE(s->val) != FPMD_RT_NONE) {
			x->route = true;
			x->val = s->val;
			f->nroutes++;
			f->len_routes[x->len]++;
		}
	}
	return rebuild(f);
}

uint32_t fib6_slots_for(uint32_t max_routes)
{
	uint64_t want = (uint64_t)max_routes * FPMD_V6_ENTRIES_PER_ROUTE * 2;
	uint32_t n = FPMD_V6_CHUNK_SLOTS;

	while (n < want && n < (1u << 31))
		n <<= 1;
	return n;
}

int fib6_open(struct fib6 *f, int slots_fd, int lens_fd, uint32_t max_slots,
	      bool adopt_maps)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int ret = -ENOMEM;
	void *p;

	memset(f, 0, sizeof(*f));
	f->filler_fd = -1;
	if (max_slots < FPMD_V6_CHUNK_SLOTS || (max_slots & (max_slots - 1)))
		return -EINVAL;
	f->outer_fd = slots_fd;
	f->max_slots = max_slots;
	f->max_in_map = max_slots / 10 * 6;
	f->grace_ns = GRACE_NS_DEFAULT;
	f->lens_len = (sizeof(struct fpmd_v6_lens) + pg - 1) / pg * pg;
	p = mmap(NULL, f->lens_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 lens_fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	f->lens = p;
	if (ht_init(&f->nodes, 1024))
		goto fail;
	ret = adopt_maps ? adopt(f) : fresh_table(f);
	if (ret)
		goto fail;
	return 0;
fail:
	fib6_close(f);
	return ret;
}

void fib6_close(struct fib6 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	cb_free(f->tree);
	if (f->nodes.b) {
		ht_for_each(&f->nodes, n, tmp, i)
			free(container_of(n, struct fib6_node, node));
		ht_free(&f->nodes);
	}
	/* The chunks stay in slots_v6 (pinned) for the next fpmd. */
	chunks_free(f->chunks, f->nslots / FPMD_V6_CHUNK_SLOTS);
	if (f->lens && f->filler_fd >= 0) /* opened */
		close(f->filler_fd);
	if (f->lens)
		munmap(f->lens, f->lens_len);
	memset(f, 0, sizeof(*f));
	f->filler_fd = -1;
}
