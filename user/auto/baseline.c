// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s baselines and onset detector (user/auto/baseline.h says
 * what the baseline is and why). Pure computation over the caller's
 * readings and times: no clock, no I/O, nothing printed; a failure is a
 * -errno and a sentence wr_detect_error returns.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto/baseline.h"

/* Nanoseconds in a second. */
#define NS_PER_S 1000000000ULL
/* A one-second rate sums readings until they cover this much. */
#define BUCKET_NS NS_PER_S
/*
 * A reading this close to the class's last one is folded into the next:
 * over a few ms one packet more or less is a huge rate, and a caller that
 * reads twice in a row (a poll racing the tick) must not make one.
 */
#define MIN_DT_NS (50 * 1000000ULL)
/* MAD x this estimates the standard deviation of normally distributed rates. */
#define MAD_TO_SIGMA 1.4826
/* Longest warm-up, hold or half-life accepted: a day (a longer one is a typo). */
#define MAX_DURATION_NS (86400ULL * NS_PER_S)
/* Largest factor accepted: beyond it nothing but the floor could ever alarm. */
#define MAX_FACTOR 1e6
/* Largest MAD multiplier accepted (a band of 100 sigma already never clips). */
#define MAX_MAD_MULT 100.0
/* Events the queue holds beyond two per class (pressure on and off). */
#define EVQ_EXTRA 16
/*
 * Classes the queue holds two events for at most: a caller that polls
 * every tick never has more pending, and one that does not poll loses
 * the newest (counted) rather than holding 20 MB of them.
 */
#define EVQ_CLASSES 4096

/* One class: its reference reading, its one-second sum, its window and level, its onset. */
struct dclass {
	uint64_t key;
	char name[WR_DETECT_NAME_LEN];
	uint64_t ref[WR_DETECT_NR_DIMS];	/* counters of the reading rates differ from */
	uint64_t ref_ns;			/* ... and its time */
	uint64_t seen_ns;			/* the last reading, folded or not */
	uint64_t moved_ns;			/* the last reading its packets moved (or first) */
	double rate[WR_DETECT_NR_DIMS];		/* the last reading's rates */
	double sum[WR_DETECT_NR_DIMS];		/* the one-second rate being summed: counts */
	uint64_t sum_ns;			/* ... over this long */
	float win[WR_DETECT_NR_DIMS][WR_DETECT_WINDOW];	/* one-second rates, a ring */
	uint32_t head, n;			/* next slot of win, rates in it */
	bool has_level;
	double level[WR_DETECT_NR_DIMS];	/* L */
	double med[WR_DETECT_NR_DIMS];		/* M of win */
	double spread[WR_DETECT_NR_DIMS];	/* S of win */
	bool attacked;
	int dim;				/* the dimension that departed */
	uint64_t onset_ns;
	uint64_t below_ns;			/* first reading under the off threshold, or 0 */
	double thr[WR_DETECT_NR_DIMS];		/* the onset's thresholds, frozen */
	double peak;				/* highest rate / U over the onset */
	uint64_t quiet_until_ns;		/* accepted: learning without alarm until then */
	uint64_t calm_ns;			/* wr_detect_event.calm_ns, for the next onset */
};

struct wr_detector {
	struct wr_detect_opts o;
	struct dclass *pool;		/* max_classes */
	uint32_t *order;		/* pool indices of the nr classes, sorted by key */
	uint32_t *spare;		/* nspare free pool indices */
	uint32_t nr, nspare;
	struct wr_detect_event *evq;	/* a ring of evcap events, evn of them from evhead */
	size_t evcap, evhead, evn;
	uint64_t lost;
	bool started;			/* start_ns is the first time given */
	uint64_t start_ns;
	uint64_t now_ns;		/* the latest time given: time may not go back past it */
	bool press_on;			/* the host pressure's onset */
	uint64_t press_since_ns, press_below_ns;
	double press_peak, press_last;	/* its highest value, the last one given */
	char err[192];
};

