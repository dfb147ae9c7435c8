// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Configuration: parse and validate with libyang against yang/fpmd.yang
 * (compiled in, so the binary and its schema cannot disagree), overlay
 * the command line, then read the validated tree into struct fpmd_config.
 * Defaults live only in the module: an empty document plus validation
 * gives every leaf its default.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"
#include "conf/ly_compat.h"
#include "fpmd_yang.h"

#define TOP "/fpmd:fpmd"

/*
 * Where libyang's error e is: the node's path (data, else schema; "" when
 * it names none) into path, and the input line (0: none). libyang 2
 * (Debian 12) says both in one string: 'Data location "/p", line number
 * 6.', 'Schema location "/p".' or 'Line number 1.'. From 3 on (Debian 13,
 * forky) they are apart, and a missing mandatory node is located at its
 * parent: its name, from the message, completes the path libyang 2 gave.
 */
static long ly_err_where(const struct ly_err_item *e, char *path, size_t plen)
{
#if LY_VERSION_MAJOR >= 3
	char name[128];
	int whole = 0;

	snprintf(path, plen, "%s", e->data_path ? e->data_path :
		 e->schema_path ? e->schema_path : "");
	if (e->data_path && e->msg &&
	    sscanf(e->msg, "Mandatory node \"%127[^\"]\" instance does not "
		   "exist.%n", name, &whole) == 1 && whole) {
		size_t l = strlen(path);

		snprintf(path + l, plen - l, "/%s", name);
	}
	return (long)e->line;
#else
	const char *loc = e->path, *q, *end, *ln;

	path[0] = '\0';
	if (!loc)
		return 0;
	if ((q = strchr(loc, '"')) && (end = strchr(q + 1, '"')))
		snprintf(path, plen, "%.*s", (int)(end - q - 1), q + 1);
	ln = strcasestr(loc, "line number ");
	return ln ? strtol(ln + 12, NULL, 10) : 0;
#endif
}

/* The running configuration; main.c loads it, reload.c reloads it. */
struct fpmd_config cfg;

static struct ly_ctx *ctx;

struct ly_ctx *config_ctx(void)
{
	if (ctx)
		return ctx;
	/* Errors are stored, not printed: we say them with file and line. */
	ly_log_options(LY_LOSTORE);
	if (fpmd_ly_ctx_new(&ctx) ||
	    lys_parse_mem(ctx, fpmd_yang_text, LYS_IN_YANG, NULL)) {
		fprintf(stderr, "fpmd: internal error: yang/fpmd.yang does not "
				"compile\n");
		ly_ctx_destroy(ctx);
		ctx = NULL;
	}
	return ctx;
}

const char *xdp_mode_name(enum xdp_mode m)
{
	return m == XDP_MODE_NATIVE ? "native" :
	       m == XDP_MODE_GENERIC ? "generic" : "auto";
}

/*
 * libyang's message on one line. From libyang 3 on, a union value's
 * message ends in ":\n" and lists the subtypes it failed on (left out:
 * the reason ends there); a message quoting the input quotes its newlines
 * (each, with the indentation after it, becomes a space).
 */
static void one_line(char *msg)
{
	bool quoted = false;

	for (char *p = msg; *p; p++) {
		if (*p == '"') {
			quoted = !quoted;
		} else if (!quoted && p[0] == ':' && p[1] == '\n') {
			strcpy(p, ".");
			return;
		} else if (*p == '\n') {
			size_t sp = strspn(p + 1, " \t");

			*p = ' ';
			memmove(p + 1, p + 1 + sp, strlen(p + 1 + sp) + 1);
		}
	}
}

/*
 * A number beyond its type (a size of 2^32 or more, or negative) fails
 * libyang's type bounds before the leaf's range, whose error-message
 * names the limit the maps have: say that one instead. Same wording in
 * libyang 2, 3 and 6.4.
 */
static void range_message(const char *path, char *msg, size_t mlen)
{
	const struct lysc_node *n;
	const struct lysc_type *t;
	const struct lysc_range *r = NULL;

	/* The size leaves sit in containers: a path with a list key (or a
	 * quote, which a key value of the input can bring) is none of them,
	 * and libyang 2.1's lys_find_path() reads past such a path. */
	if (!strstr(msg, " min/max bounds.") || strpbrk(path, "[]'\"") ||
	    !(n = lys_find_path(ctx, NULL, path, 0)) ||
	    !(n->nodetype & LYD_NODE_TERM))
		return;
	t = ((const struct lysc_node_leaf *)n)->type;
	if ((t->basetype >= LY_TYPE_UINT8 && t->basetype <= LY_TYPE_UINT64) ||
	    (t->basetype >= LY_TYPE_INT8 && t->basetype <= LY_TYPE_INT64))
		r = ((const struct lysc_type_num *)t)->range;
	if (r && r->emsg)
		snprintf(msg, mlen, "%s", r->emsg);
}

