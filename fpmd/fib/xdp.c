// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The skeleton lifecycle: open -> size maps -> pin paths -> load. Pinned
 * maps from a previous run are adopted when their layout stamp matches,
 * so a restart (or upgrade with the same layout) forwards throughout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libgen.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "conf/conf.h"
#include "fib/fib6.h"
#include "fpmd.skel.h"
#include "common/log.h"
#include "common/phase.h"
#include "fib/fib4.h"
#include "fib/fib4c.h"
#include "fib/maps.h"
#include "fib/xdp.h"

struct fpmd_bpf *skel;

/* libbpf's own messages (verifier logs, pin conflicts) go to our log. */
static int libbpf_log(enum libbpf_print_level lvl, const char *fmt,
		      va_list ap)
{
	char buf[1024];
	size_t n;

	/* libbpf's debug level is a relocation-by-relocation trace. */
	if (lvl == LIBBPF_DEBUG || (lvl == LIBBPF_INFO && !cfg.debug))
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (lvl == LIBBPF_WARN)
		log_warn("%s", buf);
	else
		log_debug("%s", buf);
	return 0;
}

static void pin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", cfg.pin_dir, name);
}

static void unpin_all(struct bpf_object *obj)
{
	struct bpf_map *m;
	char path[PATH_MAX];

	bpf_object__for_each_map(m, obj) {
		pin_path(path, sizeof(path), bpf_map__name(m));
		unlink(path);
	}
}

/* Layout stamp of the pinned maps: version, or -1 if none pinned. */
static long pinned_layout(void)
{
	char path[PATH_MAX];
	struct fpmd_meta m = { 0 };
	uint32_t k = 0;
	int fd;

	pin_path(path, sizeof(path), "meta");
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (bpf_map_lookup_elem(fd, &k, &m))
		m.layout_version = 0;
	close(fd);
	return m.layout_version;
}

static int open_and_size(void)
{
	struct bpf_map *m;
	char path[PATH_MAX];

	skel = fpmd_bpf__open();
	if (!skel)
		return -errno;
	/* The program is built for one algorithm per family; the other's
	 * maps get one entry (an LPM trie without prealloc costs nothing,
	 * but tbl24 is 64 MiB). */
	skel->rodata->fib4_algo = (__u32)fpmd_fib4_algo;
	skel->rodata->fib6_algo = (__u32)fpmd_fib6_algo;
	if (fpmd_fib4_algo == FPMD_FIB4_DIR24) {
		bpf_map__set_max_entries(skel->maps.routes_v4, 1);
		fib4_size(skel->obj, fpmd_tbl8_groups, cfg.max_routes_v4);
		fib4c_size(skel->obj, 0);
	} else if (fpmd_fib4_algo == FPMD_FIB4_DXR) {
		/* rules_v4 sized by fib4c_size, after fib4_size */
		bpf_map__set_max_entries(skel->maps.routes_v4, 1);
		fib4_size(skel->obj, 0, 0);
		fib4c_size(skel->obj, cfg.max_routes_v4);
	} else {
		bpf_map__set_max_entries(skel->maps.routes_v4,
					 cfg.max_routes_v4);
		fib4_size(skel->obj, 0, 0);
		fib4c_size(skel->obj, 0);
	}
	if (fpmd_fib6_algo == FPMD_FIB6_BSPL) {
		/* Chunks come as routes do; the outer map has room for
		 * the largest table twice (the one in use and the next). */
		bpf_map__set_max_entries(skel->maps.routes_v6, 1);
		bpf_map__set_max_entries(
			skel->maps.slots_v6,
			FPMD_V6_OUTER(fib6_slots_for(cfg.max_routes_v6)));
	} else {
		bpf_map__set_max_entries(skel->maps.routes_v6,
					 cfg.max_routes_v6);
		bpf_map__set_max_entries(skel->maps.slots_v6, 1);
	}
	/* fpmd_devmap_xmit reads struct net_device (CO-RE): without the
	 * kernel's BTF it cannot load, and must not stop the rest. */
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		bpf_program__set_autoload(skel->progs.fpmd_devmap_xmit, false);
	/* Room for the maximums; chunks come as indices are used. */
	bpf_map__set_max_entries(
		skel->maps.nexthops,
		FPMD_CHUNKS_FOR(cfg.max_nexthops, FPMD_NH_CHUNK_SHIFT));
	bpf_map__set_max_entries(
		skel->maps.nh_groups,
		FPMD_CHUNKS_FOR(cfg.max_groups, FPMD_GROUP_CHUNK_SHIFT));
	bpf_map__set_max_entries(skel->maps.neigh_v4, cfg.max_neigh);
	bpf_map__set_max_entries(skel->maps.neigh_v6, cfg.max_neigh);
	bpf_object__for_each_map(m, skel->obj) {
		/* .rodata/.bss of the program are not state: not pinned. */
		if (strchr(bpf_map__name(m), '.'))
			continue;
		pin_path(path, sizeof(path), bpf_map__name(m));
		if (bpf_map__set_pin_path(m, path))
			return -errno;
	}
	return 0;
}

