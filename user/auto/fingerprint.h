/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `weir auto`'s fingerprint chooser (issue 32): what the packets of an
 * attack have in common that the traffic before it did not, as the words
 * of a weir rule.
 *
 * A caller samples packets of one traffic class before an onset and again
 * during it (the capture ring: struct weir_capture_hdr, then the frame),
 * reduces each frame to a struct wr_fp_pkt (wr_fp_from_frame), and asks
 * wr_fp_choose for the most specific fingerprint that covers the attack
 * and spares the traffic before it; wr_fp_rule_words gives it as the words
 * of `weir rule add NAME`, wr_fp_describe as one line for a person. When
 * no fingerprint separates the two samples, the choice names the least
 * harmful fallback (a per-source or per-destination limit, tcp-state,
 * SYN cookies) and why. Pure computation on the caller's arrays: no maps,
 * no clock, no randomness, so the same samples always give the same choice.
 */
#ifndef WEIR_AUTO_FINGERPRINT_H
#define WEIR_AUTO_FINGERPRINT_H

#include <stddef.h>
#include <linux/types.h>

/* Payload words a packet carries for the chooser: at payload offsets 0 and 4. */
#define WR_FP_WORDS	2

/* wr_fp_pkt.flags */
enum {
	WR_FP_PORTS = 1 << 0,	/* TCP or UDP header parsed: sport, dport valid */
	WR_FP_L4 = 1 << 1,	/* upper-layer header parsed: tcp_flags or icmp_type valid */
	/*
	 * A sample weir dropped (its capture verdict): not traffic the host
	 * served, so never part of a before-sample (auto/sampler.h). The
	 * chooser itself ignores it.
	 */
	WR_FP_DROPPED = 1 << 2,
};

/*
 * One sampled packet, reduced to what a fingerprint can say about it: the
 * fields weir's matcher (include/weir_limiter.h) matches on, as weir's
 * parser (include/weir_parse.h) finds them.
 */
struct wr_fp_pkt {
	/*
	 * Network byte order. IPv4 as an IPv4-mapped IPv6 address
	 * (::ffff:a.b.c.d, RFC 4291 2.5.5.2): its four bytes at [12..15], so
	 * one comparison serves both families (family tells them apart).
	 */
	__u8 saddr[16];
	__u8 daddr[16];
	__u32 len;		/* IP length, header included (what `len` matches) */
	/* The first payload words, network byte order as read (`payload 0=`, `payload 4=`). */
	__u32 words[WR_FP_WORDS];
	__u16 sport;		/* host byte order; 0 without WR_FP_PORTS */
	__u16 dport;		/* host byte order; 0 without WR_FP_PORTS */
	__u8 family;		/* 4 or 6 */
	__u8 proto;		/* upper-layer protocol after IPv6 extension headers */
	__u8 ttl;		/* IPv4 TTL or IPv6 hop limit */
	__u8 tcp_flags;		/* with WR_FP_L4 and proto TCP */
	__u8 icmp_type;		/* with WR_FP_L4 and proto ICMP or ICMPv6 */
	__u8 frag;		/* enum weir_frag: NONE, FIRST or LATER */
	__u8 nr_words;		/* payload words present, 0 .. WR_FP_WORDS */
	__u8 flags;		/* WR_FP_PORTS, WR_FP_L4 */
};

/*
 * The frame (an Ethernet frame as the capture ring and `weir capture`'s
 * pcap give it, after struct weir_capture_hdr) of len bytes, through
 * weir's own parser. 0, or -EINVAL for a frame it cannot parse (truncated,
 * malformed), -EPROTONOSUPPORT for a frame that is not IP; out is then
 * unchanged. wr_fp_from_snap takes a capture cut to caplen bytes of a
 * frame that had wire_len: lengths are checked against wire_len, and a
 * payload word past caplen counts as absent.
 */
int wr_fp_from_frame(const void *frame, size_t len, struct wr_fp_pkt *out);
int wr_fp_from_snap(const void *frame, size_t caplen, size_t wire_len, struct wr_fp_pkt *out);

/* Defaults of struct wr_fp_opts (wr_fp_opts_init). */
#define WR_FP_COVER_DEF		0.99	/* the target: >= 99% of the attack */
#define WR_FP_FALSE_MAX_DEF	0.001	/* and <= 0.1% of the traffic before it */
#define WR_FP_LIMIT_DEF		1000	/* pps of a fallback limit: a busy service's own rate */

struct wr_fp_opts {
	/*
	 * Share of the attack's own packets the fingerprint must match: the
	 * attack sample also holds the class's normal traffic, which the
	 * chooser tells apart by the before-sample (fp_choose.c, step 3).
	 */
	double cover;
	double false_max;	/* share of the before-sample it may match */
	__u32 limit_pps;	/* the rate of a fallback limit, per key */
};

void wr_fp_opts_init(struct wr_fp_opts *o);

