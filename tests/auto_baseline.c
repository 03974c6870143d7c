// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s baselines and onset detector (user/auto/baseline.c) on
 * recorded traces. Each trace case draws its traffic from a seeded PRNG
 * (Poisson arrivals per 10 ms slice, a per-second level noise), writes it
 * as a pcap file into a fresh temporary directory (libpcap: pcap_open_dead
 * and pcap_dump; frames from tests/packet.h, 198.18.0.0/15 only), reads it
 * back with pcap_open_offline, classifies each frame with the data path's
 * own parser (wr_parse) by (protocol, destination port), and counts as the
 * data path does: monotonic packet and byte (L3 length) counters per
 * class, read every 100-250 ms (a seeded jitter) at the time the pcap
 * timestamps say. Each reading feeds the detector and polls it, so an
 * event is pinned to the reading it came out of: cases assert reading
 * indexes and injected times, never a duration. No clock is read.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "check.h"
#include "../tools/rand.h"
#include "packet.h"
#include "auto/baseline.h"

/* Nanoseconds in a second. */
#define NS 1000000000ULL
/* Trace time 0 as a pcap timestamp, in seconds (any nonzero monotonic time). */
#define T0 1000
/* Packets are drawn per slice of this many microseconds. */
#define SLICE_US 10000
/* Bytes of each frame recorded (headers); the record's length field keeps the whole frame's. */
#define SNAP 64
/* Classes in one trace at most. */
#define MAX_TCLASSES 256
/* Floods per class at most. */
#define MAX_FLOODS 2
/* Readings of one trace at most (900 s at 100 ms). */
#define MAX_READINGS 9100
/* The first classes of a trace, whose counters each reading records. */
#define WATCHED 4
/* Events recorded per trace at most. */
#define MAX_RECS 256
/* UDP, the protocol of every trace class. */
#define UDP 17

/* ---- the PRNG: tools/rand.h's xorshift64*, seeded per case ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
	return wr_xorshift64s(&rng);
}

/* Its state must not be zero. */
static void seed(uint64_t s)
{
	rng = s ? s : 1;
}

/* Uniform in [0, 1). */
static double urand(void)
{
	return (double)(rnd() >> 11) * 0x1.0p-53;
}

/* A Poisson draw of mean lam: Knuth's product below 30, a rounded normal above. */
static unsigned int poisson(double lam)
{
	if (lam <= 0)
		return 0;
	if (lam < 30) {
		double l = exp(-lam), p = urand();
		unsigned int k = 0;

		while (p > l) {
			p *= urand();
			k++;
		}
		return k;
	}
	double u1 = urand() + 1e-12, u2 = urand();
	double g = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	double v = lam + sqrt(lam) * g + 0.5;

	return v > 0 ? (unsigned int)v : 0;
}

/* ---- traces ---- */

enum shape {
	FLAT,		/* base */
	DIURNAL,	/* base .. a and back over period p (a raised cosine) */
	RAMP,		/* base to a exponentially over p seconds, then a */
	STEP,		/* base, a from p seconds */
};

/* Extra packets on a class: pps from t0 to t1, on for on_s and off for off_s (on_s 0: always). */
struct flood {
	double t0, t1, pps, on_s, off_s;
	unsigned int paylen;
};

struct tclass {
	__u16 port;
	enum shape shape;
	double base, a, p;	/* pps, and the shape's parameters */
	double noise;		/* the level times 1 + noise x U[-1, 1], drawn each second */
	unsigned int paylen;	/* UDP payload bytes of its normal packets */
	struct flood fl[MAX_FLOODS];
	int nfl;
	double mult;		/* this second's noise */
};

struct trace {
	struct tclass c[MAX_TCLASSES];
	int n;
	double dur;		/* seconds */
	uint64_t seed;
	double reset_at;	/* the counters are zeroed at the first reading after (0: never) */
	double probe_at;	/* the classes are listed at the first reading after (0: never) */
};

static struct tclass *add(struct trace *tr, __u16 port, double base)
{
	struct tclass *c = &tr->c[tr->n++];

	memset(c, 0, sizeof(*c));
	c->port = port;
	c->base = base;
	c->paylen = 100;
	return c;
}

static void add_flood(struct tclass *c, double t0, double t1, double pps, unsigned int paylen)
{
	c->fl[c->nfl++] = (struct flood){ .t0 = t0, .t1 = t1, .pps = pps, .paylen = paylen };
}

/* The class's normal rate at t. */
static double normal_rate(const struct tclass *c, double t)
{
	switch (c->shape) {
	case DIURNAL:
		return c->base + (c->a - c->base) * (1 - cos(2 * M_PI * t / c->p)) / 2;
	case RAMP:
		return t < c->p ? c->base * pow(c->a / c->base, t / c->p) : c->a;
	case STEP:
		return t < c->p ? c->base : c->a;
	default:
		return c->base;
	}
}

static bool flood_on(const struct flood *f, double t)
{
	if (t < f->t0 || t >= f->t1)
		return false;
	return f->on_s <= 0 || fmod(t - f->t0, f->on_s + f->off_s) < f->on_s;
}

/* n frames of class c with paylen payload bytes at slice s, the k-th frame of the slice on. */
static void emit(pcap_dumper_t *w, const struct tclass *c, unsigned int paylen, unsigned int n,
		 long s, unsigned int *k)
{
	struct frame l4, f;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t r = rnd();
		struct pcap_pkthdr h;

		/* A source in 198.18.0.0/15 and a port of its own. */
		l4_udp_from(&l4, 1024 + r % 60000, c->port, paylen);
		frame4(&f, IP4(198, 18 + ((r >> 20) & 1), (r >> 24) & 0xff, (r >> 32) & 0xff), UDP,
		       &l4);
		h.ts.tv_sec = T0 + s / (1000000 / SLICE_US);
		h.ts.tv_usec = (s % (1000000 / SLICE_US)) * SLICE_US + (*k)++;
		h.caplen = f.n < SNAP ? f.n : SNAP;
		h.len = f.n;
		pcap_dump((u_char *)w, &h, f.b);
	}
}

/* Write tr's traffic to path: 0, or -1 (what failed is checked). */
static int write_trace(struct trace *tr, const char *path)
{
	long s, slices = (long)(tr->dur * 1e6 / SLICE_US);
	pcap_t *p = pcap_open_dead(DLT_EN10MB, SNAP);
	pcap_dumper_t *w = p ? pcap_dump_open(p, path) : NULL;
	int i, j;

	CHECK(w, "pcap_dump_open %s: %s", path, p ? pcap_geterr(p) : "no pcap_t");
	if (!w) {
		if (p)
			pcap_close(p);
		return -1;
	}
	seed(tr->seed);
	for (s = 0; s < slices; s++) {
		double t = (double)s * SLICE_US / 1e6;
		unsigned int k = 0;

		for (i = 0; i < tr->n; i++) {
			struct tclass *c = &tr->c[i];

			if (s % (1000000 / SLICE_US) == 0)
				c->mult = 1 + c->noise * (2 * urand() - 1);
			emit(w, c, c->paylen, poisson(normal_rate(c, t) * c->mult * SLICE_US / 1e6),
			     s, &k);
			for (j = 0; j < c->nfl; j++)
				if (flood_on(&c->fl[j], t))
					emit(w, c, c->fl[j].paylen,
					     poisson(c->fl[j].pps * SLICE_US / 1e6), s, &k);
		}
	}
	pcap_dump_close(w);
	pcap_close(p);
	return 0;
}

