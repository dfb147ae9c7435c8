// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd_zebra: zebra dataplane provider feeding fpmd, the XDP fast path.
 *
 *   zebra -M fpmd_zebra[:SOCKET]     (SOCKET defaults to /run/fpmd/plugin.sock)
 *
 * It runs after the kernel provider, so the kernel FIB is complete whatever
 * happens here, and it never fails or holds back a context: every route
 * and nexthop operation is encoded (a few microseconds, on the dataplane
 * pthread), queued, and handed straight back to zebra. The socket belongs
 * to the plugin's own pthread, so a slow or absent fpmd costs zebra
 * nothing: while fpmd is absent nothing is queued, the plugin says so once
 * and retries every second. On every (re)connect it sends Hello and
 * ReplayBegin, walks zebra's nexthop groups and selected routes on zebra's
 * main pthread (where the RIB lives; in slices, so zebra stays responsive)
 * and closes the replay with ReplayEnd: fpmd then removes exactly what the
 * replay did not send. fpmd acks every operation; refusals go to zebra's
 * log with the prefix or nexthop they are about.
 *
 * Fed: IPv4/IPv6 unicast routes of the default VRF's main table (254),
 * including connected and kernel routes (zebra 8.4 passes its selected
 * system routes through the dataplane too; the kernel provider skips
 * them), blackhole / unreachable / prohibit routes, and every nexthop
 * object zebra installs. Not fed: other VRFs and tables,
 * IPv6 link-local prefixes (one per interface, never forwarded), and
 * source-specific IPv6 routes. Routes with MPLS labels, EVPN/VXLAN or
 * SRv6 encapsulation are sent flagged unsupported, so fpmd keeps them on
 * the kernel path and can show why.
 *
 * Built against the FRR source of the installed zebra (configure
 * --with-frr-source=DIR); see scripts/frr-source.sh.
 */
#include "config.h" /* FRR's, from the prepared source */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/zebra.h"
#include "lib/command.h"
#include "lib/frr_pthread.h"
#include "lib/frratomic.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/libfrr.h"
#include "lib/srcdest_table.h"
#include "lib/version.h"
#include "zebra/rib.h"
#include "zebra/zebra_dplane.h"
#include "zebra/zebra_nhg.h"
#include "zebra/zebra_router.h"
#include "zebra/zebra_vrf.h"

#include "fpmd.pb-c.h"
#include "../common/wire.h"

#define FZ_NAME "fpmd_zebra"
#define FZ_VERSION "0.1.0"
#define FZ_LOG "fpmd plugin: "
#ifndef FZ_DEFAULT_SOCKET
#define FZ_DEFAULT_SOCKET "/run/fpmd/plugin.sock"
#endif
#define FZ_TABLE_MAIN 254
#define FZ_RETRY_MS 1000
/* Routes per slice of the replay walk on zebra's main pthread. */
#define FZ_WALK_SLICE 2000
/* The walk waits while more than this is queued for fpmd ... */
#define FZ_WALK_HIGH (16u << 20)
/* ... and live operations beyond this drop the connection: the replay of
 * the next one resyncs fpmd exactly, where an unbounded queue would grow
 * zebra without limit while fpmd is stuck. */
#define FZ_BACKLOG_MAX (256u << 20)
#define FZ_MAX_MSG (1u << 20)
/* Ops awaiting an ack that we can still name in a log line (32 bytes
 * each); beyond, a refusal is logged by its seq only. */
#define FZ_PENDING_MAX (1u << 20)
/* Refusals logged per window; the rest are counted and summed up. */
#define FZ_LOG_BURST 20
#define FZ_LOG_WINDOW 10
#define FZ_SNDBUF (4 << 20)
/* A connection shorter than this that dies counts as a flap: after the
 * first, flaps are logged once a minute, not every second. */
#define FZ_FLAP_S 5

struct fz_buf {
	uint8_t *data;
	size_t len, off, cap;
};

/* An operation in flight, enough to name it when fpmd refuses it. */
struct fz_pending {
	uint64_t seq;
	uint32_t id;  /* nexthop id */
	uint8_t kind; /* FZ_K_* */
	uint8_t del;
	uint8_t family;
	uint8_t plen;
	uint8_t addr[16];
};

enum { FZ_K_ROUTE = 1, FZ_K_NEXTHOP = 2 };

struct fz_ring {
	struct fz_pending *v;
	size_t head, count, cap;
};

/*
 * A RouteStatus from fpmd (or, prefix family 0, "clear every mark": fpmd
 * is gone), waiting for zebra's main pthread, where the RIB lives.
 */
struct fz_status {
	uint8_t family;
	uint8_t plen;
	bool offloaded;
	uint8_t addr[16];
};

struct fz_status_q {
	struct fz_status *v;
	size_t len, cap;
};

/* Statuses applied per event on the main pthread before yielding. */
#define FZ_STATUS_SLICE 5000
/* Beyond this many waiting (zebra's main pthread stuck), statuses are
 * dropped and counted: the next one for the prefix corrects it. */
#define FZ_STATUS_MAX (4u << 20)

struct fz_counters {
	_Atomic uint64_t connections, connect_failures, disconnects;
	_Atomic uint64_t status_received, status_dropped, status_no_route;
	_Atomic uint64_t marked_offloaded, marked_failed, clears;
	_Atomic uint64_t route_ops, nexthop_ops, bytes_sent;
	_Atomic uint64_t acks_ok, acks_failed, acks_unmatched;
	_Atomic uint64_t skipped_down, skipped_other, unsupported;
	_Atomic uint64_t replays_sent, replays_done, overruns;
};

static struct fpmd_zebra {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct zebra_dplane_provider *prov;
	struct frr_pthread *fthread;
	atomic_bool shutdown;

	/* The plugin pthread's own. */
	int fd;
	bool absent_logged, refused_logged;
	struct wire_buf in;
	struct fz_buf w; /* taken from q, being written */
	struct thread *t_connect, *t_read, *t_write, *t_kick;
	time_t log_window;
	unsigned int log_count, log_suppressed;
	time_t connected_at;
	unsigned int flaps; /* connections in a row that died young */

	/* Under lock: the connection as producers see it. */
	pthread_mutex_t lock;
	bool up, overrun;
	uint32_t gen; /* bumped on every connect and disconnect */
	uint64_t seq;
	uint64_t replay_id; /* of the current connection */
	struct fz_buf q;    /* framed messages not yet taken by the writer */
	struct fz_ring pending;
	char last_error[160];
	char peer[64];

	atomic_bool is_up; /* lock-free hint for the dataplane pthread */
	atomic_bool kicked;
	_Atomic uint64_t w_left; /* bytes in w not yet written */

	/* zebra's main pthread: the replay walk. */
	struct thread *t_walk_start;
	struct {
		uint32_t gen;
		uint64_t id;
		afi_t afi;
		bool in_table;
		struct route_node *rn;
		uint64_t routes, nexthops;
		struct thread *t;
	} walk;

