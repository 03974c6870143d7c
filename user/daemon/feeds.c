// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The daemon's blocklist feeds: the config's `lists:` written into the
 * feed store (integrations/feedstore.c) at every apply, the store's lists
 * put into the data path at once (so a restarted daemon protects from its
 * cache before any fetch), and a thread that fetches each feed of the
 * store, the CLI's too, when its refresh comes round, and swaps the data
 * path's feed maps when a list changed. Fetches run off the daemon's loop:
 * a slow server never delays its ticks. The swap takes the root lock, as
 * every writer does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <curl/curl.h>
#include "daemon/daemon_int.h"
#include "integrations/feedstore.h"

/* How often the thread looks for a feed whose refresh came round, in seconds. */
#define FEED_POLL_S	1

struct wr_feeds {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, kick;	/* under mu */
	char dir[PATH_MAX];
	/* The config's geo-db (under mu) and its mtime when the rules' sets last read it. */
	char geo_db[PATH_MAX];
	long long geo_mtime;
};

/* The config's feed c as the store's definition. */
static void def_of(const struct wr_cfg_feed *c, struct wr_feed_def *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", c->name);
	d->url = c->url[0];
	d->geo = c->geo[0];
	snprintf(d->source, sizeof(d->source), "%s", c->url[0] ? c->url : c->geo[0] ? c->geo : c->file);
	snprintf(d->countries, sizeof(d->countries), "%s", c->country);
	snprintf(d->asns, sizeof(d->asns), "%s", c->asn);
	d->action = c->action;
	d->refresh_s = c->refresh_s;
	d->config = true;
}

/*
 * The store made to hold the config's feeds: new and changed definitions
 * written (a new source drops the old list, so nothing of it stays in
 * force), the config's feeds it no longer names removed. The CLI's feeds
 * stay, unless the config now names one (the config wins).
 */
static int sync_store(const char *dir, const struct wr_cfg *cfg)
{
	struct wr_feed_def *have;
	int n = 0, i, j, err;

	have = calloc(WR_FEED_MAX, sizeof(*have));
	if (!have)
		return -ENOMEM;
	err = wr_feed_defs(dir, have, WR_FEED_MAX, &n);
	for (i = 0; !err && i < n; i++) {
		for (j = 0; j < cfg->nr_feeds; j++)
			if (!strcmp(cfg->feeds[j].name, have[i].name))
				break;
		if (j == cfg->nr_feeds && have[i].config) {
			dlog("feed %s: no longer in the config; removed", have[i].name);
			err = wr_feed_remove(dir, have[i].name);
		}
	}
	for (j = 0; !err && j < cfg->nr_feeds; j++) {
		struct wr_feed_def d, *old = NULL;

		def_of(&cfg->feeds[j], &d);
		for (i = 0; i < n; i++)
			if (!strcmp(have[i].name, d.name))
				old = &have[i];
		if (old && !old->config)
			dlog("feed %s: the config defines it; the command line's definition "
			     "is replaced", d.name);
		if (old && (old->url != d.url || old->geo != d.geo || strcmp(old->source, d.source) ||
			    strcmp(old->countries, d.countries) || strcmp(old->asns, d.asns)))
			err = wr_feed_remove(dir, d.name);
		if (!err && (!old || memcmp(old, &d, sizeof(d))))
			err = wr_feed_def_save(dir, &d);
	}
	free(have);
	return err;
}

int feeds_apply(struct daemon *d, const struct wr_maps *m)
{
	struct wr_feed_stats st;
	char dir[PATH_MAX], why[400] = "";
	int err;

	err = wr_feed_dir(dir, sizeof(dir));
	if (!err)
		err = sync_store(dir, &d->cfg);
	if (err) {
		pr_err("cannot write the feed store: %s", strerror(-err));
		return err;
	}
	err = wr_feed_rebuild(m, dir, &st, why, sizeof(why));
	if (err) {
		pr_err("feeds: %s", why);
		return err;
	}
	if (st.prefixes4 || st.prefixes6 || d->cfg.nr_feeds)
		dlog("feeds: %llu IPv4 and %llu IPv6 prefixes in force", st.prefixes4, st.prefixes6);
	if (d->feeds) {
		pthread_mutex_lock(&d->feeds->mu);
		d->feeds->kick = true;
		pthread_cond_signal(&d->feeds->cv);
		pthread_mutex_unlock(&d->feeds->mu);
	}
	return 0;
}

/* A file's mtime, or 0. */
static long long mtime_of(const char *path)
{
	struct stat st;

	return path[0] && !stat(path, &st) ? (long long)st.st_mtime : 0;
}

