// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s decisions (user/auto/engine.c) on the host, time and
 * events injected, over a real sampler and the real fingerprint chooser:
 * a flood seen as two classes gets one rule, and the rule's words are
 * weir's grammar; advise installs nothing; max-rules leaves the next
 * attack advised, "no room"; the end, the linger and the removal, to the
 * step; an attack back while its rule lingers keeps it; a vector change
 * replaces the rule; normal traffic left when an attack stops does not;
 * an onset with no samples goes; a commit the daemon could not make; bad
 * options.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../tools/rand.h"
#include "auto/engine.h"
#include "lib/libweir.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

/* Nanoseconds in a millisecond and a second. */
#define MS 1000000ULL
#define S (1000 * MS)

#define DST1 0xc6120001	/* 198.18.0.1 */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* tools/rand.h's xorshift64*: a fixed sequence, so every run is the same. */
static uint32_t rnd(void)
{
	return (uint32_t)(wr_xorshift64s(&rng) >> 32);
}

static void addr4(__u8 *a, __u32 v)
{
	__u32 n = htonl(v);

	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	memcpy(a + 12, &n, 4);
}

/* A DNS query to .1 from a client of 198.18.128.0/17: what the class carries normally. */
static struct wr_fp_pkt dns(void)
{
	struct wr_fp_pkt p = { .family = 4, .proto = 17, .dport = 53, .flags = WR_FP_PORTS | WR_FP_L4 };

	addr4(p.saddr, 0xc6128000 | (rnd() & 0x7fff));
	addr4(p.daddr, DST1);
	p.sport = (__u16)(1024 + rnd() % 60000);
	p.len = 40 + rnd() % 60;
	p.ttl = (__u8)(50 + rnd() % 14);
	p.words[0] = rnd();
	p.words[1] = rnd();
	p.nr_words = 2;
	return p;
}

/* A spoofed flood to .1 port 53: random sources, fixed length, a constant first word. */
static struct wr_fp_pkt flood(__u32 word, __u32 len)
{
	struct wr_fp_pkt p = dns();

	addr4(p.saddr, rnd());
	p.len = len;
	p.ttl = (__u8)(rnd() % 255 + 1);
	p.words[0] = htonl(word);
	return p;
}

/*
 * Samples of [from, to): per second `normal` DNS queries and `attack`
 * flood packets, spread evenly, interleaved.
 */
static void fill(struct wr_sampler *s, uint64_t from, uint64_t to, int normal, int attack,
		 __u32 word, __u32 len)
{
	uint64_t t;
	int per = normal + attack, i;

	for (t = from; t < to; t += S)
		for (i = 0; i < per; i++) {
			/* Evenly: packet i is the attack's when (i + 1) x attack / per steps up. */
			bool att = (i + 1) * attack / per > i * attack / per;
			struct wr_fp_pkt p = att ? flood(word, len) : dns();

			wr_sampler_add(s, t + (uint64_t)i * (S / per), p.len + 14, &p);
		}
}

static struct wr_detect_event ev(int kind, uint64_t key, const char *name, uint64_t at)
{
	struct wr_detect_event e = { .kind = kind, .key = key, .at_ns = at };

	snprintf(e.name, sizeof(e.name), "%s", name);
	return e;
}

static uint64_t dst_key(void)
{
	struct wr_fp_pkt p = dns();

	return wr_auto_dst_key(&p);
}

static uint64_t port_key(void)
{
	struct wr_fp_pkt p = dns();

	return wr_auto_port_key(&p);
}

