// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * progcost: what the sluice data path costs per packet, measured with
 * bpf_prog_test_run next to a trivial XDP_DROP program in the same run.
 *
 * Four tables, each the median of --rounds rounds, the candidates of a
 * table alternated inside every round so that noise hits them alike:
 *
 *  - paths: no rules, an existing key admitted / dropped, an IPv6 /64 key,
 *    4 limits on one rule, 8/32/64 rules, a spoofed source refused by the
 *    rule-wide limit (repeat runs of one packet), and a new key inserted
 *    into a full table (one run per packet, each from a new source, next
 *    to the trivial program run the same way), under each data-path clock;
 *  - pieces: the trivial program plus one thing (a clock read, a lookup, a
 *    call), which says where the time of a path goes;
 *  - tracked keys: an existing key picked at random among 1k .. 4M keys
 *    (one run per packet, IPv6 /64 keys), the cache-cold case;
 *  - memory: bytes per tracked key from each table's own accounting
 *    (memlock in fdinfo), next to the kernel's plain hash map.
 *
 * Markdown goes to stdout; --json FILE writes every median for the bench
 * driver and its plots. Private maps only: nothing pinned is touched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.h"
#include "sluice_limiter.h"
#include "sluice.skel.h"
#include "trivial.skel.h"
#include "prims.skel.h"

#define PKT4_LEN	64
#define PKT6_LEN	86
#define PKT_MAX		PKT6_LEN
/* Rate and burst of a limit that admits everything a run sends. */
#define OPEN_RATE	1000000000ULL
/* Keys of the "full table" instances: small, so filling them is quick. */
#define FULL_KEYS	65536
/* Destination port the measured rule matches; the others take 10000 + i. */
#define BENCH_PORT	9000
/* Source of the repeat runs: 198.18.0.2. */
#define SRC4		0xc6120002u
/* IPv6 sources 2001:db8:X:Y::1, X:Y = SRC6_W1 + n: one /64 per key. */
#define SRC6_W1		0x10000000u
#define MAX_ROUNDS	101

enum clock_col { CLK_PRECISE, CLK_COARSE, NCLK };

enum path {
	P_NORULE, P_HIT, P_DROP, P_V6, P_LIM4, P_RULES8, P_RULES32, P_RULES64, P_SPOOF,
	P_HIT1, P_NEWFULL, NPATH
};
static const struct {
	const char *key, *name;
	int distinct;		/* one run per packet */
} paths[NPATH] = {
	{ "no_rules", "no rules (parse, match nothing, count)", 0 },
	{ "hit", "one rule, existing key, admitted", 0 },
	{ "drop", "one rule, existing key, dropped", 0 },
	{ "v6_64", "IPv6 /64 key, existing, admitted", 0 },
	{ "limits4", "4 limits on one rule (src, src/24, src/16, all), admitted", 0 },
	{ "rules8", "8 rules, the last matches, existing key", 0 },
	{ "rules32", "32 rules, the last matches, existing key", 0 },
	{ "rules64", "64 rules, the last matches, existing key", 0 },
	{ "spoof", "spoofed source refused by a rule-wide limit (per all + per src)", 0 },
	{ "hit_one_run", "one rule, existing key, admitted (one run per packet)", 1 },
	{ "new_full", "new key inserted into a full table (LRU evicts)", 1 },
};

enum prim { PR_KTIME, PR_COARSE, PR_JIFFIES, PR_PRANDOM, PR_SUBCALL, PR_LRU, PR_HASH,
	    PR_LRU_CAS, PR_COUNTERS, NPRIM };
static const char *prim_names[NPRIM] = {
	"bpf_ktime_get_ns (precise clock)", "bpf_ktime_get_coarse_ns (coarse clock)",
	"bpf_jiffies64 (inlined by the JIT)", "bpf_get_prandom_u32 (any helper call)",
	"call of a global BPF function", "LRU hash lookup, 24-byte key, hit",
	"hash lookup, 24-byte key, hit", "LRU hash lookup + compare-and-swap",
	"4 per-CPU counter increments",
};

