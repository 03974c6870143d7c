// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the strict argument parsers of user/util/args.c, which the
 * CLI and the config file share. The first byte picks the parser (its value
 * mod 8: rate, size, CIDR, ports, proto, tcp-flags, rate per period, u64
 * with bounds picked by the value / 8), the rest
 * is the word (NUL-terminated, as argv is). On success each result must be
 * in range and survive the round trip through the matching formatter:
 * what `rule list` prints, `rule add` reads back to the same value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/libweir.h"
#include "weir_limiter.h"

struct wr_opts opts = { .root = "/nonexistent" };

#define FAIL(...)                                             \
	do {                                                  \
		fprintf(stderr, "fuzz_args: " __VA_ARGS__);   \
		fputc('\n', stderr);                          \
		abort();                                      \
	} while (0)

/* s with bytes outside printable ASCII as \xNN, for messages (static buffer). */
static const char *esc(const char *s)
{
	static char buf[4 * 256 + 1];
	size_t n = 0;

	for (; *s && n < sizeof(buf) - 5; s++) {
		unsigned char c = *s;

		if (c < 0x20 || c > 0x7e || c == '\\')
			n += snprintf(buf + n, sizeof(buf) - n, "\\x%02x", c);
		else
			buf[n++] = c;
	}
	buf[n] = '\0';
	return buf;
}

static void rate(const char *s)
{
	uint64_t v, v2;
	int cost, cost2;
	char buf[64];

	if (parse_rate(s, &v, &cost))
		return;
	if (!v || !wr_gcra_interval(v) || (cost != WEIR_COST_PKT && cost != WEIR_COST_BYTE))
		FAIL("parse_rate(\"%s\") = %llu cost %d", esc(s), (unsigned long long)v, cost);
	format_rate(v, cost, buf, sizeof(buf));
	if (parse_rate(buf, &v2, &cost2) || v2 != v || cost2 != cost)
		FAIL("rate \"%s\" = %llu/%d prints as \"%s\", which reads back as %llu/%d", esc(s),
		     (unsigned long long)v, cost, buf, (unsigned long long)v2, cost2);
}

static void rate_per(const char *s)
{
	uint64_t v, v2;
	uint32_t per, per2;
	int cost, cost2;
	char buf[96];

	if (parse_rate_per(s, &v, &cost, &per))
		return;
	if (!v || !per || !wr_gcra_interval_per(v, per) ||
	    (cost != WEIR_COST_PKT && cost != WEIR_COST_BYTE))
		FAIL("parse_rate_per(\"%s\") = %llu cost %d per %u ms", esc(s),
		     (unsigned long long)v, cost, per);
	format_rate_per(v, cost, per, buf, sizeof(buf));
	if (parse_rate_per(buf, &v2, &cost2, &per2) || v2 != v || cost2 != cost || per2 != per)
		FAIL("rate \"%s\" = %llu/%d per %u ms prints as \"%s\", which reads back as "
		     "%llu/%d per %u ms", esc(s), (unsigned long long)v, cost, per, buf,
		     (unsigned long long)v2, cost2, per2);
}

static void size(const char *s)
{
	static const struct {
		const char *unit;
		uint64_t mult;
	} units[] = {
		{ "", 1 }, { "byte", 1 }, { "kbyte", 1000 }, { "mbyte", 1000000 },
		{ "gbyte", 1000000000 }, { "k", 1000 }, { "m", 1000000 },
	};
	uint64_t v, num = 0, want = 0;
	size_t i, nd = strspn(s, "0123456789");
	int found = 0;

	if (parse_size(s, &v))
		return;
	/* The value again: decimal digits times a unit, computed without overflow. */
	for (i = 0; i < nd; i++) {
		if (num > (UINT64_MAX - (s[i] - '0')) / 10)
			FAIL("parse_size(\"%s\") accepted a number beyond 64 bits", esc(s));
		num = num * 10 + (s[i] - '0');
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(s + nd, units[i].unit))
			continue;
		found = 1;
		if (units[i].mult > 1 && num > UINT64_MAX / units[i].mult)
			FAIL("parse_size(\"%s\") = %llu overflowed", esc(s), (unsigned long long)v);
		want = num * units[i].mult;
	}
	if (!nd || !found || v != want)
		FAIL("parse_size(\"%s\") = %llu, want %llu", esc(s), (unsigned long long)v,
		     (unsigned long long)want);
}

