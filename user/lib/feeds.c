// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Blocklist feeds, the data path's side: a feed's text parsed and
 * validated whole (plain CIDR lists, FireHOL netsets, Spamhaus DROP and
 * EDROP in their text and JSON forms), and every feed's entries written as
 * one new generation of the feed maps, swapped in with one write of
 * wr_config.lists (bpf/maps.h, bpf/lists.h on_feed()).
 *
 * IPv4 is flattened: the longest-prefix answer for every /24 painted into
 * a 2-bit state (4 MiB for the whole address space), and a /24 that a
 * longer prefix splits written out as its exceptions in a hash. IPv4
 * lookups then cost one array load whatever the feeds hold. IPv6 goes to
 * an LPM trie. The operator's deny and allow tries (lists.c) are separate
 * maps: a refresh never touches them.
 *
 * Where two feeds list the same prefix with different actions, the stricter
 * wins: deny, then limit-class 3, 2, 1, 0, then allow (a third party's bad
 * opinion of a prefix outranks a good one, as deny always outranked allow;
 * of two classes the one shed first); otherwise the longest prefix
 * decides, as in the operator's lists.
 *
 * A limit-class has no room in the 2-bit /24 state: each /24 a class
 * prefix covers is a split /24 whose class is its wr_feed_host entry
 * (WEIR_FEED_BLOCK_KEY), one hash entry per /24 (a /16 class prefix
 * costs 256 entries).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "lib/libweir.h"

/* The longest line a feed may have (a JSON line of Spamhaus's is ~100 bytes). */
#define FEED_LINE_MAX	4096
/* Keys and values per batch update of the host hash. */
#define HOST_BATCH	8192
/*
 * How long the old generation stays after the flip before its maps go: a
 * packet that read the old bit has long finished its lookup by then (XDP
 * and TC programs run to completion in microseconds).
 */
#define OLD_GEN_GRACE_US	20000
/*
 * build_v4's painting of a /24 split by longer prefixes: apart from every
 * action value (limit-class 0 is 3, WEIR_FA_SPLIT's number), written out
 * as WEIR_FA_SPLIT.
 */
#define BLK_SPLIT	0x80

void wr_feed_set_free(struct wr_feed_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int wr_feed_set_push(struct wr_feed_set *s, const struct wr_cidr *c, int action)
{
	struct wr_feed_entry *e;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;

		if (cap > WR_FEED_MAX_ENTRIES)
			cap = WR_FEED_MAX_ENTRIES;
		if (s->n >= cap)
			return -E2BIG;
		e = realloc(s->v, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->v = e;
		s->cap = cap;
	}
	e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->addr, c->addr, sizeof(e->addr));
	e->family = c->family;
	e->plen = c->plen;
	e->action = action;
	return 0;
}

