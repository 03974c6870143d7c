/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal assertion macros for sluice's C tests.
 *
 * Each test case prints exactly one line, read by tests/run.sh:
 *   ok - NAME
 *   not ok - NAME: what failed (file:line)
 *   skip - NAME: why
 * A case fails when any CHECK in it fails; the first failure is reported.
 */
#ifndef SLUICE_TESTS_CHECK_H
#define SLUICE_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>
#include <inttypes.h>

static int check_failed;	/* failures in the current case */
static int check_total_failed;	/* cases that failed */
static char check_msg[512];
static const char *check_skip;	/* why the current case checked nothing, or NULL */

/* The case could check nothing here: it reports skip, never ok (a failure still fails). */
#define CHECK_SKIP(why) (check_skip = (why))

#define CHECK_FAIL(...)                                                            \
	do {                                                                       \
		if (!check_failed++) {                                             \
			int n_ = snprintf(check_msg, sizeof(check_msg), __VA_ARGS__); \
			if (n_ >= 0 && (size_t)n_ < sizeof(check_msg))             \
				snprintf(check_msg + n_, sizeof(check_msg) - n_,   \
					 " (%s:%d)", __FILE__, __LINE__);          \
		}                                                                  \
	} while (0)

#define CHECK(cond, ...)                      \
	do {                                  \
		if (!(cond))                  \
			CHECK_FAIL(__VA_ARGS__); \
	} while (0)

/* Compare two unsigned 64-bit values, naming the expression. */
#define CHECK_EQ(got, want)                                                         \
	do {                                                                        \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);               \
		if (g_ != w_)                                                       \
			CHECK_FAIL("%s = %" PRIu64 ", want %" PRIu64, #got, g_, w_); \
	} while (0)

/* got within [lo, hi] */
#define CHECK_RANGE(got, lo, hi)                                                   \
	do {                                                                       \
		double g_ = (double)(got), l_ = (double)(lo), h_ = (double)(hi);   \
		if (g_ < l_ || g_ > h_)                                            \
			CHECK_FAIL("%s = %.3f, want [%.3f, %.3f]", #got, g_, l_, h_); \
	} while (0)

/* Run one case: a function void f(void). */
#define RUN(f)                                                         \
	do {                                                           \
		check_failed = 0;                                      \
		check_skip = NULL;                                     \
		f();                                                   \
		if (check_failed) {                                    \
			check_total_failed++;                          \
			printf("not ok - %s: %s\n", #f, check_msg);    \
		} else if (check_skip) {                               \
			printf("skip - %s: %s\n", #f, check_skip);     \
		} else {                                               \
			printf("ok - %s\n", #f);                       \
		}                                                      \
		fflush(stdout);                                        \
	} while (0)

#define SKIP(name, why) printf("skip - %s: %s\n", name, why)

#endif /* SLUICE_TESTS_CHECK_H */