static void cidr(const char *s)
{
	struct wr_cidr c, c2;
	char buf[80];
	__u32 w, m;

	if (parse_cidr(s, &c))
		return;
	if ((c.family != 4 && c.family != 6) || c.plen > (c.family == 4 ? 32u : 128u))
		FAIL("parse_cidr(\"%s\"): family %d plen %u", esc(s), c.family, c.plen);
	for (w = 0; w < 4; w++) {
		m = c.family == 4 ? (w ? 0 : wr_prefix_word(c.plen, 0)) : wr_prefix_word(c.plen, w);
		if (c.addr[w] & ~m)
			FAIL("parse_cidr(\"%s\"): host bits set in word %u", esc(s), w);
	}
	format_cidr(c.family, c.addr, c.plen, buf, sizeof(buf));
	if (parse_cidr(buf, &c2) || memcmp(&c, &c2, sizeof(c)))
		FAIL("CIDR \"%s\" prints as \"%s\", which does not read back the same", esc(s),
		     buf);
}

static void ports(const char *s)
{
	__u16 lo, hi, lo2, hi2;
	char buf[32];

	if (parse_port_range(s, &lo, &hi))
		return;
	if (lo > hi)
		FAIL("parse_port_range(\"%s\") = %u-%u", esc(s), lo, hi);
	if (lo == hi)
		snprintf(buf, sizeof(buf), "%u", lo);
	else
		snprintf(buf, sizeof(buf), "%u-%u", lo, hi);
	if (parse_port_range(buf, &lo2, &hi2) || lo2 != lo || hi2 != hi)
		FAIL("ports \"%s\" print as \"%s\", which does not read back the same", esc(s),
		     buf);
}

static void proto(const char *s)
{
	__u8 p, p2;
	char buf[16];
	const char *name;

	if (parse_proto(s, &p))
		return;
	name = proto_name(p, buf, sizeof(buf));
	if (parse_proto(name, &p2) || p2 != p)
		FAIL("proto \"%s\" = %u prints as \"%s\", which does not read back the same",
		     esc(s), p, name);
}

static void tcp_flags(const char *s)
{
	__u8 v, m, v2, m2;
	char buf[128];

	if (parse_tcp_flags(s, &v, &m))
		return;
	if ((v & m) != v || !m)
		FAIL("parse_tcp_flags(\"%s\") = %#x/%#x", esc(s), v, m);
	format_tcp_flags(v, m, buf, sizeof(buf));
	if (parse_tcp_flags(buf, &v2, &m2) || v2 != v || m2 != m)
		FAIL("tcp-flags \"%s\" = %#x/%#x print as \"%s\", which reads back as %#x/%#x",
		     esc(s), v, m, buf, v2, m2);
}

static void u64(const char *s, uint8_t sel)
{
	static const uint64_t bounds[][2] = {
		{ 0, UINT64_MAX }, { 1, 65535 }, { 0, 255 }, { 1, 1ULL << 28 }, { 0, 3 },
	};
	const uint64_t *b = bounds[sel % 5];
	uint64_t v;

	if (parse_u64(s, b[0], b[1], &v))
		return;
	if (v < b[0] || v > b[1])
		FAIL("parse_u64(\"%s\", %llu, %llu) = %llu", esc(s), (unsigned long long)b[0],
		     (unsigned long long)b[1], (unsigned long long)v);
	if (!*s || strspn(s, "0123456789") != strlen(s))
		FAIL("parse_u64 accepted \"%s\"", esc(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char *s;

	if (n < 1 || n > 256)
		return 0;
	s = malloc(n);
	if (!s)
		return 0;
	memcpy(s, data + 1, n - 1);
	s[n - 1] = '\0';
	switch (data[0] % 8) {
	case 0: rate(s); break;
	case 1: size(s); break;
	case 2: cidr(s); break;
	case 3: ports(s); break;
	case 4: proto(s); break;
	case 5: tcp_flags(s); break;
	case 6: rate_per(s); break;
	default: u64(s, data[0] / 8); break;
	}
	free(s);
	return 0;
}
