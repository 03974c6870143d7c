// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s fingerprint chooser (user/auto/fingerprint.h) on recorded
 * traces: each case writes its traffic as real pcap files (libpcap's
 * pcap_dump, into a mktemp directory removed afterwards), reads them back
 * with pcap_open_offline, reduces every frame with wr_fp_from_snap and
 * asks wr_fp_choose for a rule.
 *
 * The traffic: a mixed "normal" trace (DNS queries over IPv4 and IPv6 from
 * many clients, HTTP over TCP with handshakes, requests, ACKs and FINs,
 * pings) is the before-sample, and makes 5% of each attack sample, the
 * rest being one of the issue's vectors. Each vector's case checks, by
 * matching every packet again through weir's own parser and matcher
 * (wr_parse, wr_rule_match, wr_rule_match_x, wr_rule_match_pay) with the
 * rule wr_rule_parse makes of the chosen words: the rule is a drop, it
 * matches at least 99% of the attack's own packets and at most 0.1% of
 * the before-trace, and wr_fp_match agrees with weir's matcher on every
 * packet. A "#" line gives the choice as wr_fp_describe says it.
 *
 * Deterministic: a seeded xorshift generator, packet timestamps counted,
 * no clock. Addresses: the protected host is in 198.18.0.0/24 and
 * 2001:db8::/64, real clients elsewhere in 198.18.0.0/15 and 2001:db8::/32;
 * spoofed sources are random and never leave the files.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "check.h"
#include "../tools/rand.h"
#include "packet.h"
#include "lib/libweir.h"
#include "weir_limiter.h"
#include "auto/fingerprint.h"
#include "auto/sketch.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

/* Packets of the before-sample and of the attack sample. */
#define BEFORE_N	3000
#define ATTACK_N	5000
/* One packet in this many of the attack sample is normal traffic (5%). */
#define NORMAL_EVERY	20
/* The protected host's services (198.18.0.0/24) and the carpet-bombed /24. */
#define HOST_DNS	IP4(198, 18, 0, 53)
#define HOST_WEB	IP4(198, 18, 0, 80)
#define HOST_PING	IP4(198, 18, 0, 1)
#define HOST_VICTIM	IP4(198, 18, 0, 10)
#define CARPET_NET	IP4(198, 18, 1, 0)

/* xorshift64* (tools/rand.h, the tests' own): deterministic, seeded per trace. */
static uint64_t rng_state;

static void rng_seed(__u64 s)
{
	rng_state = s ? s : 1;
}

static __u32 rnd(void)
{
	return (__u32)(wr_xorshift64s(&rng_state) >> 32);
}

/* Uniform in [lo, hi]. */
static __u32 rnd_in(__u32 lo, __u32 hi)
{
	return lo + rnd() % (hi - lo + 1);
}

/* What a frame is made of. */
struct spec {
	int family;		/* 4 or 6 */
	__u32 src4, dst4;	/* host order */
	__u8 src6[16], dst6[16];
	__u8 proto, ttl;
	__u16 sport, dport;
	__u8 tcp_flags, tcp_opt;	/* TCP: flags, option bytes (a multiple of 4) */
	__u8 icmp_type;
	int frag;		/* enum weir_frag: NONE, FIRST or LATER (IPv4 only) */
	__u8 pay[1500];
	size_t paylen;
};

static void spec_init(struct spec *s, int family, __u8 proto)
{
	memset(s, 0, sizeof(*s));
	s->family = family;
	s->proto = proto;
	s->ttl = 64;
}

static void rnd_bytes(__u8 *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = rnd() & 0xff;
}

/* The L4 part of s (the header and payload, or only payload for a later fragment). */
static void build_l4(const struct spec *s, struct frame *l)
{
	size_t i;

	l->n = 0;
	if (s->frag == WEIR_FRAG_LATER) {
		putn(l, s->pay, s->paylen);
		return;
	}
	switch (s->proto) {
	case WR_IPPROTO_TCP:
		put16(l, s->sport);
		put16(l, s->dport);
		put32(l, rnd());	/* seq */
		put32(l, s->tcp_flags & WEIR_TCP_ACK ? rnd() : 0);
		put8(l, (5 + s->tcp_opt / 4) << 4);
		put8(l, s->tcp_flags);
		put16(l, 64240);	/* window */
		put16(l, 0);
		put16(l, 0);
		/* Options as NOPs (kind 1): only their length matters here. */
		for (i = 0; i < s->tcp_opt; i++)
			put8(l, 1);
		break;
	case WR_IPPROTO_UDP:
		put16(l, s->sport);
		put16(l, s->dport);
		/* A first fragment's UDP length is the whole datagram's: twice this one. */
		put16(l, (8 + s->paylen) * (s->frag == WEIR_FRAG_FIRST ? 2 : 1));
		put16(l, 0);
		break;
	case WR_IPPROTO_ICMP:
	case WR_IPPROTO_ICMPV6:
		put8(l, s->icmp_type);
		put8(l, 0);
		put16(l, 0);
		put32(l, rnd());	/* identifier and sequence */
		break;
	}
	putn(l, s->pay, s->paylen);
}

static void build(const struct spec *s, struct frame *f)
{
	struct frame l4;

	build_l4(s, &l4);
	if (s->family == 4) {
		eth(f, WR_ETH_P_IP, 0, NULL);
		put8(f, 0x45);
		put8(f, 0);
		put16(f, 20 + l4.n);
		put16(f, rnd() & 0xffff);
		/* MF for a first fragment; a later one at offset 1480 (185 units of 8). */
		put16(f, s->frag == WEIR_FRAG_FIRST ? 0x2000 :
			 s->frag == WEIR_FRAG_LATER ? 185 : 0);
		put8(f, s->ttl);
		put8(f, s->proto);
		put16(f, 0);
		put32(f, s->src4);
		put32(f, s->dst4);
	} else {
		/* A fragment behind a fragment header (8 bytes), the same offsets as IPv4's. */
		int fh = s->frag != WEIR_FRAG_NONE;

		eth(f, WR_ETH_P_IPV6, 0, NULL);
		put32(f, 0x60000000);
		put16(f, l4.n + (fh ? 8 : 0));
		put8(f, fh ? WR_IPPROTO_FRAGMENT : s->proto);
		put8(f, s->ttl);
		putn(f, s->src6, 16);
		putn(f, s->dst6, 16);
		if (fh) {
			put8(f, s->proto);
			put8(f, 0);
			put16(f, s->frag == WEIR_FRAG_FIRST ? 1 : 185 << 3);
			put32(f, rnd());
		}
	}
	putn(f, l4.b, l4.n);
	/* Ethernet's minimum frame (60 bytes before the FCS): padding. */
	if (f->n < 60)
		zeros(f, 60 - f->n);
}

