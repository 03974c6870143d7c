// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Strict parsing of command-line words: numbers are checked for errno,
 * trailing junk and range; callers name the bad word in their error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "util/util.h"
#include "weir_limiter.h"

bool is_prefix(const char *word, const char *full)
{
	size_t n = strlen(word);

	return n > 0 && n <= strlen(full) && strncmp(word, full, n) == 0;
}

/*
 * Run the command of an object that argv[0] names: the first in table
 * order that the word starts (as in ip(8) and bpftool). No word is a usage
 * error; "help" prints usage to stdout.
 */
int wr_cmd_select(const struct wr_cmd *cmds, size_t n, const char *object, int argc,
		  char **argv, void *ctx, void (*usage)(void *ctx))
{
	size_t i;

	if (argc < 1 || !strcmp(argv[0], "help")) {
		usage(ctx);
		return argc < 1 ? -EINVAL : 0;
	}
	for (i = 0; i < n; i++)
		if (cmds[i].exact ? !strcmp(argv[0], cmds[i].name) : is_prefix(argv[0], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1, ctx);
	pr_err("unknown %s command \"%s\"", object, argv[0]);
	usage(ctx);
	return -EINVAL;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* Digits only: strtoull would skip leading space and take a sign. */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Split "123kpps" into a number and a unit; the unit starts at the first letter. */
static int split_unit(const char *s, uint64_t *num, const char **unit)
{
	char digits[32];
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0 || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, n);
	digits[n] = '\0';
	*unit = s + n;
	return parse_u64(digits, 0, UINT64_MAX, num);
}

static int mul(uint64_t a, uint64_t b, uint64_t *out)
{
	if (b && a > UINT64_MAX / b)
		return -ERANGE;
	*out = a * b;
	return 0;
}

/*
 * Rates: packets (pps, kpps, mpps), bits (bit, kbit, mbit, gbit) or bytes
 * (byte, kbyte, mbyte, gbyte), all per second; k/m/g are powers of 1000.
 * Byte and bit rates become bytes/s; a bit rate must be whole bytes.
 */
int parse_rate(const char *s, uint64_t *rate, int *cost)
{
	static const struct {
		const char *unit;
		uint64_t mult;
		int cost;
		bool bits;
	} units[] = {
		{ "pps", 1, WEIR_COST_PKT, false },
		{ "kpps", 1000, WEIR_COST_PKT, false },
		{ "mpps", 1000000, WEIR_COST_PKT, false },
		{ "bit", 1, WEIR_COST_BYTE, true },
		{ "kbit", 1000, WEIR_COST_BYTE, true },
		{ "mbit", 1000000, WEIR_COST_BYTE, true },
		{ "gbit", 1000000000, WEIR_COST_BYTE, true },
		{ "byte", 1, WEIR_COST_BYTE, false },
		{ "kbyte", 1000, WEIR_COST_BYTE, false },
		{ "mbyte", 1000000, WEIR_COST_BYTE, false },
		{ "gbyte", 1000000000, WEIR_COST_BYTE, false },
	};
	const char *unit;
	uint64_t num, v;
	size_t i;

	if (split_unit(s, &num, &unit))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcasecmp(unit, units[i].unit))
			continue;
		if (mul(num, units[i].mult, &v))
			return -ERANGE;
		if (units[i].bits) {
			if (v % 8)
				return -EINVAL;
			v /= 8;
		}
		if (v == 0 || wr_gcra_interval(v) == 0)
			return -ERANGE;
		*rate = v;
		*cost = units[i].cost;
		return 0;
	}
	return -EINVAL;
}

static const struct {
	const char *name;
	__u32 ms;
} periods[] = {
	{ "s", 1000 }, { "sec", 1000 }, { "min", 60000 }, { "m", 60000 },
	{ "h", 3600000 }, { "hour", 3600000 }, { "day", 86400000 }, { "d", 86400000 },
};

