// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The newer limit kinds in the real BPF object: fixed and sliding windows,
 * several windows on one key, check-then-charge across algorithms, and
 * connection limits (the XDP side against counts written by hand, the
 * sock_ops side against real TCP connections over loopback).
 *
 * As in bpf_datapath.c, each case loads a fresh skeleton with the manual
 * clock and pinning switched off, and builds rule sets by hand the way the
 * controller writes them. The window cases run the same traces through the
 * data path and through the pure functions of weir_limiter.h, packet by
 * packet, and require the same verdicts and the same bucket words.
 */
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf_harness.h"
#include "../tools/rand.h"

/*
 * T0, the manual time at the start of every case, is window 1000 of 1 s
 * windows. H0 is an hour boundary, for limits per second, minute and hour
 * at once.
 */
#define H0	(100 * 3600 * SEC)
/* First agg_slot handed out; not 0, so slot/index mix-ups show. */
#define AGG_BASE	5
/* IP length of the UDP frames udp4() builds: the byte cost of one. */
#define UDP4_LEN	46

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Maps and rules                                                           */
/* ------------------------------------------------------------------------ */

/* A window limit per source (/32, /128). */
static struct weir_limit *win_src(struct weir_rule *r, int algo, __u64 rate, __u32 period_ms)
{
	return new_limit(r, algo, rate, period_ms, 0, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
}

static struct weir_limit *conns_src(struct weir_rule *r, __u64 cap, int plen4, int plen6)
{
	return new_limit(r, WEIR_ALGO_CONNS, cap, 0, 0, WEIR_COST_PKT, WEIR_KEY_SRC, plen4,
			 plen6);
}

static void match_tcp_dport(struct weir_rule *r, __u16 port)
{
	r->match |= WEIR_M_PROTO | WEIR_M_DPORT;
	r->proto = WR_IPPROTO_TCP;
	r->dport_lo = port;
	r->dport_hi = port;
}

/* wr_state of limit li of rule r for src; all zero (and *found 0) when there is none. */
static struct weir_state state4(const struct weir_rule *r, __u32 li, __u32 src, int *found)
{
	struct weir_key k = key4(r, li, src);
	struct weir_state st;
	int err;

	memset(&st, 0, sizeof(st));
	err = state_find(&k, &st);
	if (found)
		*found = !err;
	return st;
}

static void conns_put(const struct weir_key *k, __u64 count)
{
	struct weir_conns c = { .count = count };

	if (bpf_map__update_elem(skel->maps.wr_conns, k, sizeof(*k), &c, sizeof(c), 0))
		CHECK_FAIL("writing wr_conns: %s", strerror(errno));
}

/* wr_conns[k], or -1 if there is no entry. */
static long long conns_get(const struct weir_key *k)
{
	struct weir_conns c;

	if (bpf_map__lookup_elem(skel->maps.wr_conns, k, sizeof(*k), &c, sizeof(c), 0))
		return -1;
	return c.count;
}

static int conns_entries(void)
{
	return key_count(skel->maps.wr_conns, NULL);
}

/* Faults the current case caused on purpose (or counted as it went); none by default. */
static __u64 faults_expected;

static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), pas = g(WEIR_G_PASSED),
	      dro = g(WEIR_G_DROPPED);

	CHECK(pk == non + pas + dro, "PACKETS %llu != NON_IP %llu + PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)pas,
	      (unsigned long long)dro);
	CHECK_EQ(g(WEIR_G_FAULT), faults_expected);
	faults_expected = 0;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* UDP/IPv4 whose IP length (its byte cost) is l3len, at least 28. */
