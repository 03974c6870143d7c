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

struct body {
	char *buf;
	size_t len;
};

static size_t body_write(char *p, size_t size, size_t n, void *ctx)
{
	struct body *b = ctx;
	size_t add = size * n;
	char *nb;

	if (b->len + add + 1 > CS_BODY_MAX)
		return 0;
	nb = realloc(b->buf, b->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->len, p, add);
	b->buf = nb;
	b->len += add;
	b->buf[b->len] = '\0';
	return add;
}

/* GET the stream; the body in *out (free it). 0, or -EIO after saying why. */
static int cs_get(const struct wr_cs_opts *o, bool startup, char **out)
{
	struct body b = { 0 };
	struct curl_slist *hdr = NULL;
	char url[600], key[300], err[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;
	CURL *c;

	c = curl_easy_init();
	if (!c) {
		pr_err("crowdsec: cannot start an HTTP client");
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
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		pr_err("crowdsec: %s: %s", o->url, err[0] ? err : curl_easy_strerror(rc));
		free(b.buf);
		return -EIO;
	}
	if (code != 200) {
		pr_err("crowdsec: %s answered HTTP %ld%s%.200s", o->url, code,
		       code == 403 ? " (is the bouncer key right?): " : ": ", b.buf ? b.buf : "");
		free(b.buf);
		return -EIO;
	}
	*out = b.buf ? b.buf : strdup("");
	return *out ? 0 : -ENOMEM;
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

/* Apply one answer of the stream. 0, or -errno if nothing could be applied. */
static int cs_apply(const struct wr_cs_opts *o, const char *body, struct cs_counts *n)
{
	bool geo_changed = false;
	char dir[PATH_MAX];
	struct json_object *root, *arr;
	enum json_tokener_error jerr;
	struct wr_maps m;
	int lock, err = 0, pass;
	size_t i, len;

	memset(n, 0, sizeof(*n));
	root = json_tokener_parse_verbose(body, &jerr);
	if (!root || !json_object_is_type(root, json_type_object)) {
		pr_err("crowdsec: the decision stream is not a JSON object: %s",
		       root ? "another JSON value" : json_tokener_error_desc(jerr));
		json_object_put(root);
		return -EINVAL;
	}
	lock = wr_write_begin(&m, false);
	if (lock < 0) {
		json_object_put(root);
		return lock;
	}
	/* Deleted first: a decision replaced by a new one in the same answer stays. */
	for (pass = 0; pass < 2; pass++) {
		if (!json_object_object_get_ex(root, pass ? "new" : "deleted", &arr) ||
		    !json_object_is_type(arr, json_type_array))
			continue;
		len = json_object_array_length(arr);
		for (i = 0; i < len; i++) {
			struct json_object *d = json_object_array_get_idx(arr, i);
			const char *what = "?";
			struct wr_cidr c;
			bool kept;
			__u64 ttl;
			int r = json_object_is_type(d, json_type_object) ?
					cs_decision(d, &c, &ttl, &what) : -EINVAL;

			if (r < 0) {
				pr_warn("crowdsec: skipping a decision weir cannot read (value "
					"\"%s\")", what);
				n->failed++;
				continue;
			}
			if ((r == CS_COUNTRY || r == CS_AS) && o->geo_db[0] && (!pass || ttl)) {
				r = cs_geo(o->geo_db, r, what, ttl, pass);
				if (!r) {
					pass ? n->added++ : n->removed++;
					geo_changed = true;
				} else {
					r > 0 ? n->skipped++ : n->failed++;
				}
				continue;
			}
			if (r > 0 || (pass && !ttl)) {
				n->skipped++;
				continue;
			}
			r = pass ? wr_list_add_entry(&m, true, &c, ttl, &kept)
				 : wr_list_unban_entry(&m, true, &c);
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
	json_object_put(root);
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
	char *body = NULL;
	int err = cs_get(o, startup, &body);

	if (!err)
		err = cs_apply(o, body, &n);
	free(body);
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