/* libyang's stored error as "WHERE:LINE: PATH: reason". */
static void ly_error(const char *where, char *err, size_t elen)
{
	const struct ly_err_item *e = ly_err_first(ctx);
	char path[512], msg[512];
	long line;

	if (!e) {
		snprintf(err, elen, "%s: invalid configuration", where);
		return;
	}
	/* The last error is the most specific (the first may be a summary). */
	e = e->prev ? e->prev : e;
	snprintf(msg, sizeof(msg), "%s", e->msg ? e->msg : "invalid");
	line = ly_err_where(e, path, sizeof(path));
	range_message(path, msg, sizeof(msg));
	one_line(msg);
	if (line)
		snprintf(err, elen, "%s:%ld: %s: %s", where, line,
			 path[0] ? path : TOP, msg);
	else
		snprintf(err, elen, "%s: %s: %s", where, path[0] ? path : TOP,
			 msg);
	ly_err_clean(ctx, NULL);
}

static char *read_all(const char *file, char *err, size_t elen)
{
	FILE *f = fopen(file, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		snprintf(err, elen, "%s: cannot open: %s", file, strerror(errno));
		return NULL;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, elen, "%s: out of memory", file);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		snprintf(err, elen, "%s: read error: %s", file, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* The file alone must be valid: it is what a reload starts from. */
static int parse_file(const char *file, struct lyd_node **tree, char *err,
		      size_t elen)
{
	char *text = read_all(file, err, elen);
	const char *p;
	LYD_FORMAT fmt;

	if (!text)
		return -1;
	for (p = text; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';)
		p++;
	if (!*p) {
		snprintf(err, elen, "%s: empty file (an empty configuration is "
				    "{} in JSON)", file);
		free(text);
		return -1;
	}
	fmt = *p == '<' ? LYD_XML : LYD_JSON;
	if (lyd_parse_data_mem(ctx, text, fmt,
			       LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
			       LYD_VALIDATE_NO_STATE, tree)) {
		ly_error(file, err, elen);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* The absolute path of rel, a path below the top container. */
static const char *abs_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, TOP "/%s", rel);
	return buf;
}

static struct lyd_node *find(const struct lyd_node *tree, const char *rel)
{
	char path[512];
	struct lyd_node *n = NULL;

	if (!tree)
		return NULL;
	if (lyd_find_path(tree, abs_path(path, sizeof(path), rel), 0, &n))
		return NULL;
	return n;
}

static bool has_entries(const struct lyd_node *tree, const char *rel)
{
	struct ly_set *set = NULL;
	char path[512];
	bool any;

	if (!tree)
		return false;
	if (lyd_find_xpath(tree, abs_path(path, sizeof(path), rel), &set))
		return false;
	any = set->count > 0 && !(set->dnodes[0]->flags & LYD_DEFAULT);
	ly_set_free(set, NULL);
	return any;
}

static void note(char *notes, size_t nlen, const char *line)
{
	size_t l = notes ? strlen(notes) : 0;

	if (notes && l + 1 < nlen)
		snprintf(notes + l, nlen - l, "%s\n", line);
}

/* Remove every instance of a list or leaf-list the file set. */
static void drop_all(struct lyd_node *tree, const char *rel)
{
	struct ly_set *set = NULL;
	char path[512];

	if (!tree)
		return;
	if (lyd_find_xpath(tree, abs_path(path, sizeof(path), rel), &set))
		return;
	for (uint32_t i = 0; i < set->count; i++)
		lyd_free_tree(set->dnodes[i]);
	ly_set_free(set, NULL);
}

static int apply_cli(struct lyd_node **tree, const struct cli_sets *cli,
		     const char *src, char *err, size_t elen, char *notes,
		     size_t nlen)
{
	for (int k = 0; k < cli->n; k++) {
		const struct cli_set *s = &cli->s[k];
		const struct lyd_node *was = find(*tree, s->path);
		char path[512], line[PATH_MAX + 1024];

		if (s->drop && s->drop[0] && has_entries(*tree, s->drop)) {
			snprintf(line, sizeof(line), "%s overrides %s from %s",
				 s->opt, s->drop, src);
			note(notes, nlen, line);
		} else if (!s->drop && s->value && was &&
			   !(was->flags & LYD_DEFAULT) &&
			   strcmp(lyd_get_value(was), s->value)) {
			snprintf(line, sizeof(line), "%s %s overrides %s = %s "
				 "from %s", s->opt, s->value, s->path,
				 lyd_get_value(was), src);
			note(notes, nlen, line);
		}
		if (s->drop && s->drop[0])
			drop_all(*tree, s->drop);
		abs_path(path, sizeof(path), s->path);
		if (lyd_new_path(*tree, ctx, path, s->value, LYD_NEW_PATH_UPDATE,
				 *tree ? NULL : tree)) {
			char where[160];

			snprintf(where, sizeof(where), "%s%s%s", s->opt,
				 s->value ? " " : "", s->value ? s->value : "");
			ly_error(where, err, elen);
			return -1;
		}
	}
	return 0;
}

static const char *get(const struct lyd_node *t, const char *rel)
{
	struct lyd_node *n = find(t, rel);

	return n ? lyd_get_value(n) : NULL;
}

static uint32_t get_u32(const struct lyd_node *t, const char *rel)
{
	const char *v = get(t, rel);

	return v ? (uint32_t)strtoul(v, NULL, 10) : 0;
}

static bool get_bool(const struct lyd_node *t, const char *rel)
{
	const char *v = get(t, rel);

	return v && !strcmp(v, "true");
}

static enum xdp_mode mode_of(const char *v)
{
	return !v ? XDP_MODE_AUTO :
	       !strcmp(v, "native") ? XDP_MODE_NATIVE :
	       !strcmp(v, "generic") ? XDP_MODE_GENERIC : XDP_MODE_AUTO;
}

static void sock_of(const struct lyd_node *t, const char *base,
		    struct sock_cfg *s)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/path", base);
	s->path = get(t, p);
	snprintf(p, sizeof(p), "%s/owner", base);
	s->owner = get(t, p);
	snprintf(p, sizeof(p), "%s/group", base);
	s->group = get(t, p);
	snprintf(p, sizeof(p), "%s/mode", base);
	s->mode = (unsigned int)strtoul(get(t, p), NULL, 8);
}

/* Checks the schema cannot express, with the node they are about. */
static int semantic_check(const struct fpmd_config *c, const char *src,
			  char *err, size_t elen)
{
	const struct sock_cfg *socks[] = { &c->ctl_sock, &c->plugin_sock };
	const char *names[] = { "control/socket", "plugin/socket" };

	for (int k = 0; k < 2; k++)
		if (!getpwnam(socks[k]->owner)) {
			snprintf(err, elen, "%s: " TOP "/%s/owner: user '%s' does "
					    "not exist", src, names[k],
				 socks[k]->owner);
			return -1;
		}
	if (c->plugin_enabled && !strcmp(c->plugin_sock.path, c->ctl_sock.path)) {
		snprintf(err, elen, "%s: " TOP "/plugin/socket/path: '%s' is "
				    "also the control socket", src,
			 c->plugin_sock.path);
		return -1;
	}
	return 0;
}

static void extract(struct fpmd_config *c)
{
	const struct lyd_node *t = c->tree;
	struct ly_set *set = NULL;
	const struct lyd_node *n;

	c->netns = get(t, "netns");
	c->pin_dir = get(t, "bpffs-dir");
	c->xdp_mode = mode_of(get(t, "xdp-mode"));
	c->n_ifaces = 0;
	if (!lyd_find_xpath(t, TOP "/interfaces/interface", &set)) {
		for (uint32_t i = 0; i < set->count && i < FPMD_MAX_IFACES; i++) {
			struct lyd_node *e = set->dnodes[i], *n = NULL;
			struct iface_cfg *ic = &c->ifaces[c->n_ifaces++];

			lyd_find_path(e, "name", 0, &n);
			ic->name = lyd_get_value(n);
			n = NULL;
			lyd_find_path(e, "enabled", 0, &n);
			ic->enabled = !n || !strcmp(lyd_get_value(n), "true");
			n = NULL;
			ic->mode = lyd_find_path(e, "xdp-mode", 0, &n) ?
					   c->xdp_mode :
					   mode_of(lyd_get_value(n));
		}
		ly_set_free(set, NULL);
	}
	c->fpm_enabled = get_bool(t, "fpm/enabled");
	c->n_fpm_address = 0;
	set = NULL;
	if (!lyd_find_xpath(t, TOP "/fpm/address", &set)) {
		for (uint32_t i = 0; i < set->count && i < FPMD_MAX_FPM_LISTEN; i++)
			c->fpm_address[c->n_fpm_address++] =
				lyd_get_value(set->dnodes[i]);
		ly_set_free(set, NULL);
	}
	c->fpm_port = (uint16_t)get_u32(t, "fpm/port");
	c->n_fpm_users = 0;
	set = NULL;
	if (!lyd_find_xpath(t, TOP "/fpm/allowed-users", &set)) {
		for (uint32_t i = 0; i < set->count && i < FPMD_MAX_FPM_USERS;
		     i++)
			c->fpm_users[c->n_fpm_users++] =
				lyd_get_value(set->dnodes[i]);
		ly_set_free(set, NULL);
	}
	c->fpm_settle_ms = get_u32(t, "fpm/settle-time");
	c->fpm_hold_s = get_u32(t, "fpm/hold-time");
	c->fpm_route_status = get_bool(t, "fpm/route-status");
	c->plugin_enabled = get_bool(t, "plugin/enabled");
	sock_of(t, "plugin/socket", &c->plugin_sock);
	sock_of(t, "control/socket", &c->ctl_sock);
	c->metrics_enabled = get_bool(t, "metrics/enabled");
	c->metrics_address = get(t, "metrics/address");
	c->metrics_port = (uint16_t)get_u32(t, "metrics/port");
	c->max_routes_v4 = get_u32(t, "tables/max-routes-v4");
	c->max_routes_v6 = get_u32(t, "tables/max-routes-v6");
	c->max_nexthops = get_u32(t, "tables/max-nexthops");
	c->max_groups = get_u32(t, "tables/max-groups");
	c->max_neigh = get_u32(t, "tables/max-neighbors");
	c->fib4_algo = !strcmp(get(t, "tables/ipv4-lookup"), "lpm-trie") ?
			       FPMD_FIB4_LPM :
		       !strcmp(get(t, "tables/ipv4-lookup"), "dxr") ?
			       FPMD_FIB4_DXR :
			       FPMD_FIB4_DIR24;
	c->fib6_algo = !strcmp(get(t, "tables/ipv6-lookup"), "lpm-trie") ?
			       FPMD_FIB6_LPM : FPMD_FIB6_BSPL;
	c->tbl8_groups = get_u32(t, "tables/ipv4-tbl8-groups");
	c->keep_forwarding = get_bool(t, "behaviour/keep-forwarding");
	c->allow_nf_bypass = get_bool(t, "behaviour/allow-netfilter-bypass");
	c->container_path = get_bool(t, "behaviour/container-path");
	c->guard_interval_ms = get_u32(t, "behaviour/guard-interval");
	c->log_target = get(t, "logging/target");
	n = find(t, "logging/target");
	c->log_target_default = !n || (n->flags & LYD_DEFAULT);
	c->log_file = get(t, "logging/file");
	c->debug = !strcmp(get(t, "logging/level"), "debug");
}

int config_load(const char *file, const struct cli_sets *cli,
		struct fpmd_config *out, char *err, size_t elen, char *notes,
		size_t nlen)
{
	struct fpmd_config c = { 0 };
	struct lyd_node *tree = NULL;

	if (notes && nlen)
		notes[0] = '\0';
	if (!config_ctx()) {
		snprintf(err, elen, "internal error: the YANG module does not "
				    "load");
		return -1;
	}
	if (!file && !access(FPMD_CONFIG_FILE, F_OK))
		file = FPMD_CONFIG_FILE;
	if (file && parse_file(file, &tree, err, elen))
		return -1;
	snprintf(c.source, sizeof(c.source), "%s",
		 file ? file : "built-in default");
	if (cli && apply_cli(&tree, cli, c.source, err, elen, notes, nlen)) {
		lyd_free_all(tree);
		return -1;
	}
	/* Defaults, when-conditions and mandatory nodes, for the whole. */
	if (lyd_validate_all(&tree, ctx, LYD_VALIDATE_NO_STATE, NULL)) {
		ly_error(cli && cli->n ? "command line" : c.source, err, elen);
		lyd_free_all(tree);
		return -1;
	}
	c.tree = tree;
	extract(&c);
	if (semantic_check(&c, c.source, err, elen)) {
		lyd_free_all(tree);
		return -1;
	}
	*out = c;
	return 0;
}

void config_free(struct fpmd_config *c)
{
	lyd_free_all(c->tree);
	c->tree = NULL;
}

static struct lyd_node *top_of(struct lyd_node *tree)
{
	struct lyd_node *n = NULL;

	if (tree && lyd_find_path(tree, TOP, 0, &n))
		return NULL;
	return n;
}

int config_print_default(FILE *f)
{
	struct lyd_node *tree = NULL;
	char *out = NULL;
	int ret = -1;

	/* The module's defaults, not whatever file happens to exist. */
	if (config_ctx() &&
	    !lyd_validate_all(&tree, ctx, LYD_VALIDATE_NO_STATE, NULL) &&
	    !lyd_print_mem(&out, top_of(tree), LYD_JSON, LYD_PRINT_WD_ALL)) {
		fputs(out, f);
		ret = 0;
	}
	free(out);
	lyd_free_all(tree);
	return ret;
}

char *config_print_running(const struct fpmd_config *c)
{
	char *out = NULL;
	struct lyd_node *top = top_of(c->tree);

	if (!top)
		return strdup("{}\n");
	if (lyd_print_mem(&out, top, LYD_JSON, LYD_PRINT_WD_EXPLICIT))
		return NULL;
	return out;
}
