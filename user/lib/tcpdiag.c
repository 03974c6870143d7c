// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel's TCP sockets of this network namespace, through inet_diag
 * over netlink (libmnl): what the accept-queue signal reads and what
 * connection counts are reconciled against.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include "lib/tcpdiag.h"

int wr_tcp_peer(const struct inet_diag_msg *m, __u32 addr[4])
{
	const __u32 *a = m->id.idiag_dst;

	memset(addr, 0, 4 * sizeof(*addr));
	if (m->idiag_family == AF_INET) {
		addr[0] = a[0];
		return 4;
	}
	if (m->idiag_family != AF_INET6)
		return 0;
	if (!a[0] && !a[1] && a[2] == htonl(0xffff)) {
		addr[0] = a[3];
		return 4;
	}
	memcpy(addr, a, 4 * sizeof(*addr));
	return 6;
}

struct dump {
	wr_tcp_cb cb;
	void *arg;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	struct dump *d = data;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*m)))
		return MNL_CB_ERROR;
	return d->cb(m, d->arg) ? MNL_CB_STOP : MNL_CB_OK;
}

int wr_tcp_dump(__u32 states, wr_tcp_cb cb, void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct dump d = { cb, arg };
	int fam, ret, err = 0;

	for (fam = 0; fam < 2 && !err; fam++) {
		struct mnl_socket *nl = mnl_socket_open(NETLINK_SOCK_DIAG);
		struct inet_diag_req_v2 *req;
		struct nlmsghdr *nlh;
		unsigned int seq = time(NULL), portid;

		if (!nl)
			return -errno;
		if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
			err = -errno;
			mnl_socket_close(nl);
			break;
		}
		portid = mnl_socket_get_portid(nl);
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		nlh->nlmsg_seq = seq;
		req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
		req->sdiag_family = fam ? AF_INET6 : AF_INET;
		req->sdiag_protocol = IPPROTO_TCP;
		req->idiag_states = states;
		if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
			err = -errno;
			mnl_socket_close(nl);
			break;
		}
		while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
			ret = mnl_cb_run(buf, ret, seq, portid, dump_cb, &d);
			if (ret <= MNL_CB_STOP)
				break;
		}
		if (ret < 0)
			err = -errno;
		mnl_socket_close(nl);
	}
	return err;
}
