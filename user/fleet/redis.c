// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: the Redis transport. Connections to the configured
 * servers (single, or sharded by group) or to a cluster's primaries as its
 * slot map names them, authentication, the scripts loaded into each, and
 * one node's calls of a sync pipelined and their replies taken in order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <hiredis/hiredis.h>
#include "fleet/fleet_int.h"

/*
 * KEYS[1..n]: buckets; KEYS[n+1]: the over-limit set. ARGV[1]: per bucket
 * its kind and its numbers, as little-endian doubles (one argument for the
 * call, not several a key: Redis and the sync each parse one string).
 *
 * Kind 1 and 2 (wr_algo()'s fleet_kind), a fixed or sliding window (fleet
 * windows turn on Redis's clock; each host cuts its own by it,
 * wr_limit_wnow): the window's index
 * (Redis's now / period); the charges made here in the window before it
 * and in it; all this host has charged in those two windows (the fleet's
 * count is never less: a Redis that lost the key hands no one a fresh
 * window); the count at which the key is spent, as good as over its limit
 * (fleet_win_spent); the period in microseconds; the limit; this host's id (a
 * hash of its name) and the live hosts, N.
 *
 * The bucket holds the window's index, its count and the previous
 * window's, the sum of the hosts' allocations, and per host its
 * allocation: how much of the window it may admit in all, which is never
 * less than what it has used. Each call raises the caller's allocation to
 * its use if it is below, then adds 1/N of what no allocation holds (for
 * a sliding window, less the previous window's weight now; what a host
 * does not use stays its own until the window ends: handed back, it could
 * go to another host while its last charges were still on their way):
 * the allocations add up to no more than the limit (or what
 * the hosts used, where a host used more than it was allocated: what it
 * admitted between the window's turn and its first sync in it), so the
 * hosts together admit no more than it whatever each of them sees, and a
 * host the traffic moved to gains a third of what is left at each sync
 * (with N = 3). The bucket lives until the window after its own ends (the
 * sliding window still weighs it). A sender behind the bucket (its clock
 * turned a window later than another host's) adds its current window's
 * charge to what is now the previous one and gets no allocation (-1). A
 * key whose count reaches the spent count is over its limit until its
 * window ends. Returns the window's index, its two counts and the
 * caller's allocation. A window's count is not a rate: charges that
 * arrive late add to the window they name, and nothing carries over.
 *
 * Kind 0, a token bucket: seven numbers, in microseconds but the third
 * and fourth: all the sender has charged the key (TAT advance) since it
 * began following it, that total as of its last answered call, a number
 * naming that run (a new one each time the key is followed anew: a
 * restart, a key that went cold and came back), and the sender's id (a
 * hash of its name). The charge is the run's total less what the key's
 * record of it (per host: id, run and total, after the TAT in the
 * bucket's value) held: a call
 * whose answer was lost, or that was never run, is carried by the next,
 * and one run late or twice adds nothing (a total behind the record
 * charges nothing and leaves it where it was). Without a record of the
 * run (its first call, or a Redis that lost it), the total less the
 * answered one: what may not have reached the fleet. Then the threshold
 * over which the key is over its
 * limit: the tolerance, or below any TAT (-1e18) if the sender's bucket
 * refused packets since its last sync (a refused packet charges nothing,
 * so a key one host holds at its limit never runs over it; it is over its
 * limit all the same); how far the sender's own bucket runs ahead (what
 * Redis answers and publishes is never less: a Redis that lost the key
 * hands out no fresh burst; what it keeps is only the charges, so charges
 * that arrive late and spread over the same time from several hosts add
 * up as they happened); and since when its charges were made (the sender's
 * last send of it), in Redis's time as the sender reckons it from Redis's
 * earlier answers (0: not known yet, now): they are added from then, tat =
 * max(tat, from) + charge. Charged as if made now, a sync's worth would
 * refuse for a sync's length whatever the burst, and a backlog sent late
 * (Redis was away) for as long as the backlog was; and an absolute time,
 * unlike "so long ago", stays right when a call is run late (a stalled
 * Redis runs what was queued when it wakes). The bucket is stored even
 * when its TAT is behind Redis's now (kept a second past it), so the next
 * host's charge adds to it: were it dropped, each host's charge would
 * start again from its own "from", and hosts that each stay within the
 * rate would never add up (after a FLUSHALL or a stall the fleet admitted
 * N times the rate; tests/fleet_sim.c); it is stored as a little-endian
 * double, which takes no formatting and no parsing (a decimal one, as
 * earlier versions stored, is read too), and lives a second or two past
 * its TAT (whole seconds: few distinct TTLs to format), with its records.
 * Per bucket Redis runs one SET (and a ZADD when it is over); one MGET
 * reads them all. A bucket of a weir before the records (the TAT alone)
 * is read as one without records.
 * Returns Redis's now and, as one string of little-endian doubles, per
 * bucket how far the fleet's TAT runs ahead of it.
 *
 * Test hook: ARGV[2], if given, is Redis's now (us) in place of TIME, and
 * keys then live an hour longer (their expiry runs on the real clock,
 * which must not overtake a simulated one; an expired key reads as a full
 * bucket, as one whose TAT has passed does). Only a struct wr_fleet_hooks
 * with redis_us set makes the sync send it, and only C code that calls
 * wr_fleet_open() can set one: no config key or option reaches it, and a
 * production host never sends the extra argument. A client that sends it
 * anyway gains nothing it does not have already: whoever may call the
 * script may SET the buckets themselves.
 */
