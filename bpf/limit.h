/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One limit of one rule against the packet: check, charge or refund its
 * bucket (rule-wide in wr_agg, per source in wr_state), connection caps,
 * the fleet's accounting; and wr_rule_once, a single rule's limits with
 * each bucket looked up once.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_LIMIT_H
#define WEIR_BPF_LIMIT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "weir_state.h"
#include "maps.h"
#include "eval.h"
#include "state.h"
#include "event.h"

/*
 * Take back a charge of cost at now: for a token bucket exactly what it
 * added (others may have built on it), for a window the cost out of the
 * window it went into, while that is still the current one.
 */
static __always_inline void uncharge(const struct weir_limit *l, struct weir_state *st,
				     __u64 now, __u32 cost)
{
	__u64 word, next;
	int i;

	if (l->algo == WEIR_ALGO_GCRA) {
		__sync_fetch_and_add(&st->tat, -wr_gcra_inc(l->interval_fp, cost));
		return;
	}
	for (i = 0; i < WR_CAS_TRIES; i++) {
		word = READ_ONCE(st->tat);
		if (!wr_win_uncharge(l, word, now, cost, &next) ||
		    __sync_val_compare_and_swap(&st->tat, word, next) == word)
			break;
	}
}

/*
 * A connection limit: a SYN (without ACK) from a key already at its cap of
 * established connections is refused. Nothing is charged here: wr_sockops
 * counts connections as the kernel establishes and closes them.
 */
static __always_inline int conns_op(struct wr_eval *ev, const struct weir_rule *r, __u32 li,
				    const struct weir_limit *l)
{
	struct weir_conns *c;
	struct weir_key key;

	/* Never charged, so never refunded; per source only. */
	if (ev->phase != WR_PH_SRC || ev->op == WR_OP_REFUND)
		return 1;
	if (ev->pkt.proto != WR_IPPROTO_TCP || !(ev->pkt.flags & WR_PKT_L4) ||
	    (ev->pkt.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK)) != WEIR_TCP_SYN)
		return 1;
	wr_make_key(r, li, l, &ev->pkt, &key);
	c = bpf_map_lookup_elem(&wr_conns, &key);
	return !c || READ_ONCE(c->count) < l->rate;
}

/*
 * The bucket key of per-address limit li of rule r (not per all): by
 * source, flow or destination (wr_make_key_kind). The destination is not in
 * ev->pkt but in the scratch's struct wr_pkt_x, which wr_match_rules_*
 * filled for this packet: a set with a per-destination limit counts it in
 * x_rules (wr_ruleset_index). 0 on a fault (no scratch).
 */
static __always_inline int make_key(struct wr_eval *ev, const struct weir_rule *r, __u32 li,
				    const struct weir_limit *l, struct weir_key *key)
{
	const __u32 *a = ev->pkt.saddr;
	struct wr_scratch *sc;
	__u32 zero = 0;

	if (l->key == WEIR_KEY_DST) {
		sc = bpf_map_lookup_elem(&wr_scratch, &zero);
		if (!sc)
			return 0;
		a = sc->m.x.daddr;
	}
	wr_make_key_kind(r, li, l, &ev->pkt, a, key);
	return 1;
}

/* One charge in WR_FLEET_SAMPLE of an untracked key tracks it (a power of 2). */
#define WR_FLEET_SAMPLE	32

/*
 * A fleet-wide limit's bucket was charged to next at now (wnow: its window
 * clock). A tracked key (in wr_fleet_use) adds up every charge for the
 * daemon, which sends the keys hot enough to matter to the fleet: TAT
 * advance for a token bucket, cost for a window. An untracked key becomes
 * tracked once its bucket is half spent, or on one charge in
 * WR_FLEET_SAMPLE at random, so a source spread thin over many hosts is
 * tracked within a few dozen of its packets on each. A new key starts with
 * everything its bucket holds (next - now; a window's count), which the
 * fleet has not seen yet. Fleet limits only.
 */
