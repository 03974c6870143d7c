// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading what the data path counted: `stats` and `top`. Everything shown
 * comes from one snapshot read against one clock reading, so numbers do
 * not wobble between lines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"
#include "lib/snapshot.h"
#include "cmd/cmd.h"

/* Per second between two snapshots; 0 without an earlier one. */
static double rate(__u64 now, __u64 before, double secs)
{
	return secs > 0 && now >= before ? (now - before) / secs : 0;
}

/* a's counters of b's attachment f, or NULL (matched by ifindex). */
static const struct wr_snap_if *if_in(const struct wr_snapshot *a, const struct wr_snap_if *f)
{
	int i;

	for (i = 0; a && i < a->nr_ifs; i++)
		if (a->ifs[i].ifindex == f->ifindex)
			return &a->ifs[i];
	return NULL;
}

/* Each attachment's verdicts: frames and their bytes as its hook saw them. */
static void print_ifs(const struct wr_snapshot *a, const struct wr_snapshot *b, double secs)
{
	int i;

	open_array("interfaces");
	if (b->nr_ifs)
		print_text("%-20s %12s %14s %12s %14s\n", "interface", "passed", "bytes",
			   "dropped", "bytes");
	for (i = 0; i < b->nr_ifs; i++) {
		const struct wr_snap_if *f = &b->ifs[i], *p = if_in(a, f);

		open_object(NULL);
		print_str("name", "%-20s", f->name);
		print_u64("ifindex", NULL, f->ifindex);
		print_bool("counted", NULL, f->counted);
		print_u64("passed_packets", " %12llu", f->st.passed_pkts);
		print_u64("passed_bytes", " %14llu", f->st.passed_bytes);
		print_u64("dropped_packets", " %12llu", f->st.dropped_pkts);
		print_u64("dropped_bytes", " %14llu", f->st.dropped_bytes);
		print_text("%s\n", f->counted ? "" : "  (no counter slot)");
		if (p) {
			print_text("%-20s", "  per second");
			print_double("passed_packets_per_sec", " %12.1f",
				     rate(f->st.passed_pkts, p->st.passed_pkts, secs));
			print_double("passed_bytes_per_sec", " %14.1f",
				     rate(f->st.passed_bytes, p->st.passed_bytes, secs));
			print_double("dropped_packets_per_sec", " %12.1f",
				     rate(f->st.dropped_pkts, p->st.dropped_pkts, secs));
			print_double("dropped_bytes_per_sec", " %14.1f\n",
				     rate(f->st.dropped_bytes, p->st.dropped_bytes, secs));
		}
		close_object();
	}
	close_array();
}