/* 2001:db8::X, the host's IPv6 addresses, and 2001:db8:1:C::1, a client. */
static void host6(__u8 *a, __u16 x)
{
	memcpy(a, DST6, 16);
	a[14] = x >> 8;
	a[15] = x & 0xff;
}

static void client6(__u8 *a, __u32 c)
{
	memcpy(a, DST6, 16);
	a[5] = 1;
	a[6] = (c >> 8) & 0xff;
	a[7] = c & 0xff;
}

/* A DNS query from a client: random id, recursion desired, a name of 10 to 40 bytes. */
static void normal_dns(struct spec *s, int family)
{
	__u16 id = rnd() & 0xffff;
	size_t i, name = rnd_in(10, 40);

	spec_init(s, family, WR_IPPROTO_UDP);
	if (family == 4) {
		s->src4 = IP4(198, 19, rnd() & 0xff, rnd_in(1, 254));
		s->dst4 = HOST_DNS;
	} else {
		client6(s->src6, rnd());
		host6(s->dst6, 0x53);
	}
	s->ttl = rnd_in(48, 64);
	s->sport = rnd_in(1024, 65535);
	s->dport = 53;
	s->pay[0] = id >> 8;
	s->pay[1] = id & 0xff;
	s->pay[2] = 0x01;	/* flags: RD */
	s->pay[3] = 0x00;
	s->pay[5] = 1;		/* one question */
	for (i = 0; i < name; i++)
		s->pay[12 + i] = 'a' + rnd() % 26;
	s->paylen = 12 + name + 5;
}

/* A segment of an HTTP client's connection: SYN, ACK, request, FIN. */
static void normal_http(struct spec *s)
{
	__u32 kind = rnd() % 10;
	static const char req[] = "GET /index.html HTTP/1.1\r\nHost: example\r\n";

	spec_init(s, 4, WR_IPPROTO_TCP);
	s->src4 = IP4(198, 18, 200 + rnd() % 8, rnd_in(1, 254));
	s->dst4 = HOST_WEB;
	s->ttl = rnd_in(52, 64);
	s->sport = rnd_in(32768, 60999);
	s->dport = 80;
	if (kind == 0) {
		s->tcp_flags = WEIR_TCP_SYN;
		s->tcp_opt = 20;	/* MSS, SACK, timestamps, window scale */
	} else if (kind < 3) {
		s->tcp_flags = WEIR_TCP_PSH | WEIR_TCP_ACK;
		s->tcp_opt = 12;	/* timestamps */
		memcpy(s->pay, req, sizeof(req) - 1);
		s->paylen = sizeof(req) - 1 + rnd_in(0, 300);
	} else if (kind == 9) {
		s->tcp_flags = WEIR_TCP_FIN | WEIR_TCP_ACK;
		s->tcp_opt = 12;
	} else {
		s->tcp_flags = WEIR_TCP_ACK;
		s->tcp_opt = 12;
	}
}

static void normal_ping(struct spec *s)
{
	spec_init(s, 4, WR_IPPROTO_ICMP);
	s->src4 = IP4(198, 18, 9, rnd_in(1, 20));
	s->dst4 = HOST_PING;
	s->ttl = rnd_in(55, 64);
	s->icmp_type = 8;
	rnd_bytes(s->pay, 56);
	s->paylen = 56;
}

/* Normal traffic: 40% DNS over IPv4, 10% over IPv6, 40% HTTP, 10% pings. */
static void normal(struct spec *s)
{
	__u32 k = rnd() % 10;

	if (k < 4)
		normal_dns(s, 4);
	else if (k < 5)
		normal_dns(s, 6);
	else if (k < 9)
		normal_http(s);
	else
		normal_ping(s);
}

/* A random, spoofed IPv4 source. */
static __u32 spoofed(void)
{
	return rnd() | 1;
}

/* A reflector's answer: UDP from sport to the victim, from anywhere. */
static void reflected(struct spec *s, __u16 sport, size_t lo, size_t hi)
{
	spec_init(s, 4, WR_IPPROTO_UDP);
	s->src4 = spoofed();
	s->dst4 = HOST_VICTIM;
	s->ttl = rnd_in(40, 120);
	s->sport = sport;
	s->dport = rnd_in(1024, 65535);
	s->paylen = rnd_in(lo, hi);
	rnd_bytes(s->pay, s->paylen);
}

/* The vectors. Each fills s with one attack packet. */
static void v_udp_prefix(struct spec *s)
{
	static const __u8 prefix[] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01 };

	spec_init(s, 4, WR_IPPROTO_UDP);
	s->src4 = spoofed();
	s->dst4 = HOST_DNS;
	s->ttl = rnd_in(30, 250);
	s->sport = rnd_in(1024, 65535);
	s->dport = 53;
	s->paylen = rnd_in(32, 200);
	rnd_bytes(s->pay, s->paylen);
	memcpy(s->pay, prefix, sizeof(prefix));
}

static void v_udp_prefix6(struct spec *s)
{
	v_udp_prefix(s);
	s->family = 6;
	rnd_bytes(s->src6, 16);
	host6(s->dst6, 0x53);
}

static void v_udp_fixed_len(struct spec *s)
{
	spec_init(s, 4, WR_IPPROTO_UDP);
	s->src4 = spoofed();
	s->dst4 = HOST_DNS;
	s->ttl = rnd_in(30, 250);
	s->sport = rnd_in(1024, 65535);
	s->dport = 53;
	s->paylen = 512;
	rnd_bytes(s->pay, s->paylen);
}

static void v_dns_refl(struct spec *s)
{
	reflected(s, 53, 900, 1400);
	/* A DNS answer: the id random, the flags a standard response (0x8180). */
	s->pay[2] = 0x81;
	s->pay[3] = 0x80;
}

