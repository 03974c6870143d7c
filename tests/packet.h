/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frame builders for weir's C tests: Ethernet (with VLAN tags), IPv4,
 * IPv6, UDP, TCP and ICMP, written byte by byte in network order into a
 * fixed buffer. L4 headers are built on their own first and then appended
 * behind the IP header by ip4() / ip6().
 *
 * Addresses: IPv4 sources are host-order __u32 (IP4()), every frame goes to
 * 198.18.0.1 or 2001:db8::1.
 */
#ifndef WEIR_TESTS_PACKET_H
#define WEIR_TESTS_PACKET_H

#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/types.h>

#include "weir_parse.h"

struct frame {
	__u8 b[4096];
	size_t n;
};

#define IP4(a, b, c, d) (((__u32)(a) << 24) | ((__u32)(b) << 16) | ((__u32)(c) << 8) | (d))

/* 2001:db8::1, the destination of every IPv6 frame. */
static const __u8 DST6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
/* fe80::1: a link-local source, as neighbour discovery uses. */
static const __u8 LL6[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

/* VLAN tag stacks for eth(): one 802.1Q, QinQ, and one tag more than is parsed. */
static const __u16 TAG_Q[] = { WR_ETH_P_8021Q };
static const __u16 TAG_QINQ[] = { WR_ETH_P_8021AD, WR_ETH_P_8021Q };
static const __u16 TAG_3[] = { WR_ETH_P_8021AD, WR_ETH_P_8021Q, WR_ETH_P_8021Q };

static inline void put8(struct frame *f, unsigned int v)
{
	f->b[f->n++] = (__u8)v;
}

static inline void put16(struct frame *f, unsigned int v)
{
	put8(f, (v >> 8) & 0xff);
	put8(f, v & 0xff);
}

static inline void put32(struct frame *f, __u32 v)
{
	put16(f, v >> 16);
	put16(f, v & 0xffff);
}

static inline void putn(struct frame *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static inline void zeros(struct frame *f, size_t n)
{
	memset(f->b + f->n, 0, n);
	f->n += n;
}

/* Ethernet header with nvlan tags of the given TPIDs, then ethertype. */
static inline void eth(struct frame *f, __u16 ethertype, int nvlan, const __u16 *tpids)
{
	static const __u8 dst[6] = { 2, 0, 0, 0, 0, 2 }, src[6] = { 2, 0, 0, 0, 0, 1 };
	int i;

	f->n = 0;
	putn(f, dst, 6);
	putn(f, src, 6);
	for (i = 0; i < nvlan; i++) {
		put16(f, tpids[i]);
		put16(f, 100 + i);	/* TCI: VLAN id */
	}
	put16(f, ethertype);
}

/* TCP header from port 40000, doff words long (options zero). */
static inline void l4_tcp(struct frame *l, __u16 dport, __u8 flags, __u8 doff)
{
	l->n = 0;
	put16(l, 40000);
	put16(l, dport);
	put32(l, 1);		/* seq */
	put32(l, 0);		/* ack */
	put8(l, doff << 4);
	put8(l, flags);
	put16(l, 65535);	/* window */
	put16(l, 0);		/* checksum */
	put16(l, 0);		/* urgent */
	if (doff > 5)
		zeros(l, (doff - 5) * 4);
}

/* UDP header from port 40000 and paylen zero bytes. */
static inline void l4_udp(struct frame *l, __u16 dport, size_t paylen)
{
	l->n = 0;
	put16(l, 40000);
	put16(l, dport);
	put16(l, 8 + paylen);
	put16(l, 0);
	zeros(l, paylen);
}

/* A UDP header from sport to dport and paylen zero bytes. */
static inline void l4_udp_from(struct frame *l, __u16 sport, __u16 dport, size_t paylen)
{
	l4_udp(l, dport, paylen);
	l->b[0] = sport >> 8;
	l->b[1] = sport & 0xff;
}

/* ICMP or ICMPv6 header of this type, code 0, and extra zero bytes. */
static inline void l4_icmp(struct frame *l, __u8 type, size_t extra)
{
	l->n = 0;
	put8(l, type);
	put8(l, 0);
	put16(l, 0);
	put32(l, 0);
	zeros(l, extra);
}

/*
 * IPv4 header (ihl words, options zero) and payload. tot is the total
 * length field, or 0 for the true one.
 */
static inline void ip4(struct frame *f, __u32 src, __u8 proto, __u8 ihl, __u16 frag, __u16 tot,
		       const struct frame *l4)
{
	size_t hl = ihl >= 5 ? ihl * 4u : 20;

	put8(f, 0x40 | (ihl & 0xf));
	put8(f, 0);
	put16(f, tot ? tot : hl + l4->n);
	put16(f, 0x1234);
	put16(f, frag);
	put8(f, 64);
	put8(f, proto);
	put16(f, 0);
	put32(f, src);
	put32(f, IP4(198, 18, 0, 1));
	zeros(f, hl - 20);
	putn(f, l4->b, l4->n);
}

/*
 * IPv6 header and payload (extension headers and L4, already built). plen
 * is the payload length field, or -1 for the true one.
 */
static inline void ip6(struct frame *f, const __u8 *src, __u8 nexthdr, __u8 hop, int plen,
		       const struct frame *payload)
{
	put32(f, 0x60000000);
	put16(f, plen >= 0 ? (unsigned int)plen : payload->n);
	put8(f, nexthdr);
	put8(f, hop);
	putn(f, src, 16);
	putn(f, DST6, 16);
	putn(f, payload->b, payload->n);
}

/* Untagged Ethernet + IPv4 with the header fields given as to ip4(). */
static inline void eth_ip4(struct frame *f, __u32 src, __u8 proto, __u8 ihl, __u16 frag,
			   __u16 tot, const struct frame *l4)
{
	eth(f, WR_ETH_P_IP, 0, NULL);
	ip4(f, src, proto, ihl, frag, tot, l4);
}

/* Untagged Ethernet + IPv6 with the header fields given as to ip6(). */
static inline void eth_ip6(struct frame *f, const __u8 *src, __u8 nexthdr, __u8 hop, int plen,
			   const struct frame *payload)
{
	eth(f, WR_ETH_P_IPV6, 0, NULL);
	ip6(f, src, nexthdr, hop, plen, payload);
}

/* A plain Ethernet + IPv4 frame: no options, not a fragment, true length. */
static inline void frame4(struct frame *f, __u32 src, __u8 proto, const struct frame *l4)
{
	eth_ip4(f, src, proto, 5, 0, 0, l4);
}

/* A plain Ethernet + IPv6 frame: hop limit 64, true payload length. */
static inline void frame6(struct frame *f, const __u8 *src, __u8 proto, const struct frame *l4)
{
	eth_ip6(f, src, proto, 64, -1, l4);
}

/* The host's query from lport to server:rport (IPv4, tags as given), as it leaves. */
static inline void query4(struct frame *f, __u32 server, __u16 rport, __u16 lport, int nvlan,
		   const __u16 *tpids)
{
	struct frame l;
	__u32 host = htonl(IP4(198, 18, 0, 1)), srv = htonl(server);

	l4_udp_from(&l, lport, rport, 48);
	eth(f, WR_ETH_P_IP, nvlan, tpids);
	ip4(f, server, WR_IPPROTO_UDP, 5, 0, 0, &l);
	/* ip4() writes src = server, dst = 198.18.0.1: swap them, it is the host's. */
	memcpy(f->b + f->n - l.n - 8, &host, 4);
	memcpy(f->b + f->n - l.n - 4, &srv, 4);
}

/* The reply to it: from server:rport to the host's lport. */
static inline void reply4(struct frame *f, __u32 server, __u16 rport, __u16 lport, int nvlan,
		   const __u16 *tpids)
{
	struct frame l;

	l4_udp_from(&l, rport, lport, 48);
	eth(f, WR_ETH_P_IP, nvlan, tpids);
	ip4(f, server, WR_IPPROTO_UDP, 5, 0, 0, &l);
}

/* The host's IPv6 query from lport to server:rport, as it leaves (the host is DST6). */
static inline void query6(struct frame *f, const __u8 *server, __u16 rport, __u16 lport)
{
	struct frame l;

	l4_udp_from(&l, lport, rport, 48);
	frame6(f, DST6, WR_IPPROTO_UDP, &l);
	memcpy(f->b + 14 + 24, server, 16);	/* the destination: the server */
}

/* The reply to it: from server:rport to DST6's lport. */
static inline void reply6(struct frame *f, const __u8 *server, __u16 rport, __u16 lport)
{
	struct frame l;

	l4_udp_from(&l, rport, lport, 48);
	frame6(f, server, WR_IPPROTO_UDP, &l);
}

#endif /* WEIR_TESTS_PACKET_H */
