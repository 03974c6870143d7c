// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the packet parser, the rule matcher, bucket keys and the
 * GCRA meter, compiled for the host from the very headers the BPF object is
 * built from (weir_parse.h, weir_limiter.h).
 *
 * Input: CTL_LEN control bytes (a rule, a limit, where the linear head of
 * the frame ends), then the frame. Each check aborts with a message naming
 * what broke:
 *  - the parser never reads outside [data, end): every frame is parsed from
 *    an exact-size heap copy, so ASan sees any stray read;
 *  - it agrees with ref_parse(), a second parser written from docs/rules-and-limits.md
 *    ("How a packet is judged") byte offset by byte offset, on the result
 *    and every field the data path uses;
 *  - a shorter linear head (TC on a non-linear skb) only ever turns a
 *    result into MALFORMED, never into another verdict;
 *  - wr_rule_match() and wr_make_key() agree with bit-by-bit references;
 *  - a fresh GCRA bucket admits exactly what its burst allows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"

/* Control bytes in front of the frame. */
#define CTL_LEN 40

#define FAIL(...)                                                    \
	do {                                                         \
		fprintf(stderr, "fuzz_packet: " __VA_ARGS__);        \
		fputc('\n', stderr);                                 \
		abort();                                             \
	} while (0)

/* ---- the reference parser: offsets into f[0, n), every read checked ---- */

struct ref {
	const __u8 *f;
	size_t n;
};

/* Are bytes [off, off + len) in the frame? */
static int have(const struct ref *r, size_t off, size_t len)
{
	return off <= r->n && len <= r->n - off;
}

static unsigned int be16(const struct ref *r, size_t off)
{
	return (unsigned int)r->f[off] << 8 | r->f[off + 1];
}

/* The upper-layer header at off, l4_len bytes of it in this packet. */
static int ref_l4(const struct ref *r, size_t off, size_t l4_len, int frag, struct wr_pkt *p)
{
	switch (p->proto) {
	case 6:
		if (l4_len < 20 || !have(r, off, 20))
			return WR_PARSE_MALFORMED;
		if ((r->f[off + 12] >> 4) < 5 || (size_t)(r->f[off + 12] >> 4) * 4 > l4_len)
			return WR_PARSE_MALFORMED;
		p->sport = be16(r, off);
		p->dport = be16(r, off + 2);
		p->tcp_flags = r->f[off + 13];
		p->flags |= WR_PKT_L4 | WR_PKT_PORTS;
		return WR_PARSE_IP;
	case 17:
		if (l4_len < 8 || !have(r, off, 8))
			return WR_PARSE_MALFORMED;
		/* a fragment's UDP length is the whole datagram's */
		if (be16(r, off + 4) < 8 || (!frag && be16(r, off + 4) > l4_len))
			return WR_PARSE_MALFORMED;
		p->sport = be16(r, off);
		p->dport = be16(r, off + 2);
		p->flags |= WR_PKT_L4 | WR_PKT_PORTS;
		return WR_PARSE_IP;
	case 1:
	case 58:
		if (l4_len < 8 || !have(r, off, 8))
			return WR_PARSE_MALFORMED;
		p->icmp_type = r->f[off];
		p->flags |= WR_PKT_L4;
		return WR_PARSE_IP;
	}
	return WR_PARSE_IP;
}

static int ref_ip4(const struct ref *r, size_t l3, size_t l3_len, struct wr_pkt *p)
{
	size_t hlen, tot;
	unsigned int fo;

	if (!have(r, l3, 20) || r->f[l3] >> 4 != 4 || (r->f[l3] & 15) < 5)
		return WR_PARSE_MALFORMED;
	hlen = (r->f[l3] & 15) * 4;
	tot = be16(r, l3 + 2);
	if (tot < hlen || tot > l3_len)
		return WR_PARSE_MALFORMED;
	p->family = 4;
	p->proto = r->f[l3 + 9];
	memcpy(&p->saddr[0], r->f + l3 + 12, 4);
	p->len = tot;
	fo = be16(r, l3 + 6);
	if (fo & 0x1fff) {
		p->flags |= WR_PKT_FRAG | WR_PKT_LATER;
		return WR_PARSE_IP;
	}
	if (fo & 0x2000)
		p->flags |= WR_PKT_FRAG;
	if (!have(r, l3, hlen))
		return WR_PARSE_MALFORMED;
	return ref_l4(r, l3 + hlen, tot - hlen, !!(p->flags & WR_PKT_FRAG), p);
}

