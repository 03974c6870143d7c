// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests of the pure headers the data path is built from: GCRA
 * math (weir_limiter.h), the packet parser (weir_parse.h), rule matching
 * and bucket keys. Time is an argument, so every case is deterministic and
 * most are exhaustive over the interesting inputs.
 *
 * Frames are parsed from exact-size heap copies: a read past the end is a
 * heap overflow that ASan or valgrind reports (build with
 * EXTRA_CFLAGS=-fsanitize=address to check).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "weir_reflect.h"
#include "check.h"
#include "packet.h"

/* One second and one millisecond, ns. */
#define SEC	1000000000ULL
#define MSEC	1000000ULL
/* An arbitrary "now" well away from 0. */
#define T0	(1000 * SEC)

/* ------------------------------------------------------------------------ */
/* GCRA                                                                     */
/* ------------------------------------------------------------------------ */

/* One bucket driven through the pure functions, as the data path does. */
struct bucket {
	struct weir_limit l;
	__u64 tat;
};

static void limit_init(struct weir_limit *l, __u64 rate, __u64 burst, int cost)
{
	memset(l, 0, sizeof(*l));
	l->rate = rate;
	l->burst = burst;
	l->cost = cost;
	l->interval_fp = wr_gcra_interval(rate);
	l->tolerance = wr_gcra_tolerance(l->interval_fp, burst, cost);
}

static void bucket_init(struct bucket *b, __u64 rate, __u64 burst, int cost)
{
	limit_init(&b->l, rate, burst, cost);
	b->tat = 0;
}

/* Offer one packet of this cost at now: 1 if admitted (the TAT moves). */
static int offer(struct bucket *b, __u64 now, __u32 cost)
{
	__u64 next, inc = wr_gcra_inc(b->l.interval_fp, cost);

	if (!wr_gcra_admit(b->tat, now, inc, b->l.tolerance, &next))
		return 0;
	b->tat = next;
	return 1;
}

/* Packets admitted at one instant until the first refusal, at most max. */
static __u64 drain(struct bucket *b, __u64 now, __u32 cost, __u64 max)
{
	__u64 n = 0;

	while (n < max && offer(b, now, cost))
		n++;
	return n;
}

/* ns one packet moves the TAT under a packets/s limit. */
static __u64 unit_of(const struct weir_limit *l)
{
	return wr_gcra_inc(l->interval_fp, 1);
}

/* A fresh bucket admits exactly burst packets at one instant, then one per interval. */
TEST_CASE(gcra_fresh_burst_then_one_per_interval)
{
	static const __u64 rates[] = { 1, 3, 7, 10, 1000, 333333, 1000000, 7000000, 1000000000 };
	static const __u64 bursts[] = { 1, 2, 3, 5, 10, 100, 1000, 65536 };
	static const __u64 nows[] = { 0, 1, T0, (1ULL << 63) - 1, 1ULL << 63,
				      (1ULL << 63) + 1000000 * SEC };
	size_t i, j, k;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		for (j = 0; j < sizeof(bursts) / sizeof(bursts[0]); j++)
			for (k = 0; k < sizeof(nows) / sizeof(nows[0]); k++) {
				struct bucket b;
				__u64 now = nows[k], unit, n;

				bucket_init(&b, rates[i], bursts[j], WEIR_COST_PKT);
				unit = unit_of(&b.l);
				CHECK(b.l.tolerance != 0, "rate %llu burst %llu: tolerance 0",
				      (unsigned long long)rates[i], (unsigned long long)bursts[j]);
				n = drain(&b, now, 1, bursts[j] + 10);
				if (n != bursts[j]) {
					CHECK_FAIL("rate %llu burst %llu now %llu: %llu admitted",
						   (unsigned long long)rates[i],
						   (unsigned long long)bursts[j],
						   (unsigned long long)now, (unsigned long long)n);
					continue;
				}
				CHECK_EQ(b.tat, now + bursts[j] * unit);
				/* One ns short of an interval: still empty. */
				if (unit > 1)
					CHECK_EQ(drain(&b, now + unit - 1, 1, 10), 0);
				/* A whole interval: exactly one, three times over. */
				CHECK_EQ(drain(&b, now + unit, 1, 10), 1);
				CHECK_EQ(drain(&b, now + 2 * unit, 1, 10), 1);
				CHECK_EQ(drain(&b, now + 3 * unit, 1, 10), 1);
				CHECK_EQ(b.tat, now + (bursts[j] + 3) * unit);
			}
}

/*
 * A sender offering about 4x the rate for a long run gets burst + rate*t,
 * within 0.1%.
 */
TEST_CASE(gcra_steady_rate_within_0_1pct)
{
	static const __u64 rates[] = { 1, 3, 7, 10, 100, 1000, 12345, 1000000 };
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct bucket b;
		__u64 burst = 10, now = T0, step, n = 0, it;
		double want, got;

		bucket_init(&b, rates[i], burst, WEIR_COST_PKT);
		step = unit_of(&b.l) / 4;
		if (!step)
			step = 1;
		for (it = 0; it < 400000; it++) {
			n += offer(&b, now, 1);
			now += step;
		}
		/* Time of the last offer is now - step. */
		want = (double)burst + (double)rates[i] * (double)(now - step - T0) / 1e9;
		got = (double)n;
		CHECK_RANGE(got, want * 0.999, want * 1.001);
	}
}

/*
 * After draining, burst*interval of idle time fills the bucket again: one ns
 * less is one packet short, and any longer idle gives no more than burst.
 */
TEST_CASE(gcra_idle_refill_exact)
{
	static const struct {
		__u64 rate, burst;
	} c[] = { { 10, 5 }, { 3, 7 }, { 1, 1 }, { 1000000, 64 }, { 7000000, 3 } };
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct bucket b;
		__u64 unit, full;

		bucket_init(&b, c[i].rate, c[i].burst, WEIR_COST_PKT);
		unit = unit_of(&b.l);
		full = c[i].burst * unit;
		CHECK_EQ(drain(&b, T0, 1, 1000), c[i].burst);
		/* one ns short of a full refill */
		CHECK_EQ(drain(&b, T0 + full - 1, 1, 1000), c[i].burst - 1);
		/* now drained at T0 + full - 1; a full idle period later: burst */
		CHECK_EQ(drain(&b, T0 + 2 * full - 1, 1, 1000), c[i].burst);
		/* a very long idle (a day, a year): still only burst */
		CHECK_EQ(drain(&b, T0 + 86400 * SEC, 1, 1000), c[i].burst);
		CHECK_EQ(drain(&b, T0 + 86400 * SEC * 365, 1, 1000), c[i].burst);
	}
}

/*
 * A bytes/s limit with mixed packet sizes: at every moment the admitted bytes
 * stay within burst + rate*t, and right after any refusal within one maximum
 * packet of it.
 */
TEST_CASE(gcra_byte_cost_mixed_sizes)
{
	static const __u32 sizes[] = { 64, 1500, 576, 40, 1280, 1500, 90, 1024 };
	static const __u64 rates[] = { 125000, 3000, 1000000, 7777777, 125000000, 1000000000 };
	const __u32 maxpkt = 1500;
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct bucket b;
		__u64 burst = 4000, now = T0, bytes = 0, it, step, pkts = 0;
		double ns_per_byte = 1e9 / (double)rates[i];

		bucket_init(&b, rates[i], burst, WEIR_COST_BYTE);
		/* offered: about one 100-byte worth of time per packet of ~750 bytes */
		step = (__u64)(100 * ns_per_byte);
		if (!step)
			step = 1;
		for (it = 0; it < 200000; it++) {
			__u32 sz = sizes[it % (sizeof(sizes) / sizeof(sizes[0]))];
			double cap = (double)burst + (double)rates[i] * (double)(now - T0) / 1e9;
			/* each admitted packet's TAT step is rounded by at most 0.5 ns */
			double slack = 1 + (double)pkts * 0.5 / ns_per_byte;

			if (offer(&b, now, sz)) {
				bytes += sz;
				pkts++;
				if ((double)bytes > cap + slack) {
					CHECK_FAIL("rate %llu: %llu bytes by t=%llu, cap %.1f",
						   (unsigned long long)rates[i],
						   (unsigned long long)bytes,
						   (unsigned long long)(now - T0), cap);
					break;
				}
			} else if ((double)bytes + maxpkt < cap - slack) {
				CHECK_FAIL("rate %llu: %u refused, %llu admitted, cap %.1f",
					   (unsigned long long)rates[i], sz,
					   (unsigned long long)bytes, cap);
				break;
			}
			now += step;
		}
	}
}

/* Byte rates swept from 1 B/s to 1 GB/s, about 2.5% apart. */
static __u64 next_rate(__u64 r)
{
	return r + r / 40 + 1;
}

/* A packet costing more than the burst is never admitted, even by a full bucket. */
TEST_CASE(gcra_cost_over_burst_never_admitted)
{
	static const __u64 bursts[] = { 1, 40, 64, 1499, 1500, 9000, 65535 };
	__u64 rate;
	size_t j;

	for (rate = 1; rate <= 1000000000; rate = next_rate(rate))
		for (j = 0; j < sizeof(bursts) / sizeof(bursts[0]); j++) {
			struct bucket b;
			__u64 costs[4] = { bursts[j] + 1, bursts[j] + 2, 2 * bursts[j],
					   WR_MAX_COST };
			int k;

			bucket_init(&b, rate, bursts[j], WEIR_COST_BYTE);
			if (!b.l.tolerance)
				continue;
			for (k = 0; k < 4; k++) {
				if (costs[k] <= bursts[j])
					continue;
				if (offer(&b, T0, (__u32)costs[k]) || offer(&b, 1ULL << 62,
									 (__u32)costs[k])) {
					CHECK_FAIL("rate %llu B/s burst %llu: %llu bytes admitted",
						   (unsigned long long)rate,
						   (unsigned long long)bursts[j],
						   (unsigned long long)costs[k]);
					return;
				}
			}
		}
	/* Packet costs: a zero burst has no tolerance and admits nothing. */
	{
		struct bucket b;

		bucket_init(&b, 10, 0, WEIR_COST_PKT);
		CHECK_EQ(b.l.tolerance, 0);
		CHECK_EQ(drain(&b, T0, 1, 10), 0);
	}
}

/*
 * The converse: a full bucket admits a packet costing exactly the burst.
 * (Burst = one MTU-sized packet is a natural bytes/s configuration.)
 */
TEST_CASE(gcra_bytes_full_bucket_admits_burst_sized_packet)
{
	static const __u64 bursts[] = { 1500, 2, 64, 9000 };
	__u64 rate, tried = 0, refused = 0;
	size_t j;

	for (j = 0; j < sizeof(bursts) / sizeof(bursts[0]); j++)
		for (rate = 1; rate <= 1000000000; rate = next_rate(rate)) {
			struct bucket b;

			bucket_init(&b, rate, bursts[j], WEIR_COST_BYTE);
			if (!b.l.tolerance)
				continue;
			tried++;
			if (offer(&b, T0, (__u32)bursts[j]))
				continue;
			if (!refused++)
				CHECK_FAIL("rate %llu B/s burst %llu: a %llu-byte packet refused "
					   "by a full bucket (tolerance %llu < inc %llu)",
					   (unsigned long long)rate, (unsigned long long)bursts[j],
					   (unsigned long long)bursts[j],
					   (unsigned long long)b.l.tolerance,
					   (unsigned long long)wr_gcra_inc(b.l.interval_fp,
									   (__u32)bursts[j]));
		}
	if (refused)
		printf("# %llu of %llu (rate, burst) pairs refuse a burst-sized packet\n",
			(unsigned long long)refused, (unsigned long long)tried);
}

/* wr_gcra_interval, wr_gcra_tolerance and wr_gcra_inc at their edges. */
TEST_CASE(gcra_interval_tolerance_edges)
{
	const __u64 one_s_fp = WR_NSEC_PER_SEC << WEIR_FP_SHIFT;
	__u64 ifp, maxb;

	CHECK_EQ(wr_gcra_interval(0), 0);
	CHECK_EQ(wr_gcra_interval(1), one_s_fp);
	CHECK_EQ(wr_gcra_interval(3), one_s_fp / 3);
	CHECK_EQ(wr_gcra_interval(one_s_fp), 1);
	CHECK_EQ(wr_gcra_interval(one_s_fp + 1), 0);
	CHECK_EQ(wr_gcra_interval(UINT64_MAX), 0);

	/* rounding to the nearest ns, half up */
	CHECK_EQ(wr_gcra_inc(3ULL << (WEIR_FP_SHIFT - 1), 1), 2);	/* 1.5 */
	CHECK_EQ(wr_gcra_inc(3ULL << (WEIR_FP_SHIFT - 1), 2), 3);	/* 3.0 */
	CHECK_EQ(wr_gcra_inc((1ULL << (WEIR_FP_SHIFT - 1)) - 1, 1), 0);
	CHECK_EQ(wr_gcra_inc(1ULL << (WEIR_FP_SHIFT - 1), 1), 1);
	/* the largest product: no overflow */
	CHECK_EQ(wr_gcra_inc(one_s_fp, WR_MAX_COST), WR_MAX_COST * WR_NSEC_PER_SEC);
	CHECK_EQ(wr_gcra_inc(one_s_fp, 0), 0);

	/* tolerance: zero inputs */
	CHECK_EQ(wr_gcra_tolerance(0, 10, WEIR_COST_PKT), 0);
	CHECK_EQ(wr_gcra_tolerance(0, 10, WEIR_COST_BYTE), 0);
	CHECK_EQ(wr_gcra_tolerance(one_s_fp, 0, WEIR_COST_PKT), 0);
	CHECK_EQ(wr_gcra_tolerance(one_s_fp, 0, WEIR_COST_BYTE), 0);

	/* packets: burst whole units, up to 2^62 ns, 0 beyond */
	ifp = wr_gcra_interval(1);
	maxb = (1ULL << 62) / WR_NSEC_PER_SEC;
	CHECK_EQ(wr_gcra_tolerance(ifp, maxb, WEIR_COST_PKT), maxb * WR_NSEC_PER_SEC);
	CHECK(wr_gcra_tolerance(ifp, maxb, WEIR_COST_PKT) <= (1ULL << 62), "tolerance > 2^62");
	CHECK_EQ(wr_gcra_tolerance(ifp, maxb + 1, WEIR_COST_PKT), 0);
	CHECK_EQ(wr_gcra_tolerance(ifp, UINT64_MAX, WEIR_COST_PKT), 0);
	/* bytes: burst * interval_fp up to 2^62, 0 beyond */
	maxb = (1ULL << 62) / ifp;
	CHECK_EQ(wr_gcra_tolerance(ifp, maxb, WEIR_COST_BYTE), maxb * WR_NSEC_PER_SEC);
	CHECK_EQ(wr_gcra_tolerance(ifp, maxb + 1, WEIR_COST_BYTE), 0);
	CHECK_EQ(wr_gcra_tolerance(ifp, UINT64_MAX, WEIR_COST_BYTE), 0);

	/* packets at 1e9 pps: 1 ns per packet, still exact */
	ifp = wr_gcra_interval(1000000000);
	CHECK_EQ(wr_gcra_inc(ifp, 1), 1);
	CHECK_EQ(wr_gcra_tolerance(ifp, 5, WEIR_COST_PKT), 5);
	/* packets so fast the per-packet step rounds to 0 ns: unrepresentable, 0 */
	ifp = wr_gcra_interval(3000000000ULL);
	CHECK(ifp != 0, "interval of 3e9 pps is 0");
	CHECK_EQ(wr_gcra_inc(ifp, 1), 0);
	CHECK_EQ(wr_gcra_tolerance(ifp, 5, WEIR_COST_PKT), 0);
}

/*
 * The per-packet TAT step is the interval rounded to the nearest ns: the
 * admitted packet rate is off by at most 0.5 ns per interval, for every rate.
 */
TEST_CASE(gcra_pkt_step_rounding_bound)
{
	__u64 rate;

	for (rate = 1; rate <= 1000000000; rate = next_rate(rate)) {
		__u64 ifp = wr_gcra_interval(rate), unit = wr_gcra_inc(ifp, 1);
		double exact = 1e9 / (double)rate;

		if (unit < exact - 0.5 - 1e-6 || unit > exact + 0.5 + 1e-6) {
			CHECK_FAIL("rate %llu: step %llu ns, exact %.4f",
				   (unsigned long long)rate, (unsigned long long)unit, exact);
			return;
		}
	}
}

