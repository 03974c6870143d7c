// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir list feed`: blocklist feeds from the command line, over
 * integrations/feedstore.c (the store the daemon's `lists:` shares) and
 * lib/feeds.c (the data path's feed maps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include "lib/libweir.h"
#include "cmd/cmd.h"
#include "integrations/feedstore.h"
#include "weir_limiter.h"

static void usage_feed(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir list feed add NAME url URL|file PATH [refresh DURATION] "
		"[action deny|allow|match|limit-class N]\n"
		"       weir list feed add NAME geo DB [country CC,...] [asn N,...] "
		"[refresh DURATION] [action deny|allow|match|limit-class N]\n"
		"       weir list feed del NAME\n"
		"       weir list feed show\n"
		"       weir list feed refresh [NAME] [force]\n"
		"       weir list feed test ADDRESS\n"
		"A feed is a list of prefixes fetched over HTTP(S) or read from a file: one\n"
		"address or CIDR a line, # and ; comments (plain lists, FireHOL netsets,\n"
		"Spamhaus DROP/EDROP as text or JSON lines). Each fetch is validated whole\n"
		"and swapped in at once; a failed fetch or a bad list keeps the previous one.\n"
		"action: deny (default) drops its sources; allow passes them past every limit;\n"
		"        limit-class N sheds them as class N (0 critical .. 3 shed first) instead\n"
		"        of their rule's class: served in calm, shed first under load.\n"
		"        match: neither; its sources are only what a rule's `src feed:NAME`\n"
		"        matches. The operator's own deny and allow lists come first.\n"
		"refresh: how often the daemon fetches it again (default 1h; 10s to 7d);\n"
		"         refresh here fetches now (force: without If-None-Match/If-Modified-Since).\n"
		"geo: the networks of the countries (ISO 3166-1 alpha-2) and ASNs in a MaxMind\n"
		"     DB file (GeoLite2, DB-IP), again whenever the file changes.\n"
		"test: what the live feeds say of ADDRESS, and which feeds list it.\n");
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_feed();
}

/* A feed's action: "limit-class 2" in text; in JSON that, and "class": 2 beside it. */
static void print_action(int action)
{
	print_str("action", " %s", wr_feed_action_name(action));
	if (wr_feed_class_name(action))
		print_u64("class", NULL, action >> WEIR_FA_CLASS_SHIFT);
}

/* Rebuild the data path's feed maps from the store, under the root lock. */
static int rebuild(const char *dir, bool load)
{
	struct wr_feed_stats st;
	struct wr_maps m;
	char err[400] = "";
	int lock, ret;

	lock = wr_write_begin(&m, load);
	if (lock < 0)
		return lock;
	ret = wr_feed_rebuild(&m, dir, &st, err, sizeof(err));
	/* Rules whose source set is a feed read its list anew (srcset.c). */
	if (!ret) {
		int r = wr_srcsets_refresh(&m, dir, NULL, err, sizeof(err));

		if (r < 0)
			ret = r;
	}
	wr_write_end(&m, lock);
	if (ret)
		pr_err("%s", err);
	else
		pr_debug("feeds: %llu IPv4 and %llu IPv6 prefixes live", st.prefixes4,
			 st.prefixes6);
	return ret;
}

static int cmd_add(int argc, char **argv, void *ctx)
{
	struct wr_feed_def d = { .action = WEIR_FA_DENY, .refresh_s = WR_FEED_REFRESH_DEF_S };
	struct wr_feed_def old;
	char dir[PATH_MAX], why[400];
	const char *geo = NULL, *countries = NULL, *asns = NULL;
	char act[32];	/* "limit-class N" of two words */
	bool have_src = false;
	int i, ret;

	(void)ctx;
	if (argc < 1) {
		usage_feed();
		return -EINVAL;
	}
	if (!wr_feed_name_ok(argv[0])) {
		pr_err("invalid feed name \"%s\": 1-31 of A-Z a-z 0-9 _ - ., not starting with . "
		       "or -", argv[0]);
		return -EINVAL;
	}
	snprintf(d.name, sizeof(d.name), "%s", argv[0]);
	for (i = 1; i < argc; i++) {
		const char *w = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			pr_err("%s needs a value", w);
			return -EINVAL;
		}
		i++;
		if (!strcmp(w, "geo") && !have_src) {
			geo = v;
			have_src = true;
		} else if (!strcmp(w, "country") && !countries) {
			countries = v;
		} else if (!strcmp(w, "asn") && !asns) {
			asns = v;
		} else if ((!strcmp(w, "url") || !strcmp(w, "file")) && !have_src) {
			if (wr_feed_source_set(&d, v, !strcmp(w, "url"), why, sizeof(why))) {
				pr_err("invalid %s: %s", w, why);
				return -EINVAL;
			}
			have_src = true;
		} else if (!strcmp(w, "refresh")) {
			uint64_t ns;

			if (wr_parse_duration_ns(v, &ns) || ns < WR_FEED_REFRESH_MIN_S * 1000000000ULL ||
			    ns > WR_FEED_REFRESH_MAX_S * 1000000000ULL || ns % 1000000000ULL) {
				pr_err("invalid refresh \"%s\": whole seconds from 10s to 7d (30m, 1h, "
				       "1d)", v);
				return -EINVAL;
			}
			d.refresh_s = ns / 1000000000ULL;
		} else if (!strcmp(w, "action")) {
			/* limit-class takes its class as the next word */
			if (!strcmp(v, "limit-class")) {
				if (i + 1 >= argc) {
					pr_err("action limit-class needs a class: 0 (critical) "
					       "to 3 (shed first)");
					return -EINVAL;
				}
				snprintf(act, sizeof(act), "limit-class %.8s", argv[++i]);
				v = act;
			}
			d.action = wr_feed_action_parse(v);
			if (d.action < 0) {
				pr_err("invalid action \"%s\": deny, allow, match or limit-class N, N 0 "
				       "(critical) to 3 (shed first)", v);
				return -EINVAL;
			}
		} else {
			pr_err("unexpected \"%s\" in feed add", w);
			usage_feed();
			return -EINVAL;
		}
	}
	if (!have_src) {
		pr_err("feed add %s needs a source: url URL, file PATH or geo DB", d.name);
		return -EINVAL;
	}
	if (!geo && (countries || asns)) {
		pr_err("country and asn go with geo DB");
		return -EINVAL;
	}
	if (geo && wr_feed_geo_set(&d, geo, countries, asns, why, sizeof(why))) {
		pr_err("invalid geo feed: %s", why);
		return -EINVAL;
	}
	ret = wr_feed_dir(dir, sizeof(dir));
	if (ret) {
		pr_err("cannot make the feed store: %s", strerror(-ret));
		return ret;
	}
	if (!wr_feed_def_load(dir, d.name, &old) && old.config) {
		pr_err("feed %s is the daemon config's: change it there", d.name);
		return -EPERM;
	}
	/* The first fetch must work: a feed is added with its list or not at all. */
	ret = wr_feed_fetch(dir, &d, true, why, sizeof(why));
	if (ret < 0) {
		pr_err("feed %s: %s; nothing added", d.name, why);
		return ret;
	}
	ret = wr_feed_def_save(dir, &d);
	if (ret) {
		pr_err("cannot store feed %s: %s", d.name, strerror(-ret));
		return ret;
	}
	ret = rebuild(dir, true);
	if (!ret) {
		struct wr_feed_state st;

		wr_feed_state_load(dir, d.name, &st);
		print_text("feed %s: %llu prefixes, action %s\n", d.name,
			   (unsigned long long)st.entries, wr_feed_action_name(d.action));
	}
	return ret;
}

