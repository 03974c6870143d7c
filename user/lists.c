// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deny and allow lists: source prefixes in LPM tries, one per family.
 * Denied sources are dropped first; allowed ones then bypass every limit.
 * sl_config.lists says which tries hold entries, so an empty list costs the
 * data path no lookup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "sluice_user.h"

struct lpm_key {
	__u32 plen;
	__u32 addr[4];
};

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

static int trie_count(int fd, int family)
{
	struct lpm_key k, next;
	size_t ksz = family == 4 ? 8 : 20;
	void *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		memcpy(&k, &next, ksz);
		prev = &k;
		n++;
	}
	return n;
}

/* Recompute the non-empty bits of sl_config.lists. Caller holds the lock. */
static int update_list_bits(const struct sl_maps *m)
{
	struct sluice_config cfg;
	int err = sl_config_read(m, &cfg);

	if (err)
		return err;
	cfg.lists = 0;
	if (trie_count(m->deny4, 4))
		cfg.lists |= SLUICE_L_DENY4;
	if (trie_count(m->deny6, 6))
		cfg.lists |= SLUICE_L_DENY6;
	if (trie_count(m->allow4, 4))
		cfg.lists |= SLUICE_L_ALLOW4;
	if (trie_count(m->allow6, 6))
		cfg.lists |= SLUICE_L_ALLOW6;
	return sl_config_write(m, &cfg);
}

static int list_print(const char *what, int fd4, int fd6)
{
	struct lpm_key k, next;
	char buf[64];
	int fam;

	out_begin();
	open_array(what);
	for (fam = 4; fam <= 6; fam += 2) {
		int fd = fam == 4 ? fd4 : fd6;
		size_t ksz = fam == 4 ? 8 : 20;
		void *prev = NULL;

		while (!bpf_map_get_next_key(fd, prev, &next)) {
			memcpy(&k, &next, ksz);
			prev = &k;
			if (fam == 4)
				memset(&k.addr[1], 0, 12);
			format_cidr(fam, k.addr, k.plen, buf, sizeof(buf));
			print_str(NULL, "%s\n", buf);
		}
	}
	close_array();
	out_end();
	return 0;
}

static int do_list(const char *what, int argc, char **argv)
{
	bool deny = !strcmp(what, "deny");
	struct lpm_key key = {};
	struct sl_maps m;
	struct sl_cidr c;
	bool add;
	__u8 one = 1;
	int lock, err = 0, fd;

	if (argc < 1 || !strcmp(argv[0], "help")) {
		usage_list(what);
		return argc < 1 ? -EINVAL : 0;
	}
	if (is_prefix(argv[0], "list") || is_prefix(argv[0], "show")) {
		if (argc != 1) {
			usage_list(what);
			return -EINVAL;
		}
		err = sl_maps_open(&m);
		if (err)
			return err;
		err = deny ? list_print("deny", m.deny4, m.deny6)
			   : list_print("allow", m.allow4, m.allow6);
		sl_maps_close(&m);
		return err;
	}
	if (is_prefix(argv[0], "add"))
		add = true;
	else if (is_prefix(argv[0], "delete"))
		add = false;
	else {
		pr_err("unknown %s command \"%s\"", what, argv[0]);
		usage_list(what);
		return -EINVAL;
	}
	if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "force"))) {
		if (argc > 2)
			pr_err("unexpected \"%s\" after the CIDR", argv[2]);
		usage_list(what);
		return -EINVAL;
	}
	if (parse_cidr(argv[1], &c)) {
		pr_err("invalid CIDR \"%s\"", argv[1]);
		return -EINVAL;
	}
	/* A /0 deny drops every packet of its family: the host's own clients too. */
	if (deny && add && c.plen == 0 && argc != 3) {
		pr_err("deny add %s drops every IPv%d packet, this host's own traffic included; "
		       "say 'deny add %s force' if that is meant", argv[1], c.family, argv[1]);
		return -EINVAL;
	}
	key.plen = c.plen;
	memcpy(key.addr, c.addr, sizeof(key.addr));

	lock = sl_write_begin(&m, add);
	if (lock < 0)
		return lock;
	if (deny)
		fd = c.family == 4 ? m.deny4 : m.deny6;
	else
		fd = c.family == 4 ? m.allow4 : m.allow6;
	if (add ? bpf_map_update_elem(fd, &key, &one, BPF_NOEXIST)
		: bpf_map_delete_elem(fd, &key)) {
		err = -errno;
		if (err == -EEXIST)
			pr_err("%s is already on the %s list", argv[1], what);
		else if (err == -ENOENT)
			pr_err("%s is not on the %s list", argv[1], what);
		else if (err == -ENOSPC || err == -E2BIG)
			pr_err("the %s list is full", what);
		else
			pr_err("cannot update the %s list: %s", what, strerror(-err));
		goto out;
	}
	err = update_list_bits(&m);
	if (err) {
		pr_err("cannot update the config: %s", strerror(-err));
		goto out;
	}
	print_text("%s %s %s the %s list\n", add ? "added" : "removed", argv[1],
		   add ? "to" : "from", what);
out:
	sl_write_end(&m, lock);
	return err;
}

int do_deny(int argc, char **argv)
{
	return do_list("deny", argc, argv);
}

int do_allow(int argc, char **argv)
{
	return do_list("allow", argc, argv);
}
