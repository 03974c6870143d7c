// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shedding by class and reserved capacity in the real BPF object, through
 * bpf_prog_test_run_opts.
 *
 * As in bpf_datapath.c, each case loads a fresh skeleton with the manual
 * clock, a small wr_state and pinning switched off. Every test run is one
 * packet (repeat = 1), so bpf_get_prandom_u32() draws anew for each and
 * shed fractions are binomial: with n packets at probability p the count
 * shed is checked against n p +- 5 sqrt(n p (1 - p)) (a false failure about
 * once in 1.7 million checks); p = 0 and p = 1 are exact.
 *
 * Classes come from rules: rule "class c" matches sources 198.18.(10 + c).0/24
 * and carries one rule-wide limit far above anything a case sends, so
 * only shedding and capacity refuse packets. Traffic that matches no rule
 * comes from 198.18.50.0/24 and has wr_shed.default_class.
 */
#include <math.h>

#include "bpf_harness.h"
#include "weir_shed.h"

/* Packets per class and probability in the fraction cases. */
#define NPKT	20000
/* Binomial tolerance, in standard deviations. */
#define SIGMAS	5.0
/* Thresholds: never, half, always. */
#define TH_HALF	(1ULL << 31)
#define TH_ALL	(1ULL << 32)
/* Source net of class c's rule (198.18.NET.0/24), and of traffic that matches no rule. */
#define CLASS_NET(c)	(10 + (c))
#define NO_RULE_NET	50

/* ------------------------------------------------------------------------ */
/* Rules and maps                                                           */
/* ------------------------------------------------------------------------ */

/* A drop rule of class c (no match bits: matches all IP). */
static struct weir_rule *add_rule_in_class(__u8 c)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);

	r->class = c;
	return r;
}

/* A token bucket of rate per second, per source (/32, /128) or for all; no agg_slot. */
static void set_limit(struct weir_limit *l, __u64 rate, __u64 burst, int cost, int key)
{
	limit_init(l, WEIR_ALGO_GCRA, rate, 0, burst, cost, key, 32, 128);
}

/* A packets/s limit of rule r; rule-wide ones get the next agg_slot. */
static void add_limit(struct weir_rule *r, __u64 rate, __u64 burst, int key)
{
	new_limit(r, WEIR_ALGO_GCRA, rate, 0, burst, WEIR_COST_PKT, key, 32, 128);
}

/* A rule for class c over 198.18.CLASS_NET(c).0/24 that no case here reaches the limit of. */
static struct weir_rule *class_rule(__u8 c)
{
	struct weir_rule *r = add_rule_in_class(c);

	match_src4(r, IP4(198, 18, CLASS_NET(c), 0), 24);
	add_limit(r, 1000000000, 1000000000, WEIR_KEY_ALL);
	return r;
}

/* Rules for classes 0..3, committed. */
static void class_rules(void)
{
	int c;

	for (c = 0; c <= WEIR_MAX_CLASS; c++)
		class_rule(c);
	commit();
}

static struct weir_shed shed_get(void)
{
	struct weir_shed sh;
	__u32 zero = 0;

	memset(&sh, 0, sizeof(sh));
	if (bpf_map__lookup_elem(skel->maps.wr_shed, &zero, 4, &sh, sizeof(sh), 0))
		CHECK_FAIL("reading wr_shed: %s", strerror(errno));
	return sh;
}

static void shed_put(const struct weir_shed *sh)
{
	__u32 zero = 0;

	if (bpf_map__update_elem(skel->maps.wr_shed, &zero, 4, sh, sizeof(*sh), 0))
		CHECK_FAIL("writing wr_shed: %s", strerror(errno));
}

/* Thresholds of classes 0..3 and the class of traffic no rule matches. */
static void shed_set(__u64 t0, __u64 t1, __u64 t2, __u64 t3, __u32 default_class)
{
	struct weir_shed sh = shed_get();

	sh.threshold[0] = t0;
	sh.threshold[1] = t1;
	sh.threshold[2] = t2;
	sh.threshold[3] = t3;
	sh.default_class = default_class;
	shed_put(&sh);
}

/*
 * Reserved capacity for one kind of cost: the host's capacity (rate,
 * burst) and classes 1..3 at (1 - reserve) of both.
 */
static void capacity_set(int cost, __u64 rate, __u64 burst, double reserve)
{
	struct weir_shed sh = shed_get();

	set_limit(&sh.cap[cost].total, rate, burst, cost, WEIR_KEY_ALL);
	set_limit(&sh.cap[cost].noncrit, llround(rate * (1 - reserve)),
		  llround(burst * (1 - reserve)), cost, WEIR_KEY_ALL);
	shed_put(&sh);
}

