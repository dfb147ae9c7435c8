/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fpmctl, fpmd's command-line client. fpmctl.c: main and the command
 * table; conn.c: the control socket; args.c: the words of a command line;
 * format.c: protobuf values as text; show.c: the show and lookup commands
 * and their table, with the printers in show_rib.c (routes, nexthops,
 * neighbors, lookups) and show_status.c (interfaces, counters, guards,
 * feeds, summary, documents); edit.c: the commands that change fpmd.
 */
#ifndef FPMCTL_H
#define FPMCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "fpmd.pb-c.h"
#include "cli/json.h"

/* ---- conn.c: one connection to fpmd; any failure exits 1 ---------------- */

void conn_open(const char *path);
Fpmd__Response *conn_transact(Fpmd__Request *req);
/* The next response of a streamed answer. */
Fpmd__Response *conn_receive(void);
/* 0 if rsp says OK, else prints fpmd's error and returns 1. */
int conn_check(const Fpmd__Response *rsp);
/* A request whose answer is only a status. */
int conn_simple(Fpmd__Request *req);

/* ---- args.c: command-line words; a bad one exits 2 ----------------------- */

noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* store: 16 bytes the result points into. */
Fpmd__Prefix *prefix_arg(const char *s, uint8_t *store);
ProtobufCBinaryData addr_arg(const char *s, uint8_t *store);
/* bad: the error's format, naming the value ("bad weight '%s'"). */
uint32_t u32_arg(const char *s, const char *bad);
/* add | replace: true; del | delete: false. */
bool action_arg(const char *cmd, const char *a);

enum word_kind {
	WORD_SET,    /* the word alone stores .value in an int field */
	WORD_PREFIX, /* the word's argument is a PREFIX (Fpmd__Prefix *) */
	WORD_ADDR,   /* an ADDRESS (bytes) */
	WORD_NAME,   /* a NAME (string) */
	WORD_U32,    /* a number (uint32_t), .bad names it in errors */
	WORD_MAC,    /* a MAC (bytes) */
	WORD_FN,     /* an argument .parse reads */
};

#define WORDS_MAX 8    /* words in a command's table, at most */
#define MEMBERS_MAX 64 /* members of a nexthop group */

/* What the words' arguments point into, for the request's lifetime. */
struct word_store {
	uint8_t buf[WORDS_MAX + 1][16];
	Fpmd__GroupMember mem[MEMBERS_MAX], *memp[MEMBERS_MAX];
};

/* One word of a command, and the field of the command's message it sets. */
struct word {
	const char *name;
	enum word_kind kind;
	size_t off;
	int value;
	const char *bad;
	void (*parse)(void *msg, char *arg, struct word_store *st);
};

/* Table rows: a word and the field (offsetof) it sets. */
/* clang-format off */
#define WORD(n, k, field) { .name = (n), .kind = (k), .off = (field) }
#define WORD_VALUE(n, field, v) \
	{ .name = (n), .kind = WORD_SET, .off = (field), .value = (v) }
#define WORD_NUMBER(n, field, b) \
	{ .name = (n), .kind = WORD_U32, .off = (field), .bad = (b) }
#define WORD_PARSE(n, fn) { .name = (n), .kind = WORD_FN, .parse = (fn) }
#define WORDS_END { .name = NULL }
/* clang-format on */

/* Sets msg's field from arg, as w declares. */
void word_set(const struct word *w, void *msg, char *arg, uint8_t *store,
	      struct word_store *st);
/* argv: pairs "word [argument]" of the table words (ends at a NULL name);
 * anything else is "CMD: unexpected 'WORD'". */
void words_parse(const char *cmd, const struct word *words, void *msg,
		 struct word_store *st, int argc, char **argv);

/* ---- format.c: protobuf values as text ----------------------------------- */

const char *bin_addr(ProtobufCBinaryData b, char *buf);
const char *bin_prefix(const Fpmd__Prefix *p, char *buf);
const char *bin_mac(ProtobufCBinaryData b, char *buf);
const char *source_name(Fpmd__Source s);
const char *rtype_name(Fpmd__RouteType t);

/* ---- commands: the words after the command's name ---------------------- */

int run_show(int argc, char **argv, bool json);
int run_lookup(int argc, char **argv, bool json);
int run_route(int argc, char **argv, bool json);
int run_nexthop(int argc, char **argv, bool json);
int run_neighbor(int argc, char **argv, bool json);
int run_clear(int argc, char **argv, bool json);
int run_reload(int argc, char **argv, bool json);

/* ---- printers (show_rib.c, show_status.c) -------------------------------- */

/* Prints one response of a show: as JSON on j, or as text if j is NULL.
 * all: "show counters all". Called once per chunk of a streamed answer. */
typedef int print_fn(Fpmd__Response *rsp, struct json *j, bool all);

print_fn print_routes, print_nexthops, print_groups, print_neighbors;
print_fn print_interfaces, print_counters, print_guards, print_fpm;
print_fn print_plugin, print_summary, print_document;
/* A lookup's result; addr: the address as the user wrote it. */
int print_lookup(const Fpmd__LookupResult *o, const char *addr, struct json *j);

#endif
