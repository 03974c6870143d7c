/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The chooser's fields (fp_atoms.c), shared by fp_choose.c: what of a
 * packet is sketched, and a field's value as a one-field fingerprint (an
 * atom), which wr_fp_match then matches like any other.
 */
#ifndef WEIR_AUTO_FP_INT_H
#define WEIR_AUTO_FP_INT_H

#include "auto/fingerprint.h"

/* IPv4 /24 and IPv6 /64 for a destination net, /24 and /48 for a source net. */
#define WR_FP_DST_NET4		24
#define WR_FP_DST_NET6		64
#define WR_FP_SRC_NET4		24
#define WR_FP_SRC_NET6		48

/* Sketched fields. The payload words come under four masks each: 1 to 4 leading bytes. */
enum fp_field {
	F_PROTO, F_SPORT, F_DPORT, F_DST, F_DST_NET, F_LEN, F_TTL, F_FLAGS, F_ICMP, F_FRAG,
	F_SRC_NET, F_PAY0, F_PAY1 = F_PAY0 + 4, F_SRC = F_PAY1 + 4, NR_FIELDS,
};

/* Groups: a combination holds at most one atom of each (dst and its net are one). */
enum fp_group {
	G_PROTO, G_SPORT, G_DPORT, G_DST, G_LEN, G_TTL, G_FLAGS, G_ICMP, G_FRAG, G_SRC, G_PAY0,
	G_PAY1, NR_GROUPS,
};

/* The group field f belongs to. */
int wr_fp_field_group(int f);
/*
 * Field f of p as a one-field fingerprint in *a: 1, or 0 when p has no
 * value for it (no ports, no such payload word, not TCP, not a fragment).
 */
int wr_fp_atom_of(int f, const struct wr_fp_pkt *p, struct wr_fp_choice *a);
/* A hash of an atom, for the sketch (FNV-1a over its match fields). */
__u64 wr_fp_atom_key(const struct wr_fp_choice *a);
/* How much an atom says: bits pinned, for ties between equally many fields. */
unsigned int wr_fp_atom_bits(const struct wr_fp_choice *a, int f);

#endif /* WEIR_AUTO_FP_INT_H */