static void set_err(struct wr_detector *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct wr_detector *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

const char *wr_detect_error(const struct wr_detector *d)
{
	return d ? d->err : "no detector";
}

void wr_detect_opts_default(struct wr_detect_opts *o)
{
	*o = (struct wr_detect_opts){
		.max_classes = 4096,		/* destinations and (proto, port) pairs of a host */
		.warmup_ns = 30 * NS_PER_S,	/* the bound: protection within a minute */
		.factor = 4,			/* 4 x what normal traffic reaches */
		.off_ratio = 0.5,		/* ends under half the onset threshold */
		.hold_ns = 5 * NS_PER_S,	/* ... for 5 s: an attack's pause is not its end */
		.floor_pps = 1000,		/* under 1 kpps: the static rules' job */
		.floor_bps = 1000000,		/* 1 MB/s (8 Mbit/s): the same for bytes */
		.half_life_ns = 30 * NS_PER_S,	/* the level follows a ramp within a minute */
		.mad_mult = 3,			/* U = L + 3 sigma */
		.pressure_on = 0.8,		/* the shedding signal near saturation */
		.pressure_off = 0.6,
		.pressure_hold_ns = 5 * NS_PER_S,
	};
}

/* 0 if o is usable, else -EINVAL with why naming the option. */
static int check_opts(const struct wr_detect_opts *o, char *why, size_t len)
{
#define BAD(...) do { snprintf(why, len, __VA_ARGS__); return -EINVAL; } while (0)
	if (o->max_classes < 1 || o->max_classes > WR_DETECT_MAX_CLASSES)
		BAD("max_classes %u is not in 1..%u", o->max_classes, WR_DETECT_MAX_CLASSES);
	if (o->warmup_ns > MAX_DURATION_NS)
		BAD("warm-up %llu ns is longer than a day", (unsigned long long)o->warmup_ns);
	if (!(o->factor > 1 && o->factor <= MAX_FACTOR))
		BAD("factor %g is not in (1, %g]", o->factor, MAX_FACTOR);
	if (!(o->off_ratio > 0 && o->off_ratio < 1))
		BAD("off_ratio %g is not in (0, 1)", o->off_ratio);
	if (o->hold_ns > MAX_DURATION_NS)
		BAD("hold %llu ns is longer than a day", (unsigned long long)o->hold_ns);
	if (!(o->floor_pps > 0 && isfinite(o->floor_pps)))
		BAD("floor_pps %g is not a positive rate", o->floor_pps);
	if (!(o->floor_bps > 0 && isfinite(o->floor_bps)))
		BAD("floor_bps %g is not a positive rate", o->floor_bps);
	if (o->half_life_ns < 1 || o->half_life_ns > MAX_DURATION_NS)
		BAD("half-life %llu ns is not in 1 ns .. a day",
		    (unsigned long long)o->half_life_ns);
	if (!(o->mad_mult >= 0 && o->mad_mult <= MAX_MAD_MULT))
		BAD("mad_mult %g is not in [0, %g]", o->mad_mult, MAX_MAD_MULT);
	if (!(o->pressure_on > 0 && o->pressure_on <= 1))
		BAD("pressure_on %g is not in (0, 1]", o->pressure_on);
	if (!(o->pressure_off >= 0 && o->pressure_off < o->pressure_on))
		BAD("pressure_off %g is not in [0, pressure_on %g)", o->pressure_off,
		    o->pressure_on);
	if (o->pressure_hold_ns > MAX_DURATION_NS)
		BAD("pressure hold %llu ns is longer than a day",
		    (unsigned long long)o->pressure_hold_ns);
	return 0;
#undef BAD
}

int wr_detect_new(const struct wr_detect_opts *o, struct wr_detector **out, char *why, size_t len)
{
	struct wr_detector *d;
	char dummy[8];
	uint32_t i;
	int err;

	if (!why || !len) {
		why = dummy;
		len = sizeof(dummy);
	}
	why[0] = '\0';
	if (!out) {
		snprintf(why, len, "no place for the detector");
		return -EINVAL;
	}
	*out = NULL;
	if (!o) {
		snprintf(why, len, "no options");
		return -EINVAL;
	}
	err = check_opts(o, why, len);
	if (err)
		return err;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	d->o = *o;
	d->evcap = 2 * (size_t)(o->max_classes < EVQ_CLASSES ? o->max_classes : EVQ_CLASSES) +
		   EVQ_EXTRA;
	d->pool = calloc(o->max_classes, sizeof(*d->pool));
	d->order = calloc(o->max_classes, sizeof(*d->order));
	d->spare = calloc(o->max_classes, sizeof(*d->spare));
	d->evq = calloc(d->evcap, sizeof(*d->evq));
	if (!d->pool || !d->order || !d->spare || !d->evq)
		goto nomem;
	/* Handed out from the lowest index up. */
	for (i = 0; i < o->max_classes; i++)
		d->spare[i] = o->max_classes - 1 - i;
	d->nspare = o->max_classes;
	*out = d;
	return 0;
nomem:
	wr_detect_free(d);
	snprintf(why, len, "out of memory for %u classes", o->max_classes);
	return -ENOMEM;
}

void wr_detect_free(struct wr_detector *d)
{
	if (!d)
		return;
	free(d->pool);
	free(d->order);
	free(d->spare);
	free(d->evq);
	free(d);
}

uint64_t wr_detect_lost(const struct wr_detector *d)
{
	return d ? d->lost : 0;
}

/* ---- time, lookup, events ---- */

/* now is usable (nonzero, not before the latest time given): 0, else -EINVAL and why. */
static int check_time(struct wr_detector *d, uint64_t now)
{
	if (!now) {
		set_err(d, "time 0: a reading needs the monotonic clock's time");
		return -EINVAL;
	}
	if (now < d->now_ns) {
		set_err(d, "time went backwards: %llu ns after %llu ns", (unsigned long long)now,
			(unsigned long long)d->now_ns);
		return -EINVAL;
	}
	return 0;
}

/* Accept now (checked): the warm-up starts at the first time. */
static void note_time(struct wr_detector *d, uint64_t now)
{
	if (!d->started) {
		d->started = true;
		d->start_ns = now;
	}
	d->now_ns = now;
}

/* The warm-up is over at now: onsets may be reported (for c, if given, its own too). */
static bool watching(const struct wr_detector *d, const struct dclass *c, uint64_t now)
{
	if (c && now < c->quiet_until_ns)
		return false;
	return d->started && now - d->start_ns >= d->o.warmup_ns;
}

/* The position of key in order (found), or where it would go. */
static uint32_t lower_bound(const struct wr_detector *d, uint64_t key, bool *found)
{
	uint32_t lo = 0, hi = d->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->pool[d->order[mid]].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < d->nr && d->pool[d->order[lo]].key == key;
	return lo;
}

/* Queue ev; a full queue (nobody polled) drops it and counts it. */
static void queue(struct wr_detector *d, const struct wr_detect_event *ev)
{
	if (d->evn == d->evcap) {
		d->lost++;
		return;
	}
	d->evq[(d->evhead + d->evn) % d->evcap] = *ev;
	d->evn++;
}

/* ---- the band ---- */

/*
 * The k-th smallest of v[0..n) (0-based), reordering v so that v[0..k) are
 * no larger and v(k..n) no smaller: Wirth's selection (Hoare's partition,
 * pivot v[k]), linear on average; the window is small, no worst case to fear.
 */
static double select_kth(double *v, int n, int k)
{
	int l = 0, r = n - 1;

	while (l < r) {
		double x = v[k];
		int i = l, j = r;

		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < k)
			l = i;
		if (k < i)
			r = j;
	}
	return v[k];
}