/* An event as a trace run saw it: the reading it came out of. */
struct rec {
	struct wr_detect_event ev;
	int reading;
};

/* What a run of one trace through a detector saw. */
struct run {
	struct wr_detector *d;
	uint64_t rtime[MAX_READINGS];	/* each reading's time */
	int nreadings;
	struct rec recs[MAX_RECS];
	int nrecs;
	int feed_err, poll_err;		/* the first error of a feed or a poll, or 0 */
	long frames, bad;		/* frames read, frames not of a trace class */
	int resets;
	uint64_t wcnt[WATCHED][WR_DETECT_NR_DIMS][MAX_READINGS];	/* their counters at each */
	double wbase[WR_DETECT_NR_DIMS][MAX_READINGS];	/* the first class's level after each */
	struct wr_detect_class probe[MAX_TCLASSES];	/* the listing at probe_at */
	size_t nprobe;
};

static struct run R;
static struct trace TR;

static uint64_t key_of(__u16 port)
{
	return ((uint64_t)UDP << 16) | port;
}

/* Trace time t (seconds) as the detector sees it. */
static uint64_t at(double t)
{
	return (uint64_t)T0 * NS + (uint64_t)llround(t * 1e9);
}

/* The trace's counters, which the readings feed. */
static uint64_t cnt_pk[MAX_TCLASSES], cnt_by[MAX_TCLASSES];
static bool cnt_seen[MAX_TCLASSES];

/* One reading at now: every class the data path has counters for, then a poll. */
static void reading(struct trace *tr, uint64_t now)
{
	static struct wr_detect_class lst[MAX_TCLASSES];
	struct wr_detect_event ev[32];
	int i, n, k = R.nreadings;
	char name[WR_DETECT_NAME_LEN];

	if (k >= MAX_READINGS)
		return;
	R.rtime[R.nreadings++] = now;
	if (tr->reset_at > 0 && !R.resets && now >= at(tr->reset_at)) {
		memset(cnt_pk, 0, sizeof(cnt_pk));
		memset(cnt_by, 0, sizeof(cnt_by));
		R.resets++;
	}
	for (i = 0; i < tr->n && i < WATCHED; i++) {
		R.wcnt[i][WR_DETECT_PKTS][k] = cnt_pk[i];
		R.wcnt[i][WR_DETECT_BYTES][k] = cnt_by[i];
	}
	for (i = 0; i < tr->n; i++) {
		int err;

		if (!cnt_seen[i])
			continue;
		snprintf(name, sizeof(name), "udp/%u", tr->c[i].port);
		err = wr_detect_feed(R.d, key_of(tr->c[i].port), name, cnt_pk[i], cnt_by[i], now);
		if (err && !R.feed_err)
			R.feed_err = err;
	}
	n = wr_detect_poll(R.d, now, ev, 32);
	if (n < 0 && !R.poll_err)
		R.poll_err = n;
	for (i = 0; i < n && R.nrecs < MAX_RECS; i++)
		R.recs[R.nrecs++] = (struct rec){ .ev = ev[i], .reading = k };
	if (tr->probe_at > 0 && !R.nprobe && now >= at(tr->probe_at))
		R.nprobe = wr_detect_list(R.d, R.probe, MAX_TCLASSES);
	if (wr_detect_list(R.d, lst, MAX_TCLASSES)) {
		for (i = 0; i < (int)MAX_TCLASSES && lst[i].key != key_of(tr->c[0].port); i++)
			;
		if (i < MAX_TCLASSES) {
			R.wbase[WR_DETECT_PKTS][k] = lst[i].baseline[WR_DETECT_PKTS];
			R.wbase[WR_DETECT_BYTES][k] = lst[i].baseline[WR_DETECT_BYTES];
		}
	}
}

/* The next reading 100-250 ms after the last. */
static uint64_t next_gap(void)
{
	return (100 + rnd() % 151) * 1000000ULL;
}

/* Replay path's frames through the counters and readings. */
static void replay(struct trace *tr, const char *path)
{
	static int16_t byport[65536];
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, ebuf);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t next, end = at(tr->dur);
	int i;

	CHECK(p, "pcap_open_offline: %s", ebuf);
	if (!p)
		return;
	memset(byport, 0xff, sizeof(byport));
	for (i = 0; i < tr->n; i++)
		byport[tr->c[i].port] = (int16_t)i;
	memset(cnt_pk, 0, sizeof(cnt_pk));
	memset(cnt_by, 0, sizeof(cnt_by));
	memset(cnt_seen, 0, sizeof(cnt_seen));
	/* The readings' own stream: the trace's draws stay the same whatever they do. */
	seed(tr->seed ^ 0x5eed);
	next = at(0) + next_gap();
	while (pcap_next_ex(p, &h, &data) == 1) {
		uint64_t ts = (uint64_t)h->ts.tv_sec * NS + (uint64_t)h->ts.tv_usec * 1000;
		struct wr_pkt pk;

		while (ts >= next) {
			reading(tr, next);
			next += next_gap();
		}
		R.frames++;
		memset(&pk, 0, sizeof(pk));
		if (wr_parse(data, data + h->caplen, h->len, &pk, NULL) != WR_PARSE_IP ||
		    pk.proto != UDP || byport[pk.dport] < 0) {
			R.bad++;
			continue;
		}
		i = byport[pk.dport];
		cnt_pk[i]++;
		cnt_by[i] += pk.len;
		cnt_seen[i] = true;
	}
	pcap_close(p);
	while (next <= end) {
		reading(tr, next);
		next += next_gap();
	}
}

/*
 * Record tr as a pcap file in a temporary directory, replay it through a
 * new detector with options o into R (whose detector the case frees).
 */