static void udp4_len(struct frame *f, __u32 src, size_t l3len)
{
	struct frame l;

	l4_udp(&l, 53, l3len - 28);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

static void udp4(struct frame *f, __u32 src)
{
	udp4_len(f, src, UDP4_LEN);
}

/* ------------------------------------------------------------------------ */
/* The pure model and traces                                                */
/* ------------------------------------------------------------------------ */

/* One key under one limit, driven through weir_limiter.h as meter() drives it. */
struct model {
	const struct weir_limit *l;
	__u64 word, aux;
};

static int model_admit(struct model *m, __u64 now, __u64 cost)
{
	const struct weir_limit *l = m->l;
	__u64 next = 0, next_aux = m->aux, P = wr_limit_period_ns(l);
	int ok;

	if (l->algo == WEIR_ALGO_FIXED)
		ok = wr_fixed_admit(m->word, now, P, cost, l->rate, &next);
	else if (l->algo == WEIR_ALGO_SLIDING)
		ok = wr_sliding_admit(m->word, m->aux, now, P, cost, l->rate, &next, &next_aux);
	else
		ok = wr_gcra_admit(m->word, now, wr_gcra_inc(l->interval_fp, cost), l->tolerance,
				   &next);
	if (ok) {
		m->word = next;
		m->aux = next_aux;
	}
	return ok;
}

struct arrival {
	__u64 t;
	__u32 len;	/* IP length */
};

static uint64_t rng_state;

static __u64 rnd(void)
{
	return wr_xorshift64s(&rng_state);
}

static __u64 rnd_below(__u64 n)
{
	return n ? rnd() % n : 0;
}

static int arrival_cmp(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

#define TRACE_MAX	4096

/*
 * The traces of windows_unit.c, for limit L per period P from window k:
 * 0 the fixed window's edge (L at the end of window k, L at the start of
 * k + 1), 1 bursts of 2L near the ends of consecutive windows, 2 random
 * arrivals at 3L per period, 3 random sizes 28..1500 at random times (for
 * byte costs). Returns the number of arrivals.
 */
static int make_trace(int kind, __u64 L, __u64 P, __u64 k, struct arrival *a)
{
	int n = 0, j;
	__u64 i;

	switch (kind) {
	case 0:
		for (i = 0; i < L; i++) {
			a[n++] = (struct arrival){ (k + 1) * P - MSEC + i * 10 * USEC, UDP4_LEN };
			a[n++] = (struct arrival){ (k + 1) * P + i * 10 * USEC, UDP4_LEN };
		}
		break;
	case 1:
		for (j = 0; j < 6; j++)
			for (i = 0; i < 2 * L; i++)
				a[n++] = (struct arrival){ (k + j + 1) * P - (j + 1) * P / 1000 + i,
							   UDP4_LEN };
		break;
	case 2:
		for (i = 0; i < 3 * L * 8 && n < TRACE_MAX; i++)
			a[n++] = (struct arrival){ k * P + rnd_below(8 * P), UDP4_LEN };
		break;
	default:
		for (i = 0; i < 600 && n < TRACE_MAX; i++)
			a[n++] = (struct arrival){ k * P + rnd_below(8 * P),
						   (__u32)(28 + rnd_below(1500 - 28 + 1)) };
		break;
	}
	qsort(a, n, sizeof(*a), arrival_cmp);
	return n;
}

/*
 * Send the trace from src (each frame at its time) and require, packet by
 * packet, the verdict of limit li of rule r's pure function; then the same
 * bucket word (and previous-window count) in wr_state or wr_agg. Returns
 * how many passed.
 */
static int trace_as_pure(const struct weir_rule *r, __u32 li, const struct arrival *a, int n,
			 __u32 src, const char *what)
{
	const struct weir_limit *l = &r->limits[li];
	struct model m = { .l = l };
	struct weir_state st;
	struct frame f;
	int i, passed = 0, got, want, found = 1;

	for (i = 0; i < n; i++) {
		set_now(a[i].t);
		udp4_len(&f, src, a[i].len);
		want = model_admit(&m, a[i].t, l->cost == WEIR_COST_BYTE ? a[i].len : 1);
		got = xmit(&f);
		if (got != want) {
			CHECK_FAIL("%s: packet %d (t=%llu, %u bytes): data path %d, pure %d",
				   what, i, (unsigned long long)a[i].t, a[i].len, got, want);
			return passed;
		}
		passed += got;
	}
	st = l->key == WEIR_KEY_ALL ? agg_get(l) : state4(r, li, src, &found);
	CHECK(found, "%s: no bucket", what);
	CHECK(st.tat == m.word, "%s: word %#llx, pure function %#llx", what,
	      (unsigned long long)st.tat, (unsigned long long)m.word);
	if (l->algo == WEIR_ALGO_SLIDING)
		CHECK(st.aux == m.aux, "%s: previous window %llu, pure function %llu", what,
		      (unsigned long long)st.aux, (unsigned long long)m.aux);
	if (l->key != WEIR_KEY_ALL && found) {
		/* what eviction goes by: the end of the window the word is in */
		struct weir_key k = key4(r, li, src);
		struct weir_way w;

		__u64 want = 0;

		if (l->algo == WEIR_ALGO_FIXED || l->algo == WEIR_ALGO_SLIDING)
			want = wr_win_idle_at(l->algo, st.tat, wr_limit_period_ns(l));
		if (!state_way(&k, &w))
			CHECK(w.idle_at == want, "%s: idle_at %llu, want %llu (the word's window)",
			      what, (unsigned long long)w.idle_at, (unsigned long long)want);
	}
	return passed;
}

/* ------------------------------------------------------------------------ */
/* Window algorithms                                                        */
/* ------------------------------------------------------------------------ */

/* BL_CASE(name) { body }: fresh object, body, balance check, unload (HARNESS_CASE). */
#define BL_CASE(name) HARNESS_CASE(name)

/*
 * Every trace, per source and rule-wide, packets and bytes: a window
 * algorithm in the data path decides exactly as its pure function. One
 * object per algorithm; each trace gets a rule (and so buckets) of its own.
 */
static void windows_as_pure(int algo)
{
	static const struct {
		__u64 L;
		__u32 period_ms;
		int cost, key, trace;
	} c[] = {
		{ 10, 1000, WEIR_COST_PKT, WEIR_KEY_SRC, 0 },
		{ 10, 1000, WEIR_COST_PKT, WEIR_KEY_SRC, 1 },
		{ 100, 60000, WEIR_COST_PKT, WEIR_KEY_SRC, 1 },
		{ 100, 1000, WEIR_COST_PKT, WEIR_KEY_SRC, 2 },
		{ 50, 60000, WEIR_COST_PKT, WEIR_KEY_ALL, 2 },
		{ 10, 1000, WEIR_COST_PKT, WEIR_KEY_ALL, 0 },
		{ 64000, 60000, WEIR_COST_BYTE, WEIR_KEY_SRC, 3 },
		{ 20000, 1000, WEIR_COST_BYTE, WEIR_KEY_ALL, 3 },
	};
	static struct arrival a[TRACE_MAX];
	struct weir_rule *r[ARRAY_LEN(c)];
	size_t i;
	int n;

	if (setup())
		return;
	rng_state = 1234 + algo;
	for (i = 0; i < ARRAY_LEN(c); i++) {
		int all = c[i].key == WEIR_KEY_ALL;

		r[i] = add_rule(WEIR_ACT_DROP);
		/* each rule its own port, so a trace meets only its own limit */
		r[i]->match = WEIR_M_PROTO | WEIR_M_DPORT;
		r[i]->proto = WR_IPPROTO_UDP;
		r[i]->dport_lo = r[i]->dport_hi = 53;
		new_limit(r[i], algo, c[i].L, c[i].period_ms, 0, c[i].cost, c[i].key, all ? 0 : 32,
			  all ? 0 : 128);
	}
	for (i = 0; i < ARRAY_LEN(c); i++) {
		char what[96];
		__u64 P = (__u64)c[i].period_ms * MSEC;
		int passed, k;

		/* only rule i is live */
		for (k = 0; k < (int)ARRAY_LEN(c); k++)
			r[k]->dport_lo = r[k]->dport_hi = k == (int)i ? 53 : 1;
		commit();
		n = make_trace(c[i].trace, c[i].L, P, T0 / P + 10 * i, a);
		snprintf(what, sizeof(what), "%s %llu per %u ms %s %s, trace %d",
			 algo == WEIR_ALGO_FIXED ? "fixed" : "sliding",
			 (unsigned long long)c[i].L, c[i].period_ms,
			 c[i].cost == WEIR_COST_BYTE ? "bytes" : "packets",
			 c[i].key == WEIR_KEY_ALL ? "per all" : "per src", c[i].trace);
		passed = trace_as_pure(&rs.rules[i], 0, a, n, SRC_A, what);
		/* the edge trace: the documented 2L for fixed, L for sliding */
		if (c[i].trace == 0)
			CHECK(passed == (int)(algo == WEIR_ALGO_FIXED ? 2 : 1) * (int)c[i].L,
			      "%s: %d passed", what, passed);
		CHECK(rstat(i).passed_pkts == (__u64)passed &&
		      rstat(i).dropped_pkts == (__u64)(n - passed),
		      "%s: rule counted %llu passed %llu dropped of %d, %d", what,
		      (unsigned long long)rstat(i).passed_pkts,
		      (unsigned long long)rstat(i).dropped_pkts, n, passed);
	}
	check_balance();
	teardown();
}

TEST_CASE(bl_fixed_window_as_pure)
{
	windows_as_pure(WEIR_ALGO_FIXED);
}

TEST_CASE(bl_sliding_window_as_pure)
{
	windows_as_pure(WEIR_ALGO_SLIDING);
}

/*
 * A window's state word in the map: after 7 packets at T0 + 0.5 s the
 * per-source entry holds window 1000 << 32 | 7; at T0 + 1.25 s a sliding
 * window moved 7 into aux with the new window's first packet.
 */
BL_CASE(bl_window_state_words)
{
	struct weir_rule *r;
	struct weir_state st;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	win_src(r, WEIR_ALGO_FIXED, 10, 1000);
	win_src(r, WEIR_ALGO_SLIDING, 10, 1000);
	commit();
	udp4(&f, SRC_A);
	set_now(T0 + SEC / 2);
	CHECK_EQ(xmit_n(&f, 7), 7);
	st = state4(r, 0, SRC_A, NULL);
	CHECK_EQ(st.tat, wr_win_pack(1000, 7));
	CHECK_EQ(st.aux, 0);
	st = state4(r, 1, SRC_A, NULL);
	CHECK_EQ(st.tat, wr_win_pack(1000, 7));
	/* 3/4 of the 7 still count: ceil(5.25) = 6, so 4 more pass */
	set_now(T0 + SEC + SEC / 4);
	CHECK_EQ(xmit_n(&f, 10), 4);
	st = state4(r, 0, SRC_A, NULL);
	CHECK_EQ(st.tat, wr_win_pack(1001, 4));
	st = state4(r, 1, SRC_A, NULL);
	CHECK_EQ(st.tat, wr_win_pack(1001, 4));
	CHECK_EQ(st.aux, 7);
	CHECK_EQ(st.drops, 6);
	/* the fixed window admitted those 6, so they were never its to refuse */
	CHECK_EQ(state4(r, 0, SRC_A, NULL).drops, 0);
}

/*
 * A fleet window turns on the fleet's clock: with wr_config.fleet_win_off
 * 0.3 s past whole seconds, a fleet fixed window of 10/s turns at local
 * T0 + 0.7 s, not T0 + 1 s, while a host window beside it turns at T0 + 1 s.
 * Its charges are counted for the fleet sync in units of cost (20 over
 * the two windows, whenever the key started being tracked), and its way's
 * idle_at is its window's end on that clock.
 */
BL_CASE(bl_fleet_window_turns_on_the_fleet_clock)
{
	struct weir_rule *r;
	struct weir_limit *fl;
	struct weir_fleet_use u = {};
	struct weir_state st;
	struct weir_way w;
	struct weir_key k;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	fl = win_src(r, WEIR_ALGO_FIXED, 10, 1000);
	fl->fleet = 1;
	CFG_SET(fleet_win_off, 1000 * SEC + 3 * SEC / 10);
	commit();
	udp4(&f, SRC_A);
	/* T0 + 0.65 s is T0 + 0.95 s on the fleet's clock: window 1000, 10 pass */
	set_now(T0 + 65 * SEC / 100);
	CHECK_EQ(xmit_n(&f, 12), 10);
	st = state4(r, 0, SRC_A, NULL);
	CHECK_EQ(st.tat, wr_win_pack(1000, 10));
	/* T0 + 0.75 s is T0 + 1.05 s there: window 1001, 10 more */
	set_now(T0 + 75 * SEC / 100);
	CHECK_EQ(xmit_n(&f, 12), 10);
	k = key4(r, 0, SRC_A);
	if (state_way(&k, &w)) {
		CHECK_FAIL("no bucket for the fleet window's key");
	} else {
		CHECK_EQ(w.st.tat, wr_win_pack(1001, 10));
		/* refused 2 and 2, what waits on this CPU included */
		CHECK_EQ(w.st.drops + src_waiting(&k), 4);
		CHECK_EQ(w.idle_at, wr_win_idle_at(WEIR_ALGO_FIXED, w.st.tat, SEC));
	}
	if (bpf_map__lookup_elem(skel->maps.wr_fleet_use, &k, sizeof(k), &u, sizeof(u), 0))
		CHECK_FAIL("the fleet window's key is not tracked: %s", strerror(errno));
	else
		CHECK_EQ(u.charged, 20);
	/* The same limit on this host alone is still in window 1000 there. */
	fl->fleet = 0;
	commit();
	udp4(&f, SRC_B);
	set_now(T0 + 65 * SEC / 100);
	CHECK_EQ(xmit_n(&f, 10), 10);
	set_now(T0 + 75 * SEC / 100);
	CHECK_EQ(xmit_n(&f, 2), 0);
}

/* ------------------------------------------------------------------------ */
/* Several windows on one key                                               */
/* ------------------------------------------------------------------------ */

/*
 * 10/s, 100/min and 500/h per source on one rule, all fixed windows. A
 * source bursting at 1000 pps for 5 s from an hour boundary gets exactly 10
 * a second, 50 in all, and the 4950 refused by the per-second window leave
 * the per-minute and per-hour windows at 50 each: they consumed nothing.
 */
BL_CASE(bl_several_windows_burst_consumes_nothing)
{
	struct weir_rule *r;
	struct weir_state s, m, h;
	struct frame f;
	__u64 t, passed = 0;
	int i;

	r = add_rule(WEIR_ACT_DROP);
	win_src(r, WEIR_ALGO_FIXED, 10, 1000);
	win_src(r, WEIR_ALGO_FIXED, 100, 60000);
	win_src(r, WEIR_ALGO_FIXED, 500, 3600000);
	commit();
	udp4(&f, SRC_A);
	for (i = 0; i < 5000; i++) {
		t = H0 + i * MSEC;
		set_now(t);
		passed += xmit(&f) == 1;
		if (i % 1000 == 999)
			CHECK(passed == (__u64)(i + 1) / 100, "%llu passed after %d s",
			      (unsigned long long)passed, (i + 1) / 1000);
	}
	CHECK_EQ(passed, 50);
	s = state4(r, 0, SRC_A, NULL);
	m = state4(r, 1, SRC_A, NULL);
	h = state4(r, 2, SRC_A, NULL);
	CHECK_EQ(s.tat, wr_win_pack(H0 / SEC + 4, 10));
	CHECK_EQ(m.tat, wr_win_pack(H0 / (60 * SEC), 50));
	CHECK_EQ(h.tat, wr_win_pack(H0 / (3600 * SEC), 50));
	/* every refusal was the per-second window's */
	CHECK_EQ(s.drops, 4950);
	CHECK_EQ(m.drops, 0);
	CHECK_EQ(h.drops, 0);
	CHECK_EQ(rstat(0).passed_pkts, 50);
	CHECK_EQ(rstat(0).dropped_pkts, 4950);
}

/*
 * The same rule over an hour, 50 pps for the first 15 s of each minute:
 * the per-second window would pass 150 a minute, the per-minute one caps
 * it at 100 (reached after 10 s), and the per-hour one at 500, so minutes
 * 5 and 6 pass nothing. Packets the per-minute window refuses charge the
 * per-second window nothing: one rule's per-source buckets are charged in
 * turn and a refusal gives back what came before it (wr_rule_once), so
 * the per-second window is in the last second they reached (14) with none
 * of them counted, and those the per-hour window refuses leave both the
 * per-second and the per-minute windows holding none of them (a window
 * that has turned and holds 0 admits as the old one, past, would). The
 * next hour starts afresh.
 */
BL_CASE(bl_several_windows_minute_and_hour_caps)
{
	struct weir_rule *r;
	struct weir_state s, m, h;
	struct frame f;
	__u64 passed, total = 0;
	int min, i;

	r = add_rule(WEIR_ACT_DROP);
	win_src(r, WEIR_ALGO_FIXED, 10, 1000);
	win_src(r, WEIR_ALGO_FIXED, 100, 60000);
	win_src(r, WEIR_ALGO_FIXED, 500, 3600000);
	commit();
	udp4(&f, SRC_A);
	for (min = 0; min < 7; min++) {
		for (i = passed = 0; i < 750; i++) {
			set_now(H0 + min * 60 * SEC + i * 20 * MSEC);
			passed += xmit(&f) == 1;
		}
		CHECK(passed == (min < 5 ? 100 : 0), "minute %d: %llu passed", min,
		      (unsigned long long)passed);
		total += passed;
		if (min == 0) {
			s = state4(r, 0, SRC_A, NULL);
			CHECK_EQ(s.tat, wr_win_pack(H0 / SEC + 14, 0));
			/* seconds 0-9: 40 a second over the per-second window */
			CHECK_EQ(s.drops, 400);
			/* seconds 10-14: all 50 a second over the per-minute window */
			CHECK_EQ(state4(r, 1, SRC_A, NULL).drops, 250);
		}
	}
	CHECK_EQ(total, 500);
	s = state4(r, 0, SRC_A, NULL);
	m = state4(r, 1, SRC_A, NULL);
	h = state4(r, 2, SRC_A, NULL);
	/* in the last second and minute the refused packets reached, none of them counted */
	CHECK_EQ(s.tat, wr_win_pack(H0 / SEC + 6 * 60 + 14, 0));
	CHECK_EQ(m.tat, wr_win_pack(H0 / (60 * SEC) + 6, 0));
	CHECK_EQ(h.tat, wr_win_pack(H0 / (3600 * SEC), 500));
	CHECK_EQ(h.drops, 2 * 750);
	/* the next hour */
	for (i = passed = 0; i < 750; i++) {
		set_now(H0 + 3600 * SEC + i * 20 * MSEC);
		passed += xmit(&f) == 1;
	}
	CHECK_EQ(passed, 100);
	CHECK_EQ(state4(r, 2, SRC_A, NULL).tat, wr_win_pack(H0 / (3600 * SEC) + 1, 100));
}

/*
 * Mixed algorithms, the per-hour limit first and the per-second last: 500/h
 * fixed window, 100/min sliding window, 10/s token bucket (burst 10). 1000
 * pps for 5 s pass exactly min(arrivals, 10 + t / 100 ms) = 59; the windows
 * that came first in the check admitted every one of the 5000, yet count
 * only the 59 that passed. A token bucket refusal charged nothing either:
 * its TAT is exactly 59 intervals on.
 */
BL_CASE(bl_several_windows_mixed_algorithms)
{
	struct weir_rule *r;
	struct weir_state s, m, h;
	struct frame f;
	__u64 passed = 0;
	int i;

	r = add_rule(WEIR_ACT_DROP);
	win_src(r, WEIR_ALGO_FIXED, 500, 3600000);
	win_src(r, WEIR_ALGO_SLIDING, 100, 60000);
	new_limit(r, WEIR_ALGO_GCRA, 10, 1000, 10, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	commit();
	udp4(&f, SRC_A);
	for (i = 0; i < 5000; i++) {
		__u64 want;

		set_now(H0 + i * MSEC);
		passed += xmit(&f) == 1;
		want = 10 + (__u64)i / 100;
		if ((__u64)i + 1 < want)
			want = i + 1;
		if (passed != want) {
			CHECK_FAIL("%llu passed by %d ms, want %llu", (unsigned long long)passed,
				   i, (unsigned long long)want);
			break;
		}
	}
	CHECK_EQ(passed, 59);
	h = state4(r, 0, SRC_A, NULL);
	m = state4(r, 1, SRC_A, NULL);
	s = state4(r, 2, SRC_A, NULL);
	CHECK_EQ(h.tat, wr_win_pack(H0 / (3600 * SEC), 59));
	CHECK_EQ(m.tat, wr_win_pack(H0 / (60 * SEC), 59));
	CHECK_EQ(m.aux, 0);
	CHECK_EQ(s.tat, H0 + 59 * 100 * MSEC);
	CHECK_EQ(h.drops + m.drops, 0);
	CHECK_EQ(s.drops, 5000 - 59);
}

/*
 * Check-then-charge across rules and algorithms: three rules match one
 * source, a sliding window 1000/min per source, a fixed window 5/s for the
 * whole rule and a token bucket 1000/s per /24. 20 packets at one instant:
 * 5 pass, and the sliding window and the token bucket were charged for
 * those 5 alone. Then the other way round: a tight sliding window refuses
 * while a fixed window and a rule-wide token bucket have room.
 */
/*
 * A new source's way claim that meets another CPU's claim in progress (a
 * way of its set held busy) never makes a second bucket: it is handed
 * back, tried once more, and then the packet is refused as contended,
 * uncharged, under either fail policy (contention is not a fault),
 * through the one-limit path and the general one alike. The busy way is
 * written here as a stalled CPU would leave it.
 */
static void claim_meets_busy_way(int nr_limits, int closed)
{
	struct weir_rule *r;
	struct weir_way busy;
	struct weir_set set;
	struct weir_key k;
	struct frame f;
	__u32 idx;
	__u64 w0 = WEIR_WAY_BUSY;

	r = add_rule(WEIR_ACT_DROP);
	win_src(r, WEIR_ALGO_FIXED, 100, 1000);
	if (nr_limits > 1)
		win_src(r, WEIR_ALGO_SLIDING, 100, 1000);
	commit();
	CFG_SET(fail_closed, closed);
	k = key4(r, 0, SRC_A);
	idx = state_set_of(&k);
	if (state_set_get(idx, &set)) {
		CHECK_FAIL("no set %u", idx);
		return;
	}
	memset(&busy, 0, sizeof(busy));
	memcpy(&busy.key, &w0, sizeof(w0));
	set.way[WEIR_WAYS - 1] = busy;
	state_set_put(idx, &set);
	udp4(&f, SRC_A);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(g(WEIR_G_CONTENDED), 1);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 1);
	CHECK(state_find(&k, &(struct weir_state){ 0 }) == -ENOENT,
	      "a bucket was made beside a busy way");
	/* Once the other CPU has published (here: the way emptied), the key is made. */
	memset(&set.way[WEIR_WAYS - 1], 0, sizeof(busy));
	state_set_put(idx, &set);
	CHECK_EQ(xmit(&f), 1);
	CHECK(!state_find(&k, &(struct weir_state){ 0 }), "no bucket after the claim");
	CHECK_EQ(g(WEIR_G_CONTENDED), 1);
}

BL_CASE(bl_claim_meets_busy_way_one_limit_refused_under_fail_open)
{
	claim_meets_busy_way(1, 0);
}

BL_CASE(bl_claim_meets_busy_way_two_limits_refused_under_fail_closed)
{
	claim_meets_busy_way(2, 1);
}

BL_CASE(bl_check_then_charge_across_algorithms)
{
	struct weir_rule *r0, *r1, *r2;
	struct weir_limit *all, *tb;
	struct weir_state st;
	struct frame f;
	int found;

	r0 = add_rule(WEIR_ACT_DROP);
	win_src(r0, WEIR_ALGO_SLIDING, 1000, 60000);
	r1 = add_rule(WEIR_ACT_DROP);
	all = new_limit(r1, WEIR_ALGO_FIXED, 5, 1000, 0, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
	r2 = add_rule(WEIR_ACT_DROP);
	new_limit(r2, WEIR_ALGO_GCRA, 1000, 1000, 1000, WEIR_COST_PKT, WEIR_KEY_SRC, 24, 64);
	commit();
	udp4(&f, SRC_A);
	set_now(T0 + SEC / 2);
	CHECK_EQ(xmit_n(&f, 20), 5);
	CHECK_EQ(state4(r0, 0, SRC_A, NULL).tat, wr_win_pack((T0 + SEC / 2) / (60 * SEC), 5));
	CHECK_EQ(agg_get(all).tat, wr_win_pack(T0 / SEC, 5));
	CHECK_EQ(agg_get(all).drops, 15);
	CHECK_EQ(state4(r2, 0, SRC_A, NULL).tat, T0 + SEC / 2 + 5 * MSEC);
	CHECK_EQ(rstat(1).dropped_pkts, 15);
	CHECK_EQ(rstat(0).dropped_pkts + rstat(2).dropped_pkts, 0);
	/* a source the rule-wide window refuses gets no per-source state at all */
	udp4(&f, SRC_C);
	CHECK_EQ(xmit(&f), 0);
	state4(r0, 0, SRC_C, &found);
	CHECK(!found, "a refused packet created a sliding window for its source");
	state4(r2, 0, SRC_C, &found);
	CHECK(!found, "a refused packet created a token bucket for its source");

	/* the other way round */
	memset(&rs.rules, 0, sizeof(rs.rules));
	rs.nr_rules = 0;
	r0 = add_rule(WEIR_ACT_DROP);
	win_src(r0, WEIR_ALGO_FIXED, 100, 1000);
	r1 = add_rule(WEIR_ACT_DROP);
	win_src(r1, WEIR_ALGO_SLIDING, 3, 60000);
	tb = new_limit(r1, WEIR_ALGO_GCRA, 100, 1000, 100, WEIR_COST_PKT, WEIR_KEY_ALL, 0,
		       0);
	commit();
	set_now(T0 + 2 * SEC);
	udp4(&f, SRC_B);
	CHECK_EQ(xmit_n(&f, 10), 3);
	CHECK_EQ(state4(r0, 0, SRC_B, NULL).tat, wr_win_pack(T0 / SEC + 2, 3));
	st = agg_get(tb);
	CHECK_EQ(st.tat, T0 + 2 * SEC + 3 * 10 * MSEC);
	CHECK_EQ(st.drops, 0);
	st = state4(r1, 0, SRC_B, NULL);
	CHECK_EQ(st.tat, wr_win_pack((T0 + 2 * SEC) / (60 * SEC), 3));
	CHECK_EQ(st.drops, 7);
}

/*
 * Window state is exact across CPUs: two threads on two CPUs send from one
 * source at one instant, round after round, under a fixed window of 100 per
 * source and a sliding window of 150 for the whole rule. Each round passes
 * exactly 100, and both windows count exactly 100: whatever a CPU charged
 * on the rule-wide window before losing the per-source race was refunded.
 */
#define RACE_ROUNDS	60
#define RACE_REPEAT	300

TEST_CASE(bl_two_cpus_windows_exact)
{
	struct weir_rule *r;
	struct weir_limit *all;
	struct racer rc[2];
	pthread_barrier_t bar;
	pthread_t th[2];
	__u64 passed = 0;
	int i, round;

	if (ncpu < 2) {
		CHECK_SKIP("one possible CPU");
		return;
	}
	if (setup())
		return;
	r = add_rule(WEIR_ACT_DROP);
	win_src(r, WEIR_ALGO_FIXED, 100, 1000);
	all = new_limit(r, WEIR_ALGO_SLIDING, 150, 1000, 0, WEIR_COST_PKT, WEIR_KEY_ALL, 0,
			0);
	commit();
	pthread_barrier_init(&bar, NULL, 3);
	for (i = 0; i < 2; i++) {
		rc[i].cpu = i;
		rc[i].rounds = RACE_ROUNDS;
		rc[i].repeat = RACE_REPEAT;
		rc[i].bar = &bar;
		rc[i].err = 0;
		udp4(&rc[i].f, SRC_A);
		pthread_create(&th[i], NULL, race, &rc[i]);
	}
	for (round = 0; round < RACE_ROUNDS; round++) {
		/* 10 s apart: every window, and its predecessor, empty */
		__u64 now = T0 + round * 10 * SEC, p;

		set_now(now);
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		p = g(WEIR_G_PASSED);
		/*
		 * Exact: a new key's claim met twice in progress (another CPU
		 * stalled mid-claim, which emulation does) refuses that packet
		 * as contended; the key's bucket, once claimed, admits the rest.
		 */
		if (p - passed != 100) {
			CHECK_FAIL("round %d: %llu passed, want 100 (%llu failed open)", round,
				   (unsigned long long)(p - passed),
				   (unsigned long long)g(WEIR_G_FAIL_OPEN));
			break;
		}
		passed = p;
		if (state4(r, 0, SRC_A, NULL).tat != wr_win_pack(now / SEC, 100) ||
		    agg_get(all).tat != wr_win_pack(now / SEC, 100)) {
			CHECK_FAIL("round %d: per-source word %#llx, rule-wide %#llx", round,
				   (unsigned long long)state4(r, 0, SRC_A, NULL).tat,
				   (unsigned long long)agg_get(all).tat);
			break;
		}
	}
	for (round++; round < RACE_ROUNDS; round++) {
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		CHECK(!rc[i].err, "racer %d: %s", i, strerror(-rc[i].err));
	}
	pthread_barrier_destroy(&bar);
	if (g(WEIR_G_CONTENDED))
		printf("# %llu packets met a claim in progress twice and were refused\n",
		       (unsigned long long)g(WEIR_G_CONTENDED));
	CHECK_EQ(g(WEIR_G_PACKETS), 2ULL * RACE_ROUNDS * RACE_REPEAT);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 0);
	/* check_balance: no fault */
	check_balance();
	teardown();
}

/* ------------------------------------------------------------------------ */
/* Connection limits: the XDP side                                          */
/* ------------------------------------------------------------------------ */

/*
 * conns 3 per source on tcp port 22, with wr_conns written by hand (as the
 * sock_ops program would count). At the cap a SYN from A is dropped and
 * counted; everything else from A (SYN-ACK, ACK, data, FIN, RST) passes, a
 * SYN from B passes, a SYN from A to another port passes. Below the cap
 * SYNs pass, and XDP never writes wr_conns: it only reads it.
 */
BL_CASE(bl_conns_syn_refused_at_cap)
{
	static const __u8 others[] = {
		WEIR_TCP_SYN | WEIR_TCP_ACK, WEIR_TCP_ACK, WEIR_TCP_PSH | WEIR_TCP_ACK,
		WEIR_TCP_FIN | WEIR_TCP_ACK, WEIR_TCP_RST,
	};
	struct weir_rule *r;
	struct weir_key ka, kb;
	struct frame f;
	size_t i;

	r = add_rule(WEIR_ACT_DROP);
	match_tcp_dport(r, 22);
	conns_src(r, 3, 32, 128);
	commit();
	ka = key4(r, 0, SRC_A);
	kb = key4(r, 0, SRC_B);
	conns_put(&ka, 3);

	tcp4(&f, SRC_A, 22, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 4), 0);
	for (i = 0; i < ARRAY_LEN(others); i++) {
		tcp4(&f, SRC_A, 22, others[i]);
		CHECK(xmit(&f) == 1, "flags %#x from a source at its cap dropped", others[i]);
	}
	tcp4(&f, SRC_B, 22, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 5), 5);
	tcp4(&f, SRC_A, 23, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
	CHECK_EQ(g(WEIR_G_DROPPED), 4);

	/* below the cap: SYNs pass, however many, and nothing is charged */
	conns_put(&ka, 2);
	tcp4(&f, SRC_A, 22, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 10), 10);
	CHECK_EQ(conns_get(&ka), 2);
	CHECK_EQ(conns_get(&kb), -1);
	CHECK_EQ(conns_entries(), 1);
	CHECK_EQ(state_count(NULL), 0);
	/* above it (a count the daemon has yet to correct): refused */
	conns_put(&ka, 7);
	CHECK_EQ(xmit(&f), 0);
	/* an entry counting 0 admits */
	conns_put(&ka, 0);
	CHECK_EQ(xmit(&f), 1);
}

