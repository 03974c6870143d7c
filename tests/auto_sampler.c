// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s samples and class estimates (user/auto/sampler.c) on the
 * host, time injected: the data path's totals shared among the classes by
 * the window's samples, a budget spent at a second's start, references and
 * resets, the ring's take, a full class table, bad input; and the
 * estimates through the detector (user/auto/baseline.c): a flood that
 * takes over the samples is an onset of its class at the first reading
 * whose window holds it, and of no other class.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "auto/sampler.h"
#include "auto/baseline.h"

/* Nanoseconds in a millisecond and a second. */
#define MS 1000000ULL
#define S (1000 * MS)

static struct wr_fp_pkt pkt(__u8 proto, __u16 dport, __u32 dst4, __u32 len)
{
	struct wr_fp_pkt p = { .family = 4, .proto = proto, .dport = dport, .len = len };
	__u32 d = htonl(dst4);

	p.daddr[10] = p.daddr[11] = 0xff;
	memcpy(p.daddr + 12, &d, 4);
	if (proto == 6 || proto == 17)
		p.flags = WR_FP_PORTS | WR_FP_L4;
	return p;
}

#define DST1 0xc6120001	/* 198.18.0.1 */
#define DST2 0xc6120002	/* 198.18.0.2 */

struct seen {
	int n;
	struct {
		uint64_t key, pkts, bytes;
		char name[WR_AUTO_NAME_LEN];
	} c[64];
};

static void on_class(void *ctx, uint64_t key, const char *name, uint64_t pkts, uint64_t bytes,
		     uint64_t at_ns)
{
	struct seen *s = ctx;
	int i;

	(void)at_ns;
	/* A fresh class comes twice: its zero, then its reading; keep the last. */
	for (i = 0; i < s->n; i++)
		if (s->c[i].key == key)
			break;
	if (i < s->n) {
		s->c[i].pkts = pkts;
		s->c[i].bytes = bytes;
	} else if (s->n < 64) {
		s->c[s->n].key = key;
		s->c[s->n].pkts = pkts;
		s->c[s->n].bytes = bytes;
		snprintf(s->c[s->n].name, WR_AUTO_NAME_LEN, "%s", name);
		s->n++;
	}
}

static int find(const struct seen *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return i;
	return -1;
}

TEST_CASE(sampler_keys_and_names)
{
	struct wr_fp_pkt u = pkt(17, 53, DST1, 80), t = pkt(6, 443, DST2, 60), i = pkt(1, 0, DST1, 84);
	struct wr_fp_pkt v6 = { .family = 6, .proto = 17, .dport = 123, .flags = WR_FP_PORTS };
	char b[WR_AUTO_NAME_LEN];

	inet_pton(AF_INET6, "2001:db8::7", v6.daddr);
	wr_auto_key_name(wr_auto_port_key(&u), &u, b, sizeof(b));
	CHECK(!strcmp(b, "udp/53"), "\"%s\"", b);
	wr_auto_key_name(wr_auto_port_key(&t), &t, b, sizeof(b));
	CHECK(!strcmp(b, "tcp/443"), "\"%s\"", b);
	wr_auto_key_name(wr_auto_port_key(&i), &i, b, sizeof(b));
	CHECK(!strcmp(b, "icmp"), "\"%s\"", b);
	wr_auto_key_name(wr_auto_dst_key(&u), &u, b, sizeof(b));
	CHECK(!strcmp(b, "198.18.0.1"), "\"%s\"", b);
	wr_auto_key_name(wr_auto_dst_key(&v6), &v6, b, sizeof(b));
	CHECK(!strcmp(b, "2001:db8::7"), "\"%s\"", b);
	CHECK(wr_auto_port_key(&u) != wr_auto_port_key(&t), "two ports, one key");
	CHECK(wr_auto_dst_key(&u) != wr_auto_dst_key(&t), "two destinations, one key");
	CHECK(wr_auto_dst_key(&v6) != wr_auto_dst_key(&u), "IPv6 and IPv4, one key");
	CHECK((wr_auto_dst_key(&v6) & WR_AUTO_KEY_KIND) == WR_AUTO_KEY_DST, "kind %llx",
	      (unsigned long long)wr_auto_dst_key(&v6));
}

