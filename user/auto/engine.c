// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s decisions (auto/engine.h says which and why). Mitigations
 * live in a fixed table of WR_AUTO_MAX; the two sample buffers a choice
 * needs are allocated once, with the engine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto/engine.h"

/* Nanoseconds in a millisecond and a second. */
#define MS 1000000ULL
#define SEC (1000 * MS)
/*
 * A live rule's match share of the recent samples may fall this far below
 * its share when chosen before the vector is looked at again: the normal
 * traffic's share of a class moves with the attack's rate.
 */
#define RECHECK_DROP 0.9
/*
 * A vector the re-check finds beside a rule's, while that rule still
 * matches this share of what is left for both: a second attack, made a
 * rule of its own; under it, the vector changed, and the rule is replaced.
 */
#define RECHECK_KEEP 0.2
/* Fewer before-samples of a class than this: the host's whole traffic before stands in. */
#define BEFORE_MIN 50
/*
 * The before-sample ends this long before the onset: an attack shows in
 * the counters a reading or two after it starts (and a rising one later),
 * and its first packets must not count as the traffic before it.
 */
#define BEFORE_GAP_NS (2 * SEC)

/* Fingerprints of mitigations gone (or replaced) that a before-sample still spares. */
#define PAST_MAX 16

struct wr_auto {
	struct wr_auto_opts o;
	struct wr_auto_mit m[WR_AUTO_MAX];
	uint64_t seq;		/* the last auto-N given */
	struct wr_fp_pkt *att, *bef;
	/* A ring of PAST_MAX: a fingerprint, and when it stopped being one (0: a free slot). */
	struct {
		struct wr_fp_choice c;
		uint64_t until;
	} past[PAST_MAX];
	uint32_t past_next;
};

void wr_auto_opts_default(struct wr_auto_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = WR_AUTO_ON;
	o->max_rules = 16;
	o->gather_ns = 500 * MS;
	o->gather_back_ns = 250 * MS;
	o->min_samples = 200;
	o->before_ns = 30 * SEC;
	o->recheck_ns = 1 * SEC;
	o->linger_ns = 60 * SEC;
	wr_fp_opts_init(&o->fp);
}