/* The median of v[0..n), n >= 1 (the mean of the middle two for even n), reordering v. */
static double median(double *v, int n)
{
	double hi = select_kth(v, n, n / 2), lo;
	int i;

	if (n & 1)
		return hi;
	/* After the select, v[0 .. n/2) holds the smaller half: its largest is the other middle. */
	lo = v[0];
	for (i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}

/* U, the band's upper edge. */
static double band(const struct wr_detector *d, const struct dclass *c, int dim)
{
	return c->level[dim] + d->o.mad_mult * c->spread[dim];
}

/* Where an onset starts: max(floor, factor x U). */
static double threshold(const struct wr_detector *d, const struct dclass *c, int dim)
{
	double fl = dim == WR_DETECT_PKTS ? d->o.floor_pps : d->o.floor_bps;
	double t = d->o.factor * band(d, c, dim);

	return t > fl ? t : fl;
}

/* One one-second rate r (per dimension) over dur ns enters the window and the level. */
static void learn_second(const struct wr_detector *d, struct dclass *c, const double *r,
			 uint64_t dur)
{
	double alpha = 1 - exp2(-(double)dur / (double)d->o.half_life_ns);
	double tmp[WR_DETECT_WINDOW];
	uint32_t i, n;
	int dim;

	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++) {
		double x = r[dim];

		/* The band clips what the level learns (the head comment says why). */
		if (c->n >= WR_DETECT_MIN_SAMPLES) {
			double clip = c->med[dim] + d->o.mad_mult * c->spread[dim];

			if (x > clip)
				x = clip;
		}
		c->level[dim] = c->has_level ? c->level[dim] + alpha * (x - c->level[dim]) : x;
		c->win[dim][c->head] = (float)r[dim];
	}
	c->has_level = true;
	c->head = (c->head + 1) % WR_DETECT_WINDOW;
	if (c->n < WR_DETECT_WINDOW)
		c->n++;
	n = c->n;
	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++) {
		double m;

		for (i = 0; i < n; i++)
			tmp[i] = c->win[dim][i];
		m = median(tmp, (int)n);
		for (i = 0; i < n; i++)
			tmp[i] = fabs(c->win[dim][i] - m);
		c->med[dim] = m;
		c->spread[dim] = MAD_TO_SIGMA * median(tmp, (int)n);
	}
}

