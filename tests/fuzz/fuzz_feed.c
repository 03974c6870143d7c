// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: wr_feed_parse(), the parser of blocklist feeds (what
 * `weir list feed` and the daemon take from any HTTP server or file). Any
 * bytes: it must return 0 or -EINVAL, never read past the input, and:
 *  - on success, every entry is IPv4 or IPv6 with a length of 1 to 32 / 128,
 *    its host bits clear, the action given; printed as CIDRs, one a line,
 *    the entries parse back to the same list;
 *  - on failure, nothing is kept and the message names a line (or the NUL).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/libweir.h"
#include "weir_limiter.h"

struct wr_opts opts = { .root = "/nonexistent" };

#define FAIL(...)                                             \
	do {                                                  \
		fprintf(stderr, "fuzz_feed: " __VA_ARGS__);   \
		fputc('\n', stderr);                          \
		abort();                                      \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wr_feed_set s = { 0 }, back = { 0 };
	char err[400] = "";
	char *copy, *text;
	size_t i, off = 0;
	int r;

	/* An exact-size copy: ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = wr_feed_parse(copy, size, WEIR_FA_ALLOW, &s, err, sizeof(err));
	free(copy);
	if (r && r != -EINVAL)
		FAIL("returned %d", r);
	if (r) {
		if (s.n || s.v)
			FAIL("entries kept after a failure");
		if (strncmp(err, "line ", 5) && strncmp(err, "a NUL byte", 10))
			FAIL("error names no line: \"%s\"", err);
		return 0;
	}
	text = malloc(s.n * 64 + 1);
	if (!text)
		return 0;
	for (i = 0; i < s.n; i++) {
		const struct wr_feed_entry *e = &s.v[i];
		unsigned int w, max = e->family == 4 ? 32 : 128;
		char c[64];

		if (e->family != 4 && e->family != 6)
			FAIL("entry %zu: family %u", i, e->family);
		if (!e->plen || e->plen > max)
			FAIL("entry %zu: length %u", i, e->plen);
		if (e->action != WEIR_FA_ALLOW)
			FAIL("entry %zu: action %u", i, e->action);
		for (w = 0; w < 4; w++) {
			__u32 m = e->family == 4 ? (w ? 0 : wr_prefix_word(e->plen, 0))
						 : wr_prefix_word(e->plen, w);

			if (e->addr[w] & ~m)
				FAIL("entry %zu: host bits set", i);
		}
		format_cidr(e->family, e->addr, e->plen, c, sizeof(c));
		off += sprintf(text + off, "%s\n", c);
	}
	if (wr_feed_parse(text, off, WEIR_FA_ALLOW, &back, err, sizeof(err)))
		FAIL("printed entries do not parse back: %s", err);
	if (back.n != s.n || (s.n && memcmp(back.v, s.v, s.n * sizeof(*s.v))))
		FAIL("printed entries parse back to another list (%zu, %zu)", s.n, back.n);
	free(text);
	wr_feed_set_free(&s);
	wr_feed_set_free(&back);
	return 0;
}
