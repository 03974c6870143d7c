// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Space-Saving sketch (sketch.h). A linear scan of the WR_SS_K
 * counters per item: with 16 of them that costs less than a hash table's
 * upkeep, and the chooser feeds it a few thousand sampled packets.
 */
#include <stddef.h>

#include "auto/sketch.h"

void wr_ss_add(struct wr_ss *s, __u64 key, __u32 rep)
{
	unsigned int i, min = 0;

	for (i = 0; i < s->used; i++) {
		if (s->it[i].key == key) {
			s->it[i].count++;
			return;
		}
		if (s->it[i].count < s->it[min].count)
			min = i;
	}
	if (s->used < WR_SS_K) {
		s->it[s->used++] = (struct wr_ss_item){ key, 1, 0, rep };
		return;
	}
	/*
	 * The smallest counter's key is replaced; its count carries over,
	 * an overestimate by at most err.
	 */
	s->it[min].key = key;
	s->it[min].err = s->it[min].count;
	s->it[min].count++;
	s->it[min].rep = rep;
}

const struct wr_ss_item *wr_ss_top(const struct wr_ss *s)
{
	const struct wr_ss_item *best = NULL;
	unsigned int i;

	for (i = 0; i < s->used; i++)
		if (!best || s->it[i].count > best->count)
			best = &s->it[i];
	return best;
}