/* b's counters, with rates since a if there is an a (rules matched by uid). */
static void print_stats(const struct wr_snapshot *a, const struct wr_snapshot *b)
{
	const struct weir_ruleset *rs = &b->rs;
	double secs = a ? (b->at - a->at) / 1e9 : 0;
	struct wr_auto_rules au = { 0 };
	__u32 i;

	out_begin();
	if (a)
		print_double("interval_s", "rates over %.1f s\n", secs);
	open_object("global");
	print_text("global:%*s%14s\n", 21, "", a ? "per second" : "");
	for (i = 0; i < WEIR_G_MAX; i++) {
		char fmt[48], key[48];

		snprintf(fmt, sizeof(fmt), "  %-20s %%14llu", wr_global_names[i]);
		print_u64(wr_global_names[i], fmt, b->global[i]);
		if (a) {
			snprintf(key, sizeof(key), "%s_per_sec", wr_global_names[i]);
			print_double(key, " %14.1f", rate(b->global[i], a->global[i], secs));
		}
		print_text("\n");
	}
	close_object();
	open_array("rules");
	print_text("%-20s %12s %14s %12s %14s %12s %14s\n", "rule", "passed", "bytes", "dropped",
		   "bytes", "would-drop", "bytes");
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		int j = a ? wr_snapshot_rule_in(a, b, i) : -1;
		const struct weir_rule_stats *s = &b->rule[i], *p = j >= 0 ? &a->rule[j] : NULL;

		open_object(NULL);
		print_str("name", "%-20s", rs->names[i]);
		print_u64("passed_packets", " %12llu", s->passed_pkts);
		print_u64("passed_bytes", " %14llu", s->passed_bytes);
		print_u64("dropped_packets", " %12llu", s->dropped_pkts);
		print_u64("dropped_bytes", " %14llu", s->dropped_bytes);
		print_u64("would_drop_packets", " %12llu", s->wdrop_pkts);
		print_u64("would_drop_bytes", " %14llu\n", s->wdrop_bytes);
		if (p) {
			print_text("%-20s", "  per second");
			print_double("passed_packets_per_sec", " %12.1f",
				     rate(s->passed_pkts, p->passed_pkts, secs));
			print_double("passed_bytes_per_sec", " %14.1f",
				     rate(s->passed_bytes, p->passed_bytes, secs));
			print_double("dropped_packets_per_sec", " %12.1f",
				     rate(s->dropped_pkts, p->dropped_pkts, secs));
			print_double("dropped_bytes_per_sec", " %14.1f",
				     rate(s->dropped_bytes, p->dropped_bytes, secs));
			print_double("would_drop_packets_per_sec", " %12.1f",
				     rate(s->wdrop_pkts, p->wdrop_pkts, secs));
			print_double("would_drop_bytes_per_sec", " %14.1f\n",
				     rate(s->wdrop_bytes, p->wdrop_bytes, secs));
		}
		if (wr_rule_name_auto(rs->names[i]))
			wr_auto_rule_info(rs->names[i], &au);
		close_object();
	}
	close_array();
	wr_auto_rule_done(&au);
	print_ifs(a, b, secs);
	if (b->cfg.verified_ttl_ns)
		print_u64("verified_sources", "verified sources %llu\n", b->verified);
	if (b->parts & WR_SNAP_KEYS) {
		open_object("keys");
		print_u64("used", NULL, b->keys);
		print_u64("capacity", NULL, b->capacity);
		close_object();
	}
	out_end();
}

/* ---- live views ---- */

static volatile sig_atomic_t live_stop;

static void on_live_signal(int sig)
{
	(void)sig;
	live_stop = 1;
}

/* Ctrl-C (or SIGTERM) ends a live view between frames. */
static void live_setup(void)
{
	struct sigaction sa = { .sa_handler = on_live_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Sleep one interval; false once a signal asked to stop. */
static bool live_sleep(double interval)
{
	struct timespec ts = { (time_t)interval, (long)((interval - (time_t)interval) * 1e9) };

	fflush(stdout);
	while (!live_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
	return !live_stop;
}

/*
 * In text mode each frame of a live view starts on a cleared screen, like
 * top(1), when stdout is a terminal; into a pipe or file the frames follow
 * one another after a blank line, with no control codes. In JSON mode each
 * frame is one line (JSON Lines).
 */
static void live_frame(void)
{
	static bool first = true;

	if (opts.json)
		return;
	if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	else if (!first)
		fputs("\n", stdout);
	first = false;
}

/* Parse "interval SECS" / "live [SECS]" style numbers: 0.1 .. 3600 s. */
static int parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 3600))
		return -EINVAL;
	*out = v;
	return 0;
}

/* A snapshot, its failure said; with keys, the buckets counted too. */
static int snapshot(const struct wr_maps *m, struct wr_snapshot *s, bool keys)
{
	int err = wr_snapshot_read(m, s, keys ? WR_SNAP_KEYS : 0);

	if (err)
		pr_err("cannot read counters: %s", strerror(-err));
	return err;
}