/*
 * conns 2 per src/24 src6/48: sources in one /24 (one /48) share a count,
 * the next /24 (/48) has its own.
 */
BL_CASE(bl_conns_per_prefix_v4_v6)
{
	struct weir_rule *r;
	struct weir_key k;
	struct frame f;
	__u8 a1[16], a2[16], b[16];

	r = add_rule(WEIR_ACT_DROP);
	match_tcp_dport(r, 443);
	conns_src(r, 2, 24, 48);
	commit();
	k = key4(r, 0, SRC_A);
	CHECK_EQ(k.plen, 24);
	conns_put(&k, 2);
	tcp4(&f, SRC_A, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 0);
	tcp4(&f, SRC_B, 443, WEIR_TCP_SYN);	/* same /24 */
	CHECK_EQ(xmit(&f), 0);
	tcp4(&f, SRC_C, 443, WEIR_TCP_SYN);	/* 198.18.2.0/24 */
	CHECK_EQ(xmit(&f), 1);

	addr6(a1, 0x00010000, 1);	/* 2001:db8:1::1 */
	addr6(a2, 0x0001ffff, 2);	/* 2001:db8:1:ffff::2, same /48 */
	addr6(b, 0x00020000, 1);	/* 2001:db8:2::1 */
	k = key6(r, 0, a1);
	CHECK_EQ(k.plen, 48);
	conns_put(&k, 2);
	tcp6(&f, a1, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 0);
	tcp6(&f, a2, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 0);
	tcp6(&f, b, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 1);
	tcp6(&f, a1, 443, WEIR_TCP_ACK);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
}

