// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Object caches in slabs of their own (slab.h says why). A slab is
 * SLAB_SIZE bytes aligned to SLAB_SIZE, so an object finds its slab by
 * masking its address; the header sits at the slab's start. Objects are
 * handed out from the slab's free list, then from the part never used
 * yet, which is zero already (a new slab costs no walk and a fresh
 * object no memset). Slabs with room are on their cache's partial list,
 * most recently freed into first; full ones are on no list; an empty
 * one is kept (SLAB_KEEP, all its pages but the header's returned with
 * MADV_DONTNEED) or unmapped.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/slab.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define POISONED(p) __asan_address_is_poisoned(p)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#define POISONED(p) ((void)(p), 0)
#endif

struct slab {
	struct slab *prev, *next; /* on the partial or empty list */
	struct slab_cache *cache;
	void *free;	/* freed objects, linked through them */
	uint32_t used;	/* objects handed out */
	uint32_t fresh; /* objects [fresh, per_slab) never handed out */
};

#define SLAB_HDR ((sizeof(struct slab) + 15) & ~(size_t)15)
#define SLAB_PAGE ((size_t)4096) /* the header's, kept when a slab is */

static struct slab_cache *caches;

static struct slab *slab_of(const void *p)
{
	return (struct slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1));
}

static char *slab_obj(const struct slab_cache *c, struct slab *s, uint32_t i)
{
	return (char *)s + SLAB_HDR + (size_t)i * c->osize;
}

static void list_del(struct slab **head, struct slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		*head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void list_add(struct slab **head, struct slab *s)
{
	s->prev = NULL;
	s->next = *head;
	if (*head)
		(*head)->prev = s;
	*head = s;
}

/* SLAB_SIZE bytes aligned to SLAB_SIZE: map twice that, cut the rest. */
static struct slab *slab_map(struct slab_cache *c)
{
	size_t lead;
	char *m = mmap(NULL, 2 * SLAB_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct slab *s;

	if (m == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	lead = (SLAB_SIZE - ((uintptr_t)m & (SLAB_SIZE - 1))) & (SLAB_SIZE - 1);
	if (lead)
		munmap(m, lead);
	munmap(m + lead + SLAB_SIZE, SLAB_SIZE - lead);
	s = (struct slab *)(m + lead);
#ifdef MADV_POPULATE_WRITE
	/* Its pages in one call, not a fault each (a fault costs more
	 * than the rest of an allocation, the more so in a VM). */
	madvise(s, SLAB_SIZE, MADV_POPULATE_WRITE);
#endif
	s->cache = c;
	POISON((char *)s + SLAB_HDR, SLAB_SIZE - SLAB_HDR);
	return s;
}

static void slab_unmap(struct slab *s)
{
	/* The addresses may be mapped again by anyone: no poison left. */
	UNPOISON(s, SLAB_SIZE);
	munmap(s, SLAB_SIZE);
}

static void cache_setup(struct slab_cache *c)
{
	c->osize = (c->size + 15) & ~(size_t)15;
	if (c->osize < sizeof(void *))
		c->osize = sizeof(void *);
	c->per_slab = (uint32_t)((SLAB_SIZE - SLAB_HDR) / c->osize);
	c->next = caches;
	caches = c;
}

void *slab_alloc(struct slab_cache *c)
{
	struct slab *s;
	char *p;

	if (!c->osize)
		cache_setup(c);
	s = c->partial;
	if (!s) {
		s = c->empty;
		if (s) {
			list_del(&c->empty, s);
			c->nempty--;
			/* The rest of the header's page kept its old objects
			 * (slab_free): zero, as the other pages are. */
			UNPOISON((char *)s + SLAB_HDR, SLAB_PAGE - SLAB_HDR);
			memset((char *)s + SLAB_HDR, 0, SLAB_PAGE - SLAB_HDR);
			POISON((char *)s + SLAB_HDR, SLAB_PAGE - SLAB_HDR);
		} else if (!(s = slab_map(c))) {
			return NULL;
		}
		s->free = NULL;
		s->used = s->fresh = 0;
		list_add(&c->partial, s);
	}
	if (s->free) {
		p = s->free;
		UNPOISON(p, c->osize);
		s->free = *(void **)p;
		memset(p, 0, c->size);
	} else {
		p = slab_obj(c, s, s->fresh++);
		UNPOISON(p, c->osize);
	}
	if (++s->used == c->per_slab)
		list_del(&c->partial, s);
	c->objects++;
	return p;
}

void slab_free(struct slab_cache *c, void *p)
{
	struct slab *s;

	if (!p)
		return;
	s = slab_of(p);
	if (s->cache != c || POISONED(p)) {
		fprintf(stderr, "slab %s: free of %p: %s\n", c->name, p,
			s->cache != c ? "not this cache's object"
				      : "already free");
		abort();
	}
	if (s->used == c->per_slab)
		list_add(&c->partial, s);
	*(void **)p = s->free;
	s->free = p;
	POISON(p, c->osize);
	c->objects--;
	if (--s->used)
		return;
	list_del(&c->partial, s);
	if (c->nempty < SLAB_KEEP) {
		list_add(&c->empty, s);
		c->nempty++;
		madvise((char *)s + SLAB_PAGE, SLAB_SIZE - SLAB_PAGE,
			MADV_DONTNEED);
	} else {
		slab_unmap(s);
	}
}

uint64_t slab_in_use(void)
{
	uint64_t n = 0;

	for (const struct slab_cache *c = caches; c; c = c->next)
		n += c->objects * c->osize;
	return n;
}
