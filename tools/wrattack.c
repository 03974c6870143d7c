// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrattack: the attack harness's generator (tools/attack/run.sh). One of
 * the vectors of docs/attacks.md, built as whole IPv4 packets with a source
 * inside --src-prefix, sent on a raw IPPROTO_RAW socket (IP_HDRINCL).
 *
 * Deterministic per --seed: the same seed gives the same packets (sources,
 * ports, lengths, payloads). Paced like wrgen: packet k is due at
 * start + k / rate and never sent before; a late packet goes out at once.
 * Every run is bounded by --count and --duration, whichever comes first.
 * "--vector A,B" sends A for the first half of the count and duration,
 * then B (a vector change mid-attack).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOOL_NAME "wrattack"
#include "toolutil.h"
#include "rand.h"

/* Highest rate accepted, packets/s. */
#define MAX_RATE		10000000.0
/* Longest run accepted, seconds. */
#define MAX_DURATION		3600.0
/* Most packets one run may send. */
#define MAX_COUNT		100000000ULL
/* Largest packet built: an Ethernet MTU. */
#define PKT_MAX			1500
/* IPv4 header, no options. */
#define IP4_HLEN		20
/* UDP header. */
#define UDP_HLEN		8
/* TCP header without options, and with the SYN's MSS option. */
#define TCP_HLEN		20
#define SYN_HLEN		24
/* ICMP echo header. */
#define ICMP_HLEN		8
/* TTL of the packets built here. */
#define BUILT_TTL		64
/* TCP window and the SYN's MSS. */
#define TCP_WINDOW		64240
#define SYN_MSS			1460
/* Destination ports of reflected replies: the victim's ephemeral range. */
#define HIGH_PORT_BASE		1024
#define HIGH_PORT_SPAN		64512
/* Source ports of the non-reflection vectors: the usual ephemeral range. */
#define EPH_BASE		32768
#define EPH_SPAN		28232
/* Carpet bombing spreads over this many addresses (a /24). */
#define CARPET_SPAN		256
/* A fragmented datagram's UDP length, and the data each fragment carries. */
#define FRAG_UDP_LEN		2960
#define FRAG_CHUNK		1480
/* The prefix vector's constant payload start, and its length. */
#define PREFIX_LEN		8
static const uint8_t fixed_prefix[PREFIX_LEN] = { 0xde, 0xad, 0xbe, 0xef, 'W', 'R', 'A', 'T' };
/* Default --src-prefix: the spoofed sources. */
#define DEFAULT_SRC		"198.19.0.0/16"
/* Default --seed. */
#define DEFAULT_SEED		1
/* pcap: magic, version, snap length, LINKTYPE_RAW (bare IP packets). */
#define PCAP_MAGIC		0xa1b2c3d4U
#define PCAP_VMAJOR		2
#define PCAP_VMINOR		4
#define PCAP_SNAPLEN		65535
#define PCAP_LINKTYPE_RAW	101
/* A run this far behind its schedule stops (keeps the run bounded). */
#define GRACE_NS		(5 * NSEC_PER_SEC)
/* Most phases of --vector (A,B). */
#define MAX_PHASES		2

enum vector {
	V_UDP_PREFIX, V_UDP_RANDOM, V_DNS, V_NTP, V_MEMCACHED, V_SSDP, V_CLDAP,
	V_ACK, V_SYN, V_CARPET, V_FRAG, V_ICMP, V_COUNT,
};

