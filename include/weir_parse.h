/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet parsing, shared by the BPF data path and host tests/fuzzers.
 *
 * Pure C over a [data, end) byte range: no BPF helpers. Every read is
 * preceded by a bounds check against end (what the verifier needs) and every
 * length field is checked against frame_len (what the protocol needs).
 * frame_len may exceed end - data when only the head of a frame is linear
 * (TC on a non-linear skb).
 */
#ifndef WEIR_PARSE_H
#define WEIR_PARSE_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Unrolled for BPF (clang); host compilers may ignore it. */
#ifdef __clang__
#define WR_UNROLL _Pragma("unroll")
#else
#define WR_UNROLL
#endif

/* VLAN tags walked; a frame with a third tag is malformed. */
#define WR_MAX_VLAN	2
/* IPv6 extension headers walked before giving up as malformed. */
#define WR_MAX_EXTHDR	8

#define WR_ETH_P_IP	0x0800
#define WR_ETH_P_IPV6	0x86DD
#define WR_ETH_P_8021Q	0x8100
#define WR_ETH_P_8021AD	0x88A8

#define WR_IPPROTO_HOPOPTS	0
#define WR_IPPROTO_ICMP		1
#define WR_IPPROTO_TCP		6
#define WR_IPPROTO_UDP		17
#define WR_IPPROTO_ROUTING	43
#define WR_IPPROTO_FRAGMENT	44
#define WR_IPPROTO_AH		51
#define WR_IPPROTO_ICMPV6	58
#define WR_IPPROTO_NONE		59
#define WR_IPPROTO_DSTOPTS	60
#define WR_IPPROTO_MH		135

/* ICMPv6 router solicitation .. redirect: neighbour discovery (RFC 4861). */
#define WR_ND_FIRST	133
#define WR_ND_LAST	137
/* ND is only valid with hop limit 255: it never crossed a router. */
#define WR_ND_HOPLIMIT	255

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define wr_ntohs(x) __builtin_bswap16(x)
#define wr_htonl(x) __builtin_bswap32(x)
#else
#define wr_ntohs(x) (x)
#define wr_htonl(x) (x)
#endif

/* Wire headers, only the fields weir reads. */
struct wr_eth {
	__u8 dst[6];
	__u8 src[6];
	__be16 proto;
};

struct wr_vlan {
	__be16 tci;
	__be16 proto;	/* encapsulated ethertype */
};

struct wr_ip4 {
	__u8 ver_ihl;
	__u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	__u8 ttl;
	__u8 proto;
	__be16 check;
	__be32 saddr;
	__be32 daddr;
};

struct wr_ip6 {
	__u8 ver_tc;
	__u8 tc_flow[3];
	__be16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	__be32 saddr[4];
	__be32 daddr[4];
};

struct wr_ip6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset in 8-byte units << 3, low bit M */
	__be32 id;
};

/* The longest GSO packet the kernel builds: 512 KiB (GSO_MAX_SIZE with BIG TCP). */
#define WR_GSO_MAX_LEN		(512u * 1024)

/* wr_pkt.flags */
enum {
	WR_PKT_L4 = 1 << 0,	/* the upper-layer header was present and parsed */
	WR_PKT_PORTS = 1 << 1,	/* TCP or UDP: dport is valid */
	WR_PKT_FRAG = 1 << 2,	/* a fragment (first or not) */
	WR_PKT_ND = 1 << 3,	/* IPv6 neighbour discovery / router advertisement */
	/*
	 * Set by the caller before parsing: a GSO super-packet (TC only),
	 * whose IP length field may be 0 because its real length does not fit
	 * in 16 bits (BIG TCP: IPv6 since Linux 5.19, IPv4 since 6.3). A 0
	 * then means the frame's own length; in any other packet it is
	 * malformed.
	 */
	WR_PKT_GSO = 1 << 4,
	WR_PKT_LATER = 1 << 5,	/* with WR_PKT_FRAG: not the first fragment */
};

/* What the rest of the data path knows about a packet. */
struct wr_pkt {
	__u32 saddr[4];		/* network byte order; IPv4 in [0], rest 0 */
	__u32 len;		/* L3 length: the cost of a bytes/s limit */
	__u16 dport;		/* host byte order, with WR_PKT_PORTS */
	__u8 family;		/* 4 or 6 */
	__u8 proto;		/* upper-layer protocol after extension headers */
	__u8 flags;
	__u8 tcp_flags;		/* with WR_PKT_L4 and proto TCP */
	__u8 icmp_type;		/* with WR_PKT_L4 and proto ICMP/ICMPv6 */
	/*
	 * The IP header's offset in the frame: the Ethernet header and its
	 * VLAN tags (at most 22), for the data path's second look at the rare
	 * fields (bpf/match.h: wr_more_*), which need not walk them again.
	 * Stored with the family (where the header is known to be IP): stored
	 * as soon as the L2 walk ends, it cost 6.18's verifier 50k more
	 * instructions on the XDP program.
	 */
	__u8 l3off;
	/*
	 * Segments the packet stands for: a GSO super-packet at TC carries
	 * several, which a packet limit charges one each, as XDP sees them
	 * before GRO. Set by the caller; 0 reads as 1.
	 */
	__u16 segs;
	__u16 sport;	/* host byte order, with WR_PKT_PORTS */
};