/* 64-bit edges: now near 2^63 and near the top, TATs far away. */
TEST_CASE(gcra_64bit_edges)
{
	struct bucket b;
	__u64 unit, tol, next = 12345, now;

	bucket_init(&b, 10, 5, WEIR_COST_PKT);
	unit = unit_of(&b.l);
	tol = b.l.tolerance;
	CHECK_EQ(tol, 5 * unit);

	/* across 2^63: signedness never enters */
	now = (1ULL << 63) - 2 * unit;
	CHECK_EQ(drain(&b, now, 1, 100), 5);
	CHECK_EQ(drain(&b, now + unit, 1, 100), 1);
	CHECK_EQ(drain(&b, now + 5 * unit, 1, 100), 4);
	CHECK_EQ(drain(&b, (1ULL << 63) + 3600 * SEC, 1, 100), 5);

	/* the highest now where now + tolerance still fits: burst, TAT ends at the top */
	b.tat = 0;
	now = UINT64_MAX - tol;
	CHECK_EQ(drain(&b, now, 1, 100), 5);
	CHECK_EQ(b.tat, UINT64_MAX);
	CHECK_EQ(drain(&b, now, 1, 100), 0);
	/* (beyond that, now + tolerance wraps: ktime never gets there, nothing is promised) */

	/* TAT far in the past: a full bucket */
	b.tat = 1;
	CHECK_EQ(drain(&b, 1ULL << 63, 1, 100), 5);
	b.tat = 1;
	CHECK_EQ(drain(&b, UINT64_MAX - tol, 1, 100), 5);

	/* TAT far in the future: refused, and *next untouched */
	CHECK_EQ(wr_gcra_admit(UINT64_MAX, T0, unit, tol, &next), 0);
	CHECK_EQ(next, 12345);
	CHECK_EQ(wr_gcra_admit(T0 + tol + 1, T0, unit, tol, &next), 0);
	CHECK_EQ(wr_gcra_admit(T0 + (1ULL << 62), T0, unit, tol, &next), 0);
	CHECK_EQ(next, 12345);
	/* exactly at the edge: room for one more */
	CHECK_EQ(wr_gcra_admit(T0 + tol - unit, T0, unit, tol, &next), 1);
	CHECK_EQ(next, T0 + tol);
	CHECK_EQ(wr_gcra_admit(T0 + tol - unit + 1, T0, unit, tol, &next), 0);

	/* inc larger than the tolerance: refused at any TAT */
	next = 7;
	CHECK_EQ(wr_gcra_admit(0, T0, tol + 1, tol, &next), 0);
	CHECK_EQ(wr_gcra_admit(0, 0, UINT64_MAX, tol, &next), 0);
	CHECK_EQ(next, 7);
	/* zero cost is always admitted within tolerance and moves nothing */
	CHECK_EQ(wr_gcra_admit(T0 + tol, T0, 0, tol, &next), 1);
	CHECK_EQ(next, T0 + tol);

	/* rate 1/s, burst 1: exactly one per second over 1000 s */
	bucket_init(&b, 1, 1, WEIR_COST_PKT);
	{
		__u64 n = 0, t;

		for (t = 0; t < 1000 * SEC; t += SEC / 4)
			n += offer(&b, T0 + t, 1);
		CHECK_EQ(n, 1000);
	}

	/* 1e9 pps: 1 ns per packet */
	bucket_init(&b, 1000000000, 3, WEIR_COST_PKT);
	CHECK_EQ(drain(&b, T0, 1, 100), 3);
	CHECK_EQ(drain(&b, T0 + 1, 1, 100), 1);
	CHECK_EQ(drain(&b, T0 + 2, 1, 100), 1);
	CHECK_EQ(drain(&b, T0 + 100, 1, 100), 3);
}

/*
 * Rates whose interval is not a whole number of ns stay accurate: over 1e6
 * saturating packets the admitted count is within 0.1% of rate*t.
 */
TEST_CASE(gcra_fractional_interval_accuracy)
{
	static const __u64 rates[] = { 3, 7, 7000000, 333333 };
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct bucket b;
		__u64 burst = 4, now = T0, n = 0, step;
		double want;

		bucket_init(&b, rates[i], burst, WEIR_COST_PKT);
		step = unit_of(&b.l) / 2;
		while (n < 1000000) {
			n += offer(&b, now, 1);
			now += step;
		}
		now -= step;
		want = (double)burst + (double)rates[i] * (double)(now - T0) / 1e9;
		CHECK_RANGE((double)n, want * 0.999, want * 1.001);
	}
	/* bytes: 3 B/s and 7e6 B/s with 100-byte packets */
	{
		static const __u64 brates[] = { 3, 7000000 };

		for (i = 0; i < 2; i++) {
			struct bucket b;
			__u64 now = T0, n = 0, step;
			double want;

			bucket_init(&b, brates[i], 1000, WEIR_COST_BYTE);
			step = wr_gcra_inc(b.l.interval_fp, 100) / 2;
			while (n < 1000000) {
				n += offer(&b, now, 100);
				now += step;
			}
			now -= step;
			want = (1000.0 + (double)brates[i] * (double)(now - T0) / 1e9) / 100.0;
			CHECK_RANGE((double)n, want * 0.999, want * 1.001);
		}
	}
}

/*
 * The data path's check-then-charge over several limits, done by hand:
 * check every limit, and only if all admit, charge every one.
 */
static int admit_all(struct bucket **bs, int n, __u64 now, __u32 cost)
{
	__u64 next;
	int i;

	for (i = 0; i < n; i++)
		if (!wr_gcra_admit(bs[i]->tat, now, wr_gcra_inc(bs[i]->l.interval_fp, cost),
				   bs[i]->l.tolerance, &next))
			return 0;
	for (i = 0; i < n; i++)
		if (!offer(bs[i], now, cost))
			return -1;	/* cannot happen single-threaded */
	return 1;
}

/* The naive alternative: charge as you go, stop at the first refusal. */
static int admit_naive(struct bucket **bs, int n, __u64 now, __u32 cost)
{
	int i;

	for (i = 0; i < n; i++)
		if (!offer(bs[i], now, cost))
			return 0;
	return 1;
}

TEST_CASE(gcra_check_then_charge_by_hand)
{
	struct bucket src[200], all;
	struct bucket *bs[2];
	__u64 passed = 0, all_tat;
	int i, r;

	for (i = 0; i < 200; i++)
		bucket_init(&src[i], 1, 3, WEIR_COST_PKT);
	bucket_init(&all, 1, 100, WEIR_COST_PKT);
	bs[1] = &all;

	/* source 0 sends 10 at once: 3 pass, and the rule-wide bucket pays for 3 only */
	bs[0] = &src[0];
	for (i = 0; i < 10; i++) {
		r = admit_all(bs, 2, T0, 1);
		CHECK(r >= 0, "charge refused after check admitted");
		passed += r;
	}
	CHECK_EQ(passed, 3);
	CHECK_EQ(all.tat, T0 + 3 * unit_of(&all.l));
	CHECK_EQ(src[0].tat, T0 + 3 * unit_of(&src[0].l));

	/* 97 other sources fit in the rest of the rule-wide burst, the 98th not */
	for (i = 1; i <= 98; i++) {
		bs[0] = &src[i];
		r = admit_all(bs, 2, T0, 1);
		CHECK_EQ(r, i <= 97);
	}
	/* the refused source was charged nothing */
	CHECK_EQ(src[98].tat, 0);
	all_tat = all.tat;
	CHECK_EQ(all_tat, T0 + 100 * unit_of(&all.l));
	/* refusals by the rule-wide limit charge no per-source bucket either */
	for (i = 99; i < 200; i++) {
		bs[0] = &src[i];
		CHECK_EQ(admit_all(bs, 2, T0, 1), 0);
		CHECK_EQ(src[i].tat, 0);
	}
	CHECK_EQ(all.tat, all_tat);

	/* Charging as you go would have starved the others: 7 less for them. */
	bucket_init(&all, 1, 100, WEIR_COST_PKT);
	for (i = 0; i < 200; i++)
		bucket_init(&src[i], 1, 3, WEIR_COST_PKT);
	bs[0] = &all;	/* rule-wide first, as the data path orders them */
	bs[1] = &src[0];
	for (i = 0; i < 10; i++)
		admit_naive(bs, 2, T0, 1);
	passed = 0;
	for (i = 1; i < 200; i++) {
		bs[1] = &src[i];
		passed += admit_naive(bs, 2, T0, 1);
	}
	CHECK_EQ(passed, 90);
}

/* Tokens left and ns to the next token, as `top` shows them. */
TEST_CASE(gcra_remaining)
{
	struct bucket b;
	__u64 unit, refill = 99;

	bucket_init(&b, 10, 5, WEIR_COST_PKT);
	unit = unit_of(&b.l);
	CHECK_EQ(wr_gcra_remaining(&b.l, 0, T0, &refill), 5);
	CHECK_EQ(refill, 0);
	CHECK_EQ(drain(&b, T0, 1, 2), 2);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0, &refill), 3);
	CHECK_EQ(refill, unit);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0 + unit / 4, &refill), 3);
	CHECK_EQ(refill, unit - unit / 4);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0 + unit, &refill), 4);
	CHECK_EQ(refill, unit);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0 + 2 * unit, &refill), 5);
	CHECK_EQ(refill, 0);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0 + 3600 * SEC, &refill), 5);
	CHECK_EQ(drain(&b, T0, 1, 100), 3);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0, &refill), 0);
	/* beyond the horizon (cannot happen through admit): clamped, never wraps */
	CHECK_EQ(wr_gcra_remaining(&b.l, UINT64_MAX, T0, &refill), 0);

	/* bytes at 1000 B/s: 1 ms per byte */
	bucket_init(&b, 1000, 3000, WEIR_COST_BYTE);
	CHECK_EQ(wr_gcra_remaining(&b.l, 0, T0, &refill), 3000);
	CHECK_EQ(refill, 0);
	CHECK(offer(&b, T0, 1000), "1000 bytes refused");
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0, &refill), 2000);
	CHECK_EQ(refill, MSEC);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0 + 500 * MSEC, &refill), 2500);
	CHECK_EQ(wr_gcra_remaining(&b.l, b.tat, T0 + SEC, &refill), 3000);
	CHECK_EQ(refill, 0);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* 2001:db8:1:2:3:4:5:6, the IPv6 source of most frames here. */
static const __u8 SRC6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6 };

/* Append one IPv6 extension header of type, total length len, to a payload. */
static void ext6(struct frame *pl, __u8 type, __u8 next, size_t len, __u16 fragoff)
{
	switch (type) {
	case WR_IPPROTO_FRAGMENT:
		put8(pl, next);
		put8(pl, 0);
		put16(pl, fragoff);
		put32(pl, 0xabcd);
		break;
	case WR_IPPROTO_AH:
		put8(pl, next);
		put8(pl, len / 4 - 2);
		zeros(pl, len - 2);
		break;
	default:
		put8(pl, next);
		put8(pl, len / 8 - 1);
		zeros(pl, len - 2);
		break;
	}
}

/* A chain of extension headers of these types, then an L4 of proto upper. */
static void chain6(struct frame *pl, const __u8 *types, int n, __u8 upper, __u16 fragoff,
		   const struct frame *l4)
{
	int i;

	pl->n = 0;
	for (i = 0; i < n; i++) {
		__u8 next = i + 1 < n ? types[i + 1] : upper;
		size_t len = types[i] == WR_IPPROTO_AH ? 16 : types[i] == WR_IPPROTO_FRAGMENT ? 8 :
			     (i & 1) ? 16 : 8;

		ext6(pl, types[i], next, len, fragoff);
	}
	putn(pl, l4->b, l4->n);
}

/* What the last parse read beyond struct wr_pkt (dst, dscp, payload offset). */
static struct wr_pkt_x px;

/*
 * Parse the first n bytes of f from an exact-size heap copy, frame_len as
 * given. p is zeroed first, as the data path's is; px is not (nor is the
 * data path's scratch).
 */
static int parse_n(const struct frame *f, size_t n, __u32 frame_len, struct wr_pkt *p)
{
	__u8 *buf = malloc(n ? n : 1);
	int r;

	if (!buf)
		abort();
	memcpy(buf, f->b, n);
	memset(p, 0, sizeof(*p));
	r = wr_parse(buf, buf + n, frame_len, p, &px);
	free(buf);
	return r;
}

static int parse(const struct frame *f, struct wr_pkt *p)
{
	return parse_n(f, f->n, f->n, p);
}

static void w6(__u32 *w, const __u8 *a)
{
	memcpy(w, a, 16);
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

TEST_CASE(parse_ipv4_protocols)
{
	struct frame f, l;
	struct wr_pkt p;
	__u32 src = IP4(198, 18, 1, 2);

	l4_tcp(&l, 443, WEIR_TCP_SYN, 5);
	frame4(&f, src, WR_IPPROTO_TCP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.family, 4);
	CHECK_EQ(p.proto, WR_IPPROTO_TCP);
	CHECK_EQ(p.saddr[0], htonl(src));
	CHECK_EQ(p.saddr[1] | p.saddr[2] | p.saddr[3], 0);
	CHECK_EQ(p.len, 40);
	CHECK_EQ(p.dport, 443);
	CHECK_EQ(p.tcp_flags, WEIR_TCP_SYN);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS);

	l4_udp(&l, 53, 30);
	frame4(&f, src, WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_UDP);
	CHECK_EQ(p.len, 58);
	CHECK_EQ(p.dport, 53);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS);

	l4_icmp(&l, 8, 56);
	frame4(&f, src, WR_IPPROTO_ICMP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_ICMP);
	CHECK_EQ(p.icmp_type, 8);
	CHECK_EQ(p.len, 84);
	CHECK_EQ(p.flags, WR_PKT_L4);

	/* GRE: proto only */
	l4_icmp(&l, 0, 0);
	frame4(&f, src, 47, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, 47);
	CHECK_EQ(p.flags, 0);

	/* options: IHL 15, the TCP header found after them */
	l4_tcp(&l, 8080, WEIR_TCP_ACK, 5);
	eth_ip4(&f, src, WR_IPPROTO_TCP, 15, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.dport, 8080);
	CHECK_EQ(p.tcp_flags, WEIR_TCP_ACK);
	CHECK_EQ(p.len, 80);

	/* Ethernet padding after a short datagram: fine, the cost is the IP length */
	l4_udp(&l, 53, 0);
	frame4(&f, src, WR_IPPROTO_UDP, &l);
	zeros(&f, 60 - f.n);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 28);

	/* DF set is not a fragment */
	l4_udp(&l, 53, 0);
	eth_ip4(&f, src, WR_IPPROTO_UDP, 5, 0x4000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS);
}

TEST_CASE(parse_ipv6_protocols)
{
	struct frame f, l;
	struct wr_pkt p;
	__u32 w[4];

	w6(w, SRC6);
	l4_tcp(&l, 22, WEIR_TCP_SYN | WEIR_TCP_ACK, 8);
	frame6(&f, SRC6, WR_IPPROTO_TCP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.family, 6);
	CHECK_EQ(p.proto, WR_IPPROTO_TCP);
	CHECK(!memcmp(p.saddr, w, 16), "v6 source");
	CHECK_EQ(p.len, 40 + 32);
	CHECK_EQ(p.dport, 22);
	CHECK_EQ(p.tcp_flags, WEIR_TCP_SYN | WEIR_TCP_ACK);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS);

	l4_udp(&l, 5353, 100);
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_UDP);
	CHECK_EQ(p.dport, 5353);
	CHECK_EQ(p.len, 148);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS);

	l4_icmp(&l, 128, 8);
	frame6(&f, SRC6, WR_IPPROTO_ICMPV6, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_ICMPV6);
	CHECK_EQ(p.icmp_type, 128);
	CHECK_EQ(p.flags, WR_PKT_L4);

	/* No next header */
	l4_icmp(&l, 0, 0);
	frame6(&f, SRC6, WR_IPPROTO_NONE, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_NONE);
	CHECK_EQ(p.flags, 0);

	/* wrong version in an IPv6 ethertype */
	l4_udp(&l, 53, 0);
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	f.b[14] = 0x40;
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
}

