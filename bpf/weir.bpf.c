// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * weir data path: one core, an XDP entry and a TC ingress entry.
 *
 * parse -> deny list -> allow list -> rule matching -> the matching rules'
 * limits (aggregate buckets first, then per-source; check all, then charge)
 * -> verdict and per-CPU counters.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.h"

/*
 * Global counter idx (enum weir_global) of this CPU's struct
 * weir_globals g, looked up by weir_core; NULL: none.
 */
static __always_inline void gcount(struct weir_globals *g, __u32 idx)
{
	if (g && idx < WEIR_G_MAX)
		g->count[idx] += 1;
}

/* Global counter idx, for paths off the per-packet one (a fault, an event, the cookies). */
static __always_inline void count(__u32 idx)
{
	__u32 zero = 0;

	gcount(bpf_map_lookup_elem(&wr_global, &zero), idx);
}

/*
 * The data path's time. precise: bpf_ktime_get_ns, a helper call (about
 * 35 ns on a host with return-thunk mitigations). The jiffies clock:
 * bpf_jiffies64, which the JIT inlines, times the tick plus the offset
 * the loader measured, so it is CLOCK_MONOTONIC rounded down to a tick and
 * agrees with the precise clock within one tick. GCRA on a tick clock
 * admits exactly the right count while the burst spans at least two ticks;
 * the controller marks rules that need more (WEIR_RF_PRECISE), and under
 * the default clock auto only packets matching those pay for the call.
 */
static __always_inline __u64 clock_now(const struct weir_config *cfg, int precise)
{
	/* clock_mode is frozen .rodata: the verifier prunes the other branches. */
	if (clock_mode == WEIR_CLOCK_MANUAL)
		return manual_now_ns;
	if (clock_mode == WEIR_CLOCK_PRECISE || (clock_mode == WEIR_CLOCK_AUTO && precise))
		return bpf_ktime_get_ns();
	if (cfg->clock_tick)
		return bpf_jiffies64() * cfg->clock_tick + cfg->clock_off;
	return bpf_ktime_get_coarse_ns();
}

/*
 * Is the source on a list (its v4 trie, its v6 trie), counting only
 * entries that have not expired? An entry with a time to live carries its
 * expiry in the data path's clock; the clock is read only when the longest
 * match has one, so permanent entries cost what they always did. A trie's
 * lookup returns the longest matching prefix only: when that one has
 * expired, look again below its length, so an expired /32 inside a live
 * /24 does not hide the /24. Up to WEIR_LIST_DEPTH expired entries nested
 * in one another are looked past; deeper than that the source counts as
 * not listed until the controller purges them (every CLI write, every
 * daemon tick). Static and not inlined: its frame is on its own short
 * call chain, off the rule walk's deep one, and 6.1 verifies it in the
 * caller's context (map pointers as arguments need a static function).
 */
static __noinline int on_list(void *trie4, void *trie6, const struct wr_pkt *p,
			      const struct weir_config *cfg)
{
	struct weir_lpm6 k = { .plen = 128 };
	struct weir_list_val *v;
	__u64 now = 0, exp;
	int i;

	if (p->family == 4) {
		k.plen = 32;
		k.addr[0] = p->saddr[0];
	} else {
		__builtin_memcpy(k.addr, p->saddr, sizeof(k.addr));
	}
	for (i = 0; i < WEIR_LIST_DEPTH; i++) {
		/* The v4 trie reads the first 8 bytes of k: its plen and addr[0]. */
		v = bpf_map_lookup_elem(p->family == 4 ? trie4 : trie6, &k);
		if (!v)
			return 0;
		exp = READ_ONCE(v->expires_ns);
		if (!exp)
			return 1;
		if (!now)
			now = clock_now(cfg, 0);
		if (now < exp)
			return 1;
		if (!v->plen)
			return 0;
		k.plen = v->plen - 1;
	}
	return 0;
}

/* What one pass over the applicable limits does. */
enum wr_op {
	WR_OP_CHECK,	/* would every limit admit? stop at the first that refuses */
	WR_OP_CHARGE,	/* admit and move every TAT; stop at the first that refuses */
	WR_OP_REFUND,	/* give back what the first `charged` limits were charged */
};

/* Which limits a pass visits; aggregate buckets always go first. */
enum wr_phase {
	WR_PH_AGG,
	WR_PH_SRC,
};

/*
 * The stack budget. Kernels before 6.2 add up the frames of a call chain,
 * each rounded up to 32 bytes, bpf_loop's callback counted as a call, and
 * refuse a chain over 512 bytes. The deepest chain is the entry program
 * (weir_core inline, with this struct) -> eval_rule -> wr_limit_op, so:
 * the matching result lives in a per-CPU scratch map rather than on the
 * entry's stack, and wr_limit_op emits its events inline instead of
 * calling wr_event (a fourth frame).
 */
/* State of one evaluation, on the stack and handed to bpf_loop callbacks. */
struct wr_eval {
	struct wr_pkt pkt;
	__u64 group;		/* rules being evaluated, bit per position in cell's list */
	__u64 now;		/* the clock, for rules without WEIR_RF_PRECISE */
	__u64 now_p;		/* the clock for rules with it: precise under clock auto */
	__u64 seed;		/* wr_config.state_seed */
	__u32 sets;		/* wr_config.state_sets */
	__u32 rs_idx;		/* live rule set */
	__u32 seen;		/* limits visited in this op so far */
	__u32 charged;		/* limits charged by the CHARGE op (REFUND bound) */
	__u16 cell;		/* the rule index's cell of the packet (wr_rule_candidates) */
	__u16 pad;
	__s32 refused;		/* rule index that refused, or -1 */
	/* Bytes, not words: the struct is 8 bytes smaller on the entry's stack. */
	__u8 op;		/* enum wr_op */
	__u8 phase;		/* enum wr_phase */
	__u8 fault;		/* WR_EV_FAULT or WR_EV_CONTENDED happened */
	__u8 fail_closed;
};

/*
 * wr_eval.fault: what ended an evaluation other than a refusal. Either
 * stops the walks at once; they differ in what the packet gets.
 */
