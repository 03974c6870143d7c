// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: the Redis name of each key (wr_fleet_key_name), the
 * group it hashes to, and back from a name to the rule, limit and key it
 * is on this host (an over-limit set's members).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet_int.h"

/* FNV-1a, for the limit's parameters in a key's name and for shards. */
__u64 fleet_fnv(const void *p, size_t n, __u64 h)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/*
 * A key's group: its name's hash tag, {FLEET#G}. Every key of a group, the
 * group's over-limit set and its heartbeat set share one Redis Cluster
 * slot, so one script call can touch them all; groups spread the keys over
 * the cluster's primaries (and, sharded, over the servers).
 */
static __u32 key_group(const char *tail)
{
	return fleet_fnv(tail, strlen(tail), FNV_BASIS) % FLEET_GROUPS;
}

static __u32 limit_params(const struct weir_limit *l)
{
	__u64 h = FNV_BASIS;

	h = fleet_fnv(&l->rate, sizeof(l->rate), h);
	h = fleet_fnv(&l->burst, sizeof(l->burst), h);
	h = fleet_fnv(&l->period_ms, sizeof(l->period_ms), h);
	h = fleet_fnv(&l->key, 1, h);
	h = fleet_fnv(&l->cost, 1, h);
	h = fleet_fnv(&l->plen4, 1, h);
	h = fleet_fnv(&l->plen6, 1, h);
	/* A window's bucket is not a token bucket's (token buckets' names kept as they were). */
	if (wr_limit_windowed(l))
		h = fleet_fnv(&l->algo, 1, h);
	return h ^ (h >> 32);
}

/* A string builder that stops at its end and says so. */
struct sb {
	char *p, *end;
	bool over;
};

static void sb_mem(struct sb *b, const char *s, size_t n)
{
	if (b->over || n >= (size_t)(b->end - b->p)) {
		b->over = true;
		return;
	}
	memcpy(b->p, s, n);
	b->p += n;
	*b->p = '\0';
}

static void sb_str(struct sb *b, const char *s)
{
	sb_mem(b, s, strlen(s));
}

static void sb_u64(struct sb *b, unsigned long long v)
{
	char t[24];

	sb_mem(b, t, u64_str(t, v));
}

/* A key name's tail starts with its limit's part: "RULE:LIMIT:PARAMS:". */
static void name_limit(struct sb *b, const char *rule, __u32 li, const struct weir_limit *l)
{
	static const char hex[] = "0123456789abcdef";
	char params[9];
	__u32 v = limit_params(l);
	int i;

	for (i = 7; i >= 0; i--, v >>= 4)
		params[i] = hex[v & 15];
	params[8] = '\0';
	sb_str(b, rule);
	sb_mem(b, ":", 1);
	sb_u64(b, li);
	sb_mem(b, ":", 1);
	sb_str(b, params);
	sb_mem(b, ":", 1);
}

/* Decimal of v into p (3 bytes), not terminated; its length. */
static size_t dec_u8(char *p, unsigned int v)
{
	if (v >= 100) {
		p[0] = '0' + v / 100;
		p[1] = '0' + v / 10 % 10;
		p[2] = '0' + v % 10;
		return 3;
	}
	if (v >= 10) {
		p[0] = '0' + v / 10;
		p[1] = '0' + v % 10;
		return 2;
	}
	p[0] = '0' + v;
	return 1;
}

/* ... and ends with the key's: "all", or ADDR/PLEN. */
static void name_addr(struct sb *b, const struct weir_key *k)
{
	char addr[INET6_ADDRSTRLEN];
	int i;

	if (!k->family) {
		sb_str(b, "all");
		return;
	}
	if (k->family == 4) {
		const __u8 *a = (const __u8 *)k->addr;
		char *p = addr;

		/* Every sync names every key it sends: not through printf. */
		for (i = 0; i < 4; i++) {
			p += dec_u8(p, a[i]);
			*p++ = '.';
		}
		p[-1] = '/';
		p += dec_u8(p, k->plen);
		sb_mem(b, addr, p - addr);
		return;
	}
	if (inet_ntop(AF_INET6, k->addr, addr, sizeof(addr)))
		sb_str(b, addr);
	else
		b->over = true;
	sb_mem(b, "/", 1);
	sb_u64(b, k->plen);
}

/* The whole name: "weir:{FLEET#GROUP}:" and the tail, whose hash gives GROUP. */
static void name_whole(struct sb *b, const char *fleet, __u32 group, const char *tail,
		       size_t tail_len)
{
	sb_str(b, "weir:{");
	sb_str(b, fleet);
	sb_mem(b, "#", 1);
	sb_u64(b, group);
	sb_mem(b, "}:", 2);
	sb_mem(b, tail, tail_len);
}

int wr_fleet_key_name(const char *fleet, const char *rule, __u32 li, const struct weir_limit *l,
		      const struct weir_key *k, char *buf, size_t len)
{
	char tail[FLEET_TAIL_MAX];
	struct sb b = { tail, tail + sizeof(tail) };

	name_limit(&b, rule, li, l);
	name_addr(&b, k);
	if (b.over)
		return -ENAMETOOLONG;
	b = (struct sb){ buf, buf + len };
	name_whole(&b, fleet, key_group(tail), tail, strlen(tail));
	return b.over ? -ENAMETOOLONG : 0;
}

/*
 * What wr_fleet_key_name() makes of item it (of rule ri), into this sync's
 * names, and its group; the limit's part made once a sync. 0, or
 * -ENAMETOOLONG (that key is not synced).
 */
int fleet_item_name(struct wr_fleet *f, struct item *it, __u32 ri)
{
	struct name_part *np = &f->parts[ri][it->li];
	char tail[FLEET_TAIL_MAX];
	struct sb b;
	size_t alen;

	if (np->gen != f->gen) {
		b = (struct sb){ np->s, np->s + sizeof(np->s) };
		name_limit(&b, f->rs->names[ri], it->li, &it->r->limits[it->li]);
		np->len = b.over ? 0 : b.p - np->s;
		np->hash = fleet_fnv(np->s, np->len, FNV_BASIS);
		np->gen = f->gen;
	}
	if (!np->len)
		return -ENAMETOOLONG;
	/* The tail, in one buffer as wr_fleet_key_name() has it, for the same bound. */
	memcpy(tail, np->s, np->len);
	b = (struct sb){ tail + np->len, tail + sizeof(tail) };
	name_addr(&b, &it->k);
	if (b.over)
		return -ENAMETOOLONG;
	alen = b.p - (tail + np->len);
	it->group = fleet_fnv(tail + np->len, alen, np->hash) % FLEET_GROUPS;
	b = (struct sb){ f->names + f->names_used, f->names + f->names_used + FLEET_NAME_MAX };
	name_whole(&b, f->cfg.name, it->group, tail, np->len + alen);
	if (b.over)
		return -ENAMETOOLONG;
	it->name = f->names + f->names_used;
	it->name_len = b.p - it->name;
	f->names_used += it->name_len + 1;
	return 0;
}

/* The rule and limit a Redis key names, in this host's live set; the key it is here. */
int fleet_key_parse(struct wr_fleet *f, const char *name, struct weir_key *k,
		    const struct weir_rule **rp, __u32 *lip)
{
	char buf[160], *fields[6], *save = NULL, *p, *slash;
	const struct weir_limit *l;
	unsigned long li, params;
	__u32 i;
	int nf;

	if (strlen(name) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, name);
	/* weir, fleet, rule, limit, params: the address (IPv6 has colons) is the rest. */
	for (nf = 0, p = buf; nf < 5; nf++) {
		fields[nf] = strtok_r(nf ? NULL : p, ":", &save);
		if (!fields[nf])
			return -EINVAL;
	}
	fields[5] = save;
	if (!fields[5] || !*fields[5] || strcmp(fields[0], "weir") || fields[1][0] != '{' ||
	    strncmp(fields[1] + 1, f->cfg.name, strlen(f->cfg.name)) ||
	    fields[1][1 + strlen(f->cfg.name)] != '#')
		return -EINVAL;
	li = strtoul(fields[3], &p, 10);
	if (*p || li >= WEIR_MAX_LIMITS)
		return -EINVAL;
	params = strtoul(fields[4], &p, 16);
	if (*p)
		return -EINVAL;
	for (i = 0; i < f->rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (!strncmp(f->rs->names[i], fields[2], WEIR_NAME_LEN))
			break;
	if (i == f->rs->nr_rules || i == WEIR_MAX_RULES || li >= f->rs->rules[i].nr_limits)
		return -ENOENT;
	l = &f->rs->rules[i].limits[li];
	if (!l->fleet || limit_params(l) != params)
		return -ENOENT;
	memset(k, 0, sizeof(*k));
	k->uid = f->rs->rules[i].uid;
	k->limit = li;
	if (strcmp(fields[5], "all")) {
		unsigned long plen;

		slash = strchr(fields[5], '/');
		if (!slash || l->key != WEIR_KEY_SRC)
			return -EINVAL;
		*slash = '\0';
		plen = strtoul(slash + 1, &p, 10);
		if (*p)
			return -EINVAL;
		if (inet_pton(AF_INET, fields[5], k->addr) == 1 && plen == l->plen4)
			k->family = 4;
		else if (inet_pton(AF_INET6, fields[5], k->addr) == 1 && plen == l->plen6)
			k->family = 6;
		else
			return -EINVAL;
		k->plen = plen;
	} else if (l->key != WEIR_KEY_ALL) {
		return -EINVAL;
	}
	*rp = &f->rs->rules[i];
	*lip = li;
	return 0;
}