/*
 * What only some rules match on (dst, dscp, ttl, payload), kept out of struct
 * wr_pkt: that sits on the entry program's stack, whose call chain is at
 * 6.1's 512-byte limit. The parser fills it when given one (x not NULL);
 * the data path's parse is given none (the stores cost its verifier a
 * sixth of its budget) and reads these few header fields only for a set
 * with rules on them (bpf/match.h: wr_more_xdp).
 */
struct wr_pkt_x {
	__u32 daddr[4];		/* network byte order; IPv4 in [0] (the data path leaves the rest) */
	__u8 dscp;		/* 0 .. 63 */
	__u8 ttl;		/* IPv4 TTL or IPv6 hop limit */
	/*
	 * The L4 payload's offset from the frame's start (after the UDP
	 * header, or the TCP header with its options), with WR_PKT_PORTS:
	 * where payload terms read.
	 */
	__u16 payoff;
};

enum wr_parse_result {
	WR_PARSE_IP = 0,
	WR_PARSE_NON_IP,
	WR_PARSE_MALFORMED,
};

/*
 * The upper-layer header at l4, of which l4_len bytes belong to this IP
 * packet. Non-first fragments never get here.
 */
static __always_inline int wr_parse_l4(const __u8 *l4, const __u8 *end, __u32 l4_len,
				       struct wr_pkt *p, struct wr_pkt_x *x, __u32 l4off)
{
	switch (p->proto) {
	case WR_IPPROTO_TCP: {
		__u8 doff;

		/* A first fragment too small for the TCP header (RFC 1858). */
		if (l4_len < 20 || l4 + 20 > end)
			return WR_PARSE_MALFORMED;
		doff = l4[12] >> 4;
		if (doff < 5 || (__u32)doff * 4 > l4_len)
			return WR_PARSE_MALFORMED;
		p->sport = wr_ntohs(*(const __be16 *)l4);
		p->dport = wr_ntohs(*(const __be16 *)(l4 + 2));
		p->tcp_flags = l4[13];
		p->flags |= WR_PKT_L4 | WR_PKT_PORTS;
		if (x)
			x->payoff = l4off + (__u32)doff * 4;
		return WR_PARSE_IP;
	}
	case WR_IPPROTO_UDP: {
		__u16 ulen;

		if (l4_len < 8 || l4 + 8 > end)
			return WR_PARSE_MALFORMED;
		ulen = wr_ntohs(*(const __be16 *)(l4 + 4));
		/* The UDP length covers the whole datagram, so a fragment's is longer. */
		if (ulen < 8 || (!(p->flags & WR_PKT_FRAG) && ulen > l4_len))
			return WR_PARSE_MALFORMED;
		p->sport = wr_ntohs(*(const __be16 *)l4);
		p->dport = wr_ntohs(*(const __be16 *)(l4 + 2));
		p->flags |= WR_PKT_L4 | WR_PKT_PORTS;
		if (x)
			x->payoff = l4off + 8;
		return WR_PARSE_IP;
	}
	case WR_IPPROTO_ICMP:
	case WR_IPPROTO_ICMPV6:
		/* type, code, checksum and 4 bytes of rest-of-header */
		if (l4_len < 8 || l4 + 8 > end)
			return WR_PARSE_MALFORMED;
		p->icmp_type = l4[0];
		p->flags |= WR_PKT_L4;
		return WR_PARSE_IP;
	default:
		/* Other protocols carry nothing rules match on beyond proto. */
		return WR_PARSE_IP;
	}
}

static __always_inline int wr_parse_ip4(const __u8 *l3, const __u8 *end, __u32 l3_len,
					struct wr_pkt *p, struct wr_pkt_x *x, __u32 l3off)
{
	const struct wr_ip4 *ip = (const void *)l3;
	__u32 hlen, tot;
	__u16 frag;

