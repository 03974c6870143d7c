// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: the hot keys the sync follows from one sync to the
 * next (a table rebuilt every sync), and the gather of each sync: the hot
 * keys the data path noted in wr_fleet_use, what each was charged since,
 * and which of them to send.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fleet/fleet_int.h"

/* ---- the hot keys' table ---- */

/*
 * The slot of k in a table whose live entries carry generation gen (older
 * ones read as empty, so a table is emptied by moving on, not cleared).
 */
static size_t trk_slot(const struct trk *tab, size_t cap, __u32 gen, const struct weir_key *k)
{
	size_t i = wr_key_hash(k, 0x5eed) & (cap - 1);

	while (tab[i].used == gen && memcmp(&tab[i].k, k, sizeof(*k)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Fetch a table entry's first part, what trk_slot() reads, into the cache. */
static void trk_prefetch(const struct trk *t)
{
	__builtin_prefetch(t);
	__builtin_prefetch((const char *)&t->k + sizeof(t->k) - 1);
}

/* Every hot key and its use, in one pass of batched reads. */
static int read_use(struct wr_fleet *f, size_t *nr)
{
	struct weir_key *keys = f->batch_keys;
	struct weir_fleet_use *vals = f->batch_vals;
	__u32 count, j;
	bool first = true;
	struct weir_key in, out;
	int err;

	*nr = 0;
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		count = FLEET_READ_BATCH;
		err = bpf_map_lookup_batch(f->maps.fleet_use, first ? NULL : &in, &out, keys, vals,
					   &count, &o);
		if (err && errno != ENOENT)
			return -errno;
		for (j = 0; j < count && *nr < WEIR_FLEET_KEYS; j++, (*nr)++) {
			f->items[*nr].k = keys[j];
			f->items[*nr].use = vals[j];
		}
		if (err)
			return 0;	/* ENOENT: that was the last batch */
		in = out;
		first = false;
	}
}

/*
 * A window key's part of gather: its charges for the sync (struct item's
 * w* fields), from units, what was charged here since its last send, and
 * its bucket here (word, aux). Those charges went into the window current
 * at that send and the ones after: all into this one when the key was sent
 * in it already; else this one holds what this host's bucket counts in it
 * (the fleet's count of a window reaches a bucket only through a sync that
 * sent in it, or the over set's, which is the limit: then all went into
 * this one, which errs towards refusing) and the rest went into the one
 * before. false: not sent now, only followed, its units carried: no fleet
 * clock yet (its windows would not be the fleet's), or nothing charged and
 * nothing refused, or cool as gather says of token buckets (not refusing,
 * not counted in the fleet's current window, its count here at most half
 * the limit, and units times the live hosts under FLEET_COOL of the limit
 * over the time since its last send).
 */
static bool win_of(struct wr_fleet *f, struct item *it, const struct weir_limit *l, __u64 word,
		   __u64 now, __u64 units, __u64 off)
{
	__u64 period = wr_limit_period_ns(l), elapsed;
	__u32 c = wr_limit_wnow(l, now, off) / period, wi = word >> 32;

	units += it->t.carry_ns;
	it->t.carry_ns = 0;
	it->from_ns = it->t.sent ? it->t.sent : it->use.since;
	it->widx = (now + off) / period;
	it->wgather = wi == c ? (__u32)word : 0;
	elapsed = now > it->from_ns ? now - it->from_ns : 0;
	if (!off || (!units && !it->refusing) ||
	    (!it->refusing && it->t.until < now && it->wgather * 2 <= wr_limit_budget(l) &&
	     (double)units * (f->st.hosts ? f->st.hosts : 1) * FLEET_COOL_DEN * period <
		     (double)l->rate * elapsed * FLEET_COOL_NUM)) {
		it->t.carry_ns = units;
		return false;
	}
	if (it->t.win == it->widx) {
		it->wc_cur = units;
		it->wc_prev = 0;
	} else {
		it->wc_cur = units < it->wgather ? units : it->wgather;
		it->wc_prev = units - it->wc_cur;
	}
	/* This host's own counts of the two windows, sent and answered before and now. */
	if (it->t.win == it->widx) {
		it->wown_cur = it->t.wown + it->wc_cur;
		it->wown_prev = it->t.wown_prev;
	} else if (it->t.win + 1 == it->widx) {
		it->wown_cur = it->wc_cur;
		it->wown_prev = it->t.wown + it->wc_prev;
	} else {
		it->wown_cur = it->wc_cur;
		it->wown_prev = it->wc_prev;
	}
	/*
	 * This host's own counts are what it charged, whether or not this
	 * sync's answer comes back: one that is lost may have run or not, and
	 * is not sent again, but the next sync's floors carry it (unsend()
	 * takes them back for a call that was never run, which is sent again).
	 */
	it->t.win = it->widx;
	it->t.wown = it->wown_cur;
	it->t.wown_prev = it->wown_prev;
	it->charge_us = units;	/* what this host's share of the fleet's use counts */
	return true;
}

/* The live rule set and the switches; the hot keys with what they grew by. */
size_t fleet_gather(struct wr_fleet *f, struct weir_config *cfg, unsigned int mult)
{
	const struct weir_rule *last_r = NULL;
	size_t nr = 0, i, out = 0, s;
	__u64 now = fleet_now(f), h;

	f->names_used = 0;
	if (wr_read_live(&f->maps, f->rs) || wr_config_read(&f->maps, cfg) ||
	    read_use(f, &nr))
		return 0;
	/* The next table as small as the keys allow: fewer cache misses. */
	for (f->next_cap = FLEET_TAB_MIN; f->next_cap < 2 * nr; f->next_cap *= 2)
		;
	for (i = 0; i < nr; i++) {
		struct item *it = &f->items[out];
		const struct weir_rule *r = NULL;
		__u64 delta, ahead = 0, drops = 0;
		const struct weir_limit *l;
		__u32 j;

		/* The buckets' sets and the table are far apart in memory: fetch ahead. */
		if (i + FLEET_AHEAD < nr) {
			const struct weir_key *nk = &f->items[i + FLEET_AHEAD].k;

			if (nk->family && f->sets && cfg->state_sets && cfg->state_sets <= f->nr_sets) {
				const char *p = (const char *)&f->sets[wr_state_set(
					wr_key_hash(nk, cfg->state_seed), cfg->state_sets)];
				size_t o;

				for (o = 0; o < sizeof(struct weir_set); o += 64)
					__builtin_prefetch(p + o);
			}
			h = wr_key_hash(nk, 0x5eed);
			trk_prefetch(&f->tab[h & (f->tab_cap - 1)]);
			trk_prefetch(&f->tab_next[h & (f->next_cap - 1)]);
		}

		*it = f->items[i];
		it->way = NULL;
		if (last_r && last_r->uid == it->k.uid)
			r = last_r;
		for (j = 0; !r && j < f->rs->nr_rules && j < WEIR_MAX_RULES; j++)
			if (f->rs->rules[j].uid == it->k.uid)
				r = &f->rs->rules[j];
		last_r = r;
		if (!r || it->k.limit >= r->nr_limits || !r->limits[it->k.limit].fleet) {
			/* The rule or its limit is gone (a reload): forget the key. */
			bpf_map_delete_elem(f->maps.fleet_use, &it->k);
			continue;
		}
		it->r = r;
		it->li = it->k.limit;
		l = &r->limits[it->li];
		s = trk_slot(f->tab, f->tab_cap, f->gen, &it->k);
		if (f->tab[s].used == f->gen) {
			it->t = f->tab[s];
		} else {
			memset(&it->t, 0, sizeof(it->t));
			/* A new run of the key here: 48 bits, which a double holds. */
			it->t.run = ++f->runs & ((1ULL << 48) - 1);
			/*
			 * Hot before this sync started (a restart, a reload that
			 * changed the fleet): what it was charged then was sent by
			 * the sync before, or is spent. From now on.
			 */
			if (it->use.since < f->started)
				it->t.last = it->use.charged;
		}
		it->t.k = it->k;
		it->t.used = f->gen + 1;
		it->prev_last = it->t.last;
		it->prev_carry = it->t.carry_ns;
		it->prev_win = it->t.win;
		it->prev_wown = it->t.wown;
		it->prev_wown_prev = it->t.wown_prev;
		it->prev_tot = it->t.tot_us;
		delta = it->use.charged - it->t.last;
		it->t.last = it->use.charged;
		if (it->k.family) {
			struct weir_set *set;
			struct weir_way *w, *victim;
			__u64 seen;

			if (f->sets && cfg->state_sets && cfg->state_sets <= f->nr_sets) {
				set = &f->sets[wr_state_set(wr_key_hash(&it->k, cfg->state_seed),
							    cfg->state_sets)];
				w = state_scan(set, &it->k, &victim, &seen);
				ahead = w ? READ_ONCE(w->st.tat) : 0;
				drops = w ? READ_ONCE(w->st.drops) : 0;
				it->way = w;
			}
		} else if (f->agg) {
			ahead = READ_ONCE(f->agg[l->agg_slot].tat);
			drops = READ_ONCE(f->agg[l->agg_slot].drops);
		}
		it->refusing = drops > it->t.drops;
		it->t.drops = drops;
		/*
		 * Idle: nothing charged and nothing refused here since the last
		 * sync. A fleet window's key that spent its allocation refuses
		 * and charges nothing until its window turns; cold by its
		 * charges alone, it left wr_fleet_use at the turn and began the
		 * next window untracked.
		 */
		it->t.idle = delta || it->refusing ? 0 : it->t.idle + 1;
		if (it->t.idle >= FLEET_COLD_SYNCS && it->t.until < now) {
			/* Cold: its bucket is full here and in the fleet. */
			bpf_map_delete_elem(f->maps.fleet_use, &it->k);
			continue;
		}
		if (wr_limit_windowed(l)) {
			/* ahead: the bucket's word, (window, count). */
			if (!win_of(f, it, l, ahead, now, delta / (mult ? mult : 1),
				    cfg->fleet_win_off)) {
				f->tab_next[trk_slot(f->tab_next, f->next_cap, f->gen + 1,
						     &it->k)] = it->t;
				continue;
			}
			goto send;
		}
		ahead = ahead > now ? (ahead - now) / (mult ? mult : 1) : 0;
		it->ahead_us = ahead / 1000;
		/* Under the safe fallback charges were multiplied: the fleet gets real ones. */
		delta = delta / (mult ? mult : 1) + it->t.carry_ns;
		/* Since when these charges were made: the last send, or the key turning hot. */
		it->from_ns = it->t.sent ? it->t.sent : it->use.since;
		it->charge_us = delta / 1000;
		it->t.carry_ns = delta % 1000;
		if ((!it->charge_us && !it->refusing) ||
		    (!it->refusing && it->t.until < now && ahead * 2 <= wr_limit_budget(l) &&
		     now > it->from_ns &&
		     delta * (f->st.hosts ? f->st.hosts : 1) * FLEET_COOL_DEN <
			     (now - it->from_ns) * FLEET_COOL_NUM)) {
			/*
			 * Nothing charged here since the last sync and nothing
			 * refused (or a key entered by the poll's fold, not yet
			 * charged here), or a cool key: not refusing, not over in
			 * the fleet, its bucket here under half spent, and what it
			 * was charged since it was last sent, times the live
			 * hosts, under FLEET_COOL of the limit's rate over that
			 * time. Its charge is kept (carried) and it is followed,
			 * not sent; the fleet's view of it can wait.
			 */
			it->t.carry_ns = delta;
			f->tab_next[trk_slot(f->tab_next, f->next_cap, f->gen + 1, &it->k)] = it->t;
			continue;
		}
send:
		if (fleet_item_name(f, it, r - f->rs->rules))
			continue;
		/* A token bucket sends its run's total (sync_lua): a lost answer loses no charge. */
		if (!wr_limit_windowed(l))
			it->t.tot_us += it->charge_us;
		it->slot = trk_slot(f->tab_next, f->next_cap, f->gen + 1, &it->k);
		f->tab_next[it->slot] = it->t;
		out++;
	}
	{
		struct trk *t = f->tab;

		f->tab = f->tab_next;
		f->tab_next = t;
		f->tab_cap = f->next_cap;
		f->gen++;
	}
	return out;
}