/*
 * A rate over a period: RATE as parse_rate() takes it (per second), or
 * COUNT[UNIT]/PERIOD with PERIOD s, min, h or day: 10/s, 100/min, 500/h
 * (packets), 64kbyte/min, 1gbit/h (bytes). rate is then per period_ms.
 */
int parse_rate_per(const char *s, uint64_t *rate, int *cost, uint32_t *period_ms)
{
	char buf[64];
	const char *slash = strchr(s, '/'), *unit;
	uint64_t num;
	size_t i;

	*period_ms = 1000;
	if (!slash)
		return parse_rate(s, rate, cost);
	if ((size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, slash - s);
	buf[slash - s] = '\0';
	for (i = 0; i < ARRAY_SIZE(periods); i++)
		if (!strcmp(slash + 1, periods[i].name))
			break;
	if (i == ARRAY_SIZE(periods))
		return -EINVAL;
	*period_ms = periods[i].ms;
	/* A bare count is packets; a unit must be a byte or bit unit, not "pps". */
	if (split_unit(buf, &num, &unit))
		return -EINVAL;
	if (!*unit) {
		if (num == 0)
			return -ERANGE;
		*rate = num;
		*cost = WEIR_COST_PKT;
	} else if (parse_rate(buf, rate, cost) || *cost != WEIR_COST_BYTE) {
		return -EINVAL;
	}
	return wr_gcra_interval_per(*rate, *period_ms) ? 0 : -ERANGE;
}

/* A rate as the CLI takes it: per second in its own units, else COUNT/PERIOD. */
void format_rate_per(uint64_t rate, int cost, uint32_t period_ms, char *buf, size_t len)
{
	size_t i;

	if (!period_ms || period_ms == 1000) {
		format_rate(rate, cost, buf, len);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(periods); i++)
		if (periods[i].ms == period_ms && strlen(periods[i].name) > 1)
			break;
	if (i == ARRAY_SIZE(periods)) {
		snprintf(buf, len, "%" PRIu64 "/%ums", rate, period_ms);
		return;
	}
	if (cost == WEIR_COST_PKT) {
		snprintf(buf, len, "%" PRIu64 "/%s", rate, periods[i].name);
	} else {
		char unit[40];

		format_rate(rate, cost, unit, sizeof(unit));
		snprintf(buf, len, "%s/%s", unit, periods[i].name);
	}
}

/* A count, optionally with a byte unit: 1500, 64kbyte, 2mbyte. */
int parse_size(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t mult;
	} units[] = {
		{ "", 1 }, { "byte", 1 }, { "kbyte", 1000 }, { "mbyte", 1000000 },
		{ "gbyte", 1000000000 }, { "k", 1000 }, { "m", 1000000 },
	};
	const char *unit;
	uint64_t num;
	size_t i;

	if (split_unit(s, &num, &unit))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcasecmp(unit, units[i].unit))
			return mul(num, units[i].mult, out);
	return -EINVAL;
}

/* ADDR or ADDR/LEN, IPv4 or IPv6; host bits must be zero. */
int parse_cidr(const char *s, struct wr_cidr *c)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash;
	uint64_t plen;
	__u32 w;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	memset(c, 0, sizeof(*c));
	slash = strchr(s, '/');
	if (slash)
		buf[slash - s] = '\0';
	if (inet_pton(AF_INET, buf, c->addr) == 1)
		c->family = 4;
	else if (inet_pton(AF_INET6, buf, c->addr) == 1)
		c->family = 6;
	else
		return -EINVAL;
	c->plen = c->family == 4 ? 32 : 128;
	if (slash) {
		if (parse_u64(slash + 1, 0, c->plen, &plen))
			return -EINVAL;
		c->plen = plen;
	}
	for (w = 0; w < 4; w++) {
		__u32 m = c->family == 4 ? (w ? 0 : wr_prefix_word(c->plen, 0))
					 : wr_prefix_word(c->plen, w);

		if (c->addr[w] & ~m)
			return -EINVAL;	/* host bits set: almost always a typo */
	}
	return 0;
}