/* Each vector: its name, and for the reflection vectors the source port and lengths. */
static const struct vdesc {
	const char *name;
	uint16_t sport;		/* fixed source port, 0 = random ephemeral */
	uint16_t len_min;	/* UDP/ICMP payload length range, bytes */
	uint16_t len_max;
} vectors[V_COUNT] = {
	[V_UDP_PREFIX] = { "udp-prefix", 0, 64, 256 },
	[V_UDP_RANDOM] = { "udp-random", 0, 512, 512 },
	[V_DNS] = { "dns", 53, 1200, 1452 },		/* ANY/DNSSEC answers, below the MTU */
	[V_NTP] = { "ntp", 123, 468, 468 },		/* monlist: 6 entries of 72 + header */
	[V_MEMCACHED] = { "memcached", 11211, 1400, 1400 }, /* a stored value, per datagram */
	[V_SSDP] = { "ssdp", 1900, 280, 340 },		/* an M-SEARCH answer */
	[V_CLDAP] = { "cldap", 389, 1200, 1452 },	/* searchResEntry of rootDSE */
	[V_ACK] = { "ack", 0, 0, 0 },
	[V_SYN] = { "syn", 0, 0, 0 },
	[V_CARPET] = { "carpet", 0, 256, 256 },
	[V_FRAG] = { "frag", 0, 0, 0 },
	[V_ICMP] = { "icmp", 0, 56, 56 },
};

struct opts {
	enum vector phase[MAX_PHASES];
	unsigned int nphases;
	struct addr dst;
	uint16_t dport;
	struct addr src;
	unsigned int src_plen;
	double rate;
	double duration;
	uint64_t count;
	uint64_t seed;
	const char *pcap;
	uint64_t pcap_count;
	bool json;
};

static uint64_t rng;

static uint64_t rnd(void)
{
	return wr_xorshift64s(&rng);
}

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: wrattack --vector NAME[,NAME] --dst ADDR --rate PPS --duration SEC\n"
		"                [--count N] [--dport N] [--src-prefix CIDR] [--seed N]\n"
		"                [--pcap FILE [--pcap-count N]] [--json]\n"
		"vectors:");
	for (i = 0; i < V_COUNT; i++)
		fprintf(f, " %s", vectors[i].name);
	fprintf(f, "\n--dst of carpet is the /24's first address;"
		" addresses in 198.18.0.0/15 only.\n");
}

static bool in_test_range(const struct addr *a)
{
	/* 198.18.0.0/15 */
	return a->family == AF_INET && (ntohl(a->v4.s_addr) & 0xfffe0000U) == 0xc6120000U;
}