static void v_ntp_refl(struct spec *s)
{
	/* A mode 7 monlist answer: 468 bytes of IP, version 2, implementation 3, request 42. */
	reflected(s, 123, 440, 440);
	s->pay[0] = 0xd7;
	s->pay[1] = 0x00;
	s->pay[2] = 0x03;
	s->pay[3] = 0x2a;
}

static void v_memcached_refl(struct spec *s)
{
	static const char value[] = "VALUE";

	/* The UDP frame header (request id, sequence, count 1, reserved), then "VALUE". */
	reflected(s, 11211, 1300, 1400);
	memset(s->pay, 0, 8);
	s->pay[5] = rnd() % 4;	/* sequence number of a multi-datagram answer */
	s->pay[6] = 0;
	s->pay[7] = 4;
	memcpy(s->pay + 8, value, 5);
}

static void v_ssdp_refl(struct spec *s)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\n";

	reflected(s, 1900, 260, 340);
	memcpy(s->pay, ok, sizeof(ok) - 1);
}

static void v_cldap_refl(struct spec *s)
{
	/* An LDAP message: a BER SEQUENCE with a four-byte length, the message id 1. */
	reflected(s, 389, 1400, 1472);
	s->pay[0] = 0x30;
	s->pay[1] = 0x84;
	s->pay[2] = 0x00;
	s->pay[3] = 0x00;
}

static void v_ack_flood(struct spec *s)
{
	spec_init(s, 4, WR_IPPROTO_TCP);
	s->src4 = spoofed();
	s->dst4 = HOST_WEB;
	s->ttl = rnd_in(30, 250);
	s->sport = rnd_in(1024, 65535);
	s->dport = 80;
	s->tcp_flags = WEIR_TCP_ACK;
}

static void v_syn_flood(struct spec *s)
{
	v_ack_flood(s);
	s->tcp_flags = WEIR_TCP_SYN;
}

static void v_carpet(struct spec *s)
{
	spec_init(s, 4, WR_IPPROTO_UDP);
	s->src4 = spoofed();
	s->dst4 = CARPET_NET | rnd_in(0, 255);
	s->ttl = rnd_in(30, 250);
	s->sport = rnd_in(1, 65535);
	s->dport = rnd_in(1, 65535);
	s->paylen = rnd_in(20, 1400);
	rnd_bytes(s->pay, s->paylen);
}

static void v_frag_flood(struct spec *s)
{
	spec_init(s, 4, WR_IPPROTO_UDP);
	s->src4 = spoofed();
	s->dst4 = HOST_DNS;
	s->ttl = rnd_in(30, 250);
	s->frag = WEIR_FRAG_LATER;
	s->paylen = rnd_in(100, 1480);
	rnd_bytes(s->pay, s->paylen);
}

static void v_frag_flood6(struct spec *s)
{
	v_frag_flood(s);
	s->family = 6;
	rnd_bytes(s->src6, 16);
	host6(s->dst6, 0x53);
}

/* A vector change inside the sample: NTP reflection, then memcached's. */
static size_t change_at;

static void v_changing(struct spec *s)
{
	if (change_at++ < ATTACK_N / 2)
		v_ntp_refl(s);
	else
		v_memcached_refl(s);
}

/* Pings from one /24 of real (unspoofed) hosts, and ICMPv6 echoes from one /48. */
static void v_icmp_from_net(struct spec *s)
{
	normal_ping(s);
	s->src4 = IP4(198, 18, 77, rnd_in(1, 254));
	s->paylen = rnd_in(8, 1400);
	s->ttl = rnd_in(40, 64);
}

static void v_icmp6_from_net(struct spec *s)
{
	spec_init(s, 6, WR_IPPROTO_ICMPV6);
	client6(s->src6, 0xbad);
	rnd_bytes(s->src6 + 8, 8);
	s->src6[6] = 0xba;
	s->src6[7] = rnd() & 0xff;
	host6(s->dst6, 1);
	s->ttl = rnd_in(40, 64);
	s->icmp_type = 128;
	s->paylen = rnd_in(8, 1400);
	rnd_bytes(s->pay, s->paylen);
}

static void v_icmp_flood(struct spec *s)
{
	spec_init(s, 4, WR_IPPROTO_ICMP);
	s->src4 = spoofed();
	s->dst4 = HOST_PING;
	s->ttl = rnd_in(30, 250);
	s->icmp_type = 8;
	s->paylen = 1000;
	rnd_bytes(s->pay, s->paylen);
}

/* An attack that looks like the users: more of the normal mix, from other clients. */
static void v_like_normal(struct spec *s)
{
	normal(s);
}

/* SYNs as real clients send them (options, their TTLs): only their number gives them away. */
static void v_syn_like_users(struct spec *s)
{
	do
		normal_http(s);
	while (s->tcp_flags != WEIR_TCP_SYN);
}

/* ACKs as in real connections (timestamps, their TTLs), of no connection at all. */
static void v_ack_like_users(struct spec *s)
{
	do
		normal_http(s);
	while (s->tcp_flags != WEIR_TCP_ACK);
}

/* One packet read back: its frame (for weir's matcher), whether it is attack, its reduction. */
struct rec {
	__u8 *frame;
	size_t caplen, len;
	int attack;
	struct wr_fp_pkt fp;
};

struct trace {
	struct rec *r;
	size_t n;
	struct wr_fp_pkt *fp;	/* the reductions, in one array for wr_fp_choose */
};

/*
 * Write n packets to path as a pcap file: gen's attack, but every
 * NORMAL_EVERY-th packet normal traffic; all normal when gen is NULL.
 * labels[i] says which was which (the file has no room for it). Each packet
 * is stamped with its index as milliseconds: no clock.
 */
