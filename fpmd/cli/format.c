// SPDX-License-Identifier: GPL-2.0-or-later
/* fpmctl: the protobuf values of fpmd's answers as text. */
#include <stdio.h>
#include <sys/socket.h>

#include "cli/fpmctl.h"
#include "common/util.h"

const char *bin_addr(ProtobufCBinaryData b, char *buf)
{
	if (b.len != 4 && b.len != 16)
		return "";
	return fmt_addr(b.len == 4 ? AF_INET : AF_INET6, b.data, buf);
}

const char *bin_prefix(const Fpmd__Prefix *p, char *buf)
{
	char a[ADDR_STRLEN];

	snprintf(buf, PREFIX_STRLEN, "%s/%u", bin_addr(p->addr, a), p->len);
	return buf;
}

const char *bin_mac(ProtobufCBinaryData b, char *buf)
{
	if (b.len != 6)
		return "";
	return fmt_mac(b.data, buf);
}

const char *source_name(Fpmd__Source s)
{
	switch (s) {
	case FPMD__SOURCE__SRC_PLUGIN:
		return "plugin";
	case FPMD__SOURCE__SRC_FPM:
		return "fpm";
	case FPMD__SOURCE__SRC_STATIC:
		return "static";
	case FPMD__SOURCE__SRC_KERNEL:
		return "kernel";
	default:
		return "unknown";
	}
}

const char *rtype_name(Fpmd__RouteType t)
{
	switch (t) {
	case FPMD__ROUTE_TYPE__RT_BLACKHOLE:
		return "blackhole";
	case FPMD__ROUTE_TYPE__RT_UNREACHABLE:
		return "unreachable";
	case FPMD__ROUTE_TYPE__RT_PROHIBIT:
		return "prohibit";
	case FPMD__ROUTE_TYPE__RT_LOCAL:
		return "local";
	default:
		return "unicast";
	}
}