static void parse_vectors(const char *s, struct opts *o)
{
	char buf[64], *tok, *save = NULL;
	unsigned int i;

	if (strlen(s) >= sizeof(buf))
		invarg("invalid --vector \"%s\"", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nphases == MAX_PHASES)
			invarg("invalid --vector \"%s\" (at most %d, comma-separated)", s,
			       MAX_PHASES);
		for (i = 0; i < V_COUNT; i++)
			if (!strcmp(tok, vectors[i].name))
				break;
		if (i == V_COUNT)
			invarg("unknown vector \"%s\" (--help lists them)", tok);
		o->phase[o->nphases++] = i;
	}
	if (!o->nphases)
		invarg("invalid --vector \"%s\"", s);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "vector", required_argument, NULL, 'v' },
		{ "dst", required_argument, NULL, 'd' },
		{ "dport", required_argument, NULL, 'p' },
		{ "src-prefix", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' },
		{ "pcap", required_argument, NULL, 'w' },
		{ "pcap-count", required_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	bool seen[256] = { false };
	const char *src = DEFAULT_SRC;
	char buf[64], *slash;
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->count = MAX_COUNT;
	o->seed = DEFAULT_SEED;
	o->dport = 53;
	o->pcap_count = 1000;
	while ((c = getopt_long(argc, argv, ":hV", lopts, NULL)) != -1) {
		if (c >= 0 && c < 256 && c != 'h' && c != 'V' && c != ':' && c != '?')
			option_once(seen, c, argv[optind - 1] + 2);
		switch (c) {
		case 'v':
			parse_vectors(optarg, o);
			break;
		case 'd':
			if (parse_addr(optarg, &o->dst) || o->dst.family != AF_INET)
				invarg("invalid --dst \"%s\" (an IPv4 address)", optarg);
			break;
		case 'p':
			if (parse_u64(optarg, 1, 65535, &v))
				invarg("invalid --dport \"%s\" (1-65535)", optarg);
			o->dport = v;
			break;
		case 's':
			src = optarg;
			break;
		case 'r':
			if (parse_decimal(optarg, 0, MAX_RATE, &o->rate) || o->rate <= 0)
				invarg("invalid --rate \"%s\" (packets/s, > 0)", optarg);
			break;
		case 't':
			o->duration = duration_arg(optarg, MAX_DURATION);
			break;
		case 'c':
			if (parse_u64(optarg, 1, MAX_COUNT, &o->count))
				invarg("invalid --count \"%s\" (1-%llu)", optarg, MAX_COUNT);
			break;
		case 'S':
			if (parse_u64(optarg, 1, UINT64_MAX, &o->seed))
				invarg("invalid --seed \"%s\" (a positive integer)", optarg);
			break;
		case 'w':
			o->pcap = optarg;
			break;
		case 'W':
			if (parse_u64(optarg, 1, MAX_COUNT, &o->pcap_count))
				invarg("invalid --pcap-count \"%s\"", optarg);
			break;
		case 'j':
			o->json = json_errors = true;
			break;
		default:
			common_opt(c, argv, usage);
		}
	}
	if (optind < argc)
		invarg("unexpected argument \"%s\"", argv[optind]);
	if (!o->nphases || !o->dst.family || !o->rate || !o->duration)
		invarg("--vector, --dst, --rate and --duration are required (--help)");
	if (strlen(src) >= sizeof(buf))
		invarg("invalid --src-prefix \"%s\"", src);
	strcpy(buf, src);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (parse_addr(buf, &o->src) || o->src.family != AF_INET ||
	    (slash && parse_u64(slash + 1, 0, 32, &v)))
		invarg("invalid --src-prefix \"%s\" (an IPv4 CIDR)", src);
	o->src_plen = slash ? v : 32;
	if (o->src_plen < 15 || !in_test_range(&o->src) || !in_test_range(&o->dst))
		invarg("--dst and --src-prefix must lie in 198.18.0.0/15");
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

/* TCP/UDP checksum over the IPv4 pseudo-header and @len bytes at @l4. */
static void l4_csum(const uint8_t *ip, uint8_t proto, uint8_t *l4, size_t len, size_t at)
{
	uint64_t sum = csum_add(0, ip + 12, 8) + proto + len;
	uint16_t c = csum_fold(csum_add(sum, l4, len));

	/* UDP sends a computed zero as all ones; zero means "no checksum". */
	if (proto == IPPROTO_UDP && !c)
		c = 0xffff;
	put16(l4 + at, c);
}

static void fill_random(uint8_t *p, size_t len)
{
	uint64_t r = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0)
			r = rnd();
		p[i] = r >> (8 * (i % 8));
	}
}

static uint16_t len_in(const struct vdesc *d)
{
	return d->len_min + rnd() % (d->len_max - d->len_min + 1);
}

/* IPv4 header at @p: @src, @dst, @proto, total length, id, fragment word. */
static void build_ip(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto, size_t total,
		     uint16_t id, uint16_t frag)
{
	memset(p, 0, IP4_HLEN);
	p[0] = 0x45;				/* version 4, IHL 5 */
	put16(p + 2, total);
	put16(p + 4, id);
	put16(p + 6, frag);
	p[8] = BUILT_TTL;
	p[9] = proto;
	memcpy(p + 12, &src, 4);
	memcpy(p + 16, &dst, 4);
	put16(p + 10, csum_fold(csum_add(0, p, IP4_HLEN)));
}