int wr_auto_new(const struct wr_auto_opts *o, struct wr_auto **out, char *why, size_t len)
{
	struct wr_auto *a;

	*out = NULL;
	if (o->mode < WR_AUTO_OFF || o->mode > WR_AUTO_ON) {
		snprintf(why, len, "mode: off, advise or on");
		return -EINVAL;
	}
	if (!o->max_rules || o->max_rules > WR_AUTO_MAX) {
		snprintf(why, len, "max-rules: 1 to %d", WR_AUTO_MAX);
		return -EINVAL;
	}
	if (!o->gather_ns || o->gather_ns > 60 * SEC || o->gather_back_ns > 10 * SEC) {
		snprintf(why, len, "gather: more than 0 and at most 60 s (back at most 10 s)");
		return -EINVAL;
	}
	if (!o->min_samples || o->min_samples > WR_AUTO_SAMPLE_MAX) {
		snprintf(why, len, "min-samples: 1 to %d", WR_AUTO_SAMPLE_MAX);
		return -EINVAL;
	}
	if (o->before_ns <= BEFORE_GAP_NS || o->before_ns > 3600 * SEC) {
		snprintf(why, len, "before: longer than 2 s, at most an hour");
		return -EINVAL;
	}
	if (!o->recheck_ns || o->linger_ns > 86400 * SEC) {
		snprintf(why, len, "recheck more than 0, linger at most a day");
		return -EINVAL;
	}
	if (!(o->fp.cover > 0 && o->fp.cover <= 1) || !(o->fp.false_max >= 0 && o->fp.false_max < 1) ||
	    !o->fp.limit_pps) {
		snprintf(why, len, "cover in (0, 1], false-max in [0, 1), fallback limit at least 1");
		return -EINVAL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->att = calloc(WR_AUTO_SAMPLE_MAX, sizeof(*a->att));
	a->bef = calloc(WR_AUTO_SAMPLE_MAX, sizeof(*a->bef));
	if (!a->att || !a->bef) {
		wr_auto_free(a);
		return -ENOMEM;
	}
	a->o = *o;
	*out = a;
	return 0;
}

void wr_auto_free(struct wr_auto *a)
{
	if (!a)
		return;
	free(a->att);
	free(a->bef);
	free(a);
}

/*
 * The first mitigation from index from on that took class key on (any
 * state but gone), and the class's index there.
 */
static struct wr_auto_mit *of_class(struct wr_auto *a, uint64_t key, uint32_t from, uint32_t *k)
{
	uint32_t i, j;

	for (i = from; i < WR_AUTO_MAX; i++) {
		struct wr_auto_mit *x = &a->m[i];

		if (x->state == WR_AUTO_GONE)
			continue;
		for (j = 0; j < x->nr_classes; j++)
			if (x->keys[j] == key) {
				*k = j;
				return x;
			}
	}
	return NULL;
}

static void end_class(struct wr_auto *a, struct wr_auto_mit *x, uint32_t k, uint64_t at)
{
	uint32_t j;

	x->ended[k] = true;
	for (j = 0; j < x->nr_classes; j++)
		if (!x->ended[j])
			return;
	/* An onset never chosen for ends with nothing to remove. */
	if (x->state == WR_AUTO_GATHERING) {
		x->state = WR_AUTO_GONE;
		return;
	}
	x->state = WR_AUTO_LINGERING;
	x->ended_ns = at;
	x->expires_ns = at + a->o.linger_ns;
}

void wr_auto_event(struct wr_auto *a, const struct wr_detect_event *ev)
{
	bool onset = ev->kind == WR_DETECT_ONSET || ev->kind == WR_DETECT_PRESSURE_ON;
	struct wr_auto_mit *x;
	uint32_t i, k;

	if (a->o.mode == WR_AUTO_OFF ||
	    (!onset && ev->kind != WR_DETECT_END && ev->kind != WR_DETECT_PRESSURE_OFF))
		return;
	/* The host's pressure is the class of every packet (key 0: wr_sampler_take's all). */
	x = of_class(a, ev->key, 0, &k);
	if (!onset) {
		/* Each mitigation of the class: two vectors' rules end with it. */
		for (; x; x = of_class(a, ev->key, (uint32_t)(x - a->m) + 1, &k))
			if (!x->ended[k])
				end_class(a, x, k, ev->at_ns);
		return;
	}
	if (x) {
		/* Back while its rules linger: they stay, as before the pause. */
		for (; x; x = of_class(a, ev->key, (uint32_t)(x - a->m) + 1, &k)) {
			x->ended[k] = false;
			if (x->state == WR_AUTO_LINGERING)
				x->state = WR_AUTO_ACTIVE;
		}
		return;
	}
	for (i = 0; i < WR_AUTO_MAX && a->m[i].state != WR_AUTO_GONE; i++)
		;
	if (i == WR_AUTO_MAX)
		return;	/* every slot busy: the onset goes unanswered, as with no room */
	x = &a->m[i];
	memset(x, 0, sizeof(*x));
	x->state = WR_AUTO_GATHERING;
	x->keys[0] = ev->key;
	snprintf(x->names[0], sizeof(x->names[0]), "%s", ev->name);
	x->nr_classes = 1;
	x->onset_ns = ev->at_ns;
	x->calm_ns = ev->calm_ns;
}

/*
 * The before-sample's end: BEFORE_GAP_NS before the onset, or where the
 * class was last calm if that is earlier (an onset that showed late, on a
 * busy host, must not take the attack's first seconds as normal traffic).
 */
static uint64_t before_to(const struct wr_auto_mit *x)
{
	uint64_t to = x->onset_ns > BEFORE_GAP_NS ? x->onset_ns - BEFORE_GAP_NS : 0;

	return x->calm_ns && x->calm_ns < to ? x->calm_ns : to;
}

static uint32_t installed(const struct wr_auto *a)
{
	uint32_t i, n = 0;

	for (i = 0; i < WR_AUTO_MAX; i++)
		n += a->m[i].state != WR_AUTO_GONE && a->m[i].installed;
	return n;
}

static uint32_t matched(const struct wr_fp_choice *c, const struct wr_fp_pkt *p, size_t n)
{
	uint32_t hit = 0;
	size_t i;

	for (i = 0; i < n; i++)
		hit += wr_fp_match(c, &p[i]) == 1;
	return hit;
}

/* Of the packets c matches, the share that live matches too (0 when c matches none). */
static double covered(const struct wr_fp_choice *live, const struct wr_fp_choice *c,
		      const struct wr_fp_pkt *p, size_t n)
{
	size_t i, both = 0, mine = 0;

	for (i = 0; i < n; i++) {
		if (wr_fp_match(c, &p[i]) != 1)
			continue;
		mine++;
		both += wr_fp_match(live, &p[i]) == 1;
	}
	return mine ? (double)both / (double)mine : 0;
}

static struct wr_auto_action *act(struct wr_auto_action *out, size_t max, size_t *n, int kind,
				  const struct wr_auto_mit *x, uint64_t now)
{
	struct wr_auto_action *r;

	if (*n >= max)
		return NULL;
	r = &out[(*n)++];
	memset(r, 0, sizeof(*r));
	r->act = kind;
	snprintf(r->rule, sizeof(r->rule), "%s", x->rule);
	snprintf(r->words, sizeof(r->words), "%s", x->words);
	snprintf(r->desc, sizeof(r->desc), "%s", x->desc);
	snprintf(r->class_name, sizeof(r->class_name), "%s", x->names[0]);
	r->onset_ns = x->onset_ns;
	r->at_ns = now;
	r->vector = wr_fp_vector(&x->choice);
	return r;
}

/* A choice's words and line, into x; 0 or -ENOSPC. */
static int put_choice(struct wr_auto_mit *x, const struct wr_fp_choice *c)
{
	if (wr_fp_rule_words(c, x->words, sizeof(x->words)) < 0 ||
	    wr_fp_describe(c, x->desc, sizeof(x->desc)) < 0)
		return -ENOSPC;
	x->choice = *c;
	return 0;
}

/* A fingerprint that stopped being one at now, kept for before-samples (spare). */
static void remember(struct wr_auto *a, const struct wr_fp_choice *c, uint64_t now)
{
	if (c->action != WR_FP_DROP)
		return;
	a->past[a->past_next % PAST_MAX].c = *c;
	a->past[a->past_next % PAST_MAX].until = now ? now : 1;
	a->past_next++;
}

/* Whether a live mitigation's drop fingerprint, other than skip's, matches p. */
static bool live_match(const struct wr_auto *a, const struct wr_auto_mit *skip,
		       const struct wr_fp_pkt *p)
{
	uint32_t i;

	for (i = 0; i < WR_AUTO_MAX; i++) {
		const struct wr_auto_mit *y = &a->m[i];

		if (y != skip && (y->state == WR_AUTO_ACTIVE || y->state == WR_AUTO_LINGERING) &&
		    y->choice.action == WR_FP_DROP && wr_fp_match(&y->choice, p) == 1)
			return true;
	}
	return false;
}

/* Whether weir auto judged p an attack: a fingerprint of another mitigation, or a recent one. */
static bool judged(const struct wr_auto *a, const struct wr_auto_mit *x, const struct wr_fp_pkt *p,
		   uint64_t now)
{
	uint32_t i;

	if (live_match(a, x, p))
		return true;
	for (i = 0; i < PAST_MAX; i++)
		if (a->past[i].until && a->past[i].until + a->o.before_ns >= now &&
		    wr_fp_match(&a->past[i].c, p) == 1)
			return true;
	return false;
}

/*
 * The before-sample p[0..m) less what weir auto already judged an attack
 * (judged): an earlier flood's packets that passed while its fingerprint
 * was being gathered are not the traffic before this one (the dropped
 * ones never come: WR_TAKE_PASSED). The number left.
 */
static size_t spare(const struct wr_auto *a, const struct wr_auto_mit *x, struct wr_fp_pkt *p,
		    size_t m, uint64_t now)
{
	size_t i, k = 0;

	for (i = 0; i < m; i++)
		if (!judged(a, x, &p[i], now))
			p[k++] = p[i];
	return k;
}

/* x, its choice made, as a rule auto-N: installed, or advised (mode advise, or no room). */
static void start(struct wr_auto *a, struct wr_auto_mit *x, uint64_t now,
		  struct wr_auto_action *out, size_t max, size_t *nout)
{
	struct wr_auto_action *r;

	x->state = WR_AUTO_ACTIVE;
	x->chosen_ns = x->checked_ns = now;
	snprintf(x->rule, sizeof(x->rule), "auto-%llu", (unsigned long long)++a->seq);
	if (a->o.mode == WR_AUTO_ON && installed(a) < a->o.max_rules) {
		if (act(out, max, nout, WR_AUTO_INSTALL, x, now))
			x->installed = true;
		return;
	}
	r = act(out, max, nout, WR_AUTO_ADVICE, x, now);
	if (r)
		r->no_room = a->o.mode == WR_AUTO_ON;
}

/* A gathering onset: wait, join a live rule, or choose. */
static void gather(struct wr_auto *a, const struct wr_sampler *s, struct wr_auto_mit *x,
		   uint64_t now, struct wr_auto_action *out, size_t max, size_t *nout)
{
	uint64_t from = x->onset_ns > a->o.gather_back_ns ? x->onset_ns - a->o.gather_back_ns : 0;
	uint64_t bfrom = x->onset_ns > a->o.before_ns ? x->onset_ns - a->o.before_ns : 0;
	uint64_t bto = before_to(x);
	struct wr_fp_choice c;
	size_t n, m, i;

	n = wr_sampler_take(s, x->keys[0], from, now + 1, WR_TAKE_ALL, a->att, WR_AUTO_SAMPLE_MAX);
	if (n < a->o.min_samples && now < x->onset_ns + a->o.gather_ns)
		return;
	if (!n) {
		x->state = WR_AUTO_GONE;	/* nothing sampled to choose from */
		return;
	}
	m = wr_sampler_take(s, x->keys[0], bfrom, bto, WR_TAKE_PASSED, a->bef, WR_AUTO_SAMPLE_MAX);
	m = spare(a, x, a->bef, m, now);
	/*
	 * A class that carried (almost) nothing before: the host's traffic
	 * before is what the rule must not match, every class of it.
	 */
	if (m < BEFORE_MIN)
		m = spare(a, x, a->bef,
			  wr_sampler_take(s, 0, bfrom, bto, WR_TAKE_PASSED, a->bef,
					  WR_AUTO_SAMPLE_MAX), now);
	if (wr_fp_choose(a->att, n, a->bef, m, &a->o.fp, &c) || put_choice(x, &c)) {
		x->state = WR_AUTO_GONE;
		return;
	}
	/*
	 * The same attack seen as another class: a live rule that matches
	 * what this choice matches (its cover of it) takes this class on.
	 */
	for (i = 0; i < WR_AUTO_MAX; i++) {
		struct wr_auto_mit *y = &a->m[i];

		if (y == x || y->state != WR_AUTO_ACTIVE || y->nr_classes >= WR_AUTO_CLASSES)
			continue;
		if (covered(&y->choice, &c, a->att, n) >= a->o.fp.cover) {
			y->keys[y->nr_classes] = x->keys[0];
			snprintf(y->names[y->nr_classes], sizeof(y->names[0]), "%s", x->names[0]);
			y->ended[y->nr_classes++] = false;
			x->state = WR_AUTO_GONE;
			return;
		}
	}
	start(a, x, now, out, max, nout);
}

/*
 * A live rule against the samples since its last check: when it matches
 * clearly less of them than of the attack it was chosen for, and the
 * chooser finds a fingerprint of them (a new vector, not the normal
 * traffic left when the attack stops), that one replaces it.
 */
/*
 * Of p[0..n), the packets no live mitigation's fingerprint matches: their
 * number, and when compact, moved to the front (the others dropped).
 */
static size_t rest(const struct wr_auto *a, struct wr_fp_pkt *p, size_t n, bool compact)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (live_match(a, NULL, &p[i]))
			continue;
		if (compact)
			p[k] = p[i];
		k++;
	}
	return k;
}

