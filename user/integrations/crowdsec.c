// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A CrowdSec bouncer (`weir crowdsec run`, cmd/crowdsec.c). It follows the local API's
 * decision stream (GET /v1/decisions/stream with the bouncer's X-Api-Key;
 * startup=true first, for every decision in force, then only what changed)
 * and maps ban decisions on an Ip or a Range to deny entries whose ttl is
 * the decision's remaining duration; a deleted decision takes its entry
 * off again as `deny del ttl-only` does (a permanent entry, an operator's
 * or the config's, stays). Entries expire by themselves, so a bouncer that stops leaves
 * nothing behind for longer than CrowdSec said. HTTP through libcurl, JSON
 * through json-c.
 *
 * The answer is parsed as it arrives (a full pull is megabytes the API
 * takes a while to send): each decision is read into a compact form and
 * its JSON freed at once. Nothing is written until the answer is whole
 * and a JSON object: one cut short or followed by junk applies nothing.
 * The new deny entries are then written in batches.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "lib/libweir.h"
#include "integrations/crowdsec.h"
#include "integrations/feedstore.h"

/* The decision stream's answer is read up to this size (a full community blocklist is ~2 MiB). */
#define CS_BODY_MAX (64u << 20)
/* One request's time limit, in seconds. */
#define CS_TIMEOUT_S 10
/* A decision's ttl is capped at the longest ttl an entry takes (10 years). */
#define CS_TTL_MAX_NS (3650ULL * 86400 * 1000000000ULL)

struct cs_counts {
	unsigned int added, removed, skipped, failed;
};

/* One decision as read off the answer; applied once the answer is whole. */
struct cs_dec {
	struct wr_cidr c;
	__u64 ttl;
	int kind;		/* cs_decision(): CS_CIDR .. CS_AS, CS_OTHER, or -EINVAL */
	size_t what;		/* its value, at cs_parse.text + what */
};

struct cs_list {
	struct cs_dec *v;
	size_t n, cap;
};

/* Where the parse of the answer is: one top-level object of keys and values. */
enum {
	P_START,	/* before its '{' */
	P_FIRST,	/* after '{': a key or '}' */
	P_KEY0,		/* after ',': a key */
	P_KEY,		/* in a key (json-c reads it) */
	P_COLON,
	P_VAL0,		/* before a value: "deleted" and "new" arrays are read here */
	P_VAL,		/* in another value (json-c reads it) */
	P_ARR0,		/* after '[': a decision or ']' */
	P_ELEM0,	/* after ',': a decision */
	P_ELEM,		/* in a decision (json-c reads it) */
	P_ARRN,		/* after a decision: ',' or ']' */
	P_NEXT,		/* after a value: ',' or '}' */
	P_DONE,		/* after '}': only white space */
};

/* Which value is being read: an array of decisions (deleted, new) or another. */
enum { K_DELETED = 0, K_NEW = 1, K_OTHER = 2 };

/*
 * The stream's answer, parsed as it arrives: the object's own syntax here,
 * each key, value and decision by json-c's tokener, each decision kept in
 * a compact form (list[K_DELETED], list[K_NEW]) and its JSON freed at once.
 */
struct cs_parse {
	CURL *curl;
	long code;		/* HTTP status, once known */
	char head[256];		/* the start of an answer other than 200 */
	size_t hlen;
	size_t len;		/* bytes of the answer so far */
	struct json_tokener *tok;
	int state, key;
	struct cs_list list[2];
	char *text;		/* decisions' values, each NUL-terminated */
	size_t tlen, tcap;
	char err[160];		/* why the answer is not what it should be */
};

static int cs_parse_init(struct cs_parse *p, CURL *c)
{
	memset(p, 0, sizeof(*p));
	p->curl = c;
	p->tok = json_tokener_new();
	return p->tok ? 0 : -ENOMEM;
}

static void cs_parse_free(struct cs_parse *p)
{
	if (p->tok)
		json_tokener_free(p->tok);
	free(p->list[0].v);
	free(p->list[1].v);
	free(p->text);
	memset(p, 0, sizeof(*p));
}

static int cs_decision(struct json_object *d, struct wr_cidr *c, __u64 *ttl, const char **what);

/* A decision read: its compact form at the end of list[p->key]. */
static int cs_keep(struct cs_parse *p, struct json_object *d)
{
	struct cs_list *l = &p->list[p->key];
	struct cs_dec *e;
	const char *what = "?";
	size_t wl;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		struct cs_dec *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	e = &l->v[l->n];
	memset(e, 0, sizeof(*e));
	e->kind = json_object_is_type(d, json_type_object) ? cs_decision(d, &e->c, &e->ttl, &what)
							   : -EINVAL;
	wl = strlen(what) + 1;
	if (p->tlen + wl > p->tcap) {
		size_t cap = p->tcap ? 2 * p->tcap : 65536;
		char *nt;

		while (cap < p->tlen + wl)
			cap *= 2;
		nt = realloc(p->text, cap);
		if (!nt)
			return -ENOMEM;
		p->text = nt;
		p->tcap = cap;
	}
	memcpy(p->text + p->tlen, what, wl);
	e->what = p->tlen;
	p->tlen += wl;
	l->n++;
	return 0;
}

/* A value json-c finished (o; NULL for null) in state P_KEY, P_VAL or P_ELEM. */
static int cs_value(struct cs_parse *p, struct json_object *o)
{
	const char *k;

	switch (p->state) {
	case P_KEY:
		k = json_object_get_string(o);
		p->key = !strcmp(k, "deleted") ? K_DELETED : !strcmp(k, "new") ? K_NEW : K_OTHER;
		p->state = P_COLON;
		return 0;
	case P_VAL:
		p->state = P_NEXT;
		return 0;
	default:
		p->state = P_ARRN;
		if (cs_keep(p, o)) {
			snprintf(p->err, sizeof(p->err), "out of memory");
			return -1;
		}
		return 0;
	}
}

/*
 * Another piece of the answer. 0, or -1 with p->err saying why it is not
 * a JSON object of the stream's shape.
 */
static int cs_feed(struct cs_parse *p, const char *buf, size_t len)
{
	size_t i = 0, at;

	while (i < len) {
		char ch = buf[i];

		if (p->state == P_KEY || p->state == P_VAL || p->state == P_ELEM) {
			struct json_object *o = json_tokener_parse_ex(p->tok, buf + i, (int)(len - i));
			enum json_tokener_error e = json_tokener_get_error(p->tok);
			int r;

			if (e == json_tokener_continue)
				return 0;	/* all of buf taken: the value goes on in the next piece */
			if (e != json_tokener_success) {
				snprintf(p->err, sizeof(p->err), "%s near byte %zu",
					 json_tokener_error_desc(e), p->len + i);
				return -1;
			}
			i += json_tokener_get_parse_end(p->tok);
			json_tokener_reset(p->tok);
			r = (p->state != P_KEY || json_object_is_type(o, json_type_string)) ?
				    cs_value(p, o) : -1;
			json_object_put(o);
			if (r) {
				if (!p->err[0])
					snprintf(p->err, sizeof(p->err), "a key that is not a string");
				return -1;
			}
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			i++;
			continue;
		}
		at = i++;
		switch (p->state) {
		case P_START:
			if (ch == '{') {
				p->state = P_FIRST;
				continue;
			}
			snprintf(p->err, sizeof(p->err), "another JSON value");
			return -1;
		case P_FIRST:
		case P_KEY0:
			if (ch == '}' && p->state == P_FIRST) {
				p->state = P_DONE;
				continue;
			}
			if (ch == '"') {
				p->state = P_KEY;
				i = at;		/* json-c reads the key from its quote */
				continue;
			}
			break;
		case P_COLON:
			if (ch == ':') {
				p->state = P_VAL0;
				continue;
			}
			break;
		case P_VAL0:
			if (p->key != K_OTHER && ch == '[') {
				p->state = P_ARR0;
				continue;
			}
			/* A value of another key, or "new": null (no decisions): json-c reads it. */
			p->state = P_VAL;
			i = at;
			continue;
		case P_ARR0:
		case P_ELEM0:
			if (ch == ']' && p->state == P_ARR0) {
				p->state = P_NEXT;
				continue;
			}
			p->state = P_ELEM;
			i = at;
			continue;
		case P_ARRN:
			if (ch == ',' || ch == ']') {
				p->state = ch == ',' ? P_ELEM0 : P_NEXT;
				continue;
			}
			break;
		case P_NEXT:
			if (ch == ',' || ch == '}') {
				p->state = ch == ',' ? P_KEY0 : P_DONE;
				continue;
			}
			break;
		default:
			break;
		}
		snprintf(p->err, sizeof(p->err), "unexpected '%c' at byte %zu", ch, p->len + at);
		return -1;
	}
	return 0;
}

/*
 * libcurl's write callback: a piece of the answer, parsed at once when the
 * status is 200 (its start kept for the error message otherwise). 0 stops
 * the transfer, p->err saying why.
 */
static size_t body_write(char *buf, size_t size, size_t n, void *ctx)
{
	struct cs_parse *p = ctx;
	size_t add = size * n;

	if (!p->code)
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &p->code);
	if (p->len + add > CS_BODY_MAX) {
		snprintf(p->err, sizeof(p->err), "larger than %u MiB", CS_BODY_MAX >> 20);
		return 0;
	}
	if (p->code != 200) {
		size_t k = add < sizeof(p->head) - 1 - p->hlen ? add : sizeof(p->head) - 1 - p->hlen;

		memcpy(p->head + p->hlen, buf, k);
		p->hlen += k;
		p->head[p->hlen] = '\0';
	} else if (cs_feed(p, buf, add)) {
		return 0;
	}
	p->len += add;
	return add;
}