#define WR_EV_FAULT	1	/* an internal fault: the fail policy decides */
/*
 * Contention: the state this packet needs is being changed by another CPU
 * beyond the bounded retry: a new key's way claimed twice by a claim in
 * progress (a claimant stalled between its two compare-and-swaps, as a
 * preempted vCPU is), or a bucket's compare-and-swap lost WR_CAS_TRIES
 * times in a row. Refused by the rule being evaluated, counted under
 * WEIR_G_CONTENDED; never admitted uncharged (docs/ARCHITECTURE.md).
 */
#define WR_EV_CONTENDED	2

/*
 * The time rule r's buckets are metered by. Each bucket belongs to one
 * rule, so it always sees the same clock, even when a packet matches
 * rules of both kinds.
 */
static __always_inline __u64 rule_now(const struct wr_eval *ev, const struct weir_rule *r)
{
	return r->flags & WEIR_RF_PRECISE ? ev->now_p : ev->now;
}

/*
 * Say that a bucket started limiting. key NULL: a rule-wide bucket.
 * Global and out of line: it runs once per quiet spell, not per packet.
 */
__noinline int wr_event(const struct weir_key *key, __u64 uid_li, __u64 now, __u64 drops)
{
	struct weir_event *e;

	e = bpf_ringbuf_reserve(&wr_events, sizeof(*e), 0);
	if (!e) {
		count(WEIR_G_EVENTS_LOST);
		return 0;
	}
	if (key) {
		e->key = *key;
	} else {
		__builtin_memset(&e->key, 0, sizeof(e->key));
		e->key.uid = uid_li >> 8;
		e->key.limit = uid_li & 0xff;
	}
	e->ts = now;
	e->drops = drops;
	bpf_ringbuf_submit(e, 0);
	count(WEIR_G_EVENTS);
	return 0;
}

/* Which rules a packet matched, split by whether they enforce. */
struct wr_match {
	__u64 enforce;		/* action drop, kill switch off */
	__u64 dry;		/* action dry-run, or any rule under the kill switch */
	__u32 nr_enforce;	/* limits carried by the enforcing rules */
	__u32 nr_dry;
	__u32 agg_enforce;	/* of which rule-wide */
	__u32 agg_dry;
	__u32 first_enforce;	/* lowest rule index in each group */
	__u32 first_dry;
	__u32 npos;		/* the highest position (ev->cell's list) that matched, plus one */
	__u32 class;		/* most critical class among the matching rules */
	__u32 precise;		/* a matching rule needs the precise clock */
	__u32 cookie_always;	/* 1 + index of the first `cookie always` rule a SYN matched */
	__u32 vclass;		/* 1 + the most critical verified-class; 0: none */
};

/*
 * Per-packet scratch space off the entry program's stack (see the stack
 * budget above struct wr_eval): the match result, written by
 * wr_match_rules, and the "started limiting" event a bucket deep in
 * wr_limit_op wants sent, which weir_core sends once the rules are done.
 * Per CPU, and a packet runs to its verdict on one CPU without sleeping, so
 * nothing else touches it meanwhile.
 */
struct wr_scratch {
	struct wr_match m;
	struct weir_key key;	/* the bucket's key; family 0: a rule-wide bucket */
	__u64 uid_li;		/* rule uid << 8 | limit index */
	__u64 now;
	__u64 drops;
	__u32 pending;		/* an event waits to be sent */
	/* A SYN for weir_cookie_syn: its rule's counter slot, SYN-ACK budgets, time, length. */
	__u32 ck_slot;
	__u32 ck_len;
	__u64 ck_now;
	__u64 ck_interval_fp;
	__u64 ck_tolerance;
	__u64 ckd_interval_fp;
	__u64 ckd_tolerance;
	struct weir_fleet_use fu;	/* a new hot fleet key's first value */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wr_scratch);
} wr_scratch SEC(".maps");

#include "state.h"

/*
 * Give the refusals waiting in slot of this CPU's wr_src_drops to their
 * bucket, if wr_state still holds it (an evicted bucket's count is gone
 * with it), and free the slot. Global: verified once, off the paths that
 * call it.
 */
__noinline int wr_src_drops_flush(__u32 slot)
{
	struct weir_src_wait *w = bpf_map_lookup_elem(&wr_src_drops, &slot);
	struct weir_config *cfg;
	struct weir_set *set;
	__u32 zero = 0, idx, i;
	__u64 n;

	if (!w || !w->n)
		return 0;
	n = w->n;
	w->n = 0;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg || !cfg->state_sets)
		return 0;
	idx = wr_state_set(wr_key_hash(&w->key, cfg->state_seed), cfg->state_sets);
	set = bpf_map_lookup_elem(&wr_state, &idx);
	if (!set)
		return 0;
	for (i = 0; i < WEIR_WAYS; i++) {
		struct weir_way *way = &set->way[i];

		if (READ_ONCE(*way_word(way, 0)) == key_word(&w->key, 0) &&
		    *way_word(way, 1) == key_word(&w->key, 1) &&
		    *way_word(way, 2) == key_word(&w->key, 2)) {
			__sync_fetch_and_add(&way->st.drops, n);
			break;
		}
	}
	return 0;
}

/*
 * A bucket refused a packet: count it on the bucket, and if the bucket had
 * been quiet, say that it started limiting. key NULL: a rule-wide bucket,
 * wr_agg[slot].
 *
 * A refusal changes no token, so it need not write the bucket either: a
 * flood that every CPU refuses would otherwise move the bucket's cache line
 * from CPU to CPU on every packet (measured: 2.6 x the cost of one CPU's
 * refusal, with two CPUs refusing at once). So a rule-wide bucket that
 * this CPU saw refuse within WEIR_DROP_BATCH_NS (by last_drop) counts the
 * refusal in wr_agg_drops, this CPU's own; the next refusal past that adds
 * this CPU's count to the bucket's drops and moves last_drop. A rule-wide
 * bucket that keeps refusing is written once a batch period per CPU; last_drop
 * trails the latest refusal by less than one. The quiet spell before an
 * event is measured from it, so it may be short of WEIR_EVENT_QUIET_NS by
 * that much. A per-source bucket's refusals wait the same way in this
 * CPU's slot of wr_src_drops for its key, if the slot is free or already
 * the key's; a slot whose key was not refused here for a batch is given
 * over (wr_src_drops_flush). When the slot is another's, the refusal is
 * written to the bucket as before.
 */
