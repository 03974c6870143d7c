// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s samples and class estimates (auto/sampler.h says what is
 * estimated and why). The ring holds the last samples with the two class
 * keys of each; the classes sit in an open-addressing table of
 * WR_AUTO_CLASSES_MAX (linear probing, never deleted: a class once seen
 * keeps its monotonic estimate, as a counter would).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto/sampler.h"

/*
 * How far before the window a backwards walk of the ring goes on: the
 * ring buffer orders records by their reservation, and CPUs take their
 * timestamps a little before it, so a sample may be that much older than
 * the one before it.
 */
#define DISORDER_NS	(10 * 1000000ULL)
/* The table's slots: twice the classes, so probes stay short. */
#define TABLE_SLOTS	(2 * WR_AUTO_CLASSES_MAX)

struct sample {
	uint64_t ts;
	uint64_t keys[2];	/* port class, destination class */
	uint32_t wire_len;
	struct wr_fp_pkt p;
};

struct cls {
	uint64_t key;		/* 0: a free slot */
	char name[WR_AUTO_NAME_LEN];
	double pkts, bytes;	/* the estimate, fractional until handed out */
	/* The current window's samples and their bytes (a reading's scratch). */
	uint32_t n;
	uint64_t nbytes;
	uint32_t epoch;		/* the reading n and nbytes belong to */
	bool fresh;		/* made since the last reading */
};

struct wr_sampler {
	struct sample *ring;
	size_t cap, head;	/* next slot; cap a power of two */
	uint64_t added, unclassed;
	uint64_t window_ns;
	struct cls *tab;
	uint32_t nr;
	uint32_t epoch;
	bool have_ref;
	uint64_t ref_pkts, ref_bytes, ref_ns;
};

static uint64_t fnv1a(const uint8_t *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a's offset basis */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;	/* FNV-1a's 64-bit prime */
	return h;
}

uint64_t wr_auto_port_key(const struct wr_fp_pkt *p)
{
	return WR_AUTO_KEY_PORT | (uint64_t)p->proto << 16 |
	       ((p->flags & WR_FP_PORTS) ? p->dport : 0);
}

uint64_t wr_auto_dst_key(const struct wr_fp_pkt *p)
{
	uint32_t a;

	if (p->family == 4) {
		memcpy(&a, p->daddr + 12, 4);
		return WR_AUTO_KEY_DST | ntohl(a);
	}
	/* Bit 61 set: never an IPv4 address's key. */
	return WR_AUTO_KEY_DST | 1ULL << 61 | (fnv1a(p->daddr, 16) >> 3 & ((1ULL << 61) - 1));
}

void wr_auto_key_name(uint64_t key, const struct wr_fp_pkt *p, char *buf, size_t len)
{
	static const char *const names[256] = {
		[1] = "icmp", [6] = "tcp", [17] = "udp", [58] = "icmpv6", [47] = "gre",
		[50] = "esp", [132] = "sctp",
	};
	const char *proto = names[p->proto];

	if ((key & WR_AUTO_KEY_KIND) == WR_AUTO_KEY_DST) {
		if (!inet_ntop(p->family == 4 ? AF_INET : AF_INET6,
			       p->family == 4 ? p->daddr + 12 : p->daddr, buf, (socklen_t)len))
			snprintf(buf, len, "?");
		return;
	}
	if (!proto)
		snprintf(buf, len, "proto-%u", p->proto);
	else if (p->flags & WR_FP_PORTS)
		snprintf(buf, len, "%s/%u", proto, p->dport);
	else
		snprintf(buf, len, "%s", proto);
}

int wr_sampler_new(size_t ring, uint64_t window_ns, struct wr_sampler **out)
{
	struct wr_sampler *s;

	*out = NULL;
	if (ring < 64 || ring > (1U << 20) || (ring & (ring - 1)) || window_ns < 1000000ULL ||
	    window_ns > 60ULL * 1000000000ULL)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ring = calloc(ring, sizeof(*s->ring));
	s->tab = calloc(TABLE_SLOTS, sizeof(*s->tab));
	if (!s->ring || !s->tab) {
		wr_sampler_free(s);
		return -ENOMEM;
	}
	s->cap = ring;
	s->window_ns = window_ns;
	*out = s;
	return 0;
}

void wr_sampler_free(struct wr_sampler *s)
{
	if (!s)
		return;
	free(s->ring);
	free(s->tab);
	free(s);
}

/* key's class, made (named after p) if there is room; NULL if not. */
static struct cls *class_of(struct wr_sampler *s, uint64_t key, const struct wr_fp_pkt *p)
{
	size_t i = (size_t)(fnv1a((const uint8_t *)&key, sizeof(key)) % TABLE_SLOTS), n;

	for (n = 0; n < TABLE_SLOTS; n++, i = (i + 1) % TABLE_SLOTS) {
		struct cls *c = &s->tab[i];

		if (c->key == key)
			return c;
		if (c->key)
			continue;
		if (!p || s->nr >= WR_AUTO_CLASSES_MAX)
			return NULL;
		c->key = key;
		c->fresh = true;
		wr_auto_key_name(key, p, c->name, sizeof(c->name));
		s->nr++;
		return c;
	}
	return NULL;
}