/* The action's words through the rule grammar, as the daemon will commit them. */
static int words_parse(const char *rule, const char *words)
{
	char buf[WR_AUTO_WORDS_LEN + 64], *argv[64], *save = NULL, *w;
	char name[WEIR_NAME_LEN] = "", srcset[WEIR_SRCSET_LEN];
	struct weir_rule r;
	struct wr_perr pe;
	int argc = 0, err;

	snprintf(buf, sizeof(buf), "%s %s", rule, words);
	for (w = strtok_r(buf, " ", &save); w && argc < 64; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	memset(&r, 0, sizeof(r));
	err = wr_rule_parse(argc, argv, &r, NULL, srcset, name, &pe);
	if (err)
		printf("# %s %s: %s\n", rule, words, pe.msg);
	return err;
}

/* Steps every 200 ms over (from, to]: the actions, appended to out. */
static int steps(struct wr_auto *a, struct wr_sampler *s, uint64_t from, uint64_t to,
		 struct wr_auto_action *out, int max)
{
	uint64_t t;
	int n = 0, k;

	for (t = from + 200 * MS; t <= to; t += 200 * MS) {
		k = wr_auto_step(a, s, t, out + n, (size_t)(max - n));
		if (k < 0)
			return k;
		n += k;
	}
	return n;
}

struct world {
	struct wr_sampler *s;
	struct wr_auto *a;
	struct wr_auto_action act[32];
};

static int world(struct world *w, int mode, uint32_t max_rules)
{
	struct wr_auto_opts o;
	char why[160];

	memset(w, 0, sizeof(*w));
	wr_auto_opts_default(&o);
	o.mode = mode;
	o.max_rules = max_rules;
	if (wr_sampler_new(1 << 16, S, &w->s) || wr_auto_new(&o, &w->a, why, sizeof(why))) {
		CHECK_FAIL("a world: %s", why);
		return -1;
	}
	/* 30 s of normal traffic before the onset at 30 s, then the flood at 90%. */
	fill(w->s, 0, 30 * S, 100, 0, 0, 0);
	fill(w->s, 30 * S, 32 * S, 30, 270, 0x17000302, 468);
	return 0;
}

static void world_free(struct world *w)
{
	wr_auto_free(w->a);
	wr_sampler_free(w->s);
}

/* A flood seen as its port class and its destination: one rule, in weir's grammar. */
TEST_CASE(auto_flood_one_rule)
{
	struct wr_detect_event e1 = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_detect_event e2 = ev(WR_DETECT_ONSET, dst_key(), "198.18.0.1", 30 * S + 200 * MS);
	struct wr_auto_mit m[4];
	struct world w;
	int n;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e1);
	wr_auto_event(w.a, &e2);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32);
	CHECK_EQ(n, 1);
	CHECK(n >= 1 && w.act[0].act == WR_AUTO_INSTALL && !strcmp(w.act[0].rule, "auto-1"),
	      "act %d rule %s", n ? w.act[0].act : 0, n ? w.act[0].rule : "");
	/* The fingerprint: its length and its first word, and it drops. */
	CHECK(n >= 1 && strstr(w.act[0].words, "len 468") &&
	      strstr(w.act[0].words, "payload 0") && strstr(w.act[0].words, "0x17000302"),
	      "words \"%s\"", n ? w.act[0].words : "");
	CHECK(n >= 1 && words_parse(w.act[0].rule, w.act[0].words) == 0, "words refused");
	printf("# %s: %s (%s)\n", w.act[0].rule, w.act[0].words, w.act[0].desc);
	CHECK_EQ(wr_auto_list(w.a, m, 4), 1);
	CHECK_EQ(m[0].nr_classes, 2);
	CHECK(m[0].installed && m[0].state == WR_AUTO_ACTIVE, "state %d installed %d", m[0].state,
	      m[0].installed);
	world_free(&w);
}

/*
 * The flood began a second before its onset showed: its first packets
 * are not the traffic before it (the before-sample ends 2 s before the
 * onset), so the fingerprint is still a drop rule.
 */
TEST_CASE(auto_attack_before_onset)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_auto_opts o;
	struct world w = { 0 };
	char why[160];
	int n;

	wr_auto_opts_default(&o);
	if (wr_sampler_new(1 << 16, S, &w.s) || wr_auto_new(&o, &w.a, why, sizeof(why))) {
		CHECK_FAIL("a world: %s", why);
		goto out;
	}
	fill(w.s, 0, 29 * S, 100, 0, 0, 0);
	fill(w.s, 29 * S, 32 * S, 30, 270, 0x17000302, 468);
	wr_auto_event(w.a, &e);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_INSTALL && strstr(w.act[0].words, "len 468"),
	      "%d actions: %s", n, n ? w.act[0].words : "");
out:
	world_free(&w);
}

/*
 * An onset that showed 4 s after the flood began (a busy host): the
 * before-sample ends where the class was last calm, not 2 s before the
 * onset, so the flood's first seconds are not taken for normal traffic.
 * Without calm_ns the same samples give no drop rule: the case can fail.
 */
