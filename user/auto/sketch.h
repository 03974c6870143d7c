/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Space-Saving (Metwally, Agrawal and El Abbadi, "Efficient computation of
 * frequent and top-k elements in data streams", 2005): the heaviest keys of
 * a stream in WR_SS_K counters. A key not among them replaces the smallest
 * counter and inherits its count (err records how much of the count may be
 * another key's), so every key more frequent than total / WR_SS_K is
 * certain to hold a counter, and its count errs only upwards, by at most
 * err. Keys are 64-bit hashes; each counter keeps the index of an item
 * that brought its key in (rep), so the caller can rebuild the value.
 */
#ifndef WEIR_AUTO_SKETCH_H
#define WEIR_AUTO_SKETCH_H

#include <linux/types.h>

/* Counters of a sketch: keys above 1/16 of the stream are certain to hold one. */
#define WR_SS_K		16

struct wr_ss_item {
	__u64 key;
	__u32 count;
	__u32 err;		/* of count, at most this much was another key's */
	__u32 rep;		/* the caller's index of an item with this key */
};

struct wr_ss {
	struct wr_ss_item it[WR_SS_K];
	unsigned int used;
};

/* One more item of key (rep: the caller's index of it). s starts zeroed. */
void wr_ss_add(struct wr_ss *s, __u64 key, __u32 rep);
/* The heaviest counter, the first on a tie; NULL for an empty sketch. */
const struct wr_ss_item *wr_ss_top(const struct wr_ss *s);

#endif /* WEIR_AUTO_SKETCH_H */