/*
 * The kernel adds BPF_F_RDONLY_PROG to every devmap it creates (and
 * refuses it at creation), so libbpf before its 2025 fix (Debian 12 has
 * 1.1) finds a pinned tx_ports "incompatible" and adoption fails. Reuse
 * it here when its shape matches; otherwise leave it to libbpf to refuse
 * and the caller to recreate.
 */
static int reuse_devmap(struct bpf_map *m)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret = 0;

	pin_path(path, sizeof(path), bpf_map__name(m));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    info.type == bpf_map__type(m) &&
	    info.key_size == bpf_map__key_size(m) &&
	    info.value_size == bpf_map__value_size(m) &&
	    info.max_entries == bpf_map__max_entries(m)) {
		ret = bpf_map__reuse_fd(m, fd);
		if (!ret)
			ret = bpf_map__set_pin_path(m, NULL);
	}
	close(fd);
	return ret;
}

#define BPFFS_ROOT "/sys/fs/bpf"

/*
 * The pin directory's parent must be on a bpffs. A machine that has not
 * mounted one at /sys/fs/bpf gets it mounted there, as iproute2 and
 * bpftool do; anywhere else is the operator's to mount.
 */
static int check_bpffs(const char *dir)
{
	char buf[PATH_MAX];
	struct statfs st;
	const char *parent;

	snprintf(buf, sizeof(buf), "%s", dir);
	parent = dirname(buf);
	if (!statfs(parent, &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (strcmp(parent, BPFFS_ROOT)) {
		log_err("bpffs: %s (bpffs-dir %s) is not on a bpf filesystem: "
			"mount one there (mount -t bpf bpf DIR) or choose a "
			"bpffs-dir under %s",
			parent, dir, BPFFS_ROOT);
		return -ENOTDIR;
	}
	if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700")) {
		int err = errno;

		log_err("bpffs: %s is not mounted and mounting it failed: %s",
			BPFFS_ROOT, strerror(err));
		return -err;
	}
	log_info("bpffs: mounted a bpf filesystem at %s (none was there)",
		 BPFFS_ROOT);
	return 0;
}

static struct bpf_link *tp_links[2];

/*
 * Count what the devmap and the drivers drop after XDP_REDIRECT (tx
 * counted it already): the tracepoint programs match our tx_ports by map
 * id and the egress devices by namespace, as ifindexes repeat across
 * namespaces. Without them tx is all there is: say so.
 */
static void attach_tx_tracepoints(void)
{
	struct bpf_program *progs[2] = { skel->progs.fpmd_redirect_err,
					 skel->progs.fpmd_devmap_xmit };
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	struct stat st;

	if (bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.tx_ports), &info,
				   &len) ||
	    stat("/proc/self/ns/net", &st)) {
		log_warn("bpf: tx-redirect-error and tx-xmit-drop are not "
			 "counted: %s",
			 strerror(errno));
		return;
	}
	skel->bss->tx_ports_id = info.id;
	skel->bss->netns_inum = (uint32_t)st.st_ino;
	for (int k = 0; k < 2; k++) {
		if (!bpf_program__autoload(progs[k])) {
			log_warn("bpf: no kernel BTF: tx-xmit-drop is not "
				 "counted");
			continue;
		}
		tp_links[k] = bpf_program__attach(progs[k]);
		if (!tp_links[k])
			log_warn("bpf: %s not attached (%s): %s is not counted",
				 bpf_program__name(progs[k]), strerror(errno),
				 k ? "tx-xmit-drop" : "tx-redirect-error");
	}
}