/* The reflected reply's first bytes, as the real amplifiers send them. */
static void reflect_payload(enum vector v, uint8_t *pl, size_t len)
{
	static const char ssdp[] = "HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\n"
				   "EXT:\r\nLOCATION: http://198.18.1.1:1900/desc.xml\r\n"
				   "SERVER: Linux/3.x UPnP/1.0\r\nST: upnp:rootdevice\r\n";
	static const char mc[] = "VALUE a 0 1376\r\n";

	fill_random(pl, len);
	switch (v) {
	case V_DNS:
		/* random id; QR, RD, RA, NOERROR; 1 question, some answers */
		pl[2] = 0x81, pl[3] = 0x80;
		put16(pl + 4, 1);
		put16(pl + 6, 10 + rnd() % 20);
		put16(pl + 8, 0);
		put16(pl + 10, 1);
		break;
	case V_NTP:
		/* mode 7 response, more bit, version 2; implementation 3, MON_GETLIST_1 */
		pl[0] = 0xd7, pl[1] = 0x00, pl[2] = 0x03, pl[3] = 0x2a;
		break;
	case V_MEMCACHED:
		/* the UDP frame header: request id 0, sequence 0, 1 datagram, reserved */
		memset(pl, 0, 8);
		pl[5] = 1;
		memcpy(pl + 8, mc, sizeof(mc) - 1);
		break;
	case V_SSDP:
		memcpy(pl, ssdp, len < sizeof(ssdp) - 1 ? len : sizeof(ssdp) - 1);
		break;
	case V_CLDAP:
		/* SEQUENCE with a 4-byte length, message id 1, searchResEntry */
		pl[0] = 0x30, pl[1] = 0x84;
		put32(pl + 2, len - 6);
		pl[6] = 0x02, pl[7] = 0x01, pl[8] = 0x01, pl[9] = 0x64;
		break;
	default:
		break;
	}
}

/*
 * Packet @k of vector @v at @p (source and destination drawn here);
 * returns its length.
 */
