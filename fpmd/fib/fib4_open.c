// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Taking the IPv4 maps: sizing them, opening them fresh or adopting what
 * a previous fpmd left (rules_v4 replayed into private tables, written
 * back only where they differ), closing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/fib4_priv.h"

#define GRACE_NS_DEFAULT 1000000ull /* 1 ms */

/* ---- open, adopt, close ---- */

static void *map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Sort n 64-bit keys: LSD radix, 16 bits a pass, passes whose digit is
 * the same in every key skipped. qsort took ~180 ms of a 1M adoption.
 * tmp has room for n keys; the result ends in a. 0 or -ENOMEM.
 */
static int sort_u64(uint64_t *a, size_t n)
{
	uint64_t *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *src = a, *dst;
	size_t *cnt = calloc(65536, sizeof(*cnt));

	if (!tmp || !cnt) {
		free(tmp);
		free(cnt);
		return -ENOMEM;
	}
	dst = tmp;
	for (unsigned int sh = 0; sh < 64; sh += 16) {
		size_t sum = 0;

		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(src[i] >> sh) & 0xffff]++;
		if (n && cnt[(src[0] >> sh) & 0xffff] == n)
			continue; /* one digit everywhere: already in order */
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> sh) & 0xffff]++] = src[i];
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(cnt);
	return 0;
}

/* The words of the parts the maps hold (NULL where no part). */
/* Read from inside the kernel: a batch lookup costs ~2.6 ms a part. */
static int read_live(struct fib4 *f, uint64_t **live)
{
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		int ret;

		if (f->parts.state[p] != CHUNK_LIVE)
			continue;
		live[p] = malloc(FPMD_TBL24_PART_WORDS * 8);
		if (!live[p])
			return -ENOMEM;
		ret = fib4_run_commit(f, p, 0, part_words(p) - 1,
				      FPMD_TBL24_READ);
		if (ret)
			return ret;
		memcpy(live[p], f->stage, (size_t)part_words(p) * 8);
	}
	return 0;
}

static uint32_t live24(const struct fib4 *f, uint64_t *const *live,
		       uint32_t i)
{
	uint32_t p = i / PE;

	if (live[p])
		return ((const uint32_t *)live[p])[i - p * PE];
	return (uint32_t)f->dflt[p];
}

/* Runs of words of part p that differ from the live ones, written. */
static int adopt_part(struct fib4 *f, uint32_t p, const uint64_t *live)
{
	const uint64_t *want = (const uint64_t *)f->part[p]->t;
	uint32_t n = part_words(p);
	int ret = 0;

	for (uint32_t w = 0; w < n && !ret; w++) {
		uint32_t end = w;

		if (want[w] == live[w])
			continue;
		while (end + 1 < n && want[end + 1] != live[end + 1])
			end++;
		f->entry_writes += end - w + 1;
		ret = fib4_write_words(f, p, w, end, want + w);
		w = end;
	}
	return ret;
}

/* Part p is uniform: its default, and a live part dropped after. */
static int adopt_uniform(struct fib4 *f, uint32_t p, const uint64_t *live)
{
	uint64_t v = f->dval[p], img[FPMD_TBL24_PART_WORDS];
	int ret = 0;

	if (f->dflt[p] != v) {
		f->entry_writes++;
		__atomic_store_n(&f->dflt[p], v, __ATOMIC_RELEASE);
	}
	if (!live)
		return 0;
	for (uint32_t k = 0; k < part_words(p); k++)
		img[k] = v | v << 32;
	if (memcmp(img, live, part_words(p) * 8)) {
		f->entry_writes += part_words(p);
		ret = fib4_write_words(f, p, 0, part_words(p) - 1, img);
	}
	chunks_drop(&f->parts, p);
	return ret;
}

/*
 * Replay rules_v4 into private tables (shortest prefixes first, each /24
 * keeping the tbl8 group number it has in the live tables), then write
 * the live ones only where they differ: groups first, tbl24 last. Parts
 * and chunks absent from the maps are never read.
 */
