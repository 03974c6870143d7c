// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fingerprints (fingerprint.h): a sampled frame reduced to the fields a
 * rule matches on, a fingerprint matched against such a packet, and a
 * fingerprint in the words of `weir rule add`. The chooser itself is
 * fp_choose.c, the fields it counts fp_atoms.c, its heavy-hitter sketch
 * sketch.c.
 *
 * The reduction goes through weir's own parser (include/weir_parse.h), and
 * wr_fp_match follows weir's matcher (include/weir_limiter.h) field by
 * field, so that what the chooser counts is what the data path will
 * match: a rule chosen here drops exactly the sampled packets it says it
 * matches (tests/auto_fp.c checks that through wr_rule_parse and the
 * matcher itself).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "weir.h"
#include "weir_parse.h"
#include "weir_reflect.h"
#include "auto/fingerprint.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

void wr_fp_opts_init(struct wr_fp_opts *o)
{
	o->cover = WR_FP_COVER_DEF;
	o->false_max = WR_FP_FALSE_MAX_DEF;
	o->limit_pps = WR_FP_LIMIT_DEF;
}

/* An address of wr_pkt (network order words, IPv4 in [0]) as 16 bytes, IPv4 mapped. */
static void put_addr(__u8 *dst, const __u32 *words, int family)
{
	if (family == 4) {
		memset(dst, 0, 10);
		dst[10] = 0xff;
		dst[11] = 0xff;
		memcpy(dst + 12, &words[0], 4);
	} else {
		memcpy(dst, words, 16);
	}
}

int wr_fp_from_snap(const void *frame, size_t caplen, size_t wire_len, struct wr_fp_pkt *out)
{
	const __u8 *b = frame;
	struct wr_fp_pkt fp;
	struct wr_pkt p;
	struct wr_pkt_x x;
	__u32 l3off;
	__u16 l2proto;
	int ret, w;

	if (!frame || caplen > wire_len || wire_len > WR_GSO_MAX_LEN)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	memset(&x, 0, sizeof(x));
	ret = wr_parse(b, b + caplen, wire_len, &p, &x);
	if (ret == WR_PARSE_NON_IP)
		return -EPROTONOSUPPORT;
	if (ret != WR_PARSE_IP)
		return -EINVAL;

	/* Where the IP header starts: the walk wr_parse took past Ethernet and VLAN tags. */
	if (!wr_parse_l2(b, b + caplen, &l2proto, &l3off))
		return -EINVAL;
	memset(&fp, 0, sizeof(fp));
	fp.family = p.family;
	fp.proto = p.proto;
	fp.len = p.len;
	fp.ttl = x.ttl;
	put_addr(fp.saddr, p.saddr, p.family);
	put_addr(fp.daddr, x.daddr, p.family);
	fp.frag = !(p.flags & WR_PKT_FRAG) ? WEIR_FRAG_NONE :
		  (p.flags & WR_PKT_LATER) ? WEIR_FRAG_LATER : WEIR_FRAG_FIRST;
	if (p.flags & WR_PKT_L4) {
		fp.flags |= WR_FP_L4;
		fp.tcp_flags = p.tcp_flags;
		fp.icmp_type = p.icmp_type;
	}
	if (p.flags & WR_PKT_PORTS) {
		fp.flags |= WR_FP_PORTS;
		fp.sport = p.sport;
		fp.dport = p.dport;
		/*
		 * The words `payload` terms read at payoff, where they lie
		 * within the IP packet and what was captured of it. The data
		 * path reads any word within the frame, Ethernet padding too;
		 * a word of padding is no trait of a packet (a veth or a
		 * driver may not pad it), so the chooser never sees one.
		 */
		for (w = 0; w < WR_FP_WORDS; w++) {
			size_t at = (size_t)x.payoff + 4 * w;

			if (at + 4 > caplen || at + 4 > (size_t)l3off + p.len)
				break;
			memcpy(&fp.words[w], b + at, 4);
			fp.nr_words++;
		}
	}
	*out = fp;
	return 0;
}

int wr_fp_from_frame(const void *frame, size_t len, struct wr_fp_pkt *out)
{
	return wr_fp_from_snap(frame, len, len, out);
}