TEST_CASE(parse_vlan_tags)
{
	static const __u16 ad[] = { WR_ETH_P_8021AD };
	struct frame f, l;
	struct wr_pkt p;
	__u32 src = IP4(198, 18, 9, 9);

	l4_udp(&l, 53, 10);
	eth(&f, WR_ETH_P_IP, 1, TAG_Q);
	ip4(&f, src, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.dport, 53);
	CHECK_EQ(p.saddr[0], htonl(src));
	CHECK_EQ(p.len, 38);
	/* where the IP header starts, for the data path's second look at the rare fields */
	CHECK_EQ(p.l3off, 18);

	eth(&f, WR_ETH_P_IP, 0, NULL);
	ip4(&f, src, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.l3off, 14);

	eth(&f, WR_ETH_P_IP, 1, ad);
	ip4(&f, src, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.dport, 53);

	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, src, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.dport, 53);
	CHECK_EQ(p.len, 38);
	CHECK_EQ(p.l3off, 22);

	/* two 802.1Q tags are as good as QinQ */
	{
		static const __u16 qq[] = { WR_ETH_P_8021Q, WR_ETH_P_8021Q };

		eth(&f, WR_ETH_P_IPV6, 2, qq);
		ip6(&f, SRC6, WR_IPPROTO_UDP, 64, -1, &l);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.family, 6);
		CHECK_EQ(p.dport, 53);
		CHECK_EQ(p.l3off, 22);
	}

	/* a third tag is deeper than weir looks: malformed, not non-IP */
	eth(&f, WR_ETH_P_IP, 3, TAG_3);
	ip4(&f, src, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);

	/* ARP inside a tag is still non-IP */
	eth(&f, 0x0806, 1, TAG_Q);
	zeros(&f, 28);
	CHECK_EQ(parse(&f, &p), WR_PARSE_NON_IP);

	/* tag cut short */
	eth(&f, WR_ETH_P_IP, 1, TAG_Q);
	CHECK_EQ(parse_n(&f, 16, 16, &p), WR_PARSE_MALFORMED);
	CHECK_EQ(parse_n(&f, 17, 17, &p), WR_PARSE_MALFORMED);
	CHECK_EQ(parse_n(&f, 18, 18, &p), WR_PARSE_MALFORMED);	/* tag, no IP */
}

TEST_CASE(parse_non_ip_and_tiny)
{
	struct frame f;
	struct wr_pkt p;
	size_t n;

	eth(&f, 0x0806, 0, NULL);
	zeros(&f, 28);
	CHECK_EQ(parse(&f, &p), WR_PARSE_NON_IP);
	eth(&f, 0x88cc, 0, NULL);	/* LLDP */
	zeros(&f, 40);
	CHECK_EQ(parse(&f, &p), WR_PARSE_NON_IP);
	/* just the Ethernet header of ARP */
	CHECK_EQ(parse_n(&f, 14, 14, &p), WR_PARSE_NON_IP);
	for (n = 0; n < 14; n++)
		CHECK_EQ(parse_n(&f, n, (__u32)n, &p), WR_PARSE_MALFORMED);
	/* readable 14 bytes but frame_len claims fewer */
	CHECK_EQ(parse_n(&f, 14, 13, &p), WR_PARSE_MALFORMED);
}

/* Every truncation of a valid frame is malformed, and nothing reads past the end. */
static void check_truncations(const struct frame *f, const char *what)
{
	struct wr_pkt p;
	size_t n;

	CHECK(parse(f, &p) == WR_PARSE_IP, "%s: the whole frame does not parse", what);
	for (n = 0; n < f->n; n++) {
		int r = parse_n(f, n, (__u32)n, &p);

		if (r != WR_PARSE_MALFORMED) {
			CHECK_FAIL("%s cut at %zu of %zu: result %d", what, n, f->n, r);
			return;
		}
	}
}

TEST_CASE(parse_truncated_tcp4_every_offset)
{
	struct frame f, l;

	l4_tcp(&l, 80, WEIR_TCP_SYN, 6);
	frame4(&f, IP4(198, 18, 0, 7), WR_IPPROTO_TCP, &l);
	check_truncations(&f, "tcp4");
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, IP4(198, 18, 0, 7), WR_IPPROTO_TCP, 7, 0, 0, &l);
	check_truncations(&f, "qinq tcp4 with options");
}

TEST_CASE(parse_truncated_udp6_every_offset)
{
	static const __u8 types[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_FRAGMENT };
	struct frame f, l, pl;

	l4_udp(&l, 53, 12);
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	check_truncations(&f, "udp6");
	chain6(&pl, types, 2, WR_IPPROTO_UDP, 0, &l);
	frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
	check_truncations(&f, "udp6 behind hop-by-hop and fragment");
}

TEST_CASE(parse_ipv4_header_checks)
{
	/* total length fields that do not fit the frame, the header or the TCP in it */
	static const struct {
		__u8 ihl;
		__u16 tot;
	} bad_tot[] = {
		{ 5, 41 }, { 5, 65535 },	/* larger than the frame */
		{ 6, 20 }, { 5, 19 },		/* below ihl*4 */
		{ 5, 39 },			/* short of the TCP header the frame carries */
	};
	struct frame f, l;
	struct wr_pkt p;
	size_t i;
	__u8 ihl;

	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	/* IHL below 5, with a correct-looking rest */
	for (ihl = 0; ihl < 5; ihl++) {
		eth_ip4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, ihl, 0, 40, &l);
		CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	}
	/* version not 4 */
	frame4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, &l);
	f.b[14] = 0x65;
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* IHL beyond the packet: 60-byte header in a 40-byte datagram */
	frame4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, &l);
	f.b[14] = 0x4f;
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* IHL beyond the frame, total length agreeing with it */
	frame4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, &l);
	f.b[14] = 0x4f;
	f.b[16] = 0;
	f.b[17] = 60;
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	for (i = 0; i < sizeof(bad_tot) / sizeof(bad_tot[0]); i++) {
		eth_ip4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, bad_tot[i].ihl, 0, bad_tot[i].tot,
			&l);
		CHECK(parse(&f, &p) == WR_PARSE_MALFORMED, "IHL %u tot_len %u: not malformed",
		      bad_tot[i].ihl, bad_tot[i].tot);
	}
	/* exactly a bare header with no payload, protocol without L4 parsing */
	{
		struct frame none = { .n = 0 };

		frame4(&f, IP4(198, 18, 0, 2), 47, &none);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.len, 20);
		/* ... but TCP with no header at all is malformed */
		frame4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, &none);
		CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	}
}

TEST_CASE(parse_ipv6_payload_len)
{
	/* payload length fields around a 20-byte UDP datagram */
	static const int bad_plen[] = {
		21, 65535,	/* lying upwards */
		0,		/* zero (a jumbogram, impossible here) */
		4,		/* shorter than the UDP header */
		19,		/* shorter than the UDP length field says */
	};
	struct frame f, l;
	struct wr_pkt p;
	size_t i;

	l4_udp(&l, 53, 12);
	for (i = 0; i < sizeof(bad_plen) / sizeof(bad_plen[0]); i++) {
		eth_ip6(&f, SRC6, WR_IPPROTO_UDP, 64, bad_plen[i], &l);
		CHECK(parse(&f, &p) == WR_PARSE_MALFORMED, "payload length %d: not malformed",
		      bad_plen[i]);
	}
	/* exact, and with trailing padding: the cost is 40 + payload length */
	eth_ip6(&f, SRC6, WR_IPPROTO_UDP, 64, 20, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 60);
	zeros(&f, 6);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 60);
}

/*
 * A length field of 0: BIG TCP's GSO super-packets at TC (over 64 KiB, so
 * their real length does not fit) are judged by the frame's length, but
 * only when the caller says the frame is one (WR_PKT_GSO); any other 0 is
 * malformed, except IPv6 with No Next Header, which has no payload at all.
 */
static int parse_gso(const struct frame *f, struct wr_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = WR_PKT_GSO;
	return wr_parse(f->b, f->b + f->n, f->n, p, &px);
}

TEST_CASE(parse_length_zero)
{
	struct frame f, l;
	struct wr_pkt p;

	/* IPv6, payload length 0 over a 20-byte UDP datagram */
	l4_udp(&l, 53, 12);
	eth_ip6(&f, SRC6, WR_IPPROTO_UDP, 64, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	CHECK_EQ(parse_gso(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 60);
	CHECK_EQ(p.proto, WR_IPPROTO_UDP);
	CHECK_EQ(p.dport, 53);
	/* ... a GSO frame of nothing but the IPv6 header is still malformed */
	l.n = 0;
	eth_ip6(&f, SRC6, WR_IPPROTO_UDP, 64, 0, &l);
	CHECK_EQ(parse_gso(&f, &p), WR_PARSE_MALFORMED);
	/* IPv6 with No Next Header and payload length 0: valid, 40 bytes */
	eth_ip6(&f, SRC6, WR_IPPROTO_NONE, 64, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 40);
	CHECK_EQ(p.proto, WR_IPPROTO_NONE);
	/* ... and with trailing padding, still 40 */
	zeros(&f, 6);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 40);

	/* IPv4, total length 0 over a 20-byte UDP datagram */
	l4_udp(&l, 53, 12);
	frame4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_UDP, &l);
	f.b[16] = 0;
	f.b[17] = 0;
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	CHECK_EQ(parse_gso(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 40);
	CHECK_EQ(p.dport, 53);
	/* a GSO frame whose length field is not 0 is judged by it, as any */
	frame4(&f, IP4(198, 18, 0, 2), WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse_gso(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 40);
}

TEST_CASE(parse_ipv6_extension_headers)
{
	static const __u8 single[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_ROUTING, WR_IPPROTO_DSTOPTS,
				       WR_IPPROTO_AH, WR_IPPROTO_FRAGMENT, WR_IPPROTO_MH };
	static const __u8 mixed[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_DSTOPTS, WR_IPPROTO_ROUTING,
				      WR_IPPROTO_FRAGMENT, WR_IPPROTO_AH, WR_IPPROTO_DSTOPTS };
	__u8 many[WR_MAX_EXTHDR + 1];
	struct frame f, l, pl;
	struct wr_pkt p;
	size_t i;

	l4_tcp(&l, 443, WEIR_TCP_SYN, 5);
	for (i = 0; i < sizeof(single); i++) {
		chain6(&pl, &single[i], 1, WR_IPPROTO_TCP, 0, &l);
		frame6(&f, SRC6, single[i], &pl);
		if (parse(&f, &p) != WR_PARSE_IP) {
			CHECK_FAIL("extension header %u alone: not parsed", single[i]);
			continue;
		}
		CHECK_EQ(p.proto, WR_IPPROTO_TCP);
		CHECK_EQ(p.dport, 443);
		CHECK_EQ(p.len, 40 + pl.n);
		CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS |
				  (single[i] == WR_IPPROTO_FRAGMENT ? WR_PKT_FRAG : 0));
	}

	/* a mixed chain of six, the fragment header a first fragment (M set) */
	chain6(&pl, mixed, sizeof(mixed), WR_IPPROTO_TCP, 1, &l);
	frame6(&f, SRC6, mixed[0], &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.dport, 443);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS | WR_PKT_FRAG);

	/* a non-first fragment: protocol known, no L4, no ports */
	l4_udp(&l, 53, 40);
	chain6(&pl, &single[4], 1, WR_IPPROTO_UDP, 185 << 3, &l);
	frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_UDP);
	CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_LATER);
	CHECK_EQ(p.dport, 0);
	/* ... behind a hop-by-hop header too */
	{
		static const __u8 hf[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_FRAGMENT };

		chain6(&pl, hf, 2, WR_IPPROTO_UDP, (8 << 3) | 1, &l);
		frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_LATER);
	}

	/* WR_MAX_EXTHDR headers are walked; one more is malformed */
	l4_udp(&l, 53, 0);
	for (i = 0; i < sizeof(many); i++)
		many[i] = i & 1 ? WR_IPPROTO_DSTOPTS : WR_IPPROTO_ROUTING;
	chain6(&pl, many, WR_MAX_EXTHDR, WR_IPPROTO_UDP, 0, &l);
	frame6(&f, SRC6, many[0], &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.dport, 53);
	chain6(&pl, many, WR_MAX_EXTHDR + 1, WR_IPPROTO_UDP, 0, &l);
	frame6(&f, SRC6, many[0], &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* ... also when the last is a fragment header */
	many[WR_MAX_EXTHDR] = WR_IPPROTO_FRAGMENT;
	chain6(&pl, many, WR_MAX_EXTHDR + 1, WR_IPPROTO_UDP, 0, &l);
	frame6(&f, SRC6, many[0], &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);

	/* an extension header longer than the payload */
	l4_udp(&l, 53, 0);
	chain6(&pl, single, 1, WR_IPPROTO_UDP, 0, &l);
	pl.b[1] = 200;
	frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* AH claiming more than there is */
	chain6(&pl, &single[3], 1, WR_IPPROTO_UDP, 0, &l);
	pl.b[1] = 10;
	frame6(&f, SRC6, WR_IPPROTO_AH, &pl);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* an extension header that is the whole payload: nothing after it */
	{
		struct frame none = { .n = 0 };

		chain6(&pl, single, 1, WR_IPPROTO_UDP, 0, &none);
		frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
		chain6(&pl, single, 1, WR_IPPROTO_NONE, 0, &none);
		frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.proto, WR_IPPROTO_NONE);
	}
}