static __always_inline void note_drop(struct weir_state *st, __u64 now,
				      const struct weir_key *key, __u32 uid, __u32 li, int defer,
				      __u32 slot)
{
	struct wr_scratch *sc;
	/*
	 * The one map key of every lookup here (the slot of wr_agg_drops or
	 * wr_src_drops, then 0): one stack slot, in frames that sit on the
	 * deepest call chain (see struct wr_eval).
	 */
	__u32 idx = slot;
	__u64 last = READ_ONCE(st->last_drop), add = 1, drops, *pend;
	/* Signed: another CPU may have stored a time a little ahead of ours. */
	int recent = last && (__s64)(now - last) < (__s64)WEIR_DROP_BATCH_NS;
	struct weir_src_wait *w;

	if (!key) {
		pend = bpf_map_lookup_elem(&wr_agg_drops, &idx);
		if (pend && recent) {
			*pend += 1;
			return;
		}
		if (pend) {
			add += *pend;
			*pend = 0;
		}
	} else {
		idx = wr_src_wait_slot(key);
		w = bpf_map_lookup_elem(&wr_src_drops, &idx);
		if (w) {
			int mine = w->n && key_same(&w->key, key);

			if (recent) {
				/* Another key's, not refused here for a batch: its turn is over. */
				if (!mine && w->n && (__s64)(now - w->at) >= (__s64)WEIR_DROP_BATCH_NS)
					wr_src_drops_flush(idx);
				if (mine || !w->n) {
					if (!mine)
						w->key = *key;
					w->n += 1;
					w->at = now;
					return;
				}
				/* The slot is another key's: this refusal is written. */
			} else if (mine) {
				add += w->n;
				w->n = 0;
			}
		}
	}
	drops = __sync_fetch_and_add(&st->drops, add) + add;
	/* Racy read and store: two CPUs may both report a start; harmless. */
	st->last_drop = now;
	if (now - last < WEIR_EVENT_QUIET_NS && last)
		return;
	if (!defer) {
		wr_event(key, (__u64)uid << 8 | li, now, drops);
		return;
	}
	idx = 0;
	sc = bpf_map_lookup_elem(&wr_scratch, &idx);
	if (!sc)
		return;
	if (key)
		sc->key = *key;
	else
		__builtin_memset(&sc->key, 0, sizeof(sc->key));
	sc->uid_li = (__u64)uid << 8 | li;
	sc->now = now;
	sc->drops = drops;
	sc->pending = 1;
}

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
		wr_make_key(r, li, l, &ev->pkt, &key);
		set = state_set(ev, &key);
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
		wr_make_key(r, li, l, &ev->pkt, &key);
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

/*
 * Every limit of the rule at position i of the packet's cell (ev->cell) in
 * the current phase, under ev->op; 1 stops the walk.
 */
static __always_inline long eval_rule_at(__u32 i, struct wr_eval *ev)
{
	struct weir_ruleset *rs;
	const struct weir_rule *r;
	__u32 rs_idx = ev->rs_idx;
	__u64 idx = i;
	__u32 li, n;

	/*
	 * Bound the index where the verifier sees it: clang spills i as 32
	 * bits and reloads it, losing the range a plain check would give.
	 */
	asm volatile("%[idx] &= %[mask]" : [idx] "+r"(idx) : [mask] "i"(WEIR_MAX_CAND - 1));
	if (i >= WEIR_MAX_CAND)
		return 1;
	if (!(ev->group & (1ULL << idx)))
		return 0;
	/* A key on this frame's stack: ev may be a global function's argument. */
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 1;
	idx = wr_cand_rule(rs, ev->cell, idx);
	asm volatile("%[idx] &= %[mask]" : [idx] "+r"(idx) : [mask] "i"(WEIR_MAX_RULES - 1));
	r = &rs->rules[idx];
	n = r->nr_limits;
	for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++) {
		if (!limit_op(ev, r, li)) {
			if (ev->op != WR_OP_REFUND)
				ev->refused = idx;
			return 1;
		}
	}
	return 0;
}


/* The rule at position pos of ev->cell's list against ev->pkt: if it matches, into m. */
static __always_inline void match_one(const struct weir_ruleset *rs, struct wr_eval *ev,
				      struct wr_match *m, __u32 disabled, __u32 pos)
{
	const struct weir_rule *r;
	__u32 li, agg = 0, i;

	pos &= WEIR_MAX_CAND - 1;
	i = wr_cand_rule(rs, ev->cell, pos) & (WEIR_MAX_RULES - 1);
	r = &rs->rules[i];
	if (!wr_rule_match(r, &ev->pkt))
		return;
	m->npos = pos + 1;
	if (r->verified_class && (!m->vclass || r->verified_class < m->vclass))
		m->vclass = r->verified_class;
	if (r->action == WEIR_ACT_COOKIE && r->cookie == WEIR_COOKIE_ALWAYS &&
	    !disabled && !m->cookie_always &&
	    (ev->pkt.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST |
				  WEIR_TCP_FIN)) == WEIR_TCP_SYN)
		m->cookie_always = i + 1;
	if (r->class < m->class)
		m->class = r->class;
	m->precise |= r->flags & WEIR_RF_PRECISE;
	for (li = 0; li < WEIR_MAX_LIMITS; li++)
		if (li < r->nr_limits && r->limits[li].key == WEIR_KEY_ALL)
			agg++;
	if ((r->action == WEIR_ACT_DROP || r->action == WEIR_ACT_COOKIE) && !disabled) {
		if (!m->enforce)
			m->first_enforce = i;
		m->enforce |= 1ULL << pos;
		m->nr_enforce += r->nr_limits;
		m->agg_enforce += agg;
	} else {
		if (!m->dry)
			m->first_dry = i;
		m->dry |= 1ULL << pos;
		m->nr_dry += r->nr_limits;
		m->agg_dry += agg;
	}
}

/*
 * match_one for a packet's second and later candidates. Global, so the
 * verifier checks the body once, not once per candidate and path.
 */
__noinline int wr_match_one(struct wr_eval *ev, struct wr_match *m, __u32 pos, __u32 disabled)
{
	struct weir_ruleset *rs;
	__u32 rs_idx;

	if (!ev || !m)
		return 0;
	/* A map key from the stack, as in wr_match_rules. */
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (rs)
		match_one(rs, ev, m, disabled, pos);
	return 0;
}

