// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deny and allow lists: source prefixes in LPM tries, one per family.
 * Denied sources are dropped first; allowed ones then bypass every limit.
 * sl_config.lists says which tries hold entries, so an empty list costs the
 * data path no lookup.
 *
 * This file owns the four tries: the CLI's deny/allow commands, the
 * daemon's config and the metrics' entry counts all go through the
 * functions below, and the list bits are computed in one place, from what
 * the tries hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "sluice_user.h"

/* An entry walk never takes more steps than a trie can hold keys, twice over. */
#define WALK_BOUND (2ULL * SLUICE_LIST_MAX + 1)

static int list_fd(const struct sl_maps *m, bool deny, int family)
{
	if (deny)
		return family == 4 ? m->deny4 : m->deny6;
	return family == 4 ? m->allow4 : m->allow6;
}

/* A trie's key for c, in a buffer big enough for either family. */
static void cidr_key(const struct sl_cidr *c, struct sluice_lpm6 *k)
{
	memset(k, 0, sizeof(*k));
	k->plen = c->plen;
	memcpy(k->addr, c->addr, c->family == 4 ? 4 : 16);
}

/*
 * Every entry of one trie, as a CIDR, to cb until it returns non-zero
 * (which is returned). The walk restarts nowhere: a concurrent change may
 * be seen or not, never loop it.
 */
int sl_list_walk(const struct sl_maps *m, bool deny, int family,
		 int (*cb)(const struct sl_cidr *c, void *ctx), void *ctx)
{
	struct sluice_lpm6 k, next;
	size_t ksz = family == 4 ? sizeof(struct sluice_lpm4) : sizeof(struct sluice_lpm6);
	int fd = list_fd(m, deny, family);
	void *prev = NULL;
	__u64 n = 0;
	int ret;

	while (n++ < WALK_BOUND && !bpf_map_get_next_key(fd, prev, &next)) {
		struct sl_cidr c = { .family = family };

		memset(&k, 0, sizeof(k));
		memcpy(&k, &next, ksz);
		prev = &k;
		c.plen = k.plen;
		memcpy(c.addr, k.addr, family == 4 ? 4 : 16);
		ret = cb(&c, ctx);
		if (ret)
			return ret;
	}
	return n <= WALK_BOUND && errno != ENOENT ? -errno : 0;
}

static int count_one(const struct sl_cidr *c, void *ctx)
{
	(void)c;
	++*(__u64 *)ctx;
	return 0;
}

int sl_list_count(const struct sl_maps *m, bool deny, int family, __u64 *n)
{
	*n = 0;
	return sl_list_walk(m, deny, family, count_one, n);
}

/* sl_config.lists from what the tries hold. Caller holds the lock. */
static int update_list_bits(const struct sl_maps *m)
{
	static const struct { bool deny; int family; __u32 bit; } tries[] = {
		{ true, 4, SLUICE_L_DENY4 }, { true, 6, SLUICE_L_DENY6 },
		{ false, 4, SLUICE_L_ALLOW4 }, { false, 6, SLUICE_L_ALLOW6 },
	};
	struct sluice_config cfg;
	size_t i;
	__u64 n;
	int err = sl_config_read(m, &cfg);

	cfg.lists = 0;
	for (i = 0; !err && i < ARRAY_SIZE(tries); i++) {
		err = sl_list_count(m, tries[i].deny, tries[i].family, &n);
		if (n)
			cfg.lists |= tries[i].bit;
	}
	return err ? err : sl_config_write(m, &cfg);
}

/*
 * Add c to (or take it off) a list. -EEXIST / -ENOENT when it already is
 * (is not) there, -ENOSPC when the list is full. Caller holds the lock.
 */
int sl_list_change(const struct sl_maps *m, bool deny, const struct sl_cidr *c, bool add)
{
	int fd = list_fd(m, deny, c->family);
	struct sluice_lpm6 k;
	__u8 one = 1;
	int err;

	cidr_key(c, &k);
	if (add ? bpf_map_update_elem(fd, &k, &one, BPF_NOEXIST) : bpf_map_delete_elem(fd, &k)) {
		err = -errno;
		return err == -E2BIG ? -ENOSPC : err;
	}
	return update_list_bits(m);
}

static bool cidr_in(const struct sl_cidr *v, int n, const struct sl_cidr *c)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].family == c->family && v[i].plen == c->plen &&
		    !memcmp(v[i].addr, c->addr, c->family == 4 ? 4 : 16))
			return true;
	return false;
}

struct stale {
	const struct sl_cidr *keep;
	int nr_keep;
	struct sl_cidr *v;
	size_t n;
};

