// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deny and allow lists: source prefixes in LPM tries, one per family.
 * Denied sources are dropped first; allowed ones then bypass every limit.
 * wr_config.lists says which tries hold entries, so an empty list costs the
 * data path no lookup.
 *
 * Each entry's value (struct weir_list_val) carries its expiry in the
 * data path's clock (0: permanent) and who put it there: the daemon's
 * config (permanent, synced whole by wr_list_sync) or the runtime (the
 * CLI, ban tools; kept across reloads). Expired entries are ignored by the
 * data path at once and removed by the next writer (wr_write_begin) or
 * the daemon's tick.
 *
 * This file owns the four tries: the CLI's deny/allow commands, the
 * daemon's config, the CrowdSec bouncer and the metrics' entry counts all
 * go through the functions below, and the list bits are computed in one
 * place, from what the tries hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "weir_user.h"

/* An entry walk never takes more steps than a trie can hold keys, twice over. */
#define WALK_BOUND (2ULL * WEIR_LIST_MAX + 1)

/* The data path's clock, as userspace reads it (see weir_config.clock_off). */
__u64 wr_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int list_fd(const struct wr_maps *m, bool deny, int family)
{
	if (deny)
		return family == 4 ? m->deny4 : m->deny6;
	return family == 4 ? m->allow4 : m->allow6;
}

/* A trie's key for c, in a buffer big enough for either family. */
static void cidr_key(const struct wr_cidr *c, struct weir_lpm6 *k)
{
	memset(k, 0, sizeof(*k));
	k->plen = c->plen;
	memcpy(k->addr, c->addr, c->family == 4 ? 4 : 16);
}

static bool expired(const struct weir_list_val *v, __u64 now)
{
	return v->expires_ns && v->expires_ns <= now;
}

/*
 * The entry for exactly c, if there is one: 0, or -ENOENT. A trie's
 * lookup matches the longest prefix of c's length or shorter, so the
 * value's own plen tells an exact hit from a covering prefix.
 */
static int entry_get(const struct wr_maps *m, bool deny, const struct wr_cidr *c,
		     struct weir_list_val *v)
{
	struct weir_lpm6 k;

	cidr_key(c, &k);
	if (bpf_map_lookup_elem(list_fd(m, deny, c->family), &k, v))
		return -errno;
	return v->plen == c->plen ? 0 : -ENOENT;
}

static int entry_put(const struct wr_maps *m, bool deny, const struct wr_cidr *c,
		     const struct weir_list_val *v)
{
	struct weir_lpm6 k;
	int err;

	cidr_key(c, &k);
	if (!bpf_map_update_elem(list_fd(m, deny, c->family), &k, v, BPF_ANY))
		return 0;
	err = -errno;
	return err == -E2BIG ? -ENOSPC : err;
}

static int entry_del(const struct wr_maps *m, bool deny, const struct wr_cidr *c)
{
	struct weir_lpm6 k;

	cidr_key(c, &k);
	return bpf_map_delete_elem(list_fd(m, deny, c->family), &k) ? -errno : 0;
}

/*
 * Every entry of one trie, as a CIDR and its value, to cb until it returns
 * non-zero (which is returned). Expired entries are passed too. The walk
 * restarts nowhere: a concurrent change may be seen or not, never loop it.
 */
int wr_list_walk(const struct wr_maps *m, bool deny, int family,
		 int (*cb)(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx),
		 void *ctx)
{
	struct weir_lpm6 k, next;
	size_t ksz = family == 4 ? sizeof(struct weir_lpm4) : sizeof(struct weir_lpm6);
	int fd = list_fd(m, deny, family);
	struct weir_list_val v;
	void *prev = NULL;
	__u64 n = 0;
	int ret;

	while (n++ < WALK_BOUND && !bpf_map_get_next_key(fd, prev, &next)) {
		struct wr_cidr c = { .family = family };

		memset(&k, 0, sizeof(k));
		memcpy(&k, &next, ksz);
		prev = &k;
		c.plen = k.plen;
		memcpy(c.addr, k.addr, family == 4 ? 4 : 16);
		/* A lookup of the exact key finds the entry itself; gone since: skip it. */
		if (bpf_map_lookup_elem(fd, &k, &v) || v.plen != c.plen)
			continue;
		ret = cb(&c, &v, ctx);
		if (ret)
			return ret;
	}
	return n <= WALK_BOUND && errno != ENOENT ? -errno : 0;
}

