// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto` across a fleet (docs/auto.md, "Across a fleet"): the rules
 * auto installed here published through the fleet's Redis, and the other
 * hosts' applied here, as Cloudflare's edge gossips its fingerprints.
 * Called from auto.c's tick, on the daemon's loop; the Redis work is the
 * fleet thread's (fleet/fp.c), which this only hands lists to and takes
 * lists from.
 *
 * Published: each installed auto-N's words without its dst term (a host's
 * addresses are its own; the vector is what the packets carry). Received:
 * a member of another host is parsed as `weir rule add` parses a rule and
 * must be a fingerprint (drop, limit, cookies or tcp-state, on a protocol
 * and something more; no fleet limit); with mode on it becomes rule
 * auto-fN (counted against max-rules with auto's own), with mode advise it
 * is reported. It goes when its member is gone from Redis (its host
 * removed it, or stopped refreshing it), when its expiry passes with Redis
 * out of reach, and when auto stops. What this host receives it never
 * publishes, and its own members it never applies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/libweir.h"
#include "auto/engine.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "daemon/metrics.h"

/* Words of one received rule, its name included, at most. */
#define FL_ARGV			64
/* Members refused already, remembered so each is said (and counted) once. */
#define FL_REFUSED		64

struct fl_rule {
	bool used;
	bool installed;			/* a live rule (mode on), else advised only */
	bool seen;			/* in the last read */
	char rule[WR_AUTO_RULE_LEN];	/* auto-fN */
	char host[WR_FLEET_FP_HOST];
	char words[WR_FLEET_FP_WORDS];
	__u64 expires_ms;		/* CLOCK_REALTIME ms */
	__u64 received_ms;
};

struct auto_fleet {
	struct fl_rule r[WR_AUTO_MAX];
	__u32 next_id;			/* the N of the next auto-fN */
	__u64 gen;			/* the fleet's read last taken */
	__u64 refused[FL_REFUSED];	/* hashes of members refused, a ring */
	__u32 nr_refused;
	char pub[WR_AUTO_MAX][WR_FLEET_FP_WORDS];	/* published at the last tick */
	size_t nr_pub;
	struct wr_fleet_fp got[4 * WR_FLEET_FP_MAX];
};

struct auto_fleet *auto_fleet_new(void)
{
	struct auto_fleet *fl = calloc(1, sizeof(*fl));

	if (fl)
		fl->next_id = 1;
	return fl;
}

static __u64 wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static __u64 fnv(const char *s, __u64 h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* words without their "dst ADDR" pair into out: what another host's packets carry too. */
static void portable(const char *words, char *out, size_t len)
{
	char buf[WR_AUTO_WORDS_LEN], *save, *w;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", words);
	out[0] = '\0';
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "dst")) {
			strtok_r(NULL, " ", &save);
			continue;
		}
		n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? " " : "", w);
	}
}

/*
 * Whether words are a fingerprint this host may apply: 0, or -EINVAL with
 * why. Parsed as `weir rule add` parses; printable words only; an action
 * that enforces; a protocol and something more to match (never all of a
 * protocol's traffic, never everything); no fleet limit.
 */
static int fp_check(const char *words, char *why, size_t len)
{
	char buf[WR_AUTO_RULE_LEN + WR_FLEET_FP_WORDS + 2], rname[WEIR_NAME_LEN] = "";
	struct weir_ban bans[WEIR_MAX_LIMITS];
	char *argv[FL_ARGV], *save, *w;
	struct wr_perr pe;
	struct weir_rule r;
	const char *p;
	int argc = 0, err;
	__u32 i;

	for (p = words; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) {
			snprintf(why, len, "a byte that is not printable");
			return -EINVAL;
		}
	snprintf(buf, sizeof(buf), "auto-f0 %s", words);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (argc == FL_ARGV) {
			snprintf(why, len, "too many words");
			return -EINVAL;
		}
		argv[argc++] = w;
	}
	memset(&pe, 0, sizeof(pe));
	err = wr_rule_parse(argc, argv, &r, bans, NULL, rname, &pe);
	if (err) {
		snprintf(why, len, "not a rule: %s", pe.msg);
		return -EINVAL;
	}
	if (r.action == WEIR_ACT_DRYRUN) {
		snprintf(why, len, "a dry run, not a fingerprint");
		return -EINVAL;
	}
	if (!(r.match & WEIR_M_PROTO) ||
	    (!(r.match & (WEIR_M_DPORT | WEIR_M_SRC | WEIR_M_TCPFLAGS | WEIR_M_ICMPTYPE)) &&
	     !r.xmatch)) {
		snprintf(why, len, "it matches all of a protocol's traffic, or everything");
		return -EINVAL;
	}
	for (i = 0; i < r.nr_limits && i < WEIR_MAX_LIMITS; i++)
		if (r.limits[i].fleet) {
			snprintf(why, len, "a fleet limit");
			return -EINVAL;
		}
	return 0;
}

