// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What one dependent read into a table costs a BPF program on this
 * machine, by table size: the floor under any FIB lookup (issue 16,
 * doc/fib-compact.md "The machine's limit"). Run by hand as root, not part
 * of make check:
 *
 *   make tests/memlat/memlat && tests/memlat/memlat [--quick]
 *
 * For each size it fills a table with a random cycle through its cache
 * lines (tests/memlat/memlat.bpf.c) in two layouts: one mmapable array
 * (vmalloc, 4 KiB pages: dxr_dir, the DXR range chunks) and 16 KiB
 * arrays behind an outer map (kmalloc, the direct map: tbl24's parts).
 * Two methods, both with BPF_PROG_TEST_RUN:
 *
 * - per call: one read per call (repeat 1) from a random line, as
 *   tests/bench_lookup sends one packet to a spread destination per call;
 *   ns = the call's run time minus that of the same program without the
 *   read (ml_floor), so what remains is the read.
 * - in a loop: 512 dependent reads in one call (each address comes from
 *   the read before), as a tight loop of lookups would: ns per read.
 *   Enough calls per round to read every line about twice, so the table
 *   is as warm as a steady stream of lookups over it keeps it.
 *
 * Each table is read by its own program in blocks, after an untimed pass
 * over it (the steady state of a stream of lookups, not whatever ran
 * before); the two layouts alternate round by round; medians over the
 * rounds.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memlat.h"
#include "memlat.skel.h"
#include "../tool.h"

#define LOOP_HOPS 512
#define DROP_NS 20000 /* a call this much longer was preempted */

enum { P_FLOOR, P_BIG, P_CHUNKS, NPROG };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* The lines in the cycle (all, or one per 4 KiB page), where calls
 * start. */
static uint32_t *used, nused;

/* A random cycle through the used lines: word 0 of each holds the word
 * index of the next. Sparse: one line per 4 KiB page, at a random place
 * in it, as a DIR-24-8 table's few routes are spread over its pages. */
static uint64_t *make_cycle(uint32_t lines, int sparse)
{
	uint64_t *t = calloc((size_t)lines * ML_LINE_WORDS, sizeof(*t));

	nused = sparse ? lines / 64 : lines;
	free(used);
	used = malloc(nused * sizeof(*used));
	if (!used || !t)
		die("out of memory");
	for (uint32_t i = 0; i < nused; i++)
		used[i] = sparse ? i * 64 + rnd() % 64 : i;
	for (uint32_t i = nused - 1; i > 0; i--) {
		uint32_t j = rnd() % (i + 1), x = used[i];

		used[i] = used[j];
		used[j] = x;
	}
	for (uint32_t i = 0; i < nused; i++)
		t[used[i] * ML_LINE_WORDS] =
		    used[(i + 1) % nused] * ML_LINE_WORDS;
	return t;
}

static void fill(struct memlat_bpf *s, const uint64_t *t, size_t words)
{
	int inner_fd, outer = bpf_map__fd(s->maps.chunks);
	uint32_t keys[ML_CH_WORDS];
	uint64_t *m;
	size_t bytes = words * sizeof(*t);

	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(s->maps.big), 0);
	if (m == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memcpy(m, t, bytes);
	munmap(m, bytes);
	for (uint32_t w = 0; w < words; w += ML_LINE_WORDS * 97) {
		__u64 v;

		if (bpf_map_lookup_elem(bpf_map__fd(s->maps.big), &w, &v) ||
		    v != t[w])
			die("table check failed at word %u", w);
	}
	for (uint32_t i = 0; i < ML_CH_WORDS; i++)
		keys[i] = i;
	for (uint32_t c = 0; c < words / ML_CH_WORDS; c++) {
		__u32 n = ML_CH_WORDS;

		inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "memlat_chunk",
					  sizeof(__u32), sizeof(__u64),
					  ML_CH_WORDS, NULL);
		if (inner_fd < 0)
			die("chunk: %s", strerror(errno));
		if (bpf_map_update_batch(inner_fd, keys,
					 t + (size_t)c * ML_CH_WORDS, &n, NULL))
			die("chunk fill: %s", strerror(errno));
		if (bpf_map_update_elem(outer, &c, &inner_fd, BPF_ANY))
			die("outer: %s", strerror(errno));
		close(inner_fd);
	}
}

/* The run time of one call, or -1 if preempted. */
static double call(int fd, uint32_t start, uint32_t hops)
{
	unsigned char pkt[64] = { 0 };

	memcpy(pkt + ML_OFF_START, &start, 4);
	memcpy(pkt + ML_OFF_HOPS, &hops, 4);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
		    .data_size_in = sizeof(pkt), .repeat = 1);
	if (bpf_prog_test_run_opts(fd, &o))
		die("test run: %s", strerror(errno));
	if (o.retval != XDP_PASS)
		die("test run: verdict %u", o.retval);
	return o.duration > DROP_NS + hops * 1000ull ? -1 : (double)o.duration;
}

/* Mean run time of calls calls of one program, each from a random line
 * of the cycle. */