int do_stats(int argc, char **argv)
{
	struct wr_snapshot *a = NULL, *b = NULL;
	double interval = 1;
	bool live = false, totals_only = false;
	struct wr_maps m;
	int err, i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "live")) {
			live = true;
			if (i + 1 < argc && !parse_secs(argv[i + 1], &interval))
				i++;
		} else if (!strcmp(argv[i], "interval") && i + 1 < argc) {
			if (!strcmp(argv[i + 1], "0")) {
				totals_only = true;
			} else if (parse_secs(argv[i + 1], &interval)) {
				pr_err("invalid interval \"%s\" (0, or 0.1 to 3600 seconds)",
				       argv[i + 1]);
				return -EINVAL;
			}
			i++;
		} else {
			if (strcmp(argv[i], "help"))
				pr_err("unknown stats argument \"%s\"", argv[i]);
			fprintf(wr_usage_out(),
				"Usage: weir stats [interval SECS] [live [SECS]]\n"
				"  global counters and per-rule passed/dropped/would-drop packets and\n"
				"  bytes, with rates per second measured over SECS (default 1;\n"
				"  interval 0: totals at once, no rates). live: refresh until Ctrl-C.\n");
			return strcmp(argv[i], "help") ? -EINVAL : 0;
		}
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	if (!a || !b) {
		err = -ENOMEM;
		goto out;
	}
	/* Buckets are counted only for JSON, the one place they are shown. */
	err = snapshot(&m, a, totals_only && opts.json);
	if (err)
		goto out;
	if (totals_only) {
		print_stats(NULL, a);
		goto out;
	}
	live_setup();
	while (live_sleep(interval)) {
		struct wr_snapshot *t;

		err = snapshot(&m, b, opts.json);
		if (err)
			break;
		if (live)
			live_frame();
		print_stats(a, b);
		if (!live)
			break;
		t = a;
		a = b;
		b = t;
	}
out:
	free(a);
	free(b);
	wr_maps_close(&m);
	return err;
}

/* ---- top ---- */

/* A source counts as "being limited now" if it was refused this recently. */
#define TOP_WINDOW_NS (10ULL * 1000000000ULL)

struct top_row {
	struct weir_key key;
	struct weir_state st;
	int rule;	/* index in the live set */
};

/*
 * Refused within the window before now. A drop stamped after our clock
 * reading (the data path kept running) is as recent as it gets.
 */
static bool limited_recently(const struct weir_state *st, __u64 now)
{
	return st->last_drop + TOP_WINDOW_NS >= now;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return x->st.drops < y->st.drops ? 1 : x->st.drops > y->st.drops ? -1 : 0;
}

struct top_rows {
	struct top_row *v;
	size_t n, cap;
};

static int push_row(struct top_rows *rows, const struct top_row *row)
{
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 256;
		struct top_row *v = realloc(rows->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rows->v = v;
		rows->cap = cap;
	}
	rows->v[rows->n++] = *row;
	return 0;
}

static int rule_by_uid(const struct weir_ruleset *rs, __u32 uid)
{
	__u32 i;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (rs->rules[i].uid == uid)
			return i;
	return -1;
}

static void print_row(const struct weir_ruleset *rs, const struct top_row *row, __u64 now,
		      __u64 win_off)
{
	const struct weir_rule *r = &rs->rules[row->rule];
	const struct weir_limit *l = &r->limits[row->key.limit % WEIR_MAX_LIMITS];
	__u64 refill = 0, left;
	char src[80], cell[96], what[64];
	bool dst = row->key.family && row->key.kind == WEIR_KEY_DST;

	wr_format_key(&row->key, false, src, sizeof(src));
	/* A destination or flow bucket says so: never read as a source. */
	if (row->key.family && row->key.kind != WEIR_KEY_SRC)
		snprintf(cell, sizeof(cell), "%s %s", wr_key_kind_name(row->key.kind), src);
	else
		snprintf(cell, sizeof(cell), "%s", src);
	left = wr_limit_remaining(l, row->st.tat, row->st.aux, now, win_off, &refill);
	/* The limit by what it says ("src/24 100pps"), not by its index. */
	{
		char rate[40];

		format_rate_per(l->rate, l->cost, l->period_ms, rate, sizeof(rate));
		if (l->key == WEIR_KEY_ALL || l->key == WEIR_KEY_FLOW)
			snprintf(what, sizeof(what), "%s %s", wr_key_kind_name(l->key), rate);
		else if (row->key.family == 6)
			snprintf(what, sizeof(what), "%s6/%u %s", wr_key_kind_name(l->key),
				 l->plen6, rate);
		else
			snprintf(what, sizeof(what), "%s/%u %s", wr_key_kind_name(l->key),
				 l->plen4, rate);
	}
	open_object(NULL);
	print_text("%-44s", cell);
	/* JSON: the address under what it is, and the key's kind. */
	print_str(dst ? "destination" : "source", NULL, src);
	print_str("key", NULL, row->key.family ? wr_key_kind_name(row->key.kind) : "all");
	print_str("rule", " %-16s", rs->names[row->rule]);
	print_str("limit", " %-22s", what);
	print_u64("limit_index", NULL, row->key.limit);
	print_u64("drops", " %12llu", row->st.drops);
	print_u64("tokens", " %10llu", left);
	print_str("unit", NULL, l->cost == WEIR_COST_PKT ? "packets" : "bytes");
	print_str("algo", NULL, wr_algo(l->algo)->name);
	print_double("refill_ms", " %10.1f", refill / 1e6);
	print_double("last_drop_s_ago", " %8.1f\n",
		     now > row->st.last_drop ? (now - row->st.last_drop) / 1e9 : 0.0);
	close_object();
}