/*
 * Match the live set's rules against ev->pkt: only the candidates its index
 * gives for the packet's protocol and destination port (wr_rule_candidates),
 * lowest first, so the cost follows the rules that may match rather than
 * the number of rules. Each step takes the lowest candidate bit and its
 * index by arithmetic (wr_bit_index). The first candidate, usually the
 * only one, is matched inline; the others through wr_match_one, a global
 * function (a call each), so that the verifier checks the body twice in
 * all: written out or looped inline, 64 copies of it took 6.1's verifier
 * past its million instructions (and a loop, 6.18's too). Global, so the
 * verifier checks it once and the caller sees the masks as unknown values
 * rather than one exact constant per path.
 */
__noinline int wr_match_rules(struct wr_eval *ev, struct wr_match *m, __u32 disabled)
{
	struct weir_ruleset *rs;
	__u32 k, rs_idx, cell;
	__u64 cand;

	if (!ev || !m)
		return 0;
	__builtin_memset(m, 0, sizeof(*m));
	m->class = WEIR_MAX_CLASS;
	/*
	 * A map key from the stack: kernels before 6.2 refuse one that points
	 * into a global function's argument (memory of unknown kind to them).
	 */
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 0;
	cand = wr_rule_candidates(rs, &ev->pkt, &cell);
	ev->cell = cell;
	if (!cand)
		return 0;
	match_one(rs, ev, m, disabled, wr_cand_pop(&cand));
	for (k = 1; k < WEIR_MAX_CAND && cand; k++)
		wr_match_one(ev, m, wr_cand_pop(&cand), disabled);
	return 0;
}

/*
 * Is ev->pkt, a passed packet, an ACK (and nothing else) addressed like
 * the SYNs of an action cookie rule? Then it may carry a cookie's answer
 * (weir_cookie_ack). Only the index's candidates for its protocol and
 * port are visited, as in wr_match_rules: an ACK's cost does not grow with
 * the rules that cannot match it. Global, so verified once and its answer
 * an unknown value to the caller, which splits no paths before the very
 * end.
 */
__noinline int wr_match_cookie_ack(struct wr_eval *ev)
{
	struct weir_ruleset *rs;
	struct weir_config *cfg;
	__u32 k, rs_idx, cell, zero = 0;
	__u64 cand;
	__u8 flags;
	int hit = 0;

	/* ACK, PSH and the ECN bits may come with it; SYN, RST and FIN may not. */
	if (!ev || ev->pkt.proto != WR_IPPROTO_TCP || !(ev->pkt.flags & WR_PKT_L4) ||
	    (ev->pkt.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST |
				  WEIR_TCP_FIN)) != WEIR_TCP_ACK)
		return 0;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg || cfg->disabled)
		return 0;
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs || !rs->cookie_rules)
		return 0;
	cand = wr_rule_candidates(rs, &ev->pkt, &cell);
	flags = ev->pkt.tcp_flags;
	ev->pkt.tcp_flags = WEIR_TCP_SYN;
	for (k = 0; k < WEIR_MAX_CAND && cand; k++) {
		const struct weir_rule *r;

		r = &rs->rules[wr_cand_rule(rs, cell, wr_cand_pop(&cand)) & (WEIR_MAX_RULES - 1)];
		if (r->action == WEIR_ACT_COOKIE && wr_rule_match(r, &ev->pkt)) {
			hit = 1;
			break;
		}
	}
	ev->pkt.tcp_flags = flags;
	return hit;
}

/* bpf_loop callback: eval_rule_at. */
static long eval_rule(__u32 i, void *ctx)
{
	return eval_rule_at(i, ctx);
}

/*
 * The rule walk without bpf_loop (kernels before 5.17): a bounded loop in a
 * global function, so that the verifier checks its passes once, not at
 * every call site.
 */
__noinline int wr_walk_rules(struct wr_eval *ev, __u32 nr)
{
	__u32 i;

	if (!ev)
		return 0;
	for (i = 0; i < WEIR_MAX_CAND && i < nr; i++)
		if (eval_rule_at(i, ev))
			break;
	return 0;
}

/* eval_rule over positions 0 .. nr - 1 of the packet's cell, until one stops the walk. */
static __always_inline void walk_rules(struct wr_eval *ev, __u32 nr)
{
	if (has_bpf_loop)
		bpf_loop(nr, eval_rule, ev, 0);
	else
		wr_walk_rules(ev, nr);
}

/* One op over the group: aggregate buckets first, then per-source ones. */
static __always_inline int run_op(struct wr_eval *ev, __u32 op, __u32 nr_rules,
				  __u32 nr_limits, __u32 nr_agg)
{
	ev->op = op;
	ev->seen = 0;
	ev->refused = -1;
	if (nr_agg) {
		ev->phase = WR_PH_AGG;
		walk_rules(ev, nr_rules);
		if (ev->refused >= 0 || ev->fault)
			return 0;
	}
	/*
	 * The rule-wide limits go first so that a packet they refuse never
	 * creates per-source state: a spoofed flood does not churn wr_state.
	 */
	if (nr_limits > nr_agg) {
		ev->phase = WR_PH_SRC;
		walk_rules(ev, nr_rules);
	}
	return ev->refused < 0 && !ev->fault;
}

/*
 * The common case, inline: rule r's one limit, a token bucket per source.
 * One pass over the set (state_scan) finds the key's way, or the way a
 * new key takes, so a new source costs no second scan and no call. 1 admitted (and charged), 0 refused, -1 take the general
 * path (a way claimed by another CPU first, or a compare-and-swap that
 * kept failing).
 */