static int ref_ip6(const struct ref *r, size_t l3, size_t l3_len, struct wr_pkt *p)
{
	size_t off, left;
	int nh, i;

	if (!have(r, l3, 40) || r->f[l3] >> 4 != 6)
		return WR_PARSE_MALFORMED;
	left = be16(r, l3 + 4);
	/* Payload length 0: valid only with No Next Header (no GSO here). */
	if (left == 0 && r->f[l3 + 6] == 59) {
		p->family = 6;
		memcpy(p->saddr, r->f + l3 + 8, 16);
		p->len = 40;
		p->proto = 59;
		return WR_PARSE_IP;
	}
	if (left == 0 || 40 + left > l3_len)
		return WR_PARSE_MALFORMED;
	p->family = 6;
	memcpy(p->saddr, r->f + l3 + 8, 16);
	p->len = 40 + left;
	nh = r->f[l3 + 6];
	off = l3 + 40;
	/* At most WR_MAX_EXTHDR extension headers, then the upper layer. */
	for (i = 0;; i++) {
		size_t hl;

		if (nh == 59) {
			p->proto = nh;
			return WR_PARSE_IP;
		}
		if (nh != 0 && nh != 43 && nh != 60 && nh != 135 && nh != 51 && nh != 44)
			break;
		if (i == WR_MAX_EXTHDR)
			return WR_PARSE_MALFORMED;
		if (left < 8 || !have(r, off, 8))
			return WR_PARSE_MALFORMED;
		if (nh == 44) {
			p->flags |= WR_PKT_FRAG;
			if (be16(r, off + 2) & 0xfff8) {
				p->flags |= WR_PKT_LATER;
				p->proto = r->f[off];
				return WR_PARSE_IP;
			}
			hl = 8;
		} else if (nh == 51) {
			hl = (r->f[off + 1] + 2) * 4;
		} else {
			hl = (r->f[off + 1] + 1) * 8;
		}
		if (hl > left)
			return WR_PARSE_MALFORMED;
		nh = r->f[off];
		off += hl;
		left -= hl;
	}
	p->proto = nh;
	if (ref_l4(r, off, left, !!(p->flags & WR_PKT_FRAG), p) != WR_PARSE_IP)
		return WR_PARSE_MALFORMED;
	if (nh == 58 && p->icmp_type >= 133 && p->icmp_type <= 137 && r->f[l3 + 7] == 255)
		p->flags |= WR_PKT_ND;
	return WR_PARSE_IP;
}

/* The frame f[0, n): n is both what is readable and the frame's length. */
static int ref_parse(const __u8 *f, size_t n, struct wr_pkt *p, size_t *l2)
{
	struct ref r = { f, n };
	unsigned int type;
	size_t off = 14;
	int tags = 0;

	*l2 = 0;
	if (!have(&r, 0, 14))
		return WR_PARSE_MALFORMED;
	type = be16(&r, 12);
	while (type == 0x8100 || type == 0x88a8) {
		if (tags == WR_MAX_VLAN)
			return WR_PARSE_MALFORMED;	/* a third tag */
		if (!have(&r, off, 4))
			return WR_PARSE_MALFORMED;
		type = be16(&r, off + 2);
		off += 4;
		tags++;
	}
	*l2 = off;
	if (type == 0x0800)
		return ref_ip4(&r, off, n - off, p);
	if (type == 0x86dd)
		return ref_ip6(&r, off, n - off, p);
	return WR_PARSE_NON_IP;
}

/* ---- what the data path uses of a parsed packet ---- */