/* Sources at their connection cap: a new SYN from them is refused now. */
static void print_connections(const struct wr_maps *m, const struct weir_ruleset *rs,
			      int only_idx, uint64_t limit)
{
	struct weir_key k, next;
	void *prev = NULL;
	uint64_t shown = 0;

	open_array("connections");
	while (!bpf_map_get_next_key(m->conns, prev, &next)) {
		const struct weir_limit *l;
		struct weir_conns c;
		char src[64];
		int rule;

		k = next;
		prev = &k;
		rule = rule_by_uid(rs, k.uid);
		if (rule < 0 || (only_idx >= 0 && rule != only_idx) ||
		    bpf_map_lookup_elem(m->conns, &k, &c))
			continue;
		l = &rs->rules[rule].limits[k.limit % WEIR_MAX_LIMITS];
		if (l->algo != WEIR_ALGO_CONNS || c.count < l->rate || shown++ >= limit)
			continue;
		if (shown == 1)
			print_text("\n%-44s %-16s %12s\n", "at the connection cap", "rule",
				   "connections");
		format_cidr(k.family, k.addr, k.plen, src, sizeof(src));
		open_object(NULL);
		print_str("source", "%-44s", src);
		print_str("rule", " %-16s", rs->names[rule]);
		print_u64("connections", " %8llu", c.count);
		print_u64("cap", "/%llu\n", l->rate);
		close_object();
	}
	close_array();
}

/* What top's walk over wr_state collects, and against what. */
struct top_walk {
	struct top_rows *rows;
	const struct weir_ruleset *rs;
	const struct wr_src_waits *ws;	/* refusals still waiting per CPU */
	int only_idx;
	__u64 now;
};

/* One per-source bucket: a row if it was refused recently, under a rule shown. */
static int top_way(const struct weir_way *w, void *ctx)
{
	struct top_walk *tw = ctx;
	struct top_row row = { .key = w->key, .st = w->st };

	row.st.drops += wr_src_waiting(tw->ws, &row.key);
	if (!row.st.drops || !limited_recently(&row.st, tw->now))
		return 0;
	row.rule = rule_by_uid(tw->rs, row.key.uid);
	if (row.rule < 0 || (tw->only_idx >= 0 && row.rule != tw->only_idx))
		return 0;
	return push_row(tw->rows, &row);
}

/* SYN cookies and verified sources, while a rule answers cookies or spares them. */
static void print_cookies(const struct wr_maps *m)
{
	struct wr_snapshot *s = calloc(1, sizeof(*s));

	if (!s || wr_snapshot_read(m, s, 0) || !s->cfg.verified_ttl_ns) {
		free(s);
		return;
	}
	open_object("cookies");
	print_u64("sent", "cookies: sent %llu", s->global[WEIR_G_COOKIE_SENT]);
	print_u64("validated", ", validated %llu", s->global[WEIR_G_COOKIE_VALID]);
	print_u64("invalid", ", invalid %llu", s->global[WEIR_G_COOKIE_INVALID]);
	print_u64("over_budget", ", over budget %llu", s->global[WEIR_G_COOKIE_BUDGET]);
	print_u64("verified_sources", "; verified sources %llu\n", s->verified);
	close_object();
	free(s);
}

