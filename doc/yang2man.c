// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * yang2man: fpmd.conf(5) from yang/fpmd.yang. One section per leaf, with
 * its path, type, range, default and description, so the manual cannot
 * fall behind the module.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/ly_compat.h"

/*
 * The compiled schema as this file reads it, across libyang's releases
 * (conf/ly_compat.h says which LY_VERSION_MAJOR is which):
 *   - sized arrays: LY_ARRAY_COUNT (tree.h) before 5, LYA_COUNT (ly_array.h)
 *     from 5 on;
 *   - a leaf's (leaf-list's) default: a compiled value (struct lyd_value *)
 *     before 5, from 5 on the module's string (struct lysc_value), whose
 *     canonical form lyd_value_validate_dflt() gives. The page shows the
 *     canonical form with each (DFLT_LEAF is NULL for a leaf without one).
 */
#if LY_VERSION_MAJOR >= 5
#define ARRAY_COUNT(a) LYA_COUNT(a)
typedef LYA_COUNT_T count_t;
typedef const struct lysc_value *dflt_t;
#define DFLT_LEAF(l) ((l)->dflt.str ? &(l)->dflt : NULL)
#define DFLT_LIST(l, i) (&(l)->dflts[i])
#else
#define ARRAY_COUNT(a) LY_ARRAY_COUNT(a)
typedef LY_ARRAY_COUNT_TYPE count_t;
typedef const struct lyd_value *dflt_t;
#define DFLT_LEAF(l) ((l)->dflt)
#define DFLT_LIST(l, i) ((l)->dflts[i])
#endif

/* Appends n's default d, canonical, to buf (", " between values). */
static void dflt_add(char *buf, size_t len, const struct lysc_node *n,
		     dflt_t d)
{
	size_t used = strlen(buf);
	const char *sep = used ? ", " : "";
#if LY_VERSION_MAJOR >= 5
	const char *canon = NULL;

	if (lyd_value_validate_dflt(n, d->str, d->prefixes, NULL, NULL,
				    &canon) || !canon) {
		snprintf(buf + used, len - used, "%s%s", sep, d->str);
		return;
	}
	snprintf(buf + used, len - used, "%s%s", sep, canon);
	lydict_remove(n->module->ctx, canon);
#else
	snprintf(buf + used, len - used, "%s%s", sep,
		 lyd_value_get_canonical(n->module->ctx, d));
#endif
}

/* roff: a leading '.' or '\'' would be a request, '\' an escape. */
static void text(const char *s)
{
	bool bol = true;

	for (; s && *s; s++) {
		if (*s == '\n') {
			putchar('\n');
			bol = true;
			while (s[1] == ' ')
				s++;
			continue;
		}
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", stdout);
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			putchar(*s);
		bol = false;
	}
	putchar('\n');
}

static void range(const char *what, const struct lysc_range *r, bool sign)
{
	if (!r)
		return;
	printf(", %s ", what);
	for (count_t i = 0; i < ARRAY_COUNT(r->parts); i++) {
		if (sign)
			printf("%s%lld..%lld", i ? " | " : "",
			       (long long)r->parts[i].min_64,
			       (long long)r->parts[i].max_64);
		else
			printf("%s%llu..%llu", i ? " | " : "",
			       (unsigned long long)r->parts[i].min_u64,
			       (unsigned long long)r->parts[i].max_u64);
	}
}

static const char *type_name(LY_DATA_TYPE t)
{
	switch (t) {
	case LY_TYPE_STRING: return "string";
	case LY_TYPE_BOOL: return "boolean";
	case LY_TYPE_ENUM: return "enumeration";
	case LY_TYPE_UNION: return "union";
	case LY_TYPE_UINT8: return "uint8";
	case LY_TYPE_UINT16: return "uint16";
	case LY_TYPE_UINT32: return "uint32";
	case LY_TYPE_UINT64: return "uint64";
	case LY_TYPE_INT8: return "int8";
	case LY_TYPE_INT16: return "int16";
	case LY_TYPE_INT32: return "int32";
	case LY_TYPE_INT64: return "int64";
	default: return "other";
	}
}