bool xdp_adopted;

int xdp_load(bool *adopted)
{
	long layout;
	int ret;

	*adopted = false;
	libbpf_set_print(libbpf_log);
	ret = check_bpffs(cfg.pin_dir);
	if (ret)
		return ret;
	if (mkdir(cfg.pin_dir, 0700) && errno != EEXIST) {
		ret = -errno;
		log_err("bpffs: cannot create %s: %s (is bpffs mounted, and "
			"was fpmd started with 'ip netns exec'? use --netns)",
			cfg.pin_dir, strerror(errno));
		return ret;
	}
	layout = pinned_layout();
	ret = open_and_size();
	if (ret)
		return ret;
	phase_end("bpf_open");
	if (layout >= 0 && layout != FPMD_LAYOUT_VERSION) {
		log_warn("bpffs: maps pinned in %s have layout %ld, this fpmd "
			 "uses %d: not adopting them; starting empty (traffic "
			 "takes the kernel path until routes are re-entered)",
			 cfg.pin_dir, layout, FPMD_LAYOUT_VERSION);
		unpin_all(skel->obj);
		layout = -1;
	}
	if (layout >= 0) {
		ret = reuse_devmap(skel->maps.tx_ports);
		if (ret)
			log_warn("bpffs: cannot reuse the pinned tx_ports: %s",
				 strerror(-ret));
	}
	ret = fpmd_bpf__load(skel);
	if (ret && layout >= 0) {
		/* Same layout, other sizes: libbpf refuses to reuse them. */
		log_warn("bpffs: maps pinned in %s do not match the configured "
			 "table sizes: recreating them empty (traffic takes "
			 "the kernel path until routes are re-entered)",
			 cfg.pin_dir);
		unpin_all(skel->obj);
		fpmd_bpf__destroy(skel);
		layout = -1;
		ret = open_and_size();
		if (!ret)
			ret = fpmd_bpf__load(skel);
	}
	if (ret) {
		log_err("bpf: loading the XDP program failed: %s",
			strerror(-ret));
		return ret;
	}
	phase_end("bpf_load (maps, BTF, verifier)");
	mapfd.routes_v4 = bpf_map__fd(skel->maps.routes_v4);
	mapfd.routes_v6 = bpf_map__fd(skel->maps.routes_v6);
	mapfd.nexthops = bpf_map__fd(skel->maps.nexthops);
	mapfd.nh_groups = bpf_map__fd(skel->maps.nh_groups);
	mapfd.neigh_v4 = bpf_map__fd(skel->maps.neigh_v4);
	mapfd.neigh_v6 = bpf_map__fd(skel->maps.neigh_v6);
	mapfd.local_v4 = bpf_map__fd(skel->maps.local_v4);
	mapfd.local_v4_filter = bpf_map__fd(skel->maps.local_v4_filter);
	mapfd.tx_ports = bpf_map__fd(skel->maps.tx_ports);
	mapfd.ifaces = bpf_map__fd(skel->maps.ifaces);
	mapfd.ifaces_direct = bpf_map__fd(skel->maps.ifaces_direct);
	mapfd.stats = bpf_map__fd(skel->maps.stats);
	mapfd.meta = bpf_map__fd(skel->maps.meta);
	mapfd.tbl24 = bpf_map__fd(skel->maps.tbl24);
	mapfd.tbl8 = bpf_map__fd(skel->maps.tbl8);
	mapfd.rules_v4 = bpf_map__fd(skel->maps.rules_v4);
	mapfd.slots_v6 = bpf_map__fd(skel->maps.slots_v6);
	mapfd.tbl24_stage = bpf_map__fd(skel->maps.tbl24_stage);
	mapfd.tbl24_dflt = bpf_map__fd(skel->maps.tbl24_dflt);
	mapfd.tbl24_fill = bpf_map__fd(skel->maps.tbl24_fill);
	mapfd.tbl24_commit = bpf_program__fd(skel->progs.fpmd_tbl24_commit);
	mapfd.dxr_dir = bpf_map__fd(skel->maps.dxr_dir);
	mapfd.dxr_rng = bpf_map__fd(skel->maps.dxr_rng);
	mapfd.dxr_val = bpf_map__fd(skel->maps.dxr_val);
	mapfd.lens_v6 = bpf_map__fd(skel->maps.lens_v6);
	/* Adopted maps, before any attach: the caches from local_v4 and
	 * ifaces (an older fpmd pinned none; new maps start empty anyway). */
	if (layout >= 0) {
		ret = maps_local_v4_filter_rebuild();
		if (ret) {
			log_err("bpf: local_v4_filter: %s", strerror(-ret));
			return ret;
		}
		ret = maps_ifaces_direct_rebuild();
		if (ret) {
			log_err("bpf: ifaces_direct: %s", strerror(-ret));
			return ret;
		}
		phase_end("caches");
	}
	ret = maps_nh_open(layout >= 0);
	if (ret) {
		log_err("bpf: nexthops / nh_groups chunks: %s", strerror(-ret));
		return ret;
	}
	ret = maps_fib_open(layout >= 0, cfg.max_routes_v4,
			    fib6_slots_for(cfg.max_routes_v6));
	if (ret) {
		log_err("bpf: route tables (DIR-24-8 / IPv6 lengths): %s",
			strerror(-ret));
		return ret;
	}
	phase_end("fib_open (DIR-24-8, IPv6)");
	attach_tx_tracepoints();
	phase_end("tracepoints");
	log_info("bpf: route lookup: IPv4 %s, IPv6 %s",
		 fpmd_fib4_algo == FPMD_FIB4_DIR24 ? "DIR-24-8" :
		 fpmd_fib4_algo == FPMD_FIB4_DXR   ? "DXR (compact)" :
						     "LPM trie",
		 fpmd_fib6_algo == FPMD_FIB6_BSPL ?
			 "binary search on prefix lengths" :
			 "LPM trie");
	if (layout < 0) {
		struct fpmd_meta m = { .layout_version = FPMD_LAYOUT_VERSION };
		struct timespec ts;
		uint32_t k = 0;

		clock_gettime(CLOCK_REALTIME, &ts);
		m.created_ns = (uint64_t)ts.tv_sec * 1000000000ull +
			       (uint64_t)ts.tv_nsec;
		bpf_map_update_elem(mapfd.meta, &k, &m, BPF_ANY);
		log_info("bpffs: maps created and pinned in %s", cfg.pin_dir);
	} else {
		*adopted = true;
		xdp_adopted = true;
		log_info("bpffs: adopted the maps pinned in %s", cfg.pin_dir);
	}
	return 0;
}

int xdp_prog_fd(void)
{
	return bpf_program__fd(skel->progs.fpmd_xdp);
}

int xdp_tc_prog_fd(void)
{
	return bpf_program__fd(skel->progs.fpmd_tc);
}

void xdp_unpin(void)
{
	if (!skel)
		return;
	unpin_all(skel->obj);
	if (rmdir(cfg.pin_dir) && errno != ENOENT)
		log_warn("bpffs: %s not removed: %s", cfg.pin_dir,
			 strerror(errno));
}

void xdp_close(void)
{
	maps_fib_close();
	maps_nh_close();
	for (int k = 0; k < 2; k++) {
		bpf_link__destroy(tp_links[k]);
		tp_links[k] = NULL;
	}
	if (skel)
		fpmd_bpf__destroy(skel);
	skel = NULL;
}
