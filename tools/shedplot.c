// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shedplot: the adaptive shedding curve (include/weir_shed.h) over a
 * utilization trace, as data for gnuplot (`make plot-shed`).
 *
 * The trace: u = 0.5 (good) for 60 s, 1.0 (overloaded) for 200 s, 0.5 for
 * 240 s, sampled once a second with the default constants, starting from
 * rest. Each line is one sample after its step:
 *
 *   t u S p0 p1 p2 p3
 *
 * t in seconds, S the shedding amount, pN class N's drop probability.
 */
#include <stdio.h>
#include <string.h>
#include "weir.h"
#include "weir_shed.h"

/* Seconds between samples, as the controller's default interval. */
#define STEP_S 1.0

static const struct {
	double u;	/* utilization */
	double secs;	/* for this long */
} trace[] = {
	{ 0.5, 60 },
	{ 1.0, 200 },
	{ 0.5, 240 },
};

static void sample(double t, double u, double s)
{
	/* No "-0.000000" where S crosses zero by rounding. */
	if (s > -1e-12 && s < 1e-12)
		s = 0;
	printf("%.0f %.3f %.6f %.6f %.6f %.6f %.6f\n", t, u, s, wr_shed_class_prob(s, 0),
	       wr_shed_class_prob(s, 1), wr_shed_class_prob(s, 2), wr_shed_class_prob(s, 3));
}

int main(int argc, char **argv)
{
	const struct wr_curve c = WR_CURVE_DEFAULT;
	double s = wr_shed_floor(&c), t = 0;
	unsigned int i, k;

	if (argc > 1) {
		fprintf(stderr, "%s: %s\nUsage: shedplot > FILE\n", argv[0],
			strcmp(argv[1], "--help") ? "takes no arguments" : "the shedding curve "
			"over a trace of good, overloaded, good utilization, for gnuplot");
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	printf("# weir shedding curve: good %.2f, bad %.2f, delay %.0f s, ramp %.0f s\n",
	       c.good, c.bad, c.delay_s, c.ramp_s);
	printf("# t u S p0 p1 p2 p3\n");
	sample(t, trace[0].u, s);
	for (i = 0; i < sizeof(trace) / sizeof(trace[0]); i++) {
		for (k = 0; k < trace[i].secs / STEP_S; k++) {
			t += STEP_S;
			s = wr_shed_step(&c, s, trace[i].u, STEP_S);
			sample(t, trace[i].u, s);
		}
	}
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
