/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the units of the fpmd_zebra module share: fpmd_zebra.c (the
 * module, the dataplane provider, `show fpmd plugin`), encode.c (routes
 * and nexthops as PluginMsg, the replay walk), conn.c (the connection to
 * fpmd on the plugin's own pthread), offload.c (fpmd's route status
 * into zebra's RIB). Built with FRR's headers and flags: config.h is
 * FRR's and comes first.
 */
#ifndef FPMD_ZEBRA_H
#define FPMD_ZEBRA_H

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

#include "fz_compat.h"


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
/* The walk waits for zebra's startup reads to be processed (encode.c),
 * looking every FZ_SETTLE_POLL_MS, for at most FZ_SETTLE_MAX_MS. */
#define FZ_SETTLE_POLL_MS 10
#define FZ_SETTLE_MAX_MS 10000
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

struct fpmd_zebra {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct zebra_dplane_provider *prov;
	struct frr_pthread *fthread;
	atomic_bool shutdown;

	/* The plugin pthread's own. */
	int fd;
	bool absent_logged, refused_logged;
	struct wire_buf in;
	struct fz_buf w; /* taken from q, being written */
	struct fz_event *t_connect, *t_read, *t_write, *t_kick;
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
	struct fz_event *t_walk_start;
	struct {
		uint32_t gen;
		uint64_t id;
		afi_t afi;
		bool in_table;
		struct route_node *rn;
		uint64_t routes, nexthops;
		struct timeval wait_from; /* when it began waiting for zebra */
		struct fz_event *t;
	} walk;

	/* Route statuses: filled on the plugin's pthread under st_lock,
	 * applied on zebra's main pthread (st_main, st_next: its own). */
	pthread_mutex_t st_lock;
	struct fz_status_q st_q;
	struct fz_status_q st_main;
	size_t st_next;
	struct fz_event *t_status;

	struct fz_counters c;
};
extern struct fpmd_zebra fz;

#define CNT_INC(f) atomic_fetch_add_explicit(&fz.c.f, 1, memory_order_relaxed)
#define CNT_GET(f) atomic_load_explicit(&fz.c.f, memory_order_relaxed)

/* conn.c: the plugin's pthread, and the queue any pthread writes to. */
void fz_connect(struct fz_event *t);
void fz_buf_free(struct fz_buf *b);
void fz_ring_clear(struct fz_ring *r);
/* Queue one message for fpmd (see conn.c). */
bool fz_queue(Fpmd__PluginMsg *m, uint64_t *seqp, struct fz_pending *what,
	      uint32_t gen);
/* Bytes queued for fpmd and not yet written. */
uint64_t fz_backlog(void);

/* encode.c */
/* Routes fpmd can program: the default VRF's main table, unicast. */
bool fz_route_wanted(const struct prefix *p, const struct prefix *src_p,
		     vrf_id_t vrf, uint32_t table, afi_t afi, safi_t safi);
/* The mtu zebra puts in the kernel route. */
uint32_t fz_mtu(uint32_t mtu, uint32_t nh_mtu);
bool fz_send_route(bool del, int type, const struct prefix *p,
		   const struct nexthop_group *ng, uint32_t nhg_id,
		   uint32_t mtu, uint32_t gen, bool *sent_unsupported);
bool fz_send_nexthop(bool del, uint32_t id, const struct nexthop_group *ng,
		     const struct nh_grp *grp, uint8_t ngrp, uint32_t gen);
/* zebra's main pthread: walk the RIB for the replay of connection gen. */
void fz_walk_start(struct fz_event *t);
void fz_walk_stop(void);

/* offload.c */
/* Any pthread: queue one status for the main pthread. */
void fz_status_push(const struct fz_status *s);
/* The plugin's pthread: a RouteStatus from fpmd. */
void fz_route_status(const Fpmd__RouteStatus *rs);

#endif