/*
 * GET the stream, its answer parsed into p as it arrives (cs_parse_free()
 * it). 0 once the answer is whole and a JSON object of the stream's
 * shape, or -errno after saying why.
 */
static int cs_get(const struct wr_cs_opts *o, bool startup, struct cs_parse *p)
{
	struct curl_slist *hdr = NULL;
	char url[600], key[300], err[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	CURL *c;

	c = curl_easy_init();
	if (!c || cs_parse_init(p, c)) {
		pr_err("crowdsec: cannot start an HTTP client");
		curl_easy_cleanup(c);
		return -ENOMEM;
	}
	/* The stream sends Ip and Range decisions unless asked for more scopes. */
	snprintf(url, sizeof(url), "%s/v1/decisions/stream?startup=%s%s", o->url,
		 startup ? "true" : "false", o->geo_db[0] ? "&scopes=ip,range,country,as" : "");
	snprintf(key, sizeof(key), "X-Api-Key: %s", o->key);
	hdr = curl_slist_append(hdr, key);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "weir-crowdsec/" WEIR_VERSION);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)CS_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, p);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK || !p->code)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &p->code);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	p->curl = NULL;
	if (p->err[0] || (rc == CURLE_OK && p->code == 200 && p->state != P_DONE)) {
		if (!p->err[0])
			snprintf(p->err, sizeof(p->err), "it ends after %zu bytes, %s", p->len,
				 p->len ? "in the middle" : "empty");
		pr_err("crowdsec: the decision stream is not a JSON object: %s; nothing applied",
		       p->err);
		return -EINVAL;
	}
	if (rc != CURLE_OK) {
		pr_err("crowdsec: %s: %s", o->url, err[0] ? err : curl_easy_strerror(rc));
		return -EIO;
	}
	if (p->code != 200) {
		pr_err("crowdsec: %s answered HTTP %ld%s%.200s", o->url, p->code,
		       p->code == 403 ? " (is the bouncer key right?): " : ": ", p->head);
		return -EIO;
	}
	return 0;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* What cs_decision found. */