/* The store's resolver, but a feed not fetched yet is an empty set until it is. */
static int daemon_resolve(void *ctx, const char *set, struct wr_feed_set *out, char *why,
			  size_t len)
{
	int err = wr_srcset_resolve(ctx, set, out, why, len);

	if (err == -ENODATA) {
		dlog("%s; empty until its first fetch", why);
		return 0;
	}
	return err;
}

int feeds_srcsets(struct daemon *d, const struct wr_maps *m, struct weir_ruleset *rs)
{
	char dir[PATH_MAX], why[400] = "";
	struct wr_srcset_src src = { .dir = dir };
	int err;

	if (!wr_srcset_count(rs))
		return 0;
	src.geo_db = d->cfg.geo_db[0] ? d->cfg.geo_db : NULL;
	err = wr_feed_dir(dir, sizeof(dir));
	if (!err)
		err = sync_store(dir, &d->cfg);
	if (err) {
		pr_err("cannot write the feed store: %s", strerror(-err));
		return err;
	}
	err = wr_srcsets_load(m, rs, daemon_resolve, &src, why, sizeof(why));
	if (err) {
		pr_err("%s", why);
		return err;
	}
	if (d->feeds) {
		pthread_mutex_lock(&d->feeds->mu);
		snprintf(d->feeds->geo_db, sizeof(d->feeds->geo_db), "%s", d->cfg.geo_db);
		d->feeds->geo_mtime = mtime_of(d->cfg.geo_db);
		pthread_mutex_unlock(&d->feeds->mu);
	}
	return 0;
}

void feeds_srcsets_done(struct daemon *d, const struct wr_maps *m, const struct weir_ruleset *rs)
{
	__u32 i;

	wr_srcsets_release(m, rs);
	memcpy(d->cfg.rules->srcsets, rs->srcsets, sizeof(rs->srcsets));
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		d->cfg.rules->rules[i].srcset = rs->rules[i].srcset;
}

/*
 * fn over the pinned maps under the root lock, as every writer works: its
 * result, or -errno with why said when the lock or the maps are not had.
 */
static int under_lock(int (*fn)(const struct wr_maps *m, void *arg, char *why, size_t len),
		      void *arg, char *why, size_t len)
{
	struct wr_maps m;
	int lock = wr_lock(), ret;

	if (lock < 0) {
		snprintf(why, len, "cannot lock %s: %s", opts.root, strerror(-lock));
		return lock;
	}
	ret = wr_maps_open(&m);
	if (!ret) {
		ret = fn(&m, arg, why, len);
		wr_maps_close(&m);
	} else {
		snprintf(why, len, "cannot open the maps: %s", strerror(-ret));
	}
	wr_unlock(lock);
	return ret;
}

struct srcsets_arg {
	const char *dir, *geo;
};

static int srcsets_fn(const struct wr_maps *m, void *arg, char *why, size_t len)
{
	const struct srcsets_arg *a = arg;

	return wr_srcsets_refresh(m, a->dir, a->geo, why, len);
}

/* The live rules' source sets read anew: feed: sets, and geo ones too when geo is set. */
static void srcsets_round(struct wr_feeds *w, bool feeds, const char *geo)
{
	struct srcsets_arg a = { w->dir, geo };
	char why[400] = "";
	int n = under_lock(srcsets_fn, &a, why, sizeof(why));

	if (n < 0)
		dlog("source sets: %s", why[0] ? why : strerror(-n));
	else if (n)
		dlog("source sets: %d read anew after %s changed", n, feeds ? "a feed" : geo);
}

struct rebuild_arg {
	const char *dir;
	struct wr_feed_stats st;
};

static int rebuild_fn(const struct wr_maps *m, void *arg, char *why, size_t len)
{
	struct rebuild_arg *a = arg;

	return wr_feed_rebuild(m, a->dir, &a->st, why, len);
}

