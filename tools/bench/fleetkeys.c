// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fleetkeys: N hot keys of a fleet limit, made without traffic, for the
 * benchmark's fleet stage (how the daemon's sync scales with hot keys).
 *
 * For rule RULE's limit 0 (per source, scope fleet) in the weir pinned
 * under --bpffs, every --interval-ms each of N sources 198.18.96.0 + i gets
 * its bucket half spent (claimed in wr_state as the data path claims ways,
 * include/weir_state.h) and the interval's charge at the limit's rate more
 * in wr_fleet_use (a batched update), as the data path would for a source
 * sending at the limit: every key is hot, so every sync sends every key.
 * Stops after --duration seconds.
 *
 * N may be more than wr_fleet_use holds (WEIR_FLEET_KEYS, an LRU): the
 * map then keeps the keys charged last, as it does on a host with more hot
 * sources than that, and the sync follows those.
 *
 *   fleetkeys --bpffs DIR --rule NAME --keys N --duration SEC [--interval-ms MS]
 */
#include <bpf/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#define TOOL_NAME "fleetkeys"
#include "../toolutil.h"
#include "weir.h"
#include "weir_limiter.h"
#include "weir_state.h"

/* Sources 198.18.96.0 and up: 100000 of them stay within 198.18.0.0/15. */
#define FLEETKEYS_BASE	0xc6126000u
#define FLEETKEYS_MAX	100000

static int pinned(const char *root, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		fail("cannot open %s: %s", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bpffs", required_argument, NULL, 'b' },
		{ "rule", required_argument, NULL, 'r' },
		{ "keys", required_argument, NULL, 'k' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{}
	};
	const char *root = NULL, *rule = NULL;
	uint64_t nkeys = 0, interval_ms = 100;
	double duration = 0;
	struct weir_ruleset *rs = calloc(1, sizeof(*rs));
	struct weir_config cfg;
	struct weir_key *keys;
	struct weir_fleet_use *use;
	const struct weir_limit *l = NULL;
	struct weir_set *sets;
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info), zero = 0, uid = 0, i;
	int c, cfd, rfd, sfd, ufd;
	uint64_t end, round = 0;
	size_t len;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'b': root = optarg; break;
		case 'r': rule = optarg; break;
		case 'k':
			if (parse_u64(optarg, 1, FLEETKEYS_MAX, &nkeys))
				invarg("invalid keys \"%s\" (1-%d)", optarg, FLEETKEYS_MAX);
			break;
		case 'd': duration = duration_arg(optarg, 3600); break;
		case 'i':
			if (parse_u64(optarg, 1, 10000, &interval_ms))
				invarg("invalid interval-ms \"%s\" (1-10000)", optarg);
			break;
		default: invarg("usage: fleetkeys --bpffs DIR --rule NAME --keys N --duration SEC");
		}
	}
	if (!root || !rule || !nkeys || !duration || !rs)
		invarg("usage: fleetkeys --bpffs DIR --rule NAME --keys N --duration SEC");
	cfd = pinned(root, "wr_config");
	rfd = pinned(root, "wr_rulesets");
	sfd = pinned(root, "wr_state");
	ufd = pinned(root, "wr_fleet_use");
	if (bpf_map_lookup_elem(cfd, &zero, &cfg) ||
	    bpf_map_lookup_elem(rfd, &cfg.active, rs))
		fail("cannot read the live rule set: %s", strerror(errno));
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (!strncmp(rs->names[i], rule, WEIR_NAME_LEN)) {
			uid = rs->rules[i].uid;
			l = &rs->rules[i].limits[0];
		}
	if (!l || !l->fleet || l->key != WEIR_KEY_SRC || l->algo != WEIR_ALGO_GCRA)
		fail("rule %s has no per-source fleet token bucket as its first limit", rule);
	if (bpf_obj_get_info_by_fd(sfd, &info, &ilen))
		fail("wr_state: %s", strerror(errno));
	len = ((size_t)info.max_entries * info.value_size + 4095) & ~4095UL;
	sets = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	if (sets == MAP_FAILED)
		fail("cannot map wr_state: %s", strerror(errno));
	keys = calloc(nkeys, sizeof(*keys));
	use = calloc(nkeys, sizeof(*use));
	if (!keys || !use)
		fail("out of memory");
	for (i = 0; i < nkeys; i++) {
		keys[i].uid = uid;
		keys[i].family = 4;
		keys[i].plen = 32;
		keys[i].addr[0] = htonl(FLEETKEYS_BASE + i);
	}
	end = mono_ns() + (uint64_t)(duration * NSEC_PER_SEC);
	catch_stop_signals();
	while (!stop && mono_ns() < end) {
		/* At the limit's rate, an interval's packets move the TAT on by the interval. */
		uint64_t t = mono_ns(), inc = interval_ms * 1000000ULL;
		__u32 count = nkeys;
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		for (i = 0; i < nkeys; i++) {
			struct weir_set *set = &sets[wr_state_set(wr_key_hash(&keys[i], cfg.state_seed),
							       cfg.state_sets)];
			struct weir_way *w, *victim;
			__u64 seen, tat = t + l->tolerance / 2 + inc;

			w = state_scan(set, &keys[i], &victim, &seen);
			if (w)
				__atomic_store_n(&w->st.tat, tat, __ATOMIC_RELAXED);
			else
				state_claim(set, victim, seen, &keys[i], tat, 0, 0);
			use[i].charged = round ? use[i].charged + inc : l->tolerance / 2 + inc;
			use[i].since = t;
		}
		if (bpf_map_update_batch(ufd, keys, use, &count, &o))
			fail("wr_fleet_use: %s", strerror(errno));
		round++;
		{
			uint64_t next = t + interval_ms * 1000000ULL, now = mono_ns();

			if (next > now)
				usleep((next - now) / 1000);
		}
	}
	printf("{\"keys\": %llu, \"rounds\": %llu}\n", (unsigned long long)nkeys,
	       (unsigned long long)round);
	return 0;
}
