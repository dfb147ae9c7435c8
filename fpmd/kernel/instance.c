// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One fpmd per bpffs directory and per interface.
 *
 * The lock file FPMD_RUN_DIR/<escaped bpffs-dir>.pid is flock()ed for the
 * life of the process and holds its pid and bpffs-dir (the default
 * instance's, for /sys/fs/bpf/fpmd, is the conventional
 * FPMD_RUN_DIR/fpmd.pid, the pid file): a second fpmd with
 * the same directory is refused before it touches anything, while a
 * SIGKILLed one leaves an unlocked file and its successor adopts the maps.
 * fpmd before 0.1 named every lock file after the escaped directory
 * (sys-fs-bpf-fpmd.pid for the default, fpmd.pid for /fpmd): a running
 * one still holds that name, so it is looked at too, and one found there
 * refuses the start as a current one does.
 *
 * An interface's program is recognised by id, never by name (every fpmd's
 * program is called fpmd_xdp): ours is the one we loaded; a predecessor's
 * uses the stats map pinned in our directory; another running fpmd's uses
 * the stats map pinned in the bpffs-dir named by a locked lock file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/instance.h"
#include "common/log.h"

static int lock_fd = -1;
static char lock_path[PATH_MAX];
static uint32_t own_prog_id, own_map_id, pred_map_id;

/* systemd-escape --path: "/sys/fs/bpf/fpmd" -> "sys-fs-bpf-fpmd". */
static void escape_path(const char *in, char *out, size_t len)
{
	size_t o = 0;

	while (*in == '/')
		in++;
	for (; *in && o + 5 < len; in++) {
		unsigned char c = (unsigned char)*in;

		if (c == '/') {
			while (in[1] == '/')
				in++;
			if (!in[1])
				break; /* trailing slash */
			out[o++] = '-';
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '_' || c == ':' ||
			   (c == '.' && o)) {
			out[o++] = (char)c;
		} else {
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
		}
	}
	out[o] = '\0';
}

static long read_pid(int fd, char *pin_dir, size_t plen)
{
	char buf[PATH_MAX + 32], *nl;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &nl, 10);
	if (pin_dir && plen) {
		pin_dir[0] = '\0';
		if (*nl == '\n') {
			nl[strcspn(nl + 1, "\n") + 1] = '\0';
			snprintf(pin_dir, plen, "%s", nl + 1);
		}
	}
	return pid > 0 ? pid : 0;
}

/* Take the lock file at path for pin_dir: 0, -EBUSY (*holder: its pid),
 * -errno. */
static int take_lock(const char *pin_dir, long *holder, const char *path)
{
	/* A lock on a file unlinked by its exiting owner protects nothing:
	 * check that the file locked is the one at path. A prober (another
	 * fpmd identifying a program) holds a shared lock for a moment:
	 * retry a few times before calling the directory taken. */
	for (int tries = 0, busy = 0; tries < 20; tries++) {
		struct stat a, b;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = errno;

			*holder = read_pid(fd, NULL, 0);
			close(fd);
			if (err != EWOULDBLOCK)
				return -err;
			/* 50 ms: longer than any probe, short for a refusal. */
			if (++busy > 5)
				return -EBUSY;
			usleep(10000);
			continue;
		}
		if (fstat(fd, &a) || stat(path, &b) || a.st_ino != b.st_ino ||
		    a.st_dev != b.st_dev) {
			close(fd);
			continue;
		}
		if (ftruncate(fd, 0) ||
		    dprintf(fd, "%ld\n%s\n", (long)getpid(), pin_dir) < 0) {
			int err = errno;

			close(fd);
			return -err;
		}
		lock_fd = fd;
		snprintf(lock_path, sizeof(lock_path), "%s", path);
		return 0;
	}
	return -EAGAIN;
}

/*
 * The lock file old, an fpmd before 0.1's for pin_dir, held by a running
 * one: its pid (0 if unknown); -1 when none holds it. Which directory it
 * serves is read from the file: "/fpmd"'s old name is the default
 * instance's name now, held by a current fpmd for another directory.
 */