static int adopt(struct fib4 *f)
{
	uint64_t **live = calloc(FPMD_TBL24_PARTS, sizeof(*live));
	uint64_t *recs = NULL; /* length, address, slot: see REC_KEY */
	uint32_t n = 0, nrec = 0;
	int ret = 0;

	f->t8priv = calloc((size_t)f->ngroups * FPMD_TBL8_GROUP, 4);
	if (!live || !f->t8priv) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_live(f, live);
	if (ret)
		goto out;
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		const uint32_t *e = (const uint32_t *)live[p];

		for (uint32_t k = 0; e && k < part_len(p); k++) {
			uint32_t g = FPMD_RT_INDEX(e[k]);

			if (FPMD_RT_TYPE(e[k]) != FPMD_RT_TBL8 ||
			    g >= f->ngroups || f->g_state[g] ||
			    f->t8c.state[g / FPMD_TBL8_CHUNK_GROUPS] !=
				    CHUNK_LIVE)
				continue;
			f->g_state[g] = 2;
			f->t8_busy[g / FPMD_TBL8_CHUNK_GROUPS]++;
			f->groups_used++;
		}
	}
	for (uint32_t c = 0; c < f->rulec.max_chunks; c++)
		if (chunks_present(&f->rulec, c))
			nrec += FPMD_RULES_CHUNK;
	recs = calloc(nrec ? nrec : 1, sizeof(*recs));
	if (!recs) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < f->nslots; s++) {
		struct fpmd_rule_v4 *rec;
		uint32_t addr;

		if (!chunks_present(&f->rulec, s / FPMD_RULES_CHUNK)) {
			s = (s / FPMD_RULES_CHUNK + 1) * FPMD_RULES_CHUNK - 1;
			continue;
		}
		rec = rec_of(f, s);
		if (!(rec->flags & FPMD_RULE_F_USED))
			continue;
		if (rec->len > 32 || FPMD_RT_TYPE(rec->val) == FPMD_RT_NONE ||
		    FPMD_RT_TYPE(rec->val) == FPMD_RT_TBL8) {
			rec->flags = 0; /* torn or foreign: drop it */
			continue;
		}
		memcpy(&addr, rec->addr, 4);
		addr = __builtin_bswap32(addr) & mask_of(rec->len);
		/* Shortest first; a duplicate lands next to its first. */
		recs[n++] = (uint64_t)rec->len << 58 | (uint64_t)addr << 26 | s;
	}
	ret = sort_u64(recs, n);
	if (ret)
		goto out;
	/* Room for every prefix at once, not ten doublings. */
	while (f->by_prefix.nbuckets < n)
		ht_grow(&f->by_prefix);
	f->adopting = true;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t slot = (uint32_t)(recs[k] & ((1u << 26) - 1)), e;
		uint32_t addr = (uint32_t)(recs[k] >> 26);
		struct fpmd_rule_v4 *rec = rec_of(f, slot);

		if (k && recs[k] >> 26 == recs[k - 1] >> 26) {
			rec->flags = 0; /* a duplicate: keep the first */
			continue;
		}
		if (!fib4_rule_new(f, addr, rec->len, rec->val, slot)) {
			ret = -ENOMEM;
			goto out;
		}
		fib4_slot_mark(f, slot);
		e = rec->len > 24 ? live24(f, live, addr >> 8) : 0;
		ret = fib4_paint_add(f, addr, rec->len, rec->val,
				     FPMD_RT_TYPE(e) == FPMD_RT_TBL8 ?
					     FPMD_RT_INDEX(e) : UINT32_MAX);
		if (ret)
			goto out;
	}
	/* Which copies are uniform, counted once rather than per entry. */
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		struct fib4_part *P = f->part[p];

		if (!P)
			continue;
		P->nb = 0;
		for (uint32_t k = 0; k < part_len(p); k++)
			P->nb += (FPMD_RT_TYPE(P->t[k]) == FPMD_RT_TBL8) +
				 (k && (P->t[k - 1] != P->t[k] ||
					P->d[k - 1] != P->d[k]));
		if (!P->nb)
			fib4_dematerialize(f, p);
	}
	f->dirty_lo = f->chg_lo = 1;
	f->dirty_hi = f->chg_hi = 0;
	f->adopting = false;
	f->entry_writes = 0;
	/* tbl8 first: every group tbl24 will point at, complete. */
	for (uint32_t g = 0; g < f->ngroups && !ret; g++) {
		const uint32_t *want = f->t8priv + (size_t)g * FPMD_TBL8_GROUP;
		uint32_t *t8;

		if (f->g_state[g] != 1)
			continue;
		ret = chunks_get(&f->t8c, g / FPMD_TBL8_CHUNK_GROUPS, true);
		if (ret)
			break;
		t8 = grp(f, g);
		for (uint32_t j = 0; j < FPMD_TBL8_GROUP; j++)
			if (t8[j] != want[j]) {
				store(&t8[j], want[j]);
				f->entry_writes++;
			}
	}
	if (!ret)
		ret = chunks_commit(&f->t8c, 0);
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS && !ret; p++) {
		if (!f->part[p])
			ret = adopt_uniform(f, p, live[p]);
		else if (live[p])
			ret = adopt_part(f, p, live[p]);
		else
			ret = chunks_get(&f->parts, p, true);
	}
	if (!ret)
		ret = fib4_commit(f, 0);
	/* Groups the old tables used that no prefix needs any more. */
	for (uint32_t g = 0; g < f->ngroups; g++)
		if (f->g_state[g] == 2)
			fib4_group_free(f, g);
