// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * feedbench: what blocklist feeds cost. Three instances of the BPF object
 * (private maps, nothing pinned): no feed, 10k prefixes, and --max
 * prefixes (1M by default), a mix of IPv4 and IPv6 as real feeds hold
 * them. For each size it prints
 *  - the load time: the feed's text parsed and validated, flattened, and
 *    swapped in (libweir's wr_feed_parse + wr_feed_apply, what a refresh
 *    does), the median of --loads loads, for 10k, 100k and --max;
 *  - the kernel memory of the generation in force (memlock in the inner
 *    maps' fdinfo: the kernel's own accounting), and per prefix;
 * and the per-packet cost of weir_xdp through bpf_prog_test_run, next to
 * a trivial XDP_DROP program, every candidate in every one of --rounds
 * rounds (medians): a source no feed lists (repeat runs of one packet, and
 * one run per packet from random sources, the cache-cold case), a source
 * in a /24 that longer prefixes split, a listed source (dropped), IPv6,
 * and sources a limit-class feed lists beside the --max deny prefixes (a
 * whole /24, a host, an IPv6 /48: passed, shedding idle).
 * Markdown on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"
#include "weir.skel.h"
#include "trivial.skel.h"
#include "lib/kernel_features.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

#define PKT4_LEN	(14 + 20 + 8 + 18)
#define PKT6_LEN	(14 + 40 + 8 + 18)
/* Runs per repeat measurement, and single runs per random-source measurement. */
#define REPEAT		20000
#define SINGLES		4000
/* The share of IPv4 among the prefixes, percent. */
#define V4_PCT		75

static unsigned int seed = 4242;

