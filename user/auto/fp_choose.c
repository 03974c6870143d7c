// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fingerprint chooser (fingerprint.h: wr_fp_choose).
 *
 * 1. Heavy hitters. Each field a fingerprint may hold (fp_atoms.c:
 *    protocol, source port, destination port, destination address and
 *    its /24 or /64, length, TTL, TCP flags, ICMP type, fragment state,
 *    source /24 or /48, the first two payload words under four prefix
 *    masks each) gets a Space-Saving sketch (sketch.c) of WR_SS_K
 *    counters over the attack sample. Space-Saving rather than
 *    Count-Min: it keeps the heavy values themselves (a Count-Min sketch
 *    only answers for a value one already has), in fixed memory, and any
 *    value held by more than n / WR_SS_K of the packets is certain to be
 *    among its counters; the chooser only wants values held by at least
 *    half the sample (WR_FP_ATOM_MIN), far above that line. Each field's
 *    heaviest value becomes an atom (one field = one value), recounted
 *    exactly.
 * 2. Combinations. Every packet of both samples gets the bitmask of the
 *    atoms it matches; packets with equal masks are counted together, so
 *    a combination of atoms is judged by a walk over the distinct masks
 *    (a few hundred), not over the packets. Every combination with the
 *    protocol's atom and at most one atom per field group is judged:
 *    exactly, on the samples, as the sample is bounded by the capture
 *    budget (a few thousand packets a second).
 * 3. What the attack is. The attack sample also holds the class's normal
 *    traffic, so a fingerprint's share of that sample understates its
 *    share of the attack. The packets a combination leaves unmatched (the
 *    residual) should be normal traffic: they should hold each atom in the
 *    share the before-sample's unmatched packets do. Where the residual
 *    holds an atom in a larger share, beyond the two samples' binomial
 *    spread (WR_FP_NOISE_Z standard deviations), the excess is attack the
 *    combination misses (missed attack packets still share the attack's
 *    other traits); the largest such excess over all atoms estimates it.
 *    Coverage is the matched attack (the matched packets less the normal
 *    traffic expected among them, the residual's normal part scaled by
 *    the before-sample's matched to unmatched ratio) over that plus the
 *    missed; a matched attack within the normal traffic's own spread
 *    counts as none. Measured (tests/auto_fp.c): with 5% to 50% of the
 *    attack sample normal traffic, from 500 to 5000 packets a sample, it
 *    accepts no fingerprint that misses 4% of an attack, and every vector
 *    of the suite still gets its fingerprint.
 * 4. Ranges. For a combination that covers enough, the length and TTL of
 *    the attack packets it matches give a `len A-B` and a `ttl A-B` band,
 *    added when they spare part of the before-sample the combination
 *    matches, or are narrow on their own (match at most WR_FP_SELECTIVE
 *    of the before-sample).
 * 5. The choice: of the combinations that cover at least opts.cover of
 *    the attack and match at most opts.false_max of the before-sample, the
 *    most specific (most fields; then fewest false matches; then most
 *    bits: a longer prefix or mask), first in enumeration order on a tie,
 *    so the same samples always give the same rule. Where none qualifies:
 *    SYN cookies for a SYN flood, tcp-state for other TCP, a limit per
 *    source when few sources send most of the attack, else per
 *    destination; the reason names what failed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "weir.h"
#include "weir_parse.h"
#include "auto/fp_int.h"
#include "auto/sketch.h"

/*
 * A value becomes an atom when it holds at least this share of the attack
 * sample: an onset is a class's rate well over its baseline, so the attack
 * is most of what the class carries.
 */
#define WR_FP_ATOM_MIN		0.5
/*
 * An atom's excess in the residual counts as missed attack only beyond
 * this many standard deviations of the shares' sampling spread: else an
 * atom that most normal traffic has (a share near 1, which the excess is
 * divided by the rest of) turns chance into missed attack.
 */
#define WR_FP_NOISE_Z		2.0
/*
 * A band's ends go this many mean gaps between sampled values beyond the
 * extreme ones: for values spread evenly, the chance that the attack has
 * values past a widened end falls as e^-WR_FP_BAND_SLACK.
 */
#define WR_FP_BAND_SLACK	3.0
/* A range is narrow on its own when it matches at most this share of the before-sample. */
#define WR_FP_SELECTIVE		0.5
/*
 * The attack sample looks like the before-sample when no atom's share in it
 * departs from its share before by more than this many standard deviations.
 */
#define WR_FP_SAME_Z		3.0
/* Combinations judged at most: the weakest atoms go first when there would be more. */
#define WR_FP_MAX_COMBOS	4096
/* Most samples taken: counts stay well within 32 bits, memory a few MiB. */
#define WR_FP_SAMPLE_MAX	(1u << 20)
static __u32 count_match(const struct wr_fp_choice *c, const struct wr_fp_pkt *p, size_t n)
{
	__u32 k = 0;
	size_t i;

	for (i = 0; i < n; i++)
		k += wr_fp_match(c, &p[i]);
	return k;
}

/* At most this many atoms: masks are 32 bits. */
#define WR_FP_MAX_ATOMS		32
/* Every sketched field but the exact source may give one. */
_Static_assert(F_SRC <= WR_FP_MAX_ATOMS, "an atom mask bit per field");

struct atom {
	struct wr_fp_choice a;
	int field, group;
	__u32 count;		/* attack-sample packets it matches */
	unsigned int bits;	/* how much it says: for ties between equally many fields */
};

/* Packets with one mask: how many of each sample, and the attack's lengths and TTLs. */
struct hist {
	__u32 mask;
	__u32 na, nb;
	__u32 len_lo, len_hi;
	__u8 ttl_lo, ttl_hi;
};

/* The chooser's working state. */
struct fp_state {
	const struct wr_fp_pkt *A, *B;
	size_t n, m;
	const struct wr_fp_opts *o;
	struct atom atoms[WR_FP_MAX_ATOMS];
	int na;
	int proto_atom;		/* index of the protocol's atom, or -1 */
	__u32 *bmask;		/* each before-sample packet's atoms */
	struct hist *h;
	size_t nh;
};

/* How a combination fares. */
struct verdict {
	__u32 ma, mb;		/* matched in the attack and the before-sample */
	double cover, normal;	/* estimated share of the attack covered; of normal traffic */
	__u32 fields;		/* with the ranges added */
	int groups;
	unsigned int bits;
	__u32 len_lo, len_hi;
	__u8 ttl_lo, ttl_hi;
};

/* Step 1: the atoms: each field's heaviest value, if it holds WR_FP_ATOM_MIN of the sample. */
static int find_atoms(struct fp_state *st, struct wr_ss *src_sketch)
{
	struct wr_ss *sk;
	struct wr_fp_choice a;
	size_t i;
	int f;

	sk = calloc(NR_FIELDS, sizeof(*sk));
	if (!sk)
		return -ENOMEM;
	for (i = 0; i < st->n; i++)
		for (f = 0; f < NR_FIELDS; f++)
			if (wr_fp_atom_of(f, &st->A[i], &a))
				wr_ss_add(&sk[f], wr_fp_atom_key(&a), (__u32)i);
	*src_sketch = sk[F_SRC];
	st->na = 0;
	st->proto_atom = -1;
	for (f = 0; f < F_SRC; f++) {
		const struct wr_ss_item *top = wr_ss_top(&sk[f]);
		struct atom *at;
		__u32 k;

		if (!top || top->count < WR_FP_ATOM_MIN * st->n)
			continue;
		wr_fp_atom_of(f, &st->A[top->rep], &a);
		k = count_match(&a, st->A, st->n);
		if (k < WR_FP_ATOM_MIN * st->n)
			continue;
		at = &st->atoms[st->na++];
		at->a = a;
		at->field = f;
		at->group = wr_fp_field_group(f);
		at->count = k;
		at->bits = wr_fp_atom_bits(&a, f);
		if (f == F_PROTO)
			st->proto_atom = st->na - 1;
	}
	free(sk);
	return 0;
}

/* Combinations the atoms make: the product over groups of (atoms + 1); proto's is fixed. */
static size_t nr_combos(const struct fp_state *st)
{
	int per[NR_GROUPS] = { 0 }, i;
	size_t c = 1;

	for (i = 0; i < st->na; i++)
		if (i != st->proto_atom)
			per[st->atoms[i].group]++;
	for (i = 0; i < NR_GROUPS; i++)
		c *= per[i] + 1;
	return c;
}

/* Drop the weakest atoms (never proto's) until the combinations are few enough. */
static void trim_atoms(struct fp_state *st)
{
	while (nr_combos(st) > WR_FP_MAX_COMBOS) {
		int i, weak = -1;

		for (i = 0; i < st->na; i++)
			if (i != st->proto_atom &&
			    (weak < 0 || st->atoms[i].count < st->atoms[weak].count))
				weak = i;
		memmove(&st->atoms[weak], &st->atoms[weak + 1],
			(st->na - weak - 1) * sizeof(st->atoms[0]));
		st->na--;
		if (st->proto_atom > weak)
			st->proto_atom--;
	}
}

static int cmp_hist(const void *x, const void *y)
{
	const struct hist *a = x, *b = y;

	return (a->mask > b->mask) - (a->mask < b->mask);
}

/* Step 2: each packet's mask of atoms, and the distinct masks with their counts. */
static int build_hist(struct fp_state *st)
{
	size_t i, j, total = st->n + st->m;
	struct hist *all;
	int k;

	st->bmask = calloc(st->m, sizeof(__u32));
	all = calloc(total, sizeof(*all));
	if (!st->bmask || !all) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < total; i++) {
		const struct wr_fp_pkt *p = i < st->n ? &st->A[i] : &st->B[i - st->n];
		__u32 mask = 0;

		for (k = 0; k < st->na; k++)
			if (wr_fp_match(&st->atoms[k].a, p))
				mask |= 1u << k;
		if (i >= st->n)
			st->bmask[i - st->n] = mask;
		all[i] = (struct hist){ .mask = mask, .na = i < st->n, .nb = i >= st->n,
					.len_lo = i < st->n ? p->len : ~0u,
					.len_hi = i < st->n ? p->len : 0,
					.ttl_lo = i < st->n ? p->ttl : 0xff,
					.ttl_hi = i < st->n ? p->ttl : 0 };
	}
	qsort(all, total, sizeof(*all), cmp_hist);
	for (i = 0, j = 0; i < total; i++) {
		struct hist *h = &all[i];

		if (j && all[j - 1].mask == h->mask) {
			struct hist *d = &all[j - 1];

			d->na += h->na;
			d->nb += h->nb;
			d->len_lo = h->len_lo < d->len_lo ? h->len_lo : d->len_lo;
			d->len_hi = h->len_hi > d->len_hi ? h->len_hi : d->len_hi;
			d->ttl_lo = h->ttl_lo < d->ttl_lo ? h->ttl_lo : d->ttl_lo;
			d->ttl_hi = h->ttl_hi > d->ttl_hi ? h->ttl_hi : d->ttl_hi;
		} else {
			all[j++] = *h;
		}
	}
	st->h = all;
	st->nh = j;
	return 0;
}