static int write_trace(const char *path, void (*gen)(struct spec *), size_t n, __u64 seed,
		       int *labels, int snaplen)
{
	static struct spec s;
	static struct frame f;
	pcap_dumper_t *d;
	pcap_t *pd;
	size_t i;

	pd = pcap_open_dead(DLT_EN10MB, 65535);
	if (!pd)
		return -1;
	d = pcap_dump_open(pd, path);
	if (!d) {
		pcap_close(pd);
		return -1;
	}
	rng_seed(seed);
	for (i = 0; i < n; i++) {
		struct pcap_pkthdr h;

		labels[i] = gen && i % NORMAL_EVERY;
		if (labels[i])
			gen(&s);
		else
			normal(&s);
		build(&s, &f);
		memset(&h, 0, sizeof(h));
		h.ts.tv_sec = i / 1000;
		h.ts.tv_usec = (i % 1000) * 1000;
		h.len = f.n;
		h.caplen = snaplen && f.n > (size_t)snaplen ? (size_t)snaplen : f.n;
		pcap_dump((u_char *)d, &h, f.b);
	}
	pcap_dump_close(d);
	pcap_close(pd);
	return 0;
}

static void trace_free(struct trace *t)
{
	size_t i;

	for (i = 0; t->r && i < t->n; i++)
		free(t->r[i].frame);
	free(t->r);
	free(t->fp);
	memset(t, 0, sizeof(*t));
}

/* Read path back (want packets); each frame through wr_fp_from_snap. 0, or what failed. */
static int read_trace(const char *path, const int *labels, size_t want, struct trace *t)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	p = pcap_open_offline(path, errbuf);
	if (!p)
		return -ENOENT;
	t->r = calloc(want, sizeof(*t->r));
	t->fp = calloc(want, sizeof(*t->fp));
	if (!t->r || !t->fp) {
		pcap_close(p);
		return -ENOMEM;
	}
	while (pcap_next_ex(p, &h, &data) == 1) {
		struct rec *r;

		if (t->n == want) {
			ret = -E2BIG;
			break;
		}
		r = &t->r[t->n];
		r->frame = malloc(h->caplen);
		if (!r->frame) {
			ret = -ENOMEM;
			break;
		}
		memcpy(r->frame, data, h->caplen);
		r->caplen = h->caplen;
		r->len = h->len;
		r->attack = labels[t->n];
		t->n++;
		ret = wr_fp_from_snap(r->frame, r->caplen, r->len, &r->fp);
		if (ret)
			break;
		t->fp[t->n - 1] = r->fp;
	}
	pcap_close(p);
	if (!ret && t->n != want)
		ret = -EIO;
	return ret;
}

