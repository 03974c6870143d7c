// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SYN cookies, the controller's side: what a rule set with action cookie
 * rules needs before it goes live (the kernel's helpers, XDP attachments,
 * the kernel's cookie sysctls), and what the data path must know of the
 * kernel to make SYN-ACKs the kernel's cookie path accepts back
 * (weir_config.cookie_flags and cookie_wscale).
 *
 * The sysctls are those of the network namespace weir runs in, which is
 * the one whose interfaces it attaches to and whose listeners answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include "lib/libweir.h"
#include "lib/tcpdiag.h"
#include "weir_cookie.h"
#include "weir_limiter.h"
#include "weir.skel.h"
#include "lib/kernel_features.h"

/* A verified source stays verified this long after its latest handshake (s). */
#define WR_VERIFIED_TTL_S	600
/* The largest window scale the kernel uses (TCP_MAX_WSCALE). */
#define WR_TCP_MAX_WSCALE	14

/* The first integer of /proc/sys/NAME (dots as slashes) into *v: 0 or -errno. */
static int sysctl_int(const char *name, long *v)
{
	char path[256], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	for (p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%ld", v);
	fclose(f);
	return n == 1 ? 0 : -EINVAL;
}

/* The third integer of net.ipv4.tcp_rmem (its max), 0 if unreadable. */
static long tcp_rmem_max(void)
{
	long lo, def, max;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%ld %ld %ld", &lo, &def, &max);
	fclose(f);
	return n == 3 ? max : 0;
}

/*
 * The window scale the kernel gives a connection it makes from a cookie:
 * tcp_select_initial_window() scales for the largest window the socket
 * could get, max(tcp_rmem[2], rmem_max), to at most 14.
 */
static __u32 kernel_wscale(void)
{
	long rmem = tcp_rmem_max(), core = 0, space;
	__u32 ws = 0;

	sysctl_int("net.core.rmem_max", &core);
	space = rmem > core ? rmem : core;
	if (space > 0xffffffffL)
		space = 0xffffffffL;
	while (ws < WR_TCP_MAX_WSCALE && (space >> (ws + 16)) > 0)
		ws++;
	return ws;
}

int wr_cookie_rules(const struct weir_ruleset *rs)
{
	__u32 i, n = 0;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		n += rs->rules[i].action == WEIR_ACT_COOKIE;
	return n;
}

int wr_cookie_guard(const struct weir_ruleset *rs, int hook, const char *dev, int change,
		    char *why, size_t len)
{
	__u32 i;

	if (hook == WR_CK_XDP || !rs || !wr_cookie_rules(rs))
		return 0;
	for (i = 0; i < rs->nr_rules && rs->rules[i].action != WEIR_ACT_COOKIE; i++)
		;
	if (change == WR_CK_RULES && hook == WR_CK_TC)
		snprintf(why, len, "rule %s: action cookie answers SYNs from XDP, and %s is "
			 "attached in tc mode, which cannot send them: attach it in native or "
			 "generic mode", rs->names[i], dev);
	else if (change == WR_CK_RULES)
		snprintf(why, len, "rule %s: action cookie answers SYNs from weir's own XDP "
			 "program, and %s has weir in libxdp's dispatcher, which cannot reach it: "
			 "attach it alone (dispatcher off)", rs->names[i], dev);
	else if (change == WR_CK_CONFIG)
		snprintf(why, len, "not attaching to %s in tc mode: the rules have action cookie, "
			 "which answers SYNs from XDP; use mode native or generic", dev);
	else if (hook == WR_CK_TC)
		snprintf(why, len, "the rule set has action cookie rules, which answer SYNs from "
			 "XDP; tc mode cannot send them: attach in native or generic mode, or "
			 "remove those rules first");
	else
		snprintf(why, len, "the rule set has action cookie rules, whose SYN-cookie "
			 "programs weir cannot reach from libxdp's dispatcher: attach %s alone (a "
			 "free interface, or dispatcher off) or remove those rules first", dev);
	return -EOPNOTSUPP;
}

int wr_cookie_attach_guard(const char *dev, int hook)
{
	struct weir_ruleset *rs = NULL;
	struct wr_maps m;
	char why[320];
	int err;

	if (hook == WR_CK_XDP)
		return 0;
	if (wr_maps_open(&m))
		return 0;	/* nothing loaded: no rules */
	rs = wr_live_get(&m);
	wr_maps_close(&m);
	err = wr_cookie_guard(rs, hook, dev, WR_CK_ATTACH, why, sizeof(why));
	free(rs);
	if (err)
		pr_err("%s", why);
	return err;
}

int wr_cookie_prepare(struct weir_ruleset *next, struct weir_config *cfg, int hook,
		      const char *dev)
{
	struct wr_features f;
	long syncookies = 0, ts = 0, sack = 0, ws = 0;
	char why[320];
	__u32 i;
	int err;

	next->cookie_rules = wr_cookie_rules(next);
	/*
	 * Sources that complete a handshake are kept (wr_sockops) while a rule
	 * answers cookies or asks for verified sources (verified-class, spare
	 * verified: wr_rule_uses_verified), for WR_VERIFIED_TTL_S.
	 */
	cfg->verified_ttl_ns = 0;
	for (i = 0; i < next->nr_rules && i < WEIR_MAX_RULES; i++)
		if (wr_rule_uses_verified(&next->rules[i]))
			cfg->verified_ttl_ns = WR_VERIFIED_TTL_S * 1000000000ULL;
	if (!next->cookie_rules)
		return 0;
	for (i = 0; i < next->nr_rules && next->rules[i].action != WEIR_ACT_COOKIE; i++)
		;
	wr_features_probe(&f);
	if (!f.has[WR_FEAT_SYNCOOKIE]) {
		pr_err("rule %s: action cookie needs %s (Linux %s), which this kernel (%s) lacks",
		       next->names[i], wr_feature_descs[WR_FEAT_SYNCOOKIE].what,
		       wr_feature_descs[WR_FEAT_SYNCOOKIE].since, wr_kernel_release());
		return -EOPNOTSUPP;
	}
	err = wr_cookie_guard(next, hook, dev, WR_CK_RULES, why,
			      sizeof(why));
	if (err) {
		pr_err("%s", why);
		return err;
	}
	/*
	 * The kernel turns a cookie's ACK into a connection only with
	 * tcp_syncookies on, and without a recent overflow of the listener's
	 * queue only with 2 (docs/syn-cookies.md).
	 */
	if (sysctl_int("net.ipv4.tcp_syncookies", &syncookies) || syncookies != 2) {
		pr_err("rule %s: action cookie needs net.ipv4.tcp_syncookies = 2 (it is %ld): "
		       "the kernel accepts a cookie's ACK only while its listener recently "
		       "overflowed, unless it is 2; set it with "
		       "'sysctl -w net.ipv4.tcp_syncookies=2' (in this network namespace)",
		       next->names[i], syncookies);
		return -EOPNOTSUPP;
	}
	sysctl_int("net.ipv4.tcp_timestamps", &ts);
	sysctl_int("net.ipv4.tcp_sack", &sack);
	sysctl_int("net.ipv4.tcp_window_scaling", &ws);
	/*
	 * The options ride in the timestamp, which the kernel reads back after
	 * taking off its per-connection offset: 0 only with tcp_timestamps = 2.
	 */
	cfg->cookie_flags = (ts == 2 ? WEIR_CK_TS : 0) | (sack ? WEIR_CK_SACK : 0) |
			    (ws ? WEIR_CK_WSCALE : 0);
	cfg->cookie_wscale = kernel_wscale();
	if (ts != 2)
		pr_info("net.ipv4.tcp_timestamps is %ld, not 2: connections made from SYN cookies "
			"go without window scaling and SACK (the kernel offsets timestamps "
			"unless it is 2, which garbles the options a cookie carries in them)", ts);
	return 0;
}

/* The established peers, each once, up to what wr_verified holds. */
struct seed {
	struct weir_verified_key *k;
	size_t n, cap;
};

static int seed_one(const struct inet_diag_msg *d, void *arg)
{
	struct seed *s = arg;
	__u32 a[4];
	int fam = wr_tcp_peer(d, a);

	if (!fam)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		void *k = realloc(s->k, cap * sizeof(*s->k));

		if (!k)
			return 1;
		s->k = k;
		s->cap = cap;
	}
	memcpy(s->k[s->n].addr, a, sizeof(a));
	s->k[s->n].family = fam;
	s->n++;
	return 0;
}

static int cmp_vkey(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct weir_verified_key));
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* a[0..n) sorted and each once: the new n. */
static size_t uniq(void *a, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	size_t i, w = 0;

	qsort(a, n, size, cmp);
	for (i = 0; i < n; i++)
		if (!w || cmp((char *)a + (w - 1) * size, (char *)a + i * size))
			memmove((char *)a + w++ * size, (char *)a + i * size, size);
	return w;
}