/* Step 3: how combination s (atom bits) covers the attack. */
static void judge(const struct fp_state *st, __u32 s, struct verdict *v)
{
	__u32 ra[WR_FP_MAX_ATOMS] = { 0 }, rb[WR_FP_MAX_ATOMS] = { 0 };
	double lambda = 0, r, rbt, leftover, normal_in, att;
	size_t i;
	int k;

	memset(v, 0, sizeof(*v));
	v->len_lo = ~0u;
	v->ttl_lo = 0xff;
	for (i = 0; i < st->nh; i++) {
		const struct hist *h = &st->h[i];

		if ((h->mask & s) == s) {
			v->ma += h->na;
			v->mb += h->nb;
			if (h->na) {
				v->len_lo = h->len_lo < v->len_lo ? h->len_lo : v->len_lo;
				v->len_hi = h->len_hi > v->len_hi ? h->len_hi : v->len_hi;
				v->ttl_lo = h->ttl_lo < v->ttl_lo ? h->ttl_lo : v->ttl_lo;
				v->ttl_hi = h->ttl_hi > v->ttl_hi ? h->ttl_hi : v->ttl_hi;
			}
			continue;
		}
		for (k = 0; k < st->na; k++) {
			if (h->mask & (1u << k)) {
				ra[k] += h->na;
				rb[k] += h->nb;
			}
		}
	}
	r = (double)st->n - v->ma;
	rbt = (double)st->m - v->mb;
	/* The largest excess of an atom in the residual over its share before. */
	for (k = 0; r > 0 && k < st->na; k++) {
		double p = ra[k] / r, beta = rbt > 0 ? rb[k] / rbt : 0, sd, l;

		if (beta >= 1)
			continue;
		/* The two shares' binomial spread: an excess within it is chance. */
		sd = sqrt(beta * (1 - beta) * (1 / r + (rbt > 0 ? 1 / rbt : 0)));
		l = (p - beta - WR_FP_NOISE_Z * sd) / (1 - beta);
		if (l > lambda)
			lambda = l;
	}
	if (lambda > 1)
		lambda = 1;
	leftover = lambda * r;
	/* Normal traffic among the matched, in the proportion the before-sample shows. */
	normal_in = rbt > 0 ? (r - leftover) * v->mb / rbt : 0;
	att = v->ma - normal_in;
	/* No more than the normal traffic's own spread: no attack seen in what it matches. */
	if (att <= WR_FP_NOISE_Z * sqrt(normal_in + 1))
		att = 0;
	v->cover = att > 0 ? att / (att + leftover) : 0;
	v->normal = (r - leftover + normal_in) / st->n;
}

