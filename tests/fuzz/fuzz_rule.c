// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: wr_rule_parse(), the parser behind `weir rule add`
 * and every rule of the config file. The input is split into words at
 * spaces, newlines and NULs (argv[0] is NAME). A rule it accepts must be
 * one the data path can run (every limit with a usable interval and
 * tolerance, masks matching prefix lengths, a source network without host
 * bits), and what `rule list` prints for it must parse back to the very
 * same struct weir_rule.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/libweir.h"
#include "weir_limiter.h"

struct wr_opts opts = { .root = "/nonexistent" };

#define MAX_WORDS 64

#define FAIL(...)                                             \
	do {                                                  \
		fprintf(stderr, "fuzz_rule: " __VA_ARGS__);   \
		fputc('\n', stderr);                          \
		abort();                                      \
	} while (0)

static int split(char *s, size_t n, char **w)
{
	int argc = 0;
	size_t i = 0;

	while (i < n && argc < MAX_WORDS) {
		while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\0'))
			s[i++] = '\0';
		if (i == n)
			break;
		w[argc++] = s + i;
		while (i < n && s[i] != ' ' && s[i] != '\n' && s[i] != '\0')
			i++;
		if (i < n)
			s[i++] = '\0';
	}
	return argc;
}

static void check_rule(const struct weir_rule *r, const char *name)
{
	__u32 w, li, m;

	if (!name[0] || strlen(name) >= WEIR_NAME_LEN)
		FAIL("rule name \"%s\"", name);
	/* Only a tcp-state rule may have no limit (a preset's has its default one). */
	if ((r->nr_limits < 1 && !(r->flags & WEIR_RF_TCP_STATE)) ||
	    r->nr_limits > WEIR_MAX_LIMITS)
		FAIL("%u limits", r->nr_limits);
	if ((r->flags & WEIR_RF_TCP_STATE) && (!(r->match & WEIR_M_PROTO) || r->proto != 6))
		FAIL("tcp-state on proto %u", r->proto);
	if ((r->flags & WEIR_RF_TCP_AUTO) && !(r->flags & WEIR_RF_TCP_STATE))
		FAIL("tcp-state auto without tcp-state");
	if (r->action != WEIR_ACT_DROP && r->action != WEIR_ACT_DRYRUN)
		FAIL("action %u", r->action);
	if (r->class > WEIR_MAX_CLASS)
		FAIL("class %u", r->class);
	if ((r->match & WEIR_M_DPORT) && r->dport_lo > r->dport_hi)
		FAIL("dport %u-%u", r->dport_lo, r->dport_hi);
	if ((r->match & WEIR_M_TCPFLAGS) && ((r->tcp_value & r->tcp_mask) != r->tcp_value ||
					      !r->tcp_mask))
		FAIL("tcp-flags %#x/%#x", r->tcp_value, r->tcp_mask);
	if ((r->match & (WEIR_M_SRC | WEIR_M_FAMILY)) && r->family != 4 && r->family != 6)
		FAIL("family %u", r->family);
	if (r->match & WEIR_M_SRC) {
		if (!(r->match & WEIR_M_FAMILY) || r->src_plen > (r->family == 4 ? 32 : 128))
			FAIL("src /%u without its family", r->src_plen);
		for (w = 0; w < 4; w++) {
			m = r->family == 4 ? (w ? 0 : wr_prefix_word(r->src_plen, 0))
					   : wr_prefix_word(r->src_plen, w);
			if (r->src_mask[w] != m || (r->src_net[w] & ~m))
				FAIL("src word %u: net %08x mask %08x, want mask %08x", w,
				     r->src_net[w], r->src_mask[w], m);
		}
	}
	for (li = 0; li < r->nr_limits; li++) {
		const struct weir_limit *l = &r->limits[li];

		if (l->plen4 > 32 || l->plen6 > 128 || l->mask4 != wr_prefix_word(l->plen4, 0))
			FAIL("limit %u: key /%u /%u mask4 %08x", li, l->plen4, l->plen6, l->mask4);
		for (w = 0; w < 4; w++)
			if (l->mask6[w] != wr_prefix_word(l->plen6, w))
				FAIL("limit %u: mask6 word %u", li, w);

		if (l->algo > WEIR_ALGO_CONNS || l->key > WEIR_KEY_FLOW ||
		    l->cost > WEIR_COST_BYTE)
			FAIL("limit %u: algo %u key %u cost %u", li, l->algo, l->key, l->cost);
		/* A flow is the whole IPv4 source, or the IPv6 /64, and its port. */
		if (l->key == WEIR_KEY_FLOW && (l->plen4 != 32 || l->plen6 != 64))
			FAIL("limit %u: flow key /%u /%u", li, l->plen4, l->plen6);
		/* Connection caps and fleet limits key by source or rule only. */
		if ((l->algo == WEIR_ALGO_CONNS || l->fleet) &&
		    (l->key == WEIR_KEY_DST || l->key == WEIR_KEY_FLOW))
			FAIL("limit %u: %s keyed by kind %u", li,
			     l->algo == WEIR_ALGO_CONNS ? "conns" : "fleet limit", l->key);
		if (l->algo == WEIR_ALGO_CONNS) {
			if (!l->rate)
				FAIL("limit %u: conns 0", li);
			continue;
		}
		if (!l->rate || !l->burst || !l->interval_fp || !l->tolerance)
			FAIL("limit %u: rate %llu burst %llu interval %llu tolerance %llu", li,
			     (unsigned long long)l->rate, (unsigned long long)l->burst,
			     (unsigned long long)l->interval_fp, (unsigned long long)l->tolerance);
		/* the tolerance holds the burst, to within the rounding of one unit */
		if (l->tolerance < wr_gcra_inc(l->interval_fp, 1))
			FAIL("limit %u: tolerance %llu below one unit", li,
			     (unsigned long long)l->tolerance);
	}
}

