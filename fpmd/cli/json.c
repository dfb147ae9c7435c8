// SPDX-License-Identifier: GPL-2.0-or-later
/* A small JSON writer for fpmctl: see json.h for the layout. */
#include <stdlib.h>

#include "cli/json.h"

static void indent(struct json *j, int level)
{
	fputc('\n', j->f);
	for (int i = 0; i < level; i++)
		fputs("  ", j->f);
}

/* A string, escaped: '"', '\' and control characters (RFC 8259). NULL
 * is written as an empty string. */
static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* What comes before a value: the separator from the previous member, the
 * line break of a pretty container, the key. */
static void member(struct json *j, const char *key)
{
	int d = j->depth;

	if (d) {
		if (j->n[d - 1]++)
			fputc(',', j->f);
		if (d <= j->pretty)
			indent(j, d);
		else if (j->n[d - 1] > 1)
			fputc(' ', j->f);
	}
	if (key) {
		quoted(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_container(struct json *j, const char *key, char c, char end)
{
	/* The printers nest a few levels, fixed: deeper is a bug. */
	if (j->depth == JSON_MAX_DEPTH)
		abort();
	member(j, key);
	fputc(c, j->f);
	j->n[j->depth] = 0;
	j->end[j->depth] = end;
	j->depth++;
}

void json_start(struct json *j, FILE *f, int pretty)
{
	j->f = f;
	j->depth = 0;
	j->pretty = pretty;
}

void json_object(struct json *j, const char *key)
{
	open_container(j, key, '{', '}');
}

void json_array(struct json *j, const char *key)
{
	open_container(j, key, '[', ']');
}

void json_close(struct json *j)
{
	int d = j->depth--;

	if (d <= j->pretty && j->n[d - 1])
		indent(j, d - 1);
	fputc(j->end[d - 1], j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	member(j, key);
	quoted(j->f, v);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}
