/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pseudo-random numbers of the tests and tools: xorshift64*, so the
 * same seed gives the same sequence in every suite and tool that uses it
 * (traces a test depends on stay put). Fast, never for anything that must
 * be unpredictable. The state must not be zero.
 */
#ifndef WEIR_RAND_H
#define WEIR_RAND_H

#include <stdint.h>

static inline uint64_t wr_xorshift64s(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

#endif /* WEIR_RAND_H */