int wr_feed_set_append(struct wr_feed_set *dst, const struct wr_feed_set *src)
{
	struct wr_feed_entry *v;

	if (dst->n + src->n > WR_FEED_MAX_ENTRIES)
		return -E2BIG;
	if (dst->n + src->n > dst->cap) {
		v = realloc(dst->v, (dst->n + src->n) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		dst->v = v;
		dst->cap = dst->n + src->n;
	}
	if (src->n)
		memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	return 0;
}

/* A Spamhaus JSON line's "cidr" into tok; 1: a line without one (the metadata line). */
static int json_cidr(const char *line, char *tok, size_t len)
{
	struct json_object *o = json_tokener_parse(line), *c;
	int ret = -EINVAL;

	if (!o)
		return -EINVAL;
	if (json_object_get_type(o) != json_type_object) {
		ret = -EINVAL;
	} else if (!json_object_object_get_ex(o, "cidr", &c)) {
		ret = 1;
	} else if (json_object_get_type(c) == json_type_string &&
		   (size_t)json_object_get_string_len(c) < len) {
		snprintf(tok, len, "%s", json_object_get_string(c));
		ret = 0;
	}
	json_object_put(o);
	return ret;
}

/*
 * One line: a prefix or address, alone, or followed by a comment (# or ;).
 * 0 with *c set, 1 for a line with nothing on it, or -EINVAL with err.
 */
static int parse_line(char *line, struct wr_cidr *c, char *err, size_t errlen)
{
	char tok[FEED_LINE_MAX], *p = line, *end = NULL;
	size_t n;
	int r;

	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (!*p || *p == '#' || *p == ';')
		return 1;
	if (*p == '{') {
		r = json_cidr(p, tok, sizeof(tok));
		if (r < 0) {
			snprintf(err, errlen, "a JSON line without a string \"cidr\"");
			return -EINVAL;
		}
		if (r == 1)
			return 1;
	} else {
		n = strcspn(p, " \t\r#;");
		memcpy(tok, p, n);
		tok[n] = '\0';
		end = p + n;
		while (*end == ' ' || *end == '\t' || *end == '\r')
			end++;
	}
	if (parse_cidr(tok, c)) {
		snprintf(err, errlen, "'%.60s' is not an address or a prefix with its host bits "
			 "clear", tok);
		return -EINVAL;
	}
	if (*p != '{' && *end && *end != '#' && *end != ';') {
		snprintf(err, errlen, "'%.40s' after the prefix (one prefix a line, then an "
			 "optional # or ; comment)", end);
		return -EINVAL;
	}
	if (!c->plen) {
		snprintf(err, errlen, "%.60s would list every %s source", tok,
			 c->family == 4 ? "IPv4" : "IPv6");
		return -EINVAL;
	}
	return 0;
}

int wr_feed_parse(const char *buf, size_t len, int action, struct wr_feed_set *out, char *err,
		  size_t errlen)
{
	struct wr_feed_set s = { 0 };
	char line[FEED_LINE_MAX], why[200];
	size_t off = 0, lineno = 0;
	int r = 0;

	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "a NUL byte at offset %zu: not a text list",
			 (size_t)((const char *)memchr(buf, '\0', len) - buf));
		return -EINVAL;
	}
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - buf - off) : len - off;
		struct wr_cidr c;

		lineno++;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "line %zu: longer than %d bytes", lineno,
				 FEED_LINE_MAX - 1);
			r = -EINVAL;
			break;
		}
		memcpy(line, buf + off, n);
		line[n] = '\0';
		off += n + 1;
		r = parse_line(line, &c, why, sizeof(why));
		if (r < 0) {
			snprintf(err, errlen, "line %zu: %s", lineno, why);
			break;
		}
		if (r == 1) {
			r = 0;
			continue;
		}
		r = wr_feed_set_push(&s, &c, action);
		if (r) {
			snprintf(err, errlen, "line %zu: %s", lineno,
				 r == -E2BIG ? "more entries than a feed may hold" : strerror(-r));
			break;
		}
	}
	if (r) {
		wr_feed_set_free(&s);
		return r;
	}
	*out = s;
	return 0;
}

/*
 * Sort: family, then length, then address, then action, the stricter last:
 * allow, limit-class 0 .. 3, deny. Only the last of a prefix's run is written.
 */
static int action_rank(int a)
{
	if (a == WEIR_FA_DENY)
		return 1 + WEIR_MAX_CLASS + 1;
	if ((a & 3) == WEIR_FA_CLASS)
		return 1 + (a >> WEIR_FA_CLASS_SHIFT);
	return 0;
}

int wr_feed_class_parse(const char *s)
{
	static const char word[] = "limit-class ";

	/* One digit, nothing after it: "limit-class 4", "limit-class 1x" are refused. */
	if (strncmp(s, word, sizeof(word) - 1))
		return -EINVAL;
	s += sizeof(word) - 1;
	if (s[0] < '0' || s[0] > '0' + WEIR_MAX_CLASS || s[1])
		return -EINVAL;
	return WEIR_FA_CLASS_OF(s[0] - '0');
}

const char *wr_feed_class_name(int action)
{
	static const char *const names[WEIR_MAX_CLASS + 1] = {
		"limit-class 0", "limit-class 1", "limit-class 2", "limit-class 3",
	};

	if (action < 0 || (action & 3) != WEIR_FA_CLASS || action > WEIR_FA_MASK)
		return NULL;
	return names[action >> WEIR_FA_CLASS_SHIFT];
}

/* A /24 state of the painting in build_v4 that holds a limit-class (not a split mark). */
static bool blk_classed(__u8 v)
{
	return v != BLK_SPLIT && (v & 3) == WEIR_FA_CLASS;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct wr_feed_entry *x = a, *y = b;
	int i;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->plen != y->plen)
		return x->plen - y->plen;
	for (i = 0; i < 4; i++)
		if (x->addr[i] != y->addr[i])
			return ntohl(x->addr[i]) < ntohl(y->addr[i]) ? -1 : 1;
	return action_rank(x->action) - action_rank(y->action);
}