/* 70% DNS to .1 at 80 bytes, 30% HTTPS to .2 at 1500: totals shared so, bytes by length. */
TEST_CASE(sampler_shares_totals)
{
	struct wr_sampler *s;
	struct seen a = { 0 };
	struct wr_fp_pkt u = pkt(17, 53, DST1, 80), t = pkt(6, 443, DST2, 1500);
	int i, k;

	CHECK_EQ(wr_sampler_new(4096, S, &s), 0);
	if (!s)
		return;
	CHECK_EQ(wr_sampler_read(s, 1000, 100000, 10 * S, NULL, NULL), 0);
	for (i = 0; i < 1000; i++)
		wr_sampler_add(s, 10 * S + (i + 1) * MS / 2, i % 10 < 7 ? 94 : 1514,
			       i % 10 < 7 ? &u : &t);
	/* 10000 packets more; bytes 7000 x 94 + 3000 x 1514. */
	CHECK_EQ(wr_sampler_read(s, 11000, 100000 + 7000 * 94 + 3000 * 1514, 10 * S + 600 * MS,
				 on_class, &a), 0);
	CHECK_EQ(a.n, 4);
	k = find(&a, "udp/53");
	CHECK(k >= 0 && a.c[k].pkts == 7000 && a.c[k].bytes == 7000 * 94, "udp/53: %llu %llu",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 0ULL,
	      k >= 0 ? (unsigned long long)a.c[k].bytes : 0ULL);
	k = find(&a, "198.18.0.2");
	CHECK(k >= 0 && a.c[k].pkts == 3000 && a.c[k].bytes == 3000 * 1514, "198.18.0.2: %llu %llu",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 0ULL,
	      k >= 0 ? (unsigned long long)a.c[k].bytes : 0ULL);
	CHECK_EQ(wr_sampler_added(s), 1000);
	CHECK_EQ(wr_sampler_unclassed(s), 0);
	wr_sampler_free(s);
}

/*
 * The budget spent in a second's first 10 ms: the readings at 200, 400, ...
 * ms share by those samples still, and once they are older than the
 * window nothing more goes to their classes.
 */
TEST_CASE(sampler_window_of_a_budget)
{
	struct wr_sampler *s;
	struct wr_fp_pkt u = pkt(17, 53, DST1, 80);
	uint64_t t, total = 0;
	struct seen a;
	int i, k;

	CHECK_EQ(wr_sampler_new(1024, S, &s), 0);
	if (!s)
		return;
	CHECK_EQ(wr_sampler_read(s, 0, 0, 5 * S, NULL, NULL), 0);
	for (i = 0; i < 100; i++)
		wr_sampler_add(s, 5 * S + i * MS / 10, 94, &u);
	for (t = 5 * S + 200 * MS; t <= 5 * S + 1000 * MS; t += 200 * MS) {
		total += 1000;
		memset(&a, 0, sizeof(a));
		CHECK_EQ(wr_sampler_read(s, total, total * 94, t, on_class, &a), 0);
	}
	k = find(&a, "udp/53");
	CHECK(k >= 0 && a.c[k].pkts == 5000, "udp/53 after a second: %llu of 5000",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 0ULL);
	/* 1.2 s on: the samples left the window (and its disorder slack); nothing is shared. */
	total += 1000;
	memset(&a, 0, sizeof(a));
	CHECK_EQ(wr_sampler_read(s, total, total * 94, 5 * S + 1200 * MS, on_class, &a), 0);
	k = find(&a, "udp/53");
	CHECK(k >= 0 && a.c[k].pkts == 5000, "udp/53 past the window: %llu, want 5000 still",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 0ULL);
	wr_sampler_free(s);
}

/* A first reading and a reset only set the reference; time may not go back. */
TEST_CASE(sampler_reference_and_reset)
{
	struct wr_sampler *s;
	struct wr_fp_pkt u = pkt(17, 53, DST1, 80);
	struct seen a = { 0 };
	int k;

	CHECK_EQ(wr_sampler_new(64, S, &s), 0);
	if (!s)
		return;
	wr_sampler_add(s, 1 * S, 94, &u);
	CHECK_EQ(wr_sampler_read(s, 5000000, 500000000, 1 * S + 100 * MS, on_class, &a), 0);
	k = find(&a, "udp/53");
	CHECK(k >= 0 && a.c[k].pkts == 0, "first reading gave %llu",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 1ULL);
	/* Counters reset (a reload): the reference only, again. */
	memset(&a, 0, sizeof(a));
	CHECK_EQ(wr_sampler_read(s, 10, 1000, 1 * S + 200 * MS, on_class, &a), 0);
	k = find(&a, "udp/53");
	CHECK(k >= 0 && a.c[k].pkts == 0, "a reset gave %llu",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 1ULL);
	memset(&a, 0, sizeof(a));
	CHECK_EQ(wr_sampler_read(s, 110, 10400, 1 * S + 300 * MS, on_class, &a), 0);
	k = find(&a, "udp/53");
	CHECK(k >= 0 && a.c[k].pkts == 100, "after the reset %llu, want 100",
	      k >= 0 ? (unsigned long long)a.c[k].pkts : 0ULL);
	CHECK_EQ(wr_sampler_read(s, 120, 10500, 1 * S + 250 * MS, NULL, NULL), -EINVAL);
	wr_sampler_free(s);
}