/*
 * A connection limit and a rate limit on one rule, checked before either is
 * charged: SYNs refused by the connection cap leave the token bucket
 * untouched (no bucket is even created), and the bucket still admits its
 * full burst of the source's other packets. Under dry-run the capped SYN
 * passes and counts as a would-drop.
 */
BL_CASE(bl_conns_with_rate_check_then_charge)
{
	struct weir_rule *r;
	struct weir_key k;
	struct frame f;
	int found;

	r = add_rule(WEIR_ACT_DROP);
	match_tcp_dport(r, 22);
	conns_src(r, 1, 32, 128);
	new_limit(r, WEIR_ALGO_GCRA, 5, 1000, 5, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	commit();
	k = key4(r, 0, SRC_A);
	conns_put(&k, 1);
	tcp4(&f, SRC_A, 22, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 20), 0);
	state4(r, 1, SRC_A, &found);
	CHECK(!found, "SYNs refused by the connection cap created a token bucket");
	tcp4(&f, SRC_A, 22, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 8), 5);
	CHECK_EQ(state4(r, 1, SRC_A, NULL).tat, T0 + 5 * 200 * MSEC);
	CHECK_EQ(rstat(0).dropped_pkts, 23);
	CHECK_EQ(conns_get(&k), 1);

	/* dry-run: passes, counted as would-drop */
	memset(&rs.rules, 0, sizeof(rs.rules));
	rs.nr_rules = 0;
	r = add_rule(WEIR_ACT_DRYRUN);
	match_tcp_dport(r, 22);
	conns_src(r, 1, 32, 128);
	commit();
	k = key4(r, 0, SRC_A);
	conns_put(&k, 1);
	tcp4(&f, SRC_A, 22, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(rstat(0).wdrop_pkts, 3);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 3);
}