#include "fleet/sync.lua.h"	/* sync_lua[]: user/fleet/sync.lua, embedded by the Makefile */

/*
 * KEYS[1]: the fleet's hosts (score: when each heartbeat expires), KEYS[2]:
 * the over-limit set. ARGV: this host, its heartbeat's life and how many
 * over-limit keys to return, in microseconds; the test hook's optional
 * fourth, Redis's now (as sync_lua's). Returns Redis's now, the live hosts,
 * and the keys over their limit with their TATs.
 */
#include "fleet/poll.lua.h"	/* poll_lua[]: user/fleet/poll.lua */

/*
 * KEYS[1]: the fleet's fingerprints (fleet/fleet.h). ARGV: a member's life
 * (ms), how many members to remove, how many live ones to return at most,
 * the members to remove, then those to add or refresh. Returns Redis's now
 * (ms) and the live members with their expiries.
 */
#include "fleet/fp.lua.h"	/* fp_lua[]: user/fleet/fp.lua */

void fleet_node_drop(struct node *n, __u64 now)
{
	if (n->c)
		redisFree(n->c);
	n->c = NULL;
	n->backoff = n->backoff ? n->backoff * 2 : 100000000ULL;
	if (n->backoff > FLEET_BACKOFF_MAX_NS)
		n->backoff = FLEET_BACKOFF_MAX_NS;
	n->next_try = now + n->backoff;
}

void fleet_count_err(struct wr_fleet *f, int i, int kind, const char *what, const char *detail)
{
	struct weir_fleet_node *sn = &f->st.node[i];

	sn->errors[kind]++;
	/* Once per failure of a node that was up, not once per interval. */
	if (sn->up)
		fprintf(stderr, "weir: fleet: Redis %s: %s%s%s\n", sn->addr, what,
			detail ? ": " : "", detail ? detail : "");
	sn->up = 0;
}

static struct timeval tv_ms(__u32 ms)
{
	return (struct timeval){ .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
}

/* One command, its reply checked for an error; NULL (and the node dropped) on failure. */
static redisReply *command(struct wr_fleet *f, int i, int argc, const char **argv)
{
	struct node *n = &f->nodes[i];
	redisReply *rep = redisCommandArgv(n->c, argc, argv, NULL);

	if (!rep) {
		fleet_count_err(f, i,
				n->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT)
					? WEIR_FE_TIMEOUT : WEIR_FE_CONNECT,
				argv[0], n->c->errstr);
		fleet_node_drop(n, fleet_now(f));
		return NULL;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		fleet_count_err(f, i, WEIR_FE_CONNECT, argv[0], rep->str);
		freeReplyObject(rep);
		fleet_node_drop(n, fleet_now(f));
		return NULL;
	}
	return rep;
}

