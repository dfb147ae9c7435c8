// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The connection to fpmd, on the plugin's own pthread: connect (and
 * retry every second while fpmd is absent), Hello and ReplayBegin, write
 * what producers queued, read Acks, route statuses and ReplayDone, and
 * drop the connection when fpmd falls too far behind (the next replay
 * resyncs it). Producers on any pthread queue under fz.lock.
 */
#include "fpmd_zebra.h"

static void fz_read(struct fz_event *t);
static void fz_flush(struct fz_event *t);

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

void fz_buf_free(struct fz_buf *b)
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

void fz_ring_clear(struct fz_ring *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* ---- the queue to fpmd (any pthread) --------------------------------- */

static void fz_kick(void)
{
	if (!atomic_exchange_explicit(&fz.kicked, true, memory_order_acq_rel))
		fz_add_event(fz.fthread->master, fz_flush, NULL, 0,
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
bool fz_queue(Fpmd__PluginMsg *m, uint64_t *seqp,
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

uint64_t fz_backlog(void)
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

/* ---- the connection (the plugin's pthread) --------------------------- */

static void fz_schedule_connect(void)
{
	if (atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		return;
	fz_add_timer_msec(fz.fthread->master, fz_connect, NULL, FZ_RETRY_MS,
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
	FZ_OFF(fz.t_read);
	FZ_OFF(fz.t_write);
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

void fz_connect(struct fz_event *t)
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
	fz_add_read(fz.fthread->master, fz_read, NULL, fd, &fz.t_read);
	fz_kick();
	/* The RIB is the main pthread's: the walk runs there. */
	if (!atomic_load_explicit(&fz.shutdown, memory_order_relaxed))
		fz_add_event(zrouter.master, fz_walk_start, NULL, gen,
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
				fz_add_write(fz.fthread->master, fz_flush,
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

static void fz_flush(struct fz_event *t)
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
	case FPMD__FPMD_MSG__MSG__NOT_SET:
	case _FPMD__FPMD_MSG__MSG__CASE_IS_INT_SIZE:
	default:
		break; /* newer fpmd: ignore what we do not know */
	}
	fpmd__fpmd_msg__free_unpacked(m, NULL);
	return true;
}

static void fz_read(struct fz_event *t)
{
	const uint8_t *msg;
	size_t len;
	long n;
	int r;

	n = wire_fill(fz.fd, &fz.in);
	if (n == -EAGAIN || n == -EINTR) {
		fz_add_read(fz.fthread->master, fz_read, NULL, fz.fd,
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
	fz_add_read(fz.fthread->master, fz_read, NULL, fz.fd, &fz.t_read);
}