	/* Route statuses: filled on the plugin's pthread under st_lock,
	 * applied on zebra's main pthread (st_main, st_next: its own). */
	pthread_mutex_t st_lock;
	struct fz_status_q st_q;
	struct fz_status_q st_main;
	size_t st_next;
	struct thread *t_status;

	struct fz_counters c;
} fz = { .fd = -1 };

#define CNT_INC(f) atomic_fetch_add_explicit(&fz.c.f, 1, memory_order_relaxed)
#define CNT_GET(f) atomic_load_explicit(&fz.c.f, memory_order_relaxed)

static void fz_connect(struct thread *t);
static void fz_read(struct thread *t);
static void fz_flush(struct thread *t);
static void fz_walk_start(struct thread *t);
static void fz_walk_routes(struct thread *t);
static void fz_status_apply(struct thread *t);

/* ---- buffers --------------------------------------------------------- */

static bool fz_buf_reserve(struct fz_buf *b, size_t n)
{
	size_t cap;
	uint8_t *d;

	if (b->cap - b->len >= n)
		return true;
	cap = b->cap ? b->cap : 65536;
	while (cap - b->len < n)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d)
		return false;
	b->data = d;
	b->cap = cap;
	return true;
}

static void fz_buf_free(struct fz_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static void fz_ring_push(struct fz_ring *r, const struct fz_pending *p)
{
	if (r->count == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		struct fz_pending *v;

		if (cap > FZ_PENDING_MAX)
			return; /* not named in logs; still counted */
		v = malloc(cap * sizeof(*v));
		if (!v)
			return;
		for (size_t i = 0; i < r->count; i++)
			v[i] = r->v[(r->head + i) % r->cap];
		free(r->v);
		r->v = v;
		r->head = 0;
		r->cap = cap;
	}
	r->v[(r->head + r->count) % r->cap] = *p;
	r->count++;
}

/* fpmd acks in order: older entries than seq lost their ack. */
static bool fz_ring_take(struct fz_ring *r, uint64_t seq, struct fz_pending *p)
{
	while (r->count) {
		struct fz_pending *h = &r->v[r->head];

		if (h->seq > seq)
			return false;
		r->head = (r->head + 1) % r->cap;
		r->count--;
		if (h->seq == seq) {
			*p = *h;
			return true;
		}
	}
	return false;
}

static void fz_ring_clear(struct fz_ring *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* ---- the queue to fpmd (any pthread) --------------------------------- */

static void fz_kick(void)
{
	if (!atomic_exchange_explicit(&fz.kicked, true, memory_order_acq_rel))
		thread_add_event(fz.fthread->master, fz_flush, NULL, 0,
				 &fz.t_kick);
}

static bool fz_append_locked(const Fpmd__PluginMsg *m)
{
	size_t len = fpmd__plugin_msg__get_packed_size(m);
	uint32_t be = htonl((uint32_t)len);

	if (!fz_buf_reserve(&fz.q, WIRE_HDR + len))
		return false;
	memcpy(fz.q.data + fz.q.len, &be, WIRE_HDR);
	fpmd__plugin_msg__pack(m, fz.q.data + fz.q.len + WIRE_HDR);
	fz.q.len += WIRE_HDR + len;
	return true;
}

/*
 * Queue one message for the connection gen (0: whichever is up). seqp, if
 * set, is the op's seq field, numbered here so that seqs follow the order
 * on the wire. Returns false when that connection is gone (or is being
 * dropped for overrun): the replay of the next one covers it.
 */
static bool fz_queue(Fpmd__PluginMsg *m, uint64_t *seqp,
		     struct fz_pending *what, uint32_t gen)
{
	bool ok = false, kick = false;

	pthread_mutex_lock(&fz.lock);
	if (fz.up && !fz.overrun && (!gen || gen == fz.gen)) {
		uint64_t backlog =
		    fz.q.len +
		    atomic_load_explicit(&fz.w_left, memory_order_relaxed);

		if (seqp)
			*seqp = ++fz.seq;
		if (backlog > FZ_BACKLOG_MAX || !fz_append_locked(m)) {
			fz.overrun = true;
		} else {
			if (what) {
				what->seq = fz.seq;
				fz_ring_push(&fz.pending, what);
			}
			ok = true;
		}
		kick = true;
	}
	pthread_mutex_unlock(&fz.lock);
	if (kick)
		fz_kick();
	return ok;
}

static uint64_t fz_backlog(void)
{
	uint64_t n;

	pthread_mutex_lock(&fz.lock);
	n = fz.q.len;
	pthread_mutex_unlock(&fz.lock);
	return n + atomic_load_explicit(&fz.w_left, memory_order_relaxed);
}

static void fz_set_error(const char *fmt, ...) PRINTFRR(1, 2);
static void fz_set_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fz.lock);
	va_start(ap, fmt);
	vsnprintfrr(fz.last_error, sizeof(fz.last_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&fz.lock);
}

/* ---- encoding -------------------------------------------------------- */

static bool fz_nh_unsupported(const struct nexthop *nh)
{
	return (nh->nh_label && nh->nh_label->num_labels) ||
	       nh->nh_encap_type || nh->nh_srv6 ||
	       CHECK_FLAG(nh->flags, NEXTHOP_FLAG_EVPN);
}

/* A nexthop's gateway and interface; false if it is not a plain one. */
static bool fz_path(const struct nexthop *nh, Fpmd__PluginPath *pp,
		    uint8_t gw[16])
{
	fpmd__plugin_path__init(pp);
	pp->ifindex = nh->ifindex;
	pp->weight = nh->weight ? nh->weight : 1;
	switch (nh->type) {
	case NEXTHOP_TYPE_IFINDEX:
		return true;
	case NEXTHOP_TYPE_IPV4:
	case NEXTHOP_TYPE_IPV4_IFINDEX:
		memcpy(gw, &nh->gate.ipv4, 4);
		pp->gateway.data = gw;
		pp->gateway.len = 4;
		return true;
	case NEXTHOP_TYPE_IPV6:
	case NEXTHOP_TYPE_IPV6_IFINDEX:
		memcpy(gw, &nh->gate.ipv6, 16);
		pp->gateway.data = gw;
		pp->gateway.len = 16;
		return true;
	case NEXTHOP_TYPE_BLACKHOLE:
		break;
	}
	return false;
}

static Fpmd__RouteType fz_bh_type(enum blackhole_type bh)
{
	switch (bh) {
	case BLACKHOLE_REJECT:
		return FPMD__ROUTE_TYPE__RT_UNREACHABLE;
	case BLACKHOLE_ADMINPROHIB:
		return FPMD__ROUTE_TYPE__RT_PROHIBIT;
	case BLACKHOLE_UNSPEC:
	case BLACKHOLE_NULL:
		break;
	}
	return FPMD__ROUTE_TYPE__RT_BLACKHOLE;
}

/* Routes fpmd can program: the default VRF's main table, unicast. */
static bool fz_route_wanted(const struct prefix *p, const struct prefix *src_p,
			    vrf_id_t vrf, uint32_t table, afi_t afi,
			    safi_t safi)
{
	if (vrf != VRF_DEFAULT || table != FZ_TABLE_MAIN ||
	    safi != SAFI_UNICAST || (afi != AFI_IP && afi != AFI_IP6))
		return false;
	if (p->family != AF_INET && p->family != AF_INET6)
		return false;
	if (src_p && src_p->prefixlen)
		return false;
	if (p->family == AF_INET6 && p->prefixlen >= 10 &&
	    IN6_IS_ADDR_LINKLOCAL(&p->u.prefix6))
		return false;
	return true;
}

/*
 * One RouteOp. ng: the route's nexthops, as the kernel got them (active
 * ones, recursive ones through what they resolve to). nhg_id: the zebra
 * nexthop object installed for it, which the plugin sent as a NexthopOp
 * before. The paths are always sent too, so the route never depends on a
 * NexthopOp.
 */
static bool fz_send_route(bool del, int type, const struct prefix *p,
			  const struct nexthop_group *ng, uint32_t nhg_id,
			  uint32_t mtu, uint32_t gen, bool *sent_unsupported)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__RouteOp op = FPMD__ROUTE_OP__INIT;
	Fpmd__Prefix pfx = FPMD__PREFIX__INIT;
	Fpmd__PluginPath pathv[MULTIPATH_NUM], *paths[MULTIPATH_NUM];
	uint8_t gw[MULTIPATH_NUM][16];
	struct fz_pending what = { .kind = FZ_K_ROUTE, .del = del };
	const struct nexthop *nh;
	size_t alen = p->family == AF_INET ? 4 : 16;
	size_t n = 0;

	memcpy(what.addr, &p->u.prefix, alen);
	what.family = p->family;
	what.plen = p->prefixlen;
	pfx.addr.data = what.addr;
	pfx.addr.len = alen;
	pfx.len = p->prefixlen;
	op.prefix = &pfx;
	op.table = FZ_TABLE_MAIN;
	op.del = del;
	op.type = FPMD__ROUTE_TYPE__RT_UNICAST;
	op.mtu = del ? 0 : mtu;
	op.protocol = (char *)zebra_route_string(type); /* "static", "ospf" */

	nh = (!del && ng) ? ng->nexthop : NULL;
	if (nh && CHECK_FLAG(nh->flags, NEXTHOP_FLAG_RECURSIVE) && nh->resolved)
		nh = nh->resolved;
	if (nh && nh->type == NEXTHOP_TYPE_BLACKHOLE) {
		/* As the kernel gets it: a route type, no nexthop. */
		op.type = fz_bh_type(nh->bh_type);
	} else if (!del) {
		for (ALL_NEXTHOPS_PTR(ng, nh)) {
			if (CHECK_FLAG(nh->flags, NEXTHOP_FLAG_RECURSIVE) ||
			    CHECK_FLAG(nh->flags, NEXTHOP_FLAG_DUPLICATE) ||
			    !NEXTHOP_IS_ACTIVE(nh->flags))
				continue;
			if (n == MULTIPATH_NUM)
				break;
			if (fz_nh_unsupported(nh))
				op.unsupported = true;
			if (!fz_path(nh, &pathv[n], gw[n])) {
				op.unsupported = true;
				continue;
			}
			paths[n] = &pathv[n];
			n++;
		}
		op.paths = paths;
		op.n_paths = n;
		op.nhg_id = nhg_id;
		if (!n)
			op.unsupported = true;
	}
	if (op.unsupported)
		*sent_unsupported = true;
	m.msg_case = FPMD__PLUGIN_MSG__MSG_ROUTE;
	m.route = &op;
	return fz_queue(&m, &op.seq, &what, gen);
}

