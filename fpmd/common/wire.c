// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "common/wire.h"
#include "fpmd.pb-c.h"

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int wire_send(int fd, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(len + WIRE_HDR);
	uint32_t be = htonl((uint32_t)len);
	int ret;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, &be, WIRE_HDR);
	protobuf_c_message_pack(msg, buf + WIRE_HDR);
	ret = write_all(fd, buf, len + WIRE_HDR);
	free(buf);
	return ret;
}

long wire_recv(int fd, uint8_t **buf, size_t max)
{
	uint32_t be;
	size_t len;
	int ret;

	ret = read_all(fd, (uint8_t *)&be, WIRE_HDR);
	if (ret)
		return ret;
	len = ntohl(be);
	if (len > max)
		return -EMSGSIZE;
	*buf = malloc(len ? len : 1);
	if (!*buf)
		return -ENOMEM;
	ret = read_all(fd, *buf, len);
	if (ret) {
		free(*buf);
		*buf = NULL;
		return ret;
	}
	return (long)len;
}

long wire_fill(int fd, struct wire_buf *wb)
{
	ssize_t r;

	if (wb->cap - wb->len < 4096) {
		size_t cap = wb->cap ? wb->cap * 2 : 8192;
		uint8_t *d = realloc(wb->data, cap);

		if (!d)
			return -ENOMEM;
		wb->data = d;
		wb->cap = cap;
	}
	r = read(fd, wb->data + wb->len, wb->cap - wb->len);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	wb->len += (size_t)r;
	return r;
}

int wire_frame(struct wire_buf *wb, size_t max, const uint8_t **msg,
	       size_t *len)
{
	uint32_t be;
	size_t n;

	if (wb->len < WIRE_HDR)
		return 0;
	memcpy(&be, wb->data, WIRE_HDR);
	n = ntohl(be);
	if (n > max)
		return -EMSGSIZE;
	if (wb->len < WIRE_HDR + n)
		return 0;
	*msg = wb->data + WIRE_HDR;
	*len = n;
	return 1;
}

void wire_consume(struct wire_buf *wb, size_t n)
{
	memmove(wb->data, wb->data + n, wb->len - n);
	wb->len -= n;
}

void wire_buf_free(struct wire_buf *wb)
{
	free(wb->data);
	memset(wb, 0, sizeof(*wb));
}

int wire_queue(struct wire_out *o, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg), need;
	struct wire_buf *b = &o->b;
	uint32_t be = htonl((uint32_t)len);

	if (o->off && o->off == b->len)
		b->len = o->off = 0;
	need = b->len + WIRE_HDR + len;
	if (need > b->cap && o->off) {
		memmove(b->data, b->data + o->off, b->len - o->off);
		b->len -= o->off;
		o->off = 0;
		need = b->len + WIRE_HDR + len;
	}
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 8192;
		uint8_t *d;

		while (cap < need)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d)
			return -ENOMEM;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, &be, WIRE_HDR);
	protobuf_c_message_pack(msg, b->data + b->len + WIRE_HDR);
	b->len += WIRE_HDR + len;
	return 0;
}

int wire_flush(int fd, struct wire_out *o)
{
	while (wire_out_pending(o)) {
		ssize_t w = send(fd, o->b.data + o->off, wire_out_pending(o),
				 MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		o->off += (size_t)w;
	}
	o->b.len = o->off = 0;
	/* A big burst need not stay allocated. */
	if (o->b.cap > (4u << 20))
		wire_buf_free(&o->b);
	return 0;
}

void wire_out_free(struct wire_out *o)
{
	wire_buf_free(&o->b);
	o->off = 0;
}

int wire_status_of(int err)
{
	switch (err) {
	case 0: return FPMD__STATUS__OK;
	case -ENOENT: return FPMD__STATUS__ERR_NOT_FOUND;
	case -EEXIST: return FPMD__STATUS__ERR_EXISTS;
	case -ENOSPC:
	case -E2BIG: return FPMD__STATUS__ERR_FULL;
	case -EBUSY: return FPMD__STATUS__ERR_IN_USE;
	case -EINVAL: return FPMD__STATUS__ERR_INVALID;
	default: return FPMD__STATUS__ERR_INTERNAL;
	}
}

