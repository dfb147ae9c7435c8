// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: the words of a command line. A command declares its words in a
 * table (struct word: the word, what its argument is, the field of the
 * request it sets); words_parse() reads them, in any order, a later one
 * winning. A bad word exits 2 with a message naming it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fpmctl.h"
#include "common/util.h"

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fpmctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

Fpmd__Prefix *prefix_arg(const char *s, uint8_t *store)
{
	static Fpmd__Prefix p;
	struct prefix pf;
	const char *err;

	if (parse_prefix(s, &pf, &err))
		die("bad prefix '%s': %s", s, err);
	fpmd__prefix__init(&p);
	memcpy(store, pf.addr, 16);
	p.addr.data = store;
	p.addr.len = (size_t)addr_len(pf.family);
	p.len = pf.len;
	return &p;
}

ProtobufCBinaryData addr_arg(const char *s, uint8_t *store)
{
	ProtobufCBinaryData b;
	uint8_t fam;

	if (parse_addr(s, &fam, store))
		die("bad address '%s'", s);
	b.data = store;
	b.len = (size_t)addr_len(fam);
	return b;
}

uint32_t u32_arg(const char *s, const char *bad)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > UINT32_MAX)
		die(bad, s);
	return (uint32_t)v;
}

bool action_arg(const char *cmd, const char *a)
{
	if (!strcmp(a, "add") || !strcmp(a, "replace"))
		return true;
	if (!strcmp(a, "del") || !strcmp(a, "delete"))
		return false;
	die("%s: unknown action '%s' (add, replace, del)", cmd, a);
}

void word_set(const struct word *w, void *msg, char *arg, uint8_t *store,
	      struct word_store *st)
{
	char *field = (char *)msg + w->off;

	switch (w->kind) {
	case WORD_SET:
		*(int *)field = w->value;
		break;
	case WORD_PREFIX:
		*(Fpmd__Prefix **)field = prefix_arg(arg, store);
		break;
	case WORD_ADDR:
		*(ProtobufCBinaryData *)field = addr_arg(arg, store);
		break;
	case WORD_NAME:
		*(char **)field = arg;
		break;
	case WORD_U32:
		*(uint32_t *)field = u32_arg(arg, w->bad);
		break;
	case WORD_MAC:
		if (parse_mac(arg, store))
			die("bad MAC '%s'", arg);
		((ProtobufCBinaryData *)field)->data = store;
		((ProtobufCBinaryData *)field)->len = 6;
		break;
	case WORD_FN:
		w->parse(msg, arg, st);
		break;
	}
}

void words_parse(const char *cmd, const struct word *words, void *msg,
		 struct word_store *st, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		size_t k;

		for (k = 0; words[k].name; k++)
			if (!strcmp(argv[i], words[k].name) &&
			    (words[k].kind == WORD_SET || i + 1 < argc))
				break;
		if (!words[k].name)
			die("%s: unexpected '%s'", cmd, argv[i]);
		word_set(&words[k], msg,
			 words[k].kind == WORD_SET ? NULL : argv[++i],
			 st->buf[k + 1], st);
	}
}
