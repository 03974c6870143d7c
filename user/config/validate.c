// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sections of the config file that a table of keys alone does not
 * read: interfaces, deny and allow (and deny files), metrics, shedding's
 * signals, capacity and the fleet, each loaded its own way or judged whole
 * after its keys; and what the top level says together.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config/config_int.h"
#include "weir_limiter.h"

static void load_iface(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg *cfg = ld->cfg;
	yaml_node_t *keys[ARRAY_SIZE(iface_keys)], *vals[ARRAY_SIZE(iface_keys)];
	struct wr_cfg_iface ifc = {};
	unsigned int given = 0;
	bool ok = true;
	char why[160];
	const char *s;
	int i, bad;

	if (n->type != YAML_MAPPING_NODE) {
		err_at(ld, n->start_mark, "an interface must be a mapping, not %s", node_kind(n));
		return;
	}
	section_defaults(&iface_section, &ifc);
	cfg_mapping(ld, n, iface_section.what, iface_keys, iface_section.nr, keys, vals);
	if (!vals[I_NAME]) {
		err_at(ld, n->start_mark, "%s", iface_keys[I_NAME].need);
		ok = false;
	} else if ((s = cfg_scalar(ld, vals[I_NAME], iface_keys[I_NAME].name))) {
		if (!parse_value(ld, &iface_keys[I_NAME], vals[I_NAME], s, &ifc))
			ok = false;
		for (i = 0; i < ld->nr_ifnames; i++) {
			if (!strcmp(ld->ifnames[i].name, s)) {
				err_at(ld, vals[I_NAME]->start_mark,
				       "duplicate interface \"%s\" (first at line %lu)", s,
				       (unsigned long)ld->ifnames[i].mark.line + 1);
				ok = false;
				break;
			}
		}
		if (cfg_grow(ld, (void **)&ld->ifnames, ld->nr_ifnames, &ld->cap_ifnames,
			 sizeof(*ld->ifnames))) {
			ld->ifnames[ld->nr_ifnames].name = s;
			ld->ifnames[ld->nr_ifnames++].mark = vals[I_NAME]->start_mark;
		}
	} else {
		ok = false;
	}
	for (i = I_MODE; i < I_NR; i++) {
		if (!vals[i])
			continue;
		if (load_value(ld, &iface_keys[i], vals[i], &ifc))
			given |= 1u << (i - I_MODE);
		else
			ok = false;
	}
	/* What they say together, as attach judges them; the error at the key at fault. */
	if (ok && wr_attach_settle(&ifc.attach, given, &bad, why, sizeof(why))) {
		err_at(ld, vals[I_MODE + bad]->start_mark, "%s", why);
		ok = false;
	}
	if (!ok ||
	    !cfg_grow(ld, (void **)&cfg->ifaces, cfg->nr_ifaces, &ld->cap_ifaces, sizeof(ifc)))
		return;
	cfg->ifaces[cfg->nr_ifaces++] = ifc;
}