struct ban_rows {
	const struct weir_ruleset *rs;
	__u64 now, limit, n;
	bool print;		/* else only counted */
};

static int ban_row(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct ban_rows *b = ctx;
	const char *rule;
	char cidr[64], left[32];

	if (!(v->flags & WEIR_LV_BAN) || wr_list_expired(v, b->now) || !v->expires_ns)
		return 0;
	if (b->n++ >= b->limit || !b->print)
		return 0;
	rule = wr_rule_name_by_slot(b->rs, v->ban_slot);
	format_cidr(c->family, c->addr, c->plen, cidr, sizeof(cidr));
	wr_format_secs((v->expires_ns - b->now + 999999999ULL) / 1000000000ULL, left, sizeof(left));
	open_object(NULL);
	print_str("cidr", "%-44s", cidr);
	print_str("rule", " %-16s", rule ? rule : "?");
	print_u64("ban_count", " ban %-4llu", v->ban_nth);
	print_u64("ttl", NULL, (v->expires_ns - b->now + 999999999ULL) / 1000000000ULL);
	print_text(" %s left\n", left);
	close_object();
	return 0;
}

/* The penalty box's bans in force: which rule, how many times, how long left. */
/* The rules of weir auto: what they dropped, and what auto says of them (wr_auto_rule_info). */
static void print_auto(const struct wr_maps *m, const struct weir_ruleset *rs)
{
	struct wr_auto_rules au = { 0 };
	struct wr_snapshot *s = NULL;
	__u32 i, n = 0;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		n += wr_rule_name_auto(rs->names[i]);
	open_array("auto");
	if (!n)
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s || wr_snapshot_read(m, s, 0))
		goto out;
	print_text("rules of weir auto:\n");
	for (i = 0; i < s->rs.nr_rules && i < WEIR_MAX_RULES; i++) {
		if (!wr_rule_name_auto(s->rs.names[i]))
			continue;
		open_object(NULL);
		print_str("rule", "  %-20s", s->rs.names[i]);
		print_u64("dropped_packets", " %llu packets dropped\n", s->rule[i].dropped_pkts);
		wr_auto_rule_info(s->rs.names[i], &au);
		close_object();
	}
out:
	close_array();
	wr_auto_rule_done(&au);
	free(s);
}

static void print_bans(const struct wr_maps *m, const struct weir_ruleset *rs, uint64_t limit)
{
	struct ban_rows b = { .rs = rs, .now = wr_mono_ns(), .limit = limit };
	__u64 n;
	int fam;

	for (fam = 4; fam <= 6; fam += 2)
		wr_list_walk(m, true, fam, ban_row, &b);
	n = b.n;
	if (n)
		print_text("%llu sources in the penalty box%s:\n", (unsigned long long)n,
			   n > limit ? " (the first shown)" : "");
	b.n = 0;
	b.print = true;
	open_array("banned");
	for (fam = 4; fam <= 6; fam += 2)
		wr_list_walk(m, true, fam, ban_row, &b);
	close_array();
}