/* Per-class counters summed over CPUs. */
static struct weir_class_stats cstat(__u32 cls)
{
	struct weir_class_stats v[ncpu], s;
	int c;

	memset(&s, 0, sizeof(s));
	if (bpf_map__lookup_elem(skel->maps.wr_class_stats, &cls, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading wr_class_stats[%u]: %s", cls, strerror(errno));
		return s;
	}
	for (c = 0; c < ncpu; c++) {
		s.pkts += v[c].pkts;
		s.bytes += v[c].bytes;
		s.shed_pkts += v[c].shed_pkts;
		s.shed_bytes += v[c].shed_bytes;
		s.cap_pkts += v[c].cap_pkts;
		s.cap_bytes += v[c].cap_bytes;
	}
	return s;
}

static struct weir_state capstate(__u32 idx)
{
	struct weir_state st;

	memset(&st, 0, sizeof(st));
	if (bpf_map__lookup_elem(skel->maps.wr_capacity, &idx, 4, &st, sizeof(st), 0))
		CHECK_FAIL("reading wr_capacity[%u]: %s", idx, strerror(errno));
	return st;
}

/* Every frame ends non-IP, passed or dropped; sheds are the sum of the classes'. */
static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), pas = g(WEIR_G_PASSED),
	      dro = g(WEIR_G_DROPPED), shed = 0, cap = 0;
	int c;

	CHECK(pk == non + pas + dro, "PACKETS %llu != NON_IP %llu + PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)pas,
	      (unsigned long long)dro);
	for (c = 0; c <= WEIR_MAX_CLASS; c++) {
		struct weir_class_stats s = cstat(c);

		shed += s.shed_pkts;
		cap += s.cap_pkts;
		CHECK(s.shed_pkts + s.cap_pkts <= s.pkts, "class %d: shed %llu + cap %llu > %llu",
		      c, (unsigned long long)s.shed_pkts, (unsigned long long)s.cap_pkts,
		      (unsigned long long)s.pkts);
	}
	CHECK(g(WEIR_G_SHED) == shed, "G_SHED %llu != classes' shed %llu",
	      (unsigned long long)g(WEIR_G_SHED), (unsigned long long)shed);
	CHECK(g(WEIR_G_CAPACITY) == cap, "G_CAPACITY %llu != classes' cap %llu",
	      (unsigned long long)g(WEIR_G_CAPACITY), (unsigned long long)cap);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* UDP/IPv4 to port 53 whose IP total length is l3len (at least 28). */