int parse_port_range(const char *s, __u16 *lo, __u16 *hi)
{
	char buf[16];
	const char *dash = strchr(s, '-');
	uint64_t a, b;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	if (dash) {
		buf[dash - s] = '\0';
		if (parse_u64(buf, 0, 65535, &a) || parse_u64(dash + 1, 0, 65535, &b) || a > b)
			return -EINVAL;
	} else {
		if (parse_u64(buf, 0, 65535, &a))
			return -EINVAL;
		b = a;
	}
	*lo = a;
	*hi = b;
	return 0;
}

static const struct {
	const char *name;
	__u8 proto;
} protos[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "icmpv6", 58 },
	{ "gre", 47 }, { "esp", 50 }, { "ah", 51 }, { "sctp", 132 },
};

int parse_proto(const char *s, __u8 *proto)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(protos); i++) {
		if (!strcasecmp(s, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	}
	if (parse_u64(s, 0, 255, &v))
		return -EINVAL;
	*proto = v;
	return 0;
}

const char *proto_name(__u8 proto, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(protos); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	snprintf(buf, len, "%u", proto);
	return buf;
}

static const struct {
	const char *name;
	__u8 bit;
} tcp_flag_names[] = {
	{ "fin", WEIR_TCP_FIN }, { "syn", WEIR_TCP_SYN }, { "rst", WEIR_TCP_RST },
	{ "psh", WEIR_TCP_PSH }, { "ack", WEIR_TCP_ACK }, { "urg", WEIR_TCP_URG },
	{ "ece", WEIR_TCP_ECE }, { "cwr", WEIR_TCP_CWR },
};

static int parse_flag_list(char *s, __u8 *out)
{
	char *tok, *save = NULL;
	size_t i;

	*out = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(tcp_flag_names); i++)
			if (!strcasecmp(tok, tcp_flag_names[i].name))
				break;
		if (i == ARRAY_SIZE(tcp_flag_names))
			return -EINVAL;
		*out |= tcp_flag_names[i].bit;
	}
	return *out ? 0 : -EINVAL;
}

/*
 * "syn" alone means a connection attempt: SYN set, ACK clear. Otherwise
 * FLAGS[/MASK]: the flags in MASK (default: FLAGS) must equal FLAGS.
 */
int parse_tcp_flags(const char *s, __u8 *value, __u8 *mask)
{
	char buf[64], *slash;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	if (!strcasecmp(s, "syn")) {
		*value = WEIR_TCP_SYN;
		*mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
		return 0;
	}
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (*buf && parse_flag_list(buf, value))
		return -EINVAL;
	if (!*buf)
		*value = 0;
	if (slash) {
		if (parse_flag_list(slash, mask))
			return -EINVAL;
	} else {
		*mask = *value;
	}
	if ((*value & *mask) != *value || !*mask)
		return -EINVAL;
	return 0;
}

static void flag_list(__u8 bits, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(tcp_flag_names) && off < len; i++)
		if (bits & tcp_flag_names[i].bit)
			off += snprintf(buf + off, len - off, "%s%s", off ? "," : "",
					tcp_flag_names[i].name);
}

void format_tcp_flags(__u8 value, __u8 mask, char *buf, size_t len)
{
	char v[64], m[64];

	if (value == WEIR_TCP_SYN && mask == (WEIR_TCP_SYN | WEIR_TCP_ACK)) {
		snprintf(buf, len, "syn");
		return;
	}
	flag_list(value, v, sizeof(v));
	flag_list(mask, m, sizeof(m));
	/* Bare "syn" reads back as SYN without ACK, so "syn/syn" must say its mask. */
	if (value == mask && value != WEIR_TCP_SYN)
		snprintf(buf, len, "%s", v);
	else
		snprintf(buf, len, "%s/%s", v, m);
}

void format_cidr(int family, const __u32 *addr, unsigned int plen, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, plen);
}