/* Split s into argv (at most max words): the word count. */
static int split(char *s, char **argv, int max)
{
	char *save = NULL, *w;
	int argc = 0;

	for (w = strtok_r(s, " ", &save); w && argc < max; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return argc;
}

/* The choice's words through wr_rule_parse, as `weir rule add autofp WORDS` would. */
static int parse_words(const struct wr_fp_choice *c, struct weir_rule *r, char *words,
		       size_t len, struct wr_perr *pe)
{
	char buf[1024], *argv[64], name[WEIR_NAME_LEN];
	int n;

	n = wr_fp_rule_words(c, words, len);
	if (n < 0)
		return n;
	snprintf(buf, sizeof(buf), "autofp %s", words);
	memset(r, 0, sizeof(*r));
	memset(pe, 0, sizeof(*pe));
	return wr_rule_parse(split(buf, argv, 64), argv, r, NULL, NULL, name, pe);
}

/*
 * Does rule r match this frame, as the data path decides? Its parser and
 * its matcher, the payload words read where the data path reads them (a
 * word wholly within the captured frame). -1 for a frame it cannot parse.
 */
static int weir_matches(const struct weir_rule *r, const struct rec *rec)
{
	__u32 words[WEIR_MAX_PAY] = { 0 }, have = 0, t;
	struct wr_pkt p;
	struct wr_pkt_x x;

	memset(&p, 0, sizeof(p));
	memset(&x, 0, sizeof(x));
	if (wr_parse(rec->frame, rec->frame + rec->caplen, rec->len, &p, &x) != WR_PARSE_IP)
		return -1;
	if (!wr_rule_match(r, &p) || !wr_rule_match_x(r, &p, &x))
		return 0;
	for (t = 0; t < r->nr_pay && t < WEIR_MAX_PAY; t++) {
		size_t at = (size_t)x.payoff + r->pay[t].off;

		if (at + 4 <= rec->caplen) {
			memcpy(&words[t], rec->frame + at, 4);
			have |= 1u << t;
		}
	}
	return wr_rule_match_pay(r, words, have);
}

/* Counts of one trace against a rule: attack and normal packets, and how many it matches. */
struct tally {
	size_t attack, attack_hit, normal, normal_hit, disagree, unparsed;
};

static void tally(const struct weir_rule *r, const struct wr_fp_choice *c, const struct trace *t,
		  struct tally *k)
{
	size_t i;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < t->n; i++) {
		int hit = weir_matches(r, &t->r[i]);

		if (hit < 0) {
			k->unparsed++;
			continue;
		}
		if (hit != wr_fp_match(c, &t->fp[i]))
			k->disagree++;
		if (t->r[i].attack) {
			k->attack++;
			k->attack_hit += hit;
		} else {
			k->normal++;
			k->normal_hit += hit;
		}
	}
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The case's files: a directory of its own, removed with what is in it. */
struct files {
	char dir[64];
	char before[128], attack[128];
};

static int files_open(struct files *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/weir-auto-fp.XXXXXX");
	if (!mkdtemp(f->dir))
		return -errno;
	snprintf(f->before, sizeof(f->before), "%s/before.pcap", f->dir);
	snprintf(f->attack, sizeof(f->attack), "%s/attack.pcap", f->dir);
	return 0;
}

static void files_close(struct files *f)
{
	nftw(f->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* Both traces written and read back: the before-sample (seed) and the attack sample (seed + 1). */
static int load(struct files *fs, void (*gen)(struct spec *), __u64 seed, struct trace *before,
		struct trace *attack, int snaplen)
{
	static int lb[BEFORE_N], la[ATTACK_N];
	int err;

	memset(before, 0, sizeof(*before));
	memset(attack, 0, sizeof(*attack));
	err = files_open(fs);
	if (err)
		return err;
	if (write_trace(fs->before, NULL, BEFORE_N, seed, lb, snaplen) ||
	    write_trace(fs->attack, gen, ATTACK_N, seed + 1, la, snaplen))
		return -EIO;
	err = read_trace(fs->before, lb, BEFORE_N, before);
	return err ? err : read_trace(fs->attack, la, ATTACK_N, attack);
}

/*
 * A vector the chooser must fingerprint: a drop rule that weir's matcher,
 * on every packet again, finds to cover >= 99% of the attack's packets
 * and <= 0.1% of the before-trace, and where wr_fp_match agrees.
 */
static void fingerprinted_has(void (*gen)(struct spec *), __u64 seed, int snaplen,
			      const char *has)
{
	struct trace before, attack;
	struct wr_fp_choice c;
	struct weir_rule r;
	struct wr_perr pe;
	struct tally ka, kb;
	struct files fs;
	char words[512], line[512], want[64], want2[64];
	int err;

	err = load(&fs, gen, seed, &before, &attack, snaplen);
	CHECK(err == 0, "traces: %s", strerror(-err));
	if (err)
		goto out;
	err = wr_fp_choose(attack.fp, attack.n, before.fp, before.n, NULL, &c);
	CHECK(err == 0, "wr_fp_choose: %s", strerror(-err));
	if (err)
		goto out;
	wr_fp_describe(&c, line, sizeof(line));
	printf("# %s\n", line);
	CHECK(c.action == WR_FP_DROP, "no fingerprint: %s", line);
	snprintf(want, sizeof(want), " of %d sampled (", ATTACK_N);
	snprintf(want2, sizeof(want2), " of %d before", BEFORE_N);
	CHECK(strstr(line, want) && strstr(line, want2), "description \"%s\"", line);
	err = parse_words(&c, &r, words, sizeof(words), &pe);
	CHECK(err == 0, "\"%s\" refused: %s", words, pe.msg);
	if (err)
		goto out;
	CHECK(!has || strstr(words, has), "\"%s\" lacks \"%s\"", words, has);
	tally(&r, &c, &attack, &ka);
	tally(&r, &c, &before, &kb);
	CHECK(ka.unparsed == 0 && kb.unparsed == 0, "unparsed frames");
	CHECK(ka.disagree == 0 && kb.disagree == 0, "wr_fp_match disagrees with weir's matcher "
	      "on %zu packets", ka.disagree + kb.disagree);
	CHECK(ka.attack_hit * 100 >= ka.attack * 99, "\"%s\" matches %zu of %zu attack packets",
	      words, ka.attack_hit, ka.attack);
	CHECK(kb.normal_hit * 1000 <= kb.normal, "\"%s\" matches %zu of %zu before", words,
	      kb.normal_hit, kb.normal);
	/* The choice says what it measured. */
	CHECK_EQ(c.matched, ka.attack_hit + ka.normal_hit);
	CHECK_EQ(c.false_matched, kb.normal_hit);
	CHECK_EQ(c.n, ATTACK_N);
	CHECK_EQ(c.m, BEFORE_N);
	CHECK(c.cover >= 0.99 && c.cover <= 1, "cover %.4f", c.cover);
out:
	trace_free(&before);
	trace_free(&attack);
	files_close(&fs);
}

static void fingerprinted(void (*gen)(struct spec *), __u64 seed)
{
	fingerprinted_has(gen, seed, 0, NULL);
}

/* A vector no fingerprint separates: the fallback named, with its reason, and valid words. */
static void falls_back(void (*gen)(struct spec *), __u64 seed, int action, const char *words_has,
		       const char *reason_has)
{
	struct trace before, attack;
	struct wr_fp_choice c;
	struct weir_rule r;
	struct wr_perr pe;
	struct files fs;
	char words[512], line[512];
	int err;

	err = load(&fs, gen, seed, &before, &attack, 0);
	CHECK(err == 0, "traces: %s", strerror(-err));
	if (err)
		goto out;
	err = wr_fp_choose(attack.fp, attack.n, before.fp, before.n, NULL, &c);
	CHECK(err == 0, "wr_fp_choose: %s", strerror(-err));
	if (err)
		goto out;
	wr_fp_describe(&c, line, sizeof(line));
	printf("# %s\n", line);
	CHECK(c.action == action, "action %d, want %d: %s", c.action, action, line);
	CHECK(strstr(c.reason, reason_has), "reason \"%s\" lacks \"%s\"", c.reason, reason_has);
	err = parse_words(&c, &r, words, sizeof(words), &pe);
	CHECK(err == 0, "\"%s\" refused: %s", words, pe.msg);
	CHECK(strstr(words, words_has), "\"%s\" lacks \"%s\"", words, words_has);
out:
	trace_free(&before);
	trace_free(&attack);
	files_close(&fs);
}

TEST_CASE(fp_udp_fixed_prefix)
{
	fingerprinted(v_udp_prefix, 101);
}

TEST_CASE(fp_udp_fixed_prefix_ipv6)
{
	fingerprinted(v_udp_prefix6, 102);
}

TEST_CASE(fp_udp_fixed_length)
{
	fingerprinted(v_udp_fixed_len, 103);
}

TEST_CASE(fp_dns_reflection)
{
	fingerprinted(v_dns_refl, 104);
}

TEST_CASE(fp_ntp_reflection)
{
	fingerprinted(v_ntp_refl, 105);
}

TEST_CASE(fp_memcached_reflection)
{
	fingerprinted(v_memcached_refl, 106);
}

TEST_CASE(fp_ssdp_reflection)
{
	fingerprinted(v_ssdp_refl, 107);
}

TEST_CASE(fp_cldap_reflection)
{
	fingerprinted(v_cldap_refl, 108);
}

TEST_CASE(fp_ack_flood)
{
	fingerprinted(v_ack_flood, 109);
}

TEST_CASE(fp_syn_flood)
{
	fingerprinted(v_syn_flood, 110);
}

TEST_CASE(fp_carpet_bombing)
{
	fingerprinted(v_carpet, 111);
}

TEST_CASE(fp_fragment_flood)
{
	fingerprinted(v_frag_flood, 112);
}

TEST_CASE(fp_fragment_flood_ipv6)
{
	fingerprinted(v_frag_flood6, 114);
}

TEST_CASE(fp_icmp_flood)
{
	fingerprinted(v_icmp_flood, 113);
}

TEST_CASE(fp_icmp_from_one_net)
{
	fingerprinted_has(v_icmp_from_net, 115, 0, "src 198.18.77.0/24");
}

TEST_CASE(fp_icmpv6_from_one_net)
{
	fingerprinted_has(v_icmp6_from_net, 116, 0, "src 2001:db8:1::/48");
}

TEST_CASE(fp_like_normal_falls_back)
{
	falls_back(v_like_normal, 201, WR_FP_PER_DST, "per dst", "looks like the traffic before");
}

TEST_CASE(fp_syn_like_users_falls_back_to_cookies)
{
	falls_back(v_syn_like_users, 202, WR_FP_COOKIE, "action cookie",
		   "every fingerprint that covers");
}

TEST_CASE(fp_ack_like_users_falls_back_to_tcp_state)
{
	falls_back(v_ack_like_users, 203, WR_FP_TCP_STATE, "tcp-state on",
		   "every fingerprint that covers");
}

/*
 * A sample that straddles a change of vector (NTP's reflection, then
 * memcached's) holds both: one rule must hold them, here by the target
 * and the lengths they share.
 */
TEST_CASE(fp_vector_change)
{
	change_at = 0;
	fingerprinted(v_changing, 205);
}

/*
 * The rule holds the attack's next packets too, not only those sampled:
 * chosen on one pair of traces, matched by weir's matcher against a fresh
 * pair (other seeds) of the same vector and the same users.
 */
static void holds_fresh(void (*gen)(struct spec *), __u64 seed)
{
	struct trace before, attack, before2, attack2;
	struct wr_fp_choice c;
	struct weir_rule r;
	struct wr_perr pe;
	struct tally ka, kb;
	struct files fs, fs2;
	char words[512];
	int err;

	memset(&fs2, 0, sizeof(fs2));
	memset(&before2, 0, sizeof(before2));
	memset(&attack2, 0, sizeof(attack2));
	err = load(&fs, gen, seed, &before, &attack, 0);
	CHECK(err == 0, "traces: %s", strerror(-err));
	if (err)
		goto out;
	CHECK_EQ(wr_fp_choose(attack.fp, attack.n, before.fp, before.n, NULL, &c), 0);
	CHECK(c.action == WR_FP_DROP, "no fingerprint");
	err = parse_words(&c, &r, words, sizeof(words), &pe);
	CHECK(err == 0, "\"%s\" refused: %s", words, pe.msg);
	if (err)
		goto out;
	err = load(&fs2, gen, seed + 1000, &before2, &attack2, 0);
	CHECK(err == 0, "fresh traces: %s", strerror(-err));
	if (err)
		goto out;
	tally(&r, &c, &attack2, &ka);
	tally(&r, &c, &before2, &kb);
	CHECK(ka.attack_hit * 100 >= ka.attack * 99, "\"%s\" matches %zu of %zu fresh attack "
	      "packets", words, ka.attack_hit, ka.attack);
	CHECK(kb.normal_hit * 1000 <= kb.normal, "\"%s\" matches %zu of %zu fresh before",
	      words, kb.normal_hit, kb.normal);
out:
	trace_free(&before);
	trace_free(&attack);
	trace_free(&before2);
	trace_free(&attack2);
	files_close(&fs);
	if (fs2.dir[0])
		files_close(&fs2);
}

TEST_CASE(fp_fresh_dns_reflection)
{
	holds_fresh(v_dns_refl, 401);
}

TEST_CASE(fp_fresh_cldap_reflection)
{
	holds_fresh(v_cldap_refl, 402);
}

TEST_CASE(fp_fresh_fragment_flood)
{
	holds_fresh(v_frag_flood, 403);
}

TEST_CASE(fp_fresh_carpet_bombing)
{
	holds_fresh(v_carpet, 404);
}

/* Five real clients hammering the DNS service with queries like everyone's. */
static void v_few_sources(struct spec *s)
{
	normal_dns(s, 4);
	s->src4 = IP4(198, 19, 10 + rnd() % 5 * 40, 7);
}

TEST_CASE(fp_few_sources_fall_back_per_source)
{
	falls_back(v_few_sources, 204, WR_FP_PER_SRC, "per src", "every fingerprint that covers");
}

/* A flood whose prefix only 96% of its packets carry: no rule that misses the rest. */
static void v_partial_prefix(struct spec *s)
{
	v_udp_prefix(s);
	if (rnd() % 100 < 4)
		rnd_bytes(s->pay, 8);
}

TEST_CASE(fp_partial_prefix_not_taken)
{
	struct trace before, attack;
	struct wr_fp_choice c;
	struct weir_rule r;
	struct wr_perr pe;
	struct tally ka;
	struct files fs;
	char words[512], line[512];
	int err;

	err = load(&fs, v_partial_prefix, 301, &before, &attack, 0);
	CHECK(err == 0, "traces: %s", strerror(-err));
	if (err)
		goto out;
	err = wr_fp_choose(attack.fp, attack.n, before.fp, before.n, NULL, &c);
	CHECK(err == 0, "wr_fp_choose: %s", strerror(-err));
	if (err)
		goto out;
	wr_fp_describe(&c, line, sizeof(line));
	printf("# %s\n", line);
	err = parse_words(&c, &r, words, sizeof(words), &pe);
	CHECK(err == 0, "\"%s\" refused: %s", words, pe.msg);
	tally(&r, &c, &attack, &ka);
	/* A drop must still hold the attack; the prefix alone cannot. */
	CHECK(c.action != WR_FP_DROP || ka.attack_hit * 100 >= ka.attack * 99,
	      "\"%s\" matches %zu of %zu attack packets", words, ka.attack_hit, ka.attack);
	CHECK(!(c.fields & WR_FP_M_PAY0) || c.action != WR_FP_DROP, "took the prefix: %s", line);
out:
	trace_free(&before);
	trace_free(&attack);
	files_close(&fs);
}

/*
 * Captures cut at 96 bytes (every header of the traces, IPv4's first
 * payload words): lengths from the wire.
 */
TEST_CASE(fp_snapped_capture)
{
	fingerprinted_has(v_ntp_refl, 302, 96, "payload 0=0xd700032a");
}

/* The same traces give the same words, whatever ran before. */
TEST_CASE(fp_deterministic)
{
	struct trace before, attack;
	struct wr_fp_choice c1, c2;
	struct files fs;
	char w1[512], w2[512];
	int err;

	err = load(&fs, v_ssdp_refl, 303, &before, &attack, 0);
	CHECK(err == 0, "traces: %s", strerror(-err));
	if (err)
		goto out;
	CHECK_EQ(wr_fp_choose(attack.fp, attack.n, before.fp, before.n, NULL, &c1), 0);
	trace_free(&before);
	trace_free(&attack);
	files_close(&fs);
	err = load(&fs, v_ssdp_refl, 303, &before, &attack, 0);
	CHECK(err == 0, "traces again: %s", strerror(-err));
	if (err)
		goto out;
	CHECK_EQ(wr_fp_choose(attack.fp, attack.n, before.fp, before.n, NULL, &c2), 0);
	CHECK(wr_fp_rule_words(&c1, w1, sizeof(w1)) > 0, "words");
	CHECK(wr_fp_rule_words(&c2, w2, sizeof(w2)) > 0, "words");
	CHECK(!strcmp(w1, w2), "\"%s\" then \"%s\"", w1, w2);
	CHECK(c1.matched == c2.matched && c1.false_matched == c2.false_matched, "counts differ");
out:
	trace_free(&before);
	trace_free(&attack);
	files_close(&fs);
}

/* One frame's reduction, field by field: QinQ-tagged IPv4 UDP, and IPv6 TCP. */
TEST_CASE(fp_frame_fields)
{
	static struct spec s;
	struct frame f, g;
	struct wr_fp_pkt p;
	static const __u8 mapped[16] = { [10] = 0xff, [11] = 0xff, [12] = 198, [13] = 18,
					 [14] = 0, [15] = 10 };

	rng_seed(7);
	v_ntp_refl(&s);
	s.ttl = 57;
	/* The packet behind two VLAN tags. */
	build(&s, &g);
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	putn(&f, g.b + 14, g.n - 14);
	CHECK_EQ(wr_fp_from_frame(f.b, f.n, &p), 0);
	CHECK_EQ(p.family, 4);
	CHECK_EQ(p.proto, WR_IPPROTO_UDP);
	CHECK_EQ(p.sport, 123);
	CHECK_EQ(p.dport, s.dport);
	CHECK_EQ(p.len, 468);
	CHECK_EQ(p.ttl, 57);
	CHECK_EQ(p.frag, WEIR_FRAG_NONE);
	CHECK_EQ(p.nr_words, 2);
	CHECK_EQ(ntohl(p.words[0]), 0xd700032a);
	CHECK(!memcmp(p.daddr, mapped, 16), "daddr not ::ffff:198.18.0.10");
	CHECK_EQ(p.flags, WR_FP_PORTS | WR_FP_L4);

	spec_init(&s, 6, WR_IPPROTO_TCP);
	client6(s.src6, 5);
	host6(s.dst6, 0x80);
	s.sport = 40001;
	s.dport = 443;
	s.ttl = 63;
	s.tcp_flags = WEIR_TCP_SYN | WEIR_TCP_ECE | WEIR_TCP_CWR;
	s.tcp_opt = 20;
	s.paylen = 2;		/* half a word: none counted */
	build(&s, &f);
	CHECK_EQ(wr_fp_from_frame(f.b, f.n, &p), 0);
	CHECK_EQ(p.family, 6);
	CHECK_EQ(p.len, 40 + 40 + 2);
	CHECK_EQ(p.tcp_flags, WEIR_TCP_SYN | WEIR_TCP_ECE | WEIR_TCP_CWR);
	CHECK_EQ(p.sport, 40001);
	CHECK_EQ(p.dport, 443);
	CHECK_EQ(p.ttl, 63);
	CHECK_EQ(p.nr_words, 0);
	CHECK(!memcmp(p.saddr, s.src6, 16), "saddr");

	/* Cut after the first payload word: the second is absent, the lengths the wire's. */
	rng_seed(7);
	v_ntp_refl(&s);
	build(&s, &f);
	CHECK_EQ(wr_fp_from_snap(f.b, 14 + 20 + 8 + 6, f.n, &p), 0);
	CHECK_EQ(p.nr_words, 1);
	CHECK_EQ(p.len, 468);
}

/* Frames the parser refuses: an error, and out untouched. */
TEST_CASE(fp_bad_frames)
{
	static struct spec s;
	struct wr_fp_pkt p, before;
	struct frame f, l4;

	memset(&p, 0x5a, sizeof(p));
	before = p;
	rng_seed(8);
	v_dns_refl(&s);
	build(&s, &f);
	/* Cut inside the IPv4 header. */
	CHECK_EQ(wr_fp_from_frame(f.b, 14 + 10, &p), -EINVAL);
	/* Cut inside the UDP header, the IP length still the whole packet's. */
	CHECK_EQ(wr_fp_from_frame(f.b, 14 + 20 + 4, &p), -EINVAL);
	/* Shorter than Ethernet. */
	CHECK_EQ(wr_fp_from_frame(f.b, 6, &p), -EINVAL);
	CHECK_EQ(wr_fp_from_frame(NULL, 60, &p), -EINVAL);
	/* More captured than the wire had. */
	CHECK_EQ(wr_fp_from_snap(f.b, f.n, f.n - 1, &p), -EINVAL);
	/* IHL 4. */
	l4_udp(&l4, 53, 20);
	eth_ip4(&f, IP4(198, 18, 3, 3), WR_IPPROTO_UDP, 4, 0, 0, &l4);
	CHECK_EQ(wr_fp_from_frame(f.b, f.n, &p), -EINVAL);
	/* ARP: not IP. */
	eth(&f, 0x0806, 0, NULL);
	zeros(&f, 28);
	CHECK_EQ(wr_fp_from_frame(f.b, f.n, &p), -EPROTONOSUPPORT);
	/* A third VLAN tag: deeper than weir looks. */
	eth(&f, WR_ETH_P_IP, 3, TAG_3);
	zeros(&f, 40);
	CHECK_EQ(wr_fp_from_frame(f.b, f.n, &p), -EINVAL);
	CHECK(!memcmp(&p, &before, sizeof(p)), "out changed by a refused frame");
}

/* Samples and options the chooser refuses, and buffers too short for its words. */
TEST_CASE(fp_bad_samples)
{
	static struct wr_fp_pkt a[64], b[64];
	struct wr_fp_choice c, untouched;
	struct wr_fp_opts o;
	static struct spec s;
	struct frame f;
	char small[8] = "x";
	size_t i;

	rng_seed(9);
	for (i = 0; i < 64; i++) {
		v_ntp_refl(&s);
		build(&s, &f);
		CHECK_EQ(wr_fp_from_frame(f.b, f.n, &a[i]), 0);
		normal(&s);
		build(&s, &f);
		CHECK_EQ(wr_fp_from_frame(f.b, f.n, &b[i]), 0);
	}
	memset(&c, 0x5a, sizeof(c));
	untouched = c;
	CHECK_EQ(wr_fp_choose(a, 0, b, 64, NULL, &c), -EINVAL);
	CHECK_EQ(wr_fp_choose(a, 64, b, 0, NULL, &c), -EINVAL);
	CHECK_EQ(wr_fp_choose(NULL, 64, b, 64, NULL, &c), -EINVAL);
	CHECK_EQ(wr_fp_choose(a, 64, b, 64, NULL, NULL), -EINVAL);
	wr_fp_opts_init(&o);
	o.cover = 0;
	CHECK_EQ(wr_fp_choose(a, 64, b, 64, &o, &c), -EINVAL);
	o.cover = 1.5;
	CHECK_EQ(wr_fp_choose(a, 64, b, 64, &o, &c), -EINVAL);
	wr_fp_opts_init(&o);
	o.false_max = 1;
	CHECK_EQ(wr_fp_choose(a, 64, b, 64, &o, &c), -EINVAL);
	wr_fp_opts_init(&o);
	o.limit_pps = 0;
	CHECK_EQ(wr_fp_choose(a, 64, b, 64, &o, &c), -EINVAL);
	CHECK(!memcmp(&c, &untouched, sizeof(c)), "out changed by refused input");

	/* A good choice, then words into buffers too short for them. */
	CHECK_EQ(wr_fp_choose(a, 64, b, 64, NULL, &c), 0);
	CHECK_EQ(c.action, WR_FP_DROP);
	CHECK_EQ(wr_fp_rule_words(&c, small, sizeof(small)), -ENOSPC);
	CHECK(small[0] == '\0', "a cut word left: \"%s\"", small);
	CHECK_EQ(wr_fp_describe(&c, small, sizeof(small)), -ENOSPC);
	CHECK(small[0] == '\0', "a cut line left: \"%s\"", small);
	CHECK_EQ(wr_fp_rule_words(&c, small, 0), -ENOSPC);
	c.action = 99;
	CHECK_EQ(wr_fp_rule_words(&c, small, sizeof(small)), -EINVAL);
}

/* The sketch keeps what it promises: a key above 1/WR_SS_K of the stream, counted within err. */
TEST_CASE(fp_sketch_heavy_hitters)
{
	struct wr_ss s;
	const struct wr_ss_item *top;
	__u32 i, heavy = 0, seen = 0;

	memset(&s, 0, sizeof(s));
	rng_seed(11);
	/* 10000 items: key 42 one in 12 of them (above 1/16), the rest of 5000 keys. */
	for (i = 0; i < 10000; i++) {
		if (i % 12 == 0) {
			wr_ss_add(&s, 42, i);
			heavy++;
		} else {
			wr_ss_add(&s, 1000 + rnd() % 5000, i);
		}
	}
	CHECK_EQ(s.used, WR_SS_K);
	for (i = 0; i < s.used; i++) {
		if (s.it[i].key != 42)
			continue;
		seen = 1;
		CHECK(s.it[i].count >= heavy && s.it[i].count - s.it[i].err <= heavy,
		      "count %u err %u, true %u", s.it[i].count, s.it[i].err, heavy);
		CHECK_EQ(s.it[i].rep % 12, 0);
	}
	CHECK(seen, "the heavy key lost its counter");
	top = wr_ss_top(&s);
	CHECK(top && top->key == 42, "the heaviest counter is not the heavy key");
	memset(&s, 0, sizeof(s));
	CHECK(wr_ss_top(&s) == NULL, "an empty sketch has a top");
}

/* The vector of a choice: the fixed set the metric's label takes. */
TEST_CASE(fp_vector_names)
{
	struct wr_fp_choice c;
	int v, n = 0;

	memset(&c, 0, sizeof(c));
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_OTHER);
	c.fields = WR_FP_M_PROTO | WR_FP_M_SPORT;
	c.proto = 17;
	c.sport = 123;
	CHECK(!strcmp(wr_fp_vector_name(wr_fp_vector(&c)), "reflection-ntp"), "%s",
	      wr_fp_vector_name(wr_fp_vector(&c)));
	c.sport = 11211;
	CHECK(!strcmp(wr_fp_vector_name(wr_fp_vector(&c)), "reflection-memcached"), "%s",
	      wr_fp_vector_name(wr_fp_vector(&c)));
	c.sport = 5300;
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_UDP);
	c.fields |= WR_FP_M_FRAG;
	c.frag = WEIR_FRAG_LATER;
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_FRAG);
	memset(&c, 0, sizeof(c));
	c.fields = WR_FP_M_PROTO | WR_FP_M_FLAGS;
	c.proto = 6;
	c.tcp_flags = WEIR_TCP_SYN;
	c.tcp_mask = 0xff;
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_SYN);
	c.tcp_flags = WEIR_TCP_ACK;
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_ACK);
	c.fields = WR_FP_M_PROTO;
	c.action = WR_FP_TCP_STATE;
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_TCP);
	c.proto = 58;
	CHECK_EQ(wr_fp_vector(&c), WR_FP_V_ICMP);
	for (v = 0; v < WR_FP_NR_VECTORS; v++)
		n += wr_fp_vector_name(v) && wr_fp_vector_name(v)[0];
	CHECK_EQ(n, WR_FP_NR_VECTORS);
	CHECK(!wr_fp_vector_name(-1) && !wr_fp_vector_name(WR_FP_NR_VECTORS), "out of range");
}

int main(void)
{
	return check_run_all();
}