void load_ifaces(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (!cfg_list(ld, n, "interfaces", &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *i = cfg_node(ld, *it);

		if (i)
			load_iface(ld, i);
	}
}

static void add_cidr(struct load *ld, struct wr_cidr **arr, int *nr, int *cap,
		     const struct wr_cidr *c)
{
	if (!cfg_grow(ld, (void **)arr, *nr, cap, sizeof(**arr)))
		return;
	(*arr)[(*nr)++] = *c;
}

/*
 * A /0 deny drops a whole family, the host's own clients included: never
 * from a file the daemon reloads on every change. (`weir deny add CIDR
 * force` can, by hand.)
 */
#define DENY_ALL_MSG "deny %s would drop every IPv%d packet, this host's own traffic " \
		     "included; a config never denies a whole family ('weir deny add " \
		     "CIDR force' does, by hand)"

static void load_cidrs(struct load *ld, const yaml_node_t *n, const char *what,
		       struct wr_cidr **arr, int *nr, int *cap)
{
	yaml_node_item_t *it, *end;
	struct wr_cidr c;

	if (!cfg_list(ld, n, what, &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *v = cfg_node(ld, *it);
		const char *s = v ? cfg_scalar(ld, v, "a CIDR") : NULL;

		if (!s)
			continue;
		if (parse_cidr(s, &c))
			err_at(ld, v->start_mark, "invalid CIDR \"%s\"", s);
		else if (c.plen == 0 && !strncmp(what, "deny", 4))
			err_at(ld, v->start_mark, DENY_ALL_MSG, s, c.family);
		else
			add_cidr(ld, arr, nr, cap, &c);
	}
}

/* Relative deny-file paths start at the config file's directory. */
static char *resolve(struct load *ld, const char *p)
{
	char *out;

	if (p[0] == '/' || !strcmp(ld->dir, "."))
		out = strdup(p);
	else if (asprintf(&out, "%s/%s", ld->dir, p) < 0)
		out = NULL;
	if (!out)
		ld->oom = true;
	return out;
}

/* One CIDR per line; '#' starts a comment; blank lines are skipped. */
static void read_deny_file(struct load *ld, const char *path, yaml_mark_t at)
{
	struct wr_cfg *cfg = ld->cfg;
	unsigned long lineno = 0;
	char *line = NULL;
	size_t len = 0;
	int bad = 0;
	FILE *f;

	struct stat st;
	int fd;

	/* Non-blocking and checked first: a FIFO or a device must not hang or flood us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err_at(ld, at, "cannot read deny file %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err_at(ld, at, "deny file %s is not a regular file", path);
		close(fd);
		return;
	}
	f = fdopen(fd, "re");
	if (!f) {
		err_at(ld, at, "cannot read deny file %s: %s", path, strerror(errno));
		close(fd);
		return;
	}
	while (getline(&line, &len, f) >= 0) {
		struct wr_cidr c;
		char *s, *e;

		lineno++;
		s = line + strspn(line, " \t");
		e = s + strcspn(s, "#\r\n");
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == s)
			continue;
		*e = '\0';
		if (!parse_cidr(s, &c) && c.plen == 0) {
			err_file(ld, path, lineno, s - line + 1, DENY_ALL_MSG, s, c.family);
			continue;
		}
		if (!parse_cidr(s, &c)) {
			add_cidr(ld, &cfg->deny, &cfg->nr_deny, &ld->cap_deny, &c);
			continue;
		}
		if (++bad > DENYFILE_MAX_ERRORS) {
			err_file(ld, path, lineno, s - line + 1,
				 "more than %d invalid lines, the rest is not checked",
				 DENYFILE_MAX_ERRORS);
			break;
		}
		err_file(ld, path, lineno, s - line + 1, "invalid CIDR \"%s\"", s);
	}
	if (ferror(f))
		err_at(ld, at, "cannot read deny file %s: %s", path, strerror(errno));
	free(line);
	fclose(f);
}

void load_deny_files(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg *cfg = ld->cfg;
	yaml_node_item_t *it, *end;

	if (!cfg_list(ld, n, "deny-files", &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *v = cfg_node(ld, *it);
		const char *s = v ? cfg_scalar(ld, v, "a deny file") : NULL;
		char *p;

		if (!s || !(p = resolve(ld, s)))
			continue;
		if (!cfg_grow(ld, (void **)&cfg->deny_files, cfg->nr_deny_files,
			      &ld->cap_deny_files, sizeof(p))) {
			free(p);
			continue;
		}
		cfg->deny_files[cfg->nr_deny_files++] = p;
		ld->deny_file_at = v->start_mark;
		read_deny_file(ld, p, v->start_mark);
	}
}

/*
 * A geo feed's list of countries (two letters each) or ASNs (1 to
 * 4294967295, AS optional), comma-separated: 0, or the bad token's offset + 1.
 */
static size_t bad_geo_token(const char *s, bool country)
{
	const char *t = s;

	for (;;) {
		size_t n = strcspn(t, ",");
		char *end;

		if (country) {
			if (n != 2 || !isalpha((unsigned char)t[0]) || !isalpha((unsigned char)t[1]))
				return t - s + 1;
		} else {
			const char *d = t + (n > 2 && !strncasecmp(t, "AS", 2) ? 2 : 0);
			unsigned long long v;

			if (!isdigit((unsigned char)*d))
				return t - s + 1;
			v = strtoull(d, &end, 10);
			if (end != t + n || !v || v > 4294967295ULL)
				return t - s + 1;
		}
		if (!t[n])
			return 0;
		t += n + 1;
	}
}

/* One feed of lists:: a name, exactly one of url, file and geo, refresh, action. */
static void load_feed(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg *cfg = ld->cfg;
	yaml_node_t *keys[FD_NR], *vals[FD_NR];
	struct wr_cfg_feed f = {};
	bool ok = true;
	int i;

	if (n->type != YAML_MAPPING_NODE) {
		err_at(ld, n->start_mark, "a feed must be a mapping ({ name: N, url: URL }), not %s",
		       node_kind(n));
		return;
	}
	section_defaults(&feed_section, &f);
	cfg_mapping(ld, n, feed_section.what, feed_keys, FD_NR, keys, vals);
	for (i = 0; i < FD_NR; i++)
		if (vals[i] && !load_value(ld, &feed_keys[i], vals[i], &f))
			ok = false;
	if (!vals[FD_NAME]) {
		err_at(ld, n->start_mark, "%s", feed_keys[FD_NAME].need);
		ok = false;
	}
	if (!!vals[FD_URL] + !!vals[FD_FILE] + !!vals[FD_GEO] != 1) {
		err_at(ld, n->start_mark, "a feed needs a url, a file or a geo database (one of them)");
		ok = false;
	}
	if (ok && vals[FD_GEO] && !vals[FD_COUNTRY] && !vals[FD_ASN]) {
		err_at(ld, vals[FD_GEO]->start_mark, "a geo feed needs country or asn (or both)");
		ok = false;
	}
	if (ok && !vals[FD_GEO] && (vals[FD_COUNTRY] || vals[FD_ASN])) {
		err_at(ld, vals[FD_COUNTRY] ? vals[FD_COUNTRY]->start_mark : vals[FD_ASN]->start_mark,
		       "country and asn go with geo (a MaxMind DB)");
		ok = false;
	}
	for (i = FD_COUNTRY; ok && i <= FD_ASN; i++) {
		const char *list = i == FD_COUNTRY ? f.country : f.asn;
		size_t bad = vals[i] ? bad_geo_token(list, i == FD_COUNTRY) : 0;

		if (bad) {
			err_at(ld, vals[i]->start_mark, "%s \"%s\": \"%.*s\" is not %s", feed_keys[i].name,
			       list, (int)strcspn(list + bad - 1, ","), list + bad - 1,
			       i == FD_COUNTRY ? "a two-letter country code" : "an AS number");
			ok = false;
		}
	}
	if (ok && vals[FD_URL] && strncasecmp(f.url, "http://", 7) &&
	    strncasecmp(f.url, "https://", 8)) {
		err_at(ld, vals[FD_URL]->start_mark, "url \"%s\" is not http:// or https://", f.url);
		ok = false;
	}
	for (i = FD_FILE; ok && i <= FD_GEO; i++) {
		char *path = i == FD_FILE ? f.file : f.geo, *p;

		if (!vals[i] || path[0] == '/')
			continue;
		p = resolve(ld, path);
		if (p && strlen(p) < sizeof(f.file))
			strcpy(path, p);
		else if (p)
			err_at(ld, vals[i]->start_mark, "%s path too long", feed_keys[i].name);
		free(p);
	}
	for (i = 0; ok && i < cfg->nr_feeds; i++) {
		if (!strcmp(cfg->feeds[i].name, f.name)) {
			err_at(ld, vals[FD_NAME]->start_mark, "duplicate feed \"%s\"", f.name);
			ok = false;
		}
	}
	if (ok && cfg->nr_feeds >= WR_CFG_FEEDS_MAX) {
		err_at(ld, n->start_mark, "more than %d feeds", WR_CFG_FEEDS_MAX);
		ok = false;
	}
	if (!ok || !cfg_grow(ld, (void **)&cfg->feeds, cfg->nr_feeds, &ld->cap_feeds, sizeof(f)))
		return;
	cfg->feeds[cfg->nr_feeds++] = f;
}

void load_lists(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (!cfg_list(ld, n, "lists", &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *i = cfg_node(ld, *it);

		if (i)
			load_feed(ld, i);
	}
}

void load_deny(struct load *ld, const yaml_node_t *n)
{
	load_cidrs(ld, n, "deny", &ld->cfg->deny, &ld->cfg->nr_deny, &ld->cap_deny);
}

void load_allow(struct load *ld, const yaml_node_t *n)
{
	load_cidrs(ld, n, "allow", &ld->cfg->allow, &ld->cfg->nr_allow, &ld->cap_allow);
}

/* A mapping, or a switch: off/false/no turn the endpoint off, on/true/yes keep the default. */
void load_metrics(struct load *ld, const yaml_node_t *n)
{
	if (n->type == YAML_SCALAR_NODE && !parse_switch(NULL, cfg_sval(n), &ld->cfg->metrics))
		return;
	if (n->type == YAML_SCALAR_NODE && !cfg_is_null(n)) {
		err_at(ld, n->start_mark,
		       "metrics must be a mapping ({ listen: HOST:PORT }) or off, not \"%s\"",
		       cfg_sval(n));
		return;
	}
	load_section(ld, &metrics_section, n, ld->cfg);
}

bool sig_cpu(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	const char *s = cfg_scalar(ld, v, "cpu");

	(void)sig;
	if (!s)
		return false;
	if (strcmp(s, "true") && strcmp(s, "yes") && strcmp(s, "on")) {
		if (strcmp(s, "false") && strcmp(s, "no") && strcmp(s, "off"))
			err_at(ld, v->start_mark, "invalid cpu \"%s\" (true or false)", s);
		return false;	/* switched off: not a signal */
	}
	return true;
}

bool sig_psi(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	const char *s = cfg_scalar(ld, v, "psi");

	if (!s)
		return false;
	if (strcmp(s, "cpu") && strcmp(s, "io") && strcmp(s, "memory")) {
		err_at(ld, v->start_mark, "invalid psi \"%s\" (cpu, io or memory)", s);
		return false;
	}
	strcpy(sig->arg, s);
	return true;
}

/* A port, or a list of them. */
bool sig_accept_queue(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	yaml_node_item_t *it = NULL, *end = NULL;
	const char *s;

	if (v->type == YAML_SCALAR_NODE) {
		uint64_t port;

		if (parse_u64(cfg_sval(v), 1, 65535, &port)) {
			err_at(ld, v->start_mark, "invalid port \"%s\"", cfg_sval(v));
			return false;
		}
		sig->ports[sig->nr_ports++] = port;
	} else if (!cfg_list(ld, v, "accept-queue", &it, &end)) {
		return false;
	}
	for (; it && it < end; it++) {
		const yaml_node_t *pn = cfg_node(ld, *it);
		uint64_t port;

		if (!pn || !(s = cfg_scalar(ld, pn, "a port")))
			continue;
		if (parse_u64(s, 1, 65535, &port)) {
			err_at(ld, pn->start_mark, "invalid port \"%s\"", s);
			continue;
		}
		if (sig->nr_ports == WR_MAX_PORTS) {
			err_at(ld, pn->start_mark, "too many ports (at most %d)", WR_MAX_PORTS);
			break;
		}
		sig->ports[sig->nr_ports++] = port;
	}
	if (!sig->nr_ports) {
		err_at(ld, v->start_mark, "accept-queue needs at least one port");
		return false;
	}
	return true;
}

bool sig_file(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	const char *s = cfg_scalar(ld, v, "file");
	char *path;

	if (!s)
		return false;
	path = resolve(ld, s);
	if (!path || strlen(path) >= sizeof(sig->arg)) {
		err_at(ld, v->start_mark, "invalid file \"%s\"", s);
		free(path);
		return false;
	}
	strcpy(sig->arg, path);
	free(path);
	return true;
}

static void load_signal(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg_shed *sh = &ld->cfg->shed;
	struct wr_cfg_signal *sig;
	const yaml_node_t *k, *v;
	char names[128] = "", examples[256] = "";
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cfg_signals); i++) {
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", cfg_signals[i].name);
		snprintf(examples + strlen(examples), sizeof(examples) - strlen(examples), "%s%s",
			 i ? ", " : "", cfg_signals[i].example);
	}
	if (n->type != YAML_MAPPING_NODE ||
	    n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1) {
		err_at(ld, n->start_mark, "a signal is one of %s", examples);
		return;
	}
	k = cfg_node(ld, n->data.mapping.pairs.start->key);
	v = cfg_node(ld, n->data.mapping.pairs.start->value);
	if (!k || !v || k->type != YAML_SCALAR_NODE) {
		err_at(ld, n->start_mark, "a signal is a single key");
		return;
	}
	if (sh->nr_signals == WEIR_MAX_SIGNALS) {
		err_at(ld, n->start_mark, "too many signals (at most %d)", WEIR_MAX_SIGNALS);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(cfg_signals); i++)
		if (!strcmp(cfg_sval(k), cfg_signals[i].name))
			break;
	if (i == ARRAY_SIZE(cfg_signals)) {
		err_at(ld, k->start_mark, "unknown signal \"%s\" (%s)", cfg_sval(k), names);
		return;
	}
	sig = &sh->signals[sh->nr_signals];
	memset(sig, 0, sizeof(*sig));
	sig->type = i;
	if (cfg_signals[i].load(ld, v, sig))
		sh->nr_signals++;
}

void load_signals(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (!cfg_list(ld, n, "signals", &it, &end))
		return;
	for (; it < end; it++) {
		const yaml_node_t *sn = cfg_node(ld, *it);

		if (sn)
			load_signal(ld, sn);
	}
}

void check_curve(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	const struct wr_curve *c = &ld->cfg->shed.curve;

	(void)vals;
	if (!(c->good > 0 && c->good <= c->bad && c->bad <= 1))
		err_at(ld, n->start_mark, "curve needs 0 < good <= bad <= 1 (good %g, bad %g)",
		       c->good, c->bad);
}

void check_tcp_state(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	(void)vals;
	if (ld->cfg->tcp_state.off_pps >= ld->cfg->tcp_state.on_pps)
		err_at(ld, n->start_mark, "tcp-state needs off < on (on %u, off %u): the check "
		       "would never switch off", ld->cfg->tcp_state.on_pps,
		       ld->cfg->tcp_state.off_pps);
}

/* cover and false-max at the place of the key that is wrong, else of the section. */
void check_auto(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	const struct wr_cfg_auto *a = &ld->cfg->au;
	const yaml_node_t *cv = vals[key_index(&auto_section, "cover")];
	const yaml_node_t *fv = vals[key_index(&auto_section, "false-max")];

	if (!(a->cover > 0.5))
		err_at(ld, (cv ? cv : n)->start_mark, "auto needs cover above 0.5 (cover %g): a "
		       "fingerprint must match most of the attack", a->cover);
	else if (!(a->false_max < a->cover))
		err_at(ld, (fv ? fv : n)->start_mark, "auto needs false-max < cover (false-max "
		       "%g, cover %g)", a->false_max, a->cover);
}

void load_shedding(struct load *ld, const yaml_node_t *n)
{
	ld->cfg->shed.on = true;
	load_section(ld, &shed_section, n, ld->cfg);
}

static void capacity_rate(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg_capacity *cap = &ld->cfg->capacity;
	const char *s = cfg_scalar(ld, n, "rate");
	uint64_t rate;
	int cost;

	if (!s)
		return;
	if (parse_rate(s, &rate, &cost)) {
		err_at(ld, n->start_mark, "invalid rate \"%s\"", s);
		return;
	}
	if (cap->rate[cost])
		err_at(ld, n->start_mark, "a second %s capacity \"%s\"",
		       cost == WEIR_COST_PKT ? "packet" : "byte", s);
	cap->rate[cost] = rate;
}

/* A rate, or a list of them: one in packets, one in bytes (or bits). */
void load_capacity_rate(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (n->type != YAML_SEQUENCE_NODE) {
		capacity_rate(ld, n);
		return;
	}
	cfg_list(ld, n, "rate", &it, &end);
	for (; it < end; it++)
		if (cfg_node(ld, *it))
			capacity_rate(ld, cfg_node(ld, *it));
}

void check_capacity(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	const struct wr_cfg_capacity *cap = &ld->cfg->capacity;

	(void)vals;
	if (!cap->rate[0] && !cap->rate[1])
		err_at(ld, n->start_mark, "capacity needs a rate: 1mpps, 10gbit, or both as a list");
}

/* host:port or [v6]:port, the port 1-65535. */
static bool valid_node(const char *s)
{
	const char *colon = strrchr(s, ':');
	uint64_t port;

	if (!colon || colon == s || strlen(s) >= 64)
		return false;
	if (s[0] == '[' && colon[-1] != ']')
		return false;
	return !parse_u64(colon + 1, 1, 65535, &port);
}

void load_fleet_redis(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg_fleet *fl = &ld->cfg->fleet;
	yaml_node_item_t *it, *end;

	if (!cfg_list(ld, n, "redis", &it, &end))
		return;
	for (; it < end; it++) {
		const yaml_node_t *v = cfg_node(ld, *it);
		const char *s = v ? cfg_scalar(ld, v, "a Redis server") : NULL;

		if (!s)
			continue;
		if (!valid_node(s)) {
			err_at(ld, v->start_mark, "invalid Redis server \"%s\" (HOST:PORT or "
			       "[IPV6]:PORT, PORT 1-65535)", s);
			continue;
		}
		if (fl->nr_nodes == WEIR_FLEET_NODES) {
			err_at(ld, v->start_mark, "too many Redis servers (at most %d)",
			       WEIR_FLEET_NODES);
			return;
		}
		strcpy(fl->nodes[fl->nr_nodes++], s);
	}
}

int wr_fleet_auth_check(const char *path, char *why, size_t len)
{
	struct stat st;

	if (stat(path, &st)) {
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077)) {
		snprintf(why, len, "%s must be a file owned by root that only root can read "
			 "(chmod 600): it holds a password", path);
		return -EPERM;
	}
	return 0;
}

void check_fleet(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	struct wr_cfg_fleet *fl = &ld->cfg->fleet;
	char why[320];

	(void)vals;
	if (fl->stale_ms <= fl->interval_ms)
		err_at(ld, n->start_mark, "stale-after (%u ms) must be longer than interval (%u ms)",
		       fl->stale_ms, fl->interval_ms);
	if (fl->mode == WR_FLEET_SINGLE && fl->nr_nodes > 1)
		err_at(ld, n->start_mark, "mode single speaks to one Redis server; %d given "
		       "(mode sharded spreads keys over several)", fl->nr_nodes);
	if (fl->auth_file[0] && wr_fleet_auth_check(fl->auth_file, why, sizeof(why)))
		err_at(ld, n->start_mark, "auth-file: %s", why);
}

void load_fleet(struct load *ld, const yaml_node_t *n)
{
	ld->cfg->fleet.on = true;
	load_section(ld, &fleet_section, n, ld->cfg);
}

/* The data path holds WEIR_LIST_MAX prefixes per family and list. */
static void check_list_sizes(struct load *ld, const yaml_node_t *where, const char *what,
			     const struct wr_cidr *v, int n)
{
	int fam, i, count;

	for (fam = 4; fam <= 6; fam += 2) {
		for (count = 0, i = 0; i < n; i++)
			count += v[i].family == fam;
		if (count > WEIR_LIST_MAX)
			err_at(ld, where->start_mark, "%d IPv%d prefixes on the %s list; it holds %d",
			       count, fam, what, WEIR_LIST_MAX);
	}
}

void check_top(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	{
		const struct weir_ruleset *rs = ld->cfg->rules;
		__u32 r, l;

		for (r = 0; rs && !ld->cfg->fleet.on && r < rs->nr_rules && r < WEIR_MAX_RULES; r++)
			for (l = 0; l < rs->rules[r].nr_limits && l < WEIR_MAX_LIMITS; l++)
				if (rs->rules[r].limits[l].fleet) {
					err_at(ld, n->start_mark, "rule %s has a limit with scope "
					       "fleet, but the file has no fleet: section to keep it "
					       "in step", rs->names[r]);
					r = WEIR_MAX_RULES;
					break;
				}
		/*
		 * A fleet window shorter than two intervals would turn before
		 * the fleet's count of it came back: each host would count
		 * alone.
		 */
		for (r = 0; rs && ld->cfg->fleet.on && r < rs->nr_rules && r < WEIR_MAX_RULES; r++)
			for (l = 0; l < rs->rules[r].nr_limits && l < WEIR_MAX_LIMITS; l++) {
				const struct weir_limit *lim = &rs->rules[r].limits[l];

				if (lim->fleet && wr_limit_windowed(lim) &&
				    lim->period_ms < 2 * ld->cfg->fleet.interval_ms)
					err_at(ld, n->start_mark, "rule %s: a fleet window (%u ms) "
					       "must span at least two sync intervals (%u ms each)",
					       rs->names[r], lim->period_ms,
					       ld->cfg->fleet.interval_ms);
			}
	}
	const yaml_node_t *deny = vals[key_index(&top_section, "deny")];
	const yaml_node_t *allow = vals[key_index(&top_section, "allow")];
	const yaml_node_t *geo = vals[key_index(&top_section, "geo-db")];
	struct wr_cfg *cfg = ld->cfg;

	/* geo-db as the daemon opens it; rules' country: and asn: sets need it. */
	if (geo && cfg->geo_db[0] && cfg->geo_db[0] != '/') {
		char *p = resolve(ld, cfg->geo_db);

		if (p && strlen(p) < sizeof(cfg->geo_db))
			strcpy(cfg->geo_db, p);
		else if (p)
			err_at(ld, geo->start_mark, "geo-db path too long");
		free(p);
	}
	{
		const struct weir_ruleset *rs = cfg->rules;
		__u32 r;

		for (r = 0; rs && !cfg->geo_db[0] && r < rs->nr_rules && r < WEIR_MAX_RULES; r++) {
			const struct weir_rule *x = &rs->rules[r];
			const char *set = rs->srcsets[x->srcset & WEIR_SRCSET_SLOT];

			if ((x->match & WEIR_M_SRCSET) && strncmp(set, "feed:", 5)) {
				err_at(ld, n->start_mark, "rule %s: src %s needs a geo database "
				       "(geo-db: PATH)", rs->names[r], set);
				break;
			}
		}
	}

	check_list_sizes(ld, deny ? deny : n, "deny", cfg->deny, cfg->nr_deny);
	check_list_sizes(ld, allow ? allow : n, "allow", cfg->allow, cfg->nr_allow);
}
