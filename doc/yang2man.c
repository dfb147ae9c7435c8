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
#include <libyang/libyang.h>
#include <libyang/version.h>

/* A leaf's (leaf-list's) default as text: libyang 2 and 3 (Debian 12 and
 * 13) keep it as a value, libyang 5 (forky) as the module's string. */
#if LY_VERSION_MAJOR >= 5
#define DFLT_SET(d) ((d).str != NULL)
#define DFLT_STR(ctx, d) ((void)(ctx), (d).str)
#else
#define DFLT_SET(d) ((d) != NULL)
#define DFLT_STR(ctx, d) lyd_value_get_canonical((ctx), (d))
#endif

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
	for (LY_ARRAY_COUNT_TYPE i = 0; i < LY_ARRAY_COUNT(r->parts); i++) {
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
		for (LY_ARRAY_COUNT_TYPE i = 0; i < LY_ARRAY_COUNT(s->patterns); i++)
		{
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
	const char *units, *dflt = NULL;
	char path[512], dflts[256] = "";

	*skip = 0;
	if (!(n->nodetype & (LYS_LEAF | LYS_LEAFLIST)))
		return 0;
	if (!!(n->flags & LYS_CONFIG_W) != *want_config)
		return 0;
	if (n->nodetype == LYS_LEAF) {
		const struct lysc_node_leaf *l = (const void *)n;

		t = l->type;
		units = l->units;
		if (DFLT_SET(l->dflt))
			dflt = DFLT_STR(n->module->ctx, l->dflt);
	} else {
		const struct lysc_node_leaflist *l = (const void *)n;

		t = l->type;
		units = l->units;
		/* A leaf-list may default to several values: list them. */
		for (LY_ARRAY_COUNT_TYPE i = 0; i < LY_ARRAY_COUNT(l->dflts);
		     i++) {
			size_t used = strlen(dflts);

			snprintf(dflts + used, sizeof(dflts) - used, "%s%s",
				 i ? ", " : "",
				 DFLT_STR(n->module->ctx, l->dflts[i]));
			dflt = dflts;
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
		for (LY_ARRAY_COUNT_TYPE i = 0; i < LY_ARRAY_COUNT(e->enums); i++) {
			printf(".TP\n.B %s\n", e->enums[i].name);
			text(e->enums[i].dsc);
		}
		printf(".RE\n.PP\n");
	}
	if (units)
		printf(".br\nUnits: %s\n", units);
	if (dflt)
		printf(".br\nDefault: %s\n", dflt);
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
	if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &ctx) ||
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