static int load_script(struct wr_fleet *f, int i, const char *lua, char *sha)
{
	const char *argv[] = { "SCRIPT", "LOAD", lua };
	redisReply *rep = command(f, i, 3, argv);

	if (!rep)
		return -EIO;
	if (rep->type != REDIS_REPLY_STRING || rep->len >= 48) {
		fleet_count_err(f, i, WEIR_FE_REPLY, "SCRIPT LOAD", "not a script id");
		freeReplyObject(rep);
		fleet_node_drop(&f->nodes[i], fleet_now(f));
		return -EPROTO;
	}
	memcpy(sha, rep->str, rep->len);
	sha[rep->len] = '\0';
	freeReplyObject(rep);
	return 0;
}

/* Connect, authenticate and load the scripts; 0 when the node is ready. */
int fleet_node_connect(struct wr_fleet *f, int i, __u64 now)
{
	struct node *n = &f->nodes[i];
	__u32 ms = f->cfg.interval_ms < 500 ? 500 : f->cfg.interval_ms;

	if (n->c)
		return 0;
	if (now < n->next_try)
		return -EAGAIN;
	n->c = redisConnectWithTimeout(n->host, n->port, tv_ms(ms));
	if (!n->c || n->c->err) {
		fleet_count_err(f, i, WEIR_FE_CONNECT, "cannot connect",
				n->c ? n->c->errstr : "out of memory");
		fleet_node_drop(n, now);
		return -ECONNREFUSED;
	}
	/* A stalled Redis holds the sync for at most an interval per node. */
	redisSetTimeout(n->c, tv_ms(f->cfg.interval_ms));
	if (f->auth) {
		const char *argv[] = { "AUTH", f->auth_user, f->auth_pass };
		redisReply *rep = f->auth_user[0] ? command(f, i, 3, argv)
						  : command(f, i, 2, (const char *[]){ "AUTH",
										  f->auth_pass });

		if (!rep)
			return -EACCES;
		freeReplyObject(rep);
	}
	if (load_script(f, i, sync_lua, n->sha_sync) || load_script(f, i, poll_lua, n->sha_poll) ||
	    load_script(f, i, fp_lua, n->sha_fp))
		return -EIO;
	n->backoff = 0;
	return 0;
}

/* ---- Redis Cluster: which primary holds a group ---- */

