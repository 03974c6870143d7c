// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The chooser's fields (fp_int.h): a packet's value of each as a
 * one-field fingerprint, its hash for the sketch, and its weight.
 */
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>

#include "weir.h"
#include "weir_parse.h"
#include "auto/fp_int.h"

int wr_fp_field_group(int f)
{
	static const __u8 g[] = {
		[F_PROTO] = G_PROTO, [F_SPORT] = G_SPORT, [F_DPORT] = G_DPORT, [F_DST] = G_DST,
		[F_DST_NET] = G_DST, [F_LEN] = G_LEN, [F_TTL] = G_TTL, [F_FLAGS] = G_FLAGS,
		[F_ICMP] = G_ICMP, [F_FRAG] = G_FRAG, [F_SRC_NET] = G_SRC,
	};

	if (f >= F_PAY0 && f < F_PAY1)
		return G_PAY0;
	if (f >= F_PAY1 && f < F_SRC)
		return G_PAY1;
	return g[f];
}

static void set_prefix(__u8 *dst, const __u8 *addr, int family, unsigned int plen)
{
	unsigned int bits = family == 4 ? 96 + plen : plen, i;

	memset(dst, 0, 16);
	for (i = 0; i < 16; i++) {
		if (bits >= 8)
			dst[i] = addr[i];
		else if (bits)
			dst[i] = addr[i] & (0xff << (8 - bits));
		bits = bits >= 8 ? bits - 8 : 0;
	}
}

/*
 * Field f of p as a one-field fingerprint in *a: 1, or 0 when p has no
 * value for it (no ports, no such payload word, not TCP, not a fragment).
 */
int wr_fp_atom_of(int f, const struct wr_fp_pkt *p, struct wr_fp_choice *a)
{
	int w, bytes;

	memset(a, 0, sizeof(*a));
	switch (f) {
	case F_PROTO:
		a->fields = WR_FP_M_PROTO;
		a->proto = p->proto;
		return 1;
	case F_SPORT:
	case F_DPORT:
		if (!(p->flags & WR_FP_PORTS))
			return 0;
		a->fields = f == F_SPORT ? WR_FP_M_SPORT : WR_FP_M_DPORT;
		a->sport = f == F_SPORT ? p->sport : 0;
		a->dport = f == F_DPORT ? p->dport : 0;
		return 1;
	case F_DST:
	case F_DST_NET:
	case F_SRC_NET:
	case F_SRC:
		a->family = p->family;
		if (f == F_SRC || f == F_SRC_NET) {
			a->fields = WR_FP_M_SRC;
			a->src_plen = f == F_SRC ? (p->family == 4 ? 32 : 128) :
				      (p->family == 4 ? WR_FP_SRC_NET4 : WR_FP_SRC_NET6);
			set_prefix(a->src, p->saddr, p->family, a->src_plen);
		} else {
			a->fields = WR_FP_M_DST;
			a->dst_plen = f == F_DST ? (p->family == 4 ? 32 : 128) :
				      (p->family == 4 ? WR_FP_DST_NET4 : WR_FP_DST_NET6);
			set_prefix(a->dst, p->daddr, p->family, a->dst_plen);
		}
		return 1;
	case F_LEN:
		a->fields = WR_FP_M_LEN;
		a->len_lo = a->len_hi = p->len;
		return 1;
	case F_TTL:
		a->fields = WR_FP_M_TTL;
		a->ttl_lo = a->ttl_hi = p->ttl;
		return 1;
	case F_FLAGS:
		if (p->proto != WR_IPPROTO_TCP || !(p->flags & WR_FP_L4))
			return 0;
		/* Exactly these flags: every one of the eight in the mask. */
		a->fields = WR_FP_M_FLAGS;
		a->tcp_flags = p->tcp_flags;
		a->tcp_mask = 0xff;
		return 1;
	case F_ICMP:
		if ((p->proto != WR_IPPROTO_ICMP && p->proto != WR_IPPROTO_ICMPV6) ||
		    !(p->flags & WR_FP_L4))
			return 0;
		a->fields = WR_FP_M_ICMP;
		a->icmp_type = p->icmp_type;
		return 1;
	case F_FRAG:
		/* Not being a fragment says nothing an attack has and users lack. */
		if (p->frag == WEIR_FRAG_NONE)
			return 0;
		a->fields = WR_FP_M_FRAG;
		a->frag = p->frag;
		return 1;
	default:
		w = f >= F_PAY1 ? 1 : 0;
		bytes = f - (w ? F_PAY1 : F_PAY0) + 1;
		if (!(p->flags & WR_FP_PORTS) || p->nr_words <= w)
			return 0;
		a->fields = WR_FP_M_PAY0 << w;
		a->pay_mask[w] = bytes == 4 ? 0xffffffffu : ~(0xffffffffu >> (8 * bytes));
		a->pay_value[w] = ntohl(p->words[w]) & a->pay_mask[w];
		return 1;
	}
}

/* FNV-1a over an atom (zeroed, then filled: its padding is zero too). */
__u64 wr_fp_atom_key(const struct wr_fp_choice *a)
{
	const __u8 *b = (const __u8 *)a;
	__u64 h = 0xcbf29ce484222325ULL;	/* the FNV-1a 64-bit offset basis */
	size_t i;

	for (i = 0; i < offsetof(struct wr_fp_choice, limit_pps); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;	/* the FNV 64-bit prime */
	return h;
}

static unsigned int popcount32(__u32 x)
{
	return (unsigned int)__builtin_popcount(x);
}

unsigned int wr_fp_atom_bits(const struct wr_fp_choice *a, int field)
{
	switch (field) {
	case F_DST:
	case F_DST_NET:
		return a->dst_plen;
	case F_SRC_NET:
		return a->src_plen;
	case F_SPORT:
	case F_DPORT:
	case F_LEN:
		return 16;	/* a 16-bit field pinned */
	default:
		if (field >= F_PAY0 && field < F_SRC)
			return popcount32(a->pay_mask[field >= F_PAY1]);
		return 8;	/* an 8-bit field pinned */
	}
}