TEST_CASE(parse_ipv4_fragments)
{
	struct frame f, l;
	struct wr_pkt p;
	__u32 src = IP4(198, 18, 3, 3);

	/* non-first fragment: offset 185*8, a UDP-looking payload that is not a header */
	l4_udp(&l, 53, 100);
	eth_ip4(&f, src, WR_IPPROTO_UDP, 5, 185, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.proto, WR_IPPROTO_UDP);
	CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_LATER);
	CHECK_EQ(p.dport, 0);
	CHECK_EQ(p.len, 128);
	/* middle fragment (MF and an offset) */
	eth_ip4(&f, src, WR_IPPROTO_TCP, 5, 0x2000 | 1, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_LATER);
	/* non-first fragment with only a few payload bytes: no L4 needed */
	{
		struct frame tiny = { .n = 0 };

		put8(&tiny, 0xab);
		eth_ip4(&f, src, WR_IPPROTO_TCP, 5, 3, 0, &tiny);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_LATER);
	}

	/* first fragment: MF, offset 0; ports there, UDP length covers the whole datagram */
	l4_udp(&l, 53, 1472);
	l.n = 8 + 100;
	eth_ip4(&f, src, WR_IPPROTO_UDP, 5, 0x2000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_L4 | WR_PKT_PORTS);
	CHECK_EQ(p.dport, 53);
	/* ... the same UDP length without MF is malformed */
	frame4(&f, src, WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);

	/* first TCP fragment with the TCP header cut (RFC 1858 tiny fragment) */
	l4_tcp(&l, 22, WEIR_TCP_SYN, 5);
	l.n = 8;
	eth_ip4(&f, src, WR_IPPROTO_TCP, 5, 0x2000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* ... and with 16 bytes: still cut */
	l4_tcp(&l, 22, WEIR_TCP_SYN, 5);
	l.n = 16;
	eth_ip4(&f, src, WR_IPPROTO_TCP, 5, 0x2000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* ... whole header but data offset reaching past the fragment */
	l4_tcp(&l, 22, WEIR_TCP_SYN, 5);
	l.b[12] = 10 << 4;
	eth_ip4(&f, src, WR_IPPROTO_TCP, 5, 0x2000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	/* a first TCP fragment with the whole header is fine */
	l4_tcp(&l, 22, WEIR_TCP_SYN, 5);
	zeros(&l, 64);
	eth_ip4(&f, src, WR_IPPROTO_TCP, 5, 0x2000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_L4 | WR_PKT_PORTS);
	CHECK_EQ(p.dport, 22);
}

TEST_CASE(parse_l4_checks)
{
	/* UDP length fields in a 12-byte datagram: 0, 7 and 13 are malformed, 8 and 12 fine */
	static const struct {
		__u8 len;
		int want;
	} udp_len[] = {
		{ 0, WR_PARSE_MALFORMED }, { 7, WR_PARSE_MALFORMED }, { 13, WR_PARSE_MALFORMED },
		{ 12, WR_PARSE_IP }, { 8, WR_PARSE_IP },
	};
	struct frame f, l;
	struct wr_pkt p;
	size_t i;
	__u8 doff;
	__u32 src = IP4(198, 18, 4, 4);

	/* TCP data offset below 5 */
	for (doff = 0; doff < 5; doff++) {
		l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
		l.b[12] = doff << 4;
		frame4(&f, src, WR_IPPROTO_TCP, &l);
		CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
		frame6(&f, SRC6, WR_IPPROTO_TCP, &l);
		CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	}
	/* data offset past the segment; then exactly the segment */
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	l.b[12] = 6 << 4;
	frame4(&f, src, WR_IPPROTO_TCP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	l4_tcp(&l, 80, WEIR_TCP_SYN, 15);
	frame4(&f, src, WR_IPPROTO_TCP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);

	/* UDP length 0, 7, larger than the datagram; 8 and shorter than the datagram are fine */
	l4_udp(&l, 53, 4);
	l.b[4] = 0;
	l.b[5] = 0;
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	for (i = 0; i < sizeof(udp_len) / sizeof(udp_len[0]); i++) {
		int r;

		l.b[5] = udp_len[i].len;
		frame4(&f, src, WR_IPPROTO_UDP, &l);
		r = parse(&f, &p);
		CHECK(r == udp_len[i].want, "UDP length %u: result %d, want %d", udp_len[i].len, r,
		      udp_len[i].want);
	}

	/* ICMP shorter than 8 bytes */
	l4_icmp(&l, 8, 0);
	l.n = 7;
	frame4(&f, src, WR_IPPROTO_ICMP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
	frame6(&f, SRC6, WR_IPPROTO_ICMPV6, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_MALFORMED);
}

TEST_CASE(parse_nd_hop_limit)
{
	struct frame f, l;
	struct wr_pkt p;
	unsigned int t;

	for (t = 0; t < 256; t++) {
		int nd = t >= WR_ND_FIRST && t <= WR_ND_LAST;

		l4_icmp(&l, t, 16);
		eth_ip6(&f, LL6, WR_IPPROTO_ICMPV6, 255, -1, &l);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.icmp_type, t);
		CHECK_EQ(!!(p.flags & WR_PKT_ND), nd);
		/* hop limit 64: routed, so not neighbour discovery */
		eth_ip6(&f, LL6, WR_IPPROTO_ICMPV6, 64, -1, &l);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.flags & WR_PKT_ND, 0);
	}
	/* IPv4 ICMP type 135 with TTL 255 is nothing special */
	l4_icmp(&l, 135, 0);
	frame4(&f, IP4(198, 18, 0, 9), WR_IPPROTO_ICMP, &l);
	f.b[22] = 255;
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.flags & WR_PKT_ND, 0);
}

/* TC on a non-linear skb: only the head is readable, frame_len is the whole frame. */
TEST_CASE(parse_frame_len_beyond_readable)
{
	struct frame f, l;
	struct wr_pkt p;
	size_t n;

	l4_tcp(&l, 443, WEIR_TCP_ACK, 5);
	zeros(&l, 1460);
	frame4(&f, IP4(198, 18, 5, 5), WR_IPPROTO_TCP, &l);
	CHECK_EQ(f.n, 1514);
	CHECK_EQ(parse_n(&f, 64, 1514, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 1500);
	CHECK_EQ(p.dport, 443);
	CHECK_EQ(p.flags, WR_PKT_L4 | WR_PKT_PORTS);
	/* exactly the headers readable */
	CHECK_EQ(parse_n(&f, 54, 1514, &p), WR_PARSE_IP);
	/* headers themselves cut in the readable part: malformed, never a read past it */
	for (n = 0; n < 54; n++)
		CHECK(parse_n(&f, n, 1514, &p) == WR_PARSE_MALFORMED, "tcp4 head of %zu", n);
	/* frame_len still bounds the length fields */
	CHECK_EQ(parse_n(&f, 64, 1513, &p), WR_PARSE_MALFORMED);

	l4_udp(&l, 53, 1400);
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse_n(&f, 62, (__u32)f.n, &p), WR_PARSE_IP);
	CHECK_EQ(p.len, 1448);
	CHECK_EQ(p.dport, 53);
	for (n = 0; n < 62; n++)
		CHECK(parse_n(&f, n, (__u32)f.n, &p) == WR_PARSE_MALFORMED, "udp6 head of %zu", n);
	/* behind extension headers */
	{
		static const __u8 types[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_ROUTING,
					      WR_IPPROTO_FRAGMENT, WR_IPPROTO_AH };
		struct frame pl;
		size_t hdrs;

		chain6(&pl, types, 4, WR_IPPROTO_UDP, 0, &l);
		frame6(&f, SRC6, types[0], &pl);
		hdrs = 14 + 40 + (pl.n - l.n) + 8;
		CHECK_EQ(parse_n(&f, hdrs, (__u32)f.n, &p), WR_PARSE_IP);
		CHECK_EQ(p.dport, 53);
		for (n = 0; n < hdrs; n++)
			CHECK(parse_n(&f, n, (__u32)f.n, &p) == WR_PARSE_MALFORMED,
			      "ext udp6 head of %zu", n);
	}
	CHECK_EQ(parse_n(&f, 62, (__u32)f.n - 1, &p), WR_PARSE_MALFORMED);
}

/* ------------------------------------------------------------------------ */
/* Matching and keys                                                        */
/* ------------------------------------------------------------------------ */

static void rule_init(struct weir_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->uid = 77;
	r->nr_limits = 1;
}

static void rule_src4(struct weir_rule *r, __u32 net, unsigned int plen)
{
	r->match |= WEIR_M_SRC | WEIR_M_FAMILY;
	r->family = 4;
	r->src_plen = plen;
	r->src_mask[0] = wr_prefix_word(plen, 0);
	r->src_net[0] = htonl(net) & r->src_mask[0];
}

static void rule_src6(struct weir_rule *r, const __u8 *net, unsigned int plen)
{
	__u32 w[4];
	int i;

	w6(w, net);
	r->match |= WEIR_M_SRC | WEIR_M_FAMILY;
	r->family = 6;
	r->src_plen = plen;
	for (i = 0; i < 4; i++) {
		r->src_mask[i] = wr_prefix_word(plen, i);
		r->src_net[i] = w[i] & r->src_mask[i];
	}
}

static void pkt4(struct wr_pkt *p, __u32 src, __u8 proto, __u16 dport)
{
	memset(p, 0, sizeof(*p));
	p->family = 4;
	p->saddr[0] = htonl(src);
	p->proto = proto;
	p->len = 100;
	p->flags = WR_PKT_L4;
	if (proto == WR_IPPROTO_TCP || proto == WR_IPPROTO_UDP) {
		p->flags |= WR_PKT_PORTS;
		p->dport = dport;
	}
}

static void pkt6(struct wr_pkt *p, const __u8 *src, __u8 proto, __u16 dport)
{
	pkt4(p, 0, proto, dport);
	p->family = 6;
	w6(p->saddr, src);
}

TEST_CASE(match_family_proto)
{
	struct weir_rule r;
	struct wr_pkt p4, p6;

	pkt4(&p4, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 53);
	pkt6(&p6, SRC6, WR_IPPROTO_UDP, 53);
	rule_init(&r);
	CHECK(wr_rule_match(&r, &p4) && wr_rule_match(&r, &p6), "empty rule matches all");
	r.match = WEIR_M_FAMILY;
	r.family = 4;
	CHECK(wr_rule_match(&r, &p4) && !wr_rule_match(&r, &p6), "family 4");
	r.family = 6;
	CHECK(!wr_rule_match(&r, &p4) && wr_rule_match(&r, &p6), "family 6");
	r.match = WEIR_M_PROTO;
	r.proto = WR_IPPROTO_UDP;
	CHECK(wr_rule_match(&r, &p4) && wr_rule_match(&r, &p6), "proto udp");
	r.proto = WR_IPPROTO_TCP;
	CHECK(!wr_rule_match(&r, &p4) && !wr_rule_match(&r, &p6), "proto tcp");
	r.match = WEIR_M_PROTO | WEIR_M_FAMILY;
	r.proto = WR_IPPROTO_UDP;
	r.family = 6;
	CHECK(!wr_rule_match(&r, &p4) && wr_rule_match(&r, &p6), "udp6");
	/* fields without their match bit are ignored */
	rule_init(&r);
	r.proto = WR_IPPROTO_TCP;
	r.family = 6;
	r.dport_lo = 1;
	r.dport_hi = 2;
	r.icmp_type = 9;
	r.tcp_mask = 0xff;
	r.tcp_value = 0x12;
	CHECK(wr_rule_match(&r, &p4), "unmatched fields used");
}

/* A set of rules by index, WEIR_MAX_RULES bits. */
struct rule_bits {
	__u64 w[WEIR_MAX_RULES / 64];
};

static int rule_bits_count(const struct rule_bits *b)
{
	int n = 0;
	size_t i;

	for (i = 0; i < WEIR_MAX_RULES / 64; i++)
		n += __builtin_popcountll(b->w[i]);
	return n;
}

/* The rule index: which rules wr_rule_match says match. */
static void match_linear(const struct weir_ruleset *rs, const struct wr_pkt *p,
			 struct rule_bits *b)
{
	__u32 i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < rs->nr_rules; i++)
		if (wr_rule_match(&rs->rules[i], p))
			b->w[i / 64] |= 1ULL << (i % 64);
}

/*
 * The rules the index gives p as candidates, by index; false if its cell's
 * list is not in ascending order (the data path's masks stand for it, and
 * the lowest matching rule must come first).
 */
static bool cand_linear(const struct weir_ruleset *rs, const struct wr_pkt *p,
			struct rule_bits *b)
{
	__u32 cell, k, ri;
	__u64 cand = wr_rule_candidates(rs, p, &cell);
	int prev = -1;

	memset(b, 0, sizeof(*b));
	for (k = 0; k < WEIR_MAX_CAND; k++) {
		if (!(cand & (1ULL << k)))
			continue;
		ri = wr_cand_rule(rs, cell, k);
		if ((int)ri <= prev)
			return false;
		prev = ri;
		b->w[ri / 64] |= 1ULL << (ri % 64);
	}
	return true;
}

static __u64 idx_rng = 0x2545F4914F6CDD1DULL;
static __u32 idx_rand(void)
{
	idx_rng ^= idx_rng << 13;
	idx_rng ^= idx_rng >> 7;
	idx_rng ^= idx_rng << 17;
	return (__u32)(idx_rng >> 16);
}

TEST_CASE(match_index_bit_index)
{
	__u32 b;

	for (b = 0; b < 64; b++)
		CHECK(wr_bit_index(1ULL << b) == b, "bit %u: %u", b, wr_bit_index(1ULL << b));
}

/* wr_cand_pop: every candidate once, lowest first, then 64 on an empty mask. */
TEST_CASE(match_index_cand_pop)
{
	__u64 masks[] = { 0, 1, 1ULL << 63, ~0ULL, 0x8000000000000001ULL, 0x5a5a0000f00f0ff0ULL };
	unsigned int i, b;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		__u64 cand = masks[i];

		for (b = 0; b < 64; b++) {
			if (!(masks[i] & (1ULL << b)))
				continue;
			CHECK(wr_cand_pop(&cand) == b, "mask %#llx: not bit %u next",
			      (unsigned long long)masks[i], b);
			/* From bit b up, what is left is the mask above b. */
			CHECK((cand & ~((1ULL << b) - 1)) == (masks[i] & ~((2ULL << b) - 1)),
			      "mask %#llx: bit %u not taken out alone", (unsigned long long)masks[i], b);
		}
		CHECK(cand == 0, "mask %#llx: %#llx left", (unsigned long long)masks[i],
		      (unsigned long long)cand);
		CHECK(wr_cand_pop(&cand) == 64 && cand == 0, "mask %#llx: an empty mask gives 64",
		      (unsigned long long)masks[i]);
	}
}

/*
 * Random rule sets of up to WEIR_MAX_RULES rules and random packets:
 * every rule that matches a packet is among the index's candidates for it
 * (the data path matches only those), in ascending order. Half the sets
 * name a port in every rule, so that sets of more than 64 rules fit, and a
 * quarter have nearly WEIR_MAX_RULES: a set whose cell would hold more
 * than WEIR_MAX_CAND rules is refused, and that cell is counted by hand.
 */
TEST_CASE(match_index_superset)
{
	static const __u8 protos[] = { WR_IPPROTO_TCP, WR_IPPROTO_UDP, WR_IPPROTO_ICMP,
				       WR_IPPROTO_ICMPV6, 47 };
	static struct weir_ruleset rs;
	unsigned int set, n, fewer = 0, total = 0, big = 0, refused = 0;
	struct rule_bits want, cand;
	struct wr_idx_full full;
	struct wr_pkt p;
	__u32 i, k;
	int err;

	for (set = 0; set < 200; set++) {
		bool ports = set % 2;

		memset(&rs, 0, sizeof(rs));
		rs.nr_rules = 1 + idx_rand() % WEIR_MAX_RULES;
		/* A quarter of the sets crowded: most of their cells over-full. */
		if (set % 4 == 2)
			rs.nr_rules = WEIR_MAX_RULES - idx_rand() % 32;
		for (i = 0; i < rs.nr_rules; i++) {
			struct weir_rule *r = &rs.rules[i];
			__u32 lo = idx_rand() % 12000, w = idx_rand() % 8;

			rule_init(r);
			r->match = idx_rand() & (WEIR_M_PROTO | WEIR_M_DPORT | WEIR_M_TCPFLAGS |
						 WEIR_M_ICMPTYPE | WEIR_M_FAMILY);
			if (ports) {
				r->match |= WEIR_M_PROTO | WEIR_M_DPORT;
				w %= 4;
			}
			r->family = idx_rand() & 1 ? 4 : 6;
			r->proto = protos[idx_rand() % (ports ? 2 : sizeof(protos))];
			/* Single ports, short and wide ranges, the full range, an empty one. */
			r->dport_lo = lo;
			r->dport_hi = w == 0 ? lo : w < 4 ? lo + idx_rand() % 300 :
				      w < 6 ? lo + 4000 + idx_rand() % 9000 : w == 6 ? 65535 : lo - 1;
			if (w == 6)
				r->dport_lo = 0;
			r->tcp_mask = WEIR_TCP_SYN;
			r->tcp_value = idx_rand() & 1 ? WEIR_TCP_SYN : 0;
			r->icmp_type = idx_rand() % 4 ? 8 : 135;
			/* The further fields narrow within the candidates; sport and payload to TCP/UDP. */
			r->xmatch = idx_rand() & (WEIR_X_SPORT | WEIR_X_LEN | WEIR_X_FRAG |
						  WEIR_X_PAYLOAD);
			r->sport_lo = idx_rand() % 4;
			r->sport_hi = r->sport_lo + idx_rand() % 3;
			r->len_lo = 90 + idx_rand() % 20;
			r->len_hi = r->len_lo + idx_rand() % 20;
			r->frag = idx_rand() % 4;
		}
		memset(&full, 0, sizeof(full));
		err = wr_ruleset_index(&rs, &full);
		if (err) {
			__u32 c = 0;

			CHECK(err == -WR_E2BIG && full.n > WEIR_MAX_CAND,
			      "set %u refused (%d) with a cell of %u rules", set, err, full.n);
			/* Count the cell's rules by hand: each port-less, or naming a port of it. */
			for (i = 0; i < rs.nr_rules; i++) {
				const struct weir_rule *r = &rs.rules[i];
				bool in = false;
				__u32 port;

				if (r->match & WEIR_M_PROTO && wr_idx_proto(r->proto) != full.pc)
					continue;
				if ((r->match & WEIR_M_TCPFLAGS && full.pc != WEIR_IDX_TCP) ||
				    (r->match & WEIR_M_ICMPTYPE && full.pc != WEIR_IDX_OTHER))
					continue;
				if ((r->xmatch & (WEIR_X_SPORT | WEIR_X_PAYLOAD)) &&
				    full.pc == WEIR_IDX_OTHER)
					continue;
				if (!(r->match & WEIR_M_DPORT))
					in = true;
				else if (full.bucket != WEIR_IDX_NOPORT && full.pc != WEIR_IDX_OTHER)
					for (port = r->dport_lo; port <= r->dport_hi && !in; port++)
						in = r->dport_hi - r->dport_lo >= WR_IDX_WIDE_RANGE ||
						     wr_port_bucket(port) == full.bucket;
				c += in;
			}
			CHECK(c == full.n, "set %u: the full cell holds %u rules, counted %u", set,
			      full.n, c);
			refused++;
			continue;
		}
		CHECK(rs.indexed == 1, "set %u not marked indexed", set);
		big += rs.nr_rules > 64;
		for (n = 0; n < 500; n++) {
			__u8 proto = protos[idx_rand() % sizeof(protos)];

			pkt4(&p, IP4(198, 18, 0, 1), proto, idx_rand() % 12000);
			if (idx_rand() & 1)
				p.family = 6;
			if (proto == WR_IPPROTO_TCP)
				p.tcp_flags = idx_rand() & 1 ? WEIR_TCP_SYN : WEIR_TCP_ACK;
			if (proto == WR_IPPROTO_ICMP || proto == WR_IPPROTO_ICMPV6)
				p.icmp_type = idx_rand() % 3 ? 8 : 135;
			if (proto == WR_IPPROTO_ICMPV6 && p.icmp_type == 135)
				p.flags |= WR_PKT_ND;
			p.sport = idx_rand() % 6;
			p.len = 90 + idx_rand() % 50;
			/* A first fragment; a non-first one: no ports, no L4 header. */
			if (!(idx_rand() % 8))
				p.flags |= WR_PKT_FRAG;
			if (!(idx_rand() % 8))
				p.flags = WR_PKT_FRAG | WR_PKT_LATER;
			match_linear(&rs, &p, &want);
			if (!cand_linear(&rs, &p, &cand)) {
				CHECK(0, "set %u packet %u: a cell's rules out of order", set, n);
				return;
			}
			for (k = 0; k < WEIR_MAX_RULES / 64; k++)
				if (want.w[k] & ~cand.w[k]) {
					CHECK(0, "set %u packet %u: rules %#llx (word %u) match but are "
						 "not candidates", set, n,
					      (unsigned long long)(want.w[k] & ~cand.w[k]), k);
					return;
				}
			for (k = rs.nr_rules; k < WEIR_MAX_RULES; k++)
				if (cand.w[k / 64] & (1ULL << (k % 64))) {
					CHECK(0, "candidate %u past the set's %u rules", k, rs.nr_rules);
					return;
				}
			total++;
			fewer += rule_bits_count(&cand) < (int)rs.nr_rules;
		}
	}
	/* And it does narrow: most packets have fewer candidates than rules. */
	CHECK(fewer * 2 > total, "the index narrowed only %u of %u packets", fewer, total);
	/* Both kinds of set were met: over 64 rules indexed, and cells over-full refused. */
	CHECK(big >= 20 && refused >= 10, "%u sets of over 64 rules indexed, %u refused", big,
	      refused);
}