static double block(int fd, uint32_t hops, int calls)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < calls; i++) {
		double d = call(fd, used[rnd() % nused], hops);

		if (d >= 0) {
			sum += d;
			n++;
		}
	}
	return n ? sum / n : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: memlat [--quick] [--sparse] [--rounds N] "
			"[--calls N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'c' },
		{ "sparse", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	static const size_t kib[] = { 64,   256,  512,	 1024,	2048,
				      4096, 8192, 16384, 32768, 65536 };
	int rounds = 7, calls = 20000, sparse = 0, o;
	double t0 = now();

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'q':
			rounds = 3;
			calls = 5000;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'c':
			calls = atoi(optarg);
			break;
		case 's':
			sparse = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || rounds < 1 || calls < 1)
		usage();
	libbpf_set_print(NULL);

	printf(
	    "One dependent read into a table of each size, BPF_PROG_TEST_RUN, "
	    "median of %d rounds:\n"
	    "per call: one read from a random line per call (repeat 1), "
	    "%d calls per round, ns net of the same call without the read;\n"
	    "in a loop: %d dependent reads in one call, ns per read.\n"
	    "Each table alone in its blocks, after an untimed pass reading "
	    "every line ~twice (steady state).\n"
	    "vmalloc: one mmapable array (4 KiB pages); kmalloc: 16 KiB "
	    "arrays behind an outer map.\n%s\n",
	    rounds, calls, LOOP_HOPS,
	    sparse ? "--sparse: only one line of each 4 KiB page is read, "
		     "at a random place in it.\n"
		   : "");
	printf("| table | per call, vmalloc ns | per call, kmalloc ns | "
	       "in a loop, vmalloc ns | in a loop, kmalloc ns | floor ns (per "
	       "call) |\n"
	       "|---:|---:|---:|---:|---:|---:|\n");
	fflush(stdout);
	for (size_t z = 0; z < sizeof(kib) / sizeof(kib[0]); z++) {
		size_t words = kib[z] * 1024 / sizeof(uint64_t);
		uint32_t lines = words / ML_LINE_WORDS;
		uint64_t *t;
		double pc[NPROG][rounds], lp[NPROG][rounds];
		struct memlat_bpf *s = memlat_bpf__open();
		int fd[NPROG];

		if (!s)
			die("open: %s", strerror(errno));
		bpf_map__set_max_entries(s->maps.big, words);
		bpf_map__set_max_entries(s->maps.chunks, words / ML_CH_WORDS);
		if (memlat_bpf__load(s))
			die("load: %s", strerror(errno));
		t = make_cycle(lines, sparse);
		fill(s, t, words);
		free(t);
		fd[P_FLOOR] = bpf_program__fd(s->progs.ml_floor);
		fd[P_BIG] = bpf_program__fd(s->progs.ml_big);
		fd[P_CHUNKS] = bpf_program__fd(s->progs.ml_chunks);
		/* Each table is read by its program alone, in blocks (as
		 * tests/bench_lookup runs its programs): first an untimed
		 * pass reading every line about twice, so the table is as
		 * warm as a steady stream of lookups over it keeps it, then
		 * the timed calls. The loop reads every line about twice. */
		int warm = 2 * (int)(nused / LOOP_HOPS) + 1;
		int loop_calls = calls / 100 + 1;

		if (loop_calls < warm)
			loop_calls = warm;
		for (int r = 0; r < rounds; r++) {
			double f = block(fd[P_FLOOR], 1, calls);
			double fl = block(fd[P_FLOOR], LOOP_HOPS, loop_calls);

			pc[P_FLOOR][r] = f;
			lp[P_FLOOR][r] = fl;
			for (int k = 0; k < NPROG - 1; k++) {
				int p = P_BIG + (k + r) % (NPROG - 1);

				block(fd[p], LOOP_HOPS, warm);
				pc[p][r] = block(fd[p], 1, calls);
				lp[p][r] = block(fd[p], LOOP_HOPS, loop_calls);
			}
		}
		for (int p = 0; p < NPROG; p++) {
			pc[p][0] = median(pc[p], rounds);
			lp[p][0] = median(lp[p], rounds);
		}
		if (kib[z] < 1024)
			printf("| %zu KiB", kib[z]);
		else
			printf("| %zu MiB", kib[z] / 1024);
		if (sparse)
			printf(", %u lines", nused);
		printf(" | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
		       pc[P_BIG][0] - pc[P_FLOOR][0],
		       pc[P_CHUNKS][0] - pc[P_FLOOR][0],
		       (lp[P_BIG][0] - lp[P_FLOOR][0]) / LOOP_HOPS,
		       (lp[P_CHUNKS][0] - lp[P_FLOOR][0]) / LOOP_HOPS,
		       pc[P_FLOOR][0]);
		fflush(stdout);
		memlat_bpf__destroy(s);
	}
	printf("\nTotal run time %.0f s; command: tests/memlat/memlat%s%s\n",
	       now() - t0, rounds == 3 && calls == 5000 ? " --quick" : "",
	       sparse ? " --sparse" : "");
	return 0;
}