/* Tracked-key counts of the scaling table. */
static unsigned long scale_keys[] = { 1024, 65536, 1048576, 4194304 };
#define NSCALE (sizeof(scale_keys) / sizeof(scale_keys[0]))

struct inst {
	struct sluice *skel;
	int prog, state, rulesets, config, agg;
	__u32 uid;		/* next rule uid */
	unsigned long max_keys;
};

struct lim {
	__u64 rate, burst;
	__u8 key, plen4, plen6;
};

static unsigned long rounds = 5, repeat = 200000, distinct = 20000;
static __u8 pkt[PKT_MAX];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void build_udp4(__u8 *p, __u32 saddr, __u16 dport)
{
	struct sl_ip4 *ip = (void *)(p + 14);
	__u16 *udp = (void *)(p + 34);

	memset(p, 0, PKT4_LEN);
	p[12] = 0x08;			/* ETH_P_IP */
	ip->ver_ihl = 0x45;
	ip->tot_len = htons(PKT4_LEN - 14);
	ip->ttl = 64;
	ip->proto = 17;
	ip->saddr = htonl(saddr);
	ip->daddr = htonl(0xc6120001);	/* 198.18.0.1 */
	udp[0] = htons(40000);
	udp[1] = htons(dport);
	udp[2] = htons(PKT4_LEN - 34);
}

/* 2001:db8:w1>>16:w1&0xffff::1 -> 2001:db8::1 */
static void build_udp6(__u8 *p, __u32 w1, __u16 dport)
{
	__u32 *src = (void *)(p + 22), *dst = (void *)(p + 38);
	__u16 *udp = (void *)(p + 54);

	memset(p, 0, PKT6_LEN);
	p[12] = 0x86;
	p[13] = 0xdd;
	p[14] = 0x60;
	*(__u16 *)(p + 18) = htons(PKT6_LEN - 54);
	p[20] = 17;
	p[21] = 64;
	src[0] = htonl(0x20010db8);
	src[1] = htonl(w1);
	src[3] = htonl(1);
	dst[0] = htonl(0x20010db8);
	dst[3] = htonl(1);
	udp[0] = htons(40000);
	udp[1] = htons(dport);
	udp[2] = htons(PKT6_LEN - 54);
}

/* ns per packet over `repeat` runs of one packet. */
static double run_repeat(int fd, __u32 len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	return o.duration;
}

/* One run of the current packet. */
static double run_once(int fd, __u32 len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	return o.duration;
}

/* Mean ns over n single runs of the current packet. */
static double run_same(int fd, __u32 len, unsigned long n)
{
	double total = 0, d;
	unsigned long i;

	for (i = 0; i < n; i++) {
		d = run_once(fd, len);
		if (d < 0)
			return -1;
		total += d;
	}
	return total / n;
}

/* Mean ns over n single runs, packet i from IPv4 source base + i. */
static double run_distinct4(int fd, __u32 base, unsigned long n)
{
	double total = 0, d;
	unsigned long i;

	for (i = 0; i < n; i++) {
		build_udp4(pkt, base + i, BENCH_PORT);
		d = run_once(fd, PKT4_LEN);
		if (d < 0)
			return -1;
		total += d;
	}
	return total / n;
}

/* Mean ns over n single runs from IPv6 /64s picked at random among keys. */
static double run_random6(int fd, unsigned long keys, unsigned long n, __u64 *rng)
{
	double total = 0, d;
	unsigned long i;

	for (i = 0; i < n; i++) {
		/* xorshift64 */
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		build_udp6(pkt, SRC6_W1 + (__u32)(*rng % keys), BENCH_PORT);
		d = run_once(fd, PKT6_LEN);
		if (d < 0)
			return -1;
		total += d;
	}
	return total / n;
}