/* ------------------------------------------------------------------------ */
/* Connection limits: sock_ops counting real connections                    */
/* ------------------------------------------------------------------------ */

/*
 * The sock_ops program attached to this process's cgroup v2, the process
 * in a network namespace of its own (so only its connections count:
 * wr_config.conn_netns is that namespace's cookie), TCP over loopback.
 */
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#define CONN_PORT	8022

static int orig_netns = -1;
static struct bpf_link *sockops_link;

/* The cgroup v2 directory this process is in; 0 or -errno. */
static int own_cgroup2(char *buf, size_t len)
{
	char line[512], mnt[256] = "", path[512] = "";
	FILE *f;

	f = fopen("/proc/self/mounts", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char dev[64], dir[256], type[32];

		if (sscanf(line, "%63s %255s %31s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2")) {
			snprintf(mnt, sizeof(mnt), "%s", dir);
			break;
		}
	}
	fclose(f);
	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", line + 3);
		}
	fclose(f);
	if (!mnt[0] || !path[0])
		return -ENOENT;
	snprintf(buf, len, "%s%s", mnt, path);
	return 0;
}

static __u64 netns_cookie(void)
{
	__u64 cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
			cookie = 0;
		close(fd);
	}
	return cookie;
}

/*
 * Load, attach wr_sockops to our cgroup, enter a new network namespace
 * with lo up, and count its connections (until then no rule matches: the
 * rule set is empty). 0, or -1 with what failed in *why (NULL: the load,
 * already reported).
 */