/* Before-sample packets of mask set s within the ranges v (has: which it applies). */
static __u32 before_in(const struct fp_state *st, __u32 s, const struct verdict *v, __u32 has)
{
	__u32 k = 0;
	size_t i;

	for (i = 0; i < st->m; i++) {
		const struct wr_fp_pkt *p = &st->B[i];

		if ((st->bmask[i] & s) != s)
			continue;
		if ((has & WR_FP_M_LEN) && (p->len < v->len_lo || p->len > v->len_hi))
			continue;
		if ((has & WR_FP_M_TTL) && (p->ttl < v->ttl_lo || p->ttl > v->ttl_hi))
			continue;
		k++;
	}
	return k;
}

/*
 * A band from the n sampled values in [*lo, *hi], widened at each end by
 * WR_FP_BAND_SLACK mean gaps between them (at least 1), within [0, max]:
 * the attack's values the sample happened to miss at either end are held
 * too, at a cost of 2 * WR_FP_BAND_SLACK / n of the band's width.
 */
static void widen(__u32 *lo, __u32 *hi, __u32 n, __u32 max)
{
	__u32 slack;

	if (*lo > *hi || !n)
		return;
	slack = (__u32)ceil(WR_FP_BAND_SLACK * (*hi - *lo) / (n + 1.0));
	if (!slack)
		slack = 1;
	*lo = *lo > slack ? *lo - slack : 0;
	*hi = max - *hi > slack ? *hi + slack : max;
}