static void fill_limit(struct sluice_limit *l, const struct lim *s, __u16 agg_slot)
{
	memset(l, 0, sizeof(*l));
	l->rate = s->rate;
	l->burst = s->burst;
	l->key = s->key;
	l->cost = SLUICE_COST_PKT;
	l->plen4 = s->plen4;
	l->plen6 = s->plen6;
	l->agg_slot = agg_slot;
	l->period_ms = 1000;
	l->interval_fp = sl_gcra_interval(s->rate);
	l->tolerance = sl_gcra_tolerance(l->interval_fp, s->burst, SLUICE_COST_PKT);
	sl_limit_set_masks(l);
}

/*
 * nr rules: rules 0..nr-2 carry one open per-source limit on ports the
 * packets do not use, rule nr-1 matches BENCH_PORT with the given limits.
 * Every rule gets a new uid, so no bucket from an earlier case is reused;
 * the rule-wide buckets are zeroed.
 */
static int set_rules(struct inst *in, __u32 nr, const struct lim *lims, __u32 nlims)
{
	static struct sluice_ruleset rs;
	static const struct lim open = { OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 32, 64 };
	struct sluice_config cfg = {};
	struct sluice_state zero_st = {};
	__u32 zero = 0, i, li;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = nr;
	for (i = 0; i < nr; i++) {
		struct sluice_rule *r = &rs.rules[i];
		bool last = i == nr - 1;
		__u32 n = last ? nlims : 1;

		snprintf(rs.names[i], SLUICE_NAME_LEN, "bench%u", i);
		r->uid = in->uid++;
		r->slot = i;
		r->nr_limits = n;
		r->match = SLUICE_M_PROTO | SLUICE_M_DPORT;
		r->proto = 17;
		r->dport_lo = r->dport_hi = last ? BENCH_PORT : 10000 + i;
		for (li = 0; li < n; li++) {
			__u32 slot = i * SLUICE_MAX_LIMITS + li;

			fill_limit(&r->limits[li], last ? &lims[li] : &open, slot);
			if (bpf_map_update_elem(in->agg, &slot, &zero_st, 0))
				return -errno;
		}
	}
	cfg.next_uid = in->uid;
	if (bpf_map_update_elem(in->rulesets, &zero, &rs, 0) ||
	    bpf_map_update_elem(in->config, &zero, &cfg, 0))
		return -errno;
	return 0;
}

static int open_inst(struct inst *in, int clock, unsigned long max_keys)
{
	struct bpf_map *map;
	int err;

	memset(in, 0, sizeof(*in));
	in->skel = sluice__open();
	if (!in->skel)
		return -errno;
	bpf_object__for_each_map(map, in->skel->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_map__set_max_entries(in->skel->maps.sl_state, max_keys);
	in->skel->rodata->clock_mode = clock == CLK_COARSE ? SLUICE_CLOCK_COARSE
							   : SLUICE_CLOCK_PRECISE;
	err = sluice__load(in->skel);
	if (err)
		return err;
	in->prog = bpf_program__fd(in->skel->progs.sluice_xdp);
	in->state = bpf_map__fd(in->skel->maps.sl_state);
	in->rulesets = bpf_map__fd(in->skel->maps.sl_rulesets);
	in->config = bpf_map__fd(in->skel->maps.sl_config);
	in->agg = bpf_map__fd(in->skel->maps.sl_agg);
	in->uid = 1;
	in->max_keys = max_keys;
	return 0;
}

/*
 * Put n buckets into the per-source table: IPv6 /64 keys SRC6_W1 + i of
 * rule uid (limit 0), each full (TAT 0).
 */
static int prefill(int fd, __u32 uid, unsigned long n)
{
	const unsigned long chunk = 65536;
	struct sluice_key *keys = calloc(chunk, sizeof(*keys));
	struct sluice_state *vals = calloc(chunk, sizeof(*vals));
	unsigned long i, j;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !err; i += chunk) {
		__u32 cnt = n - i < chunk ? n - i : chunk;
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		for (j = 0; j < cnt; j++) {
			keys[j].uid = uid;
			keys[j].limit = 0;
			keys[j].family = 6;
			keys[j].plen = 64;
			keys[j].addr[0] = htonl(0x20010db8);
			keys[j].addr[1] = htonl(SRC6_W1 + i + j);
		}
		if (bpf_map_update_batch(fd, keys, vals, &cnt, &o))
			err = -errno;
	}
out:
	free(keys);
	free(vals);
	return err;
}

