// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one snapshot reader: every counter the data path keeps, the live
 * rule set they belong to, and on request the bucket count, the connection
 * counts and the list sizes, read together against one clock reading.
 * `stats`, `top` and the metrics endpoint all print from it, so a counter
 * added to the data path is read in one place and named in one table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/snapshot.h"

const char *const wr_global_names[WEIR_G_MAX] = {
	[WEIR_G_PACKETS] = "packets",
	[WEIR_G_PARSED] = "parsed",
	[WEIR_G_NON_IP] = "non_ip",
	[WEIR_G_MALFORMED] = "malformed",
	[WEIR_G_ND] = "neighbour_discovery",
	[WEIR_G_DENIED] = "denied",
	[WEIR_G_ALLOWED] = "allowed",
	[WEIR_G_NO_RULE] = "no_rule",
	[WEIR_G_PASSED] = "passed",
	[WEIR_G_DROPPED] = "dropped",
	[WEIR_G_WOULD_DROP] = "would_drop",
	[WEIR_G_FAULT] = "faults",
	[WEIR_G_FAIL_OPEN] = "fail_open",
	[WEIR_G_EVENTS] = "events",
	[WEIR_G_EVENTS_LOST] = "events_lost",
	[WEIR_G_SHED] = "shed",
	[WEIR_G_CAPACITY] = "over_capacity",
	[WEIR_G_COOKIE_SENT] = "cookies_sent",
	[WEIR_G_COOKIE_BUDGET] = "cookies_over_budget",
	[WEIR_G_COOKIE_BAD] = "cookies_bad_syn",
	[WEIR_G_COOKIE_VALID] = "cookies_validated",
	[WEIR_G_COOKIE_INVALID] = "cookies_invalid",
	[WEIR_G_VERIFIED] = "verified_spared",
	[WEIR_G_COOKIE_PRIMED] = "cookies_primed",
	[WEIR_G_CONTENDED] = "contended",
	[WEIR_G_OUT_OF_STATE] = "out_of_state",
	[WEIR_G_TCP_LOOKUPS] = "tcp_state_lookups",
	[WEIR_G_FEED_DENIED] = "feed_denied",
	[WEIR_G_FEED_ALLOWED] = "feed_allowed",
	[WEIR_G_CACHED] = "cached",
	[WEIR_G_FEED_CLASSED] = "feed_classed",
	[WEIR_G_VERIFIED_UNMATCHED] = "verified_unmatched",
};
_Static_assert(sizeof(wr_global_names) / sizeof(wr_global_names[0]) == WEIR_G_MAX,
	       "a name for every global counter");

/* How long a count of wr_state buckets is reused (ns). */
#define KEYS_CACHE_NS (5ULL * 1000000000ULL)

/* The bucket count of wr_state, reused for KEYS_CACHE_NS; shared by all threads. */
static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	__u32 map_id;		/* which map the count is of */
	__u64 at;		/* CLOCK_MONOTONIC ns it was taken */
	__u64 count, capacity;
	bool valid;
} keys_cache;

static int state_keys(int fd, __u64 now, __u64 *count, __u64 *capacity)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	pthread_mutex_lock(&keys_lock);
	if (keys_cache.valid && keys_cache.map_id == info.id && now - keys_cache.at < KEYS_CACHE_NS) {
		*count = keys_cache.count;
		*capacity = keys_cache.capacity;
	} else {
		err = wr_state_count(fd, count, capacity);
		if (!err) {
			keys_cache.map_id = info.id;
			keys_cache.at = now;
			keys_cache.count = *count;
			keys_cache.capacity = *capacity;
			keys_cache.valid = true;
		}
	}
	pthread_mutex_unlock(&keys_lock);
	return err;
}

/* Established connections counted for connection limits, summed per live rule. */
static void read_conns(int fd, struct wr_snapshot *s)
{
	struct weir_key k, next;
	void *prev = NULL;
	__u32 i, walked = 0;

	memset(s->conns, 0, sizeof(s->conns));
	while (walked++ < WEIR_CONN_MAX && !bpf_map_get_next_key(fd, prev, &next)) {
		struct weir_conns c;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &c))
			continue;
		for (i = 0; i < s->rs.nr_rules; i++)
			if (s->rs.rules[i].uid == k.uid)
				s->conns[i] += c.count;
	}
}