static void run_trace(struct trace *tr, const struct wr_detect_opts *o)
{
	char dir[] = "/tmp/weir-auto-XXXXXX", path[64], why[128];
	int err;

	memset(&R, 0, sizeof(R));
	err = wr_detect_new(o, &R.d, why, sizeof(why));
	CHECK(!err, "wr_detect_new: %d %s", err, why);
	if (err)
		return;
	if (!mkdtemp(dir)) {
		CHECK_FAIL("mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/trace.pcap", dir);
	if (!write_trace(tr, path))
		replay(tr, path);
	unlink(path);
	rmdir(dir);
	CHECK(R.frames > 0, "no frame read back");
	CHECK_EQ(R.bad, 0);
	CHECK(R.feed_err == 0, "a feed failed: %d %s", R.feed_err, wr_detect_error(R.d));
	CHECK(R.poll_err == 0, "a poll failed: %d", R.poll_err);
	CHECK(R.nreadings < MAX_READINGS, "too many readings");
}

/* The test's options: the defaults with floors a small trace reaches. */
static struct wr_detect_opts topts(void)
{
	struct wr_detect_opts o;

	wr_detect_opts_default(&o);
	o.floor_pps = 100;
	o.floor_bps = 100000;
	return o;
}

static struct trace *new_trace(double dur, uint64_t seed)
{
	const char *more = getenv("WEIR_AUTO_SEED");

	memset(&TR, 0, sizeof(TR));
	TR.dur = dur;
	/* WEIR_AUTO_SEED=N draws other traces of the same shapes (the cases' seeds + N). */
	TR.seed = seed + (more ? strtoull(more, NULL, 0) : 0);
	return &TR;
}

/* Events of kind for key (0: any key). */
static int count(int kind, uint64_t key)
{
	int i, n = 0;

	for (i = 0; i < R.nrecs; i++)
		n += R.recs[i].ev.kind == kind && (!key || R.recs[i].ev.key == key);
	return n;
}

/* The first event of kind for key, or NULL. */
static const struct rec *first(int kind, uint64_t key)
{
	int i;

	for (i = 0; i < R.nrecs; i++)
		if (R.recs[i].ev.kind == kind && R.recs[i].ev.key == key)
			return &R.recs[i];
	return NULL;
}

/* The first reading after trace time t. */
static int reading_after(double t)
{
	int k;

	for (k = 0; k < R.nreadings; k++)
		if (R.rtime[k] > at(t))
			return k;
	return -1;
}

/* Reading k's rate in dim of watched class w, as the harness counted it. */
static double rate_at(int w, int dim, int k)
{
	return (double)(R.wcnt[w][dim][k] - R.wcnt[w][dim][k - 1]) * NS /
	       (double)(R.rtime[k] - R.rtime[k - 1]);
}

/* A class of the listing lst (n of them), or NULL. */
static const struct wr_detect_class *find_class(const struct wr_detect_class *lst, size_t n,
						uint64_t key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lst[i].key == key)
			return &lst[i];
	return NULL;
}

/*
 * The onset of watched class w (port), for a departure from trace time t:
 * exactly at the first reading after t whose own rate (as the harness
 * counted it) reaches the onset's threshold, and none before. The onset's
 * record, or NULL.
 */
static const struct rec *check_onset_at(int w, __u16 port, double t)
{
	const struct rec *on = first(WR_DETECT_ONSET, key_of(port));
	int k = reading_after(t), dim;

	CHECK(on, "no onset of udp/%u", port);
	CHECK(k > 0, "no reading after %.3f s", t);
	if (!on || k <= 0)
		return NULL;
	dim = on->ev.dim;
	while (k < R.nreadings && rate_at(w, dim, k) < on->ev.threshold[dim])
		k++;
	CHECK(on->reading == k, "onset at reading %d, the rate departs at %d (%.3f s after %.3f)",
	      on->reading, k, (double)(R.rtime[k] - at(t)) / NS, t);
	/* Within a reading or two of t: the departure is the flood's, not something later. */
	CHECK(k <= reading_after(t) + 1, "the rate departs only at reading %d", k);
	CHECK_EQ(on->ev.at_ns, R.rtime[on->reading]);
	/* Last calm where a reading began, before the flood and not long before it. */
	CHECK(on->ev.calm_ns && on->ev.calm_ns <= at(t) && at(t) - on->ev.calm_ns < NS,
	      "calm at %.3f s, the flood began at %.3f s", (double)on->ev.calm_ns / NS, t);
	CHECK(on->reading > 0 && on->ev.calm_ns <= R.rtime[on->reading - 1], "calm in the onset");
	CHECK_RANGE(on->ev.rate[dim], rate_at(w, dim, on->reading) * 0.999999,
		    rate_at(w, dim, on->reading) * 1.000001);
	/* The departing reading was judged by the level before it, and not learnt. */
	if (w == 0 && on->reading > 0)
		CHECK(on->ev.baseline[WR_DETECT_PKTS] == R.wbase[WR_DETECT_PKTS][on->reading - 1],
		      "level at the onset %g, before it %g", on->ev.baseline[WR_DETECT_PKTS],
		      R.wbase[WR_DETECT_PKTS][on->reading - 1]);
	return on;
}

/* ---- trace cases ---- */

/* A steady service with noise: ten minutes, no onset, a baseline where the traffic is. */
TEST_CASE(auto_steady_noise_no_alarm)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(600, 1);
	struct wr_detect_class lst[4];
	const struct wr_detect_class *c;

	add(tr, 5300, 300)->noise = 0.3;
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 0);
	CHECK(R.nreadings > 2000, "%d readings", R.nreadings);
	CHECK_EQ(wr_detect_list(R.d, lst, 4), 1);
	c = find_class(lst, 1, key_of(5300));
	CHECK(c, "udp/5300 not listed");
	if (c) {
		CHECK_RANGE(c->baseline[WR_DETECT_PKTS], 255, 345);
		CHECK_RANGE(c->baseline[WR_DETECT_BYTES], 255 * 128, 345 * 128);
		CHECK_EQ(c->samples, WR_DETECT_WINDOW);
		CHECK_EQ(c->state, WR_DETECT_WATCHING);
		CHECK(!strcmp(c->name, "udp/5300"), "name \"%s\"", c->name);
	}
	wr_detect_free(R.d);
}

/* A diurnal ramp (60 to 600 pps and back over 10 min): no onset, the level follows it. */
TEST_CASE(auto_diurnal_ramp_no_alarm)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(900, 2);
	struct tclass *c = add(tr, 5300, 60);
	struct wr_detect_class lst[1];

	c->shape = DIURNAL;
	c->a = 600;
	c->p = 600;
	c->noise = 0.2;
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 0);
	/* At 900 s the cycle is at its peak (600 pps). */
	CHECK_EQ(wr_detect_list(R.d, lst, 1), 1);
	CHECK_RANGE(lst[0].baseline[WR_DETECT_PKTS], 480, 660);
	wr_detect_free(R.d);
}