/* The top plen bits of a and b are equal (16-byte addresses). */
static int prefix_eq(const __u8 *a, const __u8 *b, unsigned int plen)
{
	unsigned int whole = plen / 8, rest = plen % 8;

	if (memcmp(a, b, whole))
		return 0;
	return !rest || !((a[whole] ^ b[whole]) & (0xff << (8 - rest)));
}

/* A prefix length in the family's own terms as one of the 16-byte mapped form. */
static unsigned int plen16(int family, unsigned int plen)
{
	return family == 4 ? 96 + plen : plen;
}

int wr_fp_match(const struct wr_fp_choice *c, const struct wr_fp_pkt *p)
{
	__u32 f = c->fields;
	int w;

	if ((f & WR_FP_M_PROTO) && p->proto != c->proto)
		return 0;
	/* Ports, as the matcher: a packet without them (a later fragment) matches no port. */
	if ((f & WR_FP_M_SPORT) && (!(p->flags & WR_FP_PORTS) || p->sport != c->sport))
		return 0;
	if ((f & WR_FP_M_DPORT) && (!(p->flags & WR_FP_PORTS) || p->dport != c->dport))
		return 0;
	if ((f & WR_FP_M_DST) && (p->family != c->family ||
				  !prefix_eq(p->daddr, c->dst, plen16(c->family, c->dst_plen))))
		return 0;
	if ((f & WR_FP_M_SRC) && (p->family != c->family ||
				  !prefix_eq(p->saddr, c->src, plen16(c->family, c->src_plen))))
		return 0;
	if ((f & WR_FP_M_LEN) && (p->len < c->len_lo || p->len > c->len_hi))
		return 0;
	if ((f & WR_FP_M_TTL) && (p->ttl < c->ttl_lo || p->ttl > c->ttl_hi))
		return 0;
	if ((f & WR_FP_M_FLAGS) && (p->proto != WR_IPPROTO_TCP || !(p->flags & WR_FP_L4) ||
				    (p->tcp_flags & c->tcp_mask) != c->tcp_flags))
		return 0;
	if ((f & WR_FP_M_ICMP) &&
	    ((p->proto != WR_IPPROTO_ICMP && p->proto != WR_IPPROTO_ICMPV6) ||
	     !(p->flags & WR_FP_L4) || p->icmp_type != c->icmp_type))
		return 0;
	if ((f & WR_FP_M_FRAG) && p->frag != c->frag)
		return 0;
	for (w = 0; w < WR_FP_WORDS; w++) {
		if (!(f & (WR_FP_M_PAY0 << w)))
			continue;
		/* Payload terms need the payload's start (ports) and the whole word. */
		if (!(p->flags & WR_FP_PORTS) || p->nr_words <= w ||
		    (ntohl(p->words[w]) & c->pay_mask[w]) != c->pay_value[w])
			return 0;
	}
	return 1;
}

/* Appends to a buffer; a write that does not fit marks it full. */
struct wbuf {
	char *buf;
	size_t len, off;
	int full;
};

__attribute__((format(printf, 2, 3)))
static void put(struct wbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->off, b->len - b->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->len - b->off)
		b->full = 1;
	else
		b->off += n;
}

/* 0 or -ENOSPC (buf emptied): how every writer here ends. */
static int done(struct wbuf *b)
{
	if (!b->full)
		return (int)b->off;
	if (b->len)
		b->buf[0] = '\0';
	return -ENOSPC;
}

static void put_proto(struct wbuf *b, __u8 proto)
{
	switch (proto) {
	case WR_IPPROTO_TCP:
		put(b, "tcp");
		break;
	case WR_IPPROTO_UDP:
		put(b, "udp");
		break;
	case WR_IPPROTO_ICMP:
		put(b, "icmp");
		break;
	case WR_IPPROTO_ICMPV6:
		put(b, "icmpv6");
		break;
	default:
		put(b, "%u", proto);
	}
}

static void put_cidr(struct wbuf *b, int family, const __u8 *addr, unsigned int plen)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, family == 4 ? addr + 12 : addr, a, sizeof(a));
	put(b, "%s/%u", a, plen);
}

