// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading wr_state, the per-source buckets: one key's bucket, every
 * occupied way, and how many there are.
 *
 * wr_state is an array of sets of WEIR_WAYS ways (struct weir_set), so
 * a key is found by hashing it to its set under the seed in wr_config and
 * comparing it with each way, as the data path does. The data path writes
 * ways while we read them: a set is copied without a lock, so a way read
 * here may be a moment old, or half replaced by a new key. That is fine for
 * showing what is limited; nothing here writes wr_state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"

/* Sets read per bpf_map_lookup_batch call: 256 KiB of values. */
#define STATE_BATCH 1024

/* Does the way hold a bucket: not empty, and not being filled in? */
static bool way_used(const struct weir_way *w)
{
	__u64 first;

	memcpy(&first, &w->key, sizeof(first));
	return w->key.uid != 0 && first != WEIR_WAY_BUSY;
}

int wr_state_find(int fd, const struct weir_config *cfg, const struct weir_key *k,
		  struct weir_state *st)
{
	struct weir_set set;
	__u32 idx, w;

	if (!cfg->state_sets)
		return -ENOENT;	/* never initialised: the data path stored nothing */
	idx = wr_state_set(wr_key_hash(k, cfg->state_seed), cfg->state_sets);
	if (bpf_map_lookup_elem(fd, &idx, &set))
		return -errno;
	for (w = 0; w < WEIR_WAYS; w++) {
		const struct weir_way *way = &set.way[w];

		if (!way_used(way) || memcmp(&way->key, k, sizeof(*k)))
			continue;
		*st = way->st;
		return 0;
	}
	return -ENOENT;
}

static int state_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		return -errno;
	/* Not an array of sets: pinned by another version, never read as one. */
	if (info->type != BPF_MAP_TYPE_ARRAY || info->key_size != sizeof(__u32) ||
	    info->value_size != sizeof(struct weir_set))
		return -EINVAL;
	return 0;
}

/* Call cb for every occupied way of sets[0..n); its nonzero return stops. */
static int walk_sets(const struct weir_set *sets, __u32 n,
		     int (*cb)(const struct weir_way *w, void *ctx), void *ctx)
{
	__u32 i, w;
	int ret;

	for (i = 0; i < n; i++) {
		for (w = 0; w < WEIR_WAYS; w++) {
			if (!way_used(&sets[i].way[w]))
				continue;
			ret = cb(&sets[i].way[w], ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Every occupied way of wr_state, set by set, a batch of sets per syscall
 * (Linux 5.6+; one lookup per set where batches are refused). Returns 0
 * once every set was read, cb's nonzero value if it stopped the walk, or
 * -errno.
 */
int wr_state_walk(int fd, int (*cb)(const struct weir_way *w, void *ctx), void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	struct bpf_map_info info;
	struct weir_set *sets;
	__u32 *keys, next = 0, tok, n;
	bool batch = true, started = false;
	int err, ret = 0;

	err = state_info(fd, &info);
	if (err)
		return err;
	/* Zeroed: memory checkers cannot see what the bpf() syscall writes. */
	sets = calloc(STATE_BATCH, sizeof(*sets));
	keys = calloc(STATE_BATCH, sizeof(*keys));
	if (!sets || !keys) {
		ret = -ENOMEM;
		goto out;
	}
	/* An array's batches run in index order: next is the first set not yet read. */
	while (batch && next < info.max_entries) {
		n = STATE_BATCH;
		err = bpf_map_lookup_batch(fd, started ? &tok : NULL, &tok, keys, sets, &n, &bo)
			      ? -errno : 0;
		if (err && err != -ENOENT) {
			/* Not supported here (or failed): go on one set at a time. */
			pr_debug("reading wr_state in batches failed at set %u: %s", next,
				 strerror(-err));
			batch = false;
			break;
		}
		started = true;
		if (n > info.max_entries - next)
			n = info.max_entries - next;
		ret = walk_sets(sets, n, cb, ctx);
		next += n;
		if (ret)
			goto out;
		if (err == -ENOENT)
			break;		/* the last batch */
		if (!n) {
			batch = false;	/* no progress: do not spin */
			break;
		}
	}
	if (batch)
		goto out;
	for (; next < info.max_entries; next++) {
		if (bpf_map_lookup_elem(fd, &next, sets)) {
			ret = -errno;
			goto out;
		}
		ret = walk_sets(sets, 1, cb, ctx);
		if (ret)
			goto out;
	}
out:
	free(sets);
	free(keys);
	return ret;
}

static int count_way(const struct weir_way *w, void *ctx)
{
	(void)w;
	++*(__u64 *)ctx;
	return 0;
}

/* Occupied ways of wr_state, and how many it has (sets x WEIR_WAYS). */
int wr_state_count(int fd, __u64 *used, __u64 *capacity)
{
	struct bpf_map_info info;
	__u64 n = 0;
	int err = state_info(fd, &info);

	if (err)
		return err;
	*capacity = (__u64)info.max_entries * WEIR_WAYS;
	err = wr_state_walk(fd, count_way, &n);
	if (err)
		return err;
	*used = n;
	return 0;
}