/* The same prefix as the next entry: only the last of a run is written. */
static bool same_prefix(const struct wr_feed_entry *x, const struct wr_feed_entry *y)
{
	return x->family == y->family && x->plen == y->plen &&
	       !memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* Longer-than-/24 IPv4 entries, by /24, then length: each /24's painting order. */
static int cmp_split(const void *a, const void *b)
{
	const struct wr_feed_entry *x = a, *y = b;
	__u32 bx = ntohl(x->addr[0]) >> 8, by = ntohl(y->addr[0]) >> 8;

	if (bx != by)
		return bx < by ? -1 : 1;
	return cmp_entry(a, b);
}

struct host_batch {
	int fd;
	__u64 keys[HOST_BATCH];
	__u32 vals[HOST_BATCH];
	__u32 n;
	__u64 total;
};

static int host_flush(struct host_batch *h)
{
	__u32 n = h->n;

	h->n = 0;
	return wr_map_put_many(h->fd, h->keys, sizeof(*h->keys), h->vals, sizeof(*h->vals), n,
			       NULL);
}

static int host_put(struct host_batch *h, __u64 key, __u32 val)
{
	h->keys[h->n] = key;
	h->vals[h->n] = val;
	h->total++;
	return ++h->n == HOST_BATCH ? host_flush(h) : 0;
}

/*
 * The split /24s of v4[first..n) (sorted by cmp_split): each one's 256
 * addresses painted over its own state in blk, shortest prefix first, and
 * what differs from that state written to h as exceptions, with the
 * state itself under the /24's key when it lists anything. With h NULL,
 * only counted into *count. Marks each /24 BLK_SPLIT in blk on the
 * writing pass.
 */
static int split_pass(const struct wr_feed_entry *v4, size_t first, size_t n, __u8 *blk,
		      __u8 *cell, struct host_batch *h, size_t *count)
{
	size_t i, j;
	int err = 0;

	if (count)
		*count = 0;
	for (i = first; !err && i < n; i = j) {
		__u32 b = ntohl(v4[i].addr[0]) >> 8, k;
		__u8 def = blk[b];

		memset(cell, def, 256);
		for (j = i; j < n && ntohl(v4[j].addr[0]) >> 8 == b; j++) {
			if (j + 1 < n && same_prefix(&v4[j], &v4[j + 1]))
				continue;
			memset(cell + (ntohl(v4[j].addr[0]) & 0xff), v4[j].action,
			       1u << (32 - v4[j].plen));
		}
		if (!h) {
			*count += !!def;
			for (k = 0; k < 256; k++)
				*count += cell[k] != def;
			continue;
		}
		if (def)
			err = host_put(h, WEIR_FEED_BLOCK_KEY | ((__u64)b << 8), def);
		for (k = 0; !err && k < 256; k++)
			if (cell[k] != def)
				err = host_put(h, ((__u64)b << 8) | k, cell[k]);
		blk[b] = BLK_SPLIT;
	}
	return err ? err : h ? host_flush(h) : 0;
}

/*
 * The IPv4 maps of a generation from v4[0..n) (sorted by cmp_entry):
 * *blk_fd the /24 states, *host_fd the split /24s' exceptions (-1: none).
 */
static int build_v4(struct wr_feed_entry *v4, size_t n, int *blk_fd, int *host_fd,
		    struct wr_feed_stats *st)
{
	LIBBPF_OPTS(bpf_map_create_opts, ao, .map_flags = BPF_F_MMAPABLE);
	size_t i, j, nsplit = 0, nhost = 0, first_split = n;
	__u8 *blk = NULL, cell[256];
	struct host_batch *h = NULL;
	__u64 *words = MAP_FAILED;
	size_t nclass = 0;
	__u32 bn;
	int err = 0;

	*blk_fd = *host_fd = -1;
	blk = calloc(WEIR_FEED_BLOCKS, 1);
	if (!blk)
		return -ENOMEM;
	/* /24 and shorter, shortest first: a longer prefix paints over a shorter one. */
	for (i = 0; i < n; i++) {
		__u32 a, cnt, b;

		if (v4[i].plen > 24) {
			first_split = i;
			break;
		}
		if (i + 1 < n && same_prefix(&v4[i], &v4[i + 1]))
			continue;
		a = ntohl(v4[i].addr[0]) >> 8;
		cnt = 1u << (24 - v4[i].plen);
		for (b = 0; b < cnt; b++)
			blk[a + b] = v4[i].action;
	}
	/* Longer prefixes split their /24: grouped by /24, shortest first in each. */
	nsplit = n - first_split;
	/* /24s of a limit-class: each one's class under its /24 key (split or not). */
	for (i = 0; i < first_split; i++)
		if ((v4[i].action & 3) == WEIR_FA_CLASS)
			break;
	for (bn = 0; i < first_split && bn < WEIR_FEED_BLOCKS; bn++)
		nclass += blk_classed(blk[bn]);
	if (nsplit || nclass) {
		h = calloc(1, sizeof(*h));
		if (!h) {
			err = -ENOMEM;
			goto out;
		}
		h->fd = -1;
	}
	if (nsplit) {
		qsort(v4 + first_split, nsplit, sizeof(*v4), cmp_split);
		/* Counted first, written second: the hash is sized exactly. */
		split_pass(v4, first_split, n, blk, cell, NULL, &nhost);
	}
	if (h) {
		/*
		 * A classed /24 that is split too is counted twice (its /24 key
		 * in nhost and in nclass): a few spare entries, not a miss.
		 */
		h->fd = bpf_map_create(BPF_MAP_TYPE_HASH, "wr_feed_host_i", sizeof(__u64),
				       sizeof(__u32), nhost + nclass ? nhost + nclass : 1, NULL);
		if (h->fd < 0) {
			err = -errno;
			goto out;
		}
	}
	if (nsplit) {
		err = split_pass(v4, first_split, n, blk, cell, h, NULL);
		st->split_blocks = 0;
		for (i = first_split; i < n; i++)
			if (i == first_split ||
			    ntohl(v4[i].addr[0]) >> 8 != ntohl(v4[i - 1].addr[0]) >> 8)
				st->split_blocks++;
		if (err)
			goto out;
	}
	/* The classed /24s no longer prefix split: their state alone, under the /24 key. */
	for (bn = 0; nclass && !err && bn < WEIR_FEED_BLOCKS; bn++) {
		if (!blk_classed(blk[bn]))
			continue;
		err = host_put(h, WEIR_FEED_BLOCK_KEY | ((__u64)bn << 8), blk[bn]);
		blk[bn] = BLK_SPLIT;
	}
	if (!err && nclass)
		err = host_flush(h);
	if (err)
		goto out;
	if (h)
		st->host_entries = h->total;
	*blk_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "wr_feed_blk_i", sizeof(__u32), sizeof(__u64),
				 WEIR_FEED_WORDS, &ao);
	if (*blk_fd < 0) {
		err = -errno;
		goto out;
	}
	words = mmap(NULL, WEIR_FEED_WORDS * sizeof(__u64), PROT_READ | PROT_WRITE, MAP_SHARED,
		     *blk_fd, 0);
	if (words == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < WEIR_FEED_WORDS; i++) {
		__u64 w = 0;

		for (j = 0; j < 32; j++)
			w |= (__u64)(blk[i * 32 + j] == BLK_SPLIT ? WEIR_FA_SPLIT : blk[i * 32 + j])
			     << (j * 2);
		words[i] = w;
	}
	munmap(words, WEIR_FEED_WORDS * sizeof(__u64));
out:
	if (h) {
		if (!err)
			*host_fd = h->fd;
		else if (h->fd >= 0)
			close(h->fd);
	}
	if (err && *blk_fd >= 0) {
		close(*blk_fd);
		*blk_fd = -1;
	}
	free(h);
	free(blk);
	return err;
}