/* TCP flag names in bit order, as the rule grammar spells them (user/util/args.c). */
static const char *const tcp_flag_names[] = {
	"fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr",
};

static void put_flags(struct wbuf *b, __u8 v)
{
	unsigned int i;
	int first = 1;

	for (i = 0; i < 8; i++) {
		if (!(v & (1u << i)))
			continue;
		put(b, "%s%s", first ? "" : ",", tcp_flag_names[i]);
		first = 0;
	}
}

static void put_range(struct wbuf *b, const char *word, __u32 lo, __u32 hi)
{
	if (lo == hi)
		put(b, " %s %u", word, lo);
	else
		put(b, " %s %u-%u", word, lo, hi);
}

/* The match words (each with a leading space). */
static void put_match(struct wbuf *b, const struct wr_fp_choice *c)
{
	__u32 f = c->fields;
	int w, any = 0;

	if (f & WR_FP_M_PROTO) {
		put(b, " proto ");
		put_proto(b, c->proto);
	}
	if (f & WR_FP_M_SPORT)
		put(b, " sport %u", c->sport);
	if (f & WR_FP_M_DPORT)
		put(b, " dport %u", c->dport);
	if (f & WR_FP_M_DST) {
		put(b, " dst ");
		put_cidr(b, c->family, c->dst, c->dst_plen);
	}
	if (f & WR_FP_M_SRC) {
		put(b, " src ");
		put_cidr(b, c->family, c->src, c->src_plen);
	}
	if (f & WR_FP_M_LEN)
		put_range(b, "len", c->len_lo, c->len_hi);
	if (f & WR_FP_M_TTL)
		put_range(b, "ttl", c->ttl_lo, c->ttl_hi);
	if (f & WR_FP_M_FRAG)
		put(b, " frag %s", c->frag == WEIR_FRAG_FIRST ? "first" :
				  c->frag == WEIR_FRAG_LATER ? "later" : "none");
	if (f & WR_FP_M_FLAGS) {
		put(b, " tcp-flags ");
		/* The grammar's "syn" is SYN without ACK (user/util/args.c). */
		if (c->tcp_flags == WEIR_TCP_SYN && c->tcp_mask == (WEIR_TCP_SYN | WEIR_TCP_ACK)) {
			put(b, "syn");
		} else {
			put_flags(b, c->tcp_flags);
			put(b, "/");
			put_flags(b, c->tcp_mask);
		}
	}
	if (f & WR_FP_M_ICMP)
		put(b, " icmp-type %u", c->icmp_type);
	for (w = 0; w < WR_FP_WORDS; w++) {
		if (!(f & (WR_FP_M_PAY0 << w)))
			continue;
		put(b, "%s %d", any ? "" : " payload", 4 * w);
		/* A whole word needs no mask: the grammar's default is all ones. */
		if (c->pay_mask[w] != 0xffffffffu)
			put(b, "/0x%08x", c->pay_mask[w]);
		put(b, "=0x%08x", c->pay_value[w]);
		any = 1;
	}
}

int wr_fp_rule_words(const struct wr_fp_choice *c, char *buf, size_t len)
{
	struct wbuf b = { buf, len, 0, !len };

	if (len)
		buf[0] = '\0';
	put_match(&b, c);
	switch (c->action) {
	case WR_FP_DROP:
		/* Every packet of it dropped, for no bucket (weir.bpf.c). */
		put(&b, " action block");
		break;
	case WR_FP_PER_SRC:
		put(&b, " limit %upps per src", c->limit_pps);
		break;
	case WR_FP_PER_DST:
		put(&b, " limit %upps per dst", c->limit_pps);
		break;
	case WR_FP_TCP_STATE:
		put(&b, " tcp-state on");
		break;
	case WR_FP_COOKIE:
		/* The SYNs over the rate get cookies; a cookie handshake costs no state. */
		put(&b, " limit %upps per all action cookie", c->limit_pps);
		break;
	default:
		return -EINVAL;
	}
	/* A source that completed a handshake is real, whatever it sends. */
	put(&b, " spare verified");
	/* Without the leading space of the first word. */
	if (!b.full && b.off && buf[0] == ' ') {
		memmove(buf, buf + 1, b.off);
		b.off--;
	}
	return done(&b);
}