static __always_inline void fleet_note(const struct weir_limit *l, const struct weir_key *key,
				       __u64 now, __u64 next, __u32 cost)
{
	struct weir_fleet_use *u;
	struct wr_scratch *sc;
	__u64 held, half;
	__u32 zero = 0;
	int win = wr_limit_windowed(l);

	u = bpf_map_lookup_elem(&wr_fleet_use, key);
	if (u) {
		__sync_fetch_and_add(&u->charged, win ? cost : wr_gcra_inc(l->interval_fp, cost));
		return;
	}
	/* What the bucket holds spent, against half of what it may. */
	held = win ? (__u32)next : next - now;
	half = win ? l->rate / 2 : l->tolerance / 2;
	/* Not tracked: half spent, or one charge in WR_FLEET_SAMPLE at random. */
	if (held <= half && (bpf_get_prandom_u32() & (WR_FLEET_SAMPLE - 1)))
		return;
	sc = bpf_map_lookup_elem(&wr_scratch, &zero);
	if (!sc)
		return;
	sc->fu.charged = held;
	sc->fu.since = now;
	/* Another CPU inserted it first: its value holds our bucket's state too. */
	bpf_map_update_elem(&wr_fleet_use, key, &sc->fu, BPF_NOEXIST);
}

/* charge_state's answers */
#define WR_CH_REFUSED	0	/* the bucket refuses (counted on it) */
#define WR_CH_DONE	1	/* charged */
#define WR_CH_GONE	2	/* the way went to another key meanwhile: the charge given back */
#define WR_CH_BUSY	(-1)	/* the compare-and-swap kept failing */

/*
 * Charge cost to bucket st of limit l at now (wnow: its window clock,
 * wr_limit_wnow). way: st's way in wr_state (key its key), NULL for a
 * rule-wide bucket. The state is shared by every CPU: compare-and-swap,
 * bounded retry. *nextp: the bucket's new word.
 */
static __always_inline int charge_state(const struct weir_limit *l, struct weir_state *st,
					struct weir_way *way, const struct weir_key *key,
					__u32 uid, __u32 li, __u64 now, __u64 wnow, __u32 cost,
					__u64 *nextp)
{
	__u64 word, aux, next, next_aux;
	int i;

	for (i = 0; i < WR_CAS_TRIES; i++) {
		word = READ_ONCE(st->tat);
		aux = READ_ONCE(st->aux);
		if (!wr_meter(l, word, aux, wnow, cost, &next, &next_aux)) {
			note_drop(st, now, way ? key : NULL, uid, li, 1, l->agg_slot);
			return WR_CH_REFUSED;
		}
		if (__sync_val_compare_and_swap(&st->tat, word, next) != word)
			continue;
		*nextp = next;
		/*
		 * Sliding window: the previous window's count, when the window
		 * turned. A plain store: a racing reader may see the old one
		 * for an instant, within the approximation.
		 */
		if (next_aux != aux)
			WRITE_ONCE(st->aux, next_aux);
		if (!way)
			return WR_CH_DONE;
		if (READ_ONCE(*way_word(way, 0)) != key_word(key, 0)) {
			/*
			 * The way went to another key while we charged it: give
			 * that back. Ours is gone, which reads as full: admitted.
			 */
			uncharge(l, st, wnow, cost);
			return WR_CH_GONE;
		}
		if ((word ^ next) >> 32 && l->algo != WEIR_ALGO_GCRA)
			WRITE_ONCE(way->idle_at, wr_idle_at(l, next));
		return WR_CH_DONE;
	}
	return WR_CH_BUSY;
}

/*
 * The clock limit l's windows are cut by at now (wr_limit_wnow): a fleet
 * window limit's reads the fleet's offset from the config; every other
 * limit's is now, and looks nothing up.
 */
static __always_inline __u64 limit_wnow(const struct weir_limit *l, __u64 now)
{
	const struct weir_config *cfg;
	__u32 zero = 0;

	if (!l->fleet || !wr_limit_windowed(l))
		return now;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	return cfg ? wr_limit_wnow(l, now, cfg->fleet_win_off) : now;
}

/* wr_limit_op: a new key's way was lost to another CPU; run the limit again. */
#define WR_LIMIT_AGAIN	2

/*
 * Limit li of rule r under ev->op. Returns 1 to go on, 0 to stop the walk
 * (a refusal, a fault, or the end of a refund), WR_LIMIT_AGAIN to be run
 * again.
 *
 * A global function: the verifier checks it once, not once per rule and
 * limit, which keeps the program far below the complexity limit.
 */