static void type_line(const struct lysc_type *t)
{
	printf("Type: %s", type_name(t->basetype));
	switch (t->basetype) {
	case LY_TYPE_UINT8:
	case LY_TYPE_UINT16:
	case LY_TYPE_UINT32:
	case LY_TYPE_UINT64:
		range("range", ((const struct lysc_type_num *)t)->range, false);
		break;
	case LY_TYPE_INT8:
	case LY_TYPE_INT16:
	case LY_TYPE_INT32:
	case LY_TYPE_INT64:
		range("range", ((const struct lysc_type_num *)t)->range, true);
		break;
	case LY_TYPE_STRING: {
		const struct lysc_type_str *s = (const void *)t;

		range("length", s->length, false);
		for (count_t i = 0; i < ARRAY_COUNT(s->patterns); i++) {
			printf(", pattern \\(lq");
			for (const char *c = s->patterns[i]->expr; *c; c++)
				fputs(*c == '\\' ? "\\e" : *c == '-' ? "\\-" :
				      (char[2]){ *c, 0 }, stdout);
			printf("\\(rq");
		}
		break;
	}
	case LY_TYPE_UNION:
		printf(" (an IPv4 or IPv6 address)");
		break;
	default:
		break;
	}
	printf("\n");
}

static LY_ERR leaf(struct lysc_node *n, void *arg, ly_bool *skip)
{
	const bool *want_config = arg;
	const struct lysc_type *t;
	const char *units;
	char path[512], dflts[256] = "";
	bool has_dflt = false;

	*skip = 0;
	if (!(n->nodetype & (LYS_LEAF | LYS_LEAFLIST)))
		return 0;
	if (!!(n->flags & LYS_CONFIG_W) != *want_config)
		return 0;
	if (n->nodetype == LYS_LEAF) {
		const struct lysc_node_leaf *l = (const void *)n;

		t = l->type;
		units = l->units;
		if (DFLT_LEAF(l)) {
			dflt_add(dflts, sizeof(dflts), n, DFLT_LEAF(l));
			has_dflt = true;
		}
	} else {
		const struct lysc_node_leaflist *l = (const void *)n;

		t = l->type;
		units = l->units;
		/* A leaf-list may default to several values: list them. */
		for (count_t i = 0; i < ARRAY_COUNT(l->dflts); i++) {
			dflt_add(dflts, sizeof(dflts), n, DFLT_LIST(l, i));
			has_dflt = true;
		}
	}
	lysc_path(n, LYSC_PATH_DATA, path, sizeof(path));
	printf(".SS %s\n", path + strlen("/fpmd:fpmd/"));
	text(n->dsc);
	printf(".PP\n");
	type_line(t);
	if (n->nodetype == LYS_LEAFLIST)
		printf(".br\nA list: give the leaf once per value.\n");
	if (t->basetype == LY_TYPE_ENUM) {
		const struct lysc_type_enum *e = (const void *)t;

		printf(".RS\n");
		for (count_t i = 0; i < ARRAY_COUNT(e->enums); i++) {
			printf(".TP\n.B %s\n", e->enums[i].name);
			text(e->enums[i].dsc);
		}
		printf(".RE\n.PP\n");
	}
	if (units)
		printf(".br\nUnits: %s\n", units);
	if (has_dflt)
		printf(".br\nDefault: %s\n", dflts);
	if (n->flags & LYS_MAND_TRUE)
		printf(".br\nMandatory%s.\n", lysc_node_when(n) ? " when its condition holds" : "");
	if (n->flags & LYS_KEY)
		printf(".br\nKey of its list entry (mandatory).\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ly_ctx *ctx;
	const struct lys_module *m = NULL;
	bool config;
	/* The paths of this build (make passes $(sysconfdir)'s and
	 * $(datadir)'s), so the page says where this fpmd looks. */
	const char *conf = argc > 2 ? argv[2] : "/etc/fpmd/fpmd.json";
	const char *yangdir = argc > 3 ? argv[3] : "/usr/share/yang";

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: yang2man MODULE.yang "
				"[CONFIG-FILE [YANG-DIR]]\n");
		return 2;
	}
	if (fpmd_ly_ctx_new(&ctx) ||
	    lys_parse_path(ctx, argv[1], LYS_IN_YANG, (struct lys_module **)&m)) {
		fprintf(stderr, "yang2man: %s does not compile\n", argv[1]);
		return 1;
	}
	printf(".\\\" SPDX-License-Identifier: GPL-2.0-or-later\n"
	       ".\\\" Generated from yang/fpmd.yang by doc/yang2man; edit the module.\n"
	       ".TH FPMD.CONF 5 \"%s\" fpmd \"File formats\"\n"
	       ".SH NAME\nfpmd.conf \\- configuration of fpmd (YANG module fpmd)\n"
	       ".SH SYNOPSIS\n%s, or the file given with "
	       "\\fBfpmd \\-f\\fR FILE\n"
	       ".SH DESCRIPTION\n",
	       m->revision ? m->revision : "", conf);
	text(m->dsc);
	printf(".PP\nThe document is JSON as in RFC 7951 (top node "
	       "\\fB\"fpmd:fpmd\"\\fR) or XML (namespace \\fB%s\\fR); fpmd "
	       "tells them apart by the first character. libyang validates "
	       "it against the module: an unknown node, a value of the wrong "
	       "type or outside its range, an unknown enumeration value or a "
	       "missing mandatory node is an error naming the file, the line "
	       "and the node's path. fpmd refuses to start with a bad file; "
	       "on reload (SIGHUP, \\fBfpmctl reload\\fR) it keeps the running "
	       "configuration.\n"
	       ".PP\nPrecedence: a command-line option overrides the file "
	       "(fpmd logs each override), and the file overrides the "
	       "defaults below. \\fBfpmd \\-\\-show\\-default\\-config\\fR prints "
	       "the built-in default; \\fBfpmd \\-C\\fR checks a file and its "
	       "options without starting.\n"
	       ".PP\nOn reload, interfaces, listeners, sockets, logging and "
	       "behaviour apply at once; an interface added or removed does "
	       "not disturb the others. \\fBnetns\\fR, \\fBbpffs-dir\\fR and "
	       "the \\fBtables\\fR sizes take effect at the next start (fpmd "
	       "logs the cost of a resize).\n"
	       ".PP\nEach section below is one leaf, by its path under "
	       "\\fBfpmd\\fR.\n",
	       m->ns);
	for (int pass = 0; pass < 2; pass++) {
		const struct lysc_node *top;

		config = pass == 0;
		printf(".SH %s\n", config ? "CONFIGURATION" :
		       "OPERATIONAL STATE (fpmctl show state)");
		LY_LIST_FOR(m->compiled->data, top)
			lysc_tree_dfs_full(top, leaf, &config);
	}
	printf(".SH EXAMPLE\n.nf\n"
	       "{\n"
	       "  \"fpmd:fpmd\": {\n"
	       "    \"interfaces\": {\n"
	       "      \"interface\": [\n"
	       "        { \"name\": \"eth1\" },\n"
	       "        { \"name\": \"eth2\", \"xdp-mode\": \"native\" }\n"
	       "      ]\n"
	       "    },\n"
	       "    \"fpm\": { \"address\": [\"127.0.0.1\", \"::1\"] },\n"
	       "    \"behaviour\": { \"keep-forwarding\": true }\n"
	       "  }\n"
	       "}\n.fi\n"
	       ".SH FILES\n.TP\n.I %s\n"
	       "The configuration file of this build: /etc/fpmd/fpmd.json in "
	       "the Debian package (a conffile naming no interface), "
	       "$sysconfdir/fpmd/fpmd.json in a source install "
	       "(/usr/local/etc/fpmd/fpmd.json with the default prefix).\n"
	       ".TP\n.I %s/fpmd.yang\nThe module.\n"
	       ".SH SEE ALSO\n.BR fpmd (8), .BR fpmctl (8), .BR yanglint (1)\n",
	       conf, yangdir);
	ly_ctx_destroy(ctx);
	return 0;
}