static const char *const action_names[] = {
	[WR_FP_DROP] = "drop",
	[WR_FP_PER_SRC] = "fallback per-source limit",
	[WR_FP_PER_DST] = "fallback per-destination limit",
	[WR_FP_TCP_STATE] = "fallback tcp-state",
	[WR_FP_COOKIE] = "fallback SYN cookies",
};

int wr_fp_describe(const struct wr_fp_choice *c, char *buf, size_t len)
{
	struct wbuf b = { buf, len, 0, !len };
	size_t at;

	if (c->action < WR_FP_DROP || c->action > WR_FP_COOKIE)
		return -EINVAL;
	if (c->action != WR_FP_DROP)
		put(&b, "%s: ", action_names[c->action]);
	at = b.off;
	put_match(&b, c);
	if (!b.full && b.off == at)
		put(&b, " all");
	/* The match without its leading space. */
	if (!b.full) {
		memmove(buf + at, buf + at + 1, b.off - at);
		b.off--;
	}
	put(&b, ", %.1f%% of %u sampled", 100.0 * c->matched / (c->n ? c->n : 1), c->n);
	/* A fingerprint's estimate of the attack's own share it holds (the rest: users). */
	if (c->action == WR_FP_DROP)
		put(&b, " (%.1f%% of the attack)", 100 * c->cover);
	put(&b, ", %u of %u before", c->false_matched, c->m);
	if (c->reason[0])
		put(&b, " (%s)", c->reason);
	return done(&b);
}

#define FP_AMP_PORT(p, n) p,
#define FP_AMP_NAME(p, n) "reflection-" n,
static const __u16 amp_ports[] = { WR_AMP_PORTS(FP_AMP_PORT) };
static const char *const vector_names[] = {
	[WR_FP_V_UDP] = "udp", [WR_FP_V_FRAG] = "fragments", [WR_FP_V_SYN] = "syn",
	[WR_FP_V_ACK] = "ack", [WR_FP_V_TCP] = "tcp", [WR_FP_V_ICMP] = "icmp",
	[WR_FP_V_OTHER] = "other", WR_AMP_PORTS(FP_AMP_NAME)
};
_Static_assert(ARRAY_SIZE(vector_names) == WR_FP_NR_VECTORS,
	       "WR_FP_NR_VECTORS: 7 kinds and one per amplifier of weir_reflect.h");

int wr_fp_vector(const struct wr_fp_choice *c)
{
	unsigned int i;

	if (!(c->fields & WR_FP_M_PROTO))
		return WR_FP_V_OTHER;
	if ((c->fields & WR_FP_M_FRAG) && c->frag != WEIR_FRAG_NONE)
		return WR_FP_V_FRAG;
	switch (c->proto) {
	case WR_IPPROTO_UDP:
		for (i = 0; (c->fields & WR_FP_M_SPORT) && i < ARRAY_SIZE(amp_ports); i++)
			if (amp_ports[i] == c->sport)
				return WR_FP_V_REFLECT + (int)i;
		return WR_FP_V_UDP;
	case WR_IPPROTO_TCP:
		if (c->action == WR_FP_COOKIE ||
		    ((c->fields & WR_FP_M_FLAGS) &&
		     (c->tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK)) == WEIR_TCP_SYN))
			return WR_FP_V_SYN;
		if ((c->fields & WR_FP_M_FLAGS) && (c->tcp_flags & WEIR_TCP_ACK) &&
		    !(c->tcp_flags & WEIR_TCP_SYN))
			return WR_FP_V_ACK;
		return WR_FP_V_TCP;
	case 1:		/* ICMP */
	case 58:	/* ICMPv6 */
		return WR_FP_V_ICMP;
	}
	return WR_FP_V_OTHER;
}

const char *wr_fp_vector_name(int v)
{
	return v >= 0 && v < (int)ARRAY_SIZE(vector_names) ? vector_names[v] : NULL;
}