void wr_sampler_add(struct wr_sampler *s, uint64_t ts_ns, uint32_t wire_len,
		    const struct wr_fp_pkt *p)
{
	struct sample *x = &s->ring[s->head & (s->cap - 1)];
	int k;

	x->ts = ts_ns;
	x->wire_len = wire_len;
	x->p = *p;
	x->keys[0] = wr_auto_port_key(p);
	x->keys[1] = wr_auto_dst_key(p);
	/* Its classes are made now, so a reading shares among them. */
	for (k = 0; k < 2; k++)
		if (!class_of(s, x->keys[k], p)) {
			x->keys[k] = 0;
			s->unclassed++;
		}
	s->head++;
	s->added++;
}

uint64_t wr_sampler_added(const struct wr_sampler *s)
{
	return s->added;
}

uint64_t wr_sampler_unclassed(const struct wr_sampler *s)
{
	return s->unclassed;
}

/* The samples' slots from the newest back, while they may be in [from, ...). */
#define FOR_RECENT(s, x, i, from)                                                           \
	for (i = 0; i < (s)->cap && i < (s)->head &&                                         \
		    ((x) = &(s)->ring[((s)->head - 1 - i) & ((s)->cap - 1)],                \
		     (x)->ts + DISORDER_NS >= (from));                                       \
	     i++)

/*
 * The samples judged in (from, to], per class (a new epoch's counts): how
 * many in all, and their bytes in *ball (*nall the same count).
 */
static uint64_t count(struct wr_sampler *s, uint64_t from, uint64_t to, uint64_t *nall,
		      uint64_t *ball)
{
	struct sample *x;
	size_t i;
	int k;

	s->epoch++;
	*nall = *ball = 0;
	FOR_RECENT(s, x, i, from) {
		if (x->ts <= from || x->ts > to)
			continue;
		(*nall)++;
		*ball += x->wire_len;
		for (k = 0; k < 2; k++) {
			struct cls *c = x->keys[k] ? class_of(s, x->keys[k], NULL) : NULL;

			if (!c)
				continue;
			if (c->epoch != s->epoch) {
				c->epoch = s->epoch;
				c->n = 0;
				c->nbytes = 0;
			}
			c->n++;
			c->nbytes += x->wire_len;
		}
	}
	return *nall;
}

int wr_sampler_read(struct wr_sampler *s, uint64_t total_pkts, uint64_t total_bytes,
		    uint64_t now_ns, wr_sampler_fn fn, void *ctx)
{
	uint64_t from = now_ns > s->window_ns ? now_ns - s->window_ns : 0, nall = 0, ball = 0;
	uint64_t prev_ns = s->ref_ns;
	bool had_ref;
	double dp, db;
	size_t i;

	if (s->have_ref && now_ns < s->ref_ns)
		return -EINVAL;
	had_ref = s->have_ref;
	if (!s->have_ref || total_pkts < s->ref_pkts || total_bytes < s->ref_bytes) {
		/* A first reading, or counters that went back: a new reference only. */
		s->have_ref = true;
		dp = db = 0;
	} else {
		dp = (double)(total_pkts - s->ref_pkts);
		db = (double)(total_bytes - s->ref_bytes);
	}
	s->ref_pkts = total_pkts;
	s->ref_bytes = total_bytes;
	s->ref_ns = now_ns;

	/*
	 * The interval's samples per class, else the window's: a new epoch
	 * clears every class's count at once.
	 */
	/*
	 * A class made since the last reading had nothing then: said so at
	 * that reading's time, before any class is given now_ns (a reader's
	 * time runs forward), its first interval is a rate.
	 */
	for (i = 0; i < TABLE_SLOTS; i++) {
		struct cls *c = &s->tab[i];

		if (c->key && c->fresh && fn && had_ref)
			fn(ctx, c->key, c->name, 0, 0, prev_ns);
		c->fresh = false;
	}
	if (count(s, prev_ns, now_ns, &nall, &ball) < WR_SAMPLER_MIN_SHARE)
		count(s, from, now_ns, &nall, &ball);
	for (i = 0; i < TABLE_SLOTS; i++) {
		struct cls *c = &s->tab[i];

		if (!c->key)
			continue;
		if (c->epoch == s->epoch && nall) {
			c->pkts += dp * c->n / nall;
			c->bytes += ball ? db * (double)c->nbytes / (double)ball : 0;
		}
		if (fn)
			fn(ctx, c->key, c->name, (uint64_t)c->pkts, (uint64_t)c->bytes, now_ns);
	}
	return 0;
}

size_t wr_sampler_take(const struct wr_sampler *s, uint64_t key, uint64_t from_ns,
		       uint64_t to_ns, int which, struct wr_fp_pkt *out, size_t max)
{
	size_t i, n = 0, j;
	struct sample *x;

	if (!max)
		return 0;
	/* Newest first into out's end, then moved to its start: the newest max, oldest first. */
	FOR_RECENT(s, x, i, from_ns) {
		if (x->ts < from_ns || x->ts >= to_ns)
			continue;
		if (key && x->keys[0] != key && x->keys[1] != key)
			continue;
		if (which == WR_TAKE_PASSED && (x->p.flags & WR_FP_DROPPED))
			continue;
		out[max - 1 - n] = x->p;
		if (++n == max)
			break;
	}
	if (n < max)
		for (j = 0; j < n; j++)
			out[j] = out[max - n + j];
	return n;
}
