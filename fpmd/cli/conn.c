// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl's connection to fpmd's control socket: framed protobuf requests
 * and responses (common/wire.c), opened with a Hello naming our API
 * version. fpmctl makes one connection per run; a failure ends the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "config.h"
#include "cli/fpmctl.h"
#include "common/wire.h"

static int conn = -1;

Fpmd__Response *conn_receive(void)
{
	uint8_t *buf = NULL;
	Fpmd__Response *rsp;
	long n;

	n = wire_recv(conn, &buf, WIRE_MAX_RESPONSE);
	if (n < 0) {
		fprintf(stderr, "fpmctl: receive: %s\n", strerror((int)-n));
		exit(1);
	}
	rsp = fpmd__response__unpack(NULL, (size_t)n, buf);
	free(buf);
	if (!rsp) {
		fprintf(stderr, "fpmctl: malformed response from fpmd\n");
		exit(1);
	}
	return rsp;
}

Fpmd__Response *conn_transact(Fpmd__Request *req)
{
	int ret = wire_send(conn, &req->base);

	if (ret) {
		fprintf(stderr, "fpmctl: send: %s\n", strerror(-ret));
		exit(1);
	}
	return conn_receive();
}

void conn_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__Hello hello = FPMD__HELLO__INIT;
	Fpmd__Response *rsp;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "fpmctl: socket path too long\n");
		exit(1);
	}
	strcpy(sa.sun_path, path);
	conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (conn < 0 || connect(conn, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "fpmctl: cannot connect to fpmd at %s: %s\n",
			path, strerror(errno));
		exit(1);
	}
	hello.version = FPMD__API_VERSION__API_VERSION_CURRENT;
	hello.peer = "fpmctl " PACKAGE_VERSION;
	req.req_case = FPMD__REQUEST__REQ_HELLO;
	req.hello = &hello;
	rsp = conn_transact(&req);
	if (rsp->status != FPMD__STATUS__OK) {
		fprintf(stderr,
			"fpmctl: fpmd refused us: %s (fpmd speaks API "
			"version %u, we speak %u)\n",
			rsp->error, rsp->hello ? rsp->hello->version : 0,
			FPMD__API_VERSION__API_VERSION_CURRENT);
		exit(1);
	}
	fpmd__response__free_unpacked(rsp, NULL);
}

int conn_check(const Fpmd__Response *rsp)
{
	if (rsp->status == FPMD__STATUS__OK)
		return 0;
	fprintf(stderr, "fpmctl: %s\n",
		rsp->error && rsp->error[0] ? rsp->error : "request failed");
	return 1;
}

int conn_simple(Fpmd__Request *req)
{
	Fpmd__Response *rsp = conn_transact(req);
	int ret = conn_check(rsp);

	fpmd__response__free_unpacked(rsp, NULL);
	return ret;
}