static bool fz_send_nexthop(bool del, uint32_t id,
			    const struct nexthop_group *ng,
			    const struct nh_grp *grp, uint8_t ngrp,
			    uint32_t gen)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__NexthopOp op = FPMD__NEXTHOP_OP__INIT;
	Fpmd__PluginPath path;
	Fpmd__GroupMember memv[MULTIPATH_NUM], *mems[MULTIPATH_NUM];
	struct fz_pending what = { .kind = FZ_K_NEXTHOP, .del = del, .id = id };
	const struct nexthop *nh;
	uint8_t gw[16];

	op.id = id;
	op.del = del;
	if (!del && ngrp) {
		for (uint8_t i = 0; i < ngrp; i++) {
			fpmd__group_member__init(&memv[i]);
			memv[i].nhid = grp[i].id;
			memv[i].weight = grp[i].weight ? grp[i].weight : 1;
			mems[i] = &memv[i];
		}
		op.group = mems;
		op.n_group = ngrp;
	} else if (!del) {
		nh = ng ? ng->nexthop : NULL;
		if (nh && CHECK_FLAG(nh->flags, NEXTHOP_FLAG_RECURSIVE) &&
		    nh->resolved)
			nh = nh->resolved;
		if (!nh) {
			op.unsupported = true;
		} else if (nh->type == NEXTHOP_TYPE_BLACKHOLE) {
			op.blackhole = true;
		} else {
			if (!fz_path(nh, &path, gw) || fz_nh_unsupported(nh))
				op.unsupported = true;
			op.path = &path;
		}
	}
	m.msg_case = FPMD__PLUGIN_MSG__MSG_NEXTHOP;
	m.nexthop = &op;
	return fz_queue(&m, &op.seq, &what, gen);
}

/* ---- live operations (zebra's dataplane pthread) --------------------- */

/* The mtu zebra puts in the kernel route (netlink_route_multipath_msg_encode). */
static uint32_t fz_mtu(uint32_t mtu, uint32_t nh_mtu)
{
	return !mtu || (nh_mtu && nh_mtu < mtu) ? nh_mtu : mtu;
}

static void fz_ctx_route(struct zebra_dplane_ctx *ctx, bool del)
{
	bool unsup = false;

	if (!fz_route_wanted(dplane_ctx_get_dest(ctx), dplane_ctx_get_src(ctx),
			     dplane_ctx_get_vrf(ctx), dplane_ctx_get_table(ctx),
			     dplane_ctx_get_afi(ctx),
			     dplane_ctx_get_safi(ctx))) {
		CNT_INC(skipped_other);
		return;
	}
	if (fz_send_route(del, dplane_ctx_get_type(ctx),
			  dplane_ctx_get_dest(ctx), dplane_ctx_get_ng(ctx),
			  dplane_ctx_get_nhe_id(ctx),
			  fz_mtu(dplane_ctx_get_mtu(ctx),
				 dplane_ctx_get_nh_mtu(ctx)),
			  0, &unsup))
		CNT_INC(route_ops);
	if (unsup)
		CNT_INC(unsupported);
}

static void fz_ctx_nexthop(struct zebra_dplane_ctx *ctx, bool del)
{
	if (dplane_ctx_get_nhe_vrf_id(ctx) != VRF_DEFAULT) {
		CNT_INC(skipped_other);
		return;
	}
	if (fz_send_nexthop(del, dplane_ctx_get_nhe_id(ctx),
			    dplane_ctx_get_nhe_ng(ctx),
			    dplane_ctx_get_nhe_nh_grp(ctx),
			    dplane_ctx_get_nhe_nh_grp_count(ctx), 0))
		CNT_INC(nexthop_ops);
}