struct count_ctx {
	__u64 now;
	__u64 live;		/* entries that have not expired */
	bool ttl;		/* some entry (expired or not) has an expiry */
};

static int count_one(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct count_ctx *cc = ctx;

	(void)c;
	if (!expired(v, cc->now))
		cc->live++;
	if (v->expires_ns || v->rt_expires_ns)
		cc->ttl = true;
	return 0;
}

/* Entries that have not expired. */
int wr_list_count(const struct wr_maps *m, bool deny, int family, __u64 *n)
{
	struct count_ctx cc = { .now = wr_mono_ns() };
	int err = wr_list_walk(m, deny, family, count_one, &cc);

	*n = cc.live;
	return err;
}

/*
 * wr_config.lists from what the tries hold: a trie's bit while it holds
 * any entry (an expired one too, until it is purged), WEIR_L_TTL while
 * any entry has an expiry. Caller holds the lock.
 */
static int update_list_bits(const struct wr_maps *m)
{
	static const struct { bool deny; int family; __u32 bit; } tries[] = {
		{ true, 4, WEIR_L_DENY4 }, { true, 6, WEIR_L_DENY6 },
		{ false, 4, WEIR_L_ALLOW4 }, { false, 6, WEIR_L_ALLOW6 },
	};
	struct weir_config cfg;
	size_t i;
	int err = wr_config_read(m, &cfg);

	cfg.lists = 0;
	for (i = 0; !err && i < ARRAY_SIZE(tries); i++) {
		/* now = 0: every entry counts, expired ones too */
		struct count_ctx cc = { .now = 0 };

		err = wr_list_walk(m, tries[i].deny, tries[i].family, count_one, &cc);
		if (cc.live)
			cfg.lists |= tries[i].bit;
		if (cc.ttl)
			cfg.lists |= WEIR_L_TTL;
	}
	return err ? err : wr_config_write(m, &cfg);
}

/*
 * A runtime add (`deny add`, a ban tool) of c with a time to live of
 * ttl_ns (0: permanent). The rule for an entry already there:
 *  - a permanent runtime entry is never shortened: a ttl leaves it as it
 *    is (*kept = true), a second permanent add is -EEXIST;
 *  - an entry with a ttl gets the new one (from now), or becomes permanent;
 *  - an entry only the config lists stays permanent while the config lists
 *    it; the runtime ttl is what it keeps when the config stops listing it.
 * -ENOSPC when the list is full. Caller holds the lock and then calls
 * wr_list_bits() (once for many entries; wr_list_add() does both).
 */
int wr_list_add_entry(const struct wr_maps *m, bool deny, const struct wr_cidr *c, __u64 ttl_ns,
		      bool *kept)
{
	struct weir_list_val v, old;
	__u64 now = wr_mono_ns();
	int err;

	*kept = false;
	memset(&v, 0, sizeof(v));
	v.plen = c->plen;
	v.flags = WEIR_LV_RUNTIME;
	v.rt_expires_ns = ttl_ns ? now + ttl_ns : 0;
	err = entry_get(m, deny, c, &old);
	if (err && err != -ENOENT)
		return err;
	if (!err && !expired(&old, now)) {
		bool rt_perm = (old.flags & WEIR_LV_RUNTIME) && !old.rt_expires_ns;

		if (rt_perm && !ttl_ns)
			return -EEXIST;
		if (rt_perm) {
			*kept = true;
			return 0;
		}
		v.flags |= old.flags & WEIR_LV_CONFIG;
	}
	v.expires_ns = v.flags & WEIR_LV_CONFIG ? 0 : v.rt_expires_ns;
	return entry_put(m, deny, c, &v);
}

