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
#include "lib/libweir.h"

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

/* An entry walk never takes more steps than a trie can hold keys, twice over. */
#define WALK_BOUND (2ULL * WEIR_LIST_MAX + 1)
/* Entries one batched read of a trie returns at most. */
#define WALK_CHUNK 1024u

/* The walk one key at a time, for a kernel whose tries have no batched read. */
static int walk_one_by_one(int fd, int family,
			   int (*cb)(const struct wr_cidr *c, const struct weir_list_val *v,
				     void *ctx),
			   void *ctx)
{
	struct weir_lpm6 k, next;
	size_t ksz = family == 4 ? sizeof(struct weir_lpm4) : sizeof(struct weir_lpm6);
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

/*
 * Every entry of one trie, as a CIDR and its value, to cb until it returns
 * non-zero (which is returned). Expired entries are passed too. The trie
 * is read WALK_CHUNK entries per syscall (one key at a time where the
 * kernel cannot). The walk restarts nowhere: a concurrent change may be
 * seen or not, never loop it.
 */
int wr_list_walk(const struct wr_maps *m, bool deny, int family,
		 int (*cb)(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx),
		 void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	size_t ksz = family == 4 ? sizeof(struct weir_lpm4) : sizeof(struct weir_lpm6);
	int fd = list_fd(m, deny, family);
	struct weir_lpm6 tok;
	struct weir_list_val *vals;
	bool first = true, last = false;
	__u8 *keys;
	__u64 n = 0;
	int ret = 0;

	/* Zeroed, tok too: valgrind does not know the batched read writes them. */
	memset(&tok, 0, sizeof(tok));
	keys = calloc(WALK_CHUNK, ksz);
	vals = calloc(WALK_CHUNK, sizeof(*vals));
	if (!keys || !vals) {
		ret = -ENOMEM;
		goto out;
	}
	while (!ret && !last && n < WALK_BOUND) {
		__u32 cnt = WALK_CHUNK, i;

		if (bpf_map_lookup_batch(fd, first ? NULL : &tok, &tok, keys, vals, &cnt, &o)) {
			/* ENOENT: the end, with the last cnt entries read. */
			if (errno != ENOENT) {
				ret = -errno;
				if (first && (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -524))
					ret = walk_one_by_one(fd, family, cb, ctx);
				goto out;
			}
			last = true;
		}
		first = false;
		for (i = 0; !ret && i < cnt; i++, n++) {
			struct wr_cidr c = { .family = family };
			struct weir_lpm6 k;

			memset(&k, 0, sizeof(k));
			memcpy(&k, keys + i * ksz, ksz);
			c.plen = k.plen;
			memcpy(c.addr, k.addr, family == 4 ? 4 : 16);
			/* The value of a longest-prefix lookup: a covering entry if this one went. */
			if (vals[i].plen == c.plen)
				ret = cb(&c, &vals[i], ctx);
		}
	}
out:
	free(keys);
	free(vals);
	return ret;
}

struct count_ctx {
	__u64 now;
	__u64 live;		/* entries that have not expired */
};

static int count_one(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct count_ctx *cc = ctx;

	(void)c;
	if (!wr_list_expired(v, cc->now))
		cc->live++;
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

struct bits_ctx {
	bool live;		/* the trie holds an entry (an expired one too) */
	bool ttl;		/* some trie's entry has an expiry */
};

/* Stops the walk once the trie's bit and WEIR_L_TTL are both known. */
static int bits_one(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct bits_ctx *b = ctx;

	(void)c;
	b->live = true;
	if (v->expires_ns || v->rt_expires_ns)
		b->ttl = true;
	return b->ttl;
}

/*
 * wr_config.lists from what the tries hold: a trie's bit while it holds
 * any entry (an expired one too, until it is purged), WEIR_L_TTL while
 * any entry has an expiry. A walk stops at the first entry that settles
 * both, so a list of entries with a ttl costs a read or two, not a walk.
 * Caller holds the lock.
 */
static int update_list_bits(const struct wr_maps *m)
{
	static const struct { bool deny; int family; __u32 bit; } tries[] = {
		{ true, 4, WEIR_L_DENY4 }, { true, 6, WEIR_L_DENY6 },
		{ false, 4, WEIR_L_ALLOW4 }, { false, 6, WEIR_L_ALLOW6 },
	};
	struct weir_config cfg;
	bool ttl = false;
	size_t i;
	int err = wr_config_read(m, &cfg);

	cfg.lists &= WEIR_L_FEEDS;	/* the feeds own their bits (feeds.c) */
	for (i = 0; !err && i < ARRAY_SIZE(tries); i++) {
		struct bits_ctx b = { .ttl = ttl };

		err = wr_list_walk(m, tries[i].deny, tries[i].family, bits_one, &b);
		if (err > 0)
			err = 0;
		if (b.live)
			cfg.lists |= tries[i].bit;
		ttl = b.ttl;
	}
	if (ttl)
		cfg.lists |= WEIR_L_TTL;
	return err ? err : wr_config_write(m, &cfg);
}

/*
 * A runtime add (`deny add`, a ban tool) of c with a time to live of
 * ttl_ns (0: permanent): the value *v it writes at now over old (the entry
 * there, NULL for none). The rule for an entry already there:
 *  - a permanent runtime entry is never shortened: a ttl leaves it as it
 *    is (*kept = true), a second permanent add is -EEXIST;
 *  - an entry with a ttl gets the new one (from now), or becomes permanent;
 *  - an entry only the config lists stays permanent while the config lists
 *    it; the runtime ttl is what it keeps when the config stops listing it.
 */
static int add_value(const struct wr_cidr *c, __u64 ttl_ns, __u64 now,
		     const struct weir_list_val *old, __u8 origin, __u16 ban_slot, __u8 ban_nth,
		     struct weir_list_val *v, bool *kept)
{
	*kept = false;
	memset(v, 0, sizeof(*v));
	v->plen = c->plen;
	v->flags = WEIR_LV_RUNTIME | origin;
	v->ban_slot = ban_slot;
	v->ban_nth = ban_nth;
	v->rt_expires_ns = ttl_ns ? now + ttl_ns : 0;
	if (old && !wr_list_expired(old, now)) {
		bool rt_perm = (old->flags & WEIR_LV_RUNTIME) && !old->rt_expires_ns;

		if (rt_perm && !ttl_ns)
			return -EEXIST;
		if (rt_perm) {
			*kept = true;
			return 0;
		}
		v->flags |= old->flags & WEIR_LV_CONFIG;
	}
	v->expires_ns = v->flags & WEIR_LV_CONFIG ? 0 : v->rt_expires_ns;
	return 0;
}

/*
 * That add, read and written here: -ENOSPC when the list is full. Caller
 * holds the lock and then calls wr_list_bits() (once for many entries;
 * wr_list_add() does both).
 */
static int add_entry(const struct wr_maps *m, bool deny, const struct wr_cidr *c, __u64 ttl_ns,
		     bool *kept, __u8 origin, __u16 ban_slot, __u8 ban_nth)
{
	struct weir_list_val v, old;
	int err;

	*kept = false;
	err = entry_get(m, deny, c, &old);
	if (err && err != -ENOENT)
		return err;
	err = add_value(c, ttl_ns, wr_mono_ns(), err ? NULL : &old, origin, ban_slot, ban_nth, &v,
			kept);
	return err || *kept ? err : entry_put(m, deny, c, &v);
}

int wr_list_add_entry(const struct wr_maps *m, bool deny, const struct wr_cidr *c, __u64 ttl_ns,
		      bool *kept)
{
	return add_entry(m, deny, c, ttl_ns, kept, 0, 0, 0);
}

/* From this many entries on, wr_list_add_entries() reads the tries whole, not entry by entry. */
#define ADD_SNAP_MIN 256u

/* The entries of one list (both families) by prefix: open addressing, at most half full. */
struct snap_slot {
	struct wr_cidr c;
	struct weir_list_val v;
	bool used;
};

struct snap {
	struct snap_slot *s;
	size_t mask, n;
};

static bool same_cidr(const struct wr_cidr *a, const struct wr_cidr *b)
{
	return a->family == b->family && a->plen == b->plen &&
	       !memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16);
}

static struct snap_slot *snap_find(const struct snap *t, const struct wr_cidr *c)
{
	const __u8 *p = (const __u8 *)c->addr;
	__u64 h = 1469598103934665603ULL ^ (__u64)c->family << 8 ^ c->plen;
	size_t i, len = c->family == 4 ? 4 : 16;

	/* FNV-1a over the address */
	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	for (i = h & t->mask; t->s[i].used && !same_cidr(&t->s[i].c, c); i = (i + 1) & t->mask)
		;
	return &t->s[i];
}

static int snap_put(struct snap *t, const struct wr_cidr *c, const struct weir_list_val *v)
{
	struct snap_slot *e;

	if (2 * (t->n + 1) > t->mask + 1) {
		struct snap old = *t;
		size_t i;

		t->mask = old.s ? 2 * old.mask + 1 : 4095;
		t->n = 0;
		t->s = calloc(t->mask + 1, sizeof(*t->s));
		if (!t->s) {
			*t = old;
			return -ENOMEM;
		}
		for (i = 0; old.s && i <= old.mask; i++)
			if (old.s[i].used)
				snap_put(t, &old.s[i].c, &old.s[i].v);
		free(old.s);
	}
	e = snap_find(t, c);
	if (!e->used) {
		e->used = true;
		e->c = *c;
		t->n++;
	}
	e->v = *v;
	return 0;
}

static int snap_walk(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	return snap_put(ctx, c, v);
}

/*
 * wr_list_add_entry() for c[0 .. n) with ttls ttl_ns[], in that order, with
 * the result each add would have had in res[] (an entry kept as it was is
 * 0 too). Many entries are checked against one read of the list and
 * written in batches (wr_map_put_many). 0, or -errno when nothing was tried.
 * Caller holds the lock and then calls wr_list_bits().
 */
int wr_list_add_entries(const struct wr_maps *m, bool deny, const struct wr_cidr *c,
			const __u64 *ttl_ns, size_t n, int *res)
{
	struct weir_lpm4 *k4 = NULL;
	struct weir_lpm6 *k6 = NULL;
	struct weir_list_val *v4 = NULL, *v6 = NULL;
	size_t *i4 = NULL, *i6 = NULL, n4 = 0, n6 = 0, i;
	struct snap t = { 0 };
	__u64 now = wr_mono_ns();
	int err = 0, fam;
	bool kept;

	if (n < ADD_SNAP_MIN) {
		for (i = 0; i < n; i++)
			res[i] = add_entry(m, deny, &c[i], ttl_ns[i], &kept, 0, 0, 0);
		return 0;
	}
	k4 = malloc(n * sizeof(*k4));
	k6 = malloc(n * sizeof(*k6));
	v4 = malloc(n * sizeof(*v4));
	v6 = malloc(n * sizeof(*v6));
	i4 = malloc(n * sizeof(*i4));
	i6 = malloc(n * sizeof(*i6));
	if (!k4 || !k6 || !v4 || !v6 || !i4 || !i6) {
		err = -ENOMEM;
		goto out;
	}
	for (fam = 4; !err && fam <= 6; fam += 2)
		err = wr_list_walk(m, deny, fam, snap_walk, &t);
	/* Each add against what the list holds then, the adds before it included. */
	for (i = 0; !err && i < n; i++) {
		struct snap_slot *e = t.s ? snap_find(&t, &c[i]) : NULL;
		struct weir_list_val v;

		res[i] = add_value(&c[i], ttl_ns[i], now, e && e->used ? &e->v : NULL, 0, 0, 0, &v,
				   &kept);
		if (res[i] || kept)
			continue;
		err = snap_put(&t, &c[i], &v);
		if (c[i].family == 4) {
			k4[n4].plen = c[i].plen;
			memcpy(&k4[n4].addr, c[i].addr, 4);
			v4[n4] = v;
			i4[n4++] = i;
		} else {
			memset(&k6[n6], 0, sizeof(k6[n6]));
			k6[n6].plen = c[i].plen;
			memcpy(k6[n6].addr, c[i].addr, 16);
			v6[n6] = v;
			i6[n6++] = i;
		}
	}
	if (!err) {
		/* Each family's results, then each to its entry's place in res. */
		int *r4, *r6;

		r4 = malloc((n4 + n6 + 1) * sizeof(*r4));
		if (!r4) {
			err = -ENOMEM;
			goto out;
		}
		r6 = r4 + n4;
		wr_map_put_many(list_fd(m, deny, 4), k4, sizeof(*k4), v4, sizeof(*v4), n4, r4);
		wr_map_put_many(list_fd(m, deny, 6), k6, sizeof(*k6), v6, sizeof(*v6), n6, r6);
		for (i = 0; i < n4; i++)
			if (r4[i])
				res[i4[i]] = r4[i];
		for (i = 0; i < n6; i++)
			if (r6[i])
				res[i6[i]] = r6[i];
		free(r4);
	}
out:
	free(t.s);
	free(k4);
	free(k6);
	free(v4);
	free(v6);
	free(i4);
	free(i6);
	return err;
}

int wr_list_ban(const struct wr_maps *m, const struct wr_cidr *c, __u64 ttl_ns, bool *kept,
		__u16 rule_slot, __u32 nth)
{
	int err = add_entry(m, true, c, ttl_ns, kept, WEIR_LV_BAN, rule_slot + 1,
			    nth > 255 ? 255 : nth);

	return err ? err : update_list_bits(m);
}

int wr_list_covers(const struct wr_maps *m, bool deny, const struct wr_cidr *addr)
{
	struct weir_list_val v;
	struct weir_lpm6 k;
	__u64 now = wr_mono_ns();
	int i;

	cidr_key(addr, &k);
	for (i = 0; i < WEIR_LIST_DEPTH; i++) {
		if (bpf_map_lookup_elem(list_fd(m, deny, addr->family), &k, &v))
			return errno == ENOENT ? 0 : -errno;
		if (!wr_list_expired(&v, now))
			return 1;
		if (!v.plen)
			return 0;
		k.plen = v.plen - 1;
	}
	return 0;
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
	if (!(old.flags & WEIR_LV_RUNTIME) || wr_list_expired(&old, wr_mono_ns()))
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

const char *wr_rule_name_by_slot(const struct weir_ruleset *rs, __u16 slot_plus_one)
{
	__u32 i;

	for (i = 0; rs && slot_plus_one && i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (rs->rules[i].slot == slot_plus_one - 1)
			return rs->names[i];
	return NULL;
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
		bool was_live = !wr_list_expired(&old, wr_mono_ns());

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

	return wr_list_expired(v, p->now) ? vec_push(&p->gone, c, v) : 0;
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
	if (!(v->flags & WEIR_LV_CONFIG) && !wr_list_expired(v, wr_mono_ns()))
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
		if (!err && (old.flags & WEIR_LV_RUNTIME) && !wr_list_expired(&old, now) &&
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
