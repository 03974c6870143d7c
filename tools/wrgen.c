// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrgen: paced test traffic for weir's end-to-end tests and the demo.
 *
 * Each source sends --rate packets per second for --duration seconds (or
 * --count packets). Sources are interleaved round-robin on one schedule:
 * packet k of the whole run is due at start + k / (sources * rate), and is
 * never sent before that instant, so a source never gets ahead of its rate.
 * A late packet is sent as soon as possible (the schedule does not slip), so
 * the number sent per source is fixed by rate, duration and count alone.
 * With --slip-us, a packet later than that moves the rest of the schedule
 * back instead, so a stall is not followed by a catch-up burst.
 *
 * Waiting is an absolute-deadline clock_nanosleep() on CLOCK_MONOTONIC up to
 * a few microseconds before the deadline, then a busy-wait for the rest.
 *
 * UDP from given sources uses one UDP socket per source, bound with
 * IP_FREEBIND / IPV6_FREEBIND. TCP SYNs go out through a raw IPv4 socket with
 * IP_HDRINCL, or one raw IPPROTO_TCP IPv6 socket per source, bound to it.
 * --spoof-prefix builds whole IP packets (IP_HDRINCL / IPV6_HDRINCL) with a
 * random source inside the prefix for every packet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/filter.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOOL_NAME "wrgen"
#include "toolutil.h"
#include "rand.h"

/* Most sources one run may name. */
#define MAX_SOURCES		256
/* Highest per-source or aggregate rate accepted, packets/s. */
#define MAX_RATE		10000000.0
/* Longest run accepted, seconds. */
#define MAX_DURATION		86400.0
/* Payload bytes when --size is not given. */
#define DEFAULT_SIZE		64
/* Largest UDP payload that fits an IPv4 datagram. */
#define MAX_SIZE		65507
/* Busy-wait this long before each deadline instead of sleeping, by default. */
#define DEFAULT_SPIN_US		50
/* Longest busy-wait accepted, microseconds. */
#define MAX_SPIN_US		100000
/* Largest --slip-us accepted, microseconds. */
#define MAX_SLIP_US		10000000
/* A run that falls this far behind its schedule stops (keeps runtime bounded). */
#define GRACE_NS		(5 * NSEC_PER_SEC)
/* Payload marker: "SLG1" in network byte order. */
#define PAYLOAD_MAGIC		0x534c4731U
/* Ephemeral range that per-packet source ports cycle through. */
#define EPHEMERAL_BASE		32768
#define EPHEMERAL_SPAN		28232
/* TTL / hop limit of packets built here. */
#define BUILT_TTL		64
/* Advertised window and MSS of the SYNs built here. */
#define SYN_WINDOW		64240
#define SYN_MSS4		1460
#define SYN_MSS6		1440
/* IPv4 header, no options. */
#define IP4_HLEN		20
/* IPv6 fixed header. */
#define IP6_HLEN		40
/* UDP header. */
#define UDP_HLEN		8
/* TCP header plus a 4-byte MSS option. */
#define SYN_HLEN		24
/* Room for the largest packet built here. */
#define PKT_BUF			(IP6_HLEN + UDP_HLEN + MAX_SIZE)

/*
 * What is sent: UDP, TCP SYNs, or TCP ACKs with random sequence and
 * acknowledgment numbers (a forged answer to a SYN cookie); the two TCP
 * kinds are sent alike.
 */
enum proto { PROTO_UDP, PROTO_TCP_SYN, PROTO_TCP_ACK };
/* The TCP flags of build_syn's segments: SYN, or what --proto tcp-ack/rst/fin/synack says. */
static uint8_t tcp_flags = 0x02;

/* Leading bytes of every UDP payload (truncated if --size is smaller). */
struct payload_hdr {
	uint32_t magic;		/* PAYLOAD_MAGIC, network order */
	uint32_t src_index;	/* index of the source in --src, network order */
	uint64_t seq;		/* per-source sequence number, network order */
} __attribute__((packed));

struct source {
	struct addr addr;
	char name[INET6_ADDRSTRLEN + 4];	/* room for "/128" in spoof mode */
	int fd;
	uint64_t sent;
	uint64_t errors;
	uint64_t first_ns;
	uint64_t last_ns;
	int first_errno;
};

