// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The daemon's events: the data path sends one when a bucket starts
 * refusing after a quiet spell; the daemon tracks those sources and logs
 * one line per limited source per interval, bounded (cfg.event_lines),
 * with the drops of the interval read from the buckets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "daemon/daemon_int.h"
#include "weir_limiter.h"


/*
 * An event counts its bucket's drops without the refusals other CPUs still
 * hold apart (wr_agg_drops, wr_src_drops), which may be left from an
 * earlier flood: start from the count read whole, as every later interval
 * is.
 */
static void drops_at_start(struct daemon *d, struct tracked *t)
{
	struct weir_ruleset *rs = NULL;
	struct weir_config cfg;
	struct weir_state st;
	bool found = false;
	__u64 waiting;
	int rule;

	if (t->key.family) {
		/* No rule set to read: a source's bucket is found by its key. */
		if (!wr_config_read(&d->maps, &cfg) &&
		    !wr_src_waiting_key(&d->maps, &t->key, &waiting) &&
		    !wr_state_find(d->maps.state, &cfg, &t->key, &st)) {
			st.drops += waiting;
			found = true;
		}
	} else {
		rs = wr_live_get(&d->maps);
		found = rs && events_bucket_now(d, rs, NULL, NULL, &t->key, &st, &rule);
	}
	if (found)
		t->drops_at_start = st.drops ? st.drops - 1 : 0;
	free(rs);
}

int events_on(void *ctx, void *data, size_t size)
{
	const struct weir_event *e = data;
	struct daemon *d = ctx;
	size_t i;

	if (size < sizeof(*e))
		return 0;
	for (i = 0; i < d->nr_tracked; i++)
		if (!memcmp(&d->tracked[i].key, &e->key, sizeof(e->key)))
			return 0;
	if (d->nr_tracked == EV_TRACK_MAX) {
		d->untracked++;
		return 0;
	}
	memset(&d->tracked[d->nr_tracked], 0, sizeof(d->tracked[0]));
	d->tracked[d->nr_tracked].key = e->key;
	d->tracked[d->nr_tracked].drops_at_start = e->drops ? e->drops - 1 : 0;
	drops_at_start(d, &d->tracked[d->nr_tracked]);
	d->nr_tracked++;
	return 0;
}

/* The bucket behind a tracked key now; false if it is gone. */
bool events_bucket_now(struct daemon *d, const struct weir_ruleset *rs,
		       const struct weir_config *cfg, const struct wr_src_waits *ws,
		       const struct weir_key *k, struct weir_state *st, int *rule)
{
	__u32 i;

	*rule = -1;
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (rs->rules[i].uid == k->uid)
			*rule = i;
	if (*rule < 0)
		return false;
	if (k->family == 0) {
		__u32 slot = rs->rules[*rule].limits[k->limit % WEIR_MAX_LIMITS].agg_slot;

		return !wr_agg_read(&d->maps, slot, st);
	}
	if (wr_state_find(d->maps.state, cfg, k, st))
		return false;
	st->drops += wr_src_waiting(ws, k);
	return true;
}

/*
 * A host as its address, a prefix as CIDR, a rule-wide bucket as "all
 * sources"; a destination or a flow says so ("destination 198.18.7.1",
 * "flow 198.18.0.1 port 40000").
 */
static void format_source(const struct weir_key *k, char *buf, size_t len)
{
	char a[80];

	if (!k->family) {
		snprintf(buf, len, "all sources");
		return;
	}
	wr_format_key(k, true, a, sizeof(a));
	if (k->kind == WEIR_KEY_DST)
		snprintf(buf, len, "destination %s", a);
	else if (k->kind == WEIR_KEY_FLOW)
		snprintf(buf, len, "flow %s", a);
	else
		snprintf(buf, len, "%s", a);
}

struct ev_line {
	__u64 dropped;
	char text[160];
};

static int cmp_lines(const void *a, const void *b)
{
	const struct ev_line *x = a, *y = b;

	return x->dropped < y->dropped ? 1 : x->dropped > y->dropped ? -1 : 0;
}

void events_flush(struct daemon *d)
{
	struct weir_ruleset *rs = NULL;
	struct weir_config scfg;	/* wr_state's hash seed and set count */
	struct wr_src_waits ws = {};
	struct ev_line *lines = NULL;
	size_t i, kept = 0, n = 0;
	__u64 more = d->untracked;

	if (!d->nr_tracked && !d->untracked) {
		__atomic_store_n(&d->limited, 0, __ATOMIC_RELAXED);
		return;
	}
	rs = wr_live_get(&d->maps);
	lines = calloc(d->nr_tracked + 1, sizeof(*lines));
	if (!rs || !lines || wr_config_read(&d->maps, &scfg) || wr_src_waits_read(&d->maps, &ws))
		goto out;
	for (i = 0; i < d->nr_tracked; i++) {
		struct tracked *t = &d->tracked[i];
		struct weir_state st;
		char src[96];
		__u64 dropped;
		int rule;

		if (!events_bucket_now(d, rs, &scfg, &ws, &t->key, &st, &rule))
			continue;	/* rule gone or bucket evicted: forget it */
		dropped = st.drops - t->drops_at_start;
		if (!dropped)
			continue;	/* no longer limited */
		format_source(&t->key, src, sizeof(src));
		lines[n].dropped = dropped;
		snprintf(lines[n].text, sizeof(lines[n].text),
			 "%s limited by rule %s: %llu dropped in %us", src, rs->names[rule],
			 (unsigned long long)dropped, d->cfg.event_interval_s);
		n++;
		/* Still limited: track on, counting from here. */
		t->drops_at_start = st.drops;
		d->tracked[kept++] = *t;
	}
	d->nr_tracked = kept;
	qsort(lines, n, sizeof(*lines), cmp_lines);
	for (i = 0; i < n; i++) {
		if (i < d->cfg.event_lines)
			dlog("%s", lines[i].text);
		else
			more++;
	}
	/* lines: 0 asks for no event lines at all, the summary included. */
	if (more && d->cfg.event_lines)
		dlog("... and %llu more sources limited in the last %us",
		     (unsigned long long)more, d->cfg.event_interval_s);
	__atomic_store_n(&d->limited, n + d->untracked, __ATOMIC_RELAXED);
out:
	d->untracked = 0;
	wr_src_waits_free(&ws);
	free(lines);
	free(rs);
}

/* The event flush timer, at the config's interval (again after a reload). */
void events_arm(struct daemon *d)
{
	struct itimerspec its = {};

	if (d->tick_fd < 0)
		return;
	its.it_value.tv_sec = d->cfg.event_interval_s ? d->cfg.event_interval_s : 10;
	its.it_interval = its.it_value;
	timerfd_settime(d->tick_fd, 0, &its, NULL);
}
