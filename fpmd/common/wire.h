/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Framing of protobuf messages on the control socket: a 4-byte big-endian
 * length, then the packed message.
 */
#ifndef FPMD_WIRE_H
#define FPMD_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#define WIRE_HDR 4
#define WIRE_MAX_REQUEST (1u << 20) /* requests are small */
#define WIRE_MAX_RESPONSE (256u << 20) /* a full table shown at once */

struct wire_buf {
	uint8_t *data;
	size_t len, cap;
};

/* Blocking send of one framed message; 0 or -errno. */
int wire_send(int fd, const ProtobufCMessage *msg);
/* Blocking receive of one frame into *buf (malloc'd); length or -errno.
 * -EMSGSIZE when the peer announces more than max. */
long wire_recv(int fd, uint8_t **buf, size_t max);
/* Non-blocking: read what is there. Returns bytes read, 0 on EOF,
 * -EAGAIN when nothing, or -errno. */
long wire_fill(int fd, struct wire_buf *wb);
/* A complete frame at the head of wb? Sets *msg and *len (borrowed) and
 * returns 1; 0 if incomplete; -EMSGSIZE if its length exceeds max. */
int wire_frame(struct wire_buf *wb, size_t max, const uint8_t **msg,
	       size_t *len);
void wire_consume(struct wire_buf *wb, size_t n);

/* What a non-blocking peer has not taken yet: framed messages, written
 * from off on as the socket drains (EPOLLOUT). */
struct wire_out {
	struct wire_buf b;
	size_t off;
};

static inline size_t wire_out_pending(const struct wire_out *o)
{
	return o->b.len - o->off;
}

/* Append one framed message; 0 or -ENOMEM. */
int wire_queue(struct wire_out *o, const ProtobufCMessage *msg);
/* Write what the socket takes: 0 when all is written, -EAGAIN when the
 * rest waits for the socket, or -errno. */
int wire_flush(int fd, struct wire_out *o);
void wire_out_free(struct wire_out *o);
void wire_buf_free(struct wire_buf *wb);

/* A -errno from the tables as an API status (proto Status). */
int wire_status_of(int err);

#endif