__noinline int wr_limit_op(struct wr_eval *ev, const struct weir_rule *r, __u32 li)
{
	const struct weir_limit *l;
	struct weir_way *way = NULL, *victim = NULL;
	struct weir_set *set = NULL;
	struct weir_state *st;
	struct weir_key key;
	__u64 word, aux, next, next_aux, now, wnow, seen = 0;
	__u32 slot, cost;

	if (!ev || !r || li >= WEIR_MAX_LIMITS)
		return 0;
	asm volatile("%[li] &= %[mask]" : [li] "+r"(li) : [mask] "i"(WEIR_MAX_LIMITS - 1));
	l = &r->limits[li];
	now = rule_now(ev, r);
	if (l->algo == WEIR_ALGO_CONNS)
		return conns_op(ev, r, li, l);
	wnow = limit_wnow(l, now);
	if (l->key == WEIR_KEY_ALL) {
		if (ev->phase != WR_PH_AGG)
			return 1;
		slot = l->agg_slot;
		st = bpf_map_lookup_elem(&wr_agg, &slot);
		if (!st) {
			ev->fault = WR_EV_FAULT;
			return 0;
		}
		if (l->fleet) {
			/* The rule-wide bucket's name in wr_fleet_use: family 0. */
			__builtin_memset(&key, 0, sizeof(key));
			key.uid = r->uid;
			key.limit = li;
		}
	} else {
		if (ev->phase != WR_PH_SRC)
			return 1;
		set = make_key(ev, r, li, l, &key) ? state_set(ev, &key) : NULL;
		if (!set) {
			ev->fault = WR_EV_FAULT;
			return 0;
		}
		/* NULL: no bucket yet, which reads as a full one. */
		way = state_scan(set, &key, &victim, &seen);
		st = way ? &way->st : NULL;
	}
	cost = wr_limit_cost(l, &ev->pkt);
	/* A fleet limit's share under the safe fallback: each packet counts n times. */
	if (l->fleet > 1)
		cost *= l->fleet;

	if (ev->op == WR_OP_CHECK) {
		word = st ? READ_ONCE(st->tat) : 0;
		aux = st ? READ_ONCE(st->aux) : 0;
		if (wr_meter(l, word, aux, wnow, cost, &next, &next_aux))
			return 1;
		if (st)
			note_drop(st, now, way ? &key : NULL, r->uid, li, 1, l->agg_slot);
		return 0;
	}
	if (ev->op == WR_OP_REFUND) {
		if (ev->seen >= ev->charged)
			return 0;
		ev->seen++;
		if (st)
			uncharge(l, st, wnow, cost);
		return 1;
	}

	/* WR_OP_CHARGE */
	if (!st) {
		/* A new bucket starts full (an empty window): this packet is its first charge. */
		if (!set || !wr_meter(l, 0, 0, wnow, cost, &next, &next_aux))
			return 0;
		/*
		 * A claim lost or handed back means another CPU was creating
		 * a key in this set, perhaps this one: the caller runs this
		 * limit again, which finds the key if it is there now.
		 */
		if (!state_claim(set, victim, seen, &key, next, next_aux, wr_idle_at(l, next)))
			return WR_LIMIT_AGAIN;
		if (l->fleet)
			fleet_note(l, &key, now, next, cost);
		ev->charged++;
		return 1;
	}
	switch (charge_state(l, st, way, &key, r->uid, li, now, wnow, cost, &next)) {
	case WR_CH_REFUSED:
		return 0;
	case WR_CH_BUSY:
		ev->fault = WR_EV_CONTENDED;
		return 0;
	}
	if (l->fleet)
		fleet_note(l, &key, now, next, cost);
	ev->charged++;
	return 1;
}

/*
 * wr_limit_op, run once more when a new key's claim collided; a second
 * collision is contention (WR_EV_CONTENDED: refused, not a fault). 1 go
 * on, 0 stop.
 */
static __always_inline int limit_op(struct wr_eval *ev, const struct weir_rule *r, __u32 li)
{
	int ret = wr_limit_op(ev, r, li);

	if (ret == WR_LIMIT_AGAIN)
		ret = wr_limit_op(ev, r, li);
	if (ret == WR_LIMIT_AGAIN) {
		ev->fault = WR_EV_CONTENDED;
		ret = 0;
	}
	return ret;
}

/* wr_limit_at's answers */
#define WR_AT_REFUSED	(-1)	/* CHECK, CHARGE: the bucket refuses */
#define WR_AT_WALK	(-2)	/* a new key, or a contended bucket: take the walk */
#define WR_AT_FAULT	(-3)
#define WR_AT_GONE	(-4)	/* CHARGE: the way went to another key meanwhile, nothing charged */
#define WR_AT_CHARGED	4	/* CHARGE: charged, in way (answer - WR_AT_CHARGED) */
/* wr_limit_at's loc for CHARGE: find the bucket first (no CHECK before it) */
#define WR_AT_FIND	WEIR_WAYS

