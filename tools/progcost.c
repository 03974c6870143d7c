// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * progcost: what the sluice data path costs per packet, measured with
 * bpf_prog_test_run next to a trivial XDP_DROP program in the same run.
 *
 * Paths: an existing key admitted, an existing key dropped (repeat runs of
 * one packet), and a new key (one run per packet, each from a new source;
 * the trivial program is measured the same way to give the per-run floor).
 * Prints the median of --rounds rounds, in ns per packet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.h"
#include "sluice_limiter.h"
#include "sluice.skel.h"
#include "trivial.skel.h"

#define PKT_LEN 64

static void build_udp4(__u8 *p, __u32 saddr)
{
	struct sl_ip4 *ip = (void *)(p + 14);
	__u16 *udp = (void *)(p + 34);

	memset(p, 0, PKT_LEN);
	p[12] = 0x08;			/* ETH_P_IP */
	ip->ver_ihl = 0x45;
	ip->tot_len = htons(PKT_LEN - 14);
	ip->ttl = 64;
	ip->proto = 17;
	ip->saddr = saddr;
	ip->daddr = htonl(0xc6120001);	/* 198.18.0.1 */
	udp[0] = htons(40000);
	udp[1] = htons(9000);
	udp[2] = htons(PKT_LEN - 34);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per packet over `repeat` runs of one packet. */
static double run_repeat(int prog_fd, __u8 *pkt, __u32 repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = PKT_LEN,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -1;
	return o.duration;
}

/* Mean ns per packet over n single runs, packet i from source base + i. */
static double run_distinct(int prog_fd, __u32 base, __u32 n)
{
	__u8 pkt[PKT_LEN];
	double total = 0;
	__u32 i;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = PKT_LEN,
			    .repeat = 1);

		build_udp4(pkt, htonl(base + i));
		if (bpf_prog_test_run_opts(prog_fd, &o))
			return -1;
		total += o.duration;
	}
	return total / n;
}

static int set_rule(struct sluice *skel, __u64 rate, __u64 burst, __u32 uid)
{
	static struct sluice_ruleset rs;
	struct sluice_rule *r = &rs.rules[0];
	struct sluice_limit *l = &r->limits[0];
	struct sluice_config cfg = { .active = 0, .next_uid = uid + 1 };
	__u32 zero = 0;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = 1;
	strcpy(rs.names[0], "bench");
	r->uid = uid;
	r->nr_limits = 1;
	r->match = SLUICE_M_PROTO | SLUICE_M_DPORT;
	r->proto = 17;
	r->dport_lo = r->dport_hi = 9000;
	l->rate = rate;
	l->burst = burst;
	l->key = SLUICE_KEY_SRC;
	l->plen4 = 32;
	l->plen6 = 64;
	l->interval_fp = sl_gcra_interval(rate);
	l->tolerance = sl_gcra_tolerance(l->interval_fp, burst, SLUICE_COST_PKT);
	sl_limit_set_masks(l);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sl_rulesets), &zero, &rs, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.sl_config), &zero, &cfg, 0))
		return -errno;
	return 0;
}

/* Keep the rule but change how many rules are live. */
static void set_nr_rules(struct sluice *skel, __u32 nr)
{
	static struct sluice_ruleset rs;
	__u32 zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sl_rulesets), &zero, &rs);
	rs.nr_rules = nr;
	bpf_map_update_elem(bpf_map__fd(skel->maps.sl_rulesets), &zero, &rs, 0);
}

