// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pinned maps: opening them all (each checked against its shape in
 * WR_MAPS), the config and the live rule set, per-CPU sums and the
 * refusals still waiting per CPU, many entries written at once. A writer's session around a change is
 * session.c; the clock userspace shares with the data path, util.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_state.h"

/*
 * What each pinned map must be, in WR_MAPS order. Values are read into
 * these structs, so a map of another shape under our name (tampered with,
 * or left by another version) is refused, not trusted.
 */
const struct wr_map_shape wr_map_shapes[WR_NR_MAPS] = {
#define SHAPE(arg, f, t, k, v) { "wr_" #f, t, k, v },
	WR_MAPS(SHAPE, )
#undef SHAPE
};

void wr_maps_reset(struct wr_maps *m)
{
	int *fds[] = WR_MAP_FDS(m);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		*fds[i] = -1;
}

int wr_maps_open(struct wr_maps *m)
{
	int *fds[] = WR_MAP_FDS(m);
	char path[PATH_MAX];
	size_t i;
	int err;

	wr_maps_reset(m);
	if (!wr_is_loaded())
		return wr_not_loaded();
	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		err = wr_pin_path(path, sizeof(path), wr_map_shapes[i].name);
		if (err)
			goto fail;
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			err = -errno;
			if (err == -ENOENT)
				/* Loaded, so the pins are an older build's, from before this map. */
				pr_err("cannot open pinned map %s: the weir loaded under %s is "
				       "an older build, without %s ('weir detach all' takes it "
				       "off, with its state, so that this one can load)", path,
				       opts.root, wr_map_shapes[i].name);
			else
				pr_err("cannot open pinned map %s: %s%s", path, strerror(-err),
				       err == -EPERM || err == -EACCES ? " (needs root)" : "");
			goto fail;
		}
		{
			struct bpf_map_info info = {};
			__u32 len = sizeof(info);

			if (bpf_obj_get_info_by_fd(*fds[i], &info, &len) ||
			    info.type != wr_map_shapes[i].type || info.key_size != wr_map_shapes[i].key ||
			    (info.type != BPF_MAP_TYPE_RINGBUF &&
			     info.value_size != wr_map_shapes[i].value)) {
				pr_err("pinned %s is not weir's %s (type %u, key %u, value %u "
				       "bytes); refusing to use it: 'weir detach all' removes "
				       "weir's state", path, wr_map_shapes[i].name, info.type, info.key_size,
				       info.value_size);
				err = -EINVAL;
				goto fail;
			}
		}
	}
	return 0;
fail:
	wr_maps_close(m);
	return err;
}

void wr_maps_close(struct wr_maps *m)
{
	int *fds[] = WR_MAP_FDS(m);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int wr_config_read(const struct wr_maps *m, struct weir_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(m->config, &zero, cfg) ? -errno : 0;
}

/*
 * Every write moves the first stage's cache generation on (weir_config.
 * cache_gen): whatever changed (the live rule set, a list, a feed, a
 * switch) may let a source through that a cached refusal would drop.
 */
int wr_config_write(const struct wr_maps *m, const struct weir_config *cfg)
{
	struct weir_config c = *cfg;
	__u32 zero = 0;

	c.cache_gen++;
	return bpf_map_update_elem(m->config, &zero, &c, BPF_ANY) ? -errno : 0;
}

/* The live rule set in a new allocation (free it), or NULL after saying why. */
struct weir_ruleset *wr_live_get(const struct wr_maps *m)
{
	struct weir_ruleset *rs = calloc(1, sizeof(*rs));
	int err = rs ? wr_read_live(m, rs) : -ENOMEM;

	if (err) {
		pr_err("cannot read the rule set: %s", strerror(-err));
		free(rs);
		return NULL;
	}
	return rs;
}

int wr_read_live(const struct wr_maps *m, struct weir_ruleset *rs)
{
	struct weir_config cfg;
	__u32 idx;
	int err = wr_config_read(m, &cfg);

	if (err)
		return err;
	idx = cfg.active & 1;
	return bpf_map_lookup_elem(m->rulesets, &idx, rs) ? -errno : 0;
}

int wr_percpu_sum(int map_fd, __u32 key, __u64 *out, size_t words)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;
	size_t i;
	int c;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu * words, sizeof(__u64));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	memset(out, 0, words * sizeof(__u64));
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < words; i++)
			out[i] += vals[(size_t)c * words + i];
	free(vals);
	return 0;
}