static int same_pkt(const struct wr_pkt *a, const struct wr_pkt *b)
{
	return !memcmp(a->saddr, b->saddr, sizeof(a->saddr)) && a->len == b->len &&
	       a->family == b->family && a->proto == b->proto && a->flags == b->flags &&
	       (!(a->flags & WR_PKT_PORTS) || (a->dport == b->dport && a->sport == b->sport)) &&
	       (!(a->flags & WR_PKT_L4) || a->proto != 6 || a->tcp_flags == b->tcp_flags) &&
	       (!(a->flags & WR_PKT_L4) || (a->proto != 1 && a->proto != 58) ||
		a->icmp_type == b->icmp_type);
}

static void dump_pkt(const char *what, int res, const struct wr_pkt *p)
{
	fprintf(stderr, "  %s: result %d family %u proto %u len %u flags %#x dport %u tcp %#x "
		"icmp %u saddr %08x:%08x:%08x:%08x\n", what, res, p->family, p->proto, p->len,
		p->flags, p->dport, p->tcp_flags, p->icmp_type, p->saddr[0], p->saddr[1],
		p->saddr[2], p->saddr[3]);
}

/* Parse from an exact-size copy of the first `linear` bytes; frame_len is n. */
static int parse_copy(const __u8 *frame, size_t linear, size_t n, struct wr_pkt *p)
{
	struct wr_pkt_x x;
	__u8 *copy = malloc(linear ? linear : 1);
	int res;

	if (!copy)
		abort();
	memcpy(copy, frame, linear);
	memset(p, 0, sizeof(*p));
	res = wr_parse(copy, copy + linear, (__u32)n, p, &x);
	free(copy);
	return res;
}

/* ---- matcher and key references ---- */

/* Bit i (0 = most significant) of a network-order address. */
static int addr_bit(const __u32 *a, unsigned int i)
{
	const __u8 *b = (const __u8 *)a;

	return b[i / 8] >> (7 - i % 8) & 1;
}

static int prefix_equal(const __u32 *a, const __u32 *b, unsigned int plen)
{
	unsigned int i;

	for (i = 0; i < plen; i++)
		if (addr_bit(a, i) != addr_bit(b, i))
			return 0;
	return 1;
}

/* The matching rules of docs/rules-and-limits.md, written out again. */
static int ref_match(const struct weir_rule *r, const struct wr_pkt *p)
{
	int ports = p->flags & WR_PKT_PORTS, l4 = p->flags & WR_PKT_L4;

	if ((p->flags & WR_PKT_ND) &&
	    !((r->match & WEIR_M_ICMPTYPE) && r->icmp_type == p->icmp_type))
		return 0;
	if ((r->match & WEIR_M_FAMILY) && r->family != p->family)
		return 0;
	if ((r->match & WEIR_M_PROTO) && r->proto != p->proto)
		return 0;
	if ((r->match & WEIR_M_DPORT) &&
	    !(ports && r->dport_lo <= p->dport && p->dport <= r->dport_hi))
		return 0;
	if ((r->match & WEIR_M_SRC) && !prefix_equal(p->saddr, r->src_net, r->src_plen))
		return 0;
	if ((r->match & WEIR_M_TCPFLAGS) &&
	    !(p->proto == 6 && l4 && (p->tcp_flags & r->tcp_mask) == r->tcp_value))
		return 0;
	if ((r->match & WEIR_M_ICMPTYPE) &&
	    !((p->proto == 1 || p->proto == 58) && l4 && p->icmp_type == r->icmp_type))
		return 0;
	return 1;
}

/* Network-order mask of plen bits, bit by bit. */
static void ref_mask(unsigned int plen, __u32 *m)
{
	__u8 *b = (__u8 *)m;
	unsigned int i;

	memset(m, 0, 16);
	for (i = 0; i < plen && i < 128; i++)
		b[i / 8] |= 0x80 >> (i % 8);
}