/* A live rule whose source set is feed NAME: -EBUSY, said; else 0. */
static int feed_in_use(const char *name)
{
	struct weir_ruleset *rs;
	struct wr_maps m;
	char set[WEIR_SRCSET_LEN];
	__u32 i;
	int ret = 0;

	/* Nothing loaded: no rule names it. */
	if (!wr_is_loaded() || wr_maps_open(&m))
		return 0;
	rs = wr_live_get(&m);
	snprintf(set, sizeof(set), "feed:%s", name);
	for (i = 0; rs && i < rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		const struct weir_rule *r = &rs->rules[i];

		if ((r->match & WEIR_M_SRCSET) &&
		    !strcmp(rs->srcsets[r->srcset & WEIR_SRCSET_SLOT], set)) {
			pr_err("feed %s is rule %s's source set (src %s): delete the rule first",
			       name, rs->names[i], set);
			ret = -EBUSY;
			break;
		}
	}
	free(rs);
	wr_maps_close(&m);
	return ret;
}

static int cmd_del(int argc, char **argv, void *ctx)
{
	struct wr_feed_def d;
	char dir[PATH_MAX];
	int ret;

	(void)ctx;
	if (argc != 1) {
		usage_feed();
		return -EINVAL;
	}
	ret = wr_feed_dir(dir, sizeof(dir));
	if (ret)
		return ret;
	if (!wr_feed_name_ok(argv[0]) || wr_feed_def_load(dir, argv[0], &d)) {
		pr_err("no feed \"%s\"", argv[0]);
		return -ENOENT;
	}
	if (d.config) {
		pr_err("feed %s is the daemon config's: remove it there", d.name);
		return -EPERM;
	}
	ret = feed_in_use(d.name);
	if (ret)
		return ret;
	ret = wr_feed_remove(dir, d.name);
	if (ret) {
		pr_err("cannot remove feed %s: %s", d.name, strerror(-ret));
		return ret;
	}
	return rebuild(dir, false);
}