/* Fetch what is due; swap the maps when a list changed. */
static void feeds_round(struct wr_feeds *w)
{
	struct wr_feed_def *defs = calloc(WR_FEED_MAX, sizeof(*defs));
	long long now = time(NULL);
	bool changed = false;
	int n = 0, i;

	if (!defs || wr_feed_defs(w->dir, defs, WR_FEED_MAX, &n)) {
		free(defs);
		return;
	}
	/* Feeds that ended (a CrowdSec decision's) go, and the maps without them. */
	if (wr_feed_expire(w->dir, now) > 0) {
		dlog("feeds: ended feeds removed");
		changed = true;
	}
	for (i = 0; i < n; i++) {
		char why[400];
		int r;

		if (!wr_feed_due(w->dir, &defs[i], now))
			continue;
		r = wr_feed_fetch(w->dir, &defs[i], false, why, sizeof(why));
		if (r < 0) {
			dlog("feed %s: %s; the previous list stays", defs[i].name, why);
		} else if (r > 0) {
			struct wr_feed_state s;

			wr_feed_state_load(w->dir, defs[i].name, &s);
			dlog("feed %s: %llu prefixes fetched", defs[i].name,
			     (unsigned long long)s.entries);
			changed = true;
		}
		pthread_mutex_lock(&w->mu);
		r = w->stop;
		pthread_mutex_unlock(&w->mu);
		if (r)
			break;
	}
	free(defs);
	if (changed) {
		struct rebuild_arg a = { .dir = w->dir };
		char why[400] = "";
		int err = under_lock(rebuild_fn, &a, why, sizeof(why));

		if (err)
			dlog("feeds: %s", why[0] ? why : strerror(-err));
		else
			dlog("feeds: %llu IPv4 and %llu IPv6 prefixes in force", a.st.prefixes4,
			     a.st.prefixes6);
		/* Rules' feed: sets follow their feeds. */
		srcsets_round(w, true, NULL);
	}
	{
		char geo[PATH_MAX];
		long long was, now_m;

		pthread_mutex_lock(&w->mu);
		snprintf(geo, sizeof(geo), "%s", w->geo_db);
		was = w->geo_mtime;
		pthread_mutex_unlock(&w->mu);
		now_m = mtime_of(geo);
		/* A new geo database: the rules' country: and asn: sets read it again. */
		if (geo[0] && now_m && now_m != was) {
			pthread_mutex_lock(&w->mu);
			w->geo_mtime = now_m;
			pthread_mutex_unlock(&w->mu);
			srcsets_round(w, false, geo);
		}
	}
}

static void *feeds_thread(void *arg)
{
	struct wr_feeds *w = arg;

	for (;;) {
		struct timespec until;
		bool stop;

		feeds_round(w);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FEED_POLL_S;
		pthread_mutex_lock(&w->mu);
		while (!w->stop && !w->kick &&
		       pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT)
			;
		w->kick = false;
		stop = w->stop;
		pthread_mutex_unlock(&w->mu);
		if (stop)
			break;
	}
	return NULL;
}

int feeds_start(struct daemon *d)
{
	struct wr_feeds *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	err = wr_feed_dir(w->dir, sizeof(w->dir));
	if (err) {
		free(w);
		return err;
	}
	/* The rules' geo sets were read at the apply before: from this database, as it is. */
	snprintf(w->geo_db, sizeof(w->geo_db), "%s", d->cfg.geo_db);
	w->geo_mtime = mtime_of(w->geo_db);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	err = -pthread_create(&w->th, NULL, feeds_thread, w);
	if (err) {
		curl_global_cleanup();
		free(w);
		return err;
	}
	d->feeds = w;
	return 0;
}

void feeds_stop(struct daemon *d)
{
	struct wr_feeds *w = d->feeds;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	curl_global_cleanup();
	free(w);
	d->feeds = NULL;
}

/* Per feed: its entries, its last good fetch, whether its last try failed. */
void feeds_metrics(FILE *out)
{
	struct wr_feed_def *defs = calloc(WR_FEED_MAX, sizeof(*defs));
	struct wr_feed_state *st = calloc(WR_FEED_MAX, sizeof(*st));
	char dir[PATH_MAX];
	int n = 0, i;

	/* The families always, so a scrape shows what exists; a sample per feed. */
	if (!defs || !st || wr_feed_dir(dir, sizeof(dir)) || wr_feed_defs(dir, defs, WR_FEED_MAX, &n))
		n = 0;
	for (i = 0; i < n; i++)
		wr_feed_state_load(dir, defs[i].name, &st[i]);
	wr_metric_family(out, "weir_feed_entries", "gauge",
			 "Prefixes in a blocklist feed's list in force.");
	for (i = 0; i < n; i++)
		wr_metric_labeled(out, "weir_feed_entries", "feed", defs[i].name, st[i].entries);
	wr_metric_family(out, "weir_feed_fetched_timestamp_seconds", "gauge",
			 "When a feed's list in force was fetched (0: never).");
	for (i = 0; i < n; i++)
		wr_metric_labeled(out, "weir_feed_fetched_timestamp_seconds", "feed", defs[i].name,
				  st[i].fetched);
	wr_metric_family(out, "weir_feed_failing", "gauge",
			 "1 while a feed's last fetch failed (its previous list stays in force).");
	for (i = 0; i < n; i++)
		wr_metric_labeled(out, "weir_feed_failing", "feed", defs[i].name,
				  st[i].error[0] ? 1 : 0);
	free(defs);
	free(st);
}
