// SPDX-License-Identifier: GPL-2.0-or-later
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

int parse_addr(const char *s, uint8_t *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

void prefix_mask(struct prefix *p)
{
	int bytes = addr_len(p->family);

	for (int i = 0; i < bytes; i++) {
		int bits = p->len - i * 8;

		if (bits >= 8)
			continue;
		p->addr[i] &= bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));
	}
}

int parse_prefix(const char *s, struct prefix *p, const char **err)
{
	char buf[PREFIX_STRLEN + 8];
	char *slash, *end;
	struct prefix m;
	long len;

	*err = NULL;
	if (strlen(s) >= sizeof(buf)) {
		*err = "too long";
		return -1;
	}
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (parse_addr(buf, &p->family, p->addr)) {
		*err = "not an IPv4 or IPv6 address";
		return -1;
	}
	len = addr_len(p->family) * 8;
	if (slash) {
		long max = len;

		len = strtol(slash + 1, &end, 10);
		if (!slash[1] || *end || len < 0 || len > max) {
			*err = "bad prefix length";
			return -1;
		}
	}
	p->len = (uint8_t)len;
	m = *p;
	prefix_mask(&m);
	if (memcmp(m.addr, p->addr, 16)) {
		*err = "host bits set";
		return -1;
	}
	return 0;
}

int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

const char *fmt_addr(int family, const void *addr, char *buf)
{
	if (!inet_ntop(family, addr, buf, ADDR_STRLEN))
		strcpy(buf, "?");
	return buf;
}

const char *fmt_prefix(const struct prefix *p, char *buf)
{
	char a[ADDR_STRLEN];

	snprintf(buf, PREFIX_STRLEN, "%s/%u", fmt_addr(p->family, p->addr, a),
		 p->len);
	return buf;
}

const char *fmt_mac(const uint8_t mac[6], char *buf)
{
	snprintf(buf, MAC_STRLEN, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0],
		 mac[1], mac[2], mac[3], mac[4], mac[5]);
	return buf;
}

/* FNV-1a: tables here are keyed by small fixed-size keys. */
uint32_t hash_bytes(const void *data, size_t len, uint32_t seed)
{
	const uint8_t *p = data;
	uint32_t h = 2166136261u ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

bool unix_socket_in_use(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	strcpy(sa.sun_path, path);
	live = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return live;
}

int unix_listen(const char *path, const char *owner, const char *group,
		unsigned int mode, bool *group_missing)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	struct passwd *pw;
	struct group *gr;
	mode_t old_mask;
	int fd, ret;

	*group_missing = false;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	/* A stale socket file is replaced; a live one is another daemon's. */
	if (unix_socket_in_use(path))
		return -EADDRINUSE;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, path);
	unlink(path);
	/* Born owner-only: nobody else may connect before the chown and
	 * chmod below say who may. */
	old_mask = umask(0177);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (ret < 0 || listen(fd, 16) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	pw = getpwnam(owner);
	gr = getgrnam(group);
	if (!gr)
		*group_missing = true;
	if (chown(path, pw ? pw->pw_uid : 0, gr ? gr->gr_gid : 0))
		*group_missing = true;
	/* Without its group the socket is the owner's alone. */
	chmod(path, *group_missing ? (mode & 0700) : (mode & 0777));
	return fd;
}

bool unix_dir_unsafe(const char *path)
{
	char dir[108], *slash;
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &sb) < 0)
		return false;
	if (sb.st_uid != 0 && sb.st_uid != geteuid())
		return true;
	return (sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX);
}

uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int tcp_listen(const char *addr, uint16_t port, int backlog, bool v6only)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	socklen_t sl;
	int one = 1, fd;

	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		sl = sizeof(*s6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6only && ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, backlog) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}
