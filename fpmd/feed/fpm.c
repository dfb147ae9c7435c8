// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FPM: routes and nexthops from zebra's dplane_fpm_nl. This file holds
 * the TCP server and the connection: who may connect, reading the
 * stream in bounded batches, and what closing it does.
 *
 * zebra replays everything on every connect, with no end marker, and drops
 * what changed while it was disconnected. So each connection starts a new
 * generation; every route and nexthop it sends is stamped with it, and
 * once the stream has been quiet for the settle time, what the replay did
 * not refresh is swept. A refreshed entry whose value did not change is
 * never rewritten. While zebra is away the last state keeps forwarding
 * for the hold time (fpm_replay.c).
 *
 * A frame is validated completely before any of it is applied: malformed
 * input closes the connection and changes nothing (fpm_frame.c).
 *
 * With fpm/route-status, every route a frame adds is answered on the same
 * connection with the status FRR >= 8.5 reads (fpm_status.c).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "conf/conf.h"
#include "feed/fpm_internal.h"
#include "feed/replay.h"
#include "common/log.h"
#include "kernel/nl.h"
#include "rib/rib.h"
#include "common/util.h"

#define FPM_RCVBUF (1u << 20)

struct fpm_state fpm = {
	.conn_fd = -1,
	.timer_fd = -1,
	.status_id = -1,
	.st = { .replay_state = "none" },
};
static int listen_fds[FPMD_MAX_FPM_LISTEN], n_listen;
static uint8_t *rbuf;
static size_t rlen, rcap;
static bool backlog; /* rbuf holds frames the slice left (fpm_backlog) */

void fpm_set_watch(void (*fn)(int fd, bool in, bool out))
{
	fpm.watch = fn;
}

int fpm_open(const char *addr, uint16_t port)
{
	bool v6;
	int fd;

	if (fpm.status_id < 0)
		fpm.status_id = rib_status_subscribe(fpm_status_changed, NULL);
	fd = tcp_listen(addr, port, 4, false);
	if (fd < 0)
		return fd;
	if (n_listen == FPMD_MAX_FPM_LISTEN) {
		close(fd);
		return -ENOSPC;
	}
	if (fpm.timer_fd < 0)
		fpm.timer_fd =
		    timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fpm.timer_fd < 0) {
		close(fd);
		return -errno;
	}
	listen_fds[n_listen++] = fd;
	fpm.st.enabled = true;
	v6 = strchr(addr, ':') != NULL; /* a literal: tcp_listen took it */
	snprintf(fpm.st.listen + strlen(fpm.st.listen),
		 sizeof(fpm.st.listen) - strlen(fpm.st.listen), "%s%s%s%s:%u",
		 fpm.st.listen[0] ? " " : "", v6 ? "[" : "", addr,
		 v6 ? "]" : "", port);
	log_info("fpm: listening on %s%s%s:%u", v6 ? "[" : "", addr,
		 v6 ? "]" : "", port);
	return fd;
}

static void conn_close(const char *why)
{
	if (fpm.conn_fd < 0)
		return;
	close(fpm.conn_fd);
	fpm.conn_fd = -1;
	rlen = 0;
	fpm.frame_done = 0;
	backlog = false;
	fpm_held_clear(); /* the next connection replays them */
	fpm_out_reset();
	fpm_replay_hold();
	log_warn("fpm: %s: %s; its %u routes keep forwarding for %us unless "
		 "it comes back (or the kernel drops them)",
		 fpm.st.peer, why, rib_count(SRC_FPM), cfg.fpm_hold_s);
}

void fpm_listen_close(void)
{
	for (int k = 0; k < n_listen; k++)
		close(listen_fds[k]);
	n_listen = 0;
	fpm.st.listen[0] = '\0';
	fpm.st.enabled = false;
}

void fpm_close(void)
{
	fpm_listen_close();
	if (fpm.conn_fd >= 0)
		close(fpm.conn_fd);
	if (fpm.timer_fd >= 0)
		close(fpm.timer_fd);
	fpm.conn_fd = fpm.timer_fd = -1;
	fpm_out_reset();
	fpm_held_clear();
	free(rbuf);
	rbuf = NULL;
	rlen = rcap = 0;
}

static void sockaddr_str(const struct sockaddr_storage *ss, char *out,
			 size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, ntohs(s6->sin6_port));
		return;
	}
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, ntohs(s4->sin_port));
		return;
	}
	snprintf(out, len, "?");
}

/* Is uid one of fpm/allowed-users (names or numeric uids)? */
static bool user_allowed(uid_t uid, const char *name)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", (unsigned int)uid);
	for (int k = 0; k < cfg.n_fpm_users; k++) {
		const char *u = cfg.fpm_users[k];

		if (!strcmp(u, num) || (name && !strcmp(u, name)))
			return true;
	}
	return false;
}

/*
 * Only zebra may feed routes: the other end of a loopback connection is a
 * socket of this namespace, and sock_diag names its owner. Anyone else
 * (any local user while zebra is away) is refused before a byte is read.
 */
/* Any local user can connect in a loop: log the first refusals of each
 * 10 s and how many more there were, count them all. */