struct opts {
	struct addr dst;
	unsigned int dport;
	int sport;			/* -1: ephemeral */
	enum proto proto;
	struct source src[MAX_SOURCES];
	unsigned int nsrc;
	bool spoof;
	const char *spoof_arg;
	struct addr spoof_net;
	unsigned int spoof_plen;
	double rate;
	double duration;
	uint64_t count;			/* 0: no limit */
	unsigned int size;
	uint64_t spin_ns;
	uint64_t slip_ns;		/* 0: catch up, never slip */
	bool json;
	bool any_addr;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s --dst ADDR --dport N --src ADDR[,ADDR...] --rate PPS --duration SEC\n"
"             [--proto udp|tcp-syn|tcp-ack|tcp-rst|tcp-fin|tcp-synack] [--count N]\n"
"             [--size BYTES] [--sport N]\n"
"             [--spin-us N] [--slip-us N] [--json] [--any-addr]\n"
"       %s --dst ADDR --dport N --spoof-prefix CIDR --rate PPS --duration SEC [...]\n"
"\n"
"Paced test traffic. Every source sends --rate packets/s, interleaved\n"
"round-robin with the other sources, for --duration seconds or until it has\n"
"sent --count packets.\n"
"\n"
"  --dst ADDR            destination, IPv4 or IPv6\n"
"  --dport N             destination port, 1-65535\n"
"  --proto P             udp (default), tcp-syn, or tcp-ack, tcp-rst, tcp-fin\n"
"                        (FIN+ACK), tcp-synack (random sequence and\n"
"                        acknowledgment numbers)\n"
"  --src A[,A...]        source addresses, same family as --dst; may repeat\n"
"  --spoof-prefix CIDR   instead of --src: a random source inside CIDR for\n"
"                        every packet; --rate is then the aggregate rate\n"
"  --rate PPS            packets per second per source (decimal, > 0)\n"
"  --duration SEC        seconds to send (decimal, > 0)\n"
"  --count N             stop each source after N packets\n"
"  --size BYTES          UDP payload bytes, 0-%d (default %d); the first 16\n"
"                        carry \"SLG1\", the source index and a sequence number\n"
"  --sport N             source port, 0-65535 (default: ephemeral; SYNs and\n"
"                        spoofed packets cycle through %d-%d)\n"
"  --spin-us N           busy-wait the last N us before each send (default %d)\n"
"  --slip-us N           a send later than N us delays the rest of the\n"
"                        schedule instead of catching up in a burst\n"
"                        (default 0: never slip, always catch up)\n"
"  --json                print the result as one JSON object\n"
"  --any-addr            allow addresses outside 198.18.0.0/15, 2001:db8::/32\n"
"  -h, --help            this text\n"
"  -V, --version         print the version\n"
"\n"
"Send errors (ENOBUFS, EAGAIN, ...) are counted, not fatal. Needs CAP_NET_RAW\n"
"for the tcp protocols and --spoof-prefix. Exit status: 0 done, 1 runtime error,\n"
"2 bad arguments.\n",
		prog, prog, MAX_SIZE, DEFAULT_SIZE, EPHEMERAL_BASE,
		EPHEMERAL_BASE + EPHEMERAL_SPAN - 1, DEFAULT_SPIN_US);
}

/* "198.18.128.0/17" or "2001:db8:1::/48"; host bits must be zero. */
static int parse_cidr(const char *s, struct addr *a, unsigned int *plen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	unsigned int bits, i;
	uint64_t len;

	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, slash - s);
	buf[slash - s] = '\0';
	if (parse_addr(buf, a))
		return -EINVAL;
	bits = a->family == AF_INET ? 32 : 128;
	if (parse_u64(slash + 1, 0, bits, &len))
		return -EINVAL;
	for (i = len; i < bits; i++)
		if (a->b[i / 8] & (0x80 >> (i % 8)))
			return -EINVAL;
	*plen = len;
	return 0;
}