static __always_inline int fast_src(struct wr_eval *ev, const struct weir_rule *r)
{
	const struct weir_limit *l = &r->limits[0];
	struct weir_way *way, *victim;
	__u64 inc, tat, next, now, seen;
	struct weir_set *set;
	struct weir_key key;
	int i;

	/* A fleet limit takes the general path, which tells the fleet sync. */
	if (l->algo != WEIR_ALGO_GCRA || l->key != WEIR_KEY_SRC || l->fleet)
		return -1;
	wr_make_key(r, 0, l, &ev->pkt, &key);
	set = state_set(ev, &key);
	if (!set)
		return -1;
	way = state_scan(set, &key, &victim, &seen);
	now = rule_now(ev, r);
	inc = wr_gcra_inc(l->interval_fp, wr_limit_cost(l, &ev->pkt));
	if (!way) {
		/* A new bucket starts full: this packet is its first charge. */
		if (!wr_gcra_admit(0, now, inc, l->tolerance, &next))
			return 0;
		return state_claim(set, victim, seen, &key, next, 0, 0) ? 1 : -1;
	}
	for (i = 0; i < WR_CAS_TRIES; i++) {
		tat = READ_ONCE(way->st.tat);
		if (!wr_gcra_admit(tat, now, inc, l->tolerance, &next)) {
			note_drop(&way->st, now, &key, r->uid, 0, 0, 0);
			return 0;
		}
		if (__sync_val_compare_and_swap(&way->st.tat, tat, next) == tat) {
			/* The way went to another key meanwhile: see wr_limit_op. */
			if (READ_ONCE(*way_word(way, 0)) != key_word(&key, 0))
				__sync_fetch_and_add(&way->st.tat, -inc);
			return 1;
		}
	}
	return -1;
}

/*
 * One matched rule with rule-wide token buckets: check those first,
 * inline. A spoofed flood that they refuse then costs no call and touches
 * no per-source state. 1: every one admits (the general path still charges
 * them), 0: refused.
 */
static __always_inline int agg_admits(struct wr_eval *ev, const struct weir_rule *r)
{
	__u32 li;

	for (li = 0; li < WEIR_MAX_LIMITS; li++) {
		const struct weir_limit *l = &r->limits[li];
		struct weir_state *st;
		__u64 next;
		__u32 slot;

		if (li >= r->nr_limits)
			break;
		if (l->key != WEIR_KEY_ALL || l->algo != WEIR_ALGO_GCRA)
			continue;
		slot = l->agg_slot;
		st = bpf_map_lookup_elem(&wr_agg, &slot);
		if (!st)
			return 1;	/* the general path counts the fault */
		if (!wr_gcra_admit(READ_ONCE(st->tat), rule_now(ev, r),
				   wr_gcra_inc(l->interval_fp, wr_limit_cost(l, &ev->pkt)),
				   l->tolerance, &next)) {
			note_drop(st, rule_now(ev, r), NULL, r->uid, li, 0, slot);
			return 0;
		}
	}
	return 1;
}

/*
 * Check then charge every limit of the group. Returns 1 if admitted (and
 * charged), 0 if refused (nothing charged; ev->refused says by which rule).
 * A fault sets ev->fault and returns 1 (fail open) or 0 (fail closed);
 * contention (WR_EV_CONTENDED) is a refusal by the rule it met, counted.
 */
static __always_inline int eval_group(struct wr_eval *ev, const struct weir_ruleset *rs,
				      __u64 group, __u32 nr_rules, __u32 nr_limits,
				      __u32 nr_agg, __u32 first)
{
	const struct weir_rule *r = &rs->rules[first & (WEIR_MAX_RULES - 1)];

	ev->group = group;
	ev->charged = 0;
	ev->fault = 0;
	ev->refused = -1;
	if (nr_agg && !(group & (group - 1)) && !agg_admits(ev, r)) {
		ev->refused = first & (WEIR_MAX_RULES - 1);
		goto not_admitted;
	}
	if (nr_limits > 1 && !(group & (group - 1))) {
		int o = wr_rule_once(ev, r, nr_limits);

		if (o > 0)
			return 1;
		if (!o) {
			if (!ev->fault)
				ev->refused = first & (WEIR_MAX_RULES - 1);
			goto not_admitted;
		}
		/* A new key or a contended bucket: the general walk, from the start. */
		ev->fault = 0;
		ev->refused = -1;
		ev->charged = 0;
	}
	if (nr_limits == 1) {
		/*
		 * One rule with one limit, the common case: CHARGE alone is
		 * check and charge in one atomic step, no walk needed.
		 */
		int f = nr_agg ? -1 : fast_src(ev, r);

		if (f >= 0) {
			if (f)
				return 1;
			ev->refused = first & (WEIR_MAX_RULES - 1);
			goto not_admitted;
		}
		ev->op = WR_OP_CHARGE;
		ev->phase = nr_agg ? WR_PH_AGG : WR_PH_SRC;
		if (limit_op(ev, r, 0))
			return 1;
		if (ev->fault != WR_EV_FAULT)
			ev->refused = first & (WEIR_MAX_RULES - 1);
		goto not_admitted;
	}
	if (!run_op(ev, WR_OP_CHECK, nr_rules, nr_limits, nr_agg))
		goto not_admitted;
	if (run_op(ev, WR_OP_CHARGE, nr_rules, nr_limits, nr_agg))
		return 1;
	/* Lost a race (or a fault) half-way: undo what this packet charged. */
	if (ev->charged) {
		__s32 refused = ev->refused;
		__u32 fault = ev->fault;

		/* A fault flag would end the refund walk early: clear it meanwhile. */
		ev->fault = 0;
		run_op(ev, WR_OP_REFUND, nr_rules, nr_limits, nr_agg);
		ev->refused = refused;
		ev->fault = fault;
	}
not_admitted:
	if (ev->fault == WR_EV_CONTENDED) {
		/* ev->refused: the rule whose limit met it (eval_rule_at, or above). */
		count(WEIR_G_CONTENDED);
		return 0;
	}
	if (ev->fault) {
		count(WEIR_G_FAULT);
		ev->refused = -1;
		if (ev->fail_closed)
			return 0;
		count(WEIR_G_FAIL_OPEN);
		return 1;
	}
	return 0;
}

static __always_inline void rule_count(const struct weir_ruleset *rs, __s32 i, __u32 len,
				       int what)
{
	struct weir_rule_stats *s;
	__u64 idx = (__u32)i;
	__u32 slot;

	if (i < 0 || i >= WEIR_MAX_RULES)
		return;
	/*
	 * Bound the index where the verifier sees it: 6.1's loses the checks
	 * above when clang reloads i from a spill (see eval_rule_at).
	 */
	asm volatile("%[idx] &= %[mask]" : [idx] "+r"(idx) : [mask] "i"(WEIR_MAX_RULES - 1));
	slot = rs->rules[idx].slot;
	s = bpf_map_lookup_elem(&wr_rule_stats, &slot);
	if (!s)
		return;
	switch (what) {
	case WR_VERDICT_PASS:
		s->passed_pkts++;
		s->passed_bytes += len;
		break;
	case WR_VERDICT_DROP:
		s->dropped_pkts++;
		s->dropped_bytes += len;
		break;
	default:
		/* would-drop: passed, and counted as such */
		s->wdrop_pkts++;
		s->wdrop_bytes += len;
		s->passed_pkts++;
		s->passed_bytes += len;
		break;
	}
}