static void udp4_len(struct frame *f, __u32 src, size_t l3len)
{
	struct frame l;

	l4_udp(&l, 53, l3len - 28);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

/* 46 bytes of IP, as bpf_datapath.c's udp4(). */
static void udp4(struct frame *f, __u32 src)
{
	udp4_len(f, src, 46);
}

/* A frame from host h of class c's net; c < 0: from the no-rule net. */
static void class_frame(struct frame *f, int c, int h)
{
	udp4(f, IP4(198, 18, c < 0 ? NO_RULE_NET : CLASS_NET(c), h));
}

/* n shed of total at probability p (= th / 2^32), within SIGMAS; exact at 0 and 1. */
static void check_binomial(const char *what, __u64 shed, __u64 total, __u64 th)
{
	double p = (double)th / TH_ALL, mean = total * p, sd = sqrt(total * p * (1 - p));

	if (th == 0 || th >= TH_ALL) {
		CHECK(shed == (th ? total : 0), "%s: %llu of %llu shed at p = %g", what,
		      (unsigned long long)shed, (unsigned long long)total, p);
		return;
	}
	CHECK(fabs(shed - mean) <= SIGMAS * sd,
	      "%s: %llu of %llu shed at p = %g, want %.0f +- %.0f", what,
	      (unsigned long long)shed, (unsigned long long)total, p, mean, SIGMAS * sd);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/* SH_CASE(name) { body }: fresh object, body, balance check, unload (HARNESS_CASE). */
#define SH_CASE(name) HARNESS_CASE(name)

/* Measured fractions, printed as comments by the cases that measure them. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/*
 * Three rounds; in round r class c (1..3) sheds with probability
 * {0, 0.5, 1}[(c + r) % 3], and traffic that no rule matches has class
 * 1 + r. Every class meets every probability, NPKT packets each, with the
 * four streams interleaved so no class sees the others' effect.
 */
SH_CASE(shed_fractions_by_class)
{
	static const __u64 ths[3] = { 0, TH_HALF, TH_ALL };
	struct weir_class_stats before[WEIR_MAX_CLASS + 1], after;
	__u64 shed[4], sent_to[WEIR_MAX_CLASS + 1], shed_of[WEIR_MAX_CLASS + 1];
	__u64 g_shed = 0, rule_shed[WEIR_MAX_CLASS + 1] = { 0 };
	struct frame f[4];
	int r, c, i, s;

	class_rules();
	for (r = 0; r < 3; r++) {
		__u64 th[WEIR_MAX_CLASS + 1] = { 0 };
		int dflt = 1 + r;

		for (c = 1; c <= WEIR_MAX_CLASS; c++)
			th[c] = ths[(c + r) % 3];
		shed_set(0, th[1], th[2], th[3], dflt);
		for (c = 0; c <= WEIR_MAX_CLASS; c++)
			before[c] = cstat(c);
		/* streams 0..2: classes 1..3 by rule; stream 3: no rule */
		for (s = 0; s < 3; s++)
			class_frame(&f[s], s + 1, 1 + r);
		class_frame(&f[3], -1, 1 + r);
		memset(shed, 0, sizeof(shed));
		for (i = 0; i < NPKT; i++)
			for (s = 0; s < 4; s++)
				shed[s] += xmit(&f[s]) == 0;
		for (s = 0; s < 4; s++) {
			char what[64];
			int cls = s < 3 ? s + 1 : dflt;

			snprintf(what, sizeof(what), "round %d, %s class %d", r,
				 s < 3 ? "rule" : "no-rule", cls);
			check_binomial(what, shed[s], NPKT, th[cls]);
			if (th[cls] == TH_HALF)
				note("%s: %.4f shed at p = 0.5", what, (double)shed[s] / NPKT);
		}
		/* The counters say the same, class by class. */
		memset(sent_to, 0, sizeof(sent_to));
		memset(shed_of, 0, sizeof(shed_of));
		for (s = 0; s < 4; s++) {
			int cls = s < 3 ? s + 1 : dflt;

			sent_to[cls] += NPKT;
			shed_of[cls] += shed[s];
			g_shed += shed[s];
			if (s < 3)
				rule_shed[cls] += shed[s];
		}
		for (c = 0; c <= WEIR_MAX_CLASS; c++) {
			after = cstat(c);
			CHECK(after.pkts - before[c].pkts == sent_to[c],
			      "round %d class %d: %llu packets counted, %llu sent", r, c,
			      (unsigned long long)(after.pkts - before[c].pkts),
			      (unsigned long long)sent_to[c]);
			CHECK(after.shed_pkts - before[c].shed_pkts == shed_of[c],
			      "round %d class %d: %llu shed counted, %llu dropped", r, c,
			      (unsigned long long)(after.shed_pkts - before[c].shed_pkts),
			      (unsigned long long)shed_of[c]);
			CHECK(after.shed_bytes - before[c].shed_bytes == 46 * shed_of[c],
			      "round %d class %d: shed bytes %llu", r, c,
			      (unsigned long long)(after.shed_bytes - before[c].shed_bytes));
		}
	}
	CHECK_EQ(g(WEIR_G_SHED), g_shed);
	CHECK_EQ(g(WEIR_G_DROPPED), g_shed);
	CHECK_EQ(cstat(0).pkts, 0);
	/* Shed packets never reached a rule; the others all passed it. */
	for (c = 1; c <= WEIR_MAX_CLASS; c++) {
		CHECK_EQ(rstat(c).passed_pkts, 3ULL * NPKT - rule_shed[c]);
		CHECK_EQ(rstat(c).dropped_pkts, 0);
	}
}

/* Class 0 is never shed, whatever its threshold says, nor is a packet a class 0 rule matches. */
SH_CASE(shed_class0_never)
{
	struct weir_rule *wide;
	struct frame f;

	/* rule 0: class 0 over 198.18.10.0/24; rule 1: class 3 over all of 198.18.0.0/16 */
	class_rule(0);
	wide = add_rule_in_class(3);
	match_src4(wide, IP4(198, 18, 0, 0), 16);
	add_limit(wide, 1000000000, 1000000000, WEIR_KEY_ALL);
	commit();
	shed_set(TH_ALL, TH_ALL, TH_ALL, TH_ALL, 0);

	/* matches both rules: the most critical class, 0, wins */
	class_frame(&f, 0, 1);
	CHECK_EQ(xmit_n(&f, 1000), 1000);
	/* matches only the wide rule: class 3, shed */
	class_frame(&f, 3, 1);
	CHECK_EQ(xmit_n(&f, 1000), 0);
	CHECK_EQ(cstat(0).pkts, 1000);
	CHECK_EQ(cstat(0).shed_pkts, 0);
	CHECK_EQ(cstat(3).shed_pkts, 1000);

	/* no rule at all, default class 0: not shed either */
	rs.nr_rules = 0;
	commit();
	udp4(&f, IP4(198, 18, NO_RULE_NET, 1));
	CHECK_EQ(xmit_n(&f, 1000), 1000);
	CHECK_EQ(cstat(0).pkts, 2000);
	CHECK_EQ(cstat(0).shed_pkts, 0);
	CHECK_EQ(g(WEIR_G_SHED), 1000);
	CHECK_EQ(g(WEIR_G_NO_RULE), 1000);
}

/*
 * WEIR_SHED_OFF: nothing is shed, classes are still counted.
 * WEIR_SHED_ACTIVE alone changes nothing.
 */
SH_CASE(shed_off_flag)
{
	struct weir_shed sh;
	struct frame f;
	int c;

	class_rules();
	shed_set(0, TH_ALL, TH_ALL, TH_ALL, 3);
	sh = shed_get();
	sh.flags = WEIR_SHED_OFF | WEIR_SHED_ACTIVE;
	shed_put(&sh);
	for (c = 1; c <= WEIR_MAX_CLASS; c++) {
		class_frame(&f, c, 1);
		CHECK_EQ(xmit_n(&f, 500), 500);
		CHECK_EQ(cstat(c).pkts, 500);
		CHECK_EQ(cstat(c).shed_pkts, 0);
	}
	class_frame(&f, -1, 1);
	CHECK_EQ(xmit_n(&f, 500), 500);
	CHECK_EQ(g(WEIR_G_SHED), 0);

	sh.flags = WEIR_SHED_ACTIVE;
	shed_put(&sh);
	for (c = 1; c <= WEIR_MAX_CLASS; c++) {
		class_frame(&f, c, 1);
		CHECK_EQ(xmit_n(&f, 500), 0);
	}
	class_frame(&f, -1, 1);
	CHECK_EQ(xmit_n(&f, 500), 0);
	CHECK_EQ(g(WEIR_G_SHED), 2000);
}

/*
 * Shedding comes before the limits: 1000 packets of one source shed at
 * p = 1 create no bucket and take no token, so at p = 0 the source still
 * has its whole burst of 5.
 */
SH_CASE(shed_consumes_no_tokens)
{
	struct weir_rule *r;
	struct frame f;

	r = add_rule_in_class(3);
	match_src4(r, IP4(198, 18, CLASS_NET(3), 0), 24);
	add_limit(r, 1, 5, WEIR_KEY_SRC);
	commit();
	shed_set(0, 0, 0, TH_ALL, 0);
	class_frame(&f, 3, 7);
	CHECK_EQ(xmit_n(&f, 1000), 0);
	CHECK_EQ(cstat(3).shed_pkts, 1000);
	CHECK_EQ(rstat(0).passed_pkts, 0);
	CHECK_EQ(rstat(0).dropped_pkts, 0);
	CHECK_EQ(state_count(NULL), 0);

	shed_set(0, 0, 0, 0, 0);
	CHECK_EQ(xmit_n(&f, 10), 5);
	CHECK_EQ(rstat(0).passed_pkts, 5);
	CHECK_EQ(rstat(0).dropped_pkts, 5);
	CHECK_EQ(state_count(NULL), 1);
}

/*
 * Neighbour discovery that no rule names is never shed (nor counted in a
 * class), other ICMPv6 from the same source is; ND a rule names is shed
 * like anything else of the rule's class. Non-IP is never shed.
 */
SH_CASE(shed_nd_unnamed_never_shed)
{
	struct weir_rule *r;
	struct frame f;
	__u8 a[16];

	shed_set(0, TH_ALL, TH_ALL, TH_ALL, 3);
	icmp6(&f, LL6, 135, 255);	/* NS */
	CHECK_EQ(xmit_n(&f, 100), 100);
	icmp6(&f, LL6, 136, 255);	/* NA */
	CHECK_EQ(xmit_n(&f, 100), 100);
	icmp6(&f, LL6, 134, 255);	/* RA */
	CHECK_EQ(xmit_n(&f, 100), 100);
	CHECK_EQ(cstat(3).pkts, 0);
	CHECK_EQ(g(WEIR_G_ND), 300);
	/* echo request from fe80::1: no rule, default class 3, shed */
	icmp6(&f, LL6, 128, 64);
	CHECK_EQ(xmit_n(&f, 100), 0);
	memcpy(a, DST6, 16);
	a[15] = 5;
	icmp6(&f, a, 128, 64);
	CHECK_EQ(xmit_n(&f, 100), 0);
	CHECK_EQ(cstat(3).shed_pkts, 200);
	/* ARP */
	eth(&f, 0x0806, 0, NULL);
	zeros(&f, 28);
	CHECK_EQ(xmit_n(&f, 100), 100);
	CHECK_EQ(g(WEIR_G_NON_IP), 100);

	/* a rule naming NS, class 2: NS is that rule's traffic now */
	r = add_rule_in_class(2);
	r->match = WEIR_M_PROTO | WEIR_M_ICMPTYPE;
	r->proto = WR_IPPROTO_ICMPV6;
	r->icmp_type = 135;
	add_limit(r, 1000000000, 1000000000, WEIR_KEY_ALL);
	commit();
	icmp6(&f, LL6, 135, 255);
	CHECK_EQ(xmit_n(&f, 100), 0);
	CHECK_EQ(cstat(2).shed_pkts, 100);
	icmp6(&f, LL6, 136, 255);	/* NA still unnamed */
	CHECK_EQ(xmit_n(&f, 100), 100);
	CHECK_EQ(g(WEIR_G_SHED), 300);
}

/* The kill switch: what shedding would drop passes and is counted as a would-drop. */
SH_CASE(shed_kill_switch_would_drop)
{
	struct weir_config c;
	struct frame f;

	class_rules();
	shed_set(0, 0, 0, TH_ALL, 3);
	c = cfg_get();
	c.disabled = 1;
	cfg_put(&c);
	class_frame(&f, 3, 1);
	CHECK_EQ(xmit_n(&f, 1000), 1000);
	class_frame(&f, -1, 1);
	CHECK_EQ(xmit_n(&f, 1000), 1000);
	CHECK_EQ(cstat(3).shed_pkts, 2000);
	CHECK_EQ(g(WEIR_G_SHED), 2000);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 2000);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);
	CHECK_EQ(g(WEIR_G_PASSED), 2000);

	c.disabled = 0;
	cfg_put(&c);
	class_frame(&f, 3, 1);
	CHECK_EQ(xmit_n(&f, 1000), 0);
	CHECK_EQ(g(WEIR_G_DROPPED), 1000);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 2000);
}

