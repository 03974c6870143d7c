// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: one token bucket (or window) per key for a whole
 * fleet of hosts, enforced by each host's data path, kept in step through
 * Redis. Windows are counts, not rates: see sync.lua and take_win (sync.c) for how
 * they are shared out; what follows is said of token buckets.
 *
 * Redis is never on the packet path. The data path notes what it charges to
 * hot keys of fleet limits (wr_fleet_use); every interval the daemon's fleet
 * thread sends each hot key's growth to Redis, where a script adds it to
 * the fleet's bucket (GCRA charges add: tat = max(tat, now) + n x T) on
 * Redis's own clock, and folds the fleet's answer back into the local
 * bucket, which only ever moves toward "more consumed". Keys over their
 * limit fleet-wide go into a sorted set every host reads each interval, so
 * a host refuses them before it ever sees them. Cold keys never reach Redis.
 *
 * Time: every fleet time is Redis's (TIME inside the scripts); a host only
 * ever uses differences of it (how far a bucket runs ahead of Redis's now),
 * added to its own CLOCK_MONOTONIC at the moment it sent the request, so
 * hosts' clocks never meet and their skew does not matter.
 *
 * When Redis is slow or gone the data path goes on alone: after
 * stale-after, the safe fallback makes each fleet limit charge every packet
 * N times (N: the most live hosts the heartbeats showed over the last
 * FLEET_HOSTS_MEMORY_S), so each host enforces
 * its 1/N share; the local fallback keeps the full rate on each host.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <hiredis/hiredis.h>
#include "fleet/fleet_int.h"

static struct timespec ts_of(__u64 ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };
}

static void *fleet_thread(void *arg)
{
	struct wr_fleet *f = arg;
	__u64 next = wr_mono_ns(), wake, turn;
	bool extra = false;

	for (;;) {
		struct timespec ts;

		pthread_mutex_lock(&f->lock);
		if (f->stop) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		pthread_mutex_unlock(&f->lock);
		wr_fleet_sync(f);
		/* A sync at a window's turn leaves the interval's schedule as it was. */
		if (!extra) {
			next += (__u64)f->cfg.interval_ms * 1000000ULL;
			/* A sync that overran its interval does not pile up the next ones. */
			if (wr_mono_ns() > next)
				next = wr_mono_ns();
		}
		wake = next;
		turn = wr_fleet_turn_after(f, wr_mono_ns());
		extra = turn && turn < next;
		if (extra)
			wake = turn;
		ts = ts_of(wake);
		pthread_mutex_lock(&f->lock);
		while (!f->stop && pthread_cond_timedwait(&f->wake, &f->lock, &ts) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&f->lock);
	}
	/* This host's fingerprints withdrawn: the others stop following them now. */
	pthread_mutex_lock(&f->fp_lock);
	f->nr_pub = 0;
	pthread_mutex_unlock(&f->fp_lock);
	fleet_fp_sync(f);
	return NULL;
}

