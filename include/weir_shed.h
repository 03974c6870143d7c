/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The adaptive shedding curve: a pure function of utilization and time.
 *
 * A controller samples a utilization u in [0, 1] and moves a shedding
 * amount S slowly. The direction d is u/good - 1 below `good` (recover),
 * 0 in the dead zone [good, bad), (u - bad)/(1 - bad) from `bad` up (shed),
 * clamped to [-1, 1]. Each step moves S by min(dt, delay) * d / ramp and
 * clamps it to [-delay/ramp, 1]: from rest, shedding starts only after
 * `delay` of sustained overload and takes `ramp` more to shed everything,
 * and recovery is as slow. S maps onto classes lowest first: class 3 sheds
 * with probability clamp(3S, 0, 1), class 2 clamp(3S - 1, 0, 1), class 1
 * clamp(3S - 2, 0, 1); class 0 never.
 *
 * Doubles, for the controller in userspace only; the data path sees the
 * per-class probabilities as 32-bit thresholds (struct weir_shed).
 */
#ifndef WEIR_SHED_H
#define WEIR_SHED_H

#include "weir.h"

struct wr_curve {
	double good;		/* below: recover (default 0.7) */
	double bad;		/* from here: shed (default 0.8) */
	double delay_s;		/* sustained overload before shedding starts (28) */
	double ramp_s;		/* then to shed everything (120) */
};

#define WR_CURVE_DEFAULT { .good = 0.7, .bad = 0.8, .delay_s = 28, .ramp_s = 120 }

/* Clamp, NaN to lo: no arithmetic slip may ever read as "shed everything". */
static inline double wr_clamp(double v, double lo, double hi)
{
	return v >= lo ? (v <= hi ? v : hi) : lo;
}

/* The resting level: -delay/ramp (real division: -28/120, not -1). */
static inline double wr_shed_floor(const struct wr_curve *c)
{
	return -c->delay_s / c->ramp_s;
}

static inline double wr_shed_direction(const struct wr_curve *c, double u)
{
	double d;

	if (u < c->good)
		d = u / c->good - 1;
	else if (u < c->bad)
		d = 0;
	else
		d = c->bad < 1 ? (u - c->bad) / (1 - c->bad) : 1;
	return wr_clamp(d, -1, 1);
}

/* S after dt seconds at utilization u. */
static inline double wr_shed_step(const struct wr_curve *c, double s, double u, double dt)
{
	if (!(dt >= 0))
		dt = 0;
	if (dt > c->delay_s)
		dt = c->delay_s;
	s += dt * wr_shed_direction(c, u) / c->ramp_s;
	return wr_clamp(s, wr_shed_floor(c), 1);
}

/* Drop probability of class (0 critical .. WEIR_MAX_CLASS) at S. */
static inline double wr_shed_class_prob(double s, unsigned int class)
{
	if (class == 0 || class > WEIR_MAX_CLASS)
		return 0;
	return wr_clamp(3 * s - (WEIR_MAX_CLASS - class), 0, 1);
}

/* Probability as the data path's threshold: drop if rand32 < threshold. */
static inline __u64 wr_shed_threshold(double p)
{
	p = wr_clamp(p, 0, 1);
	return (__u64)(p * 4294967296.0 + 0.5);
}

#endif /* WEIR_SHED_H */
