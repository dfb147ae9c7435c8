/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small JSON writer for fpmctl's --json output. Containers up to a
 * document's pretty depth put each member on its own line, indented by
 * two spaces per level; deeper ones are written on one line, members
 * separated by ", ". So a table reads one row per line, as FRR's show
 * ... json does, whatever the depth of the row.
 */
#ifndef FPMCTL_JSON_H
#define FPMCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json {
	FILE *f;
	int depth;  /* containers open */
	int pretty; /* containers below this depth break lines */
	unsigned n[JSON_MAX_DEPTH]; /* members written in each open one */
	char end[JSON_MAX_DEPTH];   /* and the bracket that closes it */
};

/* A document on f; pretty: how many outer levels get a line per member. */
void json_start(struct json *j, FILE *f, int pretty);

/* key: the member's name inside an object; NULL inside an array or at
 * the top of the document. */
void json_object(struct json *j, const char *key);
void json_array(struct json *j, const char *key);
/* Closes the innermost container; the document's last ends the line. */
void json_close(struct json *j);

void json_str(struct json *j, const char *key, const char *v);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);

#endif
