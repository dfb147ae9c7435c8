// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The veth-peer guard's probe: GRO and tx checksumming on a veth's peer,
 * read with ethtool inside the peer's namespace, found by its nsid in
 * /run/netns or through /proc.
 */
#include <net/if.h> /* before linux/ headers: it guards linux/if.h */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "kernel/guard_priv.h"
#include "kernel/nl.h"

/*
 * Can the peer of a veth receive frames redirected into it? Only with an
 * XDP program or GRO on the peer (veth's NAPI path); otherwise the kernel
 * drops them without a counter.
 */
struct peer_q {
	int nsfd;
	char name[IF_NAMESIZE];
	int gro;    /* out: 1 on, 0 off, -1 unknown */
	int txcsum; /* out: the same for tx checksumming */
};

static int ethtool_get(const char *name, uint32_t cmd)
{
	struct ethtool_value ev = { .cmd = cmd };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&ev;
	ret = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return ret < 0 ? -1 : (int)(ev.data != 0);
}

static void *peer_thread(void *arg)
{
	struct peer_q *q = arg;

	/* setns affects only this thread; it ends right after. */
	if (setns(q->nsfd, CLONE_NEWNET) == 0) {
		q->gro = ethtool_get(q->name, ETHTOOL_GGRO);
		q->txcsum = ethtool_get(q->name, ETHTOOL_GTXCSUM);
	}
	return NULL;
}

/* Does the namespace file at path have id nsid from here? Its fd if so. */
static int netns_try(const char *path, int nsid)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (nl_get_nsid(fd) == nsid)
		return fd;
	close(fd);
	return -1;
}

#define NS_SEEN_MAX 512

/*
 * A process living in the namespace with id nsid, the way `ip netns
 * identify` finds names but by pid: container runtimes mount their
 * namespaces elsewhere than /run/netns, or nowhere. One RTM_GETNSID per
 * distinct namespace (by inode), and the last pid found is tried first,
 * so a steady peer costs one lookup per check.
 */
static int netns_fd_by_proc(int nsid)
{
	/* Per thread: the loop and the probe thread both ask. */
	static _Thread_local long hint_pid;
	ino_t seen[NS_SEEN_MAX];
	char path[64];
	DIR *d;
	struct dirent *de;
	int nseen = 0, fd = -1;
	struct stat self;

	if (hint_pid) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", hint_pid);
		fd = netns_try(path, nsid);
		if (fd >= 0)
			return fd;
		hint_pid = 0;
	}
	if (stat("/proc/self/ns/net", &self))
		return -1;
	seen[nseen++] = self.st_ino; /* ours has no nsid from here */
	d = opendir("/proc");
	if (!d)
		return -1;
	while (fd < 0 && (de = readdir(d))) {
		struct stat st;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool dup = false;

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		if (stat(path, &st))
			continue;
		for (int k = 0; k < nseen && !dup; k++)
			dup = seen[k] == st.st_ino;
		if (dup)
			continue;
		if (nseen < NS_SEEN_MAX)
			seen[nseen++] = st.st_ino;
		fd = netns_try(path, nsid);
		if (fd >= 0)
			hint_pid = pid;
	}
	closedir(d);
	return fd;
}

/* The namespace whose id (from here) is nsid: /run/netns, then /proc. */
static int netns_fd_by_nsid(int nsid)
{
	char path[300];
	DIR *d = opendir("/run/netns");
	struct dirent *de;
	int found = -1;

	while (d && (de = readdir(d)) && found < 0) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		found = netns_try(path, nsid);
	}
	if (d)
		closedir(d);
	return found >= 0 ? found : netns_fd_by_proc(nsid);
}

int peer_gro(int peer_nsid, const char *peer_name, int *txcsum)
{
	struct peer_q q = { .nsfd = -1, .gro = -1, .txcsum = -1 };
	pthread_t t;

	snprintf(q.name, sizeof(q.name), "%s", peer_name);
	*txcsum = -1;
	if (peer_nsid < 0) {
		*txcsum = ethtool_get(peer_name, ETHTOOL_GTXCSUM);
		return ethtool_get(peer_name, ETHTOOL_GGRO);
	}
	q.nsfd = netns_fd_by_nsid(peer_nsid);
	if (q.nsfd < 0)
		return -1;
	if (!pthread_create(&t, NULL, peer_thread, &q))
		pthread_join(t, NULL);
	close(q.nsfd);
	*txcsum = q.txcsum;
	return q.gro;
}