/* A source on the allow list bypasses shedding, as it bypasses every limit. */
SH_CASE(shed_allow_list_bypasses)
{
	struct weir_config c;
	struct frame f;

	class_rules();
	shed_set(0, 0, 0, TH_ALL, 3);
	list_put4(skel->maps.wr_allow4, IP4(198, 18, CLASS_NET(3), 9), 32, 0);
	c = cfg_get();
	c.lists = WEIR_L_ALLOW4;
	cfg_put(&c);
	class_frame(&f, 3, 9);
	CHECK_EQ(xmit_n(&f, 500), 500);
	class_frame(&f, 3, 8);
	CHECK_EQ(xmit_n(&f, 500), 0);
	CHECK_EQ(g(WEIR_G_ALLOWED), 500);
	CHECK_EQ(cstat(3).pkts, 500);
}

/* The TC entry sheds like the XDP one. */
SH_CASE(shed_tc_fractions)
{
	const int n = 4000;
	struct frame f;
	int c;

	use_tc = 1;
	class_rules();
	shed_set(TH_ALL, 0, TH_HALF, TH_ALL, 0);
	for (c = 0; c <= WEIR_MAX_CLASS; c++) {
		char what[32];
		int shed;

		class_frame(&f, c, 1);
		shed = n - xmit_n(&f, n);
		snprintf(what, sizeof(what), "tc class %d", c);
		check_binomial(what, shed, n, c ? shed_get().threshold[c] : 0);
		CHECK_EQ(cstat(c).shed_pkts, shed);
	}
}