/*
 * A second vector beside x's (x's still carries RECHECK_KEEP of what the
 * two rules' classes see): a mitigation of its own for the same classes,
 * choice c, started now, which ends with them.
 */
static void second(struct wr_auto *a, const struct wr_auto_mit *x, const struct wr_fp_choice *c,
		   uint64_t now, struct wr_auto_action *out, size_t max, size_t *nout)
{
	struct wr_auto_mit *y;
	uint32_t i;

	for (i = 0; i < WR_AUTO_MAX && a->m[i].state != WR_AUTO_GONE; i++)
		;
	if (i == WR_AUTO_MAX)
		return;	/* every slot busy, as an onset with no room */
	y = &a->m[i];
	memset(y, 0, sizeof(*y));
	memcpy(y->keys, x->keys, sizeof(y->keys));
	memcpy(y->names, x->names, sizeof(y->names));
	memcpy(y->ended, x->ended, sizeof(y->ended));
	y->nr_classes = x->nr_classes;
	y->onset_ns = now;
	if (put_choice(y, c)) {
		y->state = WR_AUTO_GONE;
		return;
	}
	start(a, y, now, out, max, nout);
}

static void recheck(struct wr_auto *a, const struct wr_sampler *s, struct wr_auto_mit *x,
		    uint64_t now, struct wr_auto_action *out, size_t max, size_t *nout)
{
	uint64_t from = x->checked_ns, bto, bfrom;
	struct wr_fp_choice c;
	size_t n, m, old, left, half;
	uint32_t k;

	x->checked_ns = now;
	for (k = 0; k < x->nr_classes && x->ended[k]; k++)
		;
	if (k == x->nr_classes)
		return;
	n = wr_sampler_take(s, x->keys[k], from, now + 1, WR_TAKE_ALL, a->att, WR_AUTO_SAMPLE_MAX);
	if (n < a->o.min_samples || !x->choice.n)
		return;
	/* Still covered, by this rule or with another vector's beside it. */
	if (n - rest(a, a->att, n, false) >=
	    RECHECK_DROP * x->choice.matched / x->choice.n * (double)n)
		return;
	/*
	 * The old vector's share of the newest half (oldest first): a vector
	 * that changed within these samples is gone from their end.
	 */
	half = n / 2;
	old = matched(&x->choice, a->att + half, n - half);
	left = rest(a, a->att + half, n - half, false);
	/* What the live rules leave: the new vector, and the normal traffic. */
	n = rest(a, a->att, n, true);
	if (n < a->o.min_samples / 2)
		return;
	bto = before_to(x);
	bfrom = x->onset_ns > a->o.before_ns ? x->onset_ns - a->o.before_ns : 0;
	m = wr_sampler_take(s, x->keys[k], bfrom, bto, WR_TAKE_PASSED, a->bef, WR_AUTO_SAMPLE_MAX);
	m = spare(a, x, a->bef, m, now);
	if (wr_fp_choose(a->att, n, a->bef, m, &a->o.fp, &c) || c.action != WR_FP_DROP)
		return;
	if (old >= RECHECK_KEEP * (double)(old + left)) {
		second(a, x, &c, now, out, max, nout);
		return;
	}
	remember(a, &x->choice, now);
	if (put_choice(x, &c))
		return;
	x->changes++;
	act(out, max, nout, x->installed ? WR_AUTO_REPLACE : WR_AUTO_ADVICE, x, now);
}