/*
 * Limit li of rule r, for wr_rule_once. WR_OP_CHECK: where its bucket is
 * if it would admit (>= 0: the way of its set for a per-source bucket, 0
 * for others). WR_OP_CHARGE: charge the bucket in way loc, or, with loc
 * WR_AT_FIND, wherever its set's scan finds it (a connection cap is
 * checked then, as CHECK checks it); WR_AT_CHARGED + the way when charged.
 * WR_OP_REFUND: give back that charge. The set is found again by the key's
 * hash (cheap); the scan of its ways is what is saved. Global, so verified
 * once: the caller's loop over limits then carries only scalars from limit
 * to limit.
 */
__noinline int wr_limit_at(struct wr_eval *ev, const struct weir_rule *r, __u32 li, __u32 op,
			   __u32 loc)
{
	const struct weir_limit *l;
	struct weir_way *way = NULL;
	struct weir_set *set;
	struct weir_state *s;
	struct weir_key key;
	__u64 next, next_aux, now, wnow;
	__u32 idx, cost, w;

	if (!ev || !r || li >= WEIR_MAX_LIMITS)
		return WR_AT_FAULT;
	asm volatile("%[li] &= %[mask]" : [li] "+r"(li) : [mask] "i"(WEIR_MAX_LIMITS - 1));
	l = &r->limits[li];
	now = rule_now(ev, r);
	if (l->algo == WEIR_ALGO_CONNS) {
		/* Never charged: checked by CHECK, or by a CHARGE that finds. */
		if (op == WR_OP_REFUND || (op == WR_OP_CHARGE && loc < WR_AT_FIND))
			return WR_AT_CHARGED;
		ev->phase = WR_PH_SRC;
		if (!conns_op(ev, r, li, l))
			return WR_AT_REFUSED;
		return op == WR_OP_CHECK ? 0 : WR_AT_CHARGED;
	}
	wnow = limit_wnow(l, now);
	if (l->key == WEIR_KEY_ALL) {
		idx = l->agg_slot;
		s = bpf_map_lookup_elem(&wr_agg, &idx);
		if (!s)
			return WR_AT_FAULT;
		if (l->fleet) {
			__builtin_memset(&key, 0, sizeof(key));
			key.uid = r->uid;
			key.limit = li;
		}
	} else {
		if (!make_key(ev, r, li, l, &key))
			return WR_AT_FAULT;
		idx = wr_state_set(wr_key_hash(&key, ev->seed), ev->sets);
		set = bpf_map_lookup_elem(&wr_state, &idx);
		if (!set)
			return WR_AT_FAULT;
		if (op == WR_OP_CHECK || loc >= WR_AT_FIND) {
			for (w = 0; w < WEIR_WAYS; w++) {
				way = &set->way[w];
				if (READ_ONCE(*way_word(way, 0)) == key_word(&key, 0) &&
				    *way_word(way, 1) == key_word(&key, 1) &&
				    *way_word(way, 2) == key_word(&key, 2))
					break;
			}
			if (w >= WEIR_WAYS)
				return WR_AT_WALK;	/* a new key: the walk claims its way */
			loc = w;
		}
		/* Masked where the verifier sees it: the scan's w is not kept bounded. */
		asm volatile("%[loc] &= %[mask]" : [loc] "+r"(loc) : [mask] "i"(WEIR_WAYS - 1));
		way = &set->way[loc];
		s = &way->st;
	}
	cost = wr_limit_cost(l, &ev->pkt);
	if (l->fleet > 1)
		cost *= l->fleet;
	if (op == WR_OP_CHECK) {
		if (wr_meter(l, READ_ONCE(s->tat), READ_ONCE(s->aux), wnow, cost, &next, &next_aux))
			return loc;
		note_drop(s, now, way ? &key : NULL, r->uid, li, 1, l->agg_slot);
		return WR_AT_REFUSED;
	}
	if (op == WR_OP_REFUND) {
		uncharge(l, s, wnow, cost);
		return 0;
	}
	switch (charge_state(l, s, way, &key, r->uid, li, now, wnow, cost, &next)) {
	case WR_CH_REFUSED:
		return WR_AT_REFUSED;
	case WR_CH_BUSY:
		return WR_AT_WALK;
	case WR_CH_GONE:
		return WR_AT_GONE;
	}
	if (l->fleet)
		fleet_note(l, &key, now, next, cost);
	return WR_AT_CHARGED + (loc & (WEIR_WAYS - 1));
}