/* ------------------------------------------------------------------------ */
/* Reserved capacity                                                        */
/* ------------------------------------------------------------------------ */

/* One flow of a flood: a frame sent every `every` ticks. */
struct stream {
	struct frame f;
	int every;
	__u64 sent, passed;
};

/*
 * ticks ticks of tick_ns each from the current manual time; at each tick
 * the streams due send one packet, in array order, or with rotate set
 * starting one stream later each tick (so none is always first). Time ends
 * one tick past the last.
 */
static void flood(struct stream *s, int ns, __u64 tick_ns, int ticks, int rotate)
{
	__u64 start = skel->bss->manual_now_ns;
	int t, i, k;

	for (t = 0; t < ticks; t++) {
		set_now(start + t * tick_ns);
		for (k = 0; k < ns; k++) {
			i = rotate ? (t + k) % ns : k;
			if (t % s[i].every)
				continue;
			s[i].sent++;
			s[i].passed += xmit(&s[i].f) == 1;
		}
	}
	set_now(start + ticks * tick_ns);
}

/* Capacity buckets back to full. */
static void capacity_reset(void)
{
	struct weir_state zero = { 0 };
	__u32 i;

	for (i = 0; i < 4; i++)
		if (bpf_map__update_elem(skel->maps.wr_capacity, &i, 4, &zero, sizeof(zero), 0))
			CHECK_FAIL("resetting wr_capacity[%u]: %s", i, strerror(errno));
}