/* The shape of the cost benchmark: single-port rules, the last matching. */
TEST_CASE(match_index_narrows_to_the_port)
{
	static struct weir_ruleset rs;
	struct wr_pkt p;
	__u32 i, cell;
	__u64 c;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = 64;
	for (i = 0; i < 64; i++) {
		rule_init(&rs.rules[i]);
		rs.rules[i].match = WEIR_M_PROTO | WEIR_M_DPORT;
		rs.rules[i].proto = WR_IPPROTO_UDP;
		rs.rules[i].dport_lo = rs.rules[i].dport_hi = i == 63 ? 9000 : 10000 + i;
	}
	pkt4(&p, IP4(198, 18, 0, 2), WR_IPPROTO_UDP, 9000);
	c = wr_rule_candidates(&rs, &p, &cell);
	CHECK(c == 0, "no index: candidates %#llx, want none", (unsigned long long)c);
	CHECK(wr_ruleset_index(&rs, NULL) == 0, "64 rules refused");
	c = wr_rule_candidates(&rs, &p, &cell);
	CHECK(c == 1 && wr_cand_rule(&rs, cell, 0) == 63, "udp 9000: %#llx, first rule %u",
	      (unsigned long long)c, wr_cand_rule(&rs, cell, 0));
	pkt4(&p, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, 9000);
	CHECK(wr_rule_candidates(&rs, &p, &cell) == 0, "tcp 9000 is no udp rule's");
	pkt4(&p, IP4(198, 18, 0, 2), WR_IPPROTO_ICMP, 0);
	CHECK(wr_rule_candidates(&rs, &p, &cell) == 0, "icmp has no port");
	/* A rule without a port is everyone's candidate, ports or not, and comes first. */
	rs.rules[5].match = 0;
	wr_ruleset_index(&rs, NULL);
	c = wr_rule_candidates(&rs, &p, &cell);
	CHECK(c == 1 && wr_cand_rule(&rs, cell, 0) == 5, "icmp: %#llx", (unsigned long long)c);
	pkt4(&p, IP4(198, 18, 0, 2), WR_IPPROTO_UDP, 9000);
	c = wr_rule_candidates(&rs, &p, &cell);
	CHECK(c == 3 && wr_cand_rule(&rs, cell, 0) == 5 && wr_cand_rule(&rs, cell, 1) == 63,
	      "udp 9000: %#llx", (unsigned long long)c);
}

/*
 * WEIR_MAX_RULES rules, each on its own port: every port's cell lists its
 * rule, the last one's too. WEIR_MAX_CAND rules without a port fit; one
 * more is refused, naming the cell, and so is the same many on one port.
 */
TEST_CASE(match_index_full_set_and_full_cells)
{
	static struct weir_ruleset rs;
	struct wr_idx_full full = {};
	struct rule_bits cand;
	struct wr_pkt p;
	__u32 i, cell;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = WEIR_MAX_RULES;
	for (i = 0; i < WEIR_MAX_RULES; i++) {
		rule_init(&rs.rules[i]);
		rs.rules[i].match = WEIR_M_PROTO | WEIR_M_DPORT;
		rs.rules[i].proto = WR_IPPROTO_TCP;
		rs.rules[i].dport_lo = rs.rules[i].dport_hi = 20000 + i;
	}
	CHECK(wr_ruleset_index(&rs, &full) == 0, "%u single-port rules refused: a cell of %u",
	      WEIR_MAX_RULES, full.n);
	for (i = 0; i < WEIR_MAX_RULES; i++) {
		pkt4(&p, IP4(198, 18, 0, 2), WR_IPPROTO_TCP, 20000 + i);
		cand_linear(&rs, &p, &cand);
		if (!(cand.w[i / 64] & (1ULL << (i % 64)))) {
			CHECK(0, "port %u: rule %u is no candidate", 20000 + i, i);
			break;
		}
	}
	/* The first WEIR_MAX_CAND without a port: every cell full, and it fits. */
	for (i = 0; i < WEIR_MAX_CAND; i++)
		rs.rules[i].match = 0;
	CHECK(wr_ruleset_index(&rs, &full) != 0, "64 port-less rules and more on a port fit");
	rs.nr_rules = WEIR_MAX_CAND;
	CHECK(wr_ruleset_index(&rs, NULL) == 0, "%d port-less rules refused", WEIR_MAX_CAND);
	pkt4(&p, IP4(198, 18, 0, 2), WR_IPPROTO_UDP, 53);
	CHECK(wr_rule_candidates(&rs, &p, &cell) == ~0ULL &&
	      wr_cand_rule(&rs, cell, 63) == 63, "udp 53: not every port-less rule");
	rs.nr_rules = WEIR_MAX_CAND + 1;
	rs.rules[WEIR_MAX_CAND].match = WEIR_M_PROTO;
	rs.rules[WEIR_MAX_CAND].proto = WR_IPPROTO_UDP;
	memset(&full, 0, sizeof(full));
	CHECK(wr_ruleset_index(&rs, &full) == -WR_E2BIG && full.n == WEIR_MAX_CAND + 1 &&
	      full.pc == WEIR_IDX_UDP, "65 rules for UDP: %u in class %u", full.n, full.pc);
	/* 65 rules on one port, the rest elsewhere: that port's cell is named. */
	for (i = 0; i < WEIR_MAX_RULES; i++) {
		rs.rules[i].match = WEIR_M_PROTO | WEIR_M_DPORT;
		rs.rules[i].proto = WR_IPPROTO_TCP;
		rs.rules[i].dport_lo = rs.rules[i].dport_hi = i <= WEIR_MAX_CAND ? 443 : 30000 + i;
	}
	rs.nr_rules = WEIR_MAX_RULES;
	memset(&full, 0, sizeof(full));
	CHECK(wr_ruleset_index(&rs, &full) == -WR_E2BIG && full.pc == WEIR_IDX_TCP &&
	      full.bucket == wr_port_bucket(443) && full.n >= WEIR_MAX_CAND + 1,
	      "65 rules on tcp 443: class %u bucket %u (443's: %u), %u rules", full.pc,
	      full.bucket, wr_port_bucket(443), full.n);
}

TEST_CASE(match_dport_range_edges)
{
	static const struct {
		__u16 lo, hi;
	} rg[] = { { 1000, 2000 }, { 0, 0 }, { 65535, 65535 }, { 0, 65535 }, { 53, 53 } };
	struct weir_rule r;
	struct wr_pkt p;
	size_t i;
	unsigned int port;

	for (i = 0; i < sizeof(rg) / sizeof(rg[0]); i++) {
		rule_init(&r);
		r.match = WEIR_M_DPORT;
		r.dport_lo = rg[i].lo;
		r.dport_hi = rg[i].hi;
		for (port = 0; port < 65536; port++) {
			int want = port >= rg[i].lo && port <= rg[i].hi;

			pkt4(&p, IP4(198, 18, 0, 1), port & 1 ? WR_IPPROTO_TCP : WR_IPPROTO_UDP,
			     port);
			if (wr_rule_match(&r, &p) != want) {
				CHECK_FAIL("range %u-%u port %u: match %d", rg[i].lo, rg[i].hi,
					   port, !want);
				break;
			}
		}
	}
	/* a port rule never matches a packet without ports (ICMP) */
	rule_init(&r);
	r.match = WEIR_M_DPORT;
	r.dport_lo = 0;
	r.dport_hi = 65535;
	pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_ICMP, 0);
	CHECK(!wr_rule_match(&r, &p), "icmp matched a port rule");
}

TEST_CASE(match_src_cidr_v4)
{
	const __u32 net = IP4(198, 18, 0, 0) | 0x5a5a;	/* bits below the prefix ignored */
	struct weir_rule r;
	struct wr_pkt p;
	unsigned int plen, bit;

	for (plen = 0; plen <= 32; plen++) {
		rule_init(&r);
		rule_src4(&r, net, plen);
		pkt4(&p, net, WR_IPPROTO_UDP, 1);
		CHECK(wr_rule_match(&r, &p), "/%u: the net itself", plen);
		/* flipping any bit inside the prefix leaves it; outside stays in */
		for (bit = 0; bit < 32; bit++) {
			int inside = bit < plen;

			pkt4(&p, net ^ (0x80000000u >> bit), WR_IPPROTO_UDP, 1);
			if (wr_rule_match(&r, &p) == inside) {
				CHECK_FAIL("/%u: bit %u flipped, match %d", plen, bit, inside);
				return;
			}
		}
		/* never an IPv6 packet, even with the same first word */
		pkt6(&p, SRC6, WR_IPPROTO_UDP, 1);
		p.saddr[0] = htonl(net);
		CHECK(!wr_rule_match(&r, &p), "/%u matched IPv6", plen);
	}
}

TEST_CASE(match_src_cidr_v6)
{
	struct weir_rule r;
	struct wr_pkt p;
	unsigned int plen, bit;

	for (plen = 0; plen <= 128; plen++) {
		rule_init(&r);
		rule_src6(&r, SRC6, plen);
		pkt6(&p, SRC6, WR_IPPROTO_TCP, 1);
		CHECK(wr_rule_match(&r, &p), "/%u: the net itself", plen);
		for (bit = 0; bit < 128; bit++) {
			__u8 a[16];
			int inside = bit < plen;

			memcpy(a, SRC6, 16);
			a[bit / 8] ^= 0x80 >> (bit % 8);
			pkt6(&p, a, WR_IPPROTO_TCP, 1);
			if (wr_rule_match(&r, &p) == inside) {
				CHECK_FAIL("/%u: bit %u flipped, match %d", plen, bit, inside);
				return;
			}
		}
		pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_TCP, 1);
		CHECK(!wr_rule_match(&r, &p), "v6 /%u matched IPv4", plen);
	}
}

TEST_CASE(match_tcp_syn_without_ack)
{
	struct weir_rule r;
	struct wr_pkt p;
	unsigned int f;

	rule_init(&r);
	r.match = WEIR_M_TCPFLAGS;
	r.tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
	r.tcp_value = WEIR_TCP_SYN;
	for (f = 0; f < 256; f++) {
		int want = (f & (WEIR_TCP_SYN | WEIR_TCP_ACK)) == WEIR_TCP_SYN;

		pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_TCP, 80);
		p.tcp_flags = f;
		CHECK(wr_rule_match(&r, &p) == want, "flags 0x%02x", f);
		pkt6(&p, SRC6, WR_IPPROTO_TCP, 80);
		p.tcp_flags = f;
		CHECK(wr_rule_match(&r, &p) == want, "v6 flags 0x%02x", f);
	}
	/* UDP, or TCP without a parsed header (non-first fragment), never matches */
	pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 80);
	p.tcp_flags = WEIR_TCP_SYN;
	CHECK(!wr_rule_match(&r, &p), "udp matched a flags rule");
	pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_TCP, 80);
	p.flags = WR_PKT_FRAG;
	p.tcp_flags = WEIR_TCP_SYN;
	CHECK(!wr_rule_match(&r, &p), "fragment matched a flags rule");
}

TEST_CASE(match_icmp_type)
{
	struct weir_rule r;
	struct wr_pkt p;
	unsigned int t;

	rule_init(&r);
	r.match = WEIR_M_ICMPTYPE | WEIR_M_PROTO;
	r.proto = WR_IPPROTO_ICMP;
	r.icmp_type = 8;
	for (t = 0; t < 256; t++) {
		pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_ICMP, 0);
		p.icmp_type = t;
		CHECK(wr_rule_match(&r, &p) == (t == 8), "icmp type %u", t);
	}
	r.proto = WR_IPPROTO_ICMPV6;
	r.icmp_type = 128;
	for (t = 0; t < 256; t++) {
		pkt6(&p, SRC6, WR_IPPROTO_ICMPV6, 0);
		p.icmp_type = t;
		CHECK(wr_rule_match(&r, &p) == (t == 128), "icmpv6 type %u", t);
	}
	/* a type rule never matches other protocols or an unparsed header */
	r.match = WEIR_M_ICMPTYPE;
	r.icmp_type = 0;
	pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 0);
	CHECK(!wr_rule_match(&r, &p), "udp matched icmp type 0");
	pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_ICMP, 0);
	p.flags = WR_PKT_FRAG;
	CHECK(!wr_rule_match(&r, &p), "icmp fragment matched icmp type 0");
}