static int cmd_show(int argc, char **argv, void *ctx)
{
	struct wr_feed_def *defs;
	char dir[PATH_MAX];
	int n = 0, i, ret;

	(void)argv;
	(void)ctx;
	if (argc) {
		usage_feed();
		return -EINVAL;
	}
	ret = wr_feed_dir(dir, sizeof(dir));
	defs = calloc(WR_FEED_MAX, sizeof(*defs));
	if (!ret && !defs)
		ret = -ENOMEM;
	if (!ret)
		ret = wr_feed_defs(dir, defs, WR_FEED_MAX, &n);
	if (ret) {
		free(defs);
		pr_err("cannot read the feed store: %s", strerror(-ret));
		return ret;
	}
	out_begin();
	open_array("feeds");
	for (i = 0; i < n; i++) {
		struct wr_feed_state st;
		char ago[32];

		wr_feed_state_load(dir, defs[i].name, &st);
		open_object(NULL);
		print_str("name", "%s", defs[i].name);
		print_str(defs[i].url ? "url" : defs[i].geo ? "geo" : "file", " %s", defs[i].source);
		if (defs[i].geo && defs[i].countries[0])
			print_str("country", " country %s", defs[i].countries);
		if (defs[i].geo && defs[i].asns[0])
			print_str("asn", " asn %s", defs[i].asns);
		print_action(defs[i].action);
		print_u64("refresh_s", " refresh %llus", defs[i].refresh_s);
		print_str("origin", " (%s)", defs[i].config ? "config" : "cli");
		print_u64("entries", " %llu prefixes", st.entries);
		if (defs[i].expires) {
			long long left = defs[i].expires - time(NULL);

			wr_format_secs(left > 0 ? left : 0, ago, sizeof(ago));
			print_text(", ends in %s", ago);
		}
		print_u64("expires", NULL, defs[i].expires);
		if (st.fetched) {
			wr_format_secs(time(NULL) - st.fetched, ago, sizeof(ago));
			print_text(", fetched %s ago", ago);
		}
		print_u64("fetched", NULL, st.fetched);
		print_u64("checked", NULL, st.checked);
		if (st.etag[0])
			print_str("etag", NULL, st.etag);
		if (st.error[0])
			print_str("error", "; last try failed: %s", st.error);
		else
			print_null("error", NULL);
		close_object();
		print_text("\n");
	}
	close_array();
	out_end();
	free(defs);
	return 0;
}

static int cmd_refresh(int argc, char **argv, void *ctx)
{
	struct wr_feed_def *defs;
	char dir[PATH_MAX], why[400];
	const char *only = NULL;
	bool force = false, changed = false;
	int n = 0, i, ret, failed = 0, done = 0;

	(void)ctx;
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "force") && !force)
			force = true;
		else if (!only && wr_feed_name_ok(argv[i]))
			only = argv[i];
		else {
			pr_err("unexpected \"%s\" in feed refresh", argv[i]);
			return -EINVAL;
		}
	}
	ret = wr_feed_dir(dir, sizeof(dir));
	defs = calloc(WR_FEED_MAX, sizeof(*defs));
	if (!ret && !defs)
		ret = -ENOMEM;
	if (!ret)
		ret = wr_feed_defs(dir, defs, WR_FEED_MAX, &n);
	for (i = 0; !ret && i < n; i++) {
		int r;

		if (only && strcmp(only, defs[i].name))
			continue;
		done++;
		r = wr_feed_fetch(dir, &defs[i], force, why, sizeof(why));
		if (r < 0) {
			pr_err("feed %s: %s; the previous list stays", defs[i].name, why);
			failed++;
		} else {
			changed |= r > 0;
			print_text("feed %s: %s\n", defs[i].name, r ? "updated" : "not modified");
		}
	}
	free(defs);
	if (!ret && only && !done) {
		pr_err("no feed \"%s\"", only);
		return -ENOENT;
	}
	if (!ret && changed)
		ret = rebuild(dir, false);
	return ret ? ret : failed ? -EIO : 0;
}

