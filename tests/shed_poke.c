// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test helper: writes a known shedding state into the wr_shed map pinned
 * under a bpffs root, as a shedding controller would, for the metrics
 * tests (tests/metrics.sh).
 *
 *   shed_poke --bpffs DIR           the state below
 *   shed_poke --bpffs DIR --clear   all zero: no shedding, no capacity
 *
 * The state: S = 0.5, u = 0.9, so class 3 sheds everything, class 2 half
 * and class 1 nothing; a running controller (no expiry); signals "cpu"
 * (0.9), "psi" (unreadable) and one whose name needs escaping (0.25);
 * packet capacity 1000 pps (burst 1000) with classes 1..3 held to 1 pps
 * (burst 100), and byte capacity 1 MB/s for all classes only.
 *
 * Exit status: 0, or 1 after saying why.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "weir.h"
#include "weir_limiter.h"
#include "weir_shed.h"

/* A signal's name that needs escaping in a label: a quote and a backslash. */
#define ODD_SIGNAL "file:/run/a\"b\\c"

static void capacity(struct weir_limit *l, __u64 rate, __u64 burst, int cost)
{
	memset(l, 0, sizeof(*l));
	l->rate = rate;
	l->burst = burst;
	l->cost = cost;
	l->key = WEIR_KEY_ALL;
	l->interval_fp = wr_gcra_interval(rate);
	l->tolerance = wr_gcra_tolerance(l->interval_fp, burst, cost);
}

static void fill(struct weir_shed *sh)
{
	static const struct {
		const char *name;
		double v;	/* < 0: unreadable */
	} sig[] = { { "cpu", 0.9 }, { "psi", -1 }, { ODD_SIGNAL, 0.25 } };
	const double s = 0.5;
	unsigned int c, i;

	for (c = 0; c <= WEIR_MAX_CLASS; c++)
		sh->threshold[c] = wr_shed_threshold(wr_shed_class_prob(s, c));
	sh->flags = WEIR_SHED_ACTIVE;
	sh->s_micro = s * 1000000;
	sh->u_micro = 900000;
	sh->nr_signals = sizeof(sig) / sizeof(sig[0]);
	for (i = 0; i < sh->nr_signals; i++) {
		snprintf(sh->signal_name[i], WEIR_SIGNAL_NAME_LEN, "%s", sig[i].name);
		sh->signal_micro[i] = sig[i].v < 0 ? -1 : (__s64)(sig[i].v * 1000000);
	}
	capacity(&sh->cap[WEIR_COST_PKT].total, 1000, 1000, WEIR_COST_PKT);
	capacity(&sh->cap[WEIR_COST_PKT].noncrit, 1, 100, WEIR_COST_PKT);
	capacity(&sh->cap[WEIR_COST_BYTE].total, 1000000, 1000000, WEIR_COST_BYTE);
}

/* The pinned map root/name, or -1 after saying why. */
static int pinned(const char *root, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		fprintf(stderr, "shed_poke: %s: %s\n", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	struct weir_shed sh;
	struct weir_state full = { 0 };
	int fd, cap_fd, clear;
	__u32 k;

	clear = argc == 4 && !strcmp(argv[3], "--clear");
	if ((argc != 3 && !clear) || strcmp(argv[1], "--bpffs")) {
		fprintf(stderr, "Usage: shed_poke --bpffs DIR [--clear]\n");
		return 2;
	}
	fd = pinned(argv[2], "wr_shed");
	cap_fd = pinned(argv[2], "wr_capacity");
	if (fd < 0 || cap_fd < 0)
		return 1;
	memset(&sh, 0, sizeof(sh));
	if (!clear)
		fill(&sh);
	k = 0;
	if (bpf_map_update_elem(fd, &k, &sh, BPF_ANY)) {
		fprintf(stderr, "shed_poke: writing wr_shed: %s\n", strerror(errno));
		return 1;
	}
	/* The capacity buckets start full (TAT 0), as when a controller changes rates. */
	for (k = 0; k < 4; k++) {
		if (bpf_map_update_elem(cap_fd, &k, &full, BPF_ANY)) {
			fprintf(stderr, "shed_poke: resetting wr_capacity[%u]: %s\n", k,
				strerror(errno));
			return 1;
		}
	}
	close(fd);
	close(cap_fd);
	return 0;
}