TEST_CASE(match_fragments)
{
	struct weir_rule dport, proto, flags;
	struct frame f, l;
	struct wr_pkt p;

	rule_init(&dport);
	dport.match = WEIR_M_PROTO | WEIR_M_DPORT;
	dport.proto = WR_IPPROTO_UDP;
	dport.dport_lo = 53;
	dport.dport_hi = 53;
	rule_init(&proto);
	proto.match = WEIR_M_PROTO;
	proto.proto = WR_IPPROTO_UDP;
	rule_init(&flags);
	flags.match = WEIR_M_TCPFLAGS;
	flags.tcp_mask = WEIR_TCP_SYN;
	flags.tcp_value = 0;

	/* non-first IPv4 fragment whose payload happens to hold "port 53" */
	l4_udp(&l, 53, 100);
	eth_ip4(&f, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 5, 50, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK(!wr_rule_match(&dport, &p), "non-first v4 fragment matched a dport rule");
	CHECK(wr_rule_match(&proto, &p), "non-first v4 fragment missed a proto rule");
	CHECK(!wr_rule_match(&flags, &p), "non-first v4 fragment matched a flags rule");
	/* first fragment has ports: matches both */
	eth_ip4(&f, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 5, 0x2000, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK(wr_rule_match(&dport, &p), "first v4 fragment missed a dport rule");
	CHECK(wr_rule_match(&proto, &p), "first v4 fragment missed a proto rule");

	/* the same for IPv6 */
	{
		static const __u8 fr[] = { WR_IPPROTO_FRAGMENT };
		struct frame pl;

		chain6(&pl, fr, 1, WR_IPPROTO_UDP, 100 << 3, &l);
		frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK(!wr_rule_match(&dport, &p), "non-first v6 fragment matched a dport rule");
		CHECK(wr_rule_match(&proto, &p), "non-first v6 fragment missed a proto rule");
		chain6(&pl, fr, 1, WR_IPPROTO_UDP, 1, &l);
		frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK(wr_rule_match(&dport, &p), "first v6 fragment missed a dport rule");
	}
}

TEST_CASE(match_nd_only_when_named)
{
	struct weir_rule all, v6, icmp6, ns, na, src;
	struct frame f, l;
	struct wr_pkt p;

	rule_init(&all);
	rule_init(&v6);
	v6.match = WEIR_M_FAMILY;
	v6.family = 6;
	rule_init(&icmp6);
	icmp6.match = WEIR_M_FAMILY | WEIR_M_PROTO;
	icmp6.family = 6;
	icmp6.proto = WR_IPPROTO_ICMPV6;
	rule_init(&ns);
	ns.match = WEIR_M_PROTO | WEIR_M_ICMPTYPE;
	ns.proto = WR_IPPROTO_ICMPV6;
	ns.icmp_type = 135;
	na = ns;
	na.icmp_type = 136;
	rule_init(&src);
	rule_src6(&src, LL6, 10);

	l4_icmp(&l, 135, 16);
	eth_ip6(&f, LL6, WR_IPPROTO_ICMPV6, 255, -1, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK(p.flags & WR_PKT_ND, "NS not ND");
	CHECK(!wr_rule_match(&all, &p), "ND matched a match-all rule");
	CHECK(!wr_rule_match(&v6, &p), "ND matched an IPv6 rule");
	CHECK(!wr_rule_match(&icmp6, &p), "ND matched an ICMPv6 rule");
	CHECK(!wr_rule_match(&src, &p), "ND matched a source rule");
	CHECK(wr_rule_match(&ns, &p), "ND missed a rule naming type 135");
	CHECK(!wr_rule_match(&na, &p), "NS matched a rule naming type 136");

	/* the same type with hop limit 64 is ordinary ICMPv6 */
	eth_ip6(&f, LL6, WR_IPPROTO_ICMPV6, 64, -1, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK(wr_rule_match(&all, &p), "routed 135 missed match-all");
	CHECK(wr_rule_match(&icmp6, &p), "routed 135 missed the ICMPv6 rule");
	CHECK(wr_rule_match(&ns, &p), "routed 135 missed the type rule");
}

/* Reference: network-order mask word w of an address prefix, bit by bit. */
static __u32 ref_mask_word(unsigned int plen, unsigned int w)
{
	__u8 b[4] = { 0 };
	unsigned int i;
	__u32 out;

	for (i = 0; i < 32; i++)
		if (w * 32 + i < plen)
			b[i / 8] |= 0x80 >> (i % 8);
	memcpy(&out, b, 4);
	return out;
}

TEST_CASE(key_masks_exhaustive)
{
	struct weir_limit l;
	unsigned int plen, w;

	for (plen = 0; plen <= 128; plen++) {
		memset(&l, 0, sizeof(l));
		l.plen4 = plen <= 32 ? plen : 32;
		l.plen6 = plen;
		wr_limit_set_masks(&l);
		CHECK_EQ(l.mask4, ref_mask_word(l.plen4, 0));
		for (w = 0; w < 4; w++)
			if (l.mask6[w] != ref_mask_word(plen, w))
				CHECK_FAIL("/%u word %u: mask %08x want %08x", plen, w, l.mask6[w],
					   ref_mask_word(plen, w));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * wr_state's set hash. Every set index is in range; for one rule, limit
 * and family, distinct IPv4 sources have distinct hashes (the mix is a
 * bijection of the address word), so the set is all that two sources can
 * share; a million sources spread over 1024 sets within a 6-sigma
 * chi-square bound; and another seed sends the same sources elsewhere.
 */
TEST_CASE(state_hash_spread)
{
	enum { SETS = 1024, N = 1 << 20 };
	static unsigned int per[SETS];
	static __u64 hashes[N];
	const __u64 seed = 0x5eed5eed12345678ULL;
	struct weir_key k = { .uid = 7, .limit = 1, .family = 4, .plen = 32 };
	double chi = 0, mean = (double)N / SETS;
	__u32 i, moved = 0;

	memset(per, 0, sizeof(per));
	for (i = 0; i < N; i++) {
		__u32 set;

		k.addr[0] = htonl(0xc6120000u + i);	/* 198.18.0.0/12 and on: any bits do */
		hashes[i] = wr_key_hash(&k, seed);
		set = wr_state_set(hashes[i], SETS);
		CHECK(set < SETS, "set %u of %u", set, SETS);
		if (set < SETS)
			per[set]++;
		if (wr_state_set(wr_key_hash(&k, seed ^ 1), SETS) != set)
			moved++;
	}
	for (i = 0; i < SETS; i++)
		chi += (per[i] - mean) * (per[i] - mean) / mean;
	/* chi-square with 1023 degrees of freedom: mean 1023, sd about 45 */
	CHECK(chi < 1023 + 6 * 45.2, "chi-square %.1f over 1024 sets", chi);
	CHECK(moved > N * 0.99, "another seed moved only %u of %u sources", moved, N);
	qsort(hashes, N, sizeof(hashes[0]), cmp_u64);
	for (i = 1; i < N; i++)
		if (hashes[i] == hashes[i - 1])
			break;
	CHECK(i == N, "two IPv4 sources share a hash");
	/* The edges of the scaling: one set, and the largest set count. */
	CHECK_EQ(wr_state_set(~0ULL, 1), 0);
	CHECK_EQ(wr_state_set(~0ULL, 0xffffffffu), 0xfffffffeu);
	CHECK_EQ(wr_state_set(0, 0xffffffffu), 0);
}

/*
 * Which limits need the precise clock at a 4 ms tick: token buckets whose
 * burst spans under 2 ticks, windows under 100 ticks; connection caps never.
 */
TEST_CASE(limit_needs_precise_edges)
{
	const __u64 tick = 4 * 1000000ULL;
	struct weir_limit l = { .algo = WEIR_ALGO_GCRA };

	l.interval_fp = wr_gcra_interval(1000);		/* 1 ms a packet */
	l.tolerance = wr_gcra_tolerance(l.interval_fp, 8, WEIR_COST_PKT);
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 0);	/* 8 ms: two ticks */
	l.tolerance = wr_gcra_tolerance(l.interval_fp, 7, WEIR_COST_PKT);
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 1);	/* 7 ms */
	l.interval_fp = wr_gcra_interval(1000000);
	l.tolerance = wr_gcra_tolerance(l.interval_fp, 1000000, WEIR_COST_PKT);
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 0);	/* the default burst: 1 s */
	l.algo = WEIR_ALGO_FIXED;
	l.period_ms = 400;
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 0);	/* 100 ticks */
	l.period_ms = 399;
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 1);
	l.algo = WEIR_ALGO_SLIDING;
	l.period_ms = 0;				/* per second */
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 0);
	l.algo = WEIR_ALGO_CONNS;
	l.tolerance = 0;
	CHECK_EQ(wr_limit_needs_precise(&l, tick), 0);
}

TEST_CASE(key_make_prefixes)
{
	static const struct {
		unsigned int plen;
		__u32 want;
	} v4[] = { { 24, IP4(198, 18, 5, 0) }, { 32, IP4(198, 18, 5, 77) }, { 0, 0 },
		   { 15, IP4(198, 18, 0, 0) }, { 31, IP4(198, 18, 5, 76) } };
	static const struct {
		unsigned int plen;
		__u8 want[16];
	} v6[] = {
		{ 64, { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78 } },
		{ 48, { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34 } },
		{ 128, { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
			 1, 2, 3, 4 } },
		{ 0, { 0 } },
		{ 56, { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56 } },
		{ 60, { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x70 } },
	};
	static const __u8 a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78,
				     0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4 };
	struct weir_rule r;
	struct weir_limit *l;
	struct weir_key k;
	struct wr_pkt p;
	size_t i;

	rule_init(&r);
	r.uid = 0xdeadbeef;
	l = &r.limits[2];
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		memset(&k, 0xff, sizeof(k));
		l->plen4 = v4[i].plen;
		l->plen6 = 64;
		wr_limit_set_masks(l);
		pkt4(&p, IP4(198, 18, 5, 77), WR_IPPROTO_UDP, 53);
		wr_make_key(&r, 2, l, &p, &k);
		CHECK_EQ(k.uid, 0xdeadbeef);
		CHECK_EQ(k.limit, 2);
		CHECK_EQ(k.family, 4);
		CHECK_EQ(k.plen, v4[i].plen);
		CHECK_EQ(k.kind, 0);
		CHECK_EQ(k.addr[0], htonl(v4[i].want));
		CHECK_EQ(k.addr[1] | k.addr[2] | k.addr[3], 0);
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		__u32 want[4];

		memset(&k, 0xff, sizeof(k));
		l->plen4 = 24;
		l->plen6 = v6[i].plen;
		wr_limit_set_masks(l);
		pkt6(&p, a6, WR_IPPROTO_UDP, 53);
		wr_make_key(&r, 1, l, &p, &k);
		w6(want, v6[i].want);
		CHECK_EQ(k.family, 6);
		CHECK_EQ(k.limit, 1);
		CHECK_EQ(k.plen, v6[i].plen);
		CHECK_EQ(k.kind, 0);
		CHECK(!memcmp(k.addr, want, 16), "/%u key address", v6[i].plen);
	}
	/* two sources in one /24 share a key, a third in the next /24 does not */
	{
		struct weir_key a, b, c;

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		memset(&c, 0, sizeof(c));
		l->plen4 = 24;
		wr_limit_set_masks(l);
		pkt4(&p, IP4(198, 18, 9, 1), WR_IPPROTO_UDP, 53);
		wr_make_key(&r, 0, l, &p, &a);
		pkt4(&p, IP4(198, 18, 9, 254), WR_IPPROTO_UDP, 53);
		wr_make_key(&r, 0, l, &p, &b);
		pkt4(&p, IP4(198, 18, 10, 1), WR_IPPROTO_UDP, 53);
		wr_make_key(&r, 0, l, &p, &c);
		CHECK(!memcmp(&a, &b, sizeof(a)), "same /24, different keys");
		CHECK(memcmp(&a, &c, sizeof(a)), "different /24, same key");
		/* and the limit index and uid separate buckets */
		wr_make_key(&r, 1, l, &p, &b);
		CHECK(memcmp(&b, &c, sizeof(b)), "limit index not in the key");
	}
}

/*
 * The key kinds (wr_make_key_kind): a destination key masks the
 * destination, a flow key adds the source port after the address, and
 * the kind is part of the key, so a source's and a destination's bucket of
 * the same limit are never one, even for the same address.
 */
TEST_CASE(key_kinds_dst_and_flow)
{
	static const __u8 s6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0xaa, 0xbb, 0xcc, 0xdd,
				     1, 2, 3, 4 };
	static const __u8 d6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 9, 0, 8, 0x11, 0x22, 0x33, 0x44,
				     5, 6, 7, 8 };
	struct weir_key a, b, c;
	struct weir_rule r;
	struct weir_limit *l;
	struct wr_pkt p;
	__u32 d4[4] = { 0 }, dd6[4];

	rule_init(&r);
	r.uid = 77;
	l = &r.limits[1];

	/* per dst/24: 198.18.7.9 keys as 198.18.7.0, kind dst */
	l->key = WEIR_KEY_DST;
	l->plen4 = 24;
	l->plen6 = 48;
	wr_limit_set_masks(l);
	pkt4(&p, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 53);
	d4[0] = htonl(IP4(198, 18, 7, 9));
	memset(&a, 0xff, sizeof(a));
	wr_make_key_kind(&r, 1, l, &p, d4, &a);
	CHECK_EQ(a.kind, WEIR_KEY_DST);
	CHECK_EQ(a.plen, 24);
	CHECK_EQ(a.addr[0], htonl(IP4(198, 18, 7, 0)));
	CHECK_EQ(a.addr[1] | a.addr[2] | a.addr[3], 0);
	/* two destinations in different /24s: two keys; the source does not matter */
	d4[0] = htonl(IP4(198, 18, 8, 9));
	pkt4(&p, IP4(198, 18, 0, 200), WR_IPPROTO_UDP, 53);
	wr_make_key_kind(&r, 1, l, &p, d4, &b);
	CHECK(memcmp(&a, &b, sizeof(a)), "two destinations, one key");
	d4[0] = htonl(IP4(198, 18, 7, 200));
	wr_make_key_kind(&r, 1, l, &p, d4, &b);
	CHECK(!memcmp(&a, &b, sizeof(a)), "one /24 of destinations, two keys");
	/* the same address as source and as destination: different buckets */
	l->plen4 = 32;
	wr_limit_set_masks(l);
	pkt4(&p, IP4(198, 18, 7, 9), WR_IPPROTO_UDP, 53);
	d4[0] = p.saddr[0];
	wr_make_key_kind(&r, 1, l, &p, d4, &a);
	wr_make_key(&r, 1, l, &p, &b);
	CHECK_EQ(a.addr[0], b.addr[0]);
	CHECK(memcmp(&a, &b, sizeof(a)), "a dst key equals the src key of its address");
	/* IPv6 per dst6/48 */
	w6(dd6, d6);
	pkt6(&p, s6, WR_IPPROTO_TCP, 443);
	wr_make_key_kind(&r, 1, l, &p, dd6, &a);
	CHECK_EQ(a.family, 6);
	CHECK_EQ(a.plen, 48);
	CHECK_EQ(a.kind, WEIR_KEY_DST);
	CHECK_EQ(a.addr[0], dd6[0]);
	CHECK_EQ(a.addr[1], dd6[1] & htonl(0xffff0000));
	CHECK_EQ(a.addr[2] | a.addr[3], 0);

	/* per flow: the whole IPv4 source, the port in addr[1] */
	l->key = WEIR_KEY_FLOW;
	l->plen4 = 32;
	l->plen6 = 64;
	wr_limit_set_masks(l);
	pkt4(&p, IP4(198, 18, 0, 5), WR_IPPROTO_UDP, 53);
	p.sport = 40000;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &a);
	CHECK_EQ(a.kind, WEIR_KEY_FLOW);
	CHECK_EQ(a.plen, 32);
	CHECK_EQ(a.addr[0], htonl(IP4(198, 18, 0, 5)));
	CHECK_EQ(a.addr[1], 40000);
	CHECK_EQ(a.addr[2] | a.addr[3], 0);
	p.sport = 40001;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &b);
	CHECK(memcmp(&a, &b, sizeof(a)), "two source ports, one flow key");
	/* without ports (ICMP) the port word is 0, whatever sport holds */
	pkt4(&p, IP4(198, 18, 0, 5), WR_IPPROTO_ICMP, 0);
	p.sport = 1234;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &c);
	CHECK_EQ(c.addr[1], 0);
	CHECK_EQ(c.addr[0], a.addr[0]);
	/* IPv6: the /64, then the port; the interface identifier is not keyed */
	pkt6(&p, s6, WR_IPPROTO_UDP, 53);
	p.sport = 123;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &a);
	CHECK_EQ(a.family, 6);
	CHECK_EQ(a.plen, 64);
	CHECK_EQ(a.addr[0], p.saddr[0]);
	CHECK_EQ(a.addr[1], p.saddr[1]);
	CHECK_EQ(a.addr[2], 123);
	CHECK_EQ(a.addr[3], 0);
	p.sport = 124;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &b);
	CHECK(memcmp(&a, &b, sizeof(a)), "IPv6: two source ports, one flow key");
	p.sport = 123;
	p.saddr[3] ^= 1;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &b);
	CHECK(!memcmp(&a, &b, sizeof(a)), "IPv6: one /64 and port, two flow keys");

	/* per src through wr_make_key_kind is wr_make_key */
	l->key = WEIR_KEY_SRC;
	l->plen4 = 24;
	l->plen6 = 56;
	wr_limit_set_masks(l);
	pkt6(&p, s6, WR_IPPROTO_UDP, 53);
	p.sport = 999;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &a);
	wr_make_key(&r, 1, l, &p, &b);
	CHECK(!memcmp(&a, &b, sizeof(a)), "per src: the two builders differ (v6)");
	pkt4(&p, IP4(198, 18, 3, 4), WR_IPPROTO_UDP, 53);
	p.sport = 999;
	wr_make_key_kind(&r, 1, l, &p, p.saddr, &a);
	wr_make_key(&r, 1, l, &p, &b);
	CHECK(!memcmp(&a, &b, sizeof(a)), "per src: the two builders differ (v4)");
}

