/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel's TCP sockets, through inet_diag. */
#ifndef WEIR_TCPDIAG_H
#define WEIR_TCPDIAG_H

#include <linux/inet_diag.h>
#include <linux/types.h>

/* Called per socket; non-zero stops the dump. */
typedef int (*wr_tcp_cb)(const struct inet_diag_msg *m, void *arg);

/*
 * A socket's peer address into addr (network order): 4 for IPv4, a
 * v4-mapped IPv6 peer given as IPv4 (addr[0], the rest zero), 6 for IPv6,
 * 0 for another family.
 */
int wr_tcp_peer(const struct inet_diag_msg *m, __u32 addr[4]);

/* Every IPv4 and IPv6 TCP socket in one of `states` (bit per TCP_* state). */
int wr_tcp_dump(__u32 states, wr_tcp_cb cb, void *arg);

#endif /* WEIR_TCPDIAG_H */