/* take: one class's samples in a time range, the newest max of them, oldest first. */
TEST_CASE(sampler_take)
{
	struct wr_fp_pkt u = pkt(17, 53, DST1, 80), t = pkt(6, 443, DST2, 60), out[8];
	struct wr_sampler *s;
	size_t n;
	int i;

	CHECK_EQ(wr_sampler_new(64, S, &s), 0);
	if (!s)
		return;
	for (i = 0; i < 100; i++) {
		struct wr_fp_pkt p = i % 2 ? t : u;

		p.len = (__u32)i;	/* which one it was */
		if (i % 5 == 0)
			p.flags |= WR_FP_DROPPED;	/* weir dropped it */
		wr_sampler_add(s, S + i * MS, 100, &p);
	}
	/* The ring kept the last 64 (36..99); DNS ones are even. */
	n = wr_sampler_take(s, wr_auto_port_key(&u), S + 90 * MS, S + 97 * MS, WR_TAKE_ALL, out, 8);
	CHECK_EQ(n, 4);
	CHECK(n == 4 && out[0].len == 90 && out[3].len == 96, "got %u..%u",
	      n ? out[0].len : 0, n ? out[n - 1].len : 0);
	n = wr_sampler_take(s, wr_auto_dst_key(&t), 0, 10 * S, WR_TAKE_ALL, out, 3);
	CHECK(n == 3 && out[0].len == 95 && out[2].len == 99, "newest 3 of .2: %zu, %u..%u", n,
	      n ? out[0].len : 0, n ? out[n - 1].len : 0);
	n = wr_sampler_take(s, 0, 0, 10 * S, WR_TAKE_ALL, out, 8);
	CHECK(n == 8 && out[7].len == 99 && out[0].len == 92, "every class: %zu, %u..%u", n,
	      n ? out[0].len : 0, n ? out[n - 1].len : 0);
	/* Passed only: 90 and 95 were dropped. */
	n = wr_sampler_take(s, 0, S + 89 * MS, S + 97 * MS, WR_TAKE_PASSED, out, 8);
	CHECK(n == 6 && out[0].len == 89 && out[1].len == 91 && out[4].len == 94 &&
	      out[5].len == 96, "passed: %zu, %u %u %u %u", n, n ? out[0].len : 0,
	      n > 1 ? out[1].len : 0, n > 4 ? out[4].len : 0, n > 5 ? out[5].len : 0);
	/* Older than the ring: gone. */
	CHECK_EQ(wr_sampler_take(s, 0, 0, S + 36 * MS, WR_TAKE_ALL, out, 8), 0);
	wr_sampler_free(s);
}

/* A full table: samples of further classes count for none, and say so. */
TEST_CASE(sampler_table_full)
{
	struct wr_sampler *s;
	struct seen a = { 0 };
	int i;

	CHECK_EQ(wr_sampler_new(64, S, &s), 0);
	if (!s)
		return;
	/* One port class, WR_AUTO_CLASSES_MAX + 10 destinations. */
	for (i = 0; i < WR_AUTO_CLASSES_MAX + 10; i++) {
		struct wr_fp_pkt p = pkt(17, 53, DST1 + (__u32)i, 80);

		wr_sampler_add(s, S, 94, &p);
	}
	CHECK_EQ(wr_sampler_unclassed(s), 11);
	CHECK_EQ(wr_sampler_read(s, 0, 0, S, NULL, NULL), 0);
	CHECK_EQ(wr_sampler_read(s, 64, 64 * 94, S + 10 * MS, on_class, &a), 0);
	CHECK_EQ(wr_sampler_added(s), WR_AUTO_CLASSES_MAX + 10);
	wr_sampler_free(s);
}