static size_t build(const struct opts *o, enum vector v, uint64_t k, uint8_t *p)
{
	const struct vdesc *d = &vectors[v];
	uint32_t host = o->src_plen == 32 ? 0 : (uint32_t)rnd() & (0xffffffffU >> o->src_plen);
	uint32_t src = htonl(ntohl(o->src.v4.s_addr) | host);
	uint32_t dst = o->dst.v4.s_addr;
	uint16_t sport = d->sport ? d->sport : EPH_BASE + rnd() % EPH_SPAN;
	uint16_t dport = o->dport;
	uint8_t *l4 = p + IP4_HLEN;
	size_t len;

	switch (v) {
	case V_ACK:
	case V_SYN:
		len = v == V_SYN ? SYN_HLEN : TCP_HLEN;
		memset(l4, 0, len);
		put16(l4, sport);
		put16(l4 + 2, dport);
		put32(l4 + 4, rnd());			/* sequence number */
		l4[12] = (len / 4) << 4;		/* data offset, in words */
		if (v == V_SYN) {
			l4[13] = 0x02;			/* SYN */
			l4[20] = 2, l4[21] = 4;		/* MSS option, 4 bytes */
			put16(l4 + 22, SYN_MSS);
		} else {
			l4[13] = 0x10;			/* ACK */
			put32(l4 + 8, rnd());		/* acknowledgment number */
		}
		put16(l4 + 14, TCP_WINDOW);
		build_ip(p, src, dst, IPPROTO_TCP, IP4_HLEN + len, rnd(), 0x4000);
		l4_csum(p, IPPROTO_TCP, l4, len, 16);
		return IP4_HLEN + len;
	case V_ICMP:
		len = ICMP_HLEN + d->len_min;
		l4[0] = 8, l4[1] = 0, l4[2] = 0, l4[3] = 0;	/* echo request */
		put16(l4 + 4, rnd());			/* identifier */
		put16(l4 + 6, k);			/* sequence */
		fill_random(l4 + ICMP_HLEN, d->len_min);
		put16(l4 + 2, csum_fold(csum_add(0, l4, len)));
		build_ip(p, src, dst, IPPROTO_ICMP, IP4_HLEN + len, rnd(), 0);
		return IP4_HLEN + len;
	case V_FRAG:
		/*
		 * Datagrams of FRAG_UDP_LEN in two fragments: even k the first
		 * (offset 0, MF, the UDP header), odd k the second (offset
		 * FRAG_CHUNK, last). Both of a pair share source and id, drawn
		 * from a generator seeded by the pair's number.
		 */
		{
			uint64_t pair = k / 2 * 2 + o->seed, save = rng;
			uint16_t id, off = k % 2 ? FRAG_CHUNK : 0;

			rng = pair * 0x9e3779b97f4a7c15ULL;
			if (!rng)
				rng = 1;
			host = o->src_plen == 32 ? 0 :
			       (uint32_t)rnd() & (0xffffffffU >> o->src_plen);
			src = htonl(ntohl(o->src.v4.s_addr) | host);
			id = rnd();
			sport = EPH_BASE + rnd() % EPH_SPAN;
			rng = save;
			if (!off) {
				put16(l4, sport);
				put16(l4 + 2, dport);
				put16(l4 + 4, FRAG_UDP_LEN);
				/* no checksum: it would span both fragments */
				put16(l4 + 6, 0);
				fill_random(l4 + UDP_HLEN, FRAG_CHUNK - UDP_HLEN);
			} else {
				fill_random(l4, FRAG_UDP_LEN - FRAG_CHUNK);
			}
			len = off ? FRAG_UDP_LEN - FRAG_CHUNK : FRAG_CHUNK;
			build_ip(p, src, dst, IPPROTO_UDP, IP4_HLEN + len, id,
				 off ? off / 8 : 0x2000 /* MF */);
			return IP4_HLEN + len;
		}
	case V_CARPET:
		/* every address of the /24 once in each 256 packets */
		dst = htonl((ntohl(dst) & 0xffffff00U) | (uint32_t)((k * 167) % CARPET_SPAN));
		/* fall through */
	default:
		if (d->sport)
			dport = HIGH_PORT_BASE + rnd() % HIGH_PORT_SPAN;
		len = len_in(d);
		if (d->sport)
			reflect_payload(v, l4 + UDP_HLEN, len);
		else
			fill_random(l4 + UDP_HLEN, len);
		if (v == V_UDP_PREFIX)
			memcpy(l4 + UDP_HLEN, fixed_prefix, PREFIX_LEN);
		len += UDP_HLEN;
		put16(l4, sport);
		put16(l4 + 2, dport);
		put16(l4 + 4, len);
		put16(l4 + 6, 0);
		build_ip(p, src, dst, IPPROTO_UDP, IP4_HLEN + len, rnd(), 0);
		l4_csum(p, IPPROTO_UDP, l4, len, 6);
		return IP4_HLEN + len;
	}
}

static void pcap_put(FILE *f, const uint8_t *p, size_t len, uint64_t ns)
{
	uint32_t h[4] = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC / 1000, len, len };

	fwrite(h, sizeof(h), 1, f);
	fwrite(p, len, 1, f);
}