/*
 * One matched rule with several limits, the common case of "several limits
 * per rule": each bucket looked up once. 1 admitted and charged, 0 refused
 * or a fault (ev->fault), -1 take the general walk: a per-source bucket
 * that does not exist yet (its claim, with its races, is the walk's), or a
 * bucket whose compare-and-swap kept failing; nothing of this packet is
 * charged then.
 *
 * The rule-wide limits were checked already (agg_admits), so a packet
 * meets a refusal in its per-source buckets: those are charged first, each
 * where its set's scan finds it, in one call (check and charge are one
 * compare-and-swap), then the rule-wide ones. A bucket that refuses gives
 * back what this packet charged before it, as the walk's CHECK, CHARGE and
 * REFUND do when a race refuses in CHARGE. Between the charge and its
 * refund another CPU sees that bucket one packet fuller: only a packet of
 * the same key (the same source, or its prefix) can, and only at the edge
 * of a limit that key is over in another of its buckets, so rule-wide
 * buckets, which every source shares, are charged last.
 *
 * A rule with a fleet limit checks every bucket before it charges any (two
 * passes): a fleet limit's charge is also counted for the fleet sync
 * (fleet_note), which a refund does not take back.
 *
 * Global: verified once, not on every path of the entry program.
 */
__noinline int wr_rule_once(struct wr_eval *ev, const struct weir_rule *r, __u32 n)
{
	__u32 li, pass, fleet = 0;
	int at;

	if (!ev || !r || n > WEIR_MAX_LIMITS)
		return -1;
#if __clang_major__ > 14
	/*
	 * n's bound as the verifier sees it: clang 19 (Debian 13), knowing
	 * n <= 4, drops the walk's li < WEIR_MAX_LIMITS tests, and the
	 * verifier, reloading n unbounded, then explores every jump it can
	 * take (8193 at most). Clang 14's object (Debian 12), whose stack the
	 * pre-6.2 verifiers count to the byte, is left as it is.
	 */
	barrier_var(n);
#endif
	/*
	 * ev->seen: where each per-source bucket was found, 2 bits (its way)
	 * a limit; ev->charged: the limits charged, a bit each. In ev rather
	 * than here: this frame stays small, under the stack budget's
	 * deepest chain (see struct wr_eval). The walk resets both.
	 */
	ev->seen = 0;
	ev->charged = 0;
	for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++)
		fleet |= r->limits[li].fleet;
	if (!fleet) {
		for (pass = 0; pass < 2; pass++)
			for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++) {
				if ((r->limits[li].key == WEIR_KEY_ALL) != pass)
					continue;
				at = wr_limit_at(ev, r, li, WR_OP_CHARGE, WR_AT_FIND);
				if (at >= WR_AT_CHARGED) {
					ev->seen |= (__u32)(at & (WEIR_WAYS - 1)) << (2 * li);
					ev->charged |= 1U << li;
				} else if (at != WR_AT_GONE) {
					goto undo;
				}
			}
		return 1;
	}
	for (pass = 0; pass < 2; pass++)
		for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++) {
			if ((r->limits[li].key == WEIR_KEY_ALL) != !pass)
				continue;
			at = wr_limit_at(ev, r, li, WR_OP_CHECK, 0);
			if (at < 0) {
				if (at == WR_AT_FAULT)
					ev->fault = WR_EV_FAULT;
				return at == WR_AT_WALK ? -1 : 0;
			}
			ev->seen |= (__u32)(at & (WEIR_WAYS - 1)) << (2 * li);
		}
	for (pass = 0; pass < 2; pass++)
		for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++) {
			if ((r->limits[li].key == WEIR_KEY_ALL) != !pass)
				continue;
			/*
			 * Masked to this limit's 2 bits: the ones above are later
			 * limits' ways, and a loc of WR_AT_FIND or more would scan
			 * the set again (and check a connection cap again).
			 */
			at = wr_limit_at(ev, r, li, WR_OP_CHARGE,
					 (ev->seen >> (2 * li)) & (WEIR_WAYS - 1));
			if (at >= WR_AT_CHARGED)
				ev->charged |= 1U << li;
			else if (at != WR_AT_GONE)
				goto undo;
		}
	return 1;
undo:
	if (at == WR_AT_FAULT)
		ev->fault = WR_EV_FAULT;
	for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++)
		if (ev->charged & (1U << li))
			wr_limit_at(ev, r, li, WR_OP_REFUND, (ev->seen >> (2 * li)) & (WEIR_WAYS - 1));
	return at == WR_AT_WALK ? -1 : 0;
}

#endif /* WEIR_BPF_LIMIT_H */