/*
 * Every matching rule that let the packet through counts it as passed.
 * Global, so verified once: the caller's masks are exact constants per path.
 */
__noinline int wr_count_passed(const struct weir_ruleset *rs, __u64 matched, __u32 len,
			       __u32 cell)
{
	__u32 i;

	if (!rs)
		return 0;
	for (i = 0; i < WEIR_MAX_CAND; i++) {
		if (!matched)
			break;
		if (matched & 1)
			rule_count(rs, wr_cand_rule(rs, cell, i), len, WR_VERDICT_PASS);
		matched >>= 1;
	}
	return 0;
}

/*
 * mask (positions in cell's list) without rule ri's position: a dry-run
 * rule that refused is not counted as passed too. Global, and run only
 * when a dry-run rule refuses: the walks need not note where a refusal
 * came from (a byte written on every refusal took 6.1's verifier 38k
 * instructions further).
 */
__noinline __u64 wr_mask_without(const struct weir_ruleset *rs, __u64 mask, __u32 cell,
				 __s32 ri)
{
	__u32 k;

	if (!rs)
		return mask;
	for (k = 0; k < WEIR_MAX_CAND; k++)
		if ((mask & (1ULL << k)) && (__s32)wr_cand_rule(rs, cell, k) == ri)
			return mask & ~(1ULL << k);
	return mask;
}

#include "shed.h"

/* What weir_cookie_syn needs of rule r, into the per-CPU scratch. */
static __always_inline void ck_stash(struct wr_scratch *sc, const struct weir_rule *r, __u64 now,
				     __u32 len)
{
	sc->ck_slot = r->slot;
	sc->ck_len = len;
	sc->ck_now = now;
	sc->ck_interval_fp = r->ck_interval_fp;
	sc->ck_tolerance = r->ck_tolerance;
	sc->ckd_interval_fp = r->ckd_interval_fp;
	sc->ckd_tolerance = r->ckd_tolerance;
}

/* A pure SYN: the only packet a cookie answers. */
static __always_inline int pure_syn(const struct wr_pkt *p)
{
	return p->proto == WR_IPPROTO_TCP && (p->flags & WR_PKT_L4) &&
	       (p->tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST | WEIR_TCP_FIN)) ==
		       WEIR_TCP_SYN;
}

/*
 * The class a packet of class cls is shed as, for rules whose most
 * critical verified-class is vclass - 1: that class if its source completed
 * a handshake within the verified TTL, else cls. Global: its answer is an
 * unknown value to the caller, which splits no paths.
 */
__noinline int wr_verified_class(const struct wr_pkt *p, __u32 vclass, __u32 cls, __u64 now)
{
	struct weir_verified_key k = {};
	struct weir_config *cfg;
	__u32 zero = 0;
	__u64 *at;

	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!p || !cfg || !cfg->verified_ttl_ns || !vclass || vclass - 1 >= cls)
		return cls;
	k.family = p->family;
	k.addr[0] = p->saddr[0];
	if (p->family == 6) {
		k.addr[1] = p->saddr[1];
		k.addr[2] = p->saddr[2];
		k.addr[3] = p->saddr[3];
	}
	at = bpf_map_lookup_elem(&wr_verified, &k);
	if (!at || now - READ_ONCE(*at) > cfg->verified_ttl_ns)
		return cls;
	count(WEIR_G_VERIFIED);
	return vclass - 1;
}

#include "capture.h"

/* The event a bucket in wr_limit_op deferred (note_drop), sent from here. */
static __always_inline void send_pending(struct wr_scratch *sc)
{
	if (!sc->pending)
		return;
	sc->pending = 0;
	wr_event(sc->key.family ? &sc->key : NULL, sc->uid_li, sc->now, sc->drops);
}

/*
 * The verdict on one frame. frame_len is its whole length; segs the
 * packets it stands for (a GSO super-packet at TC: more than 1). The
 * entry's context: xctx at XDP, skb at TC (the other NULL), for the
 * capture's copy of a judged frame.
 */