/* A rule as `rule add` would build it, from control bytes. */
static void make_rule(const __u8 *c, struct weir_rule *r)
{
	__u32 m[4];
	int w;

	memset(r, 0, sizeof(*r));
	r->uid = 1 + c[0];
	r->match = c[1] & 0x3f;
	r->family = c[2] & 1 ? 6 : 4;
	r->proto = c[3];
	r->dport_lo = (__u16)(c[4] << 8 | c[5]);
	r->dport_hi = (__u16)(c[6] << 8 | c[7]);
	if (r->dport_hi < r->dport_lo) {
		__u16 t = r->dport_lo;

		r->dport_lo = r->dport_hi;
		r->dport_hi = t;
	}
	r->tcp_mask = c[8];
	r->tcp_value = c[9] & c[8];
	r->icmp_type = c[10];
	/* a source prefix implies its family, as in `rule add src CIDR` */
	if (r->match & WEIR_M_SRC)
		r->match |= WEIR_M_FAMILY;
	r->src_plen = c[11] % (r->family == 4 ? 33 : 129);
	memcpy(r->src_net, c + 12, 16);
	if (r->family == 4)
		r->src_net[1] = r->src_net[2] = r->src_net[3] = 0;
	ref_mask(r->src_plen, m);
	for (w = 0; w < 4; w++) {
		r->src_mask[w] = r->family == 4 ? (w ? 0 : wr_prefix_word(r->src_plen, 0))
						: wr_prefix_word(r->src_plen, w);
		if (r->src_mask[w] != m[w])
			FAIL("wr_prefix_word(%u, %d) = %08x, bit by bit %08x", r->src_plen, w,
			     r->src_mask[w], m[w]);
		r->src_net[w] &= r->src_mask[w];
	}
}

static void make_limit(const __u8 *c, struct weir_limit *l)
{
	memset(l, 0, sizeof(*l));
	l->cost = c[0] & 1;
	l->key = WEIR_KEY_SRC;
	l->plen4 = c[1] % 33;
	l->plen6 = c[2] % 129;
	/* a rate of 1 .. 2^40 per second and a burst of 1 .. 2^24 */
	memcpy(&l->rate, c + 3, 5);
	l->rate = (l->rate & ((1ULL << 40) - 1)) + 1;
	l->burst = ((__u64)c[8] << 16 | (__u64)c[9] << 8 | c[10]) + 1;
	l->interval_fp = wr_gcra_interval(l->rate);
	l->tolerance = wr_gcra_tolerance(l->interval_fp, l->burst, l->cost);
	wr_limit_set_masks(l);
}

static void check_key(const struct weir_rule *r, const struct weir_limit *l,
		      const struct wr_pkt *p)
{
	struct weir_key k;
	__u32 m[4], want[4];
	unsigned int plen = p->family == 4 ? l->plen4 : l->plen6;
	int w;

	memset(&k, 0xa5, sizeof(k));
	wr_make_key(r, 1, l, p, &k);
	ref_mask(plen, m);
	for (w = 0; w < 4; w++)
		want[w] = p->saddr[w] & m[w];
	if (k.uid != r->uid || k.limit != 1 || k.family != p->family || k.plen != plen ||
	    k.kind != 0 || memcmp(k.addr, want, sizeof(want)))
		FAIL("wr_make_key: family %u plen %u addr %08x:%08x:%08x:%08x, want plen %u "
		     "%08x:%08x:%08x:%08x", k.family, k.plen, k.addr[0], k.addr[1], k.addr[2],
		     k.addr[3], plen, want[0], want[1], want[2], want[3]);
}

/*
 * A fresh bucket at now admits packets of this cost back to back while
 * their total fits the burst (in whole units of the rounded cost), and not
 * one more; every TAT stays within tolerance of now.
 */