/* A set with a per-destination limit reads the destination (x_rules). */
TEST_CASE(key_dst_counts_in_x_rules)
{
	static struct weir_ruleset rs;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = 2;
	rule_init(&rs.rules[0]);
	rule_init(&rs.rules[1]);
	rs.rules[0].nr_limits = 1;
	rs.rules[1].nr_limits = 2;
	rs.rules[1].limits[1].key = WEIR_KEY_FLOW;
	CHECK(wr_ruleset_index(&rs, NULL) == 0, "index");
	CHECK_EQ(rs.x_rules, 0);
	rs.rules[1].limits[1].key = WEIR_KEY_DST;
	CHECK(wr_ruleset_index(&rs, NULL) == 0, "index");
	CHECK_EQ(rs.x_rules, 1);
	/* a limit past nr_limits does not count */
	rs.rules[1].nr_limits = 1;
	CHECK(wr_ruleset_index(&rs, NULL) == 0, "index");
	CHECK_EQ(rs.x_rules, 0);
}

/*
 * The algorithm dispatch the data path runs for every limit (wr_meter,
 * wr_idle_at, wr_win_uncharge): each kind admits what its own math says
 * through the one entry point.
 */
TEST_CASE(meter_dispatch_each_algorithm)
{
	const __u64 sec = 1000000000ULL, t0 = 1000 * sec;
	struct weir_limit l;
	__u64 word = 0, aux = 0, next, next_aux;
	int i, n;

	/* Token bucket, 10/s with a burst of 5: five at one instant, then refused. */
	limit_init(&l, 10, 5, WEIR_COST_PKT);
	l.algo = WEIR_ALGO_GCRA;
	for (i = 0, n = 0; i < 8; i++)
		if (wr_meter(&l, word, 0, t0, 1, &next, &next_aux)) {
			word = next;
			n++;
		}
	CHECK_EQ(n, 5);
	CHECK_EQ(wr_idle_at(&l, word), 0);
	/* 100 ms later, one more (one emission interval). */
	CHECK(wr_meter(&l, word, 0, t0 + sec / 10, 1, &next, &next_aux), "refill refused");

	/* Fixed window, 3 per second: three in a window, none more, three in the next. */
	memset(&l, 0, sizeof(l));
	l.algo = WEIR_ALGO_FIXED;
	l.rate = 3;
	word = 0;
	for (i = 0, n = 0; i < 5; i++)
		if (wr_meter(&l, word, 0, t0 + i, 1, &next, &next_aux)) {
			word = next;
			n++;
		}
	CHECK_EQ(n, 3);
	CHECK_EQ(word, wr_win_pack(t0 / sec, 3));
	CHECK_EQ(wr_idle_at(&l, word), t0 + sec);
	CHECK(wr_meter(&l, word, 0, t0 + sec, 1, &next, &next_aux), "next window refused");
	CHECK_EQ(next, wr_win_pack(t0 / sec + 1, 1));

	/* Sliding window, 10 per second: a full previous window weighs half at mid-window. */
	l.algo = WEIR_ALGO_SLIDING;
	l.rate = 10;
	word = wr_win_pack(t0 / sec, 10);
	aux = 0;
	for (i = 0, n = 0; i < 10; i++)
		if (wr_meter(&l, word, aux, t0 + sec + sec / 2, 1, &next, &next_aux)) {
			word = next;
			aux = next_aux;
			n++;
		}
	CHECK_EQ(n, 5);
	CHECK_EQ(aux, 10);
	CHECK_EQ(wr_idle_at(&l, word), t0 + 3 * sec);	/* still weighs in the window after */
}

/* What a window charge adds, wr_win_uncharge takes back, in its own window only. */
TEST_CASE(meter_uncharge_restores_the_charge)
{
	const __u64 sec = 1000000000ULL, t0 = 1000 * sec;
	struct weir_limit l;
	__u64 word = wr_win_pack(t0 / sec, 4), next, aux, back;

	memset(&l, 0, sizeof(l));
	l.algo = WEIR_ALGO_FIXED;
	l.rate = 100;
	CHECK(wr_meter(&l, word, 0, t0 + 5, 3, &next, &aux), "charge refused");
	CHECK(wr_win_uncharge(&l, next, t0 + 6, 3, &back), "uncharge refused");
	CHECK_EQ(back, word);
	/* In the next window the charge is gone with its window: nothing to take. */
	CHECK(!wr_win_uncharge(&l, next, t0 + sec, 3, &back), "uncharged another window");
	/* Never below zero. */
	CHECK(!wr_win_uncharge(&l, wr_win_pack(t0 / sec, 2), t0, 3, &back), "count went negative");
}

/* ---- the reflection preset: the amplifier ports, the flow keys ---- */

/* The ports issue 28 names, each an amplifier; their neighbours and common services not. */
TEST_CASE(reflect_amplifier_ports)
{
	static const __u16 amp[] = { 53, 123, 161, 389, 1900, 11211, 19, 17, 111, 5353, 3702, 520,
				     10001, 3283 };
	static const __u16 not_amp[] = { 0, 1, 16, 18, 20, 52, 54, 80, 122, 124, 443, 1899, 1901,
					 5354, 8080, 11210, 11212, 40000, 65535 };
	unsigned int i, n = 0, prev = 0, entries = 0;

	for (i = 0; i < sizeof(amp) / sizeof(amp[0]); i++)
		CHECK(wr_amp_port(amp[i]), "port %u is no amplifier", amp[i]);
	for (i = 0; i < sizeof(not_amp) / sizeof(not_amp[0]); i++)
		CHECK(!wr_amp_port(not_amp[i]), "port %u is an amplifier", not_amp[i]);
	/* The switch answers yes for exactly the table's ports, which go lowest first. */
#define COUNT_ENTRY(p, name) entries++; CHECK(p > prev, "%u after %u", p, prev); prev = p;
	WR_AMP_PORTS(COUNT_ENTRY)
#undef COUNT_ENTRY
	for (i = 0; i <= 65535; i++)
		n += wr_amp_port(i);
	CHECK_EQ(n, entries);
	CHECK(entries >= 14, "%u amplifiers", entries);
}

/* The parser gives the source port of TCP and UDP. */
TEST_CASE(parse_source_port)
{
	struct frame f, l;
	struct wr_pkt p;

	l4_udp(&l, 40001, 30);
	l.b[0] = 0;
	l.b[1] = 123;
	frame4(&f, IP4(198, 18, 5, 5), WR_IPPROTO_UDP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.sport, 123);
	CHECK_EQ(p.dport, 40001);
	l4_tcp(&l, 443, WEIR_TCP_SYN, 5);
	frame6(&f, DST6, WR_IPPROTO_TCP, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.sport, 40000);
	CHECK_EQ(p.dport, 443);
}

/* A query's key (egress) and its reply's key (ingress) are the same; anything else differs. */
TEST_CASE(reflect_flow_keys_match_query_and_reply)
{
	const __u32 srv = IP4(198, 18, 7, 7);
	struct weir_flow_key q = {}, r = {};
	struct frame f;
	struct wr_pkt p;

	query4(&f, srv, 123, 40123, 0, NULL);
	CHECK(wr_flow_of_egress(f.b, f.b + f.n, &q), "query not read");
	CHECK_EQ(q.family, 4);
	CHECK_EQ(q.raddr[0], htonl(srv));
	CHECK_EQ(q.rport, 123);
	CHECK_EQ(q.lport, 40123);
	reply4(&f, srv, 123, 40123, 0, NULL);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	memset(&r, 0xa5, sizeof(r));
	wr_flow_of_reply(&p, &r);
	CHECK(!memcmp(&q, &r, sizeof(q)), "the reply's key is not the query's");

	/* Tagged frames (one tag, QinQ) give the same key. */
	query4(&f, srv, 123, 40123, 1, TAG_Q);
	memset(&r, 0, sizeof(r));
	CHECK(wr_flow_of_egress(f.b, f.b + f.n, &r), "tagged query not read");
	CHECK(!memcmp(&q, &r, sizeof(q)), "a tag changed the key");
	query4(&f, srv, 123, 40123, 2, TAG_QINQ);
	CHECK(wr_flow_of_egress(f.b, f.b + f.n, &r), "QinQ query not read");
	CHECK(!memcmp(&q, &r, sizeof(q)), "two tags changed the key");

	/* Another local port, server or server port: another key. */
	reply4(&f, srv, 123, 40124, 0, NULL);
	parse(&f, &p);
	wr_flow_of_reply(&p, &r);
	CHECK(memcmp(&q, &r, sizeof(q)), "another local port, the same key");
	reply4(&f, srv + 1, 123, 40123, 0, NULL);
	parse(&f, &p);
	wr_flow_of_reply(&p, &r);
	CHECK(memcmp(&q, &r, sizeof(q)), "another server, the same key");
	reply4(&f, srv, 53, 40123, 0, NULL);
	parse(&f, &p);
	wr_flow_of_reply(&p, &r);
	CHECK(memcmp(&q, &r, sizeof(q)), "another server port, the same key");
}

/* IPv6 queries, through extension headers; what is not a UDP query's head is not read. */
TEST_CASE(reflect_flow_of_egress_ipv6_and_refusals)
{
	static const __u8 srv6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
	struct weir_flow_key k = {};
	struct frame f, l, pl;
	size_t cut;

	/* ip6() puts src first, then DST6: the query goes from DST6's place... set by hand. */
	l4_udp(&l, 53, 40);
	l.b[0] = 0x9c;
	l.b[1] = 0x41;		/* local port 40001 */
	frame6(&f, DST6, WR_IPPROTO_UDP, &l);
	memcpy(f.b + 14 + 24, srv6, 16);	/* the destination: the server */
	CHECK(wr_flow_of_egress(f.b, f.b + f.n, &k), "IPv6 query not read");
	CHECK_EQ(k.family, 6);
	CHECK(!memcmp(k.raddr, srv6, 16), "IPv6 remote address");
	CHECK_EQ(k.rport, 53);
	CHECK_EQ(k.lport, 40001);

	/* A hop-by-hop header, then UDP. */
	pl.n = 0;
	put8(&pl, WR_IPPROTO_UDP);
	put8(&pl, 0);
	zeros(&pl, 6);
	putn(&pl, l.b, l.n);
	frame6(&f, DST6, WR_IPPROTO_HOPOPTS, &pl);
	memcpy(f.b + 14 + 24, srv6, 16);
	memset(&k, 0, sizeof(k));
	CHECK(wr_flow_of_egress(f.b, f.b + f.n, &k), "query after hop-by-hop not read");
	CHECK_EQ(k.rport, 53);
	CHECK_EQ(k.lport, 40001);

	/* A later fragment carries no ports. */
	query4(&f, IP4(198, 18, 7, 7), 123, 40123, 0, NULL);
	f.b[14 + 6] = 0x00;
	f.b[14 + 7] = 0x10;
	CHECK(!wr_flow_of_egress(f.b, f.b + f.n, &k), "a later fragment read");
	/* TCP is not recorded. */
	l4_tcp(&l, 53, WEIR_TCP_SYN, 5);
	frame4(&f, IP4(198, 18, 7, 7), WR_IPPROTO_TCP, &l);
	CHECK(!wr_flow_of_egress(f.b, f.b + f.n, &k), "TCP read");
	/* Cut anywhere before the UDP ports end: not read (and no read past the end). */
	query4(&f, IP4(198, 18, 7, 7), 123, 40123, 0, NULL);
	for (cut = 0; cut < 14 + 20 + 4; cut++)
		CHECK(!wr_flow_of_egress(f.b, f.b + cut, &k), "read a frame cut at %zu", cut);
	CHECK(wr_flow_of_egress(f.b, f.b + 14 + 20 + 8, &k), "the headers alone not read");
}

int main(void)
{
	return check_run_all();
}

/* ------------------------------------------------------------------------ */
/* The further match fields (weir_rule.xmatch)                              */
/* ------------------------------------------------------------------------ */

/* A UDP packet from sport to dport, len bytes long. */
static void pkt_ports(struct wr_pkt *p, __u8 proto, __u16 sport, __u16 dport, __u32 len)
{
	pkt4(p, IP4(198, 18, 0, 1), proto, dport);
	p->sport = sport;
	p->len = len;
}

TEST_CASE(match_sport_range_edges)
{
	struct weir_rule r;
	struct wr_pkt p;
	static const struct {
		__u16 port;
		int want;
	} cases[] = { { 0, 0 }, { 999, 0 }, { 1000, 1 }, { 1500, 1 }, { 2000, 1 }, { 2001, 0 },
		      { 65535, 0 } };
	size_t i;

	rule_init(&r);
	r.xmatch = WEIR_X_SPORT;
	r.sport_lo = 1000;
	r.sport_hi = 2000;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pkt_ports(&p, WR_IPPROTO_UDP, cases[i].port, 53, 100);
		CHECK(wr_rule_match(&r, &p) == cases[i].want, "udp sport %u", cases[i].port);
		pkt_ports(&p, WR_IPPROTO_TCP, cases[i].port, 53, 100);
		CHECK(wr_rule_match(&r, &p) == cases[i].want, "tcp sport %u", cases[i].port);
	}
	/* One port: lo == hi, and the whole range. */
	r.sport_lo = r.sport_hi = 123;
	pkt_ports(&p, WR_IPPROTO_UDP, 123, 53, 100);
	CHECK(wr_rule_match(&r, &p), "sport 123");
	p.sport = 124;
	CHECK(!wr_rule_match(&r, &p), "sport 124 matched 123");
	r.sport_lo = 0;
	r.sport_hi = 65535;
	CHECK(wr_rule_match(&r, &p), "sport 0-65535");
	/* No ports: ICMP and a later fragment never match a sport rule, even 0-65535. */
	pkt_ports(&p, WR_IPPROTO_ICMP, 0, 0, 100);
	CHECK(!wr_rule_match(&r, &p), "icmp matched a sport rule");
	pkt_ports(&p, WR_IPPROTO_UDP, 123, 53, 100);
	p.flags = WR_PKT_FRAG | WR_PKT_LATER;
	CHECK(!wr_rule_match(&r, &p), "a later fragment matched a sport rule");
	/* Without its bit the field is not looked at. */
	r.xmatch = 0;
	r.sport_lo = r.sport_hi = 1;
	pkt_ports(&p, WR_IPPROTO_UDP, 123, 53, 100);
	CHECK(wr_rule_match(&r, &p), "sport used without WEIR_X_SPORT");
}