static void fz_ctx(struct zebra_dplane_ctx *ctx)
{
	enum dplane_op_e op = dplane_ctx_get_op(ctx);
	bool route = false, nexthop = false, del = false;

	switch (op) {
	case DPLANE_OP_ROUTE_INSTALL:
	case DPLANE_OP_ROUTE_UPDATE:
		route = true;
		break;
	case DPLANE_OP_ROUTE_DELETE:
		route = del = true;
		break;
	case DPLANE_OP_NH_INSTALL:
	case DPLANE_OP_NH_UPDATE:
		nexthop = true;
		break;
	case DPLANE_OP_NH_DELETE:
		nexthop = del = true;
		break;
	default:
		return;
	}
	/* Not connected: the replay of the next connection covers it. */
	if (!atomic_load_explicit(&fz.is_up, memory_order_acquire)) {
		CNT_INC(skipped_down);
		return;
	}
	if (route)
		fz_ctx_route(ctx, del);
	else if (nexthop)
		fz_ctx_nexthop(ctx, del);
}

static int fz_process(struct zebra_dplane_provider *prov)
{
	struct zebra_dplane_ctx *ctx;
	int limit = dplane_provider_get_work_limit(prov);
	int i;

	for (i = 0; i < limit; i++) {
		ctx = dplane_provider_dequeue_in_ctx(prov);
		if (!ctx)
			break;
		fz_ctx(ctx);
		/* The kernel did the real work (failed contexts never reach
		 * a later provider); fpmd being absent or refusing never
		 * fails a route. */
		dplane_ctx_set_status(ctx, ZEBRA_DPLANE_REQUEST_SUCCESS);
		dplane_provider_enqueue_out_ctx(prov, ctx);
	}
	if (i >= limit)
		dplane_provider_work_ready();
	return 0;
}

/* ---- the replay walk (zebra's main pthread) -------------------------- */

static bool fz_walk_current(void)
{
	bool ok;

	pthread_mutex_lock(&fz.lock);
	ok = fz.up && !fz.overrun && fz.gen == fz.walk.gen;
	pthread_mutex_unlock(&fz.lock);
	return ok && !atomic_load_explicit(&fz.shutdown, memory_order_relaxed);
}

static void fz_walk_stop(void)
{
	if (fz.walk.rn)
		route_unlock_node(fz.walk.rn);
	fz.walk.rn = NULL;
	THREAD_OFF(fz.walk.t);
}

struct fz_nhe_walk {
	struct zebra_dplane_ctx *ctx;
	bool groups;
	bool ok;
};

static int fz_walk_nhe(struct hash_bucket *b, void *arg)
{
	struct nhg_hash_entry *nhe = b->data;
	struct fz_nhe_walk *a = arg;
	bool group;

	/* What zebra installed (or queued), as NH_INSTALL announced it. */
	if (!CHECK_FLAG(nhe->flags, NEXTHOP_GROUP_VALID) ||
	    !CHECK_FLAG(nhe->flags,
			NEXTHOP_GROUP_INSTALLED | NEXTHOP_GROUP_QUEUED) ||
	    CHECK_FLAG(nhe->flags, NEXTHOP_GROUP_RECURSIVE) ||
	    nhe->vrf_id != VRF_DEFAULT)
		return HASHWALK_CONTINUE;
	group = !zebra_nhg_depends_is_empty(nhe);
	if (group != a->groups)
		return HASHWALK_CONTINUE;
	dplane_ctx_reset(a->ctx);
	dplane_ctx_nexthop_init(a->ctx, DPLANE_OP_NH_INSTALL, nhe);
	if (!fz_send_nexthop(false, dplane_ctx_get_nhe_id(a->ctx),
			     dplane_ctx_get_nhe_ng(a->ctx),
			     dplane_ctx_get_nhe_nh_grp(a->ctx),
			     dplane_ctx_get_nhe_nh_grp_count(a->ctx),
			     fz.walk.gen)) {
		a->ok = false;
		return HASHWALK_ABORT;
	}
	fz.walk.nexthops++;
	return HASHWALK_CONTINUE;
}

static void fz_walk_start(struct thread *t)
{
	struct fz_nhe_walk a = { .ok = true };

	fz_walk_stop();
	fz.walk.gen = THREAD_VAL(t);
	if (!fz_walk_current())
		return;
	pthread_mutex_lock(&fz.lock);
	fz.walk.id = fz.replay_id;
	pthread_mutex_unlock(&fz.lock);
	fz.walk.afi = AFI_IP;
	fz.walk.in_table = false;
	fz.walk.routes = fz.walk.nexthops = 0;

	/* Single nexthops first, then groups of them: a group never names
	 * an id fpmd has not had in this replay. */
	a.ctx = dplane_ctx_alloc();
	hash_walk(zrouter.nhgs_id, fz_walk_nhe, &a);
	if (a.ok) {
		a.groups = true;
		hash_walk(zrouter.nhgs_id, fz_walk_nhe, &a);
	}
	dplane_ctx_fini(&a.ctx);
	if (!a.ok)
		return;
	thread_add_event(zrouter.master, fz_walk_routes, NULL, 0, &fz.walk.t);
}

/* One route node: its selected FIB entry, if fpmd can use it. */
static bool fz_walk_node(struct route_node *rn)
{
	rib_dest_t *dest = rib_dest_from_rnode(rn);
	const struct prefix *p, *src_p;
	struct nhg_hash_entry *nhe;
	struct route_entry *re;
	uint32_t nhg_id = 0;
	bool unsup = false;

	if (!dest || !dest->selected_fib)
		return true;
	re = dest->selected_fib;
	if (CHECK_FLAG(re->status, ROUTE_ENTRY_FAILED))
		return true;
	srcdest_rnode_prefixes(rn, &p, &src_p);
	if (!fz_route_wanted(p, src_p, re->vrf_id, re->table, fz.walk.afi,
			     SAFI_UNICAST))
		return true;
	nhe = re->nhe ? zebra_nhg_resolve(re->nhe) : NULL;
	if (nhe && CHECK_FLAG(nhe->flags, NEXTHOP_GROUP_VALID) &&
	    CHECK_FLAG(nhe->flags,
		       NEXTHOP_GROUP_INSTALLED | NEXTHOP_GROUP_QUEUED))
		nhg_id = nhe->id;
	if (!fz_send_route(false, re->type, p,
			   re->nhe ? &re->nhe->nhg : NULL, nhg_id,
			   fz_mtu(re->mtu, re->nexthop_mtu), fz.walk.gen,
			   &unsup))
		return false;
	if (unsup)
		CNT_INC(unsupported);
	fz.walk.routes++;
	return true;
}