/* The IPv6 trie of a generation from v6[0..n) (sorted by cmp_entry). */
static int build_v6(const struct wr_feed_entry *v6, size_t n, int *fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	size_t i;

	*fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "wr_feed6_i", sizeof(struct weir_lpm6),
			     sizeof(__u32), n, &o);
	if (*fd < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		struct weir_lpm6 k = { .plen = v6[i].plen };
		__u32 val = v6[i].action;

		/* Equal prefixes: the last (the stricter, when they differ) is written last. */
		memcpy(k.addr, v6[i].addr, sizeof(k.addr));
		if (bpf_map_update_elem(*fd, &k, &val, BPF_ANY)) {
			int err = -errno;

			close(*fd);
			*fd = -1;
			return err;
		}
	}
	return 0;
}

/* Slot slot of outer holds fd, or nothing (fd < 0). */
static int slot_set(int outer, __u32 slot, int fd)
{
	if (fd >= 0)
		return bpf_map_update_elem(outer, &slot, &fd, BPF_ANY) ? -errno : 0;
	if (bpf_map_delete_elem(outer, &slot) && errno != ENOENT)
		return -errno;
	return 0;
}

int wr_feed_apply(const struct wr_maps *m, struct wr_feed_set *all, struct wr_feed_stats *st)
{
	int blk = -1, host = -1, trie6 = -1, err;
	size_t n4 = 0, i;
	struct weir_config cfg;
	__u32 gen, old;

	memset(st, 0, sizeof(*st));
	if (m->feed_blk < 0 || m->feed_host < 0 || m->feed6 < 0)
		return -EOPNOTSUPP;
	if (all->n)
		qsort(all->v, all->n, sizeof(*all->v), cmp_entry);
	while (n4 < all->n && all->v[n4].family == 4)
		n4++;
	for (i = 0; i < all->n; i++) {
		if (i + 1 < all->n && same_prefix(&all->v[i], &all->v[i + 1]))
			continue;
		if (all->v[i].family == 4)
			st->prefixes4++;
		else
			st->prefixes6++;
	}
	err = wr_config_read(m, &cfg);
	if (err)
		return err;
	old = cfg.lists & WEIR_L_FEED_GEN ? 1 : 0;
	gen = !old;
	if (n4)
		err = build_v4(all->v, n4, &blk, &host, st);
	if (!err && all->n > n4)
		err = build_v6(all->v + n4, all->n - n4, &trie6);
	if (!err)
		err = slot_set(m->feed_blk, gen, blk);
	if (!err)
		err = slot_set(m->feed_host, gen, host);
	if (!err)
		err = slot_set(m->feed6, gen, trie6);
	if (!err) {
		cfg.lists &= ~WEIR_L_FEEDS;
		if (n4)
			cfg.lists |= WEIR_L_FEED4;
		if (all->n > n4)
			cfg.lists |= WEIR_L_FEED6;
		if (gen)
			cfg.lists |= WEIR_L_FEED_GEN;
		err = wr_config_write(m, &cfg);
	}
	if (!err) {
		/* The flip is done; the old generation goes once no packet can be reading it. */
		usleep(OLD_GEN_GRACE_US);
		slot_set(m->feed_blk, old, -1);
		slot_set(m->feed_host, old, -1);
		slot_set(m->feed6, old, -1);
	} else {
		slot_set(m->feed_blk, gen, -1);
		slot_set(m->feed_host, gen, -1);
		slot_set(m->feed6, gen, -1);
	}
	if (blk >= 0)
		close(blk);
	if (host >= 0)
		close(host);
	if (trie6 >= 0)
		close(trie6);
	return err;
}