TEST_CASE(auto_late_onset_before_calm)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_auto_opts o;
	int n, pass;

	wr_auto_opts_default(&o);
	for (pass = 0; pass < 2; pass++) {
		struct world w = { 0 };
		char why[160];

		if (wr_sampler_new(1 << 16, S, &w.s) || wr_auto_new(&o, &w.a, why, sizeof(why))) {
			CHECK_FAIL("a world: %s", why);
			world_free(&w);
			return;
		}
		fill(w.s, 0, 26 * S, 100, 0, 0, 0);
		fill(w.s, 26 * S, 32 * S, 30, 270, 0x17000302, 468);
		e.calm_ns = pass ? 26 * S - 200 * MS : 0;
		wr_auto_event(w.a, &e);
		n = steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32);
		if (pass)
			CHECK(n == 1 && w.act[0].act == WR_AUTO_INSTALL &&
			      strstr(w.act[0].words, "len 468") &&
			      strstr(w.act[0].words, "action block"),
			      "calm: %d actions: %s", n, n ? w.act[0].words : "");
		else
			CHECK(!n || !strstr(w.act[0].words, "action block") ||
			      !strstr(w.act[0].words, "len 468"),
			      "without calm, still a fingerprint: %s", w.act[0].words);
		world_free(&w);
	}
}

/*
 * The host's pressure as an onset: fingerprinted over every class's
 * samples, a class onset of the same flood later joins its rule, and it
 * ends with the pressure and that class.
 */
TEST_CASE(auto_pressure_onset)
{
	struct wr_detect_event p1 = ev(WR_DETECT_PRESSURE_ON, 0, "host", 30 * S + 200 * MS);
	struct wr_detect_event e1 = ev(WR_DETECT_ONSET, port_key(), "udp/53", 31 * S);
	struct wr_detect_event x1 = ev(WR_DETECT_END, port_key(), "udp/53", 50 * S);
	struct wr_detect_event p2 = ev(WR_DETECT_PRESSURE_OFF, 0, "host", 52 * S);
	struct wr_auto_mit m[2];
	struct world w;
	int n;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &p1);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 31 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_INSTALL && strstr(w.act[0].words, "len 468") &&
	      strstr(w.act[0].words, "0x17000302"), "%d actions: %s", n,
	      n ? w.act[0].words : "");
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].nr_classes == 1 &&
	      !strcmp(m[0].names[0], "host"), "classes %u %s", m[0].nr_classes, m[0].names[0]);
	wr_auto_event(w.a, &e1);
	CHECK_EQ(steps(w.a, w.s, 31 * S, 32 * S, w.act, 32), 0);
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].nr_classes == 2, "classes %u",
	      m[0].nr_classes);
	wr_auto_event(w.a, &x1);
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].state == WR_AUTO_ACTIVE, "state %d",
	      m[0].state);
	wr_auto_event(w.a, &p2);
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].state == WR_AUTO_LINGERING &&
	      m[0].expires_ns == 112 * S, "state %d expires %llu", m[0].state,
	      (unsigned long long)m[0].expires_ns);
	world_free(&w);
}

/*
 * A second vector beside the first (both go on): a rule of its own, the
 * first's kept as it was; the class's end ends both, and both go.
 */
TEST_CASE(auto_two_vectors_two_rules)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_detect_event x = ev(WR_DETECT_END, port_key(), "udp/53", 40 * S);
	struct wr_auto_mit m[4];
	struct world w;
	uint64_t t;
	int n, i, k;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_INSTALL && strstr(w.act[0].words, "len 468"),
	      "auto-1: %d", n);
	/* From 32 s: normal traffic, the first flood, and a second one (every third packet each). */
	for (t = 32 * S; t < 40 * S; t += S)
		for (i = 0; i < 450; i++) {
			struct wr_fp_pkt p = i % 3 == 0 ? dns() : i % 3 == 1 ?
					     flood(0x17000302, 468) : flood(0xd00dfeed, 1200);

			if (i % 3 == 1)
				p.flags |= WR_FP_DROPPED;	/* auto-1 drops it */
			wr_sampler_add(w.s, t + (uint64_t)i * (S / 450), p.len + 14, &p);
		}
	n = steps(w.a, w.s, 32 * S, 40 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_INSTALL && !strcmp(w.act[0].rule, "auto-2") &&
	      strstr(w.act[0].words, "len 1200") && strstr(w.act[0].words, "0xd00dfeed") &&
	      !strstr(w.act[0].words, "len 468"), "%d actions: %d %s %s", n,
	      n ? w.act[0].act : 0, n ? w.act[0].rule : "", n ? w.act[0].words : "");
	CHECK(n >= 1 && words_parse(w.act[0].rule, w.act[0].words) == 0, "words refused");
	k = (int)wr_auto_list(w.a, m, 4);
	CHECK(k == 2 && strstr(m[0].words, "len 468") && !m[0].changes &&
	      m[1].installed && !strcmp(m[1].names[0], "udp/53"), "%d mitigations", k);
	wr_auto_event(w.a, &x);
	k = (int)wr_auto_list(w.a, m, 4);
	CHECK(k == 2 && m[0].state == WR_AUTO_LINGERING && m[1].state == WR_AUTO_LINGERING,
	      "after the end: %d, states %d %d", k, k > 0 ? m[0].state : -1,
	      k > 1 ? m[1].state : -1);
	n = wr_auto_step(w.a, w.s, 100 * S, w.act, 32);
	CHECK(n == 2 && w.act[0].act == WR_AUTO_REMOVE && w.act[1].act == WR_AUTO_REMOVE,
	      "%d removals", n);
	CHECK_EQ(wr_auto_list(w.a, m, 4), 0);
	world_free(&w);
}

