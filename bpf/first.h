/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The first stage's cache of refusals: a source whose bucket refused it is
 * dropped, until that bucket would admit again, for one lookup right after
 * the parse, without the lists, the rule walk, shedding or the limits.
 *
 * Exact, not a guess. A slot is filled only when a rule's limit refused a
 * packet (wr_refused_fill), only for a cell of the rule index whose every
 * candidate is cacheable (wr_rule_cacheable: action drop, matched on what
 * the slot is keyed by, token buckets per source or rule-wide, none of the
 * fleet's), and it holds until the time the rule's refusing buckets
 * admit a packet of the least cost again: a token bucket's TAT moves only
 * when it admits, and nothing is admitted before then. So every packet
 * that meets the slot would have been refused by the full path too. A
 * slot counts only under the config generation it was filled in
 * (weir_config.cache_gen), which every rule set commit and every list,
 * feed and switch change moves on. A bucket evicted from wr_state (which
 * reads as full) is seen within WEIR_DROP_BATCH_NS (refused_hit); a refund
 * racing the fill on another CPU is not followed. A rule-wide refusal of
 * a rule that does not match on the source is also kept for any source
 * (WEIR_CACHE_ANY): a spoofed flood's packets meet it whatever their source.
 *
 * What a dropped packet counts is what a refusal counts: the global
 * dropped (and cached) counter, its rule's drop, and its bucket's drop
 * through note_drop (batched per CPU as the walk's are, which `top`, the
 * events and the penalty box read, and an event if the bucket had been
 * quiet).
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_FIRST_H
#define WEIR_BPF_FIRST_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "weir_state.h"
#include "maps.h"
#include "clock.h"
#include "eval.h"
#include "event.h"

/*
 * Per CPU: a source's packets arrive on one CPU under RSS, and a slot is
 * written without atomics. Not pinned: a new program starts empty.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_REFUSED_SLOTS);
	__type(key, __u32);
	__type(value, struct weir_refused);
} wr_refused SEC(".maps");

/* The slot of packet p: a hash of its source, protocol and destination port. */
static __always_inline __u32 refused_slot(const struct wr_pkt *p)
{
	__u32 h = ((__u32)p->dport | (__u32)p->proto << 16) * 0x9e3779b1u;
	int i;

WR_UNROLL
	for (i = 0; i < 4; i++)
		h = (h ^ p->saddr[i]) * 0x9e3779b1u;
	return (h >> (32 - WEIR_REFUSED_SHIFT)) & (WEIR_REFUSED_SLOTS - 1);
}

/* The slot of an any-source refusal of packets like p (its protocol and destination port). */
static __always_inline __u32 refused_slot_any(const struct wr_pkt *p)
{
	__u32 h = (((__u32)p->dport | (__u32)p->proto << 16) ^ 0xa5a5u) * 0x85ebca6bu;

	return (h >> (32 - WEIR_REFUSED_SHIFT)) & (WEIR_REFUSED_SLOTS - 1);
}

/*
 * A drop the slot took, counted on its bucket as the walk counts a refusal
 * (note_drop: batched per CPU, an event if the bucket had been quiet). 1
 * when counted; 0 when the per-source bucket is gone (its way holds
 * another key or none: evicted, which reads as a full bucket): the slot
 * is emptied and the packet goes the full path. Global: verified once, off
 * weir_core.
 */
__noinline int wr_refused_note(__u32 slot)
{
	struct weir_refused *e = bpf_map_lookup_elem(&wr_refused, &slot);
	struct weir_config *cfg;
	struct weir_set *set;
	struct weir_way *w;
	__u32 idx = 0;

	__u64 now;

	cfg = bpf_map_lookup_elem(&wr_config, &idx);
	if (!e || !cfg)
		return 1;
	now = clock_now(cfg, e->precise);
	idx = e->loc;
	if (!e->key.family) {
		struct weir_state *st = bpf_map_lookup_elem(&wr_agg, &idx);

		if (st) {
			note_drop(st, now, NULL, e->uid, e->li, 0, idx);
			e->noted = now;
		}
		return 1;
	}
	set = bpf_map_lookup_elem(&wr_state, &idx);
	if (!set)
		return 1;
	w = &set->way[e->way & (WEIR_WAYS - 1)];
	if (READ_ONCE(*way_word(w, 0)) != key_word(&e->key, 0) ||
	    *way_word(w, 1) != key_word(&e->key, 1) || *way_word(w, 2) != key_word(&e->key, 2)) {
		e->until = 0;
		return 0;
	}
	note_drop(&w->st, now, &e->key, e->uid, e->li, 0, 0);
	e->noted = now;
	return 1;
}

/*
 * The drop of slot e at now, counted where note_drop would count it
 * while its bucket refuses within a batch (see note_drop): this CPU's
 * waiting count of the rule-wide bucket, or of the key when its slot of
 * wr_src_drops is the key's or free. 1 done, 0 when the bucket itself
 * must be looked at (wr_refused_note).
 */
static __always_inline int refused_wait(struct weir_refused *e, __u64 now)
{
	struct weir_src_wait *w;
	__u32 idx = e->loc;
	__u64 *pend;

	if (!e->noted || (__s64)(now - e->noted) >= (__s64)WEIR_DROP_BATCH_NS)
		return 0;
	if (!e->key.family) {
		pend = bpf_map_lookup_elem(&wr_agg_drops, &idx);
		if (!pend)
			return 0;
		*pend += 1;
		return 1;
	}
	idx = wr_src_wait_slot(&e->key);
	w = bpf_map_lookup_elem(&wr_src_drops, &idx);
	if (!w)
		return 0;
	if (!w->n) {
		w->key = e->key;
	} else if (!key_same(&w->key, &e->key)) {
		return 0;
	}
	w->n += 1;
	w->at = now;
	return 1;
}

/*
 * The cached refusal of packet p, if one is in force: its slot, or
 * WEIR_REFUSED_SLOTS when none.
 */
static __always_inline __u32 refused_find(const struct wr_pkt *p, const struct weir_config *cfg,
					  struct weir_refused **ep, __u64 *nowp)
{
	__u32 slot = refused_slot(p);
	struct weir_refused *e = bpf_map_lookup_elem(&wr_refused, &slot);
	__u64 sig = wr_refused_sig(p), now;

	if (!e || e->gen != cfg->cache_gen || e->sig != sig || e->saddr[0] != p->saddr[0] ||
	    e->saddr[1] != p->saddr[1] || e->saddr[2] != p->saddr[2] ||
	    e->saddr[3] != p->saddr[3]) {
		/* Not this source's: a refusal of any source's packets like it? */
		if (!(cfg->cache_on & WEIR_CACHE_ANY))
			return WEIR_REFUSED_SLOTS;
		slot = refused_slot_any(p);
		e = bpf_map_lookup_elem(&wr_refused, &slot);
		if (!e || e->gen != cfg->cache_gen || e->sig != (sig | WEIR_REFUSED_ANY))
			return WEIR_REFUSED_SLOTS;
	}
	now = clock_now(cfg, e->precise);
	if (now >= e->until)
		return WEIR_REFUSED_SLOTS;
	*ep = e;
	*nowp = now;
	return slot;
}

/*
 * The rule that refused ev's packet (ev->refused, not a fault) may have
 * its refusal cached: when its buckets admit a packet of the least cost
 * again (the latest of them), and which bucket that is, into the packet's
 * slot. Nothing when the packet's cell is not cacheable or no bucket
 * refuses such a packet now (this packet cost more). Global: verified
 * once, run once a refusal spell per source and CPU.
 */
__noinline int wr_refused_fill(struct wr_eval *ev)
{
	const struct weir_config *cfg;
	const struct weir_ruleset *rs;
	const struct weir_rule *r;
	struct weir_key key;
	struct weir_refused *e;
	struct weir_set *set;
	__u64 now, until = 0, until_a = 0, tat, inc, t;
	__u32 zero = 0, idx, cell, ri, li, w, loc = 0, way = 0, bli = 0, slot, loc_a = 0, li_a = 0;

	if (!ev || ev->refused < 0)
		return 0;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &idx);
	if (!cfg || !rs)
		return 0;
	cell = ev->cell & (WEIR_IDX_CELLS - 1);
	if (!((rs->cache_cells[cell / 64] >> (cell % 64)) & 1))
		return 0;
	ri = ev->refused & (WEIR_MAX_RULES - 1);
	r = &rs->rules[ri];
	now = rule_now(ev, r);
	for (li = 0; li < WEIR_MAX_LIMITS && li < r->nr_limits; li++) {
		const struct weir_limit *l = &r->limits[li];
		struct weir_state *st = NULL;
		__u32 at = 0, aw = 0;

		if (l->key == WEIR_KEY_ALL) {
			at = l->agg_slot;
			st = bpf_map_lookup_elem(&wr_agg, &at);
			__builtin_memset(&key, 0, sizeof(key));
		} else {
			wr_make_key(r, li, l, &ev->pkt, &key);
			at = wr_state_set(wr_key_hash(&key, ev->seed), ev->sets);
			set = ev->sets ? bpf_map_lookup_elem(&wr_state, &at) : NULL;
			if (!set)
				continue;
			for (w = 0; w < WEIR_WAYS; w++) {
				struct weir_way *wy = &set->way[w];

				if (READ_ONCE(*way_word(wy, 0)) == key_word(&key, 0) &&
				    *way_word(wy, 1) == key_word(&key, 1) &&
				    *way_word(wy, 2) == key_word(&key, 2)) {
					st = &wy->st;
					aw = w;
					break;
				}
			}
		}
		if (!st)
			continue;	/* no bucket: it reads as full, and admits */
		tat = READ_ONCE(st->tat);
		inc = wr_gcra_inc(l->interval_fp, 1);
		/* Admitted once max(tat, now) + inc - now <= tolerance: from tat + inc - tolerance. */
		if (inc > l->tolerance)
			t = now + WEIR_REFUSED_MAX_NS;	/* admits nothing (rate 0) */
		else if (tat + inc > l->tolerance)
			t = tat + inc - l->tolerance;
		else
			t = 0;
		if (t > until) {
			until = t;
			loc = at;
			way = aw;
			bli = li;
		}
		if (l->key == WEIR_KEY_ALL && t > until_a) {
			until_a = t;
			loc_a = at;
			li_a = li;
		}
	}
	/*
	 * A rule-wide bucket refuses every packet the rule matches, and a rule
	 * that does not match on the source matches every source's packet like
	 * this one: its refusal holds for all of them (a spoofed flood).
	 */
	if ((cfg->cache_on & WEIR_CACHE_ANY) && !(r->match & WEIR_M_SRC) && until_a > now) {
		if (until_a - now > WEIR_REFUSED_MAX_NS)
			until_a = now + WEIR_REFUSED_MAX_NS;
		slot = refused_slot_any(&ev->pkt);
		e = bpf_map_lookup_elem(&wr_refused, &slot);
		if (e) {
			__builtin_memset(e, 0, sizeof(*e));
			e->sig = wr_refused_sig(&ev->pkt) | WEIR_REFUSED_ANY;
			e->gen = cfg->cache_gen;
			e->rule = ri;
			e->slot = r->slot;
			e->until = until_a;
			e->loc = loc_a;
			e->uid = r->uid;
			e->li = li_a;
			e->precise = clock_mode == WEIR_CLOCK_AUTO && (r->flags & WEIR_RF_PRECISE);
		}
	}
	if (until <= now)
		return 0;
	if (until - now > WEIR_REFUSED_MAX_NS)
		until = now + WEIR_REFUSED_MAX_NS;
	slot = refused_slot(&ev->pkt);
	e = bpf_map_lookup_elem(&wr_refused, &slot);
	if (!e)
		return 0;
	__builtin_memcpy(e->saddr, ev->pkt.saddr, sizeof(e->saddr));
	e->sig = wr_refused_sig(&ev->pkt);
	e->gen = cfg->cache_gen;
	e->rule = ri;
	e->slot = r->slot;
	e->until = until;
	/* The winning bucket's key again (one key on this frame: the stack budget). */
	bli &= WEIR_MAX_LIMITS - 1;
	if (r->limits[bli].key == WEIR_KEY_ALL)
		__builtin_memset(&e->key, 0, sizeof(e->key));
	else
		wr_make_key(r, bli, &r->limits[bli], &ev->pkt, &e->key);
	e->loc = loc;
	e->uid = r->uid;
	e->way = way;
	e->li = bli;
	e->precise = clock_mode == WEIR_CLOCK_AUTO && (r->flags & WEIR_RF_PRECISE);
	e->noted = 0;
	return 0;
}

/*
 * A packet the first stage drops: counted on its bucket and its rule as a
 * refusal. Its slot is e's (refused_find). 0 if the bucket turned out
 * gone: the packet is not dropped here, but goes the full path. Within a
 * batch of the slot's last look at its bucket (refused_wait) the bucket
 * is not looked at, so an eviction is seen within WEIR_DROP_BATCH_NS.
 */
static __always_inline int refused_hit(struct weir_refused *e, __u32 slot, __u32 len, __u64 now)
{
	struct weir_rule_stats *s;
	__u32 sslot = e->slot;

	if (!refused_wait(e, now) && !wr_refused_note(slot))
		return 0;
	s = bpf_map_lookup_elem(&wr_rule_stats, &sslot);
	if (s) {
		s->dropped_pkts++;
		s->dropped_bytes += len;
	}
	return 1;
}

#endif /* WEIR_BPF_FIRST_H */