/* One table of the sources limited in the last TOP_WINDOW_NS. */
static int top_once(const struct wr_maps *m, const struct weir_ruleset *rs, int only_idx,
		    uint64_t limit)
{
	struct top_rows rows = {};
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	struct wr_src_waits ws = {};
	struct top_walk tw = { .rows = &rows, .rs = rs, .only_idx = only_idx, .ws = &ws };
	struct weir_config cfg = {};
	size_t i;
	int err = 0, a;
	__u64 now;

	/* Fleet windows' clock offset; none (0) if the config cannot be read. */
	wr_config_read(m, &cfg);
	/* One clock reading for the whole table. */
	now = wr_mono_ns();
	tw.now = now;
	bpf_obj_get_info_by_fd(m->state, &info, &ilen);
	err = wr_src_waits_read(m, &ws);
	if (err) {
		pr_err("cannot read wr_src_drops: %s", strerror(-err));
		goto out;
	}
	err = wr_state_walk(m->state, top_way, &tw);
	if (err) {
		if (err != -ENOMEM)
			pr_err("cannot read the per-source buckets: %s", strerror(-err));
		goto out;
	}
	/* Rule-wide buckets are offenders too: the whole rule is limited. */
	for (a = 0; a < (int)rs->nr_rules; a++) {
		const struct weir_rule *r = &rs->rules[a];
		__u32 j, slot;

		if (only_idx >= 0 && a != only_idx)
			continue;
		for (j = 0; j < r->nr_limits && j < WEIR_MAX_LIMITS; j++) {
			struct top_row row = { .rule = a };

			if (r->limits[j].key != WEIR_KEY_ALL)
				continue;
			slot = r->limits[j].agg_slot;
			if (wr_agg_read(m, slot, &row.st) || !row.st.drops ||
			    !limited_recently(&row.st, now))
				continue;
			row.key.uid = r->uid;
			row.key.limit = j;
			err = push_row(&rows, &row);
			if (err)
				goto out;
		}
	}
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), cmp_rows);
	out_begin();
	print_u64("limited", "%llu sources limited in the last 10 s", rows.n);
	open_object("keys");
	print_u64("capacity", " (buckets: capacity %llu)\n", (__u64)info.max_entries * WEIR_WAYS);
	close_object();
	open_array("sources");
	if (rows.n)
		print_text("%-44s %-16s %-22s %12s %10s %10s %8s\n", "source", "rule", "limit",
			   "drops", "tokens", "refill ms", "last s");
	for (i = 0; i < rows.n && i < limit; i++)
		print_row(rs, &rows.v[i], now, cfg.fleet_win_off);
	close_array();
	print_connections(m, rs, only_idx, limit);
	print_bans(m, rs, limit);
	print_auto(m, rs);
	print_cookies(m);
	out_end();
out:
	wr_src_waits_free(&ws);
	free(rows.v);
	return err;
}

int do_top(int argc, char **argv)
{
	struct weir_ruleset *rs = NULL;
	const char *only = NULL;
	double interval = 1;
	uint64_t limit = 10;
	bool live = false;
	int only_idx = -1, err, a;
	struct wr_maps m;

	for (a = 0; a < argc; a++) {
		if (!strcmp(argv[a], "rule") && a + 1 < argc) {
			only = argv[++a];
		} else if (!strcmp(argv[a], "live")) {
			live = true;
			if (a + 1 < argc && !parse_secs(argv[a + 1], &interval))
				a++;
		} else if (!strcmp(argv[a], "help")) {
			fprintf(wr_usage_out(), "Usage: weir top [N] [rule NAME] [live [SECS]]\n"
					"  the N (default 10) sources refused most that were "
					"refused in the last 10 s;\n"
					"  live: refresh every SECS (default 1) until Ctrl-C\n");
			return 0;
		} else if (parse_u64(argv[a], 1, 1000000, &limit)) {
			pr_err("invalid count \"%s\"", argv[a]);
			return -EINVAL;
		}
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	rs = wr_live_get(&m);
	if (!rs) {
		err = -ENOENT;
		goto out;
	}
	if (live)
		live_setup();
	for (;;) {
		if (only) {
			for (only_idx = -1, a = 0; a < (int)rs->nr_rules; a++)
				if (!strncmp(rs->names[a], only, WEIR_NAME_LEN))
					only_idx = a;
			if (only_idx < 0) {
				pr_err("unknown rule \"%s\"", only);
				err = -ENOENT;
				goto out;
			}
		}
		if (live)
			live_frame();
		err = top_once(&m, rs, only_idx, limit);
		if (err || !live || !live_sleep(interval))
			break;
		/* The rule set may have changed meanwhile. */
		free(rs);
		rs = wr_live_get(&m);
		if (!rs) {
			err = -ENOENT;
			break;
		}
	}
out:
	free(rs);
	wr_maps_close(&m);
	return err;
}