int wr_list_add(const struct wr_maps *m, bool deny, const struct wr_cidr *c, __u64 ttl_ns,
		bool *kept)
{
	int err = wr_list_add_entry(m, deny, c, ttl_ns, kept);

	return err ? err : update_list_bits(m);
}

/*
 * A ban tool's unban: the runtime ttl of c's entry goes. An entry the
 * config lists stays, permanent; a runtime entry without a ttl (an
 * operator's permanent deny, which the ban's add left as it was) stays too:
 * -EPERM. -ENOENT when no runtime entry for exactly c is there. Caller
 * holds the lock and then calls wr_list_bits().
 */
int wr_list_unban_entry(const struct wr_maps *m, bool deny, const struct wr_cidr *c)
{
	struct weir_list_val old;
	int err = entry_get(m, deny, c, &old);

	if (err)
		return err;
	if (!(old.flags & WEIR_LV_RUNTIME) || expired(&old, wr_mono_ns()))
		return -ENOENT;
	if (!old.rt_expires_ns)
		return -EPERM;
	if (old.flags & WEIR_LV_CONFIG) {
		old.flags = WEIR_LV_CONFIG;
		old.expires_ns = old.rt_expires_ns = 0;
		return entry_put(m, deny, c, &old);
	}
	return entry_del(m, deny, c);
}

/* wr_config.lists again, after wr_list_*_entry() changes. Caller holds the lock. */
int wr_list_bits(const struct wr_maps *m)
{
	return update_list_bits(m);
}

/*
 * Take c off a list, whoever put it there (the config puts it back at its
 * next reload). -ENOENT when it is not there (or had expired). Caller
 * holds the lock.
 */
int wr_list_del(const struct wr_maps *m, bool deny, const struct wr_cidr *c)
{
	struct weir_list_val old;
	int err = entry_get(m, deny, c, &old);

	if (!err) {
		bool was_live = !expired(&old, wr_mono_ns());

		err = entry_del(m, deny, c);
		if (!err && !was_live)
			err = -ENOENT;
	}
	if (err == -ENOENT || !err) {
		int e = update_list_bits(m);

		return err ? err : e;
	}
	return err;
}

/* ---- purging expired entries, syncing the config's ---- */

struct cidr_vec {
	struct wr_cidr *v;
	struct weir_list_val *val;
	size_t n;
};

static int vec_push(struct cidr_vec *s, const struct wr_cidr *c, const struct weir_list_val *v)
{
	if (!(s->n & 255)) {
		struct wr_cidr *nv = realloc(s->v, (s->n + 256) * sizeof(*nv));
		struct weir_list_val *nval;

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		nval = realloc(s->val, (s->n + 256) * sizeof(*nval));
		if (!nval)
			return -ENOMEM;
		s->val = nval;
	}
	s->v[s->n] = *c;
	s->val[s->n++] = *v;
	return 0;
}

static void vec_free(struct cidr_vec *s)
{
	free(s->v);
	free(s->val);
	memset(s, 0, sizeof(*s));
}

struct purge_ctx {
	__u64 now;
	struct cidr_vec gone;
};

static int collect_expired(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct purge_ctx *p = ctx;

	return expired(v, p->now) ? vec_push(&p->gone, c, v) : 0;
}

/*
 * Delete every expired entry of both lists; *n says how many. Costs one
 * read of wr_config when no entry has an expiry. Caller holds the lock.
 */
int wr_list_purge(const struct wr_maps *m, __u64 *n)
{
	struct purge_ctx p = { .now = wr_mono_ns() };
	struct weir_config cfg;
	int err, fam, deny;
	size_t j;

	*n = 0;
	err = wr_config_read(m, &cfg);
	if (err || !(cfg.lists & WEIR_L_TTL))
		return err;
	for (deny = 0; deny <= 1; deny++) {
		/* Collect first, delete after: deleting while walking skips keys. */
		for (fam = 4; !err && fam <= 6; fam += 2)
			err = wr_list_walk(m, deny, fam, collect_expired, &p);
		for (j = 0; !err && j < p.gone.n; j++)
			if (!entry_del(m, deny, &p.gone.v[j]))
				++*n;
		vec_free(&p.gone);
	}
	return err ? err : update_list_bits(m);
}