static long legacy_holder(const char *pin_dir, const char *old)
{
	char dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	long pid = -1;
	int fd = open(old, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	/* Held exclusively by a live fpmd: a shared lock fails. */
	if (flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK) {
		pid = read_pid(fd, dir, sizeof(dir));
		escape_path(dir, a, sizeof(a));
		escape_path(pin_dir, b, sizeof(b));
		if (dir[0] && strcmp(a, b))
			pid = -1; /* another directory's */
	}
	close(fd);
	return pid;
}

int instance_lock(const char *pin_dir, long *holder, char *path, size_t plen)
{
	char name[PATH_MAX - sizeof(FPMD_RUN_DIR) - 8];
	char old[PATH_MAX];
	long pid;
	int ret;

	*holder = 0;
	escape_path(pin_dir, name, sizeof(name));
	snprintf(old, sizeof(old), "%s/%s.pid", FPMD_RUN_DIR, name);
	/* The default instance's lock file is the conventional pid file;
	 * "/fpmd", the one other directory escaped to "fpmd", gets "-fpmd". */
	if (!strcmp(name, "sys-fs-bpf-fpmd"))
		snprintf(name, sizeof(name), "fpmd");
	else if (!strcmp(name, "fpmd"))
		snprintf(name, sizeof(name), "-fpmd");
	snprintf(path, plen, "%s/%s.pid", FPMD_RUN_DIR, name);
	if (mkdir(FPMD_RUN_DIR, 0755) && errno != EEXIST)
		return -errno;
	ret = take_lock(pin_dir, holder, path);
	if (ret || !strcmp(old, path))
		return ret;
	/* Ours is taken: an old fpmd starting now finds nothing to stop
	 * it, but one running already is seen here. */
	pid = legacy_holder(pin_dir, old);
	if (pid < 0)
		return 0;
	instance_unlock();
	*holder = pid;
	snprintf(path, plen, "%s", old);
	return -EBUSY;
}

void instance_unlock(void)
{
	if (lock_fd < 0)
		return;
	unlink(lock_path);
	close(lock_fd);
	lock_fd = -1;
}

/* The stats map: every fpmd program uses it (meta is user space's). */
#define ID_MAP "stats"

static uint32_t pinned_map_id(const char *pin_dir)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/" ID_MAP, pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

static uint32_t fd_id(int fd, bool prog)
{
	uint32_t len;

	if (fd < 0)
		return 0;
	if (prog) {
		struct bpf_prog_info info = { 0 };

		len = sizeof(info);
		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	} else {
		struct bpf_map_info info = { 0 };

		len = sizeof(info);
		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	}
}

void instance_note_pins(const char *pin_dir)
{
	pred_map_id = pinned_map_id(pin_dir);
}

void instance_set_own(int prog_fd, int map_fd)
{
	own_prog_id = fd_id(prog_fd, true);
	own_map_id = fd_id(map_fd, false);
}

int instance_attached_prog(uint32_t ifindex, uint32_t *id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ret = bpf_xdp_query((int)ifindex, 0, &q);

	*id = 0;
	if (ret)
		return ret;
	/* Native and generic cannot be attached at once; offload aside. */
	*id = q.prog_id	      ? q.prog_id
	      : q.drv_prog_id ? q.drv_prog_id
	      : q.skb_prog_id ? q.skb_prog_id
			      : q.hw_prog_id;
	return 0;
}

#define MAX_PROG_MAPS 64

static bool has_map(const uint32_t *ids, uint32_t n, uint32_t id)
{
	for (uint32_t k = 0; id && k < n; k++)
		if (ids[k] == id)
			return true;
	return false;
}

/* Another instance whose stats map the program uses: 1 running, 0 not,
 * -1 none found. */
static int other_instance(const uint32_t *ids, uint32_t n, long *pid,
			  char *pin_dir, size_t plen)
{
	DIR *d = opendir(FPMD_RUN_DIR);
	struct dirent *de;
	int found = -1;

	if (!d)
		return -1;
	while (found < 0 && (de = readdir(d))) {
		char path[PATH_MAX];
		size_t nl = strlen(de->d_name);
		int fd;

		if (nl < 5 || strcmp(de->d_name + nl - 4, ".pid"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", FPMD_RUN_DIR, de->d_name);
		if (!strcmp(path, lock_path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		*pid = read_pid(fd, pin_dir, plen);
		if (pin_dir[0] && has_map(ids, n, pinned_map_id(pin_dir))) {
			/* Held exclusively by a live fpmd: probing with a
			 * shared lock fails and takes nothing. */
			if (flock(fd, LOCK_SH | LOCK_NB) &&
			    errno == EWOULDBLOCK)
				found = 1;
			else
				found = 0;
		}
		close(fd);
	}
	closedir(d);
	return found;
}

void instance_whose_prog(uint32_t id, struct prog_who *w)
{
	uint32_t ids[MAX_PROG_MAPS], n;
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	char pin_dir[PATH_MAX];
	int fd, other;

	memset(w, 0, sizeof(*w));
	w->id = id;
	if (!id) {
		w->owner = PROG_NONE;
		snprintf(w->desc, sizeof(w->desc), "no XDP program");
		return;
	}
	if (id == own_prog_id) {
		w->owner = PROG_OURS;
		snprintf(w->desc, sizeof(w->desc), "fpmd's XDP program (id %u)",
			 id);
		return;
	}
	w->owner = PROG_FOREIGN;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		snprintf(w->desc, sizeof(w->desc), "XDP program id %u", id);
		return;
	}
	info.nr_map_ids = MAX_PROG_MAPS;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.nr_map_ids = 0;
	close(fd);
	n = info.nr_map_ids < MAX_PROG_MAPS ? info.nr_map_ids : MAX_PROG_MAPS;
	snprintf(w->desc, sizeof(w->desc), "XDP program id %u (name %.16s)", id,
		 info.name);
	if (has_map(ids, n, own_map_id) || has_map(ids, n, pred_map_id)) {
		w->owner = PROG_PREDECESSOR;
		snprintf(w->desc, sizeof(w->desc),
			 "the XDP program (id %u) of a previous fpmd on these "
			 "maps",
			 id);
		return;
	}
	other = other_instance(ids, n, &w->pid, pin_dir, sizeof(pin_dir));
	if (other == 1) {
		w->owner = PROG_OTHER_FPMD;
		snprintf(w->desc, sizeof(w->desc),
			 "the XDP program (id %u) of another fpmd, pid %ld "
			 "(bpffs-dir %.128s)",
			 id, w->pid, pin_dir);
	} else if (other == 0) {
		snprintf(w->desc, sizeof(w->desc),
			 "the XDP program (id %u) left by an fpmd that is no "
			 "longer running (pid %ld, bpffs-dir %.128s)",
			 id, w->pid, pin_dir);
	}
}