/*
 * The rule of these words, whichever host published them: two hosts that
 * found the same vector make one rule here, kept while either publishes it.
 */
static struct fl_rule *find(struct auto_fleet *fl, const char *words)
{
	int i;

	for (i = 0; i < WR_AUTO_MAX; i++)
		if (fl->r[i].used && !strcmp(fl->r[i].words, words))
			return &fl->r[i];
	return NULL;
}

static size_t nr_installed(const struct auto_fleet *fl)
{
	size_t n = 0;
	int i;

	for (i = 0; i < WR_AUTO_MAX; i++)
		n += fl->r[i].used && fl->r[i].installed;
	return n;
}

/* A member refused: said and counted once. */
static void refuse(struct daemon *d, struct auto_fleet *fl, const struct wr_fleet_fp *g,
		   const char *why)
{
	__u64 h = fnv(g->words, fnv(g->host, 0xcbf29ce484222325ULL) ^ g->corrupt);
	char text[121];
	__u32 i;

	for (i = 0; i < fl->nr_refused && i < FL_REFUSED; i++)
		if (fl->refused[i] == h)
			return;
	fl->refused[fl->nr_refused++ % FL_REFUSED] = h;
	if (fl->nr_refused == 2 * FL_REFUSED)
		fl->nr_refused = FL_REFUSED;
	__atomic_add_fetch(&d->auf_refused, 1, __ATOMIC_RELAXED);
	/* Its bytes as they came but for what is not printable: one line in the log. */
	snprintf(text, sizeof(text), "%.120s", g->words);
	for (i = 0; text[i]; i++)
		if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] > 0x7e)
			text[i] = '?';
	dlog("auto: fleet: refused a fingerprint from %s: %s: \"%s\"",
	     g->host[0] ? g->host : "(no host)", why, text);
}

static void remove_one(struct daemon *d, struct fl_rule *r, const char *reason)
{
	char why[320];

	if (r->installed) {
		if (auto_change_live(d, r->rule, NULL, why, sizeof(why)))
			dlog("auto: fleet: cannot remove %s: %s", r->rule, why);
		else
			dlog("auto: fleet: %s (from %s) removed: %s", r->rule, r->host, reason);
		__atomic_sub_fetch(&d->auf_rules, 1, __ATOMIC_RELAXED);
	}
	memset(r, 0, sizeof(*r));
}

