/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Address, prefix and MAC parsing and formatting, shared by fpmd and fpmctl. */
#ifndef FPMD_UTIL_H
#define FPMD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ADDR_STRLEN 46
#define PREFIX_STRLEN 50
#define MAC_STRLEN 18

struct prefix {
	uint8_t family; /* AF_INET / AF_INET6 */
	uint8_t len;
	uint8_t addr[16];
};

int parse_addr(const char *s, uint8_t *family, uint8_t addr[16]);
/* "A.B.C.D/N", "X::/N", or a bare address (full length). Host bits are
 * an error so that typos do not silently widen a route. */
int parse_prefix(const char *s, struct prefix *p, const char **err);
int parse_mac(const char *s, uint8_t mac[6]);
const char *fmt_addr(int family, const void *addr, char *buf);
const char *fmt_prefix(const struct prefix *p, char *buf);
const char *fmt_mac(const uint8_t mac[6], char *buf);
int addr_len(int family);
void prefix_mask(struct prefix *p);

uint32_t hash_bytes(const void *data, size_t len, uint32_t seed);
/* Someone accepts connections on this unix socket (another fpmd)? */
bool unix_socket_in_use(const char *path);
/* A non-blocking TCP listener on addr (IPv4 or IPv6 literal) and port,
 * SO_REUSEADDR (IPV6_V6ONLY too with v6only). Returns the fd, -EINVAL for
 * an address that is not a literal, or -errno. */
int tcp_listen(const char *addr, uint16_t port, int backlog, bool v6only);
/* Listen on a unix stream socket (creating its directory), owner:group
 * with mode, or owner-only when the group is missing (said in
 * *group_missing). -EADDRINUSE when another process serves path. */
int unix_listen(const char *path, const char *owner, const char *group,
		unsigned int mode, bool *group_missing);
/* Can another user replace path's socket file (its directory writable by
 * group or others without the sticky bit, or owned by another user)? */
bool unix_dir_unsafe(const char *path);
/* clock_gettime(clk) in ns. */
uint64_t now_ns(clockid_t clk);
/*
 * A loop turn's share of a long job, bounded by time as well as by count:
 * slice_over(&s, done) reads the clock once every `every` items done
 * (CLOCK_MONOTONIC) and says when the turn's ns are spent.
 */
struct slice {
	uint64_t end;
	size_t next, every;
};

static inline struct slice slice_start(uint64_t ns, size_t every)
{
	return (struct slice){ .end = now_ns(CLOCK_MONOTONIC) + ns,
			       .next = every, .every = every };
}

static inline bool slice_over(struct slice *s, size_t done)
{
	if (done < s->next)
		return false;
	s->next = done + s->every;
	return now_ns(CLOCK_MONOTONIC) >= s->end;
}
/* Append to the string in buf (len bytes in all), truncating. */
void appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