static __u32 rnd(void)
{
	return ((__u32)rand_r(&seed) << 16) ^ (__u32)rand_r(&seed);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * n prefixes as feed text: IPv4 /32 (60%), /24 (25%), /16-/23 (15%);
 * IPv6 /48 (60%), /32-/47 (20%), /128 (20%). None inside 198.18.0.0/15
 * or 2001:db8::/32, where the probes come from, except 198.18.7.0/24
 * (listed whole) and 198.18.8.9 (splitting 198.18.8.0/24).
 */
static char *feed_text(size_t n, size_t *len)
{
	size_t cap = n * 48 + 128, off = 0, i;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	off += snprintf(t + off, cap - off, "198.18.7.0/24\n198.18.8.9\n");
	for (i = 2; i < n; i++) {
		char a[INET6_ADDRSTRLEN];
		unsigned int r = rnd() % 100, plen;

		if (rnd() % 100 < V4_PCT) {
			__u32 v;

			do
				v = rnd() | 0x01000000;
			while ((v >> 17) == (0xc612 >> 1) || (v >> 24) >= 224 || (v >> 24) == 127);
			plen = r < 60 ? 32 : r < 85 ? 24 : 16 + rnd() % 8;
			v &= plen == 32 ? ~0u : ~0u << (32 - plen);
			v = htonl(v);
			inet_ntop(AF_INET, &v, a, sizeof(a));
		} else {
			__u32 w[4] = { htonl(0x2a000000 | (rnd() & 0x00ffffff)), htonl(rnd()),
				       htonl(rnd()), htonl(rnd()) };
			int k;

			plen = r < 60 ? 48 : r < 80 ? 32 + rnd() % 16 : 128;
			for (k = 0; k < 4; k++)
				w[k] &= wr_prefix_word(plen, k);
			inet_ntop(AF_INET6, w, a, sizeof(a));
		}
		off += snprintf(t + off, cap - off, "%s/%u\n", a, plen);
	}
	*len = off;
	return t;
}

struct inst {
	struct weir *skel;
	struct wr_maps m;
	int prog;
};

static int inst_load(struct inst *in)
{
	struct weir_config c = { 0 };
	struct bpf_map_info info = { 0 };
	__u32 ilen = sizeof(info), zero = 0;
	struct bpf_map *bm;
	char why[256];
	int *fd = (int *)&in->m;
	size_t i;

	in->skel = wr_open_for_kernel(NULL, NULL, why, sizeof(why));
	if (!in->skel) {
		fprintf(stderr, "feedbench: %s\n", why);
		return -1;
	}
	bpf_object__for_each_map(bm, in->skel->obj)
		bpf_map__set_pin_path(bm, NULL);
	bpf_map__set_max_entries(in->skel->maps.wr_state, 1024);
	if (weir__load(in->skel) || wr_cookie_progs_fill(in->skel)) {
		fprintf(stderr, "feedbench: cannot load the BPF object (root?)\n");
		return -1;
	}
	bpf_obj_get_info_by_fd(bpf_map__fd(in->skel->maps.wr_state), &info, &ilen);
	c.state_seed = 0x5eed;
	c.state_sets = info.max_entries;
	bpf_map__update_elem(in->skel->maps.wr_config, &zero, 4, &c, sizeof(c), 0);
	for (i = 0; i < sizeof(in->m) / sizeof(int); i++)
		fd[i] = -1;
	in->m.config = bpf_map__fd(in->skel->maps.wr_config);
	in->m.deny4 = bpf_map__fd(in->skel->maps.wr_deny4);
	in->m.deny6 = bpf_map__fd(in->skel->maps.wr_deny6);
	in->m.allow4 = bpf_map__fd(in->skel->maps.wr_allow4);
	in->m.allow6 = bpf_map__fd(in->skel->maps.wr_allow6);
	in->m.feed_blk = bpf_map__fd(in->skel->maps.wr_feed_blk);
	in->m.feed_host = bpf_map__fd(in->skel->maps.wr_feed_host);
	in->m.feed6 = bpf_map__fd(in->skel->maps.wr_feed6);
	in->prog = bpf_program__fd(in->skel->progs.weir_xdp);
	return 0;
}

/* Parse text and swap it in: seconds, or < 0. */
static double load_feed(struct inst *in, const char *text, size_t len, struct wr_feed_stats *st)
{
	struct wr_feed_set s = { 0 };
	char err[256];
	double t0 = now_s();

	if (wr_feed_parse(text, len, WEIR_FA_DENY, &s, err, sizeof(err))) {
		fprintf(stderr, "feedbench: %s\n", err);
		return -1;
	}
	if (wr_feed_apply(&in->m, &s, st)) {
		fprintf(stderr, "feedbench: cannot apply: %s\n", strerror(errno));
		wr_feed_set_free(&s);
		return -1;
	}
	t0 = now_s() - t0;
	wr_feed_set_free(&s);
	return t0;
}

/*
 * The limit-class feed applied beside text (deny) for the class rows:
 * 198.18.9.0/24 and 198.18.10.5 (a host in an otherwise unlisted /24) and
 * 2001:db8:9a::/48 as limit-class 3. Not timed. 0 or -1.
 */
static int load_class(struct inst *in, const char *text, size_t len)
{
	static const char cls[] = "198.18.9.0/24\n198.18.10.5\n2001:db8:9a::/48\n";
	struct wr_feed_set s = { 0 }, c = { 0 };
	struct wr_feed_stats st;
	char err[256];
	int r;

	r = wr_feed_parse(text, len, WEIR_FA_DENY, &s, err, sizeof(err));
	if (!r)
		r = wr_feed_parse(cls, strlen(cls), WEIR_FA_CLASS_OF(3), &c, err, sizeof(err));
	if (!r)
		r = wr_feed_set_append(&s, &c);
	if (!r && wr_feed_apply(&in->m, &s, &st))
		snprintf(err, sizeof(err), "cannot apply: %s", strerror(errno)), r = -1;
	if (r)
		fprintf(stderr, "feedbench: class feed: %s\n", r == -1 ? err : strerror(-r));
	wr_feed_set_free(&s);
	wr_feed_set_free(&c);
	return r ? -1 : 0;
}

/* The kernel's memlock of the inner maps in force (bytes). */
static unsigned long long feed_memlock(struct inst *in)
{
	int outer[3] = { in->m.feed_blk, in->m.feed_host, in->m.feed6 };
	struct weir_config cfg;
	unsigned long long sum = 0;
	__u32 gen, id, zero = 0;
	int i;

	bpf_map_lookup_elem(in->m.config, &zero, &cfg);
	gen = cfg.lists & WEIR_L_FEED_GEN ? 1 : 0;
	for (i = 0; i < 3; i++) {
		char path[64], line[128];
		FILE *f;
		int fd;

		if (bpf_map_lookup_elem(outer[i], &gen, &id))
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "memlock:", 8))
				sum += strtoull(line + 8, NULL, 10);
		if (f)
			fclose(f);
		close(fd);
	}
	return sum;
}

