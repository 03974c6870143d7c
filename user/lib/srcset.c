// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Source sets of rules (`src feed:NAME`, `src country:DE,NL`, `src
 * asn:64496`): the set's words checked, its place in a rule set, and its
 * prefixes in the data path's wr_srcset4/wr_srcset6 (bpf/maps.h).
 *
 * A rule set names each of its sets once, in weir_ruleset.srcsets[slot],
 * and its rules carry the slot (weir_rule.srcset). A set names at most
 * WEIR_SET_SRCSETS, half the slots: a commit keeps a set the live rules
 * already name in its slot (refilled in place) and puts a new one in a
 * slot the live rules do not use, so a packet judged by the old rules
 * never meets a new set's prefixes. What a set holds comes from the
 * caller's resolver (a feed's list, a geo database's networks: the
 * integrations), so this file knows no feed store and no database.
 *
 * A slot's prefixes are written whole into new inner tries and swapped in
 * with one update each: a packet sees the old set or the new one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"
#include "lib/rules_int.h"

/* A set's kind: the words before the colon. */
static const char *const kinds[] = { "feed:", "country:", "asn:" };

/* The letters a feed's name may have (user/integrations/feedstore.c says the same). */
#define FEED_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
/* Bytes of a feed's name, its NUL included (WR_FEED_NAME_MAX). */
#define FEED_NAME_LEN 32

bool wr_srcset_word(const char *w)
{
	size_t i;

	if (w[0] == '!')
		w++;
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strncmp(w, kinds[i], strlen(kinds[i])))
			return true;
	return false;
}

/* One ASN: 1 to 4294967295, AS before it optional. */
static bool asn_ok(const char *s, size_t n)
{
	char buf[16];
	uint64_t v;

	if (n >= 2 && (s[0] == 'A' || s[0] == 'a') && (s[1] == 'S' || s[1] == 's'))
		s += 2, n -= 2;
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return !parse_u64(buf, 1, UINT32_MAX, &v);
}

int wr_srcset_check(const char *w, char *why, size_t len)
{
	const char *v, *p;
	size_t n;
	int kind;

	if (w[0] == '!')
		w++;
	for (kind = 0; kind < (int)ARRAY_SIZE(kinds); kind++)
		if (!strncmp(w, kinds[kind], strlen(kinds[kind])))
			break;
	if (kind == (int)ARRAY_SIZE(kinds)) {
		snprintf(why, len, "a source set is feed:NAME, country:CC[,CC..] or asn:N[,N..]");
		return -EINVAL;
	}
	if (strlen(w) >= WEIR_SRCSET_LEN) {
		snprintf(why, len, "a source set of at most %d bytes", WEIR_SRCSET_LEN - 1);
		return -EINVAL;
	}
	v = w + strlen(kinds[kind]);
	if (kind == 0) {
		n = strlen(v);
		if (!n || n >= FEED_NAME_LEN || v[0] == '.' || v[0] == '-' ||
		    strspn(v, FEED_NAME_CHARS) != n) {
			snprintf(why, len, "invalid feed name \"%.60s\" (1-%d of A-Z a-z 0-9 _ - .)",
				 v, FEED_NAME_LEN - 1);
			return -EINVAL;
		}
		return 0;
	}
	for (p = v;; p += n + 1) {
		n = strcspn(p, ",");
		if (kind == 1 && (n != 2 || !((p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'z') ||
				  !((p[1] | 0x20) >= 'a' && (p[1] | 0x20) <= 'z'))) {
			snprintf(why, len, "invalid country \"%.*s\": two letters, ISO 3166-1 "
				 "alpha-2 (e.g. DE)", (int)(n < 40 ? n : 40), p);
			return -EINVAL;
		}
		if (kind == 2 && !asn_ok(p, n)) {
			snprintf(why, len, "invalid ASN \"%.*s\": 1 to 4294967295, AS optional",
				 (int)(n < 40 ? n : 40), p);
			return -EINVAL;
		}
		if (!p[n])
			break;
	}
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A checked set word in one spelling, so that one set takes one slot:
 * countries upper case, ASNs without AS and leading zeros, the items
 * sorted and each once ("country:nl,DE,de" is "country:DE,NL").
 */
static void srcset_canon(const char *w, char *out, size_t len)
{
	char buf[WEIR_SRCSET_LEN], *items[WEIR_SRCSET_LEN / 2], *tok, *save = NULL;
	const char *neg = "";
	size_t i, n = 0, off;
	int kind;

	if (w[0] == '!')
		neg = "!", w++;
	for (kind = 0; kind < (int)ARRAY_SIZE(kinds); kind++)
		if (!strncmp(w, kinds[kind], strlen(kinds[kind])))
			break;
	if (kind == 0 || kind == (int)ARRAY_SIZE(kinds)) {
		snprintf(out, len, "%s%s", neg, w);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", w + strlen(kinds[kind]));
	for (tok = strtok_r(buf, ",", &save); tok && n < ARRAY_SIZE(items);
	     tok = strtok_r(NULL, ",", &save)) {
		if (kind == 1) {
			tok[0] &= ~0x20, tok[1] &= ~0x20;	/* ASCII letters: upper case */
		} else {
			if ((tok[0] | 0x20) == 'a')
				tok += 2;
			while (tok[0] == '0' && tok[1])
				tok++;
		}
		items[n++] = tok;
	}
	qsort(items, n, sizeof(items[0]), cmp_item);
	off = (size_t)snprintf(out, len, "%s%s", neg, kinds[kind]);
	for (i = 0; i < n && off < len; i++) {
		if (i && !strcmp(items[i], items[i - 1]))
			continue;
		off += (size_t)snprintf(out + off, len - off, "%s%s",
					off > strlen(neg) + strlen(kinds[kind]) ? "," : "", items[i]);
	}
}

/* ---- the src keyword: a CIDR, or a source set (rules.c's table lists it) ---- */

int kw_src(struct wr_rule_parser *p)
{
	struct weir_rule *r = p->r;
	const char *val = VAL(p);
	struct wr_cidr c;
	char why[160];
	int k;

	/* A source set: its prefixes come at commit (srcset.c); the rule keeps its slot. */
	if (wr_srcset_word(val)) {
		if (wr_srcset_check(val, why, sizeof(why)))
			return perr(p->pe, AT(p), -EINVAL, "src %s: %s", val, why);
		srcset_canon(val, p->srcset, sizeof(p->srcset));
		r->match |= WEIR_M_SRCSET;
		r->srcset = val[0] == '!' ? WEIR_SRCSET_NOT : 0;
		return 1;
	}
	if (parse_cidr(val, &c))
		return perr(p->pe, AT(p), -EINVAL, "invalid CIDR \"%s\" (or a source set: "
			    "feed:NAME, country:CC[,CC..], asn:N[,N..])", val);
	memcpy(r->src_net, c.addr, sizeof(r->src_net));
	for (k = 0; k < 4; k++)
		r->src_mask[k] = c.family == 4 ? (k ? 0 : wr_prefix_word(c.plen, 0))
					       : wr_prefix_word(c.plen, k);
	r->src_plen = c.plen;
	if ((r->match & WEIR_M_FAMILY) && r->family != c.family)
		return perr(p->pe, AT(p), -EINVAL, "src \"%s\" is not of family ipv%d", val,
			    r->family);
	r->family = c.family;
	r->match |= WEIR_M_SRC | WEIR_M_FAMILY;
	return 1;
}

/*
 * src as a source set: the words rs's slot holds, as the rule gave them.
 * The rule set's, not the rule's: wr_rule_print calls it for print_src.
 */
void print_srcset(const struct weir_ruleset *rs, const struct weir_rule *r)
{
	char buf[WEIR_SRCSET_LEN + 1];

	if (!(r->match & WEIR_M_SRCSET))
		return;
	snprintf(buf, sizeof(buf), "%s%s", r->srcset & WEIR_SRCSET_NOT ? "!" : "",
		 rs->srcsets[r->srcset & WEIR_SRCSET_SLOT]);
	print_str("src", " src %s", buf);
}

void print_src(const struct weir_rule *r)
{
	char buf[64];

	if (!(r->match & WEIR_M_SRC))
		return;
	format_cidr(r->family, r->src_net, r->src_plen, buf, sizeof(buf));
	print_str("src", " src %s", buf);
}

/* Is slot s named by a rule of rs? */
static bool slot_named(const struct weir_ruleset *rs, __u32 s)
{
	__u32 i;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if ((rs->rules[i].match & WEIR_M_SRCSET) &&
		    (rs->rules[i].srcset & WEIR_SRCSET_SLOT) == s)
			return true;
	return false;
}

int wr_srcset_count(const struct weir_ruleset *rs)
{
	__u32 s;
	int n = 0;

	for (s = 0; s < WEIR_MAX_SRCSETS; s++)
		n += slot_named(rs, s);
	return n;
}

int wr_srcset_put(struct weir_ruleset *rs, __u32 i, const char *set, char *why, size_t len)
{
	struct weir_rule *r = &rs->rules[i];
	const char *spec = set[0] == '!' ? set + 1 : set;
	__u32 s, free_slot = WEIR_MAX_SRCSETS;

	/* A slot no other rule names is free, whatever it held. */
	r->match &= ~WEIR_M_SRCSET;
	for (s = 0; s < WEIR_MAX_SRCSETS; s++) {
		if (!strcmp(rs->srcsets[s], spec))
			break;
		if (free_slot == WEIR_MAX_SRCSETS && !slot_named(rs, s))
			free_slot = s;
	}
	if (s == WEIR_MAX_SRCSETS)
		s = free_slot;
	if (s == WEIR_MAX_SRCSETS) {
		snprintf(why, len, "too many source sets: a rule set names at most %d",
			 WEIR_SET_SRCSETS);
		return -E2BIG;
	}
	memset(rs->srcsets[s], 0, WEIR_SRCSET_LEN);
	snprintf(rs->srcsets[s], WEIR_SRCSET_LEN, "%s", spec);
	r->match |= WEIR_M_SRCSET;
	r->srcset = s | (set[0] == '!' ? WEIR_SRCSET_NOT : 0);
	if (wr_srcset_count(rs) > WEIR_SET_SRCSETS) {
		snprintf(why, len, "too many source sets: a rule set names at most %d",
			 WEIR_SET_SRCSETS);
		return -E2BIG;
	}
	return 0;
}

/*
 * next's sets into slots beside live's: a set live names keeps its slot,
 * a new one takes a slot live does not name. Rewrites next's srcsets[] and
 * its rules' slots.
 */
static int place(const struct weir_ruleset *live, struct weir_ruleset *next, bool *kept)
{
	char (*old)[WEIR_SRCSET_LEN] = calloc(WEIR_MAX_SRCSETS, WEIR_SRCSET_LEN);
	__u32 map[WEIR_MAX_SRCSETS], s, t, i;
	bool taken[WEIR_MAX_SRCSETS] = {};

	if (!old)
		return -ENOMEM;
	memcpy(old, next->srcsets, sizeof(next->srcsets));
	memset(next->srcsets, 0, sizeof(next->srcsets));
	for (s = 0; s < WEIR_MAX_SRCSETS; s++)
		taken[s] = slot_named(live, s);
	for (s = 0; s < WEIR_MAX_SRCSETS; s++) {
		map[s] = WEIR_MAX_SRCSETS;
		if (!slot_named(next, s))
			continue;
		for (t = 0; t < WEIR_MAX_SRCSETS; t++)
			if (slot_named(live, t) && !strcmp(live->srcsets[t], old[s]) &&
			    !next->srcsets[t][0])
				break;
		if (t < WEIR_MAX_SRCSETS)
			kept[t] = true;
		else
			for (t = 0; t < WEIR_MAX_SRCSETS && taken[t]; t++)
				;
		if (t == WEIR_MAX_SRCSETS) {
			free(old);
			return -ENOSPC;
		}
		taken[t] = true;
		map[s] = t;
		memcpy(next->srcsets[t], old[s], WEIR_SRCSET_LEN);
	}
	for (i = 0; i < next->nr_rules && i < WEIR_MAX_RULES; i++) {
		struct weir_rule *r = &next->rules[i];

		if (r->match & WEIR_M_SRCSET)
			r->srcset = map[r->srcset & WEIR_SRCSET_SLOT] |
				    (r->srcset & WEIR_SRCSET_NOT);
	}
	free(old);
	return 0;
}

/* A new inner trie of family fam holding s's prefixes of that family; -1 in *fd when none. */
static int build(const struct wr_feed_set *s, int fam, int *fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	size_t i, n = 0;
	__u8 one = 1;

	*fd = -1;
	for (i = 0; i < s->n; i++)
		n += s->v[i].family == fam;
	if (!n)
		return 0;
	*fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, fam == 4 ? "wr_srcset4_i" : "wr_srcset6_i",
			     fam == 4 ? sizeof(struct weir_lpm4) : sizeof(struct weir_lpm6),
			     sizeof(__u8), n, &o);
	if (*fd < 0)
		return -errno;
	for (i = 0; i < s->n; i++) {
		struct weir_lpm6 k = { .plen = s->v[i].plen };

		if (s->v[i].family != fam)
			continue;
		/* The v4 trie's key is the first 8 bytes: plen and addr[0]. */
		memcpy(k.addr, s->v[i].addr, sizeof(k.addr));
		if (bpf_map_update_elem(*fd, &k, &one, BPF_ANY)) {
			int err = -errno;

			close(*fd);
			*fd = -1;
			return err;
		}
	}
	return 0;
}

/* Slot slot of outer holds fd, or nothing (fd < 0). */
static int slot_put(int outer, __u32 slot, int fd)
{
	if (fd >= 0)
		return bpf_map_update_elem(outer, &slot, &fd, BPF_ANY) ? -errno : 0;
	if (bpf_map_delete_elem(outer, &slot) && errno != ENOENT)
		return -errno;
	return 0;
}

int wr_srcset_fill(const struct wr_maps *m, __u32 slot, const struct wr_feed_set *s)
{
	int fd4 = -1, fd6 = -1, err;

	if (m->srcset4 < 0 || m->srcset6 < 0)
		return -EOPNOTSUPP;
	if (slot >= WEIR_MAX_SRCSETS)
		return -EINVAL;
	err = build(s, 4, &fd4);
	if (!err)
		err = build(s, 6, &fd6);
	if (!err)
		err = slot_put(m->srcset4, slot, fd4);
	if (!err)
		err = slot_put(m->srcset6, slot, fd6);
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	return err;
}

int wr_srcsets_load(const struct wr_maps *m, struct weir_ruleset *next, wr_srcset_resolve_fn fn,
		    void *ctx, char *why, size_t len)
{
	bool kept[WEIR_MAX_SRCSETS] = {};
	struct weir_ruleset *live;
	__u32 s;
	int err;

	if (!wr_srcset_count(next))
		return 0;
	if (wr_srcset_count(next) > WEIR_SET_SRCSETS) {
		snprintf(why, len, "too many source sets: a rule set names at most %d",
			 WEIR_SET_SRCSETS);
		return -E2BIG;
	}
	live = calloc(1, sizeof(*live));
	if (!live)
		return -ENOMEM;
	err = wr_read_live(m, live);
	if (!err)
		err = place(live, next, kept);
	free(live);
	if (err) {
		snprintf(why, len, "cannot place the source sets: %s", strerror(-err));
		return err;
	}
	for (s = 0; s < WEIR_MAX_SRCSETS; s++) {
		struct wr_feed_set set = { 0 };

		if (!slot_named(next, s))
			continue;
		err = fn(ctx, next->srcsets[s], &set, why, len);
		/*
		 * A set the live rules already have keeps what it holds when it
		 * cannot be read now (a feed gone, the database moved): a change
		 * to other rules does not fail on it. Only a new set must be read.
		 */
		if (err && kept[s]) {
			pr_warn("%s; the set keeps what it held", why);
			err = 0;
			continue;
		}
		if (!err) {
			err = wr_srcset_fill(m, s, &set);
			if (err)
				snprintf(why, len, "src %s: cannot write its set: %s",
					 next->srcsets[s], strerror(-err));
		}
		wr_feed_set_free(&set);
		if (err)
			return err;
	}
	return 0;
}

int wr_srcsets_refill(const struct wr_maps *m, const char *set, wr_srcset_resolve_fn fn,
		      void *ctx, char *why, size_t len)
{
	struct weir_ruleset *live = calloc(1, sizeof(*live));
	int err, n = 0;
	__u32 s;

	if (!live)
		return -ENOMEM;
	err = wr_read_live(m, live);
	for (s = 0; !err && s < WEIR_MAX_SRCSETS; s++) {
		struct wr_feed_set v = { 0 };

		if (!slot_named(live, s) || strcmp(live->srcsets[s], set))
			continue;
		err = fn(ctx, live->srcsets[s], &v, why, len);
		if (!err)
			err = wr_srcset_fill(m, s, &v);
		wr_feed_set_free(&v);
		n++;
	}
	free(live);
	return err ? err : n;
}

void wr_srcsets_release(const struct wr_maps *m, const struct weir_ruleset *live)
{
	__u32 s;

	if (m->srcset4 < 0 || m->srcset6 < 0)
		return;
	for (s = 0; s < WEIR_MAX_SRCSETS; s++) {
		if (slot_named(live, s))
			continue;
		slot_put(m->srcset4, s, -1);
		slot_put(m->srcset6, s, -1);
	}
}

long long wr_srcset_entries(const struct wr_maps *m, __u32 slot, int fam)
{
	struct weir_lpm6 k, next;
	long long n = 0;
	__u32 id;
	int fd;
	void *prev = NULL;

	if (bpf_map_lookup_elem(fam == 4 ? m->srcset4 : m->srcset6, &slot, &id))
		return errno == ENOENT ? 0 : -errno;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	close(fd);
	return n;
}

void wr_srcset_status(const struct wr_maps *m, const struct weir_ruleset *rs)
{
	__u32 s;

	open_array("srcsets");
	print_text("source sets: %d\n", wr_srcset_count(rs));
	for (s = 0; s < WEIR_MAX_SRCSETS; s++) {
		if (!slot_named(rs, s))
			continue;
		open_object(NULL);
		print_str("set", "  src %s:", rs->srcsets[s]);
		print_s64("prefixes4", " %lld IPv4", wr_srcset_entries(m, s, 4));
		print_s64("prefixes6", " and %lld IPv6 prefixes", wr_srcset_entries(m, s, 6));
		print_u64("slot", " (slot %llu)\n", s);
		close_object();
	}
	close_array();
}