int main(int argc, char **argv)
{
	uint64_t start, end_ns, half_ns, due, now, k, sent = 0, errors = 0, first = 0, last = 0;
	uint64_t phase_at = 0, half, max_lag = 0, bytes = 0;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint8_t pkt[PKT_MAX];
	char first_err[128] = "";
	FILE *pcap = NULL;
	struct opts o;
	struct timespec ts;
	bool behind = false;
	int fd;

	parse_args(argc, argv, &o);
	rng = o.seed * 0x9e3779b97f4a7c15ULL;
	if (!rng)
		rng = 1;
	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd < 0)
		fail("raw socket: %s%s", strerror(errno),
		     errno == EPERM ? " (needs CAP_NET_RAW)" : "");
	if (o.pcap) {
		uint32_t gh[6] = { PCAP_MAGIC, PCAP_VMAJOR | PCAP_VMINOR << 16, 0, 0,
				   PCAP_SNAPLEN, PCAP_LINKTYPE_RAW };

		pcap = fopen(o.pcap, "we");
		if (!pcap)
			fail("%s: %s", o.pcap, strerror(errno));
		fwrite(gh, sizeof(gh), 1, pcap);
	}
	catch_stop_signals();
	/* The second phase starts at half the count or half the duration, whichever first. */
	half = o.nphases > 1 ? (o.count + 1) / 2 : o.count;
	start = mono_ns();
	end_ns = start + (uint64_t)(o.duration * NSEC_PER_SEC);
	half_ns = start + (uint64_t)(o.duration * NSEC_PER_SEC / o.nphases);
	for (k = 0; k < o.count && !stop; k++) {
		enum vector v;
		size_t len;
		ssize_t n;

		due = start + (uint64_t)(k * (NSEC_PER_SEC / o.rate));
		if (due >= end_ns)
			break;
		now = mono_ns();
		if (now < due) {
			ts.tv_sec = due / NSEC_PER_SEC;
			ts.tv_nsec = due % NSEC_PER_SEC;
			while (!stop &&
			       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			now = mono_ns();
		} else if (now - due > GRACE_NS) {
			behind = true;
			break;
		}
		if (now - due > max_lag && now > due)
			max_lag = now - due;
		if (o.nphases > 1 && !phase_at && (k >= half || due >= half_ns))
			phase_at = now;
		v = o.phase[phase_at ? 1 : 0];
		len = build(&o, v, k, pkt);
		memcpy(&sin.sin_addr, pkt + 16, 4);
		n = sendto(fd, pkt, len, MSG_DONTWAIT, (struct sockaddr *)&sin, sizeof(sin));
		if (n < 0) {
			if (!errors++)
				snprintf(first_err, sizeof(first_err), "%s", strerror(errno));
			continue;
		}
		if (!sent++)
			first = now;
		last = now;
		bytes += len;
		if (pcap && sent <= o.pcap_count)
			pcap_put(pcap, pkt, len, now);
	}
	if (pcap && fclose(pcap))
		fail("%s: %s", o.pcap, strerror(errno));
	if (o.json) {
		printf("{\"vector\": \"%s%s%s\", \"sent\": %" PRIu64 ", \"bytes\": %" PRIu64
		       ", \"errors\": %" PRIu64 ", \"start_ns\": %" PRIu64
		       ", \"first_ns\": %" PRIu64
		       ", \"last_ns\": %" PRIu64 ", \"change_ns\": %" PRIu64
		       ", \"elapsed_s\": %.6f, \"pps\": %.1f, \"max_lag_us\": %.1f"
		       ", \"behind\": %s, \"interrupted\": %s",
		       vectors[o.phase[0]].name, o.nphases > 1 ? "," : "",
		       o.nphases > 1 ? vectors[o.phase[1]].name : "", sent, bytes, errors, start,
		       first, last, phase_at, sent ? (last - first) / 1e9 : 0.0,
		       sent > 1 && last > first ? (sent - 1) / ((last - first) / 1e9) : 0.0,
		       max_lag / 1e3, behind ? "true" : "false", stop ? "true" : "false");
		if (errors) {
			printf(", \"first_error\": ");
			json_string(stdout, first_err);
		}
		printf("}\n");
	} else {
		printf("%s: sent %" PRIu64 " packets (%" PRIu64 " bytes), %" PRIu64
		       " errors%s%s in %.3f s\n",
		       vectors[o.phase[0]].name, sent, bytes, errors, errors ? ", first: " : "",
		       first_err, sent ? (last - first) / 1e9 : 0.0);
	}
	close(fd);
	return 0;
}