static void refuse(void)
{
	static uint64_t window_ns;
	static unsigned int logged, quiet;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	fpm.st.refused++;
	if (now - window_ns >= 10000000000ull) {
		if (quiet)
			log_warn("fpm: %u more connections refused in 10 s "
				 "(not logged one by one)",
				 quiet);
		window_ns = now;
		logged = quiet = 0;
	}
	if (logged++ < 10)
		log_warn("fpm: %s", fpm.st.last_error);
	else
		quiet++;
}

static bool peer_allowed(int fd, const char *peer)
{
	char pwbuf[1024], who[64];
	struct passwd pw, *p = NULL;
	uid_t uid;
	int ret;

	for (int k = 0; k < cfg.n_fpm_users; k++)
		if (!strcmp(cfg.fpm_users[k], "any"))
			return true; /* without asking: remote peers too */
	ret = nl_tcp_peer_uid(fd, &uid);
	if (ret) {
		snprintf(fpm.st.last_error, sizeof(fpm.st.last_error),
			 "connection from %s refused: cannot tell which user "
			 "owns it (%s); only local peers can be checked",
			 peer, strerror(-ret));
		refuse();
		return false;
	}
	getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &p);
	if (user_allowed(uid, p ? p->pw_name : NULL))
		return true;
	snprintf(who, sizeof(who), "%s%s%u%s", p ? p->pw_name : "",
		 p ? " (uid " : "uid ", (unsigned int)uid, p ? ")" : "");
	snprintf(fpm.st.last_error, sizeof(fpm.st.last_error),
		 "connection from %s refused: its socket belongs to user %s, "
		 "not one of fpm/allowed-users",
		 peer, who);
	refuse();
	return false;
}

/*
 * The FRR release of the zebra at the other end, for what fpmd can warn
 * about: the process owning the peer socket (sock_diag's inode, found in
 * /proc/PID/fd), and the frr package's version in the dpkg status of that
 * process's root (Debian's and FRR's own packages; a chroot or container
 * has its own). 0 with ver filled, or -errno.
 */