/* What `weir rule list` prints for r, as text. */
static char *print_rule(const struct weir_rule *r, const char *name, const char *srcset)
{
	static struct weir_ruleset rs;
	FILE *saved = stdout, *mem;
	char *buf = NULL, why[200];
	size_t len = 0;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = 1;
	rs.rules[0] = *r;
	snprintf(rs.names[0], WEIR_NAME_LEN, "%s", name);
	/* A source set in the rule set's slot, as `rule add` puts it there. */
	if (srcset[0] && wr_srcset_put(&rs, 0, srcset, why, sizeof(why)))
		FAIL("source set \"%s\" not placed: %s", srcset, why);
	mem = open_memstream(&buf, &len);
	if (!mem)
		abort();
	stdout = mem;
	wr_rule_print(&rs, 0);
	fclose(mem);
	stdout = saved;
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char *s, *text, *w[MAX_WORDS], *w2[MAX_WORDS], name[WEIR_NAME_LEN] = "";
	char name2[WEIR_NAME_LEN] = "", set[WEIR_SRCSET_LEN], set2[WEIR_SRCSET_LEN];
	struct weir_rule r, r2;
	struct wr_perr pe;
	int argc, argc2, err;

	if (n > 1024)
		return 0;
	s = malloc(n + 1);
	if (!s)
		return 0;
	memcpy(s, data, n);
	s[n] = '\0';
	argc = split(s, n, w);
	err = wr_rule_parse(argc, w, &r, NULL, set, name, &pe);
	if (err) {
		if (err > 0 || !pe.msg[0] || pe.word < -1 || pe.word >= argc)
			FAIL("error %d, word %d of %d, message \"%s\"", err, pe.word, argc, pe.msg);
		free(s);
		return 0;
	}
	check_rule(&r, name);
	text = print_rule(&r, name, set);
	argc2 = split(text, strlen(text), w2);
	err = wr_rule_parse(argc2, w2, &r2, NULL, set2, name2, &pe);
	if (err)
		FAIL("printed rule does not parse: %s", pe.msg);
	if (strcmp(name, name2) || strcmp(set, set2) || memcmp(&r, &r2, sizeof(r))) {
		const unsigned char *a = (const void *)&r, *b = (const void *)&r2;
		size_t off = 0;

		while (off < sizeof(r) && a[off] == b[off])
			off++;
		FAIL("rule does not read back the same (struct weir_rule differs from byte %zu: "
		     "%#x, read back %#x):\n  printed:   %s  read back: %s", off,
		     off < sizeof(r) ? a[off] : 0, off < sizeof(r) ? b[off] : 0,
		     print_rule(&r, name, set), print_rule(&r2, name2, set2));
	}
	free(text);
	free(s);
	return 0;
}
