// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits' neighbour: weir auto's fingerprints shared through the
 * fleet's Redis (fleet/fleet.h says the set's layout). The daemon hands in
 * what it publishes and takes out what the other hosts published, under
 * fp_lock; the Redis call (fp.lua) is the fleet thread's, once a sync and
 * once more when the sync stops (its members withdrawn). Nothing here
 * judges a member's words: the daemon parses them as it parses a rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hiredis/hiredis.h>
#include "fleet/fleet_int.h"

/* Live members one call returns at most: more than any fleet publishes, a bounded reply. */
#define FP_READ_MAX		(4 * WR_FLEET_FP_MAX)
/* A member: HOST, a tab, WORDS. */
#define FP_MEMBER_LEN		(WR_FLEET_FP_HOST + WR_FLEET_FP_WORDS)

int fleet_fp_open(struct wr_fleet *f)
{
	pthread_mutex_init(&f->fp_lock, NULL);
	f->fp_pub = calloc(WR_FLEET_FP_MAX, sizeof(*f->fp_pub));
	f->fp_sent = calloc(WR_FLEET_FP_MAX, sizeof(*f->fp_sent));
	f->fp_got = calloc(FP_READ_MAX, sizeof(*f->fp_got));
	return f->fp_pub && f->fp_sent && f->fp_got ? 0 : -ENOMEM;
}

void fleet_fp_close(struct wr_fleet *f)
{
	free(f->fp_pub);
	free(f->fp_sent);
	free(f->fp_got);
	pthread_mutex_destroy(&f->fp_lock);
}

int wr_fleet_fp_publish(struct wr_fleet *f, const char (*words)[WR_FLEET_FP_WORDS], size_t n)
{
	size_t i;

	if (n > WR_FLEET_FP_MAX)
		return -E2BIG;
	pthread_mutex_lock(&f->fp_lock);
	for (i = 0; i < n; i++)
		snprintf(f->fp_pub[i], WR_FLEET_FP_WORDS, "%s", words[i]);
	f->nr_pub = n;
	f->fp_on = true;
	pthread_mutex_unlock(&f->fp_lock);
	return 0;
}

int wr_fleet_fp_received(struct wr_fleet *f, struct wr_fleet_fp *out, size_t max, __u64 *gen)
{
	int n;

	pthread_mutex_lock(&f->fp_lock);
	f->fp_on = true;
	if (!f->got_gen) {
		pthread_mutex_unlock(&f->fp_lock);
		return -EAGAIN;
	}
	n = f->nr_got < max ? f->nr_got : max;
	memcpy(out, f->fp_got, n * sizeof(*out));
	if (gen)
		*gen = f->got_gen;
	pthread_mutex_unlock(&f->fp_lock);
	return n;
}

const char *wr_fleet_host(const struct wr_fleet *f)
{
	return f->cfg.host;
}

static bool listed(char (*list)[WR_FLEET_FP_WORDS], size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], w))
			return true;
	return false;
}

/* A host's name: printable, no spaces (it goes into log lines and JSON). */
static bool host_ok(const char *s, size_t n)
{
	while (n--)
		if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] > 0x7e)
			return false;
	return true;
}

/* The live members of rep (after Redis's now, now_r) into f->fp_got, this host's left out. */
static void take(struct wr_fleet *f, const redisReply *live, long long now_r)
{
	struct timespec ts;
	long long wall;
	size_t i, n = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	wall = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
	pthread_mutex_lock(&f->fp_lock);
	for (i = 0; i + 1 < live->elements && n < FP_READ_MAX; i += 2) {
		const redisReply *m = live->element[i], *sc = live->element[i + 1];
		struct wr_fleet_fp *g = &f->fp_got[n];
		const char *tab;
		size_t hl;
		char *end;
		double exp;

		if (m->type != REDIS_REPLY_STRING || sc->type != REDIS_REPLY_STRING)
			continue;
		memset(g, 0, sizeof(*g));
		errno = 0;
		exp = strtod(sc->str, &end);
		tab = memchr(m->str, '\t', m->len);
		hl = tab ? (size_t)(tab - m->str) : 0;
		if (tab && hl == strlen(f->cfg.host) && !memcmp(m->str, f->cfg.host, hl))
			continue;	/* this host's own: never applied here */
		g->expires_ms = wall + (errno || *end || exp < now_r ? 0 : (long long)exp - now_r);
		if (!tab || !hl || hl >= WR_FLEET_FP_HOST || m->len - hl - 1 >= WR_FLEET_FP_WORDS ||
		    m->len - hl - 1 == 0 || memchr(m->str, '\0', m->len) || !host_ok(m->str, hl)) {
			/* Said as it came, cut to fit and marked: the daemon refuses it. */
			g->corrupt = true;
			size_t cut = m->len < WR_FLEET_FP_WORDS - 1 ? m->len : WR_FLEET_FP_WORDS - 1;

			snprintf(g->words, sizeof(g->words), "%.*s", (int)cut, m->str);
		} else {
			memcpy(g->host, m->str, hl);
			memcpy(g->words, tab + 1, m->len - hl - 1);
		}
		n++;
	}
	f->nr_got = n;
	f->got_gen++;
	pthread_mutex_unlock(&f->fp_lock);
}

