// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fake_maps.h"
#include "conf/conf.h"
#include "fuzz_common.h"
#include "kernel/iface.h"
#include "common/log.h"
#include "rib/rib.h"

/* xdp.c's flag (xdp.c is not linked: the maps are fake_maps.c's). */
bool xdp_adopted;

static void ifaces_init(void)
{
	for (uint32_t k = 0; k < FUZZ_IFACES; k++) {
		char name[IF_NAMESIZE];
		struct iface *i;

		snprintf(name, sizeof(name), "fuzz%u", k + 1);
		i = iface_add(name, false);
		memset(i->mac, 0, sizeof(i->mac));
		i->ifindex = k + 1;
		i->mac[0] = 0x02;
		i->mac[5] = (uint8_t)(k + 1);
		i->mtu = 1500;
		i->up = true;
		i->attached = true;
		i->tx_port = true;
	}
}

static void rib_start(void)
{
	fake_maps_reset();
	if (rib_init(FAKE_MAX_NEXTHOPS, FAKE_MAX_GROUPS)) {
		fprintf(stderr, "fuzz: rib_init failed\n");
		abort();
	}
	iface_init();
}

void fuzz_init(void)
{
	char err[1024];

	/* One line per refused input would be most of the run time. */
	if (!getenv("FUZZ_LOG"))
		log_open("file", "/dev/null", false);
	signal(SIGPIPE, SIG_IGN);
	/* The built-in default, as a daemon started without a file runs. */
	if (config_load(NULL, NULL, &cfg, err, sizeof(err), NULL, 0)) {
		fprintf(stderr, "fuzz: default configuration: %s\n", err);
		abort();
	}
	cfg.fpm_hold_s = 0;
	rib_start();
}

void fuzz_reset(enum rib_source src)
{
	ifaces_init();
	/* Most inputs leave nothing behind: skip the walks over every
	 * bucket, most of the time per input otherwise. */
	if (!rib_routes.count && !rib_nh_by_id.count && !rib_nh_by_key.count &&
	    !rib_grp_by_key.count && !rib_other.count && !rib_neigh.count &&
	    !fake_maps.nexthop_writes && !fake_maps.group_writes)
		return;
	for (int s = 0; s < SRC_MAX; s++)
		if (src == SRC_MAX || s == (int)src)
			rib_sweep((enum rib_source)s, UINT32_MAX, NULL, NULL);
	while (rib_sweep_run())
		;
	/* With every route withdrawn, nothing may still hold a nexthop: one
	 * left over is a slot a long-running fpmd never gets back. */
	if (rib_routes.count || rib_nh_by_id.count || rib_nh_by_key.count ||
	    rib_grp_by_key.count || rib_pending_routes()) {
		fprintf(stderr,
			"fuzz: after withdrawing everything: %zu routes, %zu "
			"nexthop ids, %zu keyed nexthops, %zu keyed groups, "
			"%u pending routes left\n",
			rib_routes.count, rib_nh_by_id.count,
			rib_nh_by_key.count, rib_grp_by_key.count,
			rib_pending_routes());
		abort();
	}
	rib_free();
	memset(&rib_stats, 0, sizeof(rib_stats));
	rib_start();
}

static char sock_dir[64];

static void sock_dir_remove(void)
{
	char p[128];

	for (const char *const *n =
		 (const char *const[]){ "ctl", "plugin", NULL };
	     *n; n++) {
		snprintf(p, sizeof(p), "%s/%s.sock", sock_dir, *n);
		unlink(p);
	}
	rmdir(sock_dir);
}

const char *fuzz_sock_path(const char *name)
{
	static char path[128];

	if (!sock_dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(sock_dir, sizeof(sock_dir), "%s/fpmd-fuzz-XXXXXX",
			 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
		if (!mkdtemp(sock_dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(sock_dir_remove);
	}
	snprintf(path, sizeof(path), "%s/%s.sock", sock_dir, name);
	return path;
}

int fuzz_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("fuzz: connect");
		abort();
	}
	fuzz_big_buffers(fd);
	return fd;
}

void fuzz_big_buffers(int fd)
{
	int sz = 4 << 20;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
}

void fuzz_write(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t w = send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w <= 0)
			return;
		data += w;
		size -= (size_t)w;
	}
}

void fuzz_drain(int fd)
{
	uint8_t buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}