out:
	f->adopting = false;
	if (live)
		for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
			free(live[p]);
	free(live);
	free(f->t8priv);
	f->t8priv = NULL;
	free(recs);
	return ret;
}

void fib4_size(struct bpf_object *obj, uint32_t ngroups, uint32_t nslots)
{
	struct bpf_map *t8 = bpf_object__find_map_by_name(obj, "tbl8");
	struct bpf_map *rl = bpf_object__find_map_by_name(obj, "rules_v4");
	struct bpf_map *t24 = bpf_object__find_map_by_name(obj, "tbl24");
	struct bpf_map *fill = bpf_object__find_map_by_name(obj, "tbl24_fill");

	if (!ngroups || !nslots) {
		bpf_map__set_max_entries(t24, 1);
		bpf_map__set_max_entries(fill, 1);
		bpf_map__set_max_entries(t8, 1);
		bpf_map__set_max_entries(rl, 1);
		return;
	}
	bpf_map__set_max_entries(t8, (ngroups + FPMD_TBL8_CHUNK_GROUPS - 1) /
					     FPMD_TBL8_CHUNK_GROUPS);
	bpf_map__set_max_entries(rl, (nslots + FPMD_RULES_CHUNK - 1) /
					     FPMD_RULES_CHUNK);
}

void fib4_maps_of(struct bpf_object *obj, struct fib4_maps *m)
{
	struct bpf_program *prog =
		bpf_object__find_program_by_name(obj, "fpmd_tbl24_commit");

	m->tbl24 = bpf_object__find_map_fd_by_name(obj, "tbl24");
	m->tbl24_dflt = bpf_object__find_map_fd_by_name(obj, "tbl24_dflt");
	m->tbl24_fill = bpf_object__find_map_fd_by_name(obj, "tbl24_fill");
	m->tbl8 = bpf_object__find_map_fd_by_name(obj, "tbl8");
	m->rules_v4 = bpf_object__find_map_fd_by_name(obj, "rules_v4");
	m->tbl24_stage = bpf_object__find_map_fd_by_name(obj, "tbl24_stage");
	m->commit_prog = prog ? bpf_program__fd(prog) : -1;
}