/* Step 4: the fields, groups and bits of s, with the ranges that earn their place. */
static void refine(const struct fp_state *st, __u32 s, struct verdict *v)
{
	__u32 has = 0, r, lo, hi;
	int k, bit;

	for (k = 0; k < st->na; k++) {
		if (!(s & (1u << k)))
			continue;
		v->fields |= st->atoms[k].a.fields;
		v->groups++;
		v->bits += st->atoms[k].bits;
	}
	widen(&v->len_lo, &v->len_hi, v->ma, WR_GSO_MAX_LEN);
	lo = v->ttl_lo;
	hi = v->ttl_hi;
	widen(&lo, &hi, v->ma, 0xff);
	v->ttl_lo = lo;
	v->ttl_hi = hi;
	for (bit = 0; bit < 2; bit++) {
		__u32 f = bit ? WR_FP_M_TTL : WR_FP_M_LEN;

		if ((v->fields & f) || !v->ma)
			continue;
		/* A range that spares matched users, or is narrow on its own. */
		r = before_in(st, s, v, has | f);
		if (r < v->mb || before_in(st, 0, v, f) <= WR_FP_SELECTIVE * st->m) {
			has |= f;
			v->mb = r;
			v->groups++;
			v->bits += 4;	/* a band: less than a pinned value */
		}
	}
	v->fields |= has;
}