/* A reading outside an onset adds to the one-second sum, which enters the band when full. */
static void learn_reading(const struct wr_detector *d, struct dclass *c, const double *cnt,
			  uint64_t dt)
{
	double r[WR_DETECT_NR_DIMS];
	int dim;

	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++)
		c->sum[dim] += cnt[dim];
	c->sum_ns += dt;
	if (c->sum_ns < BUCKET_NS)
		return;
	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++)
		r[dim] = c->sum[dim] * (double)NS_PER_S / (double)c->sum_ns;
	learn_second(d, c, r, c->sum_ns);
	memset(c->sum, 0, sizeof(c->sum));
	c->sum_ns = 0;
}

/* ---- onsets ---- */

/* The event of class c of this kind at now, with its rates and band. */
static void class_event(const struct wr_detector *d, const struct dclass *c, int kind,
			uint64_t now, struct wr_detect_event *ev)
{
	int dim;

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->key = c->key;
	memcpy(ev->name, c->name, sizeof(ev->name));
	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++) {
		ev->rate[dim] = c->rate[dim];
		ev->baseline[dim] = c->level[dim];
		ev->band[dim] = band(d, c, dim);
		ev->threshold[dim] = c->attacked ? c->thr[dim] : threshold(d, c, dim);
	}
	ev->dim = c->dim;
	ev->at_ns = now;
}

/* rate / U in dim, 0 where U is 0 (no baseline: only the floor speaks). */
static double factor_of(const struct wr_detector *d, const struct dclass *c, int dim)
{
	double u = band(d, c, dim);

	return u > 0 ? c->rate[dim] / u : 0;
}

/* The dimension whose rate is furthest over its threshold, or -1 if neither reaches it. */
static int departs(const struct wr_detector *d, const struct dclass *c)
{
	double best = 0;
	int dim, which = -1;

	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++) {
		double q = c->rate[dim] / threshold(d, c, dim);

		if (q >= 1 && q > best) {
			best = q;
			which = dim;
		}
	}
	return which;
}