int fib4_open(struct fib4 *f, const struct fib4_maps *m, uint32_t ngroups,
	      uint32_t nslots, bool adopt_maps)
{
	size_t dlen = FPMD_TBL24_PARTS * 8;
	int ret = -ENOMEM;

	memset(f, 0, sizeof(*f));
	/* Slots up to 2^26: adoption sorts them in one 64-bit key. */
	if (!ngroups || ngroups > FPMD_TBL8_MAX_GROUPS || !nslots ||
	    nslots > 1u << 26)
		return -EINVAL;
	f->ngroups = ngroups;
	f->nslots = nslots;
	f->grace_ns = GRACE_NS_DEFAULT;
	f->dirty_lo = f->chg_lo = 1;
	f->commit_fd = m->commit_prog;
	f->fill_fd = m->tbl24_fill;
	f->fill_keys = calloc(FPMD_TBL24_PARTS, sizeof(*f->fill_keys));
	f->in_fill = calloc(FPMD_TBL24_PARTS, 1);
	f->dflt = map_mmap(m->tbl24_dflt, dlen);
	f->stage = map_mmap(m->tbl24_stage, FPMD_TBL24_STAGE_WORDS * 8);
	f->sc = malloc((size_t)FPMD_TBL24_SCATTER_MAX * 16);
	if (!f->dflt || !f->stage || !f->fill_keys || !f->in_fill || !f->sc) {
		ret = -errno;
		goto fail;
	}
	f->part = calloc(FPMD_TBL24_PARTS, sizeof(*f->part));
	f->dval = calloc(FPMD_TBL24_PARTS, sizeof(*f->dval));
	f->dlen = calloc(FPMD_TBL24_PARTS, 1);
	f->d8 = calloc((size_t)ngroups * FPMD_TBL8_GROUP, 1);
	f->g_state = calloc(ngroups, 1);
	f->g_queue = calloc(ngroups, sizeof(*f->g_queue));
	f->g_freed_ns = calloc(ngroups, sizeof(*f->g_freed_ns));
	f->slot_used = calloc(nslots / 64 + 1, sizeof(*f->slot_used));
	f->chunk_rules = calloc(nslots / FPMD_RULES_CHUNK + 1,
				sizeof(*f->chunk_rules));
	f->t8_busy = calloc(ngroups / FPMD_TBL8_CHUNK_GROUPS + 1,
			    sizeof(*f->t8_busy));
	if (!f->part || !f->dval || !f->dlen || !f->d8 || !f->g_state ||
	    !f->g_queue || !f->g_freed_ns || !f->slot_used ||
	    !f->chunk_rules || !f->t8_busy ||
	    ht_init(&f->by_prefix, 1024))
		goto fail;
	ret = chunks_open(&f->parts, m->tbl24, 8, FPMD_TBL24_PART_WORDS, false,
			  adopt_maps);
	if (!ret)
		ret = chunks_open(&f->t8c, m->tbl8, 8, FPMD_TBL8_CHUNK_WORDS,
				  true, adopt_maps);
	if (!ret)
		ret = chunks_open(&f->rulec, m->rules_v4,
				  sizeof(struct fpmd_rule_v4), FPMD_RULES_CHUNK,
				  true, adopt_maps);
	if (ret)
		goto fail;
	if (f->t8c.max_chunks * FPMD_TBL8_CHUNK_GROUPS < ngroups ||
	    f->rulec.max_chunks * FPMD_RULES_CHUNK < nslots) {
		ret = -EINVAL; /* maps sized for less: see fib4_size() */
		goto fail;
	}
	if (adopt_maps) {
		uint32_t k, *pk = NULL;

		/* What tbl24_fill still holds from the previous run. */
		while (f->nfill < FPMD_TBL24_PARTS &&
		       !bpf_map_get_next_key(f->fill_fd, pk, &k)) {
			if (k < FPMD_TBL24_PARTS && !f->in_fill[k]) {
				f->in_fill[k] = 1;
				f->nfill++;
			}
			f->fill_keys[0] = k;
			pk = &f->fill_keys[0];
		}
		/* The replay paints from "no route" up (dval, dlen 0): the
		 * live tbl24_dflt is no base, it is stale under every part
		 * that was live (kept only for uniform ones), and a part the
		 * replay makes started from it kept its value wherever no
		 * prefix covers (fib_check ipv4-adopt, other seeds). */
		ret = adopt(f);
		if (ret)
			goto fail;
	} else {
		/* Fresh maps: no parts, every default "no route". */
		memset(f->dflt, 0, dlen);
	}
	return 0;
fail:
	fib4_close(f);
	return ret;
}

void fib4_close(struct fib4 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	/* What a commit would have stored: the next fpmd adopts the maps. */
	if (f->nsc && f->stage)
		fib4_scatter_flush(f);
	free(f->sc);
	if (f->by_prefix.b) {
		ht_for_each(&f->by_prefix, n, tmp, i)
			slab_free(&fib4_rule_cache,
				  container_of(n, struct fib4_rule, node));
		ht_free(&f->by_prefix);
	}
	if (f->part) {
		for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
			free(f->part[p]);
		free(f->part);
	}
	if (f->parts.state)
		chunks_close(&f->parts);
	if (f->t8c.state)
		chunks_close(&f->t8c);
	if (f->rulec.state)
		chunks_close(&f->rulec);
	if (f->dflt)
		munmap(f->dflt, FPMD_TBL24_PARTS * 8);
	if (f->stage)
		munmap(f->stage, FPMD_TBL24_STAGE_WORDS * 8);
	free(f->dval);
	free(f->dlen);
	free(f->d8);
	free(f->t8priv);
	free(f->g_state);
	free(f->g_queue);
	free(f->g_freed_ns);
	free(f->slot_used);
	free(f->chunk_rules);
	free(f->t8_busy);
	free(f->fill_keys);
	free(f->in_fill);
	memset(f, 0, sizeof(*f));
}
