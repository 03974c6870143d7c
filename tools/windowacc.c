// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * windowacc: how accurate are weir's limit algorithms? A markdown table
 * of the token bucket, the fixed window and the sliding window (the very
 * code of include/weir_limiter.h) on bursty traces, against an exact
 * sliding log: the ground truth for "at most L in any span of one period".
 *
 * The limit is L = 100 packets per P = 1 s, as `limit 100/s` (the token
 * bucket with its default burst, L). For each trace and algorithm:
 *   max in any 1 s   the most admitted within any span (t - P, t];
 *                    the sliding log never exceeds L
 *   admitted         packets let through over the whole trace
 *   sliding log      what the exact sliding log lets through
 *   error            admitted against the sliding log, in percent
 *
 * Traces (60 s each, the same on every run):
 *   edge bursts   L packets in the last 10 ms of a window and L in the first
 *                 10 ms of the next, every 3 s: the fixed window's weak spot
 *   on-off        4L/s for 0.3 s of every second, out of phase with the windows
 *   random bursts bursts at random times (3 per second on average) of 1 to L
 *                 packets, 1 ms apart
 *   late bursts   2L packets 1 ms apart ending just before each window's
 *                 end, a little earlier each second: the sliding window's
 *                 weak spot
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rand.h"
#include "weir.h"
#include "weir_limiter.h"

#define SEC	1000000000ULL
#define MSEC	1000000ULL
/* The limit: L per period P. */
#define L	100ULL
#define P	SEC
/* Trace length in periods, and the window index it starts at. */
#define PERIODS	60
#define K0	1000ULL

struct pkt {
	__u64 t;
};

struct trace {
	const char *name;
	struct pkt *p;
	size_t n, cap;
};

static void add(struct trace *tr, __u64 t)
{
	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? 2 * tr->cap : 4096;
		tr->p = realloc(tr->p, tr->cap * sizeof(*tr->p));
		if (!tr->p) {
			fprintf(stderr, "windowacc: out of memory\n");
			exit(1);
		}
	}
	tr->p[tr->n++].t = t;
}