	if ((const void *)(ip + 1) > (const void *)end)
		return WR_PARSE_MALFORMED;
	/* IHL below 5 is rejected before it is used as a length. */
	if ((ip->ver_ihl >> 4) != 4 || (ip->ver_ihl & 0xf) < 5)
		return WR_PARSE_MALFORMED;
	hlen = (ip->ver_ihl & 0xf) * 4;
	tot = wr_ntohs(ip->tot_len);
	/*
	 * BIG TCP: a GSO packet over 64 KiB says 0; its length is the frame's,
	 * which GSO bounds (WR_GSO_MAX_LEN, also a bound the verifier can see).
	 */
	if (tot == 0) {
		/*
		 * Decided here, so that no path goes on with a length known to
		 * be 0: verifiers before 6.8 do not see that such a path is
		 * dead and lose the packet pointer on it.
		 */
		if (!(p->flags & WR_PKT_GSO) || l3_len > WR_GSO_MAX_LEN)
			return WR_PARSE_MALFORMED;
		tot = l3_len & (WR_GSO_MAX_LEN * 2 - 1);
	}
	/* The total length may undercount the frame (padding), never overcount. */
	if (tot < hlen || tot > l3_len)
		return WR_PARSE_MALFORMED;

	p->family = 4;
	p->l3off = l3off;
	p->proto = ip->proto;
	p->saddr[0] = ip->saddr;
	p->len = tot;
	/* x may be reused memory: every word is written. */
	if (x) {
		x->daddr[0] = ip->daddr;
		x->daddr[1] = 0;
		x->daddr[2] = 0;
		x->daddr[3] = 0;
		x->dscp = ip->tos >> 2;
		x->ttl = ip->ttl;
	}

	frag = wr_ntohs(ip->frag_off);
	if (frag & 0x1fff) {
		/* Not the first fragment: no upper-layer header here. */
		p->flags |= WR_PKT_FRAG | WR_PKT_LATER;
		return WR_PARSE_IP;
	}
	if (frag & 0x2000)
		p->flags |= WR_PKT_FRAG;
	if (l3 + hlen > end)
		return WR_PARSE_MALFORMED;
	return wr_parse_l4(l3 + hlen, end, tot - hlen, p, x, l3off + hlen);
}

static __always_inline int wr_parse_ip6(const __u8 *l3, const __u8 *end, __u32 l3_len,
					struct wr_pkt *p, struct wr_pkt_x *x, __u32 l3off)
{
	const struct wr_ip6 *ip6 = (const void *)l3;
	const __u8 *cur;
	__u32 left;
	__u8 nh;
	int i;

	if ((const void *)(ip6 + 1) > (const void *)end)
		return WR_PARSE_MALFORMED;
	if ((ip6->ver_tc >> 4) != 6)
		return WR_PARSE_MALFORMED;
	left = wr_ntohs(ip6->payload_len);
	/*
	 * Payload length 0: a BIG TCP GSO packet over 64 KiB, whose length is
	 * the frame's (the kernel no longer adds the RFC 2675 jumbo option;
	 * one that is there is walked as any hop-by-hop header); or a packet
	 * with no payload at all, valid only with No Next Header. Anything
	 * else claiming 0 is malformed: jumbograms cannot arrive over Ethernet.
	 */
	p->family = 6;
	p->l3off = l3off;
	p->saddr[0] = ip6->saddr[0];
	p->saddr[1] = ip6->saddr[1];
	p->saddr[2] = ip6->saddr[2];
	p->saddr[3] = ip6->saddr[3];
	if (x) {
		x->daddr[0] = ip6->daddr[0];
		x->daddr[1] = ip6->daddr[1];
		x->daddr[2] = ip6->daddr[2];
		x->daddr[3] = ip6->daddr[3];
		/* The traffic class straddles the first two bytes; DSCP is its top 6 bits. */
		x->dscp = ((ip6->ver_tc & 0x0f) << 2) | (ip6->tc_flow[0] >> 6);
		x->ttl = ip6->hop_limit;
	}
	/* Decided here: no path goes on with a length known to be 0 (see IPv4). */
	if (left == 0) {
		if ((p->flags & WR_PKT_GSO) && l3_len > sizeof(*ip6) &&
		    l3_len <= WR_GSO_MAX_LEN) {
			left = (l3_len - sizeof(*ip6)) & (WR_GSO_MAX_LEN * 2 - 1);
		} else if (ip6->nexthdr == WR_IPPROTO_NONE) {
			p->proto = WR_IPPROTO_NONE;
			p->len = sizeof(*ip6);
			return WR_PARSE_IP;
		} else {
			return WR_PARSE_MALFORMED;
		}
	}
	if (left + sizeof(*ip6) > l3_len)
		return WR_PARSE_MALFORMED;
	p->len = left + sizeof(*ip6);