/* CRC16/XMODEM, as Redis Cluster hashes keys to its 16384 slots. */
static __u16 crc16(const char *p, size_t n)
{
	__u16 crc = 0;
	int b;

	while (n--) {
		crc ^= (__u16)(unsigned char)*p++ << 8;
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc;
}

static __u16 group_slot(const struct wr_fleet *f, __u32 g)
{
	char tag[48];
	int n = snprintf(tag, sizeof(tag), "%s#%u", f->cfg.name, g);

	return crc16(tag, n) & 16383;
}

/* The node of host:port, added if new; -1 when the table is full. */
int fleet_node_find(struct wr_fleet *f, const char *host, int port)
{
	int i;

	for (i = 0; i < f->nr_nodes; i++)
		if (f->nodes[i].port == port && !strcmp(f->nodes[i].host, host))
			return i;
	if (f->nr_nodes == WEIR_FLEET_NODES)
		return -1;
	i = f->nr_nodes++;
	memset(&f->nodes[i], 0, sizeof(f->nodes[i]));
	snprintf(f->nodes[i].host, sizeof(f->nodes[i].host), "%s", host);
	f->nodes[i].port = port;
	f->nodes[i].last_ok = fleet_now(f);
	memset(&f->st.node[i], 0, sizeof(f->st.node[i]));
	snprintf(f->st.node[i].addr, sizeof(f->st.node[i].addr), strchr(host, ':') ? "[%s]:%d"
		 : "%s:%d", host, port);
	f->st.node[i].up = 1;
	f->st.nr_nodes = f->nr_nodes;
	return i;
}

/*
 * The cluster's slot map (CLUSTER SLOTS) from the first node that answers,
 * known primaries first, then the configured ones: each group's primary.
 * 0, or -errno with the groups' nodes left as they were.
 */
int fleet_cluster_refresh(struct wr_fleet *f)
{
	static const char *const argv[] = { "CLUSTER", "SLOTS" };
	int g, i, tries = f->nr_nodes + f->nr_seeds, node[FLEET_GROUPS];
	__u64 now = fleet_now(f);
	redisReply *rep = NULL;
	size_t r;

	for (i = 0; i < tries && !rep; i++) {
		int n = i < f->nr_nodes ? i : fleet_node_find(f, f->seeds[i - f->nr_nodes].host,
							      f->seeds[i - f->nr_nodes].port);

		if (n < 0 || fleet_node_connect(f, n, now))
			continue;
		rep = command(f, n, 2, (const char **)argv);
		if (rep && rep->type != REDIS_REPLY_ARRAY) {
			fleet_count_err(f, n, WEIR_FE_REPLY, "CLUSTER SLOTS",
					"not a cluster's answer");
			freeReplyObject(rep);
			rep = NULL;
		}
	}
	if (!rep)
		return -EHOSTUNREACH;
	for (g = 0; g < FLEET_GROUPS; g++) {
		__u16 slot = group_slot(f, g);

		node[g] = -1;
		for (r = 0; r < rep->elements; r++) {
			redisReply *e = rep->element[r], *pr;

			if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
			    e->element[0]->type != REDIS_REPLY_INTEGER ||
			    e->element[1]->type != REDIS_REPLY_INTEGER ||
			    slot < e->element[0]->integer || slot > e->element[1]->integer)
				continue;
			pr = e->element[2];
			if (pr->type == REDIS_REPLY_ARRAY && pr->elements >= 2 &&
			    pr->element[0]->type == REDIS_REPLY_STRING &&
			    pr->element[1]->type == REDIS_REPLY_INTEGER)
				node[g] = fleet_node_find(f, pr->element[0]->str,
							  pr->element[1]->integer);
			break;
		}
	}
	freeReplyObject(rep);
	for (g = 0; g < FLEET_GROUPS; g++)
		if (node[g] >= 0)
			f->group_node[g] = node[g];
	f->refresh = false;
	return 0;
}

/* "[USER] PASSWORD" on the first line of a root-only file. */
int fleet_read_auth(struct wr_fleet *f)
{
	char why[320], line[512], *nl, *sp;
	FILE *fp;
	int err;

	err = wr_fleet_auth_check(f->cfg.auth_file, why, sizeof(why));
	if (err) {
		pr_err("fleet: auth-file: %s", why);
		return err;
	}
	fp = fopen(f->cfg.auth_file, "re");
	if (!fp || !fgets(line, sizeof(line), fp)) {
		err = fp ? -EINVAL : -errno;
		pr_err("fleet: cannot read the password from %s", f->cfg.auth_file);
		if (fp)
			fclose(fp);
		return err;
	}
	fclose(fp);
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	sp = strchr(line, ' ');
	if (sp) {
		*sp = '\0';
		snprintf(f->auth_user, sizeof(f->auth_user), "%s", line);
		snprintf(f->auth_pass, sizeof(f->auth_pass), "%s", sp + 1);
	} else {
		snprintf(f->auth_pass, sizeof(f->auth_pass), "%s", line);
	}
	explicit_bzero(line, sizeof(line));
	f->auth = true;
	return 0;
}