/* Normal traffic of the destination class: DNS queries, and one in four a TCP segment. */
static struct wr_fp_pkt mixed(int i)
{
	struct wr_fp_pkt p = dns();

	if (i % 4 == 3) {
		p.proto = 6;
		p.dport = 443;
		p.tcp_flags = 0x10;
	}
	return p;
}

/*
 * Samples for the destination class: normal traffic at 100 a second over
 * [0, 32 s); an earlier UDP flood (sport 123) at 2000 a second over
 * [12 s, 17 s), whose samples from 12.5 s on are marked dropped when
 * mark; the new flood at 400 a second from 30 s. Returns the sampler.
 */
static struct wr_sampler *two_floods(bool mark)
{
	struct wr_sampler *s;
	uint64_t t;
	int i;

	if (wr_sampler_new(1 << 17, S, &s))
		return NULL;
	for (t = 0; t < 32 * S; t += S) {
		for (i = 0; i < 100; i++) {
			struct wr_fp_pkt p = mixed(i);

			wr_sampler_add(s, t + (uint64_t)i * (S / 100), p.len + 14, &p);
		}
		for (i = 0; t >= 12 * S && t < 17 * S && i < 2000; i++) {
			struct wr_fp_pkt p = flood(0x0badf00d, 300);
			uint64_t ts = t + (uint64_t)i * (S / 2000) + S / 4000;

			p.sport = 123;
			if (mark && ts >= 12 * S + 500 * MS)
				p.flags |= WR_FP_DROPPED;
			wr_sampler_add(s, ts, p.len + 14, &p);
		}
		for (i = 0; t >= 30 * S && i < 400; i++) {
			struct wr_fp_pkt p = flood(0x17000302, 468);

			wr_sampler_add(s, t + (uint64_t)i * (S / 400) + S / 800, p.len + 14, &p);
		}
	}
	return s;
}

/*
 * A new flood 13 s after an earlier one that auto-1 dropped. The earlier
 * flood's samples are not the traffic before the new one: those auto-1
 * dropped are marked so and not taken, and the ones that passed while
 * auto-1 was gathered are spared by its fingerprint; the before-sample is
 * the normal traffic alone (it would be the newest 8192 samples, 7000-odd
 * of them the earlier flood's, without either), and the new flood gets
 * its fingerprint.
 */
TEST_CASE(auto_before_sample_skips_earlier_flood)
{
	struct wr_detect_event e0 = ev(WR_DETECT_ONSET, dst_key(), "198.18.0.1", 12 * S + 200 * MS);
	struct wr_detect_event x0 = ev(WR_DETECT_END, dst_key(), "198.18.0.1", 18 * S);
	struct wr_detect_event e = ev(WR_DETECT_ONSET, dst_key(), "198.18.0.1", 30 * S + 200 * MS);
	struct wr_auto_opts o;
	struct world w = { 0 };
	struct wr_auto_mit m[2];
	char why[160];
	int n;

	wr_auto_opts_default(&o);
	o.linger_ns = 2 * S;
	w.s = two_floods(true);
	if (!w.s || wr_auto_new(&o, &w.a, why, sizeof(why))) {
		CHECK_FAIL("a world: %s", why);
		world_free(&w);
		return;
	}
	wr_auto_event(w.a, &e0);
	n = steps(w.a, w.s, 12 * S + 200 * MS, 13 * S, w.act, 32);
	CHECK(n == 1 && strstr(w.act[0].words, "sport 123"), "auto-1: %d: %s", n,
	      n ? w.act[0].words : "");
	wr_auto_event(w.a, &x0);
	n = steps(w.a, w.s, 13 * S, 21 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_REMOVE, "auto-1 not removed: %d", n);
	wr_auto_event(w.a, &e);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 31 * S, w.act, 32);
	CHECK(n == 1 && strstr(w.act[0].words, "len 468") && strstr(w.act[0].words, "action block"),
	      "the new flood: %d: %s", n, n ? w.act[0].words : "");
	/* Normal traffic only: 100 a second over [0.2 s, 28.2 s). */
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].choice.m == 2800, "before-sample of %u",
	      m[0].choice.m);
	if (n)
		printf("# %s: %s\n", w.act[0].rule, w.act[0].desc);
	world_free(&w);
}