static int cmp(const void *a, const void *b)
{
	const struct pkt *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* The same traces on every run. */
static uint64_t rng = 88172645463325252ULL;

static __u64 rnd_below(__u64 n)
{
	return wr_xorshift64s(&rng) % n;
}

static void edge_bursts(struct trace *tr)
{
	__u64 k, i;

	tr->name = "edge bursts";
	for (k = K0 + 1; k < K0 + PERIODS; k += 3)
		for (i = 0; i < L; i++) {
			add(tr, k * P - 10 * MSEC + i * (10 * MSEC / L));
			add(tr, k * P + i * (10 * MSEC / L));
		}
	qsort(tr->p, tr->n, sizeof(*tr->p), cmp);
}

static void on_off(struct trace *tr)
{
	__u64 k, i;

	tr->name = "on-off";
	for (k = K0; k < K0 + PERIODS; k++)
		for (i = 0; i < 4 * L * 3 / 10; i++)
			add(tr, k * P + 370 * MSEC + i * (P / (4 * L)));
}

static void random_bursts(struct trace *tr)
{
	__u64 t = K0 * P, end = (K0 + PERIODS) * P, i, n;

	tr->name = "random bursts";
	while (t < end) {
		n = 1 + rnd_below(L);
		for (i = 0; i < n; i++)
			add(tr, t + i * MSEC);
		t += 1 + rnd_below(2 * P / 3);
	}
	qsort(tr->p, tr->n, sizeof(*tr->p), cmp);
}

static void late_bursts(struct trace *tr)
{
	__u64 k, i;

	tr->name = "late bursts";
	for (k = K0; k < K0 + PERIODS; k++)
		for (i = 0; i < 2 * L; i++)
			add(tr, (k + 1) * P - ((k - K0) % 10 + 1) * 250 * MSEC / 10 + i * MSEC / 10);
}

enum { TOKEN_BUCKET, FIXED, SLIDING, SLIDING_LOG, NR_ALGOS };

static const char *const names[NR_ALGOS] = {
	"token bucket (burst L)", "fixed window", "sliding window", "sliding log (exact)",
};

/* Run tr through one algorithm; admitted packets to out, their count returned. */
static size_t run(int algo, const struct trace *tr, struct pkt *out)
{
	struct weir_limit l = { .rate = L, .burst = L, .period_ms = P / MSEC };
	__u64 word = 0, aux = 0, next, next_aux, sum = 0;
	size_t i, n = 0, head = 0;
	int ok;

	l.interval_fp = wr_gcra_interval_per(L, P / MSEC);
	l.tolerance = wr_gcra_tolerance(l.interval_fp, L, WEIR_COST_PKT);
	for (i = 0; i < tr->n; i++) {
		__u64 now = tr->p[i].t;

		next_aux = aux;
		switch (algo) {
		case TOKEN_BUCKET:
			ok = wr_gcra_admit(word, now, wr_gcra_inc(l.interval_fp, 1), l.tolerance,
					   &next);
			break;
		case FIXED:
			ok = wr_fixed_admit(word, now, P, 1, L, &next);
			break;
		case SLIDING:
			ok = wr_sliding_admit(word, aux, now, P, 1, L, &next, &next_aux);
			break;
		default:
			/* admitted in (now - P, now], plus this one, at most L */
			while (head < n && out[head].t + P <= now) {
				head++;
				sum--;
			}
			ok = sum + 1 <= L;
			sum += ok;
			next = word;
			break;
		}
		if (ok) {
			word = next;
			aux = next_aux;
			out[n++] = tr->p[i];
		}
	}
	return n;
}

/* The most admitted within any span (t - P, t]. */
static __u64 max_span(const struct pkt *a, size_t n)
{
	__u64 best = 0;
	size_t i, lo = 0;

	for (i = 0; i < n; i++) {
		while (a[lo].t + P <= a[i].t)
			lo++;
		if (i - lo + 1 > best)
			best = i - lo + 1;
	}
	return best;
}

int main(int argc, char **argv)
{
	void (*const make[])(struct trace *) = { edge_bursts, on_off, random_bursts,
						 late_bursts };
	size_t t;
	int a;

	if (argc > 1) {
		fprintf(!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ? stdout : stderr,
			"Usage: windowacc\n"
			"A markdown table of the token bucket, fixed window and sliding window\n"
			"(include/weir_limiter.h) against an exact sliding log, limit %llu per\n"
			"second, on bursty traces.\n", L);
		return !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ? 0 : 2;
	}
	printf("Limit %llu per second; traces of %d s. \"max in any 1 s\" is the most admitted\n"
	       "within any one-second span (the exact sliding log: never more than %llu);\n"
	       "\"error\" compares what was admitted with what the sliding log admits.\n\n",
	       L, PERIODS, L);
	printf("| trace | algorithm | max in any 1 s | admitted | sliding log | error |\n");
	printf("|---|---|---|---|---|---|\n");
	for (t = 0; t < sizeof(make) / sizeof(make[0]); t++) {
		struct trace tr = {};
		struct pkt *out;
		size_t ideal;

		make[t](&tr);
		out = calloc(tr.n, sizeof(*out));
		if (!out) {
			fprintf(stderr, "windowacc: out of memory\n");
			return 1;
		}
		ideal = run(SLIDING_LOG, &tr, out);
		for (a = 0; a < NR_ALGOS; a++) {
			size_t n = run(a, &tr, out);
			__u64 m = max_span(out, n);

			printf("| %s (%zu packets) | %s | %llu (%.2f L) | %zu | %zu | %+.1f%% |\n",
			       tr.name, tr.n, names[a], (unsigned long long)m, (double)m / L, n,
			       ideal, 100.0 * ((double)n - (double)ideal) / (double)ideal);
		}
		free(out);
		free(tr.p);
	}
	return 0;
}