/*
 * Verified sources: entries of wr_verified whose latest handshake is
 * within the TTL (older ones wait for the LRU). Bounded by the map's size.
 */
static __u64 count_verified(int fd, const struct wr_snapshot *s)
{
	struct weir_verified_key k, next;
	void *prev = NULL;
	__u64 at, n = 0;
	__u32 walked = 0;

	if (!s->cfg.verified_ttl_ns)
		return 0;
	while (walked++ < WEIR_VERIFIED_MAX && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(fd, &k, &at) && s->at - at <= s->cfg.verified_ttl_ns)
			n++;
	}
	return n;
}

static int cmp_ifs(const void *a, const void *b)
{
	const struct wr_snap_if *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

/* Each attachment's counters, lowest ifindex first; one without a slot counts nothing. */
static void read_ifs(const struct wr_maps *m, struct wr_snapshot *s)
{
	int idx[WR_SNAP_IFS], i, mode;

	s->nr_ifs = wr_list_links(idx, WR_SNAP_IFS);
	for (i = 0; i < s->nr_ifs; i++) {
		struct wr_snap_if *f = &s->ifs[i];

		f->ifindex = idx[i];
		wr_link_describe(idx[i], f->name, sizeof(f->name), &mode);
		f->counted = !wr_if_read(m, idx[i], &f->st);
	}
	qsort(s->ifs, s->nr_ifs, sizeof(s->ifs[0]), cmp_ifs);
}

int wr_snapshot_read(const struct wr_maps *m, struct wr_snapshot *s, unsigned int parts)
{
	__u32 i, zero = 0;
	int err, fam;

	memset(s, 0, sizeof(*s));
	err = wr_config_read(m, &s->cfg);
	if (!err)
		err = wr_read_live(m, &s->rs);
	if (err)
		return err;
	if (s->rs.nr_rules > WEIR_MAX_RULES)
		s->rs.nr_rules = WEIR_MAX_RULES;
	s->at = wr_mono_ns();
	err = wr_percpu_sum(m->global, 0, s->global, WEIR_G_MAX);
	for (i = 0; !err && i < s->rs.nr_rules; i++)
		err = wr_percpu_sum(m->rule_stats, s->rs.rules[i].slot, (__u64 *)&s->rule[i],
				    sizeof(s->rule[i]) / sizeof(__u64));
	for (i = 0; !err && i <= WEIR_MAX_CLASS; i++)
		err = wr_percpu_sum(m->class_stats, i, (__u64 *)&s->cls[i],
				    sizeof(s->cls[i]) / sizeof(__u64));
	if (!err && bpf_map_lookup_elem(m->shed, &zero, &s->shed))
		err = -errno;
	if (!err && bpf_map_lookup_elem(m->fleet_status, &zero, &s->fleet))
		err = -errno;
	if (!err && parts & WR_SNAP_CONNS)
		read_conns(m->conns, s);
	if (!err)
		s->verified = count_verified(m->verified, s);
	if (!err && parts & WR_SNAP_KEYS)
		err = state_keys(m->state, s->at, &s->keys, &s->capacity);
	for (fam = 0; !err && parts & WR_SNAP_LISTS && fam < 2; fam++) {
		err = wr_list_count(m, true, fam ? 6 : 4, &s->deny[fam]);
		if (!err)
			err = wr_list_count(m, false, fam ? 6 : 4, &s->allow[fam]);
	}
	if (!err)
		read_ifs(m, s);
	s->parts = parts;
	return err;
}

int wr_snapshot_rule_in(const struct wr_snapshot *a, const struct wr_snapshot *b, __u32 i)
{
	__u32 j;

	for (j = 0; i < b->rs.nr_rules && j < a->rs.nr_rules; j++)
		if (a->rs.rules[j].uid == b->rs.rules[i].uid)
			return j;
	return -1;
}