static __u8 pkt[128];

static void udp4(__u32 src)
{
	memset(pkt, 0, sizeof(pkt));
	pkt[12] = 0x08;
	pkt[14] = 0x45;
	pkt[16] = 0;
	pkt[17] = PKT4_LEN - 14;
	pkt[22] = 64;
	pkt[23] = 17;
	*(__u32 *)(pkt + 26) = htonl(src);
	*(__u32 *)(pkt + 30) = htonl(0xc6120001);
	pkt[34] = 0x9c;
	pkt[36] = 0x1f;
	pkt[39] = PKT4_LEN - 34;
}

static void udp6(__u32 net)
{
	memset(pkt, 0, sizeof(pkt));
	pkt[12] = 0x86;
	pkt[13] = 0xdd;
	pkt[14] = 0x60;
	pkt[19] = PKT6_LEN - 54;
	pkt[20] = 17;
	pkt[21] = 64;
	*(__u32 *)(pkt + 22) = htonl(0x20010db8);
	*(__u32 *)(pkt + 26) = htonl(net);
	pkt[37] = 9;
	*(__u32 *)(pkt + 38) = htonl(0x20010db8);
	pkt[53] = 1;
	pkt[54] = 0x9c;
	pkt[56] = 0x1f;
	pkt[59] = PKT6_LEN - 54;
}

/* ns per packet, repeat runs; -1 on a failed run or an unexpected verdict. */
static double run_repeat(int fd, __u32 len, __u32 want)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = REPEAT);

	if (bpf_prog_test_run_opts(fd, &o) || o.retval != want)
		return -1;
	return o.duration;
}

/* Mean ns of single runs, each from a random source in 198.19.0.0/16 (no feed lists it). */
static double run_random(int fd)
{
	double sum = 0;
	int i;

	for (i = 0; i < SINGLES; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = PKT4_LEN,
			    .repeat = 1);

		udp4(0xc6130000 | (rnd() & 0xffff));
		if (bpf_prog_test_run_opts(fd, &o) || (fd >= 0 && o.retval > XDP_PASS))
			return -1;
		sum += o.duration;
	}
	return sum / SINGLES;
}

enum cand { C_TRIV, C_TRIV1, C_NONE4, C_NONE6, C_NONE_RND, C_10K4, C_BIG4, C_BIG_SPLIT, C_BIG_DROP,
	    C_BIG6, C_BIG_RND, C_CLASS_BLK, C_CLASS_HOST, C_CLASS6, NCAND };