/* A flood at t: the onset at the first reading whose rate departs, its end after the hold. */
TEST_CASE(auto_flood_onset_within_one_reading)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(180, 3);
	const struct rec *on, *end;
	struct tclass *c = add(tr, 5300, 300);

	c->noise = 0.2;
	add_flood(c, 120.037, 150, 6000, 100);
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 1);
	on = check_onset_at(0, 5300, 120.037);
	if (on) {
		CHECK(on->ev.factor >= o.factor, "factor %.2f", on->ev.factor);
		CHECK_EQ(on->ev.dim, WR_DETECT_PKTS);
		CHECK(!strcmp(on->ev.name, "udp/5300"), "name \"%s\"", on->ev.name);
		CHECK_RANGE(on->ev.baseline[WR_DETECT_PKTS], 240, 360);
		CHECK(on->ev.rate[WR_DETECT_PKTS] >= on->ev.threshold[WR_DETECT_PKTS],
		      "rate %.0f under its threshold %.0f", on->ev.rate[0], on->ev.threshold[0]);
	}
	CHECK_EQ(count(WR_DETECT_END, 0), 1);
	end = first(WR_DETECT_END, key_of(5300));
	if (end && on)
		CHECK_EQ(end->ev.since_ns, on->ev.at_ns);
	if (on)
		printf("# onset %d reading(s) and %.0f ms after the flood began, %.1fx the band\n",
		       on->reading - reading_after(120.037) + 1,
		       (double)(on->ev.at_ns - at(120.037)) / 1e6, on->ev.factor);
	wr_detect_free(R.d);
}

/* An idle class flooded under the floor stays quiet; one over it (no baseline) does not. */
TEST_CASE(auto_flood_under_floor_idle)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(150, 4);

	o.floor_pps = 1000;	/* the default: counts large enough to judge at 100 ms */
	add(tr, 5300, 300)->noise = 0.2;
	add_flood(add(tr, 5400, 0), 100, 150, 500, 100);
	add_flood(add(tr, 5401, 0), 100.5, 150, 2000, 100);
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5300)), 0);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5400)), 0);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5401)), 1);
	/* Its counters appear with its first packet: that reading primes, the next departs. */
	if (first(WR_DETECT_ONSET, key_of(5401)))
		CHECK(first(WR_DETECT_ONSET, key_of(5401))->reading <= reading_after(100.5) + 1,
		      "onset at reading %d", first(WR_DETECT_ONSET, key_of(5401))->reading);
	wr_detect_free(R.d);
}

/* The warm-up: no onset before it ends, a flood running into its end caught at the end. */
TEST_CASE(auto_warmup)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(90, 5);
	const struct rec *a;
	struct tclass *c;
	int i, k;

	c = add(tr, 5300, 300);
	c->noise = 0.2;
	add_flood(c, 27, 60, 6000, 100);
	c = add(tr, 5301, 300);
	c->noise = 0.2;
	add_flood(c, 45.03, 60, 6000, 100);
	tr->probe_at = 10;
	run_trace(tr, &o);
	/* The warm-up runs from the first reading. */
	for (i = 0; i < R.nrecs; i++)
		CHECK(R.recs[i].ev.at_ns >= R.rtime[0] + o.warmup_ns, "event %d at reading %d",
		      R.recs[i].ev.kind, R.recs[i].reading);
	for (k = 0; k < R.nreadings && R.rtime[k] < R.rtime[0] + o.warmup_ns; k++)
		;
	a = first(WR_DETECT_ONSET, key_of(5300));
	CHECK(a, "the flood from 27 s was not caught at the warm-up's end");
	if (a) {
		CHECK(a->reading == k, "onset at reading %d, the warm-up ends at %d", a->reading,
		      k);
		/* The flood's first 3 s were clipped out of the level. */
		CHECK_RANGE(a->ev.baseline[WR_DETECT_PKTS], 240, 360);
	}
	check_onset_at(1, 5301, 45.03);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 2);
	CHECK_EQ(R.nprobe, 2);
	CHECK_EQ(R.probe[0].state, WR_DETECT_LEARNING);
	wr_detect_free(R.d);
}

/* The end comes after the hold, not before: a first reading under the off threshold plus 5 s. */
TEST_CASE(auto_end_after_hold)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(120, 6);
	const struct rec *end;
	struct tclass *c = add(tr, 5300, 300);

	c->noise = 0.2;
	add_flood(c, 60, 90, 6000, 100);
	run_trace(tr, &o);
	check_onset_at(0, 5300, 60);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 1);
	CHECK_EQ(count(WR_DETECT_END, 0), 1);
	end = first(WR_DETECT_END, key_of(5300));
	if (end) {
		/* Under the threshold from the first or second reading after 90 s (by 90.5 s). */
		CHECK(end->ev.at_ns >= at(90) + o.hold_ns, "ended %.3f s after the flood",
		      (double)(end->ev.at_ns - at(90)) / NS);
		CHECK(end->ev.at_ns <= at(90.5) + o.hold_ns + 250000000ULL,
		      "ended %.3f s after the flood", (double)(end->ev.at_ns - at(90)) / NS);
		CHECK(end->ev.factor >= o.factor, "peak factor %.2f", end->ev.factor);
	}
	wr_detect_free(R.d);
}

/*
 * An attack flapping on and off (1 s each, under the hold) is one onset and
 * one end; so is one hovering at the onset threshold (4 x (300 + 3 S), about
 * 1450 pps), crossing it up and down from one reading to the next.
 */
TEST_CASE(auto_flapping_one_onset)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(120, 7);
	const struct rec *end;
	struct tclass *c = add(tr, 5300, 300);

	c->noise = 0.2;
	add_flood(c, 60, 90, 6000, 100);
	c->fl[0].on_s = 1;
	c->fl[0].off_s = 1;
	c = add(tr, 5301, 300);
	c->noise = 0.05;
	add_flood(c, 60, 90, 1150, 100);
	run_trace(tr, &o);
	check_onset_at(0, 5300, 60);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5300)), 1);
	CHECK_EQ(count(WR_DETECT_END, key_of(5300)), 1);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5301)), 1);
	CHECK_EQ(count(WR_DETECT_END, key_of(5301)), 1);
	if (first(WR_DETECT_ONSET, key_of(5301))) {
		const struct rec *on = first(WR_DETECT_ONSET, key_of(5301));
		int k, up = 0, down = 0;

		/* It did hover: readings of the onset under its threshold as well as over. */
		for (k = on->reading; k < reading_after(90); k++) {
			up += rate_at(1, WR_DETECT_PKTS, k) >= on->ev.threshold[WR_DETECT_PKTS];
			down += rate_at(1, WR_DETECT_PKTS, k) < on->ev.threshold[WR_DETECT_PKTS];
		}
		CHECK(up >= 10 && down >= 10, "%d readings over the threshold, %d under", up, down);
	}
	end = first(WR_DETECT_END, key_of(5300));
	/* The last burst runs from 88 s to 89 s. */
	if (end)
		CHECK(end->ev.at_ns >= at(89) + o.hold_ns, "ended %.3f s after the last burst",
		      (double)(end->ev.at_ns - at(89)) / NS);
	wr_detect_free(R.d);
}