/* What waits for key k among one slot's values, one per CPU. */
static __u64 waiting_in(const struct weir_src_wait *v, int ncpu, const struct weir_key *k)
{
	__u64 n = 0;
	int c;

	for (c = 0; c < ncpu; c++)
		if (v[c].n && key_same(&v[c].key, k))
			n += v[c].n;
	return n;
}

int wr_src_waits_read(const struct wr_maps *m, struct wr_src_waits *ws)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 keys[WEIR_SRC_WAIT_SLOTS], count = WEIR_SRC_WAIT_SLOTS, out;
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	ws->w = NULL;
	ws->ncpu = 0;
	if (ncpu <= 0)
		return -EINVAL;
	ws->w = calloc((size_t)ncpu * WEIR_SRC_WAIT_SLOTS, sizeof(*ws->w));
	if (!ws->w)
		return -ENOMEM;
	/* Every slot in one call: per-CPU values come slot-major, a CPU's after another's. */
	if (bpf_map_lookup_batch(m->src_drops, NULL, &out, keys, ws->w, &count, &o) &&
	    errno != ENOENT) {
		int err = -errno;

		free(ws->w);
		ws->w = NULL;
		return err;
	}
	ws->ncpu = ncpu;
	return 0;
}

__u64 wr_src_waiting(const struct wr_src_waits *ws, const struct weir_key *k)
{
	if (!ws->w)
		return 0;
	return waiting_in(&ws->w[(size_t)wr_src_wait_slot(k) * ws->ncpu], ws->ncpu, k);
}

int wr_src_waiting_key(const struct wr_maps *m, const struct weir_key *k, __u64 *n)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 slot = wr_src_wait_slot(k);
	struct weir_src_wait *v;

	*n = 0;
	if (ncpu <= 0)
		return -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->src_drops, &slot, v)) {
		int err = -errno;

		free(v);
		return err;
	}
	*n = waiting_in(v, ncpu, k);
	free(v);
	return 0;
}

void wr_src_waits_free(struct wr_src_waits *ws)
{
	free(ws->w);
	ws->w = NULL;
	ws->ncpu = 0;
}

int wr_agg_read(const struct wr_maps *m, __u32 slot, struct weir_state *st)
{
	__u64 waiting;
	int err;

	if (bpf_map_lookup_elem(m->agg, &slot, st))
		return -errno;
	err = wr_percpu_sum(m->agg_drops, slot, &waiting, 1);
	if (err)
		return err;
	st->drops += waiting;
	return 0;
}


/*
 * keys[0 .. n) (of ksz bytes) with vals[0 .. n) (of vsz bytes) into fd,
 * written WR_PUT_CHUNK at a time with bpf_map_update_batch; what a batch
 * did not write (a kernel without batches for the map, a full map, one bad
 * entry) is written one by one. res: each entry's result (0, or -errno;
 * -ENOSPC for a full map), or NULL to stop at the first failure. 0, or
 * that failure's -errno.
 */
int wr_map_put_many(int fd, const void *keys, size_t ksz, const void *vals, size_t vsz,
		    size_t n, int *res)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o, .elem_flags = BPF_ANY);
	const __u8 *k = keys, *v = vals;
	size_t done, i, len;

	if (res)
		memset(res, 0, n * sizeof(*res));
	for (done = 0; done < n; done += len) {
		__u32 cnt;

		len = n - done > WR_PUT_CHUNK ? WR_PUT_CHUNK : n - done;
		cnt = len;
		if (!bpf_map_update_batch(fd, k + done * ksz, v + done * vsz, &cnt, &o))
			continue;
		/* cnt were written; the rest one at a time, each with its own result. */
		for (i = cnt < len ? cnt : 0; i < len; i++) {
			int err;

			if (!bpf_map_update_elem(fd, k + (done + i) * ksz, v + (done + i) * vsz,
						 BPF_ANY))
				continue;
			err = errno == E2BIG ? -ENOSPC : -errno;
			if (!res)
				return err;
			res[done + i] = err;
		}
	}
	return 0;
}