static int sockops_setup(const char **why)
{
	char cg[1024];
	int cgfd;

	*why = NULL;
	if (own_cgroup2(cg, sizeof(cg))) {
		*why = "no cgroup v2 hierarchy";
		return -1;
	}
	if (setup())
		return -1;
	cgfd = open(cg, O_RDONLY | O_DIRECTORY);
	if (cgfd < 0) {
		*why = "cannot open our cgroup v2 directory";
		return -1;
	}
	sockops_link = bpf_program__attach_cgroup(skel->progs.weir_sockops, cgfd);
	close(cgfd);
	if (!sockops_link) {
		*why = "cannot attach sock_ops to our cgroup";
		return -1;
	}
	orig_netns = open("/proc/self/ns/net", O_RDONLY);
	if (orig_netns < 0) {
		*why = "cannot enter a new network namespace";
		return -1;
	}
	if (own_netns(why))
		return -1;
	{
		struct weir_config c = cfg_get();

		c.conn_netns = netns_cookie();
		if (!c.conn_netns) {
			*why = "no SO_NETNS_COOKIE";
			return -1;
		}
		cfg_put(&c);
	}
	return 0;
}

static void sockops_teardown(void)
{
	if (orig_netns >= 0) {
		if (setns(orig_netns, CLONE_NEWNET))
			CHECK_FAIL("cannot return to our network namespace: %s", strerror(errno));
		close(orig_netns);
		orig_netns = -1;
	}
	bpf_link__destroy(sockops_link);
	sockops_link = NULL;
	if (skel)
		teardown();
}