/* 198.18.0.0/15 and 2001:db8::/32, the ranges test traffic may use. */
static bool in_test_range(const struct addr *a)
{
	if (a->family == AF_INET)
		return (ntohl(a->v4.s_addr) & 0xfffe0000U) == 0xc6120000U;
	return a->b[0] == 0x20 && a->b[1] == 0x01 && a->b[2] == 0x0d && a->b[3] == 0xb8;
}

static void add_sources(struct opts *o, const char *list)
{
	char *copy = strdup(list), *word, *save = NULL;
	unsigned int i;

	if (!copy)
		fail("out of memory");
	if (!*list || *list == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		invarg("invalid --src \"%s\": empty address", list);
	for (word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		struct source *s;

		if (o->nsrc == MAX_SOURCES)
			invarg("too many sources (at most %d)", MAX_SOURCES);
		s = &o->src[o->nsrc];
		if (parse_addr(word, &s->addr))
			invarg("invalid source address \"%s\"", word);
		for (i = 0; i < o->nsrc; i++)
			if (addr_eq(&o->src[i].addr, &s->addr))
				invarg("duplicate source address \"%s\"", word);
		inet_ntop(s->addr.family, s->addr.b, s->name, sizeof(s->name));
		s->fd = -1;
		o->nsrc++;
	}
	free(copy);
}

enum {
	OPT_DST = 256, OPT_DPORT, OPT_PROTO, OPT_SRC, OPT_SPOOF, OPT_RATE, OPT_DURATION,
	OPT_COUNT, OPT_SIZE, OPT_SPORT, OPT_SPIN, OPT_SLIP, OPT_JSON, OPT_ANY_ADDR,
};

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "dst", required_argument, NULL, OPT_DST },
		{ "dport", required_argument, NULL, OPT_DPORT },
		{ "proto", required_argument, NULL, OPT_PROTO },
		{ "src", required_argument, NULL, OPT_SRC },
		{ "spoof-prefix", required_argument, NULL, OPT_SPOOF },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "sport", required_argument, NULL, OPT_SPORT },
		{ "spin-us", required_argument, NULL, OPT_SPIN },
		{ "slip-us", required_argument, NULL, OPT_SLIP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "any-addr", no_argument, NULL, OPT_ANY_ADDR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* Which scalar options were given, to refuse repeats. */
	bool seen[OPT_ANY_ADDR + 1] = { false };
	uint64_t v;
	unsigned int i;
	int c, idx;

	o->sport = -1;
	o->size = DEFAULT_SIZE;
	o->spin_ns = DEFAULT_SPIN_US * 1000ULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", longopts, &idx)) != -1) {
		if (c >= OPT_DST && c != OPT_SRC)
			option_once(seen, c, longopts[idx].name);
		switch (c) {
		case OPT_DST:
			if (parse_addr(optarg, &o->dst))
				invarg("invalid --dst \"%s\"", optarg);
			break;
		case OPT_DPORT:
			if (parse_u64(optarg, 1, 65535, &v))
				invarg("invalid --dport \"%s\" (1-65535)", optarg);
			o->dport = v;
			break;
		case OPT_PROTO:
			if (!strcmp(optarg, "udp"))
				o->proto = PROTO_UDP;
			else if (!strcmp(optarg, "tcp-syn"))
				o->proto = PROTO_TCP_SYN;
			else if (!strcmp(optarg, "tcp-ack"))
				o->proto = PROTO_TCP_ACK, tcp_flags = 0x10;
			else if (!strcmp(optarg, "tcp-rst"))
				o->proto = PROTO_TCP_ACK, tcp_flags = 0x04;
			else if (!strcmp(optarg, "tcp-fin"))
				o->proto = PROTO_TCP_ACK, tcp_flags = 0x11;
			else if (!strcmp(optarg, "tcp-synack"))
				o->proto = PROTO_TCP_ACK, tcp_flags = 0x12;
			else
				invarg("invalid --proto \"%s\" (udp, tcp-syn, tcp-ack, tcp-rst, "
				       "tcp-fin or tcp-synack)", optarg);
			break;
		case OPT_SRC:
			add_sources(o, optarg);
			break;
		case OPT_SPOOF:
			if (parse_cidr(optarg, &o->spoof_net, &o->spoof_plen))
				invarg("invalid --spoof-prefix \"%s\" (ADDR/LEN, host bits zero)",
				       optarg);
			o->spoof_arg = optarg;
			o->spoof = true;
			break;
		case OPT_RATE:
			if (parse_decimal(optarg, 0, MAX_RATE, &o->rate) || o->rate <= 0)
				invarg("invalid --rate \"%s\" (packets/s, > 0, at most %.0f)",
				       optarg, MAX_RATE);
			break;
		case OPT_DURATION:
			o->duration = duration_arg(optarg, MAX_DURATION);
			break;
		case OPT_COUNT:
			if (parse_u64(optarg, 1, UINT64_MAX, &o->count))
				invarg("invalid --count \"%s\" (at least 1)", optarg);
			break;
		case OPT_SIZE:
			if (parse_u64(optarg, 0, MAX_SIZE, &v))
				invarg("invalid --size \"%s\" (0-%d)", optarg, MAX_SIZE);
			o->size = v;
			break;
		case OPT_SPORT:
			if (parse_u64(optarg, 0, 65535, &v))
				invarg("invalid --sport \"%s\" (0-65535)", optarg);
			o->sport = v ? (int)v : -1;
			break;
		case OPT_SPIN:
			if (parse_u64(optarg, 0, MAX_SPIN_US, &v))
				invarg("invalid --spin-us \"%s\" (0-%d)", optarg, MAX_SPIN_US);
			o->spin_ns = v * 1000;
			break;
		case OPT_SLIP:
			if (parse_u64(optarg, 0, MAX_SLIP_US, &v))
				invarg("invalid --slip-us \"%s\" (0-%d)", optarg, MAX_SLIP_US);
			o->slip_ns = v * 1000;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_ANY_ADDR:
			o->any_addr = true;
			break;
		default:
			common_opt(c, argv, usage);
		}
	}
	if (optind < argc)
		invarg("unexpected argument \"%s\"", argv[optind]);

	if (!o->dst.family)
		invarg("--dst is required");
	if (!o->dport)
		invarg("--dport is required");
	if (!o->rate)
		invarg("--rate is required");
	if (!o->duration)
		invarg("--duration is required");
	if (o->spoof && o->nsrc)
		invarg("--src and --spoof-prefix exclude each other");
	if (!o->spoof && !o->nsrc)
		invarg("--src or --spoof-prefix is required");
	if (o->proto == PROTO_TCP_ACK)
		/* From here on sent like SYNs, with the flags --proto chose. */
		o->proto = PROTO_TCP_SYN;
	if (o->proto == PROTO_TCP_SYN && seen[OPT_SIZE])
		invarg("--size applies to --proto udp only");
	if (o->spoof && o->spoof_net.family != o->dst.family)
		invarg("--spoof-prefix \"%s\" is not the same family as --dst", o->spoof_arg);
	for (i = 0; i < o->nsrc; i++)
		if (o->src[i].addr.family != o->dst.family)
			invarg("source \"%s\" is not the same family as --dst", o->src[i].name);
	if (!o->any_addr) {
		char buf[INET6_ADDRSTRLEN];

		if (!in_test_range(&o->dst)) {
			inet_ntop(o->dst.family, o->dst.b, buf, sizeof(buf));
			invarg("--dst \"%s\" is outside 198.18.0.0/15 and 2001:db8::/32 "
			       "(--any-addr to allow)", buf);
		}
		for (i = 0; i < o->nsrc; i++)
			if (!in_test_range(&o->src[i].addr))
				invarg("source \"%s\" is outside 198.18.0.0/15 and 2001:db8::/32 "
				       "(--any-addr to allow)", o->src[i].name);
		if (o->spoof && (!in_test_range(&o->spoof_net) ||
				 o->spoof_plen < (o->dst.family == AF_INET ? 15U : 32U)))
			invarg("--spoof-prefix \"%s\" is outside 198.18.0.0/15 and "
			       "2001:db8::/32 (--any-addr to allow)", o->spoof_arg);
	}
	if (o->spoof) {
		struct source *s = &o->src[0];
		size_t n;

		s->addr = o->spoof_net;
		s->fd = -1;
		inet_ntop(s->addr.family, s->addr.b, s->name, sizeof(s->name));
		n = strlen(s->name);
		snprintf(s->name + n, sizeof(s->name) - n, "/%u", o->spoof_plen);
		o->nsrc = 1;
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Return no earlier than @deadline (CLOCK_MONOTONIC ns), unless stopped.
 * Sleeps to @spin_ns before it, then spins; both loops end at the deadline.
 */
static uint64_t wait_until(uint64_t deadline, uint64_t spin_ns)
{
	uint64_t now = mono_ns();

	while (!stop && now < deadline && deadline - now > spin_ns) {
		uint64_t wake = deadline - spin_ns;
		struct timespec ts = {
			.tv_sec = wake / NSEC_PER_SEC,
			.tv_nsec = wake % NSEC_PER_SEC,
		};

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		now = mono_ns();
	}
	while (!stop && now < deadline) {
		cpu_relax();
		now = mono_ns();
	}
	return now;
}

/* Fast, and good enough to scatter source addresses. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	return wr_xorshift64s(&rng_state);
}

/* TCP/UDP checksum over the pseudo-header and @l4, in network order. */
static uint16_t l4_csum(const struct addr *src, const struct addr *dst, uint8_t proto,
			const void *l4, size_t len)
{
	uint64_t sum = 0;
	uint16_t c;

	if (src->family == AF_INET) {
		sum = csum_add(sum, &src->v4, 4);
		sum = csum_add(sum, &dst->v4, 4);
		sum += proto;
		sum += len;
	} else {
		sum = csum_add(sum, &src->v6, 16);
		sum = csum_add(sum, &dst->v6, 16);
		sum += len >> 16;
		sum += len & 0xffff;
		sum += proto;
	}
	sum = csum_add(sum, l4, len);
	c = csum_fold(sum);
	/* UDP sends a computed zero as all ones; zero means "no checksum". */
	if (proto == IPPROTO_UDP && c == 0)
		c = 0xffff;
	return htons(c);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* The UDP payload: the marker, truncated to @size. */
static void fill_payload(uint8_t *p, unsigned int size, uint32_t index, uint64_t seq)
{
	struct payload_hdr h = {
		.magic = htonl(PAYLOAD_MAGIC),
		.src_index = htonl(index),
		.seq = htobe64(seq),
	};

	memcpy(p, &h, size < sizeof(h) ? size : sizeof(h));
}

/* UDP header and payload at @p; returns its length. */
static size_t build_udp(uint8_t *p, const struct addr *src, const struct addr *dst,
			uint16_t sport, uint16_t dport, unsigned int size, uint32_t index,
			uint64_t seq)
{
	size_t len = UDP_HLEN + size;

	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 4, len);
	put16(p + 6, 0);
	fill_payload(p + UDP_HLEN, size, index, seq);
	memcpy(p + 6, &(uint16_t){ l4_csum(src, dst, IPPROTO_UDP, p, len) }, 2);
	return len;
}

/*
 * TCP SYN with an MSS option at @p (or, with tcp_flags ACK, an ACK with a
 * random acknowledgment number); returns its length.
 */
static size_t build_syn(uint8_t *p, const struct addr *src, const struct addr *dst,
			uint16_t sport, uint16_t dport)
{
	memset(p, 0, SYN_HLEN);
	put16(p, sport);
	put16(p + 2, dport);
	put32(p + 4, rng_next());		/* initial sequence number */
	p[12] = (SYN_HLEN / 4) << 4;		/* data offset, in words */
	p[13] = tcp_flags;			/* SYN (or ACK) */
	if (tcp_flags & 0x10)
		put32(p + 8, rng_next());	/* a guessed cookie */
	put16(p + 14, SYN_WINDOW);
	p[20] = 2;				/* kind: MSS */
	p[21] = 4;				/* option length */
	put16(p + 22, src->family == AF_INET ? SYN_MSS4 : SYN_MSS6);
	memcpy(p + 16, &(uint16_t){ l4_csum(src, dst, IPPROTO_TCP, p, SYN_HLEN) }, 2);
	return SYN_HLEN;
}

/* IP header in front of @l4len bytes at @p + header; returns the header length. */
static size_t build_ip(uint8_t *p, const struct addr *src, const struct addr *dst,
		       uint8_t proto, size_t l4len, uint16_t id)
{
	if (src->family == AF_INET) {
		memset(p, 0, IP4_HLEN);
		p[0] = 0x45;			/* version 4, IHL 5 */
		put16(p + 2, IP4_HLEN + l4len);
		put16(p + 4, id);
		put16(p + 6, 0x4000);		/* DF */
		p[8] = BUILT_TTL;
		p[9] = proto;
		memcpy(p + 12, &src->v4, 4);
		memcpy(p + 16, &dst->v4, 4);
		put16(p + 10, csum_fold(csum_add(0, p, IP4_HLEN)));
		return IP4_HLEN;
	}
	memset(p, 0, IP6_HLEN);
	p[0] = 0x60;				/* version 6, class 0, flow 0 */
	put16(p + 4, l4len);
	p[6] = proto;
	p[7] = BUILT_TTL;
	memcpy(p + 8, &src->v6, 16);
	memcpy(p + 24, &dst->v6, 16);
	return IP6_HLEN;
}

/* A random address inside the spoof prefix. */
static void random_in_prefix(const struct opts *o, struct addr *a)
{
	unsigned int bytes = o->spoof_net.family == AF_INET ? 4 : 16, i;
	uint64_t r = 0;

	*a = o->spoof_net;
	for (i = 0; i < bytes; i++) {
		unsigned int fixed = o->spoof_plen > i * 8 ? o->spoof_plen - i * 8 : 0;
		uint8_t mask = fixed >= 8 ? 0xff : (uint8_t)(0xff00 >> fixed);

		if (i % 8 == 0)
			r = rng_next();
		a->b[i] = (a->b[i] & mask) | ((uint8_t)(r >> (8 * (i % 8))) & ~mask);
	}
}

static void set_opt(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)))
		fail("setsockopt %s: %s", what, strerror(errno));
}