/* wr_state and wr_agg into this process, for the fold. */
static void *map_mmap(int fd, size_t *len, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return NULL;
	*len = ((size_t)info.max_entries * info.value_size + page - 1) / page * page;
	if (entries)
		*entries = info.max_entries;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void fleet_free(struct wr_fleet *f)
{
	int i;

	for (i = 0; i < WEIR_FLEET_NODES; i++)
		if (f->nodes[i].c)
			redisFree(f->nodes[i].c);
	if (f->sets)
		munmap(f->sets, f->sets_len);
	if (f->agg)
		munmap(f->agg, f->agg_len);
	if (f->maps.fleet_status >= 0) {
		__u32 zero = 0;

		memset(&f->st, 0, sizeof(f->st));
		bpf_map_update_elem(f->maps.fleet_status, &zero, &f->st, BPF_ANY);
	}
	wr_maps_close(&f->maps);
	free(f->tab);
	free(f->tab_next);
	free(f->items);
	free(f->by_group);
	free(f->names);
	free(f->rs);
	free(f->calls);
	free(f->argv);
	free(f->argvlen);
	free(f->args);
	explicit_bzero(f->auth_pass, sizeof(f->auth_pass));
	fleet_fp_close(f);
	free(f);
}

/* Each fd of m duplicated into *out (all -1 on failure): 0 or -errno. */
static int maps_dup(const struct wr_maps *m, struct wr_maps *out)
{
	struct wr_maps in = *m;
	int *src[] = WR_MAP_FDS(&in), *dst[] = WR_MAP_FDS(out);
	size_t i;

	wr_maps_reset(out);
	for (i = 0; i < ARRAY_SIZE(src); i++) {
		if (*src[i] < 0)
			continue;
		*dst[i] = fcntl(*src[i], F_DUPFD_CLOEXEC, 3);
		if (*dst[i] < 0) {
			int err = -errno;

			wr_maps_close(out);
			return err;
		}
	}
	return 0;
}

struct wr_fleet *wr_fleet_open(const struct wr_cfg_fleet *cfg, const struct wr_maps *maps,
			       const struct wr_fleet_hooks *hooks)
{
	struct wr_fleet *f = calloc(1, sizeof(*f));
	int i, err;

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	wr_maps_reset(&f->maps);
	{
		pthread_condattr_t ca;

		pthread_mutex_init(&f->lock, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&f->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	f->cfg = *cfg;
	f->orig = *cfg;
	if (fleet_fp_open(f)) {
		fleet_fp_close(f);
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	if (hooks)
		f->hooks = *hooks;
	f->started = fleet_now(f);
	f->notify_fd = -1;
	f->mult = 1;
	if (!f->cfg.host[0] && gethostname(f->cfg.host, sizeof(f->cfg.host) - 1))
		strcpy(f->cfg.host, "localhost");
	err = maps ? maps_dup(maps, &f->maps) : wr_maps_open(&f->maps);
	if (err)
		goto fail;
	f->sets = map_mmap(f->maps.state, &f->sets_len, &f->nr_sets);
	f->agg = map_mmap(f->maps.agg, &f->agg_len, NULL);
	if (!f->sets || !f->agg) {
		err = -errno;
		pr_err("fleet: cannot map weir's buckets (%s); 'weir detach all' and a restart "
		       "create them mappable", strerror(-err));
		goto fail;
	}
	{
		struct weir_config sc;

		/* The offset in force stays (a restart turns no window), until Redis disagrees. */
		if (!wr_config_read(&f->maps, &sc) && sc.fleet_win_off) {
			f->win_off = sc.fleet_win_off;
			f->win_off_rtt = 2000000;
		}
	}
	f->tab_cap = FLEET_TAB_MIN;
	f->tab = calloc(FLEET_TAB_MAX, sizeof(*f->tab));
	f->tab_next = calloc(FLEET_TAB_MAX, sizeof(*f->tab_next));
	f->items = calloc(WEIR_FLEET_KEYS, sizeof(*f->items));
	f->by_group = calloc(WEIR_FLEET_KEYS, sizeof(*f->by_group));
	f->names = malloc((size_t)WEIR_FLEET_KEYS * FLEET_NAME_MAX);
	f->gen = 1;
	f->rs = calloc(1, sizeof(*f->rs));
	if (!f->tab || !f->tab_next || !f->items || !f->by_group || !f->names || !f->rs) {
		err = -ENOMEM;
		goto fail;
	}
	if (f->cfg.auth_file[0]) {
		err = fleet_read_auth(f);
		if (err)
			goto fail;
	}
	f->calls = calloc(FLEET_GROUPS * (WEIR_FLEET_KEYS / FLEET_BATCH + 2), sizeof(*f->calls));
	/* Per call: command, sha, numkeys, keys, the over set, the numbers, a test's now. */
	f->argv = calloc(6 + FLEET_BATCH, sizeof(*f->argv));
	f->argvlen = calloc(6 + FLEET_BATCH, sizeof(*f->argvlen));
	f->args = malloc(FLEET_ARG_BYTES * FLEET_BATCH);
	if (!f->calls || !f->argv || !f->argvlen || !f->args) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < f->cfg.nr_nodes; i++) {
		char host[64], *colon;
		const char *h = f->cfg.nodes[i];

		snprintf(host, sizeof(host), "%s", h[0] == '[' ? h + 1 : h);
		colon = strrchr(host, ':');
		if (!colon) {
			err = -EINVAL;
			goto fail;
		}
		*colon = '\0';
		if (colon > host && colon[-1] == ']')
			colon[-1] = '\0';
		if (f->cfg.mode == WR_FLEET_CLUSTER) {
			/* Where to ask for the slot map; the primaries are found there. */
			snprintf(f->seeds[i].host, sizeof(f->seeds[i].host), "%s", host);
			f->seeds[i].port = atoi(colon + 1);
			f->nr_seeds++;
		} else {
			fleet_node_find(f, host, atoi(colon + 1));
		}
	}
	for (i = 0; i < FLEET_GROUPS; i++) {
		f->group_node[i] = f->nr_nodes ? i % f->nr_nodes : 0;
		f->group_ok[i] = fleet_now(f);	/* stale-after counts from the start */
	}
	f->mapped = f->cfg.mode != WR_FLEET_CLUSTER;
	snprintf(f->st.name, sizeof(f->st.name), "%s", f->cfg.name);
	snprintf(f->st.host, sizeof(f->st.host), "%s", f->cfg.host);
	/* 48 bits: a double holds it exactly; 0 is no host. */
	f->host_id = (double)((fleet_fnv(f->cfg.host, strlen(f->cfg.host), FNV_BASIS) >> 16) | 1);
	{
		struct timespec ts;

		/* Runs of a new process start elsewhere: its totals are not an old run's. */
		clock_gettime(CLOCK_REALTIME, &ts);
		f->runs = fleet_fnv(&ts, sizeof(ts),
				    fleet_fnv(&f->host_id, sizeof(f->host_id), FNV_BASIS) ^
					    (__u64)getpid());
	}
	f->st.pid = getpid();
	f->st.mode = f->cfg.mode;
	f->st.fallback = f->cfg.fallback;
	f->st.interval_ms = f->cfg.interval_ms;
	f->st.stale_ms = f->cfg.stale_ms;
	f->st.multiplier = 1;
	fleet_write_status(f);
	return f;
fail:
	fleet_free(f);
	errno = -err;
	return NULL;
}

void wr_fleet_close(struct wr_fleet *f)
{
	if (f)
		fleet_free(f);
}

struct wr_fleet *wr_fleet_start(const struct wr_cfg_fleet *cfg, int notify_fd)
{
	struct wr_fleet *f = wr_fleet_open(cfg, NULL, NULL);
	int err;

	if (!f)
		return NULL;
	f->notify_fd = notify_fd;
	err = pthread_create(&f->thread, NULL, fleet_thread, f);
	if (err) {
		fleet_free(f);
		errno = err;
		return NULL;
	}
	return f;
}

void wr_fleet_stop(struct wr_fleet *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = 1;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	fleet_free(f);
}

bool wr_fleet_same(const struct wr_fleet *f, const struct wr_cfg_fleet *cfg)
{
	/* With an auth file, a reload reads the password again. */
	return f && !cfg->auth_file[0] && !memcmp(&f->orig, cfg, sizeof(*cfg));
}

unsigned int wr_fleet_multiplier(const struct wr_fleet *f)
{
	return f ? __atomic_load_n(&f->mult, __ATOMIC_RELAXED) : 1;
}