static void start_onset(struct wr_detector *d, struct dclass *c, int dim, uint64_t now)
{
	struct wr_detect_event ev;
	int i;

	for (i = 0; i < WR_DETECT_NR_DIMS; i++)
		c->thr[i] = threshold(d, c, i);
	c->attacked = true;
	c->dim = dim;
	c->onset_ns = now;
	c->below_ns = 0;
	c->peak = factor_of(d, c, dim);
	/* The second being summed holds the attack's start: it is not learnt. */
	memset(c->sum, 0, sizeof(c->sum));
	c->sum_ns = 0;
	class_event(d, c, WR_DETECT_ONSET, now, &ev);
	ev.factor = c->peak;
	ev.calm_ns = c->calm_ns;
	queue(d, &ev);
}

/* Whether every dimension of c's last reading stayed under its off threshold. */
static bool calm(const struct wr_detector *d, const struct dclass *c)
{
	int dim;

	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++)
		if (c->rate[dim] >= d->o.off_ratio * threshold(d, c, dim))
			return false;
	return true;
}

static void end_onset(struct wr_detector *d, struct dclass *c, uint64_t now)
{
	struct wr_detect_event ev;

	class_event(d, c, WR_DETECT_END, now, &ev);
	ev.factor = c->peak;
	ev.since_ns = c->onset_ns;
	queue(d, &ev);
	c->attacked = false;
	c->below_ns = 0;
	/* Learning starts again from this reading. */
	memset(c->sum, 0, sizeof(c->sum));
	c->sum_ns = 0;
}

/* A reading of a class in an onset: its peak, and the hysteresis towards its end. */
static void attacked_reading(struct wr_detector *d, struct dclass *c, uint64_t now)
{
	bool under = true;
	int dim;

	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++) {
		double f = factor_of(d, c, dim);

		if (f > c->peak)
			c->peak = f;
		if (c->rate[dim] >= d->o.off_ratio * c->thr[dim])
			under = false;
	}
	if (!under) {
		c->below_ns = 0;
		return;
	}
	if (!c->below_ns)
		c->below_ns = now;
	if (now - c->below_ns >= d->o.hold_ns)
		end_onset(d, c, now);
}

/* ---- the entry points ---- */

/* A new class at pos of order, its first reading the reference. */
static void add_class(struct wr_detector *d, uint32_t pos, uint64_t key, const char *name,
		      uint64_t packets, uint64_t bytes, uint64_t now)
{
	uint32_t idx = d->spare[--d->nspare];
	struct dclass *c = &d->pool[idx];

	memset(c, 0, sizeof(*c));
	c->key = key;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->ref[WR_DETECT_PKTS] = packets;
	c->ref[WR_DETECT_BYTES] = bytes;
	c->ref_ns = c->seen_ns = c->moved_ns = now;
	memmove(&d->order[pos + 1], &d->order[pos], (d->nr - pos) * sizeof(d->order[0]));
	d->order[pos] = idx;
	d->nr++;
}