/* Whether e's prefix holds address a (same family). */
static bool covers(const struct wr_feed_entry *e, const struct wr_cidr *a)
{
	unsigned int w;

	for (w = 0; w < 4; w++)
		if ((a->addr[w] & wr_prefix_word(e->plen, w)) != e->addr[w])
			return false;
	return true;
}

static int cmd_test(int argc, char **argv, void *ctx)
{
	struct wr_feed_def *defs;
	char dir[PATH_MAX];
	struct wr_cidr a;
	struct wr_maps m;
	int n = 0, i, live, ret;

	(void)ctx;
	if (argc != 1 || parse_cidr(argv[0], &a) ||
	    a.plen != (unsigned int)(a.family == 4 ? 32 : 128)) {
		pr_err("feed test needs one address");
		return -EINVAL;
	}
	ret = wr_maps_open(&m);
	if (ret)
		return ret;
	live = wr_feed_lookup(&m, &a);
	wr_maps_close(&m);
	if (live < 0) {
		pr_err("cannot read the feed maps: %s", strerror(-live));
		return live;
	}
	ret = wr_feed_dir(dir, sizeof(dir));
	defs = calloc(WR_FEED_MAX, sizeof(*defs));
	if (!ret && !defs)
		ret = -ENOMEM;
	if (!ret)
		ret = wr_feed_defs(dir, defs, WR_FEED_MAX, &n);
	if (ret) {
		free(defs);
		return ret;
	}
	out_begin();
	print_str("address", "%s", argv[0]);
	if (wr_feed_class_name(live)) {
		print_text(": class %d", live >> WEIR_FA_CLASS_SHIFT);
		print_str("verdict", NULL, "classed");
		print_u64("class", NULL, live >> WEIR_FA_CLASS_SHIFT);
	} else {
		print_str("verdict", ": %s", live == WEIR_FA_DENY ? "denied" :
					   live == WEIR_FA_ALLOW ? "allowed" : "not listed");
	}
	open_array("feeds");
	for (i = 0; i < n; i++) {
		struct wr_feed_set one = { 0 };
		char why[400];
		size_t j;

		if (!wr_feed_list_load(dir, &defs[i], &one, why, sizeof(why))) {
			for (j = 0; j < one.n; j++) {
				struct wr_feed_entry *e = &one.v[j];
				struct wr_cidr c = { .family = e->family, .plen = e->plen };
				char s[64];

				if (e->family != a.family || !covers(e, &a))
					continue;
				format_cidr(c.family, e->addr, c.plen, s, sizeof(s));
				open_object(NULL);
				print_str("feed", "\n  %s", defs[i].name);
				print_str("prefix", " %s", s);
				print_action(e->action);
				close_object();
			}
		}
		wr_feed_set_free(&one);
	}
	close_array();
	print_text("\n");
	out_end();
	free(defs);
	return 0;
}

static const struct wr_cmd feed_cmds[] = {
	{ "add", cmd_add },
	{ "delete", cmd_del },
	{ "show", cmd_show },
	{ "list", cmd_show },
	{ "refresh", cmd_refresh },
	{ "test", cmd_test },
};

static int do_feed(int argc, char **argv)
{
	int ret;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	ret = wr_cmd_select(feed_cmds, ARRAY_SIZE(feed_cmds), "list feed", argc, argv, NULL,
			    usage_ctx);
	curl_global_cleanup();
	return ret;
}

int do_list(int argc, char **argv)
{
	if (argc >= 1 && (!strcmp(argv[0], "feed") || !strcmp(argv[0], "feeds")))
		return do_feed(argc - 1, argv + 1);
	if (argc >= 1 && strcmp(argv[0], "help") && strcmp(argv[0], "-h") &&
	    strcmp(argv[0], "--help")) {
		pr_err("unknown list kind \"%s\"", argv[0]);
		usage_feed();
		return -EINVAL;
	}
	usage_feed();
	return argc ? 0 : -EINVAL;
}