static const char *cand_names[NCAND] = {
	"trivial XDP_DROP (repeat runs)",
	"trivial XDP_DROP (one run per packet)",
	"no feed: IPv4 source, no rules",
	"no feed: IPv6 source, no rules",
	"no feed: random IPv4 sources (one run per packet)",
	"10k prefixes: IPv4 source not listed",
	"MAX prefixes: IPv4 source not listed",
	"MAX prefixes: IPv4 source in a split /24, not listed",
	"MAX prefixes: IPv4 source listed, dropped",
	"MAX prefixes: IPv6 source not listed (trie)",
	"MAX prefixes: random IPv4 sources not listed (one run per packet)",
	"MAX prefixes + limit-class 3: IPv4 source in a classed /24, passed",
	"MAX prefixes + limit-class 3: IPv4 host classed, passed",
	"MAX prefixes + limit-class 3: IPv6 source in a classed /48, passed",
};

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "rounds", 1, NULL, 'r' }, { "max", 1, NULL, 'm' },
					    { "loads", 1, NULL, 'l' }, { 0 } };
	int rounds = 7, loads = 3, c, r, i, k;
	size_t max = 1000000, sizes[3] = { 10000, 100000, 0 };
	struct inst none = { 0 }, small = { 0 }, big = { 0 };
	struct trivial *triv;
	double *v[NCAND], med[NCAND];
	int tfd;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'm')
			max = strtoul(optarg, NULL, 10);
		else if (c == 'l')
			loads = atoi(optarg);
		else
			return 2;
	}
	if (rounds < 1 || loads < 1 || max < 100000) {
		fprintf(stderr, "feedbench: --rounds and --loads at least 1, --max at least 100000\n");
		return 2;
	}
	sizes[2] = max;
	libbpf_set_print(NULL);
	triv = trivial__open_and_load();
	if (!triv || inst_load(&none) || inst_load(&small) || inst_load(&big))
		return 1;
	tfd = bpf_program__fd(triv->progs.xdp_drop_all);

	printf("## Blocklist feeds\n\n");
	printf("Load: the feed's text parsed and validated, flattened and swapped in "
	       "(wr_feed_parse + wr_feed_apply, what a refresh does), median of %d; %d%% IPv4 "
	       "(/32, /24, /16-/23), the rest IPv6 (/48, /32-/47, /128). Memory: the kernel's "
	       "own accounting of the generation in force (memlock of its maps).\n\n",
	       loads, V4_PCT);
	printf("| prefixes | load s | IPv4 prefixes | IPv6 prefixes | split /24s | kernel memory "
	       "MiB | bytes per prefix |\n|---:|---:|---:|---:|---:|---:|---:|\n");
	for (k = 0; k < 3; k++) {
		struct inst *in = k == 0 ? &small : &big;
		struct wr_feed_stats st;
		double t[16];
		size_t len;
		char *text;
		unsigned long long mem;

		seed = 4242 + k;
		text = feed_text(sizes[k], &len);
		if (!text)
			return 1;
		for (r = 0; r < loads && r < 16; r++) {
			t[r] = load_feed(in, text, len, &st);
			if (t[r] < 0)
				return 1;
		}
		mem = feed_memlock(in);
		printf("| %zu | %.2f | %llu | %llu | %llu | %.1f | %.0f |\n", sizes[k],
		       median(t, r), (unsigned long long)st.prefixes4,
		       (unsigned long long)st.prefixes6, (unsigned long long)st.split_blocks,
		       mem / 1048576.0, (double)mem / (st.prefixes4 + st.prefixes6));
		/* big ends with max, and the class feed beside it (after max's row) */
		if (k == 2 && load_class(in, text, len))
			return 1;
		free(text);
		/* 100k was loaded into big only to be timed: big ends with max. */
	}

	for (i = 0; i < NCAND; i++)
		v[i] = calloc(rounds, sizeof(double));
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NCAND; i++) {
			double x = -1;

			switch (i) {
			case C_TRIV:
				udp4(0xc6130001);
				x = run_repeat(tfd, PKT4_LEN, XDP_DROP);
				break;
			case C_TRIV1:
				x = run_random(tfd);
				break;
			case C_NONE4:
				udp4(0xc6130001);
				x = run_repeat(none.prog, PKT4_LEN, XDP_PASS);
				break;
			case C_NONE6:
				udp6(0x00990000);
				x = run_repeat(none.prog, PKT6_LEN, XDP_PASS);
				break;
			case C_NONE_RND:
				x = run_random(none.prog);
				break;
			case C_10K4:
				udp4(0xc6130001);
				x = run_repeat(small.prog, PKT4_LEN, XDP_PASS);
				break;
			case C_BIG4:
				udp4(0xc6130001);
				x = run_repeat(big.prog, PKT4_LEN, XDP_PASS);
				break;
			case C_BIG_SPLIT:
				udp4(0xc6120808);	/* 198.18.8.8, beside the listed .9 */
				x = run_repeat(big.prog, PKT4_LEN, XDP_PASS);
				break;
			case C_BIG_DROP:
				udp4(0xc6120707);
				x = run_repeat(big.prog, PKT4_LEN, XDP_DROP);
				break;
			case C_BIG6:
				udp6(0x00990000);
				x = run_repeat(big.prog, PKT6_LEN, XDP_PASS);
				break;
			case C_BIG_RND:
				x = run_random(big.prog);
				break;
			case C_CLASS_BLK:
				udp4(0xc6120909);	/* 198.18.9.9 */
				x = run_repeat(big.prog, PKT4_LEN, XDP_PASS);
				break;
			case C_CLASS_HOST:
				udp4(0xc6120a05);	/* 198.18.10.5 */
				x = run_repeat(big.prog, PKT4_LEN, XDP_PASS);
				break;
			case C_CLASS6:
				udp6(0x009a0000);	/* 2001:db8:9a:: */
				x = run_repeat(big.prog, PKT6_LEN, XDP_PASS);
				break;
			}
			if (x < 0) {
				fprintf(stderr, "feedbench: %s: a run failed or got the wrong verdict\n",
					cand_names[i]);
				return 1;
			}
			v[i][r] = x;
		}
	}
	for (i = 0; i < NCAND; i++)
		med[i] = median(v[i], rounds);
	printf("\nPer packet: weir_xdp through bpf_prog_test_run, no rules, next to a trivial "
	       "XDP_DROP in the same rounds (median of %d rounds; repeat runs: %d runs of one "
	       "packet, its lines in the cache; one run per packet: %d sources at random in "
	       "198.19.0.0/16, each packet's /24 state line cold more often than not). MAX = %zu.\n\n",
	       rounds, REPEAT, SINGLES, max);
	printf("| path | ns | over trivial | over the same path with no feed |\n"
	       "|---|---:|---:|---:|\n");
	for (i = 0; i < NCAND; i++) {
		double triv_ns = i == C_TRIV1 || i == C_NONE_RND || i == C_BIG_RND ? med[C_TRIV1]
										  : med[C_TRIV];
		double base = i == C_NONE6 || i == C_BIG6 || i == C_CLASS6 ? med[C_NONE6]
			    : i == C_NONE_RND || i == C_BIG_RND ? med[C_NONE_RND]
			    : med[C_NONE4];
		char name[160];
		const char *m = strstr(cand_names[i], "MAX");

		if (m)
			snprintf(name, sizeof(name), "%zu%s", max, m + 3);
		else
			snprintf(name, sizeof(name), "%s", cand_names[i]);
		if (i <= C_TRIV1)
			printf("| %s | %.1f | | |\n", name, med[i]);
		else if (i <= C_NONE_RND)
			printf("| %s | %.1f | %+.1f | |\n", name, med[i], med[i] - triv_ns);
		else
			printf("| %s | %.1f | %+.1f | %+.1f |\n", name, med[i], med[i] - triv_ns,
			       med[i] - base);
	}
	printf("\nAim: a source no feed lists costs at most 5 ns more with %zu prefixes in force "
	       "than with none: %+.1f ns (repeat runs), %+.1f ns (random sources).\n", max,
	       med[C_BIG4] - med[C_NONE4], med[C_BIG_RND] - med[C_NONE_RND]);
	trivial__destroy(triv);
	weir__destroy(none.skel);
	weir__destroy(small.skel);
	weir__destroy(big.skel);
	return 0;
}
