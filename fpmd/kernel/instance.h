/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One fpmd per bpffs directory and per interface: the lock (pid) file, and
 * telling fpmd's own XDP program from another instance's or a stranger's.
 */
#ifndef FPMD_INSTANCE_H
#define FPMD_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

#define FPMD_RUN_DIR "/run/fpmd"

/*
 * Take the lock file of pin_dir (FPMD_RUN_DIR/<escaped pin dir>.pid, or
 * FPMD_RUN_DIR/fpmd.pid for the default /sys/fs/bpf/fpmd: the pid file; an
 * flock()ed file holding "pid\nbpffs-dir\n"). 0 when taken; -EBUSY when a
 * live fpmd holds it, or when a running fpmd before 0.1 holds the name
 * that version gave it (FPMD_RUN_DIR/<escaped pin dir>.pid, for every
 * directory) for the same directory: *holder its pid, 0 if unknown, and
 * path the file it holds; -errno otherwise. The path is written to path
 * either way.
 */
int instance_lock(const char *pin_dir, long *holder, char *path, size_t plen);
/* Clean exit, or refused start: remove the lock file and release it. */
void instance_unlock(void);

/* The stats map pinned in our directory before we touched it (a previous
 * fpmd's program uses it), and our own program and stats map once loaded. */
void instance_note_pins(const char *pin_dir);
void instance_set_own(int prog_fd, int stats_fd);

enum prog_owner {
	PROG_NONE,	  /* nothing attached */
	PROG_OURS,	  /* this process's program */
	PROG_PREDECESSOR, /* uses our pinned maps: a stopped/killed fpmd's */
	PROG_OTHER_FPMD,  /* uses the maps of another, running, fpmd */
	PROG_FOREIGN,	  /* anything else (a dead other fpmd's included) */
};

struct prog_who {
	enum prog_owner owner;
	uint32_t id;
	long pid;	/* PROG_OTHER_FPMD: its pid */
	char desc[256]; /* for logs and state: "XDP program id 7 (name x)" */
};

/* Who owns XDP program id (0: none attached)? */
void instance_whose_prog(uint32_t id, struct prog_who *w);
/* The XDP program attached to ifindex in any mode, 0 if none; -errno. */
int instance_attached_prog(uint32_t ifindex, uint32_t *id);

#endif