static int collect_stale(const struct sl_cidr *c, void *ctx)
{
	struct stale *s = ctx;

	if (cidr_in(s->keep, s->nr_keep, c))
		return 0;
	if (!(s->n & 255)) {
		struct sl_cidr *v = realloc(s->v, (s->n + 256) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
	}
	s->v[s->n++] = *c;
	return 0;
}

/*
 * Make a list hold exactly v[0 .. n) (both families): what v adds goes in
 * first, what it lacks comes out after, so an entry on both the old and
 * the new list is never missing for a moment. Caller holds the lock.
 */
int sl_list_sync(const struct sl_maps *m, bool deny, const struct sl_cidr *v, int n)
{
	struct stale s = { .keep = v, .nr_keep = n };
	struct sluice_lpm6 k;
	__u8 one = 1;
	int err = 0, fam, i;
	size_t j;

	/* Collect first, delete after: deleting while walking skips keys. */
	for (fam = 4; !err && fam <= 6; fam += 2)
		err = sl_list_walk(m, deny, fam, collect_stale, &s);
	for (i = 0; !err && i < n; i++) {
		cidr_key(&v[i], &k);
		if (bpf_map_update_elem(list_fd(m, deny, v[i].family), &k, &one, BPF_ANY))
			err = -errno;
	}
	for (j = 0; !err && j < s.n; j++) {
		cidr_key(&s.v[j], &k);
		bpf_map_delete_elem(list_fd(m, deny, s.v[j].family), &k);
	}
	free(s.v);
	return err ? err : update_list_bits(m);
}

/* ---- the deny and allow commands ---- */

static void usage_list(const char *what)
{
	fprintf(sl_usage_out(),
		"Usage: sluice %s add CIDR%s\n"
		"       sluice %s del CIDR\n"
		"       sluice %s list\n"
		"%s\n", what, !strcmp(what, "deny") ? " [force]   (force: a /0, every source)" : "", what, what,
		!strcmp(what, "deny") ? "Sources in a denied prefix are dropped before any rule."
				      : "Sources in an allowed prefix bypass every limit "
					"(the deny list still applies).");
}

struct print_ctx {
	char buf[64];
};

static int print_one(const struct sl_cidr *c, void *ctx)
{
	struct print_ctx *p = ctx;

	format_cidr(c->family, c->addr, c->plen, p->buf, sizeof(p->buf));
	print_str(NULL, "%s\n", p->buf);
	return 0;
}

static int cmd_list(int argc, char **argv, void *ctx)
{
	const char *what = ctx;
	struct print_ctx pc;
	struct sl_maps m;
	int err, fam;

	(void)argv;
	if (argc != 0) {
		usage_list(what);
		return -EINVAL;
	}
	err = sl_maps_open(&m);
	if (err)
		return err;
	out_begin();
	open_array(what);
	for (fam = 4; !err && fam <= 6; fam += 2)
		err = sl_list_walk(&m, !strcmp(what, "deny"), fam, print_one, &pc);
	close_array();
	out_end();
	sl_maps_close(&m);
	if (err)
		pr_err("cannot read the %s list: %s", what, strerror(-err));
	return err;
}

static int change(const char *what, bool add, int argc, char **argv)
{
	bool deny = !strcmp(what, "deny");
	struct sl_maps m;
	struct sl_cidr c;
	int lock, err;

	if (argc != 1 && !(argc == 2 && !strcmp(argv[1], "force"))) {
		if (argc > 1)
			pr_err("unexpected \"%s\" after the CIDR", argv[1]);
		usage_list(what);
		return -EINVAL;
	}
	if (parse_cidr(argv[0], &c)) {
		pr_err("invalid CIDR \"%s\"", argv[0]);
		return -EINVAL;
	}
	/* A /0 deny drops every packet of its family: the host's own clients too. */
	if (deny && add && c.plen == 0 && argc != 2) {
		pr_err("deny add %s drops every IPv%d packet, this host's own traffic included; "
		       "say 'deny add %s force' if that is meant", argv[0], c.family, argv[0]);
		return -EINVAL;
	}
	lock = sl_write_begin(&m, add);
	if (lock < 0)
		return lock;
	err = sl_list_change(&m, deny, &c, add);
	if (err == -EEXIST)
		pr_err("%s is already on the %s list", argv[0], what);
	else if (err == -ENOENT)
		pr_err("%s is not on the %s list", argv[0], what);
	else if (err == -ENOSPC)
		pr_err("the %s list is full", what);
	else if (err)
		pr_err("cannot update the %s list: %s", what, strerror(-err));
	else
		print_text("%s %s %s the %s list\n", add ? "added" : "removed", argv[0],
			   add ? "to" : "from", what);
	sl_write_end(&m, lock);
	return err;
}

static int cmd_add(int argc, char **argv, void *ctx)
{
	return change(ctx, true, argc, argv);
}

static int cmd_del(int argc, char **argv, void *ctx)
{
	return change(ctx, false, argc, argv);
}

static void usage_ctx(void *ctx)
{
	usage_list(ctx);
}

static const struct sl_cmd list_cmds[] = {
	{ "add", cmd_add },
	{ "delete", cmd_del },
	{ "list", cmd_list },
	{ "show", cmd_list },
};

int do_deny(int argc, char **argv)
{
	return sl_cmd_select(list_cmds, ARRAY_SIZE(list_cmds), "deny", argc, argv, (void *)"deny",
			     usage_ctx);
}

int do_allow(int argc, char **argv)
{
	return sl_cmd_select(list_cmds, ARRAY_SIZE(list_cmds), "allow", argc, argv, (void *)"allow",
			     usage_ctx);
}