/* How many of a sample of the n prefilled keys are still there. */
static double present_share(int fd, __u32 uid, unsigned long n)
{
	unsigned long i, hit = 0, step = n > 4096 ? n / 4096 : 1, tried = 0;
	struct sluice_state v;

	for (i = 0; i < n; i += step, tried++) {
		struct sluice_key k = { .uid = uid, .family = 6, .plen = 64 };

		k.addr[0] = htonl(0x20010db8);
		k.addr[1] = htonl(SRC6_W1 + i);
		hit += !bpf_map_lookup_elem(fd, &k, &v);
	}
	return (double)hit / tried;
}

/* memlock of a map fd, from /proc/self/fdinfo: the map's own accounting. */
static long long memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* memlock per entry of a kernel map of this type, key and value size, entries. */
static double kernel_map_bytes(enum bpf_map_type type, unsigned long entries)
{
	int fd = bpf_map_create(type, NULL, sizeof(struct sluice_key), sizeof(struct sluice_state),
				entries, NULL);
	double b;

	if (fd < 0)
		return -1;
	b = (double)memlock(fd) / entries;
	close(fd);
	return b;
}

/* One path on one instance; ns per packet. */
static double run_path(struct inst *in, int p, unsigned long round)
{
	static const struct lim open = { OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 32, 64 };
	static const struct lim tight = { 1, 1, SLUICE_KEY_SRC, 32, 64 };
	static const struct lim four[4] = {
		{ OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 32, 64 },
		{ OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 24, 48 },
		{ OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 16, 32 },
		{ OPEN_RATE, OPEN_RATE, SLUICE_KEY_ALL, 0, 0 },
	};
	/* Rule-wide 1 pps burst 1: the first packet takes it, every later one is refused. */
	static const struct lim spoof[2] = {
		{ 1, 1, SLUICE_KEY_ALL, 0, 0 },
		{ OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 32, 64 },
	};
	__u32 len = PKT4_LEN;
	int err = 0;

	build_udp4(pkt, SRC4, BENCH_PORT);
	switch (p) {
	case P_NORULE:
		err = set_rules(in, 0, NULL, 0);
		break;
	case P_HIT:
		err = set_rules(in, 1, &open, 1);
		break;
	case P_DROP:
		err = set_rules(in, 1, &tight, 1);
		break;
	case P_V6:
		err = set_rules(in, 1, &open, 1);
		build_udp6(pkt, SRC6_W1, BENCH_PORT);
		len = PKT6_LEN;
		break;
	case P_LIM4:
		err = set_rules(in, 1, four, 4);
		break;
	case P_RULES8:
		err = set_rules(in, 8, &open, 1);
		break;
	case P_RULES32:
		err = set_rules(in, 32, &open, 1);
		break;
	case P_RULES64:
		err = set_rules(in, 64, &open, 1);
		break;
	case P_SPOOF:
		err = set_rules(in, 1, spoof, 2);
		break;
	case P_HIT1:
		/* The same cold start as the new key below, for an existing key. */
		err = set_rules(in, 1, &open, 1);
		if (err || run_once(in->prog, len) < 0)
			return -1;
		return run_same(in->prog, len, distinct);
	case P_NEWFULL:
		/* A new uid: every source of this round is a new key. */
		err = set_rules(in, 1, &open, 1);
		if (err)
			return -1;
		return run_distinct4(in->prog, 0xc6130000 + (round % 2) * distinct, distinct);
	}
	if (err)
		return -1;
	/* The first packet creates the bucket (or takes the only token). */
	if (run_once(in->prog, len) < 0)
		return -1;
	return run_repeat(in->prog, len);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: progcost [--rounds N] [--repeat N] [--distinct N] [--max-keys N]\n"
		   "                [--json FILE]\n"
		   "  ns per packet of sluice's data path next to a trivial XDP_DROP\n"
		   "  (bpf_prog_test_run), the pieces it is made of, the cost against\n"
		   "  tracked keys (up to --max-keys, default 4194304) and bytes per key.\n");
}