static bool cidr_in(const struct wr_cidr *v, int n, const struct wr_cidr *c)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].family == c->family && v[i].plen == c->plen &&
		    !memcmp(v[i].addr, c->addr, c->family == 4 ? 4 : 16))
			return true;
	return false;
}

struct stale {
	const struct wr_cidr *keep;
	int nr_keep;
	struct cidr_vec out;	/* the config's entries it no longer lists, and expired ones */
};

static int collect_stale(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct stale *s = ctx;

	if (cidr_in(s->keep, s->nr_keep, c))
		return 0;
	if (!(v->flags & WEIR_LV_CONFIG) && !expired(v, wr_mono_ns()))
		return 0;
	return vec_push(&s->out, c, v);
}

/*
 * Make the config's part of a list exactly v[0 .. n) (both families):
 * each of v is a permanent entry (a runtime entry for the same prefix
 * becomes permanent, keeping its own expiry for when the config drops
 * it); an entry the config put there that v lacks goes, or falls back to
 * the runtime add it covered; entries added at runtime (ban tools, the
 * CLI) stay, expired ones go. What v adds goes in first, what it lacks
 * comes out after, so an entry on both the old and the new list is never
 * missing for a moment. Caller holds the lock.
 */
int wr_list_sync(const struct wr_maps *m, bool deny, const struct wr_cidr *v, int n)
{
	struct stale s = { .keep = v, .nr_keep = n };
	struct weir_list_val val, old;
	__u64 now = wr_mono_ns();
	int err = 0, fam, i;
	size_t j;

	/* Collect first, change after: deleting while walking skips keys. */
	for (fam = 4; !err && fam <= 6; fam += 2)
		err = wr_list_walk(m, deny, fam, collect_stale, &s);
	for (i = 0; !err && i < n; i++) {
		memset(&val, 0, sizeof(val));
		val.plen = v[i].plen;
		val.flags = WEIR_LV_CONFIG;
		err = entry_get(m, deny, &v[i], &old);
		if (!err && (old.flags & WEIR_LV_RUNTIME) && !expired(&old, now) &&
		    (!old.rt_expires_ns || old.rt_expires_ns > now)) {
			val.flags |= WEIR_LV_RUNTIME;
			val.rt_expires_ns = old.rt_expires_ns;
		}
		err = entry_put(m, deny, &v[i], &val);
	}
	for (j = 0; !err && j < s.out.n; j++) {
		old = s.out.val[j];
		if ((old.flags & WEIR_LV_CONFIG) && (old.flags & WEIR_LV_RUNTIME) &&
		    (!old.rt_expires_ns || old.rt_expires_ns > now)) {
			old.flags = WEIR_LV_RUNTIME;
			old.expires_ns = old.rt_expires_ns;
			err = entry_put(m, deny, &s.out.v[j], &old);
		} else {
			entry_del(m, deny, &s.out.v[j]);
		}
	}
	vec_free(&s.out);
	return err ? err : update_list_bits(m);
}

/* ---- the deny and allow commands ---- */

static void usage_list(const char *what)
{
	bool deny = !strcmp(what, "deny");

	fprintf(wr_usage_out(),
		"Usage: weir %s add CIDR [ttl DURATION]%s\n"
		"       weir %s del CIDR [ttl-only] [missing-ok]\n"
		"       weir %s list\n"
		"%s\n"
		"ttl: the entry expires by itself after DURATION (600, 90s, 10m, 2h, 1d, 1h30m;\n"
		"     1s to 3650d); without it the entry is permanent. Adding again sets a new\n"
		"     ttl; a permanent entry stays permanent. list shows the time left.\n"
		"ttl-only: remove the entry only if it has a ttl (a ban tool's unban: a\n"
		"     permanent entry stays, and so does a prefix the config lists).\n"
		"missing-ok: a CIDR that is not on the list (or has expired) is not an error.\n",
		what, deny ? " [force]" : "", what, what,
		deny ? "Sources in a denied prefix are dropped before any rule. force: a /0\n"
		       "(every source of a family)."
		     : "Sources in an allowed prefix bypass every limit (the deny list still applies).");
}

