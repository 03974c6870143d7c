// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The penalty box (`ban DUR [after N] [max DUR]` on a limit): once a
 * second, each source the data path said started being limited (the
 * events' tracked keys, events.c) whose limit has a ban is counted: the
 * refusals of its bucket within the limit's period (a second at least).
 * At `after` it goes on the deny list with a ttl of DUR, doubled for each
 * ban of the same prefix within WR_BAN_MEMORY_NS, up to max: the data path
 * then drops it before any rule, and the entry expires by itself.
 *
 * Never banned, only limited: a source on the operator's allow list or
 * an allow feed; a verified source (a completed handshake, wr_verified);
 * and a prefix from which several TCP connections to this host are
 * established (a NAT gateway with many users behind one address is not cut
 * off by one of them). Each of those is said once per limiting spell.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <bpf/bpf.h>
#include "daemon/daemon_int.h"
#include "lib/tcpdiag.h"
#include "weir_limiter.h"

/* Bans of one prefix within this long of each other double. */
#define WR_BAN_MEMORY_NS	(86400ULL * 1000000000ULL)
/* Live connections from a prefix from which it is limited, not banned. */
#define WR_BAN_CONNS_SPARE	2
/* How long a handshake keeps a source verified when weir_config does not say. */
#define WR_BAN_VERIFIED_NS	(600ULL * 1000000000ULL)

/* The prefix a key stands for. */
static void key_cidr(const struct weir_key *k, struct wr_cidr *c)
{
	unsigned int w;

	memset(c, 0, sizeof(*c));
	c->family = k->family;
	c->plen = k->plen;
	for (w = 0; w < 4; w++)
		c->addr[w] = k->addr[w] & (k->family == 4 ? (w ? 0 : wr_prefix_word(k->plen, 0))
							  : wr_prefix_word(k->plen, w));
}

static bool covers(const struct wr_cidr *c, int family, const __u32 *addr)
{
	unsigned int w;

	if (c->family != family)
		return false;
	for (w = 0; w < (family == 4 ? 1u : 4u); w++)
		if ((addr[w] & wr_prefix_word(c->plen, w)) != c->addr[w])
			return false;
	return true;
}

struct conn_count {
	const struct wr_cidr *c;
	unsigned int n;
};

static int conn_cb(const struct inet_diag_msg *m, void *arg)
{
	struct conn_count *cc = arg;
	__u32 a[4];
	int fam = wr_tcp_peer(m, a);

	if (fam)
		cc->n += covers(cc->c, fam, a);
	return 0;
}

/* Why c must not be banned ("" if it may be), counted. */
static const char *spared(struct daemon *d, const struct wr_cidr *c)
{
	struct weir_config cfg;
	struct conn_count cc = { .c = c };
	__u64 at;

	if (wr_list_covers(&d->maps, false, c) > 0 || wr_feed_lookup(&d->maps, c) == WEIR_FA_ALLOW) {
		__atomic_add_fetch(&d->ban_spared_allow, 1, __ATOMIC_RELAXED);
		return "it is on the allow list";
	}
	if (c->plen == (c->family == 4 ? 32u : 128u) && d->maps.verified >= 0 &&
	    !wr_config_read(&d->maps, &cfg)) {
		struct weir_verified_key vk = { .family = c->family };
		__u64 ttl = cfg.verified_ttl_ns ? cfg.verified_ttl_ns : WR_BAN_VERIFIED_NS;

		memcpy(vk.addr, c->addr, sizeof(vk.addr));
		if (!bpf_map_lookup_elem(d->maps.verified, &vk, &at) && wr_mono_ns() - at < ttl) {
			__atomic_add_fetch(&d->ban_spared_verified, 1, __ATOMIC_RELAXED);
			return "it is verified (a completed handshake)";
		}
	}
	wr_tcp_dump(1u << TCP_ESTABLISHED, conn_cb, &cc);
	if (cc.n >= WR_BAN_CONNS_SPARE) {
		__atomic_add_fetch(&d->ban_spared_conns, 1, __ATOMIC_RELAXED);
		return "it holds live connections";
	}
	return "";
}

/* The ttl of this ban of c: DUR doubled per recent ban, up to max; the history updated. */
static __u64 ban_ttl(struct daemon *d, const struct wr_cidr *c, const struct weir_ban *b,
		     __u32 *nth)
{
	struct ban_hist *h = NULL, *oldest = NULL;
	__u64 now = wr_mono_ns(), ttl;
	size_t i;

	if (!d->ban_hist)
		d->ban_hist = calloc(WR_BAN_HIST_MAX, sizeof(*d->ban_hist));
	for (i = 0; d->ban_hist && i < WR_BAN_HIST_MAX; i++) {
		struct ban_hist *e = &d->ban_hist[i];

		if (e->count && !memcmp(&e->c, c, sizeof(*c))) {
			h = e;
			break;
		}
		if (!oldest || !e->count || (oldest->count && e->last_ns < oldest->last_ns))
			oldest = e;
	}
	if (!h && oldest) {
		h = oldest;
		memset(h, 0, sizeof(*h));
		h->c = *c;
	}
	if (h && h->count && now - h->last_ns > WR_BAN_MEMORY_NS)
		h->count = 0;
	*nth = h ? ++h->count : 1;
	if (h)
		h->last_ns = now;
	ttl = b->ban_s;
	for (i = 1; i < *nth && ttl < b->max_s; i++)
		ttl *= 2;
	if (ttl > b->max_s)
		ttl = b->max_s;
	return ttl * 1000000000ULL;
}

static void ban(struct daemon *d, struct tracked *t, const struct weir_ban *b, const char *rule,
		__u16 slot, __u64 refused, __u32 window_s)
{
	char src[64], dur[32];
	struct wr_cidr c;
	const char *why;
	__u32 nth;
	__u64 ttl;
	bool kept;
	int lock, err;

	key_cidr(&t->key, &c);
	/* A host as its address, a prefix as a CIDR, as the event lines say them. */
	wr_format_key(&t->key, true, src, sizeof(src));
	t->ban_done = true;
	why = spared(d, &c);
	if (*why) {
		dlog("%s limited by rule %s, not banned: %s", src, rule, why);
		return;
	}
	ttl = ban_ttl(d, &c, b, &nth);
	lock = wr_lock();
	if (lock < 0) {
		dlog("cannot ban %s: cannot lock %s: %s", src, opts.root, strerror(-lock));
		return;
	}
	err = wr_list_ban(&d->maps, &c, ttl, &kept, slot, nth);
	wr_unlock(lock);
	wr_format_secs(ttl / 1000000000ULL, dur, sizeof(dur));
	if (err) {
		dlog("cannot ban %s: %s", src, err == -ENOSPC ? "the deny list is full" :
						    strerror(-err));
		return;
	}
	__atomic_add_fetch(&d->bans, 1, __ATOMIC_RELAXED);
	if (kept)
		dlog("%s refused %llu times within %us by rule %s: already denied for good",
		     src, (unsigned long long)refused, window_s, rule);
	else
		dlog("%s banned for %s by rule %s: refused %llu times within %us (ban %u of it "
		     "in a day)", src, dur, rule, (unsigned long long)refused, window_s, nth);
}

void bans_tick(struct daemon *d)
{
	struct weir_ruleset *rs = NULL;
	struct weir_config cfg;
	struct wr_src_waits ws = {};
	__u64 now = wr_mono_ns();
	size_t i;

	if (!d->nr_tracked)
		return;
	rs = wr_live_get(&d->maps);
	if (!rs || wr_config_read(&d->maps, &cfg) || wr_src_waits_read(&d->maps, &ws))
		goto out;
	for (i = 0; i < d->nr_tracked; i++) {
		struct tracked *t = &d->tracked[i];
		const struct weir_ban *b;
		struct weir_state st;
		__u64 period_ns, delta;
		int rule;

		if (t->ban_done || !t->key.family || t->key.kind != WEIR_KEY_SRC)
			continue;
		if (!events_bucket_now(d, rs, &cfg, &ws, &t->key, &st, &rule))
			continue;
		b = &rs->bans[rule][t->key.limit % WEIR_MAX_LIMITS];
		if (!b->ban_s)
			continue;
		period_ns = rs->rules[rule].limits[t->key.limit % WEIR_MAX_LIMITS].period_ms *
			    1000000ULL;
		if (period_ns < 1000000000ULL)
			period_ns = 1000000000ULL;
		if (!t->ban_prev) {
			/* First look: the refusals since the event that started tracking. */
			t->ban_prev = t->drops_at_start;
			t->ban_win_start = now;
		}
		delta = st.drops > t->ban_prev ? st.drops - t->ban_prev : 0;
		t->ban_prev = st.drops;
		if (now - t->ban_win_start > period_ns) {
			t->ban_win_start = now;
			t->ban_win_drops = 0;
		}
		t->ban_win_drops += delta;
		if (t->ban_win_drops >= b->after)
			ban(d, t, b, rs->names[rule], rs->rules[rule].slot, t->ban_win_drops,
			    period_ns / 1000000000ULL);
	}
out:
	wr_src_waits_free(&ws);
	free(rs);
}

void bans_metrics(struct daemon *d, FILE *out)
{
	wr_metric_family(out, "weir_bans_total", "counter",
			 "Sources the penalty box put on the deny list (ban on a limit).");
	wr_metric_value(out, "weir_bans_total", __atomic_load_n(&d->bans, __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_bans_spared_total", "counter",
			 "Sources the penalty box limited but did not ban, by why.");
	wr_metric_labeled(out, "weir_bans_spared_total", "reason", "allowed",
			  __atomic_load_n(&d->ban_spared_allow, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_bans_spared_total", "reason", "verified",
			  __atomic_load_n(&d->ban_spared_verified, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_bans_spared_total", "reason", "connections",
			  __atomic_load_n(&d->ban_spared_conns, __ATOMIC_RELAXED));
}