TEST_CASE(sampler_bad_input)
{
	struct wr_sampler *s = (struct wr_sampler *)1;

	CHECK_EQ(wr_sampler_new(100, S, &s), -EINVAL);	/* not a power of two */
	CHECK(s == NULL, "out not cleared");
	CHECK_EQ(wr_sampler_new(32, S, &s), -EINVAL);
	CHECK_EQ(wr_sampler_new(1 << 21, S, &s), -EINVAL);
	CHECK_EQ(wr_sampler_new(64, 0, &s), -EINVAL);
	CHECK_EQ(wr_sampler_new(64, 61 * S, &s), -EINVAL);
}

struct det {
	struct wr_detector *d;
	uint64_t now;
	int err;
};

static void to_detector(void *ctx, uint64_t key, const char *name, uint64_t pkts, uint64_t bytes,
			uint64_t at_ns)
{
	struct det *x = ctx;

	if (wr_detect_feed(x->d, key, name, pkts, bytes, at_ns)) {
		x->err++;
		printf("# %s at %.1f s: %s\n", name, at_ns / 1e9, wr_detect_error(x->d));
	}
}

/*
 * Through the detector: 40 s of normal traffic (DNS to .1 at 1000 pps,
 * HTTPS to .2 at 500 pps), then from 40 s a 20 kpps UDP flood to .1 port
 * 9999. Readings every 200 ms; the capture's samples one in N at random,
 * about 300 a second whatever the rate (so each 200 ms holds about 60 in
 * the traffic's proportions). The onset is udp/9999's and 198.18.0.1's, at
 * the first reading that holds the flood, and nothing else's: the normal
 * classes' estimates do not take the flood's packets.
 */
TEST_CASE(sampler_flood_onset)
{
	struct wr_fp_pkt dns = pkt(17, 53, DST1, 80), web = pkt(6, 443, DST2, 1500);
	struct wr_fp_pkt fl = pkt(17, 9999, DST1, 512);
	struct wr_detect_opts o;
	struct wr_detect_event ev[16];
	struct wr_sampler *s;
	struct det x = { 0 };
	char why[200];
	uint64_t t, pk = 0, by = 0, onset_at = 0;
	int n, i, others = 0;
	bool port = false, dst = false;

	wr_detect_opts_default(&o);
	o.warmup_ns = 10 * S;
	CHECK_EQ(wr_detect_new(&o, &x.d, why, sizeof(why)), 0);
	CHECK_EQ(wr_sampler_new(4096, S, &s), 0);
	if (!x.d || !s)
		goto out;
	for (t = S; t <= 45 * S; t += 200 * MS) {
		bool flood = t > 40 * S;
		/* The 200 ms behind t: its packets, and its 60 samples in their proportions. */
		int nd = flood ? 3 : 40, nw = flood ? 1 : 20, nf = flood ? 56 : 0;

		for (i = 0; i < nd + nw + nf; i++) {
			const struct wr_fp_pkt *p = i < nd ? &dns : i < nd + nw ? &web : &fl;

			wr_sampler_add(s, t - 200 * MS + (i + 1) * 3 * MS, p->len + 14, p);
		}
		pk += 200 + 100 + (flood ? 4000 : 0);
		by += 200 * 94 + 100 * 1514 + (flood ? 4000 * 526 : 0);
		x.now = t;
		CHECK_EQ(wr_sampler_read(s, pk, by, t, to_detector, &x), 0);
		n = wr_detect_poll(x.d, t, ev, 16);
		for (i = 0; i < n; i++) {
			if (ev[i].kind != WR_DETECT_ONSET)
				continue;
			if (!strcmp(ev[i].name, "udp/9999"))
				port = true, onset_at = ev[i].at_ns;
			else if (!strcmp(ev[i].name, "198.18.0.1"))
				dst = true;
			else
				others++, printf("# onset of %s at %.1f s: %.0f pps, band %.0f\n", ev[i].name,
						 ev[i].at_ns / 1e9, ev[i].rate[0], ev[i].band[0]);
		}
	}
	CHECK_EQ(x.err, 0);
	CHECK(port && dst, "onsets: udp/9999 %d, 198.18.0.1 %d", port, dst);
	CHECK_EQ(others, 0);
	/* The first reading that holds the flood's samples. */
	CHECK_EQ(onset_at, 40 * S + 200 * MS);
out:
	wr_sampler_free(s);
	wr_detect_free(x.d);
}

int main(void)
{
	return check_run_all();
}