static socklen_t sockaddr_of(const struct addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr = a->v4;
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = a->v6;
	return sizeof(*sin6);
}

/* Raw sockets see incoming packets of their protocol; this filter drops them all. */
static void drop_all_input(int fd)
{
	struct sock_filter ret0 = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog fprog = { .len = 1, .filter = &ret0 };

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)))
		fail("setsockopt SO_ATTACH_FILTER: %s", strerror(errno));
}

static int raw_socket(int family, int proto)
{
	int fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, proto);

	if (fd < 0)
		fail("raw socket: %s%s", strerror(errno),
		     errno == EPERM ? " (needs CAP_NET_RAW)" : "");
	return fd;
}

/*
 * Open what each source sends on. Sources may share one descriptor (the
 * IPv4 raw socket); only UDP and IPv6 SYN sockets are bound per source.
 */
static void open_sockets(struct opts *o)
{
	bool v4 = o->dst.family == AF_INET;
	struct sockaddr_storage ss;
	unsigned int i;
	int shared = -1;

	if (o->spoof || (o->proto == PROTO_TCP_SYN && v4)) {
		/* IPPROTO_RAW implies IP_HDRINCL / IPV6_HDRINCL: we build the IP header. */
		shared = raw_socket(o->dst.family, IPPROTO_RAW);
		if (v4)
			set_opt(shared, IPPROTO_IP, IP_HDRINCL, 1, "IP_HDRINCL");
		else
			set_opt(shared, IPPROTO_IPV6, IPV6_HDRINCL, 1, "IPV6_HDRINCL");
		for (i = 0; i < o->nsrc; i++)
			o->src[i].fd = shared;
		return;
	}
	for (i = 0; i < o->nsrc; i++) {
		struct source *s = &o->src[i];
		uint16_t port = 0;
		socklen_t len;

		if (o->proto == PROTO_UDP) {
			s->fd = socket(o->dst.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (s->fd < 0)
				fail("UDP socket: %s", strerror(errno));
			port = o->sport > 0 ? o->sport : 0;
		} else {
			/* The port field of a raw socket address is the protocol: leave 0. */
			s->fd = raw_socket(AF_INET6, IPPROTO_TCP);
			drop_all_input(s->fd);
		}
		/* Bind before the address has finished appearing (just added, or DAD). */
		if (v4)
			set_opt(s->fd, IPPROTO_IP, IP_FREEBIND, 1, "IP_FREEBIND");
		else
			set_opt(s->fd, IPPROTO_IPV6, IPV6_FREEBIND, 1, "IPV6_FREEBIND");
		len = sockaddr_of(&s->addr, port, &ss);
		if (bind(s->fd, (struct sockaddr *)&ss, len))
			fail("bind to %s port %u: %s", s->name, port, strerror(errno));
	}
}

struct result {
	uint64_t start_ns;
	uint64_t max_lag_ns;
	uint64_t lag_sum_ns;
	uint64_t attempts;
	uint64_t slipped_ns;		/* how far --slip-us moved the schedule */
	bool interrupted;
	bool behind;
};

static void run(struct opts *o, struct result *r)
{
	static uint8_t pkt[PKT_BUF];
	struct sockaddr_storage ss;
	socklen_t sslen;
	uint64_t per_src, total, k, hard_stop;
	double interval_ns;

	/* Source j of n sends its i-th packet at i / rate + j / (n * rate). */
	per_src = (uint64_t)ceil(o->duration * o->rate - 1e-9);
	if (!per_src)
		per_src = 1;
	if (o->count && o->count < per_src)
		per_src = o->count;
	total = per_src * o->nsrc;
	interval_ns = NSEC_PER_SEC / (o->rate * o->nsrc);
	/* Raw IPv4 and IPv6 sockets take a destination without a port. */
	sslen = sockaddr_of(&o->dst, o->proto == PROTO_UDP && !o->spoof ? o->dport : 0, &ss);

	r->start_ns = mono_ns() + 1000000;	/* 1 ms to settle */
	hard_stop = r->start_ns + (uint64_t)(o->duration * NSEC_PER_SEC) + GRACE_NS;
	for (k = 0; k < total && !stop; k++) {
		uint64_t deadline = r->start_ns + r->slipped_ns + (uint64_t)(k * interval_ns);
		unsigned int idx = k % o->nsrc;
		uint64_t seq = k / o->nsrc;
		struct source *s = &o->src[idx];
		struct addr src = s->addr;
		uint16_t sport;
		uint64_t now;
		size_t len;
		uint8_t proto = o->proto == PROTO_UDP ? IPPROTO_UDP : IPPROTO_TCP;
		ssize_t ret;

		now = wait_until(deadline, o->spin_ns);
		if (stop)
			break;
		if (now > hard_stop) {
			r->behind = true;
			break;
		}
		if (now - deadline > r->max_lag_ns)
			r->max_lag_ns = now - deadline;
		r->lag_sum_ns += now - deadline;
		r->attempts++;
		/* The hard stop does not move: a generator too slow for its rate ends. */
		if (o->slip_ns && now - deadline > o->slip_ns)
			r->slipped_ns += now - deadline;

		sport = o->sport > 0 ? (uint16_t)o->sport : EPHEMERAL_BASE + seq % EPHEMERAL_SPAN;
		if (o->spoof) {
			size_t hl = o->dst.family == AF_INET ? IP4_HLEN : IP6_HLEN, l4;

			random_in_prefix(o, &src);
			if (o->proto == PROTO_UDP)
				l4 = build_udp(pkt + hl, &src, &o->dst, sport, o->dport, o->size,
					       idx, seq);
			else
				l4 = build_syn(pkt + hl, &src, &o->dst, sport, o->dport);
			len = build_ip(pkt, &src, &o->dst, proto, l4, seq) + l4;
		} else if (o->proto == PROTO_UDP) {
			fill_payload(pkt, o->size, idx, seq);
			len = o->size;
		} else if (o->dst.family == AF_INET) {
			size_t l4 = build_syn(pkt + IP4_HLEN, &src, &o->dst, sport, o->dport);

			len = build_ip(pkt, &src, &o->dst, IPPROTO_TCP, l4, seq) + l4;
		} else {
			len = build_syn(pkt, &src, &o->dst, sport, o->dport);
		}

		ret = sendto(s->fd, pkt, len, MSG_DONTWAIT, (struct sockaddr *)&ss, sslen);
		if (ret < 0) {
			if (!s->errors)
				s->first_errno = errno;
			s->errors++;
			continue;
		}
		if (!s->sent)
			s->first_ns = now;
		s->last_ns = now;
		s->sent++;
	}
	r->interrupted = stop;
}

static void print_result(const struct opts *o, const struct result *r)
{
	uint64_t total = 0, errors = 0, first = UINT64_MAX, last = 0;
	double elapsed, pps, mean_lag_us;
	unsigned int i;

	for (i = 0; i < o->nsrc; i++) {
		const struct source *s = &o->src[i];

		total += s->sent;
		errors += s->errors;
		if (s->sent && s->first_ns < first)
			first = s->first_ns;
		if (s->sent && s->last_ns > last)
			last = s->last_ns;
	}
	elapsed = total ? (double)(last - first) / NSEC_PER_SEC : 0;
	/* Intervals per second: exactly the offered rate when pacing is perfect. */
	pps = elapsed > 0 ? (total - 1) / elapsed : 0;
	mean_lag_us = r->attempts ? r->lag_sum_ns / 1e3 / r->attempts : 0;

	if (o->json) {
		printf("{\"elapsed_s\":%.9f,\"start_ns\":%" PRIu64 ",\"pps\":%.1f,"
		       "\"max_lag_us\":%.1f,\"mean_lag_us\":%.2f,\"slipped_us\":%.1f,"
		       "\"interrupted\":%s,\"behind\":%s,\"sources\":[",
		       elapsed, r->start_ns, pps, r->max_lag_ns / 1e3, mean_lag_us,
		       r->slipped_ns / 1e3,
		       r->interrupted ? "true" : "false", r->behind ? "true" : "false");
		for (i = 0; i < o->nsrc; i++) {
			const struct source *s = &o->src[i];

			printf("%s{\"src\":\"%s\",\"sent\":%" PRIu64 ",\"errors\":%" PRIu64
			       ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64,
			       i ? "," : "", s->name, s->sent, s->errors, s->first_ns, s->last_ns);
			if (s->errors) {
				printf(",\"first_error\":");
				json_string(stdout, strerror(s->first_errno));
			}
			printf("}");
		}
		printf("],\"total_sent\":%" PRIu64 ",\"total_errors\":%" PRIu64 "}\n",
		       total, errors);
		return;
	}
	printf("%-40s %12s %10s %12s\n", "source", "sent", "errors", "elapsed_s");
	for (i = 0; i < o->nsrc; i++) {
		const struct source *s = &o->src[i];

		printf("%-40s %12" PRIu64 " %10" PRIu64 " %12.6f", s->name, s->sent, s->errors,
		       s->sent ? (double)(s->last_ns - s->first_ns) / NSEC_PER_SEC : 0.0);
		if (s->errors)
			printf("  first error: %s", strerror(s->first_errno));
		printf("\n");
	}
	printf("total %" PRIu64 " sent, %" PRIu64 " errors in %.6f s (%.1f pps), "
	       "lag max %.1f us mean %.2f us, slipped %.1f us%s%s\n",
	       total, errors, elapsed, pps, r->max_lag_ns / 1e3, mean_lag_us,
	       r->slipped_ns / 1e3,
	       r->interrupted ? ", interrupted" : "",
	       r->behind ? ", stopped: fell behind schedule" : "");
}

int main(int argc, char **argv)
{
	static struct opts o;
	struct result r = { 0 };

	parse_args(argc, argv, &o);
	json_errors = o.json;

	if (getrandom(&rng_state, sizeof(rng_state), 0) != sizeof(rng_state))
		rng_state = mono_ns() ^ getpid();
	rng_state |= 1;		/* xorshift must not start at zero */
	/* Default timer slack is 50 us: far too coarse for 20 us gaps. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	catch_stop_signals();

	open_sockets(&o);
	run(&o, &r);
	print_result(&o, &r);
	if (r.behind)
		fprintf(stderr, "%s: fell more than %llu s behind schedule, stopped early\n",
			prog, GRACE_NS / NSEC_PER_SEC);
	return 0;
}