TEST_CASE(match_len_range_edges)
{
	struct weir_rule r;
	struct wr_pkt p;
	static const __u32 lens[] = { 0, 59, 60, 61, 1499, 1500, 1501, 65575, WR_GSO_MAX_LEN };
	size_t i;

	rule_init(&r);
	r.xmatch = WEIR_X_LEN;
	r.len_lo = 60;
	r.len_hi = 1500;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		pkt_ports(&p, WR_IPPROTO_UDP, 1, 53, lens[i]);
		CHECK(wr_rule_match(&r, &p) == (lens[i] >= 60 && lens[i] <= 1500), "len %u",
		      lens[i]);
		/* len needs no ports: ICMP and fragments are measured alike. */
		pkt_ports(&p, WR_IPPROTO_ICMP, 0, 0, lens[i]);
		CHECK(wr_rule_match(&r, &p) == (lens[i] >= 60 && lens[i] <= 1500), "icmp len %u",
		      lens[i]);
	}
	r.len_lo = r.len_hi = 468;
	pkt_ports(&p, WR_IPPROTO_UDP, 1, 53, 468);
	CHECK(wr_rule_match(&r, &p), "len 468 exactly");
	p.len = 469;
	CHECK(!wr_rule_match(&r, &p), "len 469 matched 468");
}

/* iface: only the ifindex the rule names; a rule without it, every one. */
TEST_CASE(match_iface)
{
	struct weir_rule r;
	unsigned int i;

	rule_init(&r);
	for (i = 0; i < 70000; i += 997)
		CHECK(wr_rule_match_iface(&r, i), "a rule without iface, ifindex %u", i);
	r.xmatch = WEIR_X_IFACE;
	r.ifindex = 7;
	CHECK(wr_rule_match_iface(&r, 7), "its own ifindex");
	CHECK(!wr_rule_match_iface(&r, 6), "ifindex 6");
	CHECK(!wr_rule_match_iface(&r, 8), "ifindex 8");
	CHECK(!wr_rule_match_iface(&r, 7 + 65536), "ifindex 7 + 65536");
	/* An interface gone when the set was written: 0, which no packet has. */
	r.ifindex = 0;
	CHECK(!wr_rule_match_iface(&r, 7), "a gone interface's rule");
	/* The further fields' bits are apart: iface does not make sport match. */
	r.ifindex = 7;
	r.xmatch |= WEIR_X_SPORT;
	CHECK(wr_rule_match_iface(&r, 7), "iface with sport");
}

TEST_CASE(match_ttl_dscp_edges)
{
	struct weir_rule r;
	struct wr_pkt p;
	struct wr_pkt_x x;
	unsigned int t, d;

	pkt_ports(&p, WR_IPPROTO_UDP, 1, 53, 100);
	memset(&x, 0, sizeof(x));
	rule_init(&r);
	CHECK(wr_rule_match_x(&r, &p, &x), "a rule without further fields");
	r.xmatch = WEIR_X_TTL;
	r.ttl_lo = 30;
	r.ttl_hi = 64;
	for (t = 0; t <= 255; t++) {
		x.ttl = t;
		CHECK(wr_rule_match_x(&r, &p, &x) == (t >= 30 && t <= 64), "ttl %u", t);
	}
	r.ttl_lo = 0;
	r.ttl_hi = 255;
	for (t = 0; t <= 255; t++) {
		x.ttl = t;
		CHECK(wr_rule_match_x(&r, &p, &x), "ttl %u in 0-255", t);
	}
	r.xmatch = WEIR_X_DSCP;
	r.dscp = 46;
	for (d = 0; d < 64; d++) {
		x.dscp = d;
		CHECK(wr_rule_match_x(&r, &p, &x) == (d == 46), "dscp %u", d);
	}
	r.dscp = 0;
	x.dscp = 0;
	CHECK(wr_rule_match_x(&r, &p, &x), "dscp 0");
	/* Both: each must hold. */
	r.xmatch = WEIR_X_DSCP | WEIR_X_TTL;
	r.ttl_lo = r.ttl_hi = 255;
	x.ttl = 254;
	CHECK(!wr_rule_match_x(&r, &p, &x), "ttl 254 with dscp 0 matched ttl 255");
	x.ttl = 255;
	CHECK(wr_rule_match_x(&r, &p, &x), "ttl 255 and dscp 0");
}

TEST_CASE(match_frag_modes)
{
	/* A packet's kind (flags) against each mode: none, first, later, any. */
	static const struct {
		__u8 flags;
		int want[4];
	} kinds[] = {
		{ WR_PKT_L4 | WR_PKT_PORTS, { 1, 0, 0, 0 } },
		{ WR_PKT_L4 | WR_PKT_PORTS | WR_PKT_FRAG, { 0, 1, 0, 1 } },
		{ WR_PKT_FRAG | WR_PKT_LATER, { 0, 0, 1, 1 } },
	};
	struct weir_rule r;
	struct wr_pkt p;
	size_t k;
	int f;

	rule_init(&r);
	r.xmatch = WEIR_X_FRAG;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (f = WEIR_FRAG_NONE; f <= WEIR_FRAG_ANY; f++) {
			pkt_ports(&p, WR_IPPROTO_UDP, 1, 53, 100);
			p.flags = kinds[k].flags;
			r.frag = f;
			CHECK(wr_rule_match(&r, &p) == kinds[k].want[f], "kind %zu frag mode %d", k,
			      f);
		}
}

/* dst prefix d of r: an IPv4 one (net host order) or an IPv6 one. */
static void rule_dst4(struct weir_rule *r, int d, __u32 net, unsigned int plen)
{
	r->xmatch |= WEIR_X_DST;
	r->nr_dst = d + 1;
	r->dst_family[d] = 4;
	r->dst_plen[d] = plen;
	memset(r->dst_net[d], 0, sizeof(r->dst_net[d]));
	memset(r->dst_mask[d], 0, sizeof(r->dst_mask[d]));
	r->dst_mask[d][0] = wr_prefix_word(plen, 0);
	r->dst_net[d][0] = htonl(net) & r->dst_mask[d][0];
}

static void rule_dst6(struct weir_rule *r, int d, const __u8 *a, unsigned int plen)
{
	__u32 w[4];
	int i;

	w6(w, a);
	r->xmatch |= WEIR_X_DST;
	r->nr_dst = d + 1;
	r->dst_family[d] = 6;
	r->dst_plen[d] = plen;
	for (i = 0; i < 4; i++) {
		r->dst_mask[d][i] = wr_prefix_word(plen, i);
		r->dst_net[d][i] = w[i] & r->dst_mask[d][i];
	}
}

TEST_CASE(match_dst_prefix_edges)
{
	static const __u8 net6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2 };
	struct weir_rule r;
	struct wr_pkt p4, p6;
	struct wr_pkt_x x;
	__u8 a6[16];
	unsigned int plen;

	pkt_ports(&p4, WR_IPPROTO_UDP, 1, 53, 100);
	pkt6(&p6, SRC6, WR_IPPROTO_UDP, 53);
	memset(&x, 0, sizeof(x));
	/* IPv4: the first and last address of each prefix in, one either side out. */
	for (plen = 1; plen <= 32; plen++) {
		__u32 net = IP4(198, 18, 0, 0) & ~((plen < 32 ? 0xffffffffu >> plen : 0));
		__u32 last = net | (plen < 32 ? 0xffffffffu >> plen : 0);

		rule_init(&r);
		rule_dst4(&r, 0, net, plen);
		x.daddr[0] = htonl(net);
		CHECK(wr_rule_match_x(&r, &p4, &x), "/%u: its first address", plen);
		x.daddr[0] = htonl(last);
		CHECK(wr_rule_match_x(&r, &p4, &x), "/%u: its last address", plen);
		x.daddr[0] = htonl(last + 1);
		CHECK(!wr_rule_match_x(&r, &p4, &x) || last == 0xffffffffu,
		      "/%u: the address after it", plen);
		x.daddr[0] = htonl(net - 1);
		CHECK(!wr_rule_match_x(&r, &p4, &x) || net == 0, "/%u: the address before it",
		      plen);
		/* Words 1-3, which the data path leaves from an earlier IPv6 packet, do not count. */
		x.daddr[0] = htonl(net);
		x.daddr[1] = x.daddr[2] = x.daddr[3] = 0xa5a5a5a5u;
		CHECK(wr_rule_match_x(&r, &p4, &x), "/%u: stale words 1-3 counted", plen);
		x.daddr[0] = htonl(last + 1);
		CHECK(!wr_rule_match_x(&r, &p4, &x) || last == 0xffffffffu,
		      "/%u: stale words 1-3, the address after it", plen);
		x.daddr[1] = x.daddr[2] = x.daddr[3] = 0;
		/* The same words in an IPv6 packet are not an IPv4 destination. */
		x.daddr[0] = htonl(net);
		CHECK(!wr_rule_match_x(&r, &p6, &x), "/%u matched an IPv6 packet", plen);
	}
	/* IPv6 /64: an address in it, the last one, and the next /64. */
	rule_init(&r);
	rule_dst6(&r, 0, net6, 64);
	memcpy(a6, net6, 16);
	a6[15] = 9;
	w6(x.daddr, a6);
	CHECK(wr_rule_match_x(&r, &p6, &x), "v6 /64: an address in it");
	memset(a6 + 8, 0xff, 8);
	w6(x.daddr, a6);
	CHECK(wr_rule_match_x(&r, &p6, &x), "v6 /64: its last address");
	memcpy(a6, net6, 16);
	a6[7] = 3;
	w6(x.daddr, a6);
	CHECK(!wr_rule_match_x(&r, &p6, &x), "v6 /64: the next /64");
	CHECK(!wr_rule_match_x(&r, &p4, &x), "v6 prefix matched an IPv4 packet");
	/* Several prefixes, of both families: any one matches. */
	rule_init(&r);
	rule_dst4(&r, 0, IP4(198, 18, 1, 0), 24);
	rule_dst6(&r, 1, net6, 48);
	rule_dst4(&r, 2, IP4(198, 19, 0, 7), 32);
	memset(&x, 0, sizeof(x));
	x.daddr[0] = htonl(IP4(198, 19, 0, 7));
	CHECK(wr_rule_match_x(&r, &p4, &x), "the third prefix");
	x.daddr[0] = htonl(IP4(198, 19, 0, 8));
	CHECK(!wr_rule_match_x(&r, &p4, &x), "none of three");
	x.daddr[0] = htonl(IP4(198, 18, 1, 255));
	CHECK(wr_rule_match_x(&r, &p4, &x), "the first prefix");
	/* A prefix past nr_dst is not one of the rule's. */
	r.nr_dst = 2;
	x.daddr[0] = htonl(IP4(198, 19, 0, 7));
	CHECK(!wr_rule_match_x(&r, &p4, &x), "a prefix past nr_dst matched");
	w6(x.daddr, net6);
	CHECK(wr_rule_match_x(&r, &p6, &x), "the IPv6 prefix");
}

TEST_CASE(match_payload_terms)
{
	struct weir_rule r;
	__u32 w[WEIR_MAX_PAY] = { 0 };
	unsigned int t;

	rule_init(&r);
	CHECK(wr_rule_match_pay(&r, w, 0), "a rule without terms");
	r.xmatch = WEIR_X_PAYLOAD;
	r.nr_pay = 1;
	r.pay[0].mask = htonl(0xff000000);
	r.pay[0].value = htonl(0x17000000);
	w[0] = htonl(0x17abcdef);
	CHECK(wr_rule_match_pay(&r, w, 1), "masked byte equal");
	CHECK(!wr_rule_match_pay(&r, w, 0), "a word past the packet's end matched");
	w[0] = htonl(0x16ffffff);
	CHECK(!wr_rule_match_pay(&r, w, 1), "masked byte differs");
	w[0] = htonl(0x18000000);
	CHECK(!wr_rule_match_pay(&r, w, 1), "masked byte one above");
	/* Four terms: every one must hold and be within the packet. */
	r.nr_pay = WEIR_MAX_PAY;
	for (t = 0; t < WEIR_MAX_PAY; t++) {
		r.pay[t].off = t * 4;
		r.pay[t].mask = 0xffffffffu;
		r.pay[t].value = htonl(0x01010101u * (t + 1));
		w[t] = r.pay[t].value;
	}
	CHECK(wr_rule_match_pay(&r, w, 0xf), "four terms");
	for (t = 0; t < WEIR_MAX_PAY; t++) {
		CHECK(!wr_rule_match_pay(&r, w, 0xf & ~(1u << t)), "term %u missing", t);
		w[t] ^= htonl(1);
		CHECK(!wr_rule_match_pay(&r, w, 0xf), "term %u's low bit", t);
		w[t] ^= htonl(1);
	}
	/* Terms past nr_pay are not the rule's. */
	r.nr_pay = 2;
	w[3] = 0;
	CHECK(wr_rule_match_pay(&r, w, 0x3), "terms past nr_pay used");
	/* A rule with terms matches packets with a TCP or UDP header only. */
	{
		struct wr_pkt p;

		pkt_ports(&p, WR_IPPROTO_ICMP, 0, 0, 100);
		CHECK(!wr_rule_match(&r, &p), "icmp matched a payload rule");
		pkt_ports(&p, WR_IPPROTO_UDP, 1, 53, 100);
		CHECK(wr_rule_match(&r, &p), "udp did not pass wr_rule_match with terms");
	}
}

/* What wr_parse puts in struct wr_pkt_x, and sport, with VLANs, options and extension headers. */
TEST_CASE(parse_further_fields)
{
	struct frame f, l, pl;
	struct wr_pkt p;
	__u32 w[4];

	/* UDP over IPv4 behind two VLAN tags: payload after 14 + 8 + 20 + 8 bytes. */
	l4_udp(&l, 53, 12);
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, IP4(198, 18, 0, 9), WR_IPPROTO_UDP, 5, 0, 0, &l);
	f.b[22 + 1] = 46 << 2;		/* TOS: DSCP 46 */
	memset(&px, 0xaa, sizeof(px));
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(p.sport, 40000);
	CHECK_EQ(p.dport, 53);
	CHECK_EQ(px.payoff, 14 + 8 + 20 + 8);
	CHECK_EQ(px.ttl, 64);
	CHECK_EQ(px.dscp, 46);
	CHECK_EQ(ntohl(px.daddr[0]), IP4(198, 18, 0, 1));
	CHECK_EQ(px.daddr[1] | px.daddr[2] | px.daddr[3], 0);
	/* TCP with options over IPv4 with options: both lengths count. */
	l4_tcp(&l, 80, WEIR_TCP_SYN, 8);
	eth_ip4(&f, IP4(198, 18, 0, 9), WR_IPPROTO_TCP, 7, 0, 0, &l);
	CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
	CHECK_EQ(px.payoff, 14 + 28 + 32);
	CHECK_EQ(p.sport, 40000);
	/* IPv6 with a hop-by-hop and a routing header, hop limit 3, traffic class 0xb8. */
	{
		static const __u8 hr[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_ROUTING };

		l4_udp(&l, 123, 4);
		chain6(&pl, hr, 2, WR_IPPROTO_UDP, 0, &l);
		eth_ip6(&f, SRC6, WR_IPPROTO_HOPOPTS, 3, -1, &pl);
		f.b[14] = 0x6b;			/* version 6, traffic class high nibble 0xb */
		f.b[15] = 0x80;			/* traffic class low nibble 0x8: 0xb8, DSCP 46 */
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(px.ttl, 3);
		CHECK_EQ(px.dscp, 46);
		CHECK_EQ(px.payoff, 14 + 40 + (pl.n - l.n) + 8);
		w6(w, DST6);
		CHECK(!memcmp(px.daddr, w, sizeof(w)), "IPv6 destination");
	}
	/* A first IPv6 fragment: its ports, then its payload; a later one is FRAG | LATER. */
	{
		static const __u8 fr[] = { WR_IPPROTO_FRAGMENT };

		l4_udp(&l, 53, 40);
		chain6(&pl, fr, 1, WR_IPPROTO_UDP, 1, &l);
		frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.flags & (WR_PKT_FRAG | WR_PKT_LATER), WR_PKT_FRAG);
		CHECK_EQ(px.payoff, 14 + 40 + 8 + 8);
		chain6(&pl, fr, 1, WR_IPPROTO_UDP, 185 << 3, &l);
		frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
		CHECK_EQ(parse(&f, &p), WR_PARSE_IP);
		CHECK_EQ(p.flags, WR_PKT_FRAG | WR_PKT_LATER);
	}
}
