// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: the fleet's answers folded into the local buckets (a
 * token bucket's TAT, a window's counts), with the data path's
 * compare-and-swap on the same words, moving them only toward "more
 * consumed".
 */
#include "fleet/fleet_int.h"

/* tat = max(tat, floor), with the data path's compare-and-swap on the same word. */
static bool fold_tat(__u64 *tat, __u64 floor)
{
	__u64 cur = __atomic_load_n(tat, __ATOMIC_ACQUIRE);

	while (cur < floor)
		if (__atomic_compare_exchange_n(tat, &cur, floor, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return true;
	return false;
}

/* x = max(x, v), with the data path's compare-and-swap on the same word. */
static void fold_max(__u64 *x, __u64 v)
{
	__u64 cur = __atomic_load_n(x, __ATOMIC_ACQUIRE);

	while (cur < v &&
	       !__atomic_compare_exchange_n(x, &cur, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/*
 * A window bucket's counts from the fleet's: window v->idx's count to
 * v->cnt and what was counted here since the gather (v->set; see take_win
 * for what cnt is then), or to at least v->cnt, and a sliding window's
 * previous one to at least v->prev. A bucket still in an earlier window
 * moves to the fleet's (as the data path's own turn would, its count
 * becoming the previous one when they are adjacent); one already in a
 * later window keeps it, and a sliding one takes the fleet's count as its
 * previous window's when that is the one. The previous count is a plain
 * word next to the window's, as the data path keeps it: a fold racing a
 * turn can leave it the larger of the two candidates, which only refuses
 * sooner. way: st's, to move its idle_at.
 */
static bool fold_win(const struct weir_limit *l, struct weir_state *st,
		     struct weir_way *way, const struct fleet_view *v)
{
	int sliding = wr_win_life(l->algo) > 1;
	__u64 prev = v->prev < UINT32_MAX ? v->prev : UINT32_MAX;
	__u64 cur = __atomic_load_n(&st->tat, __ATOMIC_ACQUIRE), want, mine, cnt;
	__u32 wi;

	for (;;) {
		wi = cur >> 32;
		if ((__s32)(wi - v->idx) > 0) {
			/* This host has turned already: the fleet's is its previous window. */
			if (sliding && wi == v->idx + 1)
				fold_max(&st->aux, v->cnt < UINT32_MAX ? v->cnt : UINT32_MAX);
			return false;
		}
		cnt = v->cnt;
		if (wi == v->idx && v->set && (__u32)cur > v->gather)
			cnt += (__u32)cur - v->gather;
		if (cnt > UINT32_MAX)
			cnt = UINT32_MAX;
		if (wi == v->idx && (v->set ? (__u32)cur == cnt : (__u32)cur >= cnt)) {
			if (sliding && v->set)
				__atomic_store_n(&st->aux, prev, __ATOMIC_RELEASE);
			else if (sliding)
				fold_max(&st->aux, prev);
			return false;
		}
		want = wr_win_pack(v->idx, cnt);
		if (__atomic_compare_exchange_n(&st->tat, &cur, want, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			break;
	}
	if (wi == v->idx) {
		if (sliding && v->set)
			__atomic_store_n(&st->aux, prev, __ATOMIC_RELEASE);
		else if (sliding)
			fold_max(&st->aux, prev);
		return true;
	}
	/*
	 * A turn: the previous window is ours, if it was the one before, or
	 * the fleet's; set, the fleet's (ours counts the others' allocations).
	 */
	mine = wi + 1 == v->idx && !v->set ? (__u32)cur : 0;
	if (sliding)
		__atomic_store_n(&st->aux, mine > prev ? mine : prev, __ATOMIC_RELEASE);
	if (way)
		__atomic_store_n(&way->idle_at, wr_idle_at(l, want), __ATOMIC_RELEASE);
	return true;
}

/*
 * The count at which a fleet window is published as spent (over its
 * limit: every host then counts it full until it ends, hosts that never
 * saw the key included). Not the limit itself: under the shares take_win
 * hands out, the hosts' own refusals say nothing of the fleet's (a host
 * refuses once its share is spent), and the fleet's count comes ever
 * closer to the limit without reaching it. So: within a quarter of one
 * host's share of the window of it, or, for a window too small to say so,
 * one short. What is left then goes unused: under 1/(4N) of the limit.
 */
double fleet_win_spent(const struct weir_limit *l, __u32 hosts)
{
	__u64 slack = l->rate / (4ULL * (hosts ? hosts : 1));

	return (double)(l->rate - (slack ? slack : l->rate > 1 ? 1 : 0));
}

/*
 * Is window idx (the data path's index) later than the one this host's
 * clock is in at now? The data path takes any other window than its
 * current one for an old one, so a fold into a later window would be
 * lost at the next packet: a host whose clock is a little behind the
 * fleet's (the offset is measured to within a round trip) waits for it.
 */
bool fleet_win_ahead(const struct weir_limit *l, __u64 off, __u32 idx, __u64 now)
{
	__u32 c = wr_limit_wnow(l, now, off) / wr_limit_period_ns(l);

	return (__s32)(idx - c) > 0;
}

/* The fleet's view into one bucket here: a token bucket's TAT, or a window's counts. */
static bool fold_state(const struct weir_limit *l, struct weir_state *st,
		       struct weir_way *way, const struct fleet_view *v)
{
	return wr_limit_windowed(l) ? fold_win(l, st, way, v) : fold_tat(&st->tat, v->floor);
}

/*
 * Move key k's bucket forward to what the fleet says of it (v). A key this
 * host has no bucket for gets one, claimed as the data path claims ways.
 */
bool fleet_fold(struct wr_fleet *f, const struct weir_rule *r, __u32 li,
		const struct weir_key *k, const struct fleet_view *v,
		const struct weir_config *cfg, __u64 now, struct weir_way *hint)
{
	const struct weir_limit *l = &r->limits[li];
	int win = wr_limit_windowed(l);
	struct weir_way *way, *victim;
	struct weir_set *set;
	__u64 seen, word;
	int tries;

	/* The fleet's bucket is full again, or its windows empty: nothing to add. */
	if (win ? !v->cnt && !v->prev : v->floor <= now)
		return false;
	/* The way the sync found the key in, if it still holds the key. */
	if (hint && READ_ONCE(*way_word(hint, 0)) == key_word(k, 0) &&
	    *way_word(hint, 1) == key_word(k, 1) && *way_word(hint, 2) == key_word(k, 2))
		return fold_state(l, &hint->st, hint, v);
	if (l->key == WEIR_KEY_ALL) {
		if (!f->agg || (size_t)(l->agg_slot + 1) * sizeof(*f->agg) > f->agg_len)
			return false;
		return fold_state(l, &f->agg[l->agg_slot], NULL, v);
	}
	if (!f->sets || !cfg->state_sets || cfg->state_sets > f->nr_sets)
		return false;
	set = &f->sets[wr_state_set(wr_key_hash(k, cfg->state_seed), cfg->state_sets)];
	word = win ? wr_win_pack(v->idx, v->cnt < UINT32_MAX ? v->cnt : UINT32_MAX) : v->floor;
	for (tries = 0; tries < 4; tries++) {
		way = state_scan(set, k, &victim, &seen);
		if (way)
			return fold_state(l, &way->st, way, v);
		if (state_claim(set, victim, seen, k, word,
				win && wr_win_life(l->algo) > 1 ? v->prev : 0,
				wr_idle_at(l, word)))
			return true;
	}
	return false;
}