int wr_auto_step(struct wr_auto *a, const struct wr_sampler *s, uint64_t now_ns,
		 struct wr_auto_action *out, size_t max)
{
	size_t n = 0;
	uint32_t i;

	if (a->o.mode == WR_AUTO_OFF)
		return 0;
	for (i = 0; i < WR_AUTO_MAX && n < max; i++) {
		struct wr_auto_mit *x = &a->m[i];

		switch (x->state) {
		case WR_AUTO_GATHERING:
			gather(a, s, x, now_ns, out, max, &n);
			break;
		case WR_AUTO_ACTIVE:
			if (now_ns >= x->checked_ns + a->o.recheck_ns)
				recheck(a, s, x, now_ns, out, max, &n);
			break;
		case WR_AUTO_LINGERING:
			if (now_ns < x->expires_ns)
				break;
			if (x->installed && !act(out, max, &n, WR_AUTO_REMOVE, x, now_ns))
				break;
			remember(a, &x->choice, now_ns);
			x->state = WR_AUTO_GONE;
			break;
		}
	}
	return (int)n;
}

static int by_onset(const void *p, const void *q)
{
	const struct wr_auto_mit *x = p, *y = q;

	return (x->onset_ns > y->onset_ns) - (x->onset_ns < y->onset_ns);
}

size_t wr_auto_list(const struct wr_auto *a, struct wr_auto_mit *out, size_t max)
{
	size_t n = 0, got = 0;
	uint32_t i;

	for (i = 0; i < WR_AUTO_MAX; i++) {
		if (a->m[i].state == WR_AUTO_GONE)
			continue;
		if (got < max)
			out[got++] = a->m[i];
		n++;
	}
	qsort(out, got, sizeof(*out), by_onset);
	return n;
}

void wr_auto_not_installed(struct wr_auto *a, const char *rule)
{
	uint32_t i;

	for (i = 0; i < WR_AUTO_MAX; i++)
		if (a->m[i].state != WR_AUTO_GONE && !strcmp(a->m[i].rule, rule))
			a->m[i].installed = false;
}