/* A new member g: applied (mode on, room left), advised, or refused. True if kept. */
static bool apply(struct daemon *d, struct auto_fleet *fl, const struct wr_fleet_fp *g, int mode,
		  __u32 max_rules, __u64 now_ms)
{
	struct fl_rule *r = NULL;
	char why[320];
	int i;

	if (g->corrupt) {
		refuse(d, fl, g, "not HOST<TAB>WORDS within bounds");
		return false;
	}
	if (fp_check(g->words, why, sizeof(why))) {
		refuse(d, fl, g, why);
		return false;
	}
	for (i = 0; i < WR_AUTO_MAX && !r; i++)
		if (!fl->r[i].used)
			r = &fl->r[i];
	if (!r) {
		refuse(d, fl, g, "no slot left for another fleet fingerprint");
		return false;
	}
	r->used = true;
	snprintf(r->rule, sizeof(r->rule), "auto-f%u", fl->next_id++);
	snprintf(r->host, sizeof(r->host), "%s", g->host);
	snprintf(r->words, sizeof(r->words), "%s", g->words);
	r->expires_ms = g->expires_ms;
	r->received_ms = now_ms;
	r->seen = true;
	if (mode == WR_AUTO_ON &&
	    __atomic_load_n(&d->au_rules, __ATOMIC_RELAXED) + nr_installed(fl) < max_rules) {
		if (!auto_change_live(d, r->rule, r->words, why, sizeof(why))) {
			r->installed = true;
			__atomic_add_fetch(&d->auf_rules, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&d->auf_applied, 1, __ATOMIC_RELAXED);
			dlog("auto: fleet: %s installed: found by %s: %s", r->rule, r->host,
			     r->words);
			return true;
		}
		dlog("auto: fleet: %s from %s not installed (advised only): %s", r->rule, r->host,
		     why);
	}
	__atomic_add_fetch(&d->auf_advised, 1, __ATOMIC_RELAXED);
	dlog("auto: fleet: advice from %s%s: weir rule add %s %s", r->host,
	     mode == WR_AUTO_ON ? " (no room for another auto rule)" : "", r->rule, r->words);
	return true;
}

/* What this host publishes: its installed rules, each once. True if it changed. */
static bool publish(struct daemon *d, struct auto_fleet *fl, const struct wr_auto_mit *mits,
		    size_t n)
{
	char (*pub)[WR_FLEET_FP_WORDS] = calloc(WR_AUTO_MAX, sizeof(*pub));
	size_t np = 0, i, j;
	bool changed;

	if (!pub)
		return false;
	for (i = 0; i < n && np < WR_AUTO_MAX; i++) {
		const struct wr_auto_mit *m = &mits[i];

		if (!m->installed || (m->state != WR_AUTO_ACTIVE && m->state != WR_AUTO_LINGERING))
			continue;
		portable(m->words, pub[np], WR_FLEET_FP_WORDS);
		for (j = 0; j < fl->nr_pub && strcmp(fl->pub[j], pub[np]); j++)
			;
		if (j == fl->nr_pub) {
			__atomic_add_fetch(&d->auf_published, 1, __ATOMIC_RELAXED);
			dlog("auto: fleet: %s published to fleet %s: %s", m->rule,
			     d->cfg.fleet.name, pub[np]);
		}
		np++;
	}
	changed = np != fl->nr_pub || memcmp(pub, fl->pub, np * sizeof(*pub));
	memcpy(fl->pub, pub, np * sizeof(*pub));
	fl->nr_pub = np;
	free(pub);
	if (d->fleet)
		wr_fleet_fp_publish(d->fleet, (const char (*)[WR_FLEET_FP_WORDS])fl->pub, np);
	return changed;
}

bool auto_fleet_tick(struct daemon *d, struct auto_fleet *fl, int mode, __u32 max_rules,
		     const struct wr_auto_mit *mits, size_t n)
{
	__u64 now = wall_ms(), gen = 0;
	bool changed = false;
	struct fl_rule *r;
	int got = -EAGAIN, i;

	if (!fl)
		return false;
	/* Only what auto installed here: never what it received (no echo). */
	changed = publish(d, fl, mode == WR_AUTO_ON ? mits : NULL, mode == WR_AUTO_ON ? n : 0);
	if (d->fleet)
		got = wr_fleet_fp_received(d->fleet, fl->got, ARRAY_SIZE(fl->got), &gen);
	if (got >= 0 && gen != fl->gen) {
		fl->gen = gen;
		for (i = 0; i < WR_AUTO_MAX; i++)
			fl->r[i].seen = false;
		for (i = 0; i < got; i++) {
			const struct wr_fleet_fp *g = &fl->got[i];

			r = g->corrupt ? NULL : find(fl, g->words);
			if (r) {
				/* The latest expiry of those that publish it. */
				if (!r->seen || g->expires_ms > r->expires_ms)
					r->expires_ms = g->expires_ms;
				r->seen = true;
			} else if (apply(d, fl, g, mode, max_rules, now)) {
				changed = true;
			}
		}
		for (i = 0; i < WR_AUTO_MAX; i++)
			if (fl->r[i].used && !fl->r[i].seen) {
				remove_one(d, &fl->r[i], "its host withdrew it, or it expired");
				changed = true;
			}
	}
	/*
	 * Each goes at its own expiry when no read refreshed it since (Redis
	 * out of reach or stalled: the last good read is all there is), and
	 * at once with no fleet now.
	 */
	for (i = 0; i < WR_AUTO_MAX; i++) {
		r = &fl->r[i];
		if (r->used && (!d->fleet || r->expires_ms <= now)) {
			remove_one(d, r, d->fleet ? "expired (Redis out of reach)"
						  : "no fleet now");
			changed = true;
		}
	}
	return changed;
}

