/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal assertion macros for weir's C tests.
 *
 * Cases register themselves (TEST_CASE, below) and check_run_all() runs
 * them. Each test case prints exactly one line, read by tests/run.sh:
 *   ok - NAME
 *   not ok - NAME: what failed (file:line)
 *   skip - NAME: why
 * A case fails when any CHECK in it fails; the first failure is reported.
 *
 * WEIR_TEST_CASES, when set, runs only the cases it names: names or
 * shell patterns (fnmatch), separated by spaces or commas, e.g.
 * WEIR_TEST_CASES='dp_two_cpus_* dp_stalled_claim_*'. The others are
 * not run and print nothing (a "#" line says how many ran); a pattern
 * that matches no case fails the run, so a typo cannot pass as nothing.
 */
#ifndef WEIR_TESTS_CHECK_H
#define WEIR_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <fnmatch.h>

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

#define SKIP(name, why) printf("skip - %s: %s\n", name, why)

/*
 * Cases register themselves where they are defined, so no list can forget
 * one: TEST_CASE(name) { body } (and the suites' own case macros, built on
 * CHECK_REGISTER) puts a pointer to the case in the section wr_tests, and
 * check_run_all() runs every case of the program in source order.
 */
struct check_case {
	const char *name;
	void (*fn)(void);
	int line;
};

#define CHECK_REGISTER(fname)                                                    \
	static const struct check_case check_case_##fname = { #fname, fname, __LINE__ }; \
	static const struct check_case *const check_case_ptr_##fname             \
		__attribute__((used, section("wr_tests"))) = &check_case_##fname

#define TEST_CASE(fname)            \
	static void fname(void);    \
	CHECK_REGISTER(fname);      \
	static void fname(void)

extern const struct check_case *const __start_wr_tests[] __attribute__((weak));
extern const struct check_case *const __stop_wr_tests[] __attribute__((weak));

static int check_case_cmp(const void *a, const void *b)
{
	const struct check_case *x = *(const struct check_case *const *)a;
	const struct check_case *y = *(const struct check_case *const *)b;

	return (x->line > y->line) - (x->line < y->line);
}

/* Run one case: the line it prints, and the totals. */
static void check_run_one(const char *name, void (*fn)(void))
{
	check_failed = 0;
	check_skip = NULL;
	fn();
	if (check_failed) {
		check_total_failed++;
		printf("not ok - %s: %s\n", name, check_msg);
	} else if (check_skip) {
		printf("skip - %s: %s\n", name, check_skip);
	} else {
		printf("ok - %s\n", name);
	}
	fflush(stdout);
}

/* Separators of WEIR_TEST_CASES' patterns. */
#define CHECK_CASES_SEP " ,\t\n"

/*
 * Does WEIR_TEST_CASES (sel) select case name? With hit, pattern j of
 * sel that matches sets hit[j] (at most 64 patterns are tracked).
 */
static int check_selected(const char *sel, const char *name, int *hit)
{
	char buf[1024], *tok, *save = NULL;
	int j = 0, any = 0;

	snprintf(buf, sizeof(buf), "%s", sel);
	for (tok = strtok_r(buf, CHECK_CASES_SEP, &save); tok;
	     tok = strtok_r(NULL, CHECK_CASES_SEP, &save), j++) {
		if (!fnmatch(tok, name, 0)) {
			any = 1;
			if (hit && j < 64)
				hit[j] = 1;
		}
	}
	return any;
}

/* Every registered case (or those WEIR_TEST_CASES selects), in source order; 0 if none failed. */
static int check_run_all(void)
{
	const struct check_case *v[1024];
	const char *sel = getenv("WEIR_TEST_CASES");
	int hit[64] = { 0 };
	size_t n = 0, i, ran = 0;

	for (i = 0; __start_wr_tests && __start_wr_tests + i < __stop_wr_tests &&
		    n < sizeof(v) / sizeof(v[0]); i++)
		v[n++] = __start_wr_tests[i];
	if (!n) {
		printf("not ok - no test case registered\n");
		return 1;
	}
	/* Set but empty (or separators alone): every case. */
	if (sel && strlen(sel) == strspn(sel, CHECK_CASES_SEP))
		sel = NULL;
	qsort(v, n, sizeof(v[0]), check_case_cmp);
	for (i = 0; i < n; i++) {
		if (sel && !check_selected(sel, v[i]->name, hit))
			continue;
		check_run_one(v[i]->name, v[i]->fn);
		ran++;
	}
	if (sel) {
		char buf[1024], *tok, *save = NULL;
		int j = 0;

		printf("# WEIR_TEST_CASES: %zu of %zu cases run\n", ran, n);
		snprintf(buf, sizeof(buf), "%s", sel);
		for (tok = strtok_r(buf, CHECK_CASES_SEP, &save); tok;
		     tok = strtok_r(NULL, CHECK_CASES_SEP, &save), j++) {
			if (j < 64 && !hit[j]) {
				printf("not ok - WEIR_TEST_CASES: \"%s\" matches no case\n", tok);
				check_total_failed++;
			}
		}
	}
	return check_total_failed != 0;
}

#endif /* WEIR_TESTS_CHECK_H */