static __always_inline int weir_core(const void *data, const void *data_end, __u32 frame_len,
				       __u32 segs, struct xdp_md *xctx, struct __sk_buff *skb)
{
	struct weir_ruleset *rs;
	/* For the capture: WR_WHY(reason, deciding rule + 1, flags). */
	__u32 why = WEIR_CR_NO_RULE;
	struct weir_config *cfg;
	struct wr_eval ev = {};
	__u64 enforce = 0, dry = 0, matched;
	struct weir_shed *shed = NULL;
	__u32 cap_cls = 0, use_cap = 0;
	struct wr_scratch *sc;
	struct wr_match *m;
	__u32 zero = 0;
	__u32 disabled;
	/*
	 * This CPU's global counters for the parse and the lists (a per-CPU
	 * array: the lookup is inlined). After the rule walk each count looks
	 * them up again: a pointer kept across the walk takes a stack slot,
	 * and on 6.1 that slot takes the deepest call chain from 480 to the
	 * 512-byte limit (frames are rounded up to 32 bytes).
	 */
	struct weir_globals *g = bpf_map_lookup_elem(&wr_global, &zero);
	int res;

	/*
	 * Cannot fail (one entry, key 0). Checked once here, so that the
	 * verifier does not follow the rest of the program once with the
	 * counters and once without.
	 */
	if (!g)
		return WR_VERDICT_PASS;
	gcount(g, WEIR_G_PACKETS);
	if (segs > 1) {
		ev.pkt.segs = segs > 0xffff ? 0xffff : segs;
		ev.pkt.flags = WR_PKT_GSO;
	}
	res = wr_parse(data, data_end, frame_len, &ev.pkt);
	if (res == WR_PARSE_MALFORMED && xctx && has_frags) {
		__u32 full = bpf_xdp_get_buff_len(xctx);

		if (full > frame_len)
			res = wr_parse(data, data_end, full, &ev.pkt);
	}
	if (res == WR_PARSE_NON_IP) {
		gcount(g, WEIR_G_NON_IP);
		return WR_VERDICT_PASS;
	}
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg) {
		gcount(g, WEIR_G_FAULT);
		gcount(g, WEIR_G_FAIL_OPEN);
		return WR_VERDICT_PASS;
	}
	if (res == WR_PARSE_MALFORMED) {
		gcount(g, WEIR_G_MALFORMED);
		why = WEIR_CR_MALFORMED;
		if (cfg->malformed_pass)
			goto pass;
		goto drop;
	}
	gcount(g, WEIR_G_PARSED);
	if (ev.pkt.flags & WR_PKT_ND)
		gcount(g, WEIR_G_ND);

	/*
	 * Deny before allow: a source on both lists is denied. An explicit
	 * deny wins over the neighbour-discovery pass too: ND from a denied
	 * source is dropped, from others it passes as before.
	 */
	if ((cfg->lists & (WEIR_L_DENY4 | WEIR_L_DENY6)) &&
	    on_list(&wr_deny4, &wr_deny6, &ev.pkt, cfg)) {
		gcount(g, WEIR_G_DENIED);
		why = WEIR_CR_DENY;
		goto drop;
	}
	if ((cfg->lists & (WEIR_L_ALLOW4 | WEIR_L_ALLOW6)) &&
	    on_list(&wr_allow4, &wr_allow6, &ev.pkt, cfg)) {
		gcount(g, WEIR_G_ALLOWED);
		gcount(g, WEIR_G_PASSED);
		capture(xctx, skb, cfg, WEIR_CV_PASSED, WEIR_CR_ALLOW);
		return WR_VERDICT_PASS;
	}

	disabled = cfg->disabled;
	ev.rs_idx = cfg->active & 1;
	ev.fail_closed = cfg->fail_closed;
	ev.seed = cfg->state_seed;
	ev.sets = cfg->state_sets;
	rs = bpf_map_lookup_elem(&wr_rulesets, &ev.rs_idx);
	if (!rs)
		goto pass;

	sc = bpf_map_lookup_elem(&wr_scratch, &zero);
	if (!sc) {
		gcount(g, WEIR_G_FAULT);
		gcount(g, WEIR_G_FAIL_OPEN);
		goto pass;
	}
	sc->pending = 0;
	m = &sc->m;
	wr_match_rules(&ev, m, disabled);
	matched = m->enforce | m->dry;

	/*
	 * Shedding by class, then reserved capacity, before any rule limit:
	 * a shed packet consumes no tokens. Neighbour discovery that no rule
	 * names is never shed.
	 */
	shed = bpf_map_lookup_elem(&wr_shed, &zero);
	if (shed && (matched || !(ev.pkt.flags & WR_PKT_ND))) {
		__u32 cls = (matched ? m->class : shed->default_class) & WEIR_MAX_CLASS;
		__u64 th;

		/* A verified source of a rule with a verified-class is shed as that class. */
		if (m->vclass)
			cls = wr_verified_class(&ev.pkt, m->vclass, cls, clock_now(cfg, 0)) &
			      WEIR_MAX_CLASS;
		th = shed->threshold[cls];

		class_count(cls, ev.pkt.len, 0);
		if (cls && th && !(shed->flags & WEIR_SHED_OFF) &&
		    (!shed->expires_ns || clock_now(cfg, 0) <= shed->expires_ns) &&
		    (__u64)bpf_get_prandom_u32() < th) {
			class_count(cls, ev.pkt.len, 1);
			count(WEIR_G_SHED);
			why = WEIR_CR_SHED;
			goto drop;
		}
		if (shed->cap[0].total.interval_fp || shed->cap[1].total.interval_fp) {
			/*
			 * The jiffies clock is exact for capacity: the controller
			 * gives its buckets a tenth of a second of burst (25 ticks
			 * at HZ=250), never under the two ticks GCRA needs.
			 */
			ev.now = clock_now(cfg, 0);
			cap_cls = cls;
			if (!wr_capacity_op(shed, cls, ev.pkt.len, ev.now, 0)) {
				class_count(cls, ev.pkt.len, 2);
				count(WEIR_G_CAPACITY);
				why = WEIR_CR_CAPACITY;
				goto drop;
			}
			use_cap = 1;
		}
	}
	if (!matched) {
		count(WEIR_G_NO_RULE);
		goto pass;
	}
	if (m->cookie_always) {
		/* `cookie always`: the SYN is answered, whatever the limits say. */
		__u32 ri = (m->cookie_always - 1) & (WEIR_MAX_RULES - 1);

		ck_stash(sc, &rs->rules[ri], clock_now(cfg, 0), ev.pkt.len);
		rule_count(rs, ri, ev.pkt.len, WR_VERDICT_DROP);
		capture(xctx, skb, cfg, WEIR_CV_DROPPED, WR_WHY(WEIR_CR_COOKIE, ri + 1, 0));
		return WR_VERDICT_COOKIE;
	}
	if (!use_cap)
		ev.now = clock_now(cfg, 0);
	ev.now_p = clock_mode == WEIR_CLOCK_AUTO && m->precise ? clock_now(cfg, 1) : ev.now;
	enforce = m->enforce;
	dry = m->dry;

	if (enforce &&
	    !eval_group(&ev, rs, enforce, m->npos, m->nr_enforce, m->agg_enforce,
			m->first_enforce)) {
		rule_count(rs, ev.refused, ev.pkt.len, WR_VERDICT_DROP);
		send_pending(sc);
		if (ev.refused >= 0 && pure_syn(&ev.pkt) &&
		    rs->rules[ev.refused & (WEIR_MAX_RULES - 1)].action == WEIR_ACT_COOKIE) {
			/* Refused by an action cookie rule: answered instead. */
			ck_stash(sc, &rs->rules[ev.refused & (WEIR_MAX_RULES - 1)], ev.now, ev.pkt.len);
			capture(xctx, skb, cfg, WEIR_CV_DROPPED,
				WR_WHY(WEIR_CR_COOKIE, (ev.refused & (WEIR_MAX_RULES - 1)) + 1, 0));
			return WR_VERDICT_COOKIE;
		}
		/* refused -1: a fault under fail closed. */
		why = ev.refused >= 0 ?
			WR_WHY(WEIR_CR_RULE, (ev.refused & (WEIR_MAX_RULES - 1)) + 1, 0) :
			WEIR_CR_FAULT;
		goto drop;
	}
	/* A passed packet is captured as the first rule's it matched (a would-drop as its rule's). */
	why = WR_WHY(WEIR_CR_RULE, WR_WHY_FIRST, 0);
	if (dry && !eval_group(&ev, rs, dry, m->npos, m->nr_dry, m->agg_dry, m->first_dry)) {
		/* The refusing rule counts a would-drop (which also passes). */
		count(WEIR_G_WOULD_DROP);
		if (ev.refused >= 0) {
			rule_count(rs, ev.refused, ev.pkt.len, WR_VERDICT_WOULD_DROP);
			dry = wr_mask_without(rs, dry, ev.cell, ev.refused);
			why = WR_WHY(WEIR_CR_RULE, (ev.refused & (WEIR_MAX_RULES - 1)) + 1,
				     WEIR_CF_WOULD_DROP);
		}
	}
	send_pending(sc);
	/* Every rule that let the packet through; one (the usual case) needs no walk. */
	matched = enforce | dry;
	if (matched && !(matched & (matched - 1)))
		rule_count(rs, enforce ? m->first_enforce : m->first_dry, ev.pkt.len,
			   WR_VERDICT_PASS);
	else if (matched)
		wr_count_passed(rs, matched, ev.pkt.len, ev.cell);