void fleet_fp_sync(struct wr_fleet *f)
{
	/* EVALSHA, its 6 arguments, the members removed and those added. */
	const char *argv[7 + 2 * WR_FLEET_FP_MAX];
	size_t argvlen[7 + 2 * WR_FLEET_FP_MAX];
	char key[FLEET_NAME_MAX], ttl[24], nrem[24], lim[24];
	char (*pub)[WR_FLEET_FP_WORDS] = NULL, (*mem)[FP_MEMBER_LEN] = NULL;
	size_t np, i, argc = 0, rem = 0, nm = 0;
	redisReply *rep = NULL;
	struct node *n;
	int ni;

	pthread_mutex_lock(&f->fp_lock);
	if (!f->fp_on || !f->mapped) {
		pthread_mutex_unlock(&f->fp_lock);
		return;
	}
	pthread_mutex_unlock(&f->fp_lock);
	/* Group 0's node: the same one for every host of the fleet. */
	ni = f->group_node[0];
	if (ni < 0 || ni >= f->nr_nodes || fleet_node_connect(f, ni, fleet_now(f)))
		return;
	n = &f->nodes[ni];
	pub = calloc(WR_FLEET_FP_MAX, sizeof(*pub));
	mem = calloc(2 * WR_FLEET_FP_MAX, sizeof(*mem));
	if (!pub || !mem)
		goto out;
	pthread_mutex_lock(&f->fp_lock);
	np = f->nr_pub;
	memcpy(pub, f->fp_pub, np * sizeof(*pub));
	pthread_mutex_unlock(&f->fp_lock);
	snprintf(key, sizeof(key), "weir:{%s#0}:auto", f->cfg.name);
	snprintf(ttl, sizeof(ttl), "%llu",
		 (unsigned long long)WR_FLEET_FP_TTL_MS(f->cfg.interval_ms));
	snprintf(lim, sizeof(lim), "%d", FP_READ_MAX);
	/* What the last good call added and this one no longer publishes: removed. */
	for (i = 0; i < f->nr_sent; i++)
		if (!listed(pub, np, f->fp_sent[i]))
			snprintf(mem[nm++], FP_MEMBER_LEN, "%s\t%s", f->cfg.host, f->fp_sent[i]);
	rem = nm;
	for (i = 0; i < np; i++)
		snprintf(mem[nm++], FP_MEMBER_LEN, "%s\t%s", f->cfg.host, pub[i]);
	snprintf(nrem, sizeof(nrem), "%zu", rem);
	argv[argc++] = "EVALSHA";
	argv[argc++] = n->sha_fp;
	argv[argc++] = "1";
	argv[argc++] = key;
	argv[argc++] = ttl;
	argv[argc++] = nrem;
	argv[argc++] = lim;
	for (i = 0; i < nm; i++)
		argv[argc++] = mem[i];
	for (i = 0; i < argc; i++)
		argvlen[i] = strlen(argv[i]);
	rep = redisCommandArgv(n->c, (int)argc, argv, argvlen);
	if (!rep) {
		fleet_count_err(f, ni, WEIR_FE_CONNECT, "fingerprints", n->c->errstr);
		fleet_node_drop(n, fleet_now(f));
		goto out;
	}
	if (rep->type == REDIS_REPLY_ERROR || rep->type != REDIS_REPLY_ARRAY ||
	    rep->elements != 2 || rep->element[0]->type != REDIS_REPLY_INTEGER ||
	    rep->element[1]->type != REDIS_REPLY_ARRAY) {
		fleet_count_err(f, ni, WEIR_FE_REPLY, "fingerprints",
				rep->type == REDIS_REPLY_ERROR ? rep->str : "not fp.lua's answer");
		/* NOSCRIPT (a Redis restarted): the scripts are loaded again on reconnecting. */
		fleet_node_drop(n, 0);
		goto out;
	}
	memcpy(f->fp_sent, pub, np * sizeof(*pub));
	f->nr_sent = np;
	take(f, rep->element[1], rep->element[0]->integer);
out:
	if (rep)
		freeReplyObject(rep);
	free(pub);
	free(mem);
}
