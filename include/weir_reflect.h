/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The reflection preset (`preset reflection`, docs/reflection.md): the
 * UDP source ports of known amplifiers, the key of the host's own outgoing
 * UDP flows that the TC egress program records (wr_reflect), and the
 * parser that makes that key of an outgoing frame.
 *
 * Pure C, shared by the BPF data path, the controller and host tests.
 */
#ifndef WEIR_REFLECT_H
#define WEIR_REFLECT_H

#include "weir_parse.h"

/*
 * The amplifiers: UDP services that answer a small request with a large
 * reply, so that a request spoofed from a victim's address makes the
 * service flood the victim. The list is CISA's alert TA14-017A, "UDP-Based
 * Amplification Attacks" (first issued January 2014, revised since), plus
 * the services its later revisions and the reflection attacks reported
 * since added (WS-Discovery, Ubiquiti discovery, Apple Remote Desktop's
 * ARMS). One X(port, name) per service, lowest port first; the data path's
 * switch and the controller's table (`rule list`) are both made from it.
 */
#define WR_AMP_PORTS(X)				\
	X(17, "qotd")				\
	X(19, "chargen")			\
	X(53, "dns")				\
	X(69, "tftp")				\
	X(111, "portmap")			\
	X(123, "ntp")				\
	X(137, "netbios")			\
	X(161, "snmp")				\
	X(389, "cldap")				\
	X(520, "ripv1")				\
	X(1900, "ssdp")				\
	X(3283, "arms")				\
	X(3702, "ws-discovery")			\
	X(5353, "mdns")				\
	X(10001, "ubiquiti")			\
	X(11211, "memcached")

/* Is port (host byte order) the UDP source port of a known amplifier? */
static __always_inline int wr_amp_port(__u16 port)
{
#define WR_AMP_CASE(p, n) case p:
	switch (port) {
	WR_AMP_PORTS(WR_AMP_CASE)
		return 1;
	default:
		return 0;
	}
#undef WR_AMP_CASE
}

/*
 * How long a recorded outgoing flow admits replies after the host's last
 * packet on it: 30 s. DNS and NTP clients give up on an answer within a
 * few seconds (resolv.conf's timeout is 5 s, attempts 2; chrony's and
 * ntpd's within 1-8 s); an LDAP lookup over UDP likewise. Every outgoing
 * packet of the flow starts the 30 s again.
 */
#define WR_REFLECT_TTL_NS	(30ULL * 1000000000ULL)

/*
 * wr_reflect's key: one outgoing UDP flow of this host, as its reply
 * arrives: the remote address (the reply's source; network byte order,
 * IPv4 in [0], rest 0), the remote port (the reply's source port) and the
 * local port (the reply's destination port), host byte order. The local
 * address is left out: a reply to any of the host's addresses from the
 * server and port it asked, to the port it asked from, is the answer.
 */
struct weir_flow_key {
	__u32 raddr[4];
	__u16 rport;
	__u16 lport;
	__u8 family;		/* 4 or 6 */
	__u8 pad[3];
};

/*
 * Outgoing UDP flows recorded (an LRU hash: the oldest go first when it is
 * full; a flood cannot fill it, since only the host's own packets write
 * it). Sized for a busy resolver's concurrent queries.
 */
#define WEIR_REFLECT_FLOWS	65536

/*
 * The key of the outgoing frame data..end, if it is the first (or only)
 * piece of a UDP datagram over IPv4 or IPv6 (up to WR_MAX_VLAN tags; IPv6
 * extension headers as the ingress parser walks them, up to
 * WR_REFLECT_EXTHDR): 1 and *k filled, else 0. Never fails a frame: the
 * egress program passes everything; what it cannot read it does not
 * record.
 */
#define WR_REFLECT_EXTHDR	4

static __always_inline int wr_flow_of_egress(const void *data, const void *end,
					     struct weir_flow_key *k)
{
	const __u8 *cur, *l4;
	__u32 off;
	__u16 proto;
	int i;

	cur = wr_parse_l2(data, end, &proto, &off);
	if (!cur)
		return 0;
	if (proto == WR_ETH_P_IP) {
		const struct wr_ip4 *ip = (const void *)cur;

		if ((const void *)(ip + 1) > end || (ip->ver_ihl >> 4) != 4 ||
		    (ip->ver_ihl & 0xf) < 5 || ip->proto != WR_IPPROTO_UDP ||
		    (wr_ntohs(ip->frag_off) & 0x1fff))
			return 0;
		k->family = 4;
		k->raddr[0] = ip->daddr;
		k->raddr[1] = 0;
		k->raddr[2] = 0;
		k->raddr[3] = 0;
		l4 = cur + (ip->ver_ihl & 0xf) * 4;
	} else if (proto == WR_ETH_P_IPV6) {
		const struct wr_ip6 *ip6 = (const void *)cur;
		__u8 nh;

		if ((const void *)(ip6 + 1) > end || (ip6->ver_tc >> 4) != 6)
			return 0;
		k->family = 6;
		k->raddr[0] = ip6->daddr[0];
		k->raddr[1] = ip6->daddr[1];
		k->raddr[2] = ip6->daddr[2];
		k->raddr[3] = ip6->daddr[3];
		nh = ip6->nexthdr;
		l4 = cur + sizeof(*ip6);
WR_UNROLL
		for (i = 0; i < WR_REFLECT_EXTHDR; i++) {
			if (nh == WR_IPPROTO_HOPOPTS || nh == WR_IPPROTO_ROUTING ||
			    nh == WR_IPPROTO_DSTOPTS) {
				if (l4 + 8 > (const __u8 *)end)
					return 0;
				nh = l4[0];
				l4 += ((__u32)l4[1] + 1) * 8;
			} else if (nh == WR_IPPROTO_FRAGMENT) {
				const struct wr_ip6_frag *fh = (const void *)l4;

				if ((const void *)(fh + 1) > end ||
				    (wr_ntohs(fh->frag_off) & 0xfff8))
					return 0;
				nh = fh->nexthdr;
				l4 += sizeof(*fh);
			} else {
				break;
			}
		}
		if (nh != WR_IPPROTO_UDP)
			return 0;
	} else {
		return 0;
	}
	if (l4 + 8 > (const __u8 *)end)
		return 0;
	k->lport = wr_ntohs(*(const __be16 *)l4);
	k->rport = wr_ntohs(*(const __be16 *)(l4 + 2));
	k->pad[0] = 0;
	k->pad[1] = 0;
	k->pad[2] = 0;
	return 1;
}

/*
 * The key an arriving packet p (UDP, with WR_PKT_PORTS) would answer: the
 * same fields as wr_flow_of_egress makes of the host's query.
 */
static __always_inline void wr_flow_of_reply(const struct wr_pkt *p, struct weir_flow_key *k)
{
	k->raddr[0] = p->saddr[0];
	k->raddr[1] = p->saddr[1];
	k->raddr[2] = p->saddr[2];
	k->raddr[3] = p->saddr[3];
	k->rport = p->sport;
	k->lport = p->dport;
	k->family = p->family;
	k->pad[0] = 0;
	k->pad[1] = 0;
	k->pad[2] = 0;
}

#endif /* WEIR_REFLECT_H */