/* wr_fp_choice.fields: what the fingerprint matches on. */
enum {
	WR_FP_M_PROTO = 1 << 0,
	WR_FP_M_SPORT = 1 << 1,
	WR_FP_M_DPORT = 1 << 2,
	WR_FP_M_DST = 1 << 3,		/* dst/dst_plen */
	WR_FP_M_LEN = 1 << 4,		/* len_lo .. len_hi */
	WR_FP_M_TTL = 1 << 5,		/* ttl_lo .. ttl_hi */
	WR_FP_M_FLAGS = 1 << 6,		/* tcp_flags under tcp_mask */
	WR_FP_M_ICMP = 1 << 7,
	WR_FP_M_FRAG = 1 << 8,
	WR_FP_M_PAY0 = 1 << 9,		/* pay_mask[0], pay_value[0] at payload offset 0 */
	WR_FP_M_PAY1 = 1 << 10,		/* pay_mask[1], pay_value[1] at payload offset 4 */
	WR_FP_M_SRC = 1 << 11,		/* src/src_plen */
};

/* What the choice installs. */
enum wr_fp_action {
	WR_FP_DROP = 0,		/* a fingerprint: drop what it matches */
	WR_FP_PER_SRC,		/* fallback: a limit per source (few, real sources) */
	WR_FP_PER_DST,		/* fallback: a limit per destination (spoofed sources) */
	WR_FP_TCP_STATE,	/* fallback: tcp-state (TCP segments of no connection) */
	WR_FP_COOKIE,		/* fallback: SYN cookies for the SYNs over the limit */
};

/* Longest reason a choice gives. */
#define WR_FP_REASON_LEN	192

struct wr_fp_choice {
	int action;		/* enum wr_fp_action */
	__u32 fields;		/* WR_FP_M_* */
	__u8 family;		/* of dst and src, with WR_FP_M_DST or WR_FP_M_SRC */
	__u8 proto;
	__u8 dst[16];		/* network byte order, masked; IPv4 mapped as in wr_fp_pkt */
	__u8 src[16];
	__u8 dst_plen;		/* prefix length in the family's own terms (IPv4: /24, /32) */
	__u8 src_plen;
	__u16 sport;
	__u16 dport;
	__u8 ttl_lo, ttl_hi;
	__u8 tcp_flags;		/* with WR_FP_M_FLAGS: (flags & tcp_mask) == tcp_flags */
	__u8 tcp_mask;
	__u8 icmp_type;
	__u8 frag;		/* enum weir_frag */
	__u32 len_lo, len_hi;
	__u32 pay_mask[WR_FP_WORDS];	/* host byte order: the big-endian word's value */
	__u32 pay_value[WR_FP_WORDS];
	__u32 limit_pps;	/* a fallback's rate */
	/* Measured on the samples. */
	__u32 n;		/* packets of the attack sample */
	__u32 m;		/* packets of the before-sample */
	__u32 matched;		/* attack-sample packets the rule matches */
	__u32 false_matched;	/* before-sample packets it matches */
	/*
	 * A fingerprint's estimated share of the attack's own packets; a
	 * fallback's share of the attack sample (matched / n).
	 */
	double cover;
	double false_ratio;	/* false_matched / m */
	/* Estimated share of the attack sample that is normal traffic; -1 for a fallback. */
	double normal_share;
	char reason[WR_FP_REASON_LEN];	/* a fallback's why, or "" */
};

/*
 * Choose from attack[0..n) (sampled since the onset) and before[0..m)
 * (sampled before it, same class). 0 with *out filled, a fingerprint or a
 * fallback; -EINVAL for an empty sample or options out of range (cover in
 * (0, 1], false_max in [0, 1), limit_pps >= 1), -E2BIG for a sample of
 * over a million packets, -ENOMEM; *out is then unchanged. opts NULL: the
 * defaults.
 */
int wr_fp_choose(const struct wr_fp_pkt *attack, size_t n, const struct wr_fp_pkt *before,
		 size_t m, const struct wr_fp_opts *opts, struct wr_fp_choice *out);

/* 1 if the choice's match fields match p, as weir's matcher would. */
int wr_fp_match(const struct wr_fp_choice *c, const struct wr_fp_pkt *p);

/*
 * The choice in the words after `weir rule add NAME` (its match, then
 * its limit or tcp-state): the length written, or -ENOSPC if buf is too
 * short (buf then holds "").
 */
int wr_fp_rule_words(const struct wr_fp_choice *c, char *buf, size_t len);

/*
 * One line for a person: "proto udp sport 123 len 468 payload
 * 0=0xd700032a, 95.0% of 5000 sampled (99.9% of the attack), 0 of 3000
 * before"; a fallback with its reason. The length written, or -ENOSPC.
 */
int wr_fp_describe(const struct wr_fp_choice *c, char *buf, size_t len);

/*
 * What kind of attack a choice stops (`weir_auto_attacks_total{vector}`),
 * from a fixed set so that a label stays bounded: udp, fragments, syn,
 * ack, tcp, icmp, other, and reflection-SERVICE for a UDP fingerprint on
 * an amplifier's source port (include/weir_reflect.h's list).
 */
enum {
	WR_FP_V_UDP,
	WR_FP_V_FRAG,
	WR_FP_V_SYN,
	WR_FP_V_ACK,
	WR_FP_V_TCP,
	WR_FP_V_ICMP,
	WR_FP_V_OTHER,
	WR_FP_V_REFLECT,	/* + the amplifier's index in WR_AMP_PORTS */
};
#define WR_FP_NR_VECTORS	(WR_FP_V_REFLECT + 16)
int wr_fp_vector(const struct wr_fp_choice *c);
/* The name of vector v (0 .. WR_FP_NR_VECTORS - 1), or NULL. */
const char *wr_fp_vector_name(int v);

#endif /* WEIR_AUTO_FINGERPRINT_H */