/* Counters reset (a reload) mid-trace: no onset from it, and a later flood still caught. */
TEST_CASE(auto_counter_reset)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(200, 8);
	struct tclass *c = add(tr, 5300, 300);

	c->noise = 0.2;
	add_flood(c, 150, 160, 6000, 100);
	tr->reset_at = 100;
	run_trace(tr, &o);
	CHECK_EQ(R.resets, 1);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 1);
	check_onset_at(0, 5300, 150);
	wr_detect_free(R.d);
}

/* A slow ramp (30x over 400 s) is followed; a step (10x) on another class is an onset. */
TEST_CASE(auto_slow_ramp_vs_step)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(450, 9);
	struct tclass *c = add(tr, 5300, 50);

	c->shape = RAMP;
	c->a = 1500;
	c->p = 400;
	c->noise = 0.2;
	c = add(tr, 5301, 100);
	c->shape = STEP;
	c->a = 1000;
	c->p = 300.01;
	c->noise = 0.2;
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5300)), 0);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5301)), 1);
	check_onset_at(1, 5301, 300.01);
	wr_detect_free(R.d);
}

/* 200 classes of 5-30 pps, one of them (udp/6003) flooded: that one only. */
TEST_CASE(auto_many_classes_one_attacked)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(100, 10);
	struct wr_detect_class *lst = calloc(256, sizeof(*lst));
	int i;

	o.floor_pps = 200;
	seed(10);
	for (i = 0; i < 200; i++)
		add(tr, 6000 + i, 5 + (double)(rnd() % 26))->noise = 0.2;
	add_flood(&tr->c[3], 80, 100, 3000, 100);
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 1);
	check_onset_at(3, 6003, 80);
	CHECK(lst, "calloc");
	if (lst) {
		CHECK_EQ(wr_detect_list(R.d, lst, 256), 200);
		/* In key order, the attacked one the only one in an onset. */
		for (i = 0; i < 200; i++) {
			CHECK_EQ(lst[i].key, key_of(6000 + i));
			CHECK_EQ(lst[i].state, i == 3 ? WR_DETECT_ATTACKED : WR_DETECT_WATCHING);
		}
	}
	free(lst);
	wr_detect_free(R.d);
}

/* Large packets at the same packet rate: an onset in bytes alone. */
TEST_CASE(auto_bytes_flood)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(100, 11);
	const struct rec *on;
	struct tclass *c = add(tr, 5300, 300);

	c->noise = 0.2;
	add_flood(c, 60, 80, 300, 1400);
	run_trace(tr, &o);
	CHECK_EQ(count(WR_DETECT_ONSET, 0), 1);
	on = check_onset_at(0, 5300, 60);
	if (on) {
		CHECK_EQ(on->ev.dim, WR_DETECT_BYTES);
		CHECK(on->ev.rate[WR_DETECT_PKTS] < on->ev.threshold[WR_DETECT_PKTS],
		      "packets departed too: %.0f pps", on->ev.rate[WR_DETECT_PKTS]);
		CHECK(on->ev.factor >= o.factor, "factor %.2f", on->ev.factor);
	}
	wr_detect_free(R.d);
}

/*
 * Each class is judged by its own noise: at factor 2, a service whose
 * one-second rates swing by +-80% never reaches 2 x (L + 3 S), while a
 * steady one flooded to 4x its rate does.
 */
TEST_CASE(auto_noisy_class_own_band)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(300, 13);
	const struct rec *on;

	o.factor = 2;
	add_flood(add(tr, 5300, 300), 200, 250, 900, 100);
	tr->c[0].noise = 0.05;
	add(tr, 5301, 300)->noise = 0.8;
	run_trace(tr, &o);
	on = check_onset_at(0, 5300, 200);
	if (on)
		CHECK_RANGE(on->ev.factor, 2, 6);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5300)), 1);
	CHECK_EQ(count(WR_DETECT_ONSET, key_of(5301)), 0);
	wr_detect_free(R.d);
}

/* During an onset the baseline learns nothing: a minute of flood leaves it as it was. */
TEST_CASE(auto_onset_freezes_baseline)
{
	struct wr_detect_opts o = topts();
	struct trace *tr = new_trace(130, 12);
	const struct rec *on;
	struct tclass *c = add(tr, 5300, 300);
	int dim;

	c->noise = 0.2;
	add_flood(c, 60, 125, 6000, 100);
	tr->probe_at = 120;
	run_trace(tr, &o);
	on = check_onset_at(0, 5300, 60);
	CHECK_EQ(R.nprobe, 1);
	CHECK_EQ(R.probe[0].state, WR_DETECT_ATTACKED);
	for (dim = 0; on && dim < WR_DETECT_NR_DIMS; dim++) {
		CHECK(R.probe[0].baseline[dim] == on->ev.baseline[dim], "baseline %d: %g, was %g",
		      dim, R.probe[0].baseline[dim], on->ev.baseline[dim]);
		CHECK(R.probe[0].threshold[dim] == on->ev.threshold[dim], "threshold %d moved",
		      dim);
	}
	CHECK_EQ(R.probe[0].onset_ns, on ? on->ev.at_ns : 0);
	/* The onset's reading itself learnt nothing: the level is the one before it. */
	for (dim = 0; on && dim < WR_DETECT_NR_DIMS; dim++)
		CHECK(on->ev.baseline[dim] == R.wbase[dim][on->reading - 1], "level %d: %g, was %g",
		      dim, on->ev.baseline[dim], R.wbase[dim][on->reading - 1]);
	CHECK(R.probe[0].rate[WR_DETECT_PKTS] > 3000, "rate %.0f", R.probe[0].rate[0]);
	wr_detect_free(R.d);
}

/* ---- direct cases: the calls themselves ---- */

/* A detector with the test's options changed by set (NULL: none); NULL if refused. */
static struct wr_detector *new_det(void (*set)(struct wr_detect_opts *o))
{
	struct wr_detect_opts o = topts();
	struct wr_detector *d = NULL;
	char why[128];
	int err;

	o.warmup_ns = 0;
	if (set)
		set(&o);
	err = wr_detect_new(&o, &d, why, sizeof(why));
	CHECK(!err && d, "wr_detect_new: %d %s", err, why);
	return d;
}

static void no_onsets(struct wr_detect_opts *o)
{
	o->floor_pps = 1e12;
	o->floor_bps = 1e12;
}

/*
 * The band's arithmetic on one-second readings of known rates: the median
 * (odd and even counts), S = 1.4826 x MAD, and the level's EWMA, which
 * learns a rate over M + 3 S as M + 3 S.
 */