pass:
	if (use_cap)
		wr_capacity_op(shed, cap_cls, ev.pkt.len, ev.now, 1);
	/*
	 * The entry counts it passed or dropped once the cookie is checked;
	 * the capture does not see such an ACK (its verdict is the cookie
	 * program's).
	 */
	if (wr_match_cookie_ack(&ev))
		return WR_VERDICT_ACK;
	count(WEIR_G_PASSED);
	capture(xctx, skb, cfg, WEIR_CV_PASSED, why);
	return WR_VERDICT_PASS;

drop:
	if (cfg->disabled) {
		/* Kill switch: pass, but say what would have been dropped. */
		count(WEIR_G_WOULD_DROP);
		count(WEIR_G_PASSED);
		capture(xctx, skb, cfg, WEIR_CV_PASSED, why | WR_WHY(0, 0, WEIR_CF_WOULD_DROP));
		return WR_VERDICT_PASS;
	}
	count(WEIR_G_DROPPED);
	capture(xctx, skb, cfg, WEIR_CV_DROPPED, why);
	return WR_VERDICT_DROP;
}

/*
 * Multi-buffer XDP (BPF_F_XDP_HAS_FRAGS, asked for by the loader where the
 * kernel has it: user/lib/kernel_features.h says why the section is plain
 * "xdp"): frames longer than one buffer (jumbo MTUs) come as a linear
 * head plus fragments. The headers sit in the head; length fields are
 * checked against the whole buffer (bpf_xdp_get_buff_len), which is only
 * measured when they reach past the head (see weir_core): the call costs
 * about 20 ns here, on every packet otherwise.
 */
#include "cookie.h"

/*
 * The cookie verdicts where no cookie is made: the SYN dropped, the ACK
 * passed, and counted so (TC, and XDP on a kernel without the helpers,
 * where no action cookie rule is accepted).
 */
static __always_inline int cookie_fallback(int v)
{
	if (v == WR_VERDICT_COOKIE) {
		count(WEIR_G_DROPPED);
		return WR_VERDICT_DROP;
	}
	count(WEIR_G_PASSED);
	return WR_VERDICT_PASS;
}

SEC("xdp")
int weir_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int v = weir_core(data, data_end, data_end - data, 1, ctx, NULL);

	if (v == WR_VERDICT_COOKIE || v == WR_VERDICT_ACK) {
		/* The cookie programs: no return from here unless the slot is empty. */
		if (has_syncookie)
			bpf_tail_call(ctx, &wr_cookie_progs,
				      v == WR_VERDICT_COOKIE ? WEIR_CK_PROG_SYN : WEIR_CK_PROG_ACK);
		v = cookie_fallback(v);
	}
	return v == WR_VERDICT_DROP ? XDP_DROP : XDP_PASS;
}

SEC("tc")
int weir_tc(struct __sk_buff *skb)
{
	__u32 len = skb->len;
	__u32 want = len < WR_TC_PULL ? len : WR_TC_PULL;
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	int v;

	/* Headers may sit in paged data; pull them into the head only then. */
	if (data + want > data_end) {
		bpf_skb_pull_data(skb, want);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}
	/* GRO and GSO hand TC super-packets: charge each the segments it carries. */
	v = weir_core(data, data_end, len, skb->gso_segs, NULL, skb);
	/* No cookies at TC: the controller refuses action cookie rules in tc mode. */
	if (v == WR_VERDICT_COOKIE || v == WR_VERDICT_ACK)
		v = cookie_fallback(v);
	return v == WR_VERDICT_DROP ? TC_ACT_SHOT : TC_ACT_OK;
}

/*
 * Measures the jiffies clock's offset from CLOCK_MONOTONIC for the loader,
 * which runs it through BPF_PROG_TEST_RUN for a few ticks: the smallest
 * ktime - jiffies x tick seen is the offset at the start of a tick, so
 * jiffies x tick + offset never runs ahead of the precise clock. Never
 * attached.
 */
SEC("xdp")
int weir_clock_sync(struct xdp_md *ctx)
{
	struct weir_config *cfg;
	__u32 zero = 0;
	__u64 tick, off;

	if (CONFIG_HZ <= 0 || CONFIG_HZ > 10000)
		return XDP_PASS;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg)
		return XDP_PASS;
	tick = WR_NSEC_PER_SEC / CONFIG_HZ;
	off = bpf_ktime_get_ns() - bpf_jiffies64() * tick;
	if (cfg->clock_tick != tick || (__s64)(off - cfg->clock_off) < 0) {
		cfg->clock_off = off;
		cfg->clock_tick = tick;
	}
	return XDP_PASS;
}

#include "sockops.h"