static void check_gcra(const struct weir_limit *l, const struct wr_pkt *p)
{
	const __u64 now = 1000ULL * WR_NSEC_PER_SEC;
	__u32 cost = wr_limit_cost(l, p);
	__u64 inc, tat = 0, next, admitted = 0, want;
	int i;

	if (!l->interval_fp || !l->tolerance)
		return;	/* `rule add` refuses these limits */
	if (cost > WR_MAX_COST)
		FAIL("cost %u above WR_MAX_COST", cost);
	inc = wr_gcra_inc(l->interval_fp, cost);
	want = inc ? l->tolerance / inc : ~0ULL;
	for (i = 0; i < 70 && wr_gcra_admit(tat, now, inc, l->tolerance, &next); i++) {
		if (next < now || next - now > l->tolerance || next < tat)
			FAIL("gcra: TAT %llu out of [now, now + tolerance %llu]",
			     (unsigned long long)(next - now), (unsigned long long)l->tolerance);
		tat = next;
		admitted++;
	}
	if (admitted != (want < 70 ? want : 70))
		FAIL("gcra: fresh bucket (rate %llu burst %llu cost kind %u, packet cost %u) "
		     "admitted %llu, want %llu", (unsigned long long)l->rate,
		     (unsigned long long)l->burst, l->cost, cost, (unsigned long long)admitted,
		     (unsigned long long)want);
	if (l->cost == WEIR_COST_PKT && l->burst <= 70 && admitted != l->burst)
		FAIL("gcra: packet burst %llu admitted %llu", (unsigned long long)l->burst,
		     (unsigned long long)admitted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wr_pkt p, q, ref;
	struct weir_rule r;
	struct weir_limit l;
	const __u8 *frame;
	size_t n, linear, l2;
	int res, rres, cres;

	if (size < CTL_LEN)
		return 0;
	frame = data + CTL_LEN;
	n = size - CTL_LEN;

	res = parse_copy(frame, n, n, &p);
	memset(&ref, 0, sizeof(ref));
	rres = ref_parse(frame, n, &ref, &l2);
	if (res != rres || (res == WR_PARSE_IP && !same_pkt(&p, &ref))) {
		fprintf(stderr, "fuzz_packet: wr_parse and the reference disagree on %zu bytes\n",
			n);
		dump_pkt("wr_parse ", res, &p);
		dump_pkt("reference", rres, &ref);
		abort();
	}
	if (res == WR_PARSE_IP) {
		if ((p.family != 4 && p.family != 6) || p.len > n - l2 ||
		    p.len < (p.family == 4 ? 20u : p.proto == 59 ? 40u : 41u))
			FAIL("family %u len %u in a %zu-byte frame (L2 %zu)", p.family, p.len, n,
			     l2);
		if (p.flags & ~(WR_PKT_L4 | WR_PKT_PORTS | WR_PKT_FRAG | WR_PKT_ND | WR_PKT_LATER))
			FAIL("unknown flags %#x", p.flags);
		/* A later fragment: a fragment, and no upper-layer header. */
		if ((p.flags & WR_PKT_LATER) &&
		    (p.flags & (WR_PKT_FRAG | WR_PKT_L4 | WR_PKT_PORTS)) != WR_PKT_FRAG)
			FAIL("later fragment with flags %#x", p.flags);
		if ((p.flags & WR_PKT_PORTS) && (!(p.flags & WR_PKT_L4) ||
						 (p.proto != 6 && p.proto != 17)))
			FAIL("ports without a TCP/UDP header (proto %u flags %#x)", p.proto,
			     p.flags);
		if ((p.flags & WR_PKT_ND) && (p.family != 6 || p.proto != 58 ||
					      !(p.flags & WR_PKT_L4)))
			FAIL("ND flag on family %u proto %u", p.family, p.proto);
	}

	/* A shorter linear head: the same result, or MALFORMED, nothing else. */
	linear = n ? (size_t)(data[CTL_LEN - 1] | data[CTL_LEN - 2] << 8) % (n + 1) : 0;
	cres = parse_copy(frame, linear, n, &q);
	if (cres != WR_PARSE_MALFORMED &&
	    (cres != res || (res == WR_PARSE_IP && !same_pkt(&p, &q)))) {
		fprintf(stderr, "fuzz_packet: a %zu-byte head of a %zu-byte frame parses "
			"differently\n", linear, n);
		dump_pkt("whole", res, &p);
		dump_pkt("head ", cres, &q);
		abort();
	}
	if (res != WR_PARSE_IP)
		return 0;

	make_rule(data, &r);
	if (wr_rule_match(&r, &p) != ref_match(&r, &p)) {
		fprintf(stderr, "fuzz_packet: wr_rule_match %d, reference %d (match %#x)\n",
			wr_rule_match(&r, &p), ref_match(&r, &p), r.match);
		dump_pkt("packet", res, &p);
		abort();
	}
	make_limit(data + 28, &l);
	check_key(&r, &l, &p);
	check_gcra(&l, &p);
	return 0;
}
