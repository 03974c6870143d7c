/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Refusals: counted on their bucket (batched per CPU in wr_agg_drops and
 * wr_src_drops), and the event that says a bucket started limiting, sent
 * at once or deferred to the end of the walk through wr_scratch.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_EVENT_H
#define WEIR_BPF_EVENT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_state.h"
#include "weir_limiter.h"
#include "maps.h"
#include "count.h"
#include "eval.h"

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

/* The event a bucket in wr_limit_op deferred (note_drop), sent from here. */
static __always_inline void send_pending(struct wr_scratch *sc)
{
	if (!sc->pending)
		return;
	sc->pending = 0;
	wr_event(sc->key.family ? &sc->key : NULL, sc->uid_li, sc->now, sc->drops);
}

#endif /* WEIR_BPF_EVENT_H */