/*
 * Capacity 1000 pps (burst 100), reserve 20%: classes 1..3 together get
 * at most 800 pps (burst 80). Classes 0 and 3 each flood at 2000 pps for
 * 10 s, in both orders within a tick (class 3 first is the worst case for
 * class 0): class 0 keeps at least the reserve, 200 pps x 10 s, class 3
 * stays within 800 pps x 10 s + 80 and both within 1000 x 10 + 100.
 */
SH_CASE(capacity_pps_class0_keeps_reserve)
{
	const __u64 tick = 500 * USEC;
	const int ticks = 20000;	/* 10 s */
	int order;

	class_rules();
	capacity_set(WEIR_COST_PKT, 1000, 100, 0.2);
	CHECK_EQ(shed_get().cap[WEIR_COST_PKT].noncrit.rate, 800);
	CHECK_EQ(shed_get().cap[WEIR_COST_PKT].noncrit.burst, 80);
	for (order = 0; order < 2; order++) {
		struct stream s[2];
		struct weir_class_stats c0 = cstat(0), c3 = cstat(3);
		__u64 p0, p3;

		memset(s, 0, sizeof(s));
		class_frame(&s[order].f, 3, 1);
		class_frame(&s[!order].f, 0, 1);
		s[0].every = s[1].every = 1;
		capacity_reset();
		flood(s, 2, tick, ticks, 0);
		p3 = s[order].passed;
		p0 = s[!order].passed;
		note("capacity 1000 pps, reserve 20%%, %s first: class 0 %llu, class 3 %llu, "
		     "total %llu in 10 s", order ? "class 0" : "class 3", (unsigned long long)p0,
		     (unsigned long long)p3, (unsigned long long)(p0 + p3));
		CHECK(p0 >= 2000, "class 0 got %llu, want >= 2000 (the reserve)",
		      (unsigned long long)p0);
		CHECK(p3 <= 8080, "class 3 got %llu, want <= 8080", (unsigned long long)p3);
		CHECK(p0 + p3 <= 10100, "total %llu, want <= 10100",
		      (unsigned long long)(p0 + p3));
		/* The capacity is used, not left idle. */
		CHECK(p0 + p3 >= 10000, "total %llu, want >= 10000", (unsigned long long)(p0 + p3));
		CHECK_EQ(cstat(0).cap_pkts - c0.cap_pkts, 20000 - p0);
		CHECK_EQ(cstat(3).cap_pkts - c3.cap_pkts, 20000 - p3);
	}
	CHECK_EQ(g(WEIR_G_CAPACITY), cstat(0).cap_pkts + cstat(3).cap_pkts);
}

/* Class 0 alone may use all of the capacity; class 3 alone only its share. */
SH_CASE(capacity_pps_alone)
{
	struct stream s;

	class_rules();
	capacity_set(WEIR_COST_PKT, 1000, 100, 0.2);
	memset(&s, 0, sizeof(s));
	class_frame(&s.f, 0, 1);
	s.every = 1;
	flood(&s, 1, 500 * USEC, 20000, 0);
	note("class 0 alone at 2000 pps: %llu in 10 s", (unsigned long long)s.passed);
	CHECK_RANGE(s.passed, 10000, 10100);

	capacity_reset();
	memset(&s, 0, sizeof(s));
	class_frame(&s.f, 3, 1);
	s.every = 1;
	flood(&s, 1, 500 * USEC, 20000, 0);
	note("class 3 alone at 2000 pps: %llu in 10 s", (unsigned long long)s.passed);
	CHECK_RANGE(s.passed, 8000, 8080);
}