TEST_CASE(auto_band_arithmetic)
{
	static const double rates[] = { 100, 300, 200, 500, 400, 1000 };
	struct wr_detector *d = new_det(no_onsets);
	double alpha = 1 - exp2(-1.0 / 30), level = 0;
	struct wr_detect_class c;
	uint64_t pk = 0;
	size_t i;

	if (!d)
		return;
	CHECK_EQ(wr_detect_feed(d, 7, "tcp/80", 0, 0, NS), 0);
	for (i = 0; i < 6; i++) {
		pk += (uint64_t)rates[i];
		CHECK_EQ(wr_detect_feed(d, 7, "tcp/80", pk, 10 * pk, (i + 2) * NS), 0);
		if (i == 4) {
			CHECK_EQ(wr_detect_list(d, &c, 1), 1);
			CHECK_RANGE(c.median[WR_DETECT_PKTS], 300, 300);
			CHECK_RANGE(c.spread[WR_DETECT_PKTS], 148.26 - 1e-9, 148.26 + 1e-9);
			CHECK_RANGE(c.spread[WR_DETECT_BYTES], 1482.6 - 1e-6, 1482.6 + 1e-6);
		}
		/* The sixth rate (1000) is over 300 + 3 x 148.26 and enters the level clipped. */
		level = i ? level + alpha * ((i == 5 ? 300 + 3 * 148.26 : rates[i]) - level) :
			    rates[i];
	}
	CHECK_EQ(wr_detect_list(d, &c, 1), 1);
	CHECK_EQ(c.samples, 6);
	CHECK_RANGE(c.median[WR_DETECT_PKTS], 350, 350);
	CHECK_RANGE(c.spread[WR_DETECT_PKTS], 1.4826 * 150 - 1e-9, 1.4826 * 150 + 1e-9);
	CHECK_RANGE(c.baseline[WR_DETECT_PKTS], level - 1e-6, level + 1e-6);
	CHECK_RANGE(c.band[WR_DETECT_PKTS], level + 3 * 1.4826 * 150 - 1e-6,
		    level + 3 * 1.4826 * 150 + 1e-6);
	CHECK_RANGE(c.rate[WR_DETECT_PKTS], 1000, 1000);
	CHECK_EQ(c.state, WR_DETECT_WATCHING);
	wr_detect_free(d);
}

/* A class's first reading carries counters of unknown age: no rate, no onset from it. */
TEST_CASE(auto_first_reading_no_onset)
{
	struct wr_detector *d = new_det(NULL);
	struct wr_detect_event ev[4];
	struct wr_detect_class c;

	if (!d)
		return;
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 1000000000, 100000000000ULL, 10 * NS), 0);
	CHECK_EQ(wr_detect_poll(d, 10 * NS, ev, 4), 0);
	/* 5 packets in 100 ms: 50 pps, under the floor. */
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 1000000005, 100000000500ULL, 10 * NS + NS / 10),
		 0);
	CHECK_EQ(wr_detect_poll(d, 10 * NS + NS / 10, ev, 4), 0);
	CHECK_EQ(wr_detect_list(d, &c, 1), 1);
	CHECK_RANGE(c.rate[WR_DETECT_PKTS], 49.9, 50.1);
	wr_detect_free(d);
}

/* Readings closer than 50 ms are folded into the next: one packet in 1 ms is no onset. */
TEST_CASE(auto_close_readings_folded)
{
	struct wr_detector *d = new_det(NULL);
	struct wr_detect_event ev[4];
	struct wr_detect_class c;

	if (!d)
		return;
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 0, 0, 10 * NS), 0);
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 1, 100, 10 * NS + 1000000), 0);
	CHECK_EQ(wr_detect_poll(d, 10 * NS + 1000000, ev, 4), 0);
	/* The same packet at 100 ms is a rate of 10 pps. */
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 1, 100, 10 * NS + NS / 10), 0);
	CHECK_EQ(wr_detect_list(d, &c, 1), 1);
	CHECK_RANGE(c.rate[WR_DETECT_PKTS], 9.99, 10.01);
	wr_detect_free(d);
}

/* Time zero or backwards: a clear error, the class as it was, and the next good reading works. */
TEST_CASE(auto_bad_time)
{
	struct wr_detector *d = new_det(NULL);
	struct wr_detect_class c0, c1;
	struct wr_detect_event ev[4];

	if (!d)
		return;
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 0, 0, 0), (uint64_t)-EINVAL);
	CHECK(strstr(wr_detect_error(d), "time 0"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_list(d, NULL, 0), 0);
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 100, 1000, 10 * NS), 0);
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 110, 1100, 11 * NS), 0);
	CHECK_EQ(wr_detect_list(d, &c0, 1), 1);
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 1000000, 1000000, 9 * NS), (uint64_t)-EINVAL);
	CHECK(strstr(wr_detect_error(d), "backwards"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_feed(d, 2, "udp/54", 5, 5, 9 * NS), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_poll(d, 9 * NS, ev, 4), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_pressure(d, 0.5, 9 * NS), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_forget(d, 9 * NS, NS), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_list(d, &c1, 1), 1);
	CHECK(!memcmp(&c0, &c1, sizeof(c0)), "a refused reading changed the class");
	CHECK_EQ(wr_detect_feed(d, 1, "udp/53", 120, 1200, 12 * NS), 0);
	CHECK(!strcmp(wr_detect_error(d), ""), "error \"%s\" after a good call",
	      wr_detect_error(d));
	CHECK_EQ(wr_detect_list(d, &c1, 1), 1);
	CHECK_RANGE(c1.rate[WR_DETECT_PKTS], 9.99, 10.01);
	CHECK_EQ(wr_detect_poll(d, 12 * NS, ev, 4), 0);
	wr_detect_free(d);
}

