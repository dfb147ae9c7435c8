// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The IPv6 nodes in address order, so that the markers under a prefix
 * are found without a scan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib6_priv.h"

/* ---- nodes in address order: a crit-bit tree (after D. J. Bernstein,
 * A. Langley) on the 17-byte key address, length ---- */

struct cb_inode {
	void *child[2];
	uint16_t byte;
	uint8_t otherbits;
};

/* One branch per node but the first (common/slab.h). */
static struct slab_cache cb_inode_cache =
	SLAB_CACHE_INIT("IPv6 tree branches", struct cb_inode);

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

int fib6_cb_insert(void **root, struct fib6_node *x)
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
	n = slab_alloc(&cb_inode_cache);
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

void fib6_cb_remove(void **root, struct fib6_node *x)
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
	slab_free(&cb_inode_cache, q);
}

void fib6_cb_free(void *p)
{
	if (p && cb_internal(p)) {
		struct cb_inode *q = cb_inode(p);

		fib6_cb_free(q->child[0]);
		fib6_cb_free(q->child[1]);
		slab_free(&cb_inode_cache, q);
	}
}

/* Bit b (0 = most significant of byte 0) of an address. */
static int addr_bit(const uint8_t *a, unsigned int b)
{
	return a[b / 8] >> (7 - b % 8) & 1;
}

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
void fib6_cb_under(void *root, const uint8_t *p, unsigned int len,
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