/* Advise: the same choice, reported, nothing installed. */
TEST_CASE(auto_advise_installs_nothing)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_auto_mit m[2];
	struct world w;
	int n;

	if (world(&w, WR_AUTO_ADVISE, 16))
		return;
	wr_auto_event(w.a, &e);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_ADVICE && !w.act[0].no_room &&
	      strstr(w.act[0].words, "len 468"), "%d actions, act %d", n, n ? w.act[0].act : 0);
	CHECK(wr_auto_list(w.a, m, 2) == 1 && !m[0].installed, "installed");
	world_free(&w);
}

/* max-rules 1: a second attack, on another class, is advised "no room". */
TEST_CASE(auto_max_rules)
{
	struct wr_detect_event e1 = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_detect_event e2 = ev(WR_DETECT_ONSET, 0x4242, "tcp/22", 40 * S + 200 * MS);
	struct world w;
	int n, i;

	if (world(&w, WR_AUTO_ON, 1))
		return;
	wr_auto_event(w.a, &e1);
	n = steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_INSTALL, "first: %d", n);
	/* tcp/22's samples: a SYN flood from random sources, nothing before it. */
	for (i = 0; i < 300; i++) {
		struct wr_fp_pkt p = flood(0, 40);

		p.proto = 6;
		p.dport = 22;
		p.tcp_flags = 0x02;
		p.nr_words = 0;
		wr_sampler_add(w.s, 40 * S + i * MS, 54, &p);
	}
	/* Its class key is the sampler's own: the port class of those packets. */
	{
		struct wr_fp_pkt p = flood(0, 40);

		p.proto = 6;
		p.dport = 22;
		e2.key = wr_auto_port_key(&p);
	}
	wr_auto_event(w.a, &e2);
	n = steps(w.a, w.s, 40 * S + 200 * MS, 41 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_ADVICE && w.act[0].no_room,
	      "second: %d actions, act %d no_room %d %s %s", n, n ? w.act[0].act : 0,
	      n ? w.act[0].no_room : 0, n ? w.act[0].rule : "", n ? w.act[0].desc : "");
	world_free(&w);
}

/* The end: kept linger (60 s) after the last class ends, removed at that step. */
TEST_CASE(auto_end_linger_remove)
{
	struct wr_detect_event e1 = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_detect_event e2 = ev(WR_DETECT_ONSET, dst_key(), "198.18.0.1", 30 * S + 200 * MS);
	struct wr_detect_event x1 = ev(WR_DETECT_END, port_key(), "udp/53", 50 * S);
	struct wr_detect_event x2 = ev(WR_DETECT_END, dst_key(), "198.18.0.1", 52 * S);
	struct wr_auto_mit m[2];
	struct world w;
	int n;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e1);
	wr_auto_event(w.a, &e2);
	CHECK_EQ(steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32), 1);
	wr_auto_event(w.a, &x1);
	/* One class ended: still active. */
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].state == WR_AUTO_ACTIVE, "state %d", m[0].state);
	wr_auto_event(w.a, &x2);
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].state == WR_AUTO_LINGERING &&
	      m[0].expires_ns == 112 * S, "state %d expires %llu", m[0].state,
	      (unsigned long long)m[0].expires_ns);
	CHECK_EQ(wr_auto_step(w.a, w.s, 112 * S - 1, w.act, 32), 0);
	n = wr_auto_step(w.a, w.s, 112 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_REMOVE && !strcmp(w.act[0].rule, "auto-1"),
	      "%d actions", n);
	CHECK_EQ(wr_auto_list(w.a, m, 2), 0);
	world_free(&w);
}