/* The shortest exact spelling of a rate in the CLI's own units. */
void format_rate(uint64_t rate, int cost, char *buf, size_t len)
{
	static const char *pkt[] = { "pps", "kpps", "mpps" };
	static const char *byte[] = { "byte", "kbyte", "mbyte", "gbyte" };
	const char **u = cost == WEIR_COST_PKT ? pkt : byte;
	int n = cost == WEIR_COST_PKT ? 3 : 4, i = 0;

	/* Byte rates that are whole kbit/mbit/gbit read better in bits. */
	if (cost == WEIR_COST_BYTE) {
		static const char *bit[] = { "bit", "kbit", "mbit", "gbit" };
		uint64_t bits = rate * 8;
		int j = 0;

		while (j < 3 && bits % 1000 == 0 && bits >= 1000) {
			bits /= 1000;
			j++;
		}
		if (j >= 2) {
			snprintf(buf, len, "%" PRIu64 "%s", bits, bit[j]);
			return;
		}
	}
	while (i < n - 1 && rate % 1000 == 0 && rate >= 1000) {
		rate /= 1000;
		i++;
	}
	snprintf(buf, len, "%" PRIu64 "%s", rate, u[i]);
}

/*
 * A duration in nanoseconds: a bare number of seconds (600 or 600.5, as
 * fail2ban's bantime), or terms NUMBER[.FRACTION]UNIT one after another
 * (90s, 10m, 1h30m, 1.5h, 250ms, CrowdSec's 3h59m58.0251s), units ms, s,
 * m, h, d. No sign, no spaces. -EINVAL for anything else, -ERANGE past
 * 2^64 ns.
 */
int wr_parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ms", 1000000ULL }, { "s", 1000000000ULL }, { "m", 60000000000ULL },
		{ "h", 3600000000000ULL }, { "d", 86400000000000ULL },
	};
	uint64_t total = 0, whole, part, scale;
	const char *p = s;
	size_t i, n;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	if (!parse_u64(s, 0, UINT64_MAX / 1000000000ULL, &whole)) {
		*ns = whole * 1000000000ULL;
		return 0;
	}
	while (*p) {
		const char *start = p;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (whole = 0; *p >= '0' && *p <= '9'; p++) {
			if (whole > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			whole = whole * 10 + (uint64_t)(*p - '0');
		}
		/* Up to 9 digits of fraction count (nanoseconds of a second); more are cut. */
		part = 0;
		scale = 1;
		if (*p == '.') {
			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			for (; *p >= '0' && *p <= '9'; p++)
				if (scale < 1000000000ULL) {
					part = part * 10 + (uint64_t)(*p - '0');
					scale *= 10;
				}
		}
		/* A bare number, fraction and all, is seconds (600.5); only alone. */
		if (!*p && s == start) {
			i = 1;
			n = 0;
			goto unit;
		}
		for (i = 0; i < ARRAY_SIZE(units); i++) {
			n = strlen(units[i].unit);
			/* "m" must not take the "m" of "ms" */
			if (!strncmp(p, units[i].unit, n) && !(n == 1 && p[0] == 'm' && p[1] == 's'))
				break;
		}
		if (i == ARRAY_SIZE(units))
			return -EINVAL;
unit:
		p += n;
		if (whole > UINT64_MAX / units[i].ns)
			return -ERANGE;
		whole *= units[i].ns;
		/* part / scale of a unit, in ns: unit ns is at most 8.64e13, part < 1e9 */
		whole += (uint64_t)((unsigned __int128)part * units[i].ns / scale);
		if (total > UINT64_MAX - whole)
			return -ERANGE;
		total += whole;
	}
	*ns = total;
	return 0;
}

/* Seconds as a duration: 9m59s, 1d2h, 45s. */
void wr_format_secs(__u64 secs, char *buf, size_t len)
{
	static const struct { char unit; __u64 secs; } units[] = {
		{ 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
	};
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(units) && off < len; i++) {
		if (secs < units[i].secs && !(i == ARRAY_SIZE(units) - 1 && !off))
			continue;
		off += snprintf(buf + off, len - off, "%llu%c",
				(unsigned long long)(secs / units[i].secs), units[i].unit);
		secs %= units[i].secs;
		if (!secs)
			break;
	}
}