	nh = ip6->nexthdr;
	cur = l3 + sizeof(*ip6);
WR_UNROLL
	for (i = 0; i < WR_MAX_EXTHDR; i++) {
		__u32 hl;

		switch (nh) {
		case WR_IPPROTO_HOPOPTS:
		case WR_IPPROTO_ROUTING:
		case WR_IPPROTO_DSTOPTS:
		case WR_IPPROTO_MH:
			if (left < 8 || cur + 8 > end)
				return WR_PARSE_MALFORMED;
			hl = ((__u32)cur[1] + 1) * 8;
			break;
		case WR_IPPROTO_AH:
			if (left < 8 || cur + 8 > end)
				return WR_PARSE_MALFORMED;
			hl = ((__u32)cur[1] + 2) * 4;
			break;
		case WR_IPPROTO_FRAGMENT: {
			const struct wr_ip6_frag *fh = (const void *)cur;

			if (left < sizeof(*fh) || (const void *)(fh + 1) > (const void *)end)
				return WR_PARSE_MALFORMED;
			p->flags |= WR_PKT_FRAG;
			if (wr_ntohs(fh->frag_off) & 0xfff8) {
				p->flags |= WR_PKT_LATER;
				/* Not the first fragment: no upper-layer header here. */
				p->proto = fh->nexthdr;
				return WR_PARSE_IP;
			}
			hl = sizeof(*fh);
			break;
		}
		case WR_IPPROTO_NONE:
			p->proto = nh;
			return WR_PARSE_IP;
		default:
			goto upper;
		}
		if (hl > left)
			return WR_PARSE_MALFORMED;
		nh = cur[0];
		cur += hl;
		left -= hl;
	}
	/* Still an extension header after WR_MAX_EXTHDR of them. */
	switch (nh) {
	case WR_IPPROTO_HOPOPTS:
	case WR_IPPROTO_ROUTING:
	case WR_IPPROTO_DSTOPTS:
	case WR_IPPROTO_MH:
	case WR_IPPROTO_AH:
	case WR_IPPROTO_FRAGMENT:
		return WR_PARSE_MALFORMED;
	}
upper:
	p->proto = nh;
	/* The extension headers' length: what the walk took off left. */
	if (wr_parse_l4(cur, end, left, p, x, l3off + p->len - left) != WR_PARSE_IP)
		return WR_PARSE_MALFORMED;
	if (nh == WR_IPPROTO_ICMPV6 && p->icmp_type >= WR_ND_FIRST &&
	    p->icmp_type <= WR_ND_LAST && ip6->hop_limit == WR_ND_HOPLIMIT)
		p->flags |= WR_PKT_ND;
	return WR_PARSE_IP;
}

/*
 * Parse one Ethernet frame. data..end is readable; frame_len is the length of
 * the whole frame. x, if not NULL, gets what struct wr_pkt does not hold.
 */
/*
 * The Ethernet header at data and its VLAN tags (802.1Q and 802.1ad, up to
 * WR_MAX_VLAN): the L3 header's start, with its EtherType (host order) in
 * *proto and its offset from data in *off; NULL if the frame ends first.
 * After WR_MAX_VLAN tags *proto may be a third tag's type: the caller
 * decides what that means. The one walk of the L2 headers: the parse, the
 * egress flow recorder (weir_reflect.h) and the data path's second look at
 * the rare fields (bpf/match.h) all take it.
 */
static __always_inline const __u8 *wr_parse_l2(const void *data, const void *end,
					       __u16 *proto, __u32 *off)
{
	const __u8 *cur = data;
	__u16 type;
	int i;

	if (cur + sizeof(struct wr_eth) > (const __u8 *)end)
		return NULL;
	type = wr_ntohs(((const struct wr_eth *)cur)->proto);
	cur += sizeof(struct wr_eth);
	*off = sizeof(struct wr_eth);
WR_UNROLL
	for (i = 0; i < WR_MAX_VLAN; i++) {
		const struct wr_vlan *vh = (const void *)cur;

		if (type != WR_ETH_P_8021Q && type != WR_ETH_P_8021AD)
			break;
		if ((const void *)(vh + 1) > end)
			return NULL;
		type = wr_ntohs(vh->proto);
		cur += sizeof(*vh);
		*off += sizeof(*vh);
	}
	*proto = type;
	return cur;
}

static __always_inline int wr_parse(const void *data, const void *end, __u32 frame_len,
				    struct wr_pkt *p, struct wr_pkt_x *x)
{
	const __u8 *cur;
	__u32 off;
	__u16 proto;

	cur = wr_parse_l2(data, end, &proto, &off);
	if (!cur || frame_len < off)
		return WR_PARSE_MALFORMED;
	if (proto == WR_ETH_P_IP)
		return wr_parse_ip4(cur, end, frame_len - off, p, x, off);
	if (proto == WR_ETH_P_IPV6)
		return wr_parse_ip6(cur, end, frame_len - off, p, x, off);
	/* A third VLAN tag: deeper than weir looks, so not trusted as non-IP. */
	if (proto == WR_ETH_P_8021Q || proto == WR_ETH_P_8021AD)
		return WR_PARSE_MALFORMED;
	return WR_PARSE_NON_IP;
}

#endif /* WEIR_PARSE_H */