static void fz_walk_routes(struct thread *t)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__ReplayEnd end = FPMD__REPLAY_END__INIT;
	int n = 0;

	if (!fz_walk_current()) {
		fz_walk_stop();
		return;
	}
	if (fz_backlog() > FZ_WALK_HIGH) {
		/* fpmd is behind: let it catch up, keep zebra's memory flat. */
		thread_add_timer_msec(zrouter.master, fz_walk_routes, NULL, 10,
				      &fz.walk.t);
		return;
	}
	for (; fz.walk.afi <= AFI_IP6;
	     fz.walk.afi++, fz.walk.in_table = false) {
		if (!fz.walk.in_table) {
			struct route_table *table = zebra_vrf_table(
			    fz.walk.afi, SAFI_UNICAST, VRF_DEFAULT);

			fz.walk.rn = table ? route_top(table) : NULL;
			fz.walk.in_table = true;
		}
		while (fz.walk.rn) {
			if (!fz_walk_node(fz.walk.rn)) {
				fz_walk_stop();
				return;
			}
			/* Locks the next node and unlocks this one: the
			 * held node survives between slices. */
			fz.walk.rn = srcdest_route_next(fz.walk.rn);
			if (++n >= FZ_WALK_SLICE && fz.walk.rn) {
				thread_add_event(zrouter.master, fz_walk_routes,
						 NULL, 0, &fz.walk.t);
				return;
			}
		}
	}
	end.id = fz.walk.id;
	end.routes = fz.walk.routes;
	end.nexthops = fz.walk.nexthops;
	m.msg_case = FPMD__PLUGIN_MSG__MSG_REPLAY_END;
	m.replay_end = &end;
	if (fz_queue(&m, NULL, NULL, fz.walk.gen)) {
		CNT_INC(replays_sent);
		zlog_info(FZ_LOG "replay %" PRIu64 " sent: %" PRIu64
				 " routes, %" PRIu64 " nexthops",
			  fz.walk.id, fz.walk.routes, fz.walk.nexthops);
	}
}

/* ---- offload status in zebra's RIB ----------------------------------- */

/*
 * FRR 8.4 has no dataplane API to set a route's offload flags (a provider
 * can only fail a route, and then zebra keeps it out of the kernel too;
 * DPLANE_OP_ROUTE_NOTIFY updates nexthop FIB flags only). So the flags
 * are set here, on zebra's main pthread, as zebra's own netlink code sets
 * them from a kernel notification: ZEBRA_FLAG_OFFLOADED or
 * ZEBRA_FLAG_OFFLOAD_FAILED on the prefix's selected FIB entry
 * (dest->selected_fib), both cleared on its other entries. zebra sets
 * selected_fib in rib_install_kernel() before it queues the context that
 * reaches fpmd, and the dataplane result (rib_process_result) leaves
 * re->flags alone, so whichever comes first, the status lands on the entry
 * fpmd answered for (or a newer one, whose own status follows).
 */

/* Any pthread: queue one status for the main pthread. */
static void fz_status_push(const struct fz_status *s)
{
	bool sched;

	pthread_mutex_lock(&fz.st_lock);
	if (fz.st_q.len >= FZ_STATUS_MAX) {
		pthread_mutex_unlock(&fz.st_lock);
		CNT_INC(status_dropped);
		return;
	}
	if (fz.st_q.len == fz.st_q.cap) {
		size_t cap = fz.st_q.cap ? fz.st_q.cap * 2 : 1024;
		struct fz_status *v = realloc(fz.st_q.v, cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&fz.st_lock);
			CNT_INC(status_dropped);
			return;
		}
		fz.st_q.v = v;
		fz.st_q.cap = cap;
	}
	fz.st_q.v[fz.st_q.len++] = *s;
	sched = fz.st_q.len == 1;
	pthread_mutex_unlock(&fz.st_lock);
	/* thread_add_event is safe from any pthread; one pending is enough. */
	if (sched && !atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		thread_add_event(zrouter.master, fz_status_apply, NULL, 0,
				 &fz.t_status);
}

static void fz_re_mark(struct route_entry *re, bool offloaded)
{
	if (offloaded) {
		SET_FLAG(re->flags, ZEBRA_FLAG_OFFLOADED);
		UNSET_FLAG(re->flags, ZEBRA_FLAG_OFFLOAD_FAILED);
	} else {
		SET_FLAG(re->flags, ZEBRA_FLAG_OFFLOAD_FAILED);
		UNSET_FLAG(re->flags, ZEBRA_FLAG_OFFLOADED);
	}
}

static void fz_re_unmark(struct route_entry *re)
{
	UNSET_FLAG(re->flags, ZEBRA_FLAG_OFFLOADED | ZEBRA_FLAG_OFFLOAD_FAILED);
}

/* Main pthread: one status onto the RIB. */
static void fz_status_one(const struct fz_status *s)
{
	struct prefix p = { .family = s->family, .prefixlen = s->plen };
	struct route_table *table;
	struct route_entry *re, *sel;
	struct route_node *rn;
	rib_dest_t *dest;

	memcpy(&p.u.prefix, s->addr, s->family == AF_INET ? 4 : 16);
	table = zebra_vrf_table(s->family == AF_INET ? AFI_IP : AFI_IP6,
				SAFI_UNICAST, VRF_DEFAULT);
	rn = table ? srcdest_rnode_lookup(table, &p, NULL) : NULL;
	if (!rn) {
		CNT_INC(status_no_route);
		return;
	}
	dest = rib_dest_from_rnode(rn);
	sel = dest ? dest->selected_fib : NULL;
	if (sel && CHECK_FLAG(sel->status, ROUTE_ENTRY_REMOVED))
		sel = NULL;
	if (!sel)
		CNT_INC(status_no_route);
	RNODE_FOREACH_RE (rn, re) {
		if (re != sel) {
			/* An entry fpmd no longer answers for. */
			fz_re_unmark(re);
			continue;
		}
		fz_re_mark(re, s->offloaded);
		if (s->offloaded)
			CNT_INC(marked_offloaded);
		else
			CNT_INC(marked_failed);
	}
	route_unlock_node(rn);
}

/* Main pthread: fpmd is gone, nobody says what XDP does: no marks. */
static void fz_status_clear_all(void)
{
	for (afi_t afi = AFI_IP; afi <= AFI_IP6; afi++) {
		struct route_table *table =
		    zebra_vrf_table(afi, SAFI_UNICAST, VRF_DEFAULT);
		struct route_entry *re;
		struct route_node *rn;

		if (!table)
			continue;
		for (rn = route_top(table); rn; rn = srcdest_route_next(rn))
			RNODE_FOREACH_RE (rn, re)
				fz_re_unmark(re);
	}
	CNT_INC(clears);
}

