// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the service manager shows (notify.c sends it): one status line
 * with the interfaces forwarding, the feeds and the guards that keep
 * traffic on the kernel path.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fpmd.h"
#include "common/util.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "notify.h"

/* Per feed: the last replay state seen, and when it settled. */
struct feed_seen {
	const char *state;
	char at[16];
};

static void feed_line(char *buf, size_t len, const char *name,
		      const struct feed_status *f, struct feed_seen *seen)
{
	bool done = f->replay_state && (!strcmp(f->replay_state, "settled") ||
					!strcmp(f->replay_state, "complete"));

	if (done && (!seen->state || strcmp(seen->state, f->replay_state))) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(seen->at, sizeof(seen->at), "%H:%M:%S", &tm);
	}
	seen->state = f->replay_state;
	if (!f->connected)
		return;
	appendf(buf, len, "%szebra connected over %s", buf[0] ? "; " : "",
		name);
	if (done)
		appendf(buf, len, "; replay settled: %llu routes (at %s)",
			(unsigned long long)f->replay_refreshed, seen->at);
	else if (f->replay_state && !strcmp(f->replay_state, "in-progress"))
		appendf(buf, len, "; replay in progress");
}

/* One line, rebuilt after every batch of events and sent when it changes:
 * never per packet or per route. */
void status_update(void)
{
	static struct feed_seen fpm_seen, plugin_seen;
	struct feed_status f, p;
	char feeds[256] = "", guard_s[160] = "";
	int att = 0, susp = 0, want = 0;

	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];

		if (!i->used)
			continue;
		want++;
		/* TC_ONLY: the tc program forwards there, not XDP. */
		att += iface_active(i);
		susp += iface_active(i) && i->suspended;
	}
	fpm_get_status(&f);
	plugin_get_status(&p);
	feed_line(feeds, sizeof(feeds), "the plugin", &p, &plugin_seen);
	feed_line(feeds, sizeof(feeds), "FPM", &f, &fpm_seen);
	if (!feeds[0]) {
		bool held =
		    (f.replay_state && !strcmp(f.replay_state, "held")) ||
		    (p.replay_state && !strcmp(p.replay_state, "held"));

		appendf(feeds, sizeof(feeds), "%swaiting for zebra (",
			held ? "zebra gone, its routes kept for hold-time; "
			     : "");
		if (cfg.fpm_enabled && cfg.n_fpm_address)
			appendf(feeds, sizeof(feeds), "FPM %s%s%s:%u%s",
				strchr(cfg.fpm_address[0], ':') ? "[" : "",
				cfg.fpm_address[0],
				strchr(cfg.fpm_address[0], ':') ? "]" : "",
				cfg.fpm_port, cfg.plugin_enabled ? ", " : "");
		if (cfg.plugin_enabled)
			appendf(feeds, sizeof(feeds), "plugin %s",
				cfg.plugin_sock.path);
		if (!cfg.plugin_enabled &&
		    !(cfg.fpm_enabled && cfg.n_fpm_address))
			appendf(feeds, sizeof(feeds), "no feed configured");
		appendf(feeds, sizeof(feeds), ")");
	}
	/* Guards that take traffic off the fast path (rp_filter is checked
	 * in it, a netfilter bypass is allowed by the configuration, and
	 * send-redirects only concerns IPv4 hairpins, which the kernel
	 * answers with a redirect). */
	for (int g = 0; g < GUARD_MAX; g++)
		if (g != GUARD_SEND_REDIRECTS &&
		    (!strcmp(guards[g].state, "kernel-path") ||
		     !strcmp(guards[g].state, "refused")))
			appendf(guard_s, sizeof(guard_s), "%s%s",
				guard_s[0] ? ", " : "; kernel path: guard ",
				guards[g].name);
	if (att > susp && att - susp < want)
		notify_status("forwarding on %d of %d interfaces; %s%s",
			      att - susp, want, feeds, guard_s);
	else if (att > susp)
		notify_status("forwarding on %d interface%s; %s%s", att - susp,
			      att - susp == 1 ? "" : "s", feeds, guard_s);
	else if (att)
		notify_status("attached on %d interface%s, all traffic on "
			      "the kernel path; %s%s",
			      att, att == 1 ? "" : "s", feeds, guard_s);
	else
		notify_status("not forwarding: %s; %s%s",
			      want ? "no interface attached"
				   : "no interface configured",
			      feeds, guard_s);
}