/*
 * keys[0..n) (of key_size bytes) all stamped now into fd
 * (wr_map_put_many). 0 or -errno.
 */
static int put_all(int fd, const void *keys, size_t key_size, __u32 n, __u64 now)
{
	__u64 *vals = malloc((n ? n : 1) * sizeof(*vals));
	__u32 i;
	int err;

	if (!vals)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		vals[i] = now;
	err = wr_map_put_many(fd, keys, key_size, vals, sizeof(*vals), n, NULL);
	free(vals);
	return err;
}

int wr_verified_seed(const struct wr_maps *m)
{
	struct seed s = { 0 };
	__u64 now = wr_mono_ns();
	__u32 *slots = NULL;
	size_t i, n, ns;
	int err;

	if (m->verified < 0 || m->verified_hint < 0)
		return -EBADF;
	err = wr_tcp_dump(1u << TCP_ESTABLISHED, seed_one, &s);
	if (err < 0)
		goto out;
	/* A client's connections are one source; an LRU of 65536 keeps no more than that. */
	n = uniq(s.k, s.n, sizeof(*s.k), cmp_vkey);
	if (n > WEIR_VERIFIED_MAX)
		n = WEIR_VERIFIED_MAX;
	slots = malloc((n ? n : 1) * sizeof(*slots));
	if (!slots) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		slots[i] = wr_verified_slot(&s.k[i]);
	ns = uniq(slots, n, sizeof(*slots), cmp_u32);
	/* The entries before their hints, as the sock_ops program writes them. */
	err = put_all(m->verified, s.k, sizeof(*s.k), n, now);
	if (!err)
		err = put_all(m->verified_hint, slots, sizeof(*slots), ns, now);
	if (!err)
		err = (int)n;
out:
	free(s.k);
	free(slots);
	return err;
}