int wr_detect_feed(struct wr_detector *d, uint64_t key, const char *name, uint64_t packets,
		   uint64_t bytes, uint64_t now)
{
	double cnt[WR_DETECT_NR_DIMS];
	struct dclass *c;
	uint32_t pos;
	uint64_t dt;
	bool found;
	size_t nl;
	int dim, err;

	if (!d)
		return -EINVAL;
	d->err[0] = '\0';
	err = check_time(d, now);
	if (err)
		return err;
	if (!name) {
		set_err(d, "class %#llx has no name", (unsigned long long)key);
		return -EINVAL;
	}
	nl = strnlen(name, WR_DETECT_NAME_LEN);
	if (!nl || nl == WR_DETECT_NAME_LEN) {
		set_err(d, "class %#llx: its name is %s (1..%d bytes)", (unsigned long long)key,
			nl ? "too long" : "empty", WR_DETECT_NAME_LEN - 1);
		return -EINVAL;
	}
	pos = lower_bound(d, key, &found);
	if (!found) {
		if (!d->nspare) {
			set_err(d, "class %s not watched: %u classes already are (max_classes)",
				name, d->o.max_classes);
			return -ENOSPC;
		}
		note_time(d, now);
		add_class(d, pos, key, name, packets, bytes, now);
		return 0;
	}
	note_time(d, now);
	c = &d->pool[d->order[pos]];
	if (strcmp(c->name, name))
		snprintf(c->name, sizeof(c->name), "%s", name);
	c->seen_ns = now;
	/* Counters went back (the data path was reloaded): this reading is the new reference. */
	if (packets < c->ref[WR_DETECT_PKTS] || bytes < c->ref[WR_DETECT_BYTES]) {
		c->ref[WR_DETECT_PKTS] = packets;
		c->ref[WR_DETECT_BYTES] = bytes;
		c->ref_ns = now;
		return 0;
	}
	dt = now - c->ref_ns;
	if (dt < MIN_DT_NS)
		return 0;
	cnt[WR_DETECT_PKTS] = (double)(packets - c->ref[WR_DETECT_PKTS]);
	cnt[WR_DETECT_BYTES] = (double)(bytes - c->ref[WR_DETECT_BYTES]);
	if (packets != c->ref[WR_DETECT_PKTS])
		c->moved_ns = now;
	for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++)
		c->rate[dim] = cnt[dim] * (double)NS_PER_S / (double)dt;
	c->ref[WR_DETECT_PKTS] = packets;
	c->ref[WR_DETECT_BYTES] = bytes;
	c->ref_ns = now;
	if (c->attacked) {
		attacked_reading(d, c, now);
		return 0;
	}
	/* The test runs before this reading is learnt: an attack meets the band before it. */
	dim = watching(d, c, now) ? departs(d, c) : -1;
	if (dim >= 0) {
		start_onset(d, c, dim, now);
		return 0;
	}
	/* The reading's start: an attack that began within it may not show in its average. */
	if (calm(d, c))
		c->calm_ns = now - dt;
	learn_reading(d, c, cnt, dt);
	return 0;
}

/* The host pressure's onset ends at now. */
static void pressure_end(struct wr_detector *d, uint64_t now)
{
	struct wr_detect_event ev = {
		.kind = WR_DETECT_PRESSURE_OFF, .name = "host", .at_ns = now,
		.factor = d->press_peak, .since_ns = d->press_since_ns,
	};

	ev.rate[0] = d->press_last;
	ev.threshold[0] = d->o.pressure_off;
	d->press_on = false;
	d->press_below_ns = 0;
	queue(d, &ev);
}

int wr_detect_pressure(struct wr_detector *d, double value, uint64_t now)
{
	struct wr_detect_event ev = { .key = 0, .name = "host" };
	int err;

	if (!d)
		return -EINVAL;
	d->err[0] = '\0';
	if (!(value >= 0 && value <= 1)) {
		set_err(d, "pressure %g is not in [0, 1]", value);
		return -EINVAL;
	}
	err = check_time(d, now);
	if (err)
		return err;
	note_time(d, now);
	d->press_last = value;
	if (!d->press_on) {
		if (value < d->o.pressure_on)
			return 0;
		d->press_on = true;
		d->press_since_ns = now;
		d->press_below_ns = 0;
		d->press_peak = value;
		ev.kind = WR_DETECT_PRESSURE_ON;
		ev.rate[0] = value;
		ev.threshold[0] = d->o.pressure_on;
		ev.at_ns = now;
		ev.factor = value;
		queue(d, &ev);
		return 0;
	}
	if (value > d->press_peak)
		d->press_peak = value;
	if (value >= d->o.pressure_off) {
		d->press_below_ns = 0;
		return 0;
	}
	if (!d->press_below_ns)
		d->press_below_ns = now;
	if (now - d->press_below_ns >= d->o.pressure_hold_ns)
		pressure_end(d, now);
	return 0;
}