void auto_fleet_append(struct daemon *d, struct auto_fleet *fl, struct weir_ruleset *rs)
{
	char why[320];
	int i;

	for (i = 0; fl && i < WR_AUTO_MAX; i++) {
		if (!fl->r[i].used || !fl->r[i].installed)
			continue;
		if (auto_put_rule(rs, fl->r[i].rule, fl->r[i].words, why, sizeof(why))) {
			dlog("auto: fleet: %s cannot stay in the new rule set: %s", fl->r[i].rule,
			     why);
			fl->r[i].installed = false;
			__atomic_sub_fetch(&d->auf_rules, 1, __ATOMIC_RELAXED);
		}
	}
}

void auto_fleet_free(struct daemon *d, struct auto_fleet *fl, bool remove)
{
	int i;

	if (!fl)
		return;
	for (i = 0; remove && i < WR_AUTO_MAX; i++)
		if (fl->r[i].used)
			remove_one(d, &fl->r[i], "auto stopped");
	if (remove && d->fleet)
		wr_fleet_fp_publish(d->fleet, NULL, 0);
	if (remove)
		__atomic_store_n(&d->auf_rules, 0, __ATOMIC_RELAXED);
	free(fl);
}

void auto_fleet_json(FILE *f, const struct auto_fleet *fl)
{
	bool first = true;
	size_t i;

	fprintf(f, ",\"published\":%zu,\"fleet\":[", fl ? fl->nr_pub : 0);
	for (i = 0; fl && i < WR_AUTO_MAX; i++) {
		const struct fl_rule *r = &fl->r[i];

		if (!r->used)
			continue;
		fputs(first ? "{\"rule\":" : ",{\"rule\":", f);
		first = false;
		auto_json_str(f, r->rule);
		fputs(",\"host\":", f);
		auto_json_str(f, r->host);
		fputs(",\"words\":", f);
		auto_json_str(f, r->words);
		fprintf(f, ",\"installed\":%s,\"received\":%.3f,\"expires\":%.3f}",
			r->installed ? "true" : "false", r->received_ms / 1e3, r->expires_ms / 1e3);
	}
	fputs("]", f);
}

void auto_fleet_metrics(struct daemon *d, FILE *out)
{
	wr_metric_family(out, "weir_auto_fleet_rules", "gauge",
			 "Rules weir auto installed from fingerprints other hosts found.");
	wr_metric_value(out, "weir_auto_fleet_rules",
			__atomic_load_n(&d->auf_rules, __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_auto_fleet_fingerprints_total", "counter",
			 "Fingerprints weir auto shared with the fleet, by what became of them.");
	wr_metric_labeled(out, "weir_auto_fleet_fingerprints_total", "result", "published",
			  __atomic_load_n(&d->auf_published, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_auto_fleet_fingerprints_total", "result", "installed",
			  __atomic_load_n(&d->auf_applied, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_auto_fleet_fingerprints_total", "result", "advised",
			  __atomic_load_n(&d->auf_advised, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_auto_fleet_fingerprints_total", "result", "refused",
			  __atomic_load_n(&d->auf_refused, __ATOMIC_RELAXED));
}