static unsigned long number(const char *opt, const char *s, unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "progcost: invalid %s \"%s\" (%lu to %lu)\n", opt, s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "distinct", required_argument, NULL, 'k' },
		{ "max-keys", required_argument, NULL, 'm' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static double res[NCLK][NPATH][MAX_ROUNDS], med[NCLK][NPATH];
	static double triv[MAX_ROUNDS], triv1[MAX_ROUNDS], prim[NPRIM][MAX_ROUNDS];
	static double scale[NSCALE][MAX_ROUNDS], triv6[MAX_ROUNDS];
	double m_triv, m_triv1, m_triv6, m_prim[NPRIM], m_scale[NSCALE];
	double bytes_state[NSCALE], bytes_lru[NSCALE], bytes_hash[NSCALE], present[NSCALE];
	unsigned long max_keys = 4194304, i, nscale = 0;
	struct inst clk[NCLK] = {}, sc[NSCALE] = {};
	struct trivial *triv_skel = NULL;
	struct prims *prims = NULL;
	const char *json_path = NULL;
	int c, k, p, err = 1, tfd, prim_fd[NPRIM];
	__u64 rng = 0x9E3779B97F4A7C15ULL;
	FILE *js;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = number("--rounds", optarg, 1, MAX_ROUNDS);
			break;
		case 'n':
			repeat = number("--repeat", optarg, 1, 100000000);
			break;
		case 'k':
			distinct = number("--distinct", optarg, 1, 60000);
			break;
		case 'm':
			max_keys = number("--max-keys", optarg, 1024, 1UL << 24);
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "progcost: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}

	triv_skel = trivial__open_and_load();
	prims = prims__open_and_load();
	if (!triv_skel || !prims) {
		fprintf(stderr, "progcost: cannot load the BPF objects (root?)\n");
		goto out;
	}
	tfd = bpf_program__fd(triv_skel->progs.xdp_drop_all);
	{
		struct bpf_program *pp[NPRIM] = {
			prims->progs.p_ktime, prims->progs.p_coarse, prims->progs.p_jiffies,
			prims->progs.p_prandom, prims->progs.p_subcall, prims->progs.p_lru_lookup,
			prims->progs.p_hash_lookup, prims->progs.p_lru_cas, prims->progs.p_counters,
		};
		/* The key every lookup of the pieces hits (see prims.bpf.c). */
		__u32 hk[6] = { 1, 2, 3, 4, 5, 6 };
		__u64 hv[3] = {};

		for (p = 0; p < NPRIM; p++)
			prim_fd[p] = bpf_program__fd(pp[p]);
		if (bpf_map_update_elem(bpf_map__fd(prims->maps.p_lru), hk, hv, 0) ||
		    bpf_map_update_elem(bpf_map__fd(prims->maps.p_hash), hk, hv, 0)) {
			fprintf(stderr, "progcost: cannot set up the pieces: %s\n", strerror(errno));
			goto out;
		}
	}

	for (k = 0; k < NCLK; k++) {
		err = open_inst(&clk[k], k, FULL_KEYS);
		if (err) {
			fprintf(stderr, "progcost: cannot load sluice: %s\n", strerror(-err));
			err = 1;
			goto out;
		}
		/* Fill the table (uid 0 is never a rule's): new keys must evict. */
		if (prefill(clk[k].state, 0, FULL_KEYS)) {
			fprintf(stderr, "progcost: cannot fill the table\n");
			goto out;
		}
	}
	for (i = 0; i < NSCALE && scale_keys[i] <= max_keys; i++, nscale++) {
		/* A power of two, as an operator sizes it: one hash bucket per key. */
		unsigned long size = scale_keys[i];
		static const struct lim open = { OPEN_RATE, OPEN_RATE, SLUICE_KEY_SRC, 32, 64 };

		err = open_inst(&sc[i], CLK_PRECISE, size);
		if (!err)
			err = set_rules(&sc[i], 1, &open, 1);
		if (!err)
			err = prefill(sc[i].state, 1, scale_keys[i]);
		if (err) {
			fprintf(stderr, "progcost: cannot set up %lu keys: %s\n", scale_keys[i],
				strerror(-err));
			err = 1;
			goto out;
		}
		present[i] = present_share(sc[i].state, 1, scale_keys[i]);
		bytes_state[i] = (double)memlock(sc[i].state) / size;
		bytes_lru[i] = kernel_map_bytes(BPF_MAP_TYPE_LRU_HASH, size);
		bytes_hash[i] = kernel_map_bytes(BPF_MAP_TYPE_HASH, size);
	}

	err = 1;
	/* Alternate everything within each round so that noise hits all alike. */
	for (i = 0; i < rounds; i++) {
		build_udp4(pkt, SRC4, BENCH_PORT);
		triv[i] = run_repeat(tfd, PKT4_LEN);
		for (p = 0; p < NPRIM; p++)
			prim[p][i] = run_repeat(prim_fd[p], PKT4_LEN);
		for (p = 0; p < NPATH; p++)
			for (k = 0; k < NCLK; k++)
				res[k][p][i] = run_path(&clk[k], p, i);
		triv1[i] = run_distinct4(tfd, 0xc6130000, distinct);
		triv6[i] = run_random6(tfd, 1024, distinct, &rng);
		for (k = 0; k < (int)nscale; k++)
			scale[k][i] = run_random6(sc[k].prog, scale_keys[k], distinct, &rng);
	}
	m_triv = median(triv, rounds);
	m_triv1 = median(triv1, rounds);
	m_triv6 = median(triv6, rounds);
	for (p = 0; p < NPRIM; p++)
		m_prim[p] = median(prim[p], rounds);
	for (k = 0; k < NCLK; k++)
		for (p = 0; p < NPATH; p++)
			med[k][p] = median(res[k][p], rounds);
	for (k = 0; k < (int)nscale; k++)
		m_scale[k] = median(scale[k], rounds);
	for (k = 0; k < NCLK; k++)
		for (p = 0; p < NPATH; p++)
			if (res[k][p][0] < 0) {
				fprintf(stderr, "progcost: a test run failed (%s)\n", paths[p].key);
				goto out;
			}

	printf("| path | precise ns | over trivial | coarse ns | over trivial |\n"
	       "|---|---:|---:|---:|---:|\n");
	printf("| trivial XDP_DROP (repeat runs) | %.0f | | %.0f | |\n", m_triv, m_triv);
	for (p = 0; p < NPATH; p++) {
		double f = paths[p].distinct ? m_triv1 : m_triv;

		if (p == P_HIT1)
			printf("| trivial XDP_DROP (one run per packet) | %.0f | | %.0f | |\n",
			       m_triv1, m_triv1);
		printf("| %s | %.0f | %+.0f | %.0f | %+.0f |\n", paths[p].name,
		       med[CLK_PRECISE][p], med[CLK_PRECISE][p] - f, med[CLK_COARSE][p],
		       med[CLK_COARSE][p] - f);
	}
	printf("\nMedian of %lu rounds: repeat runs of %lu packets; one-run-per-packet rows over "
	       "%lu packets, next to the trivial program run the same way (the syscall's share "
	       "is in both, and each run starts with colder caches than a repeat run: compare "
	       "the new key with the existing key measured that way). The full table holds %d "
	       "keys.\n\n", rounds, repeat, distinct,
	       FULL_KEYS);

	printf("| piece (trivial program plus ...) | ns | over trivial |\n|---|---:|---:|\n");
	printf("| nothing (trivial XDP_DROP) | %.0f | |\n", m_triv);
	for (p = 0; p < NPRIM; p++)
		printf("| %s | %.0f | %+.0f |\n", prim_names[p], m_prim[p], m_prim[p] - m_triv);
	printf("\n");

	printf("| tracked keys | ns per packet | over trivial | keys still present | "
	       "bytes per key (sluice table) | LRU hash | plain hash |\n"
	       "|---:|---:|---:|---:|---:|---:|---:|\n");
	for (k = 0; k < (int)nscale; k++)
		printf("| %lu | %.0f | %+.0f | %.1f%% | %.1f | %.1f | %.1f |\n", scale_keys[k],
		       m_scale[k], m_scale[k] - m_triv6, 100 * present[k], bytes_state[k],
		       bytes_lru[k], bytes_hash[k]);
	printf("\nOne run per packet, each from an IPv6 /64 picked at random among the tracked "
	       "keys (all existing), %lu per round; trivial program run the same way: %.0f ns. "
	       "Bytes per key: memlock of the table (fdinfo) / its max_entries (= tracked keys); "
	       "key %zu + value %zu = %zu bytes of it are sluice's, the rest is the kernel's.\n",
	       distinct, m_triv6, sizeof(struct sluice_key), sizeof(struct sluice_state),
	       sizeof(struct sluice_key) + sizeof(struct sluice_state));

	if (json_path) {
		js = fopen(json_path, "w");
		if (!js) {
			fprintf(stderr, "progcost: cannot write %s: %s\n", json_path,
				strerror(errno));
			goto out;
		}
		fprintf(js, "{\"rounds\": %lu, \"repeat\": %lu, \"distinct\": %lu, "
			    "\"trivial\": %.1f, \"trivial_one_run\": %.1f, \"trivial_one_run6\": %.1f,\n"
			    " \"paths\": {", rounds, repeat, distinct, m_triv, m_triv1, m_triv6);
		for (p = 0; p < NPATH; p++)
			fprintf(js, "%s\"%s\": {\"precise\": %.1f, \"coarse\": %.1f, "
				    "\"floor\": %.1f}", p ? ", " : "", paths[p].key,
				med[CLK_PRECISE][p], med[CLK_COARSE][p],
				paths[p].distinct ? m_triv1 : m_triv);
		fprintf(js, "},\n \"pieces\": {");
		for (p = 0; p < NPRIM; p++)
			fprintf(js, "%s\"%s\": %.1f", p ? ", " : "", prim_names[p], m_prim[p]);
		fprintf(js, "},\n \"keys\": [");
		for (k = 0; k < (int)nscale; k++)
			fprintf(js, "%s{\"keys\": %lu, \"ns\": %.1f, \"present\": %.4f, "
				    "\"bytes_per_key\": %.1f, \"lru_hash\": %.1f, \"hash\": %.1f}",
				k ? ", " : "", scale_keys[k], m_scale[k], present[k], bytes_state[k],
				bytes_lru[k], bytes_hash[k]);
		fprintf(js, "],\n \"payload_bytes\": %zu}\n",
			sizeof(struct sluice_key) + sizeof(struct sluice_state));
		fclose(js);
	}
	err = 0;
out:
	for (k = 0; k < NCLK; k++)
		sluice__destroy(clk[k].skel);
	for (i = 0; i < NSCALE; i++)
		sluice__destroy(sc[i].skel);
	prims__destroy(prims);
	trivial__destroy(triv_skel);
	return err;
}