static int zebra_release(int fd, char *ver, size_t vlen, long *pidp)
{
	char path[PATH_MAX], want[32], link[64], line[256];
	struct dirent *de;
	bool in_frr = false;
	uint32_t inode;
	long pid = -1;
	uid_t uid;
	DIR *proc;
	FILE *f;
	int ret;

	ret = nl_tcp_peer(fd, &uid, &inode);
	if (ret)
		return ret;
	snprintf(want, sizeof(want), "socket:[%u]", inode);
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while (pid < 0 && (de = readdir(proc))) {
		DIR *fds;
		struct dirent *fe;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fe = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s",
				 de->d_name, fe->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, want)) {
				pid = strtol(de->d_name, NULL, 10);
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	if (pid < 0)
		return -ESRCH;
	*pidp = pid;
	snprintf(path, sizeof(path), "/proc/%ld/root/var/lib/dpkg/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Package: ", 9))
			in_frr = !strcmp(line + 9, "frr\n");
		else if (in_frr && !strncmp(line, "Version: ", 9)) {
			line[strcspn(line, "\n")] = '\0';
			/* A Debian version is short; a longer one is cut. */
			memcpy(ver, line + 9, vlen - 1);
			ver[vlen - 1] = '\0';
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Route status notifications go nowhere in some FRR releases: say so
 * once per connection, when fpm/route-status is on. */
static void zebra_release_check(int fd)
{
	unsigned int maj = 0, min = 0;
	char ver[64];
	long pid = -1;
	int ret = zebra_release(fd, ver, sizeof(ver), &pid);

	if (ret) {
		log_debug("fpm: zebra's FRR release unknown (%s)",
			  strerror(-ret));
		return;
	}
	log_info("fpm: zebra (pid %ld) is FRR %s", pid, ver);
	if (sscanf(strchr(ver, ':') ? strchr(ver, ':') + 1 : ver, "%u.%u",
		   &maj, &min) != 2)
		return;
	if (maj < 8 || (maj == 8 && min < 5))
		log_warn("fpm: zebra is FRR %s, which reads and discards route "
			 "status notifications (FRR 8.5 on reads them): `show ip "
			 "route` will not show fpmd's offload status; the zebra "
			 "plugin (fpmd-frr) sets it",
			 ver);
	else if (maj == 10 && min == 3)
		log_warn("fpm: zebra is FRR %s, which drops every route status "
			 "notification (FRR 10.3 reads the table as a VRF id; "
			 "fixed in 10.4): `show ip route` will not show fpmd's "
			 "offload status, and with --asic-offload="
			 "notify_on_offload its routes stay queued; the zebra "
			 "plugin (fpmd-frr) sets the status on 10.3",
			 ver);
}

int fpm_accept(int listen_fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char peer[sizeof(fpm.st.peer)];
	int fd, sz = FPM_RCVBUF;

	fd = accept4(listen_fd, (struct sockaddr *)&ss, &sl,
		     SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	sockaddr_str(&ss, peer, sizeof(peer));
	if (!peer_allowed(fd, peer)) {
		close(fd);
		return -EACCES;
	}
	if (fpm.conn_fd >= 0) {
		/* zebra reconnects only after losing us, which we see: a
		 * second connection is someone else's and must not take
		 * zebra's feed away. */
		log_warn("fpm: refusing a second FPM connection while %s is "
			 "connected",
			 fpm.st.peer);
		close(fd);
		return -EBUSY;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	snprintf(fpm.st.peer, sizeof(fpm.st.peer), "%s", peer);
	fpm.conn_fd = fd;
	fpm.st.connected = true;
	fpm.st.connections++;
	fpm.st.first_message_ns = 0;
	fpm_out_reset();
	fpm_replay_begin();
	log_info("fpm: zebra connected from %s (connection %llu): taking its "
		 "replay",
		 fpm.st.peer, (unsigned long long)fpm.st.connections);
	if (cfg.fpm_route_status)
		zebra_release_check(fd);
	return fd;
}

/* One read: ~450 routes (a frame longer than this is applied once it
 * is all read, in slices when it is long). */
#define FPM_READ_MAX 16384
/* The loop's time for FPM per wakeup (issue 27: no iteration over
 * 20 ms, the commit and route status after it included). */
#define FPM_SLICE_NS 8000000ull

/* A whole frame at the head of buf. */
static bool frame_complete(const uint8_t *buf, size_t len)
{
	return len >= FPM_HDR && len >= ((size_t)buf[2] << 8 | buf[3]);
}

/* Apply the complete frames in rbuf: false when the connection was
 * closed on bad input. */
static bool consume(void)
{
	char why[256] = "";
	long used = fpm_feed(rbuf, rlen, why, sizeof(why));

	if (used < 0) {
		char msg[300];

		fpm.st.errors++;
		snprintf(fpm.st.last_error, sizeof(fpm.st.last_error), "%s",
			 why);
		snprintf(msg, sizeof(msg), "%s; closing the connection", why);
		log_err("fpm: %s: %s", fpm.st.peer, msg);
		conn_close("closed on bad input");
		return false;
	}
	memmove(rbuf, rbuf + used, rlen - (size_t)used);
	rlen -= (size_t)used;
	/* Stopped by the slice: what is left waits for the next call. */
	backlog = fpm_slice_over() && frame_complete(rbuf, rlen);
	return true;
}

int fpm_io(void)
{
	uint64_t writes = rib_stats.route_writes,
		 t0 = now_ns(CLOCK_MONOTONIC);
	bool got = backlog;
	int ret = 0;

	/* A bounded batch per wakeup: a full-table replay or a mass delete
	 * must not starve the control socket and kernel events, nor hold
	 * the loop much past FPM_SLICE_NS. fpm_feed() stops there, between
	 * frames or between the routes of one; the loop calls again at
	 * once for what it left (fpm_backlog), and epoll for what is not
	 * read yet. */
	fpm.deadline_ns = t0 + FPM_SLICE_NS;
	if (backlog && !consume()) {
		ret = -EPROTO;
		goto out;
	}
	for (int batch = 0; batch < 64 && !backlog; batch++) {
		ssize_t r;

		if (rcap - rlen < 65536) {
			size_t cap = rcap ? rcap * 2 : 262144;
			uint8_t *nb = realloc(rbuf, cap);

			if (!nb) {
				conn_close("out of memory");
				ret = -ENOMEM;
				goto out;
			}
			rbuf = nb;
			rcap = cap;
		}
		r = read(fpm.conn_fd, rbuf + rlen, FPM_READ_MAX);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0) {
			char msg[128];

			if (rlen)
				snprintf(
				    msg, sizeof(msg),
				    "connection closed in "
				    "the middle of a frame (%zu bytes of it "
				    "received)",
				    rlen);
			else
				snprintf(msg, sizeof(msg),
					 "connection closed%s%s",
					 r < 0 ? ": " : "",
					 r < 0 ? strerror(errno) : "");
			if (rlen) {
				fpm.st.errors++;
				snprintf(fpm.st.last_error,
					 sizeof(fpm.st.last_error), "%s", msg);
			}
			conn_close(msg);
			ret = -ECONNRESET;
			goto out;
		}
		rlen += (size_t)r;
		got = true;
		fpm.st.last_message_ns = now_ns(CLOCK_REALTIME);
		if (!fpm.st.first_message_ns)
			fpm.st.first_message_ns = fpm.st.last_message_ns;
		if (!consume()) {
			ret = -EPROTO;
			goto out;
		}
		if (fpm_slice_over())
			break;
	}
	fpm_out_flush();
	if (got) {
		if (rib_stats.route_writes != writes)
			fpm.st.last_map_write_ns = now_ns(CLOCK_REALTIME);
		fpm_replay_input();
	}
out:
	fpm.deadline_ns = 0;
	return ret;
}

bool fpm_backlog(void)
{
	return backlog && fpm.conn_fd >= 0;
}

void fpm_get_status(struct feed_status *out)
{
	feed_get_status(&fpm.st, fpm_hold_deadline(), fpm.conn_fd >= 0, out);
}