/* Is a better than b (both qualify)? */
static int better(const struct verdict *a, const struct verdict *b)
{
	if (a->groups != b->groups)
		return a->groups > b->groups;
	if (a->mb != b->mb)
		return a->mb < b->mb;
	return a->bits > b->bits;
}

/* The choice's fields from combination s and its verdict. */
static void fill(const struct fp_state *st, __u32 s, const struct verdict *v,
		 struct wr_fp_choice *c)
{
	int k, w;

	for (k = 0; k < st->na; k++) {
		const struct wr_fp_choice *a = &st->atoms[k].a;

		if (!(s & (1u << k)))
			continue;
		c->fields |= a->fields;
		if (a->fields & WR_FP_M_PROTO)
			c->proto = a->proto;
		if (a->fields & WR_FP_M_SPORT)
			c->sport = a->sport;
		if (a->fields & WR_FP_M_DPORT)
			c->dport = a->dport;
		if (a->fields & WR_FP_M_DST) {
			c->family = a->family;
			memcpy(c->dst, a->dst, 16);
			c->dst_plen = a->dst_plen;
		}
		if (a->fields & WR_FP_M_SRC) {
			c->family = a->family;
			memcpy(c->src, a->src, 16);
			c->src_plen = a->src_plen;
		}
		if (a->fields & WR_FP_M_LEN)
			c->len_lo = c->len_hi = a->len_lo;
		if (a->fields & WR_FP_M_TTL)
			c->ttl_lo = c->ttl_hi = a->ttl_lo;
		if (a->fields & WR_FP_M_FLAGS) {
			c->tcp_flags = a->tcp_flags;
			c->tcp_mask = a->tcp_mask;
		}
		if (a->fields & WR_FP_M_ICMP)
			c->icmp_type = a->icmp_type;
		if (a->fields & WR_FP_M_FRAG)
			c->frag = a->frag;
		for (w = 0; w < WR_FP_WORDS; w++) {
			if (a->fields & (WR_FP_M_PAY0 << w)) {
				c->pay_mask[w] = a->pay_mask[w];
				c->pay_value[w] = a->pay_value[w];
			}
		}
	}
	/* A band where no atom pinned the field. */
	if ((v->fields & WR_FP_M_LEN) && !(c->fields & WR_FP_M_LEN)) {
		c->len_lo = v->len_lo;
		c->len_hi = v->len_hi;
	}
	if ((v->fields & WR_FP_M_TTL) && !(c->fields & WR_FP_M_TTL)) {
		c->ttl_lo = v->ttl_lo;
		c->ttl_hi = v->ttl_hi;
	}
	c->fields = v->fields;
}

/* The atom of field f, or -1. */
static int atom_index(const struct fp_state *st, int f)
{
	int k;

	for (k = 0; k < st->na; k++)
		if (st->atoms[k].field == f)
			return k;
	return -1;
}