/* A NULL, empty or too long name: refused, no class made. */
TEST_CASE(auto_bad_name)
{
	struct wr_detector *d = new_det(NULL);
	char longname[WR_DETECT_NAME_LEN + 1];

	if (!d)
		return;
	memset(longname, 'x', sizeof(longname) - 1);
	longname[WR_DETECT_NAME_LEN] = '\0';
	CHECK_EQ(wr_detect_feed(d, 1, NULL, 0, 0, NS), (uint64_t)-EINVAL);
	CHECK(strstr(wr_detect_error(d), "no name"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_feed(d, 1, "", 0, 0, NS), (uint64_t)-EINVAL);
	CHECK(strstr(wr_detect_error(d), "empty"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_feed(d, 1, longname, 0, 0, NS), (uint64_t)-EINVAL);
	CHECK(strstr(wr_detect_error(d), "too long"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_list(d, NULL, 0), 0);
	/* The longest that fits. */
	longname[WR_DETECT_NAME_LEN - 1] = '\0';
	CHECK_EQ(wr_detect_feed(d, 1, longname, 0, 0, NS), 0);
	CHECK_EQ(wr_detect_list(d, NULL, 0), 1);
	CHECK_EQ(wr_detect_feed(NULL, 1, "x", 0, 0, NS), (uint64_t)-EINVAL);
	wr_detect_free(d);
}

static void eight_classes(struct wr_detect_opts *o)
{
	o->max_classes = 8;
}

/* One class too many: -ENOSPC, the others intact; forgetting idle ones makes room. */
TEST_CASE(auto_too_many_classes)
{
	struct wr_detector *d = new_det(eight_classes);
	struct wr_detect_class before[8], after[8];
	char name[16];
	int i;

	if (!d)
		return;
	for (i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "udp/%d", 100 + i % 8);
		CHECK_EQ(wr_detect_feed(d, 100 + i % 8, name, i < 8 || i % 8 >= 4 ? 0 : 10,
					i < 8 ? 0 : 1000, i < 8 ? NS : 2 * NS), 0);
	}
	CHECK_EQ(wr_detect_list(d, before, 8), 8);
	CHECK_EQ(wr_detect_feed(d, 999, "udp/999", 0, 0, 2 * NS), (uint64_t)-ENOSPC);
	CHECK(strstr(wr_detect_error(d), "max_classes") && strstr(wr_detect_error(d), "udp/999"),
	      "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_list(d, after, 8), 8);
	CHECK(!memcmp(before, after, sizeof(before)), "a refused class changed the others");
	/* At 11.5 s, 104..107 have not moved for 10.5 s, 100..103 for 9.5 s. */
	CHECK_EQ(wr_detect_forget(d, 11 * NS + NS / 2, 10 * NS), 4);
	CHECK_EQ(wr_detect_list(d, after, 8), 4);
	for (i = 0; i < 4; i++)
		CHECK_EQ(after[i].key, 100 + i);
	CHECK_EQ(wr_detect_feed(d, 999, "udp/999", 0, 0, 12 * NS), 0);
	CHECK_EQ(wr_detect_list(d, after, 8), 5);
	CHECK_EQ(after[4].key, 999);
	CHECK_EQ(wr_detect_forget(d, 12 * NS, 0), (uint64_t)-EINVAL);
	wr_detect_free(d);
}

/* Options out of range: refused with the option named, nothing made. */
TEST_CASE(auto_bad_opts)
{
	static const struct {
		const char *field;
		int which;
		double v;
	} bad[] = {
		{ "max_classes", 0, 0 }, { "max_classes", 0, WR_DETECT_MAX_CLASSES + 1 },
		{ "factor", 1, 1 }, { "factor", 1, NAN }, { "off_ratio", 2, 1 },
		{ "off_ratio", 2, 0 }, { "floor_pps", 3, 0 }, { "floor_bps", 4, -1 },
		{ "floor_pps", 3, INFINITY }, { "half-life", 5, 0 }, { "mad_mult", 6, -1 },
		{ "pressure_on", 7, 1.5 }, { "pressure_off", 8, 0.9 }, { "warm-up", 9, 1e15 },
		{ "hold", 10, 1e15 },
	};
	struct wr_detector *d;
	char why[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wr_detect_opts o;
		int err;

		wr_detect_opts_default(&o);
		switch (bad[i].which) {
		case 0: o.max_classes = (uint32_t)bad[i].v; break;
		case 1: o.factor = bad[i].v; break;
		case 2: o.off_ratio = bad[i].v; break;
		case 3: o.floor_pps = bad[i].v; break;
		case 4: o.floor_bps = bad[i].v; break;
		case 5: o.half_life_ns = (uint64_t)bad[i].v; break;
		case 6: o.mad_mult = bad[i].v; break;
		case 7: o.pressure_on = bad[i].v; break;
		case 8: o.pressure_off = bad[i].v; break;
		case 9: o.warmup_ns = (uint64_t)bad[i].v; break;
		case 10: o.hold_ns = (uint64_t)bad[i].v; break;
		}
		d = (struct wr_detector *)&o;	/* must be cleared */
		err = wr_detect_new(&o, &d, why, sizeof(why));
		CHECK(err == -EINVAL, "%s %g: %d", bad[i].field, bad[i].v, err);
		CHECK(!d, "%s %g: a detector", bad[i].field, bad[i].v);
		CHECK(strstr(why, bad[i].field), "%s %g: \"%s\"", bad[i].field, bad[i].v, why);
	}
	CHECK_EQ(wr_detect_new(NULL, &d, why, sizeof(why)), (uint64_t)-EINVAL);
	CHECK(!d, "a detector without options");
	wr_detect_free(NULL);
}

/* Pressure: on at 0.8, one onset while it flaps between 0.7 and 0.9, off after 5 s under 0.6. */
TEST_CASE(auto_pressure)
{
	struct wr_detector *d = new_det(NULL);
	struct wr_detect_event ev[8];
	uint64_t t = 10 * NS;
	int i, n = 0, on = 0;

	if (!d)
		return;
	CHECK_EQ(wr_detect_pressure(d, 1.5, t), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_pressure(d, -0.1, t), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_pressure(d, NAN, t), (uint64_t)-EINVAL);
	CHECK(strstr(wr_detect_error(d), "[0, 1]"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_pressure(d, 0.5, t), 0);
	CHECK_EQ(wr_detect_poll(d, t, ev, 8), 0);
	for (i = 0; i < 20; i++) {
		t += NS / 4;
		CHECK_EQ(wr_detect_pressure(d, i & 1 ? 0.7 : 0.9, t), 0);
		n = wr_detect_poll(d, t, ev, 8);
		on += n > 0 && ev[0].kind == WR_DETECT_PRESSURE_ON;
		CHECK(n == (i == 0), "reading %d: %d events", i, n);
	}
	CHECK_EQ(on, 1);
	/* Under 0.6 for 4.75 s: still on; at 5 s (by a poll, no new reading): off. */
	t += NS / 4;
	CHECK_EQ(wr_detect_pressure(d, 0.3, t), 0);
	CHECK_EQ(wr_detect_pressure(d, 0.3, t + 4750000000ULL), 0);
	CHECK_EQ(wr_detect_poll(d, t + 4750000000ULL, ev, 8), 0);
	n = wr_detect_poll(d, t + 5 * NS, ev, 8);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(ev[0].kind, WR_DETECT_PRESSURE_OFF);
		CHECK_EQ(ev[0].at_ns, t + 5 * NS);
		CHECK_RANGE(ev[0].factor, 0.9, 0.9);
		CHECK_RANGE(ev[0].rate[0], 0.3, 0.3);
		CHECK_EQ(ev[0].since_ns, 10 * NS + NS / 4);
		CHECK(!strcmp(ev[0].name, "host"), "name \"%s\"", ev[0].name);
	}
	wr_detect_free(d);
}

/*
 * Three onsets: a poll of at most 2 gives the first two, the next the third,
 * in order; an onset whose readings stop under its off threshold ends by
 * poll after the hold; one whose counters stop coming ends when forgotten.
 */
TEST_CASE(auto_poll_and_forget)
{
	struct wr_detector *d = new_det(NULL);
	struct wr_detect_class ev_cls[4];
	struct wr_detect_event ev[4];
	uint64_t k;

	if (!d)
		return;
	for (k = 1; k <= 3; k++)
		CHECK_EQ(wr_detect_feed(d, k, k == 1 ? "a" : k == 2 ? "b" : "c", 0, 0, NS), 0);
	for (k = 1; k <= 3; k++)	/* 1000 pps: over the floor, no baseline */
		CHECK_EQ(wr_detect_feed(d, k, k == 1 ? "a" : k == 2 ? "b" : "c", 100, 100,
					NS + k * NS / 10), 0);
	CHECK_EQ(wr_detect_poll(d, NS + NS / 2, ev, 2), 2);
	CHECK(ev[0].key == 1 && ev[1].key == 2, "keys %" PRIu64 " %" PRIu64, ev[0].key,
	      ev[1].key);
	CHECK(ev[0].kind == WR_DETECT_ONSET && ev[0].at_ns == NS + NS / 10, "first event");
	CHECK_EQ(wr_detect_poll(d, NS + NS / 2, ev, 2), 1);
	CHECK_EQ(ev[0].key, 3);
	CHECK_EQ(wr_detect_poll(d, NS + NS / 2, ev, 2), 0);
	/* Class 1 goes quiet (a reading under the threshold), then nothing more comes. */
	CHECK_EQ(wr_detect_feed(d, 1, "a", 100, 100, 2 * NS), 0);
	CHECK_EQ(wr_detect_poll(d, 6 * NS, ev, 4), 0);
	CHECK_EQ(wr_detect_poll(d, 7 * NS, ev, 4), 1);
	CHECK(ev[0].kind == WR_DETECT_END && ev[0].key == 1 && ev[0].since_ns == NS + NS / 10,
	      "end of class 1: kind %d key %" PRIu64, ev[0].kind, ev[0].key);
	/*
	 * Classes 2 and 3 still attacked: forgotten only once no reading came
	 * for 10 s (3), with its end; class 1, ended, goes as its packets
	 * stopped at 1.1 s.
	 */
	CHECK_EQ(wr_detect_feed(d, 2, "b", 5000, 5000, 8 * NS), 0);
	CHECK_EQ(wr_detect_forget(d, 12 * NS, 10 * NS), 2);
	CHECK_EQ(wr_detect_poll(d, 12 * NS, ev, 4), 1);
	CHECK(ev[0].kind == WR_DETECT_END && ev[0].key == 3, "end of class 3 by forget");
	CHECK_EQ(wr_detect_list(d, ev_cls, 4), 1);
	CHECK_EQ(ev_cls[0].key, 2);
	CHECK_EQ(ev_cls[0].state, WR_DETECT_ATTACKED);
	CHECK_EQ(wr_detect_poll(d, 12 * NS, NULL, 4), (uint64_t)-EINVAL);
	wr_detect_free(d);
}

static void warmup_10s(struct wr_detect_opts *o)
{
	o->warmup_ns = 10 * NS;
}

/*
 * A lasting 5x step stays an onset (nothing is learnt in one) until the
 * caller accepts it: then it ends, the class learns the new level for a
 * warm-up without alarm, and a flood over that level is an onset again.
 */
TEST_CASE(auto_accept_new_level)
{
	struct wr_detector *d = new_det(warmup_10s);
	struct wr_detect_event ev[4];
	struct wr_detect_class c;
	uint64_t t = NS, pk = 0;
	int i, onsets = 0, n;

	if (!d)
		return;
	/* 200 pps for 60 s, then 1000 pps for 60 s: readings every 100 ms. */
	for (i = 0; i < 1200; i++) {
		pk += i < 600 ? 20 : 100;
		t += NS / 10;
		CHECK_EQ(wr_detect_feed(d, 9, "udp/9", pk, 100 * pk, t), 0);
		n = wr_detect_poll(d, t, ev, 4);
		onsets += n > 0 && ev[0].kind == WR_DETECT_ONSET;
		CHECK(n == (i == 600), "reading %d: %d events", i, n);
	}
	CHECK_EQ(onsets, 1);
	CHECK_EQ(wr_detect_list(d, &c, 1), 1);
	CHECK_EQ(c.state, WR_DETECT_ATTACKED);
	CHECK_EQ(wr_detect_accept(d, 10, t), (uint64_t)-ENOENT);
	CHECK(strstr(wr_detect_error(d), "not watched"), "error \"%s\"", wr_detect_error(d));
	CHECK_EQ(wr_detect_accept(d, 9, t - 1), (uint64_t)-EINVAL);
	CHECK_EQ(wr_detect_accept(d, 9, t), 0);
	CHECK_EQ(wr_detect_poll(d, t, ev, 4), 1);
	CHECK(ev[0].kind == WR_DETECT_END && ev[0].key == 9, "accept: kind %d", ev[0].kind);
	CHECK_EQ(wr_detect_list(d, &c, 1), 1);
	CHECK_EQ(c.state, WR_DETECT_LEARNING);
	CHECK_EQ(c.samples, 0);
	/* 30 s more at 1000 pps: learnt, no onset; then 6000 pps: an onset at once. */
	for (i = 0; i < 301; i++) {
		pk += i < 300 ? 100 : 600;
		t += NS / 10;
		CHECK_EQ(wr_detect_feed(d, 9, "udp/9", pk, 100 * pk, t), 0);
		n = wr_detect_poll(d, t, ev, 4);
		CHECK(n == (i == 300), "after accepting, reading %d: %d events", i, n);
	}
	CHECK(n == 1 && ev[0].kind == WR_DETECT_ONSET, "no onset over the new level");
	if (n == 1)
		CHECK_RANGE(ev[0].baseline[WR_DETECT_PKTS], 999, 1001);
	wr_detect_free(d);
}

static void tiny_queue(struct wr_detect_opts *o)
{
	o->max_classes = 1;
	o->pressure_hold_ns = 0;
}

/* Nobody polls: the queue (2 x max_classes + 16) keeps the oldest and counts what it drops. */
TEST_CASE(auto_queue_full_counts_lost)
{
	struct wr_detector *d = new_det(tiny_queue);
	struct wr_detect_event ev[32];
	uint64_t t = NS;
	int i;

	if (!d)
		return;
	for (i = 0; i < 10; i++) {
		CHECK_EQ(wr_detect_pressure(d, 0.9, t += NS), 0);
		CHECK_EQ(wr_detect_pressure(d, 0.1, t += NS), 0);
	}
	CHECK_EQ(wr_detect_lost(d), 2);
	CHECK_EQ(wr_detect_poll(d, t, ev, 32), 18);
	CHECK_EQ(ev[0].at_ns, 2 * NS);
	wr_detect_free(d);
}

int main(void)
{
	return check_run_all();
}