enum { CS_CIDR = 0, CS_OTHER = 1, CS_COUNTRY = 2, CS_AS = 3 };

/*
 * One decision: a ban on an Ip or a Range, as a CIDR, or on a Country or
 * an AS (CS_COUNTRY, CS_AS: the value in *what), and its remaining ttl
 * (ns; 0 if it has run out). CS_OTHER for a decision weir does not enforce
 * (another type, another scope), or -EINVAL for one it cannot read.
 */
static int cs_decision(struct json_object *d, struct wr_cidr *c, __u64 *ttl, const char **what)
{
	const char *type = str_of(d, "type"), *scope = str_of(d, "scope");
	const char *value = str_of(d, "value"), *dur = str_of(d, "duration");
	uint64_t ns;

	*what = value ? value : "?";
	if (!type || !scope || !value)
		return -EINVAL;
	int kind = !strcasecmp(scope, "country") ? CS_COUNTRY : !strcasecmp(scope, "as") ? CS_AS
		 : !strcasecmp(scope, "ip") || !strcasecmp(scope, "range") ? CS_CIDR : CS_OTHER;

	if (strcasecmp(type, "ban") || kind == CS_OTHER)
		return CS_OTHER;
	if (kind == CS_CIDR && parse_cidr(value, c))
		return -EINVAL;
	/* A whole family is never denied on a decision's word. */
	if (kind == CS_CIDR && !c->plen)
		return -EINVAL;
	*ttl = 0;
	/* Go's time.Duration: "3h59m58.9s"; negative once it has run out. */
	if (dur && dur[0] != '-') {
		if (wr_parse_duration_ns(dur, &ns))
			return -EINVAL;
		*ttl = ns > CS_TTL_MAX_NS ? CS_TTL_MAX_NS : ns;
	}
	return kind;
}