/* Does every atom hold about the share of the attack sample it held before? */
static int looks_like_before(const struct fp_state *st)
{
	int k;

	/* No heavy value at all is no likeness either. */
	if (!st->na)
		return 0;
	for (k = 0; k < st->na; k++) {
		double a = (double)st->atoms[k].count / st->n, b, sd;

		b = (double)count_match(&st->atoms[k].a, st->B, st->m) / st->m;
		sd = sqrt(b * (1 - b) * (1.0 / st->n + 1.0 / st->m));
		if (fabs(a - b) > WR_FP_SAME_Z * sd)
			return 0;
	}
	return 1;
}

/*
 * Does combination s hold the attack (as judge estimates it)? A fallback
 * names only such fields: its limit must hold the whole attack.
 */
static int covers(const struct fp_state *st, __u32 s)
{
	struct verdict v;

	judge(st, s, &v);
	return v.cover >= st->o->cover;
}

/* Step 5, when nothing qualified: the least harmful fallback, and why. */
static void fallback(const struct fp_state *st, const struct wr_ss *srcs, struct wr_fp_choice *c)
{
	int kp = st->proto_atom, kd = atom_index(st, F_DPORT), kf = atom_index(st, F_FLAGS);
	int kn = atom_index(st, F_DST), kn2 = atom_index(st, F_DST_NET);
	__u32 top = 0, s = 0;
	unsigned int i;

	c->fields = 0;
	if (kp < 0 || !covers(st, s | 1u << kp))
		goto keyed;
	s |= 1u << kp;
	c->fields |= WR_FP_M_PROTO;
	c->proto = st->atoms[kp].a.proto;
	if (kd >= 0 && covers(st, s | 1u << kd)) {
		s |= 1u << kd;
		c->fields |= WR_FP_M_DPORT;
		c->dport = st->atoms[kd].a.dport;
	}
	if (c->proto == WR_IPPROTO_TCP) {
		/* SYNs (SYN without ACK): cookies answer them without state. */
		if (kf >= 0 && covers(st, s | 1u << kf) &&
		    (st->atoms[kf].a.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK)) == WEIR_TCP_SYN) {
			c->action = WR_FP_COOKIE;
			c->fields |= WR_FP_M_FLAGS;
			c->tcp_flags = WEIR_TCP_SYN;
			c->tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
		} else {
			c->action = WR_FP_TCP_STATE;
		}
		return;
	}
keyed:
	/*
	 * Few sources sending most of it (the WR_SS_K heaviest surely at
	 * least half: counts less their possible overestimate): real ones,
	 * limited each. Else spoofed: limited per target.
	 */
	for (i = 0; i < srcs->used; i++)
		top += srcs->it[i].count - srcs->it[i].err;
	if (top * 2 >= st->n) {
		c->action = WR_FP_PER_SRC;
		return;
	}
	c->action = WR_FP_PER_DST;
	if (kn < 0 || !(c->fields & WR_FP_M_PROTO) || !covers(st, s | 1u << kn))
		kn = kn2;
	if (kn >= 0 && (c->fields & WR_FP_M_PROTO) && covers(st, s | 1u << kn)) {
		c->fields |= WR_FP_M_DST;
		c->family = st->atoms[kn].a.family;
		memcpy(c->dst, st->atoms[kn].a.dst, 16);
		c->dst_plen = st->atoms[kn].a.dst_plen;
	}
}

/* Why no fingerprint qualified, from the best the search saw. */
static void set_reason(const struct fp_state *st, double best_cover, __u32 best_false,
		       struct wr_fp_choice *c)
{
	if (looks_like_before(st)) {
		snprintf(c->reason, sizeof(c->reason), "the attack sample looks like the traffic "
			 "before it: no value of any field is commoner than it was");
		return;
	}
	if (st->proto_atom < 0) {
		snprintf(c->reason, sizeof(c->reason),
			 "no protocol carries half the attack sample");
		return;
	}
	if (best_false != ~0u)
		snprintf(c->reason, sizeof(c->reason), "every fingerprint that covers %.1f%% of "
			 "the attack matches %.2f%% or more of the traffic before it",
			 100 * st->o->cover, 100.0 * best_false / st->m);
	else
		snprintf(c->reason, sizeof(c->reason), "no fingerprint that spares the traffic "
			 "before it covers %.1f%% of the attack (at best %.1f%%)",
			 100 * st->o->cover, 100 * best_cover);
}