/* A listening socket: family AF_INET or AF_INET6 (v6only as given); -1 on error. */
static int listen_on(int family, const char *addr, int v6only)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd, one = 1;

	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(CONN_PORT);
		inet_pton(AF_INET, addr, &s->sin_addr);
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(CONN_PORT);
		inet_pton(AF_INET6, addr, &s->sin6_addr);
		len = sizeof(*s);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A connected client socket to addr:CONN_PORT; -1 on error. */
static int connect_to(int family, const char *addr)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(CONN_PORT);
		inet_pton(AF_INET, addr, &s->sin_addr);
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(CONN_PORT);
		inet_pton(AF_INET6, addr, &s->sin6_addr);
		len = sizeof(*s);
	}
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Abortive close: RST instead of FIN. */
static void close_rst(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* The loopback handshakes and closes run in softirq on our way out of the syscall. */
static long long conns_settled(const struct weir_key *k, long long want)
{
	long long v = conns_get(k);
	int i;

	for (i = 0; i < 100 && v != want; i++) {
		usleep(10000);
		v = conns_get(k);
	}
	return v;
}

/* What wr_conns holds, for messages: "family/plen addr=count ..." */
static const char *conns_dump(void)
{
	static char buf[512];
	struct weir_key k, next;
	size_t n = 0;
	int err;

	buf[0] = '\0';
	err = bpf_map__get_next_key(skel->maps.wr_conns, NULL, &next, sizeof(next));
	while (!err && n < sizeof(buf) - 100) {
		char a[INET6_ADDRSTRLEN];

		k = next;
		inet_ntop(k.family == 4 ? AF_INET : AF_INET6, k.addr, a, sizeof(a));
		n += snprintf(buf + n, sizeof(buf) - n, "%s{family %u plen %u %s limit %u}=%lld",
			      n ? " " : "", k.family, k.plen, a, k.limit, conns_get(&k));
		err = bpf_map__get_next_key(skel->maps.wr_conns, &k, &next, sizeof(next));
	}
	return n ? buf : "(empty)";
}

/*
 * Established connections count, closes uncount. Three connections from
 * 127.0.0.1 count 3; the client closing first, the server closing first
 * and a reset each take one back; a connection nobody accepted counts, and
 * is uncounted when its listener closes; connections to a port no rule
 * names never count; with conn_netns naming another namespace nothing
 * counts.
 */
TEST_CASE(bl_sockops_counts_established_and_closed)
{
	struct weir_rule *r;
	struct weir_key k;
	int lfd, c[4], s[3], i, x;
	const char *why;

	if (sockops_setup(&why)) {
		if (why && !strcmp(why, "no cgroup v2 hierarchy"))
			CHECK_SKIP(why);
		else
			CHECK_FAIL("%s", why ? why : "setup");
		sockops_teardown();
		return;
	}
	r = add_rule(WEIR_ACT_DROP);
	match_tcp_dport(r, CONN_PORT);
	conns_src(r, 10, 32, 128);
	commit();
	k = key4(r, 0, IP4(127, 0, 0, 1));
	lfd = listen_on(AF_INET, "127.0.0.1", 0);
	CHECK(lfd >= 0, "listen: %s", strerror(errno));
	for (i = 0; i < 3 && lfd >= 0; i++) {
		c[i] = connect_to(AF_INET, "127.0.0.1");
		s[i] = accept(lfd, NULL, NULL);
		CHECK(c[i] >= 0 && s[i] >= 0, "connection %d: %s", i, strerror(errno));
	}
	if (check_failed)
		goto out;
	CHECK(conns_settled(&k, 3) == 3, "3 connections counted as %s", conns_dump());
	/* the client closes first: the server's socket ends in LAST_ACK -> CLOSE */
	close(c[0]);
	close(s[0]);
	CHECK(conns_settled(&k, 2) == 2, "client close: %s", conns_dump());
	/* the server closes first: FIN_WAIT2 -> TIME_WAIT */
	close(s[1]);
	close(c[1]);
	CHECK(conns_settled(&k, 1) == 1, "server close: %s", conns_dump());
	/* a reset from the client */
	close_rst(c[2]);
	CHECK(conns_settled(&k, 0) == 0, "reset: %s", conns_dump());
	close(s[2]);
	/* established but never accepted: counted; the listener's close resets it */
	c[3] = connect_to(AF_INET, "127.0.0.1");
	CHECK(conns_settled(&k, 1) == 1, "unaccepted connection: %s", conns_dump());
	close(lfd);
	CHECK(conns_settled(&k, 0) == 0, "listener closed: %s", conns_dump());
	close(c[3]);
	/* a port the rule does not name */
	{
		struct weir_rule *rr = &rs.rules[0];

		rr->dport_lo = rr->dport_hi = CONN_PORT + 1;	/* same uid: same key */
		commit();
		lfd = listen_on(AF_INET, "127.0.0.1", 0);
		x = connect_to(AF_INET, "127.0.0.1");
		usleep(50000);
		CHECK(conns_get(&k) == 0, "port %d counted: %s", CONN_PORT, conns_dump());
		close(x);
		rr->dport_lo = rr->dport_hi = CONN_PORT;
		commit();
	}
	/* another namespace's connections */
	{
		struct weir_config cf = cfg_get();

		cf.conn_netns += 1;
		cfg_put(&cf);
		x = connect_to(AF_INET, "127.0.0.1");
		usleep(50000);
		CHECK(conns_get(&k) == 0, "counted under another conn_netns: %s", conns_dump());
		close(x);
	}
	close(lfd);
out:
	sockops_teardown();
}

/*
 * A dual-stack listener (AF_INET6 on ::, IPV6_V6ONLY off), as many servers
 * open by default: an IPv4 client's connection is the IPv4 source that XDP
 * sees in its SYN, so it must count under the IPv4 key {family 4, plen 32,
 * 127.0.0.1}, or the cap never applies to IPv4 clients. An IPv6 client
 * counts under its IPv6 key.
 */
TEST_CASE(bl_sockops_dual_stack_listener)
{
	static const __u8 lo6[16] = { [15] = 1 };
	struct weir_rule *r;
	struct weir_key k4, k6;
	int lfd, c4, s4, c6, s6;
	const char *why;

	if (sockops_setup(&why)) {
		if (why && !strcmp(why, "no cgroup v2 hierarchy"))
			CHECK_SKIP(why);
		else
			CHECK_FAIL("%s", why ? why : "setup");
		sockops_teardown();
		return;
	}
	r = add_rule(WEIR_ACT_DROP);
	match_tcp_dport(r, CONN_PORT);
	conns_src(r, 10, 32, 128);
	commit();
	k4 = key4(r, 0, IP4(127, 0, 0, 1));
	k6 = key6(r, 0, lo6);
	lfd = listen_on(AF_INET6, "::", 0);
	c6 = connect_to(AF_INET6, "::1");
	s6 = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
	c4 = connect_to(AF_INET, "127.0.0.1");
	s4 = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
	if (lfd < 0 || c4 < 0 || s4 < 0 || c6 < 0 || s6 < 0) {
		CHECK_FAIL("sockets: %s", strerror(errno));
	} else {
		CHECK(conns_settled(&k6, 1) == 1, "IPv6 client not counted: %s", conns_dump());
		CHECK(conns_settled(&k4, 1) == 1, "IPv4 client of a dual-stack listener not "
		      "counted under its IPv4 key; wr_conns holds %s", conns_dump());
	}
	close(c4);
	close(s4);
	close(c6);
	close(s6);
	close(lfd);
	sockops_teardown();
}

int main(void)
{
	int err;

	agg_base = AGG_BASE;
	err = harness_start("bpf_limits");
	if (err)
		return err > 0;
	teardown();

	return check_run_all();
}