/* Back while lingering: the rule stays and is not removed at the old expiry. */
TEST_CASE(auto_back_while_lingering)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_detect_event x = ev(WR_DETECT_END, port_key(), "udp/53", 50 * S);
	struct wr_detect_event b = ev(WR_DETECT_ONSET, port_key(), "udp/53", 70 * S);
	struct wr_auto_mit m[2];
	struct world w;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e);
	CHECK_EQ(steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32), 1);
	wr_auto_event(w.a, &x);
	wr_auto_event(w.a, &b);
	CHECK(wr_auto_list(w.a, m, 2) == 1 && m[0].state == WR_AUTO_ACTIVE, "state %d", m[0].state);
	CHECK_EQ(wr_auto_step(w.a, w.s, 110 * S, w.act, 32), 0);
	world_free(&w);
}

/* The vector changes (another first word and length): the rule is replaced. */
TEST_CASE(auto_vector_change)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct world w;
	int n;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e);
	CHECK_EQ(steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32), 1);
	fill(w.s, 32 * S, 40 * S, 30, 270, 0xd00dfeed, 1200);
	n = steps(w.a, w.s, 32 * S, 40 * S, w.act, 32);
	CHECK(n == 1 && w.act[0].act == WR_AUTO_REPLACE && !strcmp(w.act[0].rule, "auto-1") &&
	      strstr(w.act[0].words, "len 1200") && strstr(w.act[0].words, "0xd00dfeed"),
	      "%d actions: %d %s", n, n ? w.act[0].act : 0, n ? w.act[0].words : "");
	CHECK(n >= 1 && words_parse(w.act[0].rule, w.act[0].words) == 0, "words refused");
	world_free(&w);
}

/* The attack stops before its end is decided: normal traffic alone replaces nothing. */
TEST_CASE(auto_normal_after_attack_keeps_rule)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct world w;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e);
	CHECK_EQ(steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32), 1);
	fill(w.s, 32 * S, 45 * S, 300, 0, 0, 0);
	CHECK_EQ(steps(w.a, w.s, 32 * S, 45 * S, w.act, 32), 0);
	world_free(&w);
}

/* An onset with nothing sampled of its class goes when the gather ends. */
TEST_CASE(auto_onset_without_samples)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, 0x777, "udp/7", 30 * S + 200 * MS);
	struct wr_auto_mit m[2];
	struct world w;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e);
	CHECK_EQ(steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32), 0);
	CHECK_EQ(wr_auto_list(w.a, m, 2), 0);
	world_free(&w);
}

/* A rule the daemon could not commit: advised from then on, nothing to remove. */
TEST_CASE(auto_not_installed)
{
	struct wr_detect_event e = ev(WR_DETECT_ONSET, port_key(), "udp/53", 30 * S + 200 * MS);
	struct wr_detect_event x = ev(WR_DETECT_END, port_key(), "udp/53", 50 * S);
	struct world w;

	if (world(&w, WR_AUTO_ON, 16))
		return;
	wr_auto_event(w.a, &e);
	CHECK_EQ(steps(w.a, w.s, 30 * S + 200 * MS, 32 * S, w.act, 32), 1);
	wr_auto_not_installed(w.a, "auto-1");
	wr_auto_event(w.a, &x);
	CHECK_EQ(wr_auto_step(w.a, w.s, 200 * S, w.act, 32), 0);
	world_free(&w);
}

TEST_CASE(auto_bad_options)
{
	struct wr_auto_opts o;
	struct wr_auto *a = (struct wr_auto *)1;
	char why[160] = "";

	wr_auto_opts_default(&o);
	o.max_rules = 0;
	CHECK_EQ(wr_auto_new(&o, &a, why, sizeof(why)), -EINVAL);
	CHECK(a == NULL && strstr(why, "max-rules"), "\"%s\"", why);
	wr_auto_opts_default(&o);
	o.mode = 7;
	CHECK_EQ(wr_auto_new(&o, &a, why, sizeof(why)), -EINVAL);
	wr_auto_opts_default(&o);
	o.fp.cover = 1.5;
	CHECK_EQ(wr_auto_new(&o, &a, why, sizeof(why)), -EINVAL);
	wr_auto_opts_default(&o);
	o.before_ns = 2 * S;	/* not longer than the gap before the onset */
	CHECK_EQ(wr_auto_new(&o, &a, why, sizeof(why)), -EINVAL);
	wr_auto_opts_default(&o);
	CHECK_EQ(wr_auto_new(&o, &a, why, sizeof(why)), 0);
	wr_auto_free(a);
}

int main(void)
{
	return check_run_all();
}