static void usage(void)
{
	fprintf(stderr, "Usage: progcost [--rounds N] [--repeat N] [--distinct N] [--coarse]\n"
			"  ns per packet of sluice's data path next to a trivial XDP_DROP\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "distinct", required_argument, NULL, 'k' },
		{ "coarse", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	enum { TRIV, NORULE, NOMATCH, HIT, DROP, TRIV1, NEW, NCOLS };
	static const char *names[NCOLS] = {
		"trivial XDP_DROP (repeat)", "no rules", "one rule, not matching",
		"existing key, admitted", "existing key, dropped",
		"trivial XDP_DROP (one run per packet)", "new key (one run per packet)",
	};
	unsigned long rounds = 5, repeat = 1000000, distinct = 20000;
	struct trivial *triv = NULL;
	struct sluice *skel = NULL;
	double *res[NCOLS], med[NCOLS];
	__u8 pkt[PKT_LEN];
	bool coarse = false;
	struct bpf_map *map;
	unsigned long i;
	int c, j, err = 1;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *end;
		unsigned long v;

		if (c == 'c') {
			coarse = true;
			continue;
		}
		if (c == 'h' || c == '?') {
			usage();
			return c == 'h' ? 0 : 2;
		}
		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || *end || !v || v > 100000000) {
			fprintf(stderr, "progcost: invalid number \"%s\"\n", optarg);
			return 2;
		}
		if (c == 'r')
			rounds = v;
		else if (c == 'n')
			repeat = v;
		else
			distinct = v;
	}
	for (j = 0; j < NCOLS; j++)
		res[j] = calloc(rounds, sizeof(double));

	triv = trivial__open_and_load();
	skel = sluice__open();
	if (!triv || !skel) {
		fprintf(stderr, "progcost: cannot open BPF objects (root?)\n");
		goto out;
	}
	/* Private maps: nothing pinned is touched. */
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_map__set_max_entries(skel->maps.sl_state, 4 * distinct * rounds + 1024);
	skel->rodata->clock_mode = coarse ? SLUICE_CLOCK_COARSE : SLUICE_CLOCK_PRECISE;
	if (sluice__load(skel)) {
		fprintf(stderr, "progcost: cannot load sluice\n");
		goto out;
	}
	build_udp4(pkt, htonl(0xc6120002));
	/* Alternate the candidates within each round so noise hits all alike. */
	for (i = 0; i < rounds; i++) {
		int tfd = bpf_program__fd(triv->progs.xdp_drop_all);
		int sfd = bpf_program__fd(skel->progs.sluice_xdp);

		res[TRIV][i] = run_repeat(tfd, pkt, repeat);
		set_rule(skel, 1000, 1000, 9 + i * 3);
		set_nr_rules(skel, 0);
		res[NORULE][i] = run_repeat(sfd, pkt, repeat);
		pkt[37] = 0x29;	/* dport 9001: the rule does not match */
		set_nr_rules(skel, 1);
		res[NOMATCH][i] = run_repeat(sfd, pkt, repeat);
		pkt[37] = 0x28;
		/* 1e9 pps: every packet admitted, the key already exists. */
		set_rule(skel, 1000000000, 1000000000, 10 + i * 3);
		run_repeat(sfd, pkt, 1);
		res[HIT][i] = run_repeat(sfd, pkt, repeat);
		/* 1 pps burst 1: the first packet takes the only token. */
		set_rule(skel, 1, 1, 11 + i * 3);
		run_repeat(sfd, pkt, 1);
		res[DROP][i] = run_repeat(sfd, pkt, repeat);
		res[TRIV1][i] = run_distinct(tfd, 0xc6130000, distinct);
		set_rule(skel, 1000000000, 1000000000, 12 + i * 3);
		res[NEW][i] = run_distinct(sfd, 0xc6130000 + i * distinct, distinct);
	}
	for (j = 0; j < NCOLS; j++) {
		qsort(res[j], rounds, sizeof(double), cmp_double);
		med[j] = res[j][rounds / 2];
		if (med[j] < 0) {
			fprintf(stderr, "progcost: test run failed\n");
			goto out;
		}
	}
	printf("| path (clock %s) | ns/packet | over trivial |\n|---|---:|---:|\n",
	       coarse ? "coarse" : "precise");
	for (j = 0; j < NCOLS; j++) {
		double floor = j < TRIV1 ? med[TRIV] : med[TRIV1];

		printf("| %s | %.1f | %+.1f |\n", names[j], med[j],
		       j == TRIV || j == TRIV1 ? 0.0 : med[j] - floor);
	}
	printf("\nmedian of %lu rounds; %lu repeats per run, %lu distinct packets\n", rounds,
	       repeat, distinct);
	err = 0;
out:
	sluice__destroy(skel);
	trivial__destroy(triv);
	for (j = 0; j < NCOLS; j++)
		free(res[j]);
	return err;
}