/* The longest ttl: ten years, far from any overflow of the clock. */
#define WR_TTL_MAX_NS (3650ULL * 86400 * 1000000000ULL)

/*
 * A ttl: a duration (wr_parse_duration_ns) from 1 s to WR_TTL_MAX_NS.
 * 0 or -EINVAL after naming the bad word.
 */
static int parse_ttl(const char *s, __u64 *ns)
{
	uint64_t v;
	int err = wr_parse_duration_ns(s, &v);

	if (err || v < 1000000000ULL || v > WR_TTL_MAX_NS) {
		pr_err("invalid ttl \"%s\": a duration from 1s to 3650d (600, 90s, 10m, 2h, 1d, "
		       "1h30m)", s);
		return -EINVAL;
	}
	*ns = v;
	return 0;
}

/* Seconds as a duration: 9m59s, 1d2h, 45s. */
void wr_format_secs(__u64 secs, char *buf, size_t len)
{
	static const struct { char unit; __u64 secs; } units[] = {
		{ 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
	};
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(units) && off < len; i++) {
		if (secs < units[i].secs && !(i == ARRAY_SIZE(units) - 1 && !off))
			continue;
		off += snprintf(buf + off, len - off, "%llu%c",
				(unsigned long long)(secs / units[i].secs), units[i].unit);
		secs %= units[i].secs;
		if (!secs)
			break;
	}
}

struct print_ctx {
	__u64 now;
	__u64 expired;		/* entries past their expiry, not shown */
	char buf[64];
};

static int print_one(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct print_ctx *p = ctx;
	char left[32];
	__u64 secs;

	if (expired(v, p->now)) {
		p->expired++;
		return 0;
	}
	format_cidr(c->family, c->addr, c->plen, p->buf, sizeof(p->buf));
	open_object(NULL);
	print_str("cidr", "%s", p->buf);
	if (v->expires_ns) {
		/* Rounded up: an entry that still counts never shows 0. */
		secs = (v->expires_ns - p->now + 999999999ULL) / 1000000000ULL;
		wr_format_secs(secs, left, sizeof(left));
		print_text(" ttl %s", left);
		print_u64("ttl", NULL, secs);
	} else {
		print_null("ttl", NULL);
	}
	print_bool("config", NULL, v->flags & WEIR_LV_CONFIG);
	close_object();
	print_text("\n");
	return 0;
}

/*
 * Purge expired entries (every writer does, in wr_write_begin, and the
 * daemon every tick): a failure is said, never fatal. Caller holds the
 * lock. How many went.
 */
__u64 wr_list_expire(const struct wr_maps *m)
{
	__u64 n;
	int err = wr_list_purge(m, &n);

	if (err)
		pr_warn("cannot purge expired deny/allow entries: %s", strerror(-err));
	else if (n)
		pr_debug("purged %llu expired deny/allow entr%s", (unsigned long long)n,
			 n == 1 ? "y" : "ies");
	return err ? 0 : n;
}