/*
 * Classes 1..3 share one non-critical budget; traffic no rule matches
 * counts in its default class. Arrival order is rotated each tick: the
 * budget is first come, first served, so a stream always first in its
 * tick would take it all.
 */
SH_CASE(capacity_noncritical_classes_share)
{
	struct stream s[4];
	__u64 sum = 0;
	int i;

	class_rules();
	shed_set(0, 0, 0, 0, 2);
	capacity_set(WEIR_COST_PKT, 1000, 100, 0.2);
	memset(s, 0, sizeof(s));
	for (i = 0; i < 3; i++)
		class_frame(&s[i].f, i + 1, 1);
	class_frame(&s[3].f, -1, 1);
	for (i = 0; i < 4; i++)
		s[i].every = 1;
	flood(s, 4, 1 * MSEC, 10000, 1);	/* 1000 pps each */
	for (i = 0; i < 4; i++)
		sum += s[i].passed;
	note("classes 1, 2, 3 and no-rule (class 2) at 1000 pps each: %llu %llu %llu %llu, "
	     "sum %llu in 10 s", (unsigned long long)s[0].passed,
	     (unsigned long long)s[1].passed, (unsigned long long)s[2].passed,
	     (unsigned long long)s[3].passed, (unsigned long long)sum);
	CHECK_RANGE(sum, 8000, 8080);
	for (i = 0; i < 4; i++)
		CHECK(s[i].passed >= 1900, "stream %d got %llu of its ~2000 share", i,
		      (unsigned long long)s[i].passed);
}

/*
 * Class 0 asking for less than the reserve (160 pps against 200) is never
 * refused, however hard class 3 floods.
 */
SH_CASE(capacity_class0_under_reserve_never_refused)
{
	struct stream s[2];

	class_rules();
	capacity_set(WEIR_COST_PKT, 1000, 100, 0.2);
	memset(s, 0, sizeof(s));
	class_frame(&s[0].f, 3, 1);
	s[0].every = 1;			/* 4000 pps */
	class_frame(&s[1].f, 0, 1);
	s[1].every = 25;		/* 160 pps */
	flood(s, 2, 250 * USEC, 40000, 0);
	note("class 0 at 160 pps beside class 3 at 4000 pps: %llu of %llu passed; class 3 %llu",
	     (unsigned long long)s[1].passed, (unsigned long long)s[1].sent,
	     (unsigned long long)s[0].passed);
	CHECK_EQ(s[1].passed, s[1].sent);
	CHECK_EQ(cstat(0).cap_pkts, 0);
	CHECK(s[0].passed <= 8080, "class 3 got %llu", (unsigned long long)s[0].passed);
}

/*
 * The byte variant: 1 MB/s (burst 100 kB), reserve 20%, 1000-byte packets
 * at 2000 pps from each of classes 0 and 3 (class 3 first in each tick).
 */
SH_CASE(capacity_bytes_class0_keeps_reserve)
{
	const __u64 len = 1000;
	struct stream s[2];
	__u64 b0, b3;

	class_rules();
	capacity_set(WEIR_COST_BYTE, 1000000, 100000, 0.2);
	memset(s, 0, sizeof(s));
	udp4_len(&s[0].f, IP4(198, 18, CLASS_NET(3), 1), len);
	udp4_len(&s[1].f, IP4(198, 18, CLASS_NET(0), 1), len);
	s[0].every = s[1].every = 1;
	flood(s, 2, 500 * USEC, 20000, 0);
	b3 = s[0].passed * len;
	b0 = s[1].passed * len;
	note("capacity 1 MB/s, reserve 20%%: class 0 %llu bytes, class 3 %llu bytes in 10 s",
	     (unsigned long long)b0, (unsigned long long)b3);
	CHECK(b0 >= 2000000, "class 0 got %llu bytes, want >= 2000000", (unsigned long long)b0);
	CHECK(b3 <= 8080000, "class 3 got %llu bytes, want <= 8080000", (unsigned long long)b3);
	CHECK(b0 + b3 <= 10100000, "total %llu bytes", (unsigned long long)(b0 + b3));
	CHECK(b0 + b3 >= 10000000, "total %llu bytes", (unsigned long long)(b0 + b3));
	CHECK_EQ(cstat(0).cap_bytes, (20000 - s[1].passed) * len);
	CHECK_EQ(cstat(3).cap_bytes, (20000 - s[0].passed) * len);
	/* the packet capacity is not configured: its buckets are untouched */
	CHECK_EQ(capstate(2 * WEIR_COST_PKT).tat, 0);
	CHECK_EQ(capstate(2 * WEIR_COST_PKT + 1).tat, 0);
}