/*
 * A Country or AS decision as a geo feed of the store, named after it,
 * ending with it (add), or that feed gone (!add). 0 when the store
 * changed, 1 when there was nothing to do, -errno (why said) otherwise.
 */
static int cs_geo(const char *db, int kind, const char *value, __u64 ttl, bool add)
{
	struct wr_feed_def d = { .action = WEIR_FA_DENY, .refresh_s = WR_FEED_REFRESH_DEF_S };
	struct wr_feed_def old;
	char dir[PATH_MAX], why[400];
	size_t i;
	int err;

	/* crowdsec-country-de, crowdsec-as-4294967295: 31 bytes at most. */
	if (strlen(value) > 10 || snprintf(d.name, sizeof(d.name), WR_FEED_CS_PREFIX "%s-%s",
					   kind == CS_COUNTRY ? "country" : "as", value) >=
					  (int)sizeof(d.name))
		d.name[0] = '\0';
	for (i = 0; d.name[i]; i++)
		d.name[i] = tolower((unsigned char)d.name[i]);
	if (!wr_feed_name_ok(d.name)) {
		pr_warn("crowdsec: a %s decision on \"%s\" names nothing weir can keep",
			kind == CS_COUNTRY ? "Country" : "AS", value);
		return -EINVAL;
	}
	err = wr_feed_dir(dir, sizeof(dir));
	if (err)
		return err;
	if (!add) {
		if (wr_feed_def_load(dir, d.name, &old))
			return 1;
		return wr_feed_remove(dir, d.name);
	}
	if (wr_feed_geo_set(&d, db, kind == CS_COUNTRY ? value : NULL,
			    kind == CS_AS ? value : NULL, why, sizeof(why))) {
		pr_warn("crowdsec: cannot enforce %s %s: %s", kind == CS_COUNTRY ? "Country" : "AS",
			value, why);
		return -EINVAL;
	}
	d.expires = time(NULL) + (long long)((ttl + 999999999ULL) / 1000000000ULL);
	if (!wr_feed_def_load(dir, d.name, &old) && old.expires >= d.expires)
		return 1;	/* already there for at least as long */
	err = wr_feed_def_save(dir, &d);
	if (!err && wr_feed_fetch(dir, &d, false, why, sizeof(why)) < 0) {
		pr_warn("crowdsec: cannot enforce %s %s: %s", kind == CS_COUNTRY ? "Country" : "AS",
			value, why);
		wr_feed_remove(dir, d.name);
		return -EINVAL;
	}
	return err;
}

/*
 * The new decisions' deny entries of one answer (CIDR bans with a ttl)
 * written together: each one's result in res[i] (for l->v[i]; others
 * untouched). res[] is all the error when nothing could be tried.
 */
static void cs_add_all(const struct wr_maps *m, const struct cs_list *l, int *res)
{
	struct wr_cidr *c = malloc((l->n ? l->n : 1) * sizeof(*c));
	__u64 *ttl = malloc((l->n ? l->n : 1) * sizeof(*ttl));
	int *r = malloc((l->n ? l->n : 1) * sizeof(*r));
	size_t i, k = 0;
	int err = -ENOMEM;

	if (c && ttl && r) {
		for (i = 0; i < l->n; i++)
			if (l->v[i].kind == CS_CIDR && l->v[i].ttl) {
				c[k] = l->v[i].c;
				ttl[k++] = l->v[i].ttl;
			}
		err = wr_list_add_entries(m, true, c, ttl, k, r);
	}
	for (i = 0, k = 0; i < l->n; i++)
		if (l->v[i].kind == CS_CIDR && l->v[i].ttl)
			res[i] = err ? err : r[k++];
	free(c);
	free(ttl);
	free(r);
}

