// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests of the adaptive shedding curve (include/weir_shed.h):
 * the direction from utilization, S moved by min(dt, delay) * d / ramp and
 * clamped to [-delay/ramp, 1], the per-class probabilities and the data
 * path's 32-bit thresholds. Time is simulated: every step is given its dt.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "weir.h"
#include "weir_shed.h"
#include "check.h"

/* Doubles that the curve computes exactly up to rounding. */
#define EPS 1e-9

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define CHECK_NEAR(got, want, eps)                                                  \
	do {                                                                        \
		double g_ = (got), w_ = (want);                                     \
		if (!(fabs(g_ - w_) <= (eps)))                                      \
			CHECK_FAIL("%s = %.12g, want %.12g", #got, g_, w_);         \
	} while (0)

static const struct wr_curve def = WR_CURVE_DEFAULT;

/* ------------------------------------------------------------------------ */
/* The reference case of DESIGN.md 1.4                                     */
/* ------------------------------------------------------------------------ */

/*
 * From rest (S at the floor -28/120), u = 1 sampled once a second for 149
 * samples: each sample steps S by dt = 1 s. A packet arriving at a sample
 * meets the probability the controller wrote at the previous step, i.e.
 * max(S, 0) *before* that sample's step, and the expected drops are the sum
 * of those probabilities:
 *
 *   S before sample k (k = 0..148) = (k - 28) / 120, so the sum is
 *   1/120 + 2/120 + ... + 120/120 = 60.5            (k = 29..148)
 *
 * Reading S *after* each step instead adds one more full sample: 61.5.
 * Both lie in 60 +- 2; the test checks the first and, to show the margin
 * means something, that the integer-division slip (floor -1, so a delay of
 * 120 s) gives about 3.6 and fails the same bounds. After the 149th step S
 * is exactly 1 (clamped; it reaches 1, up to rounding, at the 148th).
 */
static double reference_drops(const struct wr_curve *c, int samples, int after, double *s_end)
{
	double s = wr_shed_floor(c), drops = 0;
	int k;

	for (k = 0; k < samples; k++) {
		if (!after)
			drops += s > 0 ? s : 0;
		s = wr_shed_step(c, s, 1.0, 1.0);
		if (after)
			drops += s > 0 ? s : 0;
	}
	*s_end = s;
	return drops;
}

TEST_CASE(shed_reference_60_drops_in_149_samples)
{
	struct wr_curve slip = def;
	double before, after, s_end, s2;

	before = reference_drops(&def, 149, 0, &s_end);
	CHECK_NEAR(before, 60.5, 1e-6);
	CHECK_RANGE(before, 58, 62);
	CHECK(s_end == 1.0, "S after 149 samples is %.12g, want 1", s_end);
	after = reference_drops(&def, 149, 1, &s2);
	CHECK_NEAR(after, 61.5, 1e-6);
	CHECK_RANGE(after, 58, 62);

	/* The slip: -28/120 computed in integers is -1, a 120 s delay. */
	slip.delay_s = 120;
	before = reference_drops(&slip, 149, 0, &s_end);
	CHECK(before < 58, "the integer-division slip gives %.3f drops, want < 58", before);
	CHECK(s_end < 1, "with the slip S ends at %.3f, want < 1", s_end);
}

/* Shedding starts only after 28 s of overload and sheds everything 120 s later. */
TEST_CASE(shed_starts_after_delay_full_after_ramp)
{
	double s = wr_shed_floor(&def);
	int k, first_pos = -1, first_one = -1;

	CHECK_NEAR(s, -28.0 / 120, 1e-15);
	for (k = 1; k <= 200; k++) {
		s = wr_shed_step(&def, s, 1.0, 1.0);
		if (first_pos < 0 && s > EPS)
			first_pos = k;
		/* 148 steps of 1/120 sum to 1 only up to rounding */
		if (first_one < 0 && s >= 1 - EPS)
			first_one = k;
	}
	CHECK_EQ(first_pos, 29);
	CHECK_EQ(first_one, 148);
	CHECK(s == 1.0, "S after 200 s of overload is %.12g", s);
}

/* ------------------------------------------------------------------------ */
/* Direction                                                                */
/* ------------------------------------------------------------------------ */

TEST_CASE(shed_direction_edges)
{
	static const struct {
		double u, d;
	} t[] = {
		{ -1.0, -1 },		/* below 0: clamped */
		{ -0.5, -1 },
		{ 0.0, -1 },		/* idle: recover at full speed */
		{ 0.35, -0.5 },
		{ 0.69, 0.69 / 0.7 - 1 },
		{ 0.7, 0 },		/* exactly good: dead zone */
		{ 0.75, 0 },
		{ 0.7999, 0 },
		{ 0.8, 0 },		/* exactly bad: shed, at speed 0 */
		{ 0.85, 0.25 },
		{ 0.9, 0.5 },
		{ 1.0, 1 },
		{ 1.2, 1 },		/* above 1: clamped */
		{ 5.0, 1 },
		{ INFINITY, 1 },
		{ -INFINITY, -1 },
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(t); i++) {
		double d = wr_shed_direction(&def, t[i].u);

		if (!(fabs(d - t[i].d) <= EPS))
			CHECK_FAIL("direction(u = %g) = %.12g, want %.12g", t[i].u, d, t[i].d);
	}
	/* Just below good recovers, however slightly; just above bad sheds. */
	CHECK(wr_shed_direction(&def, nextafter(0.7, 0)) < 0, "just below good");
	CHECK(wr_shed_direction(&def, nextafter(0.8, 1)) > 0, "just above bad");
	CHECK(wr_shed_direction(&def, nextafter(0.8, 0)) == 0, "just below bad");
}

/* In the dead zone S does not move, from anywhere in its range, for any dt. */
TEST_CASE(shed_dead_zone_leaves_s)
{
	static const double us[] = { 0.7, 0.72, 0.75, 0.79, 0.7999999 };
	static const double dts[] = { 0.001, 1, 5, 28, 1000 };
	double starts[] = { wr_shed_floor(&def), -0.1, 0, 0.3, 0.5, 0.99, 1 };
	size_t i, j, k;

	for (i = 0; i < ARRAY_LEN(us); i++)
		for (j = 0; j < ARRAY_LEN(dts); j++)
			for (k = 0; k < ARRAY_LEN(starts); k++) {
				double s = wr_shed_step(&def, starts[k], us[i], dts[j]);

				if (s != starts[k])
					CHECK_FAIL("u %g dt %g moved S from %.12g to %.12g", us[i],
						   dts[j], starts[k], s);
			}
	/* A long stay in the dead zone: 10 000 one-second samples. */
	{
		double s = 0.4;

		for (i = 0; i < 10000; i++)
			s = wr_shed_step(&def, s, 0.75, 1);
		CHECK(s == 0.4, "S drifted to %.12g in the dead zone", s);
	}
}

/*
 * Recovery from S = 1 at u = 0 (d = -1): 120 s until nothing is shed any
 * more (S <= 0), 148 s back to rest.
 */
TEST_CASE(shed_recovery_takes_configured_time)
{
	double s = 1;
	int k, zero_at = -1, rest_at = -1;

	for (k = 1; k <= 300; k++) {
		s = wr_shed_step(&def, s, 0.0, 1.0);
		if (zero_at < 0 && s <= EPS)
			zero_at = k;
		if (rest_at < 0 && s <= wr_shed_floor(&def) + EPS)
			rest_at = k;
	}
	CHECK_EQ(zero_at, 120);
	CHECK_EQ(rest_at, 148);
	CHECK(s == wr_shed_floor(&def), "S after 300 s idle is %.12g", s);
	/* At u = 0.35 (d = -0.5) the same takes twice as long. */
	s = 1;
	for (k = 1; k <= 240; k++)
		s = wr_shed_step(&def, s, 0.35, 1.0);
	CHECK_NEAR(s, 0, EPS);
	/* Every class sheds nothing once S <= 0. */
	for (k = 0; k <= WEIR_MAX_CLASS; k++)
		CHECK_EQ(wr_shed_threshold(wr_shed_class_prob(s - EPS, k)), 0);
}

/* dt is capped at the delay: one step never moves S by more than delay/ramp. */
TEST_CASE(shed_dt_capped)
{
	double floor = wr_shed_floor(&def), s28, s;

	s28 = wr_shed_step(&def, floor, 1.0, 28);
	CHECK_NEAR(s28, 0, EPS);
	CHECK(wr_shed_step(&def, floor, 1.0, 29) == s28, "dt 29 s moved S more than 28 s");
	CHECK(wr_shed_step(&def, floor, 1.0, 3600) == s28, "dt 1 h moved S more than 28 s");
	CHECK(wr_shed_step(&def, floor, 1.0, INFINITY) == s28, "dt inf");
	/* Below the cap dt counts in full. */
	CHECK_NEAR(wr_shed_step(&def, floor, 1.0, 27), -1.0 / 120, EPS);
	/* Recovering too: from 1, one huge gap moves at most 28/120. */
	CHECK_NEAR(wr_shed_step(&def, 1, 0.0, 1e6), 1 - 28.0 / 120, EPS);
	/* A clock that went backwards moves nothing. */
	CHECK(wr_shed_step(&def, 0.5, 1.0, -5) == 0.5, "negative dt moved S");
	CHECK(wr_shed_step(&def, 0.5, 0.0, 0) == 0.5, "zero dt moved S");
	/* A day-long gap (a suspended host) counts as 28 s, no more. */
	s = wr_shed_step(&def, 0.5, 1.0, 86400);
	CHECK_NEAR(s, 0.5 + 28.0 / 120, EPS);
}

/* S never leaves [floor, 1], whatever u and dt. */
TEST_CASE(shed_s_clamped)
{
	static const double us[] = { -10, 0, 0.5, 0.75, 0.9, 1, 10 };
	static const double dts[] = { 0, 0.5, 1, 10, 28, 100 };
	double s, floor = wr_shed_floor(&def);
	size_t i, j;
	int k;

	for (i = 0; i < ARRAY_LEN(us); i++)
		for (j = 0; j < ARRAY_LEN(dts); j++) {
			s = 0;
			for (k = 0; k < 50; k++) {
				s = wr_shed_step(&def, s, us[i], dts[j]);
				if (s < floor || s > 1)
					CHECK_FAIL("u %g dt %g: S = %.12g after %d steps", us[i],
						   dts[j], s, k + 1);
			}
		}
}

/*
 * A utilization that could not be computed (0/0 from a signal, "nan" in
 * the application's file) must not leave S outside [floor, 1]: S is what
 * every later step starts from. And a probability that is not a number
 * must not become a threshold above 2^32: the data path would shed every
 * packet of the class.
 */
TEST_CASE(shed_nan_keeps_s_and_threshold_in_range)
{
	double floor = wr_shed_floor(&def), s;
	volatile double nan = NAN;	/* not folded at compile time */
	__u64 th;

	s = wr_shed_step(&def, 0.5, nan, 1);
	CHECK(s >= floor && s <= 1, "step(S 0.5, u NaN) = %g", s);
	s = wr_shed_step(&def, 0.5, 1.0, nan);
	CHECK(s >= floor && s <= 1, "step(S 0.5, dt NaN) = %g", s);
	th = wr_shed_threshold(nan);
	CHECK(th <= (1ULL << 32), "threshold(NaN) = %llu, above 2^32", (unsigned long long)th);
	th = wr_shed_threshold(wr_shed_class_prob(nan, 3));
	CHECK(th <= (1ULL << 32), "threshold(class 3 at S NaN) = %llu, above 2^32",
	      (unsigned long long)th);
}

/* ------------------------------------------------------------------------ */
/* Classes                                                                  */
/* ------------------------------------------------------------------------ */

TEST_CASE(shed_classes_lowest_first)
{
	static const struct {
		double s, p1, p2, p3;
	} t[] = {
		{ -28.0 / 120, 0, 0, 0 },
		{ 0, 0, 0, 0 },
		{ 1.0 / 6, 0, 0, 0.5 },
		{ 1.0 / 3, 0, 0, 1 },
		{ 0.5, 0, 0.5, 1 },
		{ 2.0 / 3, 0, 1, 1 },
		{ 0.75, 0.25, 1, 1 },
		{ 5.0 / 6, 0.5, 1, 1 },
		{ 1, 1, 1, 1 },
	};
	size_t i;
	int k;

	for (i = 0; i < ARRAY_LEN(t); i++) {
		double p1 = wr_shed_class_prob(t[i].s, 1), p2 = wr_shed_class_prob(t[i].s, 2),
		       p3 = wr_shed_class_prob(t[i].s, 3);

		if (fabs(p1 - t[i].p1) > EPS || fabs(p2 - t[i].p2) > EPS ||
		    fabs(p3 - t[i].p3) > EPS)
			CHECK_FAIL("S %.4f: classes 1..3 shed %.4f %.4f %.4f, want %.4f %.4f %.4f",
				   t[i].s, p1, p2, p3, t[i].p1, t[i].p2, t[i].p3);
	}
	/* Over the whole range: a lower class never sheds less than a higher one. */
	for (k = -300; k <= 1200; k++) {
		double s = k / 1000.0;
		double p1 = wr_shed_class_prob(s, 1), p2 = wr_shed_class_prob(s, 2),
		       p3 = wr_shed_class_prob(s, 3);

		if (!(p3 >= p2 && p2 >= p1 && p1 >= 0 && p3 <= 1)) {
			CHECK_FAIL("S %.3f: classes 1..3 shed %.4f %.4f %.4f", s, p1, p2, p3);
			break;
		}
		/* A higher class is fully shed before the next one starts. */
		if ((p2 > 0 && p3 < 1) || (p1 > 0 && p2 < 1)) {
			CHECK_FAIL("S %.3f: overlap, classes 1..3 shed %.4f %.4f %.4f", s, p1, p2,
				   p3);
			break;
		}
	}
}

/* Class 0 is never shed, nor is a class number out of range. */
TEST_CASE(shed_class0_never)
{
	int k;

	for (k = -300; k <= 2000; k++) {
		double s = k / 1000.0;

		if (wr_shed_class_prob(s, 0) != 0 || wr_shed_threshold(wr_shed_class_prob(s, 0))) {
			CHECK_FAIL("class 0 shed at S %.3f", s);
			break;
		}
		if (wr_shed_class_prob(s, WEIR_MAX_CLASS + 1) != 0 ||
		    wr_shed_class_prob(s, ~0u) != 0) {
			CHECK_FAIL("class out of range shed at S %.3f", s);
			break;
		}
	}
	/* And over the whole reference trace, even at S = 1 for minutes. */
	{
		double s = wr_shed_floor(&def);

		for (k = 0; k < 600; k++) {
			s = wr_shed_step(&def, s, 1.0, 1.0);
			CHECK(wr_shed_class_prob(s, 0) == 0, "class 0 shed at step %d", k);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Thresholds                                                               */
/* ------------------------------------------------------------------------ */

TEST_CASE(shed_thresholds)
{
	CHECK_EQ(wr_shed_threshold(0), 0);
	CHECK_EQ(wr_shed_threshold(1), 1ULL << 32);
	CHECK_EQ(wr_shed_threshold(0.5), 1ULL << 31);
	CHECK_EQ(wr_shed_threshold(0.25), 1ULL << 30);
	CHECK_EQ(wr_shed_threshold(1.0 / 3), 1431655765ULL);	/* 2^32 / 3 = ...765.33 */
	CHECK_EQ(wr_shed_threshold(2.0 / 3), 2863311531ULL);	/* ...530.67 */
	/* Outside [0, 1]: clamped. */
	CHECK_EQ(wr_shed_threshold(-0.5), 0);
	CHECK_EQ(wr_shed_threshold(1.5), 1ULL << 32);
	CHECK_EQ(wr_shed_threshold(INFINITY), 1ULL << 32);
	CHECK_EQ(wr_shed_threshold(-INFINITY), 0);
	/* Below half a step rounds to never; one step is 1 / 2^32. */
	CHECK_EQ(wr_shed_threshold(1e-12), 0);
	CHECK_EQ(wr_shed_threshold(1.0 / 4294967296.0), 1);
	/* Just below 1: one random value in 2^32 still passes. */
	CHECK_EQ(wr_shed_threshold(1 - 1.0 / 4294967296.0), 0xffffffffULL);
	/*
	 * The data path drops when prandom_u32 < threshold: 2^32 drops every
	 * u32, 0 none, 2^31 exactly the lower half.
	 */
	CHECK((__u64)0xffffffffu < wr_shed_threshold(1), "2^32 - 1 not below the threshold of 1");
	CHECK(!((__u64)0 < wr_shed_threshold(0)), "0 below the threshold of 0");
	CHECK((__u64)0x7fffffffu < wr_shed_threshold(0.5) &&
	      !((__u64)0x80000000u < wr_shed_threshold(0.5)), "0.5 does not split at 2^31");
}

/* ------------------------------------------------------------------------ */
/* Other constants                                                          */
/* ------------------------------------------------------------------------ */

/*
 * delay 1 s, ramp 4 s, sampled every 0.25 s: the floor is -1/4, shedding
 * starts after 1 s of overload, everything is shed 4 s later, recovery
 * takes as long, and dt is capped at 1 s.
 */
TEST_CASE(shed_custom_delay_ramp)
{
	struct wr_curve c = { .good = 0.7, .bad = 0.8, .delay_s = 1, .ramp_s = 4 };
	double s = wr_shed_floor(&c);
	int k, first_pos = -1, first_one = -1, zero_at = -1;

	CHECK_NEAR(s, -0.25, 1e-15);
	for (k = 1; k <= 40; k++) {
		s = wr_shed_step(&c, s, 1.0, 0.25);
		if (first_pos < 0 && s > EPS)
			first_pos = k;
		if (first_one < 0 && s >= 1 - EPS)
			first_one = k;
	}
	CHECK_EQ(first_pos, 5);		/* 1.25 s */
	CHECK_EQ(first_one, 20);	/* 5 s */
	CHECK(s == 1.0, "S = %.12g after 10 s", s);
	for (k = 1; k <= 40; k++) {
		s = wr_shed_step(&c, s, 0.0, 0.25);
		if (zero_at < 0 && s <= EPS)
			zero_at = k;
	}
	CHECK_EQ(zero_at, 16);		/* 4 s to stop shedding */
	CHECK(s == -0.25, "S = %.12g after 10 s idle, want the floor", s);
	/* dt capped at 1 s: one 10 s gap moves S by 1/4 only. */
	CHECK_NEAR(wr_shed_step(&c, 0, 1.0, 10), 0.25, EPS);
	/* Half-way through the ramp the classes split as with the defaults. */
	CHECK_NEAR(wr_shed_class_prob(wr_shed_step(&c, 0.25, 1.0, 1), 3), 1, EPS);
	CHECK_NEAR(wr_shed_class_prob(wr_shed_step(&c, 0.25, 1.0, 1), 2), 0.5, EPS);
}

/* Other good/bad: the dead zone and both slopes follow them. */
TEST_CASE(shed_custom_good_bad)
{
	struct wr_curve c = { .good = 0.5, .bad = 0.9, .delay_s = 10, .ramp_s = 60 };
	struct wr_curve top = { .good = 0.9, .bad = 1.0, .delay_s = 28, .ramp_s = 120 };

	CHECK_NEAR(wr_shed_direction(&c, 0.25), -0.5, EPS);
	CHECK_NEAR(wr_shed_direction(&c, 0.5), 0, EPS);
	CHECK_NEAR(wr_shed_direction(&c, 0.7), 0, EPS);
	CHECK_NEAR(wr_shed_direction(&c, 0.95), 0.5, EPS);
	CHECK_NEAR(wr_shed_direction(&c, 1.0), 1, EPS);
	CHECK_NEAR(wr_shed_floor(&c), -10.0 / 60, EPS);
	CHECK_NEAR(wr_shed_step(&c, 0, 0.95, 6), 0.05, EPS);
	/* bad = 1: only u >= 1 sheds, at full speed; no division by zero. */
	CHECK_NEAR(wr_shed_direction(&top, 0.95), 0, EPS);
	CHECK_NEAR(wr_shed_direction(&top, 1.0), 1, EPS);
	CHECK_NEAR(wr_shed_direction(&top, 1.5), 1, EPS);
}

int main(void)
{
	return check_run_all();
}