static void free_state(struct fp_state *st)
{
	free(st->bmask);
	free(st->h);
}

/* Enumerate the combinations: a mixed-radix counter over the groups' atoms. */
static void search(const struct fp_state *st, struct wr_fp_choice *out, double *best_cover,
		   __u32 *best_false)
{
	int per[NR_GROUPS][WR_FP_MAX_ATOMS], cnt[NR_GROUPS] = { 0 }, digit[NR_GROUPS] = { 0 };
	struct verdict v, best = { 0 };
	__u32 best_s = 0;
	int g, k, found = 0;

	for (k = 0; k < st->na; k++)
		if (k != st->proto_atom)
			per[st->atoms[k].group][cnt[st->atoms[k].group]++] = k;
	*best_cover = 0;
	*best_false = ~0u;
	for (;;) {
		__u32 s = 1u << st->proto_atom;

		for (g = 0; g < NR_GROUPS; g++)
			if (digit[g])
				s |= 1u << per[g][digit[g] - 1];
		judge(st, s, &v);
		if (v.mb <= st->o->false_max * st->m && v.cover > *best_cover)
			*best_cover = v.cover;
		if (v.cover >= st->o->cover) {
			refine(st, s, &v);
			if (v.mb < *best_false)
				*best_false = v.mb;
			if (v.mb <= st->o->false_max * st->m && (!found || better(&v, &best))) {
				best = v;
				best_s = s;
				found = 1;
			}
		}
		/* The next combination; done when every digit has wrapped. */
		for (g = 0; g < NR_GROUPS; g++) {
			if (++digit[g] <= cnt[g])
				break;
			digit[g] = 0;
		}
		if (g == NR_GROUPS)
			break;
	}
	if (!found)
		return;
	out->action = WR_FP_DROP;
	fill(st, best_s, &best, out);
	out->cover = best.cover;
	out->normal_share = best.normal;
}

int wr_fp_choose(const struct wr_fp_pkt *attack, size_t n, const struct wr_fp_pkt *before,
		 size_t m, const struct wr_fp_opts *opts, struct wr_fp_choice *out)
{
	struct fp_state st = { .A = attack, .B = before, .n = n, .m = m };
	struct wr_fp_opts def;
	struct wr_fp_choice c;
	double best_cover = 0;
	__u32 best_false = ~0u;
	struct wr_ss srcs;
	int err;

	if (!opts) {
		wr_fp_opts_init(&def);
		opts = &def;
	}
	if (!attack || !before || !out || !n || !m)
		return -EINVAL;
	if (n > WR_FP_SAMPLE_MAX || m > WR_FP_SAMPLE_MAX)
		return -E2BIG;
	if (!(opts->cover > 0 && opts->cover <= 1) ||
	    !(opts->false_max >= 0 && opts->false_max < 1) || !opts->limit_pps)
		return -EINVAL;
	st.o = opts;
	err = find_atoms(&st, &srcs);
	if (err)
		return err;
	memset(&c, 0, sizeof(c));
	c.action = -1;
	if (st.proto_atom >= 0) {
		trim_atoms(&st);
		err = build_hist(&st);
		if (err)
			goto out;
		search(&st, &c, &best_cover, &best_false);
	}
	if (c.action != WR_FP_DROP) {
		fallback(&st, &srcs, &c);
		set_reason(&st, best_cover, best_false, &c);
		c.normal_share = -1;
	}
	c.limit_pps = opts->limit_pps;
	c.n = n;
	c.m = m;
	c.matched = count_match(&c, attack, n);
	c.false_matched = count_match(&c, before, m);
	c.false_ratio = (double)c.false_matched / m;
	if (c.action != WR_FP_DROP)
		c.cover = (double)c.matched / n;
	*out = c;
out:
	free_state(&st);
	return err;
}