/* Apply one answer of the stream, read whole. 0, or -errno if nothing could be applied. */
static int cs_apply(const struct wr_cs_opts *o, const struct cs_parse *p, struct cs_counts *n)
{
	bool geo_changed = false;
	char dir[PATH_MAX];
	struct wr_maps m;
	int lock, err = 0, pass, *res = NULL;
	size_t i;

	memset(n, 0, sizeof(*n));
	res = calloc(p->list[K_NEW].n ? p->list[K_NEW].n : 1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	lock = wr_write_begin(&m, false);
	if (lock < 0) {
		free(res);
		return lock;
	}
	/* Deleted first: a decision replaced by a new one in the same answer stays. */
	for (pass = 0; pass < 2; pass++) {
		const struct cs_list *l = &p->list[pass ? K_NEW : K_DELETED];

		/* The new deny entries all at once; their results, in order, below. */
		if (pass)
			cs_add_all(&m, l, res);
		for (i = 0; i < l->n; i++) {
			const struct cs_dec *d = &l->v[i];
			const char *what = p->text + d->what;
			int r = d->kind;

			if (r < 0) {
				pr_warn("crowdsec: skipping a decision weir cannot read (value "
					"\"%s\")", what);
				n->failed++;
				continue;
			}
			if ((r == CS_COUNTRY || r == CS_AS) && o->geo_db[0] && (!pass || d->ttl)) {
				r = cs_geo(o->geo_db, r, what, d->ttl, pass);
				if (!r) {
					pass ? n->added++ : n->removed++;
					geo_changed = true;
				} else {
					r > 0 ? n->skipped++ : n->failed++;
				}
				continue;
			}
			if (r > 0 || (pass && !d->ttl)) {
				n->skipped++;
				continue;
			}
			r = pass ? res[i] : wr_list_unban_entry(&m, true, &d->c);
			if (!r)
				pass ? n->added++ : n->removed++;
			else if (r == -ENOENT || r == -EPERM)
				n->skipped++;
			else {
				pr_warn("crowdsec: %s %s: %s", pass ? "cannot deny" : "cannot remove",
					what, r == -ENOSPC ? "the deny list is full" : strerror(-r));
				n->failed++;
			}
		}
	}
	free(res);
	err = wr_list_bits(&m);
	if (err)
		pr_err("crowdsec: cannot update the list bits: %s", strerror(-err));
	/* Country and AS decisions: ended ones out, and the feeds in force again. */
	if (o->geo_db[0] && !wr_feed_dir(dir, sizeof(dir)) && wr_feed_expire(dir, time(NULL)) > 0)
		geo_changed = true;
	if (!err && geo_changed) {
		struct wr_feed_stats st;
		char why[400];

		err = wr_feed_rebuild(&m, dir, &st, why, sizeof(why));
		if (err)
			pr_err("crowdsec: %s", why);
	}
	wr_write_end(&m, lock);
	return err;
}

static void cs_report(const struct cs_counts *n, bool startup)
{
	if (!opts.json && !n->added && !n->removed && !n->failed && !startup)
		return;
	out_begin();
	print_text("crowdsec: ");
	print_bool("startup", NULL, startup);
	print_u64("added", "%llu added, ", n->added);
	print_u64("removed", "%llu removed, ", n->removed);
	print_u64("skipped", "%llu skipped", n->skipped);
	print_u64("failed", n->failed ? ", %llu failed" : NULL, n->failed);
	print_text("\n");
	out_end();
	fflush(stdout);
}

/* One pull and its application. */
static int cs_poll(const struct wr_cs_opts *o, bool startup)
{
	struct cs_counts n;
	struct cs_parse p;
	int err = cs_get(o, startup, &p);

	if (!err)
		err = cs_apply(o, &p, &n);
	cs_parse_free(&p);
	if (!err)
		cs_report(&n, startup);
	return err;
}

/*
 * Follow the stream until SIGINT or SIGTERM (o->once: one pull of every
 * decision in force). 0, or -errno after saying why.
 */
int wr_crowdsec_run(const struct wr_cs_opts *op)
{
	struct wr_cs_opts o = *op;
	struct pollfd pfd;
	bool startup = true;
	sigset_t set;
	int err;

	if (!wr_is_loaded())
		return wr_not_loaded();
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		pr_err("crowdsec: cannot start libcurl");
		return -ENOMEM;
	}
	if (o.once) {
		err = cs_poll(&o, true);
		curl_global_cleanup();
		return err;
	}
	/* SIGINT/SIGTERM end the loop between pulls (a pull takes at most CS_TIMEOUT_S). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pfd.fd = signalfd(-1, &set, SFD_CLOEXEC);
	pfd.events = POLLIN;
	if (pfd.fd < 0) {
		err = -errno;
		pr_err("crowdsec: signalfd: %s", strerror(-err));
		curl_global_cleanup();
		return err;
	}
	pr_info("crowdsec: following %s every %llu ms", o.url,
		(unsigned long long)(o.interval_ns / 1000000));
	for (;;) {
		/* Until a pull works, ask for everything in force again. */
		if (!cs_poll(&o, startup))
			startup = false;
		if (poll(&pfd, 1, (int)(o.interval_ns / 1000000)) > 0)
			break;
	}
	close(pfd.fd);
	curl_global_cleanup();
	return 0;
}