static int cmd_list(int argc, char **argv, void *ctx)
{
	const char *what = ctx;
	struct print_ctx pc = { .now = wr_mono_ns() };
	struct wr_maps m;
	int err, fam;

	(void)argv;
	if (argc != 0) {
		usage_list(what);
		return -EINVAL;
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	out_begin();
	open_array(what);
	for (fam = 4; !err && fam <= 6; fam += 2)
		err = wr_list_walk(&m, !strcmp(what, "deny"), fam, print_one, &pc);
	close_array();
	out_end();
	wr_maps_close(&m);
	if (err) {
		pr_err("cannot read the %s list: %s", what, strerror(-err));
		return err;
	}
	/* Expired entries seen: whoever runs next removes them, so this does. */
	if (pc.expired) {
		int lock = wr_write_begin(&m, false);

		if (lock >= 0)
			wr_write_end(&m, lock);
	}
	return 0;
}

static int change(const char *what, bool add, int argc, char **argv)
{
	bool deny = !strcmp(what, "deny"), force = false, missing_ok = false, kept = false;
	bool ttl_only = false;
	char left[32];
	struct wr_maps m;
	struct wr_cidr c;
	__u64 ttl = 0;
	int lock, err, i;

	if (argc < 1) {
		usage_list(what);
		return -EINVAL;
	}
	for (i = 1; i < argc; i++) {
		if (add && deny && !strcmp(argv[i], "force") && !force) {
			force = true;
		} else if (add && !strcmp(argv[i], "ttl") && !ttl) {
			if (i + 1 >= argc) {
				pr_err("ttl needs a duration (600, 90s, 10m, 2h, 1d)");
				return -EINVAL;
			}
			if (parse_ttl(argv[++i], &ttl))
				return -EINVAL;
		} else if (!add && !strcmp(argv[i], "missing-ok") && !missing_ok) {
			missing_ok = true;
		} else if (!add && !strcmp(argv[i], "ttl-only") && !ttl_only) {
			ttl_only = true;
		} else {
			pr_err("unexpected \"%s\" after the CIDR", argv[i]);
			usage_list(what);
			return -EINVAL;
		}
	}
	if (parse_cidr(argv[0], &c)) {
		pr_err("invalid CIDR \"%s\"", argv[0]);
		return -EINVAL;
	}
	/* A /0 deny drops every packet of its family: the host's own clients too. */
	if (deny && add && c.plen == 0 && !force) {
		pr_err("deny add %s drops every IPv%d packet, this host's own traffic included; "
		       "say 'deny add %s force' if that is meant", argv[0], c.family, argv[0]);
		return -EINVAL;
	}
	lock = wr_write_begin(&m, add);
	if (lock < 0)
		return lock;
	if (add) {
		err = wr_list_add(&m, deny, &c, ttl, &kept);
	} else if (ttl_only) {
		err = wr_list_unban_entry(&m, deny, &c);
		if (err == -EPERM) {
			kept = true;
			err = 0;
		}
		if (!err)
			err = wr_list_bits(&m);
	} else {
		err = wr_list_del(&m, deny, &c);
	}
	if (err == -ENOENT && missing_ok) {
		print_text("%s is not on the %s list\n", argv[0], what);
		err = 0;
	} else if (err == -EEXIST) {
		pr_err("%s is already on the %s list", argv[0], what);
	} else if (err == -ENOENT) {
		pr_err("%s is not on the %s list", argv[0], what);
	} else if (err == -ENOSPC) {
		pr_err("the %s list is full", what);
	} else if (err) {
		pr_err("cannot update the %s list: %s", what, strerror(-err));
	} else if (kept) {
		print_text("%s is on the %s list permanently; %s\n", argv[0], what,
			   add ? "ttl not applied" : "left in place");
	} else if (add && ttl) {
		wr_format_secs((ttl + 999999999ULL) / 1000000000ULL, left, sizeof(left));
		print_text("added %s to the %s list, ttl %s\n", argv[0], what, left);
	} else {
		print_text("%s %s %s the %s list\n", add ? "added" : "removed", argv[0],
			   add ? "to" : "from", what);
	}
	wr_write_end(&m, lock);
	return err;
}

static int cmd_add(int argc, char **argv, void *ctx)
{
	return change(ctx, true, argc, argv);
}

static int cmd_del(int argc, char **argv, void *ctx)
{
	return change(ctx, false, argc, argv);
}

static void usage_ctx(void *ctx)
{
	usage_list(ctx);
}

static const struct wr_cmd list_cmds[] = {
	{ "add", cmd_add },
	{ "delete", cmd_del },
	{ "list", cmd_list },
	{ "show", cmd_list },
};

int do_deny(int argc, char **argv)
{
	return wr_cmd_select(list_cmds, ARRAY_SIZE(list_cmds), "deny", argc, argv, (void *)"deny",
			     usage_ctx);
}

int do_allow(int argc, char **argv)
{
	return wr_cmd_select(list_cmds, ARRAY_SIZE(list_cmds), "allow", argc, argv, (void *)"allow",
			     usage_ctx);
}
