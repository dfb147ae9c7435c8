// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a device's driver can do with XDP frames (its xdp-features), read
 * from the generic netlink family "netdev" (Linux >= 6.3): the devmap
 * refuses a multi-buffer frame to a device that cannot transmit one
 * (NDO_XMIT_SG), and the frame is lost. libbpf 1.1 (Debian 12) has no
 * feature_flags in bpf_xdp_query(), and the system headers may lack
 * linux/netdev.h: the few numbers needed are here, from that header.
 */
#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>

#include "kernel/nl.h"
#include "kernel/nl_priv.h"

#define NETDEV_FAMILY_NAME "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3

/* Per thread, like the request socket (nl.h). */
static _Thread_local struct mnl_socket *genl_sock;
static _Thread_local uint16_t netdev_family; /* 0: not resolved yet */

void nl_genl_close(void)
{
	if (genl_sock)
		mnl_socket_close(genl_sock);
	genl_sock = NULL;
	netdev_family = 0;
}

/* The one attribute a reply is read for: type, size, where it goes. */
struct attr_want {
	uint16_t type;
	uint16_t len;
	void *out;
};

static int attr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct attr_want *w = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == w->type &&
		    mnl_attr_get_payload_len(a) >= w->len)
			memcpy(w->out, mnl_attr_get_payload(a), w->len);
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *genl_put(char *buf, uint16_t type, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* Opened on first use, in fpmd's namespace (the family is per netns). */
static int netdev_family_open(void)
{
	struct attr_want w = { CTRL_ATTR_FAMILY_ID, sizeof(netdev_family),
			       &netdev_family };
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh;
	int ret;

	if (netdev_family)
		return 0;
	if (!genl_sock) {
		genl_sock = mnl_socket_open(NETLINK_GENERIC);
		if (!genl_sock)
			return -errno;
		if (mnl_socket_bind(genl_sock, 0, MNL_SOCKET_AUTOPID) < 0) {
			ret = -errno;
			mnl_socket_close(genl_sock);
			genl_sock = NULL;
			return ret;
		}
	}
	nlh = genl_put(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
	ret = nl_talk(genl_sock, nlh, attr_cb, &w);
	if (ret)
		return ret; /* -ENOENT: a kernel before 6.3 */
	return netdev_family ? 0 : -ENOENT;
}

int nl_xdp_features(uint32_t ifindex, uint64_t *features)
{
	struct attr_want w = { NETDEV_A_DEV_XDP_FEATURES, sizeof(*features),
			       features };
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh;
	int ret;

	*features = 0;
	ret = netdev_family_open();
	if (ret)
		return ret;
	nlh = genl_put(buf, netdev_family, NETDEV_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, ifindex);
	return nl_talk(genl_sock, nlh, attr_cb, &w);
}