int wr_feed_lookup(const struct wr_maps *m, const struct wr_cidr *addr)
{
	struct weir_config cfg;
	__u32 gen, inner_id, v;
	int outer, fd, err;

	err = wr_config_read(m, &cfg);
	if (err)
		return err;
	gen = cfg.lists & WEIR_L_FEED_GEN ? 1 : 0;
	if (!(cfg.lists & (addr->family == 4 ? WEIR_L_FEED4 : WEIR_L_FEED6)))
		return WEIR_FA_NONE;
	outer = addr->family == 4 ? m->feed_blk : m->feed6;
	if (bpf_map_lookup_elem(outer, &gen, &inner_id))
		return errno == ENOENT ? WEIR_FA_NONE : -errno;
	fd = bpf_map_get_fd_by_id(inner_id);
	if (fd < 0)
		return -errno;
	if (addr->family == 6) {
		struct weir_lpm6 k = { .plen = 128 };

		memcpy(k.addr, addr->addr, sizeof(k.addr));
		err = bpf_map_lookup_elem(fd, &k, &v) ? (errno == ENOENT ? WEIR_FA_NONE : -errno)
						      : (int)(v & WEIR_FA_MASK);
	} else {
		__u32 b = ntohl(addr->addr[0]) >> 8, idx = b / 32;
		__u64 w;

		err = bpf_map_lookup_elem(fd, &idx, &w) ? -errno : (int)((w >> ((b % 32) * 2)) & 3);
		if (err == WEIR_FA_SPLIT) {
			__u64 k = ntohl(addr->addr[0]);

			close(fd);
			if (bpf_map_lookup_elem(m->feed_host, &gen, &inner_id))
				return -errno;
			fd = bpf_map_get_fd_by_id(inner_id);
			if (fd < 0)
				return -errno;
			if (bpf_map_lookup_elem(fd, &k, &v)) {
				k = WEIR_FEED_BLOCK_KEY | ((__u64)b << 8);
				if (bpf_map_lookup_elem(fd, &k, &v))
					v = WEIR_FA_NONE;
			}
			err = v & WEIR_FA_MASK;
		}
	}
	close(fd);
	return err;
}