/*
 * Packets refused by capacity take no rule tokens: with a per-source
 * limit of burst 5 (1 pps) behind a non-critical capacity of burst 2, 100
 * packets at once pass 2 (capacity refuses 98); afterwards, with capacity
 * to spare, the source still has the 3 tokens left of its 5.
 */
SH_CASE(capacity_drop_consumes_no_rule_tokens)
{
	struct weir_shed sh;
	struct weir_rule *r;
	struct frame f;
	int i, passed = 0;

	r = add_rule_in_class(3);
	match_src4(r, IP4(198, 18, CLASS_NET(3), 0), 24);
	add_limit(r, 1, 5, WEIR_KEY_SRC);
	commit();
	sh = shed_get();
	set_limit(&sh.cap[WEIR_COST_PKT].total, 100000, 100000, WEIR_COST_PKT, WEIR_KEY_ALL);
	set_limit(&sh.cap[WEIR_COST_PKT].noncrit, 1000, 2, WEIR_COST_PKT, WEIR_KEY_ALL);
	shed_put(&sh);
	class_frame(&f, 3, 1);
	CHECK_EQ(xmit_n(&f, 100), 2);
	CHECK_EQ(cstat(3).cap_pkts, 98);
	CHECK_EQ(rstat(0).passed_pkts, 2);
	CHECK_EQ(rstat(0).dropped_pkts, 0);
	/* one packet every 10 ms: capacity always has room, the rule 0.01 token more each */
	for (i = 1; i <= 10; i++) {
		set_now(T0 + i * 10 * MSEC);
		passed += xmit(&f) == 1;
	}
	CHECK_EQ(passed, 3);
	CHECK_EQ(rstat(0).passed_pkts, 5);
	CHECK_EQ(rstat(0).dropped_pkts, 7);
	CHECK_EQ(cstat(3).cap_pkts, 98);
}

/*
 * Packets refused by a rule take no capacity: 50 packets of a source
 * limited to burst 1 charge the capacity (burst 10) once, so another
 * source of the same class still gets the 9 left.
 */
SH_CASE(capacity_rule_drop_consumes_no_capacity)
{
	struct weir_rule *r;
	struct frame f;
	__u64 unit;

	r = add_rule_in_class(3);
	match_src4(r, IP4(198, 18, CLASS_NET(3), 0), 24);
	add_limit(r, 1, 1, WEIR_KEY_SRC);
	commit();
	capacity_set(WEIR_COST_PKT, 100, 10, 0);
	unit = wr_gcra_inc(shed_get().cap[WEIR_COST_PKT].total.interval_fp, 1);
	class_frame(&f, 3, 1);
	CHECK_EQ(xmit_n(&f, 50), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 49);
	CHECK_EQ(cstat(3).cap_pkts, 0);
	CHECK_EQ(capstate(0).tat, T0 + unit);
	CHECK_EQ(capstate(1).tat, T0 + unit);
	/* other sources of the class: 9 of the capacity's 10 left, one each (burst 1) */
	{
		int h, passed = 0;

		for (h = 2; h < 22; h++) {
			class_frame(&f, 3, h);
			passed += xmit(&f) == 1;
		}
		CHECK_EQ(passed, 9);
	}
	CHECK_EQ(cstat(3).cap_pkts, 11);
	CHECK_EQ(capstate(0).tat, T0 + 10 * unit);
}

/* Shed packets take no capacity either: shedding comes first. */
SH_CASE(shed_consumes_no_capacity)
{
	struct frame f;

	class_rules();
	capacity_set(WEIR_COST_PKT, 1000, 100, 0.2);
	shed_set(0, 0, 0, TH_ALL, 0);
	class_frame(&f, 3, 1);
	CHECK_EQ(xmit_n(&f, 500), 0);
	CHECK_EQ(cstat(3).shed_pkts, 500);
	CHECK_EQ(cstat(3).cap_pkts, 0);
	CHECK_EQ(capstate(0).tat, 0);
	CHECK_EQ(capstate(1).tat, 0);
	shed_set(0, 0, 0, 0, 0);
	CHECK_EQ(xmit_n(&f, 200), 80);
	CHECK_EQ(cstat(3).cap_pkts, 120);
}

int main(void)
{
	int err;

	/* on CPU 0 alone, the capacity check and charge never race either */
	err = harness_start("bpf_shed");
	if (err)
		return err > 0;
	teardown();

	return check_run_all();
}