static void fz_status_apply(struct thread *t)
{
	int n = 0;

	/* Shutting down: the RIB is being taken apart. */
	if (atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		return;
	for (;;) {
		if (fz.st_next == fz.st_main.len) {
			struct fz_status_q tmp;

			fz.st_main.len = fz.st_next = 0;
			pthread_mutex_lock(&fz.st_lock);
			tmp = fz.st_q;
			fz.st_q = fz.st_main;
			fz.st_main = tmp;
			pthread_mutex_unlock(&fz.st_lock);
			if (!fz.st_main.len)
				return;
		}
		while (fz.st_next < fz.st_main.len) {
			const struct fz_status *s = &fz.st_main.v[fz.st_next++];

			if (!s->family)
				fz_status_clear_all();
			else
				fz_status_one(s);
			if (++n >= FZ_STATUS_SLICE) {
				/* Let zebra breathe; the rest next turn. */
				thread_add_event(zrouter.master,
						 fz_status_apply, NULL, 0,
						 &fz.t_status);
				return;
			}
		}
	}
}

/* The plugin's pthread: a RouteStatus from fpmd. */
static void fz_route_status(const Fpmd__RouteStatus *rs)
{
	const Fpmd__Prefix *pp = rs->prefix;
	struct fz_status s = { .offloaded = rs->offloaded };

	CNT_INC(status_received);
	if (!pp || (pp->addr.len != 4 && pp->addr.len != 16) ||
	    pp->len > pp->addr.len * 8u ||
	    (rs->table && rs->table != FZ_TABLE_MAIN))
		return;
	s.family = pp->addr.len == 4 ? AF_INET : AF_INET6;
	s.plen = (uint8_t)pp->len;
	memcpy(s.addr, pp->addr.data, pp->addr.len);
	fz_status_push(&s);
}

/* ---- the connection (the plugin's pthread) --------------------------- */

static void fz_schedule_connect(void)
{
	if (atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		return;
	thread_add_timer_msec(fz.fthread->master, fz_connect, NULL, FZ_RETRY_MS,
			      &fz.t_connect);
}

static void fz_disconnect(bool quiet, const char *fmt, ...) PRINTFRR(2, 3);
static void fz_disconnect(bool quiet, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintfrr(why, sizeof(why), fmt, ap);
	va_end(ap);
	THREAD_OFF(fz.t_read);
	THREAD_OFF(fz.t_write);
	if (fz.fd >= 0)
		close(fz.fd);
	fz.fd = -1;
	pthread_mutex_lock(&fz.lock);
	fz.up = false;
	fz.overrun = false;
	fz.gen++;
	fz_buf_free(&fz.q);
	fz_ring_clear(&fz.pending);
	snprintf(fz.last_error, sizeof(fz.last_error), "%s", why);
	pthread_mutex_unlock(&fz.lock);
	atomic_store_explicit(&fz.is_up, false, memory_order_release);
	fz_buf_free(&fz.w);
	atomic_store_explicit(&fz.w_left, 0, memory_order_relaxed);
	wire_buf_free(&fz.in);
	CNT_INC(disconnects);
	{
		/* Queued after the last status of this connection, before
		 * any of the next one's. */
		struct fz_status clear = { .family = 0 };

		fz_status_push(&clear);
	}
	if (monotime(NULL) - fz.connected_at < FZ_FLAP_S)
		fz.flaps++;
	else
		fz.flaps = 0;
	if (!quiet && (fz.flaps <= 1 || fz.flaps % 60 == 0))
		zlog_warn(
		    FZ_LOG "connection to fpmd at %s lost: %s; "
			   "reconnecting (zebra and the kernel carry on)%s",
		    fz.path, why,
		    fz.flaps > 1 ? " [it keeps dropping, said once a minute]"
				 : "");
	fz_schedule_connect();
}

static void fz_connect(struct thread *t)
{
	Fpmd__PluginMsg m = FPMD__PLUGIN_MSG__INIT;
	Fpmd__Hello hello = FPMD__HELLO__INIT;
	Fpmd__ReplayBegin begin = FPMD__REPLAY_BEGIN__INIT;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, sndbuf = FZ_SNDBUF;
	uint32_t gen;

	if (atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		return;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	strlcpy(sa.sun_path, fz.path, sizeof(sa.sun_path));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		CNT_INC(connect_failures);
		fz_set_error("connect %s: %s", fz.path, safe_strerror(e));
		if (!fz.absent_logged)
			zlog_warn(FZ_LOG
				  "fpmd is not reachable at %s (%s): "
				  "routes go to the kernel only, no fast path; "
				  "retrying every %u ms (said once)",
				  fz.path, safe_strerror(e), FZ_RETRY_MS);
		fz.absent_logged = true;
		fz_schedule_connect();
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	fz.fd = fd;

	hello.version = FPMD__API_VERSION__API_VERSION_CURRENT;
	hello.peer = (char *)FZ_NAME " " FZ_VERSION " (FRR " FRR_VERSION ")";
	pthread_mutex_lock(&fz.lock);
	fz.up = true;
	fz.overrun = false;
	gen = ++fz.gen;
	fz.seq = 0;
	fz.replay_id++;
	fz.q.len = 0;
	m.msg_case = FPMD__PLUGIN_MSG__MSG_HELLO;
	m.hello = &hello;
	fz_append_locked(&m);
	begin.id = fz.replay_id;
	m.msg_case = FPMD__PLUGIN_MSG__MSG_REPLAY_BEGIN;
	m.replay_begin = &begin;
	fz_append_locked(&m);
	pthread_mutex_unlock(&fz.lock);
	atomic_store_explicit(&fz.is_up, true, memory_order_release);
	CNT_INC(connections);

	fz.connected_at = monotime(NULL);
	if (fz.flaps <= 1 || fz.flaps % 60 == 0)
		zlog_info(FZ_LOG "connected to fpmd at %s; replay %" PRIu64
				 " begins",
			  fz.path, begin.id);
	fz.absent_logged = false;
	thread_add_read(fz.fthread->master, fz_read, NULL, fd, &fz.t_read);
	fz_kick();
	/* The RIB is the main pthread's: the walk runs there. */
	if (!atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		thread_add_event(zrouter.master, fz_walk_start, NULL, gen,
				 &fz.t_walk_start);
}

static void fz_write_some(void)
{
	for (;;) {
		ssize_t n;

		if (fz.w.off == fz.w.len) {
			struct fz_buf tmp;

			/* Keep no large buffer around after a replay. */
			if (fz.w.cap > (8u << 20))
				fz_buf_free(&fz.w);
			fz.w.len = fz.w.off = 0;
			pthread_mutex_lock(&fz.lock);
			tmp = fz.q;
			fz.q = fz.w;
			fz.w = tmp;
			pthread_mutex_unlock(&fz.lock);
			fz.w.off = 0;
			atomic_store_explicit(&fz.w_left, fz.w.len,
					      memory_order_relaxed);
			if (!fz.w.len)
				return;
		}
		n = send(fz.fd, fz.w.data + fz.w.off, fz.w.len - fz.w.off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				thread_add_write(fz.fthread->master, fz_flush,
						 NULL, fz.fd, &fz.t_write);
				return;
			}
			fz_disconnect(false, "write: %s", safe_strerror(errno));
			return;
		}
		fz.w.off += (size_t)n;
		atomic_store_explicit(&fz.w_left, fz.w.len - fz.w.off,
				      memory_order_relaxed);
		atomic_fetch_add_explicit(&fz.c.bytes_sent, (uint64_t)n,
					  memory_order_relaxed);
	}
}

static void fz_flush(struct thread *t)
{
	bool overrun;

	atomic_store_explicit(&fz.kicked, false, memory_order_release);
	if (fz.fd < 0)
		return;
	pthread_mutex_lock(&fz.lock);
	overrun = fz.overrun;
	pthread_mutex_unlock(&fz.lock);
	if (overrun) {
		CNT_INC(overruns);
		fz_disconnect(false,
			      "fpmd is not keeping up (more than %u MiB "
			      "queued); the next connection resyncs it",
			      FZ_BACKLOG_MAX >> 20);
		return;
	}
	fz_write_some();
}

/* Refusals are operators' business, but a full map refuses thousands. */
static void fz_log_refusal(const char *what, const Fpmd__Ack *a)
{
	const ProtobufCEnumValue *sv = protobuf_c_enum_descriptor_get_value(
	    &fpmd__status__descriptor, a->status);
	time_t now = time(NULL);

	if (now - fz.log_window >= FZ_LOG_WINDOW) {
		if (fz.log_suppressed)
			zlog_warn(FZ_LOG "%u more refusals by fpmd not logged "
					 "(see fpmctl show routes)",
				  fz.log_suppressed);
		fz.log_window = now;
		fz.log_count = fz.log_suppressed = 0;
	}
	if (fz.log_count >= FZ_LOG_BURST) {
		fz.log_suppressed++;
		return;
	}
	fz.log_count++;
	zlog_warn(FZ_LOG "fpmd refused %s: %s: %s", what, sv ? sv->name : "?",
		  a->error && *a->error ? a->error : "-");
}

static void fz_ack(const Fpmd__Ack *a)
{
	struct fz_pending p;
	char what[96];
	bool found;

	pthread_mutex_lock(&fz.lock);
	found = fz_ring_take(&fz.pending, a->seq, &p);
	pthread_mutex_unlock(&fz.lock);
	if (a->status == FPMD__STATUS__OK) {
		CNT_INC(acks_ok);
		return;
	}
	CNT_INC(acks_failed);
	if (!found) {
		CNT_INC(acks_unmatched);
		snprintf(what, sizeof(what), "operation %" PRIu64, a->seq);
	} else if (p.kind == FZ_K_ROUTE) {
		struct prefix pfx = { .family = p.family, .prefixlen = p.plen };

		memcpy(&pfx.u.prefix, p.addr, p.family == AF_INET ? 4 : 16);
		snprintfrr(what, sizeof(what), "route %pFX (%s)", &pfx,
			   p.del ? "delete" : "install");
	} else {
		snprintf(what, sizeof(what), "nexthop %u (%s)", p.id,
			 p.del ? "delete" : "install");
	}
	fz_set_error("fpmd refused %s: %s", what, a->error ? a->error : "");
	fz_log_refusal(what, a);
}

/* Returns false when the connection was closed. */
static bool fz_handle(const uint8_t *buf, size_t len)
{
	Fpmd__FpmdMsg *m = fpmd__fpmd_msg__unpack(NULL, len, buf);

	if (!m) {
		fz_disconnect(false, "malformed message from fpmd (%zu bytes)",
			      len);
		return false;
	}
	switch (m->msg_case) {
	case FPMD__FPMD_MSG__MSG_HELLO:
		if (m->hello->version !=
		    FPMD__API_VERSION__API_VERSION_CURRENT) {
			uint32_t v = m->hello->version;

			/* Said once; the retries stay quiet. */
			if (!fz.refused_logged)
				zlog_err(
				    FZ_LOG
				    "fpmd at %s speaks API version "
				    "%u, this plugin %u: refused; rebuild "
				    "the plugin with this fpmd",
				    fz.path, v,
				    FPMD__API_VERSION__API_VERSION_CURRENT);
			fz.refused_logged = true;
			fpmd__fpmd_msg__free_unpacked(m, NULL);
			fz_disconnect(true,
				      "fpmd speaks API version %u, "
				      "this plugin %u",
				      v,
				      FPMD__API_VERSION__API_VERSION_CURRENT);
			return false;
		}
		fz.refused_logged = false;
		pthread_mutex_lock(&fz.lock);
		snprintf(fz.peer, sizeof(fz.peer), "%s",
			 m->hello->peer ? m->hello->peer : "");
		pthread_mutex_unlock(&fz.lock);
		break;
	case FPMD__FPMD_MSG__MSG_ACK:
		fz_ack(m->ack);
		break;
	case FPMD__FPMD_MSG__MSG_ROUTE_STATUS:
		fz_route_status(m->route_status);
		break;
	case FPMD__FPMD_MSG__MSG_REPLAY_DONE:
		CNT_INC(replays_done);
		zlog_info(FZ_LOG "fpmd completed replay %" PRIu64 " (%" PRIu64
				 " routes, %" PRIu64 " nexthops)",
			  m->replay_done->id, m->replay_done->routes,
			  m->replay_done->nexthops);
		break;
	default:
		break; /* newer fpmd: ignore what we do not know */
	}
	fpmd__fpmd_msg__free_unpacked(m, NULL);
	return true;
}

static void fz_read(struct thread *t)
{
	const uint8_t *msg;
	size_t len;
	long n;
	int r;

	n = wire_fill(fz.fd, &fz.in);
	if (n == -EAGAIN || n == -EINTR) {
		thread_add_read(fz.fthread->master, fz_read, NULL, fz.fd,
				&fz.t_read);
		return;
	}
	if (n == 0) {
		fz_disconnect(false, "fpmd closed the connection");
		return;
	}
	if (n < 0) {
		fz_disconnect(false, "read: %s", safe_strerror((int)-n));
		return;
	}
	while ((r = wire_frame(&fz.in, FZ_MAX_MSG, &msg, &len)) == 1) {
		if (!fz_handle(msg, len))
			return;
		wire_consume(&fz.in, WIRE_HDR + len);
	}
	if (r < 0) {
		fz_disconnect(false, "fpmd sent a message over %u bytes",
			      FZ_MAX_MSG);
		return;
	}
	thread_add_read(fz.fthread->master, fz_read, NULL, fz.fd, &fz.t_read);
}

/* ---- show fpmd plugin (zebra's own vty; vtysh does not know it) ------ */

DEFUN(show_fpmd_plugin, show_fpmd_plugin_cmd, "show fpmd plugin [json]",
      SHOW_STR "fpmd, the XDP fast path\n"
	       "zebra's dataplane provider feeding fpmd\n" JSON_STR)
{
	bool uj = argc > 3;
	struct json_object *jo = json_object_new_object();
	char err[sizeof(fz.last_error)], peer[sizeof(fz.peer)];
	uint64_t replay_id, backlog;
	bool up;

	pthread_mutex_lock(&fz.lock);
	up = fz.up;
	replay_id = fz.replay_id;
	backlog = fz.q.len;
	snprintf(err, sizeof(err), "%s", fz.last_error);
	snprintf(peer, sizeof(peer), "%s", fz.peer);
	pthread_mutex_unlock(&fz.lock);
	backlog += atomic_load_explicit(&fz.w_left, memory_order_relaxed);

	json_object_string_add(jo, "socket", fz.path);
	json_object_boolean_add(jo, "connected", up);
	json_object_string_add(jo, "peer", peer);
	json_object_int_add(jo, "replayId", replay_id);
	json_object_int_add(jo, "connections", CNT_GET(connections));
	json_object_int_add(jo, "connectFailures", CNT_GET(connect_failures));
	json_object_int_add(jo, "disconnects", CNT_GET(disconnects));
	json_object_int_add(jo, "routeOps", CNT_GET(route_ops));
	json_object_int_add(jo, "nexthopOps", CNT_GET(nexthop_ops));
	json_object_int_add(jo, "bytesSent", CNT_GET(bytes_sent));
	json_object_int_add(jo, "backlogBytes", backlog);
	json_object_int_add(jo, "acksOk", CNT_GET(acks_ok));
	json_object_int_add(jo, "acksFailed", CNT_GET(acks_failed));
	json_object_int_add(jo, "skippedDisconnected", CNT_GET(skipped_down));
	json_object_int_add(jo, "skippedOther", CNT_GET(skipped_other));
	json_object_int_add(jo, "unsupported", CNT_GET(unsupported));
	json_object_int_add(jo, "replaysSent", CNT_GET(replays_sent));
	json_object_int_add(jo, "replaysDone", CNT_GET(replays_done));
	json_object_int_add(jo, "overruns", CNT_GET(overruns));
	json_object_int_add(jo, "statusReceived", CNT_GET(status_received));
	json_object_int_add(jo, "statusDropped", CNT_GET(status_dropped));
	json_object_int_add(jo, "statusNoRoute", CNT_GET(status_no_route));
	json_object_int_add(jo, "markedOffloaded", CNT_GET(marked_offloaded));
	json_object_int_add(jo, "markedOffloadFailed", CNT_GET(marked_failed));
	json_object_int_add(jo, "marksCleared", CNT_GET(clears));
	json_object_string_add(jo, "lastError", err);
	if (uj)
		return vty_json(vty, jo);
	vty_out(vty, "fpmd plugin: %s %s%s%s\n",
		up ? "connected to" : "not connected to", fz.path,
		*peer ? ", peer " : "", peer);
	vty_out(vty,
		"  connections %" PRIu64 ", failed attempts %" PRIu64
		", disconnects %" PRIu64 ", replays sent %" PRIu64
		", completed %" PRIu64 "\n",
		CNT_GET(connections), CNT_GET(connect_failures),
		CNT_GET(disconnects), CNT_GET(replays_sent),
		CNT_GET(replays_done));
	vty_out(vty,
		"  live ops: routes %" PRIu64 ", nexthops %" PRIu64
		", skipped while disconnected %" PRIu64
		", not for fpmd %" PRIu64 ", unsupported %" PRIu64 "\n",
		CNT_GET(route_ops), CNT_GET(nexthop_ops), CNT_GET(skipped_down),
		CNT_GET(skipped_other), CNT_GET(unsupported));
	vty_out(vty,
		"  acks ok %" PRIu64 ", refused %" PRIu64
		"; bytes sent %" PRIu64 ", queued %" PRIu64 "\n",
		CNT_GET(acks_ok), CNT_GET(acks_failed), CNT_GET(bytes_sent),
		backlog);
	vty_out(vty,
		"  route status from fpmd %" PRIu64 ": marked offloaded %" PRIu64
		", offload-failed %" PRIu64 ", no such route %" PRIu64
		", dropped %" PRIu64 ", all marks cleared %" PRIu64 " times\n",
		CNT_GET(status_received), CNT_GET(marked_offloaded),
		CNT_GET(marked_failed), CNT_GET(status_no_route),
		CNT_GET(status_dropped), CNT_GET(clears));
	if (*err)
		vty_out(vty, "  last error: %s\n", err);
	json_object_free(jo);
	return CMD_SUCCESS;
}

/* ---- provider and module --------------------------------------------- */

static int fz_start(struct zebra_dplane_provider *prov)
{
	fz.fthread = frr_pthread_new(NULL, FZ_NAME, "fpmd_zebra");
	if (!fz.fthread || frr_pthread_run(fz.fthread, NULL) != 0) {
		zlog_err(FZ_LOG "cannot start its pthread: no fast path feed");
		return -1;
	}
	thread_add_event(fz.fthread->master, fz_connect, NULL, 0,
			 &fz.t_connect);
	return 0;
}

static int fz_finish(struct zebra_dplane_provider *prov, bool early)
{
	if (early) {
		/* Shutdown's route deletions still flow to fpmd. */
		atomic_store_explicit(&fz.shutdown, true, memory_order_relaxed);
		return 0;
	}
	if (fz.fthread) {
		frr_pthread_stop(fz.fthread, NULL);
		fz.fthread = NULL;
	}
	if (fz.fd >= 0)
		close(fz.fd);
	fz.fd = -1;
	fz_buf_free(&fz.q);
	fz_buf_free(&fz.w);
	fz_ring_clear(&fz.pending);
	wire_buf_free(&fz.in);
	pthread_mutex_lock(&fz.st_lock);
	free(fz.st_q.v);
	memset(&fz.st_q, 0, sizeof(fz.st_q));
	pthread_mutex_unlock(&fz.st_lock);
	/* zebra's main loop no longer runs our events. */
	free(fz.st_main.v);
	memset(&fz.st_main, 0, sizeof(fz.st_main));
	fz.st_next = 0;
	return 0;
}

/* zebra's main pthread, first thing at shutdown: before the RIB goes. */
static int fz_early_fini(void)
{
	atomic_store_explicit(&fz.shutdown, true, memory_order_relaxed);
	THREAD_OFF(fz.t_walk_start);
	THREAD_OFF(fz.t_status);
	fz_walk_stop();
	return 0;
}

static int fz_late_init(struct thread_master *tm)
{
	const char *arg = THIS_MODULE->load_args;
	int ret;

	if (arg && *arg) {
		if (strlen(arg) >= sizeof(fz.path)) {
			zlog_err(FZ_LOG "socket path too long: %s; not loaded",
				 arg);
			return 0;
		}
		strlcpy(fz.path, arg, sizeof(fz.path));
	} else {
		strlcpy(fz.path, FZ_DEFAULT_SOCKET, sizeof(fz.path));
	}
	pthread_mutex_init(&fz.lock, NULL);
	pthread_mutex_init(&fz.st_lock, NULL);
	ret = dplane_provider_register(FZ_NAME, DPLANE_PRIO_POSTPROCESS,
				       DPLANE_PROV_FLAG_THREADED, fz_start,
				       fz_process, fz_finish, NULL, &fz.prov);
	if (ret) {
		zlog_err(FZ_LOG "dplane_provider_register failed (%d): no "
				"fast path feed",
			 ret);
		return 0;
	}
	hook_register(frr_early_fini, fz_early_fini);
	install_element(VIEW_NODE, &show_fpmd_plugin_cmd);
	zlog_info(FZ_LOG "loaded (built for FRR " FRR_VERSION "), feeding "
			 "fpmd at %s",
		  fz.path);
	return 0;
}

static int fz_module_init(void)
{
	hook_register(frr_late_init, fz_late_init);
	return 0;
}

FRR_MODULE_SETUP(.name = FZ_NAME, .version = FZ_VERSION,
		 .description = "fpmd XDP fast path feed (dataplane provider)",
		 .init = fz_module_init);