int wr_detect_poll(struct wr_detector *d, uint64_t now, struct wr_detect_event *ev, size_t max)
{
	size_t n = 0;
	uint32_t i;
	int err;

	if (!d)
		return -EINVAL;
	d->err[0] = '\0';
	if (!ev && max) {
		set_err(d, "no room for events");
		return -EINVAL;
	}
	if (max > INT32_MAX)
		max = INT32_MAX;
	err = check_time(d, now);
	if (err)
		return err;
	note_time(d, now);
	/* Holds that ran out with no reading since (the class's counters stopped coming). */
	for (i = 0; i < d->nr; i++) {
		struct dclass *c = &d->pool[d->order[i]];

		if (c->attacked && c->below_ns && now - c->below_ns >= d->o.hold_ns)
			end_onset(d, c, now);
	}
	if (d->press_on && d->press_below_ns && now - d->press_below_ns >= d->o.pressure_hold_ns)
		pressure_end(d, now);
	while (n < max && d->evn) {
		ev[n++] = d->evq[d->evhead];
		d->evhead = (d->evhead + 1) % d->evcap;
		d->evn--;
	}
	return (int)n;
}

size_t wr_detect_list(const struct wr_detector *d, struct wr_detect_class *out, size_t max)
{
	uint32_t i;
	int dim;

	if (!d)
		return 0;
	for (i = 0; i < d->nr && i < max && out; i++) {
		const struct dclass *c = &d->pool[d->order[i]];
		struct wr_detect_class *o = &out[i];

		memset(o, 0, sizeof(*o));
		o->key = c->key;
		memcpy(o->name, c->name, sizeof(o->name));
		o->state = c->attacked ? WR_DETECT_ATTACKED :
			   watching(d, c, d->now_ns) ? WR_DETECT_WATCHING : WR_DETECT_LEARNING;
		for (dim = 0; dim < WR_DETECT_NR_DIMS; dim++) {
			o->rate[dim] = c->rate[dim];
			o->baseline[dim] = c->level[dim];
			o->median[dim] = c->med[dim];
			o->spread[dim] = c->spread[dim];
			o->band[dim] = band(d, c, dim);
			o->threshold[dim] = c->attacked ? c->thr[dim] : threshold(d, c, dim);
		}
		o->samples = c->n;
		o->last_ns = c->seen_ns;
		o->onset_ns = c->attacked ? c->onset_ns : 0;
	}
	return d->nr;
}

int wr_detect_forget(struct wr_detector *d, uint64_t now, uint64_t idle_ns)
{
	uint32_t i, j = 0;
	int err, gone = 0;

	if (!d)
		return -EINVAL;
	d->err[0] = '\0';
	if (!idle_ns) {
		set_err(d, "an idle time of 0 would forget every class");
		return -EINVAL;
	}
	err = check_time(d, now);
	if (err)
		return err;
	note_time(d, now);
	for (i = 0; i < d->nr; i++) {
		uint32_t idx = d->order[i];
		struct dclass *c = &d->pool[idx];
		bool forget;

		/* One in an onset goes only when its counters stopped coming, with its end. */
		if (c->attacked)
			forget = now - c->seen_ns >= idle_ns;
		else
			forget = now - c->moved_ns >= idle_ns;
		if (!forget) {
			d->order[j++] = idx;
			continue;
		}
		if (c->attacked)
			end_onset(d, c, now);
		d->spare[d->nspare++] = idx;
		gone++;
	}
	d->nr = j;
	return gone;
}

int wr_detect_accept(struct wr_detector *d, uint64_t key, uint64_t now)
{
	struct dclass *c;
	uint32_t pos;
	bool found;
	int err;

	if (!d)
		return -EINVAL;
	d->err[0] = '\0';
	err = check_time(d, now);
	if (err)
		return err;
	pos = lower_bound(d, key, &found);
	if (!found) {
		set_err(d, "class %#llx is not watched", (unsigned long long)key);
		return -ENOENT;
	}
	note_time(d, now);
	c = &d->pool[d->order[pos]];
	if (c->attacked)
		end_onset(d, c, now);
	/* Learnt afresh: what it carries now is its normal. */
	c->n = c->head = 0;
	c->has_level = false;
	memset(c->level, 0, sizeof(c->level));
	memset(c->med, 0, sizeof(c->med));
	memset(c->spread, 0, sizeof(c->spread));
	memset(c->sum, 0, sizeof(c->sum));
	c->sum_ns = 0;
	c->quiet_until_ns = now + d->o.warmup_ns;
	return 0;
}
