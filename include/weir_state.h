/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ways of one wr_state set (struct weir_set): finding a key, and
 * claiming a way for a new one with compare-and-swap. The data path runs
 * this on the map's memory; the daemon's fleet sync runs the same code on
 * the same memory, mapped into userspace, to fold the fleet's use into a
 * bucket. Pure C: the __sync builtins are atomics in BPF (-mcpu=v3) and in
 * GCC alike.
 */
#ifndef WEIR_STATE_H
#define WEIR_STATE_H

#include "weir.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef READ_ONCE
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#endif

/* Word i of a key (it is 8-byte aligned): keys hash and compare as three words. */
static __always_inline __u64 key_word(const struct weir_key *k, int i)
{
	return ((const __u64 *)k)[i];
}

static __always_inline __u64 *way_word(struct weir_way *w, int i)
{
	return &((__u64 *)&w->key)[i];
}

/* Are keys a and b the same (their three words)? */
static __always_inline int key_same(const struct weir_key *a, const struct weir_key *b)
{
	return key_word(a, 0) == key_word(b, 0) && key_word(a, 1) == key_word(b, 1) &&
	       key_word(a, 2) == key_word(b, 2);
}

/* The slot of wr_src_drops where key k's refusals wait (struct weir_src_wait). */
static __always_inline __u32 wr_src_wait_slot(const struct weir_key *k)
{
	return ((key_word(k, 0) ^ key_word(k, 1) ^ key_word(k, 2)) * 0x9E3779B97F4A7C15ULL) >>
	       (64 - WEIR_SRC_WAIT_SHIFT);
}

/*
 * One pass over the set: the way holding key k, or NULL (no bucket, which
 * reads as a full one). On the way, *victim is set to the way a new key
 * would take, and *seen to its first key word: an empty way if there is
 * one, else the way closest to full, the smallest TAT (a TAT in the past
 * is a full bucket, so nothing is lost) or the earliest end of a window.
 * Taking a bucket that is still limiting makes it read as full again:
 * eviction only ever admits more. *victim is NULL if every way is being
 * filled in.
 */
static __always_inline struct weir_way *state_scan(struct weir_set *set,
						     const struct weir_key *k,
						     struct weir_way **victim, __u64 *seen)
{
	__u64 k0 = key_word(k, 0), k1 = key_word(k, 1), k2 = key_word(k, 2);
	__u64 best = ~0ULL;
	__u32 i;

	*victim = NULL;
	*seen = 0;
	for (i = 0; i < WEIR_WAYS; i++) {
		struct weir_way *w = &set->way[i];
		__u64 w0 = READ_ONCE(*way_word(w, 0)), at;

		if (w0 == k0 && *way_word(w, 1) == k1 && *way_word(w, 2) == k2)
			return w;
		if (w0 == WEIR_WAY_BUSY || (*victim && !*seen))
			continue;
		if (!w0) {
			*victim = w;
			*seen = 0;
			continue;
		}
		at = READ_ONCE(w->idle_at);
		if (!at)
			at = READ_ONCE(w->st.tat);
		if (at < best) {
			best = at;
			*victim = w;
			*seen = w0;
		}
	}
	return NULL;
}

/*
 * Give key k the way state_scan chose, holding the state of its first
 * charge. The way is claimed by a compare-and-swap of its first key word
 * (from what the scan saw) to WEIR_WAY_BUSY, filled in, and published by
 * a second one (a full barrier), so no reader ever matches a half-written
 * key.
 *
 * Two CPUs that meet the same new key at once must not each claim a way
 * for it (each would then admit a fresh bucket's worth). So after its
 * claim a CPU looks at the set's other ways: if one holds k, or is being
 * claimed by someone else, it hands its way back untouched and says so.
 * Both claims are full barriers and each CPU looks only after its own, so
 * of two racing claimants at least one sees the other (both may back off;
 * the caller scans again). 0 when the way was lost or handed back.
 */
static __always_inline int state_claim(struct weir_set *set, struct weir_way *victim,
				       __u64 seen, const struct weir_key *k, __u64 tat,
				       __u64 aux, __u64 idle_at)
{
	__u64 k0 = key_word(k, 0), k1 = key_word(k, 1), k2 = key_word(k, 2);
	__u32 i;

	if (!victim ||
	    __sync_val_compare_and_swap(way_word(victim, 0), seen, WEIR_WAY_BUSY) != seen)
		return 0;
	for (i = 0; i < WEIR_WAYS; i++) {
		struct weir_way *w = &set->way[i];
		__u64 w0;

		if (w == victim)
			continue;
		w0 = READ_ONCE(*way_word(w, 0));
		if (w0 == WEIR_WAY_BUSY ||
		    (w0 == k0 && *way_word(w, 1) == k1 && *way_word(w, 2) == k2)) {
			/* Nothing of the way was written yet: its old key is whole. */
			__sync_val_compare_and_swap(way_word(victim, 0), WEIR_WAY_BUSY, seen);
			return 0;
		}
	}
	victim->st.tat = tat;
	victim->st.aux = aux;
	victim->st.drops = 0;
	victim->st.last_drop = 0;
	victim->idle_at = idle_at;
	*way_word(victim, 1) = k1;
	*way_word(victim, 2) = k2;
	__sync_val_compare_and_swap(way_word(victim, 0), WEIR_WAY_BUSY, k0);
	return 1;
}

#endif /* WEIR_STATE_H */
